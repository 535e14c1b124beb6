"""An endpoint that needs a rule of an app above its own gets it from the URL table, or the
server stops at start naming it (leaderboard/wiring.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import resolve

from leaderboard.nodes.apis import HeartbeatApi, NodeListCreateApi
from leaderboard.runs.apis import RunCancelApi, RunDetailApi


@pytest.mark.parametrize(
    ("view", "rule"),
    [
        (RunDetailApi, "source_visible"),
        (RunCancelApi, "source_visible"),
        (NodeListCreateApi, "queue_depth"),
        (HeartbeatApi, "runs_held"),
    ],
)
def test_a_rule_left_out_stops_the_server_naming_it(view, rule):
    with pytest.raises(ImproperlyConfigured, match=f"{view.__name__}.as_view\\(\\) needs {rule}"):
        view.as_view()


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/api/runs/1/", "source_visible"),
        ("/api/runs/1/cancel/", "source_visible"),
        ("/api/nodes/", "queue_depth"),
        ("/api/agent/heartbeat/", "runs_held"),
    ],
)
def test_the_url_table_hands_each_rule_in(path, rule):
    assert callable(resolve(path).func.initkwargs[rule])
