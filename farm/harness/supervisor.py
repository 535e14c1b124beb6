"""The trusted side of an evaluation: `evaluate(...)` -> its farm.result.Result.

It holds the seeds, makes every input itself and hands it to the worker as data
(farm.harness.inputs), computes every reference output itself, and decides every status; the
submission runs only in a sandboxed worker process (farm.harness.worker), which holds no seed.
Baselines (the reference in eager mode and under torch.compile) are timed in a separate worker
that never loads the submission (farm.harness.baseline_runs).

`Evaluation` is the judge: a sequence of steps over collaborators that each own one job: the
inputs (farm.harness.inputs), the comparison (farm.harness.checks), the timing
(farm.harness.timed) and its statistics (farm.harness.timing_stats), the limits
(farm.harness.sizes), the workers (farm.harness.workers) and the report (farm.harness.record,
farm.harness.report). The result becomes JSON only where it leaves: `Result.to_json`.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from farm.config import Env
from farm.errors import FarmError, SubmissionError
from farm.harness import replies, report, simreplay
from farm.harness.baseline_runs import Baselines
from farm.harness.calibration import Calibration
from farm.harness.case import Case, EvalOptions
from farm.harness.channel import WorkerDied, WorkerProcess, stage_source
from farm.harness.checks import Checker
from farm.harness.inputs import Inputs
from farm.harness.record import Report, WorkloadRecord
from farm.harness.replies import BadReply
from farm.harness.sizes import Sizes
from farm.harness.targets import resolve_target
from farm.harness.timed import Timer
from farm.harness.transport import Transport
from farm.harness.workers import Workers
from farm.result import Mode, Reason, Result, WorkloadStatus
from farm.suite.loader import load_suite
from farm.suite.model import Workload

__all__ = ["MAX_SOURCE_BYTES", "EvalOptions", "Evaluation", "evaluate"]

MAX_SOURCE_BYTES = 1 << 20


def evaluate(source_path: str | Path, **options: Any) -> Result:
    """Evaluate the submission at `source_path`; see EvalOptions for the options.

    Returns the result whatever the verdict (`Result.to_json()` is its farm.result/1
    document). Raises FarmError only for bad arguments (unknown problem, suite, device or mode)
    or a farm failure (no sandbox).
    """
    opts = EvalOptions(**options)
    path = Path(source_path)
    source = _read_source(path)
    suite = load_suite(opts.suite)
    problem = suite.problem(opts.problem)
    mode = _mode(opts.mode)
    target = resolve_target(opts.device, opts.hardware, opts.device_index)
    return Evaluation(Case.of(opts, suite, problem, mode, target, (source, path))).execute()


class Evaluation:
    """The judge of one evaluation; `execute()` runs it and returns the result."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.report = Report(case.mode, case.source, case.fresh)
        self.records: dict[str, WorkloadRecord] = {}
        self.sizes = Sizes(case)
        self.transport = Transport(case.target.torch_device, self.report.setting)
        self.inputs = Inputs(case, self.sizes, self.transport)
        self.workers = Workers(case, self.sizes, self.report.setting)
        self.checker = Checker(case, self.sizes, self.inputs, self.report)
        self.timer = Timer(case, self.sizes, self.inputs, self.checker, self.report)

    def execute(self) -> Result:
        case, started = self.case, time.time()
        self.report.setting.before = case.target.environment()
        findings = report.static_findings(case.source, case.source_path.name)
        self.report.findings += findings
        workloads = self._select()
        if any(f.severity == "reject" for f in findings):
            self._reject_static(workloads)
        else:
            self._run(workloads)
        self.report.setting.after = case.target.environment()
        records = list(self.records.values())
        return report.finish(self.report, case.suite, case.problem, case.target, records, started)

    def _select(self) -> list[Workload]:
        """The workloads to run; those the device cannot run are SKIPPED, with why. Boards score
        every workload at its real size; a node may keep simulated boards to the small ones
        (FARM_NPU_SIM_BOARD_SIZES=small: the local demo farm, a laptop)."""
        case = self.case
        every = case.mode == Mode.LEADERBOARD and (
            not case.simulated
            or Env().choice("FARM_NPU_SIM_BOARD_SIZES", "all", ("all", "small")) != "small"
        )
        chosen = case.target.select(case.problem, case.opts.workloads, every=every)
        self.sizes.workloads = chosen.run
        for w, why in chosen.skipped.items():
            self._set(w, WorkloadStatus.SKIPPED, [Reason("SKIPPED", why)])
        return chosen.run

    def _reject_static(self, workloads: list[Workload]) -> None:
        detail = "the static guard rejected the source; it was not run"
        for w in workloads:
            self._set(w, WorkloadStatus.REJECTED, [Reason("STATIC_GUARD", detail)])

    def _run(self, workloads: list[Workload]) -> None:
        """The candidate's checks and timings, then the baselines, then the yardsticks."""
        case, phases = self.case, self.report.phases
        with tempfile.TemporaryDirectory(prefix="farm-eval-") as tmp:
            worker = self._start_candidate(Path(tmp), workloads)
            if worker is None:
                return
            try:
                timed = self._candidate(worker, workloads)
            finally:
                self.report.worker_stderr = worker.stderr_text()[-20000:]
                self.workers.release("candidate", worker)
                self.inputs.close()
        bases = Baselines(case, self.workers, self.timer, self.report, self.records)
        if case.timed and case.opts.baselines and timed and not case.simulated:
            with phases("baselines"):  # npu-sim's replay costs the baseline too
                try:
                    bases.run(timed)
                finally:
                    self.inputs.close()
        with phases("calibration"):
            cache = None if case.simulated else bases.cache()
            Calibration(case, self.sizes, cache).run(timed, self.records)

    def _start_candidate(self, tmp: Path, workloads: list[Workload]) -> WorkerProcess | None:
        """A started worker with the submission loaded, or None (the failure is recorded). The
        load request goes out right behind the worker's setup, and the trusted side makes its
        first reference outputs while the worker starts (farm.harness.channel)."""
        worker = self._launch(tmp / "candidate", workloads)
        try:
            with self.report.phases("load"):
                header, _ = worker.receive(timeout=self.case.limit_policy.load_s)
            reply = replies.load(header)
        except (WorkerDied, BadReply) as exc:
            self.workers.release("candidate", worker)
            self._fail_all(workloads, _load_failure(exc))
            return None
        self.report.findings += reply.findings
        if reply.failure is not None:
            self.workers.release("candidate", worker)
            self._fail_all(workloads, reply.failure)
            return None
        self.report.form = reply.form
        return worker

    def _launch(self, workdir: Path, workloads: list[Workload]) -> WorkerProcess:
        """The candidate's worker, started, with the load request sent. Raises FarmError when
        the sandbox cannot start it."""
        try:
            with self.report.phases("sandbox_start"):
                worker = self.workers.acquire("candidate", workdir, workloads, wait=False)
                try:
                    worker.send(self._load_request(worker, workloads))
                    if workloads:  # the first check's reference, made while the worker starts
                        w = workloads[0]
                        self.inputs.make_ahead(w, self.case.seed(w, "check", 0))
                    worker.ready()
                except BaseException:
                    self.workers.release("candidate", worker)
                    raise
        except WorkerDied as exc:
            raise FarmError(
                f"the sandboxed worker did not start: {replies.text(exc.detail, 2000)}",
                hint="check the node's sandbox set-up (farm hardware; docs/security.md)",
            ) from None
        return worker

    def _load_request(self, worker: WorkerProcess, workloads: list[Workload]) -> dict[str, Any]:
        problem = self.case.problem
        return {
            "op": "load",
            "gpumode_data": problem.extra.get("gpumode_data", "tuple"),
            "source_path": str(stage_source(self.case.source_path, worker.spec.workdir)),
            "axes": workloads[0].axes if workloads else {},
            "problem_dir": str(problem.directory.resolve()),
        }

    def _candidate(self, worker: WorkerProcess, workloads: list[Workload]) -> list[Workload]:
        """Check (and time) every workload; returns those that passed and were timed."""
        timed = []
        for i, w in enumerate(workloads):
            worker.gpu_peak = 0
            try:
                record = self._workload(worker, w)
            except (WorkerDied, BadReply) as exc:
                worker.kill()
                self._set(w, *_ended(exc, w.id))
                self._memory(worker, w)
                for rest in workloads[i + 1 :]:
                    why = "the worker died on an earlier workload"
                    self._set(rest, WorkloadStatus.SKIPPED, [Reason("SKIPPED", why)])
                break
            self.records[w.id] = record
            self._memory(worker, w)
            if record.passed and self.case.timed:
                timed.append(w)
        return timed

    def _workload(self, worker: WorkerProcess, w: Workload) -> WorkloadRecord:
        """`w` checked, then timed when it passed (npu-sim: the trusted replay's record)."""
        if self.case.simulated:
            return simreplay.workload_record(self, worker, w)
        with self.report.phases("correctness"):
            record = self.checker.check(worker, w)
        if record.passed and self.case.timed:
            with self.report.phases("timing"):
                self.timer.time(worker, w, record)
        return record

    def _memory(self, worker: WorkerProcess, w: Workload) -> None:
        """On GPUs, the most device memory the worker held while it served `w`, as the trusted
        side's watch saw it, beside the limit it was held to."""
        limit = self.sizes.gpu_limit_bytes()
        if limit is not None and worker.gpu_peak:
            self.records[w.id].memory = {
                "gpu_peak_bytes": worker.gpu_peak,
                "gpu_limit_bytes": limit,
            }

    def _fail_all(self, workloads: list[Workload], failure: replies.Failure) -> None:
        """The submission never ran: its cause once in the result, a short line per workload."""
        self.report.reasons.append(failure.reason())
        why = Reason("NOT_RUN", f"not run: the submission failed first ({failure.code}, above)")
        for w in workloads:
            self._set(w, failure.status, [why])
        self.report.compile_error = self.report.compile_error or failure.compile

    def _set(self, w: Workload, status: WorkloadStatus, errors: list[Reason]) -> None:
        self.records[w.id] = WorkloadRecord.new(self.case.problem, w, status, errors)


# How the trusted side names a worker's end: the limit the sandbox saw it hit, else the signal.
_DIED = {"TIMEOUT": WorkloadStatus.TIMEOUT, "RUNTIME_ERROR": WorkloadStatus.RUNTIME_ERROR}


def _ended(exc: WorkerDied | BadReply, workload_id: str) -> tuple[WorkloadStatus, list[Reason]]:
    """The status and reason of a workload during which the worker died or sent a bad frame."""
    if isinstance(exc, BadReply):
        detail = f"the worker sent an invalid reply on {workload_id}: {exc}"
        return WorkloadStatus.RUNTIME_ERROR, [Reason("BAD_REPLY", replies.text(detail))]
    return _DIED[exc.status], [Reason(exc.code, replies.text(exc.detail))]


def _load_failure(exc: WorkerDied | BadReply) -> replies.Failure:
    """A load that ended without a reply: the import crashed the worker (COMPILE_ERROR), ran out
    of time (TIMEOUT), or answered with what is not a reply (RUNTIME_ERROR)."""
    if isinstance(exc, BadReply):
        detail = f"the worker sent an invalid reply to 'load': {exc}"
        return replies.Failure("BAD_REPLY", WorkloadStatus.RUNTIME_ERROR, detail)
    status = _DIED[exc.status]
    detail = replies.text(exc.detail)
    return replies.Failure(exc.code, status, detail, compile=exc.code == "WORKER_DIED")


def _read_source(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SubmissionError(
            f"{path}: cannot read ({exc.strerror})", hint="check the path"
        ) from None
    if len(data) > MAX_SOURCE_BYTES:
        raise SubmissionError(
            f"{path.name}: {len(data)} bytes is over the {MAX_SOURCE_BYTES}-byte limit",
            hint="submit one source file of kernel code",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(
            f"{path.name}: not UTF-8 text (byte {exc.start})", hint="save the file as UTF-8"
        ) from None


def _mode(name: str) -> Mode:
    try:
        return Mode(name)
    except ValueError:
        raise FarmError(
            f"mode '{name}' is not a mode", hint=f"choose one of {', '.join(m.value for m in Mode)}"
        ) from None
