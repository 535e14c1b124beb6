"""Honest kernels under host load: verdicts while the CPU is contended, and cheats on a quiet host.

Runs every honest file of tests/solutions/correct/ (on npu-sim also tests/solutions/npu_sim/;
files whose `# device:` header names another device are left out) through the whole farm
(benchmark mode, its problem's small workloads) on one device while `--load` processes spin on the
CPU, then, with `--cheats`, the catalogue's timing cheats (those with a `# runtime:` verdict) on
the quiet host with the static guard's findings dropped: the runtime layers alone, as
bench/trust_catalogue.py --runtime-only runs them. Prints one row per file (verdict, the codes of
its reasons, the expected verdict) and a count of verdicts. An honest kernel must come out PASSED
or INCONCLUSIVE (the host disturbed the measurement), never REJECTED; a cheat must not PASS.

The load is bounded: each spinner stops itself at a deadline (`--max-s`), and the bench stops
the ones it started (by their process objects) when the honest pass ends, whatever happens.

    PYTHONPATH=. python3 bench/load_honesty.py --device cpu --load 12 [--cheats] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus import evaluate_small  # noqa: E402
from tests.harness.conftest import header  # noqa: E402  (the files' `# key: value` headers)

# the catalogue's timing cheats with a runtime verdict (tests/hacks/): caught on a quiet host
TIMING_CHEATS = (
    "batched_fixup_every_8th.py",
    "deferred_del_on_inputs.py",
    "forge_channel_picks_on_demand.py",
    "forge_window_reply_fd.py",
    "mode_fills_at_serialise.py",
    "read_recheck_picks.py",
)


# Each spinner burns one CPU until its deadline. They are started by a launcher that exits at
# once, so they are not this process's descendants: the host-load check leaves the evaluation's
# own process tree out (its sandboxes: farm.harness.host_load), and load on a real node comes
# from other programs.
_SPIN = (
    "import sys, time\n"
    "d = float(sys.argv[1])\n"
    "x = 0\n"
    "while time.time() < d:\n"
    "    x = (x * 31 + 7) % 1000003\n"
)
_LAUNCH = (
    "import subprocess, sys\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    p = subprocess.Popen([sys.executable, '-c', sys.argv[2], sys.argv[3]],\n"
    "                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "    print(p.pid)\n"
)


@contextmanager
def cpu_load(processes: int, max_s: float) -> Iterator[None]:
    """`processes` spinners, outside this process's tree, for at most `max_s` seconds; killed
    when the block ends."""
    deadline = time.time() + max_s
    pids: list[int] = []
    if processes > 0:
        out = subprocess.check_output(
            [sys.executable, "-c", _LAUNCH, str(processes), _SPIN, str(deadline)], text=True
        )
        pids = [int(line) for line in out.split()]
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def evaluate_one(path: Path, device: str, baselines: bool) -> dict[str, Any]:
    """One file through the farm: its verdict, reason codes and what the host looked like."""
    started = time.time()
    doc = evaluate_small(path, device, baselines=baselines, compile_baseline=False)
    hosts = [w["host"]["detail"] for w in doc["workloads"] if w.get("host")]
    return {
        "file": path.name,
        "expect": header(path).get("runtime", header(path).get("expect", "PASSED")),
        "verdict": doc["verdict"],
        "codes": sorted({r["code"] for r in doc["reasons"]}),
        "host": hosts[0] if hosts else "",
        "seconds": round(time.time() - started, 1),
    }


def run(paths: list[Path], device: str, baselines: bool) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        try:
            row = evaluate_one(path, device, baselines)
        except Exception as exc:  # a farm failure is a row, not the end of the table
            row = {"file": path.name, "verdict": f"ERROR {exc}"[:80], "codes": [], "host": ""}
        rows.append(row)
        print(
            f"{row['file'][:40]:40s} {row['verdict']:13s} {','.join(row['codes'])[:50]:50s} "
            f"(expect {row.get('expect', '?')}) {row.get('seconds', '')}",
            flush=True,
        )
    return rows


def honest_files(device: str) -> list[Path]:
    """tests/solutions/correct/ (less the files whose `# device:` header names another device)
    and, on npu-sim, the kernels it must rank (tests/solutions/npu_sim/)."""
    dirs = ["correct"] + (["npu_sim"] if device == "npu-sim" else [])
    paths = [p for d in dirs for p in sorted((ROOT / "tests/solutions" / d).glob("*.py"))]
    return [p for p in paths if header(p).get("device", device) == device]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--load", type=int, default=12, help="spinning processes (0: no load)")
    ap.add_argument("--max-s", type=float, default=1800.0, help="the load's bound, seconds")
    ap.add_argument("--match", default="", help="only honest files whose name holds this")
    ap.add_argument("--baselines", action="store_true", help="time eager baselines too")
    ap.add_argument("--cheats", action="store_true", help="then the timing cheats, no load")
    ap.add_argument("--json")
    args = ap.parse_args()
    honest = [p for p in honest_files(args.device) if args.match in p.name]
    print(f"# {len(honest)} honest files on {args.device} under {args.load} spinning processes")
    with cpu_load(args.load, args.max_s):
        rows = run(honest, args.device, args.baselines)
    counts = Counter(r["verdict"] for r in rows)
    print("# honest under load:", dict(counts))
    cheats: list[dict[str, Any]] = []
    if args.cheats:
        from farm.harness import report

        # the runtime layers alone, as bench/trust_catalogue.py --runtime-only runs them
        report.static_findings = lambda source, filename: []  # type: ignore[assignment]
        print("# timing cheats on the quiet host, static guard findings dropped")
        cheats = run([ROOT / "tests/hacks" / n for n in TIMING_CHEATS], args.device, False)
        print("# cheats:", dict(Counter(r["verdict"] for r in cheats)))
    if args.json:
        out = {"load": args.load, "device": args.device, "honest": rows, "cheats": cheats}
        Path(args.json).write_text(json.dumps(out, indent=1))
    rejected = counts.get("REJECTED", 0)
    passed_cheats = sum(r["verdict"] == "PASSED" for r in cheats)
    return 1 if rejected or passed_cheats else 0


if __name__ == "__main__":
    raise SystemExit(main())
