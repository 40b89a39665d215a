"""flashlab.twin: a simulated device's twin from Python, scored on held-out parts and on a workload it never saw.

The target is the simulator (its true profile is known, which is how the
twin is tested); the twin sees it only through its IOs' timestamps.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

import flashlab

# A workload outside the twin's plan: 8 KiB random reads (the plan reads 4
# and 64 KiB), after a 64 MiB fill so that reads find data.
HELD_OUT = [
    {"name": "fill", "pattern": "SW", "io_size": "32KiB", "io_count": 2048, "target_size": "64MiB"},
    {"name": "rr-8k", "pattern": "RR", "io_size": "8KiB", "io_count": 300, "target_size": "64MiB"},
]


@pytest.fixture(scope="module")
def x25e() -> flashlab.Twin:
    return flashlab.twin("sim:intel-x25e")


def test_a_twin_returns_its_profile_and_held_out_scores_as_pandas(x25e):
    assert x25e.good, x25e.not_good
    s = x25e.scores
    assert list(s["part"])[:4] == ["sr-4k", "rr-4k", "sw-32k", "rw-32k"]
    assert set(s["fold"]) == {0, 1, 2}
    # The score is the held-out prediction, made without the part's own
    # measurement; every part has one, for its mean and its p99.
    assert s["held_out_mean_error"].notna().all() and s["held_out_p99_error"].notna().all()
    assert (s["held_out_mean_error"].abs() <= 0.20).mean() >= 0.8, s
    assert (s["held_out_p99_error"].abs() <= 0.35).mean() >= 0.7, s
    p = x25e.params.set_index("key")
    assert p.loc["nand.read_ns", "status"] == "fitted"
    assert p.loc["nand.read_retry_probability", "fitted_to"] == "p99"
    g = x25e.geometry.set_index("estimate")
    assert g.loc["FTL family", "value"] == "page-mapped"
    assert "fitted: flashlab twin, coordinate descent on the means of plan parts sr-4k" in x25e.profile_toml


def test_a_twin_predicts_a_workload_outside_its_plan(x25e):
    measured = flashlab.simulate("sim:intel-x25e", pattern=HELD_OUT, seed=3).stats.set_index("run")
    predicted = x25e.predict(pattern=HELD_OUT, seed=3).stats.set_index("run")
    m, p = measured.loc["rr-8k", "latency.mean_ns"], predicted.loc["rr-8k", "latency.mean_ns"]
    assert p / m - 1 == pytest.approx(0, abs=0.20), (m, p)


def test_a_saved_twin_is_refitted_from_its_measurement_without_the_device(x25e, tmp_path):
    path = x25e.save(tmp_path / "x25e.toml")
    assert (tmp_path / "x25e.toml.twin.json").is_file()
    loaded = flashlab.read_twin(tmp_path / "x25e.toml.twin.json")
    assert loaded.profile_toml == x25e.profile_toml
    # Refitting from the saved plan statistics (a directory holding the JSON
    # is enough) gives the same twin: the fit is deterministic.
    again = flashlab.twin(tmp_path)
    assert again.profile_toml == x25e.profile_toml
    assert again.scores.equals(x25e.scores)
    assert Path(path).read_text() == x25e.profile_toml


@pytest.fixture
def shm_file():
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm on this machine")
    path = Path("/dev/shm") / f"flashlab-twin-{uuid.uuid4().hex[:8]}.img"
    with open(path, "wb") as f:
        f.truncate(64 << 20)
    yield path
    path.unlink()


def test_a_ram_backed_target_is_refused_with_the_reason(shm_file):
    with pytest.raises(flashlab.FlashlabError, match=r"refusing to twin .*: the file is on tmpfs, a RAM-backed file system"):
        flashlab.twin(str(shm_file), allow_write_to="all")


def test_bad_arguments_are_one_line_naming_the_fix():
    with pytest.raises(flashlab.FlashlabError, match=r'allow_write_to="64MiB": no .\+. between offset and length; write "OFFSET\+LENGTH"'):
        flashlab.twin("sim:ssd-h", allow_write_to="64MiB")
    with pytest.raises(flashlab.FlashlabError, match=r'budget="soon": .* write a duration such as'):
        flashlab.twin("sim:ssd-h", budget="soon")


def test_many_devices_are_twinned_at_once_on_dask(client, shm_file):
    # Two simulated devices and one RAM-backed file: the file's refusal is
    # reported and does not stop the others.
    res = flashlab.twins(["sim:ssd-h", "sim:nvme-tlc", str(shm_file)], client=client)
    assert set(res.twins) == {"sim:ssd-h", "sim:nvme-tlc"}
    assert "tmpfs" in res.errors[str(shm_file)]
    assert list(res.scores.columns[:2]) == ["device", "part"]
    assert len(res.scores) == 20
    # Each device's frame is that device's own twin.
    one = res.scores[res.scores["device"] == "sim:ssd-h"].drop(columns="device").reset_index(drop=True)
    assert one.equals(res.twins["sim:ssd-h"].scores)
    assert set(res.params["device"]) == {"sim:ssd-h", "sim:nvme-tlc"}
