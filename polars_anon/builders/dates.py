"""Calendar hierarchies for Date and Datetime values.

The levels, from the bottom: ``day`` (``2020-02-29``), ``month`` (``2020-02``),
``quarter`` (``2020-Q1``), ``year`` (``2020``), ``5years`` (``2020-2024``),
``decade`` (``2020-2029``), then the root. Any subset may be chosen, in that
order. Bands of 5 and 10 years are aligned to multiples of 5 and 10.

The leaves are the values' String casts, the labels the pipeline matches: a Date
``2020-02-29``; a Datetime with its time unit and, when it has a time zone, its
offset (``2020-03-01 00:30:00.000000+01:00``). A Datetime's day is its calendar
day in the column's own time zone (the wall-clock date; UTC for a naive column
means the naive date as written): 2020-02-29 23:30 UTC in a Europe/Paris column
is the day 2020-03-01. For a Date the leaf is already the day, so ``day`` is
refused as a level. String values are read as ISO dates (``%Y-%m-%d``) and keep
their own text as leaves.

Years are written as Polars writes a Date's year, in every label: at least four
digits, a minus sign before years BC (``-0768``), a plus sign after 9999
(``+10000``, its 5 years ``+10000-+10004``). Days Polars cannot write (beyond
years -262143 and +262142) are refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import get_args

import polars as pl

from polars_anon._types import DateLevel
from polars_anon.builders.values import distinct
from polars_anon.errors import InvalidParameterError, preview
from polars_anon.labels import iso_dates, refuse_beyond_text

__all__ = ["DATE_LEVELS", "check_levels", "rows"]

DATE_LEVELS: tuple[str, ...] = get_args(DateLevel)


def check_levels(levels: object, *, datetime: bool | None = None) -> list[str]:
    """The chosen levels, checked: names of :data:`DATE_LEVELS` in that order, no repeat.

    `datetime` False (Date or String values) refuses ``day``; None (dtype not
    known yet, as when a job file is parsed) accepts it. None as `levels`: every
    level the dtype allows.

    >>> check_levels(["month", "decade"])
    ['month', 'decade']
    >>> check_levels(None, datetime=False)
    ['month', 'quarter', 'year', '5years', 'decade']
    """
    allowed = list(DATE_LEVELS) if datetime is not False else list(DATE_LEVELS[1:])
    if levels is None:
        return allowed
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise InvalidParameterError(
            f"dates: levels must be a non-empty list of names from {allowed}, in that order; got {levels!r}"
        )
    unknown = [v for v in levels if v not in DATE_LEVELS]
    if unknown:
        raise InvalidParameterError(
            f"dates: unknown levels {preview(unknown)}; the levels are {allowed}, in that order"
        )
    if "day" in levels and datetime is False:
        raise InvalidParameterError(
            f"dates: 'day' is the leaf itself for Date (and ISO date String) values; choose from {allowed}"
        )
    ranks = [DATE_LEVELS.index(v) for v in levels]
    if any(b <= a for a, b in itertools.pairwise(ranks)):
        raise InvalidParameterError(f"dates: levels {list(levels)} must go up without repeats, in the order {allowed}")
    return list(levels)


def _days(series: pl.Series) -> pl.Series:
    """Calendar day of each value (local day for a Datetime with a time zone)."""
    refuse_beyond_text(series, "dates")  # a Date's or Datetime's day Polars cannot write: refused
    if series.dtype == pl.Date:
        return series
    if isinstance(series.dtype, pl.Datetime):
        return series.dt.date()
    if series.dtype == pl.String:
        days = iso_dates(series)
        bad = series.filter(days.is_null()).to_list()
        if bad:
            raise InvalidParameterError(
                f"dates: {len(bad)} String values are not ISO dates YYYY-MM-DD (first: {preview(bad)}); "
                "cast the column to Date or Datetime first"
            )
        return days
    raise InvalidParameterError(
        f"dates: values must be Date, Datetime or ISO date String, got dtype {series.dtype}; "
        "use intervals, ordered or from_levels for other types"
    )


def _year_text(year: pl.Expr) -> pl.Expr:
    sign = pl.when(year < 0).then(pl.lit("-")).when(year > 9999).then(pl.lit("+")).otherwise(pl.lit(""))
    return sign + year.abs().cast(pl.String).str.zfill(4)


def _span(year: pl.Expr, width: int) -> pl.Expr:
    lo = year // width * width
    return _year_text(lo) + pl.lit("-") + _year_text(lo + (width - 1))


def _label(level: str) -> pl.Expr:
    text = pl.col("day").cast(pl.String)
    year = pl.col("day").dt.year().cast(pl.Int64)
    if level == "day":
        return text
    if level == "month":
        return text.str.head(-3)
    if level == "quarter":
        return text.str.head(-6) + pl.lit("-Q") + pl.col("day").dt.quarter().cast(pl.String)
    if level == "year":
        return text.str.head(-6)
    return _span(year, 5 if level == "5years" else 10)


def rows(values: Iterable[object], levels: Sequence[str] | None = None, *, root: str = "*") -> list[tuple[str, ...]]:
    """Rows ``[leaf, level1, ..., root]`` sorted by day, then by value.

    >>> import datetime as dt
    >>> rows([dt.date(2020, 2, 29)])
    [('2020-02-29', '2020-02', '2020-Q1', '2020', '2020-2024', '2020-2029', '*')]
    """
    series = distinct(values, "dates")
    chosen = check_levels(levels, datetime=isinstance(series.dtype, pl.Datetime))
    frame = pl.DataFrame({"value": series, "day": _days(series)}).sort("day", "value")
    return frame.select(
        pl.col("value").cast(pl.String).alias("__leaf"),
        *(_label(level).alias(f"__{level}") for level in chosen),
        pl.lit(root, dtype=pl.String).alias("__root"),
    ).rows()
