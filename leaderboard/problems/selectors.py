from __future__ import annotations

from django.db.models import QuerySet

from farm.errors import unknown
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
