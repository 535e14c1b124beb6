"""farm.config: the typed environment readers every process uses, and the farm's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.config import Env, EnvError, farm_home


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
