"""Starters: the pytorch starter of every problem is correct as written; the triton and cuda
starters parse, carry the `#!farm` header and leave the computation marked; `farm init` and
`farm problems show` work on the bundled suite."""

from __future__ import annotations

import ast
import json

import pytest
import torch

from farm.cli import main
from farm.client.commands.common import header_directives
from farm.suite.starters import STARTER_LANGUAGES, starter
from tests.suite.conftest import core_suite, make_inputs, problem_params, run_reference


@pytest.mark.parametrize("problem", problem_params())
def test_pytorch_starter_matches_the_reference(problem) -> None:  # type: ignore[no-untyped-def]
    namespace: dict = {}
    exec(compile(starter(problem, "pytorch"), f"{problem.name}_pytorch.py", "exec"), namespace)
    workload = next(w for w in problem.workloads if w.small)
    expected = run_reference(problem, make_inputs(problem, workload))
    got = namespace["kernel"](*make_inputs(problem, workload))
    got = tuple(got) if isinstance(got, tuple | list) else (got,)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_every_starter_parses_with_its_header() -> None:
    for problem in core_suite().problems.values():
        for lang in STARTER_LANGUAGES:
            if lang not in problem.languages:
                continue
            text = starter(problem, lang)
            ast.parse(text)
            assert header_directives(text)["problem"] == problem.name
            assert ("TODO" in text) == (lang != "pytorch"), (problem.name, lang)


def test_init_writes_once_and_names_mistakes(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    assert main(["init", "softmax", "--lang", "triton"]) == 0
    written = (tmp_path / "softmax_triton.py").read_text()
    assert "@triton.jit" in written and "def kernel(x):" in written
    assert main(["init", "softmax", "--lang", "triton"]) == 2  # never overwritten silently
    assert (tmp_path / "softmax_triton.py").read_text() == written
    assert main(["init", "softmx"]) == 2
    assert "did you mean 'softmax'?" in capsys.readouterr().err


def test_problems_show_gives_workloads_tolerance_and_starters(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["problems", "show", "softmax", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["signature"].startswith("softmax(x)")
    assert shown["tolerance"]["float32"] == {"atol": 1e-7, "rtol": 1e-5}
    assert {"llama3-8b-logits-4k", "small"} <= {w["id"] for w in shown["workloads"]}
    assert shown["starters"] == ["pytorch", "triton", "cuda"]
    assert main(["problems", "show", "softmax"]) == 0
    assert "llama3-8b-logits-4k" in capsys.readouterr().out
    assert main(["problems", "show"]) == 2
