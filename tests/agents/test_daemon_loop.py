"""The agent's main loop, one step at a time: heartbeat, drain on the first SIGTERM or when the
server asks, cancel (release the runs) on the second."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import daemon
from agents.config import AgentConfig


class FakeHeartbeat:
    def __init__(self) -> None:
        self.beats = 0
        self.drain_requested = False

    def process_one(self) -> None:
        self.beats += 1


class FakeSlots:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.alive = True

    def drain(self) -> None:
        self.calls.append("drain")

    def any_alive(self) -> bool:
        return self.alive

    def process_one(self) -> None:
        self.calls.append("process")

    def cancel(self) -> None:
        self.calls.append("cancel")

    def wait(self, _timeout: float) -> bool:
        self.calls.append("wait")
        return True

    def kill(self) -> None:
        self.calls.append("kill")

    def crash_looping(self) -> list[str]:
        return []

    def pause(self) -> None:
        self.calls.append("pause")

    def resume(self) -> None:
        self.calls.append("resume")


@pytest.fixture
def agent(tmp_path: Path) -> daemon.Agent:
    a = daemon.Agent(AgentConfig(home=tmp_path, node_name="n1", min_free_mb=0), slots=[])
    a.heartbeat, a.slot_set = FakeHeartbeat(), FakeSlots()
    return a


def test_a_step_beats_and_watches_the_slots(agent: daemon.Agent) -> None:
    assert agent.step() is None and agent.step() is None
    assert agent.heartbeat.beats == 2
    assert agent.slot_set.calls == ["resume", "process", "resume", "process"]


def test_first_sigterm_drains_and_the_agent_leaves_when_slots_are_done(
    agent: daemon.Agent,
) -> None:
    agent.on_stop()
    assert agent.wake.is_set()
    assert agent.step() is None  # slots still finishing their jobs
    assert agent.slot_set.calls == ["drain"]
    assert agent.step() is None and agent.slot_set.calls == ["drain"]  # drained once, no more jobs
    assert agent.heartbeat.beats == 2  # the heartbeat goes on while draining
    agent.slot_set.alive = False
    assert agent.step() == 0


def test_the_server_can_ask_for_a_drain(agent: daemon.Agent) -> None:
    agent.heartbeat.drain_requested = True
    agent.slot_set.alive = False
    assert agent.step() == 0
    assert agent.slot_set.calls == ["drain"]


def test_second_sigterm_cancels_and_releases_the_runs(
    agent: daemon.Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    released: list[str] = []
    monkeypatch.setattr(daemon, "release_runs", lambda *a, **k: released.append(k["code"]) or [7])
    agent.on_stop()
    assert agent.step() is None
    agent.on_stop()
    assert agent.step() == 1
    assert agent.slot_set.calls == ["drain", "cancel", "wait"]
    assert released == ["AGENT_CANCELLED"]
