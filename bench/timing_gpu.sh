#!/usr/bin/env bash
# Timing windows on one GPU node (run from the repository root):
#   bash bench/timing_gpu.sh OUT_DIR
# 1. bench/timing_budget.py --device cuda: the GPU timer alone (one span per call from the raw
#    Kineto events, outputs captured), then honest kernels' timing windows within 1.1 x the
#    budget (and the warm-up within its own), every one PASSED (exit 1 otherwise);
# 2. bench/trust_catalogue.py --device cuda --runtime-only: the timing cheats with the static
#    guard's findings dropped get their runtime verdicts (exit 1 otherwise);
# 3. bench/forged_marker_gpu.py --eval: spans from the harness's own markers (launch records and
#    correlation ids, farm.harness.spans) in every window, a kernel named like a marker fails the
#    window with FORGED_MARKER, and the same forgery through the farm is REJECTED ("ALL OK", exit
#    0; exit 1 otherwise).
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
timeout 300 python3 bench/timing_budget.py --device cuda --out "$out" \
  > "$out/timing_budget_cuda.md" 2>&1
echo "timing_budget.py exit $?"
timeout 180 python3 bench/trust_catalogue.py --device cuda --runtime-only \
  --json "$out/trust_runtime_cuda.json" > "$out/trust_runtime_cuda.md" 2>&1
echo "trust_catalogue.py --runtime-only exit $?"
timeout 300 python3 bench/forged_marker_gpu.py --eval > "$out/forged_marker_cuda.md" 2>&1
echo "forged_marker_gpu.py exit $?"
cat "$out/timing_budget_cuda.md" "$out/trust_runtime_cuda.md" "$out/forged_marker_cuda.md"
