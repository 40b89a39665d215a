#!/usr/bin/env python3
"""Blind benchmark of `flashlab twin`: hidden devices, held-out workloads.

For each built-in profile:
1. perturb its geometry and timing with a seed, within physically sensible
   ranges (NAND and host timings x0.7-1.4, cache size x0.5/1/2, a log-block
   device's block size x0.5/1/2 and log blocks -1/0/+2), and write the
   result to a hidden file in a private temporary directory; its values are
   never printed before the twin is built;
2. build the twin with `flashlab twin sim:HIDDEN.toml` -- the twin sees the
   device only through flashlab's Device interface (timestamps of its IOs),
   exactly as it sees a real device. (The issue's ideal serves the hidden
   device with `flashlab serve` and turns it into a block device with
   nbdfuse and a loop device; that needs root and nbdfuse, and adds the host
   block layer's timing to what is measured. This script takes the simpler
   route; the twin code path is the same.)
3. score the twin on workloads that are not in its plan: other IO sizes
   (8 KiB random reads, 16 KiB random writes, 128 KiB sequential reads),
   another mix ratio (50/50 random 8 KiB), a trace replay
   (shared/traces/tpcc-small.trace, closed loop, folded onto the device), each
   after the same 64 MiB fill, on a fresh hidden device and a fresh twin;
4. print the error of mean and p99 per workload, and the geometry recovered
   vs true.

Usage: bench/twin_blind.py [--seed N] [--profiles a,b,c] [--flashlab PATH] [--variance]
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PROFILES = "ssd-m,intel-x25e,nvme-tlc,mtron,memoright,transcend-mlc,samsung,kingston-dthx"
TRACE = os.path.join(ROOT, "..", "shared", "traces", "tpcc-small.trace")

TIMING_KEYS = ("read_ns", "program_ns", "erase_ns", "command_overhead_ns", "bus_ns_per_byte")


def perturb(text, rng, variance=False):
    """The profile's TOML text with its timing, cache and log geometry moved;
    with ``variance``, service-time spreads too (program-time spread uniform
    in 0-0.4, read-retry probability 0, 0.02 or 0.08), which the twin's
    second stage must find from the plan's p99s."""
    out = []
    section = ""
    for line in text.splitlines():
        m = re.match(r"^\[(.+)\]\s*$", line)
        if m:
            section = m.group(1)
            if variance and section == "nand":
                out.append(line)
                out.append(f"program_spread = {rng.uniform(0, 0.4):.3f}")
                out.append(f"read_retry_probability = {rng.choice([0, 0.02, 0.08])}")
                continue
        kv = re.match(r"^(\w+) = ([^#]+?)(\s*#.*)?$", line)
        if kv:
            key, value = kv.group(1), kv.group(2).strip()
            if key in TIMING_KEYS and section in ("nand", "host"):
                f = rng.uniform(0.7, 1.4)
                v = float(value) * f
                value = f"{v:.2f}" if "." in value else str(int(v))
            elif key == "program_ns_by_page_kind":
                # Keeps the kinds' ratio; program_ns above moved the mean.
                pass
            elif section == "cache" and key == "size":
                n = parse_size(value.strip('"'))
                value = f'"{int(n * rng.choice([0.5, 1, 2]))}"'
            elif section == "geometry" and key == "pages_per_block" and log_block(text):
                value = str(max(16, int(int(value) * rng.choice([0.5, 1, 2]))))
            elif section == "ftl" and key == "log_blocks":
                value = str(max(1, int(value) + rng.choice([-1, 0, 2])))
            line = f"{key} = {value}"
        out.append(line)
    text = "\n".join(out) + "\n"
    # A page-kind split must keep program_ns its mean: drop it (constant program time).
    return re.sub(r"(?m)^program_ns_by_page_kind = .*$", "program_ns_by_page_kind = []", text)


def log_block(text):
    return re.search(r'(?m)^kind = "(bast|fast)"', text) is not None


def parse_size(s):
    m = re.match(r"^([\d.]+)\s*(B|KiB|MiB|GiB|KB|MB|GB)?$", s)
    mult = {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
            "KB": 1000, "MB": 10**6, "GB": 10**9}[m.group(2)]
    return int(float(m.group(1)) * mult)


def truth(text):
    """Geometry of a (hidden) profile, for scoring after the twin is built."""
    def get(section, key):
        m = re.search(rf"(?ms)^\[{section}\]$.*?^{key} = ([^#\n]+)", text)
        return m.group(1).strip().strip('"') if m else None
    kind = get("ftl", "kind")
    page = parse_size(get("geometry", "page_bytes"))
    unit = None
    if kind in ("bast", "fast"):
        stripe = int(get("ftl", "stripe_dies") or 0)
        dies = int(get("geometry", "channels")) * int(get("geometry", "chips_per_channel")) * int(
            get("geometry", "dies_per_chip"))
        unit = (stripe or dies) * int(get("geometry", "pages_per_block")) * page
    cache = parse_size(get("cache", "size")) if get("cache", "enabled") == "true" else None
    return {
        "family": "log-block" if kind in ("bast", "fast") else "page-mapped",
        "unit": unit,
        "cache": cache,
    }


def spread_truth(text):
    def get(key):
        m = re.search(rf"(?m)^{key} = ([0-9.]+)", text)
        return float(m.group(1)) if m else 0.0
    return get("program_spread"), get("read_retry_probability")


def heldout_file(path):
    runs = [
        ("fill", "mode = \"write\"\nlocation = \"sequential\"\nio_size = \"32KiB\"\nio_count = 2048"),
        ("rr-8k", "pattern = \"RR\"\nio_size = \"8KiB\"\nio_count = 300"),
        ("rw-16k", "pattern = \"RW\"\nio_size = \"16KiB\"\nio_count = 200"),
        ("sr-128k", "pattern = \"SR\"\nio_size = \"128KiB\"\nio_count = 200"),
        ("mix-50-8k", "pattern = \"RR\"\nmix = \"RW\"\nratio = \"1:1\"\nio_size = \"8KiB\"\nio_count = 300"),
    ]
    with open(path, "w") as f:
        for name, body in runs:
            f.write(f"[[run]]\nname = \"{name}\"\ntarget_size = \"64MiB\"\n{body}\n\n")


def run_json(flashlab, args, cwd):
    p = subprocess.run([flashlab] + args + ["--json"], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def workloads(flashlab, device, work, tag):
    """{workload: (mean_ns, p99_ns)} on a fresh device."""
    d = run_json(flashlab, ["run", "--device", device, "-f", "heldout.toml", "-o", f"h-{tag}"], work)
    out = {r["name"]: (r["stats"]["latency"]["mean_ns"], r["stats"]["latency"]["p99_ns"])
           for r in d["runs"] if r["name"] != "fill"}
    if os.path.exists(TRACE):
        d = run_json(flashlab, ["replay", "--device", device, TRACE, "--closed-loop", "--fit", "wrap",
                                "-o", f"t-{tag}", "--quiet"], work)
        lat = d["runs"][0]["stats"]["latency"]
        out["trace-tpcc"] = (lat["mean_ns"], lat["p99_ns"])
    return out


def fmt_size(b):
    if b is None:
        return "-"
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n:
            return f"{b / n:g}{unit}"
    return f"{b}B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", default=DEFAULT_PROFILES)
    ap.add_argument("--flashlab", default=os.path.join(ROOT, "target", "release", "flashlab"))
    ap.add_argument("--variance", action="store_true",
                    help="hide service-time spreads too (program spread, read retries)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    errors = {}
    geometry = []
    spreads = []
    with tempfile.TemporaryDirectory(prefix="twin-blind-") as work:
        heldout_file(os.path.join(work, "heldout.toml"))
        for name in a.profiles.split(","):
            text = subprocess.run([a.flashlab, "sim", "show", name], capture_output=True,
                                  text=True, check=True).stdout
            hidden_text = perturb(text, rng, a.variance)
            hidden = os.path.join(work, f"hidden-{name}.toml")
            with open(hidden, "w") as f:
                f.write(hidden_text)
            twin_toml = os.path.join(work, f"twin-{name}.toml")
            t0 = time.time()
            p = subprocess.run([a.flashlab, "twin", f"sim:{hidden}", "--output", twin_toml],
                               cwd=work, capture_output=True, text=True)
            wall = time.time() - t0
            if not os.path.exists(twin_toml):
                print(f"{name}: no twin: {p.stderr.strip()}")
                continue
            with open(twin_toml + ".twin.json") as f:
                tj = json.load(f)
            good = p.returncode == 0
            true = truth(hidden_text)
            pr = tj["probe"]
            got = {
                "family": pr.get("family"),
                "unit": pr["erase_unit_bytes"]["value"],
                "cache": pr["write_cache_bytes"]["value"],
            }
            geometry.append((name, true, got, good, wall, tj["cv_loss_rms"]))
            if a.variance:
                fitted = {p["key"]: p["value"] for p in tj["params"]}
                spreads.append((name, spread_truth(hidden_text), fitted))
            m = workloads(a.flashlab, f"sim:{hidden}", work, f"m-{name}")
            q = workloads(a.flashlab, f"sim:{twin_toml}", work, f"p-{name}")
            for w, (mm, mp) in m.items():
                pm, pp = q[w]
                errors.setdefault(w, []).append((name, pm / mm - 1, pp / mp - 1))
    print("geometry recovered vs true (twin built blind):")
    print(f"{'profile':<16} {'family true/got':<26} {'unit true/got':<18} {'cache true/got':<20} verdict  cv-rms  wall")
    fam_ok = unit_ok = unit_n = cache_ok = cache_n = 0
    for name, t, g, good, wall, cv in geometry:
        fam_ok += t["family"] == g["family"]
        if t["unit"]:
            unit_n += 1
            unit_ok += g["unit"] == t["unit"]
        if t["cache"]:
            cache_n += 1
            cache_ok += bool(g["cache"]) and 0.5 <= g["cache"] / t["cache"] <= 2
        print(f"{name:<16} {t['family'] + '/' + str(g['family']):<26} "
              f"{fmt_size(t['unit']) + '/' + fmt_size(g['unit']):<18} "
              f"{fmt_size(t['cache']) + '/' + fmt_size(g['cache']):<20} "
              f"{'good' if good else 'NOT':<8} {cv:<7.3f} {wall:.1f}s")
    print(f"family right {fam_ok}/{len(geometry)}; unit exact {unit_ok}/{unit_n}; cache within x2 {cache_ok}/{cache_n}")
    if spreads:
        print("\nservice-time spreads true/fitted (stage 2, from the plan's p99s):")
        for name, t, f in spreads:
            print(f"{name:<16} program_spread {t[0]:.3f}/{f.get('nand.program_spread', 0):.3f}  "
                  f"read_retry_probability {t[1]:.3f}/{f.get('nand.read_retry_probability', 0):.3f}")
    print("\nheld-out workloads: error of the twin's mean and p99 (per device, then mean |error| and p99 of |error|)")
    within_mean = within_p99 = total = 0
    for w, rows in errors.items():
        cells = " ".join(f"{n}:{em:+.0%}/{ep:+.0%}" for n, em, ep in rows)
        am = sorted(abs(e[1]) for e in rows)
        ap_ = sorted(abs(e[2]) for e in rows)
        within_mean += sum(e <= 0.20 for e in am)
        within_p99 += sum(e <= 0.35 for e in ap_)
        total += len(rows)
        print(f"{w:<11} mean |err| {sum(am) / len(am):.0%} (worst {am[-1]:.0%}), p99 |err| {sum(ap_) / len(ap_):.0%}  {cells}")
    if total:
        print(f"means within 20 %: {within_mean}/{total}; p99 within 35 %: {within_p99}/{total}")


if __name__ == "__main__":
    sys.exit(main())
