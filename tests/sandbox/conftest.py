"""Fixtures for the sandbox tests: a bwrap runner and a helper that runs a small program in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from farm.sandbox import Limits, SandboxUnavailable, Termination
from farm.sandbox.bwrap import BwrapRunner

REPO = Path(__file__).resolve().parents[2]
ADD_USER = REPO / "deploy" / "sandbox" / "add-sandbox-user.sh"


@dataclass
class Ran:
    stdout: bytes
    stderr: bytes
    termination: Termination

    @property
    def out(self) -> str:
        return self.stdout.decode(errors="replace")


@pytest.fixture(scope="session")
def bwrap_runner() -> BwrapRunner:
    """The bwrap runner; skipped where bubblewrap is missing or cannot start a sandbox.

    As root it needs the unprivileged sandbox account, which it creates the way CI does
    (deploy/sandbox/add-sandbox-user.sh, idempotent).
    """
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if os.geteuid() == 0:
        subprocess.run(["sh", str(ADD_USER)], check=True)
    try:
        return BwrapRunner()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap cannot sandbox here: {exc}")


def run_in(
    runner: BwrapRunner,
    code: str,
    workdir: Path,
    *,
    limits: Limits | None = None,
    env: dict[str, str] | None = None,
    read_stdout: int | None = None,
) -> Ran:
    """Run `code` with this interpreter inside the sandbox and collect everything it wrote."""
    proc = runner.spawn(
        [sys.executable, "-c", textwrap.dedent(code)],
        workdir=workdir,
        env=env or {},
        limits=limits or Limits(wall_seconds=30),
    )
    with proc:
        proc.stdin.close()
        stdout = proc.stdout.read() if read_stdout is None else proc.stdout.read(read_stdout)
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
        return Ran(stdout, stderr, proc.termination())


def run_outside(code: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """The same program without a sandbox: the positive control of every isolation test."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def assert_healthy(runner: BwrapRunner, workdir: Path) -> None:
    """The runner still starts a fresh sandbox after the previous one was killed."""
    ran = run_in(runner, "print('ok')", workdir)
    assert ran.out.strip() == "ok", ran.stderr
    assert ran.termination.returncode == 0
