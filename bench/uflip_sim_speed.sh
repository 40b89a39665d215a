#!/usr/bin/env bash
# The full uFLIP suite, state enforcement included, on a simulated 32 GiB
# device: prints the wall-clock time (target: at most 120 s on 2 cores).
#
#   bash bench/uflip_sim_speed.sh [PROFILE]      (default ssd-m)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-ssd-m}
cargo build -q --release
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s.%N)
./target/release/flashlab suite uflip --device "sim:${profile},capacity=32GiB" --results "$out/r" --quiet > "$out/summary.txt"
end=$(date +%s.%N)
runs=$(python3 -c "import json;print(len(json.load(open('$out/r/manifest.json'))['runs']))")
ios=$(python3 -c "import json;print(sum(r['io_count'] for r in json.load(open('$out/r/suite.json'))['runs'].values()))")
grep -A3 '^| Device' "$out/summary.txt"
python3 - "$profile" "$runs" "$ios" "$start" "$end" <<'PY'
import sys
p, runs, ios, a, b = sys.argv[1:]
print(f"full uFLIP suite on sim:{p},capacity=32GiB (state enforcement: random): {runs} runs, {ios} measured IOs, {float(b) - float(a):.1f} s wall-clock (target <= 120 s)")
PY
