"""Running the replay in a sandbox and reading its answer (trusted side).

The replay runs kernels derived from a submission (recompiled from checked source, but still
the submission's), so it is started as the worker is (farm.harness.channel.WorkerProcess,
through the evaluation's sandbox runner): a worker's clean environment, no network, the work
dir its only writable host path, and limits sized from the trace (`ReplayBudget`). What it
answers is checked here against the trace before anyone uses it (`read_reply`): a frame that
does not fit is a failure, never a pass.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from farm.hardware.npu_sim import sampling
from farm.hardware.npu_sim.trace import Launch, Trace
from farm.sandbox import Limits, Runner

REPLAY_ARGS = ["-m", "farm.harness.simreplay"]  # what the sandbox's interpreter runs
GiB = 1 << 30

# The replay's wall-clock limit: START_S + FACTOR x (PROGRAM_S x programs run in full +
# SAMPLED_LAUNCH_S x sampled launches), at most CAP_S (docs/npu-sim.md, "Trust model", has the
# measurements). PROGRAM_S: the slowest honest program instance run in full that was measured
# (4.4 s: online softmax, 4 rows of 8192 columns in BLOCK 16, three passes, on one busy core).
# SAMPLED_LAUNCH_S: a sampled launch runs a few programs of each class with sampled loops
# and VALUE_ITERATIONS loop iterations again (measured at most 0.3 s). START_S: the sandbox,
# interpreter, torch and triton start (measured about 3 s).
START_S = 30.0
PROGRAM_S = 5.0
SAMPLED_LAUNCH_S = 5.0
FACTOR = 4.0
CAP_S = 1800.0
# limits that ended a replay as this side knows them (channel.WorkerDied.limit): its own timer,
# or the container engine's memory limit; cpu_seconds and file_size_bytes are read from the
# signal that ended the process, which the process can send itself
SIMULATOR_LIMITS = ("wall_seconds", "memory_bytes")


@dataclass(frozen=True)
class ReplayBudget:
    """What the replay of one trace may use: `programs` (program instances it may run,
    counted or for values), `seconds` (wall clock, from spawn), `memory_bytes`."""

    programs: int  # program instances run in full (launches of at most FULL_PROGRAMS, fills)
    sampled_launches: int
    seconds: float
    memory_bytes: int
    output_bytes: int

    @classmethod
    def of(cls, trace: Trace) -> ReplayBudget:
        """The budget of `trace` (the module's constants say how it is sized)."""
        from farm.hardware.npu_sim.replay import fill_programs

        grids = [math.prod(s.grid) for s in trace.steps if isinstance(s, Launch)]
        full = sum(p for p in grids if p <= sampling.FULL_PROGRAMS) + fill_programs(trace)
        sampled = sum(1 for p in grids if p > sampling.FULL_PROGRAMS)
        work = PROGRAM_S * full + SAMPLED_LAUNCH_S * sampled
        seconds = min(CAP_S, START_S + FACTOR * work)
        data = sum(trace.buffers)
        out = sum(_nbytes(trace, i) for i in range(len(trace.outputs)))
        return cls(full, sampled, seconds, 4 * GiB + 3 * data, 2 * out + (64 << 20))

    def describe(self) -> str:
        return (
            f"{START_S:g} s + {FACTOR:g} x ({self.programs} programs in full x {PROGRAM_S:g} s + "
            f"{self.sampled_launches} sampled launches x {SAMPLED_LAUNCH_S:g} s) = "
            f"{self.seconds:.0f} s (at most {CAP_S:g} s)"
        )


def _nbytes(trace: Trace, i: int) -> int:
    ref = trace.outputs[i]
    itemsize = torch.empty((), dtype=getattr(torch, ref.dtype, torch.float64)).element_size()
    return math.prod(ref.shape) * itemsize * 2  # the output, and its produced indices (int64)


@dataclass
class ReplayReply:
    """What the sandboxed replay answered, checked against the trace.

    ok: the replay ran; then `report` (its cost report), `outputs`, `produced` (per output:
    None when every element was produced, else the flat indices of those that were), and the
    replay's own notes (sampled, inputs_written, outputs_short, walls in s). Else `status`,
    `code`, `detail`."""

    ok: bool
    status: str = ""
    code: str = ""
    detail: str = ""
    report: dict[str, Any] = field(default_factory=dict)
    outputs: list[torch.Tensor] = field(default_factory=list)
    produced: list[torch.Tensor | None] = field(default_factory=list)
    sampled: bool = False
    inputs_written: list[int] = field(default_factory=list)
    outputs_short: list[int] = field(default_factory=list)
    sim_wall_s: float = 0.0
    check_wall_s: float = 0.0

    @classmethod
    def failed(cls, status: str, code: str, detail: str) -> ReplayReply:
        return cls(ok=False, status=status, code=code, detail=detail)


def run_sandboxed(
    trace: Trace,
    inputs: list[Any],
    *,
    seed: int,
    runner: Runner,
    budget: ReplayBudget,
    max_launches: int,
) -> ReplayReply:
    """Replay `trace` from `inputs` in a fresh sandbox of `runner`; its checked answer.
    `max_launches`: the simulator's cap in force on this side (the sandbox's environment
    holds none of the supervisor's settings).

    The replay is started as a worker is (farm.harness.channel.WorkerProcess: an npu-sim
    worker's environment, the same framing, stderr kept), with REPLAY_ARGS. Never raises for
    what the replay did: one that never greeted (its sandbox or interpreter did not start,
    before anything of the submission reached it) is the node's fault, NODE_FAULT; one ended
    at a limit this side enforced is UNSUPPORTED (the simulator's limit, not a verdict on the
    kernel); one that died otherwise or sent a bad frame is a RUNTIME_ERROR. Raises
    SandboxUnavailable when the runner cannot start here."""
    from farm.harness import feed
    from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec

    workdir = Path(tempfile.mkdtemp(prefix="farm-npu-replay-"))
    spec = WorkerSpec("npu-sim", [], workdir, limits=_limits(budget), args=tuple(REPLAY_ARGS))
    payload = feed.pack_pipe([inputs])
    header = {**payload.fields, "trace": trace.to_json(), "seed": seed}
    header["max_launches"] = max_launches
    try:
        try:
            replay = WorkerProcess(runner, spec)
        except WorkerDied as exc:
            return ReplayReply.failed("NODE_FAULT", "NPU_SIM_REPLAY_START", _not_started(exc))
        try:
            reply, frame = replay.request(
                header,
                timeout=budget.seconds,
                max_bytes=budget.output_bytes,
                tensors=payload.tensors,
            )
        except WorkerDied as exc:
            return _died(exc, budget)
        finally:
            replay.discard()
        return read_reply(reply, frame, trace)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _limits(budget: ReplayBudget) -> Limits:
    return Limits(
        memory_bytes=budget.memory_bytes,
        wall_seconds=budget.seconds,
        # never before the wall limit, even with every core busy (numpy's BLAS in tl.dot): a
        # CPU-time end is read from a signal the process can send itself (`_died`)
        cpu_seconds=int(budget.seconds * (os.cpu_count() or 1)) + 30,
        output_bytes=budget.output_bytes,
        pids=256,
    )


def _not_started(exc: Exception) -> str:
    return (
        f"the replay's sandbox did not start (nothing of the submission had reached it): {exc}; "
        "a fault of this node, not of the kernel"
    )


def _died(exc: Any, budget: ReplayBudget) -> ReplayReply:
    """The outcome of a replay that ended without a reply (`exc`: channel.WorkerDied)."""
    if exc.limit in SIMULATOR_LIMITS:
        return ReplayReply.failed(
            "UNSUPPORTED",
            "NPU_SIM_REPLAY_LIMIT",
            f"npu-sim could not replay this call within its {exc.limit} limit (wall: "
            f"{budget.describe()}; memory {budget.memory_bytes / GiB:.1f} GiB): a limit of "
            "the simulator, not a verdict on the kernel; use a smaller workload",
        )
    return ReplayReply.failed("RUNTIME_ERROR", "NPU_SIM_REPLAY", f"the replay ended: {exc.detail}")


def read_reply(header: dict[str, Any], frame: list[torch.Tensor], trace: Trace) -> ReplayReply:
    """The replay's answer if it fits the trace, else a RUNTIME_ERROR saying what did not. A
    failure it reports is read as a worker's (farm.harness.replies.failure): a failing status
    only, so UNSUPPORTED, the farm's outcome, is never taken from it; this side decides that
    from its own checks of the trace and from the limit its own watchdog enforced (`_died`)."""
    from farm.harness import replies

    try:
        failure = replies.failure(header)
    except replies.BadReply as exc:
        return ReplayReply.failed("RUNTIME_ERROR", "NPU_SIM_REPLAY", f"bad replay answer: {exc}")
    if failure is not None:
        return ReplayReply.failed(failure.status.value, failure.code, failure.detail)
    try:
        return _checked(header, frame, trace)
    except ForgedCost as exc:
        return ReplayReply.failed("REJECTED", "NPU_SIM_COST_FORGED", str(exc))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return ReplayReply.failed("RUNTIME_ERROR", "NPU_SIM_REPLAY", f"bad replay answer: {exc}")


def _checked(header: dict[str, Any], frame: list[torch.Tensor], trace: Trace) -> ReplayReply:
    n = len(trace.outputs)
    outputs, rest = frame[:n], frame[n:]
    for out, ref in zip(outputs, trace.outputs, strict=True):
        if tuple(out.shape) != ref.shape or str(out.dtype).removeprefix("torch.") != ref.dtype:
            raise ValueError("an output's shape or dtype differs from the trace's")
    produced: list[torch.Tensor | None] = []
    sampled = bool(header["sampled"]) and may_sample(trace)
    for out, k in zip(outputs, header["produced"], strict=True):
        if k is None:
            produced.append(None)
            continue
        idx = rest[int(k)]
        if idx.dtype != torch.int64 or idx.dim() != 1:
            raise ValueError("produced indices are not a flat int64 tensor")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= out.numel()):
            raise ValueError("produced indices out of range")
        produced.append(torch.unique(idx))  # each element counts once in what was compared
    report = header["report"]
    _check_report(report, trace)
    return ReplayReply(
        ok=True,
        report=report,
        outputs=outputs,
        produced=produced,
        sampled=sampled,
        inputs_written=_indices(header["inputs_written"], len(trace.inputs)),
        outputs_short=_indices(header["outputs_short"], n),
        sim_wall_s=_seconds(header["sim_wall_s"]),
        check_wall_s=_seconds(header["check_wall_s"]),
    )


def _indices(value: Any, bound: int) -> list[int]:
    """Distinct input or output positions below `bound`, as the replay names them."""
    if not isinstance(value, list) or len(set(value)) != len(value):
        raise ValueError("positions must be a list without repeats")
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < bound for i in value):
        raise ValueError(f"positions must be integers in [0, {bound})")
    return list(value)


def _seconds(value: Any) -> float:
    """A wall time the replay measured of itself (kept for the record, decides nothing)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("a wall time must be a number")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"a wall time must be finite and not negative, got {value!r}")
    return float(value)


def may_sample(trace: Trace) -> bool:
    """Whether the replay may count a launch of `trace` from a sample (one of more than
    FULL_PROGRAMS programs): otherwise every program ran in full, and every output element is
    compared whatever the replay says it produced."""
    return any(
        math.prod(s.grid) > sampling.FULL_PROGRAMS for s in trace.steps if isinstance(s, Launch)
    )


class ForgedCost(ValueError):
    """The replay's report gives less time than the cost model allows for what it counted."""


def _check_report(report: dict[str, Any], trace: Trace) -> None:
    """The report must cost exactly the trace's Triton launches, with their grids and every
    program of them, each launch no faster than the cost model's floor for its own counts
    (launch overhead + bytes at chip bandwidth + program overheads spread over every core), and
    add up."""
    time_ms = float(report["time_ms"])
    if not math.isfinite(time_ms) or time_ms <= 0:
        raise ValueError(f"time_ms {time_ms!r} is not a positive time")
    launches = report["per_launch"]
    grids = [list(s.grid) for s in trace.steps if isinstance(s, Launch)]
    triton = [r for r in launches if r.get("kind") == "triton"]
    if grids != [list(r["grid"]) for r in triton]:
        raise ValueError("the report's Triton launches are not the trace's")
    if any(int(r["programs"]) != math.prod(g) for r, g in zip(triton, grids)):
        raise ValueError("a Triton launch of the report does not count every program of its grid")
    from farm.hardware.npu_sim.costmodel import CostParams
    from farm.hardware.npu_sim.spec import NPU_SIM_V1

    params = CostParams.from_spec(NPU_SIM_V1)
    for r in launches:
        floor = _floor_ms(r, params)
        if not float(r["time_ms"]) >= floor * (1 - 1e-9):
            raise ForgedCost(
                f"launch {str(r.get('name'))[:60]} is reported at {float(r['time_ms']):.6g} ms, "
                f"below the cost model's floor {floor:.6g} ms for its own counts"
            )
    if not time_ms >= sum(float(r["time_ms"]) for r in launches) * (1 - 1e-9):
        raise ForgedCost("the reported time is less than the sum of its launches")


def _floor_ms(launch: dict[str, Any], p: Any) -> float:
    """The cost model's floor (`p`: costmodel.CostParams) for a launch's own counts, in ms."""
    moved = int(launch["read_bytes"]) + int(launch["write_bytes"])
    programs = int(launch["programs"])
    if moved < 0 or programs < 0:
        raise ValueError("negative counts in the report")
    return (p.launch_s + moved / p.chip_bw + programs * p.program_s / p.cores) * 1e3
