"""Every cheat in tests/hacks/ through the whole farm (supervisor, sandboxed worker, guard):
none may PASS, and each gets the verdict its header expects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from farm.harness import supervisor

HACKS = sorted(p for p in Path(__file__).parent.glob("*.py") if not p.name.startswith("test_"))
HEADER = re.compile(r"^# (problem|expect|device|workloads): (\S+)", re.M)

pytestmark = [pytest.mark.slow, pytest.mark.quiet_host]


@pytest.mark.parametrize("path", HACKS, ids=lambda p: p.stem)
def test_hack_is_not_passed(path):
    header = dict(HEADER.findall(path.read_text()))
    workloads = header["workloads"].split(",") if "workloads" in header else None
    doc = supervisor.evaluate(
        source_path=path,
        problem=header["problem"],
        suite="core-v1",
        device=header.get("device", "cpu"),  # npu_sim_* cheats attack npu-sim's replay
        mode="benchmark",
        workloads=workloads,
    ).to_json()
    reasons = [(r["code"], r["detail"][:200]) for r in doc["reasons"]]
    assert doc["verdict"] != "PASSED", reasons
    assert doc["verdict"] == header["expect"], reasons
