"""The runtime guard inside the worker: integrity of timing functions, threads and processes
left behind, exact output types, Triton launch observation, stream counting."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import subprocess
import sys
import textwrap
import threading
import time
import types
from collections import Counter

import pytest
import torch

from farm.guard import runtime
from farm.guard.runtime import (
    LEFT_THREAD_CPU_NS,
    IntegrityMonitor,
    LaunchObserver,
    StreamCounter,
    check_launches,
    check_output_type,
    thread_cpu_ns,
)


def codes(findings):
    return [f.code for f in findings]


def test_untouched_process_verifies_clean():
    monitor = IntegrityMonitor()
    monitor.snapshot()
    assert monitor.verify() == []


def test_replaced_timer_is_reported_and_restoring_clears_it(monkeypatch):
    monitor = IntegrityMonitor()
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    (finding,) = monitor.verify()
    assert finding.code == "TIMER_REPLACED" and "time.perf_counter" in finding.detail
    monkeypatch.undo()
    assert monitor.verify() == []


def test_replaced_event_method_is_reported(monkeypatch):
    monitor = IntegrityMonitor()
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, other: 0.001)
    assert "TIMER_REPLACED" in codes(monitor.verify())


def _harness_module() -> types.ModuleType:
    module = types.ModuleType("fake_harness_timing")
    exec(
        textwrap.dedent(
            """
            def median(values):
                return sorted(values)[len(values) // 2]

            class Timer:
                def run(self):
                    return 1.0
            """
        ),
        module.__dict__,
    )
    return module


def test_protect_module_sees_code_swaps_method_patches_and_module_swaps(monkeypatch):
    module = _harness_module()
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monitor = IntegrityMonitor(defaults=False)
    monitor.protect_module(module)
    assert monitor.verify() == []

    module.median.__code__ = (lambda values: 0.0).__code__  # same object, other code
    module.Timer.run = lambda self: 0.0
    sys.modules[module.__name__] = types.ModuleType(module.__name__)
    details = " ".join(f.detail for f in monitor.verify())
    assert "median was given other code" in details
    assert "Timer.run was replaced" in details
    assert "was swapped" in details


def test_deleted_protected_function_is_reported():
    owner = types.SimpleNamespace(fn=lambda: 1)
    monitor = IntegrityMonitor(defaults=False)
    monitor.protect(owner, "fn", label="owner.fn")
    del owner.fn
    assert codes(monitor.verify()) == ["TIMER_REPLACED"]


def test_thread_running_submission_code_after_a_call():
    """A thread whose stack holds code outside the libraries (here: this test file, as a
    submission's would) is work outside the timer the moment the call returns."""
    monitor = IntegrityMonitor(defaults=False)
    stop = threading.Event()
    with monitor.watch_call():
        threading.Thread(target=lambda: stop.wait(), daemon=True).start()
    assert "THREAD_LEFT_RUNNING" in codes(monitor.verify())
    stop.set()
    assert monitor.verify() == []  # reported once


def test_idle_library_thread_is_only_flagged():
    """A library pool left idle (Inductor's compile workers) is not evidence of work."""
    monitor = IntegrityMonitor(defaults=False)
    stop = threading.Event()
    with monitor.watch_call():
        threading.Thread(target=stop.wait, daemon=True).start()
    try:
        found = codes(monitor.verify())
        assert "NATIVE_THREADS_ADDED" in found and "THREAD_LEFT_RUNNING" not in found
    finally:
        stop.set()


def test_library_thread_working_after_the_call_is_rejected():
    """Deferred work through library code only: the CPU the thread spends after the call
    returned is the evidence."""
    monitor = IntegrityMonitor(defaults=False)
    work = functools.partial(hashlib.pbkdf2_hmac, "sha256", b"k", b"s", 400_000)
    with monitor.watch_call():
        thread = threading.Thread(target=work, daemon=True)
        thread.start()
    tid = thread.native_id
    start = thread_cpu_ns().get(tid, 0)
    while thread.is_alive() and thread_cpu_ns().get(tid, 0) - start < 3 * LEFT_THREAD_CPU_NS:
        pass
    try:
        assert "THREAD_LEFT_RUNNING" in codes(monitor.verify())
    finally:
        thread.join()


def test_thread_that_ends_after_the_call_is_rejected():
    monitor = IntegrityMonitor(defaults=False)
    go = threading.Event()
    with monitor.watch_call():
        thread = threading.Thread(target=go.wait, daemon=True)
        thread.start()
    go.set()
    thread.join()
    assert "THREAD_LEFT_RUNNING" in codes(monitor.verify())


def test_joined_thread_is_fine():
    monitor = IntegrityMonitor(defaults=False)
    with monitor.watch_call():
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
    assert "THREAD_LEFT_RUNNING" not in codes(monitor.verify())


def test_child_process_left_running_after_a_call():
    monitor = IntegrityMonitor(defaults=False)
    with monitor.watch_call():
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert "PROCESS_LEFT_RUNNING" in codes(monitor.verify())
    finally:
        child.kill()
        child.wait()


def test_output_types_must_be_exactly_tensor():
    class Lazy(torch.Tensor):
        pass

    plain = torch.zeros(3)
    assert check_output_type(plain) == []
    assert check_output_type((plain, plain)) == []
    assert codes(check_output_type(plain.as_subclass(Lazy))) == ["OUTPUT_NOT_TENSOR"]
    assert codes(check_output_type([plain, plain.numpy()])) == ["OUTPUT_NOT_TENSOR"]
    assert torch.nn.Parameter(plain).__class__ is not torch.Tensor
    assert codes(check_output_type(torch.nn.Parameter(plain))) == ["OUTPUT_NOT_TENSOR"]


TRITON_SUBMISSION = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask),
             mask=mask)


def kernel(a, b):
    out = torch.empty_like(a)
    add_kernel[(triton.cdiv(a.numel(), 64),)](a, b, out, a.numel(), BLOCK=64)
    return out


def decoy(a, b):
    return torch.add(a, b)
"""


@pytest.fixture
def triton_submission(tmp_path, monkeypatch):
    """A submission module with one @triton.jit kernel, built for the Triton interpreter."""
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    path = tmp_path / "triton_submission.py"
    path.write_text(TRITON_SUBMISSION)
    spec = importlib.util.spec_from_file_location("triton_submission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_observer_counts_triton_launches(triton_submission):
    a, b = torch.randn(100), torch.randn(100)
    with LaunchObserver() as launches:
        out = triton_submission.kernel(a, b)
    assert torch.equal(out, a + b)
    assert launches.triton == Counter({"triton_submission.add_kernel": 1})
    assert check_launches(triton_submission, launches) == []


def test_decoy_kernel_is_reported(triton_submission):
    a, b = torch.randn(100), torch.randn(100)
    with LaunchObserver() as launches:
        triton_submission.decoy(a, b)
    assert launches.total == 0
    assert codes(check_launches(triton_submission, launches)) == ["DECOY_KERNEL"]


def test_launch_observer_restores_triton_after_exit(triton_submission):
    from triton.runtime.jit import JITFunction

    before = JITFunction.__dict__["run"]
    with LaunchObserver():
        assert JITFunction.__dict__["run"] is not before
    assert JITFunction.__dict__["run"] is before


def test_module_without_triton_kernels_needs_no_launch():
    module = types.ModuleType("plain")
    module.kernel = lambda a, b: a + b
    with LaunchObserver() as launches:
        module.kernel(torch.ones(2), torch.ones(2))
    assert check_launches(module, launches) == []


def test_extension_functions_count_their_calls():
    counter: Counter[str] = Counter()
    built = types.ModuleType("add_ext")
    built.add_cuda = lambda a, b: a + b
    loader = runtime._counting_loader(lambda *a, **k: built, counter)
    ext = loader("add_ext", cpp_sources="")
    ext.add_cuda(1, 2)
    ext.add_cuda(3, 4)
    assert counter == Counter({"add_ext.add_cuda": 2})


def test_stream_counter_counts_attempts_and_restores():
    original = torch.cuda.Stream.__dict__["__new__"]
    with StreamCounter() as streams, contextlib.suppress(RuntimeError, AssertionError):
        torch.cuda.Stream()  # without CUDA it raises; the attempt still counts
    assert streams.created == 1
    assert codes(streams.findings()) == ["EXTRA_STREAMS"]
    assert torch.cuda.Stream.__dict__["__new__"] is original


def test_a_census_frees_its_callers_tensors_when_they_return():
    """The thread census (taken by watch_call and verify) must not keep its callers' frames,
    and their device tensors, alive in a reference cycle: a 6 GB checked output would outlive
    its check until the cyclic collector ran."""
    import gc
    import weakref

    import torch

    from farm.guard.runtime import ThreadCensus

    def checked_call() -> weakref.ref:
        data = torch.ones(4)
        ThreadCensus.take()
        return weakref.ref(data)

    gc.disable()
    try:
        assert checked_call()() is None
    finally:
        gc.enable()
