#!/usr/bin/env python3
"""Load a flashlab results directory with pandas and numpy.

    python3 docs/examples/load_results.py RESULTS_DIR [EXPORTED.csv]

Reads the manifest, every run's per-IO records (records.bin, read with one
numpy call) and the per-run statistics, recomputes the mean latency from the
records, and checks it against the saved statistics. With a CSV written by
`flashlab export` or `flashlab run --csv`, also loads that with
pandas.read_csv and checks that it holds the same IOs.
"""

import json
import pathlib
import sys

import numpy as np
import pandas as pd

# records.bin, schema 1: a 32-byte header, then 40-byte little-endian records.
RECORD = np.dtype([
    ("index", "<u8"), ("submit_ns", "<u8"), ("complete_ns", "<u8"),
    ("offset_bytes", "<u8"), ("size_bytes", "<u4"), ("stream", "<u2"),
    ("mode", "u1"), ("flags", "u1"),
])
MODES = {0: "read", 1: "write", 2: "trim"}


def load_run(run_dir: pathlib.Path) -> pd.DataFrame:
    raw = np.fromfile(run_dir / "records.bin", dtype=np.uint8)
    assert raw[:8].tobytes() == b"FLREC\0\0\x01", "not a schema-1 records file"
    body = raw[32:]
    body = body[: len(body) // RECORD.itemsize * RECORD.itemsize]  # drop a torn last record
    df = pd.DataFrame(body.view(RECORD))
    df["latency_ns"] = df["complete_ns"] - df["submit_ns"]
    df["mode"] = df["mode"].map(MODES)
    df["warmup"] = (df["flags"] & 1) != 0
    df["error"] = (df["flags"] & 2) != 0
    return df


def main() -> None:
    root = pathlib.Path(sys.argv[1])
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["schema_version"] == 1
    print(f"device {manifest['device']['name']} ({manifest['device']['kind']}), engine {manifest['engine']}")
    frames = []
    for run in manifest["runs"]:
        df = load_run(root / run["dir"])
        stats = json.loads((root / run["dir"] / "run.json").read_text())["stats"]
        measured = df[~df["warmup"] & ~df["error"]]
        mean = measured["latency_ns"].mean()
        assert len(measured) == stats["ios"], (len(measured), stats["ios"])
        assert abs(mean - stats["latency"]["mean_ns"]) <= 1e-6 * mean, (mean, stats["latency"]["mean_ns"])
        print(f"{run['name']}: {len(df)} IOs ({len(measured)} measured), mean {mean / 1e3:.1f} us, "
              f"p99 {measured['latency_ns'].quantile(0.99) / 1e3:.1f} us")
        frames.append(df.assign(run=run["name"]))
    if len(sys.argv) > 2:
        csv = pd.read_csv(sys.argv[2])
        records = pd.concat(frames)
        assert len(csv) == len(records), (len(csv), len(records))
        assert (csv["latency_ns"].to_numpy() == records["latency_ns"].to_numpy()).all()
        print(f"{sys.argv[2]}: {len(csv)} rows, same IOs as records.bin")


if __name__ == "__main__":
    main()
