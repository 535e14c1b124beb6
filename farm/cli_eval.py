"""`farm eval`: served by the warm evaluation daemon when one runs, else cold in this process.

The options, the table and the exit codes are the harness command's (farm.harness.commands);
this adds where the evaluation happens. When a daemon of this FARM_HOME answers with the same
FARM_ settings, it evaluates the file (farm.eval_daemon: torch, the harness and a sandboxed
worker already started); when none runs, or it dies or fails on the way, the file is evaluated
cold here, as before, and the verdict is the same either way.

    farm eval k.py --problem softmax --keep-warm   # start the daemon if none runs, use it
    farm eval k.py --problem softmax               # warm if a daemon runs, cold otherwise
    farm eval k.py --problem softmax --cold        # never the daemon
    farm pool status | farm pool stop              # see it, stop it
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from farm.eval_daemon import client
from farm.eval_daemon.wire import (
    MAX_SOURCE_BYTES,
    EvalRequest,
    code_stamp,
    settings_fingerprint,
)
from farm.harness import commands
from farm.result import exit_code

IDLE_EXIT_S = 3600.0  # a daemon started by --keep-warm exits after an hour without work


def add_arguments(p: argparse.ArgumentParser) -> None:
    commands.add_arguments(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--keep-warm",
        action="store_true",
        help="start the warm evaluation daemon if none runs and leave it for the next "
        "`farm eval` (it exits after an hour without work; `farm pool stop` stops it)",
    )
    where.add_argument(
        "--cold", action="store_true", help="evaluate in this process even if a daemon runs"
    )


def run(args: argparse.Namespace) -> int:
    document = None if args.cold else warm_document(args)
    if document is None:
        return int(commands.run(args))
    return finish(args, document)


def warm_document(args: argparse.Namespace) -> dict[str, Any] | None:
    """The result document from the daemon, or None: evaluate cold (a note on stderr says why
    when a daemon was expected)."""
    request = eval_request(args)
    if request is None:
        return None  # the cold command says what is wrong with the file
    if args.keep_warm:
        client.start(device=args.device, sandbox=args.sandbox, idle_exit_s=IDLE_EXIT_S)
    try:
        return client.evaluate(request)
    except client.Unavailable as exc:
        if exc.stale or args.keep_warm:
            print(f"note: evaluating cold: {exc.detail}", file=sys.stderr)
        return None


def eval_request(args: argparse.Namespace) -> EvalRequest | None:
    """What the daemon needs to evaluate as this command would; None when the file cannot be
    sent as text (missing, too large, not UTF-8)."""
    try:
        raw = args.file.read_bytes()
        source = raw.decode("utf-8") if len(raw) <= MAX_SOURCE_BYTES else None
    except (OSError, UnicodeDecodeError):
        return None
    if source is None:
        return None
    suite = Path(args.suite)
    return EvalRequest(
        source=source,
        filename=args.file.name,
        problem=args.problem,
        suite=str(suite.resolve()) if suite.is_dir() else args.suite,
        device=args.device,
        mode=args.mode,
        hardware=args.hardware,
        workloads=args.workloads,
        sandbox=args.sandbox,
        baselines=not args.no_baselines,
        budget_ms=args.budget_ms,
        settings=settings_fingerprint(),
        code=code_stamp(),
    )


def finish(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """Print or write the document as the cold command does; the exit code of its verdict."""
    if args.json_out and str(args.json_out) == "-":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return exit_code([doc.get("verdict")])
    commands.print_result(doc)
    if args.json_out:
        args.json_out.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"result document: {args.json_out}")
    return exit_code([doc.get("verdict")])
