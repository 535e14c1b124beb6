"""Settings every test starts from."""

from __future__ import annotations

import os

# Baselines are measured afresh in every test (a node's baseline cache would let one test's
# measurement stand in for another's); tests/harness/test_baseline_cache.py turns it on.
os.environ.setdefault("FARM_BASELINE_CACHE", "0")
