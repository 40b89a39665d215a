"""flashlab.simulate and flashlab.read_results against the CLI's results directories."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import flashlab


def test_read_results_round_trips_a_cli_run(tmp_path, flashlab_bin):
    out = tmp_path / "res"
    subprocess.run(
        [flashlab_bin, "run", "--device", "sim:ssd-m,capacity=1GiB", "--pattern-file", str(_pattern_file(tmp_path)),
         "--results", str(out), "--quiet"],
        check=True, stdout=subprocess.DEVNULL,
    )
    r = flashlab.read_results(out)
    summary = json.loads((out / "summary.json").read_text())
    assert list(r.runs["run"]) == ["RR", "RW"]
    for row, saved in zip(r.runs.itertuples(), summary["runs"]):
        stats = saved["stats"]
        assert getattr(row, "ios") == stats["ios"]
        assert r.runs.loc[row.Index, "latency.p99_ns"] == stats["latency"]["p99_ns"]
        assert r.runs.loc[row.Index, "device.write_amplification"] == saved["device_stats"]["write_amplification"]
    recs = r.records
    assert len(recs) == 3000 + 4000
    rw = recs[(recs.run == "RW") & ~recs.warmup]
    assert len(rw) == summary["runs"][1]["stats"]["ios"]
    # The statistics recomputed from the per-IO records are the saved ones.
    assert rw.latency_ns.mean() == pytest.approx(summary["runs"][1]["stats"]["latency"]["mean_ns"], rel=1e-12)
    assert set(recs["mode"].unique()) == {"read", "write"}
    arr = r.records_array("RW")
    assert isinstance(arr, np.memmap) and len(arr) == 4000


def _pattern_file(tmp_path):
    p = tmp_path / "runs.toml"
    p.write_text(
        '[defaults]\nio_size = "4KiB"\n[[run]]\npattern = "RR"\nio_count = 3000\n'
        '[[run]]\npattern = "RW"\nio_count = 4000\nio_ignore = 1000\n'
    )
    return p


def test_simulate_returns_statistics_accounting_and_records(tmp_path):
    sim = flashlab.simulate("sim:ssd-m,capacity=1GiB,op=0.15", pattern={"pattern": "RW", "io_size": "4KiB", "io_count": 2500}, seed=3)
    assert list(sim.stats["run"]) == ["RW"]
    assert sim.stats.loc[0, "ios"] == 2500
    assert len(sim.records) == 2500
    assert sim.device_stats["RW"]["host"]["writes"] == 2500
    assert "write_amplification" in sim.device_stats["RW"]
    again = flashlab.simulate("ssd-m,capacity=1GiB,op=0.15", pattern={"pattern": "RW", "io_size": "4KiB", "io_count": 2500}, seed=3)
    assert (again.records.latency_ns.to_numpy() == sim.records.latency_ns.to_numpy()).all()


def test_simulate_replays_a_trace(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("# flashlab-trace v1\n" + "".join(f"{i * 100000} W {i * 8192} 4096\n" for i in range(200)))
    sim = flashlab.simulate("sim:ssd-m,capacity=1GiB", trace=trace)
    assert sim.stats.loc[0, "ios"] == 200
    assert (sim.records["mode"] == "write").all()


def test_a_bad_replay_setting_is_named_as_python_writes_it(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("# flashlab-trace v1\n0 W 0 4096\n")
    with pytest.raises(flashlab.FlashlabError, match=r'trace\["speed"\] 0 must be a positive number, e.g. trace=\{"path": \.\.\., "speed": 2\.0\}'):
        flashlab.simulate("sim:ssd-m,capacity=1GiB", trace={"path": trace, "speed": 0})


def test_a_bad_pattern_parameter_is_named_as_python_writes_it():
    with pytest.raises(flashlab.FlashlabError, match=r'use e\.g\. pattern=\{\.\.\., "io_size": "4KiB"\}$'):
        flashlab.simulate("sim:ssd-m,capacity=1GiB", pattern={"pattern": "RW", "io_size": 1000})
    with pytest.raises(flashlab.FlashlabError, match=r'pass pattern=\{\.\.\., "queue_depth": 1\} or more'):
        flashlab.simulate("sim:ssd-m,capacity=1GiB", pattern={"pattern": "RW", "queue_depth": 0})


def test_errors_are_the_cli_one_line_messages():
    with pytest.raises(flashlab.FlashlabError, match="unknown simulator profile 'nope'"):
        flashlab.simulate("sim:nope", pattern="RW")
    with pytest.raises(flashlab.FlashlabError, match="io_sz"):
        flashlab.simulate("sim:ssd-m,capacity=1GiB", pattern={"pattern": "RW", "io_sz": "4KiB"})
    with pytest.raises(FileNotFoundError):
        flashlab.read_results("/nonexistent/results")


def test_read_results_loads_a_uflip_suite_with_its_table3_row(tmp_path, flashlab_bin):
    out = tmp_path / "uflip"
    subprocess.run(
        [flashlab_bin, "suite", "uflip", "--device", "sim:ssd-m,capacity=1GiB", "--quick", "--results", str(out)],
        check=True, stdout=subprocess.DEVNULL,
    )
    r = flashlab.read_results(out)
    manifest = json.loads((out / "manifest.json").read_text())
    saved = json.loads((out / "uflip-summary.json").read_text())
    assert list(r.runs["run"]) == [e["name"] for e in manifest["runs"]]
    assert r.table3 is not None
    assert r.table3.iloc[0]["rw_ms"] == saved["table3"]["rw_ms"]
    assert r.summaries["uflip"]["hints"] == saved["hints"]
    # Every run's records, each as long as its records.bin.
    counts = r.records.groupby("run", observed=True).size()
    for e in manifest["runs"]:
        size = (out / e["dir"] / "records.bin").stat().st_size
        assert counts.get(e["name"], 0) == (size - 32) // 40
