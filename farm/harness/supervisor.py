"""The trusted side of an evaluation: `evaluate(...)` -> the result document.

It holds the seeds, makes every input itself and hands it to the worker as data
(farm.harness.feed), computes every reference output itself, and decides every status; the
submission runs only in a sandboxed worker process (farm.harness.worker), which holds no seed.
Baselines (the reference in eager mode and under torch.compile) are timed in a separate worker
that never loads the submission.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from farm.config import Env
from farm.errors import FarmError, SubmissionError
from farm.harness import (
    baselines,
    correctness,
    cudaipc,
    feed,
    host_load,
    reference,
    replies,
    report,
    runtime,
    seeds,
    simreplay,
)
from farm.harness.arena import Arena
from farm.harness.budget import LimitPolicy
from farm.harness.channel import WorkerDied, WorkerProcess, WorkerSpec, stage_source
from farm.harness.pool import WorkerPool
from farm.harness.prestart import Early
from farm.harness.reference import checker
from farm.harness.replies import BadReply
from farm.harness.targets import Target, resolve_target
from farm.harness.timing import TimingPolicy
from farm.harness.windows import WindowDriver
from farm.result import Mode, Result, WorkloadStatus, reason
from farm.sandbox import Limits, Runner, get_runner
from farm.suite.loader import Suite, load_suite
from farm.suite.model import Problem, Workload

log = logging.getLogger(__name__)
MAX_SOURCE_BYTES = 1 << 20
ROUNDS = {Mode.TEST: 3, Mode.BENCHMARK: 3, Mode.LEADERBOARD: 5, Mode.PROFILE: 3}


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
    early: Early | None = None  # a candidate worker the CLI started ahead (farm.harness.prestart)


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
        self.workloads: list[Workload] = []  # those this evaluation runs
        self.ref_peak: dict[str, int] = {}  # workload id -> the reference's device peak (bytes)
        self.phases: dict[str, float] = {}
        self.limit_policy = opts.limit_policy or LimitPolicy.from_env()
        self.call_s: dict[str, float] = {}  # trusted wall time of a workload's last check (s)
        # a check's inputs and reference outputs made ahead, by (workload id, seed)
        self.early: dict[tuple[str, int], Made] = {}
        self.arena: Arena | None = None  # the inputs handed over on the device (CUDA)
        self.place_rng = random.Random(int.from_bytes(os.urandom(8), "little"))
        self.no_ipc = cudaipc.unavailable_reason(target.torch_device)  # None: outputs on device
        self.doc["environment"]["output_transport"] = _transport(self.no_ipc)

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
        # the document leaves the supervisor through its typed form (farm.result), as every
        # consumer reads it: a field of the wrong shape fails here, not on the server
        return Result.from_json(self.doc).to_json()

    def _workloads(self) -> list[Workload]:
        # boards score every workload at its real size; a node may keep simulated boards to the
        # small workloads (FARM_NPU_SIM_BOARD_SIZES=small: the local demo farm, a laptop)
        every = self.mode == Mode.LEADERBOARD and (
            not self.target.kind.simulated
            or Env().choice("FARM_NPU_SIM_BOARD_SIZES", "all", ("all", "small")) != "small"
        )
        chosen = self.target.select(self.problem, self.opts.workloads, every=every)
        self.workloads = chosen.run
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
                self._close_arena()
        simulated = self.target.kind.simulated  # its replay counts the baseline too
        if self.mode != Mode.TEST and self.opts.baselines and timed and not simulated:
            with self._phase("baselines"):
                try:
                    self._baselines(timed)
                finally:
                    self._close_arena()
        with self._phase("calibration"):
            self._calibrate_wall_clock(timed)

    def _calibrate_wall_clock(self, timed: list[Workload]) -> None:
        """The wall-clock rules' yardsticks (farm.harness.reference), taken now that nothing
        else of the evaluation runs (never while a worker imports), this node's cached ones
        where it has them: the check path around a call that does nothing, and, where no eager
        baseline gives one, the timing loop around such a call. Before a rule fires, they are
        measured again and the host is looked at (farm.harness.host_load); a mismatch the host's
        load explains makes the workload INCONCLUSIVE (farm.harness.report.host_busy).
        Simulated times (npu-sim) are not wall-clock times."""
        if self.target.kind.simulated:
            return
        for w in timed:
            entry = self.entries[w.id]
            eager = bool((entry["baseline_timing"] or {}).get("eager"))
            check, cached = self._check_yardstick(w)
            report.set_yardsticks(entry, check, None if eager else self._loop_yardstick(w))
            if not report.wall_rules_fire(entry):
                continue
            check, _ = self._check_yardstick(w, fresh=True)
            report.set_yardsticks(entry, check, None if eager else self._loop_yardstick(w, True))
            now = check.per_call_ms / cached.per_call_ms if cached and cached.per_call_ms else 1.0
            entry["host"] = host_load.sample(now).to_json()

    def _check_yardstick(
        self, w: Workload, fresh: bool = False
    ) -> tuple[reference.Yardstick, reference.Yardstick | None]:
        """(the check path's yardstick, this node's cached one or None); `fresh`: measured."""
        device = self.target.torch_device
        return reference.cached_yardstick(
            self._baseline_cache(),
            w.id,
            "yardstick-check",
            lambda: reference.check_yardstick(self.problem, w, device),
            fresh=fresh,
        )

    def _loop_yardstick(self, w: Workload, fresh: bool = False) -> reference.Yardstick:
        """The timing loop's yardstick (this node's cached one unless `fresh`)."""
        policy = self.target.policy(self.opts.policy)
        args = (self.target.torch_device, policy, self.target.llc_bytes, self._keep_calls(w))
        return reference.cached_yardstick(
            self._baseline_cache(),
            w.id,
            "yardstick-loop",
            lambda: reference.loop_yardstick(self.problem, w, *args),
            fresh=fresh,
        )[0]

    def _start_candidate(self, tmp: Path, workloads: list[Workload]) -> WorkerProcess | None:
        """A started worker with the submission loaded, or None (the failure is recorded). The
        load request goes out right behind the worker's setup, and the trusted side makes its
        first reference outputs while the worker starts (farm.harness.channel)."""
        try:
            with self._phase("sandbox_start"):
                worker = self._acquire("candidate", tmp / "candidate", workloads, wait=False)
                try:
                    worker.send(self._load_request(worker, workloads))
                    self._first_reference(workloads)
                    worker.ready()
                except BaseException:
                    self._release("candidate", worker)
                    raise
        except WorkerDied as exc:
            raise FarmError(
                f"the sandboxed worker did not start: {replies.text(exc.detail, 2000)}",
                hint="check the node's sandbox set-up (farm hardware; docs/security.md)",
            ) from None
        try:
            with self._phase("load"):
                header, _ = worker.receive(timeout=self.limit_policy.load_s)
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

    def _load_request(self, worker: WorkerProcess, workloads: list[Workload]) -> dict[str, Any]:
        staged = stage_source(self.source_path, worker.spec.workdir)
        return {
            "op": "load",
            "gpumode_data": self.problem.extra.get("gpumode_data", "tuple"),
            "source_path": str(staged),
            "axes": workloads[0].axes if workloads else {},
            "problem_dir": str(self.problem.directory.resolve()),
        }

    def _first_reference(self, workloads: list[Workload]) -> None:
        """The first check's reference outputs, made ahead (kept for `_check`)."""
        if workloads:
            w = workloads[0]
            seed = seeds.derive(self.base, self.problem.name, w.id, "check", 0)
            self.early[(w.id, seed)] = self._made(w, seed)

    def _acquire(
        self, kind: str, workdir: Path, workloads: list[Workload], *, wait: bool = True
    ) -> WorkerProcess:
        """A started worker: from the pool when there is one, else a fresh one in `workdir` with
        limits sized to the largest of `workloads` (`wait`: see WorkerProcess)."""
        early, self.opts.early = self.opts.early, None
        ids = [w.id for w in workloads]
        if (
            kind == "candidate"
            and early
            and early.serves(self.suite.root, self.problem.name, self.target.device, ids)
        ):
            self.doc["environment"]["sandbox"] = early.sandbox_name
            if early.sandbox_note:
                self.doc["environment"]["sandbox_note"] = early.sandbox_note
            self.doc["environment"]["limits"] = {"memory_bytes": early.memory_bytes}
            return early.worker
        pool = self.opts.pool
        if pool is not None:
            self.doc["environment"]["sandbox"] = pool.runner.name
            return pool.candidate() if kind == "candidate" else pool.baseline(kind)
        workdir.mkdir(parents=True, exist_ok=True)
        runner = self.runner
        largest = max((self._sandbox_bytes(w) for w in workloads), default=0)
        limits = self.limit_policy.sandbox_limits(
            self.opts.limits, workload_bytes=largest, gpu=self.target.kind.gpu
        )
        spec = WorkerSpec(
            device=self.target.device,
            read_dirs=[self.problem.directory.resolve()],
            workdir=workdir,
            device_index=self.opts.device_index,
            limits=limits,
            gpu_memory_bytes=self.gpu_limit_bytes(),
        )
        self.doc["environment"]["sandbox"] = runner.name
        if runner.note:
            self.doc["environment"]["sandbox_note"] = runner.note
        self.doc["environment"]["limits"] = {"memory_bytes": limits.memory_bytes}
        return WorkerProcess(runner, spec, wait=wait)

    @functools.cached_property
    def runner(self) -> Runner:
        """The sandbox runner of this evaluation's workers (its pool's, when it has one), which
        every other sandboxed step of it uses too (the npu-sim replay): found once."""
        if self.opts.pool is not None:
            return self.opts.pool.runner
        return get_runner(self.opts.sandbox, vendor=self.target.kind.gpu_vendor)

    def _release(self, kind: str, worker: WorkerProcess) -> None:
        pool = self.opts.pool
        if pool is None and kind == "candidate":
            worker.discard()
        elif pool is None:
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
            worker.gpu_peak = 0
            try:
                if self.target.kind.simulated:  # trusted replay (farm.harness.simreplay)
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
                self._memory(worker, w)
                self._skip_rest(workloads[i + 1 :], "the worker died on an earlier workload")
                break
            self.entries[w.id] = entry
            self._memory(worker, w)
        return timed

    def _memory(self, worker: WorkerProcess, w: Workload) -> None:
        """On GPUs, the most device memory the worker held while it served `w`, as the trusted
        side's watch saw it, beside the limit it was held to."""
        limit = self.gpu_limit_bytes()
        if limit is not None and worker.gpu_peak:
            self.entries[w.id]["memory"] = {
                "gpu_peak_bytes": worker.gpu_peak,
                "gpu_limit_bytes": limit,
            }

    def _skip_rest(self, rest: list[Workload], why: str) -> None:
        for w in rest:
            self.entries[w.id] = report.workload_entry(
                self.problem, w, WorkloadStatus.SKIPPED, [reason("SKIPPED", why)]
            )

    def _request(self, w: Workload) -> dict[str, Any]:
        """What every request about `w` says (no seed: the inputs come as data)."""
        nbytes = [s.nbytes(w.axes, w.dtype) for s in self.problem.outputs]
        return {
            "axes": w.axes,
            "dtype": w.dtype,
            "output_nbytes": nbytes,
            "gpu_memory_bytes": self.gpu_limit_bytes(),
        }

    def _maker(self, w: Workload, seed: int) -> Callable[[int], list[Any]]:
        """make(i): the inputs of call i of a request with base `seed`, made here."""
        module = reference.load_reference(self.problem)
        request = {"axes": w.axes, "dtype": w.dtype, "seed_base": seed}
        return runtime.input_maker(module, request, self.target.torch_device)

    def _payload(self, calls: list[list[Any]], *, keep: bool = False) -> feed.Payload:
        """These calls' inputs as a request carries them: in this process's arena on the
        device while CUDA IPC serves, else through the pipe (farm.harness.feed). `keep`: keep
        a copy of what was sent (a checked call's inputs, compared after the call)."""
        if self.no_ipc is not None or self.target.torch_device.type != "cuda":
            return feed.pack_pipe(calls)
        needed = sum(feed.call_bytes(c) for c in calls)
        try:
            if self.arena is None or self.arena.nbytes < needed:
                self._close_arena()
                self.arena = Arena(self.target.torch_device, feed.arena_bytes(needed))
        except cudaipc.IpcError as exc:  # the driver would not give or share the memory
            self._to_pipe(f"the inputs' arena could not be made: {exc}")
            return feed.pack_pipe(calls)
        return feed.pack_device(calls, self.arena, self.place_rng, keep=keep)

    def _close_arena(self) -> None:
        if self.arena is not None:
            self.arena.close()
            self.arena = None

    def _check(self, worker: WorkerProcess, w: Workload) -> dict[str, Any]:
        errors: list[dict[str, Any]] = []
        stats: dict[str, float] = {}
        walls_ms: list[float] = []  # each passed round's wall (the check-wall rule)
        rounds = ROUNDS[self.mode]
        r = 0
        while r < rounds:
            seed = seeds.derive(self.base, self.problem.name, w.id, "check", r)
            made = self.early.pop((w.id, seed), None) or self._made(w, seed)
            try:
                reply, outputs, modified = self._check_call(worker, w, made, first=r == 0)
            except cudaipc.IpcError as exc:
                self._to_pipe(str(exc))  # this round again, its data through the pipe
                self.early[(w.id, seed)] = made
                continue
            self.doc["guard"]["findings"] += _tag(reply.findings, w.id)
            check = checker(self.problem, w, seed, 0, self.target.torch_device)
            errors = self._verify(reply.failure, modified, outputs, made.ref, check)
            if reply.failure is not None and reply.failure.compile:
                self.doc["verdict_override"] = "COMPILE_ERROR"  # a kernel built at first launch
            if errors:
                break
            stats = self._last_stats
            walls_ms.append(self.call_s[w.id] * 1000)
            r += 1
        status = report.status_of(errors)
        entry = report.workload_entry(self.problem, w, status, errors)
        entry["correctness"] = {"rounds": rounds if not errors else r + 1, **stats}
        entry["correctness"]["walls_ms"] = walls_ms
        return entry

    def _check_call(
        self, worker: WorkerProcess, w: Workload, made: Made, *, first: bool
    ) -> tuple[replies.CheckReply, list[torch.Tensor], list[int]]:
        """One checked call of the candidate on the inputs made here: its reply, its outputs,
        which the trusted side now owns (copied on the device, or read from the pipe), and the
        inputs the call changed, decided here against what was sent. The reference's time on
        the same inputs is the yardstick of the call's time limit."""
        timeout = self.limit_policy.call_seconds(made.ref_s, first=first)
        payload = self._payload([made.inputs], keep=True)
        request = {"op": "check", **self._request(w), **payload.fields}
        if self.no_ipc is None:
            request["outputs"] = "ipc"
        started = time.perf_counter()
        header, tensors = worker.request(
            request,
            timeout=timeout,
            max_bytes=self._frame_bytes(w, 1) + payload.nbytes,
            watch=self.gpu_limit_bytes(),
            tensors=payload.tensors,
        )
        self.call_s[w.id] = time.perf_counter() - started
        reply = replies.check(header)
        after = replies.inputs_after(header, tensors, len(payload.sent[0]))
        outputs = self._received(header, tensors[: len(tensors) - len(after)], made.ref)
        return reply, outputs, feed.modified_inputs(payload, 0, after)

    def _received(
        self, header: dict[str, Any], tensors: list[torch.Tensor], ref: list[torch.Tensor]
    ) -> list[torch.Tensor]:
        """A reply's outputs: those the worker left on the device, copied into the trusted
        side's memory (laid out as `ref`, the reference outputs), else the frame's tensors.
        Raises BadReply for a malformed entry, cudaipc.IpcError when a handle does not open."""
        if "outputs_ipc_error" in header and self.no_ipc is None:
            self._to_pipe(
                "the worker could not share its outputs: "
                + replies.text(header["outputs_ipc_error"], 300)
            )
        if "outputs_ipc" not in header:
            return tensors
        if self.no_ipc is not None or tensors:
            raise BadReply("outputs on the device were not asked for, or came with tensors")
        try:
            entries = cudaipc.parse(header["outputs_ipc"])
            return cudaipc.receive(entries, ref, self.target.torch_device)
        except cudaipc.BadEntry as exc:
            raise BadReply(str(exc)) from None

    def _to_pipe(self, why: str) -> None:
        """Outputs come through the pipe for the rest of this evaluation (said in the result)."""
        self.no_ipc = why
        self.doc["environment"]["output_transport"] = _transport(why)

    def _made(self, w: Workload, seed: int, index: int = 0, *, send: bool = True) -> Made:
        """Call `index`'s inputs, made here, and the reference outputs with the seconds the
        trusted side took to make them: the yardstick of the candidate's time limits. With
        `send`, the inputs kept are a copy made before the reference ran (it may write its
        inputs), for the worker; without (a re-check's reference), none are kept."""
        device = self.target.torch_device
        gpu = self.target.kind.gpu
        if gpu:
            before = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
        started = time.perf_counter()
        inputs = self._maker(w, seed)(index)
        sent = feed.snapshot(inputs) if send else []
        ref = reference.outputs_of(self.problem, inputs)
        if gpu:
            torch.cuda.synchronize(device)
            peak = torch.cuda.max_memory_allocated(device) - before
            self.ref_peak[w.id] = max(self.ref_peak.get(w.id, 0), peak)
        return Made(sent, ref, time.perf_counter() - started)

    def _expected(self, w: Workload, seed: int, index: int) -> tuple[list[torch.Tensor], float]:
        """The reference outputs of call `index` and the seconds they took (a re-check's)."""
        made = self._made(w, seed, index, send=False)
        return made.ref, made.ref_s

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
        errors, self._last_stats = correctness.compare(
            outputs, ref, self.problem, device=self.target.torch_device, check=check
        )
        writable = set(self.problem.extra.get("writable_inputs", ()))  # destination buffers
        inputs_modified = [i for i in inputs_modified if i not in writable]
        if errors or not inputs_modified:
            return errors
        names = [
            self.problem.inputs[i].name for i in inputs_modified if i < len(self.problem.inputs)
        ]
        detail = f"the kernel modified its input(s) {', '.join(names)}; inputs are read-only"
        return [reason("INPUT_MODIFIED", detail)]

    def _time(self, worker: WorkerProcess, w: Workload, entry: dict[str, Any]) -> None:
        """Time the candidate in windows the supervisor sizes and times itself, re-checking calls
        it names only after their window ran (farm.harness.timing, farm.harness.windows)."""
        seed = seeds.derive(self.base, self.problem.name, w.id, "time")
        policy = self.target.policy(self.opts.policy)
        gate = self.target.cool_down()

        refs: dict[int, list[torch.Tensor]] = {}  # a picked call's reference, made once

        def reference(index: int) -> list[torch.Tensor]:
            if index not in refs:
                refs[index] = self._expected(w, seed, index)[0]
            return refs[index]

        def verify(index: int, outputs: list[torch.Tensor]) -> list[dict[str, Any]]:
            ref = reference(index)
            del refs[index]
            check = checker(self.problem, w, seed, index, self.target.torch_device)
            errors = self._verify(None, [], outputs, ref, check)
            if not errors:
                return []
            detail = "; ".join(e["detail"] for e in errors)
            return [
                reason("RECHECK_FAILED", f"timed call {index} returned a wrong result: {detail}")
            ]

        driver = self._driver(worker, w, policy, watch=True)
        self._feed(driver, w, seed)
        driver.transport = _Picks(self, reference)
        run = driver.run(self._timing_request(w, policy), verify)
        self._move_phase("timing", "correctness", run.verify_s)
        self.doc["guard"]["findings"] += _tag(run.findings, w.id)
        if run.failure is not None:
            report.set_status(entry, self._verify(run.failure, [], [], []))
        elif run.errors:
            report.set_status(entry, run.errors)
        else:
            report.add_timing(
                entry, run.summary(), run.wall_ms, thermal=gate, warmup_ms=policy.warmup_ms
            )

    def _driver(
        self, worker: WorkerProcess, w: Workload, policy: TimingPolicy, *, watch: bool
    ) -> WindowDriver:
        return WindowDriver(
            worker=worker,
            policy=policy,
            limits=self.limit_policy,
            rng=self.rng,
            call_s=self.call_s.get(w.id, 0.0),
            keep_calls=self._keep_calls(w),
            pick_bytes=self._frame_bytes(w, 1),
            watch=self.gpu_limit_bytes() if watch else None,
            simulated=self.target.kind.simulated,
        )

    def _feed(self, driver: WindowDriver, w: Workload, seed: int) -> None:
        """Give `driver` the timed calls' inputs, made here from `seed` (its warm-up's too:
        negative indices), and the most calls one request may carry."""
        make = self._maker(w, seed)
        first = {-1: make(-1)}  # the warm-up's first call, made once: it sizes the requests
        driver.feed_calls = feed.calls_that_fit(feed.call_bytes(first[-1]))
        driver.feed = lambda indices: self._payload(
            [first.pop(i) if i in first else make(i) for i in indices]
        )

    def _timing_request(self, w: Workload, policy: TimingPolicy) -> dict[str, Any]:
        return {
            **self._request(w),
            "policy": policy.__dict__,
            "llc_bytes": self.target.llc_bytes,
        }

    def _move_phase(self, source: str, target: str, seconds: float) -> None:
        """Count `seconds` spent inside phase `source` as phase `target` instead."""
        if seconds > 0:
            self.phases[source] = round(self.phases.get(source, 0.0) - seconds, 4)
            self.phases[target] = round(self.phases.get(target, 0.0) + seconds, 4)

    def _frame_bytes(self, w: Workload, calls: int) -> int:
        """The most tensor bytes a reply about `calls` calls of `w` may carry."""
        try:
            nbytes = sum(s.nbytes(w.axes, w.dtype) for s in self.problem.outputs)
        except (KeyError, ValueError, TypeError):
            return self.opts.limits.output_bytes  # outputs the spec cannot size (imports)
        return self.limit_policy.frame_bytes(nbytes, max(calls, 1))

    def _sandbox_bytes(self, w: Workload) -> int:
        """What the worker's host memory limit is sized by: the workload's bytes on GPUs (their
        memory is watched on the device), at float32 width on CPU and npu-sim."""
        if self.target.kind.gpu:
            return self._workload_bytes(w)
        try:
            return self.problem.host_bytes(w)
        except (KeyError, ValueError, TypeError):
            return 0

    def _keep_calls(self, w: Workload) -> int:
        """The most calls of a timing window of `w` whose outputs may be kept at once."""
        out_bytes = self._frame_bytes(w, 1) - self.limit_policy.output_slack
        return self.limit_policy.keep_calls(out_bytes, self._workload_bytes(w))

    def _workload_bytes(self, w: Workload) -> int:
        try:
            return self.problem.device_bytes(w)
        except (KeyError, ValueError, TypeError):
            return 0

    def gpu_limit_bytes(self) -> int | None:
        """Device memory (bytes) the worker may hold during this evaluation, None off GPUs: the
        largest over its workloads of the stated factor times the larger of the workload's
        inputs + outputs + weights (Problem.device_bytes) and the reference's own peak (input
        generation included) as the trusted side measured it, plus the floor and a timing
        window's kept outputs (LimitPolicy.gpu_memory_bytes). One limit for the whole
        evaluation, as for host memory: a process's device memory does not shrink between
        workloads (the allocator's cache, a library's workspaces), so a limit per workload would
        charge a small workload for the large one before it. It only grows, as the references'
        peaks are measured."""
        if not self.target.kind.gpu:
            return None
        return max(
            (
                self.limit_policy.gpu_memory_bytes(
                    self._workload_bytes(w), self.ref_peak.get(w.id, 0)
                )
                for w in self.workloads
            ),
            default=self.limit_policy.gpu_memory_bytes(0),
        )

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
        driver = self._driver(worker, w, policy, watch=False)
        self._feed(driver, w, seed)
        driver.call_s += self.limit_policy.compile_s if kind == "compile" else 0.0
        gate = self.target.cool_down()
        run = driver.run(self._timing_request(w, policy))
        if run.failure is not None:
            self._baseline_failed(f"{kind} {w.id}", run.failure.detail)
            return
        summary = run.summary()
        report.add_baseline(
            self.entries[w.id], kind, summary, run.wall_ms, thermal=gate, warmup_ms=policy.warmup_ms
        )
        if cache is not None:
            stored = {"summary": summary, "wall_ms": run.wall_ms, "thermal": gate}
            cache.put(w.id, kind, {**stored, "warmup_ms": policy.warmup_ms})

    def _baseline_failed(self, what: str, detail: str) -> None:
        self.doc["reasons_extra"].append(
            reason("BASELINE_FAILED", f"{what}: {replies.text(detail, 500)}")
        )


@dataclass
class Made:
    """A checked call's inputs as made on the trusted side (kept as made) and its reference
    outputs, with the seconds both took (s)."""

    inputs: list[Any]
    ref: list[torch.Tensor]
    ref_s: float


class _Picks:
    """How a timing's picked outputs reach the supervisor (farm.harness.windows.PickTransport):
    left on the device and copied by CUDA IPC while that works, laid out as the reference
    outputs of the picked calls (`reference`: made by the trusted side, kept for the check);
    else through the pipe."""

    def __init__(
        self, supervisor: Evaluation, reference: Callable[[int], list[torch.Tensor]]
    ) -> None:
        self.supervisor, self.reference = supervisor, reference

    def fields(self) -> dict[str, Any]:
        return {"outputs": "ipc"} if self.supervisor.no_ipc is None else {}

    def receive(
        self, header: dict[str, Any], tensors: list[torch.Tensor], picks: list[int]
    ) -> list[torch.Tensor] | None:
        if "outputs_ipc" not in header:
            return self.supervisor._received(header, tensors, [])
        expected = [t for index in picks for t in self.reference(index)]
        try:
            return self.supervisor._received(header, tensors, expected)
        except cudaipc.IpcError as exc:
            self.supervisor._to_pipe(str(exc))  # the worker still keeps them: ask again
            return None


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


def _transport(no_ipc: str | None) -> str:
    """How checked outputs reach the trusted side, as the result's environment says it."""
    return "device (CUDA IPC)" if no_ipc is None else f"pipe ({no_ipc})"


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
