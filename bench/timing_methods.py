"""Compare timing methods for run-to-run spread on a CUDA GPU (exploration for the harness).

Five kernels (the issue's set), 8 rounds; each round measures every kernel once per method, so
kernels and methods interleave as they would on a busy node. Prints per method and kernel the
spread (max - min) / median of the 8 results and writes all samples as JSON to $OUT.
Usage: python bench/timing_methods.py [--rounds 8] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:
    _NVML = None


def sm_clock() -> int:
    if _NVML is None:
        return -1
    return pynvml.nvmlDeviceGetClockInfo(_NVML, pynvml.NVML_CLOCK_SM)


def kernels():
    g = torch.Generator(device="cuda").manual_seed(0)
    r = lambda *s, dt=torch.float32: torch.randn(*s, device="cuda", generator=g).to(dt)  # noqa: E731
    a16, b16 = r(16 << 20), r(16 << 20)
    a64, b64 = r(64 << 10), r(64 << 10)
    ma, mb = r(4096, 4096, dt=torch.bfloat16), r(4096, 4096, dt=torch.bfloat16)
    sx = r(8192, 8192)
    lx, lw, lb = (
        r(16384, 4096, dt=torch.bfloat16),
        r(4096, dt=torch.bfloat16),
        r(4096, dt=torch.bfloat16),
    )
    return {
        "add_16M_fp32": lambda: a16 + b16,
        "add_64K_fp32": lambda: a64 + b64,
        "matmul_4096_bf16": lambda: ma @ mb,
        "softmax_8192_fp32": lambda: torch.softmax(sx, -1),
        "layernorm_16Kx4K_bf16": lambda: torch.nn.functional.layer_norm(lx, (4096,), lw, lb),
    }


FLUSH = None


def flush():
    FLUSH.zero_()


def soak(fn, seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            flush()
            fn()
        torch.cuda.synchronize()


def timed_calls(fn, n):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        flush()
        starts[i].record()
        fn()
        ends[i].record()
        ends[i].synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def m_fixed(fn):
    """1 s soak, then the median of 1000 flushed, synchronised calls (events)."""
    soak(fn, 1.0)
    return statistics.median(timed_calls(fn, 1000))


def m_drift(fn, window=50, tol=0.003, budget=4.0):
    """Soak until three consecutive window medians agree within tol, then median of the last 6."""
    soak(fn, 0.2)
    meds = []
    t0 = time.perf_counter()
    while True:
        meds.append(statistics.median(timed_calls(fn, window)))
        if len(meds) >= 6:
            last = meds[-3:]
            if (max(last) - min(last)) / statistics.median(last) < tol:
                break
        if time.perf_counter() - t0 > budget:
            break
    return statistics.median(meds[-6:])


def m_cupti(fn, n=300):
    """1 s soak, then kernel spans from the profiler (all streams), flush kernels excluded."""
    soak(fn, 1.0)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            flush()
            torch.cuda.nvtx.range_push("x")
            fn()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type.name == "CUDA"]
    evs.sort(key=lambda e: e.time_range.start)
    # Segment by the flush memset/fill kernels: everything between two flushes is one call.
    spans, cur = [], []
    for e in evs:
        name = e.name.lower()
        if "fill" in name or "memset" in name or "zero" in name:
            if cur:
                spans.append((cur[0].time_range.start, max(c.time_range.end for c in cur)))
            cur = []
        else:
            cur.append(e)
    if cur:
        spans.append((cur[0].time_range.start, max(c.time_range.end for c in cur)))
    durs = [(b - a) / 1000.0 for a, b in spans]  # us -> ms
    return statistics.median(durs) if durs else float("nan")


def m_graph(fn, calls=20):
    """CUDA graph of `calls` calls (no flush), median per-call time of 50 replays."""
    soak(fn, 1.0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(50):
        flush()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / calls)
    return statistics.median(times)


METHODS = {"fixed1000": m_fixed, "drift": m_drift, "cupti": m_cupti, "graph": m_graph}


def main() -> None:
    global FLUSH
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    FLUSH = torch.empty(max(256 << 20, 4 * l2) // 4, dtype=torch.int32, device="cuda")
    ks = kernels()
    methods = args.methods.split(",")
    results = {m: {k: [] for k in ks} for m in methods}
    clocks = []
    for r in range(args.rounds):
        for k, fn in ks.items():
            for m in methods:
                c0 = sm_clock()
                t = METHODS[m](fn)
                results[m][k].append(t)
                clocks.append((r, k, m, c0, sm_clock()))
        print(f"round {r} done", flush=True)
    with open(os.path.join(args.out, "timing_methods.json"), "w") as f:
        json.dump(
            {"device": torch.cuda.get_device_name(0), "results": results, "clocks": clocks}, f
        )
    print(f"\n{torch.cuda.get_device_name(0)}  spread = (max-min)/median over {args.rounds} rounds")
    print(f"{'kernel':24s}" + "".join(f"{m:>16s}" for m in methods))
    for k in ks:
        row = f"{k:24s}"
        for m in methods:
            v = results[m][k]
            med = statistics.median(v)
            row += f"{(max(v) - min(v)) / med * 100:7.2f}% {med * 1000:6.1f}us"
        print(row)


if __name__ == "__main__":
    main()
