# problem: vector_add
# cheat: takes over the worker's channel at import (the pipes it finds with fstat) and answers every request itself: checked calls computed, timing windows claimed at 1 us a call without running them, re-checked calls computed only when the supervisor names them
# source: trust round 2 red team (protocol forging: times claimed for calls that never ran)
# static: OUTPUT_CHANNEL
# runtime: REJECTED
# expect: REJECTED
import fcntl
import os
import stat
import time

import torch

from farm.harness import feed, protocol

COST_S = 0.15  # what a call of this (slow) kernel really costs
CLAIM_MS = 0.001  # what the forged windows say it costs
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # where inputs are made


def _slow_add(a, b):
    time.sleep(COST_S)
    return a + b


def _channel():
    """The worker's ends of the channel: the first read-only and write-only pipes above stderr."""
    ends = {}
    for fd in range(3, 64):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            continue
        ends.setdefault(mode, fd)
    reader = os.fdopen(ends[os.O_RDONLY], "rb", buffering=0, closefd=False)
    return reader, os.fdopen(ends[os.O_WRONLY], "wb", closefd=False)


def _serve():
    reader, writer = _channel()
    protocol.send(writer, {"op": "load", "ok": True, "form": "native", "findings": []})
    kept = {}  # call index -> its inputs, as the windows' requests carried them
    while True:
        try:
            request, frame = protocol.recv(reader)
        except protocol.ProtocolError:
            os._exit(0)
        op = request.get("op")
        calls_inputs = feed.unpack(request, frame, DEVICE)[0] if "inputs" in request else []
        if op == "check":
            a, b = calls_inputs[0]
            reply = {"op": op, "ok": True, "inputs_after": len(frame), "findings": []}
            protocol.send(writer, reply, [_slow_add(a, b), *frame])
        elif op == "time":
            reply = {"op": op, "ok": True, "warmup_calls": 2, "method": "wall-clock"}
            protocol.send(writer, reply)
        elif op == "window":
            start = int(request["start"])
            kept = {start + i: inputs for i, inputs in enumerate(calls_inputs)}
            claimed = [CLAIM_MS] * int(request["calls"])
            reply = {"op": op, "ok": True, "times_ms": claimed, "event_ms": claimed}
            protocol.send(writer, {**reply, "sim": None, "findings": []})
        elif op == "picks":
            calls = request["calls"]
            outputs = [_slow_add(*kept[i]) for i in calls]
            reply = {"op": op, "ok": True, "calls": calls, "counts": [1] * len(calls)}
            protocol.send(writer, reply, outputs)
        else:
            os._exit(0)


_serve()


def kernel(a, b):
    return a + b
