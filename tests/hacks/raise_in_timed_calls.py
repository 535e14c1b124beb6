# problem: vector_add
# cheat: computes during checks but raises during timing, hoping failed timed calls are skipped rather than failing the run
# source: GPU MODE reference-kernels exploit reports (exceptions inside the benchmark loop)
# static: CALL_COUNTER
# expect: RUNTIME_ERROR
_calls = 0


def kernel(a, b):
    global _calls
    _calls += 1
    if _calls > 2:
        raise RuntimeError("transient failure")
    return a + b
