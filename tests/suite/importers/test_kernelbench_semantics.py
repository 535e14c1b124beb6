"""KernelBench's own semantics where the farm's defaults differ: a ModelNew sees the source
module's names (KernelBench runs source and candidate in one namespace), and an input the
reference writes in place is judged by the outputs alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from farm.suite.loader import load_suite
from tests.suite.importers.conftest import evaluate

SUITE = "kb-semantics"
HEADER = "import torch\nimport torch.nn as nn\n\n"
SHARED = (
    HEADER
    + """batch_size = 512
features = 256
SCALE = 0.5


def shifted(x):
    return x * SCALE + 1.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(batch_size, features))

    def forward(self, x):
        return shifted(x) + self.bias


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return []
"""
)
# A copy that uses the source's constants and helper without defining them (the shape of the
# level3/33_VanillaRNN and level2/83 copies KernelBench passes).
SHARED_COPY = (
    HEADER
    + """class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(batch_size, features))

    def forward(self, x):
        return shifted(x) + self.bias
"""
)
IN_PLACE = (
    HEADER
    + """rows = 64
cols = 32


class Model(nn.Module):
    def forward(self, x, y):
        x.relu_()  # the reference writes its first input
        return x * 2.0 + y


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
"""
)
IN_PLACE_COPY = IN_PLACE.replace("class Model(", "class ModelNew(")
WRITES_OTHER = (
    HEADER
    + """class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x.relu() * 2.0 + y
        y.zero_()  # an input the reference leaves alone
        return out
"""
)


@pytest.fixture(scope="module")
def suite_home(tmp_path_factory) -> Path:
    from farm.cli import main

    root = tmp_path_factory.mktemp("kbsem")
    src = root / "src" / "level9"
    src.mkdir(parents=True)
    (src / "1_SharedNames.py").write_text(SHARED)
    (src / "2_InPlace.py").write_text(IN_PLACE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FARM_HOME", str(root / "home"))
        assert main(["suite", "import", "kernelbench", str(root / "src"), "--name", SUITE]) == 0
    return root


@pytest.fixture
def home(suite_home, monkeypatch, tmp_path):
    from farm.suite import loader

    monkeypatch.setenv("FARM_HOME", str(suite_home / "home"))
    monkeypatch.setenv("FARM_SANDBOX", "process")
    monkeypatch.setenv("FARM_ALLOW_UNSANDBOXED", "1")
    loader._load_suite_cached.cache_clear()
    return tmp_path


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def test_modelnew_sees_the_source_modules_names_at_the_workloads_values(home):
    problem = load_suite(SUITE).problem("level9-1_SharedNames")
    small = next(w for w in problem.workloads if w.small)
    assert small.scaled_from == "source" and small.axes["batch_size"] < 512
    doc = evaluate(_write(home, "copy.py", SHARED_COPY), SUITE, "level9-1_SharedNames")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_a_submissions_own_definitions_replace_the_source_names(home):
    own = SHARED_COPY.replace("class ModelNew", "def shifted(x):\n    return x\n\n\nclass ModelNew")
    doc = evaluate(_write(home, "own.py", own), SUITE, "level9-1_SharedNames")
    assert doc["verdict"] == "INCORRECT"


def test_the_inputs_the_reference_writes_are_writable(home):
    problem = load_suite(SUITE).problem("level9-2_InPlace")
    assert problem.extra["writable_inputs"] == [0]
    assert "writable_inputs" not in load_suite(SUITE).problem("level9-1_SharedNames").extra


def test_a_faithful_copy_of_an_in_place_reference_passes(home):
    doc = evaluate(_write(home, "inplace.py", IN_PLACE_COPY), SUITE, "level9-2_InPlace")
    assert doc["verdict"] == "PASSED", doc["reasons"]


def test_writing_an_input_the_reference_leaves_alone_stays_rejected(home):
    doc = evaluate(_write(home, "other.py", WRITES_OTHER), SUITE, "level9-2_InPlace")
    assert doc["verdict"] == "INCORRECT"
    codes = [r["code"] for w in doc["workloads"] for r in w.get("errors", [])]
    assert "INPUT_MODIFIED" in codes, doc["workloads"]
