"""The trusted side of an evaluation: `evaluate(...)` -> the result document.

It holds the seeds and computes every reference output itself; the submission runs only in a
sandboxed worker process (farm.harness.worker). Baselines (the reference in eager mode and under
torch.compile) are timed in a separate worker that never loads the submission.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from farm.errors import FarmError, SubmissionError
from farm.harness import baselines, correctness, reference, replies, report, seeds, simreplay
from farm.harness.budget import LimitPolicy
from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec, stage_source
from farm.harness.pool import WorkerPool
from farm.harness.reference import checker, expected
from farm.harness.replies import BadReply
from farm.harness.targets import Target, resolve_target
from farm.result import Mode, WorkloadStatus, reason
from farm.sandbox import Limits, get_runner
from farm.sandbox.limits import vendor_of
from farm.suite.loader import Suite, load_suite
from farm.suite.model import Problem, Workload

MAX_SOURCE_BYTES = 1 << 20
ROUNDS = {Mode.TEST: 3, Mode.BENCHMARK: 3, Mode.LEADERBOARD: 5, Mode.PROFILE: 3}
RECHECKS = 3  # timed calls whose outputs are re-checked against the reference


@dataclass
class EvalOptions:
    """What to evaluate and how. `workloads` None = the device's default selection."""

    problem: str
    suite: str = "core-v1"
    device: str = "cpu"
    mode: str = "benchmark"
    hardware: str | None = None
    workloads: list[str] | None = None
    sandbox: str = "auto"
    seed: int | None = None
    baselines: bool = True
    compile_baseline: bool | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    device_index: int = 0
    limits: Limits = field(default_factory=Limits)
    limit_policy: LimitPolicy | None = None  # None: LimitPolicy.from_env()
    pool: WorkerPool | None = None  # warm workers (agents); None starts fresh ones


def evaluate(source_path: str | Path, **options: Any) -> dict[str, Any]:
    """Evaluate the submission at `source_path`; see EvalOptions for the options.

    Returns a farm.result/1 document whatever the verdict. Raises FarmError only for bad
    arguments (unknown problem, suite, device or mode) or a farm failure (no sandbox).
    """
    opts = EvalOptions(**options)
    source_path = Path(source_path)
    source = _read_source(source_path)
    suite = load_suite(opts.suite)
    problem = suite.problem(opts.problem)
    mode = _mode(opts.mode)
    target = resolve_target(opts.device, opts.hardware, opts.device_index)
    run = Evaluation(opts, suite, problem, mode, target, source, source_path)
    return run.execute()


class Evaluation:
    """One evaluation's state; `execute()` runs it and returns the document."""

    def __init__(
        self,
        opts: EvalOptions,
        suite: Suite,
        problem: Problem,
        mode: Mode,
        target: Target,
        source: str,
        source_path: Path,
    ) -> None:
        self.opts, self.suite, self.problem, self.mode, self.target = (
            opts,
            suite,
            problem,
            mode,
            target,
        )
        self.source, self.source_path = source, source_path
        self.base, fresh = seeds.choose_base(
            leaderboard=mode == Mode.LEADERBOARD, timed=mode != Mode.TEST, given=opts.seed
        )
        self.doc = report.new_document(suite, problem, mode, target, source, opts)
        self.doc["seeds"]["fresh"] = fresh
        self.entries: dict[str, dict[str, Any]] = {}
        self.rng = random.SystemRandom()
        self._last_stats: dict[str, float] = {}
        self.ref_peak: dict[str, int] = {}  # workload id -> the reference's device peak (bytes)
        self.phases: dict[str, float] = {}
        self.limit_policy = opts.limit_policy or LimitPolicy.from_env()
        self.call_s: dict[str, float] = {}  # trusted wall time of a workload's last check (s)

    def execute(self) -> dict[str, Any]:
        started = time.time()
        self.doc["environment"]["before"] = self.target.environment()
        findings = report.static_findings(self.source, self.source_path.name)
        self.doc["guard"]["findings"] += findings
        workloads = self._workloads()
        if any(f["severity"] == "reject" for f in findings):
            self._reject_static(workloads)
        else:
            self._run(workloads)
        self.doc["environment"]["after"] = self.target.environment()
        report.finish(self.doc, self.problem, self.target, list(self.entries.values()), started)
        self.doc["timing"]["phases_s"] = self.phases
        return self.doc

    def _workloads(self) -> list[Workload]:
        every = self.mode == Mode.LEADERBOARD  # boards score every workload at its real size
        chosen = self.target.select(self.problem, self.opts.workloads, every=every)
        for w in chosen.skipped:
            self.entries[w.id] = report.workload_entry(
                self.problem, w, WorkloadStatus.SKIPPED, [reason("SKIPPED", chosen.skipped[w])]
            )
        return chosen.run

    def _reject_static(self, workloads: list[Workload]) -> None:
        detail = "the static guard rejected the source; it was not run"
        for w in workloads:
            self.entries[w.id] = report.workload_entry(
                self.problem, w, WorkloadStatus.REJECTED, [reason("STATIC_GUARD", detail)]
            )

    def _run(self, workloads: list[Workload]) -> None:
        with tempfile.TemporaryDirectory(prefix="farm-eval-") as tmp:
            worker = self._start_candidate(Path(tmp), workloads)
            if worker is None:
                return
            try:
                timed = self._candidate(worker, workloads)
            finally:
                self.doc["logs"]["worker_stderr"] = worker.stderr_text()[-20000:]
                self._release("candidate", worker)
        simulated = self.target.device == "npu-sim"  # its replay counts the baseline too
        if self.mode != Mode.TEST and self.opts.baselines and timed and not simulated:
            with self._phase("baselines"):
                self._baselines(timed)
        with self._phase("timing"):
            self._calibrate_wall_clock(timed)

    def _calibrate_wall_clock(self, timed: list[Workload]) -> None:
        """The wall-clock rule's yardstick where no eager baseline gives one: the timing loop
        around a call that does nothing, measured here (farm.harness.reference). Simulated times
        (npu-sim) are not wall-clock times."""
        if self.target.device == "npu-sim":
            return
        policy = self.target.policy(self.opts.policy)
        for w in timed:
            entry = self.entries[w.id]
            if (entry["baseline_timing"] or {}).get("eager"):
                continue
            entry["timing"]["harness_overhead_ms"] = reference.timing_overhead_ms(
                self.problem, w, self.target.torch_device, policy, self.target.llc_bytes
            )

    def _start_candidate(self, tmp: Path, workloads: list[Workload]) -> WorkerProcess | None:
        try:
            with self._phase("sandbox_start"):
                worker = self._acquire("candidate", tmp / "candidate", workloads)
        except WorkerDied as exc:
            raise FarmError(
                f"the sandboxed worker did not start: {replies.text(exc.detail, 2000)}",
                hint="check the node's sandbox set-up (farm hardware; docs/security.md)",
            ) from None
        try:
            staged = stage_source(self.source_path, worker.spec.workdir)
            axes = workloads[0].axes if workloads else {}
            request = {
                "op": "load",
                "gpumode_data": self.problem.extra.get("gpumode_data", "tuple"),
                "source_path": str(staged),
                "axes": axes,
                "problem_dir": str(self.problem.directory.resolve()),
            }
            with self._phase("load"):
                header, _ = worker.request(request, timeout=self.limit_policy.load_s)
            reply = replies.load(header)
        except (WorkerDied, BadReply) as exc:
            self._release("candidate", worker)
            self._fail_all(workloads, _load_failure(exc))
            return None
        self.doc["guard"]["findings"] += reply.findings
        if reply.failure is not None:
            self._release("candidate", worker)
            self._fail_all(workloads, reply.failure)
            return None
        self.doc["submission"]["form"] = reply.form
        return worker

    def _acquire(self, kind: str, workdir: Path, workloads: list[Workload]) -> WorkerProcess:
        """A started worker: from the pool when there is one, else a fresh one in `workdir` with
        limits sized to the largest of `workloads`."""
        pool = self.opts.pool
        if pool is not None:
            self.doc["environment"]["sandbox"] = pool.runner.name
            return pool.candidate() if kind == "candidate" else pool.baseline(kind)
        workdir.mkdir(parents=True, exist_ok=True)
        runner = get_runner(self.opts.sandbox, vendor=vendor_of(self.target.device))
        largest = max((self._workload_bytes(w) for w in workloads), default=0)
        limits = self.limit_policy.sandbox_limits(
            self.opts.limits, workload_bytes=largest, gpu=self.target.torch_device.type == "cuda"
        )
        spec = WorkerSpec(
            device=self.target.device,
            read_dirs=[self.problem.directory.resolve()],
            workdir=workdir,
            device_index=self.opts.device_index,
            limits=limits,
            gpu_memory_bytes=max((self.gpu_limit_bytes(w) or 0 for w in workloads), default=0)
            or None,
        )
        self.doc["environment"]["sandbox"] = runner.name
        if runner.note:
            self.doc["environment"]["sandbox_note"] = runner.note
        self.doc["environment"]["limits"] = {"memory_bytes": limits.memory_bytes}
        return WorkerProcess(runner, spec)

    def _release(self, kind: str, worker: WorkerProcess) -> None:
        pool = self.opts.pool
        if pool is None:
            worker.close()
        elif kind == "candidate" or worker.proc.poll() is not None:
            pool.discard(worker)
        else:
            pool.give_back(kind, worker)

    @contextlib.contextmanager
    def _phase(self, name: str) -> Iterator[None]:
        """Add the wall time of a block to the document's phase breakdown (seconds)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - start
            self.phases[name] = round(self.phases.get(name, 0.0) + spent, 4)

    def _fail_all(self, workloads: list[Workload], failure: replies.Failure) -> None:
        """The submission never ran: its cause once in the document, a short line per workload."""
        self.doc["reasons_extra"].append(failure.reason())
        why = reason("NOT_RUN", f"not run: the submission failed first ({failure.code}, above)")
        for w in workloads:
            self.entries[w.id] = report.workload_entry(self.problem, w, failure.status, [why])
        if failure.compile:
            self.doc["verdict_override"] = "COMPILE_ERROR"

    def _candidate(self, worker: WorkerProcess, workloads: list[Workload]) -> list[Workload]:
        """Check (and time) every workload; returns those that passed and were timed."""
        timed = []
        for i, w in enumerate(workloads):
            try:
                if self.target.device == "npu-sim":  # trusted replay (farm.harness.simreplay)
                    entry = simreplay.workload_entry(self, worker, w)
                    if entry["status"] == WorkloadStatus.PASSED and self.mode != Mode.TEST:
                        timed.append(w)
                    self.entries[w.id] = entry
                    continue
                with self._phase("correctness"):
                    entry = self._check(worker, w)
                if entry["status"] == WorkloadStatus.PASSED and self.mode != Mode.TEST:
                    with self._phase("timing"):
                        self._time(worker, w, entry)
                    if entry["status"] == WorkloadStatus.PASSED:
                        timed.append(w)
            except (WorkerDied, BadReply) as exc:
                worker.kill()
                self.entries[w.id] = report.workload_entry(self.problem, w, *_ended(exc, w.id))
                self._skip_rest(workloads[i + 1 :], "the worker died on an earlier workload")
                break
            self.entries[w.id] = entry
        return timed

    def _skip_rest(self, rest: list[Workload], why: str) -> None:
        for w in rest:
            self.entries[w.id] = report.workload_entry(
                self.problem, w, WorkloadStatus.SKIPPED, [reason("SKIPPED", why)]
            )

    def _request(self, w: Workload, seed_base: int) -> dict[str, Any]:
        nbytes = [s.nbytes(w.axes, w.dtype) for s in self.problem.outputs]
        return {
            "axes": w.axes,
            "dtype": w.dtype,
            "seed_base": seed_base,
            "output_nbytes": nbytes,
            "gpu_memory_bytes": self.gpu_limit_bytes(w),
        }

    def _check(self, worker: WorkerProcess, w: Workload) -> dict[str, Any]:
        errors: list[dict[str, Any]] = []
        stats: dict[str, float] = {}
        rounds = ROUNDS[self.mode]
        for r in range(rounds):
            seed = seeds.derive(self.base, self.problem.name, w.id, "check", r)
            ref, ref_s = self._expected(w, seed, 0)
            timeout = self.limit_policy.call_seconds(ref_s, first=r == 0)
            started = time.perf_counter()
            header, outputs = worker.request(
                {"op": "check", **self._request(w, seed)},
                timeout=timeout,
                max_bytes=self._frame_bytes(w, 1),
                watch=self.gpu_limit_bytes(w),
            )
            self.call_s[w.id] = time.perf_counter() - started
            reply = replies.check(header, inputs=len(self.problem.inputs) or 1 << 10)
            self.doc["guard"]["findings"] += _tag(reply.findings, w.id)
            check = checker(self.problem, w, seed, 0, self.target.torch_device)
            errors = self._verify(reply.failure, reply.inputs_modified, outputs, ref, check)
            if reply.failure is not None and reply.failure.compile:
                self.doc["verdict_override"] = "COMPILE_ERROR"  # a kernel built at first launch
            if errors:
                break
            stats = self._last_stats
        status = report.status_of(errors)
        entry = report.workload_entry(self.problem, w, status, errors)
        entry["correctness"] = {"rounds": rounds if not errors else r + 1, **stats}
        return entry

    def _expected(self, w: Workload, seed: int, index: int) -> tuple[list[torch.Tensor], float]:
        """The reference outputs of call `index`, and the seconds the trusted side took to make
        them (input generation included): the yardstick of the candidate's time limits."""
        device = self.target.torch_device
        gpu = device.type == "cuda"
        if gpu:
            before = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
        started = time.perf_counter()
        ref = expected(self.problem, w, seed, index, device)
        if gpu:
            torch.cuda.synchronize(device)
            peak = torch.cuda.max_memory_allocated(device) - before
            self.ref_peak[w.id] = max(self.ref_peak.get(w.id, 0), peak)
        return ref, time.perf_counter() - started

    def _verify(
        self,
        failure: replies.Failure | None,
        inputs_modified: list[int],
        outputs: list[torch.Tensor],
        ref: list[torch.Tensor],
        check: Callable[[Sequence[torch.Tensor]], list[str]] | None = None,
    ) -> list[dict[str, Any]]:
        self._last_stats = {}
        if failure is not None:
            return [{**failure.reason(), "status": failure.status.value}]
        writable = set(self.problem.extra.get("writable_inputs", ()))  # destination buffers
        inputs_modified = [i for i in inputs_modified if i not in writable]
        if inputs_modified:
            names = [
                self.problem.inputs[i].name for i in inputs_modified if i < len(self.problem.inputs)
            ]
            return [
                reason(
                    "INPUT_MODIFIED",
                    f"the kernel modified its input(s) {', '.join(names)}; inputs are read-only",
                )
            ]
        errors, self._last_stats = correctness.compare(
            outputs, ref, self.problem, device=self.target.torch_device, check=check
        )
        return errors

    def _time(self, worker: WorkerProcess, w: Workload, entry: dict[str, Any]) -> None:
        seed = seeds.derive(self.base, self.problem.name, w.id, "time")
        policy = self.target.policy(self.opts.policy)
        picks = sorted(self.rng.sample(range(policy.min_calls), k=min(RECHECKS, policy.min_calls)))
        request = {
            "op": "time",
            **self._request(w, seed),
            "policy": policy.__dict__,
            "recheck": picks,
            "llc_bytes": self.target.llc_bytes,
        }
        timeout = self.limit_policy.timing_seconds(policy, self.call_s.get(w.id, 0.0))
        gate = self.target.cool_down()
        started = time.perf_counter()
        header, _ = worker.request(
            request, timeout=timeout, max_bytes=0, watch=self.gpu_limit_bytes(w)
        )
        wall_ms = (time.perf_counter() - started) * 1000
        reply = replies.timing(header, asked=picks)
        _, tensors = worker.receive(
            timeout=self.limit_policy.call_seconds(self.call_s.get(w.id, 0.0), first=False),
            max_bytes=self._frame_bytes(w, len(picks)),
        )
        self.doc["guard"]["findings"] += _tag(reply.findings, w.id)
        if reply.failure is not None:
            report.set_status(entry, self._verify(reply.failure, [], [], []))
            return
        errors = self._rechecks(reply, tensors, w, seed, picks)
        if errors:
            report.set_status(entry, errors)
            return
        report.add_timing(entry, reply.summary(), wall_ms, thermal=gate, warmup_ms=policy.warmup_ms)

    def _rechecks(
        self,
        reply: replies.TimeReply,
        tensors: list[torch.Tensor],
        w: Workload,
        seed: int,
        picks: list[int],
    ) -> list[dict[str, Any]]:
        simulated = self.target.device == "npu-sim"
        if not simulated and sorted(reply.recheck) != picks:
            return [reason("RECHECK_MISSING", "the worker did not return the re-checked calls")]
        if sum(reply.recheck_counts) != len(tensors):
            raise BadReply("the re-checked outputs do not match the counts the reply announced")
        offset = 0
        for index, count in zip(reply.recheck, reply.recheck_counts):
            outputs = tensors[offset : offset + count]
            offset += count
            ref, _ = self._expected(w, seed, index)
            check = checker(self.problem, w, seed, index, self.target.torch_device)
            errors = self._verify(None, [], outputs, ref, check)
            if errors:
                return [
                    reason(
                        "RECHECK_FAILED",
                        f"timed call {index} returned a wrong result: "
                        + "; ".join(e["detail"] for e in errors),
                    )
                ]
        return []

    def _frame_bytes(self, w: Workload, calls: int) -> int:
        """The most tensor bytes a reply about `calls` calls of `w` may carry."""
        try:
            nbytes = sum(s.nbytes(w.axes, w.dtype) for s in self.problem.outputs)
        except (KeyError, ValueError, TypeError):
            return self.opts.limits.output_bytes  # outputs the spec cannot size (imports)
        return self.limit_policy.frame_bytes(nbytes, max(calls, 1))

    def _workload_bytes(self, w: Workload) -> int:
        try:
            return self.problem.io_bytes(w)
        except (KeyError, ValueError, TypeError):
            return 0

    def gpu_limit_bytes(self, w: Workload) -> int | None:
        """Device memory (bytes) the worker may hold while it serves `w`: the stated factor
        times the larger of the workload's inputs + outputs and the reference's own peak (input
        generation included) as the trusted side measured it, plus the floor; None off GPUs."""
        if self.target.torch_device.type != "cuda":
            return None
        need = max(self._workload_bytes(w), self.ref_peak.get(w.id, 0))
        return self.limit_policy.gpu_memory_bytes(need)

    def _baselines(self, timed: list[Workload]) -> None:
        kinds = ["eager"] + (
            ["compile"] if self.target.compile_baseline(self.opts.compile_baseline) else []
        )
        cache = self._baseline_cache()
        with tempfile.TemporaryDirectory(prefix="farm-base-") as tmp:
            for kind in kinds:
                todo = [w for w in timed if not self._cached_baseline(cache, kind, w)]
                if todo:
                    self._baseline(Path(tmp) / kind, kind, todo, cache)

    def _baseline_cache(self) -> baselines.BaselineCache | None:
        """This node's cache of baselines; None in leaderboard mode, which re-measures the
        reference beside the candidate (farm.harness.baselines)."""
        if self.mode == Mode.LEADERBOARD or not baselines.enabled():
            return None
        scope = baselines.Scope(
            suite=self.suite.name,
            suite_hash=self.suite.hash,
            problem=self.problem.name,
            hardware=self.target.hardware,
            device=self.target.device,
            device_index=self.opts.device_index,
            policy=self.target.policy(self.opts.policy),
        )
        return baselines.BaselineCache(scope)

    def _cached_baseline(
        self, cache: baselines.BaselineCache | None, kind: str, w: Workload
    ) -> bool:
        hit = cache.get(w.id, kind) if cache is not None else None
        if hit is None:
            return False
        entry = self.entries[w.id]
        report.add_baseline(
            entry,
            kind,
            hit["summary"],
            hit["wall_ms"],
            thermal=hit["thermal"],
            warmup_ms=hit["warmup_ms"],
        )
        entry["baseline_timing"][kind]["measured_at"] = hit["at"]  # reused, not re-measured
        return True

    def _baseline(
        self,
        workdir: Path,
        kind: str,
        timed: list[Workload],
        cache: baselines.BaselineCache | None = None,
    ) -> None:
        request = {
            "op": "load",
            "builtin": "reference",
            "compile": kind == "compile",
            "axes": timed[0].axes,
            "problem_dir": str(self.problem.directory.resolve()),
        }
        try:
            worker = self._acquire(kind, workdir, timed)
        except WorkerDied as exc:
            self._baseline_failed(kind, exc.detail)
            return
        try:
            header, _ = worker.request(request, timeout=self.limit_policy.load_s)
            loaded = replies.load(header)
            if loaded.failure is not None:
                self._baseline_failed(kind, loaded.failure.detail)
                return
            for w in timed:
                self._baseline_one(worker, kind, w, cache)
        except (WorkerDied, BadReply) as exc:
            self._baseline_failed(kind, str(exc))
        finally:
            self._release(kind, worker)

    def _baseline_one(
        self,
        worker: WorkerProcess,
        kind: str,
        w: Workload,
        cache: baselines.BaselineCache | None = None,
    ) -> None:
        seed = seeds.derive(self.base, self.problem.name, w.id, "baseline", kind)
        policy = self.target.policy(self.opts.policy)
        request = {
            "op": "time",
            **self._request(w, seed),
            "policy": policy.__dict__,
            "recheck": [],
            "llc_bytes": self.target.llc_bytes,
        }
        first_call = self.limit_policy.compile_s if kind == "compile" else 0.0
        timeout = self.limit_policy.timing_seconds(policy, self.call_s.get(w.id, 0.0)) + first_call
        gate = self.target.cool_down()
        started = time.perf_counter()
        header, _ = worker.request(request, timeout=timeout, max_bytes=0)
        wall_ms = (time.perf_counter() - started) * 1000
        reply = replies.timing(header, asked=[])
        worker.receive(timeout=60, max_bytes=self._frame_bytes(w, 1))  # npu-sim sends one
        if reply.failure is not None:
            self._baseline_failed(f"{kind} {w.id}", reply.failure.detail)
            return
        report.add_baseline(
            self.entries[w.id],
            kind,
            reply.summary(),
            wall_ms,
            thermal=gate,
            warmup_ms=policy.warmup_ms,
        )
        if cache is not None:
            stored = {"summary": reply.summary(), "wall_ms": wall_ms, "thermal": gate}
            cache.put(w.id, kind, {**stored, "warmup_ms": policy.warmup_ms})

    def _baseline_failed(self, what: str, detail: str) -> None:
        self.doc["reasons_extra"].append(
            reason("BASELINE_FAILED", f"{what}: {replies.text(detail, 500)}")
        )


# How the trusted side names a worker's end: the limit the sandbox saw it hit, else the signal.
_DIED = {"TIMEOUT": WorkloadStatus.TIMEOUT, "RUNTIME_ERROR": WorkloadStatus.RUNTIME_ERROR}


def _ended(
    exc: WorkerDied | BadReply, workload_id: str
) -> tuple[WorkloadStatus, list[dict[str, Any]]]:
    """The status and reason of a workload during which the worker died or sent a bad frame."""
    if isinstance(exc, BadReply):
        detail = f"the worker sent an invalid reply on {workload_id}: {exc}"
        return WorkloadStatus.RUNTIME_ERROR, [reason("BAD_REPLY", replies.text(detail))]
    return _DIED[exc.status], [reason(exc.code, replies.text(exc.detail))]


def _load_failure(exc: WorkerDied | BadReply) -> replies.Failure:
    """A load that ended without a reply: the import crashed the worker (COMPILE_ERROR), ran out
    of time (TIMEOUT), or answered with what is not a reply (RUNTIME_ERROR)."""
    if isinstance(exc, BadReply):
        detail = f"the worker sent an invalid reply to 'load': {exc}"
        return replies.Failure("BAD_REPLY", WorkloadStatus.RUNTIME_ERROR, detail)
    status = _DIED[exc.status]
    detail = replies.text(exc.detail)
    return replies.Failure(exc.code, status, detail, compile=exc.code == "WORKER_DIED")


def _tag(findings: list[dict[str, Any]], workload_id: str) -> list[dict[str, Any]]:
    return [{**f, "workload": workload_id} for f in findings]


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
