"""The Python client of a farm server (REST API under /api/). See docs/client.md."""

from farm.client.client import FarmClient, run_ids
from farm.client.config import Config, config_load, config_path, config_write
from farm.client.errors import BadRequest, ClientError, Refused, ServerUnavailable, WaitTimeout
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
