#!/usr/bin/env bash
# Tracing overhead: OLTP throughput with logical + physical IO tracing vs
# without, in the same run, interleaved, on the same database.
#
# WHAT IT MEASURES: the workload is run directly (not through `flashlab
# oltp`) on a throwaway PostgreSQL cluster (a loop device over a /dev/shm
# file, ext4, initdb as the `postgres` user in a temp dir, unix socket
# only, listen_addresses=''):
#   WORKLOAD=tpcc (default when crates/tpcc exists): our TPC-C driver
#     (crates/tpcc/examples/tpcc.rs), printing tpmC;
#   WORKLOAD=pgbench: pgbench's TPC-B-like transactions, printing TPS.
# Traced runs go through crates/iotrace/examples/trace_run.rs with the
# postmaster's process tree (logical, files under the data directory) and
# the loop device (physical).
#
# Usage (root): bench/oltp_trace_overhead.sh [ROUNDS] [SECONDS] [CLIENTS] [SCALE]
# Defaults: 8 rounds of 12 s, 8 clients (terminals), scale 1 (TPC-C
# warehouses; for pgbench the scale factor, default 10).
#
# Each round runs every side once, each run from a CHECKPOINT, in an order
# that rotates per round (so a drift within a round favours no side). The
# figure is the mean of the per-round ratios traced / untraced: a round's
# two runs are minutes apart at most, so the machine's load, which moves
# throughput by tens of per cent on a shared machine, mostly cancels. Its
# spread (standard deviation, range, 95 % confidence interval) is printed
# with the verdict: the target is met only when the whole interval is
# within 10 %, missed only when it is all beyond, otherwise undecided (run
# more rounds). The tracer's own CPU time (trace_run's user + system time,
# which includes the kernel's work for its reads) is printed per traced
# run, with a median per side of that time per traced request, and the
# load average at the start and the end.
#
# TRACE_RUN=PATH uses that trace_run binary instead of building one.
# TPCC=PATH uses that TPC-C driver (crates/tpcc/examples/tpcc.rs) instead of building one.
# BASELINE_TRACE_RUN=PATH adds a third side: the same tracing by another
# build of trace_run (e.g. an older commit's), interleaved in the same
# rounds, to tell a regression of the tracer from the machine's noise.
# KEEP_TRACES=DIR copies each traced round's directory (logical.trace,
# physical.trace, iotrace.json) there.
# Leaves nothing behind (trap): the server is stopped, the file system
# unmounted, the loop device detached, the temp files removed.
set -euo pipefail

ROUNDS=${1:-8}
SECONDS_PER_RUN=${2:-12}
CLIENTS=${3:-8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${WORKLOAD:-}" ]; then
    if [ -f "$ROOT/crates/tpcc/examples/tpcc.rs" ]; then WORKLOAD=tpcc; else WORKLOAD=pgbench; fi
fi
case "$WORKLOAD" in
    tpcc) SCALE=${4:-1}; UNIT=tpmC ;;
    pgbench) SCALE=${4:-10}; UNIT=TPS ;;
    *) echo "error: WORKLOAD=$WORKLOAD is not tpcc or pgbench" >&2; exit 2 ;;
esac

if [ "$(id -u)" != 0 ]; then
    echo "error: needs root (loop device, mount, tracefs); run with sudo" >&2
    exit 2
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$PGBIN" ] || ! command -v pgbench >/dev/null; then
    echo "error: PostgreSQL is not installed; apt-get install postgresql postgresql-contrib" >&2
    exit 2
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
if [ -z "${TRACE_RUN:-}" ]; then
    cargo build --release -q -p flashlab-iotrace --example trace_run
    TRACE_RUN=$CARGO_TARGET_DIR/release/examples/trace_run
fi
for bin in "$TRACE_RUN" ${BASELINE_TRACE_RUN:+"$BASELINE_TRACE_RUN"}; do
    if [ ! -x "$bin" ]; then
        echo "error: trace_run binary $bin is not an executable file; build it (cargo build --release -p flashlab-iotrace --example trace_run) or fix TRACE_RUN/BASELINE_TRACE_RUN" >&2
        exit 2
    fi
done
# TPCC: a prebuilt TPC-C driver (CI passes the one its test build made).
if [ "$WORKLOAD" = tpcc ] && [ -z "${TPCC:-}" ]; then
    cargo build --release -q -p flashlab-tpcc --example tpcc
    TPCC=$CARGO_TARGET_DIR/release/examples/tpcc
fi

WORK=$(mktemp -d /tmp/flashlab-overhead.XXXXXX)
IMG=/dev/shm/flashlab-overhead-$$.img
LOOP=""
MNT=$WORK/mnt
SOCK=$WORK/sock
cleanup() {
    set +e
    if [ -f "$MNT/pgdata/postmaster.pid" ]; then
        su postgres -c "$PGBIN/pg_ctl -D $MNT/pgdata -m immediate stop" >/dev/null 2>&1
    fi
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

truncate -s 2G "$IMG"
LOOP=$(losetup -f --show --direct-io=on "$IMG")
DEVNO=$(cat "/sys/block/$(basename "$LOOP")/dev")
mkfs.ext4 -q -F "$LOOP"
mkdir -p "$MNT" "$SOCK"
mount "$LOOP" "$MNT"
mkdir "$MNT/pgdata"
chown postgres: "$MNT/pgdata" "$SOCK" "$WORK"
chmod 700 "$MNT/pgdata"
su postgres -c "$PGBIN/initdb -D $MNT/pgdata -A trust -U postgres" >/dev/null
su postgres -c "$PGBIN/pg_ctl -D $MNT/pgdata -l $WORK/pg.log -w -o \"-c listen_addresses='' -k $SOCK -c shared_buffers=64MB\" start" >/dev/null
PG="-h $SOCK -U postgres"
if [ "$WORKLOAD" = tpcc ]; then
    su postgres -c "createdb $PG tpcc"
    # The driver loads the warehouses when the database has no TPC-C tables.
    "$TPCC" "$SOCK" 5432 "$SCALE" "$CLIENTS" 2 >/dev/null 2>"$WORK/load.err" || { cat "$WORK/load.err" >&2; exit 1; }
    WORKLOAD_CMD="$TPCC $SOCK 5432 $SCALE $CLIENTS $SECONDS_PER_RUN"
    DESC="TPC-C tpmC (crates/tpcc), $SCALE warehouses, $CLIENTS terminals"
else
    su postgres -c "pgbench $PG -i -q -s $SCALE postgres" >/dev/null 2>&1
    WORKLOAD_CMD="su postgres -c 'pgbench $PG -c $CLIENTS -j 2 -T $SECONDS_PER_RUN -n postgres'"
    DESC="pgbench TPS (TPC-B-like, NOT TPC-C tpmC), scale $SCALE, $CLIENTS clients"
fi
PMPID=$(head -1 "$MNT/pgdata/postmaster.pid")
echo "$DESC: $ROUNDS rounds x ${SECONDS_PER_RUN}s, PostgreSQL on ext4 on $LOOP ($DEVNO), postmaster $PMPID"

# The throughput figure of the workload's output.
rate() {
    if [ "$WORKLOAD" = tpcc ]; then sed -n 's/^tpmC \([0-9.]*\) .*/\1/p' | head -1
    else sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1; fi
}
run_plain() {
    bash -c "$WORKLOAD_CMD" 2>/dev/null | rate
}
# run_traced BINARY NAME SIDE: one traced run; its tracer lines go to
# stderr, and the tracer's CPU time per traced request (logical reads,
# writes and fsyncs plus physical reads, writes and flushes, from its
# `traced` line) to $WORK/cpu.txt.
run_traced() {
    local out=$WORK/trace-$2
    "$1" --out "$out" --pid "$PMPID" --under "$MNT/pgdata" --dev "$DEVNO" -- \
        bash -c "$WORKLOAD_CMD" 2>"$out.err" | rate
    grep -E '^trace reader|^traced|^tracer CPU|amplification|logical:|physical:' "$out.err" | sed 's/^/    /' >&2
    awk -v side="$3" '
        /^traced / { n = $5 + $8 + $11 + $14 + $17 + $20 }
        /^tracer CPU:/ { cpu = $3 + $7 }
        END { if (n > 0) printf "%s %.2f\n", side, 1e6 * cpu / n }' "$out.err" >>"$WORK/cpu.txt"
    if [ -n "${KEEP_TRACES:-}" ]; then mkdir -p "$KEEP_TRACES" && cp -r "$out" "$KEEP_TRACES/"; fi
}

sides=(plain traced)
[ -n "${BASELINE_TRACE_RUN:-}" ] && sides+=(baseline)
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
checkpoint() { su postgres -c "psql $PG -q -c CHECKPOINT postgres" >/dev/null; }
RESULTS=$WORK/results.txt
: >"$RESULTS"
: >"$WORK/cpu.txt"
n=${#sides[@]}
for i in $(seq 1 "$ROUNDS"); do
    for k in $(seq 0 $((n - 1))); do
        side=${sides[$(((i - 1 + k) % n))]}
        checkpoint
        case "$side" in
            plain) r=$(run_plain); label="without tracing" ;;
            traced) r=$(run_traced "$TRACE_RUN" "$i" traced); label="with tracing" ;;
            baseline) r=$(run_traced "$BASELINE_TRACE_RUN" "base-$i" baseline); label="with baseline tracing" ;;
        esac
        if [ -z "$r" ]; then
            echo "error: round $i $label printed no $UNIT figure; see the workload's output" >&2
            exit 1
        fi
        printf 'round %d %-22s %s %s\n' "$i" "$label:" "$r" "$UNIT"
        echo "$i $side $r" >>"$RESULTS"
    done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$UNIT" "$RESULTS" "$WORK/cpu.txt" <<'EOF'
import statistics, sys
unit, path, cpu_path = sys.argv[1], sys.argv[2], sys.argv[3]
cpu = {}
for line in open(cpu_path):
    side, us = line.split()
    cpu.setdefault(side, []).append(float(us))
for side, name in [("traced", "tracer"), ("baseline", "baseline tracer")]:
    if side in cpu:
        v = cpu[side]
        print(f"{name} CPU per traced request: median {statistics.median(v):.1f} us "
              f"(range {min(v):.1f} to {max(v):.1f}, {len(v)} runs)")
rounds = {}
for line in open(path):
    i, side, value = line.split()
    rounds.setdefault(int(i), {})[side] = float(value)
# Two-sided 95 % Student t quantiles by degrees of freedom (1..30).
T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18,
       2.16, 2.14, 2.13, 2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06,
       2.06, 2.06, 2.05, 2.05, 2.05, 2.04]
plain = [r["plain"] for r in rounds.values()]
print(f"mean without tracing: {statistics.mean(plain):.1f} {unit}")
for side, name in [("traced", "tracing"), ("baseline", "baseline tracing")]:
    if not all(side in r for r in rounds.values()):
        continue
    values = [r[side] for r in rounds.values()]
    # Per-round overhead, 1 - traced / untraced of the same round.
    over = [100 * (1 - r[side] / r["plain"]) for r in rounds.values()]
    m = statistics.mean(over)
    print(f"mean with {name}: {statistics.mean(values):.1f} {unit}")
    line = f"{name} overhead: {m:.1f} % (mean of {len(over)} per-round ratios"
    if len(over) >= 2:
        sd = statistics.stdev(over)
        half = T95[min(len(over) - 1, len(T95)) - 1] * sd / len(over) ** 0.5
        lo, hi = m - half, m + half
        line += (f"; median {statistics.median(over):.1f}, sd {sd:.1f}, "
                 f"range {min(over):.1f} to {max(over):.1f}, "
                 f"95 % CI {lo:.1f} to {hi:.1f}")
        if hi <= 10:
            verdict = "met"
        elif lo > 10:
            verdict = "NOT met"
        else:
            verdict = "undecided (the interval holds 10 %; run more rounds)"
    else:
        verdict = "undecided (one round has no spread; run more rounds)"
    print(line + f"); target within 10 %: {verdict}")
if all("baseline" in r for r in rounds.values()):
    d = [100 * (r["traced"] / r["baseline"] - 1) for r in rounds.values()]
    print(f"tracing vs baseline tracing: {statistics.mean(d):+.1f} % throughput "
          f"(per round {min(d):+.1f} to {max(d):+.1f})")
EOF
