"""Trusted-side comparison of a candidate's outputs with the reference's.

Rules (every one must hold, for every output): exact count, shape and dtype; no NaN or Inf; not
all zero when the reference is not; every element within |out - ref| <= atol + rtol * |ref|
(the problem's tolerance for the output dtype; integer and bool outputs must match exactly);
where the problem sets one, the normwise error ||out - ref|| / ||ref|| within `norm_rtol`; and
every invariant the problem states (softmax rows sum to 1, probabilities in [0, 1]) holds on
the output itself. There is no "99 % of elements" allowance: one wrong element fails.
Tolerances are calibrated per dtype from honest in-dtype implementations against fp64
(bench/calibrate_tolerances.py, docs/tolerances.md).

A problem whose source defines its own checker (a GPU MODE `check_implementation`: residual
checks, size-scaled tolerances) exposes it as `check(inputs, outputs) -> list[str]` in its
reference.py; that checker then replaces the dtype, element-wise, normwise and invariant rules,
and the farm keeps only its stricter rules on top (output count, no NaN or Inf, not all zero),
said in docs/formats.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from farm.result import Reason
from farm.suite.model import Invariant, Problem, Tolerance

_CHUNK = 1 << 24  # elements compared at a time (bounds the extra memory)


def compare(
    outputs: Sequence[torch.Tensor],
    expected: Sequence[torch.Tensor],
    problem: Problem,
    *,
    device: torch.device,
    check: Callable[[Sequence[torch.Tensor]], list[str]] | None = None,
) -> tuple[list[Reason], dict[str, float]]:
    """Return (reasons, error stats); no reasons means the outputs are correct. `check` is the
    problem's own checker (see the module docstring)."""
    if len(outputs) != len(expected):
        return [
            Reason("OUTPUT_COUNT", f"returned {len(outputs)} outputs, expected {len(expected)}")
        ], {}
    unread = [
        r
        for i, (out, ref) in enumerate(zip(outputs, expected))
        if out.device.type
        == "meta"  # a layout the trusted side did not read (farm.harness.cudaipc)
        for r in _structure(out, ref, _name(problem, i))
    ]
    if unread:
        return unread, {}
    if check is not None:
        return _checked(outputs, expected, check, problem, device), {}
    reasons: list[Reason] = []
    stats = {"max_abs_err": 0.0, "max_rel_err": 0.0, "norm_err": 0.0}
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        name = problem.outputs[i].name if i < len(problem.outputs) else f"output {i}"
        found = _structure(out, ref, name)
        if not found:
            found, one = _values(out.to(device), ref.to(device), name, problem)
            stats = {k: max(stats[k], one.get(k, 0.0)) for k in stats}
            if not found:
                found = [
                    r
                    for inv in problem.invariants
                    if inv.output == i
                    for r in _invariant(out.to(device), inv, name)
                ]
        reasons += found
    return reasons, stats


def _name(problem: Problem, i: int) -> str:
    return problem.outputs[i].name if i < len(problem.outputs) else f"output {i}"


def _checked(
    outputs: Sequence[torch.Tensor],
    expected: Sequence[torch.Tensor],
    check: Callable[[Sequence[torch.Tensor]], list[str]],
    problem: Problem,
    device: torch.device,
) -> list[Reason]:
    found: list[Reason] = []
    for i, (out, ref) in enumerate(zip(outputs, expected)):
        name = problem.outputs[i].name if i < len(problem.outputs) else f"output {i}"
        if out.is_floating_point():
            o, r = out.to(device).reshape(-1), ref.to(device).reshape(-1)
            found += _finite_and_nonzero(o, r, name)
    if found:
        return found
    messages = check([o.to(device) for o in outputs])
    return [Reason("MISMATCH", f"the problem's own checker: {m}") for m in messages]


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Packed fp4 has no arithmetic on every device: its bytes are compared instead."""
    return t.view(torch.uint8) if t.dtype == torch.float4_e2m1fn_x2 else t


def _widened(t: torch.Tensor) -> torch.Tensor:
    """fp8 tensors as float32 (isfinite and friends have no fp8 kernels); packed fp4 as bytes."""
    if t.dtype == torch.float4_e2m1fn_x2:
        return t.view(torch.uint8)
    return t.float() if t.is_floating_point() and t.element_size() == 1 else t


def _finite_and_nonzero(o: torch.Tensor, r: torch.Tensor, name: str) -> list[Reason]:
    o, r = _widened(o), _widened(r)
    if o.is_floating_point() and not bool(torch.isfinite(o).all()):
        n = int((~torch.isfinite(o)).sum())
        return [Reason("NON_FINITE", f"{name}: {n} elements are NaN or Inf")]
    if o.numel() and not bool(o.any()) and bool(r.any()):
        return [Reason("ALL_ZERO", f"{name}: the output is all zeros and the reference is not")]
    return []


def _structure(out: torch.Tensor, ref: torch.Tensor, name: str) -> list[Reason]:
    if out.dtype != ref.dtype:
        return [Reason("WRONG_DTYPE", f"{name}: dtype {_dt(out)}, expected {_dt(ref)}")]
    if tuple(out.shape) != tuple(ref.shape):
        return [
            Reason("WRONG_SHAPE", f"{name}: shape {list(out.shape)}, expected {list(ref.shape)}")
        ]
    return []


def _values(
    out: torch.Tensor, ref: torch.Tensor, name: str, problem: Problem
) -> tuple[list[Reason], dict[str, float]]:
    if not out.is_floating_point() or out.dtype == torch.float4_e2m1fn_x2:
        bad = int((_bits(out) != _bits(ref)).sum())
        if bad:
            return [
                Reason(
                    "MISMATCH",
                    f"{name}: {bad} of {out.numel()} elements differ (exact match required)",
                )
            ], {}
        return [], {}
    o, r = out.reshape(-1), ref.reshape(-1)
    found = _finite_and_nonzero(o, r, name)
    if found:
        return found, {}
    tol = problem.tolerance_for(_dt(out))
    return _tolerance(o, r, tol, name)


def _tolerance(
    o: torch.Tensor, r: torch.Tensor, tol: Tolerance, name: str
) -> tuple[list[Reason], dict[str, float]]:
    """Element-wise and normwise errors, computed on the outputs' device in chunks; the host
    reads one small vector at the end (counts, maxima, the first and the worst element)."""
    acc = _Errors(o.device, o.dtype)
    for start in range(0, o.numel(), _CHUNK):
        acc.add(start, o[start : start + _CHUNK], r[start : start + _CHUNK], tol)
    bad, max_abs, max_rel, err_sq, ref_sq, first, worst = acc.read()
    norm = (err_sq / ref_sq) ** 0.5 if ref_sq > 0 else 0.0
    stats = {"max_abs_err": max_abs, "max_rel_err": max_rel, "norm_err": norm}
    if not bad and tol.norm_rtol is not None and norm > tol.norm_rtol:
        detail = (
            f"{name}: normwise error ||out - ref|| / ||ref|| = {norm:.3g} is above "
            f"norm_rtol={tol.norm_rtol:g}: every element is off, as when computed at a lower "
            "precision than the dtype"
        )
        return [Reason("MISMATCH", detail)], stats
    if not bad:
        return [], stats
    detail = (
        f"{name}: {bad} of {o.numel()} elements outside atol={tol.atol:g}, rtol={tol.rtol:g} "
        f"(max abs err {max_abs:.3g}; first at flat index {first}: got {float(o[first]):.6g}, "
        f"expected {float(r[first]):.6g}; worst at flat index {worst}: got "
        f"{float(o[worst]):.6g}, expected {float(r[worst]):.6g})"
    )
    return [Reason("MISMATCH", detail)], stats


class _Errors:
    """Running error statistics of one output, kept on its device (no host sync per chunk)."""

    def __init__(self, device: torch.device, dtype: torch.dtype) -> None:
        self.wide = torch.float64 if dtype == torch.float64 else torch.float32
        zero = torch.zeros((), dtype=torch.float64, device=device)
        self.bad, self.max_abs, self.max_rel, self.err_sq, self.ref_sq = (
            zero.clone() for _ in range(5)
        )
        self.first = torch.full((), -1, dtype=torch.int64, device=device)
        self.worst = torch.zeros((), dtype=torch.int64, device=device)
        self.worst_excess = torch.full((), -float("inf"), dtype=torch.float64, device=device)

    def add(self, start: int, o: torch.Tensor, r: torch.Tensor, tol: Tolerance) -> None:
        oc, rc = o.to(self.wide), r.to(self.wide)
        err = (oc - rc).abs()
        excess = err - (tol.atol + tol.rtol * rc.abs())  # > 0: outside the tolerance
        fails = excess > 0
        self.bad += fails.sum()
        self.max_abs = torch.maximum(self.max_abs, err.max().double())
        rel = (err / rc.abs().clamp_min(1e-30)).max().double()
        self.max_rel = torch.maximum(self.max_rel, rel)
        self.err_sq += err.double().square().sum()
        self.ref_sq += rc.double().square().sum()
        at = start + fails.to(torch.uint8).argmax()  # the chunk's first failure, if any
        self.first = torch.where((self.first < 0) & fails.any(), at, self.first)
        peak, where = excess.max(0)
        better = peak.double() > self.worst_excess
        self.worst = torch.where(better, start + where, self.worst)
        self.worst_excess = torch.maximum(self.worst_excess, peak.double())

    def read(self) -> tuple[int, float, float, float, float, int, int]:
        vals = torch.stack([self.bad, self.max_abs, self.max_rel, self.err_sq, self.ref_sq])
        ints = torch.stack([self.first, self.worst]).tolist()
        bad, max_abs, max_rel, err_sq, ref_sq = vals.tolist()
        return int(bad), max_abs, max_rel, err_sq, ref_sq, int(ints[0]), int(ints[1])


def _invariant(out: torch.Tensor, inv: Invariant, name: str) -> list[Reason]:
    """INVARIANT when the output breaks a property the problem states (checked in fp64)."""
    if not out.is_floating_point() or out.numel() == 0:
        return []
    slack = inv.tolerance.get(_dt(out))
    if slack is None:
        return []
    wide = out.double()
    if inv.kind == "sum":
        off = float((wide.sum(inv.dim) - inv.value).abs().max())
        if off > slack:
            return [
                Reason(
                    "INVARIANT",
                    f"{name}: sums over dim {inv.dim} are off {inv.value:g} by up to {off:.3g} "
                    f"(allowed {slack:g})",
                )
            ]
        return []
    low, high = float(wide.min()), float(wide.max())
    if low < inv.low - slack or high > inv.high + slack:
        return [
            Reason(
                "INVARIANT",
                f"{name}: values span [{low:.6g}, {high:.6g}], outside [{inv.low:g}, {inv.high:g}]",
            )
        ]
    return []


def _dt(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")
