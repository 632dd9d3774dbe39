"""Local suppression on the road: single key cells set missing until every record's wildcard ``fk`` is at least k
(sdcMicro's ``localSuppression``; the heuristic of :mod:`polars_anon.sdc.suppression`).

The method runs on the class aggregates (one row per distinct qid tuple and its size), as every other method: each
unsafe tuple gets key cells blanked, and the result is a tuple map (original tuple -> the same tuple with some labels
null). A published missing value matches any category, so the guarantee is *k-anonymity with missing values as
wildcards*: every published record agrees, on the keys both observe, with at least ``k - 1`` others (sdcMicro's
reading, ``alpha`` weighting records with missing keys). The independent check recounts that on the published rows
(:func:`verify_wildcard`), and checks that every published cell is its input value or missing.

Qids need no hierarchy (a given one is not used). Input nulls in a qid are refused (fill them, or run
:func:`polars_anon.sdc.local_suppression`, which reads them as wildcards). Privacy models and the engines other than
Polars are refused in the capability table (:mod:`polars_anon.pipeline.capabilities`).

>>> import polars as pl, polars_anon as pa
>>> lf = pl.LazyFrame({"sex": ["f", "f", "m", "m", "f"], "age": ["30", "30", "40", "40", "50"]})
>>> res = pa.anonymize(lf, qids=["sex", "age"], k=2, method="local_suppression")
>>> res.collect()["age"].to_list(), res.report["details"]["suppressed_cells"]
(['30', '30', '40', '40', None], {'sex': 0, 'age': 1})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.labels import label_exprs
from polars_anon.privacy.risk import risk_summary_of_patterns
from polars_anon.report.guarantee import WILDCARD
from polars_anon.sdc.frequencies import check_alpha, hidden_keys, patterns
from polars_anon.sdc.suppression import key_priority, suppress_patterns
from polars_anon.tuplemap import SIZE, TupleMap

__all__ = ["GUARANTEE", "NULLS", "LocalSuppressionOptions", "verify_wildcard"]

GUARANTEE = WILDCARD
"""The report's ``guarantee`` of this method (named in :mod:`polars_anon.report.guarantee`, with its display terms)."""
NULLS = (
    "method 'local_suppression' takes null='error' only, and no nulls in a qid: it publishes missing cells itself, "
    "as wildcards, where null='suppress' would publish the input's nulls as hierarchy roots; fill the nulls, drop "
    "those rows, or use polars_anon.sdc.local_suppression, which reads them as wildcards"
)
"""The whole of this method's advice on input nulls, with or without a hierarchy: the refusal of null='suppress'
(the capability table) and of nulls in the data (:func:`polars_anon.request.check_data`) both say it."""
_N = "n_pattern"


@dataclass(frozen=True)
class LocalSuppressionOptions:
    """Options of ``method="local_suppression"``."""

    importance: Mapping[str, int] | None = field(
        default=None, metadata={"expects": "a dict qid -> integer in 1..number of qids (1 = suppress last)"}
    )
    """sdcMicro's importance per qid: 1 = suppress last. Default: qids with more categories are suppressed first."""
    alpha: float = 1.0
    """In [0, 1]: how much a record with missing keys counts toward another pattern it matches (sdcMicro's)."""

    def __post_init__(self) -> None:
        check_alpha(self.alpha, "local_suppression option alpha")


def _check(options: LocalSuppressionOptions, metric: str | None, qids: Sequence[str]) -> None:
    if options.importance is None:
        return
    unknown = [q for q in options.importance if q not in qids]
    missing = [q for q in qids if q not in options.importance]
    if unknown or missing:
        raise InvalidParameterError(
            f"local_suppression option importance must give every qid once; unknown {unknown}, missing {missing} "
            f"(qids: {list(qids)})"
        )
    bad = {q: v for q, v in options.importance.items() if not 1 <= v <= len(qids)}
    if bad:
        raise InvalidParameterError(
            f"local_suppression option importance: values must lie in 1..{len(qids)} (1 = suppress last), got {bad}"
        )


def _importance_used(qids: list[str], options: LocalSuppressionOptions, priority: list[int]) -> dict[str, int]:
    """The importance per qid in sdcMicro's convention (1 = suppressed last, len(qids) = first): the user's, or the
    default's ranks (more categories: suppressed earlier) as 1..m; `priority` is the internal rank (higher first)."""
    if options.importance is not None:
        return {q: int(options.importance[q]) for q in qids}
    return {q: r + 1 for q, r in zip(qids, priority, strict=True)}


def verify_wildcard(
    published: pl.LazyFrame, original: pl.LazyFrame, qids: Sequence[str], k: int, alpha: float
) -> dict[str, Any]:
    """Independent check: the row count is kept, every published qid cell is its input value or missing, and every
    published record's wildcard ``fk`` (:func:`polars_anon.sdc.frequencies.pattern_frequencies`) is at least `k`.

    Raises :class:`~polars_anon.errors.NotKAnonymousError`; returns ``n_rows``, ``n_classes`` (distinct published
    patterns) and ``min_class_size`` (the smallest wildcard ``fk``, rounded down).
    """
    qids = list(qids)
    fail = "independent check failed: "
    n_pub = published.select(pl.len()).collect().item()  # materializes: one row
    n_in = original.select(pl.len()).collect().item()  # materializes: one row
    if n_pub != n_in:
        raise NotKAnonymousError(f"{fail}the published table has {n_pub} rows, the input {n_in}; nothing was written")
    both = pl.concat(
        [
            published.select(qids),
            original.select(
                [e.alias(f"__anon_in_{e.meta.output_name()}") for e in label_exprs(original.collect_schema(), qids)]
            ),
        ],
        how="horizontal",
    )
    wrong = [pl.col(q).is_not_null() & (pl.col(q).cast(pl.String) != pl.col(f"__anon_in_{q}")) for q in qids]
    counts = both.select([w.sum().alias(q) for w, q in zip(wrong, qids, strict=True)]).collect().row(0, named=True)
    changed = {q: counts[q] for q in qids if counts[q]}
    if changed:
        raise NotKAnonymousError(
            f"{fail}published qid cells differ from their input values: {changed}; nothing was written"
        )
    pats = patterns(published, qids, None, "wildcard", alpha)  # materializes: one row per pattern (qids hidden)
    low = pats.filter(pl.col("fk") < k)
    if low.height:
        raise NotKAnonymousError(
            f"{fail}{int(low[_N].sum())} published records match fewer than k={k} records with missing values as "
            f"wildcards (first: {low.select(hidden_keys(qids)).row(0)}); nothing was written"
        )
    return {
        "n_rows": int(n_pub),
        "n_classes": pats.height,
        "min_class_size": int(pats["fk"].min()),  # type: ignore[arg-type]
        "output_risk": risk_summary_of_patterns(pats["fk"].to_numpy(), pats[_N].to_numpy()),
    }


@register_method(
    "local_suppression",
    LocalSuppressionOptions,
    needs_hierarchies=False,
    guarantee=GUARANTEE,
    check=_check,
    blanks=True,
    tuple_classes=lambda options: False,  # its classes are wildcard patterns (a blank matches any value)
)
def run(task: Task, options: LocalSuppressionOptions) -> Plan:
    """Local suppression of key cells on the class aggregates (see the module docstring)."""
    qids = list(task.qids)
    agg = task.aggregates  # no null qid: refused on the road (check_data), naming polars_anon.sdc.local_suppression
    importance = None if options.importance is None else [options.importance[q] for q in qids]
    priority = key_priority(agg.select(qids), qids, importance)
    hidden = hidden_keys(qids)  # the patterns' own columns (n_pattern, fk, Fk) out of the way of any qid name
    pats = agg.select(
        *(pl.col(q).alias(h) for q, h in zip(qids, hidden, strict=True)), pl.col(SIZE).cast(pl.Float64).alias(_N)
    )
    found, rounds = suppress_patterns(pats, hidden, task.k, priority, float(options.alpha))
    current = found.select(pl.col(h).alias(q) for q, h in zip(qids, hidden, strict=True))
    sizes = agg[SIZE].cast(pl.Int64)
    cells = {q: int(sizes.filter(current[q].is_null()).sum()) for q in qids}
    tmap = TupleMap.from_labels(agg, qids, {q: current[q].cast(pl.String) for q in qids})
    details = {
        "suppressed_cells": cells,
        "suppressed_total": sum(cells.values()),
        "rounds": rounds,
        "alpha": float(options.alpha),
        "importance": _importance_used(qids, options, priority),
    }
    return Plan(
        tmap,
        details,
        guarantee=GUARANTEE,
        verify=lambda published, original: verify_wildcard(published, original, qids, task.k, float(options.alpha)),
    )
