"""Re-judging a board: its entries' stored sources run again on the farm as it is now (its
current harness, guard and tolerances), and what changed is reported before anything is applied.

`rejudge_board` submits each entry's source again (a private submission of the operator's, so
the boards do not move), waits for the runs and returns a `RejudgeReport`: per entry, the
verdict and SOL score on the board beside the new ones. `rejudge_apply` takes off the boards the
entries that the farm now judges a failure of the kernel (INCORRECT, REJECTED, ...), through the
operator's hacked mark: hidden, kept, with the new verdict and its first reason as the note its
owner reads. A farm outcome (NODE_FAULT, INCONCLUSIVE, UNSUPPORTED, a failed run) says nothing
about the kernel and is reported, never applied.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from farm.client.client import FarmClient
from farm.client.types import BoardEntry, Run, SubmitRequest

SCHEMA = "farm.rejudge/1"


@dataclass(frozen=True)
class EntryRejudged:
    """One board entry re-run: what the board shows and what the farm says now."""

    submission: int
    user: str
    rank: int
    board_run: int
    board_sol_score: float | None
    run: int  # the new run
    state: str
    verdict: str | None
    category: str  # kernel | farm | "" (unfinished)
    sol_score: float | None
    reason: str  # the new run's first reason, or its failure

    @property
    def fails_now(self) -> bool:
        """The farm now judges the kernel a failure: the entry would leave the board."""
        return self.category == "kernel" and self.verdict not in (None, "PASSED")

    @property
    def change(self) -> str:
        """`fails now`, `not measured` (a farm outcome or an unfinished run) or `unchanged`."""
        if self.fails_now:
            return "fails now"
        return "unchanged" if self.category == "kernel" else "not measured"

    def note(self, when: str) -> str:
        """The hacked note its owner reads once the change is applied."""
        return (
            f"re-judged {when} against the farm's current checks (run {self.run}): "
            f"now {self.verdict}: {self.reason}"
        )


@dataclass(frozen=True)
class RejudgeReport:
    suite: str
    problem: str
    hardware: str
    created_at: str  # ISO 8601, UTC
    entries: list[EntryRejudged]

    @property
    def failing(self) -> list[EntryRejudged]:
        return [e for e in self.entries if e.fails_now]

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RejudgeReport:
        if data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} report (schema {data.get('schema')!r})")
        return cls(
            suite=str(data["suite"]),
            problem=str(data["problem"]),
            hardware=str(data["hardware"]),
            created_at=str(data["created_at"]),
            entries=[EntryRejudged(**e) for e in data["entries"]],
        )


def rejudge_board(
    client: FarmClient,
    *,
    problem: str,
    hardware: str,
    suite: str,
    created_at: str,
    timeout_s: float | None = None,
) -> RejudgeReport:
    """Run every entry of the board again and report; raises WaitTimeout (with the pending run
    ids) when the runs do not finish within `timeout_s`."""
    board = client.board(problem, hardware, suite=suite)
    requests = [_again(client, e, problem, hardware, suite) for e in board.entries]
    created = client.submit_batch(requests) if requests else []
    runs = {r.id: r for r in client.wait(created, timeout_s=timeout_s)}
    entries = [_rejudged(entry, runs[sub.runs[0].id]) for entry, sub in zip(board.entries, created)]
    return RejudgeReport(suite, problem, hardware, created_at, entries)


def rejudge_apply(client: FarmClient, report: RejudgeReport) -> list[EntryRejudged]:
    """Take the entries that fail now off the boards (the hacked mark); returns them."""
    for entry in report.failing:
        client.mark_hacked(entry.submission, note=entry.note(report.created_at))
    return report.failing


def _again(
    client: FarmClient, entry: BoardEntry, problem: str, hardware: str, suite: str
) -> SubmitRequest:
    original = client.submission(entry.submission)
    return SubmitRequest(
        source=client.source(entry.submission),
        problem=problem,
        hardware=[hardware],
        mode=original.mode,
        suite=suite,
        filename=original.raw.get("filename") or None,
        label=f"re-judge of submission {entry.submission}",
        private=True,
        language=original.raw.get("language") or None,
    )


def _rejudged(entry: BoardEntry, run: Run) -> EntryRejudged:
    return EntryRejudged(
        submission=entry.submission,
        user=entry.user,
        rank=entry.rank,
        board_run=entry.run,
        board_sol_score=entry.sol_score,
        run=run.id,
        state=run.state,
        verdict=run.verdict,
        category=run.category or ("farm" if run.state == "failed" else ""),
        sol_score=run.sol_score,
        reason=_first_reason(run),
    )


def _first_reason(run: Run) -> str:
    reasons = [*(run.result.reasons if run.result else []), *run.server_reasons]
    if reasons:
        return f"{reasons[0].code}: {reasons[0].detail}"
    if run.failure_code:
        return f"{run.failure_code}: {run.failure_detail or ''}".rstrip(": ")
    return ""
