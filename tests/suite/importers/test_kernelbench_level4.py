"""KernelBench level 4: Hugging Face models built from their configs, nothing downloaded; a clear
line when transformers is not installed."""

from __future__ import annotations

import importlib.util
import json

import pytest
import torch

from farm.suite.importers import hf_offline
from farm.suite.loader import load_suite

HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
MODEL = "tiny-org/tiny-gpt2"
# a level-4 file as KernelBench writes them (level4/7_gpt2_bs32_seq256.py), on a tiny model
SOURCE = f"""
import torch
from transformers import AutoModelForCausalLM, AutoConfig

class Model(torch.nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        self.config = config
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, config=self.config)

    def forward(self, x):
        return self.model(x).logits

model_name = "{MODEL}"
config = AutoConfig.from_pretrained(model_name)
vocab_size = config.vocab_size
sequence_length = 8
batch_size = 2

def get_inputs():
    inputs = torch.randint(0, vocab_size, (batch_size, sequence_length))
    return [inputs]

def get_init_inputs():
    return [model_name, config]
"""


def test_sources_that_build_hugging_face_models_are_recognised():
    assert hf_offline.uses_transformers(SOURCE)
    assert hf_offline.uses_transformers("import transformers as tf\n")
    assert not hf_offline.uses_transformers("import torch  # no transformers here\n")


def import_level4(tmp_path, name: str) -> tuple[int, str]:
    from farm.cli import main

    (tmp_path / "src" / "level4").mkdir(parents=True)
    (tmp_path / "src" / "level4" / "7_tiny_gpt2.py").write_text(SOURCE)
    return main(["suite", "import", "kernelbench", str(tmp_path / "src"), "--name", name]), name


@pytest.mark.skipif(HAS_TRANSFORMERS, reason="transformers is installed")
def test_without_transformers_each_file_says_what_to_install(farm_home, tmp_path, capsys):
    assert import_level4(tmp_path, "kb-l4")[0] == 2
    err = capsys.readouterr().err
    assert (
        "skipped level4/7_tiny_gpt2.py: No module named 'transformers': KernelBench level 4 "
        "builds Hugging Face models; install the farm with its kernelbench-l4 extra "
        "(pip install 'kernel-farm[kernelbench-l4]'), then import again"
    ) in err
    assert "every problem imports `transformers`, which is not installed" in err


def cache_config(hf_home) -> None:
    """The model's config in a Hugging Face cache, as `hf download MODEL config.json` leaves it."""
    from transformers import GPT2Config

    repo = hf_home / "hub" / ("models--" + MODEL.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=64).save_pretrained(
        repo / "snapshots" / ("0" * 40)
    )


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers is not installed")
def test_a_level4_model_is_built_from_its_cached_config_and_kept(
    farm_home, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    cache_config(tmp_path / "hf")
    assert import_level4(tmp_path, "kb-l4")[0] == 0
    problem = load_suite("kb-l4").problem("level4-7_tiny_gpt2")
    kept = json.loads((problem.directory / hf_offline.CONFIGS_FILE).read_text())
    assert kept[MODEL]["n_embd"] == 16 and "hf_models" in problem.extra
    monkeypatch.setenv("HF_HOME", str(tmp_path / "no-cache"))  # evaluating needs no cache
    path = problem.reference_path
    spec = importlib.util.spec_from_file_location("l4_reference", path)
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    axes = {"batch_size": 2, "sequence_length": 8}
    (x,) = reference.make_inputs(axes, torch.float32, "cpu", torch.Generator().manual_seed(1))
    logits = reference.reference(x)
    assert logits.shape == (2, 8, 64) and torch.equal(logits, reference.reference(x))


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers is not installed")
def test_a_config_missing_from_the_cache_is_named_not_downloaded(
    farm_home, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty"))
    assert import_level4(tmp_path, "kb-l4")[0] == 2
    assert (
        f"the config of {MODEL} is not in the local Hugging Face cache, and the import downloads "
        f"nothing: fetch it once (`hf download {MODEL} config.json`)"
    ) in capsys.readouterr().err
