"""Start every GPU measurement from a comparable thermal state.

A GPU that has just run a heavy kernel is hotter, and at the same clock a hotter die draws more
power, so a power-capped GPU runs the next measurement at a lower clock: on an H100 we saw a bf16
matmul read 3-5 % slower in late rounds of a run than in early ones. Before each measurement
the trusted side waits (up to `max_s`) until the device is no warmer than `margin_c` above the
coolest temperature it has seen this process. Clocks and power limits are never touched.
"""

from __future__ import annotations

import time
from typing import Any

from farm.config import node_settings

# The margin and the longest wait are node settings (FARM_COOLDOWN_MARGIN_C, default 6;
# FARM_COOLDOWN_MAX_S, default 8, 0 turns the gate off): short enough for a busy node.
_coolest: dict[int, float] = {}


def temperature_c(index: int) -> float | None:
    """The GPU's temperature in C through NVML, or None where NVML is not available."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        return float(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU))
    except Exception:
        return None


def cool_down(
    index: int, *, margin_c: float | None = None, max_s: float | None = None
) -> dict[str, Any]:
    """Wait until the device is within `margin_c` of its coolest reading; return what happened.
    Unset, `margin_c` and `max_s` are the node's settings."""
    settings = node_settings()
    margin_c = settings.cooldown_margin_c if margin_c is None else margin_c
    max_s = settings.cooldown_max_s if max_s is None else max_s
    start = time.monotonic()
    first = temp = temperature_c(index)
    if temp is None or max_s <= 0:
        return {"temperature_c": None, "waited_s": 0.0}
    _coolest[index] = min(_coolest.get(index, temp), temp)
    while (
        temp is not None and temp > _coolest[index] + margin_c and time.monotonic() - start < max_s
    ):
        time.sleep(0.5)
        temp = temperature_c(index)
        if temp is not None:
            _coolest[index] = min(_coolest[index], temp)
    return {
        "temperature_c": temp,
        "start_temperature_c": first,
        "waited_s": round(time.monotonic() - start, 2),
    }
