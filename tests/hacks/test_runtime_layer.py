"""The cheats that carry a `# runtime:` header, with the static guard's findings dropped: the
design assumes the static layer can always be beaten, so the data and timing layers (outputs
captured when each call's timer stops, re-checked calls named after they ran, windows timed from
outside) must still give the verdict that header names. One small workload, no baselines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from farm.harness import report
from farm.harness.supervisor import evaluate

HEADER = re.compile(r"^# (problem|runtime): (\S+)", re.M)
HACKS = sorted(
    p
    for p in Path(__file__).parent.glob("*.py")
    if not p.name.startswith("test_") and "# runtime: " in p.read_text()
)
SMALL = {"vector_add": "small-4k", "softmax": "small"}

pytestmark = [pytest.mark.slow, pytest.mark.quiet_host]


@pytest.mark.parametrize("path", HACKS, ids=lambda p: p.stem)
def test_the_runtime_layers_alone_stop_the_cheat(path, monkeypatch):
    header = dict(HEADER.findall(path.read_text()))
    monkeypatch.setattr(report, "static_findings", lambda source, filename: [])
    doc = evaluate(
        path,
        problem=header["problem"],
        device="cpu",
        mode="benchmark",
        workloads=[SMALL[header["problem"]]],
        baselines=False,
    ).to_json()
    reasons = [(r["code"], r["detail"][:200]) for r in doc["reasons"]]
    assert doc["verdict"] == header["runtime"], reasons


@pytest.mark.parametrize("lift_pick_bound", [False, True], ids=["as-is", "pick-bound-lifted"])
def test_claimed_windows_fail_on_trusted_evidence(lift_pick_bound, monkeypatch):
    """A submission that answers the channel itself claims 1 us calls in windows it never ran
    (their walls agree) and computes re-checked calls only when named: the pick reply comes late
    (LATE_PICKS); without that bound, the calls the supervisor checked itself, 150 ms each, do
    not fit the claimed time (CHECK_WALL_MISMATCH). Either is REJECTED."""
    from farm.harness import windows

    monkeypatch.setattr(report, "static_findings", lambda source, filename: [])
    if lift_pick_bound:
        monkeypatch.setattr(windows, "PICKS_FIXED_MS", 1e9)
    doc = evaluate(
        Path(__file__).parent / "forge_channel_picks_on_demand.py",
        problem="vector_add",
        device="cpu",
        mode="benchmark",
        workloads=["small-4k"],
        baselines=False,
    ).to_json()
    codes = [r["code"] for r in doc["reasons"]]
    assert doc["verdict"] == "REJECTED", doc["reasons"]
    assert ("CHECK_WALL_MISMATCH" if lift_pick_bound else "LATE_PICKS") in " ".join(
        codes + [r["detail"] for r in doc["reasons"]]
    )
