"""Pass 1 of the static guard: what the names in a submission's source refer to.

`SourceContext` learns import aliases (`import time as t`), entry points (kernel /
custom_kernel / forward), module-level containers, and names that hold tensor identities or
shapes; the rules in farm.guard.static ask it questions ("is this expression a shape?").
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from farm.guard import names as N

# Exact-shape branches: comparisons against integers at least this large (tile sizes and the
# occasional `== 1` edge case stay quiet).
SHAPE_CONSTANT_MIN = 16


class SourceContext:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases: dict[str, str] = {}  # local name -> dotted module path
        self.parents: dict[ast.AST, ast.AST] = {}
        self.module_containers: dict[str, str] = {}  # module-level name -> factory
        self.container_lines: dict[str, int] = {}
        self.entry_functions: set[ast.AST] = set()
        self.identity_names: set[str] = set()
        self.namespace_names: set[str] = set()  # bound to vars(x), globals(), x.__dict__
        self.shape_names: set[str] = set()

    def learn(self) -> None:
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self._collect_aliases()
        self._collect_entry_points()
        self._collect_module_containers()
        self._collect_tainted_names()

    def _collect_aliases(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    local = a.asname or a.name.split(".")[0]
                    self.aliases[local] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                lhs, rhs = node.targets[0], node.value
                if isinstance(lhs, ast.Name) and isinstance(rhs, ast.Name | ast.Attribute):
                    dotted = self.dotted(rhs)
                    if dotted and dotted.split(".")[0] in self.module_roots():
                        self.aliases.setdefault(lhs.id, dotted)

    def module_roots(self) -> set[str]:
        return {v.split(".")[0] for v in self.aliases.values()} | {"__builtins__", "builtins"}

    def _collect_entry_points(self) -> None:
        for node in self.tree.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name in N.ENTRY_POINTS
            ):
                self.entry_functions.add(node)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "forward":
                        self.entry_functions.add(item)

    def _collect_module_containers(self) -> None:
        for node in self.tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                kind = self._container_kind(node.value)
                for t in targets:
                    if kind and isinstance(t, ast.Name):
                        self.module_containers[t.id] = kind
                        self.container_lines[t.id] = node.lineno

    def _container_kind(self, value: ast.expr) -> str | None:
        if isinstance(value, ast.Dict | ast.List | ast.Set):
            return type(value).__name__.lower()
        if isinstance(value, ast.Call):
            name = self.dotted(value.func)
            if name in N.CONTAINER_FACTORIES or name in N.WEAK_CONTAINERS:
                return name
        return None

    def _collect_tainted_names(self) -> None:
        """Names assigned from tensor identity (data_ptr, id, ...) or from shapes."""
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Assign):
                continue
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            if self.has_identity(node.value):
                self.identity_names.update(names)
            if self.is_shape(node.value):
                self.shape_names.update(names)
            if _namespace_expr(node.value, self):
                self.namespace_names.update(names)

    # -- helpers ------------------------------------------------------------------------

    def dotted(self, node: ast.AST) -> str | None:
        """`a.b.c` with the root resolved through import aliases; None for other expressions."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id, node.id)
        return ".".join([root, *reversed(parts)])

    def in_entry_point(self, node: ast.AST) -> bool:
        while node in self.parents:
            node = self.parents[node]
            if node in self.entry_functions:
                return True
        return False

    def has_identity(self, expr: ast.AST) -> bool:
        for node in walk_skipping_alignment(expr):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in N.IDENTITY_CALLS:
                    return True
                if isinstance(func, ast.Attribute) and func.attr in N.IDENTITY_METHODS:
                    return True
                if (self.dotted(func) or "").startswith("hashlib."):
                    return True
            if isinstance(node, ast.Attribute) and node.attr in N.IDENTITY_ATTRIBUTES:
                return True
            if isinstance(node, ast.Name) and node.id in self.identity_names:
                return True
        return False

    def is_shape(self, expr: ast.AST) -> bool:
        if isinstance(expr, ast.Attribute) and expr.attr == "shape":
            return True
        if isinstance(expr, ast.Subscript):
            return self.is_shape(expr.value)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            return expr.func.attr in ("size", "numel")
        return isinstance(expr, ast.Name) and expr.id in self.shape_names

    # -- pass 2: rules ------------------------------------------------------------------

    def is_module_container(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in self.module_containers

    def parameters_of(self, node: ast.AST) -> set[str]:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                names = {a.arg for a in every if a is not None} - {"self"}
                assigned = {
                    n.id
                    for n in ast.walk(node)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                }
                return names | (assigned & self._derived_names(node, names))
        return set()

    def _derived_names(self, func: ast.AST, params: set[str]) -> set[str]:
        derived = set(params)
        for n in ast.walk(func):
            if isinstance(n, ast.Assign) and mentions(n.value, derived):
                derived |= {m.id for t in n.targets for m in ast.walk(t) if isinstance(m, ast.Name)}
        return derived

    def is_docstring(self, node: ast.AST) -> bool:
        parent = self.parents.get(node)
        return isinstance(parent, ast.Expr)


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        parts = [const_str(e) for e in node.elts]
        return " ".join(p for p in parts if p) or None
    return None


def big_int_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value >= SHAPE_CONSTANT_MIN
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(big_int_constant(e) for e in node.elts)
    return False


def mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))


METADATA = {"dtype", "device", "shape", "layout", "ndim", "is_cuda", "requires_grad"}


def uses_values(expr: ast.AST, names: set[str]) -> bool:
    """Whether `expr` reads the values of `names`, not just their dtype / device / shape."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Attribute) and node.attr in METADATA:
            continue
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in (
            "size",
            "dim",
            "numel",
            "element_size",
        ):
            continue
        if isinstance(node, ast.Name) and node.id in names:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def flatten_targets(target: ast.AST) -> Iterator[ast.AST]:
    if isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from flatten_targets(elt)
    else:
        yield target


def walk_skipping_alignment(expr: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, minus `x.data_ptr() % 16`-style alignment checks (honest and common)."""
    todo = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.BitAnd):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _namespace_expr(expr: ast.AST, ctx: SourceContext) -> bool:
    """vars(x), globals(), locals() or x.__dict__: a namespace that writes go straight into."""
    if isinstance(expr, ast.Call):
        return (ctx.dotted(expr.func) or "") in ("vars", "globals", "locals")
    return isinstance(expr, ast.Attribute) and expr.attr == "__dict__"
