"""Values handed to a hierarchy builder, as a Polars Series, and their labels.

A leaf's label is its value cast to String by Polars, exactly as the
anonymization pipeline casts every quasi-identifier, so that a column and the
hierarchy built from its values always match (a Datetime keeps its time unit and
offset: ``2020-03-01 00:30:00.000000+01:00``).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon.errors import HierarchyError, InvalidParameterError
from polars_anon.labels import label_series

__all__ = ["Row", "as_series", "distinct", "sorted_distinct", "string_labels"]

Row = Sequence[str]
"""One ARX row: ``[leaf, level1, ..., root]`` (a list or a tuple)."""


def as_series(values: object, source: str) -> pl.Series:
    """A Series as given; any other iterable through ``pl.Series(list(values), strict=False)``.

    Mixed Python types fall back to String, as Polars does with ``strict=False``.

    >>> as_series(range(3), "demo").to_list()
    [0, 1, 2]
    """
    if isinstance(values, pl.Series):
        return values
    try:
        items = list(values)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidParameterError(
            f"{source}: values must be a Polars Series or an iterable, got {type(values).__name__}"
        ) from None
    return pl.Series("v", items, strict=False)


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
    """Labels of values: their String cast (the pipeline's), refused for nested types.

    >>> string_labels(pl.Series([2134, 33101]), "demo").to_list()
    ['2134', '33101']
    """
    if series.dtype.is_nested() or series.dtype == pl.Object:
        raise InvalidParameterError(
            f"{source}: values of dtype {series.dtype} cannot be hierarchy labels; give scalar values"
        )
    return label_series(series)
