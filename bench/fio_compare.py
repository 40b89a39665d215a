#!/usr/bin/env python3
"""flashlab vs fio on the same loop device, in one run.

Runs the four uFLIP baseline patterns (SR, RR, SW, RW) at 4 KiB and 32 KiB,
QD1 and QD32, with fio (io_uring engine, O_DIRECT, per-IO latency log) and
with flashlab (its default engine, io_uring, per-IO records), on one
loop device over a file in /dev/shm, and prints IOPS and mean latency for
both with their ratios.

Each cell is measured ROUNDS times, alternating which tool goes first, and
the median is reported: the machine is shared and noisy, and alternating
cancels drift. Needs root (losetup) and fio.

    sudo python3 bench/fio_compare.py [--rounds 3] [--ios 50000] [--flashlab PATH]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

DEVICE_MIB = 1024
TARGET = "512MiB"
TARGET_BYTES = 512 << 20


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout.strip()


def fio_cell(dev, pattern, bs, qd, ios, workdir):
    rw = {"SR": "read", "RR": "randread", "SW": "write", "RW": "randwrite"}[pattern]
    prefix = os.path.join(workdir, f"fio-{pattern}-{bs}-{qd}")
    out = sh(
        "fio", "--name=cell", f"--filename={dev}", "--ioengine=io_uring", "--direct=1",
        f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--size={TARGET_BYTES}",
        f"--io_size={ios * bs}", "--norandommap", "--randrepeat=0", "--thread",
        f"--write_lat_log={prefix}", "--log_avg_msec=0", "--output-format=json",
    )
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job["read"] if pattern in ("SR", "RR") else job["write"]
    for f in os.listdir(workdir):
        if f.startswith(os.path.basename(prefix)):
            os.remove(os.path.join(workdir, f))
    return side["iops"], side["lat_ns"]["mean"]


def flashlab_cell(flashlab, dev, pattern, bs, qd, ios, workdir):
    res = os.path.join(workdir, f"fl-{pattern}-{bs}-{qd}")
    shutil.rmtree(res, ignore_errors=True)
    out = sh(
        flashlab, "run", "--device", dev, "--pattern", pattern, "--io-size", str(bs),
        "--queue-depth", str(qd), "--io-count", str(ios), "--target-size", TARGET,
        "--allow-write-to", dev, "--results", res, "--json", "--quiet",
    )
    stats = json.loads(out)["runs"][0]["stats"]
    shutil.rmtree(res, ignore_errors=True)
    return stats["iops"], stats["latency"]["mean_ns"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--ios", type=int, default=20000, help="IOs per cell and tool")
    ap.add_argument("--qd", type=int, action="append", help="only these queue depths (repeatable; default 1 and 32)")
    ap.add_argument("--flashlab", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "flashlab"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("error: needs root to set up a loop device; run with sudo")
    if not shutil.which("fio"):
        sys.exit("error: fio is not installed; apt-get install fio")
    if not os.path.exists(args.flashlab):
        sys.exit(f"error: {args.flashlab} not found; build it with cargo build --release")

    backing = f"/dev/shm/flashlab-fio-{os.getpid()}.img"
    workdir = tempfile.mkdtemp(prefix="flashlab-fio-")
    with open(backing, "wb") as f:
        # Real data, not holes, so that reads copy pages.
        chunk = os.urandom(1 << 20)
        for _ in range(DEVICE_MIB):
            f.write(chunk)
    dev = sh("losetup", "-f", "--show", backing)
    results = []
    try:
        print(f"loop device {dev} over {backing} ({DEVICE_MIB} MiB), target {TARGET}, "
              f"{args.ios} IOs per cell, median of {args.rounds} rounds", flush=True)
        for pattern in ("SR", "RR", "SW", "RW"):
            for bs in (4096, 32768):
                for qd in (args.qd or [1, 32]):
                    fio_runs, fl_runs = [], []
                    for r in range(args.rounds):
                        order = [0, 1] if r % 2 == 0 else [1, 0]
                        for who in order:
                            if who == 0:
                                fio_runs.append(fio_cell(dev, pattern, bs, qd, args.ios, workdir))
                            else:
                                fl_runs.append(flashlab_cell(args.flashlab, dev, pattern, bs, qd, args.ios, workdir))
                    fio_iops = statistics.median(x[0] for x in fio_runs)
                    fio_lat = statistics.median(x[1] for x in fio_runs)
                    fl_iops = statistics.median(x[0] for x in fl_runs)
                    fl_lat = statistics.median(x[1] for x in fl_runs)
                    results.append((pattern, bs, qd, fio_iops, fl_iops, fio_lat, fl_lat))
                    print(f"  {pattern} {bs // 1024}KiB QD{qd} done", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["losetup", "-d", dev])
        os.remove(backing)
        shutil.rmtree(workdir, ignore_errors=True)

    head = f"{'pattern':<8}{'size':>6}{'QD':>4}  {'fio IOPS':>10}{'flashlab IOPS':>15}{'ratio':>7}  {'fio mean':>10}{'flashlab mean':>15}{'ratio':>7}"
    print(head)
    print("-" * len(head))
    ok = True
    for pattern, bs, qd, fi, li, fl, ll in results:
        ri, rl = li / fi, ll / fl
        # Lower latency than fio's is not a failure: at a fixed queue depth
        # mean latency is QD / IOPS, so more IOPS must mean less latency.
        ok &= ri >= 1.0 and rl <= 1.10
        print(f"{pattern:<8}{bs // 1024:>4}Ki{qd:>4}  {fi:>10.0f}{li:>15.0f}{ri:>7.2f}  "
              f"{fl / 1000:>8.1f}us{ll / 1000:>13.1f}us{rl:>7.2f}")
    print("target: flashlab IOPS >= fio IOPS in every cell, mean latency at most 10 % above fio's: "
          + ("met" if ok else "NOT met in every cell"))


if __name__ == "__main__":
    main()
