"""An RL-style scoring loop: a batch of 64 generated kernels is submitted to a farm in one
request, results are read as they finish, and each kernel gets a reward.

    FARM_URL=http://127.0.0.1:8000 FARM_TOKEN=fu_... python3 examples/rl_loop.py --hw npu-sim-v1

Reward (per run whose outcome is about the kernel, `Run.reward_usable`): -1 when the farm
REJECTED it (it games the evaluation), -0.5 for a compile or runtime error or timeout, 0 when
INCORRECT, and for PASSED 0.1 + the SOL score clamped to [0, 1] (0.5 means as fast as the
baseline, 1 means at the speed-of-light bound). Test-mode runs (no timing) that pass get 0.1.
The farm's own outcomes (UNSUPPORTED, INCONCLUSIVE, NODE_FAULT, a run that failed) and a first
place held for an operator are no sample at all, neither 0 nor a penalty: they are left out and
listed with what to do (`Run.advice`; docs/outcomes.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # rl_kernels, and farm when not installed

from rl_kernels.generate import candidates  # noqa: E402

from farm.client import FarmClient, Run, SubmitRequest, WaitTimeout  # noqa: E402

PENALTY = {"REJECTED": -1.0, "COMPILE_ERROR": -0.5, "RUNTIME_ERROR": -0.5, "TIMEOUT": -0.5}


def reward(run: Run) -> float | None:
    """The reward of one finished run (see the module docstring); None when its outcome says
    nothing about the kernel."""
    if not run.reward_usable:
        return None
    verdict = run.verdict or ""
    if verdict != "PASSED":
        return PENALTY.get(verdict, 0.0)
    score = run.sol_score if run.sol_score is not None else 0.0
    return 0.1 + min(max(score, 0.0), 1.0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hw", default="npu-sim-v1", help="hardware class to score on")
    p.add_argument("--mode", default="benchmark", help="test | benchmark (default)")
    p.add_argument("--count", type=int, default=64, help="kernels per batch (default 64)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the batch")
    args = p.parse_args()

    client = FarmClient()
    batch = candidates(args.count)
    started = time.monotonic()
    submissions = client.submit_batch(
        [SubmitRequest(c.source, c.problem, [args.hw], mode=args.mode, label=c.name) for c in batch]
    )
    by_run = {s.runs[0].id: c for s, c in zip(submissions, batch)}
    print(f"submitted {len(by_run)} kernels to {client.url} in {time.monotonic() - started:.1f} s")
    rewards: list[float] = []
    agree, left_out = 0, 0
    try:
        for run in client.as_completed(by_run, timeout_s=args.timeout):
            cand = by_run[run.id]
            verdict = run.verdict or run.failure_code or run.state
            r = reward(run)
            if r is None:
                left_out += 1
                print(f"{cand.name:32} {verdict:14} no sample: {run.advice}")
                continue
            rewards.append(r)
            agree += (run.verdict == "PASSED") == cand.correct
            score = "-" if run.sol_score is None else f"{run.sol_score:.3f}"
            print(f"{cand.name:32} {verdict:14} SOL {score:>6}  reward {r:+.3f}")
    except WaitTimeout as exc:
        print(f"stopped waiting: {exc.message}", file=sys.stderr)
    wall = time.monotonic() - started
    if rewards:
        mean = sum(rewards) / len(rewards)
        print(
            f"{len(rewards)} scored in {wall:.1f} s; mean reward {mean:+.3f}; "
            f"verdict matched the generator's label for {agree}/{len(rewards)}"
        )
    if left_out:
        print(f"{left_out} left out: the farm's own outcomes, no reward either way")
    return 0 if len(rewards) + left_out == len(by_run) else 4


if __name__ == "__main__":
    sys.exit(main())
