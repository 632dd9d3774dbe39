"""Prefix masking: one more character replaced by ``*`` from the right per level.

String values are masked on their own length (``33101 -> 3310* -> 331** -> ...``); a value with no more
characters than a level masks is fully masked there, ``*`` repeated as many times as the level masks (``7`` ->
``*`` -> ``**``, merging with ``12`` at ``**``), so every level masks every value.
Integer values (an integer Series, or Python/NumPy integers) of one digit count are masked as their text. Integers
with fewer digits than the widest are refused (:func:`check_codes`) unless `width` is given: a zip code read as the
integer 8628 (``08628`` in the file) would keep its leaf ``8628`` (the column's String cast, the published value
where it is not generalized) under ``0862*``, so a column published at several levels (``topdown``) would mix
``8628`` and ``08***``; the way out is reading the column as text. With `width`, the user says the integers are codes
of that width: they are masked zero-padded (the leaf 2134 under ``0213*``, next to 02130 to 02139; every value meets
at ``*****``). A final root `char` is added when the
last masked level still differs between values (``char`` repeated once more than the levels when a one-character
value's level 1 is already ``char``).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from polars_anon._validate import is_integer
from polars_anon.builders.values import Row, distinct, string_labels
from polars_anon.errors import InvalidParameterError, ShortCodesError, preview
from polars_anon.messages import short_codes

__all__ = ["MAX_DIGITS", "MAX_WIDTH", "check_codes", "check_digits", "check_width", "rows"]

MAX_DIGITS = 100
"""The most characters masked (one hierarchy level each): masking is for codes (zip codes, ids, phone numbers);
a job file's ``mask = 100000000`` would build that many levels for every value and exhaust the memory."""
MAX_WIDTH = 39
"""The widest zero-padded integer: the digits of Polars' widest integer type (UInt128's largest value)."""


def _positive(name: str, value: object, most: int, why: str) -> int:
    if not is_integer(value) or value < 1:
        raise InvalidParameterError(f"masking: {name} must be an integer >= 1, got {value!r}")
    if value > most:
        raise InvalidParameterError(f"masking: {name} must be at most {most} ({why}), got {value!r}")
    return int(value)


def check_digits(digits: object) -> int | None:
    """`digits` (characters masked, None: all) is None or an integer from 1 to :data:`MAX_DIGITS`.

    >>> check_digits(10**8)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: masking: digits must be at most 100 (one level per masked character), \
got 100000000
    """
    return None if digits is None else _positive("digits", digits, MAX_DIGITS, "one level per masked character")


def check_width(width: object) -> int | None:
    """`width` (zero-padded width of integer values, None: the widest value's) is None or an integer from 1 to
    :data:`MAX_WIDTH`."""
    why = "the digits of the widest integer type"
    return None if width is None else _positive("width", width, MAX_WIDTH, why)


def check_codes(values: object, width: int | None) -> None:
    """Refuse integer `values` with fewer digits than the widest when no `width` is given (see the module docstring):
    the one rule of integer masking, run once, as the hierarchy is built. The refusal names the Series' column and
    gives the way out in Python's words (:func:`polars_anon.messages.short_codes`); a job re-words it in its own
    (:class:`~polars_anon.errors.ShortCodesError` carries the facts).

    >>> check_codes(pl.Series("zip", [8628, 33101]), None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.ShortCodesError: masking: column 'zip' holds 1 integers with fewer digits than its \
widest value (5) (first: [8628]): ...
    """
    series = distinct(values, "masking")
    if width is not None or not series.dtype.is_integer():
        return
    digits = series.abs().cast(pl.String).str.len_chars()
    widest = int(digits.max())  # type: ignore[arg-type]
    shorter = series.filter(digits < widest).sort()
    if len(shorter):
        first = shorter.head(5).to_list()
        raise ShortCodesError(
            short_codes(series.name, len(shorter), first, widest, "python"), len(shorter), first, widest
        )


def _padded(series: pl.Series, labels: list[str], width: int | None) -> list[str]:
    """Integer labels zero-padded to the given width (:func:`check_codes` refuses values of different digit counts
    without one)."""
    negative = series.filter(series < 0).to_list()
    if negative:
        raise InvalidParameterError(
            f"masking: {len(negative)} integer values are negative (first: {preview(negative)}); "
            "masking pads integers such as zip codes with zeros and needs values >= 0"
        )
    check_codes(series, width)
    widest = max(len(v) for v in labels)
    if width is not None and width < widest:
        too_wide: list[object] = [v for v in labels if len(v) > width]
        raise InvalidParameterError(
            f"masking: width={width} but {len(too_wide)} values have more digits (first: {preview(too_wide)}); "
            f"use width >= {widest}"
        )
    return [v.zfill(width or widest) for v in labels]


def rows(
    values: Iterable[object], digits: int | None = None, *, char: str = "*", width: int | None = None
) -> list[Row]:
    """Rows ``[label, masked1, ..., maskedN(, char)]`` sorted by the (padded) value.

    >>> rows(pl.Series([2134, 33101]), 2, width=5)
    [['2134', '0213*', '021**', '*'], ['33101', '3310*', '331**', '*']]
    """
    digits, width = check_digits(digits), check_width(width)
    if not isinstance(char, str) or not char:
        raise InvalidParameterError(f"masking: char must be a character such as '*', got {char!r}")
    series = distinct(values, "masking")
    labels = string_labels(series, "masking").to_list()
    if series.dtype.is_integer():
        bases = _padded(series, labels, width)
    elif width is not None:
        raise InvalidParameterError(
            f"masking: width applies to integer values only; these are {series.dtype} and are masked on "
            "their own length"
        )
    else:
        bases = labels
    longest = max(len(b) for b in bases)
    if digits is None and longest > MAX_DIGITS:
        first = preview([b for b in bases if len(b) == longest])
        raise InvalidParameterError(
            f"masking: the longest value has {longest} characters (first: {first}); masking them all builds a "
            f"level per character, at most {MAX_DIGITS}: give digits"
        )
    n = longest if digits is None else min(digits, longest)  # more than the longest value's: nothing more to mask
    pairs = sorted(zip(bases, labels))
    bases = [b for b, _ in pairs]
    # level i keeps all but the last i characters and masks them; a value of at most i characters is fully masked,
    # char * i: its own node on level i (a label is on one level), shared by every value fully masked there
    levels = [[b[:-i] + char * i if len(b) > i else char * i for b in bases] for i in range(1, n + 1)]
    if levels and len(set(levels[-1])) > 1:  # no level: the one value is empty
        top = char if char not in levels[0] else char * (n + 1)  # char: a one-character value's level 1
        levels.append([top] * len(bases))
    return [list(row) for row in zip([label for _, label in pairs], *levels)]
