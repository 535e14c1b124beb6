from __future__ import annotations

import re

import torch
import yaml

from farm.suite import manifest
from farm.suite.loader import load_suite
from tests.suite.importers.conftest import FIXTURES, SUBMISSIONS, evaluate, import_suite

SUITE = "kb-test"


def test_import_names_levels_and_pins(farm_home, capsys):
    assert import_suite("kernelbench", SUITE) == 0
    suite = load_suite(SUITE)
    assert set(suite.problems) == {
        "level1-23_Softmax",
        "level1-33_BatchNorm",
        "level1-5_ScaleByFloat",
        "level1-2_Projection",
        "level2-7_ConvScaleRelu",
        "level2-9_LinearDropout",
    }
    assert suite.hash == manifest.verify(suite.root)
    assert suite.hash in capsys.readouterr().out


def test_source_shapes_kept_and_small_workload_scaled(imported):
    softmax = load_suite(SUITE).problem("level1-23_Softmax")
    source, small = softmax.workloads
    assert source.axes == {"batch_size": 512, "features": 4096} and not source.small
    assert small.small
    assert small.axes["batch_size"] * small.axes["features"] <= 64 * 1024
    assert softmax.flops == "0" and "flop_counter" in softmax.extra["flops_note"]


def test_flops_from_the_flop_counter(imported):
    projection = load_suite(SUITE).problem("level1-2_Projection")
    source = projection.workload("source")
    assert projection.flop_count(source) == 2 * 256 * 1024 * 512
    assert projection.outputs[0].resolved_shape(source.axes) == (256, 512)
    conv = load_suite(SUITE).problem("level2-7_ConvScaleRelu")
    w = conv.workloads[0]
    assert conv.outputs[0].resolved_shape(w.axes) == (4, 8, 18, 18)


def test_reference_seeds_model_weights_like_the_harness(imported):
    problem = load_suite(SUITE).problem("level1-2_Projection")
    from farm.harness.reference import load_reference

    ref = load_reference(problem)
    small = problem.workload("small")
    args = ref.init_inputs(small.axes)
    torch.manual_seed(ref.WEIGHT_SEED)
    model = torch.nn.Linear(*args)
    gen = torch.Generator().manual_seed(3)
    (x,) = ref.make_inputs(small.axes, torch.float32, torch.device("cpu"), gen)
    assert torch.allclose(ref.reference(x), model(x), atol=1e-6)


def test_modelnew_with_the_same_parameters_passes(imported):
    doc = evaluate(SUBMISSIONS / "projection_modelnew.py", SUITE, "level1-2_Projection")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    assert doc["submission"]["form"] == "kernelbench"
    doc = evaluate(SUBMISSIONS / "conv_modelnew.py", SUITE, "level2-7_ConvScaleRelu")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_modelnew_with_other_weights_fails(imported, tmp_path):
    wrong = tmp_path / "wrong.py"
    text = (SUBMISSIONS / "projection_modelnew.py").read_text()
    wrong.write_text(
        text.replace("super().__init__()", "super().__init__()\n        torch.rand(7)")
    )
    doc = evaluate(wrong, SUITE, "level1-2_Projection")
    assert doc["verdict"] == "INCORRECT"


def test_existing_suite_needs_force(farm_home, capsys):
    assert import_suite("kernelbench", SUITE) == 0
    assert import_suite("kernelbench", SUITE) == 2
    assert "already exists" in capsys.readouterr().err
    assert import_suite("kernelbench", SUITE, "--force") == 0


def test_problem_yaml_records_its_origin(imported):
    root = load_suite(SUITE).root
    data = yaml.safe_load((root / "level1-23_Softmax" / "problem.yaml").read_text())
    assert data["extra"]["imported_from"] == {
        "format": "kernelbench",
        "file": "level1/23_Softmax.py",
    }
    kept = (root / "level1-23_Softmax" / "source.py").read_text()
    assert kept == (FIXTURES / "kernelbench" / "level1" / "23_Softmax.py").read_text()


def test_models_stay_in_training_mode_as_in_kernelbench(imported):
    """KernelBench never calls .eval(): BatchNorm normalises with the batch's statistics, so
    the identity (eval-mode BatchNorm with fresh running stats) is wrong and a batch-statistics
    kernel is right."""
    problem = load_suite(SUITE).problem("level1-33_BatchNorm")
    assert problem.extra["module_mode"] == "train"
    doc = evaluate(SUBMISSIONS / "batchnorm_batch_stats.py", SUITE, "level1-33_BatchNorm")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "batchnorm_identity.py", SUITE, "level1-33_BatchNorm")
    assert doc["verdict"] == "INCORRECT"


def test_python_scalar_inputs_and_module_constants_reach_modelnew(imported):
    """get_inputs()'s Python float is passed as a float; ModelNew's own copy of N follows the
    small workload's value, as the source's does."""
    problem = load_suite(SUITE).problem("level1-5_ScaleByFloat")
    assert problem.extra["scalar_arguments"] == {"1": 3.14}
    assert [s.name for s in problem.inputs] == ["x"]
    small = next(w for w in problem.workloads if w.small)
    assert small.axes["N"] < 512
    doc = evaluate(SUBMISSIONS / "scale_by_float_modelnew.py", SUITE, "level1-5_ScaleByFloat")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_dropout_draws_alike_for_reference_and_modelnew(imported, tmp_path):
    """A Model that draws random numbers is called with torch seeded alike on both sides (a
    deliberate difference from KernelBench, which no dropout kernel can pass): the problem's own
    model passes, leaving the dropout out does not, and the problem says why."""
    problem = load_suite(SUITE).problem("level2-9_LinearDropout")
    assert "seeds torch alike" in problem.extra["stochastic"]
    assert "stochastic" not in load_suite(SUITE).problem("level2-7_ConvScaleRelu").extra
    own = tmp_path / "modelnew.py"  # the problem's own Model, renamed as KernelBench expects
    source = (FIXTURES / "kernelbench" / "level2" / "9_LinearDropout.py").read_text()
    own.write_text(re.sub(r"\bModel\b", "ModelNew", source))
    doc = evaluate(own, SUITE, "level2-9_LinearDropout")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    doc = evaluate(SUBMISSIONS / "linear_dropout_skipped.py", SUITE, "level2-9_LinearDropout")
    assert doc["verdict"] == "INCORRECT"


def test_reference_runs_under_pytorchs_default_numerics(imported):
    """KernelBench runs Model and ModelNew alike under torch's defaults, where cuDNN may use
    TF32 for convolutions: the imported reference does too, inside the harness's TF32-off
    context, so a copy of Model matches it on a GPU as it does in KernelBench."""
    from farm.harness.reference import _deterministic, load_reference

    ref = load_reference(load_suite(SUITE).problem("level2-7_ConvScaleRelu"))
    seen = []
    source_conv = ref._source.Model.forward

    def forward(self, x):
        seen.append(torch.backends.cudnn.allow_tf32)
        return source_conv(self, x)

    small = load_suite(SUITE).problem("level2-7_ConvScaleRelu").workload("source")
    gen = torch.Generator().manual_seed(3)
    (x,) = ref.make_inputs(small.axes, torch.float32, torch.device("cpu"), gen)
    with _deterministic():
        ref._models.clear()
        ref._source.Model.forward = forward
        try:
            ref.reference(x)
        finally:
            ref._source.Model.forward = source_conv
        seen.append(torch.backends.cudnn.allow_tf32)
    assert seen == [True, False]


def test_weights_count_toward_the_memory_limits(imported):
    """A module problem records its weights per workload: the worker's device and host limits
    are sized by inputs + outputs + weights (a 3 GiB MLP with 8 MB inputs must fit)."""
    problem = load_suite(SUITE).problem("level2-9_LinearDropout")
    source = problem.workload("source")
    assert problem.state_bytes(source) == 4 * (32 * 24 + 24)
    assert problem.device_bytes(source) == problem.io_bytes(source) + 4 * (32 * 24 + 24)
    assert problem.host_bytes(source) >= problem.device_bytes(source)


def test_draws_random_looks_at_what_a_call_draws():
    from farm.suite.importers.kernelbench import draws_random

    init_only = "class Model:\n    def __init__(self):\n        self.w = torch.randn(3)\n"
    assert not draws_random(init_only + "    def forward(self, x):\n        return x * self.w\n")
    assert draws_random(init_only + "    def forward(self, x):\n        return F.dropout(x, 0.1)\n")
    assert draws_random(init_only + "    def forward(self, x):\n        return x + torch.rand(3)\n")
    assert draws_random("class Model:\n    def __init__(self):\n        self.d = nn.Dropout(0.2)\n")
    other = "class Other:\n    def forward(self, x):\n        return torch.rand(3)\n"
    assert not draws_random(other)


GOOD = (FIXTURES / "kernelbench" / "level1" / "23_Softmax.py").read_text()
BROKEN = GOOD.replace("def get_inputs():", "def get_inputs():\n    assert False, 'odd shape'")


def test_one_failing_problem_never_aborts_the_import(farm_home, tmp_path, capsys):
    from farm.cli import main

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "1_Good.py").write_text(GOOD)
    (tmp_path / "src" / "2_Broken.py").write_text(BROKEN)
    assert main(["suite", "import", "kernelbench", str(tmp_path / "src"), "--name", "kb-x"]) == 0
    err = capsys.readouterr().err
    assert "skipped 2_Broken.py: AssertionError: odd shape" in err
    assert set(load_suite("kb-x").problems) == {"1_Good"}


def test_reasons_shown_when_nothing_imports(farm_home, tmp_path, capsys):
    from farm.cli import main

    (tmp_path / "src").mkdir()
    for i in (1, 2):
        text = "import transformers_not_here\n" + GOOD
        (tmp_path / "src" / f"{i}_NeedsIt.py").write_text(text)
    assert main(["suite", "import", "kernelbench", str(tmp_path / "src"), "--name", "kb-y"]) == 2
    err = capsys.readouterr().err
    assert err.count("skipped ") == 2
    assert "every problem imports `transformers_not_here`, which is not installed" in err


def test_a_source_that_aborts_in_native_code_costs_only_its_own_problem(
    farm_home, tmp_path, capsys
):
    from farm.cli import main

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "1_Good.py").write_text(GOOD)
    (tmp_path / "src" / "2_Aborts.py").write_text("import os\nos.abort()\n" + GOOD)
    assert main(["suite", "import", "kernelbench", str(tmp_path / "src"), "--name", "kb-z"]) == 0
    err = capsys.readouterr().err
    assert "skipped 2_Aborts.py: the source's code ended the converting process (SIGABRT" in err
    assert set(load_suite("kb-z").problems) == {"1_Good"}


def test_problems_show_says_which_sizes_cpu_and_npu_sim_run(imported, capsys):
    """Softmax's source (512 x 4096, 16 MiB in and out) fits what cpu holds, so cpu runs it
    beside its scaled copy; npu-sim keeps to the copy."""
    import json

    from farm.cli import main

    softmax = load_suite(SUITE).problem("level1-23_Softmax")
    assert softmax.workload("small").scaled_from == "source"
    assert main(["problems", "show", "level1-23_Softmax", "--suite", SUITE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sizes"] == (
        "npu-sim runs only the small workloads (small) outside leaderboard runs; cpu and GPUs "
        "run every workload; small is source scaled down to the npu-sim size rule, and a "
        "verdict on it is that size's, so cpu runs source too"
    )
    assert main(["problems", "show", "level1-23_Softmax", "--suite", SUITE]) == 0
    assert "sizes: npu-sim runs only the small workloads (small)" in capsys.readouterr().out
