"""How a quasi-identifier's value becomes its String label: the one rule every pass, engine and hierarchy builder
follows.

A label is the value's String cast as Polars spells it (``2134`` -> ``'2134'``, ``1.5`` -> ``'1.5'``), with one
exception: a float's negative zero is labelled ``'0.0'``. A group-by, a join and SQL hold ``-0.0`` and ``0.0`` as one
value, while their String casts differ (``'-0.0'``), so without the exception the tuples an engine counts and the
labels of the rows they stand for could disagree (a rounded small negative number is ``-0.0``).

>>> pl.DataFrame({"x": [-0.0, 0.0, 1.5, None]}).select(label_exprs({"x": pl.Float64}, ["x"])).to_series().to_list()
['0.0', '0.0', '1.5', None]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

__all__ = ["label_expr", "label_exprs", "label_series"]


def label_expr(column: str, dtype: pl.DataType) -> pl.Expr:
    """`column` (of type `dtype`) as its String labels (see the module docstring), named `column`.

    >>> pl.DataFrame({"f": [-0.0, 2.5]}).select(label_expr("f", pl.Float64)).to_series().to_list()
    ['0.0', '2.5']
    """
    value = pl.col(column)
    if dtype.is_float():  # ``x + 0.0`` keeps -0.0 in Polars 2.1 (the addition of a zero is skipped)
        value = pl.when(value == 0).then(pl.lit(0.0, dtype=dtype)).otherwise(value)
    return value.cast(pl.String).alias(column)


def label_exprs(schema: Mapping[str, pl.DataType], columns: Sequence[str]) -> list[pl.Expr]:
    """:func:`label_expr` of each of `columns`, typed by `schema` (a frame's ``schema`` or ``collect_schema()``)."""
    return [label_expr(c, schema[c]) for c in columns]


def label_series(series: pl.Series) -> pl.Series:
    """:func:`label_expr` of a Series (its name kept).

    >>> label_series(pl.Series("f", [-0.0, 1.0], dtype=pl.Float32)).to_list()
    ['0.0', '1.0']
    """
    if not series.dtype.is_float():
        return series.cast(pl.String)
    return series.to_frame().select(label_expr(series.name, series.dtype)).to_series()
