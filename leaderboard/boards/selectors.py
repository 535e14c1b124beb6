from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.db.models import QuerySet

from farm.hardware import kinds
from farm.scoring import times_tie
from leaderboard.boards.likeness import COPY_LIKENESS, likeness, likeness_at_most
from leaderboard.boards.models import Board, BoardEntry
from leaderboard.compiled import CompiledValues
from leaderboard.problems import farm_bridge

HEAVY_PROBLEM_FIELDS = ("sol_table", "workloads", "description")


@dataclass(frozen=True)
class CopyFlag:
    """An entry's source is near-identical (boards.likeness) to that of an earlier public entry
    of the same problem by another user: `submission` and `user` name that entry."""

    submission: int
    user: str
    likeness: float


@dataclass
class RankedEntry:
    rank: int
    tied: bool
    entry: BoardEntry
    copy_of: CopyFlag | None = None


def _boards() -> QuerySet[Board]:
    """Boards with their problem, suite, hardware and owner (heavy problem fields left out)."""
    return Board.objects.select_related("problem__suite", "hardware", "owner").defer(
        *(f"problem__{f}" for f in HEAVY_PROBLEM_FIELDS), "hardware__spec"
    )


def board_find(*, suite: str, problem: str, hardware: str) -> Board | None:
    return (
        _boards()
        .filter(problem__suite_id=suite, problem__name=problem, hardware_id=hardware)
        .first()
    )


class BoardStamp(NamedTuple):
    """What a board's rendering depends on besides its entries (whose changes bump version)."""

    pk: int
    version: int
    sources_public: bool
    owner_id: int | None


def board_stamp(*, suite: str, problem: str, hardware: str) -> BoardStamp | None:
    """The board's stamp, read without loading the board: the board read serves a cached
    rendering as long as the stamp is unchanged. A query compiled once per process
    (leaderboard.compiled): on the API's most frequent request the ORM would spend more CPU
    building this lookup than PostgreSQL answering it."""
    row = _stamp_query().fetch_one(suite, problem, hardware)
    return BoardStamp(*row.values()) if row else None


@functools.cache
def _stamp_query() -> CompiledValues:
    keys = ("\x01suite", "\x01problem", "\x01hardware")  # placeholders, never real names
    columns = ("id", "version", "sources_public", "owner_id")
    qs = Board.objects.filter(
        problem__suite_id=keys[0], problem__name=keys[1], hardware_id=keys[2]
    ).values(*columns)
    return CompiledValues.of(qs, columns, placeholders=keys)


def board_get(*, pk: int) -> Board:
    return _boards().get(pk=pk)


def board_list() -> QuerySet[Board]:
    return Board.objects.select_related("problem", "hardware").order_by(
        "problem__suite_id", "problem__name", "hardware_id"
    )


def board_deterministic(hardware: str) -> bool:
    """Whether the board's hardware class runs on a deterministic device kind (npu-sim)."""
    spec = farm_bridge.hardware_spec(hardware)
    return spec is not None and kinds.get_kind(spec.device).deterministic


def entries_tie(a: BoardEntry, b: BoardEntry, *, deterministic: bool) -> bool:
    """True when, on every workload both entries timed, their times cannot be ranked
    (farm.scoring.times_tie over BoardEntry.intervals: workload id -> [low, high] ms)."""
    common = set(a.intervals) & set(b.intervals)
    return bool(common) and all(
        times_tie(a.intervals[w], b.intervals[w], deterministic=deterministic) for w in common
    )


def board_ranking(
    *, board: Board, limit: int | None = None, copies: bool = True
) -> list[RankedEntry]:
    """Entries by SOL score, best first. Neighbours whose times cannot be ranked on any workload
    (entries_tie) share a rank and are marked tied; on a deterministic device the earliest
    submission of a tie comes first, elsewhere the better score. With `copies`, an entry whose
    source is near-identical to an earlier public one carries a CopyFlag."""
    query = BoardEntry.objects.filter(board=board).select_related("user", "submission")
    if not copies:
        query = query.defer("fingerprint")
    entries = list(query.order_by("-sol_score", "submission__created_at")[: _limit(limit)])
    deterministic = board_deterministic(board.hardware_id)
    ranked: list[RankedEntry] = []
    for group in _tie_groups(entries, deterministic):
        rank = len(ranked) + 1
        ranked += [RankedEntry(rank=rank, tied=len(group) > 1, entry=e) for e in group]
    if copies:
        _flag_copies(board, ranked)
    return ranked[:limit] if limit else ranked


def _limit(limit: int | None) -> int:
    """Rows read: the whole board's limit, so a tie at the cut is ordered in full."""
    return max(limit or 0, settings.FARM_BOARD_LIMIT)


def _tie_groups(entries: list[BoardEntry], deterministic: bool) -> list[list[BoardEntry]]:
    groups: list[list[BoardEntry]] = []
    for entry in entries:
        if groups and entries_tie(groups[-1][-1], entry, deterministic=deterministic):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    if deterministic:
        for group in groups:
            group.sort(key=lambda e: (e.submission.created_at, e.submission_id))
    return groups


def _flag_copies(board: Board, ranked: list[RankedEntry]) -> None:
    """Set copy_of on each ranked entry whose fingerprint is at least COPY_LIKENESS alike to that
    of an earlier public entry (a board whose sources are public) of the same problem by another
    user; the earliest such entry is named."""
    public = (
        BoardEntry.objects.filter(board__problem_id=board.problem_id, board__sources_public=True)
        .select_related("user", "submission")
        .order_by("submission__created_at", "submission_id")
    )
    earliest: dict[int, tuple[BoardEntry, frozenset[int]]] = {}  # a submission may be on
    for e in public:  # several boards; [] while storage could not deliver the source
        if e.fingerprint and e.submission_id not in earliest:
            earliest[e.submission_id] = (e, frozenset(e.fingerprint))
    for r in ranked:
        r.copy_of = _copy_of(r.entry, list(earliest.values()))


def _copy_of(entry: BoardEntry, public: list[tuple[BoardEntry, frozenset[int]]]) -> CopyFlag | None:
    mine = frozenset(entry.fingerprint)
    for other, theirs in public:
        if other.submission.created_at >= entry.submission.created_at:
            return None
        if other.user_id == entry.user_id or likeness_at_most(mine, theirs) < COPY_LIKENESS:
            continue
        alike = likeness(mine, theirs)
        if alike >= COPY_LIKENESS:
            return CopyFlag(other.submission_id, other.user.username, round(alike, 3))
    return None


def board_leaders(*, problem_id: int) -> dict[str, BoardEntry]:
    """The first entry of each board of a problem, by hardware class (boards with no entry
    are left out). One query per board: a problem has one board per hardware class."""
    leaders = {}
    for board in Board.objects.filter(problem_id=problem_id).only("id", "hardware_id"):
        ranked = board_ranking(board=board, limit=1, copies=False)
        if ranked:
            leaders[board.hardware_id] = ranked[0].entry
    return leaders
