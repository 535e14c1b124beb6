# problem: vector_add
# cheat: during the warm-up request, takes the worker's Session from the harness's frame, rebuilds the input maker of the timed calls (the worker's own, or the problem's make_inputs with the request's seed, else the public base's) and precomputes every timed call's answer; timed calls return them
# source: trust round 3 red team (the input maker and its seed live in the worker: answers computed in the warm-up, outside every window)
# static: INTROSPECTION
# expect: REJECTED
# runtime: INCORRECT
"""The warm-up is a request of its own, outside every timed window. If the worker can make the
timed calls' inputs (it holds the input maker and its seed), everything a timed call needs can
be computed there: this file walks up to the worker's `op_time` frame, takes the Session, and
precomputes the answers of calls 0 .. max_calls - 1; a timed call looks up its own index in the
timer's frame and returns its answer. Where the worker holds no maker and no seed, it guesses
the seed a test-mode evaluation would use (the public base) and commits to that guess."""

import re
import sys
from pathlib import Path

import torch

PUBLIC_BASE = 20261122  # farm.harness.seeds.PUBLIC_BASE, public in the repository
_answers: dict[int, torch.Tensor] = {}


def _frames():
    frame = sys._getframe(2)
    while frame is not None:
        yield frame
        frame = frame.f_back


def _workload_id(problem_dir: Path, axes: dict) -> str:
    """The id of the workload whose axes are `axes`, read from problem.yaml."""
    text = (problem_dir / "problem.yaml").read_text()
    for wid, body in re.findall(r"- id: (\S+)\n((?:\s{4}.*\n)+)", text):
        shown = re.search(r"axes: \{(.*)\}", body)
        if shown and all(f"{k}: {v}" in shown.group(1) for k, v in axes.items()):
            return wid
    return ""


def _maker(session, request):
    """make(i) for the timed calls: the worker's own, else one rebuilt from the seed."""
    if isinstance(session.timing, tuple):  # (make, policy): the worker makes the inputs
        return session.timing[0], session.timing[1].max_calls
    runtime, seeds = sys.modules["farm.harness.runtime"], sys.modules["farm.harness.seeds"]
    base = request.get("seed_base")
    if base is None:  # not handed over: the public base's derivation, as test mode runs it
        problem_dir = Path(session.reference.__file__).parent
        wid = _workload_id(problem_dir, request["axes"])
        base = seeds.derive(PUBLIC_BASE, problem_dir.name, wid, "time")
    make = runtime.input_maker(session.reference, {**request, "seed_base": base}, session.device)
    return make, int(request.get("policy", {}).get("max_calls", 20000))


def _precompute(session, request) -> None:
    make, calls = _maker(session, request)
    for i in range(calls):
        a, b = make(i)
        _answers[i] = a + b


def _timed_index(frame):
    if frame.f_code.co_name != "window":
        return None
    names = frame.f_locals
    if "make_inputs" not in names or "i" not in names:
        return None
    cpu = type(names["self"]).__name__ == "CpuTimer"  # absolute index; GpuTimer: relative
    return names["i"] if cpu else names["start"] + names["i"]


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    for frame in _frames():
        if not _answers and frame.f_code.co_name == "op_time":
            _precompute(frame.f_locals["self"], frame.f_locals["request"])
        index = _timed_index(frame)
        if index is not None and index in _answers:
            return _answers[index]
    return a + b
