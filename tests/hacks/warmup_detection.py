# problem: vector_add
# cheat: computes honestly for the first calls (correctness checks, warm-up) and returns an unfilled buffer once it believes timing has started
# source: field notes (detecting warm-up vs timing); GPU MODE reference-kernels exploit reports
# static: CALL_COUNTER
# expect: INCORRECT
import torch

_calls = 0


def kernel(a, b):
    global _calls
    _calls += 1
    if _calls <= 3:
        return a + b
    return torch.empty_like(a)
