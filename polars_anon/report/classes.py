"""Class sizes for the report: their histogram, and the prosecutor risk they imply.

Both are computed from class sizes alone (the published classes of a
:class:`~polars_anon.tuplemap.TupleMap`, :meth:`~polars_anon.tuplemap.TupleMap.published_sizes`,
or the input's class aggregates), so the report and explore need no pass over
the rows.

The risk figures are the prosecutor model's, where an attacker knows the
person is in the table and links on the quasi-identifiers: a record in a class
of ``s`` rows is re-identified with probability ``1/s`` (k-anonymity bounds it by
``1/k``, paper 004 §3); the three figures are those ARX reports as highest risk,
average risk and records at risk. They stand in for the privacy
models' risk section until it is part of the report; explore reads them through
:func:`size_risk` only, so better figures replace them in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon.report.guarantee import WILDCARD
from polars_anon.tuplemap import SIZE

__all__ = ["distinct_sizes", "guarantee_sizes", "size_bins", "size_histogram", "size_risk", "wildcard_sizes"]


def size_bins(largest: int, k: int | None = None) -> list[int]:
    """Lower edges of the histogram bins: 1, 2, 5, 10, 20, 50, ... up to `largest`, plus `k` (classes below k apart).

    >>> size_bins(120, k=3)
    [1, 2, 3, 5, 10, 20, 50, 100]
    """
    edges, step = {1}, 0
    while True:
        edge = (1, 2, 5)[step % 3] * 10 ** (step // 3)
        if edge > largest:
            break
        edges.add(edge)
        step += 1
    if k is not None and 1 < k <= largest:
        edges.add(k)
    return sorted(edges)


def distinct_sizes(sizes: pl.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct class sizes (ascending, Int64) and how many classes have each: ``np.unique(sizes,
    return_counts=True)``, by a count when the sizes are small next to their number (linear: the 684,166 input
    classes of a 3M-row register in about 2 ms instead of a sort), so the histogram and the risk figures of many
    classes read a few hundred numbers.

    >>> [a.tolist() for a in distinct_sizes(np.array([3, 1, 3, 12]))]
    [[1, 3, 12], [1, 2, 1]]
    """
    s = np.asarray(sizes, dtype=np.int64)
    if len(s) and int(s.min()) >= 0 and int(s.max()) <= max(1 << 20, 4 * len(s)):
        counts = np.bincount(s)
        values = np.flatnonzero(counts)
        return values.astype(np.int64), counts[values].astype(np.int64)
    values, counts = np.unique(s, return_counts=True)
    return values.astype(np.int64), counts.astype(np.int64)


def size_histogram(
    sizes: pl.Series | np.ndarray,
    k: int | None = None,
    largest: int | None = None,
    counts: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> dict[str, Any]:
    """Classes and rows per class-size bin (bins from :func:`size_bins`; `high` is inclusive, None: no bound).

    `largest` (default the largest size) sets the bins, so histograms of several tables can share them.
    `counts` (default one each): `counts[i]` classes have `sizes[i]` rows (a histogram of sizes, as an
    engine groups it). `rows` (default `sizes` times `counts`): the records of entry `i`, where a size is not
    its own record count (a wildcard pattern: :func:`wildcard_sizes`).

    >>> h = size_histogram(np.array([1, 1, 3, 12]), k=3)
    >>> [(b["low"], b["high"], b["classes"], b["rows"]) for b in h["bins"]]
    [(1, 1, 2, 2), (2, 2, 0, 0), (3, 4, 1, 3), (5, 9, 0, 0), (10, None, 1, 12)]
    >>> h["n_classes"], h["n_rows"], h["min"], h["max"]
    (4, 17, 1, 12)
    >>> size_histogram(np.array([1, 3, 12]), k=3, counts=np.array([2, 1, 1])) == h
    True
    """
    s = np.asarray(sizes, dtype=np.int64)
    w = np.ones(len(s), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    r = s * w if rows is None else np.asarray(rows, dtype=np.int64)
    keep = (s > 0) & (w > 0)
    s, w, r = s[keep], w[keep], r[keep]
    edges = size_bins(max(int(s.max()) if len(s) else 1, largest or 1), k)
    if not len(s):
        return {"bins": [], "n_classes": 0, "n_rows": 0, "min": None, "max": None, "median": None}
    which = np.searchsorted(edges, s, side="right") - 1
    classes = np.bincount(which, weights=w, minlength=len(edges))
    in_bin = np.bincount(which, weights=r, minlength=len(edges))
    bins = [
        {
            "low": lo,
            "high": (edges[i + 1] - 1) if i + 1 < len(edges) else None,
            "classes": int(classes[i]),
            "rows": int(in_bin[i]),
        }
        for i, lo in enumerate(edges)
    ]
    return {
        "bins": bins,
        "n_classes": int(w.sum()),
        "n_rows": int(r.sum()),
        "min": int(s.min()),
        "max": int(s.max()),
        "median": _median(s, w),
    }


def wildcard_sizes(published: pl.DataFrame, qids: Sequence[str], alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Each published pattern's wildcard ``fk`` (rounded down: the records its records match, a missing value matching
    any value, those with missing values counting `alpha`; sdcMicro's reading, which local suppression guarantees)
    and its records, from the published classes (`qids` and ``size``: :meth:`~polars_anon.tuplemap.TupleMap.
    published_sizes`); :func:`polars_anon.sdc.frequencies.patterns` weighted by the sizes counts the records.

    >>> pub = pl.DataFrame({"a": ["x", "x", None], "b": ["1", "2", "2"], "size": [2, 1, 1]})
    >>> [v.tolist() for v in wildcard_sizes(pub, ["a", "b"], 1.0)]
    [[2, 2, 2], [2, 1, 1]]
    """
    fk, rows = _wildcard_fk(published, qids, alpha)
    return np.floor(fk).astype(np.int64), rows


def _wildcard_fk(published: pl.DataFrame, qids: Sequence[str], alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wildcard_sizes` before rounding down (Float64: with `alpha` < 1 a pattern's ``fk`` is fractional)."""
    from polars_anon.sdc.frequencies import hidden_keys, patterns  # the sdc package, loaded when a report needs it

    hidden = hidden_keys(qids)
    fks = patterns(published.lazy(), qids, SIZE, "wildcard", alpha).select(*hidden, "Fk")  # a row per pattern
    named = published.select(*(pl.col(q).alias(h) for q, h in zip(qids, hidden, strict=True)), SIZE)
    both = named.join(fks, on=hidden, how="left", nulls_equal=True)
    return both["Fk"].to_numpy().astype(np.float64), both[SIZE].to_numpy().astype(np.int64)


def guarantee_sizes(plan: Any) -> tuple[np.ndarray, np.ndarray]:
    """The published records' sizes in the reading of the plan's guarantee, and the records of each: the one place
    that decides it for the report and explore. Local suppression (:data:`~polars_anon.report.guarantee.WILDCARD`):
    each distinct published pattern's wildcard ``fk`` (Float64, not rounded: :func:`wildcard_sizes`), a missing
    value matching any value; every other method: the classes of equal published tuples, each its own records.
    The risk figures of both are :func:`size_risk`'s; MDAV's permutation counts its clusters besides
    (:func:`polars_anon.report.guarantee.counts`).
    """
    if plan.guarantee == WILDCARD:
        return _wildcard_fk(plan.map.published_sizes(), plan.map.qids, plan.details["alpha"])
    sizes = np.asarray(plan.map.class_sizes(), dtype=np.int64)
    return sizes.astype(np.float64), sizes


def _median(s: np.ndarray, w: np.ndarray) -> float:
    """``np.median`` of `s[i]` repeated `w[i]` times, without repeating."""
    order = np.argsort(s, kind="stable")
    s, cum = s[order], np.cumsum(w[order])
    total = int(cum[-1])
    at = s[np.searchsorted(cum, [(total - 1) // 2, total // 2], side="right")]
    return float((float(at[0]) + float(at[1])) / 2)


def size_risk(sizes: pl.Series | np.ndarray, threshold: int, rows: np.ndarray | None = None) -> dict[str, Any]:
    """Prosecutor risk of the published records from their class sizes (see the module docstring).

    ``highest_risk`` = 1 / smallest class; ``average_risk`` = the mean of 1/s over the records (classes / rows);
    ``records_at_risk`` = share of records in classes of fewer than `threshold` rows (their risk exceeds
    1/`threshold`). `rows` (default `sizes`): the records of entry `i`, where a size is not its own record count
    (a wildcard pattern's ``fk``: :func:`guarantee_sizes`). None for an empty table.

    >>> size_risk(np.array([2, 2, 6]), threshold=5)
    {'highest_risk': 0.5, 'average_risk': 0.3, 'records_at_risk': 0.4, 'risk_threshold': 5}
    >>> size_risk(np.array([3.0, 4.0, 4.0]), threshold=4, rows=np.array([3, 2, 1]))["average_risk"] == 1.75 / 6
    True
    """
    s = np.asarray(sizes, dtype=np.float64)
    r = s if rows is None else np.asarray(rows, dtype=np.float64)
    keep = (s > 0) & (r > 0)
    s, r = s[keep], r[keep]
    if not len(s):
        return {"highest_risk": None, "average_risk": None, "records_at_risk": None, "risk_threshold": threshold}
    n = float(r.sum())
    return {
        "highest_risk": 1.0 / float(s.min()),
        "average_risk": (len(s) if rows is None else float(np.sort(r * (1.0 / s)).sum())) / n,  # sorted: any order
        "records_at_risk": float(r[s < threshold].sum()) / n,
        "risk_threshold": threshold,
    }
