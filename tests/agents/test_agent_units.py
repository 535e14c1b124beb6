"""The agent's pieces, one at a time: REST error classes and retries, slot planning and device
pinning, the suite cache, profile mode (with hand-written tool stand-ins), and a job's steps."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from agents import profiling
from agents.client import ServerClient
from agents.config import AgentConfig, load_config, load_slot_settings, time_limits
from agents.devices import Slot, plan_slots
from agents.errors import ClaimLost, ConfigError, PermanentError, RetryableError, SuiteMismatch
from agents.job import JobRunner
from agents.suites import SuiteCache
from farm.hardware.detect import DeviceInfo
from farm.hardware.specs import get_spec
from farm.node_api import Job
from farm.suite.loader import load_suite

RESULTS = Path(__file__).resolve().parents[1] / "fixtures" / "results"

FIXTURES = Path(__file__).parent / "fixtures"


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers POSTs with the next (status, body) of the server's script."""

    def do_POST(self) -> None:
        self.server.calls += 1  # type: ignore[attr-defined]
        status, body = self.server.script.pop(0)  # type: ignore[attr-defined]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def scripted():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    server.script, server.calls = [], 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def client_for(server) -> ServerClient:  # type: ignore[no-untyped-def]
    url = f"http://127.0.0.1:{server.server_address[1]}"
    return ServerClient(url, "fn_test", attempts=3, backoff_s=0.01, timeout_s=5)


def test_5xx_is_retried_then_succeeds(scripted):
    job = {**FakeServer().job, "run": 7, "attempt": 1}
    scripted.script += [(503, {"detail": "busy"}), (502, {}), (200, job)]
    assert client_for(scripted).claim(7) == Job.from_json(job)
    assert scripted.calls == 3


def test_an_answer_in_another_shape_is_refused_naming_the_field(scripted):
    scripted.script += [(200, {"run": 7, "attempt": 1})]
    with pytest.raises(
        PermanentError, match=r"the job of run 7 is not understood: job\.problem: is required"
    ):
        client_for(scripted).claim(7)


def test_5xx_until_the_end_is_retryable(scripted):
    scripted.script += [(500, {})] * 3
    with pytest.raises(RetryableError, match="gave up after 3 attempts"):
        client_for(scripted).claim(7)


def test_409_on_a_run_is_claim_lost_at_once(scripted):
    scripted.script += [(409, {"detail": "run 7 is claimed elsewhere; drop the job"})]
    with pytest.raises(ClaimLost, match="drop the job"):
        client_for(scripted).claim(7)
    assert scripted.calls == 1


def test_400_is_permanent_not_claim_lost(scripted):
    scripted.script += [(400, {"detail": "bad heartbeat"})]
    with pytest.raises(PermanentError) as info:
        client_for(scripted).heartbeat(current_runs=[], devices=None)
    assert not isinstance(info.value, ClaimLost) and info.value.status == 400


def test_connection_refused_is_retryable():
    client = ServerClient("http://127.0.0.1:9", attempts=2, backoff_s=0.01, timeout_s=1)
    with pytest.raises(RetryableError, match="ConnectionError"):
        client.claim(1)


def gpu(index: int, cls: str | None, vendor: str = "nvidia") -> DeviceInfo:
    device = "cuda" if vendor == "nvidia" else "rocm"
    return DeviceInfo(index, vendor, device, "GPU", cls, class_error=None if cls else "PCIe card")


NPU = DeviceInfo(0, "npu-sim", "npu-sim", "NPU", "npu-sim-v1")
CPU = DeviceInfo(0, "cpu", "cpu", "x86_64", None, class_error="development only")


def test_one_slot_per_gpu_and_configurable_npu_slots():
    slots = plan_slots(
        [gpu(0, "nvidia-h100"), gpu(1, "nvidia-h100"), gpu(2, None), NPU, CPU], npu_sim_slots=3
    )
    assert [(s.hardware, s.index) for s in slots] == [
        ("nvidia-h100", 0),
        ("nvidia-h100", 1),
        *[("npu-sim-v1", 0)] * 3,
    ]
    assert [s.number for s in slots] == [0, 1, 2, 3, 4]
    assert {s.queue for s in slots} == {"hw.nvidia-h100", "hw.npu-sim-v1"}
    # besides its class's queue, a slot takes work meant for its node only (audits), and a GPU
    # slot work meant for its GPU (audits of the node's other GPUs' results)
    node_q = "hw.nvidia-h100.node-7"
    assert slots[0].queues(7) == ["hw.nvidia-h100", node_q, f"{node_q}.gpu-0"]
    assert slots[1].queues(7)[-1] == f"{node_q}.gpu-1"
    assert slots[2].queues(7) == ["hw.npu-sim-v1", "hw.npu-sim-v1.node-7"]
    assert slots[0].queues(None) == ["hw.nvidia-h100"]


def test_a_slot_process_reads_what_the_agent_handed_it(monkeypatch):
    slot = plan_slots([NPU], npu_sim_slots=1)[0]
    monkeypatch.delenv("FARM_AGENT_SLOT_JSON", raising=False)
    with pytest.raises(ConfigError, match="FARM_AGENT_SLOT_JSON is not set"):
        load_slot_settings()
    monkeypatch.setenv("FARM_AGENT_SLOT_JSON", json.dumps(asdict(slot)))
    monkeypatch.setenv("FARM_NODE_ID", "7")
    settings = load_slot_settings()
    assert Slot(**settings.slot) == slot and settings.node_id == 7
    monkeypatch.setenv("FARM_NODE_ID", "seven")
    with pytest.raises(ConfigError, match="FARM_NODE_ID='seven': must be an integer"):
        load_slot_settings()


def test_agent_settings_name_a_bad_value(monkeypatch):
    monkeypatch.setenv("FARM_AGENT_LOG_LEVEL", "debug")
    monkeypatch.setenv("FARM_AGENT_WARM_POOL", "0")
    cfg = load_config()
    assert cfg.log_level == "DEBUG" and cfg.warm_pool is False and cfg.journal is None
    monkeypatch.setenv("FARM_AGENT_LOG_LEVEL", "loud")
    with pytest.raises(ConfigError, match="FARM_AGENT_LOG_LEVEL='loud'"):
        load_config()
    monkeypatch.delenv("FARM_AGENT_LOG_LEVEL")
    monkeypatch.setenv("FARM_SANDBOX", "chroot")
    with pytest.raises(ConfigError, match="FARM_SANDBOX='chroot'"):
        load_config()


def test_device_filter_and_pinning():
    slots = plan_slots([gpu(0, "amd-mi300x", "amd"), gpu(1, "amd-mi300x", "amd"), NPU], only="rocm")
    assert [s.index for s in slots] == [0, 1]
    assert slots[1].env()["FARM_AGENT_DEVICE_INDEX"] == "1"
    assert "CUDA_DEVICE_ORDER" not in slots[1].env()
    assert Slot(0, "nvidia-h100", "cuda", 3, "H100").env()["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_mi300_flush_uses_its_256_mib_infinity_cache():
    from farm.harness.targets import Target

    spec = get_spec("amd-mi300x")
    assert Target("rocm", "amd-mi300x", spec, None).llc_bytes == 256 << 20  # type: ignore[arg-type]


def test_time_limits_come_from_the_job_else_the_mode():
    assert time_limits("test", None) == (300.0, 360.0)
    assert time_limits("benchmark", {"soft_s": 10, "hard_s": 20}) == (10.0, 20.0)


class FakeDownloads:
    def __init__(self, data: bytes) -> None:
        self.data, self.urls = data, []

    def download(self, url: str) -> bytes:
        self.urls.append(url)
        return self.data


def suite_tar(name: str, root: Path, edit: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                data = path.read_bytes()
                if edit and path.name == "reference.py":
                    data += b"\n# edited\n"
                info = tarfile.TarInfo(f"{name}/{path.relative_to(root).as_posix()}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_installed_suite_with_the_same_hash_is_used_without_download(tmp_path):
    suite = load_suite("core-v1")
    fake = FakeDownloads(b"")
    assert SuiteCache(tmp_path, fake).ensure("core-v1", suite.hash) == "core-v1"  # type: ignore[arg-type]
    assert fake.urls == []


def test_unknown_hash_is_fetched_verified_and_cached(tmp_path):
    suite = load_suite("core-v1")
    fake = FakeDownloads(suite_tar("core-v1", suite.root))
    cache = SuiteCache(tmp_path, fake)  # type: ignore[arg-type]
    # the server pins a hash the installed copy does not have: the archive must match it
    with pytest.raises(SuiteMismatch, match="hashes to"):
        cache.ensure("core-v1", "0" * 64)
    fake.data = suite_tar("core-v1", suite.root, edit=True)
    with pytest.raises(SuiteMismatch):
        cache.ensure("core-v1", suite.hash + "x")
    # a suite this node does not have: fetched once, verified, then served from the cache
    fake.data = suite_tar("mirror-v1", suite.root)
    path = cache.ensure("mirror-v1", suite.hash)
    assert Path(path) == tmp_path / suite.hash / "mirror-v1"
    assert load_suite(path).hash == suite.hash
    assert cache.ensure("mirror-v1", suite.hash) == path and len(fake.urls) == 3


def test_profile_mode_nvidia_writes_an_ncu_report(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_TOOL_LOG", str(tmp_path / "tools.log"))
    src = tmp_path / "k.py"
    src.write_text("def kernel(a, b):\n    return a + b\n")
    prof = profiling.profile(
        src, tmp_path / "p", problem="vector_add", suite="core-v1", device="cuda", sandbox="bwrap"
    )
    assert list(prof.artifacts) == ["profile.ncu-rep"], prof.note
    argv = json.loads((tmp_path / "tools.log").read_text().splitlines()[0])["argv"]
    assert argv[:2] == ["--clock-control", "none"]
    assert argv[argv.index("--sandbox") + 1] == "bwrap" and "--mode" in argv


def test_profile_mode_amd_summarises_rocprof_kernel_stats(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'bin'}:/usr/bin:/bin")
    src = tmp_path / "k.py"
    src.write_text("def kernel(a, b):\n    return a + b\n")
    prof = profiling.profile(
        src, tmp_path / "p", problem="vector_add", suite="core-v1", device="rocm", sandbox="bwrap"
    )
    summary = json.loads(prof.artifacts["profile.rocprof.json"].read_text())
    assert summary[0] == {
        "name": "_add_kernel",
        "calls": 3,
        "total_ns": 30000.0,
        "average_ns": 10000.0,
        "percent": 75.0,
    }


def test_missing_profiler_is_a_note_not_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    prof = profiling.profile(
        tmp_path / "k.py", tmp_path, problem="x", suite="core-v1", device="cuda", sandbox="bwrap"
    )
    assert prof.artifacts == {} and "ncu" in prof.note


class FakeServer:
    """The agent API as a JobRunner sees it, recording every call."""

    def __init__(self, *, claim_error: Exception | None = None, result_errors: int = 0) -> None:
        self.calls: list[tuple] = []
        self.claim_error, self.result_errors = claim_error, result_errors
        source = "def kernel(a, b):\n    return a + b\n"
        suite = load_suite("core-v1")
        self.job = {
            "run": 5,
            "attempt": 2,
            "submission": 3,
            "problem": "vector_add",
            "hardware": "npu-sim-v1",
            "mode": "test",
            "language": "pytorch",
            "filename": "k.py",
            "suite": {"name": "core-v1", "hash": suite.hash},
            "source": source,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "time_limits": {"soft_s": 30, "hard_s": 40},
            "created_at": "2026-01-01T00:00:00+00:00",
            "sent_at": None,
        }

    def claim(self, run_id, device_index=None):  # type: ignore[no-untyped-def]
        self.calls.append(("claim", run_id))
        if self.claim_error:
            raise self.claim_error
        return Job.from_json(self.job)

    def start(self, run_id, attempt):  # type: ignore[no-untyped-def]
        self.calls.append(("start", run_id, attempt))

    def artifact_url(self, run_id, attempt, name, content_type):  # type: ignore[no-untyped-def]
        self.calls.append(("artifact_url", name))
        return {"url": f"http://s3/{name}", "method": "PUT"}

    def put_artifact(self, target, data):  # type: ignore[no-untyped-def]
        self.calls.append(("put", target["url"], len(data)))

    def result(self, run_id, attempt, document, names):  # type: ignore[no-untyped-def]
        self.calls.append(("result", run_id, attempt, tuple(names)))
        if self.result_errors:
            self.result_errors -= 1
            raise RetryableError("server away")

    def failure(self, run_id, attempt, *, code, detail, retryable, node_fault=None):  # type: ignore[no-untyped-def]
        self.calls.append(("failure", run_id, attempt, code, retryable))
        self.node_fault, self.failure_detail = node_fault, detail


def runner(tmp_path, server, evaluate, selftest=None) -> JobRunner:  # type: ignore[no-untyped-def]
    cfg = AgentConfig(home=tmp_path, node_name="n1", sandbox="bwrap")
    slot = Slot(0, "npu-sim-v1", "npu-sim", 0, "NPU")
    return JobRunner(
        cfg,
        server,
        slot,
        evaluate=evaluate,
        suites=SuiteCache(tmp_path, server),
        selftest=selftest or (lambda *a, **k: []),
    )


def fake_document(source_path, **options):  # type: ignore[no-untyped-def]
    assert Path(source_path).read_text().startswith("def kernel")
    assert options["device"] == "npu-sim" and options["sandbox"] == "bwrap"
    assert options["limits"].wall_seconds == 40
    doc = json.loads((RESULTS / "passed_cpu_vector_add.json").read_text())
    return {**doc, "logs": {"worker_stderr": "log"}, "options": sorted(options)}


def test_a_job_claims_starts_evaluates_uploads_and_reports(tmp_path, monkeypatch):
    monkeypatch.setattr("agents.job.time.sleep", lambda s: None)
    server = FakeServer(result_errors=2)
    out = runner(tmp_path, server, fake_document).run(5)
    assert (out.status, out.attempt, out.verdict) == ("done", 2, "PASSED")
    kinds = [c[0] for c in server.calls]
    assert kinds[:2] == ["claim", "start"] and kinds.count("put") == 1
    # the result is posted again (same attempt) until the server takes it
    assert [c for c in server.calls if c[0] == "result"] == [("result", 5, 2, ("worker.log",))] * 3
    assert not list((tmp_path / "work").glob("*")), "the work dir is removed"


def test_a_lost_claim_drops_the_job_without_evaluating(tmp_path):
    server = FakeServer(claim_error=ClaimLost("run 5 is claimed elsewhere", status=409))
    out = runner(tmp_path, server, lambda *a, **k: pytest.fail("evaluated")).run(5)
    assert out.status == "claim_lost" and server.calls == [("claim", 5)]


def test_a_source_that_does_not_match_its_hash_is_refused(tmp_path):
    server = FakeServer()
    server.job["source"] += "# tampered\n"
    out = runner(tmp_path, server, lambda *a, **k: pytest.fail("evaluated")).run(5)
    assert out.status == "failed" and server.calls[-1] == ("failure", 5, 2, "AGENT_REFUSED", False)


def test_a_farm_failure_releases_the_run_for_another_node(tmp_path):
    from farm.sandbox.base import SandboxUnavailable

    def no_sandbox(*a, **k):  # type: ignore[no-untyped-def]
        raise SandboxUnavailable("bwrap cannot start")

    out = runner(tmp_path, FakeServer(), no_sandbox).run(5)
    assert out.status == "released"


def test_a_duplicate_delivery_on_the_same_node_is_dropped(tmp_path):
    from agents.state import RunLock

    held = RunLock(tmp_path / "state" / "n1" / "locks", 5)
    assert held.acquire()
    server = FakeServer()
    assert runner(tmp_path, server, fake_document).run(5).status == "duplicate"
    assert server.calls == []
    held.release()


def test_a_document_that_is_not_a_result_is_reported_as_a_failure_not_posted(tmp_path):
    server = FakeServer()
    out = runner(tmp_path, server, lambda *a, **k: {"verdict": "PASSED"}).run(5)
    assert out.status == "failed" and "result.schema: is required" in out.detail
    assert [c for c in server.calls if c[0] in ("result", "failure")] == [
        ("failure", 5, 2, "RESULT_INVALID", False)
    ]
