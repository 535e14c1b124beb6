# problem: vector_add
# cheat: finds the harness's reply channel among its open pipes (fstat) and, every few calls, writes a correctly framed timing reply that reports a call at 1 ns, ahead of the harness's own reply
# source: trust round 2 red team (protocol forging through the channel's file descriptors)
# static: OUTPUT_CHANNEL
# runtime: RUNTIME_ERROR
# expect: REJECTED
import json
import os
import stat
import struct

_calls = 0


def _pipes():
    found = []
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                found.append(fd)
        except OSError:
            pass
    return found


def _frame(header):
    body = json.dumps({**header, "tensors": []}).encode()
    return b"FARM1\x00" + struct.pack("<Q", len(body)) + body


def kernel(a, b):
    global _calls
    _calls += 1
    if _calls % 7 == 0:
        forged = _frame({"op": "window", "ok": True, "times_ms": [1e-6], "event_ms": [1e-6]})
        for fd in _pipes():
            try:
                os.write(fd, forged)
            except OSError:
                pass
    return a + b
