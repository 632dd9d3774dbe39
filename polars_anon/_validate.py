"""Checks shared by the entry points. Each raises an AnonError naming the culprit."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeGuard

import numpy as np
import polars as pl

from polars_anon._scans import missing_sources
from polars_anon.errors import (
    ColumnNotFoundError,
    InfeasibleError,
    InvalidParameterError,
    NotFiniteError,
    ValueNotInHierarchyError,
    preview,
)
from polars_anon.labels import NOT_FINITE
from polars_anon.messages import BUILT_NAME, KEYS_EMPTY, NAMES_TWICE, NOT_NAMES, QIDS_EMPTY

__all__ = [
    "as_lazy",
    "check_choice",
    "check_columns",
    "check_columns_in",
    "check_k",
    "check_frame",
    "check_keys",
    "check_mapping",
    "check_name",
    "check_number",
    "check_path",
    "check_numeric",
    "check_qids",
    "check_seed",
    "check_separator",
    "check_unique",
    "check_values",
    "is_integer",
    "is_path",
    "names_list",
    "not_in_hierarchy",
    "not_leaves",
    "refuse_built_names",
    "refuse_text",
    "refuse_not_finite",
]


def as_lazy(data: object) -> pl.LazyFrame:
    """Coerce a Polars DataFrame/LazyFrame or a pandas DataFrame to a LazyFrame."""
    if isinstance(data, pl.LazyFrame):
        return data
    if isinstance(data, pl.DataFrame):
        return data.lazy()
    if type(data).__module__.startswith("pandas"):
        return pl.from_pandas(data).lazy()  # type: ignore[arg-type]
    got = type(data).__name__
    if is_path(data):  # a file's path: say how to read it
        path = os.fspath(data)
        got += (
            f" {path!r}, a path: read the file first, pl.scan_csv({path!r}) (a CSV) or pl.scan_parquet({path!r}) "
            "(Parquet), or name it as a job file's input (polars_anon.job.run_job)"
        )
    raise InvalidParameterError(f"expected a Polars DataFrame or LazyFrame (or a pandas DataFrame), got {got}")


def check_frame(value: object, what: str = "lf") -> None:
    """Refuse a `value` (the parameter `what`) that is not a Polars DataFrame or LazyFrame: the one check of a
    function that reads a frame's schema without coercing it (:func:`as_lazy` coerces pandas too).

    >>> check_frame(None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: lf must be a Polars DataFrame or LazyFrame, got None
    """
    if isinstance(value, (pl.LazyFrame, pl.DataFrame)):
        return
    got = f"a pandas {type(value).__name__} (convert it: pl.from_pandas(df))" if _is_pandas(value) else _shown(value)
    raise InvalidParameterError(f"{what} must be a Polars DataFrame or LazyFrame, got {got}")


def _is_pandas(value: object) -> bool:
    """Whether `value` is a pandas object (read from its module: pandas is never imported here)."""
    return type(value).__module__.startswith("pandas")


def _shown(value: object) -> str:
    """A wrong argument as a message shows it: a short value as its repr, anything else (a frame, an array, a long
    list) as its type, so a message stays one line.

    >>> _shown(None), _shown(1.5), _shown(list(range(100)))
    ('None', '1.5', 'list')
    """
    text = repr(value)
    return text if len(text) <= 60 and "\n" not in text else type(value).__name__


def check_name(value: object, what: str) -> str:
    """One column name (a string) given as the parameter `what`, else the error naming it and the value received.

    >>> check_name(["age"], "class_col")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: class_col must be a column name (a string), got ['age']
    """
    if not isinstance(value, str):
        raise InvalidParameterError(NOT_NAMES(what=what, takes="a column name (a string)", value=value))
    return value


def is_path(value: object) -> TypeGuard[str | os.PathLike[str]]:
    """Whether `value` is a file path: a string or an ``os.PathLike`` (``pathlib.Path``, or any object with
    ``__fspath__``), the one test of every parameter that takes a path (``os.fspath`` gives its text; an engine reads
    a path object as a file, never as a table's name).

    >>> from pathlib import Path
    >>> is_path("x.parquet"), is_path(Path("x.parquet")), is_path(b"x.parquet")
    (True, True, False)
    """
    return isinstance(value, str) or isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)


def check_path(value: object, what: str = "path") -> str | os.PathLike[str]:
    """A file path (a string or a ``pathlib.Path``) given as the parameter `what`, else the error naming it.

    >>> check_path(None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: path must be a file path (a str or pathlib.Path), got None
    """
    if not is_path(value):
        raise InvalidParameterError(f"{what} must be a file path (a str or pathlib.Path), got {_shown(value)}")
    return value


def refuse_text(value: object, what: str) -> None:
    """Refuse a string (or bytes) given as the parameter `what`, which takes a sequence of values: Python iterates a
    string by its characters, so ``"abc"`` would be the three values a, b, c, silently.

    >>> refuse_text(["abc"], "values")
    >>> refuse_text("abc", "suppression: values")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: suppression: values must be a sequence of values (a list, a tuple, a \
range or a Polars Series), got the string 'abc'; a string is one value: give ['abc'] (or list('abc') for its letters)
    """
    if not isinstance(value, (str, bytes)):
        return
    shown = repr(value) if len(value) <= 40 else f"{value[:20]!r}..."
    raise InvalidParameterError(
        f"{what} must be a sequence of values (a list, a tuple, a range or a Polars Series), got the "
        f"{'string' if isinstance(value, str) else 'bytes'} {shown}; a string is one value: give [{shown}] (or "
        f"list({shown}) for its letters)"
    )


def check_separator(value: object, what: str = "separator") -> str:
    """A CSV separator: one single-byte character (what a CSV reader takes), else the error naming `what`.

    >>> check_separator(";;")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: separator must be one single-byte character such as ';', got ';;'
    """
    if not isinstance(value, str) or len(value.encode()) != 1:
        raise InvalidParameterError(f"{what} must be one single-byte character such as ';', got {_shown(value)}")
    return value


def check_mapping(value: object, what: str, takes: str) -> Mapping[object, object]:
    """`value` when it is a mapping (a dict), else the error naming the parameter `what`, what it `takes` (e.g.
    ``"qid -> level"``) and the value received.

    >>> check_mapping(["age"], "levels", "qid -> level")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: levels must be a mapping qid -> level (a dict), got ['age']
    """
    if not isinstance(value, Mapping):
        raise InvalidParameterError(f"{what} must be a mapping {takes} (a dict), got {_shown(value)}")
    return value


def check_columns(lf: pl.LazyFrame, names: Iterable[str], what: str = "qids") -> list[str]:
    """Raise ColumnNotFoundError when any of `names` is not a column of `lf` (a file it scans that does not exist:
    InputError naming it, :func:`~polars_anon._scans.missing_sources`; `lf` not a Polars frame:
    :func:`check_frame`)."""
    check_frame(lf)
    with missing_sources(lf):
        columns = lf.collect_schema().names()
    return check_columns_in(columns, names, what)


def check_columns_in(columns: Sequence[str], names: Iterable[str], what: str = "qids") -> list[str]:
    """Raise ColumnNotFoundError when any of `names` is not in `columns`.

    >>> check_columns_in(["a", "b"], ["c"], "drop")
    Traceback (most recent call last):
    ...
    polars_anon.errors.ColumnNotFoundError: drop ['c'] not in the frame; its columns are ['a', 'b']
    """
    names = list(names)
    missing = [n for n in names if n not in columns]
    if missing:
        hint = _separator_hint(columns, missing)
        raise ColumnNotFoundError(f"{what} {missing} not in the frame; its columns are {list(columns)}{hint}")
    return names


def _separator_hint(columns: Sequence[str], missing: Sequence[str]) -> str:
    """When a table's one column is named like a CSV header split by another separator that holds the missing
    names, how to read it (a ';'-separated file read with ','), else ''.

    >>> _separator_hint(["id;age;zip"], ["age"]).split("? ")[1][:26], _separator_hint(["id", "age"], ["zip"])
    ("read it with separator=';'", '')
    """
    if len(columns) != 1:
        return ""
    for sep in (";", "\t", "|", ",", ":"):
        parts = columns[0].split(sep)
        if len(parts) > 1 and all(m in parts for m in missing):
            return (
                f"; a CSV file read with the wrong separator? read it with separator={sep!r} (a job's "
                f"separator = {sep!r}, CLI --separator {sep!r})"
            )
    return ""


def names_list(value: object, what: str) -> list[str]:
    """Column names given as one string or a list of strings (a string is one name, never its letters).

    >>> names_list("id", "drop"), names_list(["a", "b"], "drop")
    (['id'], ['a', 'b'])
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidParameterError(NOT_NAMES(what=what, takes="a column name or a list of column names", value=value))


def check_keys(lf: pl.LazyFrame, keys: object, what: str = "keys") -> list[str]:
    """Key variables (sdcMicro's keyVars): one or more column names, each once, each a column of `lf`.

    >>> check_keys(pl.LazyFrame({"a": [1]}), ["a", "a"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: keys lists ['a'] more than once; name each column once
    """
    names = names_list(keys, what)
    if not names:
        raise InvalidParameterError(KEYS_EMPTY(what=what))
    check_unique(names, what)
    check_columns(lf, names, what)
    return names


def check_numeric(lf: pl.LazyFrame, columns: Sequence[str], what: str = "columns") -> None:
    """Refuse columns that are not numbers (read from the schema, no data).

    >>> check_numeric(pl.LazyFrame({"x": [1.0], "s": ["a"]}), ["x", "s"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: columns ['s'] must be numeric, got String
    """
    schema = lf.collect_schema()
    bad = [c for c in columns if not schema[c].is_numeric()]
    if bad:
        types = ", ".join(dict.fromkeys(str(schema[c]) for c in bad))
        raise InvalidParameterError(f"{what} {bad} must be numeric, got {types}")


K_MAX = 2**63 - 1
"""The largest k (Polars', DuckDB's and Spark's largest integer)."""


def check_k(k: object, n_rows: int | None = None, *, who: str = "") -> int:
    """k must be an integer >= 1 (NumPy's too) and, when the row count is known, at most that (an InfeasibleError).

    The one k check: a request's before any data is read, and again with its rows; a direct call of a partition
    algorithm (`who` names it in the message) with its aggregates' rows, or with None for an empty table (k's type
    alone: such a call returns an empty partition; the road refuses an empty input first).

    >>> check_k(2**63)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: k must be at most 9223372036854775807 (2**63 - 1), got 9223372036854775808
    >>> check_k(7, 6, who="greedy")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InfeasibleError: greedy: k=7 is larger than the table (6 rows); choose k <= 6
    """
    where = f"{who}: " if who else ""
    if not is_integer(k) or k < 1:
        raise InvalidParameterError(f"{where}k must be an integer >= 1, got {k!r}")
    if k > K_MAX:  # no table has more rows; the engines hold k as a 64-bit integer
        raise InvalidParameterError(f"{where}k must be at most {K_MAX} (2**63 - 1), got {k!r}")
    if n_rows == 0:
        raise InfeasibleError(f"{where}the input has no rows; there is nothing to anonymize")  # not "choose k <= 0"
    if n_rows is not None and k > n_rows:
        raise InfeasibleError(f"{where}k={k} is larger than the table ({n_rows} rows); choose k <= {n_rows}")
    return int(k)


def check_seed(seed: object, *, optional: bool = False, where: str = "") -> int | None:
    """`seed` when it is an integer >= 0 (None too when `optional`), else the error naming it (`where` prefixes the
    message). The one seed check: a method's, an encoding's, a perturbation's and a differential-privacy model's; a
    negative seed reached NumPy's bare "expected non-negative integer" in MDAV (hunt36).

    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: seed must be an integer >= 0, got -1
    >>> check_seed(None, optional=True) is None
    True
    """
    if optional and seed is None:
        return None
    if not is_integer(seed) or seed < 0:
        allowed = "an integer >= 0 or None" if optional else "an integer >= 0"
        raise InvalidParameterError(f"{where}seed must be {allowed}, got {seed!r}")
    return int(seed)


def check_number(
    name: str, value: object, low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
) -> float:
    """`value` as a float when it is a finite number (not a bool, not NaN, not infinite) in the interval from `low` to
    `high` (each end open as the flags say; ``high=inf``: no upper end), else the error naming `name`. The one check of
    the SDC functions' float parameters (noise, p, pd, alpha, dis_fraction, PRAM probabilities): a bare ``noise < 0``
    let NaN and inf through, and they turned a column into NaN or inf.

    >>> check_number("noise (percent)", float("nan"), 0.0)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: noise (percent) must be a finite number >= 0, got nan
    >>> check_number("pd", 0.5, 0.0, 1.0, low_open=True)
    0.5
    """
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    try:
        v = float(value) if ok else math.nan  # type: ignore[arg-type]
    except OverflowError:  # an int no float holds (2**1030): refused as infinite
        v = math.inf
    if not (math.isfinite(v) and (low < v if low_open else low <= v) and (v < high if high_open else v <= high)):
        if math.isinf(high):
            where = f"{'>' if low_open else '>='} {low:g}"
            raise InvalidParameterError(f"{name} must be a finite number {where}, got {value!r}")
        where = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise InvalidParameterError(f"{name} must be a number in {where}, got {value!r}")
    return v


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """Refuse an option outside its allowed values."""
    if value not in allowed:
        raise InvalidParameterError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return str(value)


class _Leaves(Protocol):
    """What :func:`check_values` reads of a :class:`~polars_anon.hierarchy.Hierarchy`: its leaves. A protocol, not
    the class: the hierarchy module imports the builders, which import these checks (no import circle)."""

    @property
    def leaf_labels(self) -> list[str]: ...


def check_values(
    tuples: pl.DataFrame,
    hierarchies: Mapping[str, _Leaves],
    *,
    source: str = "",
    labels: Mapping[str, pl.Series] | None = None,
) -> None:
    """Every non-null value of every quasi-identifier must be a leaf of its hierarchy.

    `tuples` holds the distinct quasi-identifier tuples (String columns) with a
    ``size`` column (nulls are the road's to refuse or publish: ``polars_anon.request.check_data``).
    `labels`: a qid's distinct non-null values in `tuples`, sorted, when the caller knows them.
    """
    for q, h in hierarchies.items():
        col = tuples[q]
        values = labels[q] if labels is not None and q in labels else col.drop_nulls().unique().sort()
        missing = values.filter(~values.is_in(h.leaf_labels)).to_list()
        if missing:
            raise not_leaves(q, missing, source, h.leaf_labels)


def refuse_not_finite(
    values: pl.DataFrame,
    q: str,
    labels: pl.Series | None = None,
    *,
    numbers: pl.Series | None = None,
    leaves: Sequence[str] = (),
) -> None:
    """Refuse NaN, inf and -inf in the float quasi-identifier `q`, naming each with its row count.

    `values` holds `q`'s String labels and their ``size`` (the class aggregates, or `q`'s marginal); `labels`:
    `q`'s distinct labels when the caller knows them (not looked for again); `numbers`: when `q` is a String column
    a method reads as numbers (MDAV), its values cast to Float64 by the caller, row for row of `values` (``'nan'``
    or ``'Infinity'`` read as NaN and inf). No method has a place for
    them: a hierarchy leaf ``'NaN'`` sorts above every number, a range ends at ``inf``, MDAV's cluster mean becomes
    NaN. NaN is not a null, here as in Polars (``is_null()`` is false, ``fill_null`` leaves it):
    ``null="suppress"`` does not publish it at the root; ``fill_nan(None)`` makes it one. `leaves`: the labels
    among them that `q`'s hierarchy names as leaves, for a method that publishes its nodes (``'NaN'`` under
    ``'unknown'``: a place the user gave it): not refused.

    >>> refuse_not_finite(pl.DataFrame({"x": ["1.5", "NaN", "inf", "NaN"], "size": [3, 1, 1, 1]}), "x")
    Traceback (most recent call last):
    ...
    polars_anon.errors.NotFiniteError: column 'x' holds NaN in 2 rows and inf in 1 row, which a method places only
    where the qid's hierarchy names them as leaves (MDAV never: it averages numbers); NaN is not a null (as in Polars),
    so null='suppress' does not publish it at the root: make NaN null (pl.col('x').fill_nan(None); a CSV: null_values
    = ["NaN"]) or drop those rows; replace or drop the infinite values
    """

    unplaced = [v for v in NOT_FINITE if v not in leaves]
    if numbers is not None:  # any text that reads as NaN or an infinity
        found = ~numbers.is_finite()
        if not found.any():
            return
        rows = values.filter(found)
    else:  # Polars' labels
        if not (labels if labels is not None else values[q]).is_in(unplaced).any():
            return
        rows = values.filter(pl.col(q).is_in(unplaced))
    sizes = rows.group_by(q).agg(pl.col("size").sum())
    raise _not_finite(q, {str(label): int(n) for label, n in sizes.iter_rows()}, numbers is not None)


def _not_finite(q: str, rows: Mapping[str, int], text: bool) -> NotFiniteError:
    """The refusal of :func:`refuse_not_finite`: each label of `rows` with its row count, and what to do."""
    spelled = [v for v in NOT_FINITE if v in rows] + sorted(set(rows) - set(NOT_FINITE))
    found = [f"{v} in {rows[v]} row{'' if rows[v] == 1 else 's'}" for v in spelled]
    listed = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " and " + found[-1]
    nans = [v for v in spelled if math.isnan(float(v))]
    fixes = [] if len(nans) == len(spelled) else ["replace or drop the infinite values"]
    if text:  # MDAV reads the text as numbers: left out of `numeric`, the column is a category
        fixes.append(f"or leave {q!r} out of MDAV's numeric=[...] (its values are then categories)")
    if nans:
        fill = "" if text else f"pl.col({q!r}).fill_nan(None); "
        fixes.insert(
            0,
            "NaN is not a null (as in Polars), so null='suppress' does not publish it at the root: make NaN null "
            f"({fill}a CSV: null_values = [{', '.join(json.dumps(v) for v in nans)}]) or drop those rows",
        )
    return NotFiniteError(
        f"column {q!r} holds {listed}, which a method places only where the qid's hierarchy names them as leaves "
        f"(MDAV never: it averages numbers); {'; '.join(fixes)}"
    )


def not_in_hierarchy(bad: Sequence[object], kind: str = "leaves") -> str:
    """How values that are not `kind` (``"leaves"`` or ``"nodes"``) of a column's hierarchy are named in a refusal.

    >>> not_in_hierarchy(["X"]), not_in_hierarchy(["X", "Y"], "nodes")
    ("'X' is not a leaf of its hierarchy", "2 distinct values are not nodes of its hierarchy (first: ['X', 'Y'])")
    """
    if len(bad) == 1:
        return f"{bad[0]!r} is not {'a leaf' if kind == 'leaves' else 'a node'} of its hierarchy"
    return f"{len(bad)} distinct values are not {kind} of its hierarchy (first: {preview(list(bad))})"


def not_leaves(
    column: str, missing: Sequence[object], source: str = "", leaves: Iterable[str] = ()
) -> ValueNotInHierarchyError:
    """The refusal of values of `column` that are not leaves of its hierarchy (`missing`: the distinct ones found,
    sorted; `source` names where they were read; `leaves`: the hierarchy's, to tell a number that lost its leading
    zeros, such as a zip code a CSV reader took for an integer, from a value that is missing).

    >>> raise not_leaves("zip", ["2138", "94107"], leaves=["02138", "02139"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.ValueNotInHierarchyError: column 'zip': 2 distinct values are not leaves of its hierarchy
    (first: ['2138', '94107']); the hierarchy writes such values with leading zeros ('2138' as '02138'): the column
    was read as a number; read it as text (a job's schema = { zip = "String" }, Python schema_overrides={"zip":
    pl.String}), or add them to the hierarchy or drop those rows
    """
    where = f" in {source}" if source else ""
    fix = f"add {'it' if len(missing) == 1 else 'them'} to the hierarchy or drop those rows"
    padded = {leaf.lstrip("0"): leaf for leaf in leaves if leaf.isdigit() and leaf.startswith("0")}
    lost = next((str(m) for m in missing if str(m) in padded), None)
    twin = _other_time_unit([str(m) for m in missing], leaves)
    if lost is not None:
        fix = (
            f"the hierarchy writes such values with leading zeros ({lost!r} as {padded[lost]!r}): the column was read "
            f'as a number; read it as text (a job\'s schema = {{ {column} = "String" }}, Python schema_overrides='
            f'{{"{column}": pl.String}}), or {fix}'
        )
    elif twin is not None:
        value, leaf, unit = twin
        fix = (
            f"the hierarchy writes such values in another time unit ({value!r} as {leaf!r}): the engine holds the "
            f"column in {_UNITS[unit]}{' (Spark holds every timestamp so)' if unit == 'us' else ''}; build the "
            f"hierarchy from the values in that unit (Hierarchy.dates(df[{column!r}].cast(pl.Datetime({unit!r}))"
            f".unique())), or {fix}"
        )
    return ValueNotInHierarchyError(f"column {column!r}{where}: {not_in_hierarchy(missing)}; {fix}")


_FRACTION = re.compile(r"(.* \d\d:\d\d:\d\d)\.(\d{3}|\d{6}|\d{9})(\D.*)?")
"""A Datetime label: up to its seconds, their fraction (3, 6 or 9 digits: ms, us, ns), its zone."""
_UNITS = {"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}


def _other_time_unit(missing: Sequence[str], leaves: Iterable[str]) -> tuple[str, str, str] | None:
    """A Datetime label among `missing` that is a leaf but for its time unit (the leaf ``'... 10:30:15.123'`` in ms,
    the value ``'... 10:30:15.123000'`` in us, as Spark holds it): the value, the leaf and the value's unit.

    >>> _other_time_unit(["2020-01-01 10:30:15.123000"], ["2020-01-01 10:30:15.123", "2020-01-02 00:00:00.000"])
    ('2020-01-01 10:30:15.123000', '2020-01-01 10:30:15.123', 'us')
    >>> _other_time_unit(["2020-01-01 10:30:15.123456"], ["2020-01-01 10:30:15.123456789"]) is None  # another instant
    True
    """
    first = next((m for m in map(_FRACTION.fullmatch, missing) if m is not None), None)
    if first is None:
        return None
    digits = len(first[2])
    twins = {}
    for leaf in leaves:
        found = _FRACTION.fullmatch(leaf)
        if found is not None and len(found[2]) != digits and not found[2][digits:].strip("0"):  # the same instant
            twins[(found[1], found[2].ljust(digits, "0")[:digits], found[3])] = leaf
    for value in missing:
        m = _FRACTION.fullmatch(value)
        if m is not None and (m[1], m[2], m[3]) in twins:
            return value, twins[(m[1], m[2], m[3])], {3: "ms", 6: "us", 9: "ns"}[digits]
    return None


def is_integer(value: object) -> TypeGuard[int | np.integer]:
    """Whether `value` is an integer: a Python int or a NumPy integer (``np.int64(3)``, as a value read from an array
    is), not a bool (Python's or NumPy's) and not a float, even a whole one (2.0, ``np.float64(2)``). The one type
    test of every integer option of the methods and models (k, seed, max_suppressed, ...).

    >>> is_integer(3), is_integer(np.int64(3)), is_integer(np.uint8(3)), is_integer(True), is_integer(np.bool_(1))
    (True, True, True, False, False)
    >>> is_integer(2.0), is_integer(np.float64(2))
    (False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_qids(lf: pl.LazyFrame, qids: Iterable[str] | str) -> list[str]:
    """Refuse an empty list of quasi-identifiers, a name listed twice and names that are not columns of `lf`.

    A string is one name (never its letters); anything but a name or a list of names is refused
    (:func:`names_list`, as :func:`~polars_anon.request.check_request` does).

    >>> check_qids(pl.LazyFrame({"a": [1]}), None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qids must be a column name or a list of column names, got None
    """
    check_frame(lf)
    qids = names_list(qids, "qids")
    if not qids:
        raise InvalidParameterError(QIDS_EMPTY())
    check_unique(qids, "qids")
    return check_columns(lf, qids, "qids")


RESERVED_NAMES = ("count", "size")
"""Column names the class aggregates and the count tables use for their own columns (and every ``__anon_*`` name)."""

RESERVED_PREFIX = "__anon_"


def refuse_reserved(
    qids: Sequence[str], sensitives: Sequence[str] = (), others: Sequence[str] = (), *, helpers: bool = True
) -> None:
    """Refuse a quasi-identifier or sensitive column named like a column of the aggregates the road, ``pa.check`` and
    ``pa.risk`` build (:data:`RESERVED_NAMES`), and (with `helpers`) any column named with the prefix of the road's
    helper columns: :func:`refuse_built_names`, the one rule and message of every such refusal.

    The aggregates hold every qid and sensitive attribute beside their own ``size`` / ``count`` columns, so such a
    name would collide there; insensitive and dropped columns (`others`) never enter the aggregates and may be named
    so. The rows carry ``__anon_*`` helper columns on some routes (a row index, a sample's hash), so no column is named
    so (``pa.risk`` without models builds none: `helpers` False).

    >>> refuse_reserved(["age", "size"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qid column 'size' is a name the anonymizer reserves for its own columns \
(['count', 'size'] and names starting with '__anon_'); rename the column first, e.g. lf.rename({'size': 'size_'})
    """
    roles = (("qid", qids, RESERVED_NAMES), ("sensitive", sensitives, RESERVED_NAMES), ("input", others, ()))
    for role, names, reserved in roles:
        if role == "input" and not helpers:
            continue
        refuse_built_names(names, reserved, f"{role} column", _RESERVED_WHO, helpers=helpers)


_RESERVED_WHO = "the anonymizer reserves for its own columns"


def refuse_built_names(
    names: Iterable[str], built: Sequence[str], what: str, who: str, *, helpers: bool = True
) -> None:
    """Refuse a column (`names`, in the role `what`) named like a column that a function builds (`built`, and with
    `helpers` every ``__anon_*`` name of its helper columns): the one rule of every function that adds columns beside
    the user's (`who` says which, e.g. ``"frequencies adds to the table"``). A name it does not build stays allowed.

    >>> refuse_built_names(["age", "fk"], ["fk", "Fk"], "frequencies: column", "frequencies adds to the table")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: frequencies: column 'fk' is a name frequencies adds to the table \
(['fk', 'Fk'] and names starting with '__anon_'); rename the column first, e.g. lf.rename({'fk': 'fk_'})
    """
    for name in names:
        if name in built or (helpers and name.startswith(RESERVED_PREFIX)):
            other = name.removeprefix("__") if name.startswith(RESERVED_PREFIX) else name + "_"
            named = [repr(list(built))] if built else []
            named += [f"names starting with {RESERVED_PREFIX!r}"] if helpers else []
            raise InvalidParameterError(
                BUILT_NAME(
                    what=what,
                    name=name,
                    who=who,
                    named=" and ".join(named),
                    rename=f"lf.rename({{{name!r}: {other!r}}})",
                )
            )


def check_unique(names: Sequence[str], what: str = "qids") -> None:
    """Refuse a column named twice.

    >>> check_unique(["age", "sex", "age"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qids lists ['age'] more than once; name each quasi-identifier once
    """
    dup = sorted({q for q in names if names.count(q) > 1})
    if dup:
        noun = "quasi-identifier" if what == "qids" else "column"
        raise InvalidParameterError(NAMES_TWICE(what=what, dup=dup, noun=noun))
