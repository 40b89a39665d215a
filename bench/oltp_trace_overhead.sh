#!/usr/bin/env bash
# Tracing overhead: OLTP throughput with logical + physical IO tracing vs
# without, in the same run, interleaved (untraced then traced in odd
# rounds, traced then untraced in even ones), on the same database.
#
# WHAT IT MEASURES: `flashlab oltp` (our TPC-C driver) is not on this branch
# yet, so this script measures pgbench's TPC-B-like transactions per second
# (TPS), not TPC-C tpmC, on a throwaway PostgreSQL cluster: a loop device
# over a /dev/shm file, ext4, initdb as the `postgres` user in a temp dir,
# unix socket only (listen_addresses=''). Traced rounds run pgbench under
# crates/iotrace/examples/trace_run.rs with the postmaster's process tree
# (logical, files under the data directory) and the loop device (physical).
#
# Usage (root): bench/oltp_trace_overhead.sh [ROUNDS] [SECONDS] [CLIENTS] [SCALE]
# Defaults: 3 rounds of 20 s, 8 clients, scale 10 (about 160 MB).
# KEEP_TRACES=DIR copies each traced round's directory (logical.trace,
# physical.trace, iotrace.json) there.
# Prints every round's TPS and the mean with/without tracing and their ratio.
# Leaves nothing behind (trap): the server is stopped, the file system
# unmounted, the loop device detached, the temp files removed.
set -euo pipefail

ROUNDS=${1:-3}
SECONDS_PER_RUN=${2:-20}
CLIENTS=${3:-8}
SCALE=${4:-10}

if [ "$(id -u)" != 0 ]; then
    echo "error: needs root (loop device, mount, tracefs); run with sudo" >&2
    exit 2
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$PGBIN" ] || ! command -v pgbench >/dev/null; then
    echo "error: PostgreSQL is not installed; apt-get install postgresql postgresql-contrib" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release -q -p flashlab-iotrace --example trace_run
TRACE_RUN=$CARGO_TARGET_DIR/release/examples/trace_run

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
su postgres -c "pgbench $PG -i -q -s $SCALE postgres" >/dev/null 2>&1
PMPID=$(head -1 "$MNT/pgdata/postmaster.pid")
echo "pgbench TPS (TPC-B-like; NOT TPC-C tpmC): $ROUNDS rounds x ${SECONDS_PER_RUN}s, $CLIENTS clients, scale $SCALE, PostgreSQL on ext4 on $LOOP ($DEVNO), postmaster $PMPID"

tps() { sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1; }
run_plain() {
    su postgres -c "pgbench $PG -c $CLIENTS -j 2 -T $SECONDS_PER_RUN -n postgres" 2>/dev/null | tps
}
run_traced() {
    local out=$WORK/trace-$1
    "$TRACE_RUN" --out "$out" --pid "$PMPID" --under "$MNT/pgdata" --dev "$DEVNO" -- \
        su postgres -c "pgbench $PG -c $CLIENTS -j 2 -T $SECONDS_PER_RUN -n postgres" \
        2>"$WORK/trace-$1.err" | tps
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
            echo "round $i without tracing: $p TPS"
            plain+=("$p")
        else
            t=$(run_traced "$i")
            echo "round $i with tracing:    $t TPS"
            traced+=("$t")
        fi
    done
done
python3 - "${plain[*]}" "${traced[*]}" <<'EOF'
import sys
plain = [float(x) for x in sys.argv[1].split()]
traced = [float(x) for x in sys.argv[2].split()]
mp, mt = sum(plain) / len(plain), sum(traced) / len(traced)
print(f"mean without tracing: {mp:.1f} TPS")
print(f"mean with tracing:    {mt:.1f} TPS")
print(f"with / without: {mt / mp:.3f} (overhead {100 * (1 - mt / mp):.1f} %; target: within 10 %)")
EOF
