#!/usr/bin/env python3
"""API latency under load with a large runs table in PostgreSQL.

Fills a dedicated PostgreSQL database with N runs (COPY, in batches), serves the leaderboard
with gunicorn on 127.0.0.1, sends board and submission-status reads at a fixed request rate from
one asyncio thread (open loop: latency counts from each request's scheduled start, so a slow
server cannot hide behind fewer requests), and prints p50/p95/p99 per endpoint, the load average
and the CPU time used by gunicorn, PostgreSQL, the generator and the whole machine. With --out
it writes the table, the command and the machine to a Markdown file; --in-process N measures
the cost of each read without HTTP instead.

  python3 bench/api_load.py --runs 1000000 --rate 200 --duration 60
  python3 bench/api_load.py --skip-fill --in-process 1000

Loopback only; the load is bounded by --duration and --connections.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from loadgen import Load, cpu_probe, pct  # bench/loadgen.py, beside this file

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = ("nvidia-h100", "nvidia-h200", "amd-mi300x", "npu-sim-v1")
# Columns the fill writes; the others get their model defaults (_defaults).
# fmt: off
SUBMISSION_COLUMNS = (
    "id", "user_id", "source_id", "filename", "label", "language", "suite_id", "suite_hash",
    "problem_id", "mode", "private", "hacked", "hacked_note", "created_at",
)
RUN_COLUMNS = (
    "submission_id", "user_id", "problem_id", "hardware_id", "mode", "state", "attempt",
    "created_at", "verdict", "sol_score", "failure_code", "failure_detail",
)
# fmt: on


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/farm_bench")
    p.add_argument("--runs", type=int, default=1_000_000, help="runs to put in the table")
    p.add_argument("--users", type=int, default=2000)
    p.add_argument("--batch", type=int, default=100_000, help="rows per COPY batch")
    p.add_argument("--skip-fill", action="store_true", help="reuse the data already there")
    p.add_argument("--rate", type=float, default=200.0, help="requests per second")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of measured load")
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument(
        "--connections", type=int, default=64, help="client connections (bound on in-flight)"
    )
    p.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    p.add_argument("--worker-threads", type=int, default=2, help="gunicorn threads per worker")
    p.add_argument("--out", type=Path, help="write a Markdown report here")
    p.add_argument(
        "--in-process",
        type=int,
        metavar="N",
        help="instead of the HTTP load: N reads of each kind through Django's test client, "
        "one at a time, and their cost per request",
    )
    return p.parse_args(argv)


def ensure_database(url: str) -> None:
    import psycopg

    name = urlparse(url).path.lstrip("/")
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def django_setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fill(args: argparse.Namespace) -> dict[str, int]:
    """Users, one shared source, submissions with one run per hardware class, results-free
    runs in mixed states, and board entries; returns the row counts."""
    from django.contrib.auth.models import User
    from django.db import connection

    from leaderboard.problems.models import Problem
    from leaderboard.problems.services import suites_sync
    from leaderboard.runs.models import Run
    from leaderboard.submissions.models import Submission
    from leaderboard.submissions.services import source_get_or_create

    suites, errors = suites_sync()
    if not suites:
        sys.exit(f"no suite could be loaded: {errors}")
    problems = list(Problem.objects.filter(suite=suites[0]).order_by("name")[:8])
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE boards_boardentry, boards_board, artifacts_artifact, runs_workloadresult, "
            "runs_result, runs_run, submissions_submission, accounts_apitoken "
            "RESTART IDENTITY CASCADE"
        )
        cur.execute("DELETE FROM auth_user WHERE username LIKE 'bench-%%'")
    User.objects.bulk_create(
        [User(username=f"bench-{i}") for i in range(args.users)], batch_size=5000
    )
    user_ids = list(User.objects.filter(username__startswith="bench-").values_list("id", flat=True))
    source = source_get_or_create(text="def kernel(a, b):\n    return a + b\n")
    n_subs = args.runs // len(HARDWARE)
    raw = connection.connection  # psycopg connection under Django's
    sub_rest, run_rest = _defaults(Submission, SUBMISSION_COLUMNS), _defaults(Run, RUN_COLUMNS)
    states = ["done"] * 85 + ["failed"] * 5 + ["queued"] * 6 + ["running"] * 4
    t0 = time.monotonic()
    with raw.cursor() as cur:
        for start in range(0, n_subs, args.batch):
            stop = min(n_subs, start + args.batch)
            with cur.copy(_copy_sql(Submission, SUBMISSION_COLUMNS, sub_rest)) as copy:
                for i in range(start + 1, stop + 1):
                    p = problems[i % len(problems)]
                    copy.write_row(
                        (
                            i,
                            user_ids[i % len(user_ids)],
                            source.sha256,
                            "k.py",
                            "",
                            "triton",
                            p.suite_id,
                            suites[0].hash,
                            p.pk,
                            "leaderboard",
                            False,
                            False,
                            "",
                            "2026-01-01T00:00:00Z",
                            *sub_rest.values(),
                        )
                    )
            with cur.copy(_copy_sql(Run, RUN_COLUMNS, run_rest)) as copy:
                for i in range(start + 1, stop + 1):
                    p = problems[i % len(problems)]
                    for hw in HARDWARE:
                        state = states[(i * 7 + len(hw)) % len(states)]
                        done = state == "done"
                        copy.write_row(
                            (
                                i,
                                user_ids[i % len(user_ids)],
                                p.pk,
                                hw,
                                "leaderboard",
                                state,
                                1 if state != "queued" else 0,
                                "2026-01-01T00:00:00Z",
                                "PASSED" if done else "",
                                random.random() if done else None,
                                "",
                                "",
                                *run_rest.values(),
                            )
                        )
            raw.commit()
            print(f"  {stop * len(HARDWARE):>9} runs ({time.monotonic() - t0:.0f} s)", flush=True)
        cur.execute(
            "SELECT setval(pg_get_serial_sequence('submissions_submission', 'id'), %s)", (n_subs,)
        )
        _fill_boards(cur, problems, user_ids)
        raw.commit()
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    return {"runs": n_subs * len(HARDWARE), "submissions": n_subs, "users": len(user_ids)}


def _defaults(model, given: tuple[str, ...]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Column -> default of the model's columns that the COPY rows do not set: COPY does not
    apply Django's Python-side defaults, so a NOT NULL field added to the model later would
    otherwise break the fill (a blank-able text field's default is ""). Nullable columns
    without a default are left to NULL."""
    return {
        f.column: f.get_default()
        for f in model._meta.concrete_fields
        if f.column not in given and not f.primary_key and (f.has_default() or not f.null)
    }


def _copy_sql(model, given: tuple[str, ...], rest: dict[str, object]) -> str:  # type: ignore[no-untyped-def]
    return f"COPY {model._meta.db_table} ({', '.join([*given, *rest])}) FROM STDIN"


def _fill_boards(cur, problems, user_ids) -> None:  # type: ignore[no-untyped-def]
    """One board per problem x hardware with an entry per user (their best done run)."""
    for p in problems:
        for hw in HARDWARE:
            cur.execute(
                "INSERT INTO boards_board (problem_id, hardware_id, sources_public, version) "
                "VALUES (%s, %s, false, 0) RETURNING id",
                (p.pk, hw),
            )
            board_id = cur.fetchone()[0]
            cur.execute(
                "INSERT INTO boards_boardentry (board_id, user_id, run_id, submission_id, "
                "sol_score, time_ms, sol_ms, fraction_of_sol, speedup_eager, speedup_compile, "
                "intervals, updated_at) "
                "SELECT DISTINCT ON (r.user_id) %s, r.user_id, r.id, r.submission_id, r.sol_score, "
                "1.0 / (0.1 + r.sol_score), 0.05, 0.05 * (0.1 + r.sol_score), 2.0, 1.5, "
                "jsonb_build_object('w', jsonb_build_array(0.99 / (0.1 + r.sol_score), "
                "1.01 / (0.1 + r.sol_score))), now() "
                "FROM runs_run r WHERE r.problem_id = %s AND r.hardware_id = %s "
                "AND r.state = 'done' "
                "ORDER BY r.user_id, r.sol_score DESC",
                (board_id, p.pk, hw),
            )


def targets(sample: int = 2000) -> tuple[list[str], list[tuple[str, str]]]:
    """Board URLs, and (submission URL, owner token) pairs for status reads."""
    from leaderboard.accounts.services import api_token_create
    from leaderboard.boards.models import Board
    from leaderboard.submissions.models import Submission

    boards = [
        f"/api/boards/{b.problem.suite_id}/{b.problem.name}/{b.hardware_id}/"
        for b in Board.objects.select_related("problem")
    ]
    top = Submission.objects.order_by("-id").values_list("id", flat=True).first() or 0
    ids = random.sample(range(1, top + 1), min(sample, top))
    tokens: dict[int, str] = {}
    status = []
    for sub in Submission.objects.filter(id__in=ids).select_related("user"):
        if sub.user_id not in tokens:
            tokens[sub.user_id] = api_token_create(user=sub.user, name="bench")[1]
        status.append((f"/api/submissions/{sub.pk}/", tokens[sub.user_id]))
    return boards, status


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "FARM_LOG_LEVEL": "WARNING",
        "DATABASE_CONN_MAX_AGE": "600",
    }
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "leaderboard.wsgi",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        str(args.workers),
        "-k",
        "gthread",
        "--threads",
        str(args.worker_threads),
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    import requests

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/health/", timeout=1).ok:
                return proc
        except requests.RequestException:
            time.sleep(0.3)
    proc.terminate()
    sys.exit("gunicorn did not come up")


def report(load: Load, args: argparse.Namespace, counts: dict[str, int], wall: float) -> str:
    total = sum(len(v) for v in load.samples.values())
    lines = [
        "| endpoint | requests | errors | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    names = {
        "board": "GET /api/boards/<suite>/<problem>/<hw>/",
        "status": "GET /api/submissions/<id>/",
    }
    for kind in ("board", "status"):
        v = load.samples[kind]
        lines.append(
            f"| {names[kind]} | {len(v)} | {load.errors[kind]} | {pct(v, 50):.1f} | "
            f"{pct(v, 95):.1f} | "
            f"{pct(v, 99):.1f} | {max(v):.1f} |"
        )
    every = [x for v in load.samples.values() for x in v]
    lines.append(
        f"| all | {total} | {sum(load.errors.values())} | {pct(every, 50):.1f} | "
        f"{pct(every, 95):.1f} | "
        f"{pct(every, 99):.1f} | {max(every):.1f} |"
    )
    lines.append("")
    lines.append(
        f"Offered {args.rate:.0f} req/s for {args.duration:.0f} s; "
        f"achieved {total / wall:.0f} req/s "
        f"(sending took {wall:.1f} s). Runs in the table: {counts.get('runs', 'existing')}."
    )
    if load.reasons:
        lines.append("Errors: " + ", ".join(f"{n} x {r}" for r, n in load.reasons.most_common()))
    return "\n".join(lines)


def cpu_report(used: dict[str, float], requests: int, args: argparse.Namespace) -> str:
    """Where the CPU went during the measured load (from cpu_probe's differences)."""
    names = {
        "gunicorn": f"gunicorn (master + {args.workers} workers x {args.worker_threads} threads)",
        "postgres": "PostgreSQL backends of the bench database",
        "generator": "load generator (this process)",
        "machine": f"whole machine ({os.cpu_count()} CPUs, every process)",
    }
    lines = ["| CPU used by | CPU s | ms per request | CPUs busy |", "|---|---|---|---|"]
    for key, name in names.items():
        lines.append(
            f"| {name} | {used[key]:.1f} | {used[key] / requests * 1e3:.2f} | "
            f"{used[key] / used['wall']:.2f} |"
        )
    return "\n".join(lines)


def in_process(boards: list[str], status: list[tuple[str, str]], n: int) -> str:
    """Cost of one read inside this process (Django's test client: no HTTP, no gunicorn, no
    concurrency): wall and CPU time per request (ms) and the queries of one read. The warm-up
    uses every token once, so that the measured reads do not include the write recording a
    token's first use (repeated at most once a minute per token)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")

    def read(kind: str) -> None:
        if kind == "board":
            r = client.get(random.choice(boards))
        else:
            path, token = random.choice(status)
            r = client.get(path, HTTP_AUTHORIZATION=f"Bearer {token}")
        if r.status_code != 200:
            sys.exit(f"{kind} read answered {r.status_code}: {r.content[:200]!r}")

    for path, token in status:
        client.get(path, HTTP_AUTHORIZATION=f"Bearer {token}")
    lines = ["| read | wall ms | CPU ms | queries |", "|---|---|---|---|"]
    for kind in ("board", "status"):
        for _ in range(n // 4):
            read(kind)
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            read(kind)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        with CaptureQueriesContext(connection) as queries:
            read(kind)
        lines.append(f"| {kind} | {wall / n * 1e3:.2f} | {cpu / n * 1e3:.2f} | {len(queries)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_database(args.database_url)
    django_setup(args.database_url)
    counts: dict[str, int] = {}
    if not args.skip_fill:
        t = time.monotonic()
        print(f"filling {args.runs} runs ...", flush=True)
        counts = fill(args)
        counts["fill_s"] = int(time.monotonic() - t)
    else:
        from leaderboard.runs.models import Run

        counts = {"runs": Run.objects.count()}
    boards, status = targets()
    if args.in_process:
        print(in_process(boards, status, args.in_process))
        return 0
    port = free_port()
    before = os.getloadavg()
    server = start_server(args, port)
    try:
        load = Load(port, boards, status, args.connections)
        probe = cpu_probe(server.pid, urlparse(args.database_url).path.lstrip("/"))
        wall, used = asyncio.run(
            load.warm_then_measure(args.rate, args.warmup, args.duration, probe)
        )
        after = os.getloadavg()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    table = report(load, args, counts, wall)
    requests = sum(len(v) for v in load.samples.values())
    table += (
        f"\n\nLoad average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in before)} before, "
        f"{' '.join(f'{x:.2f}' for x in after)} at the end.\n\n" + cpu_report(used, requests, args)
    )
    print(table)
    if args.out:
        write_markdown(args, counts, table)
    return 0


def write_markdown(args: argparse.Namespace, counts: dict[str, int], table: str) -> None:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    command = "python3 bench/api_load.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    args.out.write_text(f"""# API load: board and status reads with a large runs table

Measured with `bench/api_load.py` on this machine ({os.cpu_count()} CPUs, {cpu}), PostgreSQL on
127.0.0.1, gunicorn with {args.workers} workers x {args.worker_threads} threads (gthread), the load
generator on the same machine (loopback, asyncio, at most {args.connections} connections, open
loop: latency counts from each request's scheduled start). Half the requests read a board (top
entries with ranks and ties), half read a submission's status as its owner (token
authentication). Target: p95 <= 100 ms at 200 req/s.

Data: {counts.get("runs")} runs, {counts.get("submissions", "?")} submissions,
{counts.get("users", "?")} users,
{len(HARDWARE)} hardware classes; filled with COPY in {counts.get("fill_s", "?")} s.

{table}

Command:

```
{command}
```
""")


if __name__ == "__main__":
    raise SystemExit(main())
