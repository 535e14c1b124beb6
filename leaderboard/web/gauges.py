"""The farm's gauges (runs by state and hardware, queue depth, nodes online), read from the
database at scrape time so that every server process reports the same numbers; the counters
are in leaderboard.metrics."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db.models import Count
from django.utils import timezone
from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from leaderboard.nodes.models import Node
from leaderboard.nodes.selectors import node_health_problems
from leaderboard.runs.models import Run
from leaderboard.submissions.models import Submission

log = logging.getLogger(__name__)


class FarmCollector(Collector):
    def describe(self) -> list:
        return []  # registering must not query the database

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            by_state = GaugeMetricFamily(
                "farm_runs", "Runs by state and hardware", labels=["state", "hardware"]
            )
            depth = GaugeMetricFamily(
                "farm_queue_depth", "Queued runs per hardware", labels=["hardware"]
            )
            rows = Run.objects.values("state", "hardware_id").annotate(n=Count("id")).order_by()
            for row in rows:
                by_state.add_metric([row["state"], row["hardware_id"]], row["n"])
                if row["state"] == Run.State.QUEUED:
                    depth.add_metric([row["hardware_id"]], row["n"])
            failures = GaugeMetricFamily(
                "farm_runs_by_verdict", "Finished runs by verdict", labels=["verdict"]
            )
            for row in (
                Run.objects.exclude(verdict="").values("verdict").annotate(n=Count("id")).order_by()
            ):
                failures.add_metric([row["verdict"]], row["n"])
            total = GaugeMetricFamily("farm_submissions", "Submissions stored")
            total.add_metric([], Submission.objects.count())
            cutoff = timezone.now() - timedelta(seconds=settings.FARM_NODE_DEAD_AFTER_S)
            online = GaugeMetricFamily("farm_nodes_online", "Nodes with a recent heartbeat")
            live = Node.objects.filter(enabled=True, last_heartbeat__gte=cutoff)
            online.add_metric([], live.count())
            unhealthy = GaugeMetricFamily(
                "farm_nodes_unhealthy",
                "Nodes heartbeating that report a failed self-test (they take no work)",
                labels=["node", "problem"],
            )
            for node in live.filter(healthy=False):
                for problem in node_health_problems(node=node) or [{"code": "UNKNOWN"}]:
                    unhealthy.add_metric([node.name, problem["code"]], 1)
            categories = GaugeMetricFamily(
                "farm_runs_by_category",
                "Finished runs by what their outcome is about (kernel, farm)",
                labels=["category"],
            )
            finished = (Run.Category.KERNEL, Run.Category.FARM)
            counts = Run.objects.aggregate(
                **{str(c): Count("id", filter=Run.category_q(c)) for c in finished}
            )
            for name, n in counts.items():
                categories.add_metric([name], n)
        except Exception as exc:  # a scrape must not fail because the database blinked
            log.warning("farm metrics unavailable: %s", exc)
            return
        yield from (by_state, depth, failures, total, online, unhealthy, categories)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(FarmCollector())
        _registered = True
