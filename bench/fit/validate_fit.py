#!/usr/bin/env python3
"""Grid search of a profile's parameters against its `flashlab validate` rows.

Every grid point runs `flashlab validate --profile PROFILE --json --set
OVERRIDES` (the same suites, plans, published numbers and tolerances as the
scoreboard) and records, per point: rows passed, the sum of the rows'
distances from their bands (validate's `distance`, 0 inside), and every
row's simulated value. Points are ranked by rows passed, then by distance.
The inputs (profile, fixed overrides, grid) and every point are written as
CSV so that the fit can be read and redone:

  bench/fit/validate_fit.py ssd-l --grid ftl.seq_logs=1,32 \\
      --grid ftl.merges_per_write=0,1 --out bench/fit/results/ssd-l.csv

`--flashlab` names the binary (default: $CARGO_TARGET_DIR/release/flashlab,
else target/release/flashlab).

Cross-validated error (always printed, and written next to --out as
NAME.cv.csv): for each figure (the rows of one `source`) in turn, the grid
point ranked best on every *other* row is chosen, and the held-out figure's
rows are scored with it. The grid is fixed before any row is seen, so
choosing from the same evaluated points leaks nothing from the held-out
figure; a grid point that wins only because of the figure it is scored on
shows up as held-out rows that fail. Printed: in-sample rows passed by the
best point, and held-out rows passed over all folds.
"""
import argparse
import csv
import itertools
import json
import os
import subprocess
import sys


def default_binary():
    d = os.environ.get("CARGO_TARGET_DIR", "target")
    return os.path.join(d, "release", "flashlab")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--grid", action="append", default=[], help="KEY=V1,V2,... (repeatable)")
    ap.add_argument("--fixed", default="", help="overrides every point shares, KEY=V,KEY=V")
    ap.add_argument("--out", required=True, help="CSV file to write")
    ap.add_argument("--flashlab", default=default_binary())
    a = ap.parse_args()
    keys, values = [], []
    for g in a.grid:
        k, _, v = g.partition("=")
        if not k or not v:
            sys.exit(f"--grid {g!r}: expected KEY=V1,V2,...")
        keys.append(k)
        values.append(v.split(","))
    points = []
    for combo in itertools.product(*values):
        sets = [f"{k}={v}" for k, v in zip(keys, combo)]
        if a.fixed:
            sets = a.fixed.split(",") + sets
        cmd = [a.flashlab, "validate", "--profile", a.profile, "--json"]
        if sets:
            cmd += ["--set", ",".join(sets)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {out.stderr.strip()[:600]}")
        # rows true by construction (counted false) are listed, not scored
        rows = [r for r in json.loads(out.stdout)["rows"] if r.get("counted", True)]
        passed = sum(r["verdict"] == "pass" for r in rows)
        dist = sum(r.get("distance") or 0.0 for r in rows)
        sim = {r["what"]: (r["simulated"] or {}).get("value") for r in rows}
        points.append((passed, dist, combo, sim, len(rows), rows))
        print(f"{passed}/{len(rows)} distance {dist:.3f}  {','.join(sets)}", flush=True)
    points.sort(key=lambda p: (-p[0], p[1]))
    whats = list(points[0][3].keys()) if points else []
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["profile", "fixed"] + keys + ["passed", "rows", "distance"] + whats)
        for passed, dist, combo, sim, n, _ in points:
            w.writerow([a.profile, a.fixed] + list(combo) + [passed, n, f"{dist:.4f}"]
                       + [("" if sim[x] is None else f"{sim[x]:.4g}") for x in whats])
    print(f"best: {points[0][0]}/{points[0][4]} {dict(zip(keys, points[0][2]))}" if points else "no points")
    if points:
        cross_validate(points, keys, os.path.splitext(a.out)[0] + ".cv.csv")


def cross_validate(points, keys, out):
    """Leave one figure out: rank the points on the other rows, score the held-out rows."""
    figures = sorted({r["source"] for r in points[0][5]})
    held = []
    for fig in figures:
        def rank(p):
            train = [r for r in p[5] if r["source"] != fig]
            return (-sum(r["verdict"] == "pass" for r in train), sum(r.get("distance") or 0.0 for r in train))
        best = min(points, key=rank)
        for r in best[5]:
            if r["source"] == fig:
                held.append((fig, dict(zip(keys, best[2])), r))
    passed = sum(r["verdict"] == "pass" for _, _, r in held)
    print(f"cross-validated (each of {len(figures)} figures held out in turn): {passed}/{len(held)} held-out rows pass"
          f" ({100 * passed / max(len(held), 1):.0f} %); in-sample best point: {points[0][0]}/{points[0][4]}")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["held_out", "chosen"] + ["what", "verdict", "distance"])
        for fig, chosen, r in held:
            w.writerow([fig, ";".join(f"{k}={v}" for k, v in chosen.items()), r["what"], r["verdict"],
                        f"{(r.get('distance') or 0.0):.4f}"])


if __name__ == "__main__":
    main()
