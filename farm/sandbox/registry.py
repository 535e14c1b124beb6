"""Choosing a runner: `get_runner(name, vendor=...)`.

`auto` takes docker when an engine answers and holds the sandbox image for the device, else bwrap
when it can create a sandbox here, else refuses: the farm never falls back to running untrusted
code unsandboxed on its own. When docker is set up but unusable (the engine does not answer, the
image is missing), `auto` says so in a warning and in the runner's `note`, which the result
document keeps. FARM_SANDBOX (docker | bwrap | process | auto) chooses when the caller asks for
`auto`.
"""

from __future__ import annotations

import logging

from farm.config import SANDBOXES, node_settings
from farm.sandbox.base import Runner, RunnerAbsent, SandboxUnavailable
from farm.sandbox.limits import Vendor

log = logging.getLogger(__name__)

NAMES = SANDBOXES


def get_runner(name: str = "auto", *, vendor: Vendor | None = None) -> Runner:
    """The runner called `name` (or, for "auto", FARM_SANDBOX's choice, else the best available)
    for sandboxes of `vendor`'s GPUs (None: CPU and npu-sim).

    Raises SandboxUnavailable naming what is missing or what to run.
    """
    if name == "auto":
        name = node_settings().sandbox
    if name not in NAMES:
        raise SandboxUnavailable(
            f"unknown sandbox runner '{name}'",
            hint=f"choose one of {', '.join(NAMES)} (FARM_SANDBOX)",
        )
    if name == "auto":
        return _best_available(vendor)
    return _make(name, vendor)


def _make(name: str, vendor: Vendor | None = None) -> Runner:
    if name == "docker":
        from farm.sandbox.docker_runner import DockerRunner

        return DockerRunner(vendor=vendor)
    if name == "bwrap":
        from farm.sandbox.bwrap import BwrapRunner

        return BwrapRunner()
    from farm.sandbox.process import ProcessRunner

    return ProcessRunner()


def _best_available(vendor: Vendor | None) -> Runner:
    failed: list[tuple[str, SandboxUnavailable]] = []
    for name in ("docker", "bwrap"):
        try:
            runner = _make(name, vendor)
        except SandboxUnavailable as exc:
            failed.append((name, exc))
            continue
        broken = [
            f"{other} is set up but unusable: {exc}"
            for other, exc in failed
            if not isinstance(exc, RunnerAbsent)
        ]
        if broken:
            runner.note = f"{'; '.join(broken)}; using {name}"
            log.warning("sandbox: %s", runner.note)
        return runner
    raise SandboxUnavailable(
        "no sandbox is available (" + "; ".join(f"{n}: {e}" for n, e in failed) + ")",
        hint="install bubblewrap or start a docker engine; for development only, "
        "FARM_SANDBOX=process with FARM_ALLOW_UNSANDBOXED=1",
    )
