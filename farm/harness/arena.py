"""The trusted side's device memory for the inputs it hands to a CUDA worker (farm.harness.feed).

`Arena` is one allocation made with the driver (cuMemAlloc), so its IPC handle opens that
allocation and nothing else: a block of torch's caching allocator shares its segment with other
tensors, and the handle of a segment would show the worker whatever else lay in it (reference
outputs, say). The worker opens the handle once (`Mapping`) and views the inputs where the
trusted side placed them; a new arena (a larger one) is a new handle, and the worker closes the
old mapping first. Legacy IPC has no read-only mapping: what the worker writes there is the
trusted side's to read back (the "inputs unchanged" rule), and re-checked calls' inputs are made
again from their seeds, never read from the arena.
"""

from __future__ import annotations

import ctypes

import torch

from farm.harness import cudaipc


class Arena:
    """`nbytes` of device memory of the trusted side's own, with an IPC handle (hex)."""

    def __init__(self, device: torch.device, nbytes: int) -> None:
        self.device, self.nbytes = device, nbytes
        pointer = ctypes.c_uint64()
        with torch.cuda.device(device):
            torch.cuda.init()
            cudaipc.call("cuMemAlloc", ctypes.byref(pointer), ctypes.c_size_t(nbytes))
        self.pointer = pointer.value
        handle = cudaipc.Handle()
        cudaipc.call("cuIpcGetMemHandle", ctypes.byref(handle), ctypes.c_uint64(self.pointer))
        self.handle = ctypes.string_at(ctypes.addressof(handle), cudaipc.HANDLE_BYTES).hex()

    def bytes(self, offset: int, nbytes: int) -> torch.Tensor:
        """Bytes [offset, offset + nbytes) as a uint8 tensor that owns exactly them."""
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"[{offset}, {offset + nbytes}) lies outside the arena")
        view = cudaipc.DeviceBytes(self.pointer + offset, nbytes)
        return torch.as_tensor(view, device=self.device)

    def close(self) -> None:
        """Free the allocation (the device is synchronised first: no copy into it is pending)."""
        if self.pointer:
            torch.cuda.synchronize(self.device)
            cudaipc.call("cuMemFree", ctypes.c_uint64(self.pointer))
            self.pointer = 0


class Mapping:
    """The worker's view of an arena whose handle the trusted side sent."""

    def __init__(self, handle: str, nbytes: int, device: torch.device) -> None:
        self.handle, self.device = handle, device
        mapped = ctypes.c_uint64()
        cudaipc.call(
            "cuIpcOpenMemHandle",
            ctypes.byref(mapped),
            cudaipc.Handle.from_buffer_copy(bytes.fromhex(handle)),
            ctypes.c_uint(1),  # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
        )
        self.pointer = mapped.value
        self.nbytes = min(nbytes, cudaipc.address_range(self.pointer)[1])

    def bytes(self, offset: int, nbytes: int) -> torch.Tensor:
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"[{offset}, {offset + nbytes}) lies outside the mapped arena")
        view = cudaipc.DeviceBytes(self.pointer + offset, nbytes)
        return torch.as_tensor(view, device=self.device)

    def close(self) -> None:
        if self.pointer:
            torch.cuda.synchronize(self.device)
            cudaipc.call("cuIpcCloseMemHandle", ctypes.c_uint64(self.pointer))
            self.pointer = 0
