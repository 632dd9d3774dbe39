"""Typed option sets: a dataclass per method, parsed from a mapping in one place.

Unknown keys and values of the wrong type are refused with the key named; each
dataclass may add range checks in ``__post_init__`` (raising
:class:`~polars_anon.errors.InvalidParameterError`).

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Opts:
...     max_suppressed: int = 0
>>> parse_options(Opts, {"max_suppressed": 3}, "method 'x'")
Opts(max_suppressed=3)
>>> parse_options(Opts, {"max_supressed": 3}, "method 'x'")
Traceback (most recent call last):
...
polars_anon.errors.InvalidParameterError: method 'x' does not take option 'max_supressed'; did you mean \
'max_suppressed'? It takes ['max_suppressed']
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, get_args, get_origin

import numpy as np

from polars_anon._validate import is_integer
from polars_anon.errors import InvalidParameterError

__all__ = ["MAX_SUPPRESSED", "check_max_suppressed", "describe", "option_names", "parse_options", "type_matches"]

T = TypeVar("T")

MAX_SUPPRESSED = (1 << 63) - 1
"""The largest suppression budget taken (more rows than any table holds)."""


def check_max_suppressed(value: object) -> None:
    """The suppression budget of every method that takes one: None (the method's default) or an integer >= 0 (a
    NumPy integer too: :func:`~polars_anon._validate.is_integer`).

    >>> check_max_suppressed(-1)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: max_suppressed must be an integer >= 0, got -1
    """
    if value is None:
        return
    if not is_integer(value) or value < 0:
        raise InvalidParameterError(f"max_suppressed must be an integer >= 0, got {value!r}")
    if value > MAX_SUPPRESSED:  # the search's bounds are floats: 2**1030 overflowed there, a bare OverflowError
        raise InvalidParameterError(
            f"max_suppressed must be at most {MAX_SUPPRESSED} (2**63 - 1; a budget of the table's rows or more lets "
            f"every row be suppressed), got an integer of {len(str(value))} digits"
        )


def option_names(cls: type) -> list[str]:
    """The option names of an options dataclass, in declaration order (fields set by the code, not the user,
    ``init=False``, are not options)."""
    return [f.name for f in dataclasses.fields(cls) if f.init]


def parse_options(cls: type[T], given: Mapping[str, Any], where: str) -> T:
    """Build `cls` from `given`, refusing unknown keys and wrong types (naming them)."""
    names = option_names(cls)
    unknown = [k for k in given if k not in names]
    if unknown:
        takes = f"it takes {names}" if names else "it takes no options"
        what = "option" if len(unknown) == 1 else "options"
        shown = repr(unknown[0]) if len(unknown) == 1 else str(unknown)
        near = difflib.get_close_matches(unknown[0], names, n=1, cutoff=0.75)
        if near:
            takes = f"did you mean {near[0]!r}? I{takes[1:]}"
        raise InvalidParameterError(f"{where} does not take {what} {shown}; {takes}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key, value in given.items():
        if not type_matches(value, hints[key]):
            expects = fields[key].metadata.get("expects") or describe(hints[key])
            raise InvalidParameterError(f"{where}: option {key!r} must be {expects}, got {value!r}")
    missing = [
        f.name
        for f in fields.values()
        if f.init
        and f.name not in given
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        what = "option" if len(missing) == 1 else "options"
        raise InvalidParameterError(f"{where} needs {what} {', '.join(map(repr, missing))}; it takes {names}")
    return cls(**given)


def type_matches(value: Any, hint: Any) -> bool:
    """Whether `value` fits the type hint (the subset of typing used by option sets)."""
    if hint is Any:
        return True
    origin, args = get_origin(hint), get_args(hint)
    if origin is typing.Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return any(type_matches(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, (bool, np.bool_))
    if hint is int:
        return is_integer(value)
    if hint is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if hint is str:
        return isinstance(value, str)
    if origin in (list, Sequence, tuple) or hint in (list, tuple):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return False
        inner = args[0] if args else Any
        return all(type_matches(v, inner) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            return False
        kt, vt = args if args else (Any, Any)
        return all(type_matches(k, kt) and type_matches(v, vt) for k, v in value.items())
    return isinstance(value, origin or hint)


def describe(hint: Any, plural: bool = False) -> str:
    """Words for a type hint, for error messages (a field's ``metadata["expects"]`` overrides them).

    >>> describe(int | typing.Literal["auto", "exact"] | None)
    "an integer, one of ['auto', 'exact'] or None"
    >>> describe(list[str])
    'a list of strings'
    """
    origin, args = get_origin(hint), get_args(hint)
    if origin is typing.Literal:
        return ("values in " if plural else "one of ") + str(list(args))
    if origin in (typing.Union, types.UnionType):
        words = [describe(a, plural) for a in args]
        return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
    if hint is type(None):
        return "None"
    if origin in (list, Sequence, tuple):
        return ("lists" if plural else "a list") + (f" of {describe(args[0], True)}" if args else "")
    if origin in (dict, Mapping):
        head = "mappings" if plural else "a mapping"
        return head + (f" from {describe(args[0], True)} to {describe(args[1], True)}" if args else "")
    if hint is Any:
        return "values" if plural else "any value"
    single = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    many = {int: "integers", float: "numbers", str: "strings", bool: "booleans"}
    return (many if plural else single).get(hint, getattr(hint, "__name__", str(hint)))
