"""The untrusted side of an evaluation: `python -m farm.harness.worker`.

It runs inside the sandbox, loads the submission, calls the kernel on the inputs the trusted
side made and handed over (farm.harness.feed), and times it. It holds no seed, no reference
output and no verdict: the supervisor checks everything it returns. Before anything else it
moves the channel off fd 0/1 (so prints from the submission go to stderr, never into the protocol).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO

from farm.hardware.kinds import get_kind, on_gpu


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
    from farm.config import node_settings

    tmpdir = node_settings().tmpdir
    if tmpdir is not None:
        os.makedirs(tmpdir, exist_ok=True)
    from farm.harness import protocol

    setup, _ = protocol.recv(chan_in)
    kind = get_kind(str(setup.get("device")))
    measure = None
    if kind.simulated:
        from farm.hardware import npu_sim

        measure = npu_sim.install()  # before triton is imported anywhere; keep this handle
    elif not kind.gpu:
        os.environ["TRITON_INTERPRET"] = "1"  # Triton kernels run on the CPU interpreter
    session = Session(setup, chan_out, measure)
    protocol.send(chan_out, session.hello())
    while True:
        try:
            request, tensors = protocol.recv(chan_in)
        except protocol.ProtocolError:
            return 0
        if request.get("op") == "bye":
            return 0
        session.handle(request, tensors)


class Session:
    """State of one worker: the device, the problem's input maker and the loaded submission."""

    def __init__(self, setup: dict[str, Any], chan_out: BinaryIO, measure: Any = None) -> None:
        import torch

        from farm.harness import runtime

        self.setup = setup
        self.out = chan_out
        self.kind = get_kind(setup["device"])
        self.device = torch.device(self.kind.torch_device)
        self.reference: Any = None  # the problem's reference.py, set by `load`
        self.submission: Any = None
        self.built_for: dict[str, Any] = {}  # the axes a KernelBench ModelNew was built for
        self.weight_seed = 0
        self.guard = runtime.Guard(cuda=self.kind.gpu)
        self.timer: Any = None
        self.timing: Any = None  # the timed workload's TimingPolicy
        self.kept: list[list[Any]] = []  # the last window's outputs, per call
        self.kept_start = 0
        self.measure = measure
        self.shared: list[Any] = []  # outputs the trusted side reads on the device; kept until
        # the next request (farm.harness.cudaipc)
        self.frame: list[Any] = []  # the current request's tensors (inputs on the pipe)
        self.storages: list[Any] = []  # the current request's input storages (pipe)
        self.mapping: Any = None  # the trusted side's arena, open for one request
        self.learnt: set[tuple[str, Any]] = set()  # workloads whose data structure is known
        _cap_device_memory(self.device, setup.get("gpu_memory_bytes"))

    def hello(self) -> dict[str, Any]:
        import torch

        return {
            "op": "hello",
            "pid": os.getpid(),
            "torch": torch.__version__,
            "device_name": _device_name(self.device),
        }

    def handle(self, request: dict[str, Any], frame: list | None = None) -> None:
        from farm.harness import protocol, timing
        from farm.harness.simtimer import SimFailure

        op = request.get("op")
        self.shared, self.frame, self.storages = [], list(frame or []), []
        try:
            if request.get("gpu_memory_bytes"):  # the evaluation's cap (the watch enforces it)
                _cap_device_memory(self.device, request["gpu_memory_bytes"])
            if op != "load":
                self._fit(request)
            reply, tensors = getattr(self, f"op_{op}")(request)
        except SubmissionFailure as exc:
            reply, tensors = {"ok": False, "status": exc.status, "detail": exc.detail}, []
        except SimFailure as exc:
            reply = {"ok": False, "status": exc.status, "code": exc.code, "detail": exc.detail}
            tensors = []
        except Exception as exc:
            reply, tensors = {"ok": False, "status": "HARNESS_ERROR", "detail": _tb(exc)}, []
        self._unmap()
        with timing.harness_torch():  # sharing and serialisation run outside its modes
            shared, tensors = self._share(request, tensors)
            protocol.send(self.out, {"op": op, **reply, **shared}, tensors)

    def _share(self, request: dict[str, Any], tensors: list) -> tuple[dict[str, Any], list]:
        """(header fields, tensors for the pipe): where the trusted side asked for the outputs
        on the device, their IPC entries and no tensors (the outputs stay alive until the next
        request); else, or when the driver cannot share them, the tensors themselves."""
        if request.get("outputs") != "ipc" or not tensors:
            return {}, tensors
        from farm.harness import cudaipc

        if not cudaipc.exportable(tensors, self.device):
            return {}, tensors
        try:
            entries, self.shared = cudaipc.export(tensors)
        except cudaipc.IpcError as exc:
            return {"outputs_ipc_error": str(exc)[:500]}, tensors
        return {"outputs_ipc": entries}, []

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
                entry=getattr(self.reference, "submission_entry", None),
                namespace=runtime.submission_namespace(self.reference, request.get("axes", {})),
            )
        except SubmissionError as exc:
            raise SubmissionFailure("COMPILE_ERROR", str(exc)) from None
        self.built_for, self.weight_seed = request.get("axes", {}), request.get("weight_seed", 0)
        return {"ok": True, "form": self.submission.form, "findings": self.guard.after_import()}, []

    def _fit(self, request: dict[str, Any]) -> None:
        """A KernelBench ModelNew is built for one workload's axes (its constructor arguments
        and module constants): a request about other axes gets one built for them, as the
        reference builds its Model per axes."""
        from farm.errors import SubmissionError
        from farm.harness import forms, runtime

        axes = request.get("axes")
        loaded = self.submission
        if axes is None or axes == self.built_for or getattr(loaded, "form", "") != "kernelbench":
            return
        try:
            self.submission = forms.kernelbench_model(
                loaded.module,
                init_inputs=runtime.init_inputs_fn(self.reference, axes),
                seed_weights=runtime.weight_seeder(self.weight_seed),
                device=self.device,
                arguments=getattr(self.reference, "call_arguments", None),
                constants=runtime.module_constants(self.reference, axes),
            )
        except SubmissionError as exc:
            raise SubmissionFailure("RUNTIME_ERROR", str(exc)) from None
        self.built_for = axes

    def op_check(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """One checked call. Its outputs are captured the moment it returns, by harness code,
        with no collection in between (as a timed call's are, farm.harness.timing), and every
        other tensor step here runs outside the submission's torch modes: nothing of the
        submission's runs between the call and the hand-off to fill an output late."""
        from farm.harness import runtime, timing

        self.kept = []  # a timing's kept outputs are not held while another workload is checked
        with timing.harness_torch():
            inputs = self._inputs(request)[0]
            runtime.poison_allocator(request.get("output_nbytes", []), self.device)
        module = getattr(self.submission, "module", None)
        with timing.no_cyclic_gc():
            with self.guard.observe(module):
                outputs = self._call(inputs)
            outputs = timing.capture(outputs)
        # the input storages as the call left them go back on the pipe (the trusted side
        # compares them with what it sent); on the device it reads its own arena
        reply = {"ok": True, "inputs_after": len(self.storages), "findings": self.guard.check()}
        return reply, outputs + self.storages

    def op_time(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """Start timing a workload: the input maker, the policy, the warm-up. The windows
        follow, one request each, sized by the supervisor (farm.harness.timing)."""
        from farm.harness import timing

        warm_inputs = self._inputs(request)
        policy = self._placed(timing.TimingPolicy(**request.get("policy", {})), request)
        timer = self._timer(request)
        self.timing = policy
        self.kept = []
        warm = timer.warmup(
            self._guarded_call, lambda i: warm_inputs[(-1 - i) % len(warm_inputs)], policy
        )
        return {"ok": True, "warmup_calls": warm, "method": timer.method}, []

    def op_window(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """Time `calls` calls from index `start`; every call's outputs are kept (captured when
        its timer stopped) until the supervisor names the ones it re-checks (`op_picks`)."""
        if self.timing is None:
            raise SubmissionFailure("HARNESS_ERROR", "a window was asked for before 'time'")
        policy = self._placed(self.timing, request)
        start, calls = int(request["start"]), int(request["calls"])
        self.kept = []  # the previous window's outputs are released first
        made = self._inputs(request)
        if len(made) != calls:
            raise SubmissionFailure("HARNESS_ERROR", f"{len(made)} calls' inputs for {calls} calls")
        window = self._timer(request).window(
            self._guarded_call, lambda i: made[i - start], start, calls, policy
        )
        self.kept_start, self.kept = start, window.outputs
        reply = {
            "ok": True,
            "times_ms": window.times_ms,
            "event_ms": window.event_ms,
            "sim": window.sim,
            "findings": self.guard.check(),
        }
        return reply, []

    def op_picks(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """The kept outputs of the calls the supervisor picked from the last window (kept until
        the next window starts)."""
        calls = [int(i) for i in request.get("calls", [])]
        chosen = [self.kept[i - self.kept_start] for i in calls]
        reply = {"ok": True, "calls": calls, "counts": [len(o) for o in chosen]}
        return reply, [t for outputs in chosen for t in outputs]

    def op_trace(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """npu-sim: record one call as a trace for the trusted replay (farm.harness.simreplay)."""
        from farm.hardware.npu_sim.record import record_call
        from farm.hardware.npu_sim.trace import TraceError

        inputs = self._inputs(request)[0]
        try:
            trace, _ = record_call(self._guarded_call, inputs)
        except TraceError as exc:  # status: UNSUPPORTED for what npu-sim does not simulate
            raise SubmissionFailure(
                exc.status, f"npu-sim could not record the call: {exc}"
            ) from None
        return {"ok": True, "trace": trace.to_json(), "findings": self.guard.check()}, []

    def op_warm(self, request: dict[str, Any]) -> tuple[dict[str, Any], list]:
        """Pay the timer's one-time costs before any job: a warm pool's pre-started worker does
        this while it waits (farm.harness.pool), so the job's `load` does not."""
        self._warm_timer(request)
        return {"ok": True}, []

    def _warm_timer(self, request: dict[str, Any]) -> None:
        """Pay the timer's one-time costs (profiler start-up, marker kernels' JIT) now, before the
        submission is imported, so every measured request of every worker starts warm and the
        trusted side's wall-clock comparison between workers is fair."""
        if not self.kind.gpu or self.timer is not None:
            return
        from farm.harness import timing

        timing.prime(self._timer(request), self.device)

    def _timer(self, request: dict[str, Any]):
        from farm.harness import timing

        llc = int(request.get("llc_bytes", 50 << 20))
        if isinstance(self.timer, timing.GpuTimer) and self.timer.llc_bytes != llc:
            # warmed for another cache size: a new flush buffer (the process's one-time costs,
            # the profiler's and the marker kernels', stay paid)
            self.timer = None
        if self.timer is None:
            if self.kind.timer == "gpu-events":
                self.timer = timing.GpuTimer(self.device, llc)
            elif self.kind.timer == "npu-sim-ledger":
                from farm.harness.simtimer import SimTimer

                self.timer = SimTimer(self.measure)
            else:
                self.timer = timing.CpuTimer()
        return self.timer

    def _inputs(self, request: dict[str, Any]) -> list[list[Any]]:
        """Each call's inputs as the trusted side handed them over with this request."""
        from farm.harness import feed

        spec = request.get("inputs") or {}
        if spec.get("transport") == "device":
            from farm.harness.arena import Mapping

            arena = spec["arena"]
            self.mapping = Mapping(arena["handle"], int(arena["nbytes"]), self.device)
        calls, self.storages = feed.unpack(request, self.frame, self.device, self.mapping)
        self._learn_structure(request)
        return calls

    def _learn_structure(self, request: dict[str, Any]) -> None:
        """A source whose data is a structure around tensors (GPU MODE's) rebuilds it from what
        its own hook recorded in this process (`learn_structure`), once per shape and dtype."""
        import torch

        learn = getattr(self.reference, "learn_structure", None)
        key = (str(request.get("axes")), request.get("dtype"))
        if learn is None or key in self.learnt or "dtype" not in request:
            return
        self.learnt.add(key)
        learn(request["axes"], getattr(torch, request["dtype"]), self.device)

    def _unmap(self) -> None:
        """Close the trusted side's arena (its inputs are no longer needed: outputs are
        captured copies) before the reply goes out."""
        if self.mapping is not None:
            self.mapping, mapping = None, self.mapping
            mapping.close()

    @staticmethod
    def _placed(policy: Any, request: dict[str, Any]) -> Any:
        """The policy for calls whose inputs came with `request`: placed here only when they
        came through the pipe (on the device the trusted side placed them already)."""
        from dataclasses import replace

        device = (request.get("inputs") or {}).get("transport") == "device"
        return replace(policy, place_inputs=False) if device else policy

    def _call(self, inputs: list) -> list:
        outputs = self._guarded_call(inputs)
        if self.kind.gpu:
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


def _reference_call(reference, compiled: bool):
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


def _cap_device_memory(device, limit: int | None) -> None:
    """Cap torch's caching allocator at `limit` bytes, so that a kernel that asks for too much
    gets a clear out-of-memory error. The trusted side enforces the limit itself (it watches the
    process from outside); this cap only makes honest failures readable."""
    if not on_gpu(device) or not limit:
        return
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    total = torch.cuda.get_device_properties(index).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total), index)


def _device_name(device) -> str:
    import torch

    if on_gpu(device):
        return torch.cuda.get_device_name(device)
    return "cpu"


if __name__ == "__main__":
    sys.exit(main())
