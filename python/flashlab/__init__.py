"""flashlab from Python.

- :func:`simulate` runs a pattern or a trace on the SSD simulator in-process;
- :func:`read_results` loads any results directory into pandas DataFrames;
- :func:`sweep` runs a grid of simulator configurations as Dask tasks;
- :func:`fit` calibrates a simulator profile to measurements with Optuna;
- :func:`twin` builds a device's simulated twin (probe, plan, fit, held-out
  scores) and :func:`twins` many at once on Dask.

Errors from the Rust side are :class:`FlashlabError` with the CLI's one-line message.
See docs/python.md.
"""

from __future__ import annotations

from ._native import FlashlabError
from ._results import RECORD_DTYPE, Results, read_records, read_results, records_frame
from ._simulate import Simulation, simulate
from ._sweep import load_grid, sweep
from ._fit import FitResult, fit
from ._twin import Twin, Twins, read_twin, twin, twins

__all__ = [
    "FlashlabError",
    "FitResult",
    "RECORD_DTYPE",
    "Results",
    "Simulation",
    "Twin",
    "Twins",
    "fit",
    "load_grid",
    "read_records",
    "read_results",
    "read_twin",
    "records_frame",
    "simulate",
    "sweep",
    "twin",
    "twins",
]
