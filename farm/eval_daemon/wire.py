"""What crosses the evaluation daemon's socket: one JSON line each way per connection.

A request is `{"op": "eval" | "status" | "stop", ...}`; the answer is a `Reply`. Each message is
one UTF-8 JSON object on one line, at most MAX_LINE_BYTES.
"""

from __future__ import annotations

import hashlib
import json
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from farm.config import child_env, farm_home
from farm.wire import Fields

MAX_LINE_BYTES = 64 << 20  # a result document with its logs is well under 1 MiB
MAX_SOURCE_BYTES = 1 << 20  # as the supervisor: a larger file goes cold and is refused there


def run_dir() -> Path:
    """FARM_HOME/run: the daemon's socket, lock and log (the directory is the user's only)."""
    return farm_home() / "run"


def socket_path() -> Path:
    return run_dir() / "eval.sock"


def lock_path() -> Path:
    """Held by the running daemon for its whole life: one daemon per FARM_HOME."""
    return run_dir() / "eval.lock"


def settings_fingerprint() -> str:
    """A digest of this process's FARM_* settings: a daemon serves only a client whose
    evaluation settings (sandbox, caches, limits) are its own. Values are never sent."""
    pairs = sorted((k, v) for k, v in child_env().items() if k.startswith("FARM_"))
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:16]


def tree_stamp(root: Path, pattern: str = "*") -> str:
    """A digest of the files under `root` matching `pattern` (path, size, modification time;
    __pycache__ left out): what changed on disk since a stamp was taken."""
    stats = []
    for p in sorted(root.rglob(pattern)):
        if p.is_file() and "__pycache__" not in p.parts:
            st = p.stat()
            stats.append((str(p.relative_to(root)), st.st_size, st.st_mtime_ns))
    return hashlib.sha256(repr(stats).encode()).hexdigest()[:16]


def code_stamp() -> str:
    """The farm package's Python files' stamp: a daemon serves only a client of the same code,
    and stops when the code changed under it."""
    return tree_stamp(Path(__file__).resolve().parents[1], "*.py")


@dataclass(frozen=True)
class EvalRequest:
    """One `farm eval`, as the daemon needs it: the source itself (not a path the daemon would
    read in the client's working directory) and the command's options."""

    source: str
    filename: str
    problem: str
    suite: str = "core-v1"
    device: str = "cpu"
    mode: str = "benchmark"
    hardware: str | None = None
    workloads: list[str] | None = None
    sandbox: str = "auto"
    baselines: bool = True
    budget_ms: float | None = None
    settings: str = ""
    code: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"op": "eval", **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> EvalRequest:
        f = Fields(data, "request")
        workloads = f.array("workloads", required=False) if data.get("workloads") else None
        if workloads is not None and not all(isinstance(w, str) for w in workloads):
            raise f.error("request.workloads: must be a list of workload ids")
        return cls(
            source=f.text("source"),
            filename=_plain_name(f.text("filename")),
            problem=f.text("problem"),
            suite=f.text("suite"),
            device=f.text("device"),
            mode=f.text("mode"),
            hardware=f.text("hardware", null=True),
            workloads=workloads,
            sandbox=f.text("sandbox"),
            baselines=f.flag("baselines", default=True),
            budget_ms=f.number("budget_ms", required=False),
            settings=f.text("settings"),
            code=f.text("code", required=False) or "",
        )


def _plain_name(name: str) -> str:
    """A file name with no directory part (the daemon writes the source under it)."""
    plain = Path(name.replace("\0", "")).name
    return plain if plain not in ("", ".", "..") else "submission.py"


@dataclass(frozen=True)
class DaemonStatus:
    """What `farm pool status` shows."""

    pid: int
    started_at: float  # Unix time (s)
    socket: str
    settings: str
    devices: list[str]  # "<device>/<sandbox>" of each warm worker pool
    served: int  # evaluations served
    busy: bool  # an evaluation is running now
    idle_exit_s: float  # the daemon exits after this long without a request (s)
    idle_s: float  # time since the last request ended (s)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> DaemonStatus:
        f = Fields(data, "status")
        return cls(
            pid=f.integer("pid"),
            started_at=f.number("started_at", null=False) or 0.0,
            socket=f.text("socket"),
            settings=f.text("settings"),
            devices=[str(d) for d in f.array("devices")],
            served=f.integer("served"),
            busy=f.flag("busy"),
            idle_exit_s=f.number("idle_exit_s", null=False) or 0.0,
            idle_s=f.number("idle_s", null=False) or 0.0,
        )


@dataclass(frozen=True)
class ErrorReply:
    """A request the daemon refused or could not serve. `farm` errors (a bad problem name) come
    back with their message, hint and exit code; `internal` ones are the daemon's own failure,
    after which the client evaluates cold."""

    message: str
    hint: str | None = None
    exit_code: int = 2
    internal: bool = False


@dataclass(frozen=True)
class Reply:
    ok: bool
    document: dict[str, Any] | None = None
    status: DaemonStatus | None = None
    error: ErrorReply | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok}
        if self.document is not None:
            out["document"] = self.document
        if self.status is not None:
            out["status"] = self.status.to_json()
        if self.error is not None:
            out["error"] = asdict(self.error)
        return out

    @classmethod
    def from_json(cls, data: Any) -> Reply:
        f = Fields(data, "reply")
        status = f.mapping("status", required=False)
        error = f.object("error", required=False)
        return cls(
            ok=f.flag("ok"),
            document=f.mapping("document", required=False),
            status=DaemonStatus.from_json(status) if status is not None else None,
            error=_error(error) if error is not None else None,
        )


def _error(f: Fields) -> ErrorReply:
    return ErrorReply(
        message=f.text("message"),
        hint=f.text("hint", null=True),
        exit_code=f.integer("exit_code"),
        internal=f.flag("internal"),
    )


def send_line(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message, allow_nan=False).encode() + b"\n")


def read_line(sock: socket.socket) -> Any:
    """The next JSON line; EOFError when the peer closed first, ValueError when it is too long
    or not JSON."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the peer closed the connection before a whole message")
        head, newline, _ = chunk.partition(b"\n")
        chunks.append(head)
        size += len(head)
        if size > MAX_LINE_BYTES:
            raise ValueError(f"message longer than {MAX_LINE_BYTES} bytes")
        if newline:
            return json.loads(b"".join(chunks))
