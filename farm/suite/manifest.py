"""Pinning a suite: the sha256 of every file and one suite hash over all of them.

`manifest.json` lives at the suite's root:
``{"schema": "farm.manifest/1", "suite": NAME, "files": {REL_PATH: SHA256, ...}, "hash": SHA256}``.
The suite hash is the sha256 of the lines ``"<sha256>  <rel_path>\\n"`` sorted by path, so it
changes when any file is added, removed, renamed or edited.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from farm.errors import SuiteError

MANIFEST = "manifest.json"
SCHEMA = "farm.manifest/1"
_IGNORED_PARTS = {"__pycache__", ".DS_Store"}


def file_digests(root: Path) -> dict[str, str]:
    """sha256 of every file under `root` except the manifest and caches, by relative path."""
    digests = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel == MANIFEST or _IGNORED_PARTS & set(path.parts):
            continue
        if path.suffix == ".pyc":
            continue
        digests[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def suite_hash(digests: dict[str, str]) -> str:
    lines = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(digests.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def write(root: Path) -> str:
    """(Re)pin the suite at `root`: write manifest.json and return the suite hash."""
    digests = file_digests(root)
    doc = {"schema": SCHEMA, "suite": root.name, "files": digests, "hash": suite_hash(digests)}
    (root / MANIFEST).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return str(doc["hash"])


def read(root: Path) -> dict:
    path = root / MANIFEST
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise SuiteError(
            f"{root.name}/{MANIFEST}: missing; the suite is not pinned",
            hint=f"pin it with `farm suite pin {root}` after review",
        ) from None
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{root.name}/{MANIFEST}: not valid JSON ({exc})") from None
    if doc.get("schema") != SCHEMA or not isinstance(doc.get("files"), dict):
        raise SuiteError(f"{root.name}/{MANIFEST}: not a {SCHEMA} manifest")
    return doc


def read_hash(root: Path) -> str | None:
    """The pinned hash, or None when the suite has no manifest (unverified use only)."""
    try:
        return str(read(root)["hash"])
    except SuiteError:
        return None


def differences(root: Path) -> list[str]:
    """Human-readable differences between the files and the manifest (empty when pinned)."""
    pinned = read(root)
    actual = file_digests(root)
    problems = []
    for rel in sorted(set(pinned["files"]) | set(actual)):
        if rel not in actual:
            problems.append(f"{root.name}/{rel}: missing (pinned in the manifest)")
        elif rel not in pinned["files"]:
            problems.append(f"{root.name}/{rel}: not in the manifest (added after pinning)")
        elif pinned["files"][rel] != actual[rel]:
            problems.append(f"{root.name}/{rel}: edited (sha256 differs from the manifest)")
    if not problems and suite_hash(pinned["files"]) != pinned["hash"]:
        problems.append(f"{root.name}/{MANIFEST}: the suite hash does not match its file list")
    return problems


def verify(root: Path) -> str:
    """Return the suite hash when every file matches the manifest; raise SuiteError otherwise."""
    problems = differences(root)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SuiteError(
            f"suite {root.name} does not match its manifest: {problems[0]}{more}",
            hint="restore the pinned files, or pin a new suite version",
        )
    return str(read(root)["hash"])
