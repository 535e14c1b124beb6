"""A slot's current run is tied to a live process, and a run the server took back is stopped:
dead slot processes' runs are released at once (retryable), a new slot process releases what its
dead predecessor left, and the heartbeat's `abandon` stops the job that still runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from agents import state
from agents.errors import ClaimLost
from agents.heartbeat import Heartbeat
from agents.job import Cancelled
from farm.node_api import HeartbeatAck
from tests.agents.test_agent_units import FakeServer, fake_document, runner


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


class Beats(FakeServer):
    def __init__(self, abandon: list[int] | None = None) -> None:
        super().__init__()
        self.abandon = abandon or []

    def heartbeat(self, *, current_runs, devices, health=None):  # type: ignore[no-untyped-def]
        self.calls.append(("heartbeat", tuple(current_runs)))
        return HeartbeatAck("online", self.abandon, drain=False, server_time="")


def slot_file(directory, slot: int, run: int, pid: int) -> None:  # type: ignore[no-untyped-def]
    entry = state.SlotState(directory, slot)
    entry.set(run, 1)
    text = entry.path.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {pid}')
    entry.path.write_text(text)


def test_the_run_of_a_dead_slot_process_is_released_at_once_and_not_reported(tmp_path):
    states, work = tmp_path / "state", tmp_path / "work"
    slot_file(states, 0, 7, dead_pid())
    slot_file(states, 1, 8, os.getpid())
    (work / "run-7-1").mkdir(parents=True)
    server = Beats()
    assert Heartbeat(server, [], states, work_dir=work).process_one()  # type: ignore[arg-type]
    assert ("failure", 7, 1, "SLOT_DIED", True) in server.calls
    assert ("heartbeat", (8,)) in server.calls
    assert [c.run for c in state.current_runs(states)] == [8]
    assert not (work / "run-7-1").exists()


def test_a_new_slot_process_releases_what_its_dead_predecessor_left(tmp_path):
    server = FakeServer()
    job_runner = runner(tmp_path, server, fake_document)
    slot_file(job_runner.state_dir, 0, 9, dead_pid())
    slot_file(job_runner.state_dir, 1, 10, dead_pid())  # another slot's: its own process's job
    assert job_runner.release_stale() == [9]
    assert [c.run for c in state.current_runs(job_runner.state_dir)] == [10]


def test_abandon_stops_the_job_that_runs_the_run(tmp_path):
    """The heartbeat marks the run and signals its slot; the slot's SIGUSR2 handler stops the
    job, whose failure report the server refuses (the run is another node's now)."""
    server = FakeServer()

    def refuse(*a, **k):  # type: ignore[no-untyped-def]
        server.calls.append(("failure",))
        raise ClaimLost("run 5 is not held by this node", status=403)

    server.failure = refuse  # type: ignore[method-assign]
    job_runner = runner(tmp_path, server, fake_document)
    previous = signal.signal(signal.SIGUSR2, lambda *_: job_runner.stop_if_abandoned())

    def evaluate_until_stopped(source, **options):  # type: ignore[no-untyped-def]
        live, _ = state.live_and_dead(job_runner.state_dir)
        beat = Heartbeat(Beats(abandon=[5]), [], job_runner.state_dir)  # type: ignore[arg-type]
        assert [c.run for c in live] == [5]
        beat.process_one()  # signals this process: the handler raises in here
        pytest.fail("the job was not stopped")

    job_runner.evaluate = evaluate_until_stopped
    try:
        out = job_runner.run(5)
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert out.status == "claim_lost" and server.calls[-1] == ("failure",)
    assert not state.is_abandoned(job_runner.state_dir, 5)
    with pytest.raises(Cancelled):  # the handler acts only on a marked run
        job_runner.current_run = 6
        state.mark_abandoned(job_runner.state_dir, 6)
        job_runner.stop_if_abandoned()


def test_an_artifact_is_kept_and_retried_while_storage_is_away(tmp_path, monkeypatch):
    from agents.errors import RetryableError

    monkeypatch.setattr("agents.job.time.sleep", lambda s: None)
    server = FakeServer()
    failures = [RetryableError("storage away")] * 2
    put = server.put_artifact

    def flaky_put(target, data):  # type: ignore[no-untyped-def]
        if failures:
            raise failures.pop()
        put(target, data)

    server.put_artifact = flaky_put  # type: ignore[method-assign]
    out = runner(tmp_path, server, fake_document).run(5)
    assert out.status == "done"
    assert [c for c in server.calls if c[0] == "result"] == [("result", 5, 2, ("worker.log",))]
