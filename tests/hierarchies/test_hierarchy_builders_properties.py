"""Value-based builders against independent references (hypothesis).

Dates: every value is a leaf, every leaf has one ancestor per chosen level, and
every label covers exactly the values under it (the label is parsed back to a
calendar span here, the day computed with Python's zoneinfo). Intervals: bands
by the closed form, bottom/top coded. Ordered: groups are index ranges of size
prod(sizes[:L]). from_levels: built exactly when the levels nest.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from polars_anon import Hierarchy, HierarchyError
from polars_anon.builders import masks
from polars_anon.builders.dates import DATE_LEVELS


def chain(h: Hierarchy, leaf: str) -> list[str]:
    return [h.label_of(i) for i in h.ancestors_by_depth[h.id_of(leaf)] if i >= 0][::-1]


def leaves_under(h: Hierarchy) -> dict[str, set[str]]:
    """Node label -> labels of the leaves below it (from the closure table)."""
    out: dict[str, set[str]] = {}
    for leaf, ancestor in h.closure.select("leaf", "ancestor").iter_rows():
        out.setdefault(h.label_of(ancestor), set()).add(h.label_of(leaf))
    return out


def span(label: str) -> tuple[dt.date, dt.date]:
    """The calendar days a date-hierarchy label covers (written from the label format, not the code)."""
    if m := re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", label):
        d = dt.date(*map(int, m.groups()))
        return d, d
    if m := re.fullmatch(r"(\d{4})-(\d{2})", label):
        y, mo = map(int, m.groups())
        return dt.date(y, mo, 1), dt.date(y, mo, calendar.monthrange(y, mo)[1])
    if m := re.fullmatch(r"(\d{4})-Q([1-4])", label):
        y, q = map(int, m.groups())
        end = 3 * q
        return dt.date(y, end - 2, 1), dt.date(y, end, calendar.monthrange(y, end)[1])
    if m := re.fullmatch(r"(\d{4})", label):
        return dt.date(int(label), 1, 1), dt.date(int(label), 12, 31)
    m = re.fullmatch(r"(\d{4})-(\d{4})", label)
    assert m, label
    return dt.date(int(m[1]), 1, 1), dt.date(int(m[2]), 12, 31)


LEVEL_PATTERNS = {
    "day": r"\d{4}-\d\d-\d\d",
    "month": r"\d{4}-\d\d",
    "quarter": r"\d{4}-Q[1-4]",
    "year": r"\d{4}",
    "5years": r"(\d{4})-(\d{4})",
    "decade": r"(\d{4})-(\d{4})",
}


def levels_of(allowed: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(allowed), min_size=1, unique=True).map(lambda ls: sorted(ls, key=DATE_LEVELS.index))


def check_date_tree(h: Hierarchy, day_of: dict[str, dt.date], levels: list[str]) -> None:
    assert set(h.leaf_labels) == set(day_of) and h.n_leaves == len(day_of)
    for leaf in day_of:
        labels = chain(h, leaf)
        assert labels[-1] == "*" and len(labels) == len(levels) + 2, labels  # one node per level, no collapse
        for level, label in zip(levels, labels[1:-1]):
            m = re.fullmatch(LEVEL_PATTERNS[level], label)
            assert m, (level, label)
            if level in ("5years", "decade"):  # aligned bands of 5 and 10 years
                width = 5 if level == "5years" else 10
                assert int(m[1]) % width == 0 and int(m[2]) - int(m[1]) == width - 1
    for label, under in leaves_under(h).items():  # every label covers exactly its leaves
        if label in day_of or label == "*":
            continue
        lo, hi = span(label)
        assert under == {leaf for leaf, day in day_of.items() if lo <= day <= hi}, label


@settings(max_examples=60, deadline=None)
@given(
    days=st.lists(st.dates(dt.date(1000, 1, 1), dt.date(2999, 12, 31)), min_size=1, max_size=25),
    levels=levels_of(DATE_LEVELS[1:]),
)
def test_date_values(days: list[dt.date], levels: list[str]) -> None:
    h = Hierarchy.dates(pl.Series(days, dtype=pl.Date), levels)
    check_date_tree(h, {d.isoformat(): d for d in days}, levels)


ZONES = [None, "UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Kiritimati"]
PER_US = {"ns": 1000, "us": 1, "ms": 1 / 1000}
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(), unit=st.sampled_from(["ns", "us", "ms"]), zone=st.sampled_from(ZONES), levels=levels_of(DATE_LEVELS)
)
def test_datetime_values(data: st.DataObject, unit: str, zone: str | None, levels: list[str]) -> None:
    lo, hi = int(-2_208_988_800_000_000 * PER_US[unit]), int(4_102_444_800_000_000 * PER_US[unit])  # 1900..2100
    ticks = data.draw(st.lists(st.integers(lo, hi), min_size=1, max_size=20))
    s = pl.Series(ticks, dtype=pl.Int64).cast(pl.Datetime(unit))
    if zone is not None:
        s = s.dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
    h = Hierarchy.dates(s, levels)
    cast = pl.LazyFrame({"q": s}).select(pl.col("q").cast(pl.String)).collect()["q"].to_list()  # the pipeline's labels
    day_of = {}
    for label, tick in zip(cast, ticks):
        micros = tick // 1000 if unit == "ns" else tick * 1000 if unit == "ms" else tick  # integers: floats lose ns
        instant = EPOCH + dt.timedelta(microseconds=micros)
        day_of[label] = (instant.astimezone(ZoneInfo(zone)) if zone else instant).date()
    check_date_tree(h, day_of, levels)
    if "day" in levels:
        assert all(chain(h, leaf)[1] == day.isoformat() for leaf, day in day_of.items())


@st.composite
def widths(draw: st.DrawFn) -> list[int]:
    out = [draw(st.sampled_from([1, 2, 3, 5]))]
    for factor in draw(st.lists(st.integers(2, 4), max_size=2)):
        out.append(out[-1] * factor)
    return out


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.integers(-60, 160), min_size=1, max_size=30),
    ws=widths(),
    bottom=st.none() | st.integers(-50, 100),
    top=st.none() | st.integers(-40, 150),
)
def test_intervals_with_bottom_and_top(values: list[int], ws: list[int], bottom: int | None, top: int | None) -> None:
    assume(bottom is None or top is None or bottom < top)
    h = Hierarchy.intervals(values, ws, bottom=bottom, top=top)
    assert set(h.leaf_labels) == {str(v) for v in values}
    for v in set(values):
        labels = chain(h, str(v))
        if bottom is not None and v < bottom:
            assert labels == [str(v), f"<{bottom}", "*"]
        elif top is not None and v >= top:
            assert labels == [str(v), f">={top}", "*"]
        else:
            want = []  # the closed form: aligned band clipped to [bottom, top - 1]
            for w in ws:
                lo = max(v // w * w, bottom if bottom is not None else -(10**9))
                hi = min(v // w * w + w - 1, top - 1 if top is not None else 10**9)
                want.append(f"{lo}-{hi}")
            collapsed = [x for i, x in enumerate(want) if i == 0 or x != want[i - 1]]
            assert labels == [str(v), *collapsed, "*"]
    for label, under in leaves_under(h).items():  # a band covers exactly the values in its range
        if m := re.fullmatch(r"(-?\d+)-(-?\d+)", label):
            assert under == {str(v) for v in values if int(m[1]) <= v <= int(m[2])}, label


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.integers(-1000, 1000), unique=True, min_size=1, max_size=40),
    sizes=st.lists(st.integers(2, 4), min_size=1, max_size=3),
)
def test_ordered_groups_are_index_ranges(values: list[int], sizes: list[int]) -> None:
    h = Hierarchy.ordered(values, sizes)
    ranked = sorted(values)
    n = len(ranked)
    assert h.leaf_labels == [str(v) for v in ranked]
    for i, v in enumerate(ranked):
        want = [str(v)]
        for level in range(1, len(sizes) + 1):
            block = math.prod(sizes[:level])
            if n <= block:
                break  # one group would hold every value: left out
            lo, hi = i // block * block, min(i // block * block + block, n) - 1
            label = str(ranked[lo]) if lo == hi else f"[{ranked[lo]}..{ranked[hi]}]"
            if label != want[-1]:
                want.append(label)
        assert chain(h, str(v)) == [*want, "*"]


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.text("0123", min_size=3, max_size=3), unique=True, min_size=1, max_size=20),
    positions=st.lists(st.integers(0, 2), min_size=1, max_size=3),
)
def test_from_levels_builds_exactly_when_levels_nest(values: list[str], positions: list[int]) -> None:
    exprs = [pl.lit(f"L{i}:") + pl.col("v").str.slice(p, 1) for i, p in enumerate(positions, 1)]
    labels = {v: [f"L{i}:{v[p]}" for i, p in enumerate(positions, 1)] for v in values}
    nests = all(
        len({labels[v][i + 1] for v in values if labels[v][i] == label}) == 1
        for i in range(len(positions) - 1)
        for label in {labels[v][i] for v in values}
    )
    if not nests:
        with pytest.raises(HierarchyError, match=r"has two parents on level \d+: '.*' \(value '(.{3})'\) and"):
            Hierarchy.from_levels(values, exprs)
        return
    h = Hierarchy.from_levels(values, exprs)
    assert sorted(h.leaf_labels) == sorted(values) and h.n_leaves == len(values)
    for v in values:
        assert chain(h, v) == [v, *labels[v], "*"]


@given(
    values=st.lists(st.text("019*é", max_size=6), min_size=1, max_size=12, unique=True),
    digits=st.none() | st.integers(1, 8),
    char=st.sampled_from(["*", "#", "xy"]),
)
def test_masking_rows_mask_one_more_character_per_level(values: list[str], digits: int | None, char: str) -> None:
    """Character by character: level i keeps a value's characters before its last i and masks the others; a value
    of at most i characters is fully masked as `char` i times (every value masked at every level), up to the
    longest value's length; a root `char` (`char` once more than the levels when a level-1 label is `char`)."""
    longest = max(len(v) for v in values)
    n = longest if digits is None else min(digits, longest)
    expected = [
        [v]
        + [
            "".join(c if j < len(v) - i else char for j, c in enumerate(v)) if len(v) > i else char * i
            for i in range(1, n + 1)
        ]
        for v in sorted(values)
    ]
    if n and len({r[-1] for r in expected}) > 1:
        top = char * (n + 1) if char in {r[1] for r in expected} else char
        expected = [[*r, top] for r in expected]
    assert masks.rows(values, digits, char=char) == expected
