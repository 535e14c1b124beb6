"""Framed messages between the supervisor and the worker.

A frame is ``MAGIC | u64 header length | JSON header | raw tensor bytes``. The header lists the
tensors that follow (`dtype`, `shape`, `nbytes`) under the key ``"tensors"``. Nothing is ever
unpickled, so a hostile worker can at worst send wrong data, never run code in the supervisor.
"""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO, Protocol

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
    for meta in header.pop("tensors", []):
        total += int(meta["nbytes"])
        if total > max_bytes:
            raise ProtocolError(f"frame carries more than {max_bytes} bytes of tensors")
        tensors.append(_tensor_from(meta, _read_exact(stream, int(meta["nbytes"]))))
    return header, tensors


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().to("cpu").contiguous().reshape(-1)
    if t.numel() == 0:
        return b""
    return t.view(torch.uint8).numpy().tobytes()


def _tensor_from(meta: dict[str, Any], data: bytes) -> torch.Tensor:
    dtype = getattr(torch, str(meta["dtype"]), None)
    if not isinstance(dtype, torch.dtype):
        raise ProtocolError(f"unknown dtype {meta['dtype']!r}")
    shape = [int(d) for d in meta["shape"]]
    n = 1
    for d in shape:
        n *= d
    if n * dtype.itemsize != len(data):
        raise ProtocolError(f"tensor of shape {shape} {dtype} does not fit {len(data)} bytes")
    if n == 0:
        return torch.empty(shape, dtype=dtype)
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8)
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
