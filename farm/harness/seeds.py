"""Seeds: every input set is derived from a base seed and an index, the same way on both sides.

In leaderboard mode the base is secret: drawn from FARM_SECRET_SEED (read once, then removed from
the environment) or os.urandom, and only derived per-call seeds ever reach the worker. Every other
evaluation that reports a time draws a fresh base of its own (`fresh_base`), unless the caller
names one: a submission cannot compute, at import, the inputs and answers of calls to come. Test
mode keeps the public base, so a correctness run is reproducible as it is.
"""

from __future__ import annotations

import hashlib
import os

from farm.config import take_secret

PUBLIC_BASE = 20261122


def derive(base: int | str, *parts: object) -> int:
    """A 63-bit seed from a base and any labels (workload id, round, call index)."""
    text = ":".join(str(p) for p in (base, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") & (2**63 - 1)


def fresh_base() -> int:
    """A base drawn for one evaluation (benchmark and profile modes)."""
    return int.from_bytes(os.urandom(8), "little") & (2**63 - 1)


def choose_base(*, leaderboard: bool, timed: bool, given: int | None) -> tuple[int | str, bool]:
    """The evaluation's base seed, and whether it is fresh (unknown before the evaluation)."""
    if leaderboard:
        return secret_base(), True
    if given is not None:
        return given, False
    return (fresh_base(), True) if timed else (PUBLIC_BASE, False)


def secret_base() -> str:
    """The secret base for leaderboard mode; removes FARM_SECRET_SEED from the environment."""
    return take_secret("FARM_SECRET_SEED") or os.urandom(16).hex()
