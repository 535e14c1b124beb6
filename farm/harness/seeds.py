"""Seeds: every input set is derived from a base seed and an index, the same way on both sides.

In leaderboard mode the base is secret: drawn from FARM_SECRET_SEED (read once, then removed from
the environment) or os.urandom, and only derived per-call seeds ever reach the worker.
"""

from __future__ import annotations

import hashlib
import os

PUBLIC_BASE = 20261122


def derive(base: int | str, *parts: object) -> int:
    """A 63-bit seed from a base and any labels (workload id, round, call index)."""
    text = ":".join(str(p) for p in (base, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") & (2**63 - 1)


def secret_base() -> str:
    """The secret base for leaderboard mode; removes FARM_SECRET_SEED from the environment."""
    value = os.environ.pop("FARM_SECRET_SEED", "")
    return value or os.urandom(16).hex()
