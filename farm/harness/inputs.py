"""The inputs of every call, made on the trusted side from the evaluation's seed, and the
reference outputs they have (farm.harness.reference); handed to the worker as data (in this
process's arena on the device while CUDA IPC serves, else through the pipe: farm.harness.feed).
The worker never holds a seed."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from farm.harness import cudaipc, feed, reference, runtime
from farm.harness.arena import Arena
from farm.harness.case import Case
from farm.harness.sizes import Sizes
from farm.harness.transport import Transport
from farm.suite.model import Workload


@dataclass
class Made:
    """A checked call's inputs as made on the trusted side (kept as made) and its reference
    outputs, with the seconds both took (s)."""

    inputs: list[Any]
    ref: list[torch.Tensor]
    ref_s: float


class Inputs:
    """Makes inputs and reference outputs, and packs inputs for a request."""

    def __init__(self, case: Case, sizes: Sizes, transport: Transport) -> None:
        self.case, self.sizes, self.transport = case, sizes, transport
        self.arena: Arena | None = None  # the inputs handed over on the device (CUDA)
        self.place_rng = random.Random(int.from_bytes(os.urandom(8), "little"))
        # a check's inputs and reference outputs made ahead, by (workload id, seed)
        self.ahead: dict[tuple[str, int], Made] = {}

    def maker(self, w: Workload, seed: int) -> Callable[[int], list[Any]]:
        """make(i): the inputs of call i of a request with base `seed`, made here."""
        module = reference.load_reference(self.case.problem)
        request = {"axes": w.axes, "dtype": w.dtype, "seed_base": seed}
        return runtime.input_maker(module, request, self.case.target.torch_device)

    def make_ahead(self, w: Workload, seed: int) -> None:
        """Make a check's inputs and reference now (while a worker starts), for `checked`."""
        self.ahead[(w.id, seed)] = self.made(w, seed)

    def checked(self, w: Workload, seed: int) -> Made:
        """A checked call's inputs and reference, made ahead or now."""
        return self.ahead.pop((w.id, seed), None) or self.made(w, seed)

    def made(self, w: Workload, seed: int, index: int = 0, *, send: bool = True) -> Made:
        """Call `index`'s inputs, made here, and the reference outputs with the seconds the
        trusted side took to make them: the yardstick of the candidate's time limits. With
        `send`, the inputs kept are a copy made before the reference ran (it may write its
        inputs), for the worker; without (a re-check's reference), none are kept."""
        device = self.case.target.torch_device
        gpu = self.case.target.kind.gpu
        if gpu:
            before = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
        started = time.perf_counter()
        inputs = self.maker(w, seed)(index)
        sent = feed.snapshot(inputs) if send else []
        ref = reference.outputs_of(self.case.problem, inputs)
        if gpu:
            torch.cuda.synchronize(device)
            self.sizes.note_peak(w, torch.cuda.max_memory_allocated(device) - before)
        return Made(sent, ref, time.perf_counter() - started)

    def expected(self, w: Workload, seed: int, index: int) -> list[torch.Tensor]:
        """The reference outputs of call `index` (a re-checked call's)."""
        return self.made(w, seed, index, send=False).ref

    def payload(self, calls: list[list[Any]], *, keep: bool = False) -> feed.Payload:
        """These calls' inputs as a request carries them: in this process's arena on the
        device while CUDA IPC serves, else through the pipe (farm.harness.feed). `keep`: keep
        a copy of what was sent (a checked call's inputs, compared after the call)."""
        if not self.transport.on_device or self.case.target.torch_device.type != "cuda":
            return feed.pack_pipe(calls)
        needed = sum(feed.call_bytes(c) for c in calls)
        try:
            if self.arena is None or self.arena.nbytes < needed:
                self.close()
                self.arena = Arena(self.case.target.torch_device, feed.arena_bytes(needed))
        except cudaipc.IpcError as exc:  # the driver would not give or share the memory
            self.transport.to_pipe(f"the inputs' arena could not be made: {exc}")
            return feed.pack_pipe(calls)
        return feed.pack_device(calls, self.arena, self.place_rng, keep=keep)

    def close(self) -> None:
        """Free the arena (the worker that mapped it is done)."""
        if self.arena is not None:
            self.arena.close()
            self.arena = None
