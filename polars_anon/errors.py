"""Exceptions raised when polars_anon refuses input.

Every refusal names the column, value or parameter at fault, what was given, what
is allowed, and a hint. All of them derive from :class:`AnonError`.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AnonError",
    "ColumnNotFoundError",
    "EmptyLabelError",
    "HierarchyError",
    "InfeasibleError",
    "InputError",
    "InvalidParameterError",
    "NeedsCastError",
    "NotFiniteError",
    "NotKAnonymousError",
    "NullValueError",
    "OutputError",
    "OutputExistsError",
    "PrivacyModelError",
    "ShortCodesError",
    "ValueNotInHierarchyError",
]


class AnonError(Exception):
    """Base of every refusal of bad input."""


class ColumnNotFoundError(AnonError, KeyError):
    """A named column is not in the frame."""

    def __str__(self) -> str:  # a plain KeyError would quote the message
        return str(self.args[0])


class InvalidParameterError(AnonError, ValueError):
    """A parameter has a value outside its allowed range or set."""


class NeedsCastError(InvalidParameterError):
    """Values that the request can use once their column is cast to `dtype` (text written ``05``, floats where
    integers are due). `cause` says what is wrong without the way out, so a road that knows the column re-words the
    cast in its own syntax (:func:`polars_anon.messages.typed`: a job's ``schema``); the message is `cause` and `fix`.
    """

    def __init__(self, cause: str, dtype: str, fix: str) -> None:
        super().__init__(f"{cause}; {fix}")
        self.cause, self.dtype, self.fix = cause, dtype, fix

    def __reduce__(self) -> tuple[type[NeedsCastError], tuple[str, str, str]]:
        return (type(self), (self.cause, self.dtype, self.fix))  # pickled whole (its init takes three arguments)


class ShortCodesError(InvalidParameterError):
    """Integers to mask without a width, `count` of them with fewer digits than the widest value's `widest` (`first`:
    up to 5 of them; :func:`polars_anon.builders.masks.check_codes`), so a road that builds the hierarchy re-words the
    way out in its own syntax (:func:`polars_anon.messages.short_codes`: a job's ``schema`` or its spec's width)."""

    def __init__(self, message: str, count: int, first: Sequence[int], widest: int) -> None:
        super().__init__(message)
        self.count, self.first, self.widest = count, list(first), widest

    def __reduce__(self) -> tuple[type[ShortCodesError], tuple[str, int, list[int], int]]:
        return (type(self), (str(self), self.count, self.first, self.widest))  # pickled whole (four arguments)


class HierarchyError(AnonError, ValueError):
    """A hierarchy is malformed: two parents, two roots, a cycle, ragged rows, empty."""


class EmptyLabelError(HierarchyError):
    """A value that is the empty string '' where a hierarchy is built from a column's values. `cause` says what is
    wrong without the way out, so a road that builds the hierarchy re-words it in its own syntax
    (:func:`polars_anon.messages.empty_label`: a job's keys); the message is `cause` and `fix`."""

    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(f"{cause}; {fix}")
        self.cause, self.fix = cause, fix

    def __reduce__(self) -> tuple[type[EmptyLabelError], tuple[str, str]]:
        return (type(self), (self.cause, self.fix))  # pickled whole (its init takes two arguments)


class ValueNotInHierarchyError(HierarchyError):
    """A column holds values that are not leaves of its hierarchy."""


class NullValueError(AnonError, ValueError):
    """A quasi-identifier holds nulls and no null policy allows them."""


class NotFiniteError(AnonError, ValueError):
    """A float quasi-identifier holds NaN or an infinite value (not a null: no null policy allows them)."""


class InfeasibleError(AnonError, ValueError):
    """The request cannot be met: k larger than the table, suppression budget too small."""


class NotKAnonymousError(AnonError):
    """The independent check found a class smaller than k; nothing was written."""


class PrivacyModelError(NotKAnonymousError):
    """The independent check found a class (or the table) violating a requested privacy model; nothing was written."""


class OutputExistsError(AnonError, FileExistsError):
    """The output path exists and overwriting was not asked for.

    `what` and `target` name the output, so that the command line words the way out as its flag
    (:func:`polars_anon.messages.output_exists`); the message is a Python caller's.
    """

    def __init__(self, message: str, *, what: str = "output", target: str = "") -> None:
        super().__init__(message)
        self.what, self.target = what, target


class OutputError(AnonError, OSError):
    """An output could not be written (a full disk, a folder that cannot be created); nothing was written."""


def preview(values: Sequence[object], limit: int = 5) -> str:
    """Format at most `limit` offending values for an error message."""
    shown = [str(v) if v is None else repr(v) for v in values[:limit]]
    return "[" + ", ".join(shown) + "]"


class InputError(AnonError, ValueError):
    """An input file is missing, unreadable, or not Parquet/CSV."""
