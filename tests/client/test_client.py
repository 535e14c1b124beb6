from __future__ import annotations

import socket

import pytest

from farm.client import BadRequest, FarmClient, Refused, ServerUnavailable, WaitTimeout
from farm.client.types import SubmitRequest
from farm.result import Interval
from tests.client.conftest import run_json, submission_json


def client(url: str, sleeps: list[float], **kw) -> FarmClient:  # type: ignore[no-untyped-def]
    return FarmClient(url, "fu_test", sleep=sleeps.append, **kw)


def test_submit_sends_the_source_unchanged_with_the_token(stub):
    stub.reply("POST", "/api/submissions/", 201, submission_json())
    source = "class ModelNew:\n    pass\n\t# tabs and trailing spaces   \n"
    sub = client(stub.url, []).submit(source, problem="softmax", hardware="npu-sim-v1")
    sent = stub.requests[0]
    assert sent["auth"] == "Bearer fu_test"
    assert sent["body"]["source"] == source and sent["body"]["hardware"] == ["npu-sim-v1"]
    assert sub.id == 7 and sub.run_ids == [11]


def test_retries_5xx_with_backoff_then_succeeds(stub):
    stub.reply("GET", "/api/runs/11/", 502, {"detail": "bad gateway"})
    stub.reply("GET", "/api/runs/11/", 503, {"detail": "down"})
    stub.reply("GET", "/api/runs/11/", 200, run_json(11))
    sleeps: list[float] = []
    run = client(stub.url, sleeps, backoff_s=0.1).run(11)
    assert run.verdict == "PASSED" and stub.count("GET", "/api/runs/11/") == 3
    assert len(sleeps) == 2 and all(0 <= s <= 0.2 for s in sleeps)


def test_429_waits_for_retry_after(stub):
    stub.reply("POST", "/api/submissions/", 429, {"detail": "slow down"}, {"Retry-After": "7"})
    stub.reply("POST", "/api/submissions/", 201, submission_json())
    sleeps: list[float] = []
    client(stub.url, sleeps).submit("def kernel(x): return x", problem="p", hardware="h")
    assert sleeps == [7.0] and stub.count("POST", "/api/submissions/") == 2


def test_429_beyond_the_limit_is_refused_with_the_servers_message(stub):
    detail = "quota for npu-sim-v1 is 2 runs per hour; retry in 3500 s"
    stub.reply("POST", "/api/submissions/", 429, {"detail": detail}, {"Retry-After": "3500"})
    sleeps: list[float] = []
    with pytest.raises(Refused) as info:
        client(stub.url, sleeps).submit("x", problem="p", hardware="h")
    assert info.value.message == detail and info.value.retry_after == 3500
    assert info.value.exit_code == 3 and sleeps == []


def test_post_is_not_repeated_after_a_500(stub):
    stub.reply("POST", "/api/submissions/", 500, {"detail": "boom"})
    with pytest.raises(ServerUnavailable):
        client(stub.url, []).submit("x", problem="p", hardware="h")
    assert stub.count("POST", "/api/submissions/") == 1


def test_validation_errors_are_the_servers_words(stub):
    body = {"problem": ["problem 'softmx' not in suite core-v1; did you mean 'softmax'?"]}
    stub.reply("POST", "/api/submissions/", 400, body)
    with pytest.raises(BadRequest) as info:
        client(stub.url, []).submit("x", problem="softmx", hardware="h")
    assert (
        info.value.message
        == "problem: problem 'softmx' not in suite core-v1; did you mean 'softmax'?"
    )
    assert info.value.exit_code == 2


def test_401_is_refused(stub):
    stub.reply("GET", "/api/runs/1/", 401, {"detail": "invalid or revoked API token"})
    with pytest.raises(Refused) as info:
        client(stub.url, []).run(1)
    assert "revoked" in info.value.message and "farm login" in (info.value.hint or "")


def test_connection_refused_retries_then_names_the_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    with pytest.raises(ServerUnavailable) as info:
        client(f"http://127.0.0.1:{port}", sleeps, retries=3).run(1)
    assert len(sleeps) == 3 and f"127.0.0.1:{port}" in info.value.message


def test_as_completed_yields_in_finishing_order_with_typed_results(stub):
    stub.reply("GET", "/api/runs/1/", 200, run_json(1, state="running"))
    stub.reply("GET", "/api/runs/1/", 200, run_json(1))
    stub.reply("GET", "/api/runs/2/", 200, run_json(2, verdict="INCORRECT"))
    sleeps: list[float] = []
    runs = list(client(stub.url, sleeps).as_completed([1, 2], timeout_s=60))
    assert [r.id for r in runs] == [2, 1]
    result = runs[1].result
    assert result is not None and result.passed and result.sol_score == pytest.approx(0.61)
    w = result.workloads[0]
    assert (w.id, w.time_ms, w.baseline_ms["eager"], w.speedup["eager"]) == ("small", 0.5, 1.0, 2.0)
    assert w.interval == Interval(0.45, 0.55)


def test_wait_times_out_with_the_pending_ids(stub):
    stub.reply("GET", "/api/runs/5/", 200, run_json(5, state="queued"))
    c = client(stub.url, [], poll_s=0.01)
    with pytest.raises(WaitTimeout) as info:
        c.wait([5], timeout_s=0.05)
    assert info.value.pending == [5] and info.value.exit_code == 4


def test_many_runs_are_polled_through_the_run_list(stub):
    ids = list(range(100, 110))
    page = {"next": None, "results": [{"id": i, "state": "done"} for i in reversed(ids)]}
    stub.reply("GET", "/api/runs/", 200, page)
    for i in ids:
        stub.reply("GET", f"/api/runs/{i}/", 200, run_json(i))
    runs = client(stub.url, []).wait(ids, timeout_s=10)
    assert [r.id for r in runs] == ids
    assert stub.count("GET", "/api/runs/") == 1


def test_submissions_reads_every_page(stub):
    later = {"next": None, "results": [submission_json(8, runs=((12, "done"),))]}
    first = {"next": f"{stub.url}/api/submissions/?cursor=2", "results": [submission_json(9)]}
    stub.reply("GET", "/api/submissions/", 200, first)
    stub.reply("GET", "/api/submissions/", 200, later)
    subs = list(client(stub.url, []).submissions())
    assert [s.id for s in subs] == [9, 8]
    assert [(r.id, r.hardware) for s in subs for r in s.runs] == [
        (11, "npu-sim-v1"),
        (12, "npu-sim-v1"),
    ]
    assert [r["query"] for r in stub.requests] == ["", "cursor=2"]


def test_batch_is_split_into_chunks(stub):
    stub.reply("POST", "/api/submissions/", 201, {"submissions": [submission_json(1)] * 2})
    stub.reply("POST", "/api/submissions/", 201, {"submissions": [submission_json(2)]})
    reqs = [SubmitRequest(source="x", problem="p", hardware=["h"]) for _ in range(3)]
    subs = client(stub.url, []).submit_batch(reqs, chunk=2)
    assert len(subs) == 3
    assert [len(r["body"]["submissions"]) for r in stub.requests] == [2, 1]
