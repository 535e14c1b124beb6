"""The roofline chart of a board as inline SVG (no JavaScript library, nothing from a CDN).

x: arithmetic intensity (FLOP per compulsory byte), y: achieved FLOP/s, both log scale with a
labelled grid line at every decade. The roof
is min(peak FLOP/s, bandwidth x intensity) of the hardware class; each point is one workload of
one board entry (FLOPs / measured time). Each workload shown is a labelled dashed line at its
intensity; the points of the first LABELLED_ENTRIES entries carry their rank beside them; every
point names its entry, workload and figures on hover.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

from leaderboard.problems import farm_bridge

W, H, PAD = 640, 360, 56
LABELLED_ENTRIES = 5
LABEL_GAP = 10  # px: closer labels are merged


@dataclass
class Point:
    label: str
    intensity: float
    flops_per_s: float
    tag: str = ""  # the visible label beside the point ("" for none)


def roof(hardware: str, dtype: str, unit: str) -> tuple[float, float] | None:
    """(peak FLOP/s, bandwidth bytes/s) of `hardware` for `dtype` on `unit`, or None."""
    spec = farm_bridge.hardware_spec(hardware)
    if spec is None:
        return None
    try:
        return float(spec.peak(dtype, unit)), float(spec.memory_bandwidth)
    except Exception:
        return None


def board_points(
    problem: Any, entries: list[Any], workloads: list[str] | None = None
) -> list[Point]:
    """One point per workload of each ranked entry (only `workloads`, when given: the page's
    sizes); the first LABELLED_ENTRIES entries' points are tagged with their rank ("#1"): the
    workload is the labelled line the point stands on (roofline_svg's `workloads`)."""
    shapes = {w["id"]: w for w in problem.workloads}
    points = []
    for i, ranked in enumerate(entries):
        e = ranked.entry
        for wid, (low, high) in e.intervals.items():
            w = shapes.get(wid)
            t_ms = ((e.workloads or {}).get(wid) or {}).get("time_ms") or (low + high) / 2
            if w and w["bytes"] and w["flops"] and t_ms > 0 and wid in (workloads or [wid]):
                tag = f"#{ranked.rank}" if i < LABELLED_ENTRIES else ""
                label = f"#{ranked.rank} {e.user.username} {wid}"
                points.append(Point(label, w["flops"] / w["bytes"], w["flops"] / (t_ms / 1e3), tag))
    return points


def roofline_svg(
    *, hardware: str, problem: Any, points: list[Point], workloads: list[str] | None = None
) -> str:
    """The chart; each of `workloads` (ids) is marked by a labelled line at its intensity."""
    dtype = problem.workloads[0]["dtype"] if problem.workloads else "float32"
    found = roof(hardware, dtype, problem.compute_unit)
    if found is None:
        return ""
    peak, bandwidth = found
    ridge = peak / bandwidth
    xs = [p.intensity for p in points] + [
        w["flops"] / w["bytes"] for w in problem.workloads if w["bytes"]
    ]
    x_lo = max(min([*xs, ridge]) / 8, 1e-3)
    x_hi = max([*xs, ridge]) * 8
    y_hi = peak * 2
    y_lo = min([p.flops_per_s for p in points] + [bandwidth * x_lo]) / 2

    def sx(x: float) -> float:
        return PAD + (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * (
            W - 2 * PAD
        )

    def sy(y: float) -> float:
        return (
            H
            - PAD
            - (math.log10(y) - math.log10(y_lo))
            / (math.log10(y_hi) - math.log10(y_lo))
            * (H - 2 * PAD)
        )

    def at(x: float, y: float) -> str:
        return f"{sx(x):.1f},{sy(y):.1f}"

    roof_path = f"M{at(x_lo, bandwidth * x_lo)} L{at(ridge, peak)} L{at(x_hi, peak)}"
    parts = [
        f'<svg class="roofline" viewBox="0 0 {W} {H}" role="img" '
        f'aria-label="roofline of {_esc(hardware)}">',
        f'<rect x="{PAD}" y="{PAD}" width="{W - 2 * PAD}" height="{H - 2 * PAD}" class="frame"/>',
        *_ticks(x_lo, x_hi, sx, sy, y_lo, y_hi),
        f'<path d="{roof_path}" class="roof"/>',
        *_workload_marks(problem, workloads or [], sx),
    ]
    for p in points:
        tip = f"{p.flops_per_s / 1e12:.3g} TFLOP/s at {p.intensity:.3g} FLOP/B"
        parts.append(
            f'<circle cx="{sx(p.intensity):.1f}" cy="{sy(p.flops_per_s):.1f}" r="4" class="pt">'
            f"<title>{_esc(p.label)}: {tip}</title></circle>"
        )
    placed = [(sx(p.intensity), sy(p.flops_per_s), p.tag) for p in points if p.tag]
    for x, y, text in _merged_labels(placed):
        parts.append(_text(x + 6, y - 6, text, cls="pt-label"))
    parts += [
        _text(W / 2, H - 12, "arithmetic intensity (FLOP/byte, log)", anchor="middle"),
        _text(14, H / 2, "achieved FLOP/s (log)", anchor="middle", rotate=True),
        _text(sx(x_hi) - 4, sy(peak) - 6, f"peak {peak / 1e12:.3g} TFLOP/s", anchor="end"),
        _text(sx(x_lo) + 4, sy(bandwidth * x_lo) - 8, f"{bandwidth / 1e12:.3g} TB/s"),
        "</svg>",
    ]
    return "".join(parts)


def _merged_labels(placed: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """Labels of points that stand within LABEL_GAP pixels of each other (on one workload's
    line: tied entries, or close ones) become one label listing each tag once."""
    merged: list[tuple[float, float, list[str]]] = []
    for x, y, tag in sorted(placed):
        last = merged[-1] if merged else None
        if last and abs(last[0] - x) < LABEL_GAP and abs(last[1] - y) < LABEL_GAP:
            if tag not in last[2]:
                last[2].append(tag)
        else:
            merged.append((x, y, [tag]))
    return [(x, y, " ".join(tags)) for x, y, tags in merged]


def _workload_marks(problem: Any, ids: list[str], sx: Any) -> list[str]:
    """A dashed line at each intensity of the named workloads, labelled along the line with the
    ids of the workloads there (one line for workloads of the same intensity)."""
    at: dict[float, list[str]] = {}
    for w in problem.workloads:
        if w["id"] in ids and w["bytes"] and w["flops"]:
            at.setdefault(round(sx(w["flops"] / w["bytes"]), 1), []).append(w["id"])
    parts = []
    for x, names in at.items():
        parts.append(f'<line x1="{x}" y1="{PAD}" x2="{x}" y2="{H - PAD}" class="workload"/>')
        parts.append(_text(x - 3, PAD + 4, ", ".join(names), anchor="end", rotate=True, cls="wl"))
    return parts


def decades(lo: float, hi: float) -> list[float]:
    """The powers of ten within [lo, hi] (lo > 0), where a log axis gets its ticks."""
    first, last = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    return [10.0**k for k in range(first, last + 1)]


def si(value: float) -> str:
    """1e12 -> "1T", 1e-2 -> "0.01": short tick labels."""
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:g}{prefix}"
    return f"{value:g}"


def _ticks(x_lo, x_hi, sx, sy, y_lo, y_hi) -> list[str]:
    """A grid line and a label at every decade of both axes."""
    parts = []
    for x in decades(x_lo, x_hi):
        parts.append(
            f'<line x1="{sx(x):.1f}" y1="{PAD}" x2="{sx(x):.1f}" y2="{H - PAD}" class="grid"/>'
        )
        parts.append(_text(sx(x), H - PAD + 16, si(x), anchor="middle", cls="tick x"))
    for y in decades(y_lo, y_hi):
        parts.append(
            f'<line x1="{PAD}" y1="{sy(y):.1f}" x2="{W - PAD}" y2="{sy(y):.1f}" class="grid"/>'
        )
        parts.append(_text(PAD - 6, sy(y) + 4, si(y), anchor="end", cls="tick y"))
    return parts


def _text(
    x: float, y: float, text: str, *, anchor: str = "start", rotate: bool = False, cls: str = ""
) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    css = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{css}{turn}>{_esc(text)}</text>'


def _esc(text: str) -> str:
    return html.escape(text, quote=True)
