"""flashlab.fit recovers the hidden parameters of a simulated device.

The "measured device" is the simulator with op=0.2 and a 700 us page
program time; fit sees only its results directory and must find both from a
perturbed start (op=0.3, 1 ms), searching op in [0.1, 0.4] and the program
time in [300 us, 1.5 ms], within 60 trials evaluated 2 at a time on Dask.
Stated tolerance: each parameter within 10 % of the hidden value, and every
target figure within 5 %.
"""

from __future__ import annotations

import pytest

import flashlab

BASE = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
HIDDEN = {"op": 0.2, "nand.program_ns": 700_000}
WORKLOAD = [
    {"name": "SW", "pattern": "SW", "io_size": "4KiB", "io_count": 2000},
    {"name": "RW", "pattern": "RW", "io_size": "4KiB", "io_count": 30000, "io_ignore": 10000},
    {"name": "RR", "pattern": "RR", "io_size": "4KiB", "io_count": 2000},
]


def test_fit_recovers_hidden_parameters(client, tmp_path):
    spec = BASE + "".join(f",{k}={v}" for k, v in HIDDEN.items())
    flashlab.simulate(spec, pattern=WORKLOAD, seed=7, results=tmp_path / "measured")
    result = flashlab.fit(
        tmp_path / "measured",
        BASE,
        {"op": (0.1, 0.4), "nand.program_ns": (300_000, 1_500_000)},
        start={"op": 0.3, "nand.program_ns": 1_000_000},
        trials=60,
        seed=7,
        client=client,
        results=tmp_path / "fit",
    )
    assert result.params["op"] == pytest.approx(HIDDEN["op"], rel=0.10)
    assert result.params["nand.program_ns"] == pytest.approx(HIDDEN["nand.program_ns"], rel=0.10)
    assert (result.table["residual"].abs() < 0.05).all(), result.table
    assert set(result.table["run"]) == {"SW", "RW", "RR"}
    # The fitted profile is a usable simulator profile that says what it was fitted to.
    assert result.profile_toml.startswith("# Fitted by flashlab.fit to ")
    path = tmp_path / "fitted.toml"
    result.save(path)
    check = flashlab.simulate(f"sim:{path}", pattern=WORKLOAD, seed=7)
    assert check.stats.loc[0, "latency.mean_ns"] == pytest.approx(result.table.query("run == 'SW' and metric == 'latency_mean_ns'").fitted.iloc[0])
