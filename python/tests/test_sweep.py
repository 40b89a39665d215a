"""flashlab.sweep on a Dask LocalCluster, and its agreement with `flashlab sweep`."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

import flashlab

# Small, quick points: a prefilled 128 MiB device under random 4 KiB writes.
GRID = {
    "name": "small",
    "device": "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on",
    "seeds": [1, 2],
    "parameters": {"op": [0.15, 0.3], "gc": ["greedy", "fifo"]},
    "run": [{"pattern": "RW", "io_size": "4KiB", "io_count": 6000, "io_ignore": 2000}],
}

METRICS = ["ios", "iops", "latency_mean_ns", "latency_p99_ns", "write_amplification", "flash_erases"]


def test_a_sweep_returns_one_row_per_point_with_its_parameters(client, tmp_path):
    table = flashlab.sweep(GRID, client=client, results=tmp_path / "s")
    assert len(table) == 2 * 2 * 2
    assert list(table["index"]) == list(range(8))
    got = set(zip(table["op"], table["gc"], table["seed"]))
    assert got == {(op, gc, s) for op in (0.15, 0.3) for gc in ("greedy", "fifo") for s in (1, 2)}
    assert (table["point_status"] == "ok").all()
    assert (table["ios"] == 4000).all()
    # More over-provisioning, less write amplification (same policy, same seed).
    by = table.set_index(["gc", "seed", "op"])["write_amplification"]
    for gc in ("greedy", "fifo"):
        for s in (1, 2):
            assert by[(gc, s, 0.3)] < by[(gc, s, 0.15)]
    assert (tmp_path / "s" / "sweep.csv").exists()


def test_the_same_grid_twice_gives_identical_metrics(client, tmp_path):
    a = flashlab.sweep(GRID, client=client, results=tmp_path / "a")
    b = flashlab.sweep(GRID, client=client, results=tmp_path / "b")
    # Both ran every point: the second is not the first's results again.
    for d in ("a", "b"):
        assert {p.name for p in (tmp_path / d / "points").iterdir()} == set(a["point"]), d
    pd.testing.assert_frame_equal(a[["point"] + METRICS], b[["point"] + METRICS])
    # Different seeds are different experiments.
    s1 = a[a.seed == 1][METRICS[2:4]].to_numpy()
    s2 = a[a.seed == 2][METRICS[2:4]].to_numpy()
    assert (s1 != s2).any()


def test_two_sweeps_of_one_grid_at_once_each_write_every_point(client, tmp_path):
    # Same grid, same client, two directories, submitted together: neither
    # sweep may take the other's results for its own directory.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        tables = list(pool.map(lambda d: flashlab.sweep(GRID, client=client, results=tmp_path / d), ["x", "y"]))
    for d, table in zip(["x", "y"], tables):
        written = {p.name for p in (tmp_path / d / "points").iterdir() if (p / "point.json").exists()}
        assert written == set(table["point"]), d
    pd.testing.assert_frame_equal(tables[0][["point"] + METRICS], tables[1][["point"] + METRICS])


def test_a_failing_point_does_not_stop_the_others(client, tmp_path):
    grid = dict(GRID, seeds=[1], parameters={"op": [0.01, 0.3]})  # op=0.01 leaves too few spare blocks
    table = flashlab.sweep(grid, client=client, results=tmp_path / "f")
    assert len(table) == 2
    bad = table[table.op == 0.01].iloc[0]
    good = table[table.op == 0.3].iloc[0]
    assert bad.point_status == "failed"
    assert "over-provisioning" in bad.error
    assert good.point_status == "ok" and good.ios == 4000


def test_a_sweep_without_records_keeps_its_metrics_and_writes_no_records(client, tmp_path):
    kept = flashlab.sweep(GRID, client=client, results=tmp_path / "k")
    lean = flashlab.sweep(dict(GRID, records=False), client=client, results=tmp_path / "n")
    assert not list((tmp_path / "n").rglob("records.bin"))
    assert len(list((tmp_path / "k").rglob("records.bin"))) == len(kept)
    exact = ["ios", "iops", "latency_mean_ns", "latency_max_ns", "write_amplification", "flash_erases"]
    pd.testing.assert_frame_equal(kept[["point"] + exact], lean[["point"] + exact])
    # Percentiles come from the histogram: within half a bucket (2^-11).
    for col in ("latency_p50_ns", "latency_p99_ns", "latency_p999_ns"):
        assert ((lean[col] - kept[col]).abs() <= kept[col] / 2048).all(), col
    # A point's directory still loads: its statistics, and no per-IO records.
    point = flashlab.read_results(tmp_path / "n" / "points" / lean.iloc[0]["point"] / "results")
    assert len(point.records) == 0
    assert point.runs["ios"].iloc[0] == 4000


def test_a_finished_sweep_resumes_without_running_points_again(client, tmp_path):
    first = flashlab.sweep(GRID, client=client, results=tmp_path / "r")
    marker = next((tmp_path / "r" / "points").glob("*/point.json"))
    before = marker.stat().st_mtime_ns
    again = flashlab.sweep(GRID, client=client, results=tmp_path / "r")
    assert marker.stat().st_mtime_ns == before
    pd.testing.assert_frame_equal(first, again)


def test_python_and_cli_sweeps_give_the_same_table(client, tmp_path, flashlab_bin):
    grid_file = tmp_path / "g.toml"
    grid_file.write_text(
        """
name = "small"
device = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
seeds = [1, 2]
[parameters]
op = [0.15, 0.3]
gc = ["greedy", "fifo"]
[[run]]
pattern = "RW"
io_size = "4KiB"
io_count = 6000
io_ignore = 2000
"""
    )
    subprocess.run([flashlab_bin, "sweep", str(grid_file), "--jobs", "2", "--results", str(tmp_path / "cli"), "-q"], check=True)
    cli = pd.read_csv(tmp_path / "cli" / "sweep.csv")
    py = flashlab.sweep(grid_file, client=client, results=tmp_path / "py")
    pd.testing.assert_frame_equal(cli[["point", "op", "gc"] + METRICS], py[["point", "op", "gc"] + METRICS])


def test_a_bad_grid_is_one_line_naming_the_problem():
    with pytest.raises(flashlab.FlashlabError, match="override opp=0.1: unknown field .opp."):
        flashlab.sweep(dict(GRID, parameters={"opp": [0.1]}))
    with pytest.raises(flashlab.FlashlabError, match="no workload"):
        flashlab.load_grid({"device": "ssd-m"})


def test_a_grid_on_a_real_file_is_refused_for_dask_and_sent_to_the_cli(tmp_path):
    scratch = tmp_path / "scratch.img"
    scratch.write_bytes(b"\x5a" * (1 << 20))
    grid = {"target": str(scratch), "parameters": {"io_size": ["4KiB", "8KiB"]},
            "run": [{"pattern": "RR", "io_count": 16}]}
    # The grid itself is valid (the CLI runs it one point at a time)...
    assert flashlab.load_grid(grid)["target"]["path"] == str(scratch)
    # ...but Dask would run its points at once on one device.
    with pytest.raises(flashlab.FlashlabError, match="one at a time.*flashlab sweep GRID"):
        flashlab.sweep(grid, results=tmp_path / "sweep")
    assert not (tmp_path / "sweep").exists()


# A reduced uFLIP (two micro-benchmarks, short calibration) on two devices.
SUITE_GRID = {
    "name": "uflip-op",
    "device": "ssd-m,capacity=128MiB,channels=2,cache=off",
    "seeds": [7],
    "parameters": {"op": [0.15, 0.3]},
    "suite": {
        "name": "uflip",
        "quick": True,
        "options": {"benchmarks": ["granularity", "locality"], "calibration_ios": 512, "max_ios": 1024},
    },
}

SUITE_GRID_TOML = """
name = "uflip-op"
device = "ssd-m,capacity=128MiB,channels=2,cache=off"
seeds = [7]
[parameters]
op = [0.15, 0.3]
[suite]
name = "uflip"
quick = true
[suite.options]
benchmarks = ["granularity", "locality"]
calibration_ios = 512
max_ios = 1024
"""


def test_a_suite_sweep_on_dask_gives_the_cli_table(client, tmp_path, flashlab_bin):
    py = flashlab.sweep(SUITE_GRID, client=client, results=tmp_path / "py")
    assert len(py) == 2
    assert list(py["op"]) == [0.15, 0.3]
    assert (py["run"] == "uflip").all() and (py["point_status"] == "ok").all()
    # Table 3's random-write cost, from each point's uFLIP summary.
    assert (py["table3.rw_ms"] > 0).all()
    grid_file = tmp_path / "g.toml"
    grid_file.write_text(SUITE_GRID_TOML)
    subprocess.run([flashlab_bin, "sweep", str(grid_file), "--jobs", "2", "--results", str(tmp_path / "cli"), "-q"], check=True)
    cli = pd.read_csv(tmp_path / "cli" / "sweep.csv", keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(cli, py)


def test_a_bad_suite_is_one_line_naming_the_fix():
    bad = dict(SUITE_GRID, suite={"name": "uflip", "options": {"max_io": 1}})
    with pytest.raises(flashlab.FlashlabError, match="uflip has no option `max_io`; its options are"):
        flashlab.sweep(bad)


def test_the_default_cluster_leaves_out_periodic_work_a_point_does_not_need():
    # A point is one native call with the GIL released: a worker's Python
    # profiler and a 20 ms event-loop health check only take CPU from the
    # points (docs/python.md, "Speed"). The settings must reach the worker
    # processes, not only the client's config.
    from flashlab._sweep import default_client

    client = default_client(1)
    try:
        def periodic(dask_worker):
            return {name: pc.callback_time for name, pc in dask_worker.periodic_callbacks.items()}

        (callbacks,) = client.run(periodic).values()
        assert callbacks["tick"] == 1000
        assert "profile" not in callbacks
        assert client.cluster.scheduler.periodic_callbacks["tick"].callback_time == 1000
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
