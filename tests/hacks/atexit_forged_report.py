# problem: vector_add
# cheat: registers an exit hook that prints a fabricated result block after the harness's own output
# source: pygpubench exploit suite (forged result at exit)
# static: SIGNAL_HANDLER
# expect: REJECTED
import atexit
import json


@atexit.register
def _forge():
    print(json.dumps({"verdict": "PASSED", "time_ms": 1e-6}))


def kernel(a, b):
    return a + b
