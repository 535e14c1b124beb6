#!/usr/bin/env bash
# Trust round 2 on one GPU node (run from the repository root):
#   bash bench/trust_gpu.sh OUT_DIR
# 1. bench/calibrate_tolerances.py --device cuda: honest in-dtype chains and low-precision cheats
#    against fp64 on the GPU's own math; exit 1 if an honest one fails or a cheat passes the
#    configured tolerances (torch only).
# 2. bench/trust_catalogue.py --device cuda: the round-2 cheats and honest kernels (bf16 chains,
#    torch.compile) through the whole farm in the bwrap sandbox; exit 1 on any unexpected verdict.
# 3. bench/trust_catalogue.py --device cuda --classes trust-3: the third round's cheats (the
#    worker's input maker, Session, torch.library overrides, freed blocks, marker-named kernels,
#    amortising, work between calls) and the honest kernels that guard their defences (autotune,
#    CUDA graphs, streams, workspace): the catch table and the false-positive table.
# bubblewrap comes from .node/*.deb when the node lacks it (as for bench/gpu_sandbox_node.sh); a
# node without it runs the process sandbox: FARM_SANDBOX=process FARM_ALLOW_UNSANDBOXED=1.
set -uo pipefail
out=${1:?usage: bash bench/trust_gpu.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
if ! command -v bwrap >/dev/null; then
  tools=$(mktemp -d)
  for deb in .node/*.deb; do [ -e "$deb" ] && dpkg -x "$deb" "$tools"; done
  export PATH="$tools/usr/bin:$PATH"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
command -v bwrap >/dev/null && sh deploy/sandbox/add-sandbox-user.sh
timeout 150 python3 bench/calibrate_tolerances.py --device cuda \
  --json "$out/tolerances_cuda.json" > "$out/tolerances_cuda.md" 2>&1
echo "calibrate_tolerances.py exit $?"
FARM_LIMIT_COMPILE_S=120 timeout 420 python3 bench/trust_catalogue.py --device cuda \
  --json "$out/trust_catalogue_cuda.json" > "$out/trust_catalogue_cuda.md" 2>&1
echo "trust_catalogue.py exit $?"
FARM_LIMIT_COMPILE_S=120 timeout 900 python3 bench/trust_catalogue.py --device cuda \
  --classes trust-3 --json "$out/trust3_cuda.json" > "$out/trust3_cuda.md" 2>&1
echo "trust_catalogue.py --classes trust-3 exit $?"
grep -E "calibrated|PASSES|FAILS" "$out/tolerances_cuda.md"
cat "$out/trust_catalogue_cuda.md" "$out/trust3_cuda.md"
