"""Hierarchies from one Polars expression per level.

The distinct values form a one-column frame whose column is ``v`` (with the
values' own dtype); level i's label of a value is the i-th expression evaluated
on that frame, cast to String, e.g. ``pl.col("v").str.slice(0, 3)`` for a prefix
or ``pl.col("v") // 10`` for decades of an integer. The levels must nest: every
label of a level has one label on the level above it, or the values that give it
two are named. A label equal to the label below it is the same node (ARX's
``f;f;*``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import polars as pl

from polars_anon.builders.values import distinct, string_labels
from polars_anon.errors import HierarchyError, InvalidParameterError, preview

__all__ = ["COLUMN", "check_levels", "rows"]

COLUMN = "v"


def check_levels(levels: object) -> list[pl.Expr]:
    """A non-empty list of Polars expressions."""
    if isinstance(levels, (str, pl.Expr)) or not isinstance(levels, Sequence) or not levels:
        raise InvalidParameterError(
            f"from_levels: levels must be a non-empty list of Polars expressions over pl.col({COLUMN!r}), "
            f"got {levels!r}"
        )
    wrong = [(i, type(e).__name__) for i, e in enumerate(levels, 1) if not isinstance(e, pl.Expr)]
    if wrong:
        raise InvalidParameterError(f"from_levels: level {wrong[0][0]} must be a Polars expression, got {wrong[0][1]}")
    return list(levels)


def _evaluate(frame: pl.DataFrame, number: int, expr: pl.Expr) -> pl.Series:
    try:
        labels = frame.with_columns(expr.alias("__anon_level"))["__anon_level"]
    except pl.exceptions.PolarsError as exc:
        raise InvalidParameterError(
            f"from_levels: level {number} ({expr}) failed on the values column {COLUMN!r} of dtype "
            f"{frame[COLUMN].dtype}: {str(exc).splitlines()[0]}"
        ) from None
    labels = string_labels(labels.alias(""), f"from_levels: level {number}")  # its values, in no column
    empty = frame[COLUMN].filter(labels.is_null()).to_list()
    if empty:
        raise HierarchyError(
            f"from_levels: level {number} ({expr}) gives no label (null) for {len(empty)} values (first: "
            f"{preview(empty)})"
        )
    return labels


def _check_nesting(table: pl.DataFrame, names: list[str]) -> None:
    """Each label of a level has exactly one label on the next level."""
    for number, (below, above) in enumerate(itertools.pairwise(names[1:]), start=1):
        parents = table.group_by(below).agg(pl.col(above).unique(maintain_order=True), pl.col(names[0]))
        split = parents.filter(pl.col(above).list.len() > 1).sort(below).head(1)
        if split.height:
            label, (a, b, *_) = split[below][0], split[above][0].to_list()
            under = table.filter(pl.col(below) == label)
            va = under.filter(pl.col(above) == a)[names[0]][0]
            vb = under.filter(pl.col(above) == b)[names[0]][0]
            raise HierarchyError(
                f"from_levels: level {number} label {label!r} has two parents on level {number + 1}: {a!r} "
                f"(value {va!r}) and {b!r} (value {vb!r}); each level must group whole groups of the level below"
            )


def rows(values: Iterable[object], levels: Sequence[pl.Expr], *, root: str = "*") -> list[tuple[str, ...]]:
    """Rows ``[leaf, level1, ..., root]`` sorted by the values.

    >>> rows(["33101", "33109", "34000"], [pl.col("v").str.slice(0, 3), pl.col("v").str.slice(0, 1)])
    [('33101', '331', '3', '*'), ('33109', '331', '3', '*'), ('34000', '340', '3', '*')]
    """
    exprs = check_levels(levels)
    leaves = distinct(values, "from_levels").sort()
    labels = string_labels(leaves, "from_levels")  # refused naming the user's column, before it becomes COLUMN
    frame = pl.DataFrame({COLUMN: leaves})
    names = ["__leaf", *(f"__level{i}" for i in range(1, len(exprs) + 1))]
    table = pl.DataFrame(
        [labels.alias(names[0])] + [_evaluate(frame, i, e).alias(names[i]) for i, e in enumerate(exprs, 1)]
    )
    _check_nesting(table, names)
    return table.with_columns(pl.lit(root, dtype=pl.String).alias("__root")).rows()
