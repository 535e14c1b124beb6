"""What the corpus benches share: a catalogue file evaluated on its problem's small workloads.

Each file of tests/hacks/ and tests/solutions/ names its core-v1 problem in its header
(tests.harness.conftest.header); guard_table.py, load_honesty.py and wall_clock_calibration.py
run them in benchmark mode on those workloads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def evaluate_small(path: Path, device: str, **options: Any) -> dict[str, Any]:
    """The result document of `path` in benchmark mode on its problem's small workloads
    (`options`: farm.harness.supervisor.EvalOptions fields, e.g. baselines, policy)."""
    from farm.harness.supervisor import evaluate
    from farm.suite.loader import load_suite
    from tests.harness.conftest import header

    problem = load_suite("core-v1").problem(header(path)["problem"])
    small = [w.id for w in problem.workloads if w.small]
    return evaluate(
        path, problem=problem.name, device=device, mode="benchmark", workloads=small, **options
    ).to_json()
