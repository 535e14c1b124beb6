"""The two judges of bench/verdict_agreement.py and the candidates they judge.

Candidates are written as files next to the imported suite (FARM_HOME/agreement/): an honest one
(the source's own computation) and wrong ones (a 1 % error; for KernelBench models holding
BatchNorm or Dropout, the same model put in eval mode, which the farm judged PASSED before it
kept KernelBench's training mode).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import yaml

from farm.suite.importers import device_neutral
from farm.suite.importers.loading import load_module
from farm.suite.loader import load_suite

KB_TRIALS, KB_SEED, KB_TOL = 5, 42, 1e-4  # KernelBench's run_and_check_correctness defaults
FI_TOL = 1e-2  # flashinfer-bench's default atol and rtol


def problems_of(suite_name: str) -> list[str]:
    return sorted(load_suite(suite_name).problems)


def judge_problem(fmt: str, suite_name: str, name: str, device: str, home: Path) -> list[dict]:
    """Both judges' verdicts on every candidate of one problem (one row each)."""
    problem = load_suite(suite_name).problems[name]
    rows: list[dict] = []
    workloads = _workloads(problem, device, fmt)
    if workloads:
        for label, path in _candidates(fmt, problem, home / "agreement" / name).items():
            source = _source_verdict(fmt, problem, path, workloads, device)
            farm, why = _farm_verdict(path, suite_name, name, device, [w.id for w in workloads])
            rows.append(
                {
                    "suite": fmt,
                    "problem": name,
                    "candidate": label,
                    "source": source,
                    "farm": farm,
                    "agree": (source == "PASSED") == (farm == "PASSED"),
                    **({"farm_reason": why} if farm != "PASSED" and why else {}),
                }
            )
    return rows


def _workloads(problem: Any, device: str, fmt: str) -> list[Any]:
    """The workloads both judges use: small ones on cpu; on cuda the source's own shapes."""
    if device == "cpu":
        return [w for w in problem.workloads if w.small]
    if fmt == "kernelbench":
        return [w for w in problem.workloads if w.id == "source"]
    if fmt == "gpumode":
        return [w for w in problem.workloads if w.id.startswith("test-")]
    return list(problem.workloads)


def _farm_verdict(
    path: Path, suite: str, problem: str, device: str, ids: list[str]
) -> tuple[str, str]:
    """The farm's verdict and, when it is not PASSED, the first reason that says why."""
    from farm.errors import FarmError
    from farm.harness.supervisor import evaluate
    from farm.result import Result

    try:
        doc = evaluate(
            path, suite=suite, problem=problem, device=device, mode="test", workloads=ids
        ).to_json()
    except FarmError as exc:
        return f"farm error: {exc}", ""
    result = Result.from_json(doc)
    reasons = [*result.reasons, *(e for w in result.workloads for e in w.errors)]
    why = next((f"{r.code}: {r.detail}" for r in reasons if r.detail), "")
    # a traceback's last lines say what failed: keep them when the reason is long
    return result.verdict.value, why if len(why) <= 400 else f"{why[:120]} ... {why[-280:]}"


# --- candidates -------------------------------------------------------------------------------
def _candidates(fmt: str, problem: Any, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    texts = {
        "kernelbench": _kb_candidates,
        "gpumode": _gm_candidates,
        "flashinfer": _fi_candidates,
    }[fmt](problem)
    paths = {}
    for label, text in texts.items():
        paths[label] = folder / f"{label}.py"
        paths[label].write_text(text)
    return paths


def _kb_candidates(problem: Any) -> dict[str, str]:
    source = (problem.directory / "source.py").read_text()
    found = {
        "honest": source + "\n\nModelNew = Model\n",
        "off_by_1pct": source + _KB_SCALED,
    }
    if any(word in source for word in ("BatchNorm", "Dropout", "dropout")):
        found["eval_mode"] = source + _KB_EVAL
    return found


_KB_SCALED = """

class ModelNew(Model):
    def forward(self, *args):
        return super().forward(*args) * 1.01
"""
_KB_EVAL = """

class ModelNew(Model):
    def forward(self, *args):
        self.eval()
        return super().forward(*args)
"""


def _gm_candidates(problem: Any) -> dict[str, str]:
    folder = problem.directory / "source"
    parts = [(folder / n).read_text() for n in ("utils.py", "task.py") if (folder / n).exists()]
    body = "\n".join([*parts, (folder / "reference.py").read_text()])
    body = "\n".join(
        line
        for line in body.splitlines()
        if not line.startswith(("from utils import", "from task import", "import utils"))
    )
    return {
        "honest": body + "\n\ncustom_kernel = ref_kernel\n",
        "off_by_1pct": body + _GM_SCALED,
    }


_GM_SCALED = """

def _off(t):
    return t + 1 if not t.is_floating_point() else t * 1.01 + 1e-2


def custom_kernel(data):
    out = ref_kernel(data)
    return tuple(_off(t) for t in out) if isinstance(out, (tuple, list)) else _off(out)
"""


def _fi_candidates(problem: Any) -> dict[str, str]:
    home = problem.directory.parent.parent.parent
    folder = home / "solutions" / problem.directory.parent.name / problem.name
    found = {}
    for path in sorted(folder.glob("*.py")):
        text = path.read_text()
        found[path.stem] = text
        found[path.stem + "_off_by_5pct"] = text + _FI_SCALED
    return found


_FI_SCALED = """

_honest_kernel = kernel


def kernel(*inputs):
    out = _honest_kernel(*inputs)
    return tuple(o * 1.05 for o in out) if isinstance(out, tuple) else out * 1.05
"""


# --- the sources' own rules -------------------------------------------------------------------
def _source_verdict(fmt: str, problem: Any, path: Path, workloads: list, device: str) -> str:
    judge = {"kernelbench": _kb_source, "gpumode": _gm_source, "flashinfer": _fi_source}[fmt]
    try:
        with device_neutral.on(device):
            for w in workloads:
                verdict = judge(problem, path, w, device)
                if verdict != "PASSED":
                    return verdict
    except Exception as exc:  # a candidate that raises fails under every source's rule
        return f"RUNTIME_ERROR ({type(exc).__name__})"
    return "PASSED"


def _kb_source(problem: Any, path: Path, w: Any, device: str) -> str:
    ref, new = load_module(problem.directory / "source.py"), load_module(path)
    for module in (ref, new):
        for name, value in w.axes.items():
            if hasattr(module, name):
                setattr(module, name, value)
    torch.manual_seed(KB_SEED)
    init = ref.get_init_inputs()
    torch.manual_seed(KB_SEED)
    model = ref.Model(*init).to(device)
    torch.manual_seed(KB_SEED)
    model_new = new.ModelNew(*init).to(device)
    torch.manual_seed(KB_SEED)
    seeds = [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(KB_TRIALS)]
    with torch.no_grad():
        for seed in seeds:
            torch.manual_seed(seed)
            inputs = [
                x.to(device=device, dtype=torch.float32) if isinstance(x, torch.Tensor) else x
                for x in ref.get_inputs()
            ]
            torch.manual_seed(seed)
            out, out_new = model(*inputs), model_new(*inputs)
            if out.shape != out_new.shape:
                return "INCORRECT"
            if not torch.allclose(out, out_new, atol=KB_TOL, rtol=KB_TOL):
                return "INCORRECT"
    return "PASSED"


def _gm_source(problem: Any, path: Path, w: Any, device: str) -> str:
    folder = problem.directory / "source"
    tests = yaml.safe_load((folder / "task.yml").read_text()).get("tests") or []
    reference = load_module(folder / "reference.py", search=[folder])
    submission = load_module(path)
    index = int(w.id.split("-")[1]) if w.id.startswith("test-") else 0
    spec = dict(tests[index])
    if not w.id.startswith("test-"):  # a scaled small copy: the first test's other parameters
        spec |= {k: v for k, v in w.axes.items() if k in spec}
    data = reference.generate_input(**spec)
    output = submission.custom_kernel(_clone(data))
    verdict = reference.check_implementation(data, output)
    good = verdict[0] if isinstance(verdict, tuple) else (verdict is True or verdict in ("", None))
    return "PASSED" if good else "INCORRECT"


def _clone(data: Any) -> Any:
    if isinstance(data, tuple | list):
        return type(data)(_clone(x) for x in data)
    return data.clone() if isinstance(data, torch.Tensor) else data


def _fi_source(problem: Any, path: Path, w: Any, device: str) -> str:
    definition = json.loads((problem.directory / "definition.json").read_text())
    namespace: dict[str, Any] = {}
    exec(compile(definition["reference"], "<definition>", "exec"), namespace)
    from farm.harness.reference import load_reference

    gen = torch.Generator(device=device).manual_seed(0)
    inputs = load_reference(problem).make_inputs(w.axes, w.dtype, torch.device(device), gen)
    expected = namespace["run"](*inputs)
    got = load_module(path).kernel(*inputs)
    if isinstance(expected, dict):  # normalize_outputs: a dict of outputs, in definition order
        expected = tuple(expected[name] for name in definition["outputs"])
    expected = expected if isinstance(expected, tuple | list) else (expected,)
    got = got if isinstance(got, tuple | list) else (got,)
    for x, y in zip(got, expected):
        err = (x.float() - y.float()).abs()
        if bool(((err > FI_TOL) & (err / (y.float().abs() + 1e-8) > FI_TOL)).any()):
            return "INCORRECT"
    return "PASSED"
