"""Domain checks of a submission request. Each fault is reported under the field to fix."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass

from django.conf import settings

from farm.suite.model import LANGUAGES
from leaderboard.problems import farm_bridge
from leaderboard.problems.models import HardwareClass, Problem, Suite
from leaderboard.problems.selectors import NotFound, hardware_get, problem_get, suite_get
from leaderboard.submissions.languages import language_detect
from leaderboard.submissions.models import Submission


class SubmissionInvalid(ValueError):
    """`errors` maps a field name to messages saying what to fix."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class SubmissionRequest:
    """A checked request: everything needed to create a submission and its runs."""

    suite: Suite
    problem: Problem
    hardware: tuple[HardwareClass, ...]
    mode: str
    language: str
    source: str
    filename: str
    private: bool
    label: str


def source_decode(raw: bytes, *, field: str = "file") -> str:
    """UTF-8 text of an uploaded file; SubmissionInvalid says where the first bad byte is."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise SubmissionInvalid(
            {
                field: [
                    f"is not UTF-8 text (byte 0x{bad:02x} at offset {exc.start}); "
                    "save the file as UTF-8"
                ]
            }
        ) from None


def submission_check(
    *,
    problem: str,
    hardware: list[str],
    source: str,
    suite: str | None = None,
    mode: str = "benchmark",
    language: str | None = None,
    filename: str = "submission.py",
    private: bool = True,
    label: str = "",
) -> SubmissionRequest:
    """Check one submission request; raise SubmissionInvalid with every fault found."""
    errors: dict[str, list[str]] = {}
    suite_obj = _lookup(
        errors, "suite", lambda: suite_get(name=suite or settings.FARM_DEFAULT_SUITE)
    )
    problem_obj = None
    if suite_obj is not None:
        problem_obj = _lookup(errors, "problem", lambda: problem_get(suite=suite_obj, name=problem))
    hw = _hardware(errors, hardware)
    if mode not in Submission.Mode.values:
        errors["mode"] = [f"'{mode}' is not a mode; use one of {', '.join(Submission.Mode.values)}"]
    _check_source(errors, source)
    lang = language or (language_detect(source) if source else "pytorch")
    if lang not in LANGUAGES:
        errors["language"] = [f"'{lang}' is not a language; use one of {', '.join(LANGUAGES)}"]
    else:
        _check_language(errors, lang, problem_obj, hw)
    if errors:
        raise SubmissionInvalid(errors)
    assert suite_obj is not None and problem_obj is not None
    return SubmissionRequest(
        suite=suite_obj,
        problem=problem_obj,
        hardware=tuple(hw),
        mode=mode,
        language=lang,
        source=source,
        filename=filename.replace("\x00", "") or "submission.py",
        private=private,
        label=label,
    )


def _lookup(errors: dict[str, list[str]], field: str, find):
    try:
        return find()
    except NotFound as exc:
        errors[field] = [str(exc)]
        return None


def _hardware(errors: dict[str, list[str]], names: list[str]) -> list[HardwareClass]:
    if not names:
        errors["hardware"] = ["is empty; name at least one hardware class (see /api/hardware/)"]
        return []
    found = []
    for name in dict.fromkeys(names):
        hw = _lookup(errors, "hardware", lambda n=name: hardware_get(name=n))
        if hw is not None:
            found.append(hw)
    return found


def _check_source(errors: dict[str, list[str]], source: str) -> None:
    if not source.strip():
        errors["source"] = [
            "is empty; send the kernel file's text in `source` or upload it as `file`"
        ]
        return
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:
        errors["source"] = ["is not valid UTF-8 text (it holds unpaired surrogates); send UTF-8"]
        return
    if "\x00" in source:
        errors["source"] = ["contains NUL characters; a kernel file is plain text"]
        return
    limit = settings.FARM_MAX_SOURCE_BYTES
    if size > limit:
        errors["source"] = [
            f"is {size} bytes, over the limit of {limit} bytes (FARM_MAX_SOURCE_BYTES); "
            "submit one kernel file without embedded data"
        ]
        return
    fault = source_syntax_error(source)
    if fault:
        errors["source"] = [fault]


PYTHON = f"Python {sys.version_info.major}.{sys.version_info.minor}"


def source_syntax_error(source: str) -> str | None:
    """Why `source` is not a Python file (every form a node runs is one, CUDA through
    load_inline), or None when it parses: refused here, it costs no node a claim. The grammar
    is the server's Python's (the message names it): a sandbox image on a newer Python may
    accept syntax this one refuses."""
    try:
        ast.parse(source, filename="submission.py")
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        shown = f" ({line[:120]})" if line else ""
        return (
            f"does not parse as {PYTHON}: line {exc.lineno}: {exc.msg}{shown}; fix the file "
            "(`python -m py_compile FILE` shows the same error) and submit it again"
        )
    except (RecursionError, MemoryError):
        return "is nested too deeply to parse; flatten the expressions and submit it again"
    return None


def _check_language(
    errors: dict[str, list[str]], lang: str, problem: Problem | None, hardware: list[HardwareClass]
) -> None:
    messages = []
    if problem is not None and lang not in problem.languages:
        messages.append(
            f"problem {problem.name} accepts {', '.join(problem.languages)}, not {lang}"
        )
    for hw in hardware:
        if lang not in hw.languages:
            advice = farm_bridge.language_advice(lang)
            messages.append(
                f"'{lang}' cannot run on {hw.name} (it runs {', '.join(hw.languages)}); "
                f"submit it to {advice} or port the kernel"
            )
    if messages:
        errors["language"] = messages
