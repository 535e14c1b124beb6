"""Checked outputs handed from the worker to the trusted side on the device (CUDA IPC).

A correctness check on a GPU, and the re-check of a timed call the supervisor picked, do not
move the candidate's outputs through host memory and a pipe: the worker leaves them where they
are and sends, for each output, a legacy CUDA IPC handle of the allocation that holds it, the
byte offset inside it, and its dtype and shape (JSON, a few hundred bytes). The trusted side

1. checks every entry against the layout it expects: the dtype and shape of the reference
   output it computed itself (so the number of bytes it reads is its own figure, never the
   worker's), the handle's length, the offset's range;
2. opens each handle once (cuIpcOpenMemHandle), checks that the window [offset, offset + bytes)
   lies inside the mapped allocation (cuMemGetAddressRange), copies the window into memory of
   its own, synchronises and closes the handle, so the worker cannot change what is compared;
3. compares on its device (farm.harness.correctness), which reports back to the host only
   statistics and the worst elements.

An output whose dtype or shape is not the reference's is not opened: it becomes a tensor on the
"meta" device, which carries the claimed layout (for the WRONG_SHAPE / WRONG_DTYPE reason) and
no data. Everything here talks to the driver (libcuda) through ctypes, in both processes: the
worker asks for handles of the allocations its outputs live in (cuMemGetAddressRange,
cuIpcGetMemHandle), which needs no private torch API and no shared-memory ref-counting files.

Legacy IPC handles open only where the two processes share a PID namespace (docs/security.md);
where opening fails the supervisor goes back to the pipe for the rest of the evaluation and the
result's environment says why (`output_transport`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import torch

from farm.config import node_settings

HANDLE_BYTES = 64  # CU_IPC_HANDLE_SIZE
MAX_OUTPUTS = 64  # entries one reply may carry
_LAZY_ENABLE_PEER_ACCESS = 1  # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
TRANSPORT_ENV = "FARM_OUTPUT_TRANSPORT"  # "pipe" turns device hand-off off (node setting)


class IpcError(RuntimeError):
    """A handle could not be made or opened; the message carries the driver's error name."""


class BadEntry(ValueError):
    """An output entry from the worker that is not well formed (the reply is then bad)."""


class Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


_DRIVER: ctypes.CDLL | None = None


def driver() -> ctypes.CDLL:
    global _DRIVER
    if _DRIVER is None:
        try:
            _DRIVER = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise IpcError(f"the CUDA driver library is not loadable: {exc}") from None
    return _DRIVER


def call(name: str, *args: Any) -> None:
    """Call driver function `name` (its _v2 where there is one); IpcError on failure."""
    lib = driver()
    fn = getattr(lib, f"{name}_v2", None) or getattr(lib, name)
    code = fn(*args)
    if code != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorName(code, ctypes.byref(text))
        raise IpcError(f"{name} failed: {(text.value or b'?').decode()} ({code})")


def unavailable_reason(device: torch.device) -> str | None:
    """Why outputs cannot be handed over on `device` (None: they can)."""
    if node_settings().output_transport == "pipe":
        return f"{TRANSPORT_ENV}=pipe on this node"
    if device.type != "cuda" or torch.version.hip is not None:
        return "device hand-off is CUDA only"
    try:
        driver()
    except IpcError as exc:
        return str(exc)
    return None


# --- the worker's side --------------------------------------------------------------------


def exportable(outputs: list[torch.Tensor], device: torch.device) -> bool:
    """Whether every output lives on the worker's CUDA device (else they go through the pipe)."""
    return all(type(t) is torch.Tensor and t.device.type == "cuda" for t in outputs) and (
        device.type == "cuda"
    )


def export(outputs: list[torch.Tensor]) -> tuple[list[dict[str, Any]], list[torch.Tensor]]:
    """Entries describing `outputs` for the trusted side, and the tensors the worker must keep
    alive until it has read them (contiguous copies where an output was not contiguous).
    Raises IpcError when the driver cannot make a handle."""
    torch.cuda.synchronize()  # every write to the outputs is done before their handles go out
    entries, keep = [], []
    for t in outputs:
        t = t.detach().contiguous()
        keep.append(t)
        entry: dict[str, Any] = {
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            "handle": None,
            "offset": 0,
        }
        if t.numel():
            base, _size = address_range(t.data_ptr())
            handle = Handle()
            call("cuIpcGetMemHandle", ctypes.byref(handle), ctypes.c_uint64(base))
            # all 64 bytes (reading the char-array field would stop at the first zero byte)
            entry["handle"] = ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES).hex()
            entry["offset"] = t.data_ptr() - base
        entries.append(entry)
    return entries, keep


def address_range(pointer: int) -> tuple[int, int]:
    """(base, bytes) of the allocation that holds device address `pointer`."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    call("cuMemGetAddressRange", ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer))
    return base.value, size.value


# --- the trusted side ---------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One output as the worker described it, with every field checked for type and range."""

    dtype: torch.dtype
    shape: tuple[int, ...]
    handle: bytes | None
    offset: int

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n


def parse(value: Any) -> list[Entry]:
    """The worker's output entries, validated (BadEntry says what was wrong)."""
    if not isinstance(value, list) or len(value) > MAX_OUTPUTS:
        raise BadEntry(f"'outputs_ipc' must be a list of at most {MAX_OUTPUTS} entries")
    return [_entry(item) for item in value]


def _entry(item: Any) -> Entry:
    if not isinstance(item, dict):
        raise BadEntry("an output entry is not an object")
    dtype = getattr(torch, str(item.get("dtype"))[:40], None)
    if not isinstance(dtype, torch.dtype):
        raise BadEntry(f"unknown dtype {str(item.get('dtype'))[:40]!r}")
    shape = item.get("shape")
    if not isinstance(shape, list) or len(shape) > 16 or not all(_size(d) for d in shape):
        raise BadEntry("an output's shape is not a list of at most 16 sizes")
    numel = 1
    for d in shape:
        numel *= d
    if numel * dtype.itemsize >= 1 << 48:
        raise BadEntry("an output's shape is larger than any device memory")
    offset, handle = item.get("offset"), item.get("handle")
    if not _size(offset):
        raise BadEntry("an output's offset is not a byte count")
    if handle is None:
        if numel:
            raise BadEntry("a non-empty output came without a handle")
        return Entry(dtype, tuple(shape), None, 0)
    if not isinstance(handle, str) or len(handle) != 2 * HANDLE_BYTES:
        raise BadEntry(f"a handle must be {HANDLE_BYTES} bytes in hex")
    try:
        raw = bytes.fromhex(handle)
    except ValueError:
        raise BadEntry("a handle is not hex") from None
    return Entry(dtype, tuple(shape), raw, int(offset))  # type: ignore[arg-type]


def _size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 48


def receive(
    entries: list[Entry], expected: list[torch.Tensor], device: torch.device
) -> list[torch.Tensor]:
    """The worker's outputs as tensors the trusted side owns, on `device`. An entry whose
    layout is not the expected output's (or any entry, when their count is not the expected
    outputs') comes back as a "meta"
    tensor of the claimed layout, never opened. Raises IpcError when a handle does not open
    or its window lies outside the allocation."""
    counted = len(entries) == len(expected)  # else nothing is read: OUTPUT_COUNT says it all
    wanted = [
        i
        for i, e in enumerate(entries)
        if counted and _layout(e) == (expected[i].dtype, tuple(expected[i].shape))
    ]
    outputs = [torch.empty(e.shape, dtype=e.dtype, device="meta") for e in entries]
    if not wanted:
        return outputs
    driver()
    opened: dict[bytes, tuple[int, int]] = {}
    with torch.cuda.device(device):  # handles open in this device's (primary) context
        torch.cuda.synchronize()
        try:
            for i in wanted:
                outputs[i] = _copy(entries[i], device, opened)
            torch.cuda.synchronize()
        finally:
            for base, _ in opened.values():
                call("cuIpcCloseMemHandle", ctypes.c_uint64(base))
    return outputs


def _layout(e: Entry) -> tuple[torch.dtype, tuple[int, ...]]:
    return e.dtype, e.shape


def _copy(e: Entry, device: torch.device, opened: dict[bytes, tuple[int, int]]) -> torch.Tensor:
    mine = torch.empty(e.shape, dtype=e.dtype, device=device)
    if e.handle is None or not e.nbytes:
        return mine
    if e.handle not in opened:
        mapped = ctypes.c_uint64()
        call(
            "cuIpcOpenMemHandle",
            ctypes.byref(mapped),
            Handle.from_buffer_copy(e.handle),
            ctypes.c_uint(_LAZY_ENABLE_PEER_ACCESS),
        )
        opened[e.handle] = (mapped.value, 0)  # closed in receive() even if the next step fails
        opened[e.handle] = (mapped.value, address_range(mapped.value)[1])
    base, size = opened[e.handle]
    if e.offset + e.nbytes > size:
        raise BadEntry(
            f"an output's window [{e.offset}, {e.offset + e.nbytes}) lies outside its "
            f"{size}-byte allocation"
        )
    try:
        window = torch.as_tensor(DeviceBytes(base + e.offset, e.nbytes), device=device)
        mine.view(-1).view(torch.uint8).copy_(window)
    except (TypeError, RuntimeError) as exc:  # the mapping is not usable here
        raise IpcError(f"reading an opened handle failed: {exc}") from None
    return mine


class DeviceBytes:
    """A device byte range, shown to torch through the CUDA array interface (no copy)."""

    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (pointer, False),  # torch takes no read-only device memory
            "version": 2,
        }
