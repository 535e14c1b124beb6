"""Prometheus metrics of the farm (scraped at /metrics with django-prometheus's own).

Counters and the latency histogram are observed by this process; the gauges (runs by state and
hardware, queue depth, nodes online) are read from the database at scrape time, so every server
process reports the same numbers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

SUBMISSIONS = Counter("farm_submissions_created", "Submissions accepted by this server process")
RESULTS = Counter(
    "farm_run_results",
    "Runs finished, by hardware and verdict or failure code",
    ["hardware", "status"],
)
LATENCY = Histogram(
    "farm_evaluation_latency_seconds",
    "Submission to result, per run",
    ["hardware"],
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600),
)


def submissions_created(n: int) -> None:
    SUBMISSIONS.inc(n)


def run_finished(hardware: str, status: str, latency_s: float | None) -> None:
    RESULTS.labels(hardware=hardware, status=status).inc()
    if latency_s is not None:
        LATENCY.labels(hardware=hardware).observe(latency_s)


class FarmCollector(Collector):
    def describe(self) -> list:
        return []  # registering must not query the database

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from django.conf import settings
        from django.db.models import Count
        from django.utils import timezone

        from leaderboard.nodes.models import Node
        from leaderboard.runs.models import Run
        from leaderboard.submissions.models import Submission

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
            online.add_metric(
                [], Node.objects.filter(enabled=True, last_heartbeat__gte=cutoff).count()
            )
        except Exception as exc:  # a scrape must not fail because the database blinked
            log.warning("farm metrics unavailable: %s", exc)
            return
        yield from (by_state, depth, failures, total, online)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(FarmCollector())
        _registered = True
