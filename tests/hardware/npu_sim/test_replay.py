"""The trusted replay: source checks, and sampling that counts exactly what full simulation
counts on uniform launches (and falls back to full simulation on others)."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from farm.hardware.npu_sim import replay as rp
from farm.hardware.npu_sim import sampling as sp
from farm.hardware.npu_sim.record import record_call
from farm.hardware.npu_sim.trace import Kernel
from farm.hardware.npu_sim.tritonsrc import KernelRejected, check_source
from tests.hardware.npu_sim import kernels as k

GOOD = """@triton.jit
def f(x_ptr, n, BLOCK: tl.constexpr = 128):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    for i in range(0, triton.cdiv(n, BLOCK)):
        x = x * 2.0 if i > 0 else x
    tl.store(x_ptr + offs, x.to(x_ptr.dtype.element_ty), mask=offs < n)
"""


def test_a_triton_language_kernel_is_accepted():
    check_source(Kernel("f", GOOD))


def test_a_kernel_is_judged_the_same_while_the_interpreter_has_tl_patched():
    # Triton's interpreter swaps tl's builtins for wrappers while a kernel runs (and a device
    # function's call can leave them swapped): the check must not see the swap.
    from triton.runtime import interpreter as interp

    def uses_tl():
        return tl.program_id

    scope = interp._patch_lang(uses_tl)
    try:
        assert "interpreter" in tl.program_id.__module__
        check_source(Kernel("f", GOOD))
    finally:
        scope.restore()
    check_source(Kernel("f", GOOD))


@pytest.mark.parametrize(
    "line, why",
    [
        ("torch.cuda.synchronize()", "name 'torch'"),
        ("import os", "Import"),
        ("y = x.__class__", "'__class__'"),
        ("y = '{0.__globals__}'.format(x)", "literals"),
        ("y = (lambda: 0)()", "Lambda"),
        ("y = open('/etc/passwd')", "name 'open'"),
        ("y = triton.runtime", "triton.cdiv"),
        ("y = [i for i in range(3)]", "ListComp"),
        ("global n", "Global"),
        ("x.handle.data.tofile('/tmp/leak')", "'handle'"),
        ("y = x.cpu()", "'cpu'"),
    ],
)
def test_host_escapes_are_rejected(line, why):
    source = GOOD.replace("    for i in", f"    {line}\n    for i in")
    with pytest.raises(KernelRejected, match=why):
        check_source(Kernel("f", source))


def test_helpers_are_checked_too():
    helper = "@triton.jit\ndef h(x):\n    return getattr(x, 'handle')\n"
    with pytest.raises(KernelRejected, match="name 'getattr'"):
        check_source(Kernel("f", GOOD, (("h", helper),)))


@triton.jit
def _triangle(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """Program i sums rows 0..i: work grows with the program id (like causal attention)."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(0, pid + 1):
        acc += tl.load(x_ptr + r * n + offs, mask=offs < n, other=0.0)
    tl.store(o_ptr + pid * n + offs, acc, mask=offs < n)


def _triangle_call(x):
    out = torch.empty_like(x)
    _triangle[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


CASES = {
    "softmax_rows": (k.triton_softmax, [(120, 100)]),
    "matmul_tiles": (lambda a, b: k.matmul_tiled(a, b, 16, 16, 16), [(80, 48), (48, 96)]),
    "triangle_not_uniform": (_triangle_call, [(40, 24)]),
}


@pytest.fixture(scope="module")
def replays():
    return _replays()


def _replays():
    out = {}
    g = torch.Generator().manual_seed(3)
    for name, (fn, shapes) in CASES.items():
        xs = [torch.randn(*s, generator=g) for s in shapes]
        trace, _ = record_call(lambda a, fn=fn: [fn(*a)], xs)
        saved = sp.FULL_PROGRAMS
        try:
            sp.FULL_PROGRAMS = 0
            sampled = rp.replay(trace, xs, seed=7)
            sp.FULL_PROGRAMS = 1 << 30
            full = rp.replay(trace, xs, seed=7)
        finally:
            sp.FULL_PROGRAMS = saved
        out[name] = (sampled, full)
    return out


@pytest.mark.parametrize("name", ["softmax_rows", "matmul_tiles"])
def test_sampling_a_uniform_launch_counts_what_full_simulation_counts(replays, name):
    sampled, full = replays[name]
    assert sampled.sampled and not full.sampled
    assert sampled.report.to_dict()["time_ms"] == full.report.to_dict()["time_ms"]
    assert sampled.report.hbm_bytes == full.report.hbm_bytes
    assert sampled.report.flops == full.report.flops
    assert sampled.outputs_short == full.outputs_short == []
    known = sampled.known[0]
    assert known is not None and 0 < known.numel() < sampled.outputs[0].numel()


def test_a_launch_whose_programs_differ_is_simulated_in_full(replays):
    sampled, full = replays["triangle_not_uniform"]
    assert not sampled.sampled
    assert sampled.report.time_ms == full.report.time_ms
