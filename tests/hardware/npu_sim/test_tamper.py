"""Submissions that try to lower their own simulated time are detected (or have no effect).

Each `attack_*` function plays a submission's `kernel`: it does the work honestly through a
counted kernel, and tries to make that work look cheaper. Every patch is undone afterwards so
the other tests see a clean simulator.
"""

from __future__ import annotations

import builtins
import gc
import types

import numpy as np
import pytest
import torch
from triton.runtime import interpreter as interp

import farm.hardware.npu_sim.costmodel as costmodel
from farm.hardware import npu_sim
from farm.hardware.npu_sim import SimIntegrityError
from farm.hardware.npu_sim.spec import NPU_SIM_V1
from tests.hardware.npu_sim import kernels as k


@pytest.fixture
def inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(4096, generator=g), torch.randn(4096, generator=g)


@pytest.fixture
def restore():
    """Records (owner, name) pairs to put back after the test, whatever the attack did."""
    saved: list[tuple[object, str, object]] = []

    def remember(owner, name):
        saved.append((owner, name, vars(owner).get(name, _ABSENT)))

    yield remember
    for owner, name, value in reversed(saved):
        if value is _ABSENT:
            if name in vars(owner):
                delattr(owner, name)
        else:
            setattr(owner, name, value)


_ABSENT = object()


def _honest(a, b):
    return k.triton_add(a, b, block=1024)


def test_honest_kernel_passes(inputs):
    assert npu_sim.measure(_honest, inputs).time_ms > 0


# -- 1. patching the simulator's own functions and figures -------------------------------


def test_patching_cost_functions_is_detected(inputs, restore):
    restore(costmodel, "program_s")
    restore(costmodel, "launch_s")

    def attack(a, b):
        costmodel.program_s = lambda *args: 0.0
        costmodel.launch_s = lambda programs, p: 0.0
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match=r"costmodel.*replaced"):
        npu_sim.measure(attack, inputs)


def test_swapping_a_functions_code_is_detected(inputs, restore):
    original = costmodel.compute_s.__code__

    def attack(a, b):
        costmodel.compute_s.__code__ = (lambda work, p: 0.0).__code__
        return _honest(a, b)

    try:
        with pytest.raises(SimIntegrityError, match="compute_s"):
            npu_sim.measure(attack, inputs)
    finally:
        costmodel.compute_s.__code__ = original


def test_editing_the_pinned_spec_is_detected(inputs):
    rates = NPU_SIM_V1.vector_flop_per_cycle
    original = rates["float32"]

    def attack(a, b):
        rates["float32"] = 10**9
        return _honest(a, b)

    try:
        with pytest.raises(SimIntegrityError, match="spec was modified"):
            npu_sim.measure(attack, inputs)
    finally:
        rates["float32"] = original


def test_patching_builtins_used_by_the_cost_path_is_detected(inputs, restore):
    restore(builtins, "sum")
    real_sum = builtins.sum

    def attack(a, b):
        out = _honest(a, b)
        builtins.sum = lambda items, start=0: real_sum(items, start) * 0  # totals become 0
        return out

    with pytest.raises(SimIntegrityError, match="sum was replaced"):
        npu_sim.measure(attack, inputs)


def test_tampering_at_import_time_is_caught_before_the_call(inputs, restore):
    restore(np, "unique")
    np.unique = lambda ar, *args, **kw: np.asarray(ar)[:0]  # "my module did this on import"
    with pytest.raises(SimIntegrityError, match="unique"):
        npu_sim.measure(_honest, inputs)


# -- 2. resetting the counters found through the garbage collector ------------------------


def _objects_named(name):
    return [o for o in gc.get_objects() if type(o).__name__ == name]


def test_clearing_the_ledger_via_gc_is_detected(inputs):
    def attack(a, b):
        out = _honest(a, b)
        for ledger in _objects_named("Ledger"):
            ledger.launches.clear()
            ledger.hbm_bytes = 0
        return out

    with pytest.raises(SimIntegrityError, match="launch records were altered"):
        npu_sim.measure(attack, inputs)


def test_zeroing_records_via_gc_is_detected(inputs):
    def attack(a, b):
        out = _honest(a, b)
        for record in _objects_named("ProgramRecord"):
            object.__setattr__(record, "read_bytes", 0)
            object.__setattr__(record, "write_bytes", 0)
        return out

    with pytest.raises(SimIntegrityError, match="launch records were altered"):
        npu_sim.measure(attack, inputs)


def test_wiping_every_ledger_field_via_gc_is_detected(inputs):
    def attack(a, b):
        out = _honest(a, b)
        for ledger in _objects_named("Ledger"):
            import hashlib

            ledger.launches.clear()
            ledger.chain = hashlib.sha256()
            ledger.written.clear()
            ledger.read.clear()
        return out

    with pytest.raises(SimIntegrityError, match="uncounted_output"):
        npu_sim.measure(attack, inputs)


# -- 3. skipping the interpreter's counted load ------------------------------------------


def _uncounted_load(self, ptrs, mask, other, cache_policy, is_volatile):
    return interp.InterpreterBuilder.create_masked_load(
        self, ptrs, mask, other, cache_policy, is_volatile
    )


def test_patching_the_counting_builders_load_is_detected(inputs, restore):
    cls = type(interp.interpreter_builder)
    restore(cls, "create_masked_load")

    def attack(a, b):
        cls.create_masked_load = _uncounted_load
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match="create_masked_load"):
        npu_sim.measure(attack, inputs)


def test_shadowing_the_load_on_the_builder_instance_is_detected(inputs, restore):
    builder = interp.interpreter_builder
    restore(builder, "create_masked_load")

    def attack(a, b):
        builder.create_masked_load = types.MethodType(_uncounted_load, builder)
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match="builder"):
        npu_sim.measure(attack, inputs)


def test_swapping_in_a_fresh_builder_is_refused_at_launch(inputs, restore):
    restore(interp.interpreter_semantic, "builder")
    restore(interp, "interpreter_builder")

    def attack(a, b):
        fresh = interp.InterpreterBuilder()
        interp.interpreter_semantic.builder = fresh
        interp.interpreter_builder = fresh
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match="op builder was replaced"):
        npu_sim.measure(attack, inputs)


def test_patching_the_base_builders_load_is_detected(inputs, restore):
    restore(interp.InterpreterBuilder, "create_masked_load")
    original = interp.InterpreterBuilder.create_masked_load

    def attack(a, b):
        def load(self, *args):
            return original(self, *args)

        interp.InterpreterBuilder.create_masked_load = load
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match=r"InterpreterBuilder\.create_masked_load"):
        npu_sim.measure(attack, inputs)


def test_rebinding_the_same_function_has_no_effect(inputs, restore):
    restore(interp.InterpreterBuilder, "create_masked_load")
    original = interp.InterpreterBuilder.create_masked_load

    def attack(a, b):
        interp.InterpreterBuilder.create_masked_load = original
        return _honest(a, b)

    assert npu_sim.measure(attack, inputs) == npu_sim.measure(_honest, inputs)


# -- 4. doing the work where nothing counts it ---------------------------------------------


def test_leaving_the_torch_cost_mode_is_detected(inputs):
    from torch.utils._python_dispatch import _disable_current_modes

    def attack(a, b):
        with _disable_current_modes():
            return a + b

    with pytest.raises(SimIntegrityError, match="uncounted_output"):
        npu_sim.measure(attack, inputs)


def test_computing_in_numpy_is_detected(inputs):
    def attack(a, b):
        return torch.from_numpy(a.numpy() + b.numpy())

    with pytest.raises(SimIntegrityError, match="uncounted_output"):
        npu_sim.measure(attack, inputs)


def test_replacing_the_modules_measure_has_no_effect_on_a_kept_reference(inputs, restore):
    restore(npu_sim, "measure")
    kept = npu_sim.install()  # the harness keeps this reference before importing a submission

    def attack(a, b):
        npu_sim.measure = lambda fn, args, **kw: None
        return _honest(a, b)

    with pytest.raises(SimIntegrityError, match="measure"):
        kept(attack, inputs)
