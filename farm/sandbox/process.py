"""The `process` runner: a plain child process under rlimits. Development only.

It has no filesystem, network or user isolation, so it refuses to start unless the operator set
FARM_ALLOW_UNSANDBOXED=1.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from farm.config import node_settings
from farm.sandbox.base import (
    Runner,
    SandboxProcess,
    SandboxUnavailable,
    rlimit_args,
    start_piped,
)
from farm.sandbox.limits import DeviceAssignment, Limits

ALLOW_ENV = "FARM_ALLOW_UNSANDBOXED"


def unsandboxed_allowed() -> bool:
    """True only for FARM_ALLOW_UNSANDBOXED=1 (any other value, or unset, is False)."""
    return node_settings().allow_unsandboxed


def prlimit_path() -> str:
    """The util-linux `prlimit` binary; raises SandboxUnavailable when it is missing."""
    path = shutil.which("prlimit") or (
        "/usr/bin/prlimit" if Path("/usr/bin/prlimit").exists() else None
    )
    if path is None:
        raise SandboxUnavailable(
            "the 'prlimit' command (util-linux) is missing", hint="install util-linux"
        )
    return path


class ProcessRunner(Runner):
    """rlimits (through prlimit), a new session, a clean environment, cwd = workdir."""

    name = "process"

    def __init__(self) -> None:
        if not unsandboxed_allowed():
            raise SandboxUnavailable(
                "the 'process' runner does not isolate untrusted code",
                hint=f"use bwrap or docker, or set {ALLOW_ENV}=1 on a development machine",
            )

    def spawn(
        self,
        argv: list[str],
        *,
        workdir: Path,
        env: dict[str, str],
        limits: Limits,
        device: DeviceAssignment | None = None,
        ro_binds: Sequence[Path] = (),
    ) -> SandboxProcess:
        command = [prlimit_path(), *rlimit_args(limits, address_space=device is None), "--", *argv]
        popen = start_piped(command, env=dict(env), cwd=workdir)
        return SandboxProcess(popen, limits)
