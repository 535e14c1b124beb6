"""Prints the simulated cost of a fixed set of calls as JSON (run as a module in a fresh
process by test_determinism.py). Allocates a process-dependent pad first so tensor addresses
differ between processes."""

from __future__ import annotations

import json
import os

from farm.hardware import npu_sim

measure = npu_sim.install()

import torch  # noqa: E402

from tests.hardware.npu_sim import kernels as k  # noqa: E402


def cases() -> dict[str, tuple]:
    g = torch.Generator().manual_seed(123)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    a, b = r(64, 64), r(64, 64)
    x = r(32, 256)
    return {
        "matmul_tiled": (lambda p, q: k.matmul_tiled(p, q, 32, 32, 32), (a, b)),
        "matmul_row_panel": (lambda p, q: k.matmul_row_panel(p, q, 16, 16, 32), (a, b)),
        "matmul_naive": (k.matmul_naive, (a[:16, :16].contiguous(), b[:16, :16].contiguous())),
        "softmax_triton": (k.triton_softmax, (x,)),
        "softmax_torch_chain": (k.torch_softmax_unfused, (x,)),
        "softmax_bf16": (k.triton_softmax, (x.bfloat16(),)),
        "matmul_bf16": (
            lambda p, q: k.matmul_tiled(p, q, 32, 32, 32),
            (a.bfloat16(), b.bfloat16()),
        ),
        "rmsnorm_torch": (
            lambda t, w: t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
            (x, r(256)),
        ),
        "scale_rows": (k.scale_rows, (r(2, 8192),)),
    }


def main() -> None:
    pad = torch.empty(1 + (os.getpid() % 997) * 4099)  # shifts every later allocation
    results = {}
    for name, (fn, args) in cases().items():
        rep = measure(fn, args)
        results[name] = {**rep.to_dict(), "time_ms_hex": float(rep.time_ms).hex()}
    del pad
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
