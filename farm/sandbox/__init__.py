"""Runners that start untrusted code in a sandbox: docker, bwrap, process (development only).

    runner = get_runner()                    # or "docker" | "bwrap" | "process"
    proc = runner.spawn(argv, workdir=..., env=..., limits=Limits(), device=None)
    proc.stdin.write(...); proc.stdout.read(n); proc.wait(timeout); proc.termination()

docs/security.md describes what each runner enforces.
"""

from farm.sandbox.base import (
    CappedReader,
    Runner,
    RunnerAbsent,
    SandboxProcess,
    SandboxUnavailable,
    Termination,
)
from farm.sandbox.limits import DeviceAssignment, Limits
from farm.sandbox.registry import get_runner

__all__ = [
    "CappedReader",
    "DeviceAssignment",
    "Limits",
    "Runner",
    "RunnerAbsent",
    "SandboxProcess",
    "SandboxUnavailable",
    "Termination",
    "get_runner",
]
