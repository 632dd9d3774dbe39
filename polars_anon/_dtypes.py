"""Nested Polars dtypes walked once: :func:`map_nested`, read by the capability tables (a dtype refused wherever it is
nested) and by Spark's engine (times in microseconds at any depth)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

__all__ = ["map_nested"]


def map_nested(dtype: Any, change: Callable[[pl.DataType], pl.DataType]) -> pl.DataType:
    """`dtype` rebuilt with `change` applied to it and to every dtype nested in it (a list's or an array's items, a
    struct's fields, a map's keys and values), depth first, each before the dtypes inside it (a class Polars gives for
    an item, ``pl.List(pl.Null).inner``, as an instance): the one walk of nested dtypes (the capability tables', Spark's
    times in microseconds). An array of several dimensions is an array of arrays, rebuilt one dimension at a time.

    >>> us = lambda d: pl.Datetime("us") if isinstance(d, pl.Datetime) else d
    >>> map_nested(pl.Struct({"a": pl.Array(pl.Datetime("ns"), (2, 3)), "m": pl.Map(pl.String, pl.Datetime)}), us)
    ... # doctest: +NORMALIZE_WHITESPACE
    Struct({'a': Array(Datetime(time_unit='us', time_zone=None), shape=(2, 3)),
            'm': Map(String, Datetime(time_unit='us', time_zone=None))})
    """
    dtype = change(dtype() if isinstance(dtype, type) else dtype)
    if isinstance(dtype, pl.List):
        return pl.List(map_nested(dtype.inner, change))
    if isinstance(dtype, pl.Array):
        return pl.Array(map_nested(dtype.inner, change), dtype.size)
    if isinstance(dtype, pl.Struct):
        return pl.Struct([pl.Field(f.name, map_nested(f.dtype, change)) for f in dtype.fields])
    if isinstance(dtype, pl.Map):
        return pl.Map(map_nested(dtype.key, change), map_nested(dtype.value, change))
    return dtype
