"""What flashinfer-bench judges by, as an imported definition keeps it: the definition's
`constraints`, its tolerance (`compute_error_stats`, flashinfer_bench/bench/utils.py) and the
generated reference.py that draws inputs as `_rand_tensor` draws them and exposes that rule as
the problem's `check`.
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from typing import Any


def elements(specs: list[dict[str, Any]], axes: dict[str, int]) -> int:
    return sum(math.prod(axes[d] if isinstance(d, str) else d for d in s["shape"]) for s in specs)


def size(definition: dict[str, Any], specs: list[dict[str, Any]], axes: dict[str, int]) -> int:
    """Input elements of a scaled copy; ValueError when the copy breaks a constraint (the
    scaling then leaves that axis alone)."""
    broken = broken_constraint(definition, axes)
    if broken:
        raise ValueError(f"breaks {broken}")
    return elements(specs, axes)


def broken_constraint(definition: dict[str, Any], axes: dict[str, int]) -> str | None:
    """The first of the definition's `constraints` (Python expressions over the axes) that these
    axes break, or None."""
    from farm.suite import formulas

    for text in definition.get("constraints") or []:
        try:
            holds = _constraint_holds(text, axes, formulas)
        except (formulas.FormulaError, ZeroDivisionError, NameError, SyntaxError):
            continue  # a constraint over names that are not axes cannot be checked here
        if not holds:
            return text
    return None


def _constraint_holds(text: str, axes: dict[str, int], formulas: Any) -> bool:
    tree = ast.parse(text, mode="eval").body
    if isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        left = formulas.evaluate(ast.unparse(tree.left), axes)
        right = formulas.evaluate(ast.unparse(tree.comparators[0]), axes)
        return bool(_COMPARE[type(tree.ops[0])](left, right))
    raise SyntaxError(f"not a comparison: {text}")


_COMPARE: dict[type, Any] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
ATOL = 1e-2  # flashinfer-bench's default atol and rtol (flashinfer_bench/bench/config.py)
# flashinfer-bench's bundled flashinfer_bench/bench/eval_config.yaml: overrides of those defaults
# per definition `op_type` and per definition name, merged in that order by
# BenchmarkConfig.resolve_eval_config
EVAL_CONFIG: dict[str, dict[str, dict[str, float]]] = {
    "op_type_config": {"moe": {"required_matched_ratio": 0.95}},
    "definition_config": {},
}
# evaluators/lowbit.py: LowBitEvaluator judges the definitions whose name holds this, and asks
# for this ratio when no config layer sets one
LOWBIT_NAME, LOWBIT_RATIO = "moe_fp8_block_scale", 0.95


@dataclass(frozen=True)
class EvalRule:
    """How flashinfer-bench's compute_error_stats judges a definition's outputs: an element
    fails when |out - ref| > atol AND |out - ref| / |ref| > rtol; an output fails when fewer
    than `matched_ratio` of its elements pass."""

    atol: float
    rtol: float
    matched_ratio: float

    def tolerance(self) -> dict[str, dict[str, float]]:
        """problem.yaml's tolerance, per float dtype."""
        return {
            d: {"atol": self.atol, "rtol": self.rtol} for d in ("float32", "float16", "bfloat16")
        }


def op_type(definition: dict[str, Any]) -> str:
    """The definition's `op_type` (`type` in the older schema)."""
    return str(definition.get("op_type") or definition.get("type"))


def eval_rule(definition: dict[str, Any], config: dict[str, Any] | None = None) -> EvalRule:
    """The definition's rule as flashinfer-bench resolves it: the defaults, then the config's
    layer for its op_type, then the one for its name; a low-bit MoE definition left without a
    ratio gets LowBitEvaluator's; otherwise every element must pass."""
    config = EVAL_CONFIG if config is None else config
    merged: dict[str, float | None] = {"atol": ATOL, "rtol": ATOL, "required_matched_ratio": None}
    layers = (
        config.get("op_type_config", {}).get(op_type(definition)),
        config.get("definition_config", {}).get(definition["name"]),
    )
    for layer in layers:
        merged |= {k: v for k, v in (layer or {}).items() if k in merged and v is not None}
    ratio = merged["required_matched_ratio"]
    if ratio is None and LOWBIT_NAME in definition["name"]:
        ratio = LOWBIT_RATIO
    return EvalRule(
        float(merged["atol"] or ATOL), float(merged["rtol"] or ATOL), float(ratio or 1.0)
    )


TEMPLATE = '''"""Imported from flashinfer-trace definition {name} (verbatim in definition.json)."""

import json
import pathlib

import torch

INPUTS = {inputs!r}  # (name, shape, dtype)
OUTPUTS = {outputs!r}
SCALARS = {scalars!r}
ATOL, RTOL = {atol!r}, {rtol!r}  # flashinfer-bench's rule for this definition
MATCHED_RATIO = {ratio!r}
_definition = json.loads(pathlib.Path(__file__).with_name("definition.json").read_text())
_namespace = {{}}
exec(compile(_definition["reference"], "<definition {name}>", "exec"), _namespace)


def reference(*inputs):
    out = _namespace["run"](*inputs)
    if isinstance(out, dict):
        return tuple(out[name] for name in OUTPUTS)
    return out


def make_inputs(axes, dtype, device, generator):
    """Inputs drawn as flashinfer-bench's _rand_tensor draws them, from the harness's generator."""
    made = []
    for name, shape, dt in INPUTS:
        size = [axes[d] if isinstance(d, str) else d for d in shape]
        kind = getattr(torch, dt)
        if name in SCALARS:
            made.append(torch.tensor(SCALARS[name], dtype=kind, device=device))
        elif kind in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            made.append(torch.randn(size, generator=generator, device=device).to(kind))
        elif kind.is_floating_point:  # low-precision floats
            x = torch.randn(size, generator=generator, device=device).clamp_(-2.0, 2.0)
            made.append(x.to(kind))
        elif kind is torch.bool:
            made.append(torch.randint(0, 2, size, generator=generator, device=device).bool())
        else:
            low, high = (-128, 128) if kind in (torch.int8, torch.uint8) else (-1024, 1024)
            if kind is torch.uint8:
                low, high = 0, 256
            x = torch.randint(low, high, size, generator=generator, device=device)
            made.append(x.to(kind))
    return tuple(made)


def check(inputs, outputs):
    """flashinfer-bench's compute_error_stats: an element fails when |out - ref| > atol AND
    |out - ref| / (|ref| + 1e-8) > rtol (in float32); a output fails when fewer than
    MATCHED_RATIO of its elements pass."""
    expected = reference(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    errors = []
    for name, out, ref in zip(OUTPUTS, outputs, expected):
        if tuple(out.shape) != tuple(ref.shape):
            errors.append(f"{{name}}: shape {{list(out.shape)}}, expected {{list(ref.shape)}}")
            continue
        x, y = out.to(torch.float32), ref.to(torch.float32)
        abs_error = (x - y).abs()
        fails = (abs_error > ATOL) & (abs_error / (y.abs() + 1e-8) > RTOL)
        matched = 1.0 - float(fails.sum()) / max(1, fails.numel())
        if matched < MATCHED_RATIO:
            errors.append(
                f"{{name}}: {{int(fails.sum())}} of {{fails.numel()}} elements exceed "
                f"atol={{ATOL:g}} and rtol={{RTOL:g}} (max abs err {{float(abs_error.max()):.3g}})"
            )
    return errors
'''
