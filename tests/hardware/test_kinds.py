"""Device kinds: one record per kind, one backend per GPU vendor, hardware classes only from the
spec table, and no other module deciding what a kind is."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from farm.errors import UnknownNameError
from farm.hardware import kinds
from farm.hardware.detect import discover
from farm.hardware.specs import all_specs

REPO = Path(__file__).resolve().parents[2]
GPU_BACKEND_NAMES = (
    "VENDOR", "TOOLKIT_ENV", "TOOLKIT_ATTR", "DRIVER_LIBRARY", "DRIVER_LIBRARY_ENV",
    "CONTAINER_DRIVER", "devices", "environment", "device_nodes",
)  # fmt: skip


def test_every_kind_has_one_record_and_names_are_unique():
    names = [k.name for k in kinds.all_kinds()]
    assert names == list(kinds.KIND_NAMES) == ["cuda", "rocm", "npu-sim", "cpu"]
    assert len({k.vendor for k in kinds.all_kinds()}) == len(names)  # one kind per vendor
    for k in kinds.all_kinds():
        assert kinds.get_kind(k.name) is k
        assert kinds.kind_of_vendor(k.vendor) is k


def test_unknown_kind_and_vendor_say_what_exists():
    with pytest.raises(UnknownNameError, match="device 'cdua'") as err:
        kinds.get_kind("cdua")
    assert "cuda" in str(err.value.hint)
    with pytest.raises(UnknownNameError):
        kinds.kind_of_vendor("intel")
    assert kinds.gpu_vendor("tpu") is None and not kinds.is_gpu("tpu")


def test_every_spec_row_runs_on_a_kind_of_its_vendor():
    for spec in all_specs():
        kind = kinds.get_kind(spec.device)
        assert kind.vendor == spec.vendor, spec.name
        assert kinds.kind_of_class(spec.name) is kind


def test_classes_come_from_the_spec_table_alone():
    by_kind = [c for k in kinds.all_kinds() for c in k.classes()]
    assert sorted(by_kind) == sorted(s.name for s in all_specs())
    assert kinds.CPU.classes() == []  # development only
    assert kinds.NPU_SIM.classes() == ["npu-sim-v1"]
    assert kinds.CUDA.classes()[:2] == ["nvidia-a100", "nvidia-h100"]  # table order


def test_visibility_variables_per_vendor():
    assert kinds.CUDA.visibility == ("CUDA_VISIBLE_DEVICES",)
    # HIP numbers what ROCr exposes: the harness narrows with HIP alone
    assert kinds.ROCM.visibility == ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
    assert kinds.ROCM.pin_variable == "HIP_VISIBLE_DEVICES"
    for k in kinds.all_kinds():
        assert bool(k.visibility) == k.gpu, k.name
        assert all(v.endswith("_VISIBLE_DEVICES") for v in k.visibility)
    assert dict(kinds.CUDA.index_env) == {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}


@pytest.mark.parametrize("kind", kinds.all_kinds(), ids=lambda k: k.name)
def test_worker_is_pinned_with_its_kinds_variable_only(kind, tmp_path, monkeypatch):
    from farm.harness.channel import worker_env

    for k in kinds.all_kinds():
        for var in k.visibility:
            monkeypatch.delenv(var, raising=False)
    spec = SimpleNamespace(device=kind.name, device_index=3, workdir=tmp_path)
    env = worker_env(spec)  # type: ignore[arg-type]
    pinned = {v: env[v] for v in env if v.endswith("_VISIBLE_DEVICES")}
    assert pinned == ({kind.pin_variable: "3"} if kind.gpu else {})


def test_gpu_kinds_share_torchs_cuda_device_and_differ_in_build():
    assert [k.name for k in kinds.gpu_kinds()] == ["cuda", "rocm"]
    assert {k.torch_device for k in kinds.gpu_kinds()} == {"cuda"}
    assert [k.torch_backend for k in kinds.gpu_kinds()] == ["cuda", "hip"]
    assert {k.torch_device for k in kinds.all_kinds() if not k.gpu} == {"cpu"}
    assert kinds.on_gpu(SimpleNamespace(type="cuda")) and not kinds.on_gpu(
        SimpleNamespace(type="cpu")
    )


def test_timers_profilers_and_images_are_ones_that_exist():
    from agents.profiling import PROFILERS

    assert [k.timer for k in kinds.all_kinds()] == [
        "gpu-events", "gpu-events", "npu-sim-ledger", "wall-clock",
    ]  # fmt: skip
    assert [k.name for k in kinds.all_kinds() if k.simulated] == ["npu-sim"]
    for k in kinds.all_kinds():
        assert k.profiler is None or k.profiler in PROFILERS, k.name
        assert (REPO / "deploy" / "sandbox" / f"Dockerfile.{k.image}").is_file(), k.name
    assert [k.profiler for k in kinds.gpu_kinds()] == ["ncu", "rocprof"]


def test_every_kind_with_a_backend_imports_and_gpu_backends_are_complete():
    for k in kinds.all_kinds():
        if k.backend is not None:
            assert k.backend_module() is importlib.import_module(k.backend)
    for k in kinds.gpu_kinds():
        backend = kinds.gpu_backend(k.vendor)
        missing = [n for n in GPU_BACKEND_NAMES if not hasattr(backend, n)]
        assert not missing, f"{k.backend} lacks {missing}"
        assert k.vendor == backend.VENDOR
    assert kinds.NPU_SIM.backend == "farm.hardware.npu_sim"
    with pytest.raises(ValueError):
        kinds.gpu_backend("npu-sim")


def test_sandbox_device_nodes_come_from_the_vendor_backend():
    from farm.sandbox.limits import DeviceAssignment

    nvidia = DeviceAssignment(vendor="nvidia", index=2).device_nodes()
    assert [str(n) for n in nvidia] == [
        "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia2",
    ]  # fmt: skip
    amd = DeviceAssignment(vendor="amd", index=1).device_nodes()
    assert [str(n) for n in amd] == ["/dev/kfd", "/dev/dri/renderD129"]
    other = DeviceAssignment(vendor="amd", index=1, render_node=Path("/dev/dri/renderD140"))
    assert str(other.device_nodes()[-1]) == "/dev/dri/renderD140"
    with pytest.raises(ValueError, match="one of"):
        DeviceAssignment(vendor="npu-sim", index=0)


def test_discovered_devices_are_of_known_kinds():
    found = discover(nvml=SimpleNamespace(), amd_smi_run=_no_tool, use_torch=False)
    assert [d.device for d in found] == ["npu-sim", "cpu"]  # the builtin, non-GPU kinds
    assert [d.hardware_class for d in found] == ["npu-sim-v1", None]


def _no_tool(argv: list[str]) -> str:
    raise FileNotFoundError(argv[0])


# --- no module outside the records decides what a kind is ----------------------------------

OWNERS = {  # the records, the backends and the spec table
    "farm/hardware/kinds.py", "farm/hardware/nvidia.py", "farm/hardware/amd.py",
    "farm/hardware/specs.py",
}  # fmt: skip
# Files that still derive kinds themselves, edited elsewhere at the time of writing; switch them
# to farm.hardware.kinds and remove them here (the test fails when a count goes down, too).
PENDING = {
    "farm/harness/worker.py": 4,
    "farm/harness/supervisor.py": 2,
    "farm/harness/timing.py": 1,
    "leaderboard/problems/farm_bridge.py": 2,
    "leaderboard/problems/services.py": 2,
}
KIND_WORDS = {"rocm", "npu-sim", *(s.name for s in all_specs())}
KIND_PARTS = ("_VISIBLE_DEVICES", "/dev/nvidia", "/dev/kfd", "/dev/dri/")


def _kind_constants(path: Path) -> int:
    """String constants (docstrings aside) that name a kind, a class, a visibility variable or a
    device node."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and (node.value in KIND_WORDS or any(p in node.value for p in KIND_PARTS))
    )


def test_no_module_but_the_records_names_kinds_classes_or_device_nodes():
    found = {}
    for top in ("farm", "agents", "leaderboard"):
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in OWNERS or rel.startswith("farm/hardware/npu_sim/") or "/migrations/" in rel:
                continue
            count = _kind_constants(path)
            if count:
                found[rel] = count
    assert found == PENDING
