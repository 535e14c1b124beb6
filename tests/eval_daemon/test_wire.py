"""The daemon's messages (farm.eval_daemon.wire): what a request may carry."""

from __future__ import annotations

import pytest

from farm.eval_daemon.wire import DaemonStatus, EvalRequest, Reply
from farm.wire import WireError


def _request(**changes: object) -> dict:
    base = EvalRequest(source="def kernel(x):\n    return x\n", filename="k.py", problem="relu")
    return {**base.to_json(), **changes}


def test_a_request_round_trips() -> None:
    request = EvalRequest(
        source="s", filename="k.py", problem="softmax", workloads=["small"], budget_ms=500.0
    )
    assert EvalRequest.from_json(request.to_json()) == request


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("../../etc/k.py", "k.py"),
        ("/abs/k.py", "k.py"),
        ("..", "submission.py"),
        ("", "submission.py"),
    ],
)
def test_the_source_is_written_under_a_plain_name(given: str, written: str) -> None:
    assert EvalRequest.from_json(_request(filename=given)).filename == written


@pytest.mark.parametrize("bad", [{"workloads": [1]}, {"source": None}, {"baselines": "yes"}])
def test_a_malformed_request_is_refused(bad: dict) -> None:
    with pytest.raises(WireError):
        EvalRequest.from_json(_request(**bad))


def test_a_status_reply_round_trips() -> None:
    status = DaemonStatus(
        pid=4,
        started_at=1.0,
        socket="/s",
        settings="ab",
        devices=["cpu/auto"],
        served=2,
        busy=False,
        idle_exit_s=60.0,
        idle_s=3.0,
    )
    assert Reply.from_json(Reply(ok=True, status=status).to_json()).status == status
