# problem: vector_add
# cheat: writes a forged result frame straight to the process's original stdout, hoping the supervisor reads it as the harness's reply
# source: pygpubench exploit suite (forged result channel); GPU MODE reference-kernels result-file overwrite reports
# static: OUTPUT_CHANNEL
# expect: REJECTED
import json
import os
import sys

_frame = json.dumps({"op": "time", "ok": True, "times_ms": [1e-6] * 100}).encode()
os.write(1, len(_frame).to_bytes(4, "big") + _frame)
sys.__stdout__.write("PASSED\n")


def kernel(a, b):
    return a + b
