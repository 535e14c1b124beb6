"""`farm export`: our results, suites and submissions in flashinfer-trace form.

    farm export traces RUN_ID|RESULT.json ... [-o traces.jsonl]   result documents -> Traces
    farm export suite SUITE -o DIR          problems -> definitions/*.json + workloads/*.jsonl
    farm export solution FILE --problem P [-o solution.json]       a kernel file -> Solution

Run ids are fetched from the server (FARM_URL / FARM_TOKEN); .json paths are read locally
(the documents `farm eval --json` writes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from farm.client.commands.common import add_server_arguments
from farm.errors import FarmError
from farm.result import ResultSchemaError, validate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="export_what", metavar="WHAT", required=True)
    traces = sub.add_parser("traces", help="result documents as flashinfer-trace Traces (JSONL)")
    traces.add_argument("results", nargs="+", help="run ids, or result JSON files")
    traces.add_argument("-o", "--output", default="-", help="JSONL file (default stdout)")
    traces.add_argument("--solution", help="solution name (default: farm-run-<id> / file stem)")
    add_server_arguments(traces)
    suite = sub.add_parser("suite", help="a suite as flashinfer-trace definitions + workloads")
    suite.add_argument("suite", help="suite name or directory")
    suite.add_argument("-o", "--output", required=True, type=Path, help="dataset folder to write")
    solution = sub.add_parser("solution", help="a kernel file as a flashinfer-trace Solution")
    solution.add_argument("file", type=Path, help="native submission file (defines `kernel`)")
    solution.add_argument("--problem", required=True, help="the problem (Definition) it solves")
    solution.add_argument("--name", help="solution name (default: the file stem)")
    solution.add_argument("--author", default="farm", help="author or agent name")
    solution.add_argument("--hw", default="", help="target hardware, comma-separated")
    solution.add_argument("-o", "--output", default="-", help="JSON file (default stdout)")


def run(args: argparse.Namespace) -> int:
    return {"traces": _traces, "suite": _suite, "solution": _solution}[args.export_what](args)


def _traces(args: argparse.Namespace) -> int:
    from farm.suite.importers.flashinfer import traces_from_result

    lines = []
    client = None
    for item in args.results:
        if item.isdigit():
            from farm.client.commands.common import make_client

            client = client or make_client(args)
            run = client.run(int(item))
            if run.result is None:
                raise FarmError(f"run {item} has no result yet (state {run.state})")
            doc, default = run.result.raw, f"farm-run-{item}"
        else:
            doc, default = _read_json(Path(item)), Path(item).stem
        lines += traces_from_result(doc, solution=args.solution or default)
    text = "".join(json.dumps(t) + "\n" for t in lines)
    _write(args.output, text)
    print(f"{len(lines)} traces", file=sys.stderr)
    return 0


def _suite(args: argparse.Namespace) -> int:
    from farm.suite.importers.flashinfer import definition_from_problem, workload_entries
    from farm.suite.loader import load_suite

    suite = load_suite(args.suite)
    out: Path = args.output
    (out / "definitions").mkdir(parents=True, exist_ok=True)
    (out / "workloads").mkdir(parents=True, exist_ok=True)
    for name, problem in sorted(suite.problems.items()):
        definition = definition_from_problem(problem)
        (out / "definitions" / f"{name}.json").write_text(json.dumps(definition, indent=1) + "\n")
        entries = workload_entries(problem, suite.hash)
        text = "".join(json.dumps(e) + "\n" for e in entries)
        (out / "workloads" / f"{name}.jsonl").write_text(text)
    print(f"{len(suite.problems)} definitions written to {out}", file=sys.stderr)
    return 0


def _solution(args: argparse.Namespace) -> int:
    from farm.suite.importers.flashinfer import solution_from_source

    source = args.file.read_text(encoding="utf-8")
    if "def kernel" not in source:
        raise FarmError(
            f"{args.file}: defines no `kernel` function",
            hint="only native submissions (kernel(*inputs)) export as Solutions",
        )
    hardware = [h for h in args.hw.split(",") if h]
    solution = solution_from_source(
        source,
        problem=args.problem,
        name=args.name or args.file.stem,
        author=args.author,
        hardware=hardware,
    )
    _write(args.output, json.dumps(solution, indent=1) + "\n")
    return 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise FarmError(f"{path}: not a readable result document ({exc})") from None
    try:
        return validate(doc)
    except ResultSchemaError as exc:
        raise FarmError(
            f"{path}: not a farm.result/1 document ({exc})", hint="pass `farm eval --json` output"
        ) from None


def _write(output: str, text: str) -> None:
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text)
