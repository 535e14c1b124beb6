"""A call's launches, recorded on the untrusted side and replayed on the trusted side.

The worker runs the submission's host code with a `Recorder` in place: every Triton launch is
recorded (kernel source text and its hash, grid, arguments) instead of being run, and every
PyTorch op that allocates or computes is recorded (name, arguments) and runs as usual. The
trace is evidence, not a claim of cost: the trusted replay (farm.hardware.npu_sim.replay)
recompiles the kernels from their source, re-runs the work from inputs it makes itself and
counts the cost on its own. A trace that leaves out work produces wrong outputs there.

Tensors are named by buffer: buffer `i < len(inputs)` is input i's storage, later ones are
storages that recorded ops allocated, numbered in order of first appearance. A tensor is
(buffer, storage offset, shape, stride, dtype), in elements.
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

TRACE_SCHEMA = "npu-sim.trace/1"


class TraceError(Exception):
    """The call cannot be recorded as a replayable trace (what and why is in the message).
    `status`: the workload status it gives."""

    status = "RUNTIME_ERROR"


class Unsupported(TraceError):
    """The call uses what npu-sim does not simulate (a PyTorch op it does not replay,
    @triton.autotune): a gap of the simulator, not a fault of the kernel."""

    status = "UNSUPPORTED"


# What npu-sim runs, for the messages of Unsupported.
SUPPORTED = (
    "npu-sim runs Triton kernels written in Triton language with fixed configurations "
    "(no @triton.autotune) and the PyTorch ops listed in farm.hardware.npu_sim.replay.TORCH_OPS"
)


@dataclass(frozen=True)
class TensorRef:
    buffer: int
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: str

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.buffer,
            "offset": self.offset,
            "shape": list(self.shape),
            "stride": list(self.stride),
            "dtype": self.dtype,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TensorRef:
        return cls(
            buffer=_count(d["t"]),
            offset=_count(d["offset"]),
            shape=tuple(_count(s) for s in d["shape"]),
            stride=tuple(_int(s) for s in d["stride"]),
            dtype=str(d["dtype"]),
        )


@dataclass(frozen=True)
class Kernel:
    """A @triton.jit function's source (decorator included), the helpers it calls and the
    module-level `tl.constexpr` globals they name (values: numbers, booleans, None or
    a DType "tl.<name>")."""

    name: str
    source: str
    helpers: tuple[tuple[str, str], ...] = ()  # (name, source) of called @triton.jit functions
    constants: tuple[tuple[str, Any], ...] = ()  # (name, value) of module-level constexprs

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.source.encode())
        for name, src in self.helpers:
            h.update(b"\0" + name.encode() + b"\0" + src.encode())
        for name, value in self.constants:
            h.update(b"\1" + name.encode() + b"\0" + repr(_value_json(value)).encode())
        return h.hexdigest()


@dataclass(frozen=True)
class Launch:
    """One Triton launch: the kernel (by digest), its grid and its arguments by name."""

    kernel: str
    grid: tuple[int, int, int]
    args: tuple[tuple[str, Any], ...]  # name -> TensorRef | scalar | {"constexpr": v}


@dataclass(frozen=True)
class TorchOp:
    """One aten op: its overload name, arguments (TensorRefs inside) and output tensors."""

    op: str
    args: Any
    kwargs: Any
    outputs: tuple[TensorRef, ...]


@dataclass
class Trace:
    inputs: list[TensorRef]
    buffers: list[int]  # bytes of each buffer's storage
    steps: list[Launch | TorchOp]
    outputs: list[TensorRef]
    kernels: dict[str, Kernel] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        steps: list[dict[str, Any]] = []
        for s in self.steps:
            if isinstance(s, Launch):
                args = [[k, _value_json(v)] for k, v in s.args]
                steps.append({"launch": s.kernel, "grid": list(s.grid), "args": args})
            else:
                steps.append(
                    {
                        "op": s.op,
                        "args": _value_json(s.args),
                        "kwargs": _value_json(s.kwargs),
                        "outputs": [o.to_json() for o in s.outputs],
                    }
                )
        return {
            "schema": TRACE_SCHEMA,
            "inputs": [t.to_json() for t in self.inputs],
            "buffers": list(self.buffers),
            "steps": steps,
            "outputs": [t.to_json() for t in self.outputs],
            "kernels": {
                k: {
                    "name": v.name,
                    "source": v.source,
                    "helpers": [list(h) for h in v.helpers],
                    "constants": [[n, _value_json(c)] for n, c in v.constants],
                }
                for k, v in self.kernels.items()
            },
        }

    @classmethod
    def from_json(cls, d: Any) -> Trace:
        """Parse an untrusted trace; TraceError on anything malformed."""
        try:
            if d.get("schema") != TRACE_SCHEMA:
                raise TraceError(f"not a {TRACE_SCHEMA} trace")
            kernels = {
                str(k): Kernel(
                    name=str(v["name"]),
                    source=str(v["source"]),
                    helpers=tuple((str(n), str(s)) for n, s in v.get("helpers", [])),
                    constants=tuple(
                        (str(n), _constant(_value_parse(c))) for n, c in v.get("constants", [])
                    ),
                )
                for k, v in d["kernels"].items()
            }
            steps: list[Launch | TorchOp] = []
            for s in d["steps"]:
                if "launch" in s:
                    grid = tuple(_int(g) for g in s["grid"])
                    if len(grid) != 3:
                        raise TraceError("a launch grid has three axes")
                    args = tuple((str(k), _value_parse(v)) for k, v in s["args"])
                    steps.append(Launch(str(s["launch"]), grid, args))
                else:
                    outs = tuple(TensorRef.from_json(o) for o in s["outputs"])
                    steps.append(
                        TorchOp(
                            str(s["op"]), _value_parse(s["args"]), _value_parse(s["kwargs"]), outs
                        )
                    )
            return cls(
                inputs=[TensorRef.from_json(t) for t in d["inputs"]],
                buffers=[_count(b) for b in d["buffers"]],
                steps=steps,
                outputs=[TensorRef.from_json(t) for t in d["outputs"]],
                kernels=kernels,
            )
        except TraceError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise TraceError(f"malformed trace: {type(exc).__name__}: {exc}") from None


def _constant(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, DType)):
        return v
    raise TraceError("a kernel's constants are numbers, booleans, None or tl dtypes")


def _int(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TraceError(f"expected an integer, got {type(v).__name__}")
    return v


def _count(v: Any) -> int:
    """A size, offset or buffer number: an integer, not negative."""
    n = _int(v)
    if n < 0:
        raise TraceError(f"expected a count, got {n}")
    return n


def _value_json(v: Any) -> Any:
    if isinstance(v, TensorRef):
        return {"tensor": v.to_json()}
    if isinstance(v, Constexpr):
        return {"constexpr": _value_json(v.value)}
    if isinstance(v, DType):
        return {"dtype": v.name}
    if isinstance(v, (list, tuple)):
        return [_value_json(x) for x in v]
    if isinstance(v, dict):
        return {"dict": [[k, _value_json(x)] for k, x in v.items()]}
    return v


def _value_parse(v: Any) -> Any:
    if isinstance(v, dict):
        if "tensor" in v:
            return TensorRef.from_json(v["tensor"])
        if "constexpr" in v:
            return Constexpr(_value_parse(v["constexpr"]))
        if "dtype" in v:
            return DType(str(v["dtype"]))
        if "dict" in v:
            return {str(k): _value_parse(x) for k, x in v["dict"]}
        raise TraceError("unknown value in trace")
    if isinstance(v, list):
        return tuple(_value_parse(x) for x in v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TraceError(f"unsupported value of type {type(v).__name__} in trace")


@dataclass(frozen=True)
class Constexpr:
    value: Any


@dataclass(frozen=True)
class DType:
    """A torch dtype ("float32") or, with the "tl." prefix, a Triton one ("tl.float16")."""

    name: str


# -- recording (untrusted side) -------------------------------------------------------------


def kernel_of(fn: Any) -> Kernel:
    """The source of a @triton.jit function, of the @triton.jit helpers it names and the
    module-level `tl.constexpr` globals they name."""
    found = _helper_functions(fn)
    helpers = {name: _source(inner) for name, inner in found.items()}
    constants: dict[str, Any] = {}
    for f in [fn, *found.values()]:
        constants.update(_constants_of(f))
    return Kernel(
        fn.__name__,
        _source(fn),
        tuple(sorted(helpers.items())),
        tuple(sorted(constants.items())),
    )


def _helper_functions(fn: Any) -> dict[str, Any]:
    """The @triton.jit functions `fn` names, and those they name, by name."""
    found: dict[str, Any] = {}

    def walk(f: Any) -> None:
        for name in f.__code__.co_names:
            obj = f.__globals__.get(name)
            inner = getattr(obj, "fn", None)
            if inner is not None and name not in found and _is_jit(obj):
                found[name] = inner
                walk(inner)

    walk(fn)
    return found


def _constants_of(fn: Any) -> dict[str, Any]:
    """The module-level `tl.constexpr` globals `fn` names, as trace values."""
    import triton.language as tl

    out: dict[str, Any] = {}
    for name in fn.__code__.co_names:
        obj = fn.__globals__.get(name)
        if not isinstance(obj, tl.constexpr):
            continue
        value = obj.value
        if isinstance(value, tl.dtype):
            out[name] = DType("tl." + value.name)
        elif value is None or isinstance(value, (bool, int, float)):
            out[name] = value
        else:
            raise TraceError(
                f"the module-level constexpr {name} holds a {type(value).__name__}; "
                "npu-sim replays numbers, booleans, None and tl dtypes"
            )
    return out


def _source(fn: Any) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise TraceError(
            f"the source of Triton kernel {fn.__name__} is not available: {exc}"
        ) from None


def _is_jit(obj: Any) -> bool:
    from triton.runtime.jit import JITFunction

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover
        return isinstance(obj, JITFunction)
    return isinstance(obj, (JITFunction, InterpretedFunction))


class Recorder:
    """Builds a Trace while the submission's host code runs (see `recording`)."""

    def __init__(self, inputs: Sequence[torch.Tensor]) -> None:
        self.storages: dict[int, int] = {}  # storage pointer -> buffer
        self.buffers: list[int] = []
        self.steps: list[Launch | TorchOp] = []
        self.kernels: dict[str, Kernel] = {}
        self.keep: list[Any] = []  # recorded storages stay alive: no pointer is reused
        self.inputs = [self._ref(t, new=True) for t in inputs]

    def _ref(self, t: torch.Tensor, *, new: bool = False) -> TensorRef:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in self.storages or storage.nbytes() == 0:
            if not new:
                raise TraceError(
                    "the call used a tensor that it did not make and that is not an input "
                    f"(shape {tuple(t.shape)}, {t.dtype}); npu-sim replays only what the call "
                    "does: allocate buffers inside kernel(), not at import"
                )
            self.storages[ptr] = len(self.buffers)
            self.buffers.append(storage.nbytes())
            self.keep.append(storage)
        return TensorRef(
            self.storages[ptr],
            int(t.storage_offset()),
            tuple(t.shape),
            tuple(t.stride()),
            str(t.dtype).removeprefix("torch."),
        )

    def value(self, v: Any, *, outputs: bool = False) -> Any:
        if isinstance(v, torch.Tensor):
            return self._ref(v, new=outputs)
        if isinstance(v, torch.dtype):
            return DType(str(v).removeprefix("torch."))
        if isinstance(v, (list, tuple)):
            return tuple(self.value(x, outputs=outputs) for x in v)
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, (torch.device, torch.layout, torch.memory_format)):
            return None  # CPU everywhere; strides are recorded on every tensor
        raise TraceError(f"an argument of type {type(v).__name__} cannot be recorded")

    def launch(self, fn: Any, grid: Sequence[int], call: dict[str, Any], constexprs: list) -> None:
        kernel = kernel_of(fn)
        self.kernels.setdefault(kernel.digest, kernel)
        args: list[tuple[str, Any]] = []
        for name, v in call.items():
            if name in constexprs:
                args.append((name, Constexpr(self._constexpr(v))))
            elif isinstance(v, torch.Tensor):
                args.append((name, self._ref(v)))
            elif isinstance(v, (bool, int, float)) or v is None:
                args.append((name, v))
            else:
                raise TraceError(
                    f"argument {name} of Triton kernel {fn.__name__} is a "
                    f"{type(v).__name__}; npu-sim replays tensors and scalars"
                )
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        self.steps.append(Launch(kernel.digest, grid, tuple(args)))  # type: ignore[arg-type]

    def _constexpr(self, v: Any) -> Any:
        import triton.language as tl

        v = getattr(v, "value", v) if type(v).__name__ == "constexpr" else v
        if isinstance(v, tl.dtype):
            return DType("tl." + v.name)
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        raise TraceError(f"a constexpr of type {type(v).__name__} cannot be recorded")

    def op(self, func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        rec_args, rec_kwargs = self.value(args), {k: self.value(v) for k, v in kwargs.items()}
        outs = [t for t in _leaves(out) if isinstance(t, torch.Tensor)]
        refs = tuple(self._ref(t, new=True) for t in outs)
        self.steps.append(TorchOp(str(func), rec_args, rec_kwargs, refs))

    def finish(self, outputs: Sequence[torch.Tensor]) -> Trace:
        return Trace(
            inputs=self.inputs,
            buffers=list(self.buffers),
            steps=list(self.steps),
            outputs=[self._ref(t) for t in outputs],
            kernels=dict(self.kernels),
        )


def _leaves(v: Any) -> list[Any]:
    from torch.utils._pytree import tree_leaves

    return list(tree_leaves(v))
