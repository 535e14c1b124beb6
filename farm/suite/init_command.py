"""`farm init PROBLEM`: write a starter submission for a problem (see farm/suite/starters.py).

The file is `<problem>_<lang>.py` in the current directory unless -o says otherwise; an existing
file is never overwritten without --force. Exit 0 written, 2 unknown problem or language or the
file exists.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from farm.errors import FarmError
from farm.suite.commands import DEFAULT_SUITE
from farm.suite.starters import STARTER_LANGUAGES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problem", help="problem name, e.g. softmax (see `farm problems`)")
    parser.add_argument(
        "--lang",
        default="pytorch",
        choices=STARTER_LANGUAGES,
        help="pytorch: the reference as a correct baseline; triton / cuda: the language's "
        "plumbing with the computation to write (default pytorch)",
    )
    parser.add_argument("--suite", default=DEFAULT_SUITE, help=f"default {DEFAULT_SUITE}")
    parser.add_argument("-o", "--output", type=Path, help="file to write (default PROBLEM_LANG.py)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    from farm.suite.problems_command import problem_find
    from farm.suite.starters import starter, starter_filename

    problem = problem_find(args.suite, args.problem)
    text = starter(problem, args.lang)
    path: Path = args.output or Path(starter_filename(problem, args.lang))
    if path.exists() and not args.force:
        raise FarmError(f"{path} exists; nothing written", hint="pass --force or -o OTHER.py")
    path.write_text(text)
    print(f"wrote {path}")
    print(f"try it: farm eval {path} --problem {problem.name} --device cpu")
    print(f"submit: farm submit {path} --hw npu-sim-v1 --wait")
    return 0
