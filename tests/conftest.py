"""Settings every test starts from, and the order the tests run in."""

from __future__ import annotations

import os

import pytest

from farm import config

# Baselines are measured afresh in every test (a node's baseline cache would let one test's
# measurement stand in for another's); tests/harness/test_baseline_cache.py turns it on.
os.environ.setdefault("FARM_BASELINE_CACHE", "0")


@pytest.fixture(autouse=True)
def node_settings_follow_the_environment(monkeypatch: pytest.MonkeyPatch):
    """A process reads its node settings once (farm.config.node_settings); a test changes the
    environment as it goes, so here each test starts from a fresh read and every
    `monkeypatch.setenv`/`delenv` is followed by another."""
    for name in ("setenv", "delenv"):
        change = getattr(monkeypatch, name)

        def change_and_forget(*args, _change=change, **kwargs):
            _change(*args, **kwargs)
            config.node_settings_forget()

        setattr(monkeypatch, name, change_and_forget)
    config.node_settings_forget()
    yield
    config.node_settings_forget()


@pytest.hookimpl(trylast=True)  # after pytest-django's ordering, which the stable sort keeps
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a `slow` test run first; otherwise the order stays as it was.

    `make test` hands whole files to its workers in this order (`--dist loadfile
    --no-loadscope-reorder`): the long files start at once on every core, and the short ones
    fill in at the end instead of one long file running alone after the rest are done.
    """
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
