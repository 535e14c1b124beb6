"""The example kernels of `farm up` (examples/farm_up/<user>/*.py): found, submitted as their
users (once per source, problem, mode and hardware class), waited for, and shown with the
boards. Talks to the server through the client only."""

from __future__ import annotations

import argparse
import hashlib
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from farm.client.config import LOCAL_PROFILE
from farm.errors import FarmError

EXPECT = re.compile(r"^#\s*expect:\s*(\w+)", re.MULTILINE)


@dataclass
class Example:
    """One file of examples/farm_up/<user>/: its header names the problem and mode, and a
    `# expect: VERDICT` line the verdict it must get."""

    path: Path
    user: str
    source: str
    problem: str
    mode: str
    label: str
    expect: str
    runs: list[int] = field(default_factory=list)


def find_examples(folder: Path) -> list[Example]:
    from farm.client.commands.common import header_directives

    examples = []
    for path in sorted(folder.glob("*/*.py")):
        source = path.read_text(encoding="utf-8")
        header = header_directives(source, filename=str(path))
        if "problem" not in header:
            raise FarmError(f"{path}: no `#!farm problem=...` line", hint="add one at the top")
        expect = EXPECT.search(source)
        examples.append(
            Example(
                path=path,
                user=path.parent.name,
                source=source,
                problem=header["problem"],
                mode=header.get("mode", "leaderboard"),
                label=header.get("label", path.stem),
                expect=expect.group(1) if expect else "PASSED",
            )
        )
    return examples


class Showcase:
    """Submits `examples` as their users (`user_tokens`: user -> API token) and shows what they
    got; `check_alive` raises when a farm process has stopped."""

    def __init__(
        self,
        *,
        url: str,
        examples: list[Example],
        user_tokens: dict[str, str],
        console: Any,
        check_alive: Callable[[], None],
    ) -> None:
        self.url, self.examples, self.user_tokens = url, examples, user_tokens
        self.console, self.check_alive = console, check_alive
        self.clients: dict[str, Any] = {}  # user -> FarmClient, made on first use

    def show(self, *, hardware: list[str], timeout_s: float) -> bool:
        """Submit the examples not already submitted, wait for every run, print a summary and
        the boards. True when each example got the verdict it expects."""
        for example in self.examples:
            example.runs = self._submit(example, hardware)
        runs = self._wait(timeout_s)
        self._summary(runs)
        self._boards(hardware)
        return all(
            runs.get(i) is not None and runs[i].verdict == e.expect
            for e in self.examples
            for i in e.runs
        )

    def _client(self, user: str) -> Any:
        from farm.client import FarmClient

        if user not in self.clients:
            self.clients[user] = FarmClient(self.url, self.user_tokens[user], timeout_s=30.0)
        return self.clients[user]

    def _submit(self, example: Example, hardware: list[str]) -> list[int]:
        client = self._client(example.user)
        sha = hashlib.sha256(example.source.encode()).hexdigest()
        runs, missing = _existing_runs(client, sha, example, hardware)
        if missing:
            sub = client.submit(
                example.source,
                problem=example.problem,
                hardware=missing,
                mode=example.mode,
                filename=example.path.name,
                label=example.label,
                private=False,
            )
            runs += sub.run_ids
        return runs

    def _wait(self, timeout_s: float) -> dict[int, Any]:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        owner = {i: e.user for e in self.examples for i in e.runs}
        done: dict[int, Any] = {}
        states = dict.fromkeys(owner, "queued")
        columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.console) as progress:
            task = progress.add_task("evaluating the examples", total=len(owner))
            deadline = time.monotonic() + timeout_s
            while len(done) < len(owner) and time.monotonic() < deadline:
                self.check_alive()
                for run_id in (i for i in owner if i not in done):
                    run = self._client(owner[run_id]).run(run_id)
                    audited = run.audit == "pending"
                    states[run_id] = "audit" if run.finished and audited else run.state
                    if run.finished and not audited:
                        done[run_id] = run
                counts = ", ".join(f"{s} {n}" for s, n in sorted(Counter(states.values()).items()))
                progress.update(task, completed=len(done), description=f"evaluating: {counts}")
                time.sleep(1.0)
        if len(done) < len(owner):
            left = len(owner) - len(done)
            self.console.print(f"[yellow]{left} runs unfinished after {timeout_s:.0f} s[/]")
        return done

    def _summary(self, runs: dict[int, Any]) -> None:
        from rich.table import Table

        table = Table(title="example kernels (verdict: green = as expected)")
        for col in ("user", "file", "problem", "hardware", "verdict", "SOL score", "audit"):
            table.add_column(
                col,
                justify="right" if col == "SOL score" else "left",
                no_wrap=col in ("verdict", "audit"),
                overflow="fold",
            )
        for e in self.examples:
            for run_id in e.runs:
                run = runs.get(run_id)
                verdict = (run.verdict or run.failure_code or run.state) if run else "unfinished"
                shown = verdict if verdict == e.expect else f"{verdict} (expected {e.expect})"
                mark = "green" if verdict == e.expect else "red"
                score = "-" if run is None or run.sol_score is None else f"{run.sol_score:.3f}"
                hw = run.hardware if run else "?"
                audit = (run.audit if run else "") or "-"
                table.add_row(
                    e.user, e.path.name, e.problem, hw, f"[{mark}]{shown}[/]", score, audit
                )
        self.console.print(table)

    def _boards(self, hardware: list[str]) -> None:
        from farm.client.commands import board

        problems = sorted({e.problem for e in self.examples if e.mode == "leaderboard"})
        for problem, hw in ((p, h) for p in problems for h in hardware):
            # the command's own parser gives every option its default (new ones included)
            parser = argparse.ArgumentParser()
            board.add_arguments(parser)
            ns = parser.parse_args([problem, "--hw", hw, "--suite", "core-v1"])
            ns.url, ns.token, ns.profile = self.url, None, LOCAL_PROFILE
            board.run(ns)


def _existing_runs(
    client: Any, sha: str, example: Example, hardware: list[str]
) -> tuple[list[int], list[str]]:
    """Runs of earlier submissions of the same source, problem and mode, and the hardware
    classes not covered yet."""
    runs: list[int] = []
    covered: set[str] = set()
    wanted = (sha, example.problem, example.mode)
    for sub in client.submissions():
        if (sub.raw["source_sha256"], sub.problem, sub.mode) != wanted:
            continue
        for run in sub.runs:
            if run.hardware in hardware and run.hardware not in covered:
                covered.add(run.hardware)
                runs.append(run.id)
    return runs, [h for h in hardware if h not in covered]
