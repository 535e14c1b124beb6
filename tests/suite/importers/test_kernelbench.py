from __future__ import annotations

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


def test_a_slow_problem_is_cut_off():
    import pytest

    from farm.suite.importers import common

    with pytest.raises(common.ConversionTimeout), common.time_limit(0.05):
        while True:
            pass
