"""The artifact store against a hung S3: writes give up after their attempts within the timeouts,
reads on a request try once with the short timeout."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from django.test import override_settings

from leaderboard.artifacts.store import ArtifactStoreError, artifact_store


@pytest.fixture
def silent_endpoint():
    """A server that accepts connections and never answers (a hung S3)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_hung_s3_fails_within_the_timeouts(s3, silent_endpoint):
    with override_settings(
        AWS_S3_ENDPOINT_URL=silent_endpoint, FARM_S3_TIMEOUT_S=0.3, FARM_S3_ATTEMPTS=2
    ):
        start = time.monotonic()
        with pytest.raises(ArtifactStoreError, match="after 2 attempts"):
            artifact_store().put("probe/x", b"x", content_type="text/plain")
        assert time.monotonic() - start < 5


def test_reads_on_a_request_try_once_with_the_short_timeout(s3, silent_endpoint):
    with override_settings(
        AWS_S3_ENDPOINT_URL=silent_endpoint, FARM_S3_TIMEOUT_S=30, FARM_S3_REQUEST_TIMEOUT_S=0.3
    ):
        start = time.monotonic()
        with pytest.raises(ArtifactStoreError, match="after 1 attempts"):
            artifact_store().get("probe/x")
        assert time.monotonic() - start < 2  # a reader's web thread is not held for long
