"""Addresses of a Triton launch, seen as offsets into its argument tensors, and the on-chip
buffer of one core.

Raw pointers differ between processes, so nothing that affects a cost may depend on them: a
pointer is turned into (slot, offset) where slot is the argument storage's position in the
launch's argument list and offset is relative to that storage's start.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

_SLOT_ALIGN = 256  # bytes between slots in the launch's private offset space


class AddressMap:
    """The storages a launch can touch, in argument order, mapped to one offset space."""

    def __init__(self, tensors: Iterable[torch.Tensor]) -> None:
        spans: list[tuple[int, int]] = []  # (storage pointer, bytes), first appearance order
        for t in tensors:
            storage = t.untyped_storage()
            ptr, size = storage.data_ptr(), storage.nbytes()
            if size > 0 and all(ptr != s for s, _ in spans):
                spans.append((ptr, size))
        bases, offset = [], 0
        for _, size in spans:
            bases.append(offset)
            offset += -(-size // _SLOT_ALIGN) * _SLOT_ALIGN
        self.total = offset  # bytes of the offset space
        order = sorted(range(len(spans)), key=lambda i: spans[i][0])
        self.keys = [spans[i][0] for i in order]  # storage pointers (integrity checks only)
        self._starts = np.array([spans[i][0] for i in order], dtype=np.uint64)
        self._ends = np.array([spans[i][0] + spans[i][1] for i in order], dtype=np.uint64)
        self._bases = np.array([bases[i] for i in order], dtype=np.int64)

    def locate(self, addrs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(region index or -1 when outside every argument, offset in the launch's space)."""
        addrs = addrs.astype(np.uint64, copy=False).ravel()
        if not len(self._starts):
            return np.full(addrs.shape, -1, np.int64), np.zeros(addrs.shape, np.int64)
        idx = np.searchsorted(self._starts, addrs, side="right").astype(np.int64) - 1
        safe = np.maximum(idx, 0)
        inside = (idx >= 0) & (addrs < self._ends[safe])
        rel = (addrs - self._starts[safe]).astype(np.int64) + self._bases[safe]
        return np.where(inside, idx, -1), np.where(inside, rel, 0)

    def region_bytes(self, idx: np.ndarray, esize: int) -> list[tuple[int, int]]:
        """(storage pointer, bytes) touched per region by the addresses with indices `idx`."""
        known = idx[idx >= 0]
        if not known.size:
            return []
        counts = np.bincount(known, minlength=len(self.keys))
        return [(self.keys[i], int(c) * esize) for i, c in enumerate(counts) if c]


class ReuseBuffer:
    """A core's on-chip buffer during one program: addresses loaded once stay resident, so a
    repeated load of them moves no HBM bytes, until the resident bytes would pass the buffer's
    capacity; then the buffer is flushed and the load counts in full.
    """

    def __init__(self, space_bytes: int, capacity: int) -> None:
        self._seen = np.zeros(max(space_bytes, 1), dtype=bool)
        self._touched: list[np.ndarray] = []
        self._resident = 0
        self._capacity = capacity

    def reset(self) -> None:
        """Empty the buffer (a new program starts with nothing resident)."""
        for t in self._touched:
            self._seen[t] = False
        self._touched.clear()
        self._resident = 0

    def admit(self, rel: np.ndarray, esize: int) -> int:
        """Load the elements at offsets `rel`; return the HBM bytes this load moves."""
        uniq = np.unique(rel)
        fresh = uniq[~self._seen[uniq]]
        moved = int(fresh.size) * esize
        if self._resident + moved > self._capacity:
            self.reset()
            fresh, moved = uniq, int(uniq.size) * esize
        self._seen[fresh] = True
        self._touched.append(fresh)
        self._resident += moved
        return moved
