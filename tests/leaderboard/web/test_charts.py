"""The roofline's log axes carry a labelled tick at every decade."""

from __future__ import annotations

from types import SimpleNamespace

from leaderboard.web.charts import Point, decades, roofline_svg, si


def test_decades_and_labels():
    assert decades(0.05, 2000) == [0.1, 1, 10, 100, 1000]
    assert decades(1e12, 1e12) == [1e12]
    assert [si(v) for v in (0.01, 1, 1e3, 1e9, 2e12)] == ["0.01", "1", "1k", "1G", "2T"]


def test_roofline_has_labelled_log_axes():
    workloads = [{"id": "w", "dtype": "float32", "flops": 2e9, "bytes": 1.2e7}]
    problem = SimpleNamespace(workloads=workloads, compute_unit="vector")
    svg = roofline_svg(hardware="nvidia-h100", problem=problem, points=[Point("a w", 166.7, 1e13)])
    x_labels = svg.count('class="tick x"')
    y_labels = svg.count('class="tick y"')
    assert x_labels >= 3 and y_labels >= 2
    assert ">10T</text>" in svg and ">100</text>" in svg
