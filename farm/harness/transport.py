"""How checked outputs reach the trusted side: left on the device and copied by CUDA IPC while
that works, else through the pipe for the rest of the evaluation (said in the result)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from farm.harness import cudaipc
from farm.harness.record import Setting
from farm.harness.replies import BadReply, DeviceOutputs


class Transport:
    """The evaluation's output transport. `no_ipc`: None while outputs stay on the device, else
    why they come through the pipe."""

    def __init__(self, device: torch.device, setting: Setting) -> None:
        self.device, self.setting = device, setting
        self.no_ipc = cudaipc.unavailable_reason(device)
        setting.output_transport = _described(self.no_ipc)

    @property
    def on_device(self) -> bool:
        return self.no_ipc is None

    def to_pipe(self, why: str) -> None:
        """Outputs come through the pipe for the rest of this evaluation."""
        self.no_ipc = why
        self.setting.output_transport = _described(why)

    def received(
        self, outputs: DeviceOutputs, tensors: list[torch.Tensor], ref: list[torch.Tensor]
    ) -> list[torch.Tensor]:
        """A reply's outputs: those the worker left on the device, copied into the trusted
        side's memory (laid out as `ref`, the reference outputs), else the frame's tensors.
        Raises BadReply for a malformed entry, cudaipc.IpcError when a handle does not open."""
        if outputs.error is not None and self.on_device:
            self.to_pipe(f"the worker could not share its outputs: {outputs.error}")
        if not outputs.sent:
            return tensors
        if not self.on_device or tensors:
            raise BadReply("outputs on the device were not asked for, or came with tensors")
        try:
            entries = cudaipc.parse(outputs.entries)
            return cudaipc.receive(entries, ref, self.device)
        except cudaipc.BadEntry as exc:
            raise BadReply(str(exc)) from None


class Picks:
    """How a timing's picked outputs reach the supervisor (farm.harness.windows.PickTransport):
    on the device while the transport allows, laid out as the reference outputs of the picked
    calls (`reference`: made by the trusted side, kept for the check); else through the pipe."""

    def __init__(
        self, transport: Transport, reference: Callable[[int], list[torch.Tensor]]
    ) -> None:
        self.transport, self.reference = transport, reference

    def fields(self) -> dict[str, Any]:
        return {"outputs": "ipc"} if self.transport.on_device else {}

    def receive(
        self, outputs: DeviceOutputs, tensors: list[torch.Tensor], picks: list[int]
    ) -> list[torch.Tensor] | None:
        if not outputs.sent:
            return self.transport.received(outputs, tensors, [])
        expected = [t for index in picks for t in self.reference(index)]
        try:
            return self.transport.received(outputs, tensors, expected)
        except cudaipc.IpcError as exc:
            self.transport.to_pipe(str(exc))  # the worker still keeps them: ask again
            return None


def _described(no_ipc: str | None) -> str:
    """How checked outputs reach the trusted side, as the result's environment says it."""
    return "device (CUDA IPC)" if no_ipc is None else f"pipe ({no_ipc})"
