"""Trusted simulated time on npu-sim: the supervisor's side of a simulated evaluation.

The worker (untrusted) records the call as a trace (farm.hardware.npu_sim.record) and sends
it back. The supervisor then starts `python -m farm.harness.simreplay`, a fresh process that
never imports the submission: it makes the inputs from the trusted seed, runs the problem's
reference under the counting dispatch mode (the eager baseline's simulated time and the
expected outputs), replays the trace with kernels recompiled from their checked source
(farm.hardware.npu_sim.replay), compares the replay's own outputs with the reference's (every
element, or the elements the sampled programs produced), and answers with both costs.
Nothing the worker returns besides the trace is used for timing, so patching the simulator in
the worker changes nothing (docs/npu-sim.md, "Trust model").
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

REPLAY_SECONDS_ENV = "FARM_NPU_SIM_REPLAY_S"
METHOD = "npu-sim-replay"


# -- the trusted process --------------------------------------------------------------------


def serve(request: dict[str, Any]) -> dict[str, Any]:
    """Answer one replay request (runs in the trusted process)."""
    os.environ["TRITON_INTERPRET"] = "1"
    from farm.hardware.npu_sim.limits import SimLimitExceeded
    from farm.hardware.npu_sim.trace import Trace, TraceError
    from farm.hardware.npu_sim.tritonsrc import KernelRejected
    from farm.harness import runtime
    from farm.suite.loader import load_suite

    problem = load_suite(request["suite_root"]).problem(request["problem"])
    module = runtime.load_file_module(problem.reference_path, "farm_replay_reference")
    make = runtime.input_maker(module, request, torch.device("cpu"))
    inputs = make(0)
    expected, reference = reference_cost(module, inputs)
    answer: dict[str, Any] = {"ok": True, "reference": reference}
    if request.get("trace") is None:
        return answer
    from farm.hardware.npu_sim.replay import UncountedData, replay

    try:
        trace = Trace.from_json(request["trace"])
        result = replay(trace, inputs, seed=sample_seed(request["trace"]))
    except KernelRejected as exc:
        return _failure("REJECTED", "NPU_SIM_KERNEL_REJECTED", str(exc))
    except UncountedData as exc:
        return _failure("REJECTED", "NPU_SIM_UNCOUNTED_OUTPUT", str(exc))
    except TraceError as exc:
        return _failure(
            "RUNTIME_ERROR", "NPU_SIM_TRACE", f"the recorded call does not replay: {exc}"
        )
    except SimLimitExceeded as exc:
        return _failure("RUNTIME_ERROR", "NPU_SIM_LIMIT", str(exc))
    errors, check = _check(problem, result, expected)
    candidate = {
        **result.report.to_dict(),
        "sampled": result.sampled,
        "sim_wall_s": round(result.sim_wall_s, 3),
        "check_wall_s": round(result.value_wall_s, 3),
        "check": check,
    }
    if errors:
        first = errors[0]
        return {
            **_failure(first.get("status", "INCORRECT"), first["code"], first["detail"]),
            "errors": errors,
            "candidate": candidate,
        }
    return {**answer, "candidate": candidate}


def sample_seed(trace: dict[str, Any]) -> int:
    """The seed of the program sample: a function of the trace, so the same submission gets
    bit-identical simulated times on every run and host (docs/npu-sim.md says why knowing the
    sample does not help a submission)."""
    from farm.harness import seeds

    text = json.dumps(trace, sort_keys=True, allow_nan=True)
    return seeds.derive("npu-sim-sample", hashlib.sha256(text.encode()).hexdigest())


def _failure(status: str, code: str, detail: str) -> dict[str, Any]:
    return {"ok": False, "status": status, "code": code, "detail": detail}


def reference_cost(module: Any, inputs: list[torch.Tensor]) -> tuple[list[torch.Tensor], dict]:
    """The reference's outputs and its simulated cost (the eager baseline), counted here.
    With meta-device inputs only the cost is computed (FLOPs and bytes depend on shapes)."""
    from farm.hardware.npu_sim.ledger import Ledger
    from farm.hardware.npu_sim.replay import _install, replay_limits
    from farm.hardware.npu_sim.report import build_report
    from farm.harness import runtime

    state = _install()
    assert state.params is not None
    led = Ledger(replay_limits(), 0)
    state.ledger = led
    try:
        with state.mode_cls():
            out = runtime.as_output_list(module.reference(*[t.clone() for t in inputs]))
    finally:
        state.ledger = None
    return [o.detach() for o in out], build_report(led.launches, state.params, None, []).to_dict()


def _check(
    problem: Any, result: Any, expected: list[torch.Tensor]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Compare the replay's outputs with the reference (all elements, or the known sample)."""
    import dataclasses

    from farm.harness import correctness
    from farm.result import reason

    writable = set(problem.extra.get("writable_inputs", ()))
    touched = [i for i in result.inputs_written if i not in writable]
    if touched:
        names = ", ".join(problem.inputs[i].name for i in touched if i < len(problem.inputs))
        return [reason("INPUT_MODIFIED", f"the kernel modified its input(s) {names}")], {}
    if result.outputs_short:
        detail = (
            f"output(s) {result.outputs_short} were not written in full by the recorded "
            "launches and PyTorch ops: npu-sim counts only work the trace holds"
        )
        return [{**reason("NPU_SIM_UNCOUNTED_OUTPUT", detail), "status": "REJECTED"}], {}
    if all(k is None for k in result.known):
        errors, stats = correctness.compare(
            result.outputs, expected, problem, device=torch.device("cpu")
        )
        total = sum(o.numel() for o in result.outputs)
        return errors, {"elements": total, "of": total, "sampled": False, **stats}
    flat = dataclasses.replace(problem, invariants=())
    outs, refs, checked, total = [], [], 0, 0
    for out, ref, known in zip(result.outputs, expected, result.known):
        total += out.numel()
        if out.shape != ref.shape or out.dtype != ref.dtype:
            outs.append(out)
            refs.append(ref)
            continue
        idx = torch.arange(out.numel()) if known is None else known
        outs.append(out.reshape(-1)[idx])
        refs.append(ref.reshape(-1)[idx])
        checked += idx.numel()
    errors, stats = correctness.compare(outs, refs, flat, device=torch.device("cpu"))
    return errors, {"elements": checked, "of": total, "sampled": True, **stats}


def _serve_one(request: dict[str, Any]) -> dict[str, Any]:
    try:
        return serve(request)
    except Exception:
        return _failure("HARNESS_ERROR", "NPU_SIM_REPLAY", traceback.format_exc()[-3000:])


def main() -> int:
    """Read one request (or {"batch": [requests]}) from stdin, write the answer(s) to stdout."""
    request = json.loads(sys.stdin.buffer.read())
    if "batch" in request:
        answer: Any = [_serve_one(r) for r in request["batch"]]
    else:
        answer = _serve_one(request)
    sys.stdout.write(json.dumps(answer, allow_nan=True))
    return 0


def run_replay(request: dict[str, Any]) -> Any:
    """Run one replay (or a {"batch": [...]} of them) in a fresh process; its JSON answer (a
    HARNESS_ERROR one when the process failed)."""
    limit = float(os.environ.get(REPLAY_SECONDS_ENV, "900"))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "farm.harness.simreplay"],
            input=json.dumps(request, allow_nan=True).encode(),
            capture_output=True,
            timeout=limit,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _failure(
            "TIMEOUT",
            "NPU_SIM_REPLAY_TIMEOUT",
            f"the replay ran past {limit:g} s (raise {REPLAY_SECONDS_ENV})",
        )
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = proc.stderr.decode(errors="replace")[-2000:]
        return _failure("HARNESS_ERROR", "NPU_SIM_REPLAY", f"the replay process failed: {tail}")


# -- the supervisor's side ------------------------------------------------------------------


def workload_entry(ev: Any, worker: Any, w: Any) -> dict[str, Any]:
    """Check and time workload `w` of evaluation `ev` (farm.harness.supervisor.Evaluation) on
    npu-sim: small workloads are also checked in the worker (every output, three rounds); every
    workload is recorded there and replayed here, which checks the replay's outputs and gives
    the candidate's and the eager baseline's simulated times. Raises what worker requests
    raise (WorkerDied, BadReply)."""
    from farm.harness import report
    from farm.result import Mode, WorkloadStatus

    if w.small:
        with ev._phase("correctness"):
            entry = ev._check(worker, w)
        if entry["status"] != WorkloadStatus.PASSED:
            return entry
    else:
        entry = report.workload_entry(ev.problem, w, WorkloadStatus.PASSED, [])
    with ev._phase("timing"):
        started = time.perf_counter()
        answer = _trace_and_replay(ev, worker, w)
        wall_ms = (time.perf_counter() - started) * 1000
    if not answer.get("ok"):
        errors = answer.get("errors") or [_reason_of(answer)]
        report.set_status(
            entry, [{**e, "status": answer.get("status", "RUNTIME_ERROR")} for e in errors[:1]]
        )
        if "candidate" in answer:
            entry["simulation"] = answer["candidate"]
        return entry
    candidate = answer["candidate"]
    entry["correctness"] = {**entry.get("correctness", {}), "replay": candidate.pop("check")}
    if ev.mode != Mode.TEST:
        report.add_timing(entry, _summary(candidate), wall_ms, thermal={}, warmup_ms=0.0)
        if ev.opts.baselines:
            report.add_baseline(
                entry, "eager", _summary(answer["reference"]), wall_ms, thermal={}, warmup_ms=0.0
            )
    return entry


def _reason_of(answer: dict[str, Any]) -> dict[str, Any]:
    from farm.harness import replies
    from farm.result import reason

    return reason(str(answer.get("code", "NPU_SIM_REPLAY")), replies.text(answer.get("detail")))


def _summary(sim: dict[str, Any]) -> dict[str, Any]:
    t = float(sim["time_ms"])
    # the fields of a timed run's summary (farm.harness.windows.TimedRun.summary): one
    # simulated call, no wall-clock windows, nothing re-checked (the replay checked the outputs)
    return {
        "times_ms": [t],
        "event_ms": [t],
        "method": METHOD,
        "windows_ms": [t],
        "windows": [],
        "rechecked": [],
        "picks_ms": [],
        "warmup_calls": 0,
        "warmup_wall_ms": 0.0,
        "sim": sim,
    }


def _trace_and_replay(ev: Any, worker: Any, w: Any) -> dict[str, Any]:
    """Ask the worker for the trace of one call, replay it in a fresh process."""
    from farm.harness import replies, seeds

    seed = seeds.derive(ev.base, ev.problem.name, w.id, "time")
    fields, tensors = ev.call_request(w, seed)  # the call's inputs, made by the trusted side
    header, _ = worker.request(
        {"op": "trace", **fields}, timeout=ev.limit_policy.load_s, max_bytes=0, tensors=tensors
    )
    ev.doc["guard"]["findings"] += [
        {**f, "workload": w.id} for f in replies.findings(header.get("findings"))
    ]
    failure = replies.failure(header)
    if failure is not None:
        return {**_failure(failure.status.value, failure.code, failure.detail)}
    trace = header.get("trace")
    if not isinstance(trace, dict):
        return _failure("RUNTIME_ERROR", "BAD_REPLY", "the worker's trace is not an object")
    request = {
        "suite_root": str(ev.problem.directory.resolve().parent),
        "problem": ev.problem.name,
        "axes": w.axes,
        "dtype": w.dtype,
        "seed_base": seed,
        "trace": trace,
    }
    return run_replay(request)


if __name__ == "__main__":
    sys.exit(main())
