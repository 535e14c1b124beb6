"""The node API's answers as typed objects: the job a claim hands out and the heartbeat's
acknowledgement. The server builds them (leaderboard.runs.agent_apis, leaderboard.nodes.apis)
and the agent reads them (agents.client); a test holds the fields equal to the server's DRF
serializers (`Job`, `HeartbeatAck` in the OpenAPI schema). Times are ISO 8601 strings, limits
in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from farm.wire import Fields, WireError


class NodeApiError(WireError):
    """A node API answer does not have the expected shape; the message names the field."""


@dataclass(frozen=True)
class SuiteRef:
    """A pinned suite: its name and manifest hash."""

    name: str
    hash: str

    @classmethod
    def from_json(cls, data: Any, where: str = "suite") -> SuiteRef:
        f = Fields(data, where, NodeApiError)
        return cls(name=f.text("name"), hash=f.text("hash"))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "hash": self.hash}


@dataclass(frozen=True)
class TimeLimits:
    """Soft and hard time limits (s) of one evaluation."""

    soft_s: float
    hard_s: float

    @classmethod
    def from_json(cls, data: Any, where: str = "time_limits") -> TimeLimits:
        f = Fields(data, where, NodeApiError)
        soft, hard = f.number("soft_s", null=False), f.number("hard_s", null=False)
        assert soft is not None and hard is not None
        return cls(soft_s=soft, hard_s=hard)

    def to_json(self) -> dict[str, Any]:
        return {"soft_s": self.soft_s, "hard_s": self.hard_s}


@dataclass(frozen=True)
class Job:
    """What a won claim hands the node: the run and attempt it now holds, what to evaluate
    (suite, problem, hardware class, mode, the source and its sha256) and within what limits.
    `sent_at` is when the server handed the run to the broker (None when not yet known).
    Durations the node needs come measured by the server, so that no node compares its own
    clock with the server's: `queued_s`, from the hand-off to the broker to this claim, and
    `lease_s`, how long the server lets the node hold the run without hearing from it (None
    from servers that do not send them)."""

    run: int
    attempt: int
    submission: int
    suite: SuiteRef
    problem: str
    hardware: str
    mode: str
    language: str
    filename: str
    source: str
    source_sha256: str
    time_limits: TimeLimits
    created_at: str
    sent_at: str | None
    queued_s: float | None = None
    lease_s: float | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "job") -> Job:
        f = Fields(data, where, NodeApiError)
        text = {
            k: f.text(k) for k in ("problem", "hardware", "mode", "language", "filename", "source")
        }
        return cls(
            run=f.integer("run"),
            attempt=f.integer("attempt"),
            submission=f.integer("submission"),
            suite=SuiteRef.from_json(f.mapping("suite"), f"{where}.suite"),
            **text,
            source_sha256=f.text("source_sha256"),
            time_limits=TimeLimits.from_json(f.mapping("time_limits"), f"{where}.time_limits"),
            created_at=f.text("created_at"),
            sent_at=f.text("sent_at", null=True),
            queued_s=f.number("queued_s", required=False),
            lease_s=f.number("lease_s", required=False),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "attempt": self.attempt,
            "submission": self.submission,
            "suite": self.suite.to_json(),
            "problem": self.problem,
            "hardware": self.hardware,
            "mode": self.mode,
            "language": self.language,
            "filename": self.filename,
            "source": self.source,
            "source_sha256": self.source_sha256,
            "time_limits": self.time_limits.to_json(),
            "created_at": self.created_at,
            "sent_at": self.sent_at,
            "queued_s": self.queued_s,
            "lease_s": self.lease_s,
        }


@dataclass(frozen=True)
class HeartbeatAck:
    """The server's answer to a heartbeat: the node's `status` as the server sees it, the runs
    it reported that it no longer holds (`abandon`: stop them, their results would be refused),
    whether it should drain, and the server's clock."""

    status: str
    abandon: list[int]
    drain: bool
    server_time: str

    @classmethod
    def from_json(cls, data: Any, where: str = "heartbeat") -> HeartbeatAck:
        f = Fields(data, where, NodeApiError)
        abandon = f.array("abandon")
        if any(isinstance(r, bool) or not isinstance(r, int) for r in abandon):
            raise NodeApiError(f"{where}.abandon: must be a list of run ids")
        return cls(
            status=f.text("status"),
            abandon=list(abandon),
            drain=f.flag("drain"),
            server_time=f.text("server_time"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "abandon": list(self.abandon),
            "drain": self.drain,
            "server_time": self.server_time,
        }
