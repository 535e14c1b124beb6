"""Fixtures of the leaderboard tests: real PostgreSQL (DATABASE_URL, default the local server's
`test` database; pytest-django creates test_test) and a real S3 API server (moto in server mode,
one process for the session, on a free 127.0.0.1 port)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.settings")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
os.environ.setdefault("FARM_VAR_DIR", tempfile.mkdtemp(prefix="farm-lb-test-"))
os.environ["FARM_SUITES_PATH"] = str(HERE / "suite")
for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    os.environ.setdefault(key, "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

import django  # noqa: E402

django.setup()

import boto3  # noqa: E402
import pytest  # noqa: E402
from django.test import override_settings  # noqa: E402
from pytest_django.plugin import blocking_manager_key  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from farm.suite.loader import load_suite  # noqa: E402
from tests.leaderboard.lbkit import GPU, HW, SUITE, free_port, make_node, user_client, wait_port  # noqa: E402


@pytest.fixture(scope="session")
def moto_url():
    """A moto S3 server process for the session."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3(moto_url):
    """Artifact storage on a fresh bucket of the moto server; yields a boto3 client."""
    bucket = f"farm-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=moto_url, region_name="us-east-1")
    client.create_bucket(Bucket=bucket)
    with override_settings(
        FARM_S3_BUCKET=bucket,
        AWS_S3_ENDPOINT_URL=moto_url,
        FARM_S3_BACKOFF_S=0.01,
        FARM_S3_TIMEOUT_S=2.0,
    ):
        client.bucket = bucket  # type: ignore[attr-defined]
        yield client


@pytest.fixture
def local_storage(tmp_path):
    with override_settings(FARM_S3_BUCKET="", MEDIA_ROOT=str(tmp_path / "artifacts")):
        yield tmp_path / "artifacts"


def load_catalog() -> None:
    from leaderboard.problems.models import Suite
    from leaderboard.problems.services import hardware_sync, suite_sync

    if not Suite.objects.filter(name=SUITE).exists():
        suite_sync(farm_suite=load_suite(SUITE), hardware=hardware_sync())


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database with the hardware classes and the test suite loaded once."""
    with django_db_blocker.unblock():
        load_catalog()


def _flushes(item: pytest.Item) -> bool:
    """Whether the test runs outside a transaction, so that every table is flushed as it ends."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", ())
    return bool(marker and marker.kwargs.get("transaction")) or bool(
        {"live_server", "transactional_db"} & set(fixtures)
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a transactional test's flush, the catalog is loaded again for the tests that come
    after it in this process, whatever their order (a worker of `make test` runs whole files,
    transactional tests among the others)."""
    try:
        yield
    finally:
        if nextitem is not None and _flushes(item):  # the last one: the database goes
            with item.config.stash[blocking_manager_key].unblock():
                load_catalog()


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Throttle counts live in the cache: each test starts with none."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def users(db):
    from django.contrib.auth.models import User

    return {
        "owner": User.objects.create_user("owner", password="pw-owner"),
        "other": User.objects.create_user("other", password="pw-other"),
        "admin": User.objects.create_user(
            "admin", password="pw-admin", is_staff=True, is_superuser=True
        ),
    }


@pytest.fixture
def clients(users):
    out = {name: user_client(user) for name, user in users.items()}
    out["anonymous"] = APIClient()
    return out


@pytest.fixture
def node(db):
    return make_node("node-a", [HW, GPU])


@pytest.fixture
def other_node(db):
    return make_node("node-b", [HW, GPU])
