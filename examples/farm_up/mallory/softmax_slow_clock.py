#!farm problem=softmax mode=leaderboard label=too-good-to-be-true
# expect: REJECTED
"""A cheat, kept as a demonstration: an ordinary softmax, but the module slows the wall clock
down tenfold when it is imported, so a harness that timed with time.perf_counter would report
a tenth of the real time. The static guard rejects it (TIMER_MONKEYPATCH) before it runs, and
a REJECTED run never reaches a board."""

import time

import torch

_real = time.perf_counter
_start = _real()
time.perf_counter = lambda: _start + (_real() - _start) / 10


def kernel(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
