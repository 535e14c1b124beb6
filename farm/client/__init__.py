"""The Python client of a farm server (REST API under /api/). See docs/client.md.

Names are loaded on first use, so `farm --help` (whose command modules live in this package)
does not import `requests`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_NAMES = {
    "FarmClient": "farm.client.client",
    "run_ids": "farm.client.client",
    "Config": "farm.client.config",
    "config_load": "farm.client.config",
    "config_path": "farm.client.config",
    "config_write": "farm.client.config",
    "BadRequest": "farm.client.errors",
    "ClientError": "farm.client.errors",
    "Refused": "farm.client.errors",
    "ServerUnavailable": "farm.client.errors",
    "WaitTimeout": "farm.client.errors",
    "Board": "farm.client.types",
    "BoardEntry": "farm.client.types",
    "Reason": "farm.client.types",
    "Result": "farm.client.types",
    "Run": "farm.client.types",
    "Submission": "farm.client.types",
    "SubmitRequest": "farm.client.types",
    "WorkloadResult": "farm.client.types",
}
__all__ = [
    "BadRequest",
    "Board",
    "BoardEntry",
    "ClientError",
    "Config",
    "FarmClient",
    "Reason",
    "Refused",
    "Result",
    "Run",
    "ServerUnavailable",
    "Submission",
    "SubmitRequest",
    "WaitTimeout",
    "WorkloadResult",
    "config_load",
    "config_path",
    "config_write",
    "run_ids",
]

if TYPE_CHECKING:
    from farm.client.client import FarmClient, run_ids
    from farm.client.config import Config, config_load, config_path, config_write
    from farm.client.errors import (
        BadRequest,
        ClientError,
        Refused,
        ServerUnavailable,
        WaitTimeout,
    )
    from farm.client.types import (
        Board,
        BoardEntry,
        Reason,
        Result,
        Run,
        Submission,
        SubmitRequest,
        WorkloadResult,
    )


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'farm.client' has no attribute '{name}'")
    return getattr(importlib.import_module(_NAMES[name]), name)
