"""Shapes shared by the metric functions: every metric returns rows ``attribute, value``.

The row with a null ``attribute`` is the whole-table value; the others hold the
value per quasi-identifier. :func:`polars_anon.metrics.compute` pivots them.
"""

from __future__ import annotations

from functools import cache

import polars as pl

from polars_anon.metrics.data import MetricData

__all__ = ["cell_metric", "example", "stack", "table_row", "value_of"]


def table_row(value: pl.Expr) -> list[pl.Expr]:
    """Select list of the whole-table row: a null attribute and `value`."""
    return [pl.lit(None, dtype=pl.String).alias("attribute"), value.alias("value")]


def stack(data: MetricData, table: pl.LazyFrame, per_attribute: pl.LazyFrame) -> pl.LazyFrame:
    """The whole-table row above the per-attribute rows, both as (attribute, value).

    The whole-table row alone when ``data.per_attribute`` is False (:meth:`MetricData.whole_table`).
    """
    if not data.per_attribute:
        return table.select("attribute", "value")
    return pl.concat(
        [table.select("attribute", "value"), per_attribute.select("attribute", "value")], how="vertical_relaxed"
    )


def cell_metric(data: MetricData, value: pl.Expr) -> pl.LazyFrame:
    """A metric that is one aggregation over the cells, per attribute and over all of them.

    `value` is an aggregating expression over :attr:`MetricData.cells` (e.g. a
    weighted sum) evaluated once per attribute and once over every cell.
    """
    cells = data.cells.lazy()
    per = cells.group_by("attribute", "i").agg(value.alias("value")).sort("i")
    return stack(data, cells.select(table_row(value)), per)


def value_of(metric: pl.LazyFrame) -> float | int | None:
    """The whole-table value of a metric's (attribute, value) rows."""
    return metric.filter(pl.col("attribute").is_null()).collect()["value"].item()


@cache
def example() -> MetricData:
    """Paper 000 Table I (gender, race) anonymized to its Table Ib, for the docstring examples.

    Two classes, {l1, l2, l3} -> (*, mammals) and {l4, l5, l6} -> (*, cetaceans).
    A sensitive column ``habitat`` (land, land, land, sea, sea, land) is added
    here for the metrics that need one; it is not in the paper.
    """
    from polars_anon.hierarchy import Hierarchy
    from polars_anon.metrics.data import prepare

    hierarchies = {
        "gender": Hierarchy.from_dict({"*": ["M", "F"]}),
        "race": Hierarchy.from_dict(
            {
                "mammals": {
                    "felidae": ["cat", "lion", "tiger"],
                    "canine": ["dog", "wolf"],
                    "cetaceans": ["dolphin", "whale"],
                }
            }
        ),
    }
    original = pl.DataFrame(
        {
            "gender": ["M", "F", "F", "M", "M", "F"],
            "race": ["cat", "lion", "dog", "dolphin", "whale", "whale"],
            "habitat": ["land", "land", "land", "sea", "sea", "land"],
        }
    )
    published = original.with_columns(gender=pl.lit("*"), race=pl.Series(["mammals"] * 3 + ["cetaceans"] * 3))
    return prepare(original, published, ["gender", "race"], hierarchies, sensitive="habitat", k=3)
