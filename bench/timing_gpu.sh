#!/usr/bin/env bash
# Timing windows on one GPU node (run from the repository root):
#   bash bench/timing_gpu.sh OUT_DIR
# 1. the GPU timer's unit test: one span per call from the raw Kineto events, outputs captured;
# 2. bench/timing_budget.py --device cuda: honest kernels' timing windows within 1.1 x the budget
#    (and the warm-up within its own), every one PASSED (exit 1 otherwise);
# 3. bench/trust_catalogue.py --device cuda --runtime-only: the timing cheats with the static
#    guard's findings dropped get their runtime verdicts (exit 1 otherwise).
# bubblewrap comes from .node/*.deb when the node lacks it (as for bench/trust_gpu.sh).
set -uo pipefail
out=${1:?usage: bash bench/timing_gpu.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
if ! command -v bwrap >/dev/null; then
  tools=$(mktemp -d)
  for deb in .node/*.deb; do [ -e "$deb" ] && dpkg -x "$deb" "$tools"; done
  export PATH="$tools/usr/bin:$PATH"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
sh deploy/sandbox/add-sandbox-user.sh
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/harness/test_timing.py \
  > "$out/test_timing_cuda.txt" 2>&1
echo "test_timing exit $?"
timeout 300 python3 bench/timing_budget.py --device cuda --out "$out" \
  > "$out/timing_budget_cuda.md" 2>&1
echo "timing_budget.py exit $?"
timeout 180 python3 bench/trust_catalogue.py --device cuda --runtime-only \
  --json "$out/trust_runtime_cuda.json" > "$out/trust_runtime_cuda.md" 2>&1
echo "trust_catalogue.py --runtime-only exit $?"
tail -3 "$out/test_timing_cuda.txt"
cat "$out/timing_budget_cuda.md" "$out/trust_runtime_cuda.md"
