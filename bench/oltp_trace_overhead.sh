#!/usr/bin/env bash
# Tracing overhead: OLTP throughput with logical + physical IO tracing vs
# without, in the same run, interleaved (untraced then traced in odd
# rounds, traced then untraced in even ones), on the same database.
#
# WHAT IT MEASURES: `flashlab oltp` is not on this branch yet, so the
# workload is run directly on a throwaway PostgreSQL cluster (a loop device
# over a /dev/shm file, ext4, initdb as the `postgres` user in a temp dir,
# unix socket only, listen_addresses=''):
#   WORKLOAD=tpcc (default when crates/tpcc exists): our TPC-C driver
#     (crates/tpcc/examples/tpcc.rs), printing tpmC;
#   WORKLOAD=pgbench: pgbench's TPC-B-like transactions, printing TPS.
# Traced runs go through crates/iotrace/examples/trace_run.rs with the
# postmaster's process tree (logical, files under the data directory) and
# the loop device (physical).
#
# Usage (root): bench/oltp_trace_overhead.sh [ROUNDS] [SECONDS] [CLIENTS] [SCALE]
# Defaults: 3 rounds of 20 s, 8 clients (terminals), scale 1 (TPC-C
# warehouses; for pgbench the scale factor, default 10).
# KEEP_TRACES=DIR copies each traced round's directory (logical.trace,
# physical.trace, iotrace.json) there.
# Prints every round's throughput and the mean with/without tracing and
# their ratio. Leaves nothing behind (trap): the server is stopped, the file
# system unmounted, the loop device detached, the temp files removed.
set -euo pipefail

ROUNDS=${1:-3}
SECONDS_PER_RUN=${2:-20}
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
cargo build --release -q -p flashlab-iotrace --example trace_run
TRACE_RUN=$CARGO_TARGET_DIR/release/examples/trace_run
if [ "$WORKLOAD" = tpcc ]; then
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
run_traced() {
    local out=$WORK/trace-$1
    "$TRACE_RUN" --out "$out" --pid "$PMPID" --under "$MNT/pgdata" --dev "$DEVNO" -- \
        bash -c "$WORKLOAD_CMD" 2>"$WORK/trace-$1.err" | rate
    grep -E '^traced|amplification|logical:|physical:' "$WORK/trace-$1.err" | sed 's/^/    /' >&2
    if [ -n "${KEEP_TRACES:-}" ]; then mkdir -p "$KEEP_TRACES" && cp -r "$out" "$KEEP_TRACES/"; fi
}

# Each measured run starts from a checkpoint, and the order alternates
# (untraced first in odd rounds, traced first in even ones) so that a
# drift within a round (checkpoints, autovacuum, the page cache warming)
# does not favour one side.
checkpoint() { su postgres -c "psql $PG -q -c CHECKPOINT postgres" >/dev/null; }
plain=()
traced=()
for i in $(seq 1 "$ROUNDS"); do
    if [ $((i % 2)) = 1 ]; then order="plain traced"; else order="traced plain"; fi
    for side in $order; do
        checkpoint
        if [ "$side" = plain ]; then
            p=$(run_plain)
            echo "round $i without tracing: $p $UNIT"
            plain+=("$p")
        else
            t=$(run_traced "$i")
            echo "round $i with tracing:    $t $UNIT"
            traced+=("$t")
        fi
    done
done
python3 - "$UNIT" "${plain[*]}" "${traced[*]}" <<'EOF'
import sys
unit = sys.argv[1]
plain = [float(x) for x in sys.argv[2].split()]
traced = [float(x) for x in sys.argv[3].split()]
mp, mt = sum(plain) / len(plain), sum(traced) / len(traced)
print(f"mean without tracing: {mp:.1f} {unit}")
print(f"mean with tracing:    {mt:.1f} {unit}")
print(f"with / without: {mt / mp:.3f} (overhead {100 * (1 - mt / mp):.1f} %; target: within 10 %)")
EOF
