"""``flashlab.sweep``: a grid's points as Dask tasks.

The grid expansion and the execution of a point are the Rust code of
``flashlab sweep`` (crate flashlab-sweep); this module only schedules points
on a Dask cluster and gathers their outcomes into the same table.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import pandas as pd

from . import _native
from ._native import FlashlabError

GridLike = Union[str, os.PathLike, Mapping[str, Any]]


def load_grid(grid: GridLike) -> Dict[str, Any]:
    """Checks a grid (a TOML file, or a dict with the same keys) and returns it resolved.

    Raises:
        FlashlabError: the grid is malformed (one line naming the problem).
    """
    if isinstance(grid, Mapping):
        return json.loads(_native.parse_grid(json.dumps(dict(grid)), os.getcwd(), str(grid.get("name", "sweep"))))
    return json.loads(_native.load_grid(os.fspath(grid)))


def _run_point(point_json: str, workload_json: str, records: bool, root: str) -> str:
    """One Dask task: run one point (the GIL is released inside).

    A task carries its point and the sweep's workload, not the whole grid:
    with the grid in every task, a sweep's payload grew with the square of
    its points (593 MB at 10,000 points). A point whose own files fail is a
    failed outcome, not an exception, so the sweep goes on.
    """
    from flashlab import _native as native  # imported on the worker

    return native.run_point(point_json, workload_json, records, root)


def _point_tasks(grid_json: str) -> List[Tuple[Dict[str, Any], str, str, bool]]:
    """Each point of a resolved grid with what its task needs: (point, point JSON, workload JSON, records)."""
    grid = json.loads(grid_json)
    workload_json = json.dumps(grid["workload"])
    records = bool(grid.get("records", True))
    return [(p, json.dumps(p), workload_json, records) for p in json.loads(_native.grid_points(grid_json))]


#: Dask settings of the LocalCluster that :func:`default_client` starts.
#: A point is one long native call with the GIL released, so the worker's
#: statistical profiler (a Python stack sample every 10 ms) records nothing
#: useful, and memory is checked once a second rather than ten times: on a
#: 2-core machine these periodic tasks took 3.8 % of a core per idle worker.
#: Every Dask server (the scheduler, each worker) also checks its event
#: loop's health every 20 ms by default; that check only feeds a warning
#: when the loop stalls for 3 s (`distributed.admin.tick.limit`) and a
#: diagnostic figure, so once a second does the same job. It was most of
#: what was left: an idle 2-worker cluster used 7.5 % of a core with
#: 50 wake-ups a second per worker, and 1.6 % with 4 once it was changed,
#: and in a 40-point sweep on 2 workers the CPU spent outside points fell
#: from 3.3 s to 1.1 s (bench/sweep_scaling.py; docs/python.md, "Speed").
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.tick.interval": "1s",
}


def default_client(n_workers: Optional[int] = None):  # pragma: no cover - exercised through sweep()
    """A LocalCluster with ``n_workers`` (default: one per CPU this process may
    use) single-threaded worker processes, set up with
    :data:`LOCAL_CLUSTER_CONFIG`, and a client to it."""
    import dask
    from dask.distributed import Client, LocalCluster

    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = LocalCluster(
            n_workers=n_workers or _usable_cpus(), threads_per_worker=1, dashboard_address=None
        )
        return Client(cluster)


def _usable_cpus() -> int:
    """CPUs this process may run on: a cpuset or `taskset` can allow fewer than the machine has."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def sweep(
    grid: GridLike,
    client: Any = None,
    results: Optional[Union[str, os.PathLike]] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Runs every point of a grid as Dask tasks and returns the tidy table.

    Args:
        grid: a grid file (TOML, as ``flashlab sweep`` reads) or a dict with its keys.
        client: a ``dask.distributed.Client``; by default a LocalCluster with
            one single-threaded worker per core, closed at the end. Point it
            at any cluster (an address, dask-jobqueue, dask-kubernetes): each
            worker writes its points under ``results``, so on several
            machines that must be a shared file system.
        results: the sweep directory (default ``results/sweep-NAME``); points
            already done there are not run again.
        progress: print a line per finished point.

    Returns:
        One row per run of every point (one row per point for a single-run
        workload): ``index``, ``point``, ``seed``, the parameters, ``run``,
        ``point_status``, ``status``, the metrics (``iops``,
        ``latency_mean_ns``, ``latency_p99_ns``, ``write_amplification``,
        ``flash_erases``...) and ``error``. Also written as ``sweep.csv``
        (and ``sweep.parquet`` when pyarrow is installed) in ``results``.

    A grid whose workload is a paper suite (``[suite]``, or ``"suite":
    {"name": "uflip", "quick": True, ...}`` in a dict) gives one row per
    point: ``run`` is the suite's name and the metric columns are the
    numeric values of the suite's summary by path (``table3.rw_ms``,
    ``findings.0.measured``...), flattened by the same Rust code as the CLI's.

    A failing point is a row with ``point_status == "failed"`` and its
    error (also when its own files cannot be written, or its task dies);
    the other points complete and the table is written. Points run under
    a lock each, so a second sweep into the same directory (or a resumed
    one while a killed client's tasks still run) waits for a point and then
    finds it done; a point written by another version of flashlab is run
    again.

    ``records = false`` in the grid (``"records": False`` in a dict) keeps
    no per-IO records in the points' directories: each point is one thread
    and writes no ``records.bin``; the table is the same except that the
    percentiles come from the latency histogram (within 0.05 %).
    """
    resolved = load_grid(grid)
    if resolved.get("target"):
        raise FlashlabError(
            f"the grid runs on a real device or file ({resolved['target']['path']}): its points must run one at a time, "
            "and Dask would run them at once; run it with `flashlab sweep GRID`"
        )
    grid_json = json.dumps(resolved)
    tasks = _point_tasks(grid_json)
    root = Path(results) if results is not None else Path("results") / f"sweep-{resolved['name']}"
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    (root / "grid.json").write_text(json.dumps(resolved, indent=1) + "\n")

    own = client is None
    if own:
        client = default_client()
    try:
        from dask.base import tokenize
        from dask.distributed import as_completed

        # A Dask key names one result on the whole cluster: while any client
        # still holds a future of that key, submitting it again returns the
        # held result instead of running the task. The point id alone names
        # the configuration, not where it is written nor whether records are
        # kept, so two sweeps of one grid into two directories shared their
        # tasks and the second directory missed points. The key names the
        # work: the resolved grid, the point and the sweep directory. And
        # this call: a sweep run again right away (a resume) got the first
        # call's held results back without its tasks looking at the disk.
        sweep_token = tokenize(grid_json, str(root), uuid.uuid4().hex)[:12]
        futures = {
            client.submit(
                _run_point, point_json, workload_json, records, str(root),
                key=f"flashlab-point-{p['id']}-{sweep_token}", pure=False,
            ): (p, point_json)
            for p, point_json, workload_json, records in tasks
        }
        outcomes: List[str] = []
        for fut in as_completed(list(futures)):
            p, point_json = futures[fut]
            try:
                text = fut.result()
            except Exception as e:  # the task died (worker lost, cluster error): that row fails, the sweep goes on
                text = _native.failed_outcome(point_json, str(root), f"the point's task failed: {type(e).__name__}: {e}")
            outcomes.append(text)
            if progress:
                o = json.loads(text)
                state = "done earlier" if o.get("resumed") else o["status"]
                print(f"point {o['point']['index'] + 1}/{len(tasks)} {o['point']['id']}: {state} {o.get('error') or ''}")
    finally:
        if own:
            cluster = client.cluster
            client.close()
            cluster.close()
    csv = root / "sweep.csv"
    _native.write_table(grid_json, outcomes, str(csv))
    table = pd.read_csv(csv, keep_default_na=False, na_values=[""])
    try:
        table.to_parquet(root / "sweep.parquet", index=False)
    except ImportError:
        pass  # no pyarrow/fastparquet: the CSV is the table
    return table
