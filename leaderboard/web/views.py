"""Server-rendered pages. Views only gather data through selectors and call services."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from farm.result import Reason, reasons_grouped
from farm.result import Result as ResultDocument
from leaderboard.artifacts.selectors import artifacts_stored
from leaderboard.artifacts.services import source_text
from leaderboard.artifacts.store import ArtifactStoreError
from leaderboard.boards.models import BoardEntry
from leaderboard.boards.selectors import board_find, board_leaders, board_list, board_ranking
from leaderboard.nodes.selectors import (
    hardware_online,
    hardware_unserved,
    node_health_problems,
    node_list,
    node_status,
)
from leaderboard.problems import farm_bridge
from leaderboard.problems.models import Problem
from leaderboard.problems.selectors import (
    NotFound,
    hardware_get,
    hardware_list,
    problem_files,
    problem_get,
    problem_list,
    suite_get,
)
from leaderboard.runs.cancel import run_cancel as run_cancel_service
from leaderboard.runs.models import Result, Run
from leaderboard.runs.redaction import document_redacted, failure_detail_redacted
from leaderboard.runs.selectors import queue_depth_by_hardware, result_sizes, run_queue
from leaderboard.runs.services import RunConflict
from leaderboard.submissions.selectors import (
    source_visible,
    submission_runs,
    submission_state,
    submissions_own,
    submissions_visible,
)
from leaderboard.submissions.services import QuotaExceeded, submissions_create
from leaderboard.submissions.validation import SubmissionInvalid, source_decode, submission_check
from leaderboard.web.boardpage import board_page
from leaderboard.web.charts import board_points, roofline_svg
from leaderboard.web.forms import SubmitForm


def home(request: HttpRequest) -> HttpResponse:
    recent = submissions_own(user=request.user)[:20] if request.user.is_authenticated else []
    return render(request, "web/home.html", {"boards": board_list(), "recent": recent})


def board(request: HttpRequest, suite: str, problem: str, hardware: str) -> HttpResponse:
    found = board_find(suite=suite, problem=problem, hardware=hardware)
    try:
        s = suite_get(name=suite)
        p = problem_get(suite=s, name=problem)
        hardware_get(name=hardware)
    except NotFound as exc:
        raise Http404(str(exc)) from None
    ranked = board_ranking(board=found) if found else []
    page = board_page(problem=p, hardware=hardware, ranked=ranked)
    shown = [c.id for c in page["columns"]]
    points = board_points(p, ranked, shown)
    chart = roofline_svg(hardware=hardware, problem=p, points=points, workloads=shown)
    return render(
        request,
        "web/board.html",
        {"suite": s, "problem": p, "hardware": hardware, "board": found, "chart": chart, **page},
    )


def submission(request: HttpRequest, submission_id: int) -> HttpResponse:
    sub = submissions_visible(user=request.user).filter(pk=submission_id).first()
    if sub is None:
        raise Http404(f"submission {submission_id} does not exist or is not visible to you")
    runs = list(submission_runs(submission=sub))
    results = {r.pk: r.result for r in runs if hasattr(r, "result")}
    source, source_error = None, None
    shown = source_visible(submission=sub, user=request.user)
    if shown:
        try:
            source = source_text(source=sub.source)
        except ArtifactStoreError as exc:
            source_error = f"the source cannot be shown right now ({exc}); it is not lost"
    owner = request.user.is_authenticated and (
        request.user.is_staff or request.user.pk == sub.user_id
    )
    return render(
        request,
        "web/submission.html",
        {
            "sub": sub,
            "state": submission_state(runs=runs),
            "runs": [_run_view(r, results.get(r.pk), owner, shown) for r in runs],
            "compare": _cross_hardware(runs, results),
            "source": source,
            "source_error": source_error,
            "terminal": all(r.state in Run.TERMINAL for r in runs),
            "finished": sum(r.state in Run.TERMINAL for r in runs),
            "owner": owner,
        },
    )


@require_POST
@login_required
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page's Cancel button: the owner (or an admin) stops an unfinished run."""
    run = Run.objects.filter(pk=run_id).first()
    user = request.user
    if run is None or not (user.is_staff or user.pk == run.user_id):
        raise Http404(f"run {run_id} does not exist or is not yours to cancel")
    try:
        run_cancel_service(run_id=run.pk, by=user.get_username())
        messages.info(request, f"run {run_id} on {run.hardware_id} is cancelled")
    except RunConflict as exc:
        messages.warning(request, str(exc))
    return redirect(reverse("submission", args=[run.submission_id]))


def _run_view(run: Run, result: Result | None, owner: bool, source_shown: bool) -> dict[str, Any]:
    """What the page shows of a run; text that may quote the source only with the source."""
    detail = run.failure_detail
    doc: ResultDocument | None = None
    raw: dict[str, Any] = {}
    if result is not None:
        raw = result.document if source_shown else document_redacted(result.document)
        doc = ResultDocument.from_json(raw)  # stored documents were validated when posted
    if not source_shown:
        detail = failure_detail_redacted(code=run.failure_code, detail=detail)
    server = [Reason.from_json(r) for r in (result.server_reasons if result else [])]
    return {
        "failure_detail": detail,
        "run": run,
        "result": result,
        "workloads": list(result.workloads.all()) if result else [],
        "reasons": _reasons([*(doc.reasons if doc else []), *server]),
        "sizes": result_sizes(result=result) if result is not None else None,
        "findings": doc.findings if doc else [],
        "logs": [a.name for a in artifacts_stored(run=run)] if owner else [],
        "profiles": _launch_profiles(raw, source_shown),
        "queue": run_queue(run),
        "cancellable": owner and run.state not in Run.TERMINAL and not run.audit_of_id,
    }


def _launch_profiles(doc: dict[str, Any], names_shown: bool) -> list[dict[str, Any]]:
    """npu-sim's per-launch profile of each workload (kernel names only with the source)."""
    out = []
    for w in doc.get("workloads", []):
        sim = w.get("simulation") or {}
        launches = sim.get("per_launch") or []
        if not launches:
            continue
        rows = [
            {**lr, "name": lr.get("name") if names_shown else f"launch {i + 1}"}
            for i, lr in enumerate(launches[:50])
        ]
        out.append({"workload": w.get("id"), "model": sim.get("model"), "launches": rows})
    return out


def _reasons(reasons: list[Reason]) -> list[dict[str, Any]]:
    """Reasons with the same code and detail shown once, with the workloads they came from."""
    triples = [(r.code, r.detail, r.workload) for r in reasons]
    return [
        {"code": code, "detail": detail, "workloads": workloads}
        for code, detail, workloads in reasons_grouped(triples)
    ]


def _cross_hardware(runs: list[Run], results: dict[int, Result]) -> dict[str, Any]:
    """Workload rows x hardware columns of time (ms) and SOL score."""
    columns = [r for r in runs if r.pk in results]
    rows: dict[str, dict[str, Any]] = {}
    for run in columns:
        for w in results[run.pk].workloads.all():
            if not w.secret:
                rows.setdefault(w.workload_id, {})[run.hardware_id] = w
    return {
        "hardware": [r.hardware_id for r in columns],
        "rows": [(wid, [cells.get(r.hardware_id) for r in columns]) for wid, cells in rows.items()],
    }


@login_required
def submit(request: HttpRequest) -> HttpResponse:
    form = SubmitForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        created = _submit(request, form)
        if created is not None:
            return redirect(reverse("submission", args=[created]))
    return render(request, "web/submit.html", {"form": form}, status=400 if form.errors else 200)


def _submit(request: HttpRequest, form: SubmitForm) -> int | None:
    data = form.cleaned_data
    suite, problem = data["problem"].split("/", 1)
    try:
        text = source_decode(data["file"].read()) if data.get("file") else data.get("source") or ""
        filename = data["file"].name if data.get("file") else "submission.py"
        req = submission_check(
            problem=problem,
            suite=suite,
            hardware=data["hardware"],
            source=text,
            mode=data["mode"],
            filename=filename,
            private=data["private"],
        )
    except SubmissionInvalid as exc:
        for field, errors in exc.errors.items():
            form.add_error(field if field in form.fields else None, errors)
        return None
    try:
        created = submissions_create(user=request.user, requests=[req])[0].pk
    except QuotaExceeded as exc:
        form.add_error(None, str(exc))
        return None
    for warning in hardware_unserved(hardware=data["hardware"]).values():
        messages.warning(request, warning)
    return created


def nodes(request: HttpRequest) -> HttpResponse:
    depth = queue_depth_by_hardware()
    rows = [
        {
            "node": n,
            "status": node_status(node=n),
            "problems": node_health_problems(node=n),
            "hardware": [h.name for h in n.hardware.all()],
            "depth": sum(depth.get(h.name, 0) for h in n.hardware.all()),
        }
        for n in node_list()
    ]
    return render(request, "web/nodes.html", {"rows": rows, "depth": sorted(depth.items())})


def problems(request: HttpRequest) -> HttpResponse:
    suite = request.GET.get("suite") or None
    rows = problem_list(suite=suite).defer("sol_table", "description").order_by("suite_id", "name")
    return render(request, "web/problems.html", {"problems": rows, "suite": suite})


def problem(request: HttpRequest, suite: str, name: str) -> HttpResponse:
    try:
        p = problem_get(suite=suite_get(name=suite), name=name)
    except NotFound as exc:
        raise Http404(str(exc)) from None
    return render(
        request,
        "web/problem.html",
        {
            "problem": p,
            "files": problem_files(problem=p),
            "hardware": _hardware_rows(p),
            "sol": _sol_matrix(p),
            "workloads": [_workload_row(w) for w in p.workloads],
            "size_note": farm_bridge.size_note(p.suite_id, p.name),
        },
    )


def _hardware_rows(p: Problem) -> list[dict[str, Any]]:
    """One row per hardware class: its best entry (or none yet) and whether a node serves it."""
    leaders, online = board_leaders(problem_id=p.pk), hardware_online()
    return [
        {
            "name": hw.name,
            "best": leaders.get(hw.name),
            "scored_on": _scored_on(p, leaders.get(hw.name)),
            "nodes": online.get(hw.name, 0),
        }
        for hw in hardware_list()
        if hw.name in p.sol_table or hw.name in leaders
    ]


def _scored_on(p: Problem, entry: BoardEntry | None) -> str:
    """The workloads an entry's geo-mean time is over: "all", or their ids when a subset."""
    if entry is None:
        return ""
    ids = [w["id"] for w in p.workloads if w["id"] in (entry.workloads or entry.intervals)]
    return "all" if len(ids) == len(p.workloads) else ", ".join(ids)


def _sol_matrix(p: Problem) -> dict[str, Any]:
    """Workload rows x hardware columns of SOL time (ms)."""
    hardware = sorted(p.sol_table)
    by_hw = {hw: {row["workload"]: row["time_ms"] for row in p.sol_table[hw]} for hw in hardware}
    rows = [(w["id"], [_g(by_hw[hw].get(w["id"])) for hw in hardware]) for w in p.workloads]
    return {"hardware": hardware, "rows": rows}


def _workload_row(w: dict[str, Any]) -> dict[str, Any]:
    axes = " ".join(f"{k}={v}" for k, v in w["axes"].items())
    return {**w, "axes": axes, "gflop": _g(w["flops"] / 1e9), "mb": _g(w["bytes"] / 1e6)}


def _g(value: float | None) -> str:
    """Three significant digits ("–" for a missing figure)."""
    return "–" if value is None else f"{value:.3g}"
