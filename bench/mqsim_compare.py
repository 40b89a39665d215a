#!/usr/bin/env python3
"""flashlab's simulator against MQSim (CMU-SAFARI/MQSim, FAST 18) on the same device and loads.

Two loads on the `mqsim-ref` profile (MQSim's shipped ssdconfig.xml, docs/sim.md):

1. tpcc-small: MQSim's own trace (shared/traces/tpcc-small.trace), open loop,
   `flashlab replay TRACE --device sim:mqsim-ref --fit wrap`;
2. mix: 100 000 random 4 KiB requests, 70 % reads, at queue depth 32 (closed
   loop), on a fresh (unwritten) device: a generated trace replayed with
   `--closed-loop --qd 32`; MQSim runs the same load as a synthetic
   QUEUE_DEPTH flow.

For each it prints mean and p99 latency (all, reads, writes), IOPS (requests /
(last completion - first submission)) and two out-of-order measures:
`overtaken` = requests that complete after a request submitted later has
completed; `adjacent` = requests that complete before the request submitted
just before them (the figure the issue's 41 % uses).

MQSim is optional: give its binary with --mqsim PATH (or MQSIM=PATH) and its
ssdconfig with --mqsim-config (default: ssdconfig.xml next to the binary).
MQSim's own output has only mean latencies; per-request figures (p99, IOPS,
out-of-order) need MQSim to log each completed request. The log line this
script reads is `arrival_ns completion_ns is_read`, written to the file named
by the environment variable MQSIM_LOG: add that fprintf in
IO_Flow_Base::NVMe_consume_io_request of your MQSim checkout (a local change;
flashlab ships no MQSim code). Without the log only MQSim's mean is printed.

    python3 bench/mqsim_compare.py [--flashlab PATH] [--mqsim PATH] [--mix-requests N]
"""

import argparse
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECORD = struct.Struct("<QQQQIHBB")


def find_flashlab(arg):
    if arg:
        return arg
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    path = os.path.join(target, "release", "flashlab")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "--release", "-p", "flashlab", "--bin", "flashlab"],
                       cwd=ROOT, check=True)
    return path


def read_records(results_dir):
    runs = os.path.join(results_dir, "runs")
    rows = []
    for d in sorted(os.listdir(runs)):
        path = os.path.join(runs, d, "records.bin")
        if not os.path.exists(path):
            continue
        raw = open(path, "rb").read()[32:]
        for i in range(len(raw) // RECORD.size):
            index, sub, comp, _off, _size, _stream, mode, flags = RECORD.unpack_from(raw, i * RECORD.size)
            if flags & 1:
                continue
            rows.append((index, sub, comp, 1 if mode == 0 else 0))
    # submission order: the trace index
    rows.sort()
    return [(s, c, r) for _i, s, c, r in rows]


def stats(rows):
    """rows: (submit_ns, complete_ns, is_read) in submission order."""
    n = len(rows)
    lat = [c - s for s, c, _ in rows]
    srt = sorted(lat)

    def pct(v, p):
        v = sorted(v)
        return v[min(len(v) - 1, int(p * (len(v) - 1)))] if v else 0

    reads = [c - s for s, c, r in rows if r]
    writes = [c - s for s, c, r in rows if not r]
    span = max(c for _, c, _ in rows) - min(s for s, _, _ in rows)
    comp = [c for _, c, _ in rows]
    adjacent = sum(1 for i in range(1, n) if comp[i] < comp[i - 1])
    overtaken = 0
    later_min = None
    for c in reversed(comp):
        if later_min is not None and c > later_min:
            overtaken += 1
        later_min = c if later_min is None else min(later_min, c)
    mean = lambda v: sum(v) / len(v) / 1e3 if v else float("nan")
    return {
        "n": n,
        "mean_us": mean(lat),
        "p99_us": srt[int(0.99 * (n - 1))] / 1e3,
        "read_mean_us": mean(reads),
        "read_p99_us": pct(reads, 0.99) / 1e3,
        "write_mean_us": mean(writes),
        "iops": n / span * 1e9,
        "overtaken": overtaken / n,
        "adjacent": adjacent / n,
    }


def run_flashlab(flashlab, trace, device, extra):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "res")
        cmd = [flashlab, "replay", trace, "--device", device, "--fit", "wrap", "--format", "mqsim",
               "-o", out, "--quiet"] + extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return stats(read_records(out))


def write_mix_trace(path, requests, span_bytes, seed=42):
    rng = random.Random(seed)
    pages = span_bytes // 4096
    with open(path, "w") as f:
        for i in range(requests):
            sector = rng.randrange(pages) * 8
            is_read = 1 if rng.random() < 0.7 else 0
            f.write(f"{i * 1000} 0 {sector} 8 {is_read}\n")


TRACE_FLOW = """<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Trace_Based>
<Priority_Class>HIGH</Priority_Class><Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs><Chip_IDs>0,1,2,3</Chip_IDs><Die_IDs>0,1</Die_IDs><Plane_IDs>0,1</Plane_IDs>
<Initial_Occupancy_Percentage>0</Initial_Occupancy_Percentage><File_Path>{trace}</File_Path>
<Percentage_To_Be_Executed>100</Percentage_To_Be_Executed><Relay_Count>1</Relay_Count><Time_Unit>NANOSECOND</Time_Unit>
</IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>
"""

MIX_FLOW = """<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios><IO_Scenario><IO_Flow_Parameter_Set_Synthetic>
<Priority_Class>HIGH</Priority_Class><Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
<Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs><Chip_IDs>0,1,2,3</Chip_IDs><Die_IDs>0,1</Die_IDs><Plane_IDs>0,1</Plane_IDs>
<Initial_Occupancy_Percentage>0</Initial_Occupancy_Percentage><Working_Set_Percentage>100</Working_Set_Percentage>
<Synthetic_Generator_Type>QUEUE_DEPTH</Synthetic_Generator_Type><Read_Percentage>70</Read_Percentage>
<Address_Distribution>RANDOM_UNIFORM</Address_Distribution><Percentage_of_Hot_Region>0</Percentage_of_Hot_Region>
<Generated_Aligned_Addresses>true</Generated_Aligned_Addresses><Address_Alignment_Unit>8</Address_Alignment_Unit>
<Request_Size_Distribution>FIXED</Request_Size_Distribution><Average_Request_Size>8</Average_Request_Size>
<Variance_Request_Size>0</Variance_Request_Size><Seed>42</Seed><Average_No_of_Reqs_in_Queue>32</Average_No_of_Reqs_in_Queue>
<Intensity>32768</Intensity><Stop_Time>0</Stop_Time><Total_Requests_To_Generate>{n}</Total_Requests_To_Generate>
</IO_Flow_Parameter_Set_Synthetic></IO_Scenario></MQSim_IO_Scenarios>
"""


def run_mqsim(mqsim, config, flow_xml):
    with tempfile.TemporaryDirectory() as tmp:
        wl = os.path.join(tmp, "workload.xml")
        open(wl, "w").write(flow_xml)
        log = os.path.join(tmp, "requests.log")
        env = dict(os.environ, MQSIM_LOG=log)
        subprocess.run([mqsim, "-i", config, "-w", wl], cwd=tmp, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        if os.path.exists(log) and os.path.getsize(log) > 0:
            rows = []
            for line in open(log):
                a, c, r = map(int, line.split())
                rows.append((a, c, r))
            rows.sort(key=lambda x: x[0])
            return stats(rows)
        res = os.path.join(tmp, "workload_scenario_1.xml")
        text = open(res).read()
        m = re.search(r"<End_to_End_Request_Delay>(\d+)<", text)
        return {"mean_us": float(m.group(1)) if m else float("nan"), "n": 0}


def fmt(s):
    if not s.get("n"):
        return f"{s['mean_us']:9.1f} {'-':>9} {'-':>9} {'-':>9} {'-':>9} {'-':>8} {'-':>8} {'-':>8}"
    return (f"{s['mean_us']:9.1f} {s['p99_us']:9.1f} {s['read_mean_us']:9.1f} {s['read_p99_us']:9.1f} "
            f"{s['write_mean_us']:9.1f} {s['iops']:8.0f} {100 * s['overtaken']:7.1f}% {100 * s['adjacent']:7.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flashlab")
    ap.add_argument("--profile", default="mqsim-ref")
    ap.add_argument("--trace", default=os.path.join(ROOT, "..", "shared", "traces", "tpcc-small.trace"))
    ap.add_argument("--mix-requests", type=int, default=100_000)
    ap.add_argument("--mqsim", default=os.environ.get("MQSIM"))
    ap.add_argument("--mqsim-config")
    args = ap.parse_args()
    trace = args.trace
    if not os.path.exists(trace):
        sys.exit(f"mqsim_compare: trace {args.trace} not found; pass --trace PATH to tpcc-small.trace")
    flashlab = find_flashlab(args.flashlab)
    device = f"sim:{args.profile}"
    rows = []
    rows.append(("tpcc-small", "flashlab", run_flashlab(flashlab, trace, device, [])))
    with tempfile.TemporaryDirectory() as tmp:
        mix = os.path.join(tmp, "mix.trace")
        write_mix_trace(mix, args.mix_requests, 64 << 30)
        rows.append(("70/30 QD32", "flashlab",
                     run_flashlab(flashlab, mix, device, ["--closed-loop", "--queue-depth", "32"])))
    if args.mqsim:
        config = args.mqsim_config or os.path.join(os.path.dirname(os.path.abspath(args.mqsim)), "ssdconfig.xml")
        rows.insert(1, ("tpcc-small", "MQSim", run_mqsim(args.mqsim, os.path.abspath(config),
                                                         TRACE_FLOW.format(trace=os.path.abspath(trace)))))
        rows.append(("70/30 QD32", "MQSim", run_mqsim(args.mqsim, os.path.abspath(config),
                                                      MIX_FLOW.format(n=args.mix_requests))))
    print(f"{'load':12} {'simulator':9} {'mean us':>9} {'p99 us':>9} {'rd mean':>9} {'rd p99':>9} "
          f"{'wr mean':>9} {'IOPS':>8} {'overtkn':>8} {'adjacnt':>8}")
    for load, sim, s in rows:
        print(f"{load:12} {sim:9} {fmt(s)}")


if __name__ == "__main__":
    main()
