"""What a reader who may not read a submission's source sees of its results.

Whatever the sandbox wrote in free text may quote the source: a traceback shows the failing
lines, a guard finding names the line it flags, a kernel's debug print lands in the logs. Such
text follows the source's visibility (leaderboard.submissions.selectors.source_visible); codes,
statuses, times and scores stay visible with the submission.
"""

from __future__ import annotations

import copy
from typing import Any

HIDDEN = "hidden: it may quote the source, which only its owner can read"
SERVER_FAILURES = frozenset({"LOST", "SOURCE_MISSING", "SUITE_HASH_MISMATCH"})


def document_redacted(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of a result document with every free-text part the node produced replaced."""
    doc = copy.deepcopy(document)
    if "logs" in doc:
        doc["logs"] = {}
    for key in ("reasons", "reasons_extra"):
        if isinstance(doc.get(key), list):
            doc[key] = [_hidden(r) for r in doc[key]]
    for workload in doc.get("workloads") or []:
        if isinstance(workload, dict) and isinstance(workload.get("errors"), list):
            workload["errors"] = [_hidden(e) for e in workload["errors"]]
    guard = doc.get("guard")
    if isinstance(guard, dict) and isinstance(guard.get("findings"), list):
        guard["findings"] = [_hidden(f) for f in guard["findings"]]
    return doc


def failure_detail_redacted(*, code: str, detail: str) -> str:
    """A run's failure detail: the server's own words stay, a node's report is hidden."""
    return detail if code in SERVER_FAILURES or not detail else HIDDEN


def _hidden(entry: Any) -> dict[str, Any]:
    """A reason or finding with only its code, severity and workload kept."""
    if not isinstance(entry, dict):
        return {"code": "", "detail": HIDDEN}
    kept = {k: entry[k] for k in ("code", "severity", "workload") if k in entry}
    return {**kept, "detail": HIDDEN}
