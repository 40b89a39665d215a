"""Shared fixtures: one Dask LocalCluster (2 single-threaded workers) for the session, the CLI binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="session")
def flashlab_bin() -> str:
    """The CLI: $FLASHLAB_BIN, else a built target/{release,debug}/flashlab, else `flashlab` on PATH."""
    env = os.environ.get("FLASHLAB_BIN")
    candidates = [env] if env else []
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    candidates += [str(target / "release" / "flashlab"), str(target / "debug" / "flashlab"), shutil.which("flashlab") or ""]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.fail("no flashlab binary: build it (cargo build --release) or set FLASHLAB_BIN")
