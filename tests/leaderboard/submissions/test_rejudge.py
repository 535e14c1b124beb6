"""`farm rejudge` against the real server: an operator's client re-runs a board's entries (the
node's part played in-process), the report names the entry that fails now, and applying it
takes that entry off the board, kept, with the reason its owner reads."""

from __future__ import annotations

import threading
import time

from django.db import connection

from leaderboard.boards.models import BoardEntry
from leaderboard.runs.models import Run
from leaderboard.submissions.models import Submission
from tests.leaderboard.lbkit import HW, SUITE, finish, make_node, submit, user_client


def test_rejudge_reports_then_applies(live_server, users, local_storage, settings):
    from farm.client import FarmClient
    from farm.client.rejudge import rejudge_apply, rejudge_board

    settings.FARM_AUDIT = False
    node = make_node("rejudge-node", [HW])
    owners = [user_client(users["owner"]), user_client(users["other"])]
    sources = ["def kernel(a, b):\n    return a + b\n", "def kernel(a, b):\n    return b + a\n"]
    for client, source, t in zip(owners, sources, (4.0, 5.0)):
        body = submit(client, source=source, private=False).json()
        assert finish(node, Run.objects.get(pk=body["runs"][0]["id"]), time_ms=t).status_code == 200
    assert BoardEntry.objects.count() == 2

    def play_the_node() -> None:
        """The first submission's kernel now fails the farm's checks; the second passes."""
        deadline, done = time.monotonic() + 60, set()
        try:
            while len(done) < 2 and time.monotonic() < deadline:
                rejudged = Run.objects.filter(submission__label__startswith="re-judge")
                for run in rejudged.filter(state="queued"):
                    original = int(run.submission.label.rsplit(" ", 1)[1])
                    verdict = "INCORRECT" if original == first else "PASSED"
                    assert finish(node, run, verdict=verdict).status_code == 200
                    done.add(run.pk)
                time.sleep(0.05)
        finally:
            connection.close()  # this thread's own connection

    first = Submission.objects.order_by("id").first().pk
    operator = FarmClient(live_server.url, user_client(users["admin"]).token, poll_s=0.05)
    worker = threading.Thread(target=play_the_node)
    worker.start()
    report = rejudge_board(
        operator, problem="vector_add", hardware=HW, suite=SUITE, created_at="2026-11-27"
    )
    worker.join()
    assert [(e.submission, e.change) for e in report.entries] == [
        (first, "fails now"),
        (first + 1, "unchanged"),
    ]
    assert BoardEntry.objects.count() == 2  # the report changed nothing
    assert Submission.objects.filter(label__startswith="re-judge", private=True).count() == 2

    assert [e.submission for e in rejudge_apply(operator, report)] == [first]
    hidden = Submission.objects.get(pk=first)
    assert hidden.hacked and "now INCORRECT" in hidden.hacked_note
    assert list(BoardEntry.objects.values_list("submission_id", flat=True)) == [first + 1]
    mine = user_client(users["owner"]).get(f"/api/submissions/{first}/").json()
    assert mine["hacked"] and "re-judged 2026-11-27" in mine["hacked_note"]
