"""Device kind records on a real GPU node: discovery through the vendor backend, readings, the
target and the worker's environment, then one evaluation on the GPU kind found.

    PYTHONPATH=. python3 bench/device_kinds_gpu.py --out DIR [--sandbox process]

Writes DIR/device_kinds.json and exits non-zero when a check fails. `--sandbox process` needs
FARM_ALLOW_UNSANDBOXED=1; the default (auto) picks the node's best sandbox.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sandbox", default="auto")
    args = ap.parse_args()

    from farm.hardware import detect, kinds
    from farm.harness.channel import WorkerSpec, worker_env
    from farm.harness.targets import resolve_target

    checks: dict[str, Any] = {}
    gpus = [d for d in detect.discover() if kinds.is_gpu(d.device)]
    checks["devices"] = [d.to_dict() for d in gpus]
    if not gpus:
        print("no GPU found", file=sys.stderr)
        return 1
    first = gpus[0]
    kind = kinds.get_kind(first.device)
    checks["kind"] = kind.name
    checks["environment"] = detect.read_environment(first.index, vendor=kind.vendor)
    backend = kind.backend_module()
    read = getattr(backend, "utilisation", None)
    checks["utilisation_pct"] = read(first.index) if read else None
    target = resolve_target(kind.name, None, first.index)
    checks["target"] = {"hardware": target.hardware, "torch_device": str(target.torch_device)}
    spec = WorkerSpec(kind.name, [], Path("/tmp/farm-kinds"), device_index=first.index)
    env = worker_env(spec)
    checks["pinned"] = {v: env.get(v) for v in kind.visibility}
    checks["toolkit"] = {k: v for k, v in env.items() if k.endswith(("_HOME", "_PATH"))}

    from farm.harness.supervisor import evaluate
    from farm.result import Verdict

    source = REPO / "tests" / "solutions" / "correct" / "softmax__triton.py"
    doc = evaluate(
        source, problem="softmax", suite="core-v1", device=kind.name, mode="test",
        device_index=first.index, sandbox=args.sandbox,
    ).to_json()  # fmt: skip
    checks["eval"] = {"verdict": doc.get("verdict"), "hardware": doc.get("hardware")}

    failed = [
        name
        for name, ok in {
            "class": first.hardware_class is not None,
            "target": target.hardware == first.hardware_class,
            "pinned": checks["pinned"].get(kind.pin_variable) == str(first.index),
            "eval": checks["eval"]["verdict"] == Verdict.PASSED.value,
        }.items()
        if not ok
    ]
    checks["failed"] = failed
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "device_kinds.json").write_text(json.dumps(checks, indent=2, default=str))
    print(json.dumps({"kind": kind.name, "hardware": target.hardware, "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
