"""farm.config: the typed environment readers every process uses, and the farm's home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from farm.config import (
    NODE_VARIABLES,
    Env,
    EnvError,
    NodeSettings,
    child_env,
    farm_home,
    node_settings,
    node_settings_forget,
    node_settings_load,
)


class Refused(Exception):
    pass


def test_values_are_typed_and_blank_means_the_default(tmp_path):
    env = Env(environ={"N": " 12 ", "X": "0.5", "B": "yes", "L": "a, ,b", "E": "  "})
    assert env.integer("N", 1, minimum=0) == 12
    assert env.number("X", 1.0) == 0.5
    assert env.flag("B", False) is True
    assert env.items("L", []) == ["a", "b"]
    assert env.text("E", "default") == "default"
    assert env.integer("E", 7) == 7
    assert env.choice("MISSING", "Auto", ("auto", "off")) == "auto"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda env: env.integer("N", 1), "N='1.5': must be an integer"),
        (lambda env: env.integer("M", 1, minimum=0), "M='-1': must be >= 0"),
        (lambda env: env.number("W", 1.0), "W='many': must be a number"),
        (lambda env: env.flag("W", True), "W='many': must be one of"),
        (lambda env: env.choice("W", "a", ("a", "b")), "W='many': must be one of a, b"),
    ],
)
def test_a_bad_value_raises_the_callers_error_naming_the_variable(call, message):
    env = Env(Refused, environ={"N": "1.5", "M": "-1", "W": "many"})
    with pytest.raises(Refused, match=message):
        call(env)


def test_secrets_come_from_the_variable_or_its_file_never_both(tmp_path):
    secret = tmp_path / "token"
    secret.write_text("from-file\n")
    assert Env(environ={"T_FILE": str(secret)}).secret("T") == "from-file"
    assert Env(environ={"T": "inline"}).secret("T") == "inline"
    assert Env(environ={}).secret("T", "fallback") == "fallback"
    with pytest.raises(EnvError, match="T and T_FILE are both set"):
        Env(environ={"T": "inline", "T_FILE": str(secret)}).secret("T")
    with pytest.raises(EnvError, match="T_FILE='/nonexistent/t': cannot read it"):
        Env(environ={"T_FILE": "/nonexistent/t"}).secret("T")


def test_one_farm_home(monkeypatch, tmp_path):
    monkeypatch.delenv("FARM_HOME", raising=False)
    assert farm_home() == Path.home() / ".local" / "share" / "farm"
    monkeypatch.setenv("FARM_HOME", str(tmp_path))
    assert farm_home() == tmp_path
    from agents.config import default_home
    from farm.suite.loader import user_suite_dir

    assert default_home() == tmp_path.resolve() and user_suite_dir() == tmp_path / "suites"


def test_node_settings_are_typed_from_the_environment(tmp_path):
    env = {
        "FARM_SANDBOX": "BWRAP",
        "FARM_ALLOW_UNSANDBOXED": "1",
        "FARM_SANDBOX_IMAGE_CUDA": "registry.local/sandbox:cuda-7",
        "FARM_SANDBOX_IMAGE_ROCM": " ",
        "LD_LIBRARY_PATH": "/opt/a::/opt/b",
        "FARM_SUITES_PATH": f"{tmp_path}/one:{tmp_path}/two",
        "FARM_VAR_DIR": str(tmp_path),
    }
    settings = NodeSettings.from_env(env)
    assert settings.sandbox == "bwrap" and settings.allow_unsandboxed is True
    assert settings.sandbox_images == {"cuda": "registry.local/sandbox:cuda-7"}
    assert settings.library_path == (Path("/opt/a"), Path("/opt/b"))
    assert settings.suites_path == (tmp_path / "one", tmp_path / "two")
    assert settings.var_dir == tmp_path.resolve()
    assert NodeSettings.from_env({}) == NodeSettings()


def test_only_a_deliberate_one_allows_running_unsandboxed():
    for value in ("true", "yes", "0", ""):
        assert NodeSettings.from_env({"FARM_ALLOW_UNSANDBOXED": value}).allow_unsandboxed is False


def test_a_bad_node_setting_is_named():
    with pytest.raises(EnvError, match="FARM_SANDBOX='chroot': must be one of auto, docker"):
        NodeSettings.from_env({"FARM_SANDBOX": "chroot"})


def test_node_settings_are_read_once_and_again_when_their_variables_change(monkeypatch):
    monkeypatch.setenv("FARM_SANDBOX_USER", "first")
    first = node_settings()
    assert first.sandbox_user == "first" and node_settings() is first  # kept, not re-read
    monkeypatch.setenv("FARM_UNRELATED_VARIABLE", "x")
    assert node_settings() is first
    monkeypatch.setenv("FARM_SANDBOX_USER", "second")  # never a stale object
    assert node_settings().sandbox_user == "second"
    monkeypatch.setenv("FARM_SANDBOX_IMAGE_CPU", "img:1")
    assert node_settings().sandbox_images == {"cpu": "img:1"}
    node_settings_forget()
    assert node_settings_load() == node_settings()


def test_every_node_setting_has_its_variable_in_the_key():
    # a field read from a variable missing in NODE_VARIABLES could be served stale
    assert len(set(NODE_VARIABLES)) == len(NODE_VARIABLES)
    fields = NodeSettings.__dataclass_fields__
    assert len(fields) == len(NODE_VARIABLES) + 1  # + sandbox_images, read by its prefix


def test_a_child_starts_from_this_environment_with_overrides(monkeypatch):
    monkeypatch.setenv("FARM_TEST_INHERITED", "kept")
    env = child_env({"FARM_TEST_INHERITED": "replaced", "FARM_TEST_NEW": "1"})
    assert env["FARM_TEST_INHERITED"] == "replaced" and env["FARM_TEST_NEW"] == "1"
    assert env["PATH"] == os.environ["PATH"]
