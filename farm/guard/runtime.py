"""The runtime guard: checks that run inside the (untrusted) worker process.

The worker imports this module and builds its `IntegrityMonitor` BEFORE it imports the
submission, so the snapshot holds the genuine timing and checking functions. Everything here can
in principle be undone by code running in the same process; that is why it is one layer of
several (docs/security.md): the static guard rejects the patching it would need, and the trusted
side checks the reported times against its own wall clock (farm.guard.plausibility).

- `IntegrityMonitor`: identity and code hash of timing / checking functions (torch.cuda.Event
  record / elapsed_time / synchronize, torch.cuda.synchronize, time.perf_counter(_ns), and what
  the harness registers with `protect` / `protect_module`), plus threads and child processes
  left running after a call of the submission (`watch_call`).
- `check_output_type`: outputs must be exactly torch.Tensor.
- `LaunchObserver`: counts launches of @triton.jit kernels (and of functions of extensions built
  with torch.utils.cpp_extension), so a submission that defines kernels must launch one.
- `StreamCounter`: counts attempts to create CUDA streams.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import sys
import sysconfig
import threading
import types
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from farm.guard.findings import Finding
from farm.guard.rules import rule

# (module path, attribute path) of what every monitor protects.
DEFAULT_TARGETS = [
    ("time", "perf_counter"),
    ("time", "perf_counter_ns"),
    ("time", "monotonic"),
    ("time", "monotonic_ns"),
    ("time", "time"),
    ("torch.cuda", "synchronize"),
    ("torch.cuda", "Event"),
    ("torch.cuda", "Event.record"),
    ("torch.cuda", "Event.elapsed_time"),
    ("torch.cuda", "Event.synchronize"),
    ("torch.cuda", "Event.query"),
    ("torch", "allclose"),
    ("torch", "isclose"),
    ("torch", "equal"),
    ("torch", "isfinite"),
    ("torch", "Tensor"),
    ("torch.Tensor", "__eq__"),
    ("torch.Tensor", "clone"),
    ("torch.Tensor", "cpu"),
    ("torch.Tensor", "to"),
    ("torch.Tensor", "numpy"),
    ("torch.Tensor", "tolist"),
    ("torch.Tensor", "copy_"),
    ("builtins", "type"),
    ("builtins", "isinstance"),
    ("builtins", "print"),
]


def _finding(code: str, detail: str) -> Finding:
    r = rule(code)
    return Finding(code=code, severity=r.severity, detail=f"{detail}: {r.why}")


def fingerprint(value: Any) -> tuple[int, str]:
    """(identity, hash of the code) of a function, method, class or builtin.

    The code hash catches `fn.__code__ = other.__code__`, which keeps the identity.
    """
    func = getattr(value, "__func__", value)
    code = getattr(func, "__code__", None)
    if code is None:
        return id(value), ""
    digest = hashlib.sha256(code.co_code)
    digest.update(repr(code.co_consts).encode())
    digest.update(repr(code.co_names).encode())
    digest.update(repr(getattr(func, "__defaults__", None)).encode())
    return id(value), digest.hexdigest()


class IntegrityMonitor:
    """Snapshot, then verify, the functions the harness's measurements rely on."""

    def __init__(self, *, defaults: bool = True) -> None:
        self._targets: dict[str, tuple[Any, str]] = {}  # label -> (owner, attribute)
        self._snapshot: dict[str, tuple[int, str]] = {}
        self._modules: dict[str, Any] = {}  # sys.modules entries that must stay put
        self._pending: list[Finding] = []
        self._left: list[LeftThreads] = []
        if defaults:
            for module, attr in DEFAULT_TARGETS:
                self._protect_path(module, attr)

    def protect(self, obj: Any, attr: str, *, label: str | None = None) -> None:
        """Watch `obj.attr` (a function, method or class); snapshots it now."""
        name = label or f"{getattr(obj, '__name__', type(obj).__name__)}.{attr}"
        self._targets[name] = (obj, attr)
        self._snapshot[name] = fingerprint(_raw_attribute(obj, attr))

    def protect_module(self, module: types.ModuleType) -> None:
        """Watch every function and class defined in `module` (and the methods of those
        classes), and the module's own entry in sys.modules."""
        self._modules[module.__name__] = module
        for attr, value in list(vars(module).items()):
            if getattr(value, "__module__", None) != module.__name__:
                continue
            if isinstance(value, types.FunctionType):
                self.protect(module, attr, label=f"{module.__name__}.{attr}")
            elif isinstance(value, type):
                self.protect(module, attr, label=f"{module.__name__}.{attr}")
                for method, member in vars(value).items():
                    if isinstance(member, types.FunctionType | staticmethod | classmethod):
                        self.protect(value, method, label=f"{module.__name__}.{attr}.{method}")

    def snapshot(self) -> None:
        """Record the current state of everything protected (call before the import)."""
        for name, (obj, attr) in self._targets.items():
            self._snapshot[name] = fingerprint(_raw_attribute(obj, attr))

    def verify(self) -> list[Finding]:
        """Findings for every protected function that changed since the snapshot, plus those
        collected by `watch_call` since the last verify()."""
        found, self._pending = self._pending, []
        for left in self._left:
            found += left.findings()
        self._left.clear()
        for name, (obj, attr) in self._targets.items():
            try:
                now = fingerprint(_raw_attribute(obj, attr))
            except AttributeError:
                found.append(_finding("TIMER_REPLACED", f"{name} was deleted"))
                continue
            if now != self._snapshot[name]:
                what = "replaced" if now[0] != self._snapshot[name][0] else "given other code"
                found.append(_finding("TIMER_REPLACED", f"{name} was {what}"))
        for name, module in self._modules.items():
            if sys.modules.get(name) is not module:
                found.append(_finding("TIMER_REPLACED", f"sys.modules['{name}'] was swapped"))
        return found

    @contextlib.contextmanager
    def watch_call(self) -> Iterator[None]:
        """Around one call of the submission: threads still running its code and child
        processes it leaves are recorded at once; threads it started that stay alive are judged
        at the next verify() by the CPU they used after the call returned."""
        before = ThreadCensus.take()
        yield
        after = ThreadCensus.take()
        self._pending += after.findings_since(before)
        self._left.append(after.left_threads(before))

    def _protect_path(self, module_name: str, attr_path: str) -> None:
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            return
        *owners, attr = attr_path.split(".")
        for part in owners:
            owner = getattr(owner, part, None)
            if owner is None:
                return
        if hasattr(owner, attr):
            self.protect(owner, attr, label=f"{module_name}.{attr_path}")


def _raw_attribute(obj: Any, attr: str) -> Any:
    """The attribute as stored (no descriptor call), so methods compare by their function."""
    for klass in (obj, *getattr(obj, "__mro__", ())):
        namespace = getattr(klass, "__dict__", {})
        if attr in namespace:
            return namespace[attr]
    return getattr(obj, attr)


# CPU time a thread left behind may spend after the call returned before it counts as work
# outside the timer (ns). Idle pool threads blocked on a queue spend none; 2 ms is far above
# the scheduler's accounting noise and far below any computation on real inputs.
LEFT_THREAD_CPU_NS = 2_000_000


class ThreadCensus:
    """Threads (kernel task ids) and child processes of this process at one moment, with the
    CPU time each thread has used and, for Python threads, whether submission code is on its
    stack."""

    def __init__(
        self, cpu_ns: dict[int, int], children: set[int], running_user_code: set[int]
    ) -> None:
        self.cpu_ns, self.children = cpu_ns, children
        self.running_user_code = running_user_code

    @classmethod
    def take(cls) -> ThreadCensus:
        return cls(thread_cpu_ns(), child_pids(), threads_in_user_code())

    def findings_since(self, before: ThreadCensus) -> list[Finding]:
        """At the end of a call: threads running the submission's own code, child processes.
        Threads left idle (a library's pool, such as Inductor's compile workers) are not
        evidence by themselves; `LeftThreads.findings` judges them by the CPU they use later."""
        found = []
        new = self.running_user_code - set(before.cpu_ns)
        if new:
            found.append(
                _finding(
                    "THREAD_LEFT_RUNNING",
                    f"{len(new)} new thread(s) still running the submission's code",
                )
            )
        new_children = self.children - before.children
        if new_children:
            found.append(_finding("PROCESS_LEFT_RUNNING", f"{len(new_children)} child process(es)"))
        return found

    def left_threads(self, before: ThreadCensus) -> LeftThreads:
        new = {t: ns for t, ns in self.cpu_ns.items() if t not in before.cpu_ns}
        return LeftThreads(new, python_thread_ids() & set(new))


class LeftThreads:
    """Threads that appeared during a call and were alive when it returned, with their CPU time
    (ns) at that moment. Evidence of work outside the timer is CPU they spend afterwards, or
    their ending (a Python thread's run() returning) before the next check."""

    def __init__(self, cpu_ns: dict[int, int], python: set[int]) -> None:
        self.cpu_ns, self.python = cpu_ns, python

    def findings(self) -> list[Finding]:
        if not self.cpu_ns:
            return []
        now = thread_cpu_ns()
        busy = {
            tid: now[tid] - ns
            for tid, ns in self.cpu_ns.items()
            if tid in now and now[tid] - ns > LEFT_THREAD_CPU_NS
        }
        # a Python thread leaves threading's table when run() returns, before its kernel task
        # is gone; either way it ran after the call
        ended = [tid for tid in self.cpu_ns if tid not in now]
        ended += list(self.python - python_thread_ids() - set(ended))
        if busy or ended:
            worst = max(busy.values(), default=0) / 1e6
            return [
                _finding(
                    "THREAD_LEFT_RUNNING",
                    f"of the threads started during the call, {len(busy)} used CPU after it "
                    f"returned (up to {worst:.1f} ms) and {len(ended)} ran on until they ended",
                )
            ]
        return [
            _finding(
                "NATIVE_THREADS_ADDED",
                f"{len(self.cpu_ns)} thread(s) started during the call, idle after it returned",
            )
        ]


def thread_cpu_ns() -> dict[int, int]:
    """Kernel task id -> CPU time used (ns) of every thread of this process, from
    /proc/self/task/<tid>/schedstat (first field: time on the CPU, ns; Linux >= 2.6.23).
    Without /proc (not Linux): Python threads only, CPU time unknown (0)."""
    found: dict[int, int] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return {t.native_id or 0: 0 for t in threading.enumerate()}
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                found[int(tid)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return found


def python_thread_ids() -> set[int]:
    """Kernel task ids of the live Python threads of this process."""
    return {t.native_id for t in threading.enumerate() if t.native_id is not None}


def threads_in_user_code() -> set[int]:
    """Native ids of Python threads (other than this one) with a frame of code that is neither
    the standard library, an installed package nor the farm: the submission's own functions."""
    me = threading.get_ident()
    frames = sys._current_frames()  # the guard's own census, not reachable by the submission
    # This thread's entry is this very frame: kept, it would make a cycle (frame -> locals ->
    # dict -> frame) that holds every caller's locals, the checked call's device tensors
    # included, until the cyclic collector happens to run.
    del frames[me]
    found = set()
    try:
        for thread in threading.enumerate():
            frame = frames.get(thread.ident or -1)
            if frame is None or thread.native_id is None:
                continue
            while frame is not None:
                if not frame.f_code.co_filename.startswith(_library_roots()):
                    found.add(thread.native_id)
                    break
                frame = frame.f_back
    finally:
        del frames
        frame = None
    return found


@functools.cache
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}  # the farm package
    roots |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots)) + tuple(
        sorted(r + os.sep for r in roots)
    )


def child_pids() -> set[int]:
    """Live children of every thread of this process (Linux /proc)."""
    pids: set[int] = set()
    for task in Path("/proc/self/task").glob("*/children"):
        try:
            pids.update(int(p) for p in task.read_text().split())
        except (OSError, ValueError):
            continue
    return pids


def check_output_type(obj: Any) -> list[Finding]:
    """OUTPUT_NOT_TENSOR for every output (a tensor, or a tuple / list of them) whose type is
    not exactly torch.Tensor: subclasses and lazy wrappers can compute or lie when compared."""
    import torch

    items = list(obj) if isinstance(obj, tuple | list) else [obj]
    found = []
    for i, item in enumerate(items):
        if type(item) is not torch.Tensor:
            kind = f"{type(item).__module__}.{type(item).__qualname__}"
            found.append(_finding("OUTPUT_NOT_TENSOR", f"output {i} is a {kind}"))
    return found


class LaunchObserver:
    """Count kernel launches while active.

        with LaunchObserver() as launches:
            out = kernel(*inputs)
        launches.triton  # Counter: kernel name -> launches

    Hooks triton's JITFunction.run (and the interpreter's InterpretedFunction.run), which every
    `kernel[grid](...)` and autotuner launch goes through; `warmup=True` compilations do not count.
    Functions of extensions built with torch.utils.cpp_extension.load / load_inline after
    `install_extension_hooks()` count in `extension`.
    """

    _extension_counter: Counter[str] | None = None

    def __init__(self) -> None:
        self.triton: Counter[str] = Counter()
        self.extension: Counter[str] = Counter()
        self._restore: list[tuple[Any, str, Any]] = []
        self._extension_start: Counter[str] = Counter()

    def __enter__(self) -> LaunchObserver:
        for owner in _triton_launch_classes():
            original = owner.__dict__["run"]
            setattr(owner, "run", self._counting(original))  # noqa: B010
            self._restore.append((owner, "run", original))
        if LaunchObserver._extension_counter is not None:
            self._extension_start = Counter(LaunchObserver._extension_counter)
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, attr, original in reversed(self._restore):
            setattr(owner, attr, original)
        self._restore.clear()
        if LaunchObserver._extension_counter is not None:
            self.extension = LaunchObserver._extension_counter - self._extension_start

    @property
    def total(self) -> int:
        return sum(self.triton.values()) + sum(self.extension.values())

    def _counting(self, original: Any) -> Any:
        counts = self.triton

        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("warmup", False):
                counts[_kernel_name(fn_self)] += 1
            return original(fn_self, *args, **kwargs)

        run.__wrapped__ = original  # type: ignore[attr-defined]
        return run

    @classmethod
    def install_extension_hooks(cls) -> None:
        """Wrap cpp_extension.load / load_inline so the functions of every module they build
        count their calls. Install before the submission is imported; idempotent."""
        if cls._extension_counter is not None:
            return
        from torch.utils import cpp_extension

        counter: Counter[str] = Counter()
        cls._extension_counter = counter
        for name in ("load", "load_inline"):
            setattr(cpp_extension, name, _counting_loader(getattr(cpp_extension, name), counter))


def _counting_loader(loader: Any, counter: Counter[str]) -> Any:
    def load(*args: Any, **kwargs: Any) -> Any:
        module = loader(*args, **kwargs)
        for attr, fn in list(vars(module).items()):
            if callable(fn) and not attr.startswith("_"):
                setattr(module, attr, _counting_function(fn, f"{module.__name__}.{attr}", counter))
        return module

    return load


def _counting_function(fn: Any, name: str, counter: Counter[str]) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        counter[name] += 1
        return fn(*args, **kwargs)

    return call


def _triton_launch_classes() -> list[type]:
    classes = []
    try:
        from triton.runtime.jit import JITFunction

        classes.append(JITFunction)
    except ImportError:
        return []
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:
        pass
    return [c for c in classes if "run" in c.__dict__]


def _kernel_name(fn: Any) -> str:
    inner = getattr(fn, "fn", fn)
    return f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__name__', repr(inner))}"


def triton_kernels_in(module: types.ModuleType) -> list[str]:
    """Names of the @triton.jit kernels a submission module defines (through autotune and
    heuristics wrappers too)."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return []
    try:
        from triton.runtime.interpreter import InterpretedFunction

        kinds: tuple[type, ...] = (JITFunction, InterpretedFunction)
    except ImportError:
        kinds = (JITFunction,)
    names = []
    for value in vars(module).values():
        inner = value
        while hasattr(inner, "fn") and not isinstance(inner, kinds):
            inner = inner.fn
        if isinstance(inner, kinds):
            names.append(_kernel_name(inner))
    return sorted(set(names))


def check_launches(module: types.ModuleType, observer: LaunchObserver) -> list[Finding]:
    """DECOY_KERNEL when `module` defines Triton kernels and none of them ran under `observer`
    (another library did the work, and the kernel is there to look like a Triton solution)."""
    defined = triton_kernels_in(module)
    if not defined:
        return []
    launched = [name for name in defined if observer.triton.get(name)]
    if launched:
        return []
    return [_finding("DECOY_KERNEL", f"defines {', '.join(defined)}; launched none")]


class StreamCounter:
    """Counts attempts to create CUDA streams while active (torch.cuda.Stream construction)."""

    def __init__(self) -> None:
        self.created = 0
        self._original: Any = None

    def __enter__(self) -> StreamCounter:
        import torch

        stream_cls = torch.cuda.Stream
        self._original = stream_cls.__dict__["__new__"]
        original_new = (
            self._original.__func__ if isinstance(self._original, staticmethod) else self._original
        )
        counter = self

        def counting_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
            counter.created += 1
            return original_new(cls, *args, **kwargs)

        stream_cls.__new__ = counting_new  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.cuda.Stream.__new__ = self._original  # type: ignore[method-assign]

    def findings(self) -> list[Finding]:
        if not self.created:
            return []
        return [_finding("EXTRA_STREAMS", f"{self.created} CUDA stream(s) created")]
