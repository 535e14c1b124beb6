# problem: vector_add
# cheat: hangs a finaliser on each timed call's output; when the harness drops the output after capturing it (off the clock, inside the window), the finaliser reads the next call's inputs from the timer and computes that call's sum, which the next call returns
# source: trust round 3 red team (work hidden between calls, inside the wall-clock allowance)
# static: INTROSPECTION
# expect: REJECTED
# runtime: REJECTED
"""Unlike a finaliser that fills the current output late (captured when the timer stops, it is
seen unfilled), this one works ahead: the harness drops a call's output right after its capture,
still inside the window but outside every call's clock, and the finaliser computes the next
call's answer then. Every output is right when it is captured; each call's clock sees a lookup.
Only the window's wall, held to the reported times with an allowance that scales with the
kernel's own time, shows the work between the calls."""

import sys
import weakref

import torch

_ahead: dict[int, torch.Tensor] = {}


def _window():
    """(make_inputs, this call's index, the window's end) from the timer's frame, or None."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "window":
            names = frame.f_locals
            if "make_inputs" in names and "i" in names:
                cpu = type(names["self"]).__name__ == "CpuTimer"  # GpuTimer counts from 0
                index = names["i"] if cpu else names["start"] + names["i"]
                return names["make_inputs"], index, names["start"] + names["calls"]
        frame = frame.f_back
    return None


def _prepare(make_inputs, index: int) -> None:
    a, b = make_inputs(index)[:2]
    _ahead[index] = a + b


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    timed = _window()
    if timed is None:  # checked calls, warm-up
        return a + b
    make_inputs, index, end = timed
    out = _ahead.pop(index, None)
    if out is None:
        out = a + b
    if index + 1 < end:
        weakref.finalize(out, _prepare, make_inputs, index + 1)
    return out
