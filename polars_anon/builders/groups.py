"""Order-based hierarchies: runs of sorted values in groups of given sizes per level.

As ARX's order-based builder does: the values are sorted (their natural order,
or the rank given by `order`), level 1 cuts them into consecutive groups of
``sizes[0]`` values, level 2 cuts the level-1 groups into consecutive groups of
``sizes[1]`` groups, and so on; the last group of a level may be smaller. A level
that would hold every value in one group is left out, with the levels above it
(the root already is that group). A group of one member keeps its member's label
(ARX's ``f;f;*``), so it is the same node one level up.

Labels come from the format `label`, with the placeholders ``{first}`` and
``{last}`` (the group's first and last value), ``{count}`` (its number of values)
and ``{members}`` (its values joined by commas); the default ``[{first}..{last}]``
matches :meth:`~polars_anon.Hierarchy.random_ordered`. A format that gives two
different groups the same label is refused.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

from polars_anon._validate import is_integer
from polars_anon.builders.values import Row, distinct, string_labels
from polars_anon.errors import HierarchyError, InvalidParameterError, preview

__all__ = ["MAX_WIDTH", "PLACEHOLDERS", "check_label", "check_order", "check_sizes", "rows"]

PLACEHOLDERS = ("first", "last", "count", "members")
MAX_WIDTH = 99
"""The widest field of a label format: ``{first:>9999999999}`` would build a 10 GB label."""
_SPEC = re.compile(r"(.?[<>=^])?[-+ ]?z?#?0?([1-9][0-9]?)?[,_]?(\.[0-9]{1,2})?[bcdeEfFgGnosxX%]?")
"""A format spec without nested fields, width and precision below 100."""


def check_sizes(sizes: object) -> list[int]:
    """Group sizes per level: a non-empty list of integers >= 2.

    >>> check_sizes([5, 2])
    [5, 2]
    """
    ok = not isinstance(sizes, (str, bytes)) and isinstance(sizes, Sequence) and len(sizes) > 0
    if not ok or not all(is_integer(s) and s >= 2 for s in sizes):  # type: ignore[union-attr]
        raise InvalidParameterError(
            f"ordered: sizes must be a non-empty list of integers >= 2 (values per group at level 1, "
            f"groups per group above), such as [5, 2]; got {sizes!r}"
        )
    return [int(s) for s in sizes]  # type: ignore[union-attr]


def check_label(label: object) -> str:
    """A label format using only the placeholders of :data:`PLACEHOLDERS`.

    >>> check_label("{first}-{last}")
    '{first}-{last}'
    """
    if not isinstance(label, str):
        raise InvalidParameterError(
            f"ordered: label must be a format string such as '[{{first}}..{{last}}]', got {label!r}"
        )
    try:
        fields = [(name, spec or "") for _, name, spec, _ in string.Formatter().parse(label) if name is not None]
        wrong = next((f"{{{n}:{s}}}" for n, s in fields if n not in PLACEHOLDERS or not _SPEC.fullmatch(s)), None)
        if wrong is None:
            label.format(first="a", last="b", count=2, members="a,b")
    except (KeyError, IndexError, ValueError) as exc:
        wrong = repr(exc)
    if wrong is not None:
        raise InvalidParameterError(
            f"ordered: label {label!r} is not a valid format ({wrong.replace(':}', '}')}); its placeholders are "
            f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}, each with at most a short format spec "
            f"(a width up to {MAX_WIDTH}, e.g. '{{count:03d}}')"
        )
    return label


def check_order(order: object) -> list[str] | None:
    """None (natural order) or a list of labels, each once.

    >>> check_order(["low", "mid", "high"])
    ['low', 'mid', 'high']
    """
    if order is None:
        return None
    if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
        raise InvalidParameterError(f"ordered: order must be a list of the values in their order, got {order!r}")
    ranked = [str(v) for v in order]
    twice: list[object] = [v for v, n in Counter(ranked).items() if n > 1]
    if twice:
        raise InvalidParameterError(
            f"ordered: order lists {len(twice)} values more than once (first: {preview(twice)})"
        )
    return ranked


def _sorted_labels(values: Iterable[object], order: list[str] | None) -> list[str]:
    series = distinct(values, "ordered")
    if order is None:
        return string_labels(series.sort(), "ordered").to_list()
    labels = string_labels(series, "ordered").to_list()
    rank = {v: i for i, v in enumerate(order)}
    missing = [v for v in labels if v not in rank]
    if missing:
        raise InvalidParameterError(
            f"ordered: {len(missing)} values are not in order (first: {preview(missing)}); order must rank every value"
        )
    return sorted(labels, key=rank.__getitem__)


def rows(
    values: Iterable[object],
    sizes: Sequence[int],
    *,
    order: Sequence[object] | None = None,
    label: str = "[{first}..{last}]",
    root: str = "*",
) -> list[Row]:
    """Rows ``[leaf, group1, ..., root]`` of the sorted values.

    >>> rows(range(1, 6), [2, 2])
    [['1', '[1..2]', '[1..4]', '*'], ['2', '[1..2]', '[1..4]', '*'], ['3', '[3..4]', '[1..4]', '*'],
     ['4', '[3..4]', '[1..4]', '*'], ['5', '5', '5', '*']]
    """
    sizes, label = check_sizes(sizes), check_label(label)
    leaves = _sorted_labels(values, check_order(order))
    spans = [(i, i) for i in range(len(leaves))]  # groups of the level below, as leaf index ranges
    names = list(leaves)
    span_of = {name: span for name, span in zip(names, spans)}  # every label -> the leaves it covers
    columns: list[list[str]] = []  # per level, the group label of each leaf
    for size in sizes:
        cut = range(0, len(spans), size)
        if len(cut) <= 1:
            break  # one group holding everything: the root
        new_spans, new_names = [], []
        for start in cut:
            members = spans[start : start + size]
            lo, hi = members[0][0], members[-1][1]
            name = (
                names[start]
                if len(members) == 1
                else label.format(
                    first=leaves[lo], last=leaves[hi], count=hi - lo + 1, members=",".join(leaves[lo : hi + 1])
                )
            )
            other = span_of.setdefault(name, (lo, hi))
            if other != (lo, hi):
                raise HierarchyError(
                    f"ordered: label {name!r} names two different groups, {leaves[other[0]]!r}..{leaves[other[1]]!r} "
                    f"and {leaves[lo]!r}..{leaves[hi]!r}; use a label format that tells them apart (one with a "
                    "separator no value holds, e.g. '[{first} to {last}]') or relabel the values"
                )
            new_spans.append((lo, hi))
            new_names.append(name)
        spans, names = new_spans, new_names
        columns.append([name for name, (lo, hi) in zip(names, spans) for _ in range(lo, hi + 1)])
    return [[leaf, *(col[i] for col in columns), root] for i, leaf in enumerate(leaves)]
