"""Triton kernels from recorded source, checked to be Triton language only (trusted side).

The replay compiles a kernel from the source text the trace carries, never from the
submission's module. `check_source` accepts a function whose body is made of Triton language
(`tl.*`), arithmetic, comparisons, `if`/`for`/`while` and calls of the kernel's own
@triton.jit helpers, so compiling and running it cannot reach the host: no imports, no names
other than its parameters, its locals, `tl`, `triton.cdiv`, its helpers and a few pure builtins
(range, min, max, abs, int, float, bool, len), no attributes that start with "_", no
attributes on literals (str.format reaches attributes), no lambdas, comprehensions, nested
functions, `with`, `try`, `global`. Decorators are dropped: the replay applies `triton.jit`
itself. Default values must be literals, annotations `tl.constexpr`/`tl.tensor`-like names.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

from farm.hardware.npu_sim.trace import Kernel

SAFE_BUILTINS = frozenset({"range", "min", "max", "abs", "int", "float", "bool", "len"})

_STATEMENTS = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.For,
    ast.While,
    ast.If,
    ast.Return,
    ast.Expr,
    ast.Pass,
    ast.Break,
    ast.Continue,
    ast.Assert,
)
_EXPRESSIONS = (
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.Call,
    ast.Attribute,
    ast.Name,
    ast.Constant,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.IfExp,
    ast.keyword,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.expr_context,
    ast.arguments,
    ast.arg,
)


class KernelRejected(Exception):
    """A recorded kernel is not Triton language only (the message names what and where)."""


def _fail(name: str, node: ast.AST | None, why: str) -> KernelRejected:
    line = getattr(node, "lineno", None)
    where = f" (line {line} of its source)" if line else ""
    return KernelRejected(
        f"Triton kernel {name}: {why}{where}; npu-sim replays Triton-language "
        "kernels only (tl.* ops, arithmetic, control flow, @triton.jit helpers)"
    )


def function_of(name: str, source: str) -> ast.FunctionDef:
    """The one function definition of `source`, decorators removed."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise _fail(name, None, f"source does not parse ({exc.msg})") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise _fail(name, None, "the source must be exactly one function definition")
    fn = tree.body[0]
    if fn.name != name:
        raise _fail(name, fn, f"the source defines {fn.name!r}, not {name!r}")
    fn.decorator_list = []
    fn.returns = None
    return fn


def check_source(kernel: Kernel) -> None:
    """Raise KernelRejected unless the kernel and its helpers are Triton language only."""
    helpers = {n for n, _ in kernel.helpers}
    for name, source in [(kernel.name, kernel.source), *kernel.helpers]:
        _check_function(name, function_of(name, source), helpers)


def _check_function(name: str, fn: ast.FunctionDef, helpers: set[str]) -> None:
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        raise _fail(name, fn, "*args, **kwargs and positional-only parameters are not allowed")
    params = {a.arg for a in args.args + args.kwonlyargs}
    for d in [*args.defaults, *args.kw_defaults]:
        if d is not None and not _literal(d):
            raise _fail(name, d, "parameter defaults must be literals")
    for a in args.args + args.kwonlyargs:
        if a.annotation is not None and not _tl_chain(a.annotation):
            raise _fail(name, a, "parameter annotations must be tl.* names (tl.constexpr)")
    local = set(params)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
    known = local | helpers | SAFE_BUILTINS | {"tl", "triton"}
    for stmt in fn.body:
        _check_node(name, stmt, known, local)


def _check_node(name: str, node: ast.AST, known: set[str], local: set[str]) -> None:
    cdiv_bases = {
        id(n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and n.attr == "cdiv" and isinstance(n.value, ast.Name)
    }
    nodes = list(ast.walk(node))  # outer before inner
    for child in nodes:
        if isinstance(child, ast.stmt) and not isinstance(child, _STATEMENTS):
            raise _fail(name, child, f"statement {type(child).__name__} is not allowed")
        if isinstance(child, ast.expr) and not isinstance(child, _EXPRESSIONS):
            raise _fail(name, child, f"expression {type(child).__name__} is not allowed")
        if isinstance(child, ast.Name) and child.id not in known:
            raise _fail(name, child, f"name {child.id!r} is not a parameter, local, tl or helper")
        if isinstance(child, ast.Name) and child.id == "triton" and id(child) not in cdiv_bases:
            raise _fail(name, child, "only triton.cdiv is allowed from the triton module")
        if isinstance(child, ast.Constant) and not _literal(child):
            raise _fail(name, child, "only numbers, strings, booleans and None are literals")
    for child in reversed(nodes):  # inner attributes first: `x.handle` before `.data`
        if isinstance(child, ast.Attribute):
            _check_attribute(name, child, known)


@functools.cache
def _value_attributes() -> frozenset[str]:
    """Attributes a kernel may take of its values: the public API of Triton's tensor, dtype
    and constexpr classes, less `handle` (the interpreter's numpy array: a way to the host)."""
    import triton.language as tl

    types = (tl.float32, tl.pointer_type(tl.float32), tl.block_type(tl.float32, [2]))
    examples = (tl.tensor, tl.constexpr(1), *types)  # instances: their fields too
    names = {n for obj in examples for n in dir(obj) if not n.startswith("_")}
    names |= {"dtype", "shape", "numel", "type"}  # fields a tl.tensor sets in __init__
    return frozenset(n for n in names if n != "handle" and not n.endswith("_ir"))


def _check_attribute(name: str, node: ast.Attribute, known: set[str]) -> None:
    if node.attr.startswith("_"):
        raise _fail(name, node, f"attribute {node.attr!r} is not allowed")
    base = node.value
    if isinstance(base, ast.Constant):
        raise _fail(name, node, "attributes of literals are not allowed")
    if isinstance(base, ast.Name) and base.id == "triton":
        if node.attr != "cdiv":
            raise _fail(name, node, "only triton.cdiv is allowed from the triton module")
        return
    if isinstance(base, ast.Name) and base.id not in known:
        return  # the name itself is refused
    if not _tl_chain(node) and node.attr not in _value_attributes():
        raise _fail(name, node, f"attribute {node.attr!r} is not part of Triton's tensor API")


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (bool, int, float, str))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _literal(node.operand)
    return False


def _tl_chain(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return not node.attr.startswith("_") and _tl_chain(node.value)
    return isinstance(node, ast.Name) and node.id == "tl"


# -- compiling ------------------------------------------------------------------------------

_MODULE_HEAD = "import triton\nimport triton.language as tl\n\n\n"
_DIR = tempfile.mkdtemp(prefix="npu-sim-kernels-")


def compile_kernel(kernel: Kernel) -> Any:
    """The checked kernel as an interpreted @triton.jit function (TRITON_INTERPRET=1 must be
    set before triton is imported). Raises KernelRejected."""
    check_source(kernel)
    parts = [_MODULE_HEAD]
    for name, source in [*kernel.helpers, (kernel.name, kernel.source)]:
        fn = _LoopsToHook().visit(function_of(name, source))
        parts.append("@triton.jit\n" + ast.unparse(fn) + "\n\n\n")
    text = "".join(parts)
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    path = Path(_DIR) / f"k_{digest}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"npu_sim_kernel_{digest}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    module.__dict__["__builtins__"] = _builtins()
    module.__dict__[LOOP_HOOK] = loop_range
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, kernel.name)


LOOP_HOOK = "npu_sim_range"  # not a name a checked source can use (check_source refuses it)


class _LoopsToHook(ast.NodeTransformer):
    """`for i in range(...)` / `tl.range(...)` -> `for i in npu_sim_range(...)`, so the
    replay can count long uniform loops from a few iterations (replay.loop_range)."""

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and not it.keywords
            and (
                (isinstance(it.func, ast.Name) and it.func.id == "range")
                or (
                    _tl_chain(it.func)
                    and isinstance(it.func, ast.Attribute)
                    and it.func.attr == "range"
                )
            )
        ):
            node.iter = ast.Call(ast.Name(LOOP_HOOK, ast.Load()), it.args, [])
        return node


def loop_range(*args: Any) -> Any:
    from farm.hardware.npu_sim.sampling import loop_iterations

    return loop_iterations(range(*args))


def _builtins() -> dict[str, Any]:
    import builtins

    # __import__ and __build_class__ so the module's own two imports and decorators run.
    keep = SAFE_BUILTINS | {"__import__", "__build_class__", "isinstance", "getattr", "hasattr"}
    return {k: getattr(builtins, k) for k in keep}
