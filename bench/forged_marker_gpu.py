"""Profiler markers on a GPU: recognised by the harness's launch records, a forged one rejected.

1. The GPU timer alone (farm.harness.timing.GpuTimer), in this process: windows of an honest
   call; every window must give one span per call from the harness's own markers (matched by
   their launch records and correlation ids, farm.harness.spans), not fall back to events.
   Prints, per window, the marks, the launch records and how far the matched records lay from
   their marks' brackets once the clocks' offset was taken out.
2. The same timer on a call that does its work and then launches a Triton kernel named
   `farm_l2_flush` (read by name, the span would restart after the work): the window must fail
   with FORGED_MARKER.
3. With `--eval`, the same forgery as a submission through the farm (benchmark mode, the
   problem's small workloads): the verdict must be REJECTED, with FORGED_MARKER among its
   reasons.

    PYTHONPATH=. FARM_ALLOW_UNSANDBOXED=1 FARM_SANDBOX=process \
        python3 bench/forged_marker_gpu.py --eval

Exit 0 when all three hold.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
import triton
import triton.language as tl

from farm.harness import spans, timing
from farm.harness.simtimer import SimFailure

FORGERY = """# problem: vector_add
import torch
import triton
import triton.language as tl


@triton.jit
def farm_l2_flush(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr))


def kernel(a, b):
    out = a + b
    for _ in range(50):
        out = out * 1.0 + 0.0
    farm_l2_flush[(1,)](out)
    return out
"""


@triton.jit
def farm_l2_flush(x_ptr):  # the forgery's kernel, named as the harness's flush
    tl.store(x_ptr, tl.load(x_ptr))


def _work(xs):
    out = xs[0] + xs[1]
    for _ in range(50):
        out = out * 1.0 + 0.0
    return [out]


def _forged(xs):
    out = _work(xs)
    farm_l2_flush[(1,)](out[0])
    return out


def honest_windows(timer: timing.GpuTimer, make, policy) -> bool:
    """Part 1: spans from the harness's own markers in every window."""
    ok = True
    for w in range(5):
        window = timer.window(_work, make, 50 * w, 50, policy, keep=False)
        trace = spans._activities(_LAST["prof"]) if _LAST.get("prof") else None
        stats = _match_stats(trace) if trace else "no trace kept"
        good = timer.profiler_ok and len(window.times_ms) == 50
        ok &= good
        median = sorted(window.times_ms)[25] * 1000
        print(
            f"window {w}: {len(window.times_ms)} spans, median {median:.1f} us; {stats}; ok={good}"
        )
    return ok


def _match_stats(trace: spans.Trace) -> str:
    launches = sorted(trace.launches, key=lambda x: x.start_ns)
    starts = [x.start_ns for x in launches]
    offset = spans._offset(starts, trace.marks)
    gaps = []
    for m in trace.marks:
        i = spans._nearest(starts, m.before_ns + offset, m.after_ns + offset)
        if i is not None:
            s = starts[i]
            gaps.append(max(m.before_ns + offset - s, s - m.after_ns - offset, 0))
    return (
        f"{len(trace.marks)} marks, {len(trace.launches)} launch records, {len(gaps)} matched, "
        f"largest distance outside a bracket {max(gaps, default=0) / 1000:.1f} us"
    )


_LAST: dict = {}


def _keep_profiles() -> None:
    """Keep each window's finished profiler so part 1 can print its match statistics."""
    made = spans._profiler

    def kept():
        prof = made()
        _LAST["prof"] = prof
        return prof

    timing._profiler = kept


def forged_window(timer: timing.GpuTimer, make, policy) -> bool:
    """Part 2: the forged flush fails the window with FORGED_MARKER."""
    try:
        timer.window(_forged, make, 0, 20, policy, keep=False)
    except SimFailure as exc:
        print(f"forged marker: {exc.status} {exc.code}: {exc.detail[:160]}")
        return exc.code == "FORGED_MARKER"
    print("forged marker: the window was timed (profiler_ok", timer.profiler_ok, ")")
    return False


def through_the_farm() -> bool:
    """Part 3: the forgery as a submission, end to end."""
    from farm.harness.supervisor import evaluate
    from farm.suite.loader import load_suite

    problem = load_suite("core-v1").problem("vector_add")
    small = [w.id for w in problem.workloads if w.small]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "forged_marker.py"
        path.write_text(FORGERY)
        doc = evaluate(
            path, problem="vector_add", device="cuda", mode="benchmark", workloads=small
        ).to_json()
    codes = sorted({r["code"] for r in doc["reasons"]})
    print(f"farm eval of the forgery: {doc['verdict']} {codes}")
    return doc["verdict"] == "REJECTED"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eval", action="store_true", help="also through the farm (part 3)")
    args = ap.parse_args()
    device = torch.device("cuda")
    timer = timing.GpuTimer(device, 50 << 20)
    timing.prime(timer, device)
    a, b = torch.randn(1 << 22, device=device), torch.randn(1 << 22, device=device)
    policy = timing.TimingPolicy(place_inputs=False)
    _keep_profiles()
    ok = honest_windows(timer, lambda i: [a, b], policy)
    ok &= forged_window(timer, lambda i: [a, b], policy)
    if args.eval:
        ok &= through_the_farm()
    print("ALL OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
