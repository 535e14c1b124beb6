"""`install()` and `measure()`: the simulator as the harness's worker uses it.

The state of the simulator (the ledger of the call being measured, the installed hooks, the
integrity snapshot) lives in the closure of the two functions `make_api()` returns, not in any
module global, so a submission cannot reach it by attribute lookups from a module.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from farm.hardware.npu_sim.limits import SimError, SimIntegrityError, SimLimits
from farm.hardware.npu_sim.report import SimReport

_BUILDER_FIELDS = frozenset({"arch", "options", "codegen_fns", "grid_idx", "grid_dim"})


class _Session:
    __slots__ = ("builder", "frozen", "ledger", "mode_cls", "params")

    def __init__(self) -> None:
        self.ledger: Any = None
        self.builder: Any = None
        self.frozen: Any = None
        self.mode_cls: Any = None
        self.params: Any = None


def _tensor_leaves(value: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_leaves

    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def io_findings(led: Any, args: Sequence[Any], out: Any) -> list[str]:
    """Outputs must have been written, and inputs read, by counted work."""
    findings = []
    for i, t in enumerate(_tensor_leaves(out)):
        need = t.numel() * t.element_size()
        got = led.written.get(t.untyped_storage().data_ptr(), 0)
        if need and got < need:
            findings.append(
                f"uncounted_output: output {i} ({need} bytes) got only {got} bytes from "
                "counted Triton stores or PyTorch ops"
            )
    for i, t in enumerate(_tensor_leaves(list(args))):
        if t.numel() and not led.read.get(t.untyped_storage().data_ptr(), 0):
            findings.append(f"uncounted_input: input {i} was never read by counted work")
    return findings


@contextlib.contextmanager
def _watchdog(led: Any) -> Iterator[None]:
    """Interrupt the call at the wall-clock cap, even inside pure-Python loops (main thread
    only; elsewhere the hooks' own clock checks and the sandbox's time limit apply)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        led.out_of_time()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, led.limits.max_wall_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def make_api() -> tuple[Callable[[], Callable[..., SimReport]], Callable[..., SimReport]]:
    """Build `install` and `measure` around one private session."""
    session = _Session()

    def ledger_of() -> Any:
        return session.ledger

    def hooks_in_place() -> list[str]:
        from triton.runtime import interpreter as interp

        b = session.builder
        ok = interp.interpreter_builder is b and interp.interpreter_semantic.builder is b
        if ok and type(b) is type(session.builder) and set(vars(b)) <= _BUILDER_FIELDS:
            return []
        return ["tampered: the Triton interpreter's op builder was replaced or shadowed"]

    def check_launch() -> None:
        findings = hooks_in_place()
        if findings:
            led = session.ledger
            if led is not None:
                led.findings.extend(findings)
            raise SimIntegrityError(findings)

    def install() -> Callable[..., SimReport]:
        """Switch Triton to its interpreter and install the cost hooks (idempotent).

        Must run before triton is imported anywhere else in the process and before the
        submission is imported: `@triton.jit` picks the interpreter when it decorates.
        Returns `measure`: keep that reference, so that a submission replacing the module's
        `measure` attribute cannot substitute its own.
        """
        os.environ["TRITON_INTERPRET"] = "1"
        if session.builder is None:
            _install(session, ledger_of, check_launch)
        return measure

    def measure(
        fn: Callable[..., Any],
        args: Sequence[Any],
        *,
        limits: SimLimits | None = None,
        floor_ms: float | None = None,
    ) -> SimReport:
        """Call `fn(*args)` once (CPU tensors) and return its simulated cost on npu-sim-v1.

        The report's `output` holds what `fn` returned. `floor_ms` (optional): a trusted lower
        bound, e.g. the workload's SOL time; a simulated time below it is an integrity failure.
        Raises SimLimitExceeded when a cap of `limits` (default: SimLimits.from_env()) is
        passed, SimIntegrityError when the simulator was tampered with, and whatever `fn`
        raises otherwise.
        """
        if session.builder is None:
            raise SimError("npu-sim is not installed: call farm.hardware.npu_sim.install() first")
        return _measure(session, hooks_in_place, fn, args, limits or SimLimits.from_env(), floor_ms)

    return install, measure


def _install(session: _Session, ledger_of: Callable[[], Any], check: Callable[[], None]) -> None:
    import torch
    import torch.utils.flop_counter as flop_counter
    import triton  # noqa: F401  (after TRITON_INTERPRET is set)

    from farm.hardware.npu_sim import integrity
    from farm.hardware.npu_sim.costmodel import CostParams
    from farm.hardware.npu_sim.hooks import install_hooks
    from farm.hardware.npu_sim.spec import NPU_SIM_V1
    from farm.hardware.npu_sim.torch_mode import make_mode_class

    params = CostParams.from_spec(NPU_SIM_V1)
    installed = install_hooks(ledger_of, check)
    builder = installed[next(k for k in installed if k[1] == "builder")]
    session.params = params
    session.mode_cls = make_mode_class(ledger_of, params)
    session.builder = builder
    with session.mode_cls():  # first use imports torch._dynamo: do it now, uncounted
        torch.zeros(1).add_(1)
    watched = integrity.watched_namespaces([type(builder), session.mode_cls, flop_counter])
    session.frozen = integrity.Frozen(watched, {"npu-sim-v1 spec": NPU_SIM_V1, "cost": params})


def _measure(
    session: _Session,
    hooks_in_place: Callable[[], list[str]],
    fn: Callable[..., Any],
    args: Sequence[Any],
    limits: SimLimits,
    floor_ms: float | None,
) -> SimReport:
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    from farm.hardware.npu_sim.ledger import Ledger
    from farm.hardware.npu_sim.report import build_report

    before = session.frozen.verify() + hooks_in_place()
    if before:
        raise SimIntegrityError(before)
    led = Ledger(limits, session.params.core_buffer_bytes)
    mode = session.mode_cls()
    session.ledger = led
    try:
        with _watchdog(led), mode:
            out = fn(*args)
            mode_kept = _get_current_dispatch_mode() is mode
    except Exception:
        if led.tripped is not None:
            raise led.tripped from None
        raise
    finally:
        session.ledger = None
    if led.tripped is not None:
        raise led.tripped
    findings = session.frozen.verify() + hooks_in_place()
    if not mode_kept:
        findings.append("tampered: the npu-sim PyTorch cost mode was removed during the call")
    if not led.chain_intact():
        findings.append("tampered: npu-sim's launch records were altered during the call")
    findings += io_findings(led, args, out)
    findings += [f for f in led.findings if f.startswith("tampered")]
    notes = [f for f in led.findings if not f.startswith("tampered")]
    report = build_report(led.launches, session.params, out, notes)
    if floor_ms is not None and report.time_ms < floor_ms:
        findings.append(f"below_floor: simulated {report.time_ms:.6g} ms < floor {floor_ms:.6g} ms")
    if findings:
        raise SimIntegrityError(findings)
    return report
