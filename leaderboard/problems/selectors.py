from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from farm.errors import unknown
from farm.suite.model import Problem as FarmProblem
from farm.suite.starters import STARTER_LANGUAGES, starter
from leaderboard.problems import farm_bridge
from leaderboard.problems.models import HardwareClass, Problem, Suite


class NotFound(LookupError):
    """An unknown suite / problem / hardware; the message carries a did-you-mean hint."""


def suite_get(*, name: str) -> Suite:
    suite = Suite.objects.filter(name=name).first()
    if suite is None:
        names = Suite.objects.values_list("name", flat=True)
        raise NotFound(
            str(unknown("suite", name, names, "the farm (run `manage.py sync_suites`?)"))
        )
    return suite


def problem_get(*, suite: Suite, name: str) -> Problem:
    problem = Problem.objects.filter(suite=suite, name=name).first()
    if problem is None:
        names = Problem.objects.filter(suite=suite).values_list("name", flat=True)
        raise NotFound(str(unknown("problem", name, names, f"suite {suite.name}")))
    return problem


def hardware_get(*, name: str) -> HardwareClass:
    hw = HardwareClass.objects.filter(name=name, active=True).first()
    if hw is None:
        names = HardwareClass.objects.filter(active=True).values_list("name", flat=True)
        raise NotFound(str(unknown("hardware class", name, names)))
    return hw


def problem_list(*, suite: str | None = None) -> QuerySet[Problem]:
    qs = Problem.objects.select_related("suite")
    return qs.filter(suite_id=suite) if suite else qs


def hardware_list() -> QuerySet[HardwareClass]:
    return HardwareClass.objects.filter(active=True)


@dataclass(frozen=True)
class ProblemFiles:
    """What a problem page shows from the pinned suite itself: the problem as the harness reads
    it (inputs, outputs, tolerance), its reference source and a starter per language."""

    problem: FarmProblem
    reference: str
    starters: dict[str, str]

    @property
    def source_notes(self) -> list[tuple[str, str]]:
        """For a problem imported from another suite: where from, whose checker judges it, and
        where the farm deliberately judges differently from that suite (the importers' notes)."""
        extra = self.problem.extra
        origin = extra.get("imported_from")
        notes = [("imported from", str(origin.get("format")))] if isinstance(origin, dict) else []
        for key, label in NOTE_LABELS:
            if extra.get(key):
                notes.append((label, str(extra[key])))
        return notes


NOTE_LABELS = (
    ("checker", "checker"),
    ("stricter", "stricter than the source"),
    ("stochastic", "random numbers"),
    ("not_small", "no small workload"),
)


def problem_files(*, problem: Problem) -> ProblemFiles | None:
    """The problem's files from the pinned suite the database was loaded from; None when that
    copy is gone or pinned differently (run `manage.py sync_suites`)."""
    suite = farm_bridge.suite_pinned(problem.suite_id, problem.suite.hash)
    found = suite.problems.get(problem.name) if suite else None
    if found is None:
        return None
    langs = [lang for lang in STARTER_LANGUAGES if lang in found.languages]
    return ProblemFiles(
        problem=found,
        reference=found.reference_path.read_text(),
        starters={lang: starter(found, lang) for lang in langs},
    )
