"""`farm up`: the whole farm on this machine, in one command.

It runs the production processes with their embedded defaults (SQLite, the local SQLAlchemy
broker and local artifacts under the var directory): `manage.py migrate` and `sync_suites`, the
web server (gunicorn), the server's Celery worker and beat, and node agents: two for the
simulated NPU (so that a would-be first place can be audited on a second node, as on a real
farm) and one per GPU kind present (CUDA, ROCm; the audit is off for a class with a single
node, see FARM_AUDIT_SKIP_HARDWARE). It creates a demo user
and stores its token in the `local` client profile (never in the user's own config: see
farm.client.config), where `farm submit` finds it, submits the example kernels of
examples/farm_up/ (each subfolder is one user), waits for their scores, prints the boards, and
keeps serving until Ctrl-C. Set DATABASE_URL, CELERY_BROKER_URL or FARM_S3_BUCKET and the same
processes use PostgreSQL, Redis or S3 instead.

Running it again reuses the var directory: users and suites stay, nodes get fresh tokens, and an
example whose source was already submitted (same sha256, problem, mode and hardware) is not sent
again. Like the rest of farm/, this module never imports Django: the server side runs in its
own processes. What is set up before a process starts (users, tokens, nodes, environments)
is farm/up_setup.py, the example kernels farm/up_examples.py, the process supervision
farm/supervise.py; this module runs them in order.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from farm import up_setup
from farm.client.config import LOCAL_PROFILE, config_write
from farm.errors import FarmError
from farm.supervise import REPO_ROOT, Processes, manage_py
from farm.up_examples import Example, Showcase, find_examples
from farm.up_setup import DEMO_USER, LOCAL_QUOTA_RUNS_PER_HOUR

__all__ = ["LOCAL_QUOTA_RUNS_PER_HOUR", "LocalFarm", "add_arguments", "run"]

EXAMPLES = REPO_ROOT / "examples" / "farm_up"
STOP_WAIT_S = 30.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8000, help="web server port on 127.0.0.1")
    p.add_argument(
        "--sandbox",
        default="auto",
        choices=("auto", "docker", "bwrap", "process"),
        help="sandbox of the local agents (default auto: docker if an engine answers, else bwrap)",
    )
    p.add_argument(
        "--exit-after-board",
        "--no-browser-wait",
        dest="exit_after_board",
        action="store_true",
        help="stop everything once the boards are printed (tests, CI)",
    )
    p.add_argument("--examples", type=Path, default=EXAMPLES, help="folder of example kernels")
    p.add_argument("--no-examples", action="store_true", help="submit nothing; just serve")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the scores")
    p.add_argument("--web-workers", type=int, default=2, help="gunicorn worker processes")


def run(args: argparse.Namespace) -> int:
    if not (REPO_ROOT / "manage.py").is_file():
        raise FarmError(
            "farm up runs from a source checkout (manage.py not found next to the farm package)",
            hint="clone the repository and run `make up` there",
        )
    sandbox = _sandbox_name(args.sandbox)
    _check_port(args.port)
    farm = LocalFarm(port=args.port, sandbox=sandbox, web_workers=args.web_workers)
    # Ctrl-C and SIGTERM both stop the farm, even when farm up started with SIGINT ignored
    previous = signal.signal(signal.SIGTERM, _interrupt), signal.signal(signal.SIGINT, _interrupt)
    try:
        farm.prepare(examples=[] if args.no_examples else find_examples(args.examples))
        farm.start()
        ok = True if args.no_examples else farm.show_examples(timeout_s=args.timeout)
        farm.print_urls()
        if args.exit_after_board:
            return 0 if ok else 1
        return farm.serve()
    except KeyboardInterrupt:
        return 0
    finally:
        farm.stop()
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


def _interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


# --- checks before anything starts -----------------------------------------------------------


def _sandbox_name(requested: str) -> str:
    """The runner the agents will use; raises FarmError saying what to install when none works."""
    from farm.sandbox import SandboxUnavailable, get_runner

    try:
        runner = get_runner(requested)
    except SandboxUnavailable as exc:
        raise FarmError(
            f"farm up needs a sandbox to run kernels, and none is usable here: {exc.message}",
            hint="install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: "
            "`sudo dnf install bubblewrap`); as root, also create the sandbox user with "
            "`sh deploy/sandbox/add-sandbox-user.sh`. Or start a Docker engine with the images "
            "of deploy/sandbox/.",
        ) from None
    return runner.name


def _check_port(port: int) -> None:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds it
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            raise FarmError(
                f"port {port} on 127.0.0.1 is in use (another farm up, or another server)",
                hint="stop it, or choose another port with --port",
            ) from None


# --- the farm ------------------------------------------------------------------------------


class LocalFarm:
    def __init__(self, *, port: int, sandbox: str, web_workers: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.port, self.sandbox, self.web_workers = port, sandbox, web_workers
        self.var = up_setup.var_dir()
        self.logs = self.var / "log"
        self.agents = up_setup.agent_kinds()
        self.nodes = up_setup.agent_nodes(self.agents)
        self.env = up_setup.server_env(self.var, self.agents)
        self.processes = Processes(self.logs)
        self.examples: list[Example] = []
        self.tokens: dict[str, dict[str, str]] = {}
        self.console = _console()

    # --- set-up ------------------------------------------------------------------------------

    def prepare(self, *, examples: list[Example]) -> None:
        """Migrate, load the pinned suites, create users and nodes, store the demo token."""

        self.examples = examples
        self.logs.mkdir(parents=True, exist_ok=True)
        with self.console.status("preparing the database and loading the suites"):
            manage_py("migrate", "--noinput", env=self.env)
            manage_py("sync_suites", env=self.env)
            self.tokens = up_setup.issue_tokens(
                self.env,
                users=sorted({DEMO_USER} | {e.user for e in examples}),
                nodes={name: self.agents[kind] for name, kind in self.nodes.items()},
                var=self.var,
            )
        path = config_write(
            url=self.url, token=self.tokens["users"][DEMO_USER], profile=LOCAL_PROFILE
        )
        self.console.print(
            f"demo user's token stored in {path}, the `{LOCAL_PROFILE}` profile (your own "
            f"config.json is untouched; with one, pass --profile {LOCAL_PROFILE} or set "
            f"FARM_PROFILE={LOCAL_PROFILE})"
        )

    # --- processes ---------------------------------------------------------------------------

    def start(self) -> None:
        py = sys.executable
        celery = [py, "-m", "celery", "-A", "leaderboard"]
        bind = f"127.0.0.1:{self.port}"
        web = ["leaderboard.wsgi:application", "--bind", bind, "--workers", str(self.web_workers)]
        self._spawn("web", [py, "-m", "gunicorn", *web, "--graceful-timeout", "10"])
        worker = ["--queues", "server", "--pool", "solo", "--without-gossip", "--without-mingle"]
        self._spawn("worker", [*celery, "worker", *worker, "--loglevel", "INFO"])
        schedule = str(self.var / "celerybeat-schedule")
        self._spawn("beat", [*celery, "beat", "--schedule", schedule, "--loglevel", "INFO"])
        with self.console.status(f"starting the web server on {self.url}"):
            self._wait_web()
        for name, kind in self.nodes.items():
            argv = [py, "-m", "agents", "--devices", kind]
            self._spawn(f"agent-{name}", argv, self._env(name))
        with self.console.status("waiting for the agents to register"):
            self._wait_nodes()
        names = ", ".join(f"{n} ({self.agents[k]})" for n, k in self.nodes.items())
        self.console.print(f"farm running: web {self.url}, agents {names}, sandbox {self.sandbox}")

    def _env(self, name: str) -> dict[str, str]:
        token, home = self.tokens["nodes"][name], self.var / "agents" / name
        return up_setup.agent_env(
            self.env, url=self.url, name=name, token=token, home=home, sandbox=self.sandbox
        )

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.processes.spawn(name, argv, env or self.env)

    def _wait_web(self, timeout_s: float = 90.0) -> None:
        import requests

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.processes.check_alive()
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{self.url}/api/", timeout=2).ok:
                    return
            time.sleep(0.3)
        raise FarmError(
            f"the web server did not answer in {timeout_s:.0f} s", hint=self.processes.log_tails()
        )

    def _wait_nodes(self, timeout_s: float = 120.0) -> None:
        import requests

        wanted = set(self.nodes)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.processes.check_alive()
            with contextlib.suppress(requests.RequestException, ValueError):
                nodes = requests.get(f"{self.url}/api/nodes/", timeout=5).json()
                rows = nodes.get("results", nodes) if isinstance(nodes, dict) else nodes
                if wanted <= {n["name"] for n in rows if n.get("status") == "online"}:
                    return
            time.sleep(0.5)
        raise FarmError(
            f"the agents did not register in {timeout_s:.0f} s", hint=self.processes.log_tails()
        )

    def serve(self) -> int:
        self.console.print("serving; press Ctrl-C to stop")
        while True:
            time.sleep(1.0)
            self.processes.check_alive()

    def stop(self) -> None:
        """Agents first (twice SIGTERM: stop now and give their runs back), then the server's
        processes; whatever is left of a process group after STOP_WAIT_S is killed."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        agents = [n for n in self.processes.procs if n.startswith("agent-")]
        self.processes.stop(agents, signals=(signal.SIGTERM, signal.SIGTERM), wait_s=STOP_WAIT_S)
        others = [n for n in self.processes.procs if not n.startswith("agent-")]
        self.processes.stop(others, signals=(signal.SIGTERM,), wait_s=STOP_WAIT_S)
        stopped = bool(self.processes.procs)
        self.processes.kill_all()  # stragglers of the groups, if any
        if stopped:
            self.console.print("farm stopped")

    # --- the examples ------------------------------------------------------------------------

    def show_examples(self, *, timeout_s: float) -> bool:
        """Submit the examples, wait for their runs, print them and the boards (farm.up_examples).
        True when each example got the verdict it expects."""
        showcase = Showcase(
            url=self.url,
            examples=self.examples,
            user_tokens=self.tokens["users"],
            console=self.console,
            check_alive=self.processes.check_alive,
        )
        return showcase.show(hardware=sorted(self.agents.values()), timeout_s=timeout_s)

    def print_urls(self) -> None:
        hw = sorted(self.agents.values())[0]
        problems = sorted({e.problem for e in self.examples}) or ["softmax"]
        self.console.print(f"\nOpen [bold]{self.url}/[/] in a browser")
        for p in problems:
            self.console.print(f"  board: {self.url}/boards/core-v1/{p}/{hw}/")
        password = up_setup.demo_password_file(self.var).read_text().strip()
        self.console.print(f"  web login: {DEMO_USER} / {password}")
        self.console.print(
            f"Start from a problem's starter: farm init softmax, then\n"
            f"  farm submit softmax_pytorch.py --hw {hw} --mode leaderboard --public --wait "
            f"--profile {LOCAL_PROFILE}"
        )


def _console() -> Any:
    from rich.console import Console

    return Console()
