#!/usr/bin/env bash
# Every simulator suite on every built-in profile: one row per suite x
# profile with whether it completed, its wall time and, if it failed, the
# error's first line; the last line counts them. Issue 29's target: 100 %
# complete at the suites' default size.
#
#   bash bench/suite_matrix.sh [FLASHLAB] [SUITES...]
#   SIZE=default|quick|ci  (default: default)
#     default  the suites' default size on each profile's full capacity
#     quick    --quick on the full capacity
#     ci       --quick on a 2 GiB device (8 GiB for mqsim-ref, whose 64
#              dies need 5 spare blocks each at its 7 % over-provisioning):
#              what .ci/run runs
#   PROFILES="ssd-l ssd-m" bash bench/suite_matrix.sh target/release/flashlab uflip
#
# budilovsky11 compares FTL designs on its own simulated device
# (sim:budilovsky11: each design a reconfiguration of it) and takes no
# --device: it runs once, in the budilovsky11 row.
# A suite that takes longer than TIMEOUT seconds (default 3600) counts as
# "timeout" (incomplete).
# JOBS=N runs N suites at once (default 1; each is one simulator thread, so
# N up to the number of cores shortens the whole; a row's wall_s then
# includes the sharing). Rows print in the same order either way.
set -u
FLASHLAB=${1:-target/release/flashlab}
shift || true
SUITES=${*:-uflip chen09 wang11 hudlet11 budilovsky11}
TIMEOUT=${TIMEOUT:-3600}
SIZE=${SIZE:-default}
case "$SIZE" in
  default) QUICK_FLAG="" ;;
  quick|ci) QUICK_FLAG="--quick" ;;
  *) echo "SIZE must be default, quick or ci (got '$SIZE')" >&2; exit 2 ;;
esac
if [ -z "${PROFILES:-}" ]; then
  PROFILES=$(ls "$(dirname "$0")"/../crates/sim/profiles/*.toml | xargs -n1 basename | sed 's/\.toml$//')
fi
JOBS=${JOBS:-1}
case "$JOBS" in ''|*[!0-9]*|0) echo "JOBS must be a positive integer (got '$JOBS')" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "size: $SIZE"
printf '%-14s %-20s %-10s %9s  %s\n' suite profile status wall_s error
# One suite x profile run; its row goes to $work/row.IDX (status first).
run_one() {
  local idx=$1 s=$2 p=$3 dir="$work/$1" rc status err start end wall
  shift 3
  start=$(date +%s.%N)
  timeout "$TIMEOUT" "$FLASHLAB" suite "$s" "$@" $QUICK_FLAG -q -o "$dir" >/dev/null 2>"$work/err.$idx"
  rc=$?
  end=$(date +%s.%N)
  wall=$(echo "$end - $start" | bc)
  if [ $rc -eq 0 ]; then
    status=complete; err=""
  elif [ $rc -eq 124 ]; then
    status=timeout; err="over ${TIMEOUT}s"
  else
    status=failed; err=$(grep -m1 -i 'error' "$work/err.$idx" | cut -c1-160)
  fi
  printf '%-14s %-20s %-10s %9.1f  %s\n' "$s" "$p" "$status" "$wall" "$err" > "$work/row.$idx"
  rm -rf "$dir" "$work/err.$idx"
}
total=0; printed=0
# Print the finished rows in order, as far as they are all done.
flush_rows() {
  while [ "$printed" -lt "$total" ] && [ -f "$work/row.$((printed + 1))" ]; do
    printed=$((printed + 1))
    cat "$work/row.$printed"
  done
}
for s in $SUITES; do
  for p in $PROFILES; do
    if [ "$s" = budilovsky11 ]; then
      [ "$p" = budilovsky11 ] || continue
      args=()
    else
      opts=""
      if [ "$SIZE" = ci ]; then
        opts=",capacity=2GiB"
        [ "$p" = mqsim-ref ] && opts=",capacity=8GiB"
      fi
      args=(--device "sim:$p$opts")
    fi
    total=$((total + 1))
    run_one "$total" "$s" "$p" "${args[@]}" &
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    flush_rows
  done
done
wait
flush_rows
ok=$(cat "$work"/row.* 2>/dev/null | awk '$3 == "complete"' | wc -l)
echo "complete: $ok of $total suite x profile runs ($(( 100 * ok / total )) %)"
[ "$ok" -eq "$total" ]
