#!/usr/bin/env bash
# The simulator's results are bit-identical between two revisions: builds
# crates/sim/examples/sim_digest.rs (taken from the working tree, so the base
# revision need not have it) against BASE (default: main) and against the
# working tree, runs both, and diffs their lines (one per profile/FTL/cache
# case: hashes of every completion time and of the statistics). Exit 0 when
# identical. For speed work: a faster simulator must not move a nanosecond.
#
#   bash bench/sim_identical.sh [BASE] [IOS_PER_CASE]   (default main 60000)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-main}
ios=${2:-60000}
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")  # absolute: the base is built from a temporary directory
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$base" | tar -x -C "$src"
cp crates/sim/examples/sim_digest.rs "$src/crates/sim/examples/"
(cd "$src" && CARGO_TARGET_DIR="$target/sim-identical-base" cargo build -q --release -p flashlab-sim --example sim_digest)
cargo build -q --release -p flashlab-sim --example sim_digest
"$target/sim-identical-base/release/examples/sim_digest" "$ios" > "$src/base.txt"
"$target/release/examples/sim_digest" "$ios" > "$src/new.txt"
cat "$src/new.txt"
if diff "$src/base.txt" "$src/new.txt"; then
  echo "identical to $base on $(wc -l < "$src/new.txt") cases"
else
  echo "DIFFERENT from $base (lines above: < $base, > working tree)"
  exit 1
fi
