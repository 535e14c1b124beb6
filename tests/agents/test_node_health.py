"""A node that knows it is sick: the self-test through the real sandbox, the work disk, a token
the server refuses, slots given the token however the agent got it, and what a job does when an
evaluation failed in a way that may be the node's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents import daemon, health
from agents.config import AgentConfig
from agents.devices import Slot
from agents.errors import PermanentError, RetryableError
from agents.health import HealthMonitor, Problem
from agents.slots import SlotProcess, SlotSet
from tests.agents.test_agent_units import FakeServer, fake_document, runner

NPU = Slot(0, "npu-sim-v1", "npu-sim", 0, "NPU")
REPO = Path(__file__).resolve().parents[2]


def test_a_slot_started_by_an_agent_with_a_token_file_reads_its_token(tmp_path, monkeypatch):
    """The documented set-up (FARM_NODE_TOKEN_FILE) must reach the slots: the agent hands them
    the token itself, and a slot given both NAME and NAME_FILE would refuse to start."""
    token_file = tmp_path / "node-token"
    token_file.write_text("fn_from_file\n")
    monkeypatch.setenv("FARM_NODE_TOKEN_FILE", str(token_file))
    monkeypatch.delenv("FARM_NODE_TOKEN", raising=False)
    env = SlotProcess(NPU, {"FARM_NODE_TOKEN": "fn_from_file"}).environment()
    child = subprocess.run(
        [sys.executable, "-c", "from agents.config import load_config as c; print(c().node_token)"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "fn_from_file"


def test_a_full_or_unwritable_disk_is_a_problem(tmp_path):
    assert health.disk_problems(tmp_path, min_free_bytes=0) == []
    full = health.disk_problems(tmp_path, min_free_bytes=2**62)
    assert [p.code for p in full] == ["DISK_FULL"] and "FARM_AGENT_MIN_FREE_MB" in full[0].detail
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert [p.code for p in health.disk_problems(locked, min_free_bytes=0)] == ["DISK_FULL"]


@pytest.mark.slow
def test_the_self_test_runs_the_honest_kernel_through_the_sandbox(tmp_path, monkeypatch):
    """Both ways, for real: the honest vector_add PASSES; a node whose evaluation of it comes
    back anything else (here, a wrong kernel in its place) is SELFTEST_FAILED, saying why."""
    cfg = AgentConfig(home=tmp_path, node_name="n1", sandbox="bwrap")
    assert health.selftest(NPU, cfg, timeout_s=240) == []
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def kernel(a, b):\n    return a - b\n")
    monkeypatch.setattr(health, "SELFTEST_SOURCE", wrong)
    problems = health.selftest(NPU, cfg, timeout_s=240)
    assert [p.code for p in problems] == ["SELFTEST_FAILED"]
    assert "verdict INCORRECT" in problems[0].detail and "npu-sim-v1" in problems[0].detail


class Registrar:
    """The server as the agent's start-up sees it: refuses the token `refusals` times."""

    def __init__(self, refusals: int) -> None:
        self.refusals, self.token = refusals, "fn_x"

    def register(self, **_: object) -> dict:
        if self.refusals:
            self.refusals -= 1
            raise PermanentError("HTTP 401: invalid node token", status=401)
        return {"node": {"id": 1}}


def agent_with(tmp_path: Path, test) -> daemon.Agent:  # type: ignore[no-untyped-def]
    cfg = AgentConfig(home=tmp_path, node_name="n1", min_free_mb=0, heartbeat_s=0.01)
    agent = daemon.Agent(cfg, slots=[NPU])
    agent.monitor = HealthMonitor(
        cfg, [NPU], agent.state_dir, every_s=3600, timeout_s=5, min_free_bytes=0, test=test
    )
    return agent


def test_a_refused_token_is_reported_and_tried_again_not_a_crash(tmp_path):
    agent = agent_with(tmp_path, lambda *a, **k: [])
    agent.client = Registrar(refusals=2)  # type: ignore[assignment]
    seen: list[set[str]] = []
    agent._export_health = lambda h: seen.append({p.code for p in h.problems})  # type: ignore[method-assign]
    assert agent.register_until_accepted() == {"node": {"id": 1}}
    assert seen == [{"TOKEN_REFUSED"}, {"TOKEN_REFUSED"}]
    assert agent.monitor.current().healthy


def test_an_unhealthy_node_stops_its_slots_says_why_and_resumes_once_fixed(tmp_path):
    results = [[Problem("SELFTEST_FAILED", "cc: cannot link")], []]
    agent = agent_with(tmp_path, lambda *a, **k: results.pop(0))
    agent.slot_set = SlotSet([NPU], {})
    calls: list[str] = []
    agent.slot_set.drain = lambda: calls.append("drain")  # type: ignore[method-assign]
    agent.slot_set.processes[0].start = lambda: calls.append("start")  # type: ignore[method-assign]
    sent: list[dict] = []

    class Beat:
        drain_requested = False

        def process_one(self) -> None:
            sent.append(agent.health.to_json())

    agent.heartbeat = Beat()  # type: ignore[assignment]
    agent.monitor.run_selftest()
    agent.step()
    assert sent[-1]["healthy"] is False
    assert sent[-1]["problems"] == [{"code": "SELFTEST_FAILED", "detail": "cc: cannot link"}]
    assert calls == ["drain"] and agent.slot_set.paused
    agent.monitor.run_selftest()  # the operator fixed it; the next self-test passes
    agent.step()
    assert sent[-1]["healthy"] is True and calls == ["drain", "start"]


def test_a_periodic_self_test_waits_until_no_slot_is_measuring(tmp_path):
    ran: list[int] = []
    agent = agent_with(tmp_path, lambda *a, **k: ran.append(1) or [])
    assert not agent.monitor.maybe_start(idle=False)
    assert agent.monitor.maybe_start(idle=True)
    agent.monitor._thread.join(5)  # type: ignore[union-attr]
    assert ran == [1] and not agent.monitor.due()


def test_a_health_check_probes_the_disk_once(tmp_path, monkeypatch):
    """Each turn of the main loop writes its disk probe once, a due self-test included."""
    probes: list[Path] = []
    real = health.disk_problems
    monkeypatch.setattr(
        health, "disk_problems", lambda home, **k: probes.append(home) or real(home, **k)
    )
    agent = agent_with(tmp_path, lambda *a, **k: [])
    agent.slot_set = SlotSet([NPU], {})
    agent.monitor.run_selftest()
    agent.monitor.last_test = 0.0  # long ago: due again
    assert agent.check_health().healthy
    assert len(probes) == 1


# --- a job on a node that may be sick ------------------------------------------------------


def harness_error_document(source_path, **options):  # type: ignore[no-untyped-def]
    doc = fake_document(source_path, **options)
    doc["verdict"] = "RUNTIME_ERROR"
    doc["reasons"] = [{"code": "HARNESS_ERROR", "detail": "cc: cannot link -lcuda"}]
    for w in doc["workloads"]:
        w["status"] = "RUNTIME_ERROR"
    return doc


def test_a_harness_error_on_a_node_failing_its_self_test_is_a_node_fault(tmp_path):
    server = FakeServer()
    sick = [Problem("SELFTEST_FAILED", "the honest vector_add: RUNTIME_ERROR")]
    out = runner(tmp_path, server, harness_error_document, selftest=lambda *a, **k: sick).run(5)
    assert out.status == "released"
    assert server.calls[-1] == ("failure", 5, 2, "NODE_FAULT", True)
    assert server.node_fault is True and "self-test failed" in server.failure_detail
    assert not [c for c in server.calls if c[0] == "result"]  # never the kernel's verdict
    assert health.slot_failure_notes(tmp_path / "state" / "n1") == sick


def test_a_harness_error_on_a_node_that_works_stays_the_kernels_outcome(tmp_path):
    """The HARNESS_ERROR claim comes from the submission's own process: it only makes the node
    check itself. A kernel cannot turn its failure into a free retry."""
    server = FakeServer()
    out = runner(tmp_path, server, harness_error_document, selftest=lambda *a, **k: []).run(5)
    assert (out.status, out.verdict) == ("done", "RUNTIME_ERROR")


def test_a_harness_that_raises_is_a_node_fault_not_charged(tmp_path):
    def broken(*a, **k):  # type: ignore[no-untyped-def]
        raise RuntimeError("the worker pool is gone")

    server = FakeServer()
    out = runner(tmp_path, server, broken).run(5)
    assert out.status == "released"
    assert server.calls[-1] == ("failure", 5, 2, "HARNESS_FAILED", True)
    assert server.node_fault is True


def test_start_is_retried_while_the_server_is_away(tmp_path, monkeypatch):
    monkeypatch.setattr("agents.job.time.sleep", lambda s: None)

    class Away(FakeServer):
        outage = 5

        def start(self, run_id, attempt):  # type: ignore[no-untyped-def]
            super().start(run_id, attempt)
            if self.outage:
                self.outage -= 1
                raise RetryableError("connection refused")

    server = Away()
    out = runner(tmp_path, server, fake_document).run(5)
    assert out.status == "done"
    assert [c[0] for c in server.calls].count("start") == 6


def test_the_queue_wait_comes_from_the_server_not_the_nodes_clock(tmp_path, monkeypatch):
    """A node whose clock is hours off computes nothing from absolute times."""
    import time as real_time

    monkeypatch.setattr("time.time", lambda: real_time.monotonic() + 7200 + 1.7e9)
    server = FakeServer()
    server.job.update({"sent_at": "2020-01-01T00:00:00+00:00", "queued_s": 0.25})
    out = runner(tmp_path, server, fake_document).run(5)
    assert out.status == "done" and out.timings.queue_wait == 0.25


def test_a_stop_request_after_the_result_is_recorded_changes_nothing(tmp_path, monkeypatch):
    """The heartbeat may list a run the slot has just reported: the server answers `abandon`
    (the run is done) and the slot is asked to stop it. That must not turn a recorded result
    into a failure report."""
    from agents import state

    server = FakeServer()
    job_runner = runner(tmp_path, server, fake_document)
    real_rmtree = __import__("shutil").rmtree

    def late_stop(path, **kw):  # type: ignore[no-untyped-def]
        state.mark_abandoned(job_runner.state_dir, 5)
        job_runner.stop_if_abandoned()  # what the slot's SIGUSR2 handler does
        real_rmtree(path, **kw)

    monkeypatch.setattr("agents.job.shutil.rmtree", late_stop)
    out = job_runner.run(5)
    assert (out.status, out.verdict) == ("done", "PASSED")
    assert not [c for c in server.calls if c[0] == "failure"]
