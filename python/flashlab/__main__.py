"""``python -m flashlab``: sweep and fit from the command line.

    python -m flashlab sweep GRID.toml [--results DIR] [--scheduler ADDRESS]
    python -m flashlab fit TARGET_DIR --base ssd-m,capacity=1GiB \\
        --param op=0.05:0.4 --param nand.program_ns=200000:2000000 \\
        [--trials 40] [--start op=0.2] [-o fitted.toml]
    python -m flashlab fit validate:hs-mtron-7525 --base hs-mtron-7525 \\
        --param nand.read_ns=15000:60000 [--sampler cmaes] [-o fitted.toml]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import FlashlabError, fit, sweep


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return float(text)


def _param(text: str) -> Tuple[str, Tuple[Any, Any]]:
    key, sep, rng = text.partition("=")
    low, sep2, high = rng.partition(":")
    if not sep or not sep2:
        raise argparse.ArgumentTypeError(f"--param {text}: write KEY=LOW:HIGH, e.g. --param op=0.05:0.4")
    return key, (_number(low), _number(high))


def _client(address: Optional[str]):
    if address is None:
        return None
    from dask.distributed import Client

    return Client(address)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flashlab")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sweep", help="run a grid's points as Dask tasks")
    s.add_argument("grid")
    s.add_argument("--results")
    s.add_argument("--scheduler", help="a Dask scheduler address (default: a LocalCluster)")
    f = sub.add_parser("fit", help="fit simulator parameters to a results directory")
    f.add_argument("target", help="a results directory (the measured device), or validate:PROFILE (the papers' published numbers)")
    f.add_argument("--base", required=True, help="base profile, e.g. ssd-m,capacity=1GiB")
    f.add_argument("--param", action="append", type=_param, required=True, help="KEY=LOW:HIGH (repeatable)")
    f.add_argument("--start", action="append", default=[], help="KEY=VALUE: a first point to try (repeatable)")
    f.add_argument("--trials", type=int, default=40)
    f.add_argument("--sampler", default="tpe", choices=["tpe", "cmaes"])
    f.add_argument("--runs", help="comma-separated target runs to fit (default all)")
    f.add_argument("--results")
    f.add_argument("--scheduler")
    f.add_argument("-o", "--output", help="write the fitted profile (TOML) here")
    args = ap.parse_args(argv)
    try:
        if args.command == "sweep":
            table = sweep(args.grid, client=_client(args.scheduler), results=args.results, progress=True)
            print(table.to_string(index=False))
            return 1 if (table["point_status"] == "failed").any() else 0
        start: Dict[str, Any] = {}
        for kv in args.start:
            k, _, v = kv.partition("=")
            start[k] = _number(v)
        result = fit(
            args.target,
            args.base,
            dict(args.param),
            trials=args.trials,
            sampler=args.sampler,
            start=start or None,
            runs=args.runs.split(",") if args.runs else None,
            client=_client(args.scheduler),
            results=args.results,
        )
        print(result.table.to_string(index=False))
        print(f"fitted: {result.params}  loss {result.loss:.6g}")
        if args.output:
            result.save(args.output)
            print(f"profile written to {args.output}; serve it with: flashlab serve --profile {args.output} --data DIR")
        else:
            print(result.profile_toml)
        return 0
    except (FlashlabError, ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
