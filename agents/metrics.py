"""The agent's Prometheus metrics, served by the main process on FARM_AGENT_METRICS_PORT.

Slots are separate processes, so the agent runs prometheus-client in multiprocess mode: every
process writes to PROMETHEUS_MULTIPROC_DIR (agents.config.metrics_dir_set, by the main process
before any slot starts and before this module is imported) and the main process's endpoint sums
them.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import Counter, Gauge, Histogram

JOBS = Counter(
    "farm_agent_jobs_total",
    "Jobs this agent handled, by outcome",
    ["hardware", "status"],  # done | failed | claim_lost | released | error
)
EVALUATION_SECONDS = Histogram(
    "farm_agent_evaluation_seconds",
    "Wall time of one evaluation (the harness call), seconds",
    ["hardware", "mode"],
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 2400),
)
QUEUE_WAIT_SECONDS = Histogram(
    "farm_agent_queue_wait_seconds",
    "From the server handing the run to the broker to this agent claiming it, seconds",
    ["hardware"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900),
)
DEVICE_UTILISATION = Gauge(
    "farm_agent_device_utilization_percent",
    "Device utilisation reported by the vendor tool (NVML), percent",
    ["slot", "hardware"],
    multiprocess_mode="max",
)
HEALTHY = Gauge(
    "farm_agent_healthy",
    "1 when the node's own checks pass (self-test, disk, token, slots); 0: it takes no work",
    multiprocess_mode="max",
)
HEALTH_PROBLEM = Gauge(
    "farm_agent_health_problem",
    "1 for each problem the node reports (SELFTEST_FAILED, DISK_FULL, TOKEN_REFUSED, ...)",
    ["code"],
    multiprocess_mode="max",
)
PROBLEM_CODES = ("SELFTEST_FAILED", "DISK_FULL", "TOKEN_REFUSED", "SLOT_CRASH_LOOP")


def health_set(healthy: bool, codes: set[str]) -> None:
    """Export the node's health (the main process calls this after each check)."""
    HEALTHY.set(1 if healthy else 0)
    for code in {*PROBLEM_CODES, *codes}:
        HEALTH_PROBLEM.labels(code).set(1 if code in codes else 0)


BUSY_SLOTS = Gauge(
    "farm_agent_busy_slots", "Slots evaluating a run now", ["hardware"], multiprocess_mode="max"
)


def serve(port: int, directory: Path) -> None:
    """Serve /metrics on 0.0.0.0:port, summing the files every process of this agent writes in
    `directory`."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    start_http_server(port, registry=registry)
