"""`farm problems [SUITE]` lists the problems of a suite; `farm problems show NAME` shows one:
its signature, inputs and outputs, tolerance per dtype, workloads (axes, dtype, model, FLOP,
bytes), which of them cpu and npu-sim leave out and why, and the starters `farm init NAME`
writes."""

from __future__ import annotations

import argparse
import json
import sys

from farm.errors import FarmError
from farm.suite.commands import DEFAULT_SUITE

PIPE_WIDTH = 160
USAGE = "farm problems [SUITE] [--suite NAME] [--category C] | farm problems show NAME [--json]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the `farm problems` arguments to `parser`."""
    parser.usage = USAGE
    parser.add_argument(
        "words",
        nargs="*",
        metavar="SUITE | show NAME",
        help=f"a suite to list (default {DEFAULT_SUITE}), or `show NAME` for one problem",
    )
    parser.add_argument("--suite", help=f"suite name or directory (default {DEFAULT_SUITE})")
    parser.add_argument("--category", help="only problems of this category")
    parser.add_argument("--json", action="store_true", help="`show`: print the problem as JSON")


def run(args: argparse.Namespace) -> int:
    """List the problems of a suite, or show one problem (`show NAME`)."""
    words = list(args.words)
    if words[:1] == ["show"]:
        if len(words) != 2:
            raise FarmError("`farm problems show` takes one problem name", hint=USAGE)
        return _show(_suite_name(args, None), words[1], as_json=args.json)
    if len(words) > 1:
        raise FarmError(f"unexpected arguments: {' '.join(words[1:])}", hint=USAGE)
    return _list(_suite_name(args, words[0] if words else None), args.category)


def _suite_name(args: argparse.Namespace, positional: str | None) -> str:
    if positional and args.suite and positional != args.suite:
        raise FarmError(f"two suites given ({positional} and --suite {args.suite})", hint=USAGE)
    return str(positional or args.suite or DEFAULT_SUITE)


def _list(suite_name: str, category: str | None) -> int:
    """Print one row per problem: name, category, pass, workload count and dtypes."""
    from farm.errors import unknown
    from farm.suite import loader, manifest

    suite = loader.load_suite(suite_name, verify=False)
    problems = sorted(suite.problems.values(), key=lambda p: (p.category, p.name))
    if category:
        categories = {p.category for p in problems}
        if category not in categories:
            raise unknown("category", category, categories, f"suite {suite.name}")
        problems = [p for p in problems if p.category == category]
    pinned = not manifest.differences(suite.root) if suite.hash else False
    _console().print(_table(suite.name, suite.hash, pinned, problems))
    return 0


def _console():
    from rich.console import Console

    # Piped output gets a fixed width wide enough that no name wraps (greppable rows).
    return Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)


def _table(name, suite_hash, pinned, problems):
    from rich.table import Table

    if suite_hash and pinned:
        state = f"pinned {suite_hash[:12]}"
    else:
        state = "NOT matching its manifest" if suite_hash else "not pinned"
    table = Table(title=f"{name} ({len(problems)} problems, {state})")
    for column in ("name", "category", "pass", "workloads", "dtypes"):
        table.add_column(column, justify="right" if column == "workloads" else "left")
    for p in problems:
        table.add_row(p.name, p.category, p.pass_, str(len(p.workloads)), ", ".join(p.dtypes))
    return table


def problem_find(suite_name: str, name: str):
    """The problem `name` of the suite; raises FarmError with a did-you-mean hint."""
    from farm.errors import unknown
    from farm.suite import loader

    suite = loader.load_suite(suite_name, verify=False)
    if name not in suite.problems:
        raise unknown("problem", name, suite.problems, f"suite {suite.name}")
    return suite.problems[name]


def problem_summary(problem) -> dict:
    """A JSON-able description of a problem (what `show --json` prints)."""
    from farm.suite.starters import STARTER_LANGUAGES

    return {
        "name": problem.name,
        "category": problem.category,
        "description": problem.description,
        "signature": problem.signature,
        "pass": problem.pass_,
        "inputs": [_spec(s) for s in problem.inputs],
        "outputs": [_spec(s) for s in problem.outputs],
        "tolerance": {d: {"atol": t.atol, "rtol": t.rtol} for d, t in problem.tolerance.items()},
        "languages": list(problem.languages),
        "starters": [lang for lang in STARTER_LANGUAGES if lang in problem.languages],
        "workloads": [problem.workload_summary(w) for w in problem.workloads],
        "sizes": problem.size_note(),
    }


def _spec(spec) -> dict:
    return {"name": spec.name, "shape": list(spec.shape), "dtype": spec.dtype}


def _show(suite_name: str, name: str, *, as_json: bool) -> int:
    summary = problem_summary(problem_find(suite_name, name))
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return 0
    out = _console()
    out.print(f"[bold]{summary['name']}[/] ({summary['category']}, {summary['pass']})")
    out.print(summary["description"], highlight=False)
    out.print(f"signature: {summary['signature']}", highlight=False)
    for role in ("inputs", "outputs"):
        specs = ", ".join(f"{s['name']}[{', '.join(map(str, s['shape']))}]" for s in summary[role])
        out.print(f"{role}: {specs}", highlight=False)
    for dtype, tol in summary["tolerance"].items():
        out.print(f"tolerance {dtype}: atol {tol['atol']:g}, rtol {tol['rtol']:g}")
    out.print(_workload_table(summary["workloads"]))
    if summary["sizes"]:
        out.print(f"sizes: {summary['sizes']}", highlight=False)
    out.print(
        f"starters ({', '.join(summary['starters'])}): "
        f"farm init {name} --lang {summary['starters'][0]}",
        highlight=False,
    )
    return 0


def _workload_table(workloads: list[dict]):
    from rich.table import Table

    table = Table(title="workloads")
    for column in ("id", "axes", "dtype", "model", "GFLOP", "MB"):
        table.add_column(column, justify="right" if column in ("GFLOP", "MB") else "left")
    for w in workloads:
        axes = " ".join(f"{k}={v}" for k, v in w["axes"].items())
        model = w["model"] or ("small (npu-sim)" if w["small"] else "-")
        table.add_row(
            w["id"], axes, w["dtype"], model, f"{w['flops'] / 1e9:.3g}", f"{w['bytes'] / 1e6:.3g}"
        )
    return table
