"""bench/fit/uflip_fit.py scores a grid point with the scoreboard's own
numbers and bands: it reads crates/suite/validate/published.toml and
tolerances.toml (the bands are stated once) instead of holding copies.

Runs under pytest, or on its own: ``python3 python/tests/test_uflip_fit.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11; the script itself needs 3.11
    import pytest

    pytest.skip("bench/fit/uflip_fit.py needs Python 3.11 (tomllib)", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
VALIDATE = REPO / "crates" / "suite" / "validate"


def uflip_fit():
    spec = importlib.util.spec_from_file_location("uflip_fit", REPO / "bench" / "fit" / "uflip_fit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def classes():
    with open(VALIDATE / "tolerances.toml", "rb") as f:
        return {c["name"]: c for c in tomllib.load(f)["class"]}


def test_every_cell_is_judged_by_its_scoreboard_class():
    fit = uflip_fit()
    assert not hasattr(fit, "TOL"), "uflip_fit.py holds its own copy of the bands again"
    table3, _ = fit.load_published()
    with open(VALIDATE / "published.toml", "rb") as f:
        numbers = {n["id"]: n for n in tomllib.load(f)["number"]}
    cls = classes()
    assert len(table3) == 7
    for profile, cells in table3.items():
        for slug, (printed, band) in zip(fit.SLUGS, cells):
            n = numbers[f"uflip.t3.{profile}.{slug}"]
            c = cls[n["class"]]
            assert printed == n["printed"]
            assert band == (c["kind"], c.get("min"), c.get("max")), (profile, slug)


def test_a_point_passes_exactly_where_the_scoreboard_band_does():
    fit = uflip_fit()
    table3, extras = fit.load_published()
    magnitude = classes()["magnitude"]
    pub = [fit.cell(c) for c, _ in table3["memoright"]]
    bands = [b for _, b in table3["memoright"]]
    # Every cell exactly as published: all 12 pass.
    assert fit.score(pub, bands, pub)[0] == 12
    # SR just outside the magnitude class's upper bound fails, just inside passes.
    outside = [pub[0] * magnitude["max"] * 1.01] + pub[1:]
    inside = [pub[0] * magnitude["max"] * 0.99] + pub[1:]
    assert fit.score(pub, bands, outside)[0] == 11
    assert fit.score(pub, bands, inside)[0] == 12
    # The extras (section 5.1) carry their published value and class too.
    value, band = extras["mtron"]["Startup"]
    assert value == 125.0
    assert band == (magnitude["kind"], magnitude["min"], magnitude["max"])


if __name__ == "__main__":
    for name, test in list(globals().items()):
        if name.startswith("test_"):
            test()
            print(f"{name}: ok")
