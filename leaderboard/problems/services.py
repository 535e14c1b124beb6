"""Loading pinned suites and hardware classes into the database (idempotent)."""

from __future__ import annotations

from django.db import transaction

from farm.errors import FarmError
from farm.suite.loader import Suite as FarmSuite
from leaderboard.problems import farm_bridge
from leaderboard.problems.models import HardwareClass, Problem, Suite


def hardware_sync() -> list[HardwareClass]:
    """Create or update every hardware class the farm knows, with its spec and languages."""
    result = []
    for name in farm_bridge.hardware_names():
        spec = farm_bridge.hardware_spec(name)
        if spec is None:  # hardware_names() are the spec table's, so every class has one
            raise FarmError(f"hardware class {name} has no spec")
        hw, _ = HardwareClass.objects.update_or_create(
            name=name,
            defaults={
                "vendor": spec.vendor,
                "device": spec.device,
                "languages": farm_bridge.languages_for(spec),
                "spec": farm_bridge.spec_json(spec),
            },
        )
        result.append(hw)
    return result


@transaction.atomic
def suite_sync(*, farm_suite: FarmSuite, hardware: list[HardwareClass]) -> Suite:
    """Record the suite and its hash; create or update each problem with its SOL table."""
    suite, _ = Suite.objects.update_or_create(
        name=farm_suite.name, defaults={"hash": farm_suite.hash or ""}
    )
    for problem in farm_suite.problems.values():
        Problem.objects.update_or_create(
            suite=suite,
            name=problem.name,
            defaults={
                "category": problem.category,
                "description": problem.description,
                "signature": problem.signature,
                "languages": list(problem.languages),
                "dtypes": list(problem.dtypes),
                "compute_unit": problem.compute_unit,
                "workloads": [problem.workload_summary(w) for w in problem.workloads],
                "sol_table": _sol_table(problem, hardware),
            },
        )
    return suite


def _sol_table(problem, hardware: list[HardwareClass]) -> dict:
    table = {}
    for hw in hardware:
        rows = [farm_bridge.sol_ms(problem, w, hw.name) for w in problem.workloads]
        if any(rows):
            table[hw.name] = [r for r in rows if r]
    return table


def suites_sync() -> tuple[list[Suite], list[str]]:
    """Load every pinned suite the farm finds (bundled, FARM_SUITES_PATH, user store).

    Returns the suites loaded and one message per suite that could not be (a broken or
    unpinned suite does not stop the others).
    """
    hardware = hardware_sync()
    loaded, errors = [], []
    for name in farm_bridge.suite_names():
        try:
            farm_suite = farm_bridge.suite_load(name)
        except FarmError as exc:
            errors.append(str(exc))
            continue
        loaded.append(suite_sync(farm_suite=farm_suite, hardware=hardware))
    return loaded, errors
