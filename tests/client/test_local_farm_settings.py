"""What `farm up` gives the processes it starts: a quota that lets a local RL loop run, unless
the environment sets one."""

from __future__ import annotations

from farm.up import LOCAL_QUOTA_RUNS_PER_HOUR, LocalFarm


def test_the_local_farm_quota_suits_a_local_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("FARM_VAR_DIR", str(tmp_path))
    served = {"npu-sim": "npu-sim-v1"}
    monkeypatch.setattr("farm.up_setup.agent_kinds", lambda: served)  # no probing
    monkeypatch.delenv("FARM_QUOTA_RUNS_PER_HOUR", raising=False)
    farm = LocalFarm(port=8999, sandbox="process", web_workers=1)
    assert int(farm.env["FARM_QUOTA_RUNS_PER_HOUR"]) == LOCAL_QUOTA_RUNS_PER_HOUR >= 10_000
    monkeypatch.setenv("FARM_QUOTA_RUNS_PER_HOUR", "30")
    assert (
        LocalFarm(port=8999, sandbox="process", web_workers=1).env["FARM_QUOTA_RUNS_PER_HOUR"]
        == "30"
    )
