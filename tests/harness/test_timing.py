import itertools

import pytest
import torch

from farm.harness import seeds, spans
from farm.harness.simtimer import SimFailure
from farm.harness.timing import (
    CpuTimer,
    Placement,
    TimingPolicy,
    capture,
    harness_torch,
    stop_rule,
)

US = 1000  # trace times are in ns


def _trace(calls, *, offset=5_000_000, forged=()):
    """A window's trace as the profiler and the harness leave it, built from `calls`: per call,
    the submission's device activities as (start us, end us, name) relative to the call's
    start. The harness copies the inputs, launches a flush (its launch record inside the mark's
    bracket), the call's kernels (the first 3 us after the bracket), then an end marker;
    `offset` is the profiler's clock minus the harness's. `forged`: (call, start us, name) of
    extra kernels the submission launches in that call."""
    activities, launches, marks = [], [], []
    corr = iter(range(1, 10_000))

    def launch(host_us, start_us, end_us, name):
        c = next(corr)
        launches.append(spans.Launch(host_us * US + offset, c))
        activities.append(spans.Activity(start_us * US, end_us * US, name, c))

    t = 0
    for i, kernels in enumerate(calls):
        launch(t - 6, t + 90, t + 95, "copy_")  # the harness's input copies, just before
        marks.append(spans.Mark(spans.FLUSH_KERNEL, t * US, (t + 20) * US))
        launch(t + 8, t + 100, t + 109, f"triton_{spans.FLUSH_KERNEL}_0")
        base = t + 110
        for k, (start, end, name) in enumerate(kernels):
            launch(t + 23 + k, base + start, base + end, name)  # 3 us after the bracket
        for call, start, name in forged:
            if call == i:
                launch(t + 40, base + start, base + start + 1, name)
        t += 1000
        marks.append(spans.Mark(spans.END_KERNEL, t * US, (t + 20) * US))
        launch(t + 9, t + 100, t + 101, spans.END_KERNEL)
        t += 1000
    return spans.Trace(activities, launches, marks)


def test_spans_cover_every_stream_between_the_harness_markers():
    # Call 1: one kernel 10-20 us and a side-stream kernel 15-40 us -> span 30 us.
    # Call 2: no work at all -> span 0 (a cached answer shows up as zero time).
    calls = [[(10, 20, "my_kernel"), (15, 40, "side_stream_kernel")], []]
    assert spans._spans(_trace(calls)) == pytest.approx([0.030, 0.0])
    # the profiler's clock may be anywhere relative to the harness's
    assert spans._spans(_trace(calls, offset=-(10**12))) == pytest.approx([0.030, 0.0])


def test_a_kernel_named_like_a_marker_is_a_forgery_not_a_new_span():
    # the submission's real work (10-500 us), then a kernel named as the harness's flush: read
    # by name, the call's span would restart after the real work
    calls = [[(10, 500, "work")], [(10, 500, "work")]]
    for name in (spans.FLUSH_KERNEL, spans.END_KERNEL, f"x_{spans.FLUSH_KERNEL}_y"):
        trace = _trace(calls, forged=[(1, 600, name)])
        with pytest.raises(SimFailure) as caught:
            spans._spans(trace)
        assert caught.value.status == "REJECTED" and caught.value.code == "FORGED_MARKER"
        assert "not launched by the harness" in caught.value.detail
    assert spans._spans(_trace(calls)) == pytest.approx([0.490, 0.490])


def test_without_a_launch_record_for_every_mark_nothing_is_accused():
    calls = [[(10, 500, "work")], [(10, 500, "work")]]
    honest = _trace(calls)
    del honest.launches[-1]  # the last end marker's launch record is missing
    assert spans._spans(honest) == pytest.approx([0.490, 0.490])  # read by name: they alternate
    forged = _trace(calls, forged=[(1, 600, spans.FLUSH_KERNEL)])
    del forged.launches[-1]
    assert spans._spans(forged) == []  # no alternation: the timer's events, not the name


def test_a_trace_without_launch_records_is_read_by_name_only_where_markers_alternate():
    trace = _trace([[(10, 20, "k")]])
    assert spans._spans(spans.Trace(trace.activities, [], trace.marks)) == pytest.approx([0.01])
    assert spans._spans(spans.Trace(trace.activities, trace.launches, [])) == pytest.approx([0.01])
    forged = _trace([[(10, 20, "k")]], forged=[(0, 30, spans.END_KERNEL)])
    assert spans._spans(spans.Trace(forged.activities, [], forged.marks)) == []


def test_placement_moves_each_calls_inputs_to_a_new_place_and_keeps_them_as_made(monkeypatch):
    from farm.harness import budget

    place = Placement(torch.device("cpu"))
    made = [
        torch.arange(1000, dtype=torch.float32),
        torch.ones(3, 5, dtype=torch.bfloat16),
        torch.tensor(7, dtype=torch.int64),  # 0-dim
        torch.arange(12.0).reshape(3, 4).t(),  # not contiguous: stays
        torch.zeros(4, requires_grad=True),  # autograd: stays
        3,  # not a tensor: stays
        *torch.zeros(2, 8).unbind(0),  # two views of one block: both stay, aliased as made
    ]
    seen = set()
    for _ in range(20):
        got = place(made)
        for a, b in zip(got, made, strict=True):
            if isinstance(b, torch.Tensor):
                assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
                assert torch.equal(a, b)
            else:
                assert a == b
        assert got[3] is made[3] and got[4] is made[4] and got[5] == 3
        assert got[6] is made[6] and got[7] is made[7]
        spans = sorted((t.data_ptr(), t.data_ptr() + t.nbytes) for t in got[:3])
        assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans))
        offsets = [t.data_ptr() - place.arena.data_ptr() for t in got[:3]]
        assert all(o % Placement.ALIGN == 0 for o in offsets)
        seen.add(tuple(t.data_ptr() for t in got[:3]))
    assert len(seen) == 20  # a new place every call
    assert place.arena.numel() == budget.placement_bytes(3 * Placement.ALIGN)
    # inputs larger than the limit stay where they were made
    monkeypatch.setattr(budget, "PLACE_MAX_BYTES", 1024)
    big = [torch.zeros(1024)]
    assert place(big)[0] is big[0]


def test_a_worker_gpu_allowance_holds_the_arena():
    from farm.harness.budget import PLACE_MAX_BYTES, LimitPolicy, placement_bytes
    from farm.sandbox.limits import GiB, MiB

    limits = LimitPolicy()
    assert placement_bytes(128 * MiB) == 128 * MiB + 512 * MiB
    assert placement_bytes(PLACE_MAX_BYTES) == 2 * GiB
    assert placement_bytes(PLACE_MAX_BYTES + 1) == 0
    for workload in (MiB, 128 * MiB, 3 * GiB):
        without = limits.gpu_memory_floor + 4 * workload + limits.kept_bytes(workload)
        arena = limits.gpu_memory_bytes(workload) - without
        assert arena == placement_bytes(min(workload, PLACE_MAX_BYTES))


def test_stop_rule_needs_enough_stable_samples():
    policy = TimingPolicy(min_calls=30, stable_windows=4, stable_tol=0.004, target_rse=0.001)
    assert stop_rule([1.0] * 40, [1.0] * 4, policy)
    assert not stop_rule([1.0] * 20, [1.0] * 4, policy)  # too few calls
    assert not stop_rule([1.0] * 40, [1.0, 1.02, 1.0, 1.0], policy)  # still drifting
    assert not stop_rule([1.0, 1.2] * 20, [1.1] * 4, policy)  # too noisy


def test_a_window_keeps_every_call_as_it_was_when_its_timer_stopped():
    """Each call's outputs are captured before anything else runs: a buffer the kernel fills
    later (here: the next call finishes the previous one's) is kept unfilled."""
    pending: list = []

    def call(xs):
        for out, value in pending:
            out.copy_(value)  # deferred fix-up of the previous call's output
        pending.clear()
        out = torch.zeros(4)
        pending.append((out, xs[0] * 2))
        return [out]

    policy = TimingPolicy(warmup_ms=0, min_calls=5, window=5)
    window = CpuTimer(llc_bytes=1 << 20).window(
        call, lambda i: [torch.full((4,), float(i))], 10, 6, policy
    )
    assert len(window.times_ms) == len(window.outputs) == 6
    assert all(torch.equal(o[0], torch.zeros(4)) for o in window.outputs)


def test_capture_runs_outside_the_submissions_torch_modes():
    from torch.overrides import TorchFunctionMode

    class FillOnClone(TorchFunctionMode):  # computes when the harness touches the output
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") == "clone":
                args[0].fill_(7.0)
            return func(*args, **(kwargs or {}))

    out = torch.zeros(3)
    with FillOnClone():
        with harness_torch():
            copy = torch.full((2,), 1.0) + 1
        (kept,) = capture([out])
    assert torch.equal(kept, torch.zeros(3)) and torch.equal(copy, torch.full((2,), 2.0))


def test_harness_code_keeps_the_modes_it_enters_itself():
    """Inputs made under `with device:` (torch's default-device mode) inside harness code land
    on that device, from its generator, while the submission's mode still sees nothing."""
    from torch.overrides import TorchFunctionMode

    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Spy():
        with harness_torch():
            with torch.device("meta"):
                made = torch.rand(3)
            where = made.device.type  # an attribute read is a torch function too
        assert where == "meta" and not seen
        torch.ones(1)
    assert seen  # the submission's mode is back once harness code is done


def test_seeds_are_stable_and_distinct():
    assert seeds.derive(1, "softmax", "w", 0) == seeds.derive(1, "softmax", "w", 0)
    assert seeds.derive(1, "softmax", "w", 0) != seeds.derive(1, "softmax", "w", 1)
    assert seeds.derive(1, "a") < 2**63


def test_secret_seed_is_removed_from_the_environment(monkeypatch):
    monkeypatch.setenv("FARM_SECRET_SEED", "hidden")
    assert seeds.secret_base() == "hidden"
    import os

    assert "FARM_SECRET_SEED" not in os.environ
    assert seeds.secret_base() != seeds.secret_base()  # random when unset


def test_every_timed_evaluation_draws_a_fresh_base(monkeypatch):
    monkeypatch.delenv("FARM_SECRET_SEED", raising=False)
    one, fresh = seeds.choose_base(leaderboard=False, timed=True, given=None)
    two, _ = seeds.choose_base(leaderboard=False, timed=True, given=None)
    assert fresh and one != two  # a submission cannot precompute the calls to come
    assert seeds.choose_base(leaderboard=False, timed=False, given=None) == (
        seeds.PUBLIC_BASE,
        False,
    )  # a correctness run is reproducible as it is
    assert seeds.choose_base(leaderboard=False, timed=True, given=7) == (7, False)
    monkeypatch.setenv("FARM_SECRET_SEED", "hidden")
    assert seeds.choose_base(leaderboard=True, timed=True, given=7) == ("hidden", True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_window_spans_every_call_and_keeps_its_outputs():
    """On a GPU: one span per call from the raw Kineto events, close to the events' times, and
    each call's outputs as they were when its timer stopped."""
    from farm.harness.timing import GpuTimer

    device = torch.device("cuda")
    timer = GpuTimer(device, llc_bytes=50 << 20)
    x = torch.randn(1 << 22, device=device)
    policy = TimingPolicy(warmup_ms=0)
    timer.warmup(lambda xs: [xs[0] * 2], lambda i: [x + i], policy)
    window = timer.window(lambda xs: [xs[0] * 2], lambda i: [x + i], 5, 7, policy)
    assert timer.profiler_ok and len(window.times_ms) == 7
    for span, event in zip(window.times_ms, window.event_ms):
        assert 0 < span <= 2 * event + 0.05
    assert torch.equal(window.outputs[3][0], (x + 8) * 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_placed_inputs_look_as_made_and_move_every_call():
    """On a GPU: a placed input is its own storage (offset 0, the storage's size its own) at a
    new address every call, with the values and layout it was made with; the timed calls see
    them so."""
    from farm.harness.timing import GpuTimer

    device = torch.device("cuda")
    timer = GpuTimer(device, llc_bytes=50 << 20)
    made = [torch.randn(1 << 20, device=device), torch.ones(64, 32, device=device).bfloat16()]
    seen = []

    def call(xs):
        for a, b in zip(xs, made, strict=True):
            assert a.storage_offset() == 0 and a.untyped_storage().nbytes() == b.nbytes
            assert a.untyped_storage().data_ptr() == a.data_ptr()
            assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
        seen.append(xs[0].data_ptr())
        return [xs[0] * 2, xs[1] + 1]

    window = timer.window(call, lambda i: [t.clone() for t in made], 0, 6, TimingPolicy())
    assert len(set(seen)) == 6
    assert torch.equal(window.outputs[5][0], made[0] * 2)
    assert torch.equal(window.outputs[5][1], made[1] + 1)
    unplaced = timer.window(call, lambda i: made, 0, 2, TimingPolicy(place_inputs=False))
    assert len(unplaced.times_ms) == 2 and seen[-1] == made[0].data_ptr()


def _host(monkeypatch, per_core):
    from farm.harness import host_load

    load = host_load.HostLoad(per_core, 0.0)
    monkeypatch.setattr(host_load, "sample", lambda *a, **k: load)


def test_a_pick_reply_is_bounded_by_handing_over_kept_outputs(monkeypatch):
    """Kept outputs are only serialised: fixed cost + bytes at the minimum rate; a reply later
    than that (a pick computed when asked for) fails as LATE_PICKS, REJECTED, on a quiet host,
    and is INCONCLUSIVE on a busy one; simulated devices, whose times are the simulator's, are
    exempt (the supervisor's knowledge of its device)."""
    from farm.harness.windows import PICKS_FIXED_MS, picks_bound_ms

    _host(monkeypatch, 0.2)

    outputs = [torch.zeros(1 << 20)]  # 4 MiB: 42 ms at the minimum rate
    bound = picks_bound_ms(4 << 20)
    assert bound == pytest.approx(PICKS_FIXED_MS + 41.94, abs=0.01)

    assert _pick_driver(None)._late(bound - 1, outputs) is None
    late = _pick_driver(None)._late(bound + 1, outputs)
    assert late is not None and late.code == "LATE_PICKS" and late.status.value == "REJECTED"
    assert _pick_driver(None, simulated=True)._late(10 * bound, outputs) is None
    _host(monkeypatch, 7.0)
    busy = _pick_driver(None)._late(bound + 1, outputs)
    assert busy is not None and busy.code == "HOST_BUSY" and busy.status.value == "INCONCLUSIVE"
    assert "7.00 runnable threads per core" in busy.detail


class _PickWorker:
    """Answers every pick request with `outputs` through the pipe after `delay_s`."""

    def __init__(self, outputs, delay_s=0.0):
        self.outputs, self.delay_s, self.asked = outputs, delay_s, []

    def request(self, header, **_):
        import time

        self.asked.append(header)
        time.sleep(self.delay_s)
        calls = header["calls"]
        reply = {"op": "picks", "ok": True, "calls": calls, "counts": [1] * len(calls)}
        return reply, self.outputs * len(calls)


class _DeviceFirst:
    """A transport that asks for the outputs on the device; `fail_once`: its first hand-off
    fails and it turns to the pipe, as the supervisor's does when a handle does not open."""

    def __init__(self, fail_once):
        self.on_device, self.fail_once = True, fail_once

    def fields(self):
        return {"outputs": "ipc"} if self.on_device else {}

    def receive(self, outputs, tensors, picks):
        if self.fail_once and self.on_device:
            self.on_device = False
            return None
        return tensors


def _pick_driver(worker, transport=None, *, simulated=False):
    import random

    from farm.harness.budget import LimitPolicy
    from farm.harness.windows import WindowDriver

    return WindowDriver(
        worker=worker,
        policy=TimingPolicy(),
        limits=LimitPolicy(),
        rng=random.Random(0),
        call_s=0.01,
        keep_calls=8,
        pick_bytes=16 << 20,
        simulated=simulated,
        transport=transport,
    )


def _picked(driver):
    from farm.harness.windows import TimedRun, WindowRecord

    run = TimedRun(windows=[WindowRecord(start=0, calls=4, wall_ms=1.0, sum_ms=1.0)])
    driver._recheck(run, lambda index, outputs: [], count=1)
    return run


def test_a_failed_device_hand_off_asks_for_the_same_calls_through_the_pipe():
    worker = _PickWorker([torch.zeros(4)])
    run = _picked(_pick_driver(worker, _DeviceFirst(fail_once=True)))
    assert [h.get("outputs") for h in worker.asked] == ["ipc", None]
    assert worker.asked[0]["calls"] == worker.asked[1]["calls"] == run.rechecked
    assert run.failure is None and len(run.picks_ms) == 1


def test_the_late_pick_bound_follows_the_transport_the_supervisor_asked_for(monkeypatch):
    """16 MiB through the pipe may take 100 ms + 168 ms; asked for on the device, a reply that
    comes through the pipe anyway gets no transfer allowance: 150 ms is late there."""
    _host(monkeypatch, 0.2)
    outputs = [torch.zeros(4 << 20)]  # 16 MiB
    piped = _picked(_pick_driver(_PickWorker(outputs, delay_s=0.15), None))
    assert piped.failure is None
    ignored = _picked(_pick_driver(_PickWorker(outputs, delay_s=0.15), _DeviceFirst(False)))
    assert ignored.failure is not None and ignored.failure.code == "LATE_PICKS"


def test_the_trusted_loop_yardstick_keeps_no_more_outputs_than_the_worker(monkeypatch):
    """The trusted side's measurement of the timing loop's cost keeps a window's outputs as the
    worker does, at most `keep_calls` of them: a 50-call window of 6 GB outputs filled a GPU."""
    from farm.harness import reference
    from farm.harness.timing import TimingPolicy
    from farm.suite.loader import load_suite

    problem = load_suite("core-v1").problem("softmax")
    workload = next(w for w in problem.workloads if w.small)
    windows: list[int] = []
    real = reference.run_windows

    def spy(timer, call, make, policy, **kw):
        windows.append(policy.window)
        return real(timer, call, make, policy, **kw)

    monkeypatch.setattr(reference, "run_windows", spy)
    policy = TimingPolicy(warmup_ms=0, window=50, budget_ms=40)
    stick = reference.loop_yardstick(problem, workload, torch.device("cpu"), policy, 1 << 20, 3)
    assert windows and max(windows[1:]) <= 3
    assert stick.per_call_ms > 0 and stick.floor_ms >= 0 and stick.runs >= 1


def test_the_host_is_busy_when_threads_outnumber_cores_time_is_stolen_or_the_yardstick_slows():
    from farm.harness import host_load
    from farm.harness.host_load import HostLoad

    assert not HostLoad(per_core=0.4, steal=0.01, yardstick_ratio=1.2).busy
    assert HostLoad(per_core=5.0, steal=0.0).busy
    assert HostLoad(per_core=0.1, steal=0.2).busy
    assert HostLoad(per_core=0.1, steal=0.0, yardstick_ratio=3.0).busy
    # steal from two readings of /proc/stat's cpu line (user nice system idle iowait irq
    # softirq steal): 30 of 300 ticks stolen
    before = [100, 0, 50, 800, 0, 0, 0, 10]
    after = [200, 0, 100, 920, 0, 0, 0, 40]
    assert host_load._steal(before, after) == pytest.approx(0.1)
    assert host_load._steal([], after) == 0.0
    now = host_load.sample(steal_interval_s=0)
    assert now.per_core >= 0 and 0 <= now.steal <= 1


def test_a_yardstick_is_kept_per_node_only_when_measured_on_a_quiet_host(tmp_path, monkeypatch):
    from farm.harness import baselines, host_load, reference
    from farm.harness.host_load import HostLoad

    scope = baselines.Scope("core-v1", "h", "softmax", "cpu", "cpu", 0, TimingPolicy())
    cache = baselines.BaselineCache(scope, root=tmp_path)
    measured = iter([reference.Yardstick(0.2, 0.5, 5), reference.Yardstick(0.9, 2.0, 5)])
    quiet = [True]
    monkeypatch.setattr(
        host_load, "sample", lambda *a, **k: HostLoad(0.1 if quiet[0] else 9.0, 0.0)
    )

    def get(fresh=False):
        return reference.cached_yardstick(cache, "w", "check", lambda: next(measured), fresh=fresh)

    assert get() == (reference.Yardstick(0.2, 0.5, 5), None)  # measured, kept
    assert get() == (reference.Yardstick(0.2, 0.5, 5),) * 2  # from the node's cache
    quiet[0] = False
    stick, cached = get(fresh=True)  # measured again on a busy host: used, not kept
    assert stick.per_call_ms == 0.9 and cached.per_call_ms == 0.2
    assert get()[0].per_call_ms == 0.2


@pytest.mark.quiet_host
def test_the_candidates_threads_are_not_host_load_and_other_programs_are():
    """The candidate cannot turn its own REJECTED into INCONCLUSIVE by spinning threads: the
    count of runnable threads leaves out this process's descendants (its sandboxes). Programs
    that are not its own, such as another evaluation's worker, are load, whatever their account."""
    import os
    import signal
    import subprocess
    import sys

    from farm.harness import host_load

    spin = [sys.executable, "-c", "while True: pass"]
    quiet = min(host_load._runnable_outside_own_tree() or 0 for _ in range(5))
    children = [subprocess.Popen(spin) for _ in range(3)]  # this process's: the candidate's
    try:
        mine = max(host_load._runnable_outside_own_tree() or 0 for _ in range(20))
    finally:
        for p in children:
            p.kill()
    # a program started by another process (a double fork leaves this process's tree)
    code = (
        "import subprocess, sys; d = subprocess.DEVNULL; "
        "print(subprocess.Popen(sys.argv[1:], stdout=d, stderr=d).pid)"
    )
    launcher = [sys.executable, "-c", code]
    others = [int(subprocess.check_output(launcher + spin, text=True)) for _ in range(3)]
    try:
        theirs = max(host_load._runnable_outside_own_tree() or 0 for _ in range(20))
    finally:
        for pid in others:
            os.kill(pid, signal.SIGKILL)
    assert mine < quiet + 3, (quiet, mine)
    assert theirs >= 3, (quiet, theirs)
