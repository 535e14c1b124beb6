"""A scripted HTTP server on 127.0.0.1 (a thread) standing in for the farm's REST API."""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Stub:
    """Replies are queued per (method, path); the last reply of a route repeats."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], deque] = defaultdict(deque)
        self.requests: list[dict] = []
        self.url = ""

    def reply(self, method: str, path: str, status: int = 200, body=None, headers=None):  # type: ignore[no-untyped-def]
        self.routes[(method, path)].append((status, body, headers or {}))

    def count(self, method: str, path: str) -> int:
        return sum(1 for r in self.requests if (r["method"], r["path"]) == (method, path))


def _handler(stub: Stub):  # type: ignore[no-untyped-def]
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # type: ignore[no-untyped-def]
            pass

        def _serve(self) -> None:
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            stub.requests.append(
                {
                    "method": self.command,
                    "path": path,
                    "query": self.path.partition("?")[2],
                    "auth": self.headers.get("Authorization"),
                    "body": json.loads(raw) if raw else None,
                }
            )
            queue = stub.routes.get((self.command, path))
            if not queue:
                status, body, headers = 404, {"detail": f"no stub for {path}"}, {}
            else:
                status, body, headers = queue[0] if len(queue) == 1 else queue.popleft()
            raw_page = isinstance(body, bytes)  # an HTML page, as a proxy or Django sends
            data = body if raw_page else json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "text/html" if raw_page else "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

    return Handler


@pytest.fixture
def stub():
    s = Stub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(s))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    s.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield s
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    """No real config or token leaks into a test."""
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "farm-home"))
    monkeypatch.delenv("FARM_URL", raising=False)
    monkeypatch.delenv("FARM_TOKEN", raising=False)


def run_json(run_id: int, state: str = "done", verdict: str | None = "PASSED", **extra):  # type: ignore[no-untyped-def]
    doc = {
        "schema": "farm.result/1",
        "suite": {"name": "core-v1", "hash": "abc"},
        "problem": "softmax",
        "hardware": "npu-sim-v1",
        "mode": "benchmark",
        "verdict": verdict,
        "reasons": [],
        "score": {"sol_score": 0.61},
        "workloads": [
            {
                "id": "small",
                "status": "PASSED",
                "time_ms": 0.5,
                "sol_ms": 0.1,
                "baseline_ms": {"eager": 1.0, "compile": None},
                "speedup": {"eager": 2.0},
                "sol_score": 0.61,
                "time_ci_ms": [0.45, 0.55],  # an older shape of the interval
            }
        ],
        "environment": {},
        "guard": {"findings": []},
    }
    done = state == "done"
    return {
        "id": run_id,
        "submission": 7,
        "problem": "softmax",
        "hardware": "npu-sim-v1",
        "mode": "benchmark",
        "state": state,
        "attempt": 1,
        "verdict": verdict if done else None,
        "sol_score": 0.61 if done else None,
        "failure_code": "" if state != "failed" else "NODE_LOST",
        "failure_detail": "",
        "result": {"document": doc, "server_reasons": [], "workloads": []} if done else None,
        **extra,
    }


def submission_json(sid: int = 7, runs=((11, "queued"),)):  # type: ignore[no-untyped-def]
    return {
        "id": sid,
        "problem": "softmax",
        "suite": "core-v1",
        "mode": "benchmark",
        "state": "queued",
        "runs": [
            {"id": rid, "hardware": "npu-sim-v1", "mode": "benchmark", "state": st, "attempt": 0}
            for rid, st in runs
        ],
    }
