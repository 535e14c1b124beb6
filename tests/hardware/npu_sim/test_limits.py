"""Caps give a clear SimLimitExceeded, never a hang."""

from __future__ import annotations

import time

import pytest
import torch

from farm.hardware import npu_sim
from farm.hardware.npu_sim import SimLimitExceeded, SimLimits
from tests.hardware.npu_sim import kernels as k


def test_grid_cap_stops_before_running_anything():
    x = torch.randn(1 << 20)
    start = time.monotonic()
    with pytest.raises(SimLimitExceeded, match="max_programs") as info:
        npu_sim.measure(
            lambda a: k.triton_add(a, a, block=16), (x,), limits=SimLimits(max_programs=1000)
        )
    assert time.monotonic() - start < 1.0
    assert info.value.limit == "max_programs" and info.value.value == (1 << 20) // 16
    assert "FARM_NPU_SIM_MAX_PROGRAMS" in str(info.value)


def test_byte_cap_applies_to_triton_and_torch():
    x = torch.randn(64 * 1024)
    for fn in (lambda a: k.triton_add(a, a, block=4096), lambda a: a * 2):
        with pytest.raises(SimLimitExceeded, match="max_bytes"):
            npu_sim.measure(fn, (x,), limits=SimLimits(max_bytes=100_000))


def test_wall_clock_cap_interrupts_a_long_kernel():
    x = torch.randn(16)
    start = time.monotonic()
    with pytest.raises(SimLimitExceeded, match="max_wall_s"):
        npu_sim.measure(lambda a: k.spin(a, 10**7), (x,), limits=SimLimits(max_wall_s=0.5))
    assert time.monotonic() - start < 5.0


def test_a_caught_limit_still_fails_the_measurement():
    x = torch.randn(1 << 16)

    def sneaky(a):
        try:
            return k.triton_add(a, a, block=16)
        except Exception:
            return a * 2

    with pytest.raises(SimLimitExceeded, match="max_programs"):
        npu_sim.measure(sneaky, (x,), limits=SimLimits(max_programs=100))


def test_launch_cap():
    x = torch.randn(8)

    def many(a):
        for _ in range(20):
            a = a + 1
        return a

    with pytest.raises(SimLimitExceeded, match="max_launches"):
        npu_sim.measure(many, (x,), limits=SimLimits(max_launches=10))


def test_limits_from_env():
    env = {"FARM_NPU_SIM_MAX_PROGRAMS": "12", "FARM_NPU_SIM_MAX_WALL_S": "2.5"}
    assert SimLimits.from_env(env) == SimLimits(max_programs=12, max_wall_s=2.5)
    with pytest.raises(ValueError, match="FARM_NPU_SIM_MAX_BYTES"):
        SimLimits.from_env({"FARM_NPU_SIM_MAX_BYTES": "lots"})
    with pytest.raises(ValueError, match="must be positive"):
        SimLimits.from_env({"FARM_NPU_SIM_MAX_LAUNCHES": "0"})
