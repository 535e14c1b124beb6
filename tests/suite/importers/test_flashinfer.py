from __future__ import annotations

import json

from farm.cli import main
from farm.suite.importers import flashinfer
from farm.suite.loader import load_suite
from tests.suite.importers.conftest import FIXTURES, evaluate, import_suite

SUITE = "fi-test"


def test_import_definitions_and_workloads(farm_home, capsys):
    assert import_suite("flashinfer", SUITE) == 0
    err = capsys.readouterr().err
    assert "safetensors inputs are not portable" in err
    assert "breaks the constraint rows % 8 == 0" in err
    suite = load_suite(SUITE)
    gemm = suite.problem("gemm_n64_k32")
    assert gemm.flops == "4096*M"
    big = gemm.workloads[0]
    assert big.axes == {"N": 64, "K": 32, "M": 4096} and not big.small
    assert any(w.small for w in gemm.workloads)
    rms = suite.problem("rms_scale_h256")
    assert [w.axes["tokens"] for w in rms.workloads] == [16, 4096]


def test_solution_becomes_a_passing_submission(imported):
    solution = imported / "solutions" / SUITE / "rms_scale_h256" / "rms_scale_torch_dps.py"
    doc = evaluate(solution, SUITE, "rms_scale_h256")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_flashinfer_bench_semantics_kept(imported, tmp_path):
    """traces/ records are not workloads; new-schema op_type, constraints (a breaking workload is
    named), ints drawn from [-1024, 1024); a return-style "Python" solution with a 0.4 % error
    passes flashinfer-bench's atol = rtol = 1e-2 rule, and fails when the error is 5 %."""
    import torch

    from farm.harness.reference import load_reference

    suite = load_suite(SUITE)
    assert [w.axes["tokens"] for w in suite.problem("rms_scale_h256").workloads] == [16, 4096]
    shift = suite.problem("shift_rows_h64")
    assert [w.axes["rows"] for w in shift.workloads] == [16]
    assert shift.category == "elementwise" and shift.extra["constraints"] == ["rows % 8 == 0"]
    gen = torch.Generator().manual_seed(0)
    _, ints = load_reference(shift).make_inputs({"rows": 4096, "hidden": 64}, "float32", "cpu", gen)
    assert int(ints.min()) < -512 and 512 <= int(ints.max()) < 1024
    solution = imported / "solutions" / SUITE / "shift_rows_h64" / "shift_rows_returning.py"
    doc = evaluate(solution, SUITE, "shift_rows_h64")
    assert doc["verdict"] == "PASSED", doc["reasons"]
    wrong = tmp_path / "wrong.py"
    wrong.write_text(solution.read_text().replace("(1 + 4e-3)", "(1 + 5e-2)"))
    assert evaluate(wrong, SUITE, "shift_rows_h64")["verdict"] == "INCORRECT"


def test_core_suite_round_trips_through_flashinfer(farm_home, tmp_path):
    out = tmp_path / "dataset"
    assert main(["suite", "import", "flashinfer", str(FIXTURES / "flashinfer"), "--name", "x"]) == 0
    assert main(["export", "suite", "core-v1", "-o", str(out)]) == 0
    definition = json.loads((out / "definitions" / "softmax.json").read_text())
    assert definition["inputs"]["x"]["shape"] == ["M", "N"]
    assert main(["suite", "import", "flashinfer", str(out), "--name", "core-fi"]) == 0
    core, back = load_suite("core-v1"), load_suite("core-fi")
    assert set(back.problems) == set(core.problems)
    for name in ("softmax", "matmul"):
        assert [w.axes for w in back.problem(name).workloads][:1] == [
            {k: v for k, v in core.problem(name).workloads[0].axes.items()}
        ]


def test_export_traces_of_a_result_document(tmp_path):
    doc = {
        "schema": "farm.result/1",
        "suite": {"name": "core-v1", "hash": "h"},
        "problem": "softmax",
        "hardware": "npu-sim-v1",
        "mode": "benchmark",
        "verdict": "REJECTED",
        "reasons": [{"code": "BELOW_FLOOR", "detail": "faster than physics"}],
        "score": {"sol_score": None},
        "workloads": [
            {
                "id": "a",
                "status": "PASSED",
                "time_ms": 2.0,
                "sol_ms": 1.0,
                "baseline_ms": {"eager": 4.0},
                "sol_score": 0.7,
                "axes": {"M": 2},
                "correctness": {"max_abs_err": 0.0, "max_rel_err": 0.0},
            },
            {
                "id": "b",
                "status": "REJECTED",
                "time_ms": 0.001,
                "sol_ms": 1.0,
                "baseline_ms": {"eager": 4.0},
                "sol_score": None,
            },
            {
                "id": "c",
                "status": "SKIPPED",
                "time_ms": None,
                "sol_ms": None,
                "baseline_ms": {},
                "sol_score": None,
            },
        ],
        "environment": {"before": {"torch": "2.13.0", "triton": None}},
        "guard": {"findings": []},
    }
    traces = flashinfer.traces_from_result(doc, solution="mine")
    assert [t["evaluation"]["status"] for t in traces] == ["PASSED", "RUNTIME_ERROR"]
    perf = traces[0]["evaluation"]["performance"]
    assert perf == {"latency_ms": 2.0, "reference_latency_ms": 4.0, "speedup_factor": 2.0}
    assert "REJECTED" in traces[1]["evaluation"]["log"]
    assert traces[0]["evaluation"]["environment"]["libs"] == {"torch": "2.13.0"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "t.jsonl"
    assert main(["export", "traces", str(path), "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 2
