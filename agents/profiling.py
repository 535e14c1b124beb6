"""Profile mode: a vendor profiler's report of the submission, uploaded as an artifact.

NVIDIA: Nsight Compute (`ncu --clock-control none`, so the profiler does not lock clocks to base
and the report matches what the timed run saw) writes `profile.ncu-rep`. AMD: rocprofv3
(`--kernel-trace --stats`, CSV), or the older `rocprof --stats`, whose kernel statistics become
`profile.rocprof.json` (plus the raw CSV). The profiler runs a test-mode evaluation of the
submission (`farm eval --mode test`, one workload) in the same sandbox as the measured run.

Both paths are tested against recorded tool behaviour (tests/agents/fixtures: hand-written
stand-ins for ncu and rocprofv3 that write what the real tools write); neither has been run
against a real profiler here.
"""

from __future__ import annotations

import csv
import json
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from farm.hardware import kinds
from farm.result import EXIT_NOT_PASSED, EXIT_REJECTED

log = logging.getLogger(__name__)
PROFILE_TIMEOUT_S = 900


@dataclass
class Profile:
    artifacts: dict[str, Path] = field(default_factory=dict)  # artifact name -> file
    note: str = ""


def eval_argv(source: Path, *, problem: str, suite: str, device: str, sandbox: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "farm",
        "eval",
        str(source),
        "--problem",
        problem,
        "--suite",
        suite,
        "--device",
        device,
        "--mode",
        "test",
        "--sandbox",
        sandbox,
    ]


def ncu_argv(ncu: str, report: Path, target: list[str]) -> list[str]:
    """Nsight Compute over every process the evaluation starts, clocks left alone."""
    return [
        ncu,
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--set",
        "full",
        "--export",
        str(report),
        "--force-overwrite",
        *target,
    ]


def rocprof_argv(tool: str, outdir: Path, target: list[str]) -> list[str]:
    if Path(tool).name == "rocprofv3":
        return [
            tool,
            "--kernel-trace",
            "--stats",
            "--output-format",
            "csv",
            "-d",
            str(outdir),
            "-o",
            "profile",
            "--",
            *target,
        ]
    return [tool, "--stats", "-o", str(outdir / "results.csv"), *target]


def profile(
    source: Path, workdir: Path, *, problem: str, suite: str, device: str, sandbox: str
) -> Profile:
    """Run the vendor profiler; a missing tool or a failed run gives a note, never raises."""
    target = eval_argv(source, problem=problem, suite=suite, device=device, sandbox=sandbox)
    workdir.mkdir(parents=True, exist_ok=True)
    run = PROFILERS.get(kinds.get_kind(device).profiler or "")
    if run is None:
        return Profile(note=f"no profiler for device {device}")
    return run(target, workdir)


def _nvidia(target: list[str], workdir: Path) -> Profile:
    ncu = shutil.which("ncu")
    if ncu is None:
        return Profile(note="ncu (Nsight Compute) is not installed on this node")
    report = workdir / "profile"
    failed = _run(ncu_argv(ncu, report, target), workdir)
    path = report.with_suffix(".ncu-rep")
    if not path.is_file():
        return Profile(note=failed or "ncu wrote no report")
    return Profile(artifacts={"profile.ncu-rep": path}, note=failed)


def _amd(target: list[str], workdir: Path) -> Profile:
    tool = shutil.which("rocprofv3") or shutil.which("rocprof")
    if tool is None:
        return Profile(note="neither rocprofv3 nor rocprof is installed on this node")
    outdir = workdir / "rocprof"
    outdir.mkdir(exist_ok=True)
    failed = _run(rocprof_argv(tool, outdir, target), workdir)
    stats = _find_stats(outdir)
    if stats is None:
        return Profile(note=failed or f"{Path(tool).name} wrote no kernel statistics")
    summary = workdir / "profile.rocprof.json"
    summary.write_text(json.dumps(parse_kernel_stats(stats), indent=1))
    return Profile(
        artifacts={"profile.rocprof.json": summary, "profile.rocprof.csv": stats}, note=failed
    )


# `farm eval` ran and gave a verdict (the profiler passes its exit code on): not a failure of
# the profiler; the verdict is the evaluation's business, not the profile's
VERDICT_EXITS = frozenset({0, EXIT_NOT_PASSED, EXIT_REJECTED})

# The profilers a device kind's record can name (farm.hardware.kinds.DeviceKind.profiler).
PROFILERS: dict[str, Callable[[list[str], Path], Profile]] = {"ncu": _nvidia, "rocprof": _amd}


def _run(argv: list[str], cwd: Path) -> str:
    """Run a profiler; '' on success, else what went wrong (the tail of its output)."""
    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=PROFILE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{Path(argv[0]).name} failed: {exc}"
    if done.returncode not in VERDICT_EXITS:
        tail = (done.stderr or done.stdout)[-2000:]
        return f"{Path(argv[0]).name} exited {done.returncode}: {tail}"
    return ""


def _find_stats(outdir: Path) -> Path | None:
    for pattern in ("**/*kernel_stats.csv", "**/results.stats.csv"):
        found = sorted(outdir.glob(pattern))
        if found:
            return found[0]
    return None


def parse_kernel_stats(path: Path) -> list[dict]:
    """Kernel rows of rocprofv3's `*_kernel_stats.csv` or rocprof's `results.stats.csv`:
    name, calls, total and average duration in ns, share of the total in percent."""
    rows = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            rows.append(
                {
                    "name": row.get("Name") or row.get("KernelName") or "",
                    "calls": int(float(row.get("Calls") or 0)),
                    "total_ns": float(row.get("TotalDurationNs") or 0),
                    "average_ns": float(row.get("AverageNs") or 0),
                    "percent": float(row.get("Percentage") or 0),
                }
            )
    return sorted(rows, key=lambda r: -r["total_ns"])
