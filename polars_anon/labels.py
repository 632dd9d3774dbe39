"""How a quasi-identifier's value becomes its String label: the one rule every pass, engine and hierarchy builder
follows.

A label is the value's String cast as Polars spells it (``2134`` -> ``'2134'``, ``1.5`` -> ``'1.5'``), with two
exceptions. A float's negative zero is labelled ``'0.0'``: a group-by, a join and SQL hold ``-0.0`` and ``0.0`` as one
value, while their String casts differ (``'-0.0'``), so without the exception the tuples an engine counts and the
labels of the rows they stand for could disagree (a rounded small negative number is ``-0.0``). A time of day keeps
its fraction of a second, in 3, 6 or 9 digits (``09:00:00.500``; none when it is whole: ``09:00:00``): Polars' cast
drops it, so two times would share one label. SQL follows the same rule: ``anon_label`` (``sql/_labels.sql``) is its
twin, and refuses the types it cannot label as Polars does.

>>> pl.DataFrame({"x": [-0.0, 0.0, 1.5, None]}).select(label_exprs({"x": pl.Float64}, ["x"])).to_series().to_list()
['0.0', '0.0', '1.5', None]

A **set label** names a set of such labels (Mondrian's classes of a qid without a hierarchy, the nodes of a random
hierarchy): its members in order, separated by ``,`` inside ``{`` ``}``, each member with ``\\``, ``,``, ``{`` and ``}``
escaped by a backslash, so that a class holding the value ``'a,b'`` and one holding ``'a'`` and ``'b'`` read differently
(``{a\\,b,c}`` against ``{a,b,c}``). A set of one member is the member itself, unless it starts with ``{``: then it is
the one-member set label, so that every label starting with ``{`` is a set label and :func:`set_members` reads any
label back. :func:`set_label` (Python) and :func:`set_labels` (a group-by in Polars) are the rule's two spellings.

>>> set_label(["a,b", "c"]), set_label(["a", "b", "c"]), set_label(["{x}"]), set_label(["x"])
('{a\\\\,b,c}', '{a,b,c}', '{\\\\{x\\\\}}', 'x')
>>> set_members(set_label(["a,b", "c", "{", "\\\\"])), set_members("x")
(['a,b', 'c', '{', '\\\\'], ['x'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeVar

import polars as pl

from polars_anon.errors import InvalidParameterError, preview

__all__ = [
    "ISO_DATE",
    "NOT_FINITE",
    "iso_dates",
    "label_expr",
    "label_exprs",
    "label_series",
    "refuse_beyond_text",
    "refuse_beyond_text_in",
    "set_label",
    "set_labels",
    "set_members",
]

NOT_FINITE = ("NaN", "inf", "-inf")
"""The labels of a float's NaN and infinities (Polars' String cast; every engine's values are labelled by Polars).

>>> pl.Series([float("nan"), float("inf"), -float("inf")]).cast(pl.String).to_list() == list(NOT_FINITE)
True
"""

_SPECIAL = r"([\\,{}])"
"""The characters a set label's member escapes with a backslash (a regex class; the replacement prefixes a ``\\``)."""


def label_expr(column: str, dtype: pl.DataType) -> pl.Expr:
    """`column` (of type `dtype`) as its String labels (see the module docstring), named `column`.

    >>> pl.DataFrame({"f": [-0.0, 2.5]}).select(label_expr("f", pl.Float64)).to_series().to_list()
    ['0.0', '2.5']
    """
    value = pl.col(column)
    if isinstance(dtype, pl.Time):  # Polars' cast drops the fraction: 09:00:00.5 would be labelled 09:00:00
        return value.dt.strftime("%H:%M:%S%.f").alias(column)
    if dtype.is_float():  # ``x + 0.0`` keeps -0.0 in Polars 2.1 (the addition of a zero is skipped)
        value = pl.when(value == 0).then(pl.lit(0.0, dtype=dtype)).otherwise(value)
    return value.cast(pl.String).alias(column)


FIRST_DAY, LAST_DAY = -96_465_292, 95_026_236
"""The days (since 1970-01-01) of -262143-01-01 and +262142-12-31, the first and last that Polars casts to String
(a day beyond them panics: ``pyo3_runtime.PanicException``, which ``except Exception`` does not catch)."""

_PER_DAY = {"ms": 86_400 * 10**3, "us": 86_400 * 10**6, "ns": 86_400 * 10**9}

_Days = TypeVar("_Days", pl.Expr, pl.Series)


def _beyond_text(value: _Days, dtype: pl.DataType) -> _Days | None:
    """Whether each Date or Datetime `value` (a Series or an expression of type `dtype`) has a day Polars cannot
    write as text (see :func:`refuse_beyond_text`); None for any other `dtype`."""
    if isinstance(dtype, pl.Datetime):
        days, margin = value.to_physical() // _PER_DAY[dtype.time_unit or "us"], 1
    elif dtype == pl.Date:
        days, margin = value.to_physical(), 0
    else:
        return None
    return (days < FIRST_DAY + margin) | (days > LAST_DAY - margin)


def refuse_beyond_text(series: pl.Series, what: str | None = None) -> None:
    """Refuse Date or Datetime values of `series` whose day Polars cannot write as text (:data:`FIRST_DAY` to
    :data:`LAST_DAY`; a Datetime one day inside them, its local day may be the next or the previous), such as
    DuckDB's ``'infinity'::DATE``; `what` names them (default: the column, by the Series' name). The rule of every
    place a date becomes text: :func:`label_series` (every road's labels), the ``dates`` builder, and lazy labels
    (:func:`refuse_beyond_text_in`).

    >>> refuse_beyond_text(pl.Series("d", [2147483647, 0]).cast(pl.Date))
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'd': 1 values are beyond the days Polars can write as text, \
-262143-01-01 to +262142-12-31 (first: [2147483647] as Date numbers); a label is a value's text: filter or replace them
    """
    mask = _beyond_text(series, series.dtype)
    beyond = series.filter(mask) if mask is not None else series.clear()
    if beyond.len():
        raise InvalidParameterError(
            f"{what or f'column {series.name!r}'}: {beyond.len()} values are beyond the days Polars can write as "
            f"text, -262143-01-01 to +262142-12-31 (first: {preview(beyond.to_physical().head(5).to_list())} as "
            f"{series.dtype} numbers); a label is a value's text: filter or replace them"
        )


def refuse_beyond_text_in(frame: pl.LazyFrame | pl.DataFrame, columns: Sequence[str]) -> None:
    """:func:`refuse_beyond_text` for the Date and Datetime `columns` of `frame` before they are labelled lazily
    (:func:`label_exprs`, whose String cast would panic at collect): one query reading only their values beyond
    the days Polars writes as text (none for other types: nothing is read).

    >>> d = pl.LazyFrame({"d": pl.Series([0, 2147483647]).cast(pl.Date), "x": [1, 2]})
    >>> refuse_beyond_text_in(d, ["x"])
    >>> refuse_beyond_text_in(d, ["d", "x"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'd': 1 values are beyond the days Polars can write as text...
    """
    schema = frame.collect_schema()
    dated = {c: mask for c in columns if (mask := _beyond_text(pl.col(c), schema[c])) is not None}
    if not dated:
        return
    # materializes: the dated columns' values beyond text (none, mostly), each filtered apart
    beyond = frame.lazy().select(pl.col(c).filter(mask).implode() for c, mask in dated.items()).collect()
    for c in dated:
        refuse_beyond_text(beyond[c].explode())


def label_exprs(schema: Mapping[str, pl.DataType], columns: Sequence[str]) -> list[pl.Expr]:
    """:func:`label_expr` of each of `columns`, typed by `schema` (a frame's ``schema`` or ``collect_schema()``)."""
    return [label_expr(c, schema[c]) for c in columns]


def label_series(series: pl.Series, what: str | None = None) -> pl.Series:
    """:func:`label_expr` of a Series (its name kept), its dates Polars cannot write as text refused first
    (:func:`refuse_beyond_text`, `what` naming them): the one place a road's values become labels on the driver, so
    every road refuses them (the String cast would panic, which ``except Exception`` does not catch).

    >>> label_series(pl.Series("f", [-0.0, 1.0], dtype=pl.Float32)).to_list()
    ['0.0', '1.0']
    """
    refuse_beyond_text(series, what)
    if not series.dtype.is_float() and not isinstance(series.dtype, pl.Time):
        return series.cast(pl.String)
    return series.to_frame().select(label_expr(series.name, series.dtype)).to_series()


ISO_DATE = "%Y-%m-%d"
"""The text of a Date's label (its String cast, ``2020-01-31``): ISO 8601's calendar date."""

_Text = TypeVar("_Text", pl.Expr, pl.Series)


def iso_dates(text: _Text) -> _Text:
    """String `text` (an expression or a Series) read as ISO dates (:data:`ISO_DATE`), a Date's label read back;
    null where the text is no such date (the caller refuses or tries another reading): the one reading of text as a
    date (a job's ``schema = { d = "Date" }``, the ``dates`` hierarchy's String values, Mondrian's order of labels).

    >>> iso_dates(pl.Series(["2020-02-29", "2021-02-29", "31/01/2020", None])).to_list()
    [datetime.date(2020, 2, 29), None, None, None]
    """
    return text.str.to_date(ISO_DATE, strict=False)


def set_label(members: Sequence[str]) -> str:
    """The set label of `members` (String labels, in the order given; see the module docstring).

    >>> set_label(["dog", "wolf"])
    '{dog,wolf}'
    """
    if len(members) == 1 and not members[0].startswith("{"):
        return members[0]
    return "{" + ",".join(re.sub(_SPECIAL, r"\\\1", m) for m in members) + "}"


def set_labels(frame: pl.DataFrame, key: str, member: str) -> pl.Series:
    """The set label of each group of `frame` by `key` (in order of first appearance) from its String `member`
    values in frame order: :func:`set_label` of each group, as a Series named `member`.

    >>> f = pl.DataFrame({"k": [0, 0, 1, 2], "v": ["a,b", "c", "x", "{y"]})
    >>> set_labels(f, "k", "v").to_list() == [set_label(["a,b", "c"]), "x", set_label(["{y"])]
    True
    """
    value = pl.col(member)
    escaped = value.str.replace_all(_SPECIAL, r"\$1")
    sets = frame.group_by(key, maintain_order=True).agg(
        escaped.str.join(",").alias("__anon_joined"), value.first().alias("__anon_first"), pl.len().alias("__anon_n")
    )
    lone = (pl.col("__anon_n") == 1) & ~pl.col("__anon_first").str.starts_with("{")
    return sets.select(
        pl.when(lone).then(pl.col("__anon_first")).otherwise("{" + pl.col("__anon_joined") + "}").alias(member)
    ).to_series()


def set_members(label: str) -> list[str]:
    """The members of a label made by :func:`set_label` (a label not starting with ``{`` is its one member).

    >>> set_members("{a\\\\,b,c}")
    ['a,b', 'c']
    """
    if not label.startswith("{"):
        return [label]
    out, current, escaped = [], [], False
    for ch in label[1:-1]:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return out
