"""Baselines measured once and reused: the eager and torch.compile references' timings.

A baseline's time depends on the reference, the workload, the hardware, the node and the
software, not on the submission, so a node measures it once and reuses it for every submission
of the same problem until something it depends on changes. The key is the suite (name and
hash), problem, workload, kind (eager or compile), hardware class, node (host name, device kind,
index and name), torch and triton versions and the timing policy; the value is what the
document records of the baseline (its timing summary and the wall time the supervisor measured
around it), one JSON file per key under FARM_HOME/baselines/, written atomically.

Leaderboard mode never reads the cache: it re-measures the reference beside the candidate, so a
board's speedups come from the same run. FARM_BASELINE_CACHE=0 turns the cache off; an entry
older than FARM_BASELINE_CACHE_TTL_S (default a day) is measured again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from farm.config import node_settings
from farm.hardware import kinds
from farm.harness.timing import TimingPolicy
from farm.suite.loader import farm_home


def cache_dir() -> Path:
    return farm_home() / "baselines"


def enabled() -> bool:
    return node_settings().baseline_cache


@dataclass(frozen=True)
class Scope:
    """What every baseline of one evaluation shares (the key without workload and kind)."""

    suite: str
    suite_hash: str | None
    problem: str
    hardware: str
    device: str
    device_index: int
    policy: TimingPolicy

    def key(self, workload: str, kind: str) -> str:
        node = _node(self.device, self.device_index)
        fields = {**asdict(self), "workload": workload, "kind": kind, **node}
        text = json.dumps(fields, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:32]


class BaselineCache:
    def __init__(self, scope: Scope, root: Path | None = None, ttl_s: float | None = None):
        self.scope = scope
        self.root = root or cache_dir()
        self.ttl_s = ttl_s if ttl_s is not None else node_settings().baseline_cache_ttl_s

    def _path(self, workload: str, kind: str) -> Path:
        return self.root / f"{self.scope.key(workload, kind)}.json"

    def get(self, workload: str, kind: str) -> dict[str, Any] | None:
        """The stored baseline, or None when there is none, it is stale or unreadable."""
        try:
            entry = json.loads(self._path(workload, kind).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or time.time() - float(entry.get("at", 0)) > self.ttl_s:
            return None
        return entry

    def put(self, workload: str, kind: str, value: dict[str, Any]) -> None:
        """Store a baseline; a cache that cannot be written is skipped, never an error."""
        path = self._path(workload, kind)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as f:
                json.dump({**value, "at": time.time()}, f)
            os.replace(f.name, path)
        except OSError:
            return


@functools.cache
def _node(device: str, index: int) -> dict[str, str]:
    """This node's part of the key: host, device, software versions."""
    try:
        import triton

        triton_version = str(triton.__version__)
    except ImportError:
        triton_version = "none"
    gpu = kinds.is_gpu(device) and torch.cuda.is_available()
    return {
        "host": socket.gethostname(),
        "device_name": f"{torch.cuda.get_device_name(index)}#{index}" if gpu else device,
        "torch": torch.__version__,
        "triton": triton_version,
    }
