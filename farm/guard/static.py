"""The static guard: rules over a submission's source, before it runs.

`scan_source(source)` parses the source and walks it twice: once to learn import aliases, entry
points (kernel / custom_kernel / forward) and module-level containers (farm.guard.context), once
to apply the rules of farm.guard.names. A token pass (farm.guard.obfuscation) then looks for
guarded names that the AST cannot see: built from string pieces, reversed or base64-encoded.

Each finding carries a rule code (farm.guard.rules), "reject" or "flag", a sentence and a line.
The rules aim at zero "reject" findings on honest Triton / PyTorch kernels: a construct that
honest code uses (an lru_cache on a config helper, a dict of compiled kernels keyed on shapes)
is a flag unless it is keyed on tensor identity or content, or sits on the entry point itself.
"""

from __future__ import annotations

import ast

from farm.guard import names as N
from farm.guard.context import (
    SourceContext,
    big_int_constant,
    const_str,
    flatten_targets,
    uses_values,
)
from farm.guard.encoding import SourceEncodingError, require_utf8
from farm.guard.findings import Finding
from farm.guard.obfuscation import scan_tokens
from farm.guard.rules import rule

LARGE_LITERAL_CHARS = 4096
LARGE_LITERAL_ITEMS = 256


def scan_source(source: str | bytes, *, filename: str = "<submission>") -> list[Finding]:
    """All findings for `source` (the file's text, or its bytes), ordered by line. Never raises
    on bad source: a file that does not parse gets a SYNTAX_ERROR flag (it will fail to import
    anyway) and the token pass. Every rule reads the text Python runs: a source that Python
    would decode with another codec than UTF-8 is rejected (SOURCE_ENCODING) before any other
    rule, since the rules would be reading a different program."""
    try:
        require_utf8(source)
    except SourceEncodingError as exc:
        return [_finding("SOURCE_ENCODING", f"{filename} {exc}", 1)]
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return [_finding("SOURCE_ENCODING", f"{filename} is not UTF-8 (byte {exc.start})", 1)]
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        findings = [_finding("SYNTAX_ERROR", f"{filename} does not parse: {exc}", line)]
        return _dedupe(findings + scan_tokens(source))
    scanner = _Scanner(tree)
    scanner.run()
    return _dedupe(scanner.findings + scan_tokens(source))


def _finding(code: str, detail: str, line: int | None) -> Finding:
    r = rule(code)
    return Finding(code=code, severity=r.severity, detail=f"{detail}: {r.why}", line=line)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, int | None]] = set()
    out = []
    for f in sorted(findings, key=lambda f: (f.line or 0, f.code)):
        if (f.code, f.line) not in seen:
            seen.add((f.code, f.line))
            out.append(f)
    return out


class _Scanner(SourceContext):
    def __init__(self, tree: ast.Module) -> None:
        super().__init__(tree)
        self.findings: list[Finding] = []
        self.streams: list[int] = []
        self.synchronises = False

    def add(self, code: str, detail: str, node: ast.AST | None) -> None:
        self.findings.append(_finding(code, detail, getattr(node, "lineno", None)))

    def add_line(self, code: str, detail: str, line: int) -> None:
        self.findings.append(_finding(code, detail, line))

    def run(self) -> None:
        self.learn()
        for name, kind in self.module_containers.items():
            if kind in N.WEAK_CONTAINERS:
                self.add_line(
                    "OUTPUT_REPLAY_CACHE", f"'{name}' is a {kind}", self.container_lines[name]
                )
        for node in ast.walk(self.tree):
            self._check(node)
        self._check_streams()
        self._check_unlaunched_kernels()

    # -- rules --------------------------------------------------------------------------

    def _check(self, node: ast.AST) -> None:
        for check in _CHECKS.get(type(node), ()):
            check(self, node)

    def check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        modules = (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
        if isinstance(node, ast.ImportFrom) and node.module:
            modules += [f"{node.module}.{a.name}" for a in node.names]
        for module in modules:
            code = _module_rule(module)
            if code:
                self.add(code, f"imports {module}", node)
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                self._check_name_use(f"{node.module}.{alias.name}", node, verb="imports")

    def _check_name_use(self, name: str, node: ast.AST, *, verb: str) -> None:
        """The rules for a dotted name however the source reaches it: called, read as an
        attribute, imported under an alias (`from torch.cuda import memory as allocator`)."""
        if name in N.CALL_RULES:
            self.add(N.CALL_RULES[name], f"{verb} {name}", node)
        for prefix, code in N.PREFIX_RULES.items():
            if name.startswith(prefix):
                self.add(code, f"{verb} {name}", node)
        if name.split(".")[-1] in N.ATTRIBUTE_RULES:
            self.add(N.ATTRIBUTE_RULES[name.split(".")[-1]], f"{verb} {name}", node)
        if name.startswith("gc.") and name not in N.GC_ALLOWED:
            self.add("REFLECTIVE_ACCESS", f"{verb} {name}", node)

    def check_call(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        self._check_name_use(name, node, verb="calls")
        if name in N.REFLECTIVE_CALLS:
            self._check_reflective_call(name, node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in N.METHOD_RULES:
            self.add(N.METHOD_RULES[node.func.attr], f"calls .{node.func.attr}()", node)
        if name in N.STREAM_FACTORIES:
            self.streams.append(node.lineno)
        if name == "torch.cuda.synchronize" or (
            isinstance(node.func, ast.Attribute) and node.func.attr in N.SYNC_METHODS
        ):
            self.synchronises = True
        _CALL_SPECIAL.get(name, _no_check)(self, node)
        self._check_container_fill(node)
        lookup = isinstance(node.func, ast.Attribute) and node.func.attr in (
            "get",
            "setdefault",
            "pop",
        )
        if lookup and node.args and self.has_identity(node.args[0]):
            self.add("OUTPUT_REPLAY_CACHE", "looks up a value by tensor identity", node)
        if name.endswith("environ.get") or name == "os.getenv":
            self._check_env_key(node.args[0] if node.args else None, node)

    def check_open(self, node: ast.Call) -> None:
        mode = const_str(node.args[1]) if len(node.args) > 1 else None
        for kw in node.keywords:
            if kw.arg == "mode":
                mode = const_str(kw.value)
        path = const_str(node.args[0]) if node.args else None
        if path and (path.startswith("/proc") or "environ" in path):
            self.add("SECRET_ACCESS", f"opens {path}", node)
        if path and (path.startswith("/dev/std") or path.startswith("/dev/fd") or "/fd/" in path):
            self.add("OUTPUT_CHANNEL", f"opens {path}", node)
        if (
            node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, int)
        ):
            self.add("OUTPUT_CHANNEL", "opens a raw file descriptor", node)
        if mode is None and len(node.args) < 2 and not any(k.arg == "mode" for k in node.keywords):
            mode = "r"
        if mode is None or set(mode) & set("wax+"):
            self.add("FILESYSTEM_WRITE", f"opens a file for writing (mode {mode!r})", node)
        else:
            self.add("FILESYSTEM_READ", "opens a file", node)

    def check_os_open(self, node: ast.Call) -> None:
        flags = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
        if any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")):
            self.add("FILESYSTEM_WRITE", "os.open() for writing", node)
        else:
            self.add("FILESYSTEM_READ", "os.open()", node)

    def check_subprocess_args(self, node: ast.Call) -> None:
        text = " ".join(s for s in (const_str(n) for n in ast.walk(node)) if s)
        if "pip" in text or "install" in text or "conda" in text:
            self.add("RUNTIME_PACKAGE_INSTALL", "runs a package installer", node)

    def check_dynamic_import(self, node: ast.Call) -> None:
        module = const_str(node.args[0]) if node.args else None
        if module is None:
            self.add("DYNAMIC_CODE", "imports a module whose name is computed", node)
            return
        code = _module_rule(module)
        if code:
            self.add(code, f"imports {module} dynamically", node)

    def check_dunder_import(self, node: ast.Call) -> None:
        self.check_dynamic_import(node)
        self.add("DYNAMIC_CODE", "calls __import__()", node)

    def check_setattr(self, node: ast.Call) -> None:
        name = self.dotted(node.func) or ""
        if len(node.args) < 2:
            return
        attr = const_str(node.args[1])
        if attr is None:
            self.add("OBFUSCATED_ATTRIBUTE", f"{name}() with a computed attribute name", node)
            return
        base = self.dotted(node.args[0])
        if base:
            self._check_store(f"{base}.{attr}", node)

    def check_getattr(self, node: ast.Call) -> None:
        if len(node.args) < 2:
            return
        attr = const_str(node.args[1])
        if attr is None:
            self.add("COMPUTED_GETATTR", "getattr() with a computed attribute name", node)
            return
        base = self.dotted(node.args[0]) or ""
        full = f"{base}.{attr}"
        code = N.CALL_RULES.get(full) or N.ATTRIBUTE_RULES.get(attr)
        if code:
            self.add(code, f"reaches {full} through getattr()", node)

    def _check_reflective_call(self, name: str, node: ast.Call) -> None:
        """attrgetter / methodcaller / __getattribute__ / getattr_static with a name the guard
        cannot read; vars() / globals() namespaces changed through a method."""
        if name in ("vars", "globals", "locals"):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr in N.NAMESPACE_WRITERS:
                self.add("REFLECTIVE_ACCESS", f"changes {name}() through .{parent.attr}()", node)
            return
        if not node.args or any(const_str(a) is None for a in node.args[-1:]):
            self.add("COMPUTED_GETATTR", f"{name}() with a computed attribute name", node)

    def check_compile_mode(self, node: ast.Call) -> None:
        text = ast.unparse(node)
        if "reduce-overhead" in text or "max-autotune" in text or "cudagraphs" in text:
            self.add("COMPILE_CUDAGRAPHS", "torch.compile with CUDA graphs", node)

    def check_memo_call(self, node: ast.Call) -> None:
        """`kernel = functools.lru_cache()(impl)` memoises the entry point."""
        parent = self.parents.get(node)
        while isinstance(parent, ast.Call):
            parent = self.parents.get(parent)
        if isinstance(parent, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in N.ENTRY_POINTS for t in parent.targets
        ):
            self.add("OUTPUT_REPLAY_CACHE", "memoises the entry point", node)

    def check_environ_subscript(self, node: ast.Subscript) -> None:
        if (self.dotted(node.value) or "").endswith("os.environ") and isinstance(
            node.ctx, ast.Load
        ):
            self._check_env_key(node.slice, node)

    def _check_env_key(self, key: ast.AST | None, node: ast.AST) -> None:
        text = const_str(key) if key is not None else None
        if text is None:
            self.add("SECRET_ACCESS", "reads an environment variable whose name is computed", node)
        elif any(word in text.upper() for word in N.SECRET_KEY_WORDS):
            self.add("SECRET_ACCESS", f"reads the environment variable {text}", node)
        else:
            self.add("ENV_READ", f"reads the environment variable {text}", node)

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr in N.ATTRIBUTE_RULES:
            self.add(N.ATTRIBUTE_RULES[node.attr], f"uses .{node.attr}", node)
        parent = self.parents.get(node)
        if (
            node.attr == "__dict__"
            and isinstance(parent, ast.Attribute)
            and parent.attr in N.NAMESPACE_WRITERS
        ):
            self.add("REFLECTIVE_ACCESS", f"changes a __dict__ through .{parent.attr}()", node)
        name = self.dotted(node)
        if name is None:
            return
        if name.startswith("gc.") and name not in N.GC_ALLOWED:
            self.add("REFLECTIVE_ACCESS", f"uses {name}", node)
        if name.split(".")[0] == "farm":
            self.add("HARNESS_TAMPERING", f"uses {name}", node)
        if name in ("os.environ", "os.environb") and not self._is_keyed_environ_read(node):
            self.add("SECRET_ACCESS", f"uses {name} as a whole", node)
        if name.startswith("sys.modules"):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr not in ("get",):
                self.add("SYS_MODULES_PATCH", f"calls sys.modules.{parent.attr}", node)
        if not isinstance(parent, ast.Attribute):
            # the whole dotted name, whether called or passed around as a value
            self._check_name_use(name, node, verb="uses")
        if name in ("sys.stdout.buffer", "sys.stdout.fileno", "sys.stdout.write"):
            self.add("OUTPUT_CHANNEL", f"uses {name}", node)

    def _is_keyed_environ_read(self, node: ast.Attribute) -> bool:
        parent = self.parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return True
        return isinstance(parent, ast.Attribute) and parent.attr in ("get", "setdefault")

    def check_assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete) -> None:
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        for target in targets:
            for t in flatten_targets(target):
                self._check_target(t, node)
        if isinstance(node, ast.AugAssign | ast.Assign) and self.in_entry_point(node):
            self._check_call_counter(list(targets), node)

    def _check_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            if target.attr == "__class__":
                self.add("TENSOR_SUBCLASS", "assigns __class__", node)
            full = self.dotted(target)
            if full and full.split(".")[0] in self.module_roots():
                self._check_store(full, node)
        elif isinstance(target, ast.Subscript):
            if self._is_namespace(target.value):
                self.add("REFLECTIVE_ACCESS", "writes into a namespace by subscript", node)
            base = self.dotted(target.value) or ""
            if base == "sys.modules":
                self.add("SYS_MODULES_PATCH", "assigns into sys.modules", node)
            elif base in ("__builtins__", "builtins.__dict__"):
                self.add("MONKEYPATCH", "assigns into __builtins__", node)
            elif base == "os.environ":
                self.add("ENV_READ", "sets an environment variable", node)
            if self.has_identity(target.slice):
                self.add("OUTPUT_REPLAY_CACHE", "stores by tensor identity or content", node)
            elif self.is_module_container(target.value) and self.in_entry_point(node):
                self.add("MODULE_CACHE", f"fills module-level '{ast.unparse(target.value)}'", node)

    def _is_namespace(self, node: ast.AST) -> bool:
        """vars(x), globals(), locals(), x.__dict__ or a name bound to one of them."""
        if isinstance(node, ast.Call) and (self.dotted(node.func) or "") in (
            "vars",
            "globals",
            "locals",
        ):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return True
        return isinstance(node, ast.Name) and node.id in self.namespace_names

    def _check_container_fill(self, node: ast.Call) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _FILL_METHODS):
            return
        if any(self.has_identity(a) for a in node.args[:1]) and func.attr in (
            "setdefault",
            "update",
        ):
            self.add("OUTPUT_REPLAY_CACHE", "stores by tensor identity or content", node)
        elif self.is_module_container(func.value) and self.in_entry_point(node):
            self.add("MODULE_CACHE", f"fills module-level '{ast.unparse(func.value)}'", node)

    def _check_store(self, full: str, node: ast.AST) -> None:
        """An assignment to the attribute `full` of an imported module or class."""
        if full.split(".")[0] == "farm":
            self.add("HARNESS_TAMPERING", f"replaces {full}", node)
        elif full.startswith(N.PRECISION_TARGETS):
            self.add("PRECISION_SETTING", f"sets {full}", node)
        elif any(full == t or full.startswith(t) for t in N.TIMER_TARGETS if t.endswith(".")) or (
            full in N.TIMER_TARGETS
        ):
            self.add("TIMER_MONKEYPATCH", f"replaces {full}", node)
        elif full.startswith("sys.modules"):
            self.add("SYS_MODULES_PATCH", f"replaces {full}", node)
        else:
            self.add("MONKEYPATCH", f"replaces {full}", node)

    def _check_call_counter(self, targets: list[ast.AST], node: ast.AST) -> None:
        globals_ = {
            n
            for f in self.entry_functions
            for s in ast.walk(f)
            if isinstance(s, ast.Global)
            for n in s.names
        }
        for target in targets:
            if isinstance(target, ast.Name) and target.id in globals_:
                self.add("CALL_COUNTER", f"updates global '{target.id}' on every call", node)
            if isinstance(target, ast.Attribute) and isinstance(node, ast.AugAssign):
                self.add("CALL_COUNTER", f"updates .{target.attr} on every call", node)

    def check_compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and self.has_identity(
            node.left
        ):
            self.add("OUTPUT_REPLAY_CACHE", "tests tensor identity against a collection", node)
        if (
            any(isinstance(op, ast.Eq | ast.Is) for op in node.ops)
            and sum(map(self.has_identity, sides)) >= 2
        ):
            self.add("OUTPUT_REPLAY_CACHE", "compares tensor identities across calls", node)
        if any(isinstance(op, ast.Eq | ast.In) for op in node.ops):
            shape = any(self.is_shape(s) for s in sides)
            constant = any(big_int_constant(s) for s in sides)
            if shape and constant:
                self._hardcoded_shape(node)

    def _hardcoded_shape(self, node: ast.Compare) -> None:
        branch = self.parents.get(node)
        while isinstance(branch, ast.BoolOp | ast.UnaryOp):
            branch = self.parents.get(branch)
        if isinstance(branch, ast.If) and branch.test is not None:
            params = self.parameters_of(branch)
            for ret in (
                n for stmt in branch.body for n in ast.walk(stmt) if isinstance(n, ast.Return)
            ):
                if ret.value is not None and not uses_values(ret.value, params):
                    self.add(
                        "HARDCODED_OUTPUT",
                        "returns a value that ignores the inputs for an exact shape",
                        ret,
                    )
                    return
        self.add(
            "HARDCODED_SHAPES", f"compares a shape with a constant ({ast.unparse(node)[:80]})", node
        )

    def check_subscript_key(self, node: ast.Subscript) -> None:
        if (
            isinstance(node.ctx, ast.Load)
            and self._is_namespace(node.value)
            and const_str(node.slice) is None
        ):
            self.add("COMPUTED_GETATTR", "reads a namespace by a computed key", node)
        if isinstance(node.ctx, ast.Load) and self.has_identity(node.slice):
            base = node.value
            if (
                isinstance(base, ast.Name)
                and (base.id in self.module_containers or "cache" in base.id.lower())
            ) or (isinstance(base, ast.Attribute) and "cache" in base.attr.lower()):
                self.add(
                    "OUTPUT_REPLAY_CACHE", "looks up a cache by tensor identity or content", node
                )

    def check_dict_literal(self, node: ast.Dict) -> None:
        if any(k is not None and self.has_identity(k) for k in node.keys):
            self.add(
                "OUTPUT_REPLAY_CACHE", "builds a dict keyed on tensor identity or content", node
            )

    def check_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for dec in node.decorator_list:
            name = self.dotted(dec.func if isinstance(dec, ast.Call) else dec) or ""
            if name in N.MEMO_DECORATORS:
                if node in self.entry_functions or node.name in N.ENTRY_POINTS:
                    self.add("OUTPUT_REPLAY_CACHE", f"memoises the entry point {node.name}()", dec)
                else:
                    self.add("MEMOISED_HELPER", f"memoises {node.name}()", dec)
        if node.name in N.TENSOR_HOOKS:
            self.add("TENSOR_SUBCLASS", f"defines {node.name}", node)

    def check_class(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = self.dotted(base) or ""
            if name in N.TENSOR_BASES:
                self.add("TENSOR_SUBCLASS", f"class {node.name} derives from {name}", node)

    def check_raise(self, node: ast.Raise) -> None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is not None and self.dotted(exc) in (
            "SystemExit",
            "KeyboardInterrupt",
            "GeneratorExit",
        ):
            self.add("EARLY_EXIT", f"raises {self.dotted(exc)}", node)

    def check_literal(self, node: ast.Constant | ast.List | ast.Tuple) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self._check_path_literal(node.value, node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            if len(node.value) > LARGE_LITERAL_CHARS and not self.is_docstring(node):
                self.add("PRECOMPUTED_DATA", f"embeds a {len(node.value)}-character literal", node)
        elif isinstance(node, ast.List | ast.Tuple) and len(node.elts) > LARGE_LITERAL_ITEMS:
            self.add("PRECOMPUTED_DATA", f"embeds a {len(node.elts)}-item literal", node)

    def _check_path_literal(self, text: str, node: ast.AST) -> None:
        if text.startswith(("/proc/self/fd", "/dev/fd", "/dev/stdout", "/dev/stderr")):
            self.add("OUTPUT_CHANNEL", f"names {text}", node)
        elif text.startswith("/proc/") and not self.is_docstring(node):
            self.add("SECRET_ACCESS", f"names {text}", node)

    def _check_unlaunched_kernels(self) -> None:
        """Triton kernels that nothing in the module refers to cannot be launched."""
        kernels = {
            node.name: node
            for node in self.tree.body
            if isinstance(node, ast.FunctionDef)
            and any(
                (self.dotted(d.func if isinstance(d, ast.Call) else d) or "").startswith("triton.")
                for d in node.decorator_list
            )
        }
        if not kernels:
            return
        used = {
            n.id
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        if not set(kernels) & used:
            first = min(kernels.values(), key=lambda k: k.lineno)
            self.add(
                "DECOY_KERNEL",
                f"defines Triton kernel(s) {', '.join(kernels)} and never uses them",
                first,
            )

    def _check_streams(self) -> None:
        if not self.streams:
            return
        line = self.streams[0]
        if self.synchronises:
            self.findings.append(
                _finding("SIDE_STREAM", "creates a CUDA stream and synchronises", line)
            )
        else:
            self.findings.append(
                _finding("UNSYNC_MULTISTREAM", "creates a CUDA stream and never waits on it", line)
            )


_FILL_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft"}


def _no_check(scanner: _Scanner, node: ast.Call) -> None:
    pass


_CALL_SPECIAL = {
    "open": _Scanner.check_open,
    "io.open": _Scanner.check_open,
    "os.open": _Scanner.check_os_open,
    "subprocess.run": _Scanner.check_subprocess_args,
    "subprocess.call": _Scanner.check_subprocess_args,
    "subprocess.check_call": _Scanner.check_subprocess_args,
    "subprocess.check_output": _Scanner.check_subprocess_args,
    "subprocess.Popen": _Scanner.check_subprocess_args,
    "os.system": _Scanner.check_subprocess_args,
    "os.popen": _Scanner.check_subprocess_args,
    "importlib.import_module": _Scanner.check_dynamic_import,
    "__import__": _Scanner.check_dunder_import,
    "setattr": _Scanner.check_setattr,
    "delattr": _Scanner.check_setattr,
    "object.__setattr__": _Scanner.check_setattr,
    "getattr": _Scanner.check_getattr,
    "torch.compile": _Scanner.check_compile_mode,
    "functools.lru_cache": _Scanner.check_memo_call,
    "functools.cache": _Scanner.check_memo_call,
}

_CHECKS: dict[type, tuple] = {
    ast.Import: (_Scanner.check_import,),
    ast.ImportFrom: (_Scanner.check_import,),
    ast.Call: (_Scanner.check_call,),
    ast.Attribute: (_Scanner.check_attribute,),
    ast.Assign: (_Scanner.check_assign,),
    ast.AugAssign: (_Scanner.check_assign,),
    ast.AnnAssign: (_Scanner.check_assign,),
    ast.Delete: (_Scanner.check_assign,),
    ast.Compare: (_Scanner.check_compare,),
    ast.Subscript: (_Scanner.check_subscript_key, _Scanner.check_environ_subscript),
    ast.Dict: (_Scanner.check_dict_literal,),
    ast.FunctionDef: (_Scanner.check_function,),
    ast.AsyncFunctionDef: (_Scanner.check_function,),
    ast.ClassDef: (_Scanner.check_class,),
    ast.Raise: (_Scanner.check_raise,),
    ast.Constant: (_Scanner.check_literal,),
    ast.List: (_Scanner.check_literal,),
    ast.Tuple: (_Scanner.check_literal,),
}


def _module_rule(module: str) -> str | None:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        code = N.IMPORT_RULES.get(".".join(parts[:i]))
        if code is not None:
            return code or None
    return None
