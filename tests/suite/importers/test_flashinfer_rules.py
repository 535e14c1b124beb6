"""flashinfer-bench's tolerance rules are resolved from each definition (its op_type, then its
name), as flashinfer-bench resolves them, never from a name pattern alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from farm.suite.importers import flashinfer, flashinfer_rules


def _definition(name: str, op_type: str) -> dict:
    return {
        "name": name,
        "op_type": op_type,
        "axes": {"tokens": {"type": "var"}, "hidden": {"type": "const", "value": 64}},
        "inputs": {"x": {"shape": ["tokens", "hidden"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["tokens", "hidden"], "dtype": "float32"}},
        "reference": "def run(x):\n    return x * 2.0\n",
    }


def test_every_moe_definition_needs_95_percent_whatever_its_name():
    rule = flashinfer_rules.eval_rule(_definition("fused_experts_topk8", "moe"))
    assert rule == flashinfer_rules.EvalRule(atol=1e-2, rtol=1e-2, matched_ratio=0.95)


def test_other_op_types_need_every_element():
    assert flashinfer_rules.eval_rule(_definition("gemm_n64", "gemm")).matched_ratio == 1.0
    # the older schema's `type` is the op_type too
    old = {**_definition("experts", "x"), "op_type": None, "type": "moe"}
    assert flashinfer_rules.eval_rule(old).matched_ratio == 0.95


def test_the_low_bit_evaluator_is_chosen_by_name_as_in_flashinfer_bench():
    rule = flashinfer_rules.eval_rule(_definition("moe_fp8_block_scale_ds", "gemm"))
    assert rule.matched_ratio == 0.95


def test_config_layers_merge_op_type_then_name():
    config = {
        "op_type_config": {"moe": {"required_matched_ratio": 0.9, "rtol": 0.1}},
        "definition_config": {"experts_a": {"required_matched_ratio": 0.99}},
    }
    a = flashinfer_rules.eval_rule(_definition("experts_a", "moe"), config)
    b = flashinfer_rules.eval_rule(_definition("experts_b", "moe"), config)
    assert (a.matched_ratio, a.rtol, a.atol) == (0.99, 0.1, 1e-2)
    assert (b.matched_ratio, b.rtol) == (0.9, 0.1)


def _reference(tmp_path: Path, definition: dict):
    draft, _ = flashinfer.problem_draft(
        definition, [{"uuid": "1", "axes": {"tokens": 32}, "inputs": {"x": {"type": "random"}}}]
    )
    (tmp_path / "definition.json").write_text(draft.files["definition.json"])
    (tmp_path / "reference.py").write_text(draft.reference)
    spec = importlib.util.spec_from_file_location("fi_rules_ref", tmp_path / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return draft, module


def test_an_imported_moe_problem_accepts_a_few_percent_of_elements_off(tmp_path):
    draft, ref = _reference(tmp_path, _definition("fused_experts_topk8", "moe"))
    assert "matched ratio >= 0.95" in draft.extra["checker"]
    x = torch.randn(32, 64)
    out = x * 2.0
    out.view(-1)[: out.numel() * 3 // 100] += 1.0  # 3 % of the elements wrong
    assert ref.check((x,), (out,)) == []
    out.view(-1)[: out.numel() * 6 // 100] += 1.0  # 6 %
    assert ref.check((x,), (out,))
