"""Framed messages between the supervisor and the worker.

A frame is ``MAGIC | u64 header length | JSON header | raw tensor bytes``. The header lists the
tensors that follow (`dtype`, `shape`, `nbytes`) under the key ``"tensors"``. Nothing is ever
unpickled, so a hostile worker can at worst send wrong data, never run code in the supervisor.
"""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

if TYPE_CHECKING:  # torch is imported where tensors are made: starting a worker needs none
    import torch

MAGIC = b"FARM1\x00"
_LEN = struct.Struct("<Q")
MAX_HEADER_BYTES = 16 << 20


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class ProtocolError(RuntimeError):
    """The peer sent something that is not a valid frame (or closed the channel)."""


def send(stream: BinaryIO, header: dict[str, Any], tensors: list[torch.Tensor] = ()) -> None:  # type: ignore[assignment]
    """Write one frame; tensors are copied to the CPU and sent as raw bytes."""
    payloads = [_tensor_bytes(t) for t in tensors]
    meta = [
        {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape), "nbytes": len(p)}
        for t, p in zip(tensors, payloads)
    ]
    body = json.dumps({**header, "tensors": meta}, allow_nan=True).encode()
    stream.write(MAGIC + _LEN.pack(len(body)) + body)
    for p in payloads:
        stream.write(p)
    stream.flush()


def recv(
    stream: Readable, *, max_bytes: int = 1 << 40
) -> tuple[dict[str, Any], list[torch.Tensor]]:
    """Read one frame; raise ProtocolError on EOF, bad magic or oversized data."""
    head = _read_exact(stream, len(MAGIC) + _LEN.size)
    if head[: len(MAGIC)] != MAGIC:
        raise ProtocolError("bad frame magic (the channel was written by something else)")
    (size,) = _LEN.unpack(head[len(MAGIC) :])
    if size > MAX_HEADER_BYTES:
        raise ProtocolError(f"frame header of {size} bytes exceeds {MAX_HEADER_BYTES}")
    try:
        header = json.loads(_read_exact(stream, size))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"frame header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not an object")
    tensors, total = [], 0
    metas = header.pop("tensors", [])
    if not isinstance(metas, list):
        raise ProtocolError("frame header's 'tensors' is not a list")
    for meta in metas:
        dtype, shape, nbytes = _tensor_meta(meta)
        total += nbytes
        if total > max_bytes:
            raise ProtocolError(
                f"frame carries more than {max_bytes} bytes of tensors "
                "(the most this reply may hold)"
            )
        tensors.append(_read_tensor(stream, dtype, shape, nbytes))
    return header, tensors


def _tensor_meta(meta: Any) -> tuple[torch.dtype, list[int], int]:
    """A tensor's dtype, shape and size from its header entry, checked before any byte is read."""
    import torch

    if not isinstance(meta, dict):
        raise ProtocolError("a tensor entry is not an object")
    dtype = getattr(torch, str(meta.get("dtype")), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown dtype {str(meta.get('dtype'))[:40]!r}")
    shape, nbytes = meta.get("shape"), meta.get("nbytes")
    if not isinstance(shape, list) or len(shape) > 16 or not all(_count(d) for d in shape):
        raise ProtocolError("a tensor's shape is not a list of sizes")
    if not _count(nbytes):
        raise ProtocolError("a tensor's nbytes is not a size")
    n = 1
    for d in shape:
        n *= d
    if n * dtype.itemsize != nbytes:
        raise ProtocolError(f"tensor of shape {shape} {dtype} does not fit {nbytes} bytes")
    return dtype, shape, nbytes


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 48


def _tensor_bytes(t: torch.Tensor) -> bytes:
    import torch

    t = t.detach().to("cpu").contiguous().reshape(-1)
    if t.numel() == 0:
        return b""
    return t.view(torch.uint8).numpy().tobytes()


def _read_tensor(
    stream: Readable, dtype: torch.dtype, shape: list[int], nbytes: int
) -> torch.Tensor:
    """Read a tensor's bytes straight into its own storage (no second copy)."""
    import torch

    flat = torch.empty(nbytes, dtype=torch.uint8)
    view = memoryview(flat.numpy()) if nbytes else memoryview(bytearray())  # type: ignore[arg-type]
    done = 0
    while done < nbytes:
        chunk = stream.read(min(nbytes - done, 1 << 22))
        if not chunk:
            raise ProtocolError("the worker closed the channel")
        view[done : done + len(chunk)] = chunk
        done += len(chunk)
    return flat.view(dtype).reshape(shape)


def _read_exact(stream: Readable, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise ProtocolError("the worker closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
