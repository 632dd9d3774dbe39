"""Integer bands with optional bottom and top coding.

Each integer value is a leaf; above it, bands of the given widths, aligned to
multiples of their width and labelled ``lo-hi`` (both ends included); each width
divides the next, so bands nest; then the root. With ``bottom=b`` every value
below b has the single parent ``<b``, and with ``top=t`` every value at or above
t has the parent ``>=t``; those coded groups go straight up to the root. Bands
that straddle a coding bound are clipped to the values they can hold, so every
label says exactly which values it covers: with ``bottom=18`` and width 5 the
band of 18 and 19 is ``18-19``, not ``15-19``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from polars_anon._validate import is_integer
from polars_anon.builders.values import Row, distinct
from polars_anon.errors import InvalidParameterError, NeedsCastError
from polars_anon.messages import typed

__all__ = ["check_bounds", "check_widths", "rows"]


def check_widths(widths: object) -> list[int]:
    """Widths: a non-empty list of positive integers, each dividing the next.

    >>> check_widths([5, 10, 20])
    [5, 10, 20]
    """
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or not all(is_integer(w) for w in widths):
        raise InvalidParameterError(
            f"intervals: widths must be a list of positive integers such as [5, 10, 20], got {widths!r}"
        )
    ws = [int(w) for w in widths]  # NumPy's integers too, as the methods take them
    if not ws or any(w < 1 for w in ws):
        raise InvalidParameterError(f"intervals: widths must be positive integers, got {ws}")
    for a, b in itertools.pairwise(ws):
        if b <= a or b % a:
            raise InvalidParameterError(
                f"intervals: each width must divide the next and be larger, got {a} then {b}; for example [5, 10, 20]"
            )
    return ws


def check_bounds(bottom: object, top: object) -> tuple[int | None, int | None]:
    """`bottom` and `top` are integers (NumPy's too) or None, with bottom < top; returned as Python ints.

    >>> check_bounds(18, 90)
    (18, 90)
    """
    for name, bound in (("bottom", bottom), ("top", top)):
        if bound is not None and not is_integer(bound):
            raise InvalidParameterError(f"intervals: {name} must be an integer or None, got {bound!r}")
    low, high = (None if b is None else int(b) for b in (bottom, top))  # type: ignore[call-overload]
    if low is not None and high is not None and not low < high:
        raise InvalidParameterError(f"intervals: bottom must be smaller than top, got bottom={low}, top={high}")
    return low, high


def _integers(values: Iterable[object]) -> list[int]:
    numbers = []
    for v in distinct(values, "intervals").to_list():
        try:
            number = int(str(v))
        except ValueError:
            cause = f"intervals: value {v!r} is not an integer; interval hierarchies need integer values"
            if isinstance(v, float):  # a whole float is labelled '20.0', not the leaf '20': the column must be integer
                cause += ", and a float column is labelled as floats ('20.0') even when its values are whole numbers"
                raise NeedsCastError(cause, "Int64", typed(None, "Int64", "python")) from None
            raise InvalidParameterError(cause) from None
        if str(number) != str(v):  # '007', ' 7', '+7', '7_000', '١٢': the leaf would be another label
            raise NeedsCastError(
                f"intervals: value {v!r} is not written as the integer {number} is, so the leaf {str(number)!r} "
                "would not be the column's value: interval hierarchies need plain integers",
                "Int64",
                typed(None, "Int64", "python"),
            )
        numbers.append(number)
    return sorted(set(numbers))


def _band(v: int, w: int, bottom: int | None, top: int | None) -> str:
    lo, hi = v // w * w, v // w * w + w - 1
    if bottom is not None:
        lo = max(lo, bottom)
    if top is not None:
        hi = min(hi, top - 1)
    return f"{lo}-{hi}"


def rows(
    values: Iterable[object],
    widths: Sequence[int],
    *,
    root: str = "*",
    bottom: int | None = None,
    top: int | None = None,
) -> list[Row]:
    """Rows ``[value, band1, ..., root]`` for integer values.

    >>> rows([12, 18, 37, 95], [5, 10], bottom=18, top=90)
    [['12', '<18', '<18', '*'], ['18', '18-19', '18-19', '*'],
     ['37', '35-39', '30-39', '*'], ['95', '>=90', '>=90', '*']]
    """
    ws = check_widths(widths)
    bottom, top = check_bounds(bottom, top)
    out = []
    for v in _integers(values):
        if bottom is not None and v < bottom:
            levels = [f"<{bottom}"] * len(ws)
        elif top is not None and v >= top:
            levels = [f">={top}"] * len(ws)
        else:
            levels = [_band(v, w, bottom, top) for w in ws]
        out.append([str(v), *levels, root])
    return out
