from __future__ import annotations

import json
import stat

import pytest

from farm.client.config import config_load, config_path, config_read, config_write
from farm.errors import FarmError


def test_written_with_mode_0600(tmp_path):
    path = config_write(url="http://farm.example/", token="fu_secret")
    assert path == config_path() and path.parent == tmp_path / "farm-home"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"url": "http://farm.example", "token": "fu_secret"}


def test_a_file_others_can_read_is_refused():
    path = config_write(url="http://x", token="t")
    path.chmod(0o644)
    with pytest.raises(FarmError, match="readable by other users"):
        config_read()


def test_env_wins_over_the_file(monkeypatch):
    config_write(url="http://from-file", token="file-token")
    assert config_load().token == "file-token"
    monkeypatch.setenv("FARM_TOKEN", "env-token")
    cfg = config_load()
    assert (cfg.url, cfg.token) == ("http://from-file", "env-token")
    monkeypatch.setenv("FARM_URL", "http://from-env/")
    assert config_load().url == "http://from-env" and config_load().source == "env"


def test_default_without_anything():
    cfg = config_load()
    assert cfg.token is None and cfg.url == "http://127.0.0.1:8000" and cfg.source == "default"


def test_xdg_location_without_farm_home(monkeypatch, tmp_path):
    monkeypatch.delenv("FARM_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_path() == tmp_path / "xdg" / "farm" / "config.json"


def test_profiles_keep_the_main_config_and_local_is_the_fallback(monkeypatch):
    local = config_write(url="http://127.0.0.1:8000", token="fu_local", profile="local")
    assert local == config_path("local") and local.parent.name == "profiles"
    assert config_load().token == "fu_local"  # no config.json: the local farm's profile
    config_write(url="https://farm.example", token="fu_real")
    assert config_load().token == "fu_real"  # a real login wins once it exists
    assert config_load(profile="local").token == "fu_local"
    monkeypatch.setenv("FARM_PROFILE", "local")
    assert config_load().url == "http://127.0.0.1:8000"
    with pytest.raises(FarmError, match="not a plain word"):
        config_path("../etc")
