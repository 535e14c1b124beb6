"""Settings every test starts from, and the order the tests run in."""

from __future__ import annotations

import os

import pytest

# Baselines are measured afresh in every test (a node's baseline cache would let one test's
# measurement stand in for another's); tests/harness/test_baseline_cache.py turns it on.
os.environ.setdefault("FARM_BASELINE_CACHE", "0")


@pytest.hookimpl(trylast=True)  # after pytest-django's ordering, which the stable sort keeps
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a `slow` test run first; otherwise the order stays as it was.

    `make test` hands whole files to its workers in this order (`--dist loadfile
    --no-loadscope-reorder`): the long files start at once on every core, and the short ones
    fill in at the end instead of one long file running alone after the rest are done.
    """
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
