"""npu-sim must be installed before any Triton kernel of these tests is decorated."""

from farm.hardware import npu_sim

npu_sim.install()
