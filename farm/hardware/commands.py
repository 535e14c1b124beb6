"""`farm hardware [--json]`: the hardware classes and their peak figures."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print every class with all its peaks as JSON"
    )


def run(args: argparse.Namespace) -> int:
    from farm.hardware.specs import all_specs

    specs = all_specs()
    if args.json:
        json.dump([spec_to_dict(s) for s in specs], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(specs)
    return 0


def spec_to_dict(spec: Any) -> dict[str, Any]:
    """A HardwareSpec as JSON-ready data (peaks as a list of {dtype, unit, flops})."""
    return {
        "name": spec.name,
        "vendor": spec.vendor,
        "device": spec.device,
        "marketing_name": spec.marketing_name,
        "peaks": [{"dtype": d, "unit": u, "flops": v} for (d, u), v in spec.peaks.items()],
        "memory_bandwidth": spec.memory_bandwidth,
        "memory_bytes": spec.memory_bytes,
        "llc_bytes": spec.llc_bytes,
        "compute_units": spec.compute_units,
        "max_clock_mhz": spec.max_clock_mhz,
        "features": sorted(spec.features),
        "sources": list(spec.sources),
    }


def _print_table(specs: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Hardware classes (dense peaks, per device)")
    table.add_column("class", no_wrap=True)
    cols = ("BF16 tensor\nTFLOP/s", "FP32 vector\nTFLOP/s", "HBM\nTB/s", "LLC\nMiB", "SMs/\nCUs")
    for col in cols:
        table.add_column(col, justify="right", no_wrap=True)
    for s in specs:
        bf16 = s.peak("bfloat16", "tensor") if s.supports("bfloat16", "tensor") else None
        table.add_row(
            s.name,
            f"{bf16 / 1e12:.1f}" if bf16 else "-",
            f"{s.peak('float32', 'vector') / 1e12:.1f}",
            f"{s.memory_bandwidth / 1e12:.2f}",
            f"{s.llc_bytes / 2**20:.0f}",
            str(s.compute_units),
        )
    Console().print(table)
