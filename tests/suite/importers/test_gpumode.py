from __future__ import annotations

from farm.suite.loader import load_suite
from tests.suite.importers.conftest import SUBMISSIONS, evaluate

SUITE = "gm-test"


def test_import_keeps_tests_and_benchmarks_as_workloads(imported):
    """The fixture suite, imported once for the session (conftest.py: `import_suite` exits 0)."""
    suite = load_suite(SUITE)
    assert set(suite.problems) == {
        "pmpp-scaled_sum",
        "pmpp-row_norm",
        "pmpp-prefix_sum",
        "lowp-fp8_block_mm",
        "lowp-routed_mix",
        "lowp-fp4_scaled_mm",
        "pair-row_loss_py",
    }
    problem = suite.problem("pmpp-scaled_sum")
    ids = [w.id for w in problem.workloads]
    assert ids == ["test-0", "test-1", "bench-0"]
    bench = problem.workload("bench-0")
    assert bench.axes == {"rows": 2048, "cols": 2048} and not bench.small
    assert problem.workload("test-1").small
    assert [s.name for s in problem.inputs] == ["data0", "data1"]
    assert (suite.root / "pmpp-scaled_sum" / "source" / "utils.py").is_file()


def test_custom_kernel_passes_and_a_wrong_one_fails(imported):
    doc = evaluate(SUBMISSIONS / "scaled_sum_custom_kernel.py", SUITE, "pmpp-scaled_sum")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["submission"]["form"] == "gpumode"
    doc = evaluate(SUBMISSIONS / "scaled_sum_wrong.py", SUITE, "pmpp-scaled_sum")
    assert doc["verdict"] == "INCORRECT"


def test_native_kernel_on_single_tensor_data(imported, tmp_path):
    kernel = tmp_path / "row_norm.py"
    kernel.write_text(
        "import torch\n\n\ndef kernel(x):\n"
        "    return x * torch.rsqrt((x * x).sum(-1, keepdim=True))\n"
    )
    doc = evaluate(kernel, SUITE, "pmpp-row_norm")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_two_problems_keep_their_own_helpers(imported):
    from farm.harness.reference import load_reference

    suite = load_suite(SUITE)
    refs = [load_reference(suite.problem(n)) for n in ("pmpp-scaled_sum", "pmpp-row_norm")]
    assert refs[0].DATA == "tuple" and refs[1].DATA == "tensor"
    assert suite.problem("pmpp-row_norm").extra["gpumode_data"] == "tensor"


def test_cuda_only_source_with_varying_parameters_keeps_every_entry(imported):
    """A reference written for CUDA imports on a CPU host; `case` (on some entries only) and
    `cond: 0` become variants, never dropped or rejected."""
    problem = load_suite(SUITE).problem("pmpp-prefix_sum")
    assert [w.id for w in problem.workloads] == ["test-0", "test-1", "test-2", "bench-0"]
    assert [w.axes["variant"] for w in problem.workloads] == [1, 2, 3, 1]
    from farm.harness.reference import load_reference

    assert load_reference(problem).VARIANTS == [
        {"case": "normal", "cond": 0},
        {"case": "positive", "cond": 0},
        {"cond": 2},
    ]
    assert "check_implementation" in problem.extra["checker"]


def test_the_sources_checker_judges_and_odd_sizes_run_everywhere(imported):
    """GPU MODE's sqrt(n)-scaled check accepts a float32 scan (a flat float32 tolerance on a
    float64 reference would not); a kernel assuming size % 128 == 0 fails the odd sizes, which
    every device runs (small workloads are a subset, not a partition)."""
    import torch

    from farm.harness.targets import Target

    doc = evaluate(SUBMISSIONS / "prefix_sum_float32.py", SUITE, "pmpp-prefix_sum")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "prefix_sum_blocks_of_128.py", SUITE, "pmpp-prefix_sum")
    assert doc["verdict"] == "INCORRECT"
    assert "own checker" in str(doc["reasons"])
    problem = load_suite(SUITE).problem("pmpp-prefix_sum")
    gpu = Target("cuda", "nvidia-h100", None, torch.device("cuda"))
    assert [w.id for w in gpu.select(problem, None).run] == [w.id for w in problem.workloads]


def test_a_destination_that_already_holds_the_answer_is_still_found_writable():
    """torch.empty may hand back memory that holds the previous call's answer: the call then
    leaves the destination's values unchanged; its version counter still moves."""
    from types import ModuleType

    import torch

    from farm.suite.importers.gpumode_shapes import written_inputs

    source = ModuleType("histogram_like")

    def generate_input(size, seed):
        data = torch.arange(size, dtype=torch.int64) % 4
        return data, torch.bincount(data, minlength=4)  # the "empty" output, answer inside

    def ref_kernel(data):
        values, out = data
        out[...] = torch.bincount(values, minlength=4)
        return out

    source.generate_input, source.ref_kernel = generate_input, ref_kernel
    assert written_inputs(source, {"size": 16}) == [1]
