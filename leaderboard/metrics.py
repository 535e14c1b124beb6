"""Prometheus metrics of the farm (scraped at /metrics with django-prometheus's own).

Counters and the latency histogram are observed by this process; the gauges (runs by state and
hardware, queue depth, nodes online) are read from the database at scrape time, so every server
process reports the same numbers (leaderboard.web.gauges).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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
