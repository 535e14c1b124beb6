"""Import a source file of another format as a module, keeping its sibling imports private.

Sources import neighbours by short names (`from task import input_t`, `from utils import ...`);
while one is imported its folder leads sys.path, and modules it pulled in under those short
names are dropped afterwards, so two problems' `task.py` never mix.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from farm.errors import SuiteError


def load_module(path: Path, *, search: list[Path] | None = None) -> ModuleType:
    """Execute the file at `path` as a fresh module; SuiteError names the file on failure."""
    name = "farm_import_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    # Absolute folders: a relative one would never prefix the absolute `__file__` of the modules
    # imported from it, and they would stay behind for the next problem's `import utils`.
    extra = [str(p.resolve()) for p in [path.parent, *(search or [])]]
    sys.path[:0] = extra
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise SuiteError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    finally:
        del sys.path[: len(extra)]
        for added in set(sys.modules) - before:
            mod_file = getattr(sys.modules[added], "__file__", None) or ""
            if mod_file and any(Path(mod_file).resolve().is_relative_to(p) for p in extra):
                del sys.modules[added]
    return module
