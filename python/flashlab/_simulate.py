"""``flashlab.simulate``: one workload on the simulator, in this process."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _native
from ._results import Results, read_results

Pattern = Union[str, Mapping[str, Any], Sequence[Mapping[str, Any]]]


@dataclass
class Simulation:
    """What :func:`simulate` returns.

    Attributes:
        stats: per-run statistics (one row per run; ``iops``, ``latency.p99_ns``, ...).
        device_stats: the simulator's accounting of each run (flash operations
            by cause, ``write_amplification``, erase counts...), by run name.
        records: every IO (``run``, ``index``, ``submit_ns``, ``latency_ns``, ``mode``, ...).
        results: the results directory it was written to, loaded.
    """

    stats: pd.DataFrame
    device_stats: Dict[str, Dict[str, Any]]
    records: pd.DataFrame
    results: Results

    def records_array(self, run: Optional[str] = None) -> np.ndarray:
        """A run's records as a memory-mapped numpy structured array (no copy); the first run by default."""
        names = list(self.stats["run"])
        return self.results.records_array(run if run is not None else names[0])


def _workload(pattern: Optional[Pattern], trace: Optional[Union[str, os.PathLike, Mapping[str, Any]]]) -> Dict[str, Any]:
    if (pattern is None) == (trace is None):
        raise ValueError("give exactly one of pattern= (e.g. \"RW\" or {\"pattern\": \"RW\", \"io_size\": \"4KiB\"}) and trace= (a trace file)")
    if trace is not None:
        spec = dict(trace) if isinstance(trace, Mapping) else {"path": os.fspath(trace)}
        spec["path"] = os.path.abspath(os.fspath(spec["path"]))
        return {"kind": "trace", **spec}
    if isinstance(pattern, str):
        runs: List[Dict[str, Any]] = [{"pattern": pattern}]
    elif isinstance(pattern, Mapping):
        runs = [dict(pattern)]
    else:
        runs = [dict(p) for p in pattern]
    return {"kind": "patterns", "runs": runs}


def simulate(
    device: str = "sim:ssd-m",
    pattern: Optional[Pattern] = None,
    trace: Optional[Union[str, os.PathLike, Mapping[str, Any]]] = None,
    seed: int = 42,
    results: Optional[Union[str, os.PathLike]] = None,
) -> Simulation:
    """Runs a pattern or a trace on the simulator and returns its statistics and records.

    Args:
        device: a simulated device, as ``--device``: ``"sim:ssd-m,op=0.15"``
            (the ``sim:`` prefix is optional).
        pattern: a baseline name (``"RW"``), a dict with the keys of a
            pattern file's ``[[run]]`` (``{"pattern": "RW", "io_size": "4KiB",
            "io_count": 10000}``), or a list of such dicts run in order on the
            same device.
        trace: a trace file (any format ``flashlab replay`` reads), or a dict
            with ``path`` and ``closed_loop``, ``queue_depth``, ``speed``,
            ``fit``, ``format``.
        seed: the seed of the simulator and of every pattern that does not set its own.
        results: the results directory to write (must not exist or be empty);
            a temporary directory by default.

    Raises:
        FlashlabError: the CLI's one-line message (unknown profile, bad pattern...).

    The GIL is released while the simulation runs, so threads can run several at once.
    """
    workload = _workload(pattern, trace)
    out = Path(results) if results is not None else Path(tempfile.mkdtemp(prefix="flashlab-sim-")) / "results"
    runs = json.loads(_native.simulate(device, json.dumps(workload), int(seed), os.fspath(out)))
    loaded = read_results(out)
    return Simulation(
        stats=loaded.runs,
        device_stats={r["name"]: r.get("device_stats") or {} for r in runs},
        records=loaded.records,
        results=loaded,
    )
