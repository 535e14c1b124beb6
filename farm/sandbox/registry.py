"""Choosing a runner: `get_runner(name)`.

`auto` takes docker when an engine answers, else bwrap when it can create a sandbox here, else
refuses: the farm never falls back to running untrusted code unsandboxed on its own. FARM_SANDBOX
(docker | bwrap | process | auto) chooses when the caller asks for `auto`.
"""

from __future__ import annotations

import os

from farm.sandbox.base import Runner, SandboxUnavailable

SANDBOX_ENV = "FARM_SANDBOX"
NAMES = ("auto", "docker", "bwrap", "process")


def get_runner(name: str = "auto") -> Runner:
    """The runner called `name` (or, for "auto", FARM_SANDBOX's choice, else the best available).

    Raises SandboxUnavailable naming what is missing, and ValueError for an unknown name.
    """
    if name == "auto":
        name = os.environ.get(SANDBOX_ENV, "auto").strip() or "auto"
    if name not in NAMES:
        raise SandboxUnavailable(
            f"unknown sandbox runner '{name}'",
            hint=f"choose one of {', '.join(NAMES)} (FARM_SANDBOX)",
        )
    if name == "auto":
        return _best_available()
    return _make(name)


def _make(name: str) -> Runner:
    if name == "docker":
        from farm.sandbox.docker_runner import DockerRunner

        return DockerRunner()
    if name == "bwrap":
        from farm.sandbox.bwrap import BwrapRunner

        return BwrapRunner()
    from farm.sandbox.process import ProcessRunner

    return ProcessRunner()


def _best_available() -> Runner:
    reasons = []
    for name in ("docker", "bwrap"):
        try:
            return _make(name)
        except SandboxUnavailable as exc:
            reasons.append(f"{name}: {exc}")
    raise SandboxUnavailable(
        "no sandbox is available (" + "; ".join(reasons) + ")",
        hint="install bubblewrap or start a docker engine; for development only, "
        "FARM_SANDBOX=process with FARM_ALLOW_UNSANDBOXED=1",
    )
