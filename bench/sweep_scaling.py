#!/usr/bin/env python3
"""Sweep scaling on Dask: 40 points of about a second with 1 and with 2
workers, and the per-point scheduling overhead from 40 near-empty points.

    python3 bench/sweep_scaling.py [--points 40] [--io-count N]
        [--flashlab target/release/flashlab] [--sim-bench target/release/examples/sim_bench]
        [--plain-dask]

Needs the flashlab Python package (pip install ./python) and dask[distributed].
Prints figures; it asserts nothing (targets: >= 1.8x with 2 workers, overhead
< 50 ms per point). Points are single-threaded simulator runs, so the speed-up
needs two idle cores: on a loaded machine it is lower, which is what the
optional figures are for:

- per sweep, the points' mean wall and CPU time (point.json `wall_s`,
  `cpu_s`): wall above CPU is a point waiting for a core, CPU rising with 2
  workers is a point getting slower itself (caches, memory, a shared core);
  the CPU the client process (scheduler, nannies) and the workers spent
  outside points;
- `--sim-bench BIN`: the control, `sim_bench --small` alone and two at once
  (wall), before and after the sweeps: how much of two cores this run had;
- `--flashlab BIN`: the same grid through `flashlab sweep --jobs 1/2` (the
  same Rust point code on threads, no Dask);
- `--plain-dask`: also 2 workers on a LocalCluster with Dask's default
  settings instead of `flashlab.sweep`'s default client.
"""

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import flashlab
from flashlab._sweep import default_client


def grid(points: int, io_count: int, prefill: bool) -> dict:
    return {
        "name": "scaling",
        "device": "ssd-m,capacity=512MiB,channels=2,cache=off" + (",prefill=on" if prefill else ""),
        "seeds": list(range(1, points + 1)),
        "run": [{"pattern": "RW", "io_size": "4KiB", "io_count": io_count}],
    }


def grid_toml(g: dict) -> str:
    run = g["run"][0]
    return (
        f'name = "{g["name"]}"\ndevice = "{g["device"]}"\nseeds = {g["seeds"]}\n'
        f'[[run]]\npattern = "{run["pattern"]}"\nio_size = "{run["io_size"]}"\nio_count = {run["io_count"]}\n'
    )


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


def points_of(root: Path) -> list:
    return [json.loads(p.read_text()) for p in (root / "points").glob("*/point.json")]


def cpu_of_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed_sweep(g: dict, workers: int, plain: bool = False) -> dict:
    if plain:
        from dask.distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None))
    else:
        client = default_client(workers)
    # Warm the workers (import flashlab) so that start-up is not counted.
    client.run(lambda: __import__("flashlab"))
    worker_cpu = lambda: sum(client.run(cpu_of_self).values())  # noqa: E731
    with tempfile.TemporaryDirectory() as d:
        w0, c0 = worker_cpu(), cpu_of_self()
        t0 = time.perf_counter()
        table = flashlab.sweep(g, client=client, results=Path(d) / "s")
        wall = time.perf_counter() - t0
        c1, w1 = cpu_of_self(), worker_cpu()
        pts = points_of(Path(d) / "s")
    cluster = client.cluster
    client.close()
    cluster.close()
    assert (table.point_status == "ok").all(), table[table.point_status != "ok"]
    n = len(pts)
    point_cpu = sum(p.get("cpu_s", 0.0) for p in pts)
    return {
        "wall": wall,
        "n": n,
        "point_wall": sum(p["wall_s"] for p in pts) / n,
        "point_cpu": point_cpu / n,
        "client_cpu": c1 - c0,
        "worker_extra_cpu": (w1 - w0) - point_cpu,
    }


def cli_sweep(flashlab_bin: str, g: dict, jobs: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "grid.toml").write_text(grid_toml(g))
        t0 = time.perf_counter()
        subprocess.run(
            [flashlab_bin, "sweep", str(Path(d) / "grid.toml"), "--jobs", str(jobs), "--results", str(Path(d) / "s"), "-q"],
            check=True,
        )
        wall = time.perf_counter() - t0
        pts = points_of(Path(d) / "s")
    n = len(pts)
    return {
        "wall": wall,
        "n": n,
        "point_wall": sum(p["wall_s"] for p in pts) / n,
        "point_cpu": sum(p.get("cpu_s", 0.0) for p in pts) / n,
    }


def control(sim_bench: str) -> str:
    """Wall time of one `sim_bench --small` alone, then of two started together."""
    out = []
    for k in (1, 2):
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sim_bench, "--small"], stdout=subprocess.DEVNULL) for _ in range(k)]
        for p in procs:
            p.wait()
        out.append(time.perf_counter() - t0)
    return f"control: sim_bench --small alone {out[0]:.2f} s, two at once {out[1]:.2f} s (1.00 = two free cores)  [{load()}]"


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def line(label: str, r: dict, base: dict = None) -> str:
    s = f"{label:<22} {r['wall']:7.2f} s"
    if base is not None:
        s += f"   speed-up {base['wall'] / r['wall']:.2f}x"
    s += f"   point wall {r['point_wall']:.3f} s, CPU {r['point_cpu']:.3f} s"
    if "client_cpu" in r:
        s += f"; outside points: client {r['client_cpu']:.2f} s, workers {r['worker_extra_cpu']:.2f} s CPU"
    return s + f"  [{load()}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--io-count", type=int, help="random 4 KiB writes per point (default: calibrated to about 1 s)")
    ap.add_argument("--flashlab", help="also time `flashlab sweep --jobs 1/2` with this binary")
    ap.add_argument("--sim-bench", help="control: `sim_bench --small` alone and two at once, with this binary")
    ap.add_argument("--plain-dask", action="store_true", help="also 2 workers on a LocalCluster with Dask's defaults")
    args = ap.parse_args()

    if args.sim_bench:
        print(control(args.sim_bench), flush=True)
    io_count = args.io_count or calibrate()
    heavy = grid(args.points, io_count, prefill=True)
    r1 = timed_sweep(heavy, 1)
    r2 = timed_sweep(heavy, 2)
    print(f"{r1['n']} points of {io_count} random 4 KiB writes, {r1['point_wall']:.2f} s each (mean point wall time, 1 worker)")
    print(f"1 worker:  {r1['wall']:7.2f} s")
    print(f"2 workers: {r2['wall']:7.2f} s   speed-up {r1['wall'] / r2['wall']:.2f}x (target >= 1.8x)")
    print(line("dask, 1 worker", r1))
    print(line("dask, 2 workers", r2, r1), flush=True)
    if args.plain_dask:
        print(line("dask defaults, 2 wkrs", timed_sweep(heavy, 2, plain=True), r1), flush=True)
    if args.flashlab:
        c1 = cli_sweep(args.flashlab, heavy, 1)
        print(line("flashlab sweep -j 1", c1))
        print(line("flashlab sweep -j 2", cli_sweep(args.flashlab, heavy, 2), c1), flush=True)
    if args.sim_bench:
        print(control(args.sim_bench), flush=True)

    light = grid(args.points, 10, prefill=False)
    rl = timed_sweep(light, 1)
    pl = rl["point_wall"] * rl["n"]
    print(f"{rl['n']} near-empty points on 1 worker: {rl['wall']:.2f} s, of which {pl:.2f} s inside points")
    print(f"per-point overhead (scheduling, transfer, table): {(rl['wall'] - pl) / rl['n'] * 1000:.1f} ms (target < 50 ms)")


if __name__ == "__main__":
    main()
