"""Fitting against the papers: ``fit("validate:PROFILE", ...)`` scores each
candidate with the scoreboard's rows for that profile, and the search both
fits share finds a known optimum with either sampler.
"""

from __future__ import annotations

import math

import pytest

import flashlab
from flashlab._fit import minimise, validate_loss

# A synthetic case whose optimum is known: the fit's own loss shape (squared
# log ratios) around op = 0.3 and a 200 us program time, in the ranges a
# fit would search.
OPTIMUM = {"op": 0.3, "nand.program_ns": 200_000.0}
RANGES = {"op": (0.05, 0.5), "nand.program_ns": (50_000.0, 1_000_000.0)}
START = {"op": 0.15, "nand.program_ns": 600_000.0}


def synthetic_loss(values):
    return sum(math.log(values[k] / OPTIMUM[k]) ** 2 for k in OPTIMUM) / len(OPTIMUM)


@pytest.mark.parametrize("sampler", ["tpe", "cmaes"])
def test_both_samplers_find_a_known_optimum(sampler):
    pytest.importorskip("cmaes") if sampler == "cmaes" else None
    best, loss = minimise(synthetic_loss, RANGES, trials=80, sampler=sampler, start=START, seed=3)
    # Stated tolerance: each parameter within 10 % of the optimum in 80 trials.
    for k, v in OPTIMUM.items():
        assert best[k] == pytest.approx(v, rel=0.10), (sampler, best)
    assert loss < synthetic_loss(START) / 20


def test_an_unknown_sampler_is_refused():
    with pytest.raises(ValueError, match="unknown sampler"):
        minimise(synthetic_loss, RANGES, trials=1, sampler="grid")


def test_validate_loss_is_the_mean_squared_distance():
    rows = [{"distance": 0.0}, {"distance": math.log(2)}]
    assert validate_loss(rows) == pytest.approx(math.log(2) ** 2 / 2)


def test_fit_to_the_published_numbers_of_a_profile(client, tmp_path):
    result = flashlab.fit(
        "validate:hs-mtron-7525",
        "hs-mtron-7525",
        {"nand.read_ns": (20_000, 30_000)},
        start={"nand.read_ns": 25_000},
        trials=2,
        client=client,
    )
    # The scoreboard's rows for the profile are the targets, each with its distance.
    assert len(result.table) == 7
    assert set(result.table["paper"]) == {"hudlet11"}
    assert result.loss == pytest.approx((result.table["distance"] ** 2).mean())
    assert (result.table[result.table["verdict"] == "pass"]["distance"] == 0).all()
    assert 20_000 <= result.params["nand.read_ns"] <= 30_000
    assert result.profile_toml.startswith("# Fitted by flashlab.fit to validate:hs-mtron-7525")
    path = tmp_path / "fitted.toml"
    result.save(path)
    check = flashlab.simulate(f"sim:{path}", pattern={"pattern": "SR", "io_size": "4KiB", "io_count": 100}, seed=1)
    assert check.stats.loc[0, "latency.mean_ns"] > 0


def test_a_validate_target_names_its_own_profile_as_base(client):
    with pytest.raises(ValueError, match="give base 'hs-mtron-7525'"):
        flashlab.fit("validate:hs-mtron-7525", "ssd-m", {"op": (0.1, 0.2)}, trials=1, client=client)
