"""The attacks that found wrong rows marked "ok", unbounded inputs and
unclear failures in the Python package, as regression tests."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import flashlab
from flashlab import _native
from flashlab._sweep import _point_tasks, load_grid

GRID = {
    "name": "safe",
    "device": "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on",
    "seeds": [1, 2],
    "parameters": {"op": [0.15, 0.3]},
    "run": [{"pattern": "RW", "io_size": "4KiB", "io_count": 6000, "io_ignore": 2000}],
}


def test_two_sweeps_into_one_directory_leave_no_wrong_ok_row(client, tmp_path):
    # Duplicate seeds too: before, copies of one point ran at once in one directory.
    grid = dict(GRID, seeds=[1, 1, 2])
    with ThreadPoolExecutor(2) as pool:
        tables = list(pool.map(lambda _: flashlab.sweep(grid, client=client, results=tmp_path / "one"), range(2)))
    for table in tables:
        assert len(table) == 4
        assert (table["point_status"] == "ok").all()
        assert (table["ios"] == 4000).all()
    assert sorted(p.name for p in (tmp_path / "one" / "points").iterdir()) == sorted(tables[0]["point"])


def test_a_point_whose_files_fail_is_a_failed_row_and_the_sweep_goes_on(client, tmp_path):
    root = tmp_path / "io"
    bad = _point_tasks(json.dumps(load_grid(GRID)))[0][0]["id"]
    # Its working directory's name is taken by a file: the point cannot be written.
    (root / ".points-work").mkdir(parents=True)
    (root / ".points-work" / f"{bad}.partial").write_text("not a directory")
    table = flashlab.sweep(GRID, client=client, results=root)
    assert len(table) == 4
    failed = table[table.point == bad].iloc[0]
    assert failed.point_status == "failed"
    assert f"{bad}.partial" in failed.error or "Not a directory" in failed.error
    assert (table[table.point != bad]["point_status"] == "ok").all()
    assert (root / "sweep.csv").exists()


def test_python_points_record_the_commit_and_resume_reruns_another_versions(client, tmp_path):
    root = tmp_path / "v"
    flashlab.sweep(dict(GRID, seeds=[1], parameters={"op": [0.3]}), client=client, results=root)
    marker = next((root / "points").glob("*/point.json"))
    written = json.loads(marker.read_text())
    assert written["git_commit"] and written["git_commit"] != "unknown"
    written["git_commit"] = "0123456789ab"
    marker.write_text(json.dumps(written))
    flashlab.sweep(dict(GRID, seeds=[1], parameters={"op": [0.3]}), client=client, results=root)
    assert json.loads(marker.read_text())["git_commit"] != "0123456789ab"


def test_a_task_carries_its_point_not_the_grid():
    # 5,000 points: each task's payload stays the size of one point.
    grid = dict(GRID, seeds=list(range(1, 1001)), parameters={"op": [0.15, 0.2, 0.25, 0.3, 0.35]})
    tasks = _point_tasks(json.dumps(load_grid(grid)))
    assert len(tasks) == 5000
    assert max(len(p) + len(w) for _, p, w, _ in tasks) < 1500


def test_a_grid_of_too_many_points_is_refused_before_it_is_expanded():
    grid = dict(GRID, parameters={f"p{k}": [0, 1] for k in range(64)})
    started = time.monotonic()
    with pytest.raises(flashlab.FlashlabError, match="more than 2\\^64 points, above the limit of 100000"):
        flashlab.sweep(grid)
    assert time.monotonic() - started < 5


def test_simulate_of_dev_zero_as_a_trace_is_refused_at_once():
    started = time.monotonic()
    with pytest.raises(flashlab.FlashlabError, match="/dev/zero"):
        flashlab.simulate("sim:ssd-m,capacity=128MiB,channels=2", trace={"path": "/dev/zero", "format": "msr"})
    assert time.monotonic() - started < 5


def test_flashlab_bin_is_no_longer_needed_and_says_so():
    # A validate: target is scored in-process: a binary given is not run.
    with pytest.warns(DeprecationWarning, match="flashlab_bin is no longer used"):
        with pytest.raises(ValueError, match="give base 'hs-mtron-7525'"):
            flashlab.fit("validate:hs-mtron-7525", "ssd-m", {"op": (0.1, 0.2)}, trials=1, flashlab_bin="/no/such/flashlab")


def test_a_candidate_of_an_unknown_profile_is_an_error_row_not_a_crash():
    from flashlab._fit import _validate_point

    out = json.loads(_validate_point("no-such-profile", ""))
    assert "no published numbers" in out["error"]
    out = json.loads(_validate_point("hs-mtron-7525", "no_such_key=1"))
    assert "no_such_key" in out["error"]


KILLED_CLIENT = """
import json, sys
from dask.distributed import Client
import flashlab
flashlab.sweep(json.loads(sys.argv[2]), client=Client(sys.argv[1]), results=sys.argv[3])
"""


def test_a_resume_while_a_killed_clients_tasks_still_run_gives_only_whole_points(client, tmp_path):
    # The attack: a client is killed (kill -9) while its points run on the
    # cluster; the cluster keeps running those tasks, and a resumed sweep
    # starts the same points at once. Before the point locks and the
    # rename-into-place, the disk then held short points that a later resume
    # called "ok". Now every row is ok only with the planned IO count.
    import os
    import signal
    import subprocess
    import sys

    grid = dict(GRID, seeds=[1, 2], parameters={"op": [0.15]},
                run=[{"pattern": "RW", "io_size": "4KiB", "io_count": 300_000, "io_ignore": 1000}])
    root = tmp_path / "killed"
    killed = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, client.scheduler.address, json.dumps(grid), str(root)],
    )
    work = root / ".points-work"
    deadline = time.monotonic() + 120
    # Kill it once a point is being written (its working directory exists).
    while not (work.is_dir() and any(work.iterdir())):
        assert killed.poll() is None, "the client finished before any point started: make points longer"
        assert time.monotonic() < deadline, "no point started within 120 s"
        time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    table = flashlab.sweep(grid, client=client, results=root)
    assert len(table) == 2
    assert (table["point_status"] == "ok").all(), table[["point", "point_status", "error"]]
    assert (table["ios"] == 299_000).all(), table[["point", "ios"]]
    # And the directory says the same to a third look (a resume reads only the disk).
    again = flashlab.sweep(grid, client=client, results=root)
    assert (again["ios"] == 299_000).all()
