"""What an evaluation runs on: the device kind, its hardware class and spec, and its defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from farm.errors import FarmError
from farm.hardware import kinds, specs
from farm.harness.timing import TimingPolicy
from farm.suite.model import Problem, Workload

DEVICES = kinds.KIND_NAMES
CPU_HARDWARE = "cpu"  # development only: wall-clock times, no SOL bound


@dataclass
class Selection:
    run: list[Workload]
    skipped: dict[Workload, str] = field(default_factory=dict)


@dataclass
class Target:
    device: str
    hardware: str
    spec: specs.HardwareSpec | None
    torch_device: torch.device
    device_index: int = 0

    @property
    def kind(self) -> kinds.DeviceKind:
        return kinds.get_kind(self.device)

    @property
    def llc_bytes(self) -> int:
        return self.spec.llc_bytes if self.spec else 64 << 20

    def environment(self) -> dict[str, Any]:
        from farm.hardware import detect

        env = detect.read_environment(self.device_index, vendor=self.kind.vendor)
        if self.kind.gpu:
            env["device_name"] = torch.cuda.get_device_name(self.torch_device)
        return env

    def cool_down(self) -> dict[str, Any]:
        """Wait for a comparable thermal state before a GPU measurement (farm.harness.thermal)."""
        if not self.kind.cool_down:
            return {}
        from farm.harness import thermal

        return thermal.cool_down(self.device_index)

    def policy(self, overrides: dict[str, Any]) -> TimingPolicy:
        return TimingPolicy.for_device(self.device, **overrides)

    def compile_baseline(self, wanted: bool | None) -> bool:
        """torch.compile baselines by default only on GPUs (CPU compiles take minutes)."""
        return self.kind.gpu if wanted is None else wanted

    def select(self, problem: Problem, ids: list[str] | None, *, every: bool = False) -> Selection:
        """Workloads to run: the named ones, else the small ones on npu-sim, those and the
        source sizes a host holds on cpu (Problem.cpu_workloads), and every one on GPUs and,
        with `every` (leaderboard mode), on npu-sim, which simulates every workload at its real
        size (small workloads are a subset every device runs: sources put their odd,
        bounds-checking sizes there). FarmError when the problem has nothing this device can
        run: that is the problem's property, never the submission's fault."""
        if ids:
            chosen = [problem.workload(i) for i in ids]
        elif not self.kind.gpu and not (every and self.kind.simulated):
            small = [w for w in problem.workloads if w.small]
            chosen = small if self.kind.simulated else list(problem.cpu_workloads())
            if not chosen:
                raise FarmError(
                    f"problem {problem.name} is not runnable on device {self.device}: "
                    + problem.extra.get("not_small", "it has no small workload"),
                    hint="run it on a GPU (--device cuda), or name a workload with --workload",
                )
        else:
            chosen = list(problem.workloads)
        sel = Selection(run=[])
        for w in chosen:
            why = self._unsupported(problem, w)
            if why:
                sel.skipped[w] = why
            else:
                sel.run.append(w)
        return sel

    def _unsupported(self, problem: Problem, w: Workload) -> str | None:
        if self.spec is None:
            return None
        lacking = [f for f in problem.requires if f not in self.spec.features]
        if lacking:
            return f"{self.hardware} lacks {', '.join(lacking)}"
        return None


def resolve_target(device: str, hardware: str | None, index: int = 0) -> Target:
    """Check the device name and find its hardware class (detected on GPUs unless given)."""
    kind = kinds.get_kind(device)
    if not kind.gpu:
        classes = kind.classes()  # the simulated NPU has one class; the CPU none
        if classes:
            spec = specs.get_spec(classes[0])
            return Target(device, classes[0], spec, torch.device(kind.torch_device))
        return Target(device, hardware or CPU_HARDWARE, None, torch.device(kind.torch_device))
    if not torch.cuda.is_available():
        raise FarmError(
            f"device '{device}' is not available here: torch sees no GPU",
            hint="use --device npu-sim or --device cpu on a machine without a GPU",
        )
    torch_device = torch.device(kind.torch_device, index)
    if hardware is None:
        props = torch.cuda.get_device_properties(torch_device)
        hardware = specs.detect_class(props.name, memory_bytes=props.total_memory)
    return Target(device, hardware, specs.get_spec(hardware), torch_device, index)
