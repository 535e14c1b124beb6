"""npu-sim: run Triton and PyTorch submissions on the CPU and cost them on npu-sim-v1.

Use inside the (untrusted) worker process:

    from farm.hardware import npu_sim
    npu_sim.install()                    # before the submission (or triton) is imported
    report = npu_sim.measure(kernel, inputs)
    report.output, report.time_ms        # what kernel(*inputs) returned; simulated ms

See docs/npu-sim.md for the cost model, and limits.py for the caps (FARM_NPU_SIM_*).
"""

from farm.hardware.npu_sim.api import make_api as _make_api
from farm.hardware.npu_sim.limits import SimError, SimIntegrityError, SimLimitExceeded, SimLimits
from farm.hardware.npu_sim.report import LaunchReport, SimReport

install, measure = _make_api()

__all__ = [
    "LaunchReport",
    "SimError",
    "SimIntegrityError",
    "SimLimitExceeded",
    "SimLimits",
    "SimReport",
    "install",
    "measure",
]
