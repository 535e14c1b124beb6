"""`farm eval FILE --problem NAME [--suite S] [--device D] [--mode M] [--json OUT]`.

Exit codes (farm.result.exit_code, the same as `farm submit --wait`): 0 PASSED; 6 REJECTED; 5 any
other verdict about the kernel (INCORRECT, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT); 1 when the farm
could not give one (UNSUPPORTED, INCONCLUSIVE, NODE_FAULT, or the farm itself failed); 2 for wrong
arguments or an unusable file. Reasons and guard findings are printed whole.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from farm.errors import SubmissionError
from farm.hardware import kinds
from farm.result import Result, WorkloadEntry, exit_code, reason_line, reasons_grouped
from farm.suite.sizes import result_statement


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="the submission (a .py file defining kernel(*inputs))")
    p.add_argument("--problem", required=True, help="problem name, e.g. softmax")
    p.add_argument("--suite", default="core-v1", help="suite name or directory (default core-v1)")
    p.add_argument("--device", default="cpu", choices=kinds.KIND_NAMES)
    p.add_argument(
        "--mode", default="benchmark", choices=["test", "benchmark", "leaderboard", "profile"]
    )
    p.add_argument("--hardware", help="hardware class (default: detected from the device)")
    p.add_argument(
        "--workload",
        action="append",
        dest="workloads",
        help="run only this workload id (repeatable)",
    )
    p.add_argument(
        "--sandbox", default="auto", help="auto | docker | bwrap | process (FARM_SANDBOX)"
    )
    p.add_argument("--no-baselines", action="store_true", help="skip timing the reference")
    p.add_argument("--budget-ms", type=float, help="timing budget per workload (ms)")
    p.add_argument(
        "--json", type=Path, dest="json_out", help="write the result document here ('-' = stdout)"
    )


def run(args: argparse.Namespace) -> int:
    from farm.harness import prestart

    if not args.file.is_file():
        raise SubmissionError(
            f"{args.file}: no such file", hint="give the path of your kernel's .py file"
        )
    # the worker starts while this process imports torch (farm.harness.prestart)
    early = prestart.start(
        suite=args.suite,
        problem=args.problem,
        device=args.device,
        workloads=args.workloads,
        sandbox=args.sandbox,
    )
    try:
        doc = _evaluate(args, early).to_json()  # the document, made here where it leaves
    finally:
        if early is not None:
            early.close()
    if args.json_out and str(args.json_out) == "-":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return exit_code([doc.get("verdict")])
    print_result(doc)
    if args.json_out:
        args.json_out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"result document: {args.json_out}")
    return exit_code([doc.get("verdict")])


def _evaluate(args: argparse.Namespace, early: Any) -> Result:
    from farm.harness.supervisor import evaluate

    return evaluate(
        args.file,
        problem=args.problem,
        suite=args.suite,
        device=args.device,
        mode=args.mode,
        hardware=args.hardware,
        workloads=args.workloads,
        sandbox=args.sandbox,
        baselines=not args.no_baselines,
        policy={"budget_ms": args.budget_ms} if args.budget_ms else {},
        early=early,
    )


def print_result(doc: dict[str, Any]) -> None:
    """A table of workloads, then the verdict, reasons and guard findings."""
    from rich.console import Console
    from rich.table import Table

    r = Result.from_json(doc)
    console = Console()
    table = Table(title=f"{r.problem} on {r.hardware} ({r.mode.value}, suite {r.suite})")
    for col in (
        "workload",
        "status",
        "time",
        "±CI",
        "eager",
        "compile",
        "SOL",
        "SOL score",
        "% SOL",
    ):
        table.add_column(col, justify="left" if col in ("workload", "status") else "right")
    for w in r.workloads:
        table.add_row(
            w.id,
            _status(w.status.value),
            _t(w.time_ms),
            _ci(w),
            _t(w.baseline_ms.get("eager")),
            _t(w.baseline_ms.get("compile")),
            _t(w.sol_ms),
            _f(w.sol_score, "{:.3f}"),
            _f(w.fraction_of_sol, "{:.1%}"),
        )
    console.print(table)
    console.print(
        f"verdict: {_status(r.verdict.value)}   SOL score: {_f(r.sol_score, '{:.3f}')}   "
        f"speedup vs eager: {_f(r.score.get('speedup_eager'), '{:.2f}x')}"
    )
    sizes = result_statement(r)  # which sizes ran and which of the problem's did not, and why
    if sizes:
        console.print(f"sizes: {sizes}", markup=False, highlight=False)
    triples = [(x.code, x.detail, x.workload) for x in r.reasons]
    for code, detail, workloads in reasons_grouped(triples):
        console.print(reason_line(code, detail, workloads), markup=False, highlight=False)
    for f in r.findings:
        console.print(f"  guard {f.severity}: {f.code}: {f.detail}", markup=False, highlight=False)


def _status(s: str) -> str:
    color = {"PASSED": "green", "SKIPPED": "dim"}.get(s, "red")
    return f"[{color}]{s}[/{color}]"


def _t(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms * 1e3:.2f} us" if ms < 1 else f"{ms:.3f} ms"


def _ci(w: WorkloadEntry) -> str:
    """The half-width of the time's interval relative to the time ("-" below two samples)."""
    ci, count = w.interval, w.timing.count if w.timing else None
    if ci is None or not count or count < 2 or not w.time_ms:
        return "-"
    return f"{(ci.high_ms - ci.low_ms) / 2 / w.time_ms:.2%}"


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else fmt.format(x)
