"""The board read serves a cached rendering while the board's stamp (version, sources_public,
owner) is unchanged: one query per read, and every change shows on the next read."""

from __future__ import annotations

from leaderboard.boards.models import Board
from leaderboard.boards.services import board_update
from tests.leaderboard.boards.test_boards import BOARD, nodes, scored


def test_cached_board_read_takes_one_query(clients, local_storage, django_assert_num_queries):
    scored(clients["owner"], nodes(), score=0.5)
    reader = clients["anonymous"]
    first = reader.get(BOARD)
    assert first.status_code == 200
    with django_assert_num_queries(1):  # the stamp; the rendering comes from the cache
        again = reader.get(BOARD)
    assert again.content == first.content
    assert again["Content-Type"] == "application/json"


def test_every_change_shows_on_the_next_read(clients, users, local_storage):
    node = nodes()
    reader = clients["anonymous"]
    scored(clients["owner"], node, score=0.5)
    assert [e["user"] for e in reader.get(BOARD).json()["entries"]] == ["owner"]

    scored(clients["other"], node, score=0.9, time_ms=2.0)  # a new entry bumps the version
    assert [e["user"] for e in reader.get(BOARD).json()["entries"]] == ["other", "owner"]

    board = Board.objects.get()
    board_update(board=board, sources_public=True)
    assert reader.get(BOARD).json()["sources_public"] is True
    board_update(board=board, owner_id=users["admin"].pk)
    body = reader.get(BOARD).json()
    assert (body["owner"], body["sources_public"]) == ("admin", True)
