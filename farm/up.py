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
own processes through manage.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farm.client.config import LOCAL_PROFILE, config_write
from farm.errors import FarmError
from farm.hardware import kinds

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples" / "farm_up"
DEMO_USER = "demo"
TOKEN_NAME = "farm-up"
EXPECT = re.compile(r"^#\s*expect:\s*(\w+)", re.MULTILINE)
# agents per kind found, of the kinds that have hardware classes (the CPU has none)
DEVICE_KINDS = tuple(k.name for k in kinds.all_kinds() if k.classes())
# kinds that get a second local node, for the audit of first places: those that need no second
# device for it (the simulated NPU)
AUDITED_KINDS = tuple(k for k in DEVICE_KINDS if not kinds.get_kind(k).gpu)
STOP_WAIT_S = 30.0
# The server's default quota (120 runs per user and hardware class an hour) protects a shared
# farm; on one's own machine it would stop an RL loop after two minutes. This one is above what
# the local nodes can evaluate, so the queue, not the quota, sets the pace. FARM_QUOTA_RUNS_PER_HOUR
# in the environment still wins.
LOCAL_QUOTA_RUNS_PER_HOUR = 100_000

# Run inside `manage.py shell`: users (idempotent), one fresh farm-up token per user (older ones
# revoked), and nodes with fresh tokens. Prints one line FARM_UP=<json>.
_ACCOUNTS_SCRIPT = """
import json
from django.contrib.auth.models import User
from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.services import api_token_create, api_token_revoke
from leaderboard.nodes.models import Node
from leaderboard.nodes.services import node_create, node_token_rotate
spec = json.loads(SPEC)
out = {"users": {}, "nodes": {}}
for name in spec["users"]:
    user, created = User.objects.get_or_create(username=name)
    if created:
        if name in spec["passwords"]:
            user.set_password(spec["passwords"][name])
        else:
            user.set_unusable_password()
        user.save()
    for token in ApiToken.objects.filter(user=user, name=spec["token_name"], revoked_at=None):
        api_token_revoke(token=token)
    out["users"][name] = api_token_create(user=user, name=spec["token_name"])[1]
for name, hardware in spec["nodes"].items():
    node = Node.objects.filter(name=name).first()
    out["nodes"][name] = (
        node_token_rotate(node=node) if node else node_create(name=name, hardware=hardware)[1]
    )
print("FARM_UP=" + json.dumps(out))
"""


def manage_py(*args: str, env: dict[str, str], stdin: str | None = None) -> str:
    """Run `manage.py ARGS` from the repository root with `env`; its stdout. Raises FarmError
    with the end of its stderr when it fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise FarmError(
            f"`manage.py {' '.join(args)}` failed:\n{done.stderr.strip()[-4000:]}",
            hint="the server's settings come from the environment (see .env.example)",
        )
    return done.stdout


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


# --- the example kernels -------------------------------------------------------------------


@dataclass
class Example:
    """One file of examples/farm_up/<user>/: its header names the problem and mode, and a
    `# expect: VERDICT` line the verdict it must get."""

    path: Path
    user: str
    source: str
    problem: str
    mode: str
    label: str
    expect: str
    runs: list[int] = field(default_factory=list)


def find_examples(folder: Path) -> list[Example]:
    from farm.client.commands.common import header_directives

    examples = []
    for path in sorted(folder.glob("*/*.py")):
        source = path.read_text(encoding="utf-8")
        header = header_directives(source, filename=str(path))
        if "problem" not in header:
            raise FarmError(f"{path}: no `#!farm problem=...` line", hint="add one at the top")
        expect = EXPECT.search(source)
        examples.append(
            Example(
                path=path,
                user=path.parent.name,
                source=source,
                problem=header["problem"],
                mode=header.get("mode", "leaderboard"),
                label=header.get("label", path.stem),
                expect=expect.group(1) if expect else "PASSED",
            )
        )
    return examples


# --- the farm ------------------------------------------------------------------------------


class LocalFarm:
    def __init__(self, *, port: int, sandbox: str, web_workers: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.port, self.sandbox, self.web_workers = port, sandbox, web_workers
        self.var = Path(os.environ.get("FARM_VAR_DIR") or REPO_ROOT / "var").resolve()
        self.logs = self.var / "log"
        self.env = {**os.environ, "FARM_VAR_DIR": str(self.var), "PYTHONUNBUFFERED": "1"}
        self.env.setdefault("FARM_QUOTA_RUNS_PER_HOUR", str(LOCAL_QUOTA_RUNS_PER_HOUR))
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.agents = _agent_kinds()
        self.nodes = _agent_nodes(self.agents)
        single = sorted(hw for kind, hw in self.agents.items() if kind not in AUDITED_KINDS)
        if single:
            self.env.setdefault("FARM_AUDIT_SKIP_HARDWARE", ",".join(single))
        self.examples: list[Example] = []
        self.tokens: dict[str, Any] = {}
        self.clients: dict[str, Any] = {}  # user -> FarmClient, made on first use
        self.console = _console()

    # --- set-up ------------------------------------------------------------------------------

    def prepare(self, *, examples: list[Example]) -> None:
        """Migrate, load the pinned suites, create users and nodes, store the demo token."""

        self.examples = examples
        self.logs.mkdir(parents=True, exist_ok=True)
        with self.console.status("preparing the database and loading the suites"):
            manage_py("migrate", "--noinput", env=self.env)
            manage_py("sync_suites", env=self.env)
            self.tokens = self._accounts(sorted({DEMO_USER} | {e.user for e in examples}))
        path = config_write(
            url=self.url, token=self.tokens["users"][DEMO_USER], profile=LOCAL_PROFILE
        )
        self.console.print(
            f"demo user's token stored in {path}, the `{LOCAL_PROFILE}` profile (your own "
            f"config.json is untouched; with one, pass --profile {LOCAL_PROFILE} or set "
            f"FARM_PROFILE={LOCAL_PROFILE})"
        )

    def _accounts(self, users: list[str]) -> dict[str, Any]:
        spec = {
            "users": users,
            "passwords": {DEMO_USER: self._demo_password()},
            "token_name": TOKEN_NAME,
            "nodes": {name: [self.agents[kind]] for name, kind in self.nodes.items()},
        }
        script = f"SPEC = {json.dumps(spec)!r}\n{_ACCOUNTS_SCRIPT}"
        out = manage_py("shell", "-c", script, env=self.env)
        line = next((x for x in out.splitlines() if x.startswith("FARM_UP=")), None)
        if line is None:
            raise FarmError(f"creating the demo accounts printed no tokens:\n{out[-2000:]}")
        return dict(json.loads(line[len("FARM_UP=") :]))

    def _demo_password(self) -> str:
        """The demo user's web login, made once and kept (mode 0600) in the var directory."""
        path = self.var / "demo-password"
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(12) + "\n")
        return path.read_text().strip()

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
        env = {
            **self.env,
            "FARM_URL": self.url,
            "FARM_NODE_TOKEN": self.tokens["nodes"][name],
            "FARM_NODE_NAME": name,
            "FARM_HOME": str(self.var / "agents" / name),
            "FARM_SANDBOX": self.sandbox,
        }
        env.setdefault("FARM_AGENT_METRICS_PORT", "0")
        env.setdefault("FARM_NPU_SIM_SLOTS", "1")  # per node; there are two npu-sim nodes
        return env

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen(
                argv,
                cwd=REPO_ROOT,
                env=env or self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C reaches farm up only; it stops each group
            )

    def _wait_web(self, timeout_s: float = 90.0) -> None:
        import requests

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{self.url}/api/", timeout=2).ok:
                    return
            time.sleep(0.3)
        raise FarmError(f"the web server did not answer in {timeout_s:.0f} s", hint=self._logs())

    def _wait_nodes(self, timeout_s: float = 120.0) -> None:
        import requests

        wanted = set(self.nodes)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(requests.RequestException, ValueError):
                nodes = requests.get(f"{self.url}/api/nodes/", timeout=5).json()
                rows = nodes.get("results", nodes) if isinstance(nodes, dict) else nodes
                if wanted <= {n["name"] for n in rows if n.get("status") == "online"}:
                    return
            time.sleep(0.5)
        raise FarmError(f"the agents did not register in {timeout_s:.0f} s", hint=self._logs())

    def _check_alive(self) -> None:
        dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
        if dead:
            what = ", ".join(f"{n} (exit {rc})" for n, rc in dead.items())
            raise FarmError(f"farm process stopped: {what}", hint=self._logs(*dead))

    def _logs(self, *names: str) -> str:
        shown = []
        for name in names or tuple(self.procs):
            path = self.logs / f"{name}.log"
            tail = path.read_text(errors="replace").splitlines()[-15:] if path.exists() else []
            shown.append(f"--- {path} (last lines)\n" + "\n".join(tail))
        return "\n".join(shown)

    def serve(self) -> int:
        self.console.print("serving; press Ctrl-C to stop")
        while True:
            time.sleep(1.0)
            self._check_alive()

    def stop(self) -> None:
        """Agents first (twice SIGTERM: stop now and give their runs back), then the server's
        processes; whatever is left of a process group after STOP_WAIT_S is killed."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut this short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        agents = [p for n, p in self.procs.items() if n.startswith("agent-")]
        for sig in (signal.SIGTERM, signal.SIGTERM):
            _signal_all(agents, sig)
            time.sleep(0.3)
        _wait_all(agents, STOP_WAIT_S)
        others = [p for n, p in self.procs.items() if not n.startswith("agent-")]
        _signal_all(others, signal.SIGTERM)
        _wait_all(others, STOP_WAIT_S)
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        if self.procs:
            self.console.print("farm stopped")
        self.procs.clear()

    # --- the examples ------------------------------------------------------------------------

    def show_examples(self, *, timeout_s: float) -> bool:
        """Submit the examples not already submitted, wait for every run, print a summary and
        the boards. True when each example got the verdict it expects."""
        hardware = sorted(self.agents.values())
        for example in self.examples:
            example.runs = self._submit(example, hardware)
        runs = self._wait(timeout_s)
        self._summary(runs)
        self._boards(hardware)
        return all(
            runs.get(i) is not None and runs[i].verdict == e.expect
            for e in self.examples
            for i in e.runs
        )

    def _client(self, user: str) -> Any:
        from farm.client import FarmClient

        if user not in self.clients:
            self.clients[user] = FarmClient(self.url, self.tokens["users"][user], timeout_s=30.0)
        return self.clients[user]

    def _submit(self, example: Example, hardware: list[str]) -> list[int]:
        import hashlib

        client = self._client(example.user)
        sha = hashlib.sha256(example.source.encode()).hexdigest()
        runs, missing = _existing_runs(client, sha, example, hardware)
        if missing:
            sub = client.submit(
                example.source,
                problem=example.problem,
                hardware=missing,
                mode=example.mode,
                filename=example.path.name,
                label=example.label,
                private=False,
            )
            runs += sub.run_ids
        return runs

    def _wait(self, timeout_s: float) -> dict[int, Any]:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        owner = {i: e.user for e in self.examples for i in e.runs}
        done: dict[int, Any] = {}
        states = dict.fromkeys(owner, "queued")
        columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.console) as progress:
            task = progress.add_task("evaluating the examples", total=len(owner))
            deadline = time.monotonic() + timeout_s
            while len(done) < len(owner) and time.monotonic() < deadline:
                self._check_alive()
                for run_id in (i for i in owner if i not in done):
                    run = self._client(owner[run_id]).run(run_id)
                    audited = run.audit == "pending"
                    states[run_id] = "audit" if run.finished and audited else run.state
                    if run.finished and not audited:
                        done[run_id] = run
                counts = ", ".join(f"{s} {n}" for s, n in sorted(Counter(states.values()).items()))
                progress.update(task, completed=len(done), description=f"evaluating: {counts}")
                time.sleep(1.0)
        if len(done) < len(owner):
            left = len(owner) - len(done)
            self.console.print(f"[yellow]{left} runs unfinished after {timeout_s:.0f} s[/]")
        return done

    def _summary(self, runs: dict[int, Any]) -> None:
        from rich.table import Table

        table = Table(title="example kernels (verdict: green = as expected)")
        for col in ("user", "file", "problem", "hardware", "verdict", "SOL score", "audit"):
            table.add_column(
                col,
                justify="right" if col == "SOL score" else "left",
                no_wrap=col in ("verdict", "audit"),
                overflow="fold",
            )
        for e in self.examples:
            for run_id in e.runs:
                run = runs.get(run_id)
                verdict = (run.verdict or run.failure_code or run.state) if run else "unfinished"
                shown = verdict if verdict == e.expect else f"{verdict} (expected {e.expect})"
                mark = "green" if verdict == e.expect else "red"
                score = "-" if run is None or run.sol_score is None else f"{run.sol_score:.3f}"
                hw = run.hardware if run else "?"
                audit = (run.audit if run else "") or "-"
                table.add_row(
                    e.user, e.path.name, e.problem, hw, f"[{mark}]{shown}[/]", score, audit
                )
        self.console.print(table)

    def _boards(self, hardware: list[str]) -> None:
        from farm.client.commands import board

        problems = sorted({e.problem for e in self.examples if e.mode == "leaderboard"})
        for problem, hw in ((p, h) for p in problems for h in hardware):
            ns = argparse.Namespace(
                problem=problem,
                hw=hw,
                suite="core-v1",
                json=None,
                url=self.url,
                token=None,
                profile=LOCAL_PROFILE,
            )
            board.run(ns)

    def print_urls(self) -> None:
        hw = sorted(self.agents.values())[0]
        problems = sorted({e.problem for e in self.examples}) or ["softmax"]
        self.console.print(f"\nOpen [bold]{self.url}/[/] in a browser")
        for p in problems:
            self.console.print(f"  board: {self.url}/boards/core-v1/{p}/{hw}/")
        self.console.print(f"  web login: {DEMO_USER} / {self._demo_password()}")
        self.console.print(
            f"Start from a problem's starter: farm init softmax, then\n"
            f"  farm submit softmax_pytorch.py --hw {hw} --mode leaderboard --public --wait "
            f"--profile {LOCAL_PROFILE}"
        )


# --- helpers -------------------------------------------------------------------------------


def _agent_kinds() -> dict[str, str]:
    """Device kind -> hardware class served by this machine's agents: npu-sim always, a GPU
    kind when a GPU of it maps to a hardware class. (One agent per kind; it runs one slot per
    device of that kind.)"""
    from farm.hardware.detect import discover

    served: dict[str, str] = {}
    for d in discover():
        if d.hardware_class and d.device in DEVICE_KINDS and d.device not in served:
            served[d.device] = d.hardware_class
    for name in AUDITED_KINDS:  # always present: they need no device
        served.setdefault(name, kinds.get_kind(name).classes()[0])
    return served


def _agent_nodes(agents: dict[str, str]) -> dict[str, str]:
    """Node name -> device kind: two nodes for each kind in AUDITED_KINDS, one for the others."""
    nodes = {}
    for kind in agents:
        nodes[f"local-{kind}"] = kind
        if kind in AUDITED_KINDS:
            nodes[f"local-{kind}-2"] = kind
    return nodes


def _existing_runs(
    client: Any, sha: str, example: Example, hardware: list[str]
) -> tuple[list[int], list[str]]:
    """Runs of earlier submissions of the same source, problem and mode, and the hardware
    classes not covered yet."""
    runs: list[int] = []
    covered: set[str] = set()
    wanted = (sha, example.problem, example.mode)
    for sub in client.submissions():
        if (sub.raw["source_sha256"], sub.problem, sub.mode) != wanted:
            continue
        for run in sub.runs:
            if run.hardware in hardware and run.hardware not in covered:
                covered.add(run.hardware)
                runs.append(run.id)
    return runs, [h for h in hardware if h not in covered]


def _signal_all(procs: list[subprocess.Popen[bytes]], sig: int) -> None:
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, sig)


def _wait_all(procs: list[subprocess.Popen[bytes]], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))


def _console() -> Any:
    from rich.console import Console

    return Console()
