#!/usr/bin/env bash
# flashlab serve (pacing off) against `nbdkit memory` on the same stack:
# NBD server on a unix socket -> nbdfuse -> losetup --direct-io=on -> fio.
# 4 KiB random reads and writes at QD1 and QD16, servers alternating for
# ROUNDS rounds; prints both IOPS (mean over rounds) and the ratio.
#
#   sudo bench/nbd_compare.sh [--rounds N] [--runtime SECONDS] [--size SIZE] [--profile SPEC] [--dir DIR]
#
# Needs root, fio, nbdkit, nbdfuse (libnbd-bin), fuse3, util-linux, and a
# release build: cargo build --release (FLASHLAB=path overrides the binary).
# Target (issue 7): flashlab >= 0.9x nbdkit's IOPS.
#
# --dir DIR puts the work directory (and so flashlab's data, log and
# checkpoints) there: nbdkit memory keeps everything in RAM, so --dir /dev/shm
# compares like with like; on a disk-backed file system flashlab's writes also
# pay for the kernel writing dirty pages of data.img back to the disk.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3
RUNTIME=10
SIZE=1G
PROFILE="ssd-m,capacity=1GiB"
BASE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift 2 ;;
        --runtime) RUNTIME=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --profile) PROFILE=$2; shift 2 ;;
        --dir) BASE=$2; shift 2 ;;
        *) echo "usage: $0 [--rounds N] [--runtime SECONDS] [--size SIZE] [--profile SPEC] [--dir DIR]" >&2; exit 2 ;;
    esac
done
FLASHLAB=${FLASHLAB:-${CARGO_TARGET_DIR:-target}/release/flashlab}
for t in fio nbdkit nbdfuse fusermount3 losetup; do
    command -v "$t" >/dev/null || { echo "error: $t is missing (apt-get install fio nbdkit libnbd-bin fuse3 util-linux)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "error: needs root (losetup)" >&2; exit 2; }
[ -x "$FLASHLAB" ] || { echo "error: $FLASHLAB not found; run cargo build --release or set FLASHLAB=" >&2; exit 2; }

WORK=$(mktemp -d ${BASE:+-p "$BASE"} nbdbench.XXXXXX)
SERVER_PID=""; FUSE_PID=""; LOOP=""
teardown() {
    [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
    LOOP=""
    if mountpoint -q "$WORK/fuse" 2>/dev/null || [ -e "$WORK/fuse/disk" ]; then
        fusermount3 -u "$WORK/fuse" 2>/dev/null || fusermount3 -u -z "$WORK/fuse" 2>/dev/null || umount -l "$WORK/fuse" 2>/dev/null || true
    fi
    [ -n "$FUSE_PID" ] && { kill "$FUSE_PID" 2>/dev/null || true; wait "$FUSE_PID" 2>/dev/null || true; }
    FUSE_PID=""
    [ -n "$SERVER_PID" ] && { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
    SERVER_PID=""
}
trap 'teardown; rm -rf "$WORK"' EXIT

start_server() { # $1 = flashlab | nbdkit
    rm -rf "$WORK/data" "$WORK/sock"
    if [ "$1" = flashlab ]; then
        "$FLASHLAB" serve --profile "$PROFILE" --data "$WORK/data" --listen "unix:$WORK/sock" 2>"$WORK/server.log" &
    else
        nbdkit -f --unix "$WORK/sock" memory size="$SIZE" 2>"$WORK/server.log" &
    fi
    SERVER_PID=$!
    for _ in $(seq 600); do [ -S "$WORK/sock" ] && break; sleep 0.05; done
    [ -S "$WORK/sock" ] || { echo "error: $1 did not start: $(cat "$WORK/server.log")" >&2; exit 1; }
    mkdir -p "$WORK/fuse"
    nbdfuse "$WORK/fuse/disk" --unix "$WORK/sock" &
    FUSE_PID=$!
    for _ in $(seq 600); do [ -s "$WORK/fuse/disk" ] && break; sleep 0.05; done
    LOOP=$(losetup -f --show --direct-io=on "$WORK/fuse/disk")
    # Fill the device once so that reads return data on both servers.
    fio --name=fill --filename="$LOOP" --rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=8 \
        --size="$SIZE" --output-format=terse >/dev/null
}

iops() { # $1 = rw, $2 = iodepth
    local out
    out=$(fio --name=t --filename="$LOOP" --rw="$1" --bs=4k --direct=1 --ioengine=libaio --iodepth="$2" \
        --size="$SIZE" --runtime="$RUNTIME" --time_based --randrepeat=0 --norandommap --output-format=json)
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"]+j["write"]["iops"]))' <<<"$out"
}

declare -A SUM
TESTS="randread:1 randread:16 randwrite:1 randwrite:16"
for r in $(seq "$ROUNDS"); do
    for server in flashlab nbdkit; do
        start_server "$server"
        for t in $TESTS; do
            v=$(iops "${t%%:*}" "${t##*:}")
            SUM[$server:$t]=$(( ${SUM[$server:$t]:-0} + v ))
            echo "round $r $server ${t%%:*} QD${t##*:}: $v IOPS" >&2
        done
        teardown
    done
done

echo
echo "4 KiB random IO through nbdfuse + loop (direct IO), $ROUNDS rounds x ${RUNTIME}s, servers alternating"
printf "%-14s %14s %14s %8s\n" "test" "flashlab IOPS" "nbdkit IOPS" "ratio"
worst=""
for t in $TESTS; do
    f=$(( ${SUM[flashlab:$t]} / ROUNDS )); n=$(( ${SUM[nbdkit:$t]} / ROUNDS ))
    ratio=$(python3 -c "print(f'{$f/$n:.2f}')")
    printf "%-14s %14d %14d %7sx\n" "${t%%:*} QD${t##*:}" "$f" "$n" "$ratio"
    worst=$(python3 -c "print(min(x for x in [$ratio, ${worst:-99}]))")
done
echo "lowest ratio: ${worst}x (target >= 0.90x)"
