"""Attribute types: what the pipeline does with every input column.

Every column of the input is one of

- ``quasi-identifier`` (``qids``): generalized by the method;
- ``sensitive`` (``sensitive``): published as is; privacy models and some metrics read it;
- ``insensitive`` (``insensitive``, or any column not declared otherwise): published as is;
- ``identifying`` (``drop``): a direct identifier, removed before anything is published.

A column that is not declared and holds a distinct value on more than
:data:`IDENTIFYING_SHARE` of the rows identifies people (an id, a name, an exact
timestamp): it is refused before anything is written, with a message that names it
and says how to declare it (``drop`` to remove it, ``insensitive`` to publish it
knowingly).

Counting distinct values exactly holds every distinct value in memory: an id column of a
150-million-row table would need some 9 GB in one pass. :func:`distinct_counts` bounds that
(at most :data:`DISTINCT_BUDGET` values held at once) by counting in passes over disjoint
hash partitions of the values (equal values share a partition, so the partitions' counts add
up to the column's), and stops as soon as the rows left to count cannot lift a column over
the refusal threshold. A column that is refused is always counted to the end, so the message
gives its exact count; one that is not may get the upper bound that cleared it. A HyperLogLog
estimate only chooses the number of partitions (memory), never a decision.

>>> attribute_types(["id", "age", "party", "x"], qids=["age"], sensitive="party", insensitive=[], drop=["id"])
{'id': 'identifying', 'age': 'quasi-identifier', 'party': 'sensitive', 'x': 'insensitive'}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from polars_anon._types import Road
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import setting

__all__ = [
    "ATTRIBUTE_TYPES",
    "DISTINCT_BUDGET",
    "IDENTIFYING_SHARE",
    "attribute_types",
    "distinct_counts",
    "distinct_estimates",
    "refuse_identifying",
]

ATTRIBUTE_TYPES = ("quasi-identifier", "sensitive", "insensitive", "identifying")
IDENTIFYING_SHARE = 0.9
"""An undeclared column with more distinct values than this share of the rows is refused."""
DISTINCT_BUDGET = 1 << 22
"""Most distinct values (planned, from the estimate) :func:`distinct_counts` holds in one pass: about 0.3 GB."""
_PART = "__anon_part"


def attribute_types(
    columns: Sequence[str],
    *,
    qids: Sequence[str],
    sensitive: str | Sequence[str] | None,
    insensitive: Sequence[str],
    drop: Sequence[str],
) -> dict[str, str]:
    """The type of every column, in the input's column order (undeclared columns: insensitive)."""
    sensitives = [sensitive] if isinstance(sensitive, str) else list(sensitive or [])
    out = {}
    for c in columns:
        if c in qids:
            out[c] = "quasi-identifier"
        elif c in sensitives:
            out[c] = "sensitive"
        elif c in drop:
            out[c] = "identifying"
        else:
            out[c] = "insensitive"
    return out


def distinct_estimates(lf: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """One row: an estimate (HyperLogLog, a few KB of memory) of the distinct values of each column.

    It plans the passes of :func:`distinct_counts`; no decision reads it.
    """
    return lf.select(pl.col(c).approx_n_unique().cast(pl.Int64) for c in columns)


def distinct_counts(
    lf: pl.LazyFrame,
    columns: Sequence[str],
    n_rows: int,
    estimates: Mapping[str, int] | None = None,
    *,
    budget: int = DISTINCT_BUDGET,
) -> dict[str, int]:
    """The number of distinct values (null counted as one) of each column, for :func:`refuse_identifying`.

    Exact for every column that count would refuse. A column shown, before its last pass, to hold at most
    :data:`IDENTIFYING_SHARE` of the `n_rows` rows gets the upper bound that showed it (distinct values
    counted so far plus the rows not yet counted): the decision is that of the exact count. `estimates`
    (:func:`distinct_estimates`; default: computed, unless all of `n_rows` values of every column fit one
    pass of `budget`, which is then the one read) set the number of passes, about estimate / `budget`.

    >>> distinct_counts(pl.LazyFrame({"a": [1, 1, 2, None], "b": [1, 2, 3, 4]}), ["a", "b"], 4, budget=2)
    {'a': 3, 'b': 4}
    """
    asked = list(columns)
    if not asked:
        return {}
    cleared: dict[str, int] = {}
    if estimates is None and n_rows * len(asked) > budget:
        cleared = _cleared_by_head(lf, asked, n_rows, budget)
    columns = [c for c in asked if c not in cleared]
    if not columns:
        return {c: cleared[c] for c in asked}
    if estimates is None and n_rows * len(columns) <= budget:
        estimates = dict.fromkeys(columns, n_rows)  # every value of every column fits one pass: no estimate to read
    elif estimates is None:
        estimates = distinct_estimates(lf, columns).collect().row(0, named=True)  # materializes: one row
    planned = {c: min(1.25 * int(estimates[c]), n_rows) for c in columns}  # HyperLogLog can be low by several percent
    out, batch, held = {}, [], 0.0
    for c in [c for c in columns if planned[c] <= budget]:  # few values: counted together, up to the budget a pass
        if batch and held + planned[c] > budget:
            out |= _count_together(lf, batch)
            batch, held = [], 0.0
        batch, held = [*batch, c], held + planned[c]
    out |= _count_together(lf, batch)
    for c in [c for c in columns if planned[c] > budget]:
        out[c] = _count_in_parts(lf, c, math.ceil(planned[c] / budget), n_rows)
    out |= cleared
    return {c: out[c] for c in asked}


def _cleared_by_head(lf: pl.LazyFrame, columns: Sequence[str], n_rows: int, budget: int) -> dict[str, int]:
    """The columns that the first ``budget // len(columns)`` rows already clear, with that upper bound (their
    distinct values there plus the rows after them): one read of those rows holding at most `budget` values, where
    the estimate and then the count read every row (0.3 s CPU of 15M rows' ``party``, 10 values). Empty when the
    rows after the first ones could lift any column over the threshold.

    >>> _cleared_by_head(pl.LazyFrame({"a": [1, 1, 1, 1, 2], "b": [1, 2, 3, 4, 5]}), ["a", "b"], 5, 8)
    {'a': 2}
    >>> _cleared_by_head(pl.LazyFrame({"a": [1] * 20}), ["a"], 20, 18)
    {'a': 3}
    """
    head = budget // len(columns)
    if head >= n_rows or n_rows - head >= IDENTIFYING_SHARE * n_rows:
        return {}
    seen = _count_together(lf.head(head), columns)
    bounds = {c: int(seen[c]) + n_rows - head for c in columns}
    return {c: bound for c, bound in bounds.items() if bound <= IDENTIFYING_SHARE * n_rows}


def _count_together(lf: pl.LazyFrame, columns: Sequence[str]) -> dict[str, int]:
    if not columns:
        return {}
    counts = lf.select(pl.col(c).n_unique().cast(pl.Int64) for c in columns)
    return counts.collect().row(0, named=True)  # materializes: one row


def _count_in_parts(lf: pl.LazyFrame, column: str, parts: int, n_rows: int) -> int:
    """Distinct values of `column`, one hash partition a pass; stops once the rows left cannot reach the threshold."""
    col = lf.select(pl.col(column), (pl.col(column).hash(seed=0) % parts).alias(_PART))
    found = seen = 0
    for p in range(parts):
        part = col.filter(pl.col(_PART) == p).select(pl.col(column).n_unique(), pl.len())
        distinct, rows = part.collect().row(0)  # materializes: one row
        found, seen = found + int(distinct), seen + int(rows)
        if found + (n_rows - seen) <= IDENTIFYING_SHARE * n_rows:
            return found + (n_rows - seen)  # an upper bound that is not refused: the exact count would not be either
    return found


def refuse_identifying(counts: dict[str, int], n_rows: int, road: Road = "python") -> None:
    """Refuse undeclared columns that identify rows (see the module docstring); the way out is spelled for `road`
    (:func:`~polars_anon.messages.setting`)."""
    if n_rows < 2:
        return
    hits = {c: n for c, n in counts.items() if n > IDENTIFYING_SHARE * n_rows}
    if hits:
        c, n = next(iter(hits.items()))
        others = f" (and {sorted(set(hits) - {c})})" if len(hits) > 1 else ""
        raise InvalidParameterError(
            f"column {c!r} is not declared and has {n:,} distinct values in {n_rows:,} rows, so it identifies people"
            f"{others}; declare it: {setting('drop', [c], road)} to remove it (a direct identifier) or "
            f"{setting('insensitive', [c], road)} to publish it as is"
        )
