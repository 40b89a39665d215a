"""``flashlab.fit``: calibrate a simulator profile to measured results.

The target is a results directory (of a real device, or of any simulator
run): its pattern runs are replayed exactly (same resolved patterns, via a
grid's ``replicate``) on candidate profiles, and each run's latency figures
are compared with the measured ones.

Loss (the distance minimised)::

    loss = mean over runs r and metrics m of  ln(simulated[r, m] / target[r, m]) ** 2

a mean squared log ratio: scale-free (a 10 % miss costs the same on a
50 us read as on a 5 ms write), symmetric in over- and under-estimation.
The default metrics are the mean, median and 99th-percentile latency of
each run (its latency distribution), so the baseline patterns SR, RR, SW,
RW of a measured device make a uFLIP Table 3 row and its tails. The
residuals reported are ``simulated / target - 1`` per run and metric.

Optuna proposes points (TPE by default, CMA-ES with ``sampler="cmaes"``,
which needs the ``cmaes`` package); each batch of proposals is evaluated in
parallel as Dask tasks (one grid point each, the same Rust code as a sweep).

A target ``"validate:PROFILE"`` fits against the papers instead: every
published number ``flashlab validate`` scores for that profile (its rows,
``flashlab validate --profile PROFILE``) is a target, each candidate is the
profile with the candidate's values as overrides (``--set``), and the loss
is the mean over the rows of the squared *distance* of each simulated value
from its tolerance band (0 inside the band, ``|ln(value / nearest bound)|``
outside, 1 for a number that is missing or where the paper has none; see
``crates/suite/src/validate.rs``). A loss of 0 means every row passes; the
tolerances are the reviewed ones of ``crates/suite/validate/tolerances.toml``.

Cross-validation (``cross_validate=True``): a fit that reproduces what it
was fitted to says little about what it predicts. Each fold holds one part
of the target out -- a run of a results directory, or a figure (the rows of
one ``source``) of a ``validate:`` target -- runs a search of its own
(``trials`` candidates, the same sampler and seed) on the rest, and scores
the held-out part with that fold's best candidate. ``FitResult.cv`` has one
row per held-out figure (target, predicted, residual; or for ``validate:``
the held-out rows' verdicts), ``cv_loss`` their loss in the in-sample
loss's units. Each candidate is run on the whole target, so the held-out
prediction costs no extra run; the folds' searches cost ``folds x trials``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from ._results import read_results
from ._sweep import _point_tasks, _run_point, default_client, load_grid

DEFAULT_METRICS: Tuple[str, ...] = ("latency_mean_ns", "latency_p50_ns", "latency_p99_ns")

#: Run-statistics columns of ``read_results(...).runs`` for each sweep metric.
_TARGET_COLUMNS = {
    "latency_mean_ns": "latency.mean_ns",
    "latency_p50_ns": "latency.p50_ns",
    "latency_p90_ns": "latency.p90_ns",
    "latency_p99_ns": "latency.p99_ns",
    "latency_p999_ns": "latency.p999_ns",
    "latency_max_ns": "latency.max_ns",
    "iops": "iops",
    "mb_per_s": "mb_per_s",
}

ParamRange = Union[Tuple[float, float], Mapping[str, Any]]


@dataclass
class FitResult:
    """What :func:`fit` returns.

    Attributes:
        params: the fitted parameter values.
        loss: the loss at ``params`` (see the module documentation).
        table: target vs fitted, one row per run and metric, with the residual.
        profile_toml: the fitted profile as TOML, with a comment block saying
            what it was fitted to and the residuals.
        trials: every evaluated point: parameters and loss.
        cv: with ``cross_validate=True``, one row per held-out run and metric
            (``held_out``, ``target``, ``predicted``, ``residual``, the fold's
            ``params``), or for a ``validate:`` target per held-out row
            (``held_out`` figure, ``number``, ``verdict``, ``distance``).
        cv_loss: the held-out loss: mean squared log ratio of the held-out
            runs' figures, or mean squared distance of the held-out rows.
    """

    params: Dict[str, Any]
    loss: float
    table: pd.DataFrame
    profile_toml: str
    trials: pd.DataFrame = field(repr=False)
    #: With ``cross_validate=True``: each held-out part scored by the fit of the rest.
    cv: Optional[pd.DataFrame] = None
    #: With ``cross_validate=True``: the held-out loss (same units as ``loss``).
    cv_loss: Optional[float] = None

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the fitted profile; serve it with ``flashlab serve --profile PATH``."""
        Path(path).write_text(self.profile_toml)


def _distribution(name: str, spec: ParamRange):
    import optuna

    if isinstance(spec, Mapping):
        low, high = spec["low"], spec["high"]
        log = bool(spec.get("log", False))
        is_int = bool(spec.get("int", isinstance(low, int) and isinstance(high, int)))
    else:
        low, high = spec
        log = False
        is_int = isinstance(low, int) and isinstance(high, int)
    if not low < high:
        raise ValueError(f"parameter {name}: range ({low}, {high}) is empty; give (low, high) with low < high")
    if is_int:
        return optuna.distributions.IntDistribution(int(low), int(high), log=log)
    return optuna.distributions.FloatDistribution(float(low), float(high), log=log)


def _targets(target: Any, runs: Optional[Sequence[str]], metrics: Sequence[str]) -> Tuple[str, Dict[str, Dict[str, float]]]:
    path = Path(target)
    loaded = read_results(path)
    table = loaded.runs
    if runs is not None:
        missing = set(runs) - set(table["run"])
        if missing:
            raise ValueError(f"target {path} has no runs named {sorted(missing)}; it has {list(table['run'])}")
        table = table[table["run"].isin(runs)]
    out: Dict[str, Dict[str, float]] = {}
    for _, row in table.iterrows():
        out[row["run"]] = {m: float(row[_TARGET_COLUMNS[m]]) for m in metrics}
    return str(path.resolve()), out


def _sampler(sampler: str, seed: int, trials: int, start: Optional[Mapping[str, Any]]):
    import optuna

    if sampler == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=min(10, max(trials // 4, 1)), multivariate=True)
    if sampler == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, x0=dict(start) if start else None)
    raise ValueError(f"unknown sampler {sampler!r}; use 'tpe' or 'cmaes'")


def minimise(
    objective,
    params: Mapping[str, ParamRange],
    *,
    trials: int = 40,
    sampler: str = "tpe",
    start: Optional[Mapping[str, Any]] = None,
    seed: int = 42,
) -> Tuple[Dict[str, Any], float]:
    """The search every fit runs, on a plain function: Optuna's ask/tell
    with the fit's parameter ranges and samplers, ``objective(values) ->
    loss`` evaluated in this process. Returns the best values and loss."""
    import optuna

    distributions = {k: _distribution(k, v) for k, v in params.items()}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=_sampler(sampler, seed, trials, start))
    if start:
        study.enqueue_trial(dict(start))
    for _ in range(trials):
        t = study.ask(distributions)
        loss = float(objective(dict(t.params)))
        study.tell(t, loss if math.isfinite(loss) else 1e9)
    return dict(study.best_trial.params), float(study.best_value)


def _validate_point(profile: str, overrides: str) -> str:
    """One candidate against the scoreboard, in this process (a Dask task):
    what ``flashlab validate --profile PROFILE --set OVERRIDES --json``
    prints, from the same library code. Returns its JSON, or
    ``{"error": ...}``."""
    try:
        return _native.validate(profile, overrides)
    except _native.FlashlabError as e:
        return json.dumps({"error": str(e)})


def validate_loss(rows: Sequence[Mapping[str, Any]]) -> float:
    """The loss against the scoreboard: mean squared distance of the rows."""
    d = [float(r["distance"]) for r in rows]
    return sum(x * x for x in d) / len(d) if d else math.inf


def _show(v: Mapping[str, Any]) -> Any:
    return v.get("value") if v.get("kind") == "number" else v.get("kind")


def _search(
    study: Any,
    distributions: Mapping[str, Any],
    trials: int,
    batch: Optional[int],
    client: Any,
    submit: Callable[[Any, Dict[str, Any]], Any],
    evaluate: Callable[[Any], Tuple[float, Optional[str], Any]],
) -> Tuple[List[Dict[str, Any]], Tuple[float, Dict[str, Any], Any]]:
    """The ask/evaluate/tell loop both targets share: asks the study for a
    batch of candidates (one per Dask worker thread unless `batch`), evaluates the
    batch in parallel (`submit(client, values)` gives a future, `evaluate`
    turns its result into (loss, error, detail)), and tells the study each
    loss (1e9 for a candidate that failed). Returns every trial's row and the
    best (loss, values, detail); raises when no candidate ran. Closes the
    Dask client it creates when `client` is None."""
    own = client is None
    if own:
        client = default_client()
    rows: List[Dict[str, Any]] = []
    best: Tuple[float, Dict[str, Any], Any] = (math.inf, {}, None)
    try:
        # One proposal per thread: a cluster passed in may run several
        # points per worker.
        workers = max(sum(client.nthreads().values()), 1)
        per_batch = batch or workers
        done = 0
        while done < trials:
            asked = [study.ask(distributions) for _ in range(min(per_batch, trials - done))]
            values = [{k: _format_value(v) for k, v in t.params.items()} for t in asked]
            futures = [submit(client, v) for v in values]
            for t, v, fut in zip(asked, values, futures):
                loss, error, detail = evaluate(fut.result())
                study.tell(t, loss if math.isfinite(loss) else 1e9)
                rows.append({**v, "loss": loss, "error": error})
                if loss < best[0]:
                    best = (loss, v, detail)
            done += len(asked)
    finally:
        if own:
            cluster = client.cluster
            client.close()
            cluster.close()
    if not math.isfinite(best[0]):
        errors = [r["error"] for r in rows if r.get("error")]
        raise RuntimeError(f"no candidate ran; first error: {errors[0] if errors else 'unknown'}")
    return rows, best


def _held_out_loss(cv: pd.DataFrame) -> float:
    """The loss's mean squared log ratio over every held-out run and metric."""
    terms = [math.log(p / t) ** 2 if p > 0 and t > 0 else math.inf for p, t in zip(cv["predicted"], cv["target"])]
    return sum(terms) / len(terms) if terms else math.inf


@contextlib.contextmanager
def _client_for(client: Any, needed: bool) -> Iterator[Any]:
    """`client`, or where it is None and `needed`, a default one closed on exit
    (a search alone makes and closes its own)."""
    if client is not None or not needed:
        yield client
        return
    own = default_client()
    try:
        yield own
    finally:
        cluster = own.cluster
        own.close()
        cluster.close()


def _cross_validate(
    folds: Sequence[str],
    train_loss: Callable[[str, Any], float],
    parse: Callable[[Any], Tuple[Optional[str], Any]],
    distributions: Mapping[str, Any],
    *,
    sampler: str,
    seed: int,
    trials: int,
    start: Optional[Mapping[str, Any]],
    batch: Optional[int],
    client: Any,
    submit: Callable[[Any, Dict[str, Any]], Any],
) -> List[Tuple[str, Dict[str, Any], Any]]:
    """One search per fold, each scored without its held-out part
    (``train_loss(fold, detail)``; ``parse(result)`` gives (error, detail)):
    (fold, that search's best values, their detail) per fold. The detail
    covers the whole target, held-out part included."""
    import optuna

    if len(folds) < 2:
        raise ValueError(f"cross-validation needs at least two parts to hold out in turn; the target has {len(folds)}")
    out = []
    for fold in folds:
        study = optuna.create_study(direction="minimize", sampler=_sampler(sampler, seed, trials, start))
        if start:
            study.enqueue_trial(dict(start))

        def evaluate(result: Any, fold: str = fold) -> Tuple[float, Optional[str], Any]:
            error, detail = parse(result)
            return (train_loss(fold, detail) if error is None else math.inf), error, detail

        _, (_, values, detail) = _search(study, distributions, trials, batch, client, submit, evaluate)
        out.append((fold, values, detail))
    return out


def _fit_validate(
    profile: str,
    base: str,
    params: Mapping[str, ParamRange],
    *,
    trials: int,
    sampler: str,
    start: Optional[Mapping[str, Any]],
    seed: int,
    client: Any,
    batch: Optional[int],
    flashlab_bin: Optional[str],
    cross_validate: bool = False,
) -> FitResult:
    import optuna

    if flashlab_bin is not None:
        warnings.warn(
            "flashlab_bin is no longer used: a validate: target is scored in-process", DeprecationWarning, stacklevel=3
        )
    if base.split(",")[0] != profile:
        raise ValueError(f"target validate:{profile} fits that profile: give base {profile!r} (its overrides go in params)")
    distributions = {k: _distribution(k, v) for k, v in params.items()}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=_sampler(sampler, seed, trials, start))
    if start:
        study.enqueue_trial(dict(start))

    def submit(client: Any, v: Dict[str, Any]) -> Any:
        return client.submit(_validate_point, profile, ",".join(f"{k}={x}" for k, x in v.items()), pure=False)

    def evaluate(result: str) -> Tuple[float, Optional[str], List[Dict[str, Any]]]:
        out = json.loads(result)
        # Rows true by construction (``counted`` false: a profile parameter
        # echoed back) are listed by validate but not scored, nor fitted.
        scored = [r for r in out.get("rows", []) if r.get("counted", True)]
        loss = validate_loss(scored) if "error" not in out else math.inf
        return loss, out.get("error"), scored

    with _client_for(client, cross_validate) as client:
        rows, (loss, fitted, scored) = _search(study, distributions, trials, batch, client, submit, evaluate)
        cv, cv_loss = None, None
        if cross_validate:
            figures = sorted({r["source"] for r in scored})

            def parse(result: str) -> Tuple[Optional[str], List[Dict[str, Any]]]:
                out = json.loads(result)
                return out.get("error"), [r for r in out.get("rows", []) if r.get("counted", True)]

            def train_loss(fold: str, scored_rows: List[Dict[str, Any]]) -> float:
                return validate_loss([r for r in scored_rows if r["source"] != fold])

            folds = _cross_validate(
                figures, train_loss, parse, distributions, sampler=sampler, seed=seed, trials=trials,
                start=start, batch=batch, client=client, submit=submit,
            )
            cv = pd.DataFrame(
                [
                    {
                        "held_out": fold,
                        "number": r["what"],
                        "published": _show(r["published"]),
                        "predicted": _show(r["simulated"]),
                        "verdict": r["verdict"],
                        "distance": r["distance"],
                        "params": values,
                    }
                    for fold, values, detail in folds
                    for r in detail
                    if r["source"] == fold
                ]
            )
            cv_loss = validate_loss(cv.to_dict("records"))
    table = pd.DataFrame(
        [
            {
                "paper": r["paper"],
                "source": r["source"],
                "number": r["what"],
                "published": _show(r["published"]),
                "fitted": _show(r["simulated"]),
                "tolerance": r["tolerance"],
                "verdict": r["verdict"],
                "distance": r["distance"],
            }
            for r in scored
        ]
    )
    spec = base + "".join(f",{k}={v}" for k, v in fitted.items())
    passed = int((table["verdict"] == "pass").sum())
    header = [
        f"# Fitted by flashlab.fit to validate:{profile} (the papers' published numbers for it, crates/suite/validate/published.toml)",
        f"# base profile: {base}",
        f"# fitted: {', '.join(f'{k}={v}' for k, v in fitted.items())}",
        f"# loss (mean squared distance from the tolerance bands over {len(table)} rows): {loss:.6g}; {passed}/{len(table)} rows pass; {len(rows)} trials, sampler {sampler}",
    ]
    if cv is not None:
        held_pass = int((cv["verdict"] == "pass").sum())
        header.append(
            f"# cross-validated (each figure held out in turn, fitted on the others): loss {cv_loss:.6g}; "
            f"{held_pass}/{len(cv)} held-out rows pass"
        )
    header.append("# rows (published, fitted, tolerance, verdict):")
    header += [f"#   {r.number[:60]:<60} {r.published!s:>10} {r.fitted!s:>12.6} {r.tolerance:>12} {r.verdict}" for r in table.itertuples()]
    profile_toml = "\n".join(header) + "\n" + _native.profile_toml(spec)
    return FitResult(
        params=dict(fitted), loss=loss, table=table, profile_toml=profile_toml, trials=pd.DataFrame(rows), cv=cv, cv_loss=cv_loss
    )


def loss_of(simulated: Mapping[str, Mapping[str, float]], target: Mapping[str, Mapping[str, float]]) -> float:
    """The fit's loss: the mean squared log ratio over every run and metric of the target."""
    terms = []
    for run, metrics in target.items():
        for m, t in metrics.items():
            s = simulated.get(run, {}).get(m)
            if s is None or not (s > 0 and t > 0) or math.isnan(s):
                return math.inf
            terms.append(math.log(s / t) ** 2)
    return sum(terms) / len(terms) if terms else math.inf


def _format_value(v: Any) -> Any:
    return int(v) if isinstance(v, int) else float(f"{v:.6g}")


def fit(
    target: Union[str, os.PathLike],
    base: str,
    params: Mapping[str, ParamRange],
    *,
    trials: int = 40,
    sampler: str = "tpe",
    start: Optional[Mapping[str, Any]] = None,
    runs: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    seed: int = 42,
    client: Any = None,
    batch: Optional[int] = None,
    results: Optional[Union[str, os.PathLike]] = None,
    flashlab_bin: Optional[str] = None,
    cross_validate: bool = False,
) -> FitResult:
    """Fits simulator parameters so that the target's runs are reproduced.

    Args:
        target: a results directory (``flashlab run`` on a real device or a
            simulator); its pattern runs are replicated on each candidate.
            Or ``"validate:PROFILE"``: the papers' published numbers for that
            profile (``flashlab validate --profile PROFILE``), each candidate
            scored in-process by the same code as ``flashlab validate``;
            then ``base`` is the profile's name and
            ``runs``, ``metrics``, ``results`` do not apply.
        base: the base profile, as after ``sim:`` (``"ssd-m,capacity=1GiB"``
            or a TOML path); the fitted profile is this plus the fitted values.
        params: simulator keys (aliases such as ``op``, ``log_blocks``,
            ``cache``, or dotted paths such as ``nand.program_ns``,
            ``host.command_overhead_ns``) with their ranges: ``(low, high)``
            (integers give an integer parameter) or ``{"low":, "high":,
            "log": True, "int": True}``.
        trials: the evaluation budget.
        sampler: ``"tpe"`` (default) or ``"cmaes"``.
        start: a first point to evaluate (e.g. a datasheet's values).
        runs: the target runs to fit (default: all its pattern runs).
        metrics: the per-run metrics compared (see ``DEFAULT_METRICS``).
        seed: the sampler's and the simulator's seed.
        client: a ``dask.distributed.Client`` (default: a LocalCluster, one worker per core).
        batch: proposals evaluated at once (default: the workers' threads, one per worker on the default LocalCluster).
        results: where the evaluated points are kept (default ``results/fit-NAME``).
        flashlab_bin: no longer used (a ``validate:`` target is scored
            in-process); accepted so that existing calls keep working, with
            a ``DeprecationWarning``.
        cross_validate: also hold each run (``validate:``: each figure) out
            in turn, fit the rest with a search of its own, and score the
            held-out part (``FitResult.cv``, ``cv_loss``; the module
            documentation says how). Costs a search per part.
    """
    import optuna

    if isinstance(target, str) and target.startswith("validate:"):
        return _fit_validate(
            target[len("validate:"):],
            base,
            params,
            trials=trials,
            sampler=sampler,
            start=start,
            seed=seed,
            client=client,
            batch=batch,
            flashlab_bin=flashlab_bin,
            cross_validate=cross_validate,
        )

    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in _TARGET_COLUMNS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; use {sorted(_TARGET_COLUMNS)}")
    target_dir, target_values = _targets(target, runs, metrics)
    if not target_values:
        raise ValueError(f"target {target} has no runs to fit")
    distributions = {k: _distribution(k, v) for k, v in params.items()}
    smp = _sampler(sampler, seed, trials, start)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=smp)
    if start:
        study.enqueue_trial(dict(start))
    name = Path(target_dir).name
    root = Path(results) if results is not None else Path("results") / f"fit-{name}"
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()

    def grid_for(values: Mapping[str, Any]) -> str:
        g = {
            "name": f"fit-{name}",
            "device": base,
            "seeds": [seed],
            "parameters": {k: [_format_value(v)] for k, v in values.items()},
            "replicate": target_dir,
        }
        if runs is not None:
            g["replicate_runs"] = list(runs)
        return json.dumps(load_grid(g))

    def submit(client: Any, v: Dict[str, Any]) -> Any:
        _, point_json, workload_json, records = _point_tasks(grid_for(v))[0]
        return client.submit(_run_point, point_json, workload_json, records, str(root), pure=False)

    def parse(result: str) -> Tuple[Optional[str], Dict[str, Dict[str, float]]]:
        outcome = json.loads(result)
        if outcome["status"] != "ok":
            return outcome.get("error") or outcome["status"], {}
        return None, {r["run"]: {m: float(r[m]) for m in metrics} for r in outcome["runs"]}

    def evaluate(result: str) -> Tuple[float, Optional[str], Dict[str, Dict[str, float]]]:
        error, simulated = parse(result)
        return (loss_of(simulated, target_values) if error is None else math.inf), error, simulated

    with _client_for(client, cross_validate) as client:
        rows, (loss, fitted, simulated) = _search(study, distributions, trials, batch, client, submit, evaluate)
        cv, cv_loss = None, None
        if cross_validate:

            def train_loss(fold: str, sim: Dict[str, Dict[str, float]]) -> float:
                return loss_of(sim, {r: ms for r, ms in target_values.items() if r != fold})

            folds = _cross_validate(
                list(target_values), train_loss, parse, distributions, sampler=sampler, seed=seed, trials=trials,
                start=start, batch=batch, client=client, submit=submit,
            )
            cv = pd.DataFrame(
                [
                    {
                        "held_out": fold,
                        "metric": m,
                        "target": t,
                        "predicted": detail[fold][m],
                        "residual": detail[fold][m] / t - 1,
                        "params": values,
                    }
                    for fold, values, detail in folds
                    for m, t in target_values[fold].items()
                ]
            )
            cv_loss = _held_out_loss(cv)
    table = pd.DataFrame(
        [
            {
                "run": run,
                "metric": m,
                "target": t,
                "fitted": simulated[run][m],
                "residual": simulated[run][m] / t - 1,
            }
            for run, ms in target_values.items()
            for m, t in ms.items()
        ]
    )
    spec = base + "".join(f",{k}={v}" for k, v in fitted.items())
    header = [
        f"# Fitted by flashlab.fit to {target_dir}",
        f"# base profile: {base}",
        f"# fitted: {', '.join(f'{k}={v}' for k, v in fitted.items())}",
        f"# loss (mean squared log ratio over {len(table)} run x metric values): {loss:.6g}; {len(rows)} trials, sampler {sampler}",
    ]
    if cv is not None:
        header.append(f"# cross-validated loss (each run held out in turn, fitted on the others): {cv_loss:.6g}")
        header += [
            f"#   held out {r.held_out:<24} {r.metric:<16} target {r.target:>14.1f}  predicted {r.predicted:>14.1f}  {r.residual:+.2%}"
            for r in cv.itertuples()
        ]
    header.append("# residuals (simulated / target - 1):")
    header += [f"#   {r.run:<24} {r.metric:<16} target {r.target:>14.1f}  fitted {r.fitted:>14.1f}  {r.residual:+.2%}" for r in table.itertuples()]
    profile = "\n".join(header) + "\n" + _native.profile_toml(spec)
    return FitResult(
        params=dict(fitted), loss=loss, table=table, profile_toml=profile, trials=pd.DataFrame(rows), cv=cv, cv_loss=cv_loss
    )
