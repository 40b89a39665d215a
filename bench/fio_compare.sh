#!/bin/sh
# fio and flashlab run the same fio job file on the same file target; prints
# each job's IOPS and latency percentiles (p50, p99, p99.9; submission to
# completion) from both tools side by side.
#
#   bench/fio_compare.sh [JOBFILE]        (default bench/fio/compare.fio)
#
# Environment: FLASHLAB (binary, default target/release/flashlab),
# TARGET_DIR (where the O_DIRECT file goes, default /dev/shm; /var/tmp for
# a disk), SIZE (the file and IO region, fio's units: default 256m; CI uses
# 16m), ROUNDS (default 1; with more, each tool's median IOPS is shown and
# the order alternates, which cancels drift on a shared machine).
#
# flashlab reads the job file with --fio-job (sizes as fio reads them);
# filename and size come from here, so that both tools use the same target.
# fio runs each job alone (--section), as flashlab runs jobs one after
# another. A RAM-backed target measures the tools and the kernel, not flash:
# this compares the tools, not a device.
set -eu

JOB=${1:-bench/fio/compare.fio}
FLASHLAB=${FLASHLAB:-target/release/flashlab}
TARGET_DIR=${TARGET_DIR:-/dev/shm}
SIZE=${SIZE:-256m}
ROUNDS=${ROUNDS:-1}

command -v fio >/dev/null || { echo "fio is not installed (apt-get install -y fio)" >&2; exit 1; }
[ -x "$FLASHLAB" ] || { echo "no flashlab at $FLASHLAB (cargo build --release -p flashlab)" >&2; exit 1; }
[ -f "$JOB" ] || { echo "no job file $JOB" >&2; exit 1; }

work=$(mktemp -d)
target="$TARGET_DIR/flashlab-fio-compare.$$"
trap 'rm -rf "$work" "$target"' EXIT INT TERM

# One job file for both: the given one with this target's filename and size.
awk -v f="$target" -v s="$SIZE" '
    /^\[global\]/ { print; print "filename=" f; print "size=" s; g = 1; next }
    { print }
    END { if (!g) exit 1 }' "$JOB" > "$work/job.fio" ||
    { echo "$JOB has no [global] section" >&2; exit 1; }
jobs=$(sed -n 's/^\[\(.*\)\]$/\1/p' "$JOB" | grep -v '^global$')

# Fill the target with data once, so that both tools read written blocks.
fio --name=fill --filename="$target" --size="$SIZE" --rw=write --bs=1m \
    --direct=1 --ioengine=psync --output=/dev/null

for round in $(seq 1 "$ROUNDS"); do
    run_fl() {
        "$FLASHLAB" run --device "$target" --fio-job "$work/job.fio" \
            --results "$work/fl-$round" --json --quiet > "$work/fl-$round.json"
    }
    run_fio() {
        for j in $jobs; do
            fio --section="$j" --output-format=json "$work/job.fio" > "$work/fio-$round-$j.json"
        done
    }
    # alternate which tool goes first
    if [ $((round % 2)) -eq 1 ]; then run_fio; run_fl; else run_fl; run_fio; fi
done

python3 - "$work" "$ROUNDS" $jobs <<'PY'
import json, statistics, sys, os
work, rounds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def fio_side(j, r):
    text = open(os.path.join(work, f"fio-{r}-{j}.json")).read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    side = job["read"] if job["read"]["total_ios"] > 0 else job["write"]
    pct = side["lat_ns"].get("percentile", {})
    get = lambda p: next((v for k, v in pct.items() if abs(float(k) - p) < 1e-6), float("nan"))
    return side["iops"], get(50.0), get(99.0), get(99.9)

def fl_side(j, r):
    runs = json.load(open(os.path.join(work, f"fl-{r}.json")))["runs"]
    s = next(x for x in runs if x["name"] == j)["stats"]
    lat = s["latency"]
    return s["iops"], lat["p50_ns"], lat["p99_ns"], lat["p999_ns"]

def med(vals):
    return [statistics.median(v) for v in zip(*vals)]

us = lambda ns: f"{ns / 1000:8.1f}"
print(f"{'job':<20} {'tool':<9} {'IOPS':>9} {'p50 us':>8} {'p99 us':>8} {'p99.9 us':>8}  flashlab/fio IOPS")
for j in jobs:
    f = med([fio_side(j, r) for r in range(1, rounds + 1)])
    l = med([fl_side(j, r) for r in range(1, rounds + 1)])
    print(f"{j:<20} {'fio':<9} {f[0]:9.0f} {us(f[1])} {us(f[2])} {us(f[3])}")
    print(f"{'':<20} {'flashlab':<9} {l[0]:9.0f} {us(l[1])} {us(l[2])} {us(l[3])}  {l[0] / f[0]:.2f}")
PY
