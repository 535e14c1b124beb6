"""Pinned figures of `npu-sim-v1`, the farm's simulated NPU.

A fictional part in the range of an Ascend 910B-class accelerator: DaVinci-style cores, each with
a matrix unit (16x16x16 fp16 MACs per cycle = 8192 FLOP/cycle) and a vector unit, a unified
on-chip buffer per core, and HBM2e. The numbers are ours and are pinned: changing any of them is
a new hardware class (npu-sim-v2), because every simulated time depends on them.
Public reference points for the range (not copied figures): Ascend 910B is reported at roughly
280-380 TFLOP/s fp16 on 20-30 AI cores near 1.8 GHz with 64 GB of HBM2e at about 1.6 TB/s.
"""

from __future__ import annotations

from dataclasses import dataclass

_GHZ = 1e9


@dataclass(frozen=True)
class NpuSimSpec:
    name: str
    cores: int
    clock_hz: float
    # FLOP per cycle per core, by dtype, for each unit.
    matrix_flop_per_cycle: dict[str, int]
    vector_flop_per_cycle: dict[str, int]
    hbm_bandwidth: float  # bytes/s, whole chip
    hbm_bytes: int
    l2_bytes: int
    core_buffer_bytes: int  # on-chip buffer per core (tiles must fit here)
    launch_overhead_s: float  # per kernel launch
    program_overhead_s: float  # per program instance dispatched to a core

    def matrix_peak(self, dtype: str) -> float:
        """Whole-chip matrix-unit FLOP/s for `dtype` (0.0 when the unit lacks it)."""
        return self.matrix_flop_per_cycle.get(dtype, 0) * self.clock_hz * self.cores

    def vector_peak(self, dtype: str) -> float:
        """Whole-chip vector-unit FLOP/s for `dtype` (0.0 when the unit lacks it)."""
        return self.vector_flop_per_cycle.get(dtype, 0) * self.clock_hz * self.cores


NPU_SIM_V1 = NpuSimSpec(
    name="npu-sim-v1",
    cores=24,
    clock_hz=1.8 * _GHZ,
    # fp32 on the matrix unit runs at a quarter of fp16 (an HF32-style path); int8 at twice.
    matrix_flop_per_cycle={"float16": 8192, "bfloat16": 8192, "float32": 2048, "int8": 16384},
    # 128 fp32 lanes with FMA = 256 FLOP/cycle; 16-bit types pack two per lane.
    vector_flop_per_cycle={"float32": 256, "float16": 512, "bfloat16": 512, "int32": 256,
                           "int8": 1024, "int64": 128, "float64": 0},
    hbm_bandwidth=1.6e12,
    hbm_bytes=64 * 2**30,
    l2_bytes=192 * 2**20,
    core_buffer_bytes=512 * 2**10,
    launch_overhead_s=8e-6,
    program_overhead_s=0.5e-6,
)
