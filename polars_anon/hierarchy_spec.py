"""Hierarchy specs of job files and the CLI: checked before any data is read, then built.

The forms (TOML values of ``[qids.NAME] hierarchy = ...``):

=================================================  ===============================================
``"age.csv"``                                      ARX CSV file, relative to the job file
``{ path = "age.csv", separator = ";" }``          the same with its separator
``"suppress"``                                     every value -> ``*``
``{ mask = 5, width = 5 }``                        mask 5 characters; `width` pads integers of several widths
``{ intervals = [5, 10], bottom = 18, top = 90 }`` integer bands, ``<18`` and ``>=90`` coded
``{ dates = ["month", "year", "decade"] }``        calendar levels of a Date/Datetime column
``{ ordered = [5, 2], label = "...", order = [] }`` sorted values in groups of 5, then 2 groups
=================================================  ===============================================

Every key is checked by :func:`parse_spec` without data, and a bad spec is refused
naming the qid, the key and what is allowed. :func:`build_spec` then builds the
hierarchy from the column's distinct values (so a job with a differential-privacy model, whose
hierarchies must not depend on the data, takes files only: a row of
:data:`~polars_anon.pipeline.capabilities.JOB_REFUSALS`). There is no job-file form of
:meth:`Hierarchy.from_levels <polars_anon.Hierarchy.from_levels>`: a job file holds
no code; build such a hierarchy in Python and save it with
:meth:`Hierarchy.to_csv <polars_anon.Hierarchy.to_csv>`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from polars_anon._types import Road
from polars_anon._validate import is_integer
from polars_anon.builders import bands, dates, groups, masks
from polars_anon.errors import EmptyLabelError, HierarchyError, InvalidParameterError, NeedsCastError, ShortCodesError
from polars_anon.hierarchy import Hierarchy
from polars_anon.messages import empty_label, short_codes, typed

if TYPE_CHECKING:
    import polars as pl

__all__ = ["KINDS", "HierarchySpec", "build_spec", "parse_spec", "spec_files"]

KINDS: dict[str, tuple[str, ...]] = {
    "path": ("separator",),
    "mask": ("width",),
    "intervals": ("bottom", "top"),
    "dates": (),
    "ordered": ("label", "order"),
}
"""Table kinds and the optional keys each accepts beside its own key."""

_FORMS = '"file.csv", "suppress", or a table with one of ' + ", ".join(KINDS) + " (e.g. { mask = 5 })"


@dataclass(frozen=True)
class HierarchySpec:
    """A checked spec: its kind (``csv``, ``suppress`` or a key of :data:`KINDS`) and options."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def needs_values(self) -> bool:
        """Built from the column's distinct values (every kind but a CSV file)."""
        return self.kind != "csv"


def _refuse(name: str, key: str, message: str) -> InvalidParameterError:
    return InvalidParameterError(f"qid {name!r}: hierarchy key {key!r} {message}")


def _integer(name: str, key: str, value: object, minimum: int | None, meaning: str) -> int:
    if not is_integer(value) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise _refuse(name, key, f"must be an integer{bound} ({meaning}), got {value!r}")
    return int(value)


def _checked(name: str, key: str, check: Callable[[Any], Any], value: object) -> Any:
    try:
        return check(value)
    except InvalidParameterError as exc:
        raise _refuse(name, key, f"is invalid: {exc}") from None


def _table(name: str, spec: Mapping[str, Any]) -> HierarchySpec:
    """A table spec of qid `name`: its one kind, then that kind's keys, checked."""
    kind = _table_kind(name, spec)
    if kind == "path":
        return _path_spec(name, spec)
    if kind == "mask":
        return _mask_spec(name, spec)
    if kind == "intervals":
        return _intervals_spec(name, spec)
    if kind == "dates":
        return HierarchySpec("dates", {"levels": _checked(name, "dates", dates.check_levels, spec["dates"])})
    return _ordered_spec(name, spec)


def _table_kind(name: str, spec: Mapping[str, Any]) -> str:
    """The one kind of :data:`KINDS` a table names, refused unless it names exactly one and only that kind's keys."""
    kinds = [k for k in spec if k in KINDS]
    if len(kinds) != 1:
        what = (
            f"hierarchy spec {dict(spec)!r} gives {len(kinds)} kinds"
            if kinds
            else f"unknown hierarchy spec {dict(spec)!r}"
        )
        raise InvalidParameterError(
            f"qid {name!r}: {what}; a table names exactly one kind of {list(KINDS)}, e.g. {{ mask = 5 }}"
        )
    kind = kinds[0]
    unknown = sorted(set(spec) - {kind, *KINDS[kind]})
    if unknown:
        raise InvalidParameterError(
            f"qid {name!r}: hierarchy key {unknown[0]!r} is not allowed with {kind!r}; allowed keys: "
            f"{[kind, *KINDS[kind]]}"
        )
    return kind


def _path_spec(name: str, spec: Mapping[str, Any]) -> HierarchySpec:
    """``{ path = ..., separator = ... }``: a CSV file and its one-character separator (default ``;``)."""
    value = spec["path"]
    if not isinstance(value, str) or not value:
        raise _refuse(name, "path", f"must be a file name, got {value!r}")
    sep = spec.get("separator", ";")
    if not isinstance(sep, str) or len(sep) != 1:
        raise _refuse(name, "separator", f"must be one character such as ';', got {sep!r}")
    return HierarchySpec("csv", {"path": value, "separator": sep})


def _mask_spec(name: str, spec: Mapping[str, Any]) -> HierarchySpec:
    """``{ mask = ..., width = ... }``: the characters masked and the padded width, within the builder's bounds."""
    get = spec.get
    digits = _integer(name, "mask", spec["mask"], 1, "characters masked from the right")
    width = None if get("width") is None else _integer(name, "width", get("width"), 1, "zero-padded width of integers")
    _checked(name, "mask", masks.check_digits, digits)  # the builder's bounds, before any data is read
    if width is not None:
        _checked(name, "width", masks.check_width, width)
    return HierarchySpec("mask", {"digits": digits, "width": width})


def _intervals_spec(name: str, spec: Mapping[str, Any]) -> HierarchySpec:
    """``{ intervals = [...], bottom = ..., top = ... }``: the band widths and the coded bounds."""
    get = spec.get
    widths = _checked(name, "intervals", bands.check_widths, spec["intervals"])
    bottom = (
        None
        if get("bottom") is None
        else _integer(name, "bottom", get("bottom"), None, "values below it are coded '<bottom'")
    )
    top = (
        None
        if get("top") is None
        else _integer(name, "top", get("top"), None, "values at or above it are coded '>=top'")
    )
    _checked(name, "bottom", lambda bounds: bands.check_bounds(*bounds), (bottom, top))
    return HierarchySpec("intervals", {"widths": widths, "bottom": bottom, "top": top})


def _ordered_spec(name: str, spec: Mapping[str, Any]) -> HierarchySpec:
    """``{ ordered = [...], label = ..., order = [...] }``: the group sizes, the label template, the values' order."""
    sizes = _checked(name, "ordered", groups.check_sizes, spec["ordered"])
    label = _checked(name, "label", groups.check_label, spec.get("label", "[{first}..{last}]"))
    order = spec.get("order")
    if order is not None and not (isinstance(order, list) and all(isinstance(v, str) or is_integer(v) for v in order)):
        raise _refuse(
            name, "order", f"must be a list of the column's values (strings or integers) in their order; got {order!r}"
        )
    return HierarchySpec(
        "ordered", {"sizes": sizes, "label": label, "order": _checked(name, "order", groups.check_order, order)}
    )


_BUILDER_NAMES: dict[str, str] = {
    "mask": "{ mask = 5 }",
    "masking": "{ mask = 5 }",
    "intervals": "{ intervals = [5, 10] }",
    "dates": '{ dates = ["month", "year"] }',
    "ordered": "{ ordered = [5, 2] }",
    "suppression": '"suppress"',
}
"""A builder's name (a table kind, or the Python builder's) -> the spec that builds it, shown when a job file names
the builder as a string (``hierarchy = "dates"``), which is read as a hierarchy file's path."""


def _builder_named(name: str, path: str, base: Path) -> None:
    """Refuse a hierarchy file path that does not exist and is a builder's name, showing the spec that builds it."""
    if path in _BUILDER_NAMES and not (base / path).exists():
        raise InvalidParameterError(
            f'qid {name!r}: hierarchy = "{path}" is read as a hierarchy file and there is no file {path!r} (looked '
            f"for {os.path.abspath(base / path)!r}); {path!r} is a builder: write it as a table, "
            f"hierarchy = {_BUILDER_NAMES[path]}"
        )


def parse_spec(name: str, spec: object) -> HierarchySpec:
    """Check a job-file or CLI hierarchy spec without reading data.

    >>> parse_spec("birth", {"dates": ["month", "year"]})
    HierarchySpec(kind='dates', options={'levels': ['month', 'year']})
    >>> parse_spec("zip", {"mask": "five"})
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qid 'zip': hierarchy key 'mask' must be an integer >= 1
    (characters masked from the right), got 'five'
    """
    if spec == "suppress":
        return HierarchySpec("suppress")
    if isinstance(spec, str) and spec:
        return HierarchySpec("csv", {"path": spec, "separator": ";"})
    if isinstance(spec, Mapping):
        return _table(name, spec)
    raise InvalidParameterError(f"qid {name!r}: hierarchy must be {_FORMS}; got {spec!r}")


def spec_files(name: str, spec: object, base: Path = Path(".")) -> list[Path]:
    """The file the hierarchy spec of qid `name` reads (a CSV hierarchy, relative to `base`), or none: a run never
    writes onto it.

    >>> spec_files("age", {"path": "age.csv", "separator": ","}, Path("jobs")), spec_files("sex", "suppress")
    ([PosixPath('jobs/age.csv')], [])
    """
    if spec is None:
        return []
    checked = parse_spec(name, spec)
    return [base / checked.options["path"]] if checked.kind == "csv" else []


def build_spec(
    name: str,
    spec: HierarchySpec,
    values: Sequence[object] | pl.Series | None,
    base: Path = Path("."),
    road: Road | Literal["cli"] = "job",
) -> Hierarchy:
    """Build a checked spec; `values` are the column's distinct values (a Series keeps the dtype).

    Refusals of the builders are re-raised naming the qid, their ways out in the words of the user's `road` (a
    Python call, a job file, a CLI command without one).

    >>> build_spec("sex", parse_spec("sex", "suppress"), ["F", "M"]).leaf_labels
    ['F', 'M']
    """
    o = spec.options
    if spec.needs_values and values is None:
        raise InvalidParameterError(
            f"qid {name!r}: the {spec.kind!r} hierarchy is built from the column's values; none were given"
        )
    if spec.kind == "csv":  # outside the try: these refusals name the qid themselves
        _builder_named(name, o["path"], base)
    try:
        if spec.kind == "csv":
            return Hierarchy.from_csv(base / o["path"], separator=o["separator"])
        if spec.kind == "suppress":
            return Hierarchy.suppression(values)  # type: ignore[arg-type]
        if spec.kind == "mask":
            return Hierarchy.masking(values, o["digits"], width=o["width"])  # type: ignore[arg-type]
        if spec.kind == "intervals":
            return Hierarchy.intervals(values, o["widths"], bottom=o["bottom"], top=o["top"])  # type: ignore[arg-type]
        if spec.kind == "dates":
            return Hierarchy.dates(values, o["levels"])  # type: ignore[arg-type]
        return Hierarchy.ordered(values, o["sizes"], order=o["order"], label=o["label"])  # type: ignore[arg-type]
    except NeedsCastError as exc:  # the cast in the road's words (a job's schema, the file a command reads)
        raise NeedsCastError(f"qid {name!r}: {exc.cause}", exc.dtype, typed(name, exc.dtype, road)) from None
    except EmptyLabelError as exc:  # the way out in the road's words (relabel the input, or null_values)
        raise EmptyLabelError(f"qid {name!r}: {exc.cause}", empty_label(name, road)) from None
    except ShortCodesError as exc:  # the ways out in the road's words (the column as text, the spec's width)
        words = short_codes(name, exc.count, exc.first, exc.widest, road)
        raise ShortCodesError(words, exc.count, exc.first, exc.widest) from None
    except (HierarchyError, InvalidParameterError) as exc:
        raise type(exc)(f"qid {name!r}: {exc}") from None
