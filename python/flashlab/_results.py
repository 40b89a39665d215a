"""Reading results directories (runs, suites, replays, sweeps) into pandas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np
import pandas as pd

#: One per-IO record of ``records.bin`` (docs/results-format.md): 40 bytes, little-endian.
RECORD_DTYPE = np.dtype(
    [
        ("index", "<u8"),
        ("submit_ns", "<u8"),
        ("complete_ns", "<u8"),
        ("offset_bytes", "<u8"),
        ("size_bytes", "<u4"),
        ("stream", "<u2"),
        ("mode", "u1"),
        ("flags", "u1"),
    ]
)
RECORD_HEADER_BYTES = 32
RECORD_MAGIC = b"FLREC\0\0\x01"
MODES = np.array(["read", "write", "trim"])
FLAG_WARMUP = 1
FLAG_ERROR = 2

PathLike = Union[str, Path]


def read_records(path: PathLike) -> np.ndarray:
    """The records of one ``records.bin`` as a numpy structured array.

    The file is memory-mapped: no copy is made. A torn last record (a run
    killed mid-write) is dropped, as the Rust reader does.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(RECORD_HEADER_BYTES)
    if len(head) < RECORD_HEADER_BYTES or head[:8] != RECORD_MAGIC:
        raise ValueError(f"{path} is not a flashlab records file (bad header); it must come from a results directory")
    count = (size - RECORD_HEADER_BYTES) // RECORD_DTYPE.itemsize
    if count == 0:
        return np.zeros(0, dtype=RECORD_DTYPE)
    return np.memmap(path, dtype=RECORD_DTYPE, mode="r", offset=RECORD_HEADER_BYTES, shape=(count,))


def records_frame(records: np.ndarray, run: Optional[str] = None) -> pd.DataFrame:
    """Per-IO records as a DataFrame with ``latency_ns``, ``mode`` names and flag columns."""
    df = pd.DataFrame({name: records[name] for name in RECORD_DTYPE.names if name not in ("mode", "flags")})
    df["mode"] = pd.Categorical(MODES[records["mode"]], categories=list(MODES))
    df["latency_ns"] = records["complete_ns"] - records["submit_ns"]
    df["warmup"] = (records["flags"] & FLAG_WARMUP) != 0
    df["error"] = (records["flags"] & FLAG_ERROR) != 0
    if run is not None:
        df.insert(0, "run", run)
    return df


def _flatten(prefix: str, value: Any, out: Dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif not isinstance(value, list):
        out[prefix] = value


def run_row(summary: Dict[str, Any]) -> Dict[str, Any]:
    """One run's ``run.json`` as a flat row: statistics, then device accounting as ``device.*`` columns."""
    row: Dict[str, Any] = {"run": summary["name"], "status": summary["status"], "description": summary.get("description")}
    stats = dict(summary.get("stats", {}))
    by_mode = stats.pop("by_mode", {})
    _flatten("", stats, row)
    for mode, t in by_mode.items():
        _flatten(mode, t, row)
    if summary.get("device_stats"):
        _flatten("device", summary["device_stats"], row)
    if summary.get("error"):
        row["error"] = summary["error"]
    return row


#: The manifest's journal (docs/results-format.md): one JSON event per line.
JOURNAL_FILE = "manifest.jsonl"


def read_manifest(path: PathLike) -> Dict[str, Any]:
    """``manifest.json`` with its journal ``manifest.jsonl`` applied, as flashlab's own reader does.

    A command appends one line per run planned, started or finished and
    rewrites ``manifest.json`` when it ends; a killed one leaves the journal.
    A torn last line (no newline: the writer was killed mid-line) is ignored
    with a warning; a damaged line elsewhere raises ``ValueError`` naming the
    file and line.
    """
    import warnings

    path = Path(path)
    manifest = json.loads((path / "manifest.json").read_text())
    journal = path / JOURNAL_FILE
    if not journal.exists():
        return manifest
    data = journal.read_bytes()
    runs = manifest["runs"]
    lines = data.split(b"\n")
    for number, line in enumerate(lines[:-1], start=1):
        try:
            event = json.loads(line)
            kind, run = event["event"], event["run"]
            if kind == "planned":
                entry = {"name": event["name"], "dir": event["dir"], "status": "planned", "workload": event["workload"]}
                if run == len(runs):
                    runs.append(entry)
                elif run < len(runs) and runs[run]["name"] == event["name"]:
                    runs[run] = entry
                else:
                    raise ValueError(f"run {run} ('{event['name']}') does not fit the manifest's {len(runs)} runs")
            elif kind in ("started", "finished"):
                if run >= len(runs) or runs[run]["name"] != event["name"]:
                    raise ValueError(f"run {run} ('{event['name']}') was never planned")
                entry = runs[run]
                entry.pop("error", None)
                if kind == "started":
                    entry["status"] = "running"
                else:
                    entry["status"] = event["status"]
                    if event.get("error") is not None:
                        entry["error"] = event["error"]
                    if event.get("workload") is not None:
                        entry["workload"] = event["workload"]
            else:
                raise ValueError(f"unknown event '{kind}'")
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(
                f"{journal} line {number}: not a journal event ({e}); the results directory is damaged "
                "(only a torn last line is tolerated), restore it or re-run"
            ) from None
    if lines[-1]:
        warnings.warn(
            f"{journal} line {len(lines)} is torn ({len(lines[-1])} bytes without a newline: "
            "the writing process was killed mid-line); its event is ignored"
        )
    return manifest


class Results:
    """A results directory loaded into pandas.

    Attributes:
        path: the directory.
        manifest: ``manifest.json`` (``None`` for a sweep directory).
        runs: per-run statistics, one row per run (``run.json``, flattened;
            the simulator's accounting as ``device.*`` columns).
        summaries: the suite summaries (``NAME-summary.json``), by suite name.
        table3: the uFLIP Table 3 row as a one-row DataFrame, for a uFLIP suite.
        sweep: the tidy table (``sweep.csv``) of a sweep directory.
    """

    def __init__(self, path: PathLike):
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"results directory {self.path} does not exist; check the path")
        self.manifest: Optional[Dict[str, Any]] = None
        self.summaries: Dict[str, Any] = {}
        self.table3: Optional[pd.DataFrame] = None
        self.sweep: Optional[pd.DataFrame] = None
        self._records: Optional[pd.DataFrame] = None
        self._run_dirs: List[tuple] = []
        manifest = self.path / "manifest.json"
        sweep_csv = self.path / "sweep.csv"
        if manifest.exists():
            self.manifest = read_manifest(self.path)
            rows = []
            for entry in self.manifest["runs"]:
                d = self.path / entry["dir"]
                self._run_dirs.append((entry["name"], d))
                rj = d / "run.json"
                if rj.exists():
                    rows.append(run_row(json.loads(rj.read_text())))
                else:
                    rows.append({"run": entry["name"], "status": entry["status"]})
            self.runs = pd.DataFrame(rows)
            for f in sorted(self.path.glob("*-summary.json")):
                name = f.name[: -len("-summary.json")]
                self.summaries[name] = json.loads(f.read_text())
            uflip = self.summaries.get("uflip")
            if uflip and uflip.get("table3"):
                self.table3 = pd.DataFrame([uflip["table3"]], index=[uflip.get("device", "")])
        elif sweep_csv.exists():
            self.sweep = pd.read_csv(sweep_csv)
            frames = []
            for point in sorted((self.path / "points").glob("*/results")):
                sub = Results(point)
                self._run_dirs.extend((f"{point.parent.name}/{n}", d) for n, d in sub._run_dirs)
                frames.append(sub.runs.assign(point=point.parent.name))
            self.runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        else:
            raise ValueError(
                f"{self.path} is not a results directory (no manifest.json or sweep.csv); give a directory written by flashlab"
            )

    @property
    def records(self) -> pd.DataFrame:
        """Every run's per-IO records in one DataFrame (column ``run``), loaded on first use."""
        if self._records is None:
            frames = [
                records_frame(read_records(d / "records.bin"), run)
                for run, d in self._run_dirs
                if (d / "records.bin").exists()
            ]
            self._records = pd.concat(frames, ignore_index=True) if frames else records_frame(np.zeros(0, RECORD_DTYPE))
        return self._records

    def records_array(self, run: str) -> np.ndarray:
        """One run's records as a memory-mapped numpy structured array (no copy)."""
        for name, d in self._run_dirs:
            if name == run:
                if not (d / "records.bin").exists():
                    raise FileNotFoundError(
                        f"run {run!r} has no records.bin (a sweep grid with records = false keeps none); run it again with records kept"
                    )
                return read_records(d / "records.bin")
        raise KeyError(f"no run named {run!r}; runs are {[n for n, _ in self._run_dirs]}")

    def __repr__(self) -> str:
        kind = "sweep" if self.sweep is not None else "results"
        return f"<flashlab {kind} {self.path}: {len(self.runs)} runs>"


def read_results(path: PathLike) -> Results:
    """Loads a results directory: a run, a replay, a suite or a sweep.

    >>> r = flashlab.read_results("results/20261121-195914-RW")
    >>> r.runs[["run", "iops", "latency.mean_ns"]]
    >>> r.records.groupby("run").latency_ns.describe()
    """
    return Results(path)
