#!/usr/bin/env python3
"""Time and bytes written by `flashlab run` of a long pattern file: a baseline
binary (e.g. main's, which rewrote manifest.json at every run's start and end)
against a candidate (the manifest's journal), interleaved in the same session.

    python3 bench/manifest_journal.py --baseline /path/to/old/flashlab \
        --candidate target/release/flashlab [--runs 2000] [--rounds 2]

Each measurement runs the binary under `sh -c 'BIN ...; cat /proc/$$/io'`:
Linux adds a reaped child's IO accounting to its parent, so the shell's
counters hold the run's `wchar` (bytes passed to write calls) and
`write_bytes` (bytes sent towards storage). Wall time is end to end. The
machine is shared and noisy: compare only figures of the same session.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time


def pattern_file(path: str, runs: int) -> None:
    with open(path, "w") as f:
        f.write('[defaults]\nio_size = "4KiB"\nio_count = 2\npattern = "SR"\n')
        for i in range(runs):
            f.write(f'[[run]]\nname = "r{i}"\n')


def measure(binary: str, workdir: str, results: str) -> dict:
    cmd = (
        f"'{binary}' run -q --device sim:ssd-m,capacity=1GiB --pattern-file p.toml "
        f"--results '{results}' >/dev/null && cat /proc/$$/io"
    )
    t = time.monotonic()
    out = subprocess.run(["sh", "-c", cmd], cwd=workdir, capture_output=True, text=True)
    wall = time.monotonic() - t
    if out.returncode != 0:
        raise SystemExit(f"{binary} failed: {out.stderr.strip()}")
    io = dict(line.split(": ") for line in out.stdout.strip().splitlines())
    size = sum(
        os.path.getsize(os.path.join(d, f))
        for d, _, files in os.walk(os.path.join(workdir, results))
        for f in files
    )
    return {
        "wall_s": wall,
        "wchar": int(io["wchar"]),
        "write_bytes": int(io["write_bytes"]),
        "dir_bytes": size,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="manifest-journal-")
    try:
        pattern_file(os.path.join(work, "p.toml"), a.runs)
        rows = []
        for r in range(a.rounds):
            for label, binary in (("baseline", a.baseline), ("candidate", a.candidate)):
                results = f"{label}-{r}"
                m = measure(os.path.abspath(binary), work, results)
                shutil.rmtree(os.path.join(work, results))
                rows.append((label, r, m))
                print(
                    f"{label:9} round {r}: {m['wall_s']:7.2f} s  wchar {m['wchar'] / 1e6:9.1f} MB  "
                    f"write_bytes {m['write_bytes'] / 1e6:9.1f} MB  final directory {m['dir_bytes'] / 1e6:6.1f} MB",
                    flush=True,
                )
        for label in ("baseline", "candidate"):
            ms = [m for lab, _, m in rows if lab == label]
            best = min(m["wall_s"] for m in ms)
            wchar = sum(m["wchar"] for m in ms) / len(ms)
            print(f"{label}: best {best:.2f} s, mean wchar {wchar / 1e6:.1f} MB for {a.runs} runs")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
