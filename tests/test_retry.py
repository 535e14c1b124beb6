"""farm.retry: one engine, two policies (the client's and the node's)."""

from __future__ import annotations

import dataclasses

import requests

from farm import retry


def answer(status: int, retry_after: str | None = None) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    if retry_after is not None:
        response.headers["Retry-After"] = retry_after
    return response


def run(script: list, policy: retry.RetryPolicy, method: str = "POST"):  # type: ignore[no-untyped-def]
    """The outcome of sending through `script` (answers or errors, in order) and the waits."""
    queue, waits = list(script), []

    def request() -> requests.Response:
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    outcome = retry.send(request, method=method, policy=policy, sleep=waits.append)
    return outcome, waits


def test_the_client_repeats_a_post_only_when_the_server_cannot_have_acted():
    outcome, waits = run([answer(502), answer(200)], retry.CLIENT)
    assert outcome.response.status_code == 502 and waits == []  # 5xx: it may have acted
    outcome, _ = run([requests.Timeout("slow"), answer(200)], retry.CLIENT)
    assert isinstance(outcome.error, requests.Timeout)
    refused = requests.ConnectionError("NewConnectionError: [Errno 111] Connection refused")
    outcome, waits = run([refused, answer(429, "3"), answer(201)], retry.CLIENT)
    assert outcome.response.status_code == 201 and len(waits) == 2 and waits[1] == 3.0


def test_the_client_repeats_reads_on_every_transient_failure():
    script = [requests.Timeout("slow"), answer(503), answer(200)]
    outcome, waits = run(script, retry.CLIENT, method="GET")
    assert outcome.response.status_code == 200 and outcome.attempts == 3 and len(waits) == 2


def test_the_node_repeats_every_request_then_gives_the_last_outcome():
    policy = dataclasses.replace(retry.NODE, retries=2, backoff_s=0.01)
    outcome, waits = run([answer(500), requests.Timeout("slow"), answer(503)], policy)
    assert outcome.response.status_code == 503 and outcome.attempts == 3
    assert all(0 <= w <= 0.04 for w in waits) and len(waits) == 2


def test_final_answers_and_long_retry_afters_are_not_repeated():
    for policy in (retry.CLIENT, retry.NODE):
        outcome, waits = run([answer(409)], policy)
        assert outcome.response.status_code == 409 and waits == []
        outcome, waits = run([answer(429, "3600")], policy)  # a quota free in an hour
        assert outcome.response.status_code == 429 and waits == []
        outcome, waits = run([requests.exceptions.MissingSchema("no scheme")], policy)
        assert outcome.attempts == 1 and waits == []
