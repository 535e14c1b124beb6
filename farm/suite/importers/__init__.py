"""Importers and exporters of the field's problem formats (see docs/formats.md).

`farm suite import kernelbench|gpumode|flashinfer DIR` writes a pinned suite in our problem
format to user_suite_dir()/<name>/; `farm export` writes flashinfer-trace documents.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Importer:
    """One source format: the module that reads it (`import_dir(root) -> (drafts, skipped)`)
    and whether the source also holds solutions to convert (`convert_solutions(root, out)`)."""

    name: str
    module: str
    has_solutions: bool = False

    def load(self) -> Any:
        """The importer's module (imported on first use: each pulls in its own dependencies)."""
        return importlib.import_module(self.module)


IMPORTERS: dict[str, Importer] = {
    i.name: i
    for i in (
        Importer("kernelbench", "farm.suite.importers.kernelbench"),
        Importer("gpumode", "farm.suite.importers.gpumode"),
        Importer("flashinfer", "farm.suite.importers.flashinfer", has_solutions=True),
    )
}
FORMATS = tuple(IMPORTERS)
