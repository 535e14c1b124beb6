"""Trusted simulated time on npu-sim: the supervisor's side of a simulated evaluation.

What runs where (docs/npu-sim.md, "Trust model"):
- the worker (sandboxed, untrusted) records one call of the submission as a trace
  (farm.hardware.npu_sim.record);
- this process (trusted) makes the inputs, runs the problem's reference under the counting
  dispatch mode (the expected outputs and the eager baseline's simulated time), and checks the
  trace: it parses, its PyTorch ops are ones npu-sim replays, its kernels are Triton language
  (farm.hardware.npu_sim.tritonsrc, objects resolved, not names spelled);
- a fresh replay process, started through the same sandbox runner as the worker
  (farm.hardware.npu_sim.sandboxed), gets the trace and the inputs as data, recompiles the
  kernels from their source, replays and costs the trace, and answers with its outputs, which
  elements it produced and its cost report. It never holds the seed, the expected outputs or
  the verdict;
- this process compares those outputs with the reference (every produced element) and
  decides every status.
`python -m farm.harness.simreplay` is the replay's entry point in its sandbox.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import sys
import time
from typing import Any

import torch

METHOD = "npu-sim-replay"


# -- the trusted sequence -------------------------------------------------------------------


def judge(
    problem: Any, module: Any, inputs: list[Any], trace_json: Any, *, runner: Any
) -> dict[str, Any]:
    """Cost the reference on `inputs`, check and replay `trace_json` in a sandbox of `runner`,
    compare. The answer: {"ok", "reference", "candidate"} or a failure {"ok": False, "status",
    "code", "detail", ...}. Raises SandboxUnavailable when the runner cannot start here."""
    from farm.hardware.npu_sim.replay import replay_limits
    from farm.hardware.npu_sim.sandboxed import ReplayBudget, run_sandboxed

    limits = replay_limits()
    expected, reference = reference_cost(module, inputs)
    trace, failure = checked_trace(trace_json, max_launches=limits.max_launches)
    if trace is None:
        return {**failure, "reference": reference}
    budget = ReplayBudget.of(trace)
    seed = sample_seed(trace_json)
    reply = run_sandboxed(
        trace, inputs, seed=seed, runner=runner, budget=budget, max_launches=limits.max_launches
    )
    if not reply.ok:
        return {**_failure(reply.status, reply.code, reply.detail), "reference": reference}
    errors, check = _check(problem, reply, expected)
    candidate = {
        **reply.report,
        "sampled": reply.sampled,
        "sim_wall_s": reply.sim_wall_s,
        "check_wall_s": reply.check_wall_s,
        "replay_limit": {
            "programs": budget.programs,
            "sampled_launches": budget.sampled_launches,
            "wall_s": round(budget.seconds, 1),
        },
        "check": check,
    }
    if errors:
        first = errors[0]
        return {
            **_failure(first.extra.get("status", "INCORRECT"), first.code, first.detail),
            "errors": errors,
            "candidate": candidate,
            "reference": reference,
        }
    return {"ok": True, "reference": reference, "candidate": candidate}


def checked_trace(trace_json: Any, *, max_launches: int) -> tuple[Any, dict[str, Any]]:
    """(the parsed trace, {}) when it may be replayed, else (None, the failure): it parses,
    its kernels are Triton language only, its PyTorch ops are ones npu-sim replays, its grids
    and output dtypes are ones the replay takes (replay.check_trace), it holds at most
    `max_launches` steps (each is at most one launch of the replay)."""
    from farm.hardware.npu_sim.limits import SimLimitExceeded
    from farm.hardware.npu_sim.replay import check_trace
    from farm.hardware.npu_sim.trace import Trace, TraceError
    from farm.hardware.npu_sim.tritonsrc import KernelRejected, check_source

    try:
        trace = Trace.from_json(trace_json)
        for kernel in trace.kernels.values():
            check_source(kernel)
        check_trace(trace)
    except KernelRejected as exc:
        return None, _failure("REJECTED", "NPU_SIM_KERNEL_REJECTED", str(exc))
    except TraceError as exc:
        if exc.status == "UNSUPPORTED":
            return None, _failure("UNSUPPORTED", "NPU_SIM_UNSUPPORTED", str(exc))
        return None, _failure(
            "RUNTIME_ERROR", "NPU_SIM_TRACE", f"the recorded call does not replay: {exc}"
        )
    if len(trace.steps) > max_launches:
        detail = str(SimLimitExceeded("max_launches", len(trace.steps), max_launches))
        return None, _failure("UNSUPPORTED", "NPU_SIM_LIMIT", detail)
    return trace, {}


def sample_seed(trace: dict[str, Any]) -> int:
    """The seed of the program sample: a function of the trace, so the same submission gets
    bit-identical simulated times on every run and host (docs/npu-sim.md says why knowing the
    sample does not help a submission)."""
    from farm.harness import seeds

    text = json.dumps(trace, sort_keys=True, allow_nan=True)
    return seeds.derive("npu-sim-sample", hashlib.sha256(text.encode()).hexdigest())


def _failure(status: str, code: str, detail: str) -> dict[str, Any]:
    return {"ok": False, "status": status, "code": code, "detail": detail}


def reference_cost(module: Any, inputs: list[Any]) -> tuple[list[torch.Tensor], dict]:
    """The reference's outputs and its simulated cost (the eager baseline), counted in this
    process by the counting dispatch mode (no Triton involved)."""
    from farm.hardware.npu_sim.costmodel import CostParams
    from farm.hardware.npu_sim.ledger import Ledger
    from farm.hardware.npu_sim.replay import replay_limits
    from farm.hardware.npu_sim.report import build_report
    from farm.hardware.npu_sim.spec import NPU_SIM_V1
    from farm.hardware.npu_sim.torch_mode import make_mode_class
    from farm.harness import runtime

    params = CostParams.from_spec(NPU_SIM_V1)
    led = Ledger(replay_limits(), 0)
    mode_cls = make_mode_class(lambda: led, params)
    # the copy keeps a reference that writes its inputs from altering the caller's; it is made
    # before counting starts, so the eager baseline costs exactly what the reference does (a
    # submission of the reference verbatim is as fast as the baseline: SOL score 0.5)
    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    with mode_cls():
        out = runtime.as_output_list(module.reference(*args))
    return [o.detach() for o in out], build_report(led.launches, params, None, []).to_dict()


def _check(
    problem: Any, reply: Any, expected: list[torch.Tensor]
) -> tuple[list[Any], dict[str, Any]]:
    """Compare the replay's outputs with the reference: every element, or, when a launch was
    sampled, every element it produced."""
    from farm.harness import correctness
    from farm.result import Reason

    writable = set(problem.extra.get("writable_inputs", ()))
    touched = [i for i in reply.inputs_written if i not in writable]
    if touched:
        names = ", ".join(problem.inputs[i].name for i in touched if i < len(problem.inputs))
        return [Reason("INPUT_MODIFIED", f"the kernel modified its input(s) {names}")], {}
    if reply.outputs_short:
        detail = (
            f"output(s) {reply.outputs_short} were not written in full by the recorded "
            "launches and PyTorch ops: npu-sim counts only work the trace holds"
        )
        return [Reason("NPU_SIM_UNCOUNTED_OUTPUT", detail, extra={"status": "REJECTED"})], {}
    cpu = torch.device("cpu")
    if not reply.sampled or all(k is None for k in reply.produced):
        errors, stats = correctness.compare(reply.outputs, expected, problem, device=cpu)
        total = sum(o.numel() for o in reply.outputs)
        return errors, {"elements": total, "of": total, "sampled": False, **stats}
    flat = dataclasses.replace(problem, invariants=())  # invariants need whole rows
    outs, refs, checked, total = [], [], 0, 0
    for out, ref, known in zip(reply.outputs, expected, reply.produced):
        total += out.numel()
        if out.shape != ref.shape or out.dtype != ref.dtype:
            outs.append(out)
            refs.append(ref)
            continue
        idx = torch.arange(out.numel()) if known is None else known
        outs.append(out.reshape(-1)[idx])
        refs.append(ref.reshape(-1)[idx])
        checked += idx.numel()
    errors, stats = correctness.compare(outs, refs, flat, device=cpu)
    check = {"elements": checked, "of": total, "sampled": True, **stats}
    check["fraction"] = round(checked / total, 6) if total else 0.0
    return errors, check


# -- the supervisor's side ------------------------------------------------------------------


def workload_record(ev: Any, worker: Any, w: Any) -> Any:
    """Check and time workload `w` of evaluation `ev` (farm.harness.supervisor.Evaluation) on
    npu-sim: small workloads are also checked in the worker (every output, three rounds); every
    workload is recorded there and replayed in a sandbox of the evaluation's runner
    (`ev.workers.runner`: the workers' own), which gives the outputs this process checks and
    the candidate's simulated time; the eager baseline is costed here. Returns the workload's
    farm.harness.record.WorkloadRecord. Raises what worker requests raise (WorkerDied,
    BadReply)."""
    from farm.harness import report
    from farm.harness.record import Checks, WorkloadRecord
    from farm.result import WorkloadStatus

    case = ev.case
    if w.small:
        with ev.report.phases("correctness"):
            record = ev.checker.check(worker, w)
        if not record.passed:
            return record
    else:
        record = WorkloadRecord.new(case.problem, w, WorkloadStatus.PASSED, [])
    with ev.report.phases("timing"):
        started = time.perf_counter()
        answer = _trace_and_replay(ev, worker, w)
        wall_ms = (time.perf_counter() - started) * 1000
    if not answer.get("ok"):
        errors = answer.get("errors") or [_reason_of(answer)]
        status = {"status": answer.get("status", "RUNTIME_ERROR")}
        report.set_status(
            record, [dataclasses.replace(e, extra={**e.extra, **status}) for e in errors[:1]]
        )
        if "candidate" in answer:
            record.simulation = answer["candidate"]
        return record
    candidate = answer["candidate"]
    record.checks = record.checks or Checks()
    record.checks.replay = candidate.pop("check")
    if case.timed:
        report.add_timing(record, _measured(candidate), wall_ms, thermal={}, warmup_ms=0.0)
        if case.opts.baselines:
            reference = _measured(answer["reference"])
            report.add_baseline(record, "eager", reference, wall_ms, thermal={}, warmup_ms=0.0)
    return record


def _reason_of(answer: dict[str, Any]) -> Any:
    from farm.harness import replies
    from farm.result import Reason

    return Reason(str(answer.get("code", "NPU_SIM_REPLAY")), replies.text(answer.get("detail")))


def _measured(sim: dict[str, Any]) -> Any:
    """One simulated call as a timing's measurement (farm.harness.timing_stats.Measured): no
    wall-clock windows, nothing re-checked (the replay checked the outputs)."""
    from farm.harness.timing_stats import Measured

    t = float(sim["time_ms"])
    return Measured(times_ms=[t], event_ms=[t], method=METHOD, windows_ms=[t], sim=sim)


def _trace_and_replay(ev: Any, worker: Any, w: Any) -> dict[str, Any]:
    """Make the call's inputs, ask the worker for the trace of one call on them, judge it."""
    from farm.harness import feed, reference, replies
    from farm.harness.record import tagged

    case = ev.case
    inputs = ev.inputs.maker(w, case.seed(w, "time"))(0)  # the call's inputs, made here
    payload = feed.pack_pipe([inputs])
    header, _ = worker.request(
        {"op": "trace", **ev.sizes.request(w), **payload.fields},
        timeout=case.limit_policy.load_s,
        max_bytes=0,
        tensors=payload.tensors,
    )
    reply = replies.trace(header)
    ev.report.findings += tagged(reply.findings, w.id)
    unsupported = worker_unsupported(reply, case.source)
    if unsupported is not None:
        return unsupported
    if reply.failure is not None:
        return _failure(reply.failure.status.value, reply.failure.code, reply.failure.detail)
    module = reference.load_reference(case.problem)
    return judge(case.problem, module, inputs, reply.trace, runner=ev.workers.runner)


def worker_unsupported(reply: Any, source: str) -> dict[str, Any] | None:
    """The worker's UNSUPPORTED (it met an @triton.autotune'd launch; `reply` a
    farm.harness.replies.TraceReply), believed only when the submission's source, read here with
    ast and never run, decorates a function with autotune: UNSUPPORTED is the farm's outcome,
    which no kernel is judged by, so a worker that could claim it at will would turn its
    kernel's failure into no verdict. None otherwise (the reply is classified as any other,
    farm.harness.replies.failure)."""
    if reply.unsupported is None or not _autotunes(source):
        return None
    return _failure("UNSUPPORTED", "NPU_SIM_UNSUPPORTED", reply.unsupported)


def _autotunes(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        _names_autotune(d.func if isinstance(d, ast.Call) else d)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for d in node.decorator_list
    )


def _names_autotune(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "autotune") or (
        isinstance(node, ast.Name) and node.id == "autotune"
    )


if __name__ == "__main__":
    from farm.hardware.npu_sim.serve import main

    sys.exit(main())
