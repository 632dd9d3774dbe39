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

>>> attribute_types(["id", "age", "party", "x"], qids=["age"], sensitive="party", insensitive=[], drop=["id"])
{'id': 'identifying', 'age': 'quasi-identifier', 'party': 'sensitive', 'x': 'insensitive'}
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon.errors import InvalidParameterError

__all__ = ["ATTRIBUTE_TYPES", "IDENTIFYING_SHARE", "attribute_types", "distinct_counts", "refuse_identifying"]

ATTRIBUTE_TYPES = ("quasi-identifier", "sensitive", "insensitive", "identifying")
IDENTIFYING_SHARE = 0.9
"""An undeclared column with more distinct values than this share of the rows is refused."""


def attribute_types(
    columns: Sequence[str], *, qids: Sequence[str], sensitive: str | Sequence[str] | None, insensitive: Sequence[str], drop: Sequence[str]
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


def distinct_counts(lf: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """One row: the number of distinct values of each column (the undeclared ones)."""
    return lf.select(pl.col(c).n_unique().cast(pl.Int64) for c in columns)


def refuse_identifying(counts: dict[str, int], n_rows: int) -> None:
    """Refuse undeclared columns that identify rows (see the module docstring)."""
    if n_rows < 2:
        return
    hits = {c: n for c, n in counts.items() if n > IDENTIFYING_SHARE * n_rows}
    if hits:
        c, n = next(iter(hits.items()))
        others = f" (and {sorted(set(hits) - {c})})" if len(hits) > 1 else ""
        raise InvalidParameterError(
            f"column {c!r} is not declared and has {n:,} distinct values in {n_rows:,} rows, so it identifies people"
            f"{others}; declare it: drop=[{c!r}] removes it (a direct identifier), insensitive=[{c!r}] publishes it as is"
        )
