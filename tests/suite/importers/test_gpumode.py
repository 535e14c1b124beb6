from __future__ import annotations

from farm.suite.loader import load_suite
from tests.suite.importers.conftest import SUBMISSIONS, evaluate, import_suite

SUITE = "gm-test"


def test_import_keeps_tests_and_benchmarks_as_workloads(farm_home):
    assert import_suite("gpumode", SUITE) == 0
    suite = load_suite(SUITE)
    assert set(suite.problems) == {"pmpp-scaled_sum", "pmpp-row_norm"}
    problem = suite.problem("pmpp-scaled_sum")
    ids = [w.id for w in problem.workloads]
    assert ids == ["test-0", "test-1", "bench-0"]
    bench = problem.workload("bench-0")
    assert bench.axes == {"rows": 2048, "cols": 2048} and not bench.small
    assert problem.workload("test-1").small
    assert [s.name for s in problem.inputs] == ["data0", "data1"]
    assert (suite.root / "pmpp-scaled_sum" / "source" / "utils.py").is_file()


def test_custom_kernel_passes_and_a_wrong_one_fails(farm_home):
    import_suite("gpumode", SUITE)
    doc = evaluate(SUBMISSIONS / "scaled_sum_custom_kernel.py", SUITE, "pmpp-scaled_sum")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["submission"]["form"] == "gpumode"
    doc = evaluate(SUBMISSIONS / "scaled_sum_wrong.py", SUITE, "pmpp-scaled_sum")
    assert doc["verdict"] == "INCORRECT"


def test_native_kernel_on_single_tensor_data(farm_home, tmp_path):
    import_suite("gpumode", SUITE)
    kernel = tmp_path / "row_norm.py"
    kernel.write_text(
        "import torch\n\n\ndef kernel(x):\n"
        "    return x * torch.rsqrt((x * x).sum(-1, keepdim=True))\n"
    )
    doc = evaluate(kernel, SUITE, "pmpp-row_norm")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_two_problems_keep_their_own_helpers(farm_home):
    import_suite("gpumode", SUITE)
    from farm.harness.reference import load_reference

    suite = load_suite(SUITE)
    refs = [load_reference(suite.problem(n)) for n in ("pmpp-scaled_sum", "pmpp-row_norm")]
    assert refs[0].DATA_IS_TUPLE is True and refs[1].DATA_IS_TUPLE is False
    assert suite.problem("pmpp-row_norm").extra["gpumode_data"] == "tensor"
