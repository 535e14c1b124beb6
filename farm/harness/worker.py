"""The untrusted side of an evaluation: `python -m farm.harness.worker`.

It runs inside the sandbox, loads the submission, makes inputs from the seeds it is sent, calls
the kernel, and times it. It never sees reference outputs or the secret seed base; the
supervisor checks everything it returns. Before anything else it moves the channel off fd 0/1
(so prints from the submission go to stderr, never into the protocol).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO


def _take_channel() -> tuple[BinaryIO, BinaryIO]:
    chan_in = os.fdopen(os.dup(0), "rb", buffering=0)
    chan_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return chan_in, chan_out


def main() -> int:
    chan_in, chan_out = _take_channel()
    # The scratch dir is made by the worker itself, so that it belongs to the sandbox's user
    # (nvcc and the linker write there and, unlike Python's tempfile, have no fallback).
    if os.environ.get("TMPDIR"):
        os.makedirs(os.environ["TMPDIR"], exist_ok=True)
    from farm.harness import protocol

    setup, _ = protocol.recv(chan_in)
    measure = None
    if setup.get("device") == "npu-sim":
        from farm.hardware import npu_sim

        measure = npu_sim.install()  # before triton is imported anywhere; keep this handle
    elif setup.get("device") == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # Triton kernels run on the CPU interpreter
    session = Session(setup, chan_out, measure)
    protocol.send(chan_out, session.hello())
    while True:
        try:
            request, _ = protocol.recv(chan_in)
        except protocol.ProtocolError:
            return 0
        if request.get("op") == "bye":
            return 0
        session.handle(request)


class Session:
    """State of one worker: the device, the problem's input maker and the loaded submission."""

    def __init__(self, setup: dict[str, Any], chan_out: BinaryIO, measure: Any = None) -> None:
        import torch

        from farm.harness import runtime

        self.setup = setup
        self.out = chan_out
        self.device_kind = setup["device"]
        self.device = torch.device("cuda" if self.device_kind in ("cuda", "rocm") else "cpu")
        self.reference: Any = None  # the problem's reference.py, set by `load`
        self.submission: Any = None
        self.guard = runtime.Guard(cuda=self.device.type == "cuda")
        self.timer: Any = None
        self.measure = measure
        _cap_device_memory(self.device, setup.get("gpu_memory_bytes"))

    def hello(self) -> dict[str, Any]:
        import torch

        return {
            "op": "hello",
            "pid": os.getpid(),
            "torch": torch.__version__,
            "device_name": _device_name(self.device),
        }

    def handle(self, request: dict[str, Any]) -> None:
        from farm.harness import protocol
        from farm.harness.simtimer import SimFailure

        op = request.get("op")
        try:
            if request.get("gpu_memory_bytes"):  # this workload's cap (the watch enforces it)
                _cap_device_memory(self.device, request["gpu_memory_bytes"])
            reply, tensors = getattr(self, f"op_{op}")(request)
        except SubmissionFailure as exc:
            reply, tensors = {"ok": False, "status": exc.status, "detail": exc.detail}, []
        except SimFailure as exc:
            reply = {"ok": False, "status": exc.status, "code": exc.code, "detail": exc.detail}
            tensors = []
        except Exception as exc:
            reply, tensors = {"ok": False, "status": "HARNESS_ERROR", "detail": _tb(exc)}, []
        if op == "time":
            # The timing reply first, the re-checked outputs after it: the supervisor's wall
            # clock stops at the first frame, so output transfer never counts as device time.
            protocol.send(self.out, {"op": op, **reply})
            protocol.send(self.out, {"op": "recheck"}, tensors)
            return
        protocol.send(self.out, {"op": op, **reply}, tensors)

    def op_load(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        from farm.errors import SubmissionError
        from farm.harness import forms, runtime

        self.reference = runtime.load_problem_module(Path(request["problem_dir"]))
        self._warm_timer(request)
        if request.get("builtin") == "reference":
            self.submission = _reference_call(self.reference, bool(request.get("compile")))
            return {"ok": True, "form": "reference", "findings": []}, []
        self.guard.before_import()
        try:
            self.submission = forms.load(
                Path(request["source_path"]),
                init_inputs=runtime.init_inputs_fn(self.reference, request.get("axes", {})),
                seed_weights=runtime.weight_seeder(request.get("weight_seed", 0)),
                device=self.device,
                gpumode_data=request.get("gpumode_data", "tuple"),
                arguments=getattr(self.reference, "call_arguments", None),
                constants=runtime.module_constants(self.reference, request.get("axes", {})),
            )
        except SubmissionError as exc:
            raise SubmissionFailure("COMPILE_ERROR", str(exc)) from None
        return {"ok": True, "form": self.submission.form, "findings": self.guard.after_import()}, []

    def op_check(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        from farm.harness import runtime

        make = runtime.input_maker(self.reference, request, self.device)
        inputs = make(0)
        clones = [t.clone() for t in inputs]
        runtime.poison_allocator(request.get("output_nbytes", []), self.device)
        module = getattr(self.submission, "module", None)
        with self.guard.observe(module):
            outputs = self._call(inputs)
        modified = [
            i for i, (a, b) in enumerate(zip(inputs, clones)) if not runtime.same_bits(a, b)
        ]
        return {"ok": True, "inputs_modified": modified, "findings": self.guard.check()}, outputs

    def op_time(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        from farm.harness import runtime, timing

        make = runtime.input_maker(self.reference, request, self.device)
        policy = timing.TimingPolicy(**request.get("policy", {}))
        recheck = set(request.get("recheck", []))
        run = self._timer(request).run(self._guarded_call, make, policy, recheck)
        order = sorted(run.rechecks)
        tensors = [t for i in order for t in run.rechecks[i]]
        counts = [len(run.rechecks[i]) for i in order]
        reply = {
            "ok": True,
            "times_ms": run.times_ms,
            "event_ms": run.event_ms,
            "method": run.method,
            "windows_ms": run.windows,
            "wall_ms": run.wall_ms,
            "warmup_calls": run.warmup_calls,
            "recheck": order,
            "recheck_counts": counts,
            "sim": run.sim,
            "findings": self.guard.check(),
        }
        return reply, tensors

    def op_trace(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """npu-sim: record one call as a trace for the trusted replay (farm.harness.simreplay)."""
        from farm.hardware.npu_sim.record import record_call
        from farm.hardware.npu_sim.trace import TraceError
        from farm.harness import runtime

        inputs = runtime.input_maker(self.reference, request, self.device)(0)
        try:
            trace, _ = record_call(self._guarded_call, inputs)
        except TraceError as exc:
            raise SubmissionFailure(
                "RUNTIME_ERROR", f"npu-sim could not record the call: {exc}"
            ) from None
        return {"ok": True, "trace": trace.to_json(), "findings": self.guard.check()}, []

    def _warm_timer(self, request: dict[str, Any]) -> None:
        """Pay the timer's one-time costs (profiler start-up, marker kernels' JIT) now, before the
        submission is imported, so every measured request of every worker starts warm and the
        trusted side's wall-clock comparison between workers is fair."""
        if self.device.type != "cuda" or self.timer is not None:
            return
        import torch

        from farm.harness import timing

        x = torch.zeros(1024, device=self.device)
        policy = timing.TimingPolicy(
            warmup_ms=0, min_calls=1, window=2, stable_windows=1, budget_ms=0
        )
        self._timer(request).run(lambda xs: [xs[0] + 1], lambda i: [x], policy)

    def _timer(self, request: dict[str, Any]):  # type: ignore[no-untyped-def]
        from farm.harness import timing

        if self.timer is None:
            if self.device_kind in ("cuda", "rocm"):
                self.timer = timing.GpuTimer(self.device, int(request.get("llc_bytes", 50 << 20)))
            elif self.device_kind == "npu-sim":
                from farm.harness.simtimer import SimTimer

                self.timer = SimTimer(self.measure)
            else:
                self.timer = timing.CpuTimer()
        return self.timer

    def _call(self, inputs: list) -> list:
        outputs = self._guarded_call(inputs)
        if self.device.type == "cuda":
            import torch

            torch.cuda.synchronize()
        return outputs

    def _guarded_call(self, inputs: list) -> list:
        from farm.harness import runtime

        if self.submission is None:
            raise SubmissionFailure("HARNESS_ERROR", "no submission loaded")
        try:
            result = self.submission.call(inputs)
        except SubmissionFailure:
            raise
        except BaseException as exc:
            status = "COMPILE_ERROR" if _is_compile_error(exc) else "RUNTIME_ERROR"
            raise SubmissionFailure(status, _tb(exc)) from None
        try:
            return runtime.as_output_list(result)
        except TypeError as exc:
            raise SubmissionFailure("INCORRECT", str(exc)) from None


# Exceptions that mean the submission's kernel could not be built, whenever the build happens:
# Triton compiles at a kernel's first launch, torch.compile (Inductor) at the first call, a
# cpp_extension at import. The same failure is a COMPILE_ERROR whichever of them raised it.
_COMPILE_ERRORS = {
    ("triton.compiler.errors", "CompilationError"),
    ("triton.compiler.errors", "CompileTimeAssertionFailure"),
    ("triton.compiler.errors", "UnsupportedLanguageConstruct"),
    ("torch._dynamo.exc", "BackendCompilerFailed"),
    ("torch._inductor.exc", "InductorError"),
}


def _is_compile_error(exc: BaseException) -> bool:
    return any((k.__module__, k.__name__) in _COMPILE_ERRORS for k in type(exc).__mro__)


def _reference_call(reference, compiled: bool):  # type: ignore[no-untyped-def]
    """The baseline: the problem's reference, eager or under torch.compile (trusted code)."""
    import torch

    from farm.harness.forms import LoadedSubmission

    fn = torch.compile(reference.reference) if compiled else reference.reference
    return LoadedSubmission("reference", reference, lambda inputs: fn(*inputs))


class SubmissionFailure(Exception):
    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _tb(exc: BaseException, limit: int = 4000) -> str:
    """The submission's traceback: the farm's own frames that led into the call are left out
    (they are the same for every submission and every workload)."""
    frames = traceback.extract_tb(exc.__traceback__)
    while frames and frames[0].filename.startswith(_FARM_DIR):
        frames = traceback.StackSummary.from_list(frames[1:])
    shown = traceback.StackSummary.from_list(frames[-8:])
    lines = ["Traceback (most recent call last):\n", *shown.format()] if frames else []
    text = "".join(lines + traceback.format_exception_only(type(exc), exc))
    return text[-limit:]


_FARM_DIR = str(Path(__file__).resolve().parent.parent) + os.sep


def _cap_device_memory(device, limit: int | None) -> None:  # type: ignore[no-untyped-def]
    """Cap torch's caching allocator at `limit` bytes, so that a kernel that asks for too much
    gets a clear out-of-memory error. The trusted side enforces the limit itself (it watches the
    process from outside); this cap only makes honest failures readable."""
    if device.type != "cuda" or not limit:
        return
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    total = torch.cuda.get_device_properties(index).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total), index)


def _device_name(device) -> str:  # type: ignore[no-untyped-def]
    import torch

    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"


if __name__ == "__main__":
    sys.exit(main())
