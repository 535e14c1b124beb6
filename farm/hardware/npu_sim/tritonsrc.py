"""Triton kernels from recorded source, checked to be Triton language only (trusted side).

The replay compiles a kernel from the source text the trace carries, never from the
submission's module. `check_source` accepts a function whose body is made of Triton language,
arithmetic, comparisons, `if`/`for`/`while` and calls of the kernel's own @triton.jit helpers.
Names are checked by what they *are*, not by how they are spelled: every `tl.…` and
`triton.…` chain is resolved by walking the real module objects, and must end on one of the
functions, classes, dtypes or constants that `triton.language` (or `triton.language.math`)
defines, passing only through those two modules on the way. So `tl.core.inspect`,
`tl.core.builtins.exec` or `tl.math.wraps` are refused: they resolve to a module or to an
object that is not Triton language. Other names: parameters, locals, the kernel's helpers, its
recorded module-level constexprs and a few pure builtins (range, min, max, abs, int, float,
bool, len). Attributes of values: no "_" prefix, none on literals (str.format reaches
attributes), only the public API of Triton's tensor, dtype and constexpr classes. No lambdas,
comprehensions, nested functions, `with`, `try`, `global`, imports. Decorators are dropped:
the replay applies `triton.jit` itself, to a module whose globals are `tl`, a `triton` that
holds only `cdiv`, the helpers, the constants, and those builtins.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import sys
import tempfile
import types
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
    except (MemoryError, RecursionError):  # the parser's own stack, on deeply nested source
        raise _fail(name, None, "source nests too deeply to parse") from None
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
    constants = {n for n, _ in kernel.constants}
    reserved = SAFE_BUILTINS | ROOTS | _INTERPRETER_NAMES | {LOOP_HOOK}
    clash = (helpers & constants) | ((helpers | constants) & reserved)
    if clash:
        raise _fail(kernel.name, None, f"helper or constant names {sorted(clash)} clash")
    for name in constants:
        if not name.isidentifier() or name.startswith("_"):
            raise _fail(kernel.name, None, f"constant name {name!r} is not allowed")
    for name, source in [(kernel.name, kernel.source), *kernel.helpers]:
        _check_function(name, function_of(name, source), helpers | constants)


ROOTS = frozenset({"tl", "triton"})


def _check_function(name: str, fn: ast.FunctionDef, globals_: set[str]) -> None:
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        raise _fail(name, fn, "*args, **kwargs and positional-only parameters are not allowed")
    params = {a.arg for a in args.args + args.kwonlyargs}
    for d in [*args.defaults, *args.kw_defaults]:
        if d is not None and not _literal(d):
            raise _fail(name, d, "parameter defaults must be literals")
    for a in args.args + args.kwonlyargs:
        if a.annotation is not None:
            _check_annotation(name, a)
    local = set(params)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
    if local & ROOTS:
        raise _fail(name, fn, "the names tl and triton cannot be parameters or locals")
    known = local | globals_ | SAFE_BUILTINS
    for stmt in fn.body:
        _check_node(name, stmt, known)


def _check_annotation(name: str, a: ast.arg) -> None:
    ann = a.annotation
    chain = _chain(ann) if ann is not None else None
    if chain is None or chain[0] != "tl":
        raise _fail(name, a, "parameter annotations must be tl.* names (tl.constexpr)")
    _resolve(name, ann, chain)  # type: ignore[arg-type]


def _check_node(name: str, node: ast.AST, known: set[str]) -> None:
    nodes = list(ast.walk(node))  # outer before inner
    heads = set()  # Name nodes at the root of a tl/triton chain that resolved
    for child in nodes:
        if isinstance(child, ast.stmt) and not isinstance(child, _STATEMENTS):
            raise _fail(name, child, f"statement {type(child).__name__} is not allowed")
        if isinstance(child, ast.expr) and not isinstance(child, _EXPRESSIONS):
            raise _fail(name, child, f"expression {type(child).__name__} is not allowed")
        if isinstance(child, ast.Constant) and not _literal(child):
            raise _fail(name, child, "only numbers, strings, booleans and None are literals")
        if isinstance(child, ast.Attribute) and id(child) not in heads:
            heads |= _check_chain(name, child, known)
    for child in nodes:
        if isinstance(child, ast.Name) and id(child) not in heads:
            if child.id in ROOTS:
                raise _fail(name, child, f"{child.id} is a module: use tl.<function> only")
            if child.id not in known:
                raise _fail(
                    name, child, f"name {child.id!r} is not a parameter, local, tl or helper"
                )


def _check_chain(name: str, node: ast.Attribute, known: set[str]) -> set[int]:
    """Check the attribute chain whose outermost node is `node`; the ids of the nodes it
    covered (inner attributes and a resolved tl/triton root), so they are not checked again."""
    parts: list[ast.Attribute] = []
    base: ast.expr = node
    while isinstance(base, ast.Attribute):
        parts.append(base)
        base = base.value
    parts.reverse()  # innermost first
    for part in parts:
        if part.attr.startswith("_"):
            raise _fail(name, part, f"attribute {part.attr!r} is not allowed")
    if isinstance(base, ast.Constant):
        raise _fail(name, node, "attributes of literals are not allowed")
    covered = {id(p) for p in parts}
    if isinstance(base, ast.Name) and base.id not in ROOTS and base.id not in known:
        return covered  # the name itself is refused
    rest = parts
    if isinstance(base, ast.Name) and base.id in ROOTS:
        used = _resolve_parts(name, base.id, parts)
        covered.add(id(base))
        rest = parts[used:]
    for part in rest:
        if part.attr not in _value_attributes():
            raise _fail(name, part, f"attribute {part.attr!r} is not part of Triton's tensor API")
    return covered


def _chain(node: ast.expr) -> list[str] | None:
    """['tl', 'math', 'exp'] for `tl.math.exp`; None unless names all the way down."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(names)]


def _resolve(name: str, node: ast.Attribute, chain: list[str]) -> None:
    parts: list[ast.Attribute] = []
    base: ast.expr = node
    while isinstance(base, ast.Attribute):
        parts.append(base)
        base = base.value
    used = _resolve_parts(name, chain[0], list(reversed(parts)))
    if used != len(parts):
        raise _fail(name, node, "annotations must name a tl object, not its attributes")


def _resolve_parts(name: str, root: str, parts: list[ast.Attribute]) -> int:
    """Walk `root.parts…` through the real module objects. Returns how many parts it took to
    reach an allowed object (the rest are attributes of that value). Raises KernelRejected
    when the chain ends on a module, passes through a module other than the allowed ones, or
    reaches an object that triton.language does not define."""
    obj: Any = _roots()[root]
    shown = root
    for i, part in enumerate(parts):
        shown += "." + part.attr
        if not isinstance(obj, (types.ModuleType, types.SimpleNamespace)):
            return i
        if isinstance(obj, types.ModuleType) and obj not in _allowed_modules():
            raise _fail(name, part, f"{shown} passes through module {obj.__name__}")
        names = _namespace(obj) if isinstance(obj, types.ModuleType) else vars(obj)
        if part.attr not in names:
            raise _fail(name, part, f"{shown} is not defined by {_label(obj)}")
        obj = names[part.attr]
        if isinstance(obj, types.ModuleType):
            if obj in _allowed_modules():
                continue
            raise _fail(name, part, f"{shown} is the module {obj.__name__}, not Triton language")
        if not any(obj is allowed for allowed in _allowed_objects()):
            raise _fail(
                name, part, f"{shown} is {_describe(obj)}, not a function, class or dtype of tl"
            )
    if isinstance(obj, (types.ModuleType, types.SimpleNamespace)):
        raise _fail(name, parts[-1] if parts else None, f"{shown} is a module, not a value")
    return len(parts)


def _label(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return "a kernel's triton (only triton.cdiv is allowed from the triton module)"


def _describe(obj: Any) -> str:
    kind = type(obj).__name__
    where = getattr(obj, "__module__", None)
    return f"a {kind} from {where}" if isinstance(where, str) else f"a {kind}"


@functools.cache
def _roots() -> dict[str, Any]:
    """What a kernel's `tl` and `triton` are: the language module, and a namespace that holds
    only triton.cdiv (the replay compiles kernels with exactly these globals)."""
    import triton
    import triton.language as tl

    return {"tl": tl, "triton": types.SimpleNamespace(cdiv=triton.cdiv)}


@functools.cache
def _allowed_modules() -> tuple[types.ModuleType, ...]:
    import triton.language as tl

    return (tl, tl.math)


@functools.cache
def _namespace(module: types.ModuleType) -> dict[str, Any]:
    """An allowed module's names as this process first saw them. Triton's interpreter swaps
    tl's builtins for wrappers while a kernel runs and puts them back after (and a device
    function's call may leave them swapped): names are resolved against one copy, so that
    a kernel is judged the same whichever state the interpreter left the module in."""
    return dict(vars(module))


@functools.cache
def _allowed_objects() -> tuple[Any, ...]:
    """The objects a kernel may name: what triton.language and triton.language.math define
    (functions, JIT functions, classes, dtypes, int constants), never a module and never what
    they merely import (functools.wraps, typing.List, ...); and triton.cdiv."""
    import triton
    import triton.language as tl

    out: list[Any] = [triton.cdiv]
    for module in _allowed_modules():
        for key, obj in _namespace(module).items():
            if key.startswith("_") or isinstance(obj, types.ModuleType):
                continue
            value = isinstance(obj, (tl.dtype, int, float)) and not isinstance(obj, bool)
            if value or _defined_in(obj).startswith("triton.language"):
                out.append(obj)
    return tuple(out)


def _defined_in(obj: Any) -> str:
    """The module that defines `obj` (for a @triton.jit function, its Python function's)."""
    inner = getattr(obj, "fn", None)
    if inspect.isfunction(inner):
        return str(inner.__module__)
    return str(getattr(obj, "__module__", ""))


@functools.cache
def _value_attributes() -> frozenset[str]:
    """Attributes a kernel may take of its values: the public API of Triton's tensor, dtype
    and constexpr classes, less `handle` (the interpreter's numpy array: a way to the host)."""
    import triton.language as tl

    types_ = (tl.float32, tl.pointer_type(tl.float32), tl.block_type(tl.float32, [2]))
    examples = (tl.tensor, tl.constexpr(1), *types_)  # instances: their fields too
    names = {n for obj in examples for n in dir(obj) if not n.startswith("_")}
    names |= {"dtype", "shape", "numel", "type"}  # fields a tl.tensor sets in __init__
    return frozenset(n for n in names if n != "handle" and not n.endswith("_ir"))


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

_DIR = tempfile.mkdtemp(prefix="npu-sim-kernels-")
# What Triton's interpreter needs in a kernel's globals besides the kernel's own names (its
# rewriter calls these in the rewritten body); every other name of the interpreter's module,
# which it would copy into the kernel's globals, is shadowed with None.
_INTERPRETER_NAMES = frozenset({"interpreter_semantic", "_InterpreterComparison"})


def compile_kernel(kernel: Kernel) -> Any:
    """The checked kernel as an interpreted @triton.jit function (TRITON_INTERPRET=1 must be
    set before triton is imported). Raises KernelRejected."""
    import triton

    check_source(kernel)
    parts = []
    for name, source in [*kernel.helpers, (kernel.name, kernel.source)]:
        fn = _LoopsToHook().visit(function_of(name, source))
        parts.append(ast.unparse(fn) + "\n\n\n")
    text = "".join(parts)
    digest = hashlib.sha256(text.encode() + repr(kernel.constants).encode()).hexdigest()[:24]
    path = Path(_DIR) / f"k_{digest}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"npu_sim_kernel_{digest}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(_kernel_globals(kernel))
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for name, _ in [*kernel.helpers, (kernel.name, kernel.source)]:
        setattr(module, name, triton.jit(getattr(module, name)))
    return getattr(module, kernel.name)


def _kernel_globals(kernel: Kernel) -> dict[str, Any]:
    """A compiled kernel's whole global namespace before its functions are defined."""
    import triton.language as tl
    from triton.runtime import interpreter as interp

    out: dict[str, Any] = {k: None for k in vars(interp) if not k.startswith("__")}
    out.update({k: vars(interp)[k] for k in _INTERPRETER_NAMES})
    out.update(_roots())
    out["__builtins__"] = _builtins()
    out[LOOP_HOOK] = loop_range
    for name, value in kernel.constants:
        out[name] = tl.constexpr(_constant_value(value))
    return out


def _constant_value(value: Any) -> Any:
    import triton.language as tl

    from farm.hardware.npu_sim.trace import DType

    if isinstance(value, DType):
        dt = vars(tl).get(value.name.removeprefix("tl."))
        if not value.name.startswith("tl.") or not isinstance(dt, tl.dtype):
            raise KernelRejected(f"constant of unknown Triton dtype {value.name}")
        return dt
    return value


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

    return {k: getattr(builtins, k) for k in SAFE_BUILTINS}
