"""Did a published Ahmad-Dey run bin a numeric qid into an empty equal-width bin? (commit 5b5a3e5)

Commit 5b5a3e5 averages a numeric qid's Ahmad-Dey weight over pairs of *occupied* bins only (an
empty bin used to count as an all-zero row, adding 0.5 a pair). A figure computed before it with
``distance="ahmad_dey"`` moves only if some numeric qid of the data MDAV ran on had an empty bin.

This runs the benchmarks' own code for every Ahmad-Dey run behind the published figures
(``paper004_bench.one`` for paper004_runs.csv, ``mdav_bench.evidence`` and ``mdav_bench.speed``),
with MDAV's clustering (``polars_anon.algorithms.mdav.cluster``) replaced by a probe that records
the records MDAV is handed and stops the run (no MDAV, no attack, nothing written). Each numeric qid
is then binned as ``polars_anon.distance`` describes: its distinct values when there are at most
``NUMERIC_BINS``, else ``NUMERIC_BINS`` equal-width bins (re-derived here from that description).

Run from the repository root:  python benchmarks/ahmad_dey_bins.py   (a few seconds)
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # this checkout first
import polars_anon.algorithms.mdav as mdav_module
from polars_anon.distance import NUMERIC_BINS, Records


class Probed(Exception):
    """Raised by the probe once MDAV's records are recorded: the run stops there."""


def bin_counts(x: np.ndarray) -> np.ndarray:
    """Rows per bin: one bin per distinct value if at most NUMERIC_BINS, else equal-width bins.

    >>> bin_counts(np.array([0, 0.1, 0.2, 0.3, 0.4, 10])).tolist()  # 3 empty bins
    [5, 0, 0, 0, 1]
    """
    values, counts = np.unique(x, return_counts=True)
    if len(values) <= NUMERIC_BINS:
        return counts
    lo, hi = values[0], values[-1]
    codes = np.minimum(np.floor((x - lo) / (hi - lo) * NUMERIC_BINS), NUMERIC_BINS - 1).astype(np.int64)
    return np.bincount(codes, minlength=NUMERIC_BINS)


def probed(run: Callable[[], Any]) -> dict[str, np.ndarray]:
    """Bin counts of every numeric qid of the records `run` hands MDAV (Ahmad-Dey only; exactly one MDAV call)."""
    seen: list[dict[str, np.ndarray]] = []

    def probe(records: Records, distance: str, *args: Any, **kwargs: Any) -> Any:
        if distance != "ahmad_dey":
            raise RuntimeError(f"expected an Ahmad-Dey run, got distance {distance!r}")
        seen.append({q: bin_counts(records.num[j]) for j, q in enumerate(records.numeric)})
        raise Probed

    real, mdav_module.cluster = mdav_module.cluster, probe
    try:
        run()
    except Probed:
        pass
    finally:
        mdav_module.cluster = real
    if len(seen) != 1:
        raise RuntimeError(f"expected one MDAV call, saw {len(seen)}")
    return seen[0]


def paper004_runs() -> list[tuple[str, dict[str, np.ndarray]]]:
    """Every Ahmad-Dey run of paper004_runs.csv (main()'s loop: 6 datasets, part/full, k, trials 0-4)."""
    import paper004_bench as pb
    import papers_common as pc

    from polars_anon.utility import split_rows

    out = []
    for name, load in pb.LOADERS.items():
        ds = load()
        if ds is None:
            print(f"paper004: {name} absent from ../shared/data, not checked")
            continue
        ds.df = pc.sample(ds.df, None)
        tr, ho = split_rows(ds.df.height, 1 / 3, seed=0)
        train, holdout = ds.df[tr], ds.df[ho]
        for qset in ("part", "full"):
            for k in [k for k in pb.KS if 2 * k <= train.height]:
                for trial in range(5):
                    run = lambda: pb.one(ds, train, holdout, qset, "ahmad_dey", k, trial, False)  # noqa: B023
                    out.append((f"paper004 {name} {qset} k={k} trial={trial}", probed(run)))
    return out


class _Published:
    """What mdav_bench reads from a result, for the runs that are not probed (nothing is computed)."""

    def __init__(self, df: Any) -> None:
        self.df, self.report = df, _Anything()

    def collect(self) -> Any:
        return self.df


class _Anything(dict):
    def __missing__(self, key: str) -> _Anything:
        return _Anything()

    def __format__(self, spec: str) -> str:
        return "-"


class _Stop(Exception):
    pass


def mdav_bench_runs() -> list[tuple[str, dict[str, np.ndarray]]]:
    """Every Ahmad-Dey call of mdav_bench evidence and speed, through the functions themselves.

    Their anonymize calls go through a stand-in that probes the Ahmad-Dey ones and skips the rest;
    the attacks, MI and F1 return a constant and nothing is written. speed stops at the voter
    register (Gower only).
    """
    import mdav_bench as mb

    out: list[tuple[str, dict[str, np.ndarray]]] = []
    real_pa, section = mb.pa, [""]

    def anonymize(df: Any, **kw: Any) -> _Published:
        if not hasattr(df, "height"):  # speed's voter register (a LazyFrame, Gower): stop
            raise _Stop
        if kw.get("distance") == "ahmad_dey":
            label = f"mdav_{section[0]} rows={df.height} qids={len(kw['hierarchies'])} k={kw['k']}"
            out.append((label, probed(lambda: real_pa.anonymize(df, **kw))))
        return _Published(df)

    class _Pa:
        def __getattr__(self, name: str) -> Any:
            return anonymize if name == "anonymize" else getattr(real_pa, name)

    scores = ("mi_loss", "package_mi_loss", "record_linkage", "ml_inference")  # F1 too: it calls ml_inference
    saved = {n: getattr(mb, n) for n in ("pa", "write", *scores)}
    try:
        mb.pa = _Pa()
        for n in scores:
            setattr(mb, n, lambda *a, **k: 1.0)
        mb.write = lambda *a, **k: None
        for name, fn in (("evidence", mb.evidence), ("speed", mb.speed)):
            section[0] = name
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # its table lines hold the stand-in values
                    fn(None)
            except _Stop:
                pass
    finally:
        for n, v in saved.items():
            setattr(mb, n, v)
    return out


def main() -> None:
    runs = [*mdav_bench_runs(), *paper004_runs()]
    empty = 0
    for label, bins in runs:
        bad = {q: c.tolist() for q, c in bins.items() if (c == 0).any()}
        empty += bool(bad)
        smallest = {q: int(c.min()) for q, c in bins.items()}
        print(label, "smallest bin per numeric qid:", smallest, f"EMPTY BINS: {bad}" if bad else "")
    for bench in ("mdav_evidence", "mdav_speed", "paper004"):
        mine = [b for label, b in runs if label.startswith(bench)]
        bad = sum(any((c == 0).any() for c in b.values()) for b in mine)
        print(f"{bench}: {len(mine)} Ahmad-Dey runs checked, {bad} with an empty bin")
    print(f"all: {len(runs)} runs, {empty} with an empty bin")


if __name__ == "__main__":
    main()
