#!/usr/bin/env python3
"""Grid search of a uFLIP profile's parameters against its Table 3 row.

Each grid point runs `flashlab suite uflip` on `sim:PROFILE,capacity=1GiB,
OVERRIDES` exactly as `flashlab validate` does (locality, partitioning,
order, pause; 1024-IO runs and calibration), reads the Table 3 row from the
suite's JSON summary and scores it against the published row (and, for the Mtron and the
Memoright, section 5.1's start-up phase and lingering reads). The published
values, each cell's tolerance class and the classes' bands are read from
crates/suite/validate/published.toml and tolerances.toml, the files
`flashlab validate` reads, so that they are stated once:

  - cells: how many of the 12 cells (and extras) pass their scoreboard
    bands (the same rules as validate);
  - loss: the sum over numeric cells of (log(simulated / published))^2,
    plus 4 for every cell where one side is absent and the other is not.

Points are ranked by cells passed (more is better), then by loss. The
inputs (profile, grid) and every point's row are written as CSV so that the
fit can be read and redone:

  bench/fit/uflip_fit.py kingston-dti \\
      --grid ftl.log_pages=64,128,256 --grid nand.program_ns=500000,700000 \\
      --out bench/fit/results/kingston-dti.csv

Needs Python 3.11 (tomllib). `--flashlab` names the binary (default: target/release/flashlab, or
$CARGO_TARGET_DIR/release/flashlab).
"""
import argparse
import csv
import itertools
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile
import tomllib

# The published numbers and their tolerance bands, read from the files
# `flashlab validate` reads, so that they are stated once.
VALIDATE_DIR = pathlib.Path(__file__).resolve().parents[2] / "crates" / "suite" / "validate"
COLUMNS = ["SR", "RR", "SW", "RW", "Pause", "LocMiB", "LocRel", "Parts", "PartsRel",
           "Reverse", "InPlace", "LargeIncr"]
# published.toml's id of each column: uflip.t3.PROFILE.SLUG.
SLUGS = ["sr", "rr", "sw", "rw", "pause-rw", "locality-mb", "locality-relative", "partitions",
         "partitions-relative", "reverse", "in-place", "large-incr"]
# uFLIP's numbers outside Table 3 (section 5.1), by their finding in
# published.toml: the random-write start-up phase (Figure 3, IOIgnore) and
# the sequential reads slowed after a batch of random writes (Figure 5's
# pause determination).
EXTRA_COLUMNS = ["Startup", "Lingering"]
EXTRA_FINDINGS = {"uflip.calibration.rw-startup": "Startup", "uflip.lingering-reads": "Lingering"}


def load_published(validate_dir=VALIDATE_DIR):
    """uFLIP's published rows by profile, each cell with its band.

    Returns (table3, extras): table3[profile] is a list of (printed cell,
    (kind, min, max)) in COLUMNS order; extras[profile][column] is
    (value, (kind, min, max)). A band is the row's own (`band`) or its
    class's in tolerances.toml, as crates/suite/src/validate.rs judges it.
    Test-only entries are not scoreboard rows and are left out.
    """
    with open(validate_dir / "tolerances.toml", "rb") as f:
        classes = {c["name"]: c for c in tomllib.load(f)["class"]}
    with open(validate_dir / "published.toml", "rb") as f:
        numbers = [n for n in tomllib.load(f)["number"]
                   if n["paper"] == "uflip" and n.get("role", "scoreboard") == "scoreboard"]

    def band(n):
        c = classes[n["class"]]
        own = n.get("band", {})
        return (c["kind"], own.get("min", c.get("min")), own.get("max", c.get("max")))

    by_id = {n["id"]: n for n in numbers}
    table3 = {}
    for n in numbers:
        parts = n["id"].split(".")
        if parts[:2] != ["uflip", "t3"] or parts[2] in table3:
            continue
        profile = parts[2]
        rows = [by_id.get(f"uflip.t3.{profile}.{slug}") for slug in SLUGS]
        if any(r is None for r in rows):
            missing = [s for s, r in zip(SLUGS, rows) if r is None]
            sys.exit(f"{validate_dir / 'published.toml'}: uflip.t3.{profile} has no {', '.join(missing)}")
        table3[profile] = [(r["printed"], band(r)) for r in rows]
    extras = {}
    for n in numbers:
        col = EXTRA_FINDINGS.get(n["finding"])
        if col is not None:
            extras.setdefault(n["profile"], {})[col] = (n["value"], band(n))
    return table3, extras


def passes(kind, lo, hi, p, s):
    """Whether simulated `s` is within the band of published `p`
    (crates/suite/src/validate.rs `verdict` on two numbers)."""
    if kind == "exact":
        return abs(s - p) < 1e-9
    if kind == "ratio":
        return p > 0 and (lo if lo is not None else 0.0) <= s / p <= (hi if hi is not None else math.inf)
    if kind == "floor":
        return s >= p - 1e-12
    if kind == "absolute":
        return abs(s - p) - (hi or 0.0) <= 1e-12
    if kind == "at-most":
        return hi is None or s <= hi
    if kind == "at-least":
        return lo is None or s >= lo
    sys.exit(f"tolerances.toml: unknown kind {kind!r}")


def cell(c):
    if c in ("-", "No"):
        return None
    if c == "=":
        return 1.0
    return float(c.lstrip("x"))


def simulated(t):
    loc = t.get("locality_rw_bytes")
    return [t.get("sr_ms"), t.get("rr_ms"), t.get("sw_ms"), t.get("rw_ms"), t.get("pause_rw_ms"),
            None if loc is None else loc / 2**20,
            None if loc is None else t.get("locality_rw_relative"),
            t.get("partitions"), t.get("partitions_relative"), t.get("reverse_relative"),
            t.get("in_place_relative"), t.get("large_incr_relative")]


def score(pub, bands, sim):
    passed, loss = 0, 0.0
    for (kind, lo, hi), p, s in zip(bands, pub, sim):
        if p is None or s is None:
            ok = p is None and s is None
            loss += 0.0 if ok else 4.0
        else:
            r = s / p
            ok = passes(kind, lo, hi, p, s)
            loss += math.log(max(r, 1e-9)) ** 2
        passed += ok
    return passed, loss


def run(flashlab, profile, overrides):
    spec = ",".join([f"sim:{profile}", "capacity=1GiB"] + [f"{k}={v}" for k, v in overrides])
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [flashlab, "suite", "uflip", "--device", spec, "--only",
             "locality,partitioning,order,pause", "--max-ios", "1024", "--calibration-ios", "1024",
             "--results", os.path.join(d, "r"), "--json", "--quiet"],
            capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return json.loads(out.stdout), ""


def main():
    table3, extras = load_published()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", choices=sorted(table3))
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                    help="a simulator override and its values (repeatable)")
    ap.add_argument("--out", help="CSV of every point (inputs and row)")
    ap.add_argument("--flashlab", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "target"), "release", "flashlab"))
    a = ap.parse_args()
    keys, values = [], []
    for g in a.grid:
        k, _, v = g.partition("=")
        keys.append(k)
        values.append(v.split(","))
    pub = [cell(c) for c, _ in table3[a.profile]]
    bands = [b for _, b in table3[a.profile]]
    wanted = extras.get(a.profile, {})
    rows = []
    for point in itertools.product(*values) if keys else [()]:
        ov = list(zip(keys, point))
        j, err = run(a.flashlab, a.profile, ov)
        if j is None:
            print(f"{ov}: failed: {err}", file=sys.stderr)
            continue
        t = j["table3"]
        sim = simulated(t)
        cal = j.get("calibration", {})
        extra = (f"  RW-startup={cal.get('RW', {}).get('startup')} SW-period={cal.get('SW', {}).get('period')}"
                 f" lingering={j.get('lingering_ios')}")
        passed, loss = score(pub, bands, sim)
        ext = [cal.get("RW", {}).get("startup"), j.get("lingering_ios")]
        for col, v in zip(EXTRA_COLUMNS, ext):
            if col in wanted:
                want, (kind, lo, hi) = wanted[col]
                r = max(v or 0, 1e-9) / want
                passed += passes(kind, lo, hi, want, max(v or 0, 1e-9))
                loss += math.log(r) ** 2
        sim = sim + ext
        rows.append((passed, loss, ov, sim))
        shown = " ".join(f"{c}={'-' if v is None else f'{v:.3g}'}" for c, v in zip(COLUMNS, sim[:12]))
        print(f"{passed:2d}/{12 + len(wanted)} loss {loss:6.2f}  {' '.join(f'{k}={v}' for k, v in ov)}  {shown}{extra}", flush=True)
    rows.sort(key=lambda r: (-r[0], r[1]))
    if rows:
        best = rows[0]
        print(f"best: {best[0]}/{12 + len(wanted)} loss {best[1]:.2f}: {' '.join(f'{k}={v}' for k, v in best[2])}")
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["profile"] + keys + ["passed", "loss"] + COLUMNS + EXTRA_COLUMNS)
            for passed, loss, ov, sim in rows:
                w.writerow([a.profile] + [v for _, v in ov] + [passed, f"{loss:.4f}"] +
                           ["" if v is None else f"{v:.4g}" for v in sim])


if __name__ == "__main__":
    main()
