"""The guard's rules: each code, its severity and why it exists.

Static rules (farm.guard.static) look at the source; runtime rules (farm.guard.runtime) at the
worker process while the submission runs; plausibility rules (farm.guard.plausibility) at the
numbers the worker reported. docs/security.md has the full table with the cheats each catches.
"""

from __future__ import annotations

from dataclasses import dataclass

from farm.guard.findings import Severity


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    why: str


_RULES = [
    # -- timing and harness integrity ---------------------------------------------------------
    Rule(
        "TIMER_MONKEYPATCH",
        "reject",
        "replaces a timing function (CUDA events, synchronize, "
        "time.perf_counter, triton.testing) so that the measured time is not the real one",
    ),
    Rule(
        "HARNESS_TAMPERING",
        "reject",
        "imports or patches the farm's own modules (the harness "
        "that times and checks the submission); a submission needs nothing from farm",
    ),
    Rule(
        "MONKEYPATCH",
        "reject",
        "replaces an attribute of a library module or class (torch, "
        "numpy, builtins, ...); the harness and the checks rely on those being genuine",
    ),
    Rule("SYS_MODULES_PATCH", "reject", "edits sys.modules, which swaps modules under the harness"),
    Rule(
        "PRECISION_SETTING",
        "flag",
        "changes global numeric settings (TF32, matmul precision); "
        "allowed, but results must still meet the tolerance on fresh inputs",
    ),
    # -- introspection ------------------------------------------------------------------------
    Rule(
        "INTROSPECTION",
        "reject",
        "walks the garbage collector, the call stack or frames "
        "(gc.get_objects, inspect.stack, sys._getframe, f_back / f_locals) to find the "
        "harness's data, such as expected outputs",
    ),
    Rule(
        "TRACE_HOOK",
        "reject",
        "installs a trace or profile hook (sys.settrace, setprofile, "
        "audit hooks) that sees every call the harness makes",
    ),
    # -- concurrency --------------------------------------------------------------------------
    Rule(
        "BACKGROUND_THREAD",
        "reject",
        "starts threads or processes, which can finish the work after the timer stopped",
    ),
    Rule("SUBPROCESS", "reject", "runs other programs (subprocess, os.system, os.exec*)"),
    Rule(
        "UNSYNC_MULTISTREAM",
        "reject",
        "launches work on a side stream and never waits for it; "
        "timers that watch one stream miss that work",
    ),
    Rule(
        "SIDE_STREAM",
        "flag",
        "uses a side stream with synchronisation; allowed (the farm times "
        "all streams), kept for review",
    ),
    # -- caches and replays -------------------------------------------------------------------
    Rule(
        "OUTPUT_REPLAY_CACHE",
        "reject",
        "keys results on tensor identity or content (data_ptr, "
        "id, hash, bytes) or memoises the entry point, so repeated inputs replay old outputs "
        "instead of computing",
    ),
    Rule(
        "MODULE_CACHE",
        "flag",
        "fills a module-level container from the entry point; honest "
        "for compiled kernels or configs, a replay cache when it holds outputs",
    ),
    Rule(
        "MEMOISED_HELPER",
        "flag",
        "memoises a helper function (functools.cache / lru_cache); "
        "honest for configs keyed on shapes, suspicious when it returns tensors",
    ),
    Rule(
        "CUDA_GRAPH_REPLAY",
        "reject",
        "captures and replays a CUDA graph, which replays the "
        "captured buffers: a stale result when inputs change",
    ),
    Rule(
        "COMPILE_CUDAGRAPHS",
        "flag",
        "torch.compile with CUDA graphs (reduce-overhead); "
        "allowed, the farm gives fresh inputs every call",
    ),
    Rule(
        "CALL_COUNTER",
        "flag",
        "keeps state across calls of the entry point (a global counter "
        "or flag), the basis of warm-up detection and batch-and-skip",
    ),
    # -- hard-coding --------------------------------------------------------------------------
    Rule(
        "HARDCODED_SHAPES",
        "flag",
        "branches on an exact workload shape; honest code picks "
        "tiles by size ranges, cheats special-case the benchmark shapes",
    ),
    Rule(
        "HARDCODED_OUTPUT",
        "reject",
        "returns precomputed data for an exact shape instead of computing it",
    ),
    Rule(
        "PRECOMPUTED_DATA",
        "flag",
        "embeds or loads a large blob of data (long literals, torch.load, numpy.load)",
    ),
    # -- the outside world --------------------------------------------------------------------
    Rule("RUNTIME_PACKAGE_INSTALL", "reject", "installs packages or adds import paths at run time"),
    Rule(
        "DYNAMIC_CODE",
        "reject",
        "runs code built at run time (exec, eval, compile, __import__ "
        "of computed names, decoding base64/zlib/marshal payloads); nothing the guard can read",
    ),
    Rule("NETWORK_ACCESS", "reject", "opens network connections (socket, urllib, requests, ...)"),
    Rule("FILESYSTEM_WRITE", "reject", "writes, moves or deletes files"),
    Rule("FILESYSTEM_READ", "flag", "reads files; a kernel has no reason to"),
    Rule(
        "SECRET_ACCESS",
        "reject",
        "reads the environment for secrets or seeds, or other "
        "processes' memory and environment under /proc",
    ),
    Rule("ENV_READ", "flag", "reads an environment variable"),
    Rule(
        "RAW_MEMORY",
        "reject",
        "uses ctypes, cffi, mmap, the CUDA driver API or the caching "
        "allocator's internals to read or write memory behind torch's back",
    ),
    Rule("PRIVATE_TORCH_API", "flag", "uses torch._C or other private torch internals"),
    Rule(
        "OUTPUT_CHANNEL",
        "reject",
        "writes to the process's stdout / file descriptors directly "
        "(os.write, sys.__stdout__, dup2, /dev/stdout), the way a forged result would travel",
    ),
    Rule(
        "SIGNAL_HANDLER",
        "reject",
        "installs signal handlers, alarms or exit hooks that can "
        "interrupt the harness or fake its end",
    ),
    Rule("EARLY_EXIT", "reject", "exits the process from the submission (os._exit, sys.exit)"),
    Rule(
        "TENSOR_SUBCLASS",
        "reject",
        "defines a torch.Tensor subclass or __torch_function__ / "
        "__torch_dispatch__ override: outputs that compute lazily or lie when compared",
    ),
    Rule(
        "OBFUSCATED_ATTRIBUTE",
        "reject",
        "sets or deletes attributes by computed names, or "
        "builds the name of a guarded function out of pieces",
    ),
    Rule(
        "COMPUTED_GETATTR",
        "reject",
        "reads an attribute by a computed name (getattr, attrgetter, __getattribute__): "
        "the guard cannot tell which function it reaches",
    ),
    Rule(
        "REFLECTIVE_ACCESS",
        "reject",
        "reaches a module's or object's namespace reflectively (vars(module)[...] =, "
        "__dict__ writes, globals() writes, gc beyond gc.collect) to replace or find what the "
        "guard's name rules watch",
    ),
    Rule(
        "SOURCE_ENCODING",
        "reject",
        "declares a source encoding other than UTF-8 (a PEP 263 coding cookie): Python would "
        "run a different text from the one the guard read; save the file as plain UTF-8",
    ),
    Rule("SYNTAX_ERROR", "flag", "the source does not parse; the guard could not read it"),
    # -- runtime (farm.guard.runtime) ---------------------------------------------------------
    Rule(
        "TIMER_REPLACED",
        "reject",
        "a timing or checking function changed identity or code "
        "while the submission was loaded or running",
    ),
    Rule(
        "THREAD_LEFT_RUNNING",
        "reject",
        "threads created by the submission were still running after it returned",
    ),
    Rule(
        "PROCESS_LEFT_RUNNING",
        "reject",
        "child processes created by the submission were still running after it returned",
    ),
    Rule(
        "NATIVE_THREADS_ADDED",
        "flag",
        "more native threads after a call than before; "
        "libraries start pools lazily, so this is evidence only when it keeps growing",
    ),
    Rule("EXTRA_STREAMS", "flag", "the submission created CUDA streams"),
    Rule(
        "OUTPUT_NOT_TENSOR",
        "reject",
        "an output is not exactly torch.Tensor (a subclass or a lazy wrapper)",
    ),
    Rule(
        "DECOY_KERNEL",
        "reject",
        "the submission defines Triton kernels but none was launched "
        "while it ran: the work was done by something else",
    ),
    # -- plausibility (farm.guard.plausibility) -----------------------------------------------
    Rule(
        "BELOW_SOL_FLOOR",
        "reject",
        "the measured time is below the speed-of-light bound of the "
        "hardware: physically impossible",
    ),
    Rule(
        "WALL_CLOCK_MISMATCH",
        "reject",
        "the reported device time cannot fit in the wall time the trusted side observed",
    ),
    Rule(
        "WALL_CLOCK_STALL",
        "flag",
        "one timing window took longer than its reported times allow while the others fit: "
        "a pause of the host, kept for review",
    ),
    Rule(
        "CHECK_WALL_MISMATCH",
        "reject",
        "the calls the trusted side checked took far longer than the reported time allows: "
        "the reported times are not those of the calls that ran",
    ),
]

RULES: dict[str, Rule] = {r.code: r for r in _RULES}


def rule(code: str) -> Rule:
    """The rule called `code`; KeyError names the unknown code."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"no guard rule '{code}'") from None
