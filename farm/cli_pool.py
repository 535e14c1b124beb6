"""`farm pool start | status | stop`: the warm evaluation daemon (farm.eval_daemon).

`start` leaves a daemon that serves every later `farm eval` of this FARM_HOME with the same
FARM_ settings; `status` says whether one runs and what it holds; `stop` stops it (an
evaluation under way finishes first). Exit codes: 0 done (`status` also when none runs), 1 the
daemon did not start.
"""

from __future__ import annotations

import argparse
import time

from farm.eval_daemon import client
from farm.eval_daemon.wire import DaemonStatus, settings_fingerprint, socket_path
from farm.hardware import kinds

DEFAULT_IDLE_EXIT_S = 3600.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="pool_command", metavar="ACTION", required=True)
    start = sub.add_parser("start", help="start the daemon (if none runs) and wait until ready")
    start.add_argument("--device", default="cpu", choices=kinds.KIND_NAMES)
    start.add_argument("--sandbox", default="auto", help="auto | docker | bwrap | process")
    start.add_argument(
        "--idle-exit-s",
        type=float,
        default=DEFAULT_IDLE_EXIT_S,
        help="exit after this many seconds without a request (default 3600)",
    )
    sub.add_parser("status", help="whether a daemon runs, its pid, devices and evaluations")
    sub.add_parser("stop", help="stop the daemon (an evaluation under way finishes first)")


def run(args: argparse.Namespace) -> int:
    if args.pool_command == "start":
        started = client.start(
            device=args.device, sandbox=args.sandbox, idle_exit_s=args.idle_exit_s
        )
        print(describe(started))
        return 0
    if args.pool_command == "stop":
        stopped = client.stop()
        print(f"stopped the daemon (pid {stopped.pid})" if stopped else "no daemon was running")
        return 0
    status = client.status()
    print(describe(status) if status else _not_running())
    return 0


def describe(status: DaemonStatus) -> str:
    """Several lines: pid, socket, pools, evaluations served, idle time and whether it serves
    this shell's settings."""
    up = time.time() - status.started_at
    state = "evaluating" if status.busy else f"idle {status.idle_s:.0f} s"
    same = status.settings == settings_fingerprint()
    lines = [
        f"warm evaluation daemon: pid {status.pid}, up {up:.0f} s, {state}",
        f"  socket: {status.socket}",
        f"  worker pools: {', '.join(status.devices) or 'none'}",
        f"  evaluations served: {status.served}",
        f"  exits after {status.idle_exit_s:.0f} s without a request; stop it: farm pool stop",
    ]
    if not same:
        lines.append(
            "  it runs with other FARM_ settings than this shell: `farm eval` here is cold "
            "(farm pool stop, then start it from this shell)"
        )
    return "\n".join(lines)


def _not_running() -> str:
    if client.starting():
        return f"a warm evaluation daemon is starting (log: {client.log_path()})"
    stale = " (a dead daemon's socket is left; the next start removes it)"
    return "no warm evaluation daemon" + (stale if socket_path().exists() else "")
