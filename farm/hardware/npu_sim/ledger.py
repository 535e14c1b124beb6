"""Raw counts of one measured call, recorded while the submission runs.

Only counts are recorded here (bytes, FLOPs by unit and dtype, launches); times are computed
after the call, once the hooks have been verified. Sealed launches are folded into a SHA-256
chain as they are recorded, so a record removed or edited during the call no longer matches
the chain when the call ends.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np

from farm.hardware.npu_sim.costmodel import LaunchRecord, ProgramRecord, merge_work
from farm.hardware.npu_sim.limits import SimLimitExceeded, SimLimits
from farm.hardware.npu_sim.memory import AddressMap, ReuseBuffer


class ProgramState:
    """Counts of the program instance now running (Triton) on one core."""

    __slots__ = ("buffer", "read", "work", "write")

    def __init__(self, buffer: ReuseBuffer) -> None:
        self.buffer = buffer
        self.read = 0
        self.write = 0
        self.work: list[tuple[str, str, int]] = []

    def seal(self) -> ProgramRecord:
        return ProgramRecord(self.read, self.write, merge_work(self.work))


class Ledger:
    """Everything one measured call did, in the order it happened."""

    def __init__(self, limits: SimLimits, buffer_bytes: int) -> None:
        self.limits = limits
        self.buffer_bytes = buffer_bytes
        self.deadline = time.monotonic() + limits.max_wall_s
        self.launches: list[LaunchRecord] = []
        self.chain = hashlib.sha256()
        self.hbm_bytes = 0
        self.written: dict[int, int] = {}  # storage pointer -> bytes stored by counted work
        self.read: dict[int, int] = {}  # storage pointer -> bytes loaded by counted work
        self.tripped: SimLimitExceeded | None = None
        self.findings: list[str] = []
        self.triton_depth = 0  # > 0 while a Triton launch runs (its host copies are not ops)
        self.amap: AddressMap | None = None
        self.program: ProgramState | None = None
        self.programs: list[ProgramRecord] = []

    # -- limits ---------------------------------------------------------------------------
    def trip(self, exc: SimLimitExceeded) -> SimLimitExceeded:
        """Remember the first limit exceeded (a submission catching it does not clear it)."""
        if self.tripped is None:
            self.tripped = exc
        return exc

    def check_clock(self) -> None:
        if time.monotonic() > self.deadline:
            self.out_of_time()

    def out_of_time(self) -> None:
        raise self.trip(
            SimLimitExceeded("max_wall_s", self.limits.max_wall_s, self.limits.max_wall_s)
        )

    def add_bytes(self, n: int) -> None:
        self.hbm_bytes += n
        if self.hbm_bytes > self.limits.max_bytes:
            raise self.trip(SimLimitExceeded("max_bytes", self.hbm_bytes, self.limits.max_bytes))

    # -- launches -------------------------------------------------------------------------
    def seal(self, record: LaunchRecord) -> None:
        """Append a finished launch and fold it into the chain."""
        if len(self.launches) + 1 > self.limits.max_launches:
            raise self.trip(
                SimLimitExceeded("max_launches", len(self.launches) + 1, self.limits.max_launches)
            )
        self.launches.append(record)
        self.chain.update(repr(record).encode())

    def chain_intact(self) -> bool:
        """Whether the recorded launches still hash to the chain built while recording."""
        again = hashlib.sha256()
        for record in self.launches:
            again.update(repr(record).encode())
        return again.digest() == self.chain.digest()

    def touch(self, book: dict[int, int], regions: list[tuple[int, int]]) -> None:
        for key, n in regions:
            book[key] = book.get(key, 0) + n

    # -- Triton launches ------------------------------------------------------------------
    def begin_launch(self, amap: AddressMap) -> None:
        self.amap = amap
        self.programs = []
        self.program = ProgramState(ReuseBuffer(amap.total, self.buffer_bytes))

    def begin_program(self) -> None:
        self.check_clock()
        assert self.program is not None
        self.program.buffer.reset()
        self.program.read = self.program.write = 0
        self.program.work = []

    def end_program(self) -> None:
        assert self.program is not None
        self.programs.append(self.program.seal())

    def end_launch(self, name: str, grid: tuple[int, int, int]) -> None:
        programs, self.programs, self.program, self.amap = tuple(self.programs), [], None, None
        self.seal(LaunchRecord(name=name, kind="triton", grid=grid, programs=programs))

    def count_load(self, addrs: np.ndarray, esize: int) -> None:
        """Count a load of the active lanes' addresses `addrs` (masked-off lanes removed)."""
        prog, amap = self.program, self.amap
        if prog is None or amap is None:
            return
        idx, rel = amap.locate(addrs)
        inside = idx >= 0
        moved = prog.buffer.admit(rel[inside], esize) + int((~inside).sum()) * esize
        if not inside.all():
            self._outside("load")
        self.touch(self.read, amap.region_bytes(idx, esize))
        prog.read += moved
        self.add_bytes(moved)
        self.check_clock()

    def count_store(self, addrs: np.ndarray, esize: int) -> None:
        """Count a store to the active lanes' addresses `addrs` (every store moves bytes)."""
        prog, amap = self.program, self.amap
        if prog is None or amap is None:
            return
        idx, _ = amap.locate(addrs)
        if not (idx >= 0).all():
            self._outside("store")
        self.touch(self.written, amap.region_bytes(idx, esize))
        moved = int(addrs.size) * esize
        prog.write += moved
        self.add_bytes(moved)
        self.check_clock()

    def count_work(self, unit: str, dtype: str, flops: int) -> None:
        if self.program is not None and flops > 0:
            self.program.work.append((unit, dtype, int(flops)))
        self.check_clock()

    def _outside(self, what: str) -> None:
        msg = f"out_of_bounds: a Triton {what} touched memory outside every argument tensor"
        if msg not in self.findings:
            self.findings.append(msg)
