"""`farm submit FILE`: send a kernel file to a farm server; with --wait, follow its runs live.

Flags stand in for, and override, `#!farm problem=... hw=... mode=...` lines at the top of the
file. The file is sent unchanged, in any form the harness accepts (native `kernel`, KernelBench
`ModelNew`, GPU MODE `custom_kernel`).

Exit: 0 submitted (with --wait: every run PASSED), 1 the server is down or (with --wait) the farm
could not measure a run (UNSUPPORTED, INCONCLUSIVE, NODE_FAULT, failed, cancelled), 2 bad input (a
file that does not parse as Python included), 3 refused (auth, quota), 4 --wait timed out; with
--wait, 5 the kernel did not pass on some run (INCORRECT, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT)
and 6 a run was REJECTED (the farm believes the kernel games the evaluation). A verdict about the
kernel outranks a farm outcome: an RL loop can branch on the code alone (docs/client.md).
"""

from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path

from farm.client.commands.common import (
    add_server_arguments,
    console,
    header_directives,
    make_client,
    split_list,
    write_json,
)
from farm.errors import FarmError
from farm.result import exit_code

DEFAULT_TIMEOUT_S = 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="kernel source file")
    parser.add_argument("--problem", help="problem name (or `#!farm problem=` in the file)")
    parser.add_argument("--hw", help="hardware class(es), comma-separated, e.g. npu-sim-v1")
    parser.add_argument(
        "--mode", help="test | benchmark | leaderboard | profile (default benchmark)"
    )
    parser.add_argument("--suite", help="suite name (default: the server's default suite)")
    parser.add_argument("--label", help="a note shown with the submission")
    parser.add_argument("--public", action="store_true", help="let the entry appear on boards")
    parser.add_argument("--wait", action="store_true", help="follow the runs until they finish")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds --wait waits before giving up with exit 4 (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument("--json", metavar="OUT", help="write the submission (and runs) as JSON")
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    path: Path = args.file
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FarmError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    fields = _fields(args, source, path.name)
    _check_parses(source, path)
    client = make_client(args)
    submission = client.submit(source, filename=path.name, private=not args.public, **fields)
    err = console(stderr=True)
    err.print(
        f"submission {submission.id}: {submission.problem} on "
        f"{', '.join(r.hardware for r in submission.runs)} ({submission.mode}), "
        f"runs {', '.join(str(i) for i in submission.run_ids)}"
    )
    for warning in submission.warnings:
        err.print(f"warning: {warning}", style="yellow", highlight=False)
    if not args.wait:
        err.print(f"follow it with `farm status {submission.id}`")
        if args.json:
            write_json(args.json, submission.raw)
        return 0
    runs = follow(client, submission, timeout_s=args.timeout)
    show_results(runs)
    if args.json:
        write_json(args.json, {**submission.raw, "runs": [r.raw for r in runs]})
    return verdict_exit_code(runs)


def verdict_exit_code(runs) -> int:
    """The exit code of finished runs (farm.result.exit_code): a run whose outcome says nothing
    about the kernel (a farm outcome, a failed or cancelled run: docs/outcomes.md) counts as no
    verdict."""
    return exit_code(r.verdict if r.is_about_kernel else None for r in runs)


def _check_parses(source: str, path: Path) -> None:
    """Refuse, before the upload, a file that does not parse as Python (the server would refuse
    it too): the message points at the line."""
    try:
        ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
        line = (exc.text or "").rstrip()
        raise FarmError(
            f"{where}: {exc.msg}" + (f"\n    {line}" if line else ""),
            hint="fix the file (`python -m py_compile FILE` shows the same error) and submit again",
        ) from None
    except (RecursionError, MemoryError):
        pass  # the server says what is wrong with it


def _fields(args: argparse.Namespace, source: str, filename: str) -> dict:
    header = header_directives(source, filename=filename)
    problem = args.problem or header.get("problem")
    hardware = split_list(args.hw or header.get("hw"))
    missing = [n for n, v in (("--problem", problem), ("--hw", hardware)) if not v]
    if missing:
        raise FarmError(
            f"{filename}: {' and '.join(missing)} not given",
            hint="pass them, or start the file with `#!farm problem=NAME hw=npu-sim-v1`",
        )
    fields = {"problem": problem, "hardware": hardware}
    fields["mode"] = args.mode or header.get("mode") or "benchmark"
    for key in ("suite", "label"):
        value = getattr(args, key) or header.get(key)
        if value:
            fields[key] = value
    return fields


def follow(client, submission, *, timeout_s: float):
    """Show each run's state live until all are finished; return them with their results."""
    from rich.live import Live

    from farm.client.errors import WaitTimeout
    from farm.client.types import Run

    started = time.monotonic()
    runs: dict[int, Run] = {r.id: r for r in submission.runs}
    delay = client.poll_s
    with Live(_progress(runs.values(), 0.0), console=console(stderr=True), transient=True) as live:
        while not all(r.finished for r in runs.values()):
            elapsed = time.monotonic() - started
            if elapsed > timeout_s:
                pending = [i for i, r in runs.items() if not r.finished]
                raise WaitTimeout(
                    f"submission {submission.id}: {len(pending)} run(s) unfinished after "
                    f"{timeout_s:g} s",
                    pending=pending,
                    hint=f"check later with `farm status {submission.id}`",
                )
            time.sleep(min(delay, max(0.0, timeout_s - elapsed)))
            delay = min(delay * 1.5, client.max_poll_s)
            runs.update({r.id: r for r in client.submission(submission.id).runs})
            live.update(_progress(runs.values(), time.monotonic() - started))
    return [client.run(i) for i in runs]


def _progress(runs, elapsed: float):
    from rich.table import Table

    table = Table(title=f"waiting ({elapsed:.0f} s)", show_edge=False)
    for col in ("run", "hardware", "state", "verdict"):
        table.add_column(col)
    for r in runs:
        table.add_row(str(r.id), r.hardware, r.state, r.verdict or "-")
    return table


def show_results(runs) -> None:
    from farm.client.commands.tables import result_table, run_footer

    out = console()
    for r in runs:
        out.print(result_table(r))
        for line in run_footer(r):
            out.print(line, highlight=False, markup=False)  # tracebacks hold [brackets]
