"""`farm cancel RUN [RUN ...]`: stop runs that have not finished (yours; any, as an admin).

A cancelled run fails as CANCELLED (the farm's outcome, never a reward): a queued one is never
taken, a node running one stops it at its next heartbeat and what it reports after is refused.
`--submission` takes submission ids instead and cancels each one's unfinished runs.

Exit: 0 every run named is cancelled (again: harmless), 2 one had already finished or does not
exist (the others are still cancelled), 3 not yours to cancel, 1 the server failed.
"""

from __future__ import annotations

import argparse

from farm.client.commands.common import add_server_arguments, console, make_client
from farm.client.errors import BadRequest
from farm.errors import FarmError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", type=int, nargs="+", metavar="RUN", help="run id(s)")
    parser.add_argument(
        "--submission",
        action="store_true",
        help="the ids are submission ids: cancel each one's unfinished runs",
    )
    add_server_arguments(parser)


def run(args: argparse.Namespace) -> int:
    client = make_client(args)
    run_ids = _unfinished_runs(client, args.ids) if args.submission else list(args.ids)
    out, refused = console(), []
    for run_id in run_ids:
        try:
            cancelled = client.cancel(run_id)
        except BadRequest as exc:  # 404 unknown, 409 finished: say so and go on
            refused.append(exc)
            console(stderr=True).print(f"run {run_id}: {exc.message}", highlight=False)
            continue
        out.print(f"run {cancelled.id} ({cancelled.hardware}): {cancelled.failure_detail}")
    if refused:
        raise FarmError(f"{len(refused)} of {len(run_ids)} run(s) not cancelled (see above)")
    return 0


def _unfinished_runs(client, submission_ids: list[int]) -> list[int]:
    found = [r for sid in submission_ids for r in client.submission(sid).runs]
    unfinished = [r.id for r in found if not r.finished]
    if not unfinished:
        listed = ", ".join(map(str, submission_ids))
        raise FarmError(f"submission {listed}: every run has finished; nothing to cancel")
    return unfinished
