"""Broker queue names and defaults, shared by the server (which sends) and the agents (which
consume).

Every slot consumes its class's queue, `hw.<class>`, and its node's queue of that class,
`hw.<class>.node-<id>`: the second carries work meant for one node only (an audit run, which
must not run on the node that produced the result it checks). A GPU slot also consumes its
device's queue, `hw.<class>.node-<id>.gpu-<index>`: an audit that must run on the node that
produced the result goes to another of its GPUs when it has one.
"""

from __future__ import annotations

from pathlib import Path

# Soft, then hard time limits (s) of one evaluation by mode: the server's defaults (each soft
# limit may be raised there with FARM_TIME_LIMIT_<MODE>_S; jobs carry what the server chose),
# and what an agent applies to a job that names none.
TIME_LIMITS_S = {
    "test": (300, 360),
    "benchmark": (900, 1020),
    "leaderboard": (1200, 1380),
    "profile": (1800, 2100),
}


def local_broker_url(var_dir: Path) -> str:
    """The embedded broker that the server and the agents use when CELERY_BROKER_URL is unset:
    SQLAlchemy on SQLite under the farm's var/ directory (no broker server to run)."""
    return f"sqla+sqlite:///{var_dir / 'broker.sqlite3'}"


def hardware_queue(hardware: str) -> str:
    return f"hw.{hardware}"


def node_queue(hardware: str, node_id: int) -> str:
    return f"hw.{hardware}.node-{node_id}"


def device_queue(hardware: str, node_id: int, index: int) -> str:
    """The queue of one GPU of a node (the vendor tool's index)."""
    return f"{node_queue(hardware, node_id)}.gpu-{index}"
