"""The replay's sandboxed side: the worker's framing (farm.harness.channel.WorkerProcess): the
setup frame in, a greeting out once the replay's start-up is done, one request, one reply.

Runs as `python -m farm.harness.simreplay` inside the sandbox the trusted side starts
(farm.hardware.npu_sim.sandboxed). It holds what a submission could also hold: the trace, the
inputs (as data) and the replay's own counts. It never sees the seed the inputs came from, the
reference's outputs or the verdict: it answers with its outputs, which of their elements it
produced, and its cost report, and the trusted side decides from those.

Request header: {"trace": <npu-sim.trace/1>, "seed": <sample seed>, "max_launches": <the
simulator's cap on the trusted side>, "inputs": <farm.harness.feed pipe fields>}; frame
tensors: the inputs' storages.
Reply header: {"ok": true, "report": {...}, "sampled", "sim_wall_s", "check_wall_s",
"inputs_written": [i], "outputs_short": [i], "produced": [null | k]} and frame tensors: the
outputs, then one int64 tensor of flat element indices for each output whose "produced" is k
(k: its position among those tensors; null: every element). Or {"ok": false, "status", "code",
"detail"}.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from typing import Any, BinaryIO

import torch

from farm.config import node_settings

# status and reason code of each replay failure (the trusted side keeps only the failing
# statuses: it decides UNSUPPORTED itself, from its own checks of the trace)
FAILURES = {
    "Unsupported": ("UNSUPPORTED", "NPU_SIM_UNSUPPORTED"),
    "KernelRejected": ("REJECTED", "NPU_SIM_KERNEL_REJECTED"),
    "UncountedData": ("REJECTED", "NPU_SIM_UNCOUNTED_OUTPUT"),
    "TraceError": ("RUNTIME_ERROR", "NPU_SIM_TRACE"),
    "SimLimitExceeded": ("UNSUPPORTED", "NPU_SIM_LIMIT"),
}


def main() -> int:
    """Greet, then serve one request from stdin. The greeting comes after everything the
    replay starts with (torch, Triton's interpreter, the counting hooks) and before anything of
    the submission arrives: the trusted side reads a replay that never greets as the node's
    fault. Kernel prints (tl.device_print) go to stderr: the reply channel is a duplicate of
    the original stdout."""
    os.environ["TRITON_INTERPRET"] = "1"
    scratch = node_settings().tmpdir
    if scratch is not None:  # the worker's scratch dir, made by the sandbox's own user
        scratch.mkdir(parents=True, exist_ok=True)
    reply_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from farm.hardware.npu_sim.replay import start
    from farm.harness import protocol

    protocol.recv(sys.stdin.buffer)  # the setup: nothing in it the replay needs
    start()
    protocol.send(reply_out, {"op": "setup", "ok": True})
    serve(sys.stdin.buffer, reply_out)
    return 0


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Read one request frame, replay it, write one reply frame."""
    from farm.harness import feed, protocol

    header, tensors = protocol.recv(stdin)
    calls, _ = feed.unpack(header, tensors, torch.device("cpu"))
    reply, out = answer(header, calls[0])
    protocol.send(stdout, reply, out)


def answer(header: dict[str, Any], inputs: list[Any]) -> tuple[dict[str, Any], list[torch.Tensor]]:
    """The reply to one request: header and tensors."""
    from farm.hardware.npu_sim.replay import replay, replay_limits
    from farm.hardware.npu_sim.trace import Trace

    try:
        trace = Trace.from_json(header["trace"])
        # no wall-clock cap of its own: the supervisor's watchdog ends the sandbox at the
        # replay's wall limit, and only that end is the simulator's limit (sandboxed._died)
        limits = dataclasses.replace(
            replay_limits(), max_launches=int(header["max_launches"]), max_wall_s=math.inf
        )
        result = replay(trace, inputs, seed=int(header["seed"]), limits=limits)
    except Exception as exc:
        status, code = _failure_of(exc)
        return {"ok": False, "status": status, "code": code, "detail": str(exc)[:4000]}, []
    outputs = [o.detach().contiguous() for o in result.outputs]
    indices = [k for k in result.known if k is not None]
    produced, i = [], 0
    for k in result.known:
        produced.append(None if k is None else i)
        i += k is not None
    reply = {
        "ok": True,
        "report": result.report.to_dict(),
        "sampled": result.sampled,
        "sim_wall_s": round(result.sim_wall_s, 3),
        "check_wall_s": round(result.value_wall_s, 3),
        "inputs_written": result.inputs_written,
        "outputs_short": result.outputs_short,
        "produced": produced,
    }
    return reply, outputs + [k.to(torch.int64) for k in indices]


def _failure_of(exc: Exception) -> tuple[str, str]:
    for cls in type(exc).__mro__:
        if cls.__name__ in FAILURES:
            return FAILURES[cls.__name__]
    raise exc
