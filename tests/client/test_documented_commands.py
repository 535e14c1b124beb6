"""Every `farm ...` command the docs show exists, takes the flags they show, and answers --help.

Commands are read from README.md and docs/*.md: inline code spans and lines of fenced blocks
that start with `farm` (after an optional `.venv/bin/` or `$ `)."""

from __future__ import annotations

import argparse
import re
from functools import cache
from pathlib import Path

import pytest

from farm.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMAND = re.compile(r"^(?:\$ )?(?:\.venv/bin/|python -m )?farm ([a-z][a-z-]*)(.*)$")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def code_lines(text: str) -> list[str]:
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return [line.strip() for block in fenced for line in block.splitlines()] + inline


def documented() -> list[tuple[str, str, str]]:
    """(doc file, subcommand, rest of the line) of every documented command."""
    found = []
    for path in DOCS:
        for line in code_lines(path.read_text()):
            match = COMMAND.match(line.split("  #")[0].strip())
            if match:
                found.append((path.name, match.group(1), match.group(2)))
    return found


@cache
def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options(parser: argparse.ArgumentParser) -> set[str]:
    """Option strings of `parser` and of its nested subcommands."""
    found = set()
    for action in parser._actions:
        found |= set(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= options(sub)
    return found


def test_the_docs_show_commands():
    assert len(documented()) > 30


@pytest.mark.parametrize(("doc", "name", "rest"), documented())
def test_documented_command_and_flags_exist(doc: str, name: str, rest: str) -> None:
    assert name in subparsers(), f"{doc}: `farm {name}` is not a command"
    unknown = set(FLAG.findall(rest)) - options(subparsers()[name])
    assert not unknown, f"{doc}: `farm {name}` does not take {sorted(unknown)}"


@pytest.mark.parametrize("name", sorted({name for _, name, _ in documented()}))
def test_documented_command_answers_help(name: str, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_:
        main([name, "--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out
