#!/usr/bin/env bash
# Memory is O(1) per IO: `flashlab run` of random 4 KiB writes on
# sim:ssd-m,capacity=16GiB,prefill=on, records on, at a small and a large
# IO count. Prints each run's peak RSS (from /usr/bin/time) and end-to-end
# rate (IOs / wall-clock seconds, setup and statistics included), and the
# RSS difference (target: within 50 MB; end-to-end target: >= 1,000,000 IO/s).
#
#   bash bench/run_memory.sh [SMALL_IOS] [LARGE_IOS]   (default 1000000 50000000)
#   FLASHLAB=PATH uses that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-1000000}
large=${2:-50000000}
# FLASHLAB: a prebuilt binary (CI passes the one its test build made).
if [ -n "${FLASHLAB:-}" ]; then
  bin=$FLASHLAB
else
  cargo build -q --release -p flashlab
  bin=${CARGO_TARGET_DIR:-target}/release/flashlab
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
measure() {
  /usr/bin/time -f "%M %e" -o "$out/time.$1" "$bin" run -q \
    --device sim:ssd-m,capacity=16GiB,prefill=on --pattern RW --io-size 4KiB \
    --io-count "$1" --results "$out/r$1" > /dev/null
  read -r rss_kb secs < "$out/time.$1"
  records=$(( ($(stat -c %s "$out/r$1/runs/001-RW/records.bin") - 32) / 40 ))
  python3 -c "print(f'{$1:>10} IOs: peak RSS {$rss_kb/1024:7.1f} MiB, {$secs:7.2f} s wall, {$1/max($secs,1e-9):>10,.0f} IO/s end to end, {$records} records')"
  rm -rf "$out/r$1"
  echo "$rss_kb" > "$out/rss.$1"
}
echo "flashlab run --device sim:ssd-m,capacity=16GiB,prefill=on --pattern RW --io-size 4KiB (records on)"
measure "$small"
measure "$large"
python3 -c "d=($(cat "$out/rss.$large")-$(cat "$out/rss.$small"))/1024; print(f'peak RSS difference {d:.1f} MiB (target: within 50 MB)')"
