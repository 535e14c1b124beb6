"""Replaying a trace and counting its cost (runs in the replay's sandbox, never beside the
submission's Python, never beside the expected outputs).

`replay(trace, inputs, seed=...)` re-creates every buffer the trace names, runs each PyTorch op
of the trace (from an allowlist) under the counting dispatch mode, and runs each Triton launch
with kernels compiled from the recorded source (tritonsrc) under the counting interpreter.

Large launches are counted from a sample of their programs (farm.hardware.npu_sim.sampling).

Outputs: an element is *produced* when a step that ran in full wrote it: a PyTorch op (not an
allocation), or a program instance that ran every iteration of its loops. What a program read
does not matter (a store after a load of an uninitialised scratch buffer is produced, and
compared), with one exception: data that the programs a sample left out would have written.
So that later steps read real values, a sampled launch of at most FILL_PROGRAMS programs whose
buffers a later step uses runs its other programs too, for values only (uncounted); past that,
its buffers are *partial*, and a program or op that reads an unwritten part of them produces
nothing. The caller compares every produced element of the outputs with the reference.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import os
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from farm.hardware.npu_sim import sampling
from farm.hardware.npu_sim.costmodel import CostParams, LaunchRecord
from farm.hardware.npu_sim.ledger import Ledger
from farm.hardware.npu_sim.limits import SimLimitExceeded, SimLimits
from farm.hardware.npu_sim.report import SimReport, build_report
from farm.hardware.npu_sim.trace import (
    SUPPORTED,
    Constexpr,
    DType,
    Launch,
    TensorRef,
    TorchOp,
    Trace,
    TraceError,
    Unsupported,
)

MAX_GRID = 1 << 26  # programs per launch (sampled launches are not run program by program)
FILL_PROGRAMS = 1024  # a sampled launch read by later steps runs in full for values up to this

# PyTorch ops a trace may hold (overload packets of aten); others are refused.
TORCH_OPS = frozenset(
    [
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "fill",
        "zero",
        "copy",
        "clone",
        "contiguous",
        "_to_copy",
        "to",
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "exp",
        "exp2",
        "log",
        "log2",
        "sqrt",
        "rsqrt",
        "pow",
        "abs",
        "maximum",
        "minimum",
        "max",
        "min",
        "amax",
        "amin",
        "sum",
        "mean",
        "var_mean",
        "prod",
        "where",
        "sigmoid",
        "silu",
        "gelu",
        "tanh",
        "relu",
        "_softmax",
        "_log_softmax",
        "softmax",
        "log_softmax",
        "mm",
        "bmm",
        "addmm",
        "baddbmm",
        "matmul",
        "dot",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_attention_math",
        "cat",
        "stack",
        "index_select",
        "gather",
        "masked_fill",
        "reciprocal",
        "_fused_rms_norm",
        "rms_norm",
        "native_layer_norm",
        "erf",
        "cumsum",
        "sort",
        "topk",
        "argmax",
        "clamp",
        "clamp_min",
        "clamp_max",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "logical_not",
        "bitwise_and",
        "bitwise_or",
        "rsub",
        "sign",
        "floor",
        "ceil",
        "round",
        "tril",
        "triu",
        "arange",
    ]
)


def replay_limits() -> SimLimits:
    """The environment's limits (FARM_NPU_SIM_MAX_WALL_S, ..._MAX_LAUNCHES); programs and bytes
    are not capped here (sampled launches do not run program by program)."""
    return dataclasses.replace(SimLimits.from_env(), max_programs=MAX_GRID, max_bytes=1 << 62)


class UncountedData(TraceError):
    """The trace uses data that no recorded step produced (work done outside the trace)."""


@dataclass
class ReplayResult:
    """The trusted cost of a trace, and the outputs the replay itself produced."""

    report: SimReport
    outputs: list[torch.Tensor]
    known: list[torch.Tensor | None]  # flat indices of known output elements; None: all
    sampled: bool  # some launch was counted from a sample of its programs
    inputs_written: list[int]  # inputs that counted work stored into
    outputs_short: list[int]  # outputs that counted work did not write in full
    sim_wall_s: float  # wall seconds spent counting the trace (Triton programs run included)
    value_wall_s: float = 0.0  # wall seconds spent on values only: PyTorch ops, full re-runs


class _State:
    """The process's one installation of the counting hooks (trusted process only)."""

    ledger: Any = None
    builder: Any = None
    mode_cls: Any = None
    params: CostParams | None = None


def start() -> None:
    """The replay's start-up, before any trace: Triton's interpreter and the counting hooks."""
    _install()


def _install() -> type[_State]:
    """Install the counting hooks in this (trusted) process, again if something replaced them
    (tests run the in-worker simulator in the same process)."""
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is first imported
    from triton.runtime import interpreter as interp

    if _State.builder is None or interp.interpreter_builder is not _State.builder:
        from farm.hardware.npu_sim.costmodel import CostParams
        from farm.hardware.npu_sim.hooks import install_hooks
        from farm.hardware.npu_sim.spec import NPU_SIM_V1
        from farm.hardware.npu_sim.torch_mode import make_mode_class

        _State.params = CostParams.from_spec(NPU_SIM_V1)
        installed = install_hooks(lambda: _State.ledger, lambda: None)
        _State.builder = installed[next(k for k in installed if k[1] == "builder")]
        sampling.Loops.ledger_of = staticmethod(lambda: _State.ledger)
        _State.mode_cls = make_mode_class(lambda: _State.ledger, _State.params)
        with _State.mode_cls():
            torch.zeros(1).add_(1)
    return _State


class ReplayLedger(Ledger):
    """A ledger that also knows which stored bytes came from known data."""

    def __init__(self, limits: SimLimits, buffer_bytes: int) -> None:
        super().__init__(limits, buffer_bytes)
        self.known: dict[int, Any] = {}  # storage pointer -> True | False | bool array (bytes)
        self.tainted = False  # the program now running skipped loop iterations or read data
        self.partial: set[int] = set()  # storages a sampled launch wrote only in part
        self.stored: list[tuple[int, np.ndarray, int]] = []  # (ptr, offsets, esize)
        self.prog_writes: dict[int, int] = {}
        self.launch_writes: list[tuple[tuple[int, int], ...]] = []
        self.sizes: dict[int, int] = {}  # storage pointer -> bytes
        self.known_at: dict[int, list[np.ndarray]] = {}  # byte offsets once marked known
        self.program_iters: dict[tuple, int] = {}  # loop iterations of a loop-sampled program
        self.value_budget = sampling.VALUE_ITERATIONS
        self.value_spent = 0.0

    def scratch(self) -> ReplayLedger:
        """A ledger for a run whose counts are discarded but whose known stores count."""
        other = ReplayLedger(self.limits, self.buffer_bytes)
        other.known, other.known_at, other.sizes = self.known, self.known_at, self.sizes
        other.amap = self.amap
        other.program = type(self.program)(self.program.buffer) if self.program else None
        return other

    def seal(self, record: LaunchRecord) -> None:
        """Append a launch (no hash chain: nothing else runs in this process)."""
        if len(self.launches) + 1 > self.limits.max_launches:
            raise self.trip(
                SimLimitExceeded("max_launches", len(self.launches) + 1, self.limits.max_launches)
            )
        self.launches.append(record)

    def begin_program(self) -> None:
        super().begin_program()
        self.tainted, self.stored, self.prog_writes = False, [], {}

    def end_program(self) -> None:
        super().end_program()
        if self.tainted:
            for ptr, offs, esize in self.stored:
                self._mark(ptr, offs, esize, False)
        self.launch_writes.append(tuple(sorted(self.prog_writes.items())))

    def _where(self, addrs: np.ndarray) -> list[tuple[int, np.ndarray]]:
        amap = self.amap
        assert amap is not None
        idx, rel = amap.locate(addrs)
        out = []
        for i in np.unique(idx[idx >= 0]):
            sel = idx == i
            out.append((amap.keys[i], rel[sel] - int(amap._bases[i])))
        return out

    def count_load(self, addrs: np.ndarray, esize: int) -> None:
        super().count_load(addrs, esize)
        if self.program is None or self.tainted or not self.partial:
            return
        for ptr, offs in self._where(addrs):
            if ptr in self.partial and not self.known_bytes(ptr, offs):
                self.tainted = True
                return

    def known_bytes(self, ptr: int, offs: np.ndarray) -> bool:
        state = self.known.get(ptr, False)
        return bool(state) if not isinstance(state, np.ndarray) else bool(state[offs].all())

    def count_store(self, addrs: np.ndarray, esize: int) -> None:
        super().count_store(addrs, esize)
        if self.program is None:
            return
        for ptr, offs in self._where(addrs):
            self.prog_writes[ptr] = self.prog_writes.get(ptr, 0) + int(offs.size) * esize
            self._mark(ptr, offs, esize, not self.tainted)
            self.stored.append((ptr, offs, esize))

    def _mark(self, ptr: int, offs: np.ndarray, esize: int, value: bool) -> None:
        state = self.known.get(ptr, False)
        if state is value:
            return
        if not isinstance(state, np.ndarray):
            size = self.sizes[ptr]
            state = np.ones(size, bool) if state else np.zeros(size, bool)  # zeros: lazy pages
            self.known[ptr] = state
        for b in range(esize):
            state[offs + b] = value
        if value:
            self.known_at.setdefault(ptr, []).append(offs)


# -- buffers --------------------------------------------------------------------------------


class Buffers:
    """The storages a trace names, by buffer number."""

    def __init__(self, trace: Trace, led: ReplayLedger) -> None:
        self.trace, self.led = trace, led
        self.storages: dict[int, torch.UntypedStorage] = {}
        led.sizes = {}

    def bind(self, buffer: int, storage: torch.UntypedStorage, known: bool) -> None:
        if buffer in self.storages:
            raise TraceError(f"buffer {buffer} is made twice")
        if not 0 <= buffer < len(self.trace.buffers):
            raise TraceError(f"buffer {buffer} is not declared")
        if storage.nbytes() != self.trace.buffers[buffer]:
            raise TraceError(
                f"buffer {buffer} has {storage.nbytes()} bytes here, "
                f"{self.trace.buffers[buffer]} in the trace"
            )
        self.storages[buffer] = storage
        self.led.sizes[storage.data_ptr()] = storage.nbytes()
        self.led.known[storage.data_ptr()] = known

    def tensor(self, ref: TensorRef) -> torch.Tensor:
        storage = self.storages.get(ref.buffer)
        if storage is None:
            raise UncountedData(
                f"buffer {ref.buffer} is used (as an output or an argument) but no recorded "
                "step made it: its data came from work the trace does not hold"
            )
        dtype = _dtype(ref.dtype)
        esize = torch.empty((), dtype=dtype).element_size()
        span = (
            1 + sum((s - 1) * st for s, st in zip(ref.shape, ref.stride)) if all(ref.shape) else 0
        )
        if ref.offset < 0 or any(s < 0 for s in ref.shape) or any(st < 0 for st in ref.stride):
            raise TraceError("negative offsets, sizes or strides")
        if (ref.offset + span) * esize > storage.nbytes():
            raise TraceError(f"a tensor of buffer {ref.buffer} reaches past its storage")
        t = torch.empty(0, dtype=dtype)
        t.set_(storage, ref.offset, ref.shape, ref.stride)
        return t

    def known(self, t: torch.Tensor) -> Any:
        return self.led.known.get(t.untyped_storage().data_ptr(), False)


def _dtype(name: str) -> torch.dtype:
    dt = getattr(torch, name, None)
    if not isinstance(dt, torch.dtype):
        raise TraceError(f"unknown dtype {name!r}")
    return dt


# -- the replay -----------------------------------------------------------------------------


def replay(
    trace: Trace,
    inputs: Sequence[torch.Tensor],
    *,
    seed: int,
    limits: SimLimits | None = None,
) -> ReplayResult:
    """Run and count `trace` from `inputs` (trusted), sampling large launches with `seed`.

    Raises TraceError (the trace does not fit the inputs or asks for what cannot be replayed),
    tritonsrc.KernelRejected (a kernel is not Triton language only), SimLimitExceeded.
    """
    state = _install()
    assert state.params is not None
    limits = limits or replay_limits()
    led = ReplayLedger(limits, state.params.core_buffer_bytes)
    bufs = Buffers(trace, led)
    _bind_inputs(trace, inputs, bufs)
    kernels = _compile(trace)
    rng = random.Random(seed)
    started = time.perf_counter()
    sampled = False
    used_later = buffers_used_later(trace)
    state.ledger = led
    try:
        for i, step in enumerate(trace.steps):
            if isinstance(step, Launch):
                sampled |= _launch(step, kernels, bufs, led, rng, fill=used_later[i])
            else:
                _torch_op(step, bufs, led, state.mode_cls)
    finally:
        state.ledger = None
    if led.tripped is not None:
        raise led.tripped
    outputs = [bufs.tensor(ref) for ref in trace.outputs]
    report = build_report(led.launches, state.params, None, [])
    known = [_known_elements(t, led) for t in outputs]
    written = [i for i, t in enumerate(inputs) if led.written.get(t.untyped_storage().data_ptr())]
    short = [
        i
        for i, t in enumerate(outputs)
        if led.written.get(t.untyped_storage().data_ptr(), 0) < t.numel() * t.element_size()
    ]
    wall = time.perf_counter() - started - led.value_spent
    return ReplayResult(report, outputs, known, sampled, written, short, wall, led.value_spent)


def buffers_used_later(trace: Trace) -> list[set[int]]:
    """For each step, the buffers that later steps take as arguments."""
    out: list[set[int]] = []
    later: set[int] = set()
    for step in reversed(trace.steps):
        out.append(set(later))
        later |= _buffers_of(step)
    return out[::-1]


def _buffers_of(step: Launch | TorchOp) -> set[int]:
    values = [v for _, v in step.args] if isinstance(step, Launch) else [step.args, step.kwargs]
    return {t.buffer for t in _leaves(values) if isinstance(t, TensorRef)}


def fill_programs(trace: Trace) -> int:
    """Programs the replay runs for values only: every program of each launch of more than
    FULL_PROGRAMS and at most FILL_PROGRAMS whose buffers a later step uses."""
    used_later = buffers_used_later(trace)
    return sum(
        math.prod(step.grid)
        for i, step in enumerate(trace.steps)
        if isinstance(step, Launch)
        and sampling.FULL_PROGRAMS < math.prod(step.grid) <= FILL_PROGRAMS
        and _buffers_of(step) & used_later[i]
    )


def _bind_inputs(trace: Trace, inputs: Sequence[torch.Tensor], bufs: Buffers) -> None:
    if len(trace.inputs) != len(inputs):
        raise TraceError(f"the trace has {len(trace.inputs)} inputs, the problem {len(inputs)}")
    for ref, t in zip(trace.inputs, inputs):
        if ref.buffer not in bufs.storages:
            bufs.bind(ref.buffer, t.untyped_storage(), True)
        if bufs.storages[ref.buffer].data_ptr() != t.untyped_storage().data_ptr():
            raise TraceError("two inputs share a buffer in the trace")
        if (ref.shape, ref.stride, ref.offset) != (tuple(t.shape), t.stride(), t.storage_offset()):
            raise TraceError("an input's shape or layout differs from the trusted input's")


def _compile(trace: Trace) -> dict[str, Any]:
    from farm.hardware.npu_sim.tritonsrc import compile_kernel

    out = {}
    for digest, kernel in trace.kernels.items():
        if kernel.digest != digest:
            raise TraceError(f"kernel {kernel.name}: its source does not hash to its name")
        out[digest] = compile_kernel(kernel)
    return out


def _known_elements(t: torch.Tensor, led: ReplayLedger) -> torch.Tensor | None:
    """Flat indices of the elements of `t` produced from known data (None: every element)."""
    ptr = t.untyped_storage().data_ptr()
    state = led.known.get(ptr, False)
    if state is True:
        return None
    if state is False or not t.is_contiguous():
        return torch.zeros(0, dtype=torch.long)
    if state.all():
        return None
    esize = t.element_size()
    offs = np.unique(np.concatenate(led.known_at.get(ptr, [np.zeros(0, np.int64)])))
    offs = offs[state[offs]]
    offs = offs[offs % esize == 0] // esize - t.storage_offset()
    offs = offs[(offs >= 0) & (offs < t.numel())]
    ends = state[(offs + t.storage_offset()) * esize + esize - 1]
    return torch.from_numpy(offs[ends])


# -- PyTorch ops ----------------------------------------------------------------------------


def check_trace(trace: Trace) -> None:
    """Refuse, before anything runs, what the replay would refuse at its step: a PyTorch op
    it does not replay (Unsupported), a grid that is empty or over MAX_GRID, an output of an
    unknown dtype (TraceError). The trusted side calls it before it sizes the replay."""
    for step in trace.steps:
        if isinstance(step, TorchOp):
            _op(step.op)
        else:
            _programs(step.grid)
    for ref in trace.outputs:
        _dtype(ref.dtype)


def _programs(grid: tuple[int, int, int]) -> int:
    programs = math.prod(grid)
    if min(grid) < 1 or programs > MAX_GRID:
        raise TraceError(f"grid {grid} is empty or has more than {MAX_GRID} programs")
    return programs


def _op(name: str) -> Any:
    """The aten overload a step names. Raises Unsupported for an op npu-sim does not replay,
    TraceError for a name that is not an overload of it."""
    parts = name.split(".")
    if len(parts) not in (2, 3) or parts[0] != "aten" or parts[1] not in TORCH_OPS:
        base = parts[1] if len(parts) > 1 else name
        if not (base.endswith("_") and base[:-1] in TORCH_OPS):
            raise Unsupported(
                f"PyTorch op {name} is not one npu-sim replays; {SUPPORTED}: "
                f"{', '.join(sorted(TORCH_OPS))}"
            )
    packet = getattr(torch.ops.aten, parts[1], None)
    op = getattr(packet, parts[2] if len(parts) == 3 else "default", None)
    if not isinstance(op, torch._ops.OpOverload):
        raise TraceError(f"PyTorch op {name} is not an overload of aten.{parts[1]}")
    return op


def _value(v: Any, bufs: Buffers) -> Any:
    if isinstance(v, TensorRef):
        return bufs.tensor(v)
    if isinstance(v, DType):
        return _dtype(v.name)
    if isinstance(v, tuple):
        return [_value(x, bufs) for x in v]
    if isinstance(v, dict):
        return {k: _value(x, bufs) for k, x in v.items()}
    return v


def _torch_op(step: TorchOp, bufs: Buffers, led: ReplayLedger, mode_cls: Any) -> None:
    op = _op(step.op)
    args = _value(step.args, bufs)
    kwargs = _value(step.kwargs, bufs)
    reads = [t for t in _leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    # it ran in full; an allocation produces nothing, nor does an op over skipped data
    known = "empty" not in step.op and not any(
        t.untyped_storage().data_ptr() in led.partial and bufs.known(t) is not True for t in reads
    )
    started = time.perf_counter()
    try:
        with mode_cls():
            out = op(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError, IndexError) as exc:
        raise TraceError(f"{step.op} does not replay: {exc}") from None
    # The op is costed from its shapes; running it only gives the output check its values.
    led.value_spent += time.perf_counter() - started
    outs = [t for t in _leaves(out) if isinstance(t, torch.Tensor)]
    if len(outs) != len(step.outputs):
        raise TraceError(f"{step.op} made {len(outs)} outputs here, {len(step.outputs)} there")
    for t, ref in zip(outs, step.outputs):
        if (tuple(t.shape), t.stride(), str(t.dtype).removeprefix("torch.")) != (
            ref.shape,
            ref.stride,
            ref.dtype,
        ):
            raise TraceError(f"{step.op}: an output's shape, layout or dtype differs")
        if ref.buffer in bufs.storages:
            if bufs.storages[ref.buffer].data_ptr() != t.untyped_storage().data_ptr():
                raise TraceError(f"{step.op}: wrote another buffer than the trace says")
            led.known[t.untyped_storage().data_ptr()] = known
        else:
            bufs.bind(ref.buffer, t.untyped_storage(), known)


def _leaves(v: Any) -> list[Any]:
    from torch.utils._pytree import tree_leaves

    return list(tree_leaves(v))


# -- Triton launches ------------------------------------------------------------------------


def _launch(
    step: Launch,
    kernels: dict[str, Any],
    bufs: Buffers,
    led: ReplayLedger,
    rng: random.Random,
    *,
    fill: set[int],
) -> bool:
    """Run (a sample of) one launch and record it; True when it was sampled. When a buffer of
    the launch is in `fill` (a later step uses it), a sampled launch also runs every other
    program, with every loop iteration, for values only."""
    jit = kernels.get(step.kernel)
    if jit is None:
        raise TraceError(f"launch of unknown kernel {step.kernel[:12]}")
    grid = step.grid
    programs = _programs(grid)
    kwargs = {name: _launch_arg(v, bufs) for name, v in step.args}
    chosen = sampling.plan(grid, rng) if programs > sampling.FULL_PROGRAMS else None
    with _interpreted(jit, kwargs, grid, led) as run_program:
        if chosen is None:
            _run_all(grid, run_program)
            led.end_launch(jit.__name__, grid)
            return False
        table = _sample(chosen, run_program, led)
        if table is None:  # not uniform: full simulation
            led.programs, led.launch_writes = [], []
            _run_all(grid, run_program)
            led.end_launch(jit.__name__, grid)
            return False
        read_later = _buffers_of(step) & fill
        if read_later and programs <= FILL_PROGRAMS:
            _fill(grid, chosen, run_program, led)
        elif read_later:
            led.partial |= {bufs.storages[b].data_ptr() for b in read_later}
    runs = sampling.expand(grid, table)
    led.seal(LaunchRecord(name=jit.__name__, kind="triton", grid=grid, programs=(), runs=runs))
    led.programs, led.program, led.amap = [], None, None
    return True


def _sample(
    chosen: dict[tuple, tuple[int, list[tuple]]], run_program: Any, led: ReplayLedger
) -> dict | None:
    """One record per class from the sampled programs: first with sampled loops, checked by
    re-running one program per class in full; when that check fails, again with every loop
    iteration. None when a class is not uniform."""
    written = dict(led.written)
    led.program_iters = {}
    sampling.Loops.on = True
    try:
        table = sampling.sampled_records(chosen, run_program, led)
    finally:
        sampling.Loops.on = False
    if table is not None and sampling.values_agree(chosen, table, run_program, led):
        return table
    if not led.program_iters:  # no loop was sampled: nothing else to try
        return None
    led.written, led.program_iters = written, {}
    return sampling.sampled_records(chosen, run_program, led)


def _fill(
    grid: tuple[int, int, int],
    chosen: dict[tuple, tuple[int, list[tuple]]],
    run_program: Any,
    led: ReplayLedger,
) -> None:
    """Run, uncounted, every program the sample left out and every sampled one whose loops
    were sampled: the launch's stores are then all produced, for the steps that read them."""
    ran = {pid for _, picks in chosen.values() for pid in picks}
    started = time.perf_counter()
    for x in range(grid[0]):
        for y in range(grid[1]):
            for z in range(grid[2]):
                pid = (x, y, z)
                if pid not in ran or pid in led.program_iters:
                    run_program(pid, counted=False)
    led.value_spent += time.perf_counter() - started


def _run_all(grid: tuple[int, int, int], run_program: Any) -> None:
    for x in range(grid[0]):
        for y in range(grid[1]):
            for z in range(grid[2]):
                run_program((x, y, z))


def _launch_arg(v: Any, bufs: Buffers) -> Any:
    import triton.language as tl

    if isinstance(v, TensorRef):
        return bufs.tensor(v)
    if isinstance(v, Constexpr):
        c = v.value
        if isinstance(c, DType):
            if not c.name.startswith("tl.") or not isinstance(
                getattr(tl, c.name[3:], None), tl.dtype
            ):
                raise TraceError(f"unknown Triton dtype {c.name}")
            return getattr(tl, c.name[3:])
        if c is not None and not isinstance(c, (bool, int, float)):
            raise TraceError("constexpr arguments are numbers, booleans, None or tl dtypes")
        return c
    if v is None or isinstance(v, (bool, int, float)):
        return v
    raise TraceError(f"launch argument of type {type(v).__name__} cannot be replayed")


@contextlib.contextmanager
def _interpreted(
    jit: Any, kwargs: dict[str, Any], grid: tuple[int, int, int], led: ReplayLedger
) -> Iterator[Any]:
    """A function that runs one program instance of `jit(**kwargs)`, counted into `led`."""
    from triton.runtime import interpreter as interp

    from farm.hardware.npu_sim.hooks import _tensors
    from farm.hardware.npu_sim.memory import AddressMap

    fn = jit.rewrite()
    executor = interp.GridExecutor(fn, jit.arg_names, (1, 1, 1))
    try:
        call = inspect.getcallargs(fn, **kwargs)
    except TypeError as exc:
        raise TraceError(f"kernel {jit.__name__}: {exc}") from None
    call = {k: v if k in executor.constexprs else interp._implicit_cvt(v) for k, v in call.items()}
    scope = interp._patch_lang(fn)
    builder = _State.builder
    builder.set_grid_dim(*grid)
    led.begin_launch(AddressMap(_tensors(list(kwargs.values()))))
    led.launch_writes = []

    def run_program(pid: tuple[int, int, int], counted: bool = True) -> ReplayLedger:
        target = led if counted else led.scratch()
        _State.ledger = target
        sampling.Loops.executed = sampling.Loops.skipped = 0
        target.begin_program()
        builder.set_grid_idx(*pid)
        try:
            fn(**call)
        except SimLimitExceeded:
            raise
        except Exception as exc:
            raise TraceError(f"kernel {jit.__name__} failed in program {pid}: {exc!r}") from None
        finally:
            _State.ledger = led
        target.end_program()
        if counted and sampling.Loops.skipped:  # iterations in full, for values_agree
            led.program_iters.setdefault(pid, sampling.Loops.executed + sampling.Loops.skipped)
        return target

    try:
        yield run_program
    finally:
        scope.restore()
