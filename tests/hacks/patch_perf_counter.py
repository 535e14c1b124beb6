# problem: vector_add
# cheat: slows time.perf_counter down tenfold, so wall-clock timing of the CPU path reports a tenth of the real time
# source: pygpubench exploit suite (clock tampering); KernelGuard TIMER_MONKEYPATCH
# static: TIMER_MONKEYPATCH
# expect: REJECTED
import time

_real = time.perf_counter
_start = _real()
time.perf_counter = lambda: _start + (_real() - _start) / 10


def kernel(a, b):
    return a + b
