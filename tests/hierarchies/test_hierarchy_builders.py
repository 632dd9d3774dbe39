"""Value-based hierarchy builders: dates, bottom/top-coded intervals, ordered groups,
from_levels, zero-padded integer masking, ids_of; golden cases computed by hand."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_anon import Hierarchy, HierarchyError, InvalidParameterError, OutputExistsError, ValueNotInHierarchyError
from polars_anon.hierarchy_spec import parse_spec
from tests.examples import FIG2


def chain(h: Hierarchy, leaf: str) -> list[str]:
    """Labels from the leaf up to the root."""
    return [h.label_of(i) for i in h.ancestors_by_depth[h.id_of(leaf)] if i >= 0][::-1]


def pipeline_labels(series: pl.Series) -> list[str]:
    """The labels the anonymization pipeline matches: the column cast to String in a LazyFrame."""
    return pl.LazyFrame({"q": series}).select(pl.col("q").cast(pl.String)).collect()["q"].to_list()


# ---------------------------------------------------------------- dates
DATE_GOLDEN = {  # leaf -> month, quarter, year, 5 years, decade (by hand)
    "1900-02-28": ["1900-02", "1900-Q1", "1900", "1900-1904", "1900-1909"],  # 1900 is not a leap year
    "1999-12-31": ["1999-12", "1999-Q4", "1999", "1995-1999", "1990-1999"],
    "2000-01-01": ["2000-01", "2000-Q1", "2000", "2000-2004", "2000-2009"],
    "2000-02-29": ["2000-02", "2000-Q1", "2000", "2000-2004", "2000-2009"],  # 2000 is
    "2019-02-28": ["2019-02", "2019-Q1", "2019", "2015-2019", "2010-2019"],
    "2020-02-29": ["2020-02", "2020-Q1", "2020", "2020-2024", "2020-2029"],
    "2020-03-31": ["2020-03", "2020-Q1", "2020", "2020-2024", "2020-2029"],
    "2020-04-01": ["2020-04", "2020-Q2", "2020", "2020-2024", "2020-2029"],
    "2024-12-31": ["2024-12", "2024-Q4", "2024", "2020-2024", "2020-2029"],
    "2025-01-01": ["2025-01", "2025-Q1", "2025", "2025-2029", "2020-2029"],
}


def test_dates_golden_on_date_values() -> None:
    days = pl.Series([dt.date.fromisoformat(d) for d in reversed(DATE_GOLDEN)])
    h = Hierarchy.dates(days)
    assert h.leaf_labels == list(DATE_GOLDEN)  # chronological
    for leaf, levels in DATE_GOLDEN.items():
        assert chain(h, leaf) == [leaf, *levels, "*"], leaf
    assert h.height == 7 and h.n_leaves == len(DATE_GOLDEN)
    sub = Hierarchy.dates(days, ["month", "year", "decade"])
    assert chain(sub, "2020-02-29") == ["2020-02-29", "2020-02", "2020", "2020-2029", "*"]
    assert chain(sub, "1999-12-31") == ["1999-12-31", "1999-12", "1999", "1990-1999", "*"]
    assert Hierarchy.dates(days, ["decade"]).nodes.filter(pl.col("level") == 1)["label"].to_list() == [
        "1900-1909",
        "1990-1999",
        "2000-2009",
        "2010-2019",
        "2020-2029",
    ]


def test_dates_from_iso_strings_keep_their_text() -> None:
    """A CSV column of dates is String: leaves keep the text, levels come from the parsed day."""
    h = Hierarchy.dates(["2020-02-29", "1999-12-31"], ["year", "decade"])
    assert chain(h, "2020-02-29") == ["2020-02-29", "2020", "2020-2029", "*"]
    with pytest.raises(
        InvalidParameterError, match=r"1 String values are not ISO dates YYYY-MM-DD \(first: \['2019-02-29'\]\)"
    ):
        Hierarchy.dates(["2020-02-29", "2019-02-29"])


TZ_CASES = [  # instant (UTC), zone, leaf in us, day: hand-converted wall clocks
    ("2020-02-29 23:30:00.123456", None, "2020-02-29 23:30:00.123456", "2020-02-29"),
    ("2020-02-29 23:30:00.123456", "UTC", "2020-02-29 23:30:00.123456+00:00", "2020-02-29"),
    ("2020-02-29 23:30:00.123456", "Europe/Paris", "2020-03-01 00:30:00.123456+01:00", "2020-03-01"),
    ("2019-12-31 23:59:59", "Europe/Paris", "2020-01-01 00:59:59.000000+01:00", "2020-01-01"),
    ("2020-01-01 03:00:00", "America/New_York", "2019-12-31 22:00:00.000000-05:00", "2019-12-31"),
    ("2020-02-29 20:00:00", "Asia/Kolkata", "2020-03-01 01:30:00.000000+05:30", "2020-03-01"),
]


@pytest.mark.parametrize(("instant", "zone", "leaf", "day"), TZ_CASES)
def test_datetime_day_is_the_calendar_day_in_the_column_zone(
    instant: str, zone: str | None, leaf: str, day: str
) -> None:
    s = pl.Series([dt.datetime.fromisoformat(instant)])
    if zone is not None:
        s = s.dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
    h = Hierarchy.dates(s)
    year = int(day[:4])
    quarter = (int(day[5:7]) - 1) // 3 + 1
    five, ten = year // 5 * 5, year // 10 * 10
    assert chain(h, leaf) == [
        leaf,
        day,
        day[:7],
        f"{year}-Q{quarter}",
        str(year),
        f"{five}-{five + 4}",
        f"{ten}-{ten + 9}",
        "*",
    ]


@pytest.mark.parametrize("unit", ["ns", "us", "ms"])
@pytest.mark.parametrize("zone", [None, "UTC", "Europe/Paris", "America/New_York"])
def test_datetime_leaves_are_the_pipeline_cast_for_every_unit_and_zone(unit: str, zone: str | None) -> None:
    s = pl.Series([dt.datetime(2020, 2, 29, 23, 30, 0, 123456), dt.datetime(2020, 10, 25, 0, 30)]).cast(
        pl.Datetime(unit)
    )
    if zone is not None:
        s = s.dt.replace_time_zone("UTC").dt.convert_time_zone(zone)
    h = Hierarchy.dates(s, ["day", "year"])
    assert h.leaf_labels == pipeline_labels(s)
    fraction = {"ns": ".123456000", "us": ".123456", "ms": ".123"}[unit]
    offset = {None: "", "UTC": "+00:00", "Europe/Paris": "+01:00", "America/New_York": "-05:00"}[zone]
    wall = {
        None: "2020-02-29 23:30:00",
        "UTC": "2020-02-29 23:30:00",
        "Europe/Paris": "2020-03-01 00:30:00",
        "America/New_York": "2020-02-29 18:30:00",
    }[zone]
    assert f"{wall}{fraction}{offset}" in h.leaf_labels


def test_datetime_dst_fall_back_gives_two_leaves_under_one_day() -> None:
    """Europe/Paris, 2020-10-25: 02:30 happens twice (+02:00, then +01:00)."""
    s = pl.Series([dt.datetime(2020, 10, 25, 0, 30), dt.datetime(2020, 10, 25, 1, 30)]).dt.replace_time_zone("UTC")
    h = Hierarchy.dates(s.dt.convert_time_zone("Europe/Paris"), ["day", "month"])
    assert h.leaf_labels == ["2020-10-25 02:30:00.000000+02:00", "2020-10-25 02:30:00.000000+01:00"]
    assert {chain(h, leaf)[1] for leaf in h.leaf_labels} == {"2020-10-25"}


def test_dates_refusals() -> None:
    days = [dt.date(2020, 1, 1)]
    with pytest.raises(InvalidParameterError, match="'day' is the leaf itself for Date"):
        Hierarchy.dates(days, ["day", "month"])
    with pytest.raises(InvalidParameterError, match=r"unknown levels \['week'\]; the levels are \['month', 'quarter'"):
        Hierarchy.dates(days, ["week"])
    with pytest.raises(InvalidParameterError, match=r"levels \['year', 'month'\] must go up without repeats"):
        Hierarchy.dates(days, ["year", "month"])
    with pytest.raises(InvalidParameterError, match="non-empty list of names"):
        Hierarchy.dates(days, "year")  # type: ignore[arg-type]
    with pytest.raises(
        InvalidParameterError, match="values must be Date, Datetime or ISO date String, got dtype Int64"
    ):
        Hierarchy.dates([1, 2])
    with pytest.raises(HierarchyError, match="no values given"):
        Hierarchy.dates(pl.Series([None], dtype=pl.Date))


# ---------------------------------------------------------------- intervals with bottom and top coding
def test_intervals_bottom_and_top_coding() -> None:
    h = Hierarchy.intervals([5, 17, 18, 19, 20, 37, 89, 90, 104], [5, 10], bottom=18, top=90)
    assert chain(h, "5") == ["5", "<18", "*"] and chain(h, "17") == ["17", "<18", "*"]
    assert chain(h, "18") == ["18", "18-19", "*"]  # 15-19 and 10-19 clipped to 18-19: one node
    assert chain(h, "20") == ["20", "20-24", "20-29", "*"]
    assert chain(h, "89") == ["89", "85-89", "80-89", "*"]
    assert chain(h, "90") == ["90", ">=90", "*"] and chain(h, "104") == ["104", ">=90", "*"]
    assert h.height == 4 and h.level[h.id_of("<18")] == 1 and h.level[h.id_of(">=90")] == 1


def test_intervals_bands_clipped_at_a_top_inside_a_band() -> None:
    h = Hierarchy.intervals([60, 61, 62, 63], [5], top=62)
    assert [chain(h, v)[1] for v in ["60", "61", "62", "63"]] == ["60-61", "60-61", ">=62", ">=62"]
    assert Hierarchy.intervals([1, 2], [5], bottom=10).leaf_labels == ["1", "2"]  # only coded values


def test_intervals_refusals() -> None:
    with pytest.raises(InvalidParameterError, match="bottom must be smaller than top, got bottom=90, top=18"):
        Hierarchy.intervals([1], [5], bottom=90, top=18)
    with pytest.raises(InvalidParameterError, match="top must be an integer or None, got 9.5"):
        Hierarchy.intervals([1], [5], top=9.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="widths must be a list of positive integers"):
        Hierarchy.intervals([1], "5,10")  # type: ignore[arg-type]


# ---------------------------------------------------------------- ordered groups
def test_ordered_groups_of_given_sizes() -> None:
    h = Hierarchy.ordered([7, 3, 1, 2, 5, 4, 6], [3, 2])
    assert h.leaf_labels == ["1", "2", "3", "4", "5", "6", "7"]  # numeric sort, not "1", "10", "2"
    assert chain(h, "1") == ["1", "[1..3]", "[1..6]", "*"]
    assert chain(h, "6") == ["6", "[4..6]", "[1..6]", "*"]
    assert chain(h, "7") == ["7", "*"]  # a group of one keeps its value's label, one level up too
    assert h.height == 4


def test_ordered_levels_with_one_group_are_left_out() -> None:
    h = Hierarchy.ordered(range(10), [5, 2, 2])
    assert chain(h, "0") == ["0", "[0..4]", "*"] and h.height == 3  # level 2 would hold everything
    assert Hierarchy.ordered(range(3), [5]).height == 2


def test_ordered_custom_order_and_label() -> None:
    edu = ["Preschool", "Primary", "HS-grad", "Bachelors", "Masters", "Doctorate"]
    h = Hierarchy.ordered(sorted(edu), [2, 2], order=edu, label="{first} to {last} ({count})")
    assert h.leaf_labels == edu
    assert chain(h, "HS-grad") == ["HS-grad", "HS-grad to Bachelors (2)", "Preschool to Bachelors (4)", "*"]
    assert chain(h, "Doctorate") == ["Doctorate", "Masters to Doctorate (2)", "*"] and h.height == 4
    members = Hierarchy.ordered(["a", "b", "c"], [2], label="{{{members}}}")
    assert chain(members, "b") == ["b", "{a,b}", "*"]


def test_ordered_refusals() -> None:
    with pytest.raises(InvalidParameterError, match=r"sizes must be a non-empty list of integers >= 2.*got \[1\]"):
        Hierarchy.ordered(range(4), [1])
    with pytest.raises(
        InvalidParameterError,
        match=r"label '\{firs\}' is not a valid format.*\{first\}, \{last\}, \{count\}, \{members\}",
    ):
        Hierarchy.ordered(range(4), [2], label="{firs}")
    with pytest.raises(HierarchyError, match=r"label '2' names two different groups, 'a'\.\.'b' and 'c'\.\.'d'"):
        Hierarchy.ordered(["a", "b", "c", "d"], [2], label="{count}")
    with pytest.raises(HierarchyError, match=r"label '2' names two different groups, '2'\.\.'2' and '0'\.\.'1'"):
        Hierarchy.ordered(range(4), [2], label="{count}")  # a group label equal to a value
    with pytest.raises(InvalidParameterError, match=r"1 values are not in order \(first: \['c'\]\)"):
        Hierarchy.ordered(["a", "b", "c"], [2], order=["b", "a"])
    with pytest.raises(InvalidParameterError, match=r"order lists 1 values more than once \(first: \['a'\]\)"):
        Hierarchy.ordered(["a", "b"], [2], order=["a", "b", "a"])


# ---------------------------------------------------------------- from_levels
def test_from_levels_prefixes_and_arithmetic() -> None:
    zips = ["33101", "33109", "34000", "02134"]
    h = Hierarchy.from_levels(zips, [pl.col("v").str.slice(0, 3), pl.col("v").str.slice(0, 1)])
    assert chain(h, "33109") == ["33109", "331", "3", "*"] and chain(h, "02134") == ["02134", "021", "0", "*"]
    ages = Hierarchy.from_levels(
        pl.Series([31, 45, 47, 52]),
        [pl.col("v") // 10 * 10, pl.when(pl.col("v") < 50).then(pl.lit("young")).otherwise(pl.lit("old"))],
    )
    assert chain(ages, "47") == ["47", "40", "young", "*"] and chain(ages, "52") == ["52", "50", "old", "*"]


def test_from_levels_refuses_a_node_with_two_parents_naming_values() -> None:
    with pytest.raises(
        HierarchyError, match=r"level 1 label 'b' has two parents on level 2: 'a' \(value 'ab'\) and 'c' \(value 'cb'\)"
    ):
        Hierarchy.from_levels(["ab", "cb"], [pl.col("v").str.slice(1, 1), pl.col("v").str.slice(0, 1)])


def test_from_levels_refusals() -> None:
    with pytest.raises(HierarchyError, match=r"gives no label \(null\) for 1 values \(first: \['b'\]\)"):
        Hierarchy.from_levels(["a", "b"], [pl.when(pl.col("v") == "a").then(pl.lit("A"))])
    with pytest.raises(
        InvalidParameterError, match="level 1 .* failed on the values column 'v' of dtype String: unable to find column"
    ):
        Hierarchy.from_levels(["a"], [pl.col("zip").str.slice(0, 1)])
    with pytest.raises(InvalidParameterError, match="level 2 must be a Polars expression, got str"):
        Hierarchy.from_levels(["a"], [pl.col("v"), "v"])  # type: ignore[list-item]
    with pytest.raises(HierarchyError, match=r"1 values are also labels of groups above other values.*\['ab'\]"):
        Hierarchy.from_levels(["ab", "abc"], [pl.col("v").str.slice(0, 2)])


# ---------------------------------------------------------------- masking of integers (issue 12)
def test_integer_zip_codes_are_masked_on_their_zero_padded_width() -> None:
    """Issue 12: Int64 zips 2134 and 33101 met only at an extra root; 2134 is zip 02134, given as width=5 (mend36:
    without a width such integers are refused, see below)."""
    h = Hierarchy.masking(pl.Series([33101, 2134, 2139], dtype=pl.Int64), width=5)
    assert h.leaf_labels == ["2134", "2139", "33101"]  # the column's String cast
    assert chain(h, "2134") == ["2134", "0213*", "021**", "02***", "0****", "*****"]
    assert h.lca(h.id_of("2134"), h.id_of("2139")) == h.id_of("0213*")
    assert h.root == "*****" and h.height == 6  # every value meets at *****, no extra root
    assert Hierarchy.masking([2134, 33101], width=5) == Hierarchy.masking(pl.Series([2134, 33101]), width=5)
    wide = Hierarchy.masking(pl.Series([501, 2134]), 2, width=5)
    assert chain(wide, "501") == ["501", "0050*", "005**", "*"]


def test_integers_shorter_than_the_widest_are_refused_naming_the_column_a_value_and_the_fix() -> None:
    """mend36: a CSV's zip 08628 read as the integer 8628 was masked '0862*', '086**', ... above its leaf '8628', so
    topdown published both '8628' and '08***' in one column, silently. Fails before: the hierarchy was built."""
    zips = pl.Series("zip", [8628, 33101, 8628, 12827])
    with pytest.raises(InvalidParameterError) as caught:
        Hierarchy.masking(zips.unique())
    message = str(caught.value)
    assert message.startswith("masking: column 'zip' holds 1 integers with fewer digits than its widest value (5)")
    assert "(first: [8628])" in message and "'8628' and '0862*'" in message and "\n" not in message
    assert (
        "read the column as text: pl.scan_csv(path, schema_overrides={'zip': pl.String}); else pass width=5" in message
    )
    with pytest.raises(InvalidParameterError, match=r"^masking: the values are 1 integers .* \(first: \[7\]\)"):
        Hierarchy.masking([7, 12], 1)  # no column name: none is made up
    assert chain(Hierarchy.masking(zips, width=5), "8628")[1] == "0862*"  # width: asked for, so padded
    assert chain(Hierarchy.masking(zips.cast(pl.String)), "8628")[1] == "862*"  # text: its own length
    assert chain(Hierarchy.masking(pl.Series("zip", [33101, 12827])), "12827")[1] == "1282*"  # one digit count


def test_string_masking_unchanged_and_integer_refusals() -> None:
    assert chain(Hierarchy.masking(["02134", "33101"]), "02134")[1] == "0213*"
    with pytest.raises(
        InvalidParameterError, match=r"width=4 but 1 values have more digits \(first: \['33101'\]\); use width >= 5"
    ):
        Hierarchy.masking([2134, 33101], width=4)
    with pytest.raises(InvalidParameterError, match=r"1 integer values are negative \(first: \[-5\]\)"):
        Hierarchy.masking([-5, 3])
    with pytest.raises(InvalidParameterError, match="width applies to integer values only"):
        Hierarchy.masking(["a"], width=3)
    with pytest.raises(InvalidParameterError, match="digits must be an integer >= 1, got 0"):
        Hierarchy.masking(["a"], 0)


def test_masking_is_bounded_before_it_builds_a_level_per_character() -> None:
    """review20 item 6: a mask of 10**8 characters built 10**8 levels (MemoryError; 2**63 - 1: OOM-killed)."""
    with pytest.raises(InvalidParameterError, match=r"digits must be at most 100 .*got 100000000$"):
        Hierarchy.masking(["02134"], 10**8)
    with pytest.raises(InvalidParameterError, match=r"width must be at most 39 .*got 100000000$"):
        Hierarchy.masking([2134], 2, width=10**8)
    with pytest.raises(InvalidParameterError, match="longest value has 101 characters .* at most 100: give digits"):
        Hierarchy.masking(["x" * 101])
    assert chain(Hierarchy.masking(["x" * 101], 100), "x" * 101)[-1] == "x" + "*" * 100  # the limit itself builds
    assert chain(Hierarchy.masking([2134], 1, width=39), "2134")[1] == "0" * 35 + "213*"


def test_datetime_suppression_leaves_match_the_pipeline() -> None:
    s = pl.Series([dt.datetime(2020, 1, 1, 12)])
    assert Hierarchy.suppression(s).leaf_labels == pipeline_labels(s) == ["2020-01-01 12:00:00.000000"]


# ---------------------------------------------------------------- NumPy integers, as every method takes them
def test_builders_take_numpy_integers_as_python_ones() -> None:
    """Widths, bounds, digits, width, sizes, max_children and a spec's integers given as NumPy integers (a value read
    from an array is one) build the hierarchy Python integers build; all were refused ('must be an integer').
    Rows by hand: bottom 4 and top 11 code 3 as '<4' and 12 as '>=11'; 7 is in 5-9 and in 0-9 cut at 4."""
    i = np.int64
    assert Hierarchy.intervals([3, 7, 12], [i(5), i(10)], bottom=i(4), top=i(11)).to_rows() == [
        ["3", "<4", "<4", "*"],
        ["7", "5-9", "4-9", "*"],
        ["12", ">=11", ">=11", "*"],
    ]
    assert Hierarchy.masking(["123", "456"], i(2)).to_rows() == [["123", "12*", "1**", "*"], ["456", "45*", "4**", "*"]]
    assert Hierarchy.masking(pl.Series([12]), width=np.uint8(3)).path_of("12") == ["12", "01*", "0**", "***"]
    assert Hierarchy.ordered(range(4), [np.int32(2)]).path_of("3") == ["3", "[2..3]", "*"]
    numpy_tree = Hierarchy.random_ordered(range(9), max_children=i(2), seed=5)
    assert numpy_tree == Hierarchy.random_ordered(range(9), max_children=2, seed=5)
    spec = parse_spec("age", {"intervals": [i(5)], "bottom": i(3)})
    assert spec.options == {"widths": [5], "bottom": 3, "top": None} and type(spec.options["bottom"]) is int
    with pytest.raises(InvalidParameterError, match=r"max_children must be an integer >= 2, got np\.True_"):
        Hierarchy.random_ordered(range(3), max_children=np.True_)  # type: ignore[arg-type]


# ---------------------------------------------------------------- dtypes no qid may have
@pytest.mark.parametrize(
    "build",
    [
        Hierarchy.suppression,
        Hierarchy.masking,
        lambda v: Hierarchy.ordered(v, [2]),
        Hierarchy.random_ordered,
    ],
)
def test_duration_values_are_refused_naming_the_column_and_dtype(build: object) -> None:
    """A Duration has no String cast on Polars: every builder refuses it in one line naming the Series' column and
    its dtype (was Polars' raw 'casting from Duration to String not supported')."""
    wait = pl.Series("wait", [dt.timedelta(seconds=5), dt.timedelta(minutes=2)])
    with pytest.raises(
        InvalidParameterError, match=r"column 'wait' has dtype Duration\(time_unit='us'\), which has no label; cast"
    ):
        build(wait)  # type: ignore[operator]


def test_unnamed_duration_and_byte_values_are_refused_naming_the_dtype() -> None:
    """A list is no column: the refusal names the dtype alone; bytes (refused as a qid) are refused the same way, and
    from_levels names the user's column, not its own working column 'v'."""
    with pytest.raises(InvalidParameterError, match=r"^suppression: values have dtype Duration\(time_unit='us'\)"):
        Hierarchy.suppression([dt.timedelta(days=1)])
    with pytest.raises(InvalidParameterError, match=r"^suppression: column 'blob' has dtype Binary, which cannot"):
        Hierarchy.suppression(pl.Series("blob", [b"\xff"]))
    with pytest.raises(InvalidParameterError, match=r"^from_levels: column 'wait' has dtype Duration"):
        Hierarchy.from_levels(pl.Series("wait", [dt.timedelta(days=1)]), [pl.col("v")])
    with pytest.raises(InvalidParameterError, match=r"^from_levels: level 1: values have dtype Duration"):
        Hierarchy.from_levels([1, 2], [pl.duration(days=pl.col("v"))])


# ---------------------------------------------------------------- a string is one value, never its letters
BUILDERS = {
    "suppression": lambda v: Hierarchy.suppression(v),
    "intervals": lambda v: Hierarchy.intervals(v, [5]),
    "masking": lambda v: Hierarchy.masking(v),
    "dates": lambda v: Hierarchy.dates(v),
    "ordered": lambda v: Hierarchy.ordered(v, [2]),
    "from_levels": lambda v: Hierarchy.from_levels(v, [pl.col("v").str.slice(0, 1)]),
    "random hierarchy": lambda v: Hierarchy.random_ordered(v),
    "ids_of": lambda v: FIG2.ids_of(v),
}


@pytest.mark.parametrize("source", sorted(BUILDERS))
@pytest.mark.parametrize("given", ["abc", b"abc"], ids=["str", "bytes"])
def test_a_string_of_values_is_refused_naming_the_parameter(source: str, given: object) -> None:
    """mend45 (noticed by mend39): ``Hierarchy.suppression("abc")`` built a hierarchy of the letters a, b, c,
    silently (Python iterates a string by its characters); every builder's `values` refuses a str (or bytes),
    naming the builder and the parameter, and the list that was meant."""
    shown = repr(given)
    with pytest.raises(
        InvalidParameterError,
        match=rf"^{source}: values must be a sequence of values \(a list, a tuple, a range or a Polars Series\), got "
        rf"the {'string' if isinstance(given, str) else 'bytes'} {shown}; a string is one value: give \[{shown}\]",
    ):
        BUILDERS[source](given)


# ---------------------------------------------------------------- ids_of, to_rows, to_csv
def test_ids_of_agrees_with_id_of_and_refuses_unknown_labels() -> None:
    labels = ["f", "a", "*", "B", "a", "e"]
    assert FIG2.ids_of(labels).tolist() == [FIG2.id_of(v) for v in labels]
    assert FIG2.ids_of(pl.Series(labels)).dtype == np.int64 and FIG2.ids_of([]).tolist() == []
    ints = Hierarchy.intervals(range(30, 40), [5])
    assert ints.ids_of(pl.Series([31, 35])).tolist() == [ints.id_of("31"), ints.id_of("35")]
    with pytest.raises(
        ValueNotInHierarchyError,
        match=r"7 distinct values are not nodes of this hierarchy \(root '\*'; first: \['x0', 'x1', 'x2', "
        r"'x3', 'x4'\]\)",
    ):
        FIG2.ids_of(["a", *(f"x{i}" for i in range(7)), "x0"])
    with pytest.raises(ValueNotInHierarchyError, match="None is not a node"):
        FIG2.ids_of(["a", None])
    with pytest.raises(ValueNotInHierarchyError, match="'zz' is not a node of this hierarchy"):
        FIG2.id_of("zz")


def test_to_csv_round_trips(tmp_path: Path) -> None:
    for h in (
        FIG2,
        Hierarchy.intervals([5, 18, 40, 95], [5, 10], bottom=18, top=90),
        Hierarchy.ordered(range(7), [3, 2]),
    ):
        path = h.to_csv(tmp_path / "h.csv", overwrite=True)
        assert Hierarchy.from_csv(path) == h
    assert FIG2.to_rows()[-1] == ["f", "f", "*"]
    with pytest.raises(OutputExistsError, match=r"h\.csv' exists; pass overwrite=True"):  # was: replaced silently
        FIG2.to_csv(tmp_path / "h.csv")
    assert Hierarchy.from_csv(tmp_path / "h.csv") == Hierarchy.ordered(range(7), [3, 2])
