"""The agent's errors, sorted the way it must react to them.

- RetryableError: the server or the network had a problem (connection refused, timeout, 5xx,
  429). Try again later; the run is not lost.
- PermanentError: the request was understood and refused (4xx), or the input cannot be used
  (a suite whose hash does not match). Retrying cannot help.
- ClaimLost: a PermanentError meaning another node holds (or finished) the run, or this node was
  presumed dead and the run was taken back. Acknowledge the job and drop it.
"""

from __future__ import annotations


class AgentError(Exception):
    """Base class; the message says what happened and what to do."""


class ConfigError(AgentError):
    """A setting is missing or unusable; the message names the variable."""


class RetryableError(AgentError):
    pass


class PermanentError(AgentError):
    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ClaimLost(PermanentError):
    pass


class SuiteMismatch(PermanentError):
    """The pinned suite cannot be obtained with the hash the server named."""
