"""flashlab.fit(cross_validate=True): each run held out in turn, fitted on
the others, and scored by that fold's fit.

Two checks. When one mechanism (the page program time) drives every run, the
fit of any two runs predicts the third: each held-out run within 10 %.
Second: when each parameter explains one run only, the in-sample fit
matches everything while the held-out runs are not predicted at all: the
cross-validated loss exposes what the in-sample loss hides.
"""

from __future__ import annotations

import pytest

import flashlab

BASE = "ssd-m,capacity=128MiB,channels=2,cache=off,prefill=on"
WORKLOAD = [
    {"name": "SW", "pattern": "SW", "io_size": "4KiB", "io_count": 1500},
    {"name": "SW16", "pattern": "SW", "io_size": "16KiB", "io_count": 1500},
    {"name": "RW", "pattern": "RW", "io_size": "4KiB", "io_count": 1500},
]
PARAMS = {"nand.program_ns": (300_000, 1_500_000)}


def test_a_held_out_run_is_predicted_by_the_fit_of_the_others(client, tmp_path):
    flashlab.simulate(BASE + ",nand.program_ns=700000", pattern=WORKLOAD, seed=7, results=tmp_path / "measured")
    result = flashlab.fit(
        tmp_path / "measured", BASE, PARAMS, trials=14, seed=7, client=client,
        results=tmp_path / "fit", cross_validate=True, metrics=("latency_mean_ns",),
    )
    cv = result.cv
    assert set(cv["held_out"]) == {"SW", "SW16", "RW"}
    assert (cv["residual"].abs() < 0.10).all(), cv
    # each fold found the program time without its held-out run
    for params in cv["params"]:
        assert params["nand.program_ns"] == pytest.approx(700_000, rel=0.10)
    assert result.cv_loss < 0.01
    assert "cross-validated loss" in result.profile_toml


def test_parameters_that_each_explain_one_run_predict_nothing_held_out(client, tmp_path):
    # SW depends on the program time only, RR on the read time only: fitted
    # together both match (in-sample loss about 0), but a fold that holds one
    # out has nothing that constrains its parameter, so its prediction is
    # wherever the search left that parameter
    workload = [WORKLOAD[0], {"name": "RR", "pattern": "RR", "io_size": "4KiB", "io_count": 1500}]
    flashlab.simulate(BASE + ",nand.program_ns=700000,nand.read_ns=100000", pattern=workload, seed=7,
                      results=tmp_path / "measured")
    result = flashlab.fit(
        tmp_path / "measured", BASE, {**PARAMS, "nand.read_ns": (25_000, 400_000)}, trials=32, seed=7,
        client=client, results=tmp_path / "fit", cross_validate=True, metrics=("latency_mean_ns",),
    )
    assert result.loss < 0.01, result.table
    assert result.cv_loss > 10 * max(result.loss, 1e-4), result.cv
