"""Values handed to a hierarchy builder, as a Polars Series, and their labels.

A leaf's label is its value cast to String by Polars, exactly as the
anonymization pipeline casts every quasi-identifier, so that a column and the
hierarchy built from its values always match (a Datetime keeps its time unit and
offset: ``2020-03-01 00:30:00.000000+01:00``).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon._validate import refuse_text
from polars_anon.errors import HierarchyError, InvalidParameterError
from polars_anon.labels import label_series

__all__ = ["Row", "as_series", "distinct", "sorted_distinct", "string_labels"]

Row = Sequence[str]
"""One ARX row: ``[leaf, level1, ..., root]`` (a list or a tuple)."""


def as_series(values: object, source: str) -> pl.Series:
    """A Series as given; any other iterable through ``pl.Series(list(values), strict=False)``; a string (or bytes)
    refused (:func:`~polars_anon._validate.refuse_text`: its letters are no values).

    Mixed Python types fall back to String, as Polars does with ``strict=False``.

    >>> as_series(range(3), "demo").to_list()
    [0, 1, 2]
    """
    if isinstance(values, pl.Series):
        return values
    refuse_text(values, f"{source}: values")  # a string's letters are no values
    try:
        items = list(values)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidParameterError(
            f"{source}: values must be a Polars Series or an iterable, got {type(values).__name__}"
        ) from None
    return pl.Series(items, strict=False)  # unnamed: a refusal names a column only when a Series named one


def distinct(values: object, source: str) -> pl.Series:
    """The distinct non-null values in first-seen order; refuses an empty set.

    >>> distinct(["b", "a", "b", None], "demo").to_list()
    ['b', 'a']
    """
    series = as_series(values, source).drop_nulls().unique(maintain_order=True)
    if series.is_empty():
        raise HierarchyError(f"{source}: no values given; the hierarchy would be empty")
    return series


def sorted_distinct(values: object, source: str) -> pl.Series:
    """The distinct non-null values in their dtype's natural order (numbers, dates, strings by code point), the
    order a job reads a column's values in: a builder that keeps it gives the same hierarchy whatever the order of
    its input (``Series.unique()`` has none: it may change from one process to the next).

    >>> sorted_distinct(pl.Series([10, 2, 10]), "demo").to_list()
    [2, 10]
    """
    return distinct(values, source).sort()


def string_labels(series: pl.Series, source: str) -> pl.Series:
    """Labels of values: their String cast (the pipeline's), refused, naming the Series' column when it has a
    name, for the dtypes a quasi-identifier cannot have (nested, objects, bytes, durations; see
    :mod:`polars_anon.request`): no column of them could be generalized with the hierarchy.

    >>> string_labels(pl.Series([2134, 33101]), "demo").to_list()
    ['2134', '33101']
    """
    dtype = series.dtype
    held = f"column {series.name!r} has" if series.name else "values have"
    if dtype.is_nested() or isinstance(dtype, (pl.Object, pl.Binary)):
        raise InvalidParameterError(
            f"{source}: {held} dtype {dtype}, which cannot be hierarchy labels; give scalar values"
        )
    if isinstance(dtype, pl.Duration):  # no String cast on Polars; a qid of them is refused too
        raise InvalidParameterError(
            f"{source}: {held} dtype {dtype}, which has no label; cast it to a number first "
            "(.dt.total_seconds(), or another unit)"
        )
    return label_series(series, f"{source}: column {series.name!r}" if series.name else source)
