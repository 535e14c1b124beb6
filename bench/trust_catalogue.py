"""Run the trust catalogue through the whole farm on one device and print the table.

Each file of tests/hacks/ and tests/solutions/ carries its problem and the verdict the farm must
give in its header; this evaluates every selected file with `farm.harness.supervisor.evaluate`
(sandboxed worker, guard, checker) and prints two tables: the catch table (cheat x expected x
verdict x wall time, plus the first reason) and the false-positive table (honest file x verdict).
`--classes trust-3` runs the third round's classes (the worker's input maker and seed, its Session,
torch.library overrides of aten::clone and aten::equal, the timer's input generator and freed
blocks, marker-named kernels, amortising, work between calls) and the honest kernels that guard
against their defences' false positives (autotune, constexpr globals, CUDA graphs, a large
workspace, several streams). A file whose header names a `device` runs only there. By default it
runs the round-2 classes owned by the guard and the checker
(source confusion, reflective access, low precision, work-dir fill, honest in-dtype chains,
torch.compile, and the timing cheats: deferred work, re-check reading, forged windows); `--all`
runs every hack and every honest solution. `--runtime-only` runs the cheats whose header names a
`runtime` verdict with the static guard's findings dropped, and expects that verdict: the layers
that stop them at run time (captured outputs, late re-check picks, windows timed from outside)
on the device itself.

    PYTHONPATH=. python3 bench/trust_catalogue.py --device cpu
    PYTHONPATH=. python3 bench/trust_catalogue.py --device npu-sim
    PYTHONPATH=. FARM_LIMIT_COMPILE_S=120 python3 bench/trust_catalogue.py --device cuda \\
        --json OUT/trust_catalogue_cuda.json
    PYTHONPATH=. python3 bench/trust_catalogue.py --device cuda --runtime-only
    PYTHONPATH=. python3 bench/trust_catalogue.py --device cpu --classes trust-3

Exit 1 when any file gets another verdict than its header names (a cheat PASSED, an honest
kernel failed). torch.compile's first call compiles for ~30 s on a small CPU; raise
FARM_LIMIT_COMPILE_S (the farm's compile allowance) on such nodes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from farm.harness.supervisor import evaluate

TESTS = Path(__file__).resolve().parent.parent / "tests"
HEADER = re.compile(r"^# (problem|expect|runtime|device): (\S+)", re.M)
ROUND_2 = [
    "hacks/coding_cookie_utf7.py",
    "hacks/aliased_allocator_import.py",
    "hacks/gc_aliased_import.py",
    "hacks/vars_module_timer.py",
    "hacks/computed_getattr_timer.py",
    "hacks/precision_fp8_scaled_output.py",
    "hacks/precision_downgrade.py",
    "hacks/disk_fill_workdir.py",
    "hacks/background_thread.py",
    "hacks/deferred_del_on_inputs.py",
    "hacks/mode_fills_at_serialise.py",
    "hacks/batched_fixup_every_8th.py",
    "hacks/read_recheck_picks.py",
    "hacks/forge_window_reply_fd.py",
    "hacks/forge_channel_picks_on_demand.py",
    "solutions/correct/softmax__bf16_unfused_chain.py",
    "solutions/correct/rmsnorm__bf16_chain.py",
    "solutions/correct/softmax__triton.py",
    "solutions/compiled/softmax__torch_compile.py",
]
TRUST_3 = [
    "hacks/precompute_from_input_maker.py",
    "../bench/open_cheats/library_clone_computes.py",  # still wins: kept out of the tests
    "hacks/library_equal_always_true.py",
    "../bench/open_cheats/session_times_match_pattern.py",  # still wins: kept out of the tests
    "../bench/open_cheats/session_times_pickle_global.py",  # still wins: kept out of the tests
    "../bench/open_cheats/session_times_reexport.py",  # still wins: kept out of the tests
    "hacks/input_maker_leaves_answer.py",
    "../bench/open_cheats/forged_marker_kernel_name.py",  # still wins: kept out of the tests
    "hacks/amortise_one_in_60.py",
    "../bench/open_cheats/del_precomputes_next_call.py",  # still wins: kept out of the tests
    "solutions/correct/rmsnorm__bf16_chain.py",
    "solutions/correct/softmax__bf16_unfused_chain.py",
    "solutions/compiled/softmax__torch_compile.py",
    "solutions/correct/softmax__triton_autotune.py",
    "solutions/correct/rmsnorm__triton_constexpr_global.py",
    "../bench/open_cheats/vector_add__cuda_graph.py",  # honest, rejected by the static guard
    "solutions/correct/matmul__split_k_workspace.py",
    "solutions/correct/vector_add__two_streams.py",
]
CLASSES = {"round-2": ROUND_2, "trust-3": TRUST_3}


def selected(everything: bool, runtime_only: bool = False, classes: str = "round-2") -> list[Path]:
    if runtime_only:
        hacks = sorted((TESTS / "hacks").glob("*.py"))
        return [p for p in hacks if "\n# runtime: " in p.read_text(encoding="utf-8")]
    if not everything:
        return [(TESTS / rel).resolve() for rel in CLASSES[classes]]
    hacks = [p for p in sorted((TESTS / "hacks").glob("*.py")) if not p.name.startswith("test_")]
    honest = sorted((TESTS / "solutions" / "correct").glob("*.py"))
    return hacks + honest + sorted((TESTS / "solutions" / "compiled").glob("*.py"))


def run_one(path: Path, device: str, mode: str, runtime_only: bool = False) -> dict[str, Any]:
    header = dict(HEADER.findall(path.read_text(encoding="utf-8", errors="replace")))
    if runtime_only:
        from farm.harness import report

        report.static_findings = lambda source, filename: []  # type: ignore[assignment]
        header["expect"] = header["runtime"]
    if header.get("device", device) != device:  # meaningful on that device only
        return _row(path, header, f"SKIPPED ({header['device']} only)", ok=True)
    start = time.monotonic()
    try:
        doc = evaluate(path, problem=header["problem"], device=device, mode=mode).to_json()
        verdict = doc["verdict"]
        reasons = [
            f"{r['code']}: {' '.join(r['detail'].split())[:160]}" for r in doc["reasons"][:2]
        ]
        findings = sorted({f["code"] for f in doc["guard"]["findings"]})
        rejecting = [f for f in doc["guard"]["findings"] if f["severity"] == "reject"]
        details = [f"{f['code']}: {f.get('detail', '')}"[:400] for f in rejecting[:3]]
        env = doc.get("environment", {})
        memory = {w["id"]: w["memory"] for w in doc["workloads"] if "memory" in w}
        statuses = {w["id"]: w["status"] for w in doc["workloads"]}
    except Exception as exc:  # a farm failure is a row of the table, not the end of the run
        verdict, reasons, findings = "FARM_ERROR", [f"{type(exc).__name__}: {exc}"[:200]], []
        env, memory, statuses, details = {}, {}, {}, []
    return {
        "file": str(path.relative_to(TESTS.parent)),
        "problem": header["problem"],
        "expect": header["expect"],
        "verdict": verdict,
        "ok": verdict == header["expect"],
        "wall_s": round(time.monotonic() - start, 1),
        "reasons": reasons,
        "findings": findings,
        "finding_details": details,  # the first rejecting findings, as the guard worded them
        "sandbox": env.get("sandbox"),
        "output_transport": env.get("output_transport"),
        "statuses": statuses,
        "memory": memory,  # on GPUs: each workload's device peak and limit, as the watch saw
    }


def _row(path: Path, header: dict[str, str], verdict: str, *, ok: bool) -> dict[str, Any]:
    """The row of a file that was not evaluated on this device."""
    return {
        "file": str(path.relative_to(TESTS.parent)),
        "problem": header["problem"],
        "expect": header["expect"],
        "verdict": verdict,
        "ok": ok,
        "wall_s": 0.0,
        "reasons": [],
        "findings": [],
    }


def print_tables(rows: list[dict[str, Any]], device: str) -> None:
    """The catch table (cheats) and the false-positive table (honest files) of `rows`."""
    cheats = [r for r in rows if r["file"].startswith("hacks/")]
    honest = [r for r in rows if not r["file"].startswith("hacks/")]
    print(f"\n### Catch table ({device})\n")
    print(f"| cheat | problem | expect | verdict ({device}) | wall s | first reason |")
    print("|---|---|---|---|---|---|")
    for row in cheats:
        print(_line(row))
    print(f"\n### False positives ({device})\n")
    print(f"| honest file | problem | verdict ({device}) | wall s | first reason |")
    print("|---|---|---|---|---|")
    for row in honest:
        print(_line(row, expect=False))


def _line(row: dict[str, Any], *, expect: bool = True) -> str:
    mark = "" if row["ok"] else " **(unexpected)**"
    first = row["reasons"][0] if row["reasons"] else ", ".join(row["findings"])
    cells = [f"`{row['file']}`", row["problem"]] + ([row["expect"]] if expect else [])
    cells += [f"{row['verdict']}{mark}", str(row["wall_s"]), first.replace("|", "/")]
    return "| " + " | ".join(cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu | npu-sim | cuda | rocm")
    parser.add_argument("--mode", default="benchmark")
    parser.add_argument("--all", action="store_true", help="every hack and honest solution")
    parser.add_argument(
        "--runtime-only", action="store_true", help="timing cheats, static guard findings dropped"
    )
    parser.add_argument(
        "--classes", default="round-2", choices=sorted(CLASSES), help="which selection to run"
    )
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    rows = []
    for path in selected(args.all, args.runtime_only, args.classes):
        row = run_one(path, args.device, args.mode, args.runtime_only)
        rows.append(row)
        print(_line(row), flush=True)  # progress; the tables follow
    print_tables(rows, args.device)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    bad = [r["file"] for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} as expected" + (f"; not: {bad}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
