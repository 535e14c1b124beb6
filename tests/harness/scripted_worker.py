"""A stand-in for the worker that answers as a script says: the supervisor's hostile peer.

`python -m tests.harness.scripted_worker SCRIPT.json`. The script maps a request op ("load",
"check", "time") to one action, or to a list of actions taken in turn (the last repeats):
- {"reply": {...}}: send this header (with "op" added); "outputs": "reference" attaches the
  problem's reference outputs for the request's inputs (an honest answer), "none" (default) none;
- {"raw": "text"}: write these bytes (latin-1) instead of a frame;
- {"announce_bytes": N}: a valid header that announces an N-byte tensor, then stop writing;
- {"exit": N} / {"signal": N} / {"hang": true};
- "sleep": S (with any reply): wait S seconds first, as real work the reply does not own up to;
  "sleep_per_call": S sleeps S seconds per call of a timing window.
Timing ops have honest defaults: "time" answers a warm-up, "window" reports "per_call_ms" (0.5)
for each call it was asked for after sleeping that long per call, and "picks" sends the problem's
reference outputs of the calls the supervisor named (on the inputs their window carried).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    from farm.harness import protocol

    script = json.loads(Path(sys.argv[1]).read_text())
    chan_in, chan_out = sys.stdin.buffer, sys.stdout.buffer
    seen: dict[str, int] = {}
    problem_dir = None
    timed: dict = {}  # call index -> its inputs, from the windows' requests
    while True:
        try:
            request, frame = protocol.recv(chan_in)
        except protocol.ProtocolError:
            return 0
        op = request.get("op")
        if op == "bye":
            return 0
        if op == "setup":
            import torch  # noqa: F401  (as the real worker: start-up costs before the first request)

            protocol.send(chan_out, {"op": "hello"})
            continue
        problem_dir = request.get("problem_dir", problem_dir)
        made = _inputs(request, frame)
        if op == "window":
            timed.update({request["start"] + i: inputs for i, inputs in enumerate(made)})
        actions = script.get(op, DEFAULTS.get(op, {"reply": {"ok": True, "form": "native"}}))
        actions = actions if isinstance(actions, list) else [actions]
        action = actions[min(seen.get(op, 0), len(actions) - 1)]
        seen[op] = seen.get(op, 0) + 1
        act(action, request, chan_out, problem_dir, made[0] if made else [], timed, frame)


DEFAULTS = {
    "time": {"reply": {"ok": True, "warmup_calls": 2, "method": "wall-clock"}},
    "window": {"reply": {"ok": True}, "per_call_ms": 0.5, "sleep_per_call": 0.0005},
    "picks": {"reply": {"ok": True}, "outputs": "reference"},
}


def _inputs(request: dict, frame: list) -> list:
    """The request's calls' inputs, on the CPU (copied out of the trusted side's arena when
    they came on the device)."""
    import torch

    from farm.harness import feed

    spec = request.get("inputs") or {}
    if spec.get("transport") != "device":
        return feed.unpack(request, frame, torch.device("cpu"))[0]
    from farm.harness.arena import Mapping

    mapping = Mapping(spec["arena"]["handle"], spec["arena"]["nbytes"], torch.device("cuda"))
    calls = feed.unpack(request, frame, torch.device("cuda"), mapping)[0]
    calls = [[t.cpu() if isinstance(t, torch.Tensor) else t for t in c] for c in calls]
    mapping.close()
    return calls


def act(
    action: dict,
    request: dict,
    out,
    problem_dir: str | None,
    inputs: list,
    timed: dict,
    frame: list,
) -> None:
    from farm.harness import protocol

    if "exit" in action:
        os._exit(action["exit"])
    if "signal" in action:
        os.kill(os.getpid(), action["signal"])
    if action.get("hang"):
        time.sleep(3600)
    if "raw" in action:
        out.write(action["raw"].encode("latin-1"))
        out.flush()
        return
    if "announce_bytes" in action:
        header = {"op": request["op"], "ok": True}
        meta = [
            {
                "dtype": "uint8",
                "shape": [action["announce_bytes"]],
                "nbytes": action["announce_bytes"],
            }
        ]
        body = json.dumps({**header, "tensors": meta}).encode()
        out.write(protocol.MAGIC + protocol._LEN.pack(len(body)) + body + b"\0" * 4096)
        out.flush()
        time.sleep(3600)
    calls = request["calls"] if request["op"] == "window" else 0
    time.sleep(action.get("sleep", 0) + action.get("sleep_per_call", 0) * calls)
    honest = action.get("outputs") == "reference" and request["op"] != "picks"
    outputs = reference(inputs, problem_dir) if honest else []
    reply = {"op": request["op"], **action["reply"]}
    if honest and request["op"] == "check":  # the inputs go back as the call left them
        reply.setdefault("inputs_after", len(frame))
        outputs = outputs + list(frame)
    if request["op"] == "window" and "per_call_ms" in action:
        reply["times_ms"] = [action["per_call_ms"]] * calls
    if request["op"] == "picks" and action.get("outputs") in ("reference", "first"):
        replay = action.get("outputs") == "first"
        first = min(timed)
        per_call = [reference(timed[first if replay else i], problem_dir) for i in request["calls"]]
        reply.update(calls=request["calls"], counts=[len(o) for o in per_call])
        outputs = [t for o in per_call for t in o]
    protocol.send(out, reply, outputs)


def reference(inputs: list, problem_dir: str | None) -> list:
    from farm.harness import runtime

    module = runtime.load_problem_module(Path(str(problem_dir)))
    return runtime.as_output_list(module.reference(*inputs))


if __name__ == "__main__":
    sys.exit(main())
