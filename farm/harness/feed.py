"""Inputs the trusted side makes and hands to the worker as data.

The worker holds no seed. Every input of every call it runs (a checked call, the warm-up, each
timed window) is made in the supervisor from seeds the worker never sees, and crosses the
boundary as bytes. A timed window's inputs travel with its request, so nothing can be computed
from them before the window's wall clock (the supervisor's) starts.

A call's inputs are described storage by storage: each distinct storage travels once, and each
input is a view of one (byte offset, shape, strides, dtype), so inputs made as views of one
another stay so and strides are kept as made. Non-tensor inputs travel as JSON values.

Two transports (the supervisor's choice, `Payload.fields`):
- pipe: the storages are the request frame's tensors (uint8). CPU, npu-sim, ROCm, and CUDA
  where the device hand-off is off.
- device (CUDA): the storages are copied into the trusted side's own arena
  (farm.harness.arena: one driver allocation that holds nothing else), at places drawn per
  call, and the worker views them where they lie through the arena's IPC handle. The kernel
  reads the trusted side's memory; after a checked call the trusted side reads it back itself
  to decide "inputs unchanged".
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

ALIGN = 4096  # a storage's place in an arena starts at a multiple of this (bytes)
MAX_CALLS = 1 << 16  # calls one request may carry inputs for
_VALUE_TYPES = (int, float, bool, str, type(None))


@dataclass
class Payload:
    """What a request carries for its calls' inputs: header `fields` and frame `tensors`, and,
    kept on the trusted side, each call's storages as sent (`sent`, uint8 copies made before any
    reference ran) and which inputs view each storage (`users`)."""

    fields: dict[str, Any]
    tensors: list[torch.Tensor]
    sent: list[list[torch.Tensor]] = field(default_factory=list)
    users: list[list[list[int]]] = field(default_factory=list)
    blocks: list[list[torch.Tensor]] = field(default_factory=list)  # device: the arena's

    @property
    def nbytes(self) -> int:
        """Bytes the pipe carries for these inputs (0 on the device)."""
        return sum(t.nbytes for t in self.tensors)


def storages_of(inputs: Sequence[Any]) -> tuple[list[torch.Tensor], list[dict[str, Any]]]:
    """A call's distinct storages (as uint8 tensors over their bytes) and each input's view of
    one (or its JSON value). Raises TypeError for an input that is neither a plain tensor nor a
    JSON value (a problem's make_inputs that cannot cross a process boundary)."""
    storages: list[torch.Tensor] = []
    index: dict[tuple[str, int], int] = {}
    views: list[dict[str, Any]] = []
    for i, t in enumerate(inputs):
        if isinstance(t, _VALUE_TYPES):
            views.append({"value": t})
            continue
        if type(t) is not torch.Tensor or t.layout != torch.strided or t.is_quantized:
            raise TypeError(f"input {i} is a {type(t).__qualname__}, which cannot be handed over")
        storage = t.untyped_storage()
        key = (str(t.device), storage.data_ptr())
        if key not in index:
            index[key] = len(storages)
            storages.append(torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage))
        views.append(_view(t, index[key]))
    return storages, views


def _view(t: torch.Tensor, storage: int) -> dict[str, Any]:
    return {
        "storage": storage,
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "offset": t.storage_offset() * t.element_size(),
        "grad": t.requires_grad,
    }


def snapshot(inputs: Sequence[Any]) -> list[Any]:
    """A copy of a call's inputs with their aliasing and strides as made (each storage copied
    once), for the trusted side to send after a reference that may write its inputs ran."""
    storages, views = storages_of(inputs)
    copies = [s.detach().clone() for s in storages]
    return [_input(v, copies) for v in views]


ARENA_MIN_BYTES = 256 << 20  # an arena spreads small inputs over at least this much memory
FEED_BYTES = 1 << 30  # a request carries at most this many bytes of inputs, or one call's


def arena_bytes(needed: int) -> int:
    """The size of an arena for `needed` bytes of inputs: twice them (room for random gaps),
    at least ARENA_MIN_BYTES, in 2 MiB steps."""
    size = max(ARENA_MIN_BYTES, 2 * needed)
    return -(-size // (2 << 20)) * (2 << 20)


def calls_that_fit(one_call_bytes: int) -> int:
    """The most calls whose inputs one request carries (at least one)."""
    return max(1, min(MAX_CALLS, FEED_BYTES // max(one_call_bytes, 1)))


def pack_pipe(calls: Sequence[Sequence[Any]]) -> Payload:
    """The inputs of `calls` for the pipe: every storage copied to the CPU now (so a reference
    that later writes its inputs cannot change what was sent)."""
    payload = Payload({}, [])
    described = []
    for inputs in calls:
        storages, views = storages_of(inputs)
        first = len(payload.tensors)
        copies = [s.detach().to("cpu", copy=True) for s in storages]
        payload.tensors += copies
        payload.sent.append(copies)
        payload.users.append(_users(views, len(storages)))
        described.append([_shift(v, first) for v in views])
    payload.fields = {"inputs": {"transport": "pipe", "calls": described}}
    return payload


def pack_device(
    calls: Sequence[Sequence[Any]], arena: Any, rng: random.Random, *, keep: bool = False
) -> Payload:
    """The inputs of `calls` copied into `arena` (farm.harness.arena.Arena) at places drawn now
    (`layout`), described for the worker. With `keep`, the trusted side also keeps a copy of
    each storage as sent (`Payload.sent`), to compare with the arena after the call; `blocks`
    are the arena's byte ranges that hold each call's storages."""
    made = [storages_of(inputs) for inputs in calls]
    flat = [s for storages, _ in made for s in storages]
    offsets = layout([s.numel() for s in flat], arena.nbytes, rng)
    blocks = [arena.bytes(o, s.numel()) for o, s in zip(offsets, flat, strict=True)]
    for block, s in zip(blocks, flat, strict=True):
        block.copy_(s.detach())
    payload = Payload({}, [])
    described, first = [], 0
    for storages, views in made:
        mine = blocks[first : first + len(storages)]
        payload.blocks.append(mine)
        payload.sent.append([b.clone() for b in mine] if keep else [])
        payload.users.append(_users(views, len(storages)))
        described.append([_shift(v, first) for v in views])
        first += len(storages)
    torch.cuda.synchronize(arena.device)  # every input is in place before the request goes out
    payload.fields = {
        "inputs": {
            "transport": "device",
            "arena": {"handle": arena.handle, "nbytes": arena.nbytes},
            "storages": [{"offset": o, "nbytes": s.numel()} for o, s in zip(offsets, flat)],
            "calls": described,
        }
    }
    return payload


def modified_inputs(payload: Payload, call: int, after: list[torch.Tensor]) -> list[int]:
    """The inputs of `call` whose storage no longer holds the bytes sent, decided by the trusted
    side: `after` are the storages as the worker left them (the pipe), or empty to read the
    arena's blocks themselves (the device)."""
    now = payload.blocks[call] if payload.blocks else after  # none handed back: all changed
    sent = payload.sent[call]
    changed: list[int] = []
    for k, users in enumerate(payload.users[call]):
        same = k < len(now) and _same(sent[k], now[k])
        changed += [] if same else users
    return sorted(changed)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.equal(a, b.to(a.device)))


def _shift(view: dict[str, Any], first: int) -> dict[str, Any]:
    return {**view, "storage": view["storage"] + first} if "storage" in view else view


def _users(views: list[dict[str, Any]], count: int) -> list[list[int]]:
    """For each storage, the inputs that view it."""
    users: list[list[int]] = [[] for _ in range(count)]
    for i, v in enumerate(views):
        if "storage" in v:
            users[v["storage"]].append(i)
    return users


def layout(sizes: Sequence[int], arena_bytes: int, rng: random.Random) -> list[int]:
    """Byte offsets for blocks of `sizes` in an arena of `arena_bytes`: ALIGN-aligned, in a
    random order with random gaps (a short kernel's time depends on where its inputs lie:
    docs/harness-fidelity.md, "Where the inputs lie"). Raises ValueError when they do not fit."""
    rounded = [-(-max(n, 1) // ALIGN) * ALIGN for n in sizes]
    total = sum(rounded)
    if total > arena_bytes:
        raise ValueError(f"{total} bytes of inputs do not fit an arena of {arena_bytes}")
    slack = (arena_bytes - total) // ALIGN
    cuts = sorted(rng.randrange(slack + 1) for _ in rounded)
    order = list(range(len(rounded)))
    rng.shuffle(order)
    offsets = [0] * len(rounded)
    before = 0
    for i, cut in zip(order, cuts, strict=True):
        offsets[i] = cut * ALIGN + before
        before += rounded[i]
    return offsets


def call_bytes(inputs: Sequence[Any]) -> int:
    """The bytes one call's inputs take in an arena (their storages, ALIGN-rounded)."""
    storages, _ = storages_of(inputs)
    return sum(-(-max(s.numel(), 1) // ALIGN) * ALIGN for s in storages)


# --- the worker's side ------------------------------------------------------------------------


def unpack(
    fields: dict[str, Any], tensors: list[torch.Tensor], device: torch.device, arena: Any = None
) -> tuple[list[list[Any]], list[torch.Tensor]]:
    """Each call's inputs from a request's `inputs` field, and the storages they view when they
    came through the pipe (moved to `device`: one copy per storage; the worker hands them back
    after a checked call). On the device they are views of `arena` (an opened
    farm.harness.arena.Mapping) where the trusted side placed them, and no storages are
    returned."""
    spec = fields.get("inputs") or {}
    calls = spec.get("calls") or []
    if spec.get("transport") == "device":
        blocks = [arena.bytes(s["offset"], s["nbytes"]) for s in spec["storages"]]
        return [[_input(v, blocks) for v in views] for views in calls], []
    storages = [t.to(device) if device.type != "cpu" else t for t in tensors]
    return [[_input(v, storages) for v in views] for views in calls], storages


def _input(view: dict[str, Any], storages: list[torch.Tensor]) -> Any:
    """One input: a JSON value, or a view of its storage (each storage tensor here owns its
    whole storage: a frame's tensor, a copy on the device, or an arena block)."""
    if "storage" not in view:
        return view.get("value")
    raw = storages[view["storage"]]
    t = torch.empty(0, dtype=getattr(torch, view["dtype"]), device=raw.device)
    t.set_(raw.untyped_storage(), view["offset"] // t.element_size(), view["shape"], view["stride"])
    return t.requires_grad_(True) if view.get("grad") and t.is_floating_point() else t
