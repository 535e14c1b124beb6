"""Malformed problems are refused with the file and the field named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from farm.errors import SuiteError
from farm.suite.loader import load_problem

GOOD = {
    "name": "scale",
    "category": "elementwise",
    "description": "Scale a vector.",
    "signature": "scale(x) -> 2 * x",
    "inputs": [{"name": "x", "shape": ["N"]}],
    "outputs": [{"name": "out", "shape": ["N"]}],
    "dtypes": ["float32"],
    "tolerance": {"float32": {"atol": 1e-6, "rtol": 1e-6}},
    "flops": {"expr": "N", "unit": "vector"},
    "bytes": "io",
    "workloads": [
        {"id": "a", "axes": {"N": 1024}},
        {"id": "b", "axes": {"N": 2048}},
        {"id": "c", "axes": {"N": 4096}},
    ],
}
REFERENCE = "def reference(x):\n    return 2 * x\n"


def write_problem(root: Path, data: dict, name: str = "scale") -> Path:
    directory = root / "suite-x" / name
    directory.mkdir(parents=True)
    (directory / "problem.yaml").write_text(yaml.safe_dump(data))
    (directory / "reference.py").write_text(REFERENCE)
    return directory


def load_error(tmp_path: Path, data: dict) -> str:
    directory = write_problem(tmp_path, data)
    with pytest.raises(SuiteError) as info:
        load_problem(directory, label="suite-x/")
    return info.value.message


def with_changes(**changes) -> dict:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(yaml.safe_dump(GOOD))  # a deep copy
    data.update(changes)
    return data


def test_good_problem_loads(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path, GOOD))
    assert problem.name == "scale" and len(problem.workloads) == 3


def test_non_positive_axis_names_workload_and_axis(tmp_path: Path) -> None:
    data = with_changes()
    data["workloads"][2]["axes"]["N"] = 0
    assert load_error(tmp_path, data) == (
        "suite-x/scale/problem.yaml: workloads[2].axes.N must be a positive int"
    )


def test_float_axis_is_refused(tmp_path: Path) -> None:
    data = with_changes()
    data["workloads"][1]["axes"]["N"] = 1.5
    assert load_error(tmp_path, data) == (
        "suite-x/scale/problem.yaml: workloads[1].axes.N must be a positive int"
    )


def test_missing_axis_is_named(tmp_path: Path) -> None:
    data = with_changes()
    data["workloads"][0]["axes"] = {"M": 4}
    assert load_error(tmp_path, data) == (
        "suite-x/scale/problem.yaml: workloads[0].axes.N is required (used by a tensor shape)"
    )


def test_unknown_category(tmp_path: Path) -> None:
    message = load_error(tmp_path, with_changes(category="sorting"))
    assert message.startswith("suite-x/scale/problem.yaml: category must be one of elementwise")
    assert message.endswith("(got 'sorting')")


def test_name_must_match_directory(tmp_path: Path) -> None:
    assert load_error(tmp_path, with_changes(name="scale2")) == (
        "suite-x/scale/problem.yaml: name 'scale2' must equal the directory name 'scale'"
    )


def test_missing_tolerance_for_a_dtype(tmp_path: Path) -> None:
    data = with_changes(dtypes=["float32", "bfloat16"])
    assert load_error(tmp_path, data) == (
        "suite-x/scale/problem.yaml: tolerance.bfloat16 is required "
        "(a workload or output uses this dtype)"
    )


def test_formula_with_code_is_refused(tmp_path: Path) -> None:
    data = with_changes(flops={"expr": "__import__('os').getcwd()", "unit": "vector"})
    message = load_error(tmp_path, data)
    assert message.startswith("suite-x/scale/problem.yaml: ")
    assert "workloads[0] cannot evaluate a formula" in message


def test_workload_dtype_outside_dtypes(tmp_path: Path) -> None:
    data = with_changes()
    data["workloads"][1]["dtype"] = "float16"
    assert load_error(tmp_path, data) == (
        "suite-x/scale/problem.yaml: workloads[1].dtype 'float16' is not in the problem's dtypes"
    )


def test_missing_required_key(tmp_path: Path) -> None:
    data = with_changes()
    del data["signature"]
    assert load_error(tmp_path, data) == "suite-x/scale/problem.yaml: signature is required"


def test_invalid_yaml(tmp_path: Path) -> None:
    directory = write_problem(tmp_path, GOOD)
    (directory / "problem.yaml").write_text("name: [unclosed\n")
    with pytest.raises(SuiteError, match=r"^suite-x/scale/problem.yaml: not valid YAML"):
        load_problem(directory, label="suite-x/")


def test_missing_reference(tmp_path: Path) -> None:
    directory = write_problem(tmp_path, GOOD)
    (directory / "reference.py").unlink()
    with pytest.raises(SuiteError, match=r"^suite-x/scale/reference.py: missing$"):
        load_problem(directory, label="suite-x/")


def test_tolerance_keys_and_invariants_are_checked(tmp_path: Path) -> None:
    bad_key = with_changes(tolerance={"float32": {"atol": 1e-6, "rtol": 1e-6, "ntol": 1}})
    assert load_error(tmp_path / "a", bad_key) == (
        "suite-x/scale/problem.yaml: tolerance.float32.ntol unknown key (atol, rtol, norm_rtol)"
    )
    no_output = with_changes(
        invariants=[{"kind": "sum", "output": "y", "value": 1, "tolerance": {"float32": 0}}]
    )
    assert load_error(tmp_path / "b", no_output) == (
        "suite-x/scale/problem.yaml: invariants[0].output 'y' is not an output (out)"
    )
    good = with_changes(
        tolerance={"float32": {"atol": 1e-6, "rtol": 1e-6, "norm_rtol": 1e-6}},
        invariants=[{"kind": "bounds", "output": "out", "low": 0, "tolerance": {"float32": 0}}],
    )
    problem = load_problem(write_problem(tmp_path / "c", good))
    assert problem.tolerance["float32"].norm_rtol == 1e-6
    assert problem.invariants[0].low == 0.0 and problem.invariants[0].high == float("inf")


def test_scaled_from_must_name_a_listed_workload(tmp_path: Path) -> None:
    workloads = [*GOOD["workloads"], {"id": "s", "axes": {"N": 8}, "small": True}]
    workloads[-1]["scaled_from"] = "z"
    message = load_error(tmp_path, with_changes(workloads=workloads))
    assert "workloads[3].scaled_from" in message and "must name a workload listed here" in message


def size_note(tmp_path: Path, workloads: list[dict], **extra) -> str | None:  # type: ignore[no-untyped-def]
    directory = write_problem(tmp_path, with_changes(workloads=workloads, extra=extra))
    return load_problem(directory, label="suite-x/").size_note()


def test_size_note_says_which_sizes_cpu_leaves_out_and_why(tmp_path: Path) -> None:
    small = {"id": "small", "axes": {"N": 8}, "small": True, "scaled_from": "a"}
    (tmp_path / "1").mkdir()
    assert size_note(tmp_path / "1", [GOOD["workloads"][0], small]) == (
        "npu-sim runs only the small workloads (small) outside leaderboard runs; cpu and GPUs "
        "run every workload; small is a scaled down to the npu-sim size rule, and a verdict on "
        "it is that size's, so cpu runs a too"
    )
    (tmp_path / "2").mkdir()
    huge = {"id": "a", "axes": {"N": 1 << 27}}  # 1 GiB of input and output
    assert size_note(tmp_path / "2", [huge, small, GOOD["workloads"][1]]) == (
        "cpu and npu-sim run only the small workloads (small); the others (a, b) run on GPUs "
        "and in npu-sim leaderboard runs; small is a scaled down to the npu-sim size rule, and "
        "a verdict on it is that size's, not a's (cpu does not run a: 1024 MiB at float32 "
        "width, over the 256 MiB it holds)"
    )
    (tmp_path / "3").mkdir()
    why = "no workload fits the npu-sim size rule"
    assert size_note(tmp_path / "3", GOOD["workloads"][:1], not_small=why) == (
        f"cpu and npu-sim run none of its workloads ({why}); they run on GPUs and in npu-sim "
        "leaderboard runs"
    )
    (tmp_path / "4").mkdir()
    assert size_note(tmp_path / "4", [{**small, "scaled_from": None}]) is None
