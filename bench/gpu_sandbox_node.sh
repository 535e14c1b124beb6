#!/usr/bin/env bash
# The GPU sandbox proof on one GPU node, as an operator would run it from a source tree:
#   bash bench/gpu_sandbox_node.sh OUT_DIR [gpu_sandbox.py options, default --runners bwrap,process]
# Packages the node lacks are carried beside the tree in .node/ (ignored by git):
#   .node/*.deb     bubblewrap (apt-get download bubblewrap), unpacked with dpkg -x
#   .node/wheels/   pytest and its dependencies (pip download --no-deps pytest pluggy iniconfig packaging)
# Writes OUT_DIR/gpu_sandbox.json (runner x submission table), OUT_DIR/isolation.txt (the
# isolation tests run on this node) and prints both summaries.
set -uo pipefail
out=${1:?usage: bash bench/gpu_sandbox_node.sh OUT_DIR [gpu_sandbox.py options]}
shift
[ $# -gt 0 ] || set -- --runners bwrap,process
cd "$(dirname "$0")/.."
mkdir -p "$out"
tools=$(mktemp -d)
for deb in .node/*.deb; do [ -e "$deb" ] && dpkg -x "$deb" "$tools"; done
export PATH="$tools/usr/bin:$PATH"
if [ -d .node/wheels ]; then
  python3 -m pip install -q --no-deps --no-index --target "$tools/py" .node/wheels/*.whl
  export PYTHONPATH="$tools/py"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
sh deploy/sandbox/add-sandbox-user.sh
echo "bwrap: $(command -v bwrap) ($(bwrap --version))"
FARM_ALLOW_UNSANDBOXED=1 timeout 420 python3 bench/gpu_sandbox.py "$@" \
  --json "$out/gpu_sandbox.json" > "$out/gpu_sandbox.txt" 2>&1
echo "gpu_sandbox.py exit $?"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/sandbox/test_isolation.py \
  > "$out/isolation.txt" 2>&1
echo "isolation tests exit $?"
tail -4 "$out/isolation.txt"
tail -24 "$out/gpu_sandbox.txt"
