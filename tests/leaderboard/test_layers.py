"""The server's apps form layers: each imports only the apps below it, at module level (no
import hidden inside a function to dodge a loop), and every task the beat schedule names is
registered. Reads the source with ast; nothing is run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from leaderboard.celery import app

ROOT = Path(__file__).resolve().parents[2] / "leaderboard"
# bottom to top; an app may import those before it, except its sibling; web is the top
LAYERS = ["accounts", "problems", "nodes", "artifacts", "runs", "boards", "judging", "submissions"]
SIBLINGS = {"judging": "submissions", "submissions": "judging"}
TOP = {"web"}


def _app(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "leaderboard" and len(parts) > 1 and parts[1] in {*LAYERS, *TOP}:
        return parts[1]
    return None


def _imports(tree: ast.AST) -> list[tuple[ast.stmt, str, bool]]:
    """(statement, module, inside a function) for every import of the tree."""
    nested = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(f)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [(node, name, id(node) in nested) for name in names]
    return found


def _sources() -> list[tuple[Path, str]]:
    return [
        (path, app)
        for path in sorted(ROOT.glob("*/**/*.py"))
        if "migrations" not in path.parts and (app := path.relative_to(ROOT).parts[0]) != "static"
    ]


def test_apps_import_only_the_layers_below_them():
    wrong = []
    for path, app_name in _sources():
        if app_name in TOP or app_name not in LAYERS:
            continue
        allowed = set(LAYERS[: LAYERS.index(app_name) + 1]) - {SIBLINGS.get(app_name)}
        for node, module, _ in _imports(ast.parse(path.read_text())):
            target = _app(module)
            if target is not None and target not in allowed:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert not wrong, "imports that run up the layers:\n" + "\n".join(wrong)


def test_no_import_of_another_app_inside_a_function():
    hidden = []
    for path, app_name in _sources():
        for node, module, inside in _imports(ast.parse(path.read_text())):
            target = _app(module)
            if inside and target is not None and target != app_name:
                hidden.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert not hidden, "imports of another app inside a function:\n" + "\n".join(hidden)


@pytest.mark.parametrize("entry", sorted(app.conf.beat_schedule))
def test_every_scheduled_task_is_registered(entry):
    app.loader.import_default_modules()
    assert app.conf.beat_schedule[entry]["task"] in app.tasks
