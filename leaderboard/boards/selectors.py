from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

from django.conf import settings
from django.db.models import QuerySet

from farm.result import Interval
from leaderboard.boards.models import Board, BoardEntry
from leaderboard.compiled import CompiledValues

HEAVY_PROBLEM_FIELDS = ("sol_table", "workloads", "description")


@dataclass
class RankedEntry:
    rank: int
    tied: bool
    entry: BoardEntry


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


def intervals_overlap(a: dict[str, list[float]], b: dict[str, list[float]]) -> bool:
    """True when, on every workload both entries timed, their time intervals overlap
    (BoardEntry.intervals: workload id -> [low, high] ms)."""
    common = set(a) & set(b)
    if not common:
        return False
    return all(Interval(*a[w]).overlaps(Interval(*b[w])) for w in common)


def board_ranking(*, board: Board, limit: int | None = None) -> list[RankedEntry]:
    """Entries by SOL score, best first. Neighbours whose time intervals overlap on every
    workload share a rank (noise cannot tell them apart) and are marked tied."""
    entries = list(
        BoardEntry.objects.filter(board=board)
        .select_related("user")
        .order_by("-sol_score", "updated_at")[: limit or settings.FARM_BOARD_LIMIT]
    )
    ranked: list[RankedEntry] = []
    for i, entry in enumerate(entries):
        if ranked and intervals_overlap(ranked[-1].entry.intervals, entry.intervals):
            ranked[-1].tied = True
            ranked.append(RankedEntry(rank=ranked[-1].rank, tied=True, entry=entry))
        else:
            ranked.append(RankedEntry(rank=i + 1, tied=False, entry=entry))
    return ranked


def board_leaders(*, problem_id: int) -> dict[str, BoardEntry]:
    """The first entry of each board of a problem, by hardware class (boards with no entry
    are left out). One query per board: a problem has one board per hardware class."""
    leaders = {}
    for board in Board.objects.filter(problem_id=problem_id).only("id", "hardware_id"):
        ranked = board_ranking(board=board, limit=1)
        if ranked:
            leaders[board.hardware_id] = ranked[0].entry
    return leaders
