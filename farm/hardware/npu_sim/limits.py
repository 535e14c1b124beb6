"""Caps that keep a simulation short, and the errors a simulation raises.

Interpreter runs are slow (about half a millisecond per program instance), so every measurement
is bounded: programs per launch, launches per call, HBM bytes moved, and wall-clock seconds.
Exceeding a cap raises `SimLimitExceeded` with the cap's name, the value reached and the
environment variable that raises it; the simulation never hangs on a cap.

Environment (read by `SimLimits.from_env()`; unset means the default):

=============================== ========= ==============================================
variable                        default   meaning
=============================== ========= ==============================================
FARM_NPU_SIM_MAX_PROGRAMS       65536     program instances in one Triton launch
FARM_NPU_SIM_MAX_LAUNCHES       4096      kernel launches (Triton + PyTorch ops) per call
FARM_NPU_SIM_MAX_BYTES          2**30     HBM bytes (read + written) counted in one call
FARM_NPU_SIM_MAX_WALL_S         120       wall-clock seconds one measured call may take
=============================== ========= ==============================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from farm.config import Env


class SimError(Exception):
    """Base class of the simulator's own errors."""


class SimLimitExceeded(SimError):
    """A measured call went past one of the `SimLimits` caps.

    `limit` is the cap's field name, `value` what the call reached (or would have), `cap` the
    cap in force.
    """

    def __init__(self, limit: str, value: float, cap: float, detail: str = "") -> None:
        env = _ENV_NAMES.get(limit, "")
        msg = f"npu-sim limit exceeded: {limit} reached {value:g} (cap {cap:g})"
        if detail:
            msg += f" in {detail}"
        if env:
            msg += f"; use a smaller workload, or raise {env}"
        super().__init__(msg)
        self.limit = limit
        self.value = value
        self.cap = cap


class SimIntegrityError(SimError):
    """The simulator's hooks, state or cost figures were altered during a measured call, or
    the call's outputs were not produced through counted operations.

    `findings` lists one `code: detail` line per problem found. A harness should treat this as
    a rejected submission (the evidence is the message).
    """

    def __init__(self, findings: list[str]) -> None:
        super().__init__("npu-sim integrity check failed: " + "; ".join(findings))
        self.findings = list(findings)


_ENV_NAMES = {
    "max_programs": "FARM_NPU_SIM_MAX_PROGRAMS",
    "max_launches": "FARM_NPU_SIM_MAX_LAUNCHES",
    "max_bytes": "FARM_NPU_SIM_MAX_BYTES",
    "max_wall_s": "FARM_NPU_SIM_MAX_WALL_S",
}


@dataclass(frozen=True)
class SimLimits:
    """Caps on one measured call (see the module docstring for the environment variables)."""

    max_programs: int = 65536  # program instances per Triton launch
    max_launches: int = 4096  # launches per measured call
    max_bytes: int = 2**30  # HBM bytes read + written per measured call
    max_wall_s: float = 120.0  # wall-clock seconds per measured call

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SimLimits:
        """Defaults overridden by FARM_NPU_SIM_* variables of `environ` (default os.environ).

        Raises ValueError naming the variable when a value is not a positive number.
        """
        env = Env(ValueError, environ)
        limits = cls(
            max_programs=env.integer(_ENV_NAMES["max_programs"], cls.max_programs),
            max_launches=env.integer(_ENV_NAMES["max_launches"], cls.max_launches),
            max_bytes=env.integer(_ENV_NAMES["max_bytes"], cls.max_bytes),
            max_wall_s=env.number(_ENV_NAMES["max_wall_s"], cls.max_wall_s),
        )
        for field_name, var in _ENV_NAMES.items():
            if getattr(limits, field_name) <= 0:
                raise ValueError(f"{var}={env.raw(var)!r} must be positive")
        return limits
