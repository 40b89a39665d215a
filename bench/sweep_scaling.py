#!/usr/bin/env python3
"""Sweep scaling on Dask: 40 points of about a second with 1 and with 2
workers, and the per-point scheduling overhead from 40 near-empty points.

    python3 bench/sweep_scaling.py [--points 40] [--io-count N]

Needs the flashlab Python package (pip install ./python) and dask[distributed].
Prints figures; it asserts nothing (targets: >= 1.8x with 2 workers, overhead
< 50 ms per point). Points are single-threaded simulator runs, so the speed-up
needs two idle cores: on a loaded machine it is lower.
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import flashlab
from dask.distributed import Client, LocalCluster


def grid(points: int, io_count: int, prefill: bool) -> dict:
    return {
        "name": "scaling",
        "device": "ssd-m,capacity=512MiB,channels=2,cache=off" + (",prefill=on" if prefill else ""),
        "seeds": list(range(1, points + 1)),
        "run": [{"pattern": "RW", "io_size": "4KiB", "io_count": io_count}],
    }


def calibrate(target_s: float = 1.0) -> int:
    """The IO count that makes one point take about `target_s` here (one in-process run)."""
    from flashlab import _native

    n = 200_000
    g = grid(1, n, prefill=True)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        _native.simulate(g["device"], json.dumps({"kind": "patterns", "runs": g["run"]}), 1, str(Path(d) / "r"))
        took = time.perf_counter() - t0
    return max(int(n * target_s / took), 1000)


def timed_sweep(g: dict, workers: int) -> tuple:
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    # Warm the workers (import flashlab) so that start-up is not counted.
    client.run(lambda: __import__("flashlab"))
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        table = flashlab.sweep(g, client=client, results=Path(d) / "s")
        wall = time.perf_counter() - t0
        point_s = sum(json.loads(p.read_text())["wall_s"] for p in (Path(d) / "s" / "points").glob("*/point.json"))
    client.close()
    cluster.close()
    assert (table.point_status == "ok").all(), table[table.point_status != "ok"]
    return wall, point_s, len(table)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--io-count", type=int, help="random 4 KiB writes per point (default: calibrated to about 1 s)")
    args = ap.parse_args()

    io_count = args.io_count or calibrate()
    heavy = grid(args.points, io_count, prefill=True)
    w1, p1, n = timed_sweep(heavy, 1)
    w2, p2, _ = timed_sweep(heavy, 2)
    print(f"{n} points of {io_count} random 4 KiB writes, {p1 / n:.2f} s each (mean point wall time, 1 worker)")
    print(f"1 worker:  {w1:7.2f} s")
    print(f"2 workers: {w2:7.2f} s   speed-up {w1 / w2:.2f}x (target >= 1.8x)")

    light = grid(args.points, 10, prefill=False)
    wl, pl, n = timed_sweep(light, 1)
    print(f"{n} near-empty points on 1 worker: {wl:.2f} s, of which {pl:.2f} s inside points")
    print(f"per-point overhead (scheduling, transfer, table): {(wl - pl) / n * 1000:.1f} ms (target < 50 ms)")


if __name__ == "__main__":
    main()
