"""sync_suites loads the pinned suites (idempotent, recording each suite's hash), and the problems
API gives each problem's SOL table."""

from __future__ import annotations

from django.core.management import call_command

from leaderboard.problems import farm_bridge
from leaderboard.problems.models import Problem, Suite
from tests.leaderboard.lbkit import HW, SUITE


def test_sync_suites_is_idempotent_and_records_the_hash(db, monkeypatch):
    monkeypatch.setattr(farm_bridge, "suite_names", lambda: [SUITE])
    before = Problem.objects.count()
    call_command("sync_suites")
    call_command("sync_suites")
    assert Problem.objects.count() == before
    from farm.suite.loader import load_suite

    assert Suite.objects.get(name=SUITE).hash == load_suite(SUITE).hash
    matmul = Problem.objects.get(suite_id=SUITE, name="matmul")
    assert matmul.sol_table["nvidia-h100"][0]["bound"] == "compute"


def test_problems_api_has_the_sol_table(clients, db):
    problems = {
        p["name"]: p for p in clients["anonymous"].get(f"/api/problems/?suite={SUITE}").json()
    }
    row = problems["vector_add"]["sol"]["nvidia-h100"][0]
    assert row["workload"] == "big" and row["bound"] == "memory" and row["time_ms"] > 0
    hw = {h["name"]: h for h in clients["anonymous"].get("/api/hardware/").json()}
    assert "cuda" in hw["nvidia-h100"]["languages"] and "cuda" not in hw[HW]["languages"]
