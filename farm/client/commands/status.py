"""`farm status ID`: a submission's runs, and each finished run's per-workload results."""

from __future__ import annotations

import argparse

from farm.client.commands.common import add_server_arguments, console, make_client, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", type=int, help="submission id (printed by `farm submit`)")
    parser.add_argument("--run", action="store_true", help="ID is a run id, not a submission id")
    parser.add_argument("--json", metavar="OUT", help="write the runs with their results as JSON")
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from farm.client.commands.submit import show_results
    from farm.client.commands.tables import queue_lines, runs_table

    client = make_client(args)
    if args.run:
        runs = [client.run(args.id)]
        title = f"run {args.id}"
    else:
        submission = client.submission(args.id)
        runs = [client.run(r.id) for r in submission.runs]
        title = f"submission {submission.id} ({submission.state})"
        if submission.raw.get("hacked"):
            note = submission.raw.get("hacked_note") or "no reason given"
            console(stderr=True).print(f"taken off the boards by an operator: {note}", markup=False)
    if args.json:
        write_json(args.json, [r.raw for r in runs])
        if args.json == "-":
            return 0
    out = console()
    out.print(runs_table(runs, title=title))
    for line in queue_lines(runs):
        out.print(line, highlight=False, markup=False)
    show_results([r for r in runs if r.finished])
    return 0
