#!/usr/bin/env python3
"""How precisely flashlab keeps pauses and bursts on a real file.

Runs SR 4 KiB with pause:P for several P on a file on disk, and prints how
much longer than P the gap between one IO's completion and the next IO's
submission was (p50, p99, max), from the per-IO records.

    python3 bench/pause_accuracy.py [--flashlab target/release/flashlab] [--ios 2000]
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import tempfile

RECORD = struct.Struct("<QQQQIHBB")


def records(path):
    data = open(path, "rb").read()[32:]
    return [RECORD.unpack_from(data, i) for i in range(0, len(data) - len(data) % 40, 40)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flashlab", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "flashlab"))
    ap.add_argument("--ios", type=int, default=2000)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="flashlab-pause-", dir=os.path.join(os.path.dirname(__file__), "..", "target"))
    try:
        img = os.path.join(work, "p.img")
        print(f"{'pause':>8} {'p50 over':>10} {'p99 over':>10} {'max over':>10}")
        for pause_us in (5, 20, 100, 1000, 10000):
            res = os.path.join(work, f"r{pause_us}")
            cmd = [args.flashlab, "run", "--device", img, "--pattern", "SR", "--io-size", "4KiB",
                   "--io-count", str(args.ios if pause_us < 1000 else args.ios // 10),
                   "--time", f"pause:{pause_us}us", "--results", res, "--quiet", "--json"]
            if not os.path.exists(img):
                cmd += ["--size", "64MiB"]
            subprocess.run(cmd, check=True, capture_output=True)
            recs = sorted(records(os.path.join(res, "runs", "001-SR", "records.bin")), key=lambda r: r[0])
            over = sorted(b[1] - a[2] - pause_us * 1000 for a, b in zip(recs, recs[1:]))
            pick = lambda q: over[min(len(over) - 1, int(q * len(over)))]
            print(f"{pause_us:>6}us {pick(0.5) / 1e3:>8.2f}us {pick(0.99) / 1e3:>8.2f}us {over[-1] / 1e3:>8.2f}us")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
