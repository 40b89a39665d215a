#!/usr/bin/env python3
"""Blind benchmark of `flashlab twin`: hidden devices, held-out workloads.

For each built-in profile:
1. perturb its geometry and timing with a seed, within physically sensible
   ranges (NAND and host timings x0.7-1.4, cache size x0.5/1/2, a log-block
   device's block size x0.5/1/2 and log blocks -1/0/+2), and write the
   result to a hidden file in a private temporary directory; its values are
   never printed before the twin is built;
2. build the twin. By default (`--via sim`) with `flashlab twin
   sim:HIDDEN.toml`: the twin sees the device only through flashlab's Device
   interface (timestamps of its IOs), exactly as it sees a real device. With
   `--via nbd` (root; nbdfuse from libnbd-bin, fusermount3 from fuse3,
   losetup), as the issue asks: the hidden profile is served with
   `flashlab serve --pace` (each reply held for the request's simulated
   latency, docs/serve.md "Time"), the export is turned into one file by
   `nbdfuse` and into a block device by `losetup --direct-io=on`, and the
   twin runs on `/dev/loopN`: it sees only a block device, with the host's
   block layer, FUSE and the NBD socket in every IO's time, as a real
   device's driver stack is. The held-out workloads are then measured on
   that stack too (a fresh served device for each), since that is the
   device the twin claims to predict. Everything is torn down (loop
   device, FUSE mount, server, data) when a device is done, on an error,
   on Ctrl-C or on SIGTERM;
3. score the twin on workloads that are not in its plan: other IO sizes
   (8 KiB random reads, 16 KiB random writes, 128 KiB sequential reads),
   another mix ratio (50/50 random 8 KiB), a trace replay
   (shared/traces/tpcc-small.trace, closed loop, folded onto the device), each
   after the same 64 MiB fill, on a fresh hidden device and a fresh twin;
4. print the error of mean and p99 per workload, and the geometry recovered
   vs true.

Usage: bench/twin_blind.py [--seed N] [--profiles a,b,c] [--flashlab PATH] [--variance] [--twin-arg ARG]
                           [--via sim|nbd] [--scratch DIR] [--budget 15m] [--route-check]

`--route-check` (with `--via nbd`) only sets the route up for the first
profile, runs a few IOs on the loop device, tears it down and prints what
it did (the root test crates/flashlab/tests/twin_nbd_route.rs runs it).
"""

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Ten hidden devices, as the issue asks: four page-mapped, six log-block. The
# last two were added after the first eight; appended at the end, they leave
# the first eight's perturbations (one random stream, drawn in this order)
# as they were.
DEFAULT_PROFILES = ("ssd-m,intel-x25e,nvme-tlc,mtron,memoright,transcend-mlc,samsung,kingston-dthx,"
                    "ssd-h,mtron-pro7500")
TRACE = os.path.join(ROOT, "..", "shared", "traces", "tpcc-small.trace")

TIMING_KEYS = ("read_ns", "program_ns", "erase_ns", "command_overhead_ns", "bus_ns_per_byte")


def perturb(text, rng, variance=None):
    """The profile's TOML text with its timing, cache and log geometry moved;
    with ``variance`` (a second random stream, so that the same seed hides
    the same timing and geometry with and without it), service-time
    variance too (docs/sim.md, "Service
    times vary"): program and erase spreads uniform in 0-0.4, a read-retry
    probability of 0, 0.02 or 0.08, and an MLC lower/upper page split of
    program times (1:3, scaled to the perturbed program_ns) on half the
    devices. The twin's second stage fits only the program spread and the
    read-retry probability from the plan's p99s; the erase spread and the
    page split it must absorb or miss."""
    out = []
    section = ""
    for line in text.splitlines():
        m = re.match(r"^\[(.+)\]\s*$", line)
        if m:
            section = m.group(1)
            if variance and section == "nand":
                out.append(line)
                v = variance
                out.append(f"program_spread = {v.uniform(0, 0.4):.3f}")
                out.append(f"read_retry_probability = {v.choice([0, 0.02, 0.08])}")
                out.append(f"erase_spread = {v.uniform(0, 0.4):.3f}")
                # Scaled to program_ns's mean by the simulator: only the 1:3 ratio counts.
                split = v.choice([False, True])
                out.append("program_ns_by_page_kind = " + ("[1000, 3000]" if split else "[]"))
                continue
        kv = re.match(r"^(\w+) = ([^#]+?)(\s*#.*)?$", line)
        if kv:
            key, value = kv.group(1), kv.group(2).strip()
            if key in TIMING_KEYS and section in ("nand", "host"):
                f = rng.uniform(0.7, 1.4)
                v = float(value) * f
                value = f"{v:.2f}" if "." in value else str(int(v))
            elif key == "program_ns_by_page_kind":
                # Without variance: constant program time (below); with it,
                # the split chosen at the section's head replaces the profile's.
                continue
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
    if not variance:
        # Constant program time, as the profile's program_ns (no page kinds).
        text = re.sub(r"(?m)^\[nand\]$", "[nand]\nprogram_ns_by_page_kind = []", text, count=1)
    return text


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
    split = re.search(r"(?m)^program_ns_by_page_kind = \[\d", text) is not None
    return get("program_spread"), get("read_retry_probability"), get("erase_spread"), split


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


def run_json(flashlab, args, cwd, prefix=()):
    p = subprocess.run([*prefix, flashlab] + args + ["--json"], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def workloads(flashlab, open_device, work, tag, prefix=()):
    """{workload: (mean_ns, p99_ns)}: the held-out runs on one fresh device,
    the trace on another (``open_device()`` gives a fresh device's name in a
    context)."""
    with open_device(f"h-{tag}") as device:
        d = run_json(flashlab, ["run", "--device", device, *allow_write(device), "-f", "heldout.toml",
                                "-o", f"h-{tag}"], work, prefix)
    out = {r["name"]: (r["stats"]["latency"]["mean_ns"], r["stats"]["latency"]["p99_ns"])
           for r in d["runs"] if r["name"] != "fill"}
    if os.path.exists(TRACE):
        with open_device(f"t-{tag}") as device:
            d = run_json(flashlab, ["replay", "--device", device, *allow_write(device), TRACE,
                                    "--closed-loop", "--fit", "wrap", "-o", f"t-{tag}", "--quiet"], work, prefix)
        lat = d["runs"][0]["stats"]["latency"]
        out["trace-tpcc"] = (lat["mean_ns"], lat["p99_ns"])
    return out


def allow_write(device):
    # The loop device is ours and blank; naming it keeps a false signature
    # match in the data from stopping the benchmark (the check still runs).
    return [] if device.startswith("sim:") else ["--allow-write-to", device]


class Interrupted(Exception):
    pass


def _raise_interrupted(signum, _frame):
    raise Interrupted(f"signal {signum}")


def tool_missing():
    """Why the NBD route cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (losetup, a FUSE mount)"
    for dev in ("/dev/fuse", "/dev/loop-control"):
        if not os.path.exists(dev):
            return f"needs {dev}"
    for tool, pkg in (("nbdfuse", "libnbd-bin"), ("fusermount3", "fuse3"), ("losetup", "util-linux"),
                      ("chrt", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} is missing (apt-get install {pkg})"
    return None


def _wait(cond, what, timeout_s, alive=()):
    t0 = time.time()
    while not cond():
        for proc, log in alive:
            if proc.poll() is not None:
                raise RuntimeError(f"{what}: {proc.args[0]} exited ({proc.returncode}): {tail(log)}")
        if time.time() - t0 > timeout_s:
            raise RuntimeError(f"{what}: not ready after {timeout_s} s")
        time.sleep(0.05)


def tail(path, n=5):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().splitlines()[-n:])
    except OSError:
        return ""


@contextlib.contextmanager
def served(flashlab, profile, scratch, tag, seed, log=None, rt=False):
    """A fresh device served from PROFILE over NBD and seen as a block device:
    `flashlab serve --pace` on a unix socket -> nbdfuse (the export as one
    file in a FUSE mount) -> `losetup --direct-io=on`. Yields /dev/loopN.
    Tears down in reverse order whatever was set up, whatever happens:
    the loop device, the FUSE mount (lazily if busy) and nbdfuse, the server
    (SIGTERM, then SIGKILL after 60 s), and its data directory. With ``rt``,
    the server and nbdfuse run under SCHED_FIFO (`chrt -f 10`; both block
    between requests, neither spins), so that a loaded host's scheduler
    delays do not enter every IO's time."""
    rt_prefix = ["chrt", "-f", "10"] if rt else []
    say = log or (lambda _m: None)
    d = os.path.join(scratch, tag)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    data, sock, mnt = os.path.join(d, "data"), os.path.join(d, "nbd.sock"), os.path.join(d, "fuse")
    pidfile, disk = os.path.join(d, "nbdfuse.pid"), os.path.join(mnt, "disk")
    serve_log, fuse_log = os.path.join(d, "serve.log"), os.path.join(d, "nbdfuse.log")
    server = fuse = loop = None
    try:
        with open(serve_log, "w") as lf:
            server = subprocess.Popen(
                rt_prefix + [flashlab, "serve", "--profile", profile, "--data", data, "--listen", f"unix:{sock}",
                 "--pace", "--seed", str(seed)], stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        say(f"serve pid {server.pid} on {sock}")
        _wait(lambda: os.path.exists(sock), "flashlab serve", 120, [(server, serve_log)])
        os.makedirs(mnt)
        with open(fuse_log, "w") as lf:
            fuse = subprocess.Popen(rt_prefix + ["nbdfuse", "-P", pidfile, disk, "--unix", sock],
                                    stdin=subprocess.DEVNULL, stdout=lf, stderr=lf)
        say(f"nbdfuse pid {fuse.pid} at {disk}")
        _wait(lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0, "nbdfuse", 60,
              [(fuse, fuse_log), (server, serve_log)])
        p = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", disk],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"losetup: {p.stderr.strip()}")
        loop = p.stdout.strip()
        say(f"loop device {loop}")
        yield loop
    finally:
        # Teardown must not be cut short by a second signal.
        old = {s_: signal.signal(s_, signal.SIG_IGN) for s_ in (signal.SIGINT, signal.SIGTERM)}
        try:
            if loop:
                subprocess.run(["losetup", "-d", loop], stderr=subprocess.DEVNULL)
                say(f"detached {loop}")
            if fuse:
                if subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL).returncode != 0:
                    subprocess.run(["fusermount3", "-u", "-z", mnt], stderr=subprocess.DEVNULL)
                try:
                    fuse.wait(10)
                except subprocess.TimeoutExpired:
                    fuse.kill()
                    fuse.wait()
                say(f"unmounted {mnt}")
            if server:
                server.terminate()
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
                say(f"stopped serve ({server.returncode})")
            shutil.rmtree(d, ignore_errors=True)
        finally:
            for s_, h in old.items():
                signal.signal(s_, h)


def fmt_size(b):
    if b is None:
        return "-"
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n:
            return f"{b / n:g}{unit}"
    return f"{b}B"


def route_check(a, hidden, scratch):
    """Sets the NBD route up for one hidden device, runs a few writes and
    reads on the loop device, and tears it down (also when --route-check-fail
    makes it fail in between); prints each step."""
    log = lambda m: print(f"route: {m}", flush=True)  # noqa: E731
    with served(a.flashlab, hidden, scratch, "route-check", a.seed, log, rt=a.rt) as loop:
        d = run_json(a.flashlab, ["run", "--device", loop, "--allow-write-to", loop, "--pattern", "RW",
                                  "--io-size", "4KiB", "--io-count", "64", "--target-size", "16MiB",
                                  "-o", os.path.join(scratch, "route-check", "run")], scratch)
        lat = d["runs"][0]["stats"]["latency"]
        log(f"64 random 4 KiB writes on {loop}: mean {lat['mean_ns'] / 1e3:.1f} us")
        if a.route_check_fail:
            raise RuntimeError("failing on purpose after setup (--route-check-fail)")
        if a.route_check_hold:
            log("holding until a signal")
            while True:
                signal.pause()
    log("torn down")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profiles", default=DEFAULT_PROFILES)
    ap.add_argument("--flashlab", default=os.path.join(ROOT, "target", "release", "flashlab"))
    ap.add_argument("--variance", action="store_true",
                    help="hide service-time variance too (program and erase spreads, read retries, MLC page kinds)")
    ap.add_argument("--via", choices=("sim", "nbd"), default="sim",
                    help="sim: twin sim:HIDDEN.toml; nbd: serve it, nbdfuse + loop device, twin /dev/loopN (root)")
    ap.add_argument("--scratch", default=None,
                    help="where served devices keep their data (default: the private temporary directory)")
    ap.add_argument("--no-rt", dest="rt", action="store_false",
                    help="with --via nbd: leave the server, nbdfuse, the twin and the measuring runs at normal "
                         "priority (default: SCHED_FIFO, so host load does not enter every IO's time)")
    ap.add_argument("--budget", default="15m", help="the twin's --budget (device clock: wall time over NBD)")
    ap.add_argument("--twin-arg", action="append", default=[],
                    help="an extra argument for `flashlab twin` (repeatable), e.g. --twin-arg=--write-past-cache")
    ap.add_argument("--route-check", action="store_true",
                    help="with --via nbd: only set the route up and tear it down, for the first profile")
    # For the teardown tests: fail, or wait for SIGTERM, with everything set up.
    ap.add_argument("--route-check-fail", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--route-check-hold", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.flashlab = os.path.abspath(a.flashlab)
    if a.via == "nbd":
        why = tool_missing()
        if why:
            print(f"twin_blind.py --via nbd: {why}", file=sys.stderr)
            return 2
    # SIGTERM and SIGHUP unwind like Ctrl-C, so every `finally` tears down.
    signal.signal(signal.SIGTERM, _raise_interrupted)
    signal.signal(signal.SIGHUP, _raise_interrupted)
    rng = random.Random(a.seed)
    vrng = random.Random(f"variance-{a.seed}")
    errors = {}
    geometry = []
    spreads = []
    with tempfile.TemporaryDirectory(prefix="twin-blind-") as work:
        scratch = os.path.abspath(a.scratch) if a.scratch else work
        os.makedirs(scratch, exist_ok=True)
        heldout_file(os.path.join(work, "heldout.toml"))
        for name in a.profiles.split(","):
            text = subprocess.run([a.flashlab, "sim", "show", name], capture_output=True,
                                  text=True, check=True).stdout
            hidden_text = perturb(text, rng, vrng if a.variance else None)
            hidden = os.path.join(work, f"hidden-{name}.toml")
            with open(hidden, "w") as f:
                f.write(hidden_text)
            if a.route_check:
                route_check(a, hidden, scratch)
                return 0
            prefix = ["chrt", "-f", "5"] if a.via == "nbd" and a.rt else []
            if a.via == "nbd":
                def hidden_device(tag, hidden=hidden):
                    return served(a.flashlab, hidden, scratch, tag, a.seed, rt=a.rt)
            else:
                def hidden_device(_tag, hidden=hidden):
                    return contextlib.nullcontext(f"sim:{hidden}")
            twin_toml = os.path.join(work, f"twin-{name}.toml")
            t0 = time.time()
            with hidden_device(f"twin-{name}") as device:
                p = subprocess.run(prefix + [a.flashlab, "twin", device, "--output", twin_toml, "--budget", a.budget, *a.twin_arg]
                                   + ([] if device.startswith("sim:") else ["--allow-write-to", "all"]),
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
            geometry.append((name, true, got, good, wall, tj["cv_loss_rms"], pr.get("elapsed_ns", 0) / 1e9))
            print(f"{name}: twin built in {wall:.1f} s of wall time ({geometry[-1][6]:.1f} s of device "
                  f"time measuring), {'good' if good else 'NOT good'}", flush=True)
            if a.variance:
                fitted = {p["key"]: p["value"] for p in tj["params"]}
                spreads.append((name, spread_truth(hidden_text), fitted))
            m = workloads(a.flashlab, hidden_device, work, f"m-{name}", prefix)
            q = workloads(a.flashlab, lambda _tag, t=twin_toml: contextlib.nullcontext(f"sim:{t}"),
                          work, f"p-{name}")
            for w, (mm, mp) in m.items():
                pm, pp = q[w]
                errors.setdefault(w, []).append((name, pm / mm - 1, pp / mp - 1))
            print(f"{name}: held-out mean/p99 errors: "
                  + " ".join(f"{w}:{e[-1][1]:+.0%}/{e[-1][2]:+.0%}" for w, e in errors.items()), flush=True)
    print("geometry recovered vs true (twin built blind):")
    print(f"{'profile':<16} {'family true/got':<26} {'unit true/got':<18} {'cache true/got':<20} "
          "verdict  cv-rms  measured  wall")
    fam_ok = unit_ok = unit_n = cache_ok = cache_n = 0
    for name, t, g, good, wall, cv, measured_s in geometry:
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
              f"{'good' if good else 'NOT':<8} {cv:<7.3f} {f'{measured_s:.1f}s':<9} {wall:.1f}s")
    print(f"family right {fam_ok}/{len(geometry)}; unit exact {unit_ok}/{unit_n}; cache within x2 {cache_ok}/{cache_n}")
    if spreads:
        print("\nservice-time variance true/fitted (stage 2 fits the first two from the plan's p99s):")
        for name, t, f in spreads:
            print(f"{name:<16} program_spread {t[0]:.3f}/{f.get('nand.program_spread', 0):.3f}  "
                  f"read_retry_probability {t[1]:.3f}/{f.get('nand.read_retry_probability', 0):.3f}  "
                  f"erase_spread {t[2]:.3f}/-  MLC page kinds {'yes' if t[3] else 'no'}/-")
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
    try:
        sys.exit(main())
    except (KeyboardInterrupt, Interrupted) as e:
        print(f"twin_blind.py: interrupted ({e or 'Ctrl-C'}); torn down", file=sys.stderr)
        sys.exit(130)
    except RuntimeError as e:
        print(f"twin_blind.py: {e}", file=sys.stderr)
        sys.exit(1)
