# problem: vector_add
# cheat: walks /proc/self/fd and writes a forged timing reply to every pipe it finds, looking for the harness's private channel
# source: pygpubench exploit suite (result channel reachable through inherited fds)
# static: OUTPUT_CHANNEL
# expect: REJECTED
import json
import os

_reply = json.dumps({"op": "time", "ok": True, "times_ms": [1e-6] * 100}).encode()
for entry in os.listdir("/proc/self/fd"):
    try:
        if "pipe" in os.readlink(f"/proc/self/fd/{entry}"):
            with open(int(entry), "wb", closefd=False) as channel:
                channel.write(_reply)
    except OSError:
        pass


def kernel(a, b):
    return a + b
