"""Hugging Face models (KernelBench level 4) built from their configs, with nothing downloaded.

A level-4 source reads a config (`AutoConfig.from_pretrained(name)`) and loads pretrained weights
(`AutoModelForCausalLM.from_pretrained(name, config=config)`). Under `install`, a model's
`from_pretrained` builds it from the config alone (`from_config`: weights drawn from torch's
generator, which the weight seed fixes) and leaves it in eval mode, as `from_pretrained` does;
the kernels to write are the same, only the weights' values differ from the checkpoint's.

The import reads each config from the local Hugging Face cache (the converting process runs with
HF_HUB_OFFLINE=1) and the problem keeps it (CONFIGS_FILE), so evaluating it needs no cache and no
network: this file is copied into the problem folder, and reference.py installs it with the kept
configs before it runs source.py. It imports only transformers, never the farm.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

CONFIGS_FILE = "hf_configs.json"  # model name -> config.to_dict(), beside source.py
EXTRA = "kernelbench-l4"  # the farm's optional dependency that brings transformers
_IMPORTS = re.compile(r"^\s*(from|import)\s+transformers\b", re.MULTILINE)


def uses_transformers(text: str) -> bool:
    """Whether a source file imports transformers."""
    return bool(_IMPORTS.search(text))


def install(configs: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Patch transformers so that nothing is downloaded; `configs` (name -> config dict) answer
    AutoConfig.from_pretrained when given, else the local cache does (OSError naming the
    model when it is not there). Returns, filled as the source reads them, every config read."""
    import transformers
    from transformers.models.auto.auto_factory import _BaseAutoModelClass

    read: dict[str, dict[str, Any]] = {}
    cached = transformers.AutoConfig.from_pretrained

    def config_from_pretrained(name: Any, *args: Any, **kwargs: Any) -> Any:
        config = _stored(configs, str(name)) if configs is not None else _cached(cached, name)
        read[str(name)] = config.to_dict()
        return config

    def model_from_pretrained(cls: Any, name: Any, *args: Any, config: Any = None, **kw: Any):
        config = config if config is not None else config_from_pretrained(name)
        built = cls.from_config(config) if hasattr(cls, "from_config") else cls(config)
        return built.eval()  # as from_pretrained leaves it

    transformers.AutoConfig.from_pretrained = staticmethod(config_from_pretrained)
    _BaseAutoModelClass.from_pretrained = classmethod(model_from_pretrained)
    transformers.PreTrainedModel.from_pretrained = classmethod(model_from_pretrained)
    return read


def install_from(folder: Path) -> None:
    """`install` with the configs a problem keeps in `folder`."""
    install(json.loads((folder / CONFIGS_FILE).read_text()))


def configs_text(read: dict[str, dict[str, Any]]) -> str:
    return json.dumps(read, indent=1, sort_keys=True, default=str) + "\n"


def _stored(configs: dict[str, dict[str, Any]], name: str) -> Any:
    import transformers

    if name not in configs:
        raise OSError(f"no config of {name} is kept with this problem ({CONFIGS_FILE})")
    values = dict(configs[name])
    return transformers.AutoConfig.for_model(values.pop("model_type"), **values)


def _cached(from_pretrained: Any, name: Any) -> Any:
    try:
        return from_pretrained(name)
    except OSError:
        raise OSError(
            f"the config of {name} is not in the local Hugging Face cache, and the import "
            f"downloads nothing: fetch it once (`hf download {name} config.json`), then import "
            "again"
        ) from None
