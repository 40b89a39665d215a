"""``flashlab.twin``: a simulator profile fitted to a device, and its scores as pandas.

The probe, the characterization plan, the fit and the cross-validation are
the Rust code of ``flashlab twin`` (crate flashlab-probe), run in this
process; this module turns its result into DataFrames, predicts workloads
with the twin, and runs many devices' twins as Dask tasks.

The twin is fitted on the plan's parts only. Its score is the held-out one:
each part's ``held_out_*`` columns come from a fit on the other folds' parts,
never on the part's own measurement (``fold`` names the fold it was held out
in). Workloads outside the plan are predicted with :meth:`Twin.predict`.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _native
from ._simulate import Pattern, Simulation, simulate

PathLike = Union[str, os.PathLike]


@dataclass
class Twin:
    """What :func:`twin` returns.

    Attributes:
        device: the target the twin was measured on.
        profile_toml: the simulator profile, every key with its provenance
            comment (``mechanism:``, ``fitted:`` naming the plan parts it was
            fitted to, ``assumed:``). Usable as ``sim:PATH`` once saved.
        scores: one row per plan part: ``part``, ``group``, ``fold``,
            ``measured_mean_ns``/``measured_p99_ns``, ``fitted_mean_ns``/
            ``fitted_p99_ns`` (the final twin, fitted on every part: not a
            score), ``held_out_mean_ns``/``held_out_p99_ns`` (fitted without
            the part's fold: the score) and ``held_out_mean_error``/
            ``held_out_p99_error`` (predicted / measured - 1).
        params: one row per fitted timing parameter: ``key``, ``value``,
            ``lo``, ``hi``, ``status`` (fitted, on-bound, no-effect),
            ``fitted_to`` (means or p99), ``effect``.
        geometry: one row per probe estimate: ``estimate``, ``value``,
            ``unit``, ``reading``.
        good: the twin's own verdict; ``not_good`` says why not.
        raw: the whole result as saved in ``PROFILE.twin.json``.
    """

    device: str
    profile_toml: str
    scores: pd.DataFrame
    params: pd.DataFrame
    geometry: pd.DataFrame
    good: bool
    not_good: List[str]
    raw: Dict[str, Any] = field(repr=False)

    @property
    def ftl_kind(self) -> str:
        return self.raw["ftl_kind"]

    def save(self, path: PathLike) -> Path:
        """Writes the profile to ``path`` and the whole result beside it as
        ``PATH.twin.json`` (what ``flashlab twin --output PATH`` writes); returns ``path``."""
        path = Path(path)
        path.write_text(self.profile_toml)
        Path(str(path) + ".twin.json").write_text(json.dumps(self.raw, indent=2) + "\n")
        return path

    def predict(
        self,
        pattern: Optional[Pattern] = None,
        trace: Optional[Union[PathLike, Mapping[str, Any]]] = None,
        seed: int = 42,
        results: Optional[PathLike] = None,
    ) -> Simulation:
        """Runs a workload on the twin (as :func:`flashlab.simulate` on its
        profile): the prediction of what the device would do."""
        # The profile file is read when the simulator starts: it need not
        # outlive the run.
        with tempfile.TemporaryDirectory(prefix="flashlab-twin-") as d:
            profile = Path(d) / "twin.toml"
            profile.write_text(self.profile_toml)
            return simulate(f"sim:{profile}", pattern=pattern, trace=trace, seed=seed, results=results)


def _frames(t: Dict[str, Any]) -> Twin:
    rows = []
    for p in t["parts"]:
        m, f, h = p.get("measured"), p.get("predicted"), p.get("held_out")
        get = lambda s, k: (s or {}).get(k)  # noqa: E731 - a skipped part has no statistics
        err = lambda a, b, k: (get(a, k) / get(b, k) - 1.0) if get(a, k) and get(b, k) else None  # noqa: E731
        rows.append(
            {
                "part": p["name"],
                "group": p["group"],
                "fold": p["fold"],
                "measured_mean_ns": get(m, "mean_ns"),
                "measured_p99_ns": get(m, "p99_ns"),
                "fitted_mean_ns": get(f, "mean_ns"),
                "fitted_p99_ns": get(f, "p99_ns"),
                "held_out_mean_ns": get(h, "mean_ns"),
                "held_out_p99_ns": get(h, "p99_ns"),
                "held_out_mean_error": err(h, m, "mean_ns"),
                "held_out_p99_error": err(h, m, "p99_ns"),
            }
        )
    probe = t["probe"]
    names = {
        "erase unit": "erase_unit_bytes",
        "open units": "open_units",
        "mapping granule": "map_granule_bytes",
        "write cache": "write_cache_bytes",
        "read-ahead": "readahead_bytes",
        "parallelism": "parallelism",
        "FTL family": "ftl_family",
    }
    geometry = pd.DataFrame(
        [
            {
                "estimate": label,
                "value": probe.get("family") if key == "ftl_family" else probe[key]["value"],
                "unit": probe[key]["unit"],
                "reading": probe[key]["reading"],
            }
            for label, key in names.items()
        ]
    )
    return Twin(
        device=probe["device"],
        profile_toml=t["profile_toml"],
        scores=pd.DataFrame(rows),
        params=pd.DataFrame(t["params"]),
        geometry=geometry,
        good=not t["not_good"],
        not_good=list(t["not_good"]),
        raw=t,
    )


def _is_saved_twin(device: PathLike) -> bool:
    p = Path(device)
    return str(device).endswith(".twin.json") or (p.is_dir() and any(p.glob("*.twin.json")))


def _saved_twin_json(device: PathLike) -> str:
    p = Path(device)
    if p.is_dir():
        found = sorted(p.glob("*.twin.json"))
        if len(found) != 1:
            raise ValueError(f"{p} holds {len(found)} *.twin.json files; name the one to refit")
        p = found[0]
    return p.read_text()


def twin(
    device: PathLike,
    allow_write_to: Optional[str] = None,
    budget: str = "15m",
    max_write_bytes: str = "2GiB",
    max_capacity: str = "8GiB",
    seed: int = 1,
    output: Optional[PathLike] = None,
) -> Twin:
    """Builds a twin of a device: probe, characterization plan, fit (means,
    then the p99s' service-time spreads), cross-validation, verdict.

    Args:
        device: ``"sim:PROFILE[,key=value...]"``; a file or block device
            (``"/dev/sdX"``, needs ``allow_write_to``; refused when
            RAM-backed); or a saved twin (``PROFILE.twin.json``, or a
            directory holding one), refitted from the measurement it holds
            without the device.
        allow_write_to: ``"OFFSET+LENGTH"`` (e.g. ``"1GiB+256MiB"``) or
            ``"all"``: where the probe and the plan may write, after the
            write-safety check. A ``sim:`` device may always be written.
        budget: the longest the measurement may take, on the device's clock.
        max_write_bytes: the most bytes the probe and the plan may write.
        max_capacity: the largest capacity of the simulated twin.
        seed: seeds the plan's offsets (and a simulated target).
        output: when given, the profile is saved there (and the result as
            ``OUTPUT.twin.json``), as ``flashlab twin --output OUTPUT`` does.

    Raises:
        FlashlabError: a refusal (a RAM-backed target, memory-speed reads)
            or bad arguments, in one line with the reason.

    A twin that is not good is still returned (``good`` is False and
    ``not_good`` says why); the CLI exits 2 for it.
    """
    if _is_saved_twin(device):
        raw = json.loads(_native.refit_twin(_saved_twin_json(device), max_capacity))
    else:
        raw = json.loads(
            _native.twin(os.fspath(device), allow_write_to, budget, max_write_bytes, max_capacity, int(seed))
        )
    t = _frames(raw)
    if output is not None:
        t.save(output)
    return t


def read_twin(path: PathLike) -> Twin:
    """Loads a saved twin (``PROFILE.twin.json``, or a directory holding one) as it was fitted."""
    return _frames(json.loads(_saved_twin_json(path)))


def _twin_task(device: str, kwargs: Dict[str, Any]) -> str:
    """One Dask task: one device's twin (the GIL is released inside)."""
    from flashlab import _native as native  # imported on the worker

    return native.twin(
        device,
        kwargs.get("allow_write_to"),
        kwargs.get("budget", "15m"),
        kwargs.get("max_write_bytes", "2GiB"),
        kwargs.get("max_capacity", "8GiB"),
        int(kwargs.get("seed", 1)),
    )


@dataclass
class Twins:
    """What :func:`twins` returns: every device's :class:`Twin`, and their
    scores and parameters in one frame each (a ``device`` column first).
    A device whose twin failed (a refusal, a device error) is in ``errors``."""

    twins: Dict[str, Twin]
    scores: pd.DataFrame
    params: pd.DataFrame
    errors: Dict[str, str]


def twins(
    devices: Sequence[str],
    client: Any = None,
    allow_write_to: Optional[str] = None,
    budget: str = "15m",
    max_write_bytes: str = "2GiB",
    max_capacity: str = "8GiB",
    seed: int = 1,
) -> Twins:
    """Builds many devices' twins at once, one Dask task per device.

    Args:
        devices: targets as :func:`twin` takes them. A real device must be
            reachable from the worker that runs its task (on several
            machines: pin tasks with Dask's resources or run one cluster per
            host).
        client: a ``dask.distributed.Client``; by default a LocalCluster
            with one single-threaded worker per core, closed at the end.
        The other arguments are :func:`twin`'s, the same for every device.

    One device's refusal or failure does not stop the others: it is in
    ``errors`` with its one-line message.
    """
    from ._sweep import default_client

    kwargs = dict(
        allow_write_to=allow_write_to, budget=budget, max_write_bytes=max_write_bytes,
        max_capacity=max_capacity, seed=seed,
    )
    own = client is None
    if own:
        client = default_client()
    try:
        token = uuid.uuid4().hex[:12]
        futures = {
            d: client.submit(_twin_task, d, kwargs, key=f"flashlab-twin-{i}-{token}", pure=False)
            for i, d in enumerate(devices)
        }
        out: Dict[str, Twin] = {}
        errors: Dict[str, str] = {}
        for d, fut in futures.items():
            try:
                out[d] = _frames(json.loads(fut.result()))
            except Exception as e:  # a refusal or a lost worker: that device fails, the others go on
                errors[d] = str(e)
    finally:
        if own:
            cluster = client.cluster
            client.close()
            cluster.close()

    def stacked(attr: str) -> pd.DataFrame:
        frames = [getattr(t, attr).assign(device=d) for d, t in out.items()]
        if not frames:
            return pd.DataFrame()
        df = pd.concat(frames, ignore_index=True)
        return df[["device"] + [c for c in df.columns if c != "device"]]

    return Twins(twins=out, scores=stacked("scores"), params=stacked("params"), errors=errors)
