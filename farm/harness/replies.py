"""What the trusted side accepts from a worker: every reply frame is parsed and checked here.

The worker runs the submission, so everything it sends is a claim that the submission may have
written itself. Parsing trusts no type, size, number or status it finds:
- a failure the worker reports becomes a status from a closed set, and only a failing one
  (`FAILURE_STATUS`): a reply can make its own verdict worse, never better;
- a success is only a claim of outputs or times, which the supervisor checks itself;
- numbers must be finite and in range, lists are capped, text is cut at `MAX_TEXT` characters
  before anyone stores or prints it.
Anything else raises `BadReply`, which ends the evaluation with a RUNTIME_ERROR that says what
was wrong with the frame.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from farm.result import Finding, Reason, WorkloadStatus

MAX_TEXT = 4000  # characters of any text a worker sends (details, tracebacks) that are kept
MAX_FINDINGS = 64  # findings kept from one reply
MAX_SAMPLES = 1_000_000  # timed calls one timing reply may report
MAX_TIME_MS = 3.6e6  # one call's time above an hour is not a measurement

# What a worker may say went wrong, and the workload status the supervisor gives it. Any other
# claim (an unknown word, "PASSED" in a failed reply, the worker's own harness failing) is a
# RUNTIME_ERROR coded WORKER_ERROR.
FAILURE_STATUS = {
    "COMPILE_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "RUNTIME_ERROR": WorkloadStatus.RUNTIME_ERROR,
    "INCORRECT": WorkloadStatus.INCORRECT,
    "REJECTED": WorkloadStatus.REJECTED,
}
_SEVERITIES = ("info", "flag", "reject")
# An allocation the sandbox's memory limit refused, as torch, Python and C++ word it. It only
# names the failure; the status stays the failing one the worker reported.
_OUT_OF_MEMORY = re.compile(
    r"out of memory|OutOfMemoryError|MemoryError|can't allocate memory|"
    r"Cannot allocate memory|std::bad_alloc"
)


class BadReply(Exception):
    """A frame from the worker that is not a well-formed reply; the message says what."""


@dataclass(frozen=True)
class Failure:
    """A failure the worker reported, as the supervisor classifies it."""

    code: str
    status: WorkloadStatus
    detail: str
    compile: bool = False  # the submission did not load (verdict COMPILE_ERROR)

    def reason(self) -> Reason:
        return Reason(self.code, self.detail)

    def error(self) -> Reason:
        """The failure as a workload's error, which names the status it gives."""
        return Reason(self.code, self.detail, extra={"status": self.status.value})


@dataclass(frozen=True)
class LoadReply:
    failure: Failure | None
    form: str | None
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class DeviceOutputs:
    """What a reply says of outputs left on the device: `sent` whether it says it left them
    there (`outputs_ipc`), `entries` their handles as sent (farm.harness.cudaipc.parse checks
    them before use), `error` why the worker could not share them (None: it did not say)."""

    sent: bool = False
    entries: Any = None
    error: str | None = None


@dataclass(frozen=True)
class CheckReply:
    failure: Failure | None
    findings: list[Finding] = field(default_factory=list)
    outputs: DeviceOutputs = field(default_factory=DeviceOutputs)


@dataclass(frozen=True)
class TraceReply:
    """The answer to 'trace' (npu-sim): the recorded call, a claim it is UNSUPPORTED (its
    detail; farm.harness.simreplay.worker_unsupported decides whether it is believed) or a
    failure."""

    failure: Failure | None
    trace: Any  # checked by farm.harness.simreplay.checked_trace before anything reads it
    unsupported: str | None = None
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class TimingStart:
    """The answer to 'time': the warm-up ran (`warmup_calls` is the worker's own count)."""

    failure: Failure | None
    method: str
    warmup_calls: int


@dataclass(frozen=True)
class WindowReply:
    """A timing claim about one window: per-call times (ms), one per call the supervisor asked
    for, and the cross-check times from events."""

    failure: Failure | None
    times_ms: list[float]
    event_ms: list[float]
    sim: dict[str, Any] | None
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class PicksReply:
    """The kept outputs of the calls the supervisor named after a window: how many tensors
    each call returned (the tensors follow in the frame, in the order asked)."""

    failure: Failure | None
    counts: list[int]


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """A worker-sent text, as a str of at most `limit` characters (the end is kept: a
    traceback's last lines say what failed)."""
    if not isinstance(value, str):
        value = "" if value is None else repr(value)[:limit]
    if len(value) <= limit:
        return value
    cut = len(value) - limit
    return f"[{cut} characters cut]\n" + value[-limit:]


def failure(header: dict[str, Any]) -> Failure | None:
    """None when the reply says ok; else the classified failure. Raises BadReply when `ok` is
    not a boolean."""
    ok = header.get("ok")
    if ok is True:
        return None
    if ok is not False:
        raise BadReply(f"'ok' must be true or false, got {type(ok).__name__}")
    claimed = header.get("status")
    detail = text(header.get("detail"))
    status = FAILURE_STATUS.get(claimed) if isinstance(claimed, str) else None
    if status is None:
        shown = text(claimed, 40)
        return Failure("WORKER_ERROR", WorkloadStatus.RUNTIME_ERROR, f"[{shown}] {detail}")
    code = header.get("code")
    if not (isinstance(code, str) and code.isidentifier() and len(code) <= 40):
        code = str(claimed)
    if _OUT_OF_MEMORY.search(detail):
        code = "MEMORY_LIMIT"
    return Failure(code.upper(), status, detail, compile=claimed == "COMPILE_ERROR")


def findings(value: Any) -> list[Finding]:
    """The guard findings a reply carries, each with a code, severity, detail and line."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadReply("'findings' must be a list")
    out = []
    for item in value[:MAX_FINDINGS]:
        if not isinstance(item, dict):
            raise BadReply("each finding must be an object")
        severity = item.get("severity")
        line = item.get("line")
        out.append(
            Finding(
                code=text(item.get("code"), 64),
                severity=severity if severity in _SEVERITIES else "flag",
                detail=text(item.get("detail"), 1000),
                line=line if isinstance(line, int) and not isinstance(line, bool) else None,
            )
        )
    return out


def load(header: dict[str, Any]) -> LoadReply:
    found = findings(header.get("findings"))
    fail = failure(header)
    form = header.get("form")
    if fail is None and not isinstance(form, str):
        raise BadReply("a successful load names the submission's form")
    return LoadReply(fail, text(form, 40) if fail is None else None, found)


def check(header: dict[str, Any]) -> CheckReply:
    """A correctness reply (whether the inputs changed is decided by the trusted side)."""
    return CheckReply(failure(header), findings(header.get("findings")), device_outputs(header))


def device_outputs(header: dict[str, Any]) -> DeviceOutputs:
    """What a reply with outputs says of those it left on the device."""
    error = text(header["outputs_ipc_error"], 300) if "outputs_ipc_error" in header else None
    return DeviceOutputs("outputs_ipc" in header, header.get("outputs_ipc"), error)


def trace(header: dict[str, Any]) -> TraceReply:
    """The reply to 'trace'."""
    found = findings(header.get("findings"))
    claimed = header.get("ok") is False and header.get("status") == "UNSUPPORTED"
    unsupported = text(header.get("detail")) if claimed else None
    return TraceReply(failure(header), header.get("trace"), unsupported, found)


def inputs_after(header: dict[str, Any], tensors: list[Any], sent: int) -> list[Any]:
    """The input storages a checked call's reply hands back on the pipe (the last tensors of
    its frame): as many as were sent (`sent`), or none when the inputs were on the device (the
    trusted side reads them there). Raises BadReply for another count."""
    count = header.get("inputs_after", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count not in (0, sent):
        raise BadReply(f"'inputs_after' must be 0 or {sent}")
    if count > len(tensors):
        raise BadReply("the reply's frame holds fewer tensors than 'inputs_after' says")
    return tensors[len(tensors) - count :] if count else []


def timing_start(header: dict[str, Any]) -> TimingStart:
    _answers(header, "time")
    fail = failure(header)
    if fail is not None:
        return TimingStart(fail, "", 0)
    warm = _number(header.get("warmup_calls"), "warmup_calls") or 0.0
    if not 0 <= warm <= MAX_SAMPLES:
        raise BadReply(f"'warmup_calls' must be a count up to {MAX_SAMPLES}")
    return TimingStart(None, text(header.get("method"), 40), int(warm))


def window(header: dict[str, Any], *, calls: int) -> WindowReply:
    """A window's reply; `calls` is how many calls the supervisor asked the window to hold."""
    _answers(header, "window")
    found = findings(header.get("findings"))
    fail = failure(header)
    if fail is not None:
        return WindowReply(fail, [], [], None, found)
    times = _times(header.get("times_ms"), "times_ms", required=True)
    events = _times(header.get("event_ms"), "event_ms")
    if len(times) != calls or len(events) not in (0, calls):
        raise BadReply(f"a window of {calls} calls must report {calls} times")
    sim = header.get("sim")
    return WindowReply(None, times, events, sim if isinstance(sim, dict) else None, found)


def picks(header: dict[str, Any], *, asked: list[int], tensors: int) -> PicksReply:
    """The reply to a pick request for the calls `asked`, whose frame carried `tensors`."""
    _answers(header, "picks")
    fail = failure(header)
    if fail is not None:
        return PicksReply(fail, [])
    calls = _indices(header.get("calls", []), "calls", MAX_SAMPLES)
    counts = _indices(header.get("counts", []), "counts", 1 << 10)
    if calls != asked or len(counts) != len(asked) or sum(counts) != tensors:
        raise BadReply("the picked outputs do not match the calls asked for and their counts")
    return PicksReply(None, counts)


def _answers(header: dict[str, Any], op: str) -> None:
    """A timing frame names the request it answers: one out of turn is not a reply."""
    if header.get("op") != op:
        raise BadReply(f"expected the reply to '{op}', got one to '{text(header.get('op'), 40)}'")


def _times(value: Any, name: str, *, required: bool = False) -> list[float]:
    if value is None and not required:
        return []
    if not isinstance(value, list) or (required and not value):
        raise BadReply(f"'{name}' must be a non-empty list of times")
    if len(value) > MAX_SAMPLES:
        raise BadReply(f"'{name}' holds {len(value)} times, over {MAX_SAMPLES}")
    out = [_number(v, name) for v in value]
    if any(v is None or v < 0 or v > MAX_TIME_MS for v in out):
        raise BadReply(f"'{name}' must hold finite times between 0 and {MAX_TIME_MS:g} ms")
    return [float(v) for v in out if v is not None]


def _number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadReply(f"'{name}' must be a finite number, got {text(value, 40)}")
    return float(value)


def _indices(value: Any, name: str, bound: int) -> list[int]:
    if not isinstance(value, list) or len(value) > MAX_SAMPLES:
        raise BadReply(f"'{name}' must be a list of indices")
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < bound for v in value):
        raise BadReply(f"'{name}' must hold indices in [0, {bound})")
    return list(value)
