"""Device discovery and environment readings, against a fake NVML and recorded amd-smi output."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from farm.hardware import detect
from farm.hardware.detect import discover, parse_amd_smi, read_environment, throttle_reasons
from tests.hardware.fake_nvml import H100_PCIE, H100_SXM, H200, MIB, FakeGpu, FakeNVML

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    """A recorded tool output without our leading '#' comment lines."""
    lines = (FIXTURES / name).read_text().splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines)


def amd_smi_runner(node: str):
    outputs = {"list": fixture(f"amd_smi_list_{node}.txt"),
               "static": fixture(f"amd_smi_static_{node}.txt")}  # fmt: skip

    def run(argv: list[str]) -> str:
        assert argv[0] == "amd-smi" and argv[2] == "--json"
        return outputs[argv[1]]

    return run


def no_amd(argv: list[str]) -> str:
    raise FileNotFoundError("amd-smi")


def test_parse_amd_smi_older_list_layout():
    devices = parse_amd_smi(fixture("amd_smi_list_mi300x.txt"),
                            fixture("amd_smi_static_mi300x.txt"))  # fmt: skip
    assert [d.hardware_class for d in devices] == ["amd-mi300x", "amd-mi300x"]
    first = devices[0]
    assert (first.index, first.vendor, first.device) == (0, "amd", "rocm")
    assert first.name == "AMD Instinct MI300X"
    assert first.memory_bytes == 196592 * MIB
    assert first.pci_bus_id == "0000:0c:00.0"
    assert first.uuid == "a1ff74a1-0000-1000-8045-ef33e1f4c3a0"
    assert devices[1].pci_bus_id == "0000:22:00.0" and devices[1].source == "amd-smi"


def test_parse_amd_smi_gpu_data_layout():
    devices = parse_amd_smi(fixture("amd_smi_list_mi355x.txt"),
                            fixture("amd_smi_static_mi355x.txt"))  # fmt: skip
    assert [d.hardware_class for d in devices] == ["amd-mi355x", "amd-mi355x"]
    assert devices[1].uuid == "27ff75a3-0000-1000-80a0-5c3e4d2b9f02"
    assert devices[1].memory_bytes == 294896 * MIB


def test_a_partitioned_mi300x_gets_no_class():
    devices = parse_amd_smi("[]", fixture("amd_smi_static_mi300x_cpx.txt"))
    assert len(devices) == 2
    for d in devices:
        assert d.hardware_class is None
        assert d.memory_bytes == 24574 * MIB
        assert "different part" in (d.class_error or "")
    assert devices[1].pci_bus_id == "0000:0c:00.1"  # from static when list has no entry


@pytest.mark.parametrize("text", ["not json", '{"x": 1}', '[{"no_gpu_key": 1}]'])
def test_parse_amd_smi_rejects_other_text(text):
    with pytest.raises(ValueError):
        parse_amd_smi(text, text)


@pytest.mark.parametrize(
    ("size", "expected"),
    [({"value": 196592, "unit": "MB"}, 196592 * MIB), ("196592 MB", 196592 * MIB),
     (196592, 196592 * MIB), ({"value": 192, "unit": "GB"}, 192 * 2**30),
     ({"value": "N/A", "unit": "MB"}, None), ("N/A", None), (None, None)],
)  # fmt: skip
def test_amd_smi_memory_sizes(size, expected):
    assert detect._size_bytes(size) == expected


def test_discover_nvidia_through_nvml():
    nvml = FakeNVML([H100_SXM, H100_PCIE])
    devices = discover(nvml=nvml, amd_smi_run=no_amd, use_torch=False)
    assert [d.vendor for d in devices] == ["nvidia", "nvidia", "npu-sim", "cpu"]
    sxm, pcie = devices[0], devices[1]
    assert sxm.hardware_class == "nvidia-h100" and sxm.device == "cuda"
    assert sxm.uuid == "GPU-5c1f-h100-0" and sxm.pci_bus_id == "00000000:18:00.0"
    assert sxm.memory_bytes == 81559 * MIB and sxm.source == "nvml"
    # The PCIe card is listed, but never as the SXM5 class.
    assert pcie.name == "NVIDIA H100 PCIe" and pcie.hardware_class is None
    assert "PCIe" in (pcie.class_error or "")
    assert not [c for c in nvml.calls if "Set" in c or "Reset" in c]


def test_discover_without_gpus_has_npu_sim_and_cpu():
    nvml = FakeNVML([], init_error=True)
    devices = discover(nvml=nvml, amd_smi_run=no_amd, use_torch=False)
    assert [(d.vendor, d.hardware_class) for d in devices] == [
        ("npu-sim", "npu-sim-v1"),
        ("cpu", None),
    ]


def test_discover_amd_through_the_cli():
    devices = discover(nvml=FakeNVML([], init_error=True), amd_smi_run=amd_smi_runner("mi355x"),
                       use_torch=False)  # fmt: skip
    assert [d.hardware_class for d in devices[:2]] == ["amd-mi355x", "amd-mi355x"]


def test_a_failing_amd_smi_gives_no_devices():
    def fail(argv: list[str]) -> str:
        raise subprocess.CalledProcessError(1, argv, stderr="amdgpu driver not loaded")

    devices = discover(nvml=FakeNVML([], init_error=True), amd_smi_run=fail, use_torch=False)
    assert [d.vendor for d in devices] == ["npu-sim", "cpu"]


def fake_amdsmi(*, init_error: bool = False) -> types.ModuleType:
    m = types.ModuleType("amdsmi")
    calls: list[str] = []

    def record(name, fn):
        def call(*args):
            calls.append(name)
            return fn(*args)

        return call

    def init():
        if init_error:
            raise RuntimeError("amdgpu driver not loaded")

    m.calls = calls  # type: ignore[attr-defined]
    m.AmdSmiClkType = types.SimpleNamespace(GFX="gfx", MEM="mem")  # type: ignore[attr-defined]
    m.AmdSmiTemperatureType = types.SimpleNamespace(HOTSPOT="hotspot")  # type: ignore[attr-defined]
    m.AmdSmiTemperatureMetric = types.SimpleNamespace(CURRENT="current")  # type: ignore[attr-defined]
    funcs = {
        "amdsmi_init": init,
        "amdsmi_shut_down": lambda: None,
        "amdsmi_get_processor_handles": lambda: ["h0"],
        "amdsmi_get_gpu_asic_info": lambda h: {"market_name": "AMD Instinct MI325X"},
        "amdsmi_get_gpu_vram_info": lambda h: {"vram_type": "HBM", "vram_size": 262128},
        "amdsmi_get_gpu_device_uuid": lambda h: "5aff74a5-0000-1000-8000-000000000000",
        "amdsmi_get_gpu_device_bdf": lambda h: "0000:05:00.0",
        "amdsmi_get_clock_info": lambda h, kind: (
            {"clk": 2100, "max_clk": 2100} if kind == "gfx" else {"cur_clk": 1300}
        ),
        "amdsmi_get_temp_metric": lambda h, sensor, metric: 47,
        "amdsmi_get_power_info": lambda h: {"current_socket_power": "N/A",
                                            "average_socket_power": 311},
        "amdsmi_get_gpu_driver_info": lambda h: {"driver_version": "6.10.5"},
    }  # fmt: skip
    for name, fn in funcs.items():
        setattr(m, name, record(name, fn))
    return m


def test_discover_amd_through_the_python_package():
    amdsmi = fake_amdsmi()
    devices = discover(nvml=FakeNVML([], init_error=True), amdsmi=amdsmi, amd_smi_run=no_amd,
                       use_torch=False)  # fmt: skip
    mi325 = devices[0]
    assert (mi325.hardware_class, mi325.source) == ("amd-mi325x", "amdsmi")
    assert mi325.memory_bytes == 262128 * MIB and mi325.pci_bus_id == "0000:05:00.0"


def test_amdsmi_that_cannot_initialise_falls_back_to_the_cli():
    devices = discover(nvml=FakeNVML([], init_error=True), amdsmi=fake_amdsmi(init_error=True),
                       amd_smi_run=amd_smi_runner("mi300x"), use_torch=False)  # fmt: skip
    assert devices[0].hardware_class == "amd-mi300x" and devices[0].source == "amd-smi"


def test_read_environment_nvidia():
    gpu = FakeGpu("NVIDIA H200", 143771 * MIB, "GPU-x", "00000000:19:00.0", sm_clock=1755,
                  throttle_mask=0x4 | 0x20)  # fmt: skip
    nvml = FakeNVML([H200, gpu], driver=b"560.35.03", cuda_driver=12040)
    env = read_environment(1, nvml=nvml)
    assert env["sm_clock_mhz"] == 1755 and env["memory_clock_mhz"] == 2619
    assert env["max_sm_clock_mhz"] == 1980 and env["temperature_c"] == 41
    assert env["power_w"] == pytest.approx(123.456) and env["power_limit_w"] == 700.0
    assert env["driver_version"] == "560.35.03" and env["cuda_driver"] == "12.4"
    assert env["throttle_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]
    assert env["python"] and env["device_index"] == 1
    assert not [c for c in nvml.calls if "Set" in c or "Reset" in c]


def test_read_environment_uses_the_older_throttle_call():
    nvml = FakeNVML([FakeGpu("NVIDIA H100 80GB HBM3", 80 * 2**30, "u", "b", throttle_mask=1)],
                    new_event_api=False)  # fmt: skip
    env = read_environment(0, nvml=nvml)
    assert env["throttle_reasons"] == ["gpu_idle"]
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" in nvml.calls


def test_read_environment_without_nvml_reads_versions_only():
    env = read_environment(0, nvml=FakeNVML([], init_error=True))
    assert env["sm_clock_mhz"] is None and env["temperature_c"] is None
    assert env["python"] == f"{sys.version_info.major}.{sys.version_info.minor}." + str(
        sys.version_info.micro
    )


def test_read_environment_amd():
    env = read_environment(0, vendor="amd", amdsmi=fake_amdsmi())
    assert env["sm_clock_mhz"] == 2100 and env["memory_clock_mhz"] == 1300
    assert env["temperature_c"] == 47 and env["power_w"] == 311
    assert env["driver_version"] == "6.10.5"


def test_throttle_reason_names():
    assert throttle_reasons(0) == []
    assert throttle_reasons(0x8 | 0x40) == ["hw_slowdown", "hw_thermal_slowdown"]
    assert throttle_reasons(0x1000) == ["0x1000"]
