"""Safe evaluation of the FLOP and byte formulas written in problem files.

A formula is a Python expression over the workload's axes (`M`, `N`, ...), `E` (the element
size in bytes of the workload dtype) and a few functions. It is parsed with `ast` and only
arithmetic is allowed: a problem file can never run code through a formula.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
}


class FormulaError(ValueError):
    """The formula is not plain arithmetic over known names."""


def names_in(expr: str) -> set[str]:
    """Return the variable names an expression uses (functions excluded)."""
    tree = _parse(expr)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in _FUNCS}


def evaluate(expr: str | int | float, variables: Mapping[str, float]) -> float:
    """Evaluate `expr` with `variables`; raise FormulaError on anything but arithmetic."""
    if isinstance(expr, int | float):
        return float(expr)
    return float(_eval(_parse(expr).body, variables))


def _parse(expr: str) -> ast.Expression:
    try:
        return ast.parse(str(expr), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"not an expression: {expr!r} ({exc.msg})") from None


def _eval(node: ast.AST, env: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise FormulaError(f"unknown name '{node.id}'")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
        if node.keywords:
            raise FormulaError("keyword arguments are not allowed in formulas")
        return _FUNCS[node.func.id](*(_eval(a, env) for a in node.args))
    raise FormulaError(f"only arithmetic is allowed, found {type(node).__name__}")
