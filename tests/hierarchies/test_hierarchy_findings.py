"""Hierarchy findings of hunt39: each test fails on bee58f2; expected values are worked out by hand."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from polars_anon import Hierarchy, HierarchyError, InvalidParameterError
from polars_anon.hierarchy_spec import build_spec, parse_spec


# ---------------------------------------------------------------- 1. suppression does not depend on the input order
def test_suppression_leaves_are_sorted_whatever_the_input_order() -> None:
    a = Hierarchy.suppression(pl.Series(["M", "é", "F", "M"]))
    b = Hierarchy.suppression(["é", "F", "M"])
    assert a.leaf_labels == ["F", "M", "é"]  # code point order, as a job file reads the column
    assert a == b
    assert Hierarchy.suppression([10, 2]).leaf_labels == ["2", "10"]  # numbers in number order


def test_documented_recipe_gives_the_same_table_in_two_processes() -> None:
    script = (
        "import hashlib, random, polars as pl, polars_anon as pa\n"
        "rng = random.Random(3)\n"
        "df = pl.DataFrame({'id': range(60), 'sex': [rng.choice(['F', 'M', 'é', 'q', 'ab']) for _ in range(60)]})\n"
        "H = {'sex': pa.Hierarchy.suppression(df['sex'].unique())}\n"
        "t = pa.anonymize(df, hierarchies=H, k=5, insensitive='id').collect()\n"
        "print(hashlib.sha256(t.write_csv().encode()).hexdigest(), H['sex'].leaf_labels)\n"
    )
    runs = {
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        for _ in range(4)
    }
    assert len(runs) == 1, runs


# ---------------------------------------------------------------- 2. masking masks every value at every level
def test_a_value_shorter_than_the_mask_is_fully_masked_at_every_level() -> None:
    h = Hierarchy.masking(["a", "bc"])
    assert dict(h.level_map(1).rows())["a"] == "*" and dict(h.level_map(1).rows())["bc"] == "b*"
    assert h.to_rows() == [["a", "*", "**"], ["bc", "b*", "**"]]  # by hand: '**' masks both, and is the root


def test_job_mask_spec_masks_a_one_digit_value_at_level_one() -> None:
    values = pl.Series(["9", "33101", "33102", "4711"]).sort()
    h = build_spec("zip", parse_spec("zip", {"mask": 5}), values)
    for level in range(1, h.height):
        published = dict(h.level_map(level).rows())
        for v in values:  # level L masks min(L, len) characters of every value
            assert published[v].endswith("*" * min(level, len(v))), (level, v, published[v])
    assert h.path_of("9") == ["9", "*", "**", "***", "****", "*****"]


def test_masking_with_fewer_digits_than_a_short_value_needs_a_root_of_its_own() -> None:
    h = Hierarchy.masking(["a", "bcd"], 1)  # level 1: '*' (a fully masked) and 'bc*'; the root above is '**'
    assert h.to_rows() == [["a", "*", "**"], ["bcd", "bc*", "**"]]


# ---------------------------------------------------------------- 3. level L of rows is column L
def _brute_level(rows: list[list[str]], h: Hierarchy) -> list[tuple[str, int, str, str]]:
    """(leaf, level, published, column) wherever generalizing to a level does not publish the row's column."""
    return [
        (row[0], level, h.label_of(h.generalize_ids(level)[h.id_of(row[0])]), row[level])
        for row in rows
        for level in range(h.height)
        if h.label_of(h.generalize_ids(level)[h.id_of(row[0])]) != row[level]
    ]


def test_level_l_of_rows_is_column_l() -> None:
    rows = [["a", "A", "A", "*"], ["b", "B", "B", "*"], ["c", "C", "BC", "*"]]
    h = Hierarchy.from_rows(rows)
    assert h.height == 4 and _brute_level(rows, h) == []
    assert [h.label_of(i) for i in h.generalize_ids(2)[[h.id_of("a"), h.id_of("b")]]] == ["A", "B"]
    rows = [["a", "A", "A", "*"], ["b", "B", "B", "*"]]  # levels 1 and 2 publish the same: level 3 is the root
    assert Hierarchy.from_rows(rows).height == 4 and _brute_level(rows, Hierarchy.from_rows(rows)) == []


def test_a_label_starting_in_two_columns_is_published_from_the_first(tmp_path: Path) -> None:
    """Never less general than the column: '*' starts in column 1 of row 1, so level 1 publishes '*' for b too."""
    (tmp_path / "h.csv").write_text("a;*;*\nb;B;*\n")
    h = Hierarchy.from_csv(tmp_path / "h.csv")
    assert h.height == 2 and dict(h.level_map(1).rows())["a"] == "*" == dict(h.level_map(1).rows())["b"]
    age = [["72", "[72;76]", "[72;81]", "[17;87]", "*"], ["82", "[82;86]", "[17;87]", "[17;87]", "*"]]
    h = Hierarchy.from_rows(age)  # ARX's adult age file's shape: '[17;87]' in column 3, and 2 of another row
    published = {lv: [h.label_of(i) for i in h.generalize_ids(lv)[[h.id_of("72"), h.id_of("82")]]] for lv in range(5)}
    assert published == {
        0: ["72", "82"],
        1: ["[72;76]", "[82;86]"],
        2: ["[17;87]", "[17;87]"],  # ARX: '[72;81]' for 72; never less general than a row's column
        3: ["[17;87]", "[17;87]"],
        4: ["*", "*"],
    }


def test_a_group_before_the_group_below_it_is_refused_naming_the_rows() -> None:
    with pytest.raises(
        HierarchyError, match=r"rows: label 'P' first appears in column 1 \(row 2\), before the label 'C'"
    ):
        Hierarchy.from_rows([["a", "x", "C", "P", "*"], ["b", "P", "P", "P", "*"]])


def _bands(values: list[int], widths: list[int], bottom: int | None, top: int | None) -> list[list[str]]:
    """Interval rows by hand: each width's aligned band, clipped to [bottom, top - 1]; coded groups below/above."""
    out = []
    for v in sorted(set(values)):
        if bottom is not None and v < bottom:
            cells = [f"<{bottom}"] * len(widths)
        elif top is not None and v >= top:
            cells = [f">={top}"] * len(widths)
        else:
            cells = []
            for w in widths:
                lo, hi = v - v % w, v - v % w + w - 1
                cells.append(f"{lo if bottom is None else max(lo, bottom)}-{hi if top is None else min(hi, top - 1)}")
        out.append([str(v), *cells, "*"])
    return out


def test_clipped_intervals_publish_each_level_s_own_band() -> None:
    h = Hierarchy.intervals([-10], [3, 9, 27], bottom=-10, top=14)  # hunt39's shrunk case
    assert [h.label_of(h.generalize_ids(lv)[h.id_of("-10")]) for lv in range(4)] == [
        "-10",
        "-10--10",
        "-10--10",
        "-10--1",
    ]
    rng = random.Random(39)
    for _ in range(400):
        values = [rng.randint(-30, 30) for _ in range(rng.randint(1, 8))]
        widths = [rng.choice([1, 2, 3, 5])]
        for _ in range(rng.randint(0, 2)):
            widths.append(widths[-1] * rng.choice([2, 3]))
        bottom, top = rng.choice([None, rng.randint(-30, 0)]), rng.choice([None, rng.randint(1, 30)])
        rows = _bands(values, widths, bottom, top)
        h = Hierarchy.intervals(values, widths, bottom=bottom, top=top)
        assert _brute_level(rows, h) == [], (values, widths, bottom, top)
        assert h.height == max(len(r) - r[::-1].index("*") for r in rows)  # the root's column + 1


# ---------------------------------------------------------------- 4. two runs with one label are refused
def test_random_ordered_refuses_two_runs_with_one_label() -> None:
    with pytest.raises(HierarchyError, match=r"runs 'a'..'b..c' and 'a..b'..'c' are both labelled '\[a..b..c\]'"):
        Hierarchy.random_ordered(["a", "b..c", "a..b", "c"], seed=4)


def test_ordered_collision_message_advises_a_format_that_tells_groups_apart() -> None:
    values = ["a", "b..c", "a..b", "c"]
    with pytest.raises(HierarchyError, match=r"names two different groups.*separator no value holds") as caught:
        Hierarchy.ordered(values, [2], order=values)  # '[a..b..c]' twice with the default format
    assert "{first} and {last}" not in str(caught.value)


# ---------------------------------------------------------------- 5. label formats: the documented fields, sane specs
@pytest.mark.parametrize("label", ["{first.upper}", "{first:>9999999999}", "{first[0]}", "{first:{count}}", "{}"])
def test_ordered_refuses_a_label_format_beyond_its_fields(label: str) -> None:
    with pytest.raises(InvalidParameterError, match=r"label .* is not a valid format .*placeholders are \{first\}"):
        Hierarchy.ordered(range(4), [2], label=label)
    with pytest.raises(InvalidParameterError, match=r"qid 'age': hierarchy key 'label' is invalid"):
        parse_spec("age", {"ordered": [2], "label": label})


def test_ordered_keeps_short_format_specs() -> None:
    assert Hierarchy.ordered(range(1, 5), [2], label="{first:>3}-{count:02d}").path_of("3") == ["3", "  3-02", "*"]


# ---------------------------------------------------------------- 6. files: round-trip or refuse, naming the file
def test_to_csv_round_trips_carriage_returns_and_a_leading_bom(tmp_path: Path) -> None:
    for leaves in (["x;\ry", "a\rb", "p\nq", 'a"c'], ["\ufeffb", "a"]):
        h = Hierarchy.from_dict({"*": leaves})
        back = Hierarchy.from_csv(h.to_csv(tmp_path / f"{len(leaves)}.csv"))
        assert back == h and back.leaf_labels == leaves


def test_an_unterminated_quote_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "h.csv").write_text('a;"b;*\nc;d;*\nd;d;*\n')
    with pytest.raises(HierarchyError, match=r"h\.csv', line \d: unexpected end of data"):
        Hierarchy.from_csv(tmp_path / "h.csv")


def test_an_empty_file_and_two_roots_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_text("\n\n")
    with pytest.raises(HierarchyError, match=r"empty\.csv: no rows"):
        Hierarchy.from_csv(tmp_path / "empty.csv")
    (tmp_path / "roots.csv").write_text("a;*\nb;+\n")
    with pytest.raises(HierarchyError, match=r"roots\.csv: a hierarchy has exactly one root, found 2"):
        Hierarchy.from_csv(tmp_path / "roots.csv")


# ---------------------------------------------------------------- 7. intervals: String values written as their integer
@pytest.mark.parametrize("value", ["007", " 7", "+7", "7_000", "١٢", "-0"])
def test_intervals_refuse_a_string_value_not_written_as_its_integer(value: str) -> None:
    with pytest.raises(
        InvalidParameterError, match=rf"intervals: value '{re.escape(value)}' is not written as the integer"
    ):
        Hierarchy.intervals(pl.Series(["12", value]), [5])
    with pytest.raises(
        InvalidParameterError, match=rf"qid 'age': intervals: value '{re.escape(value)}' is not written"
    ):
        build_spec("age", parse_spec("age", {"intervals": [5]}), pl.Series(["12", value]))


def test_intervals_keep_string_values_written_as_integers() -> None:
    assert Hierarchy.intervals(pl.Series(["-3", "12"]), [5]).to_rows() == [["-3", "-5--1", "*"], ["12", "10-14", "*"]]


# ---------------------------------------------------------------- 9. dates: beyond Polars' days, and years after 9999
def test_dates_refuse_days_polars_cannot_write() -> None:
    for days in (95_026_237, -96_465_293, 2**31 - 1):  # the day after +262142-12-31, before -262143-01-01, the last
        with pytest.raises(InvalidParameterError, match=r"dates: 1 values are beyond the days Polars can write"):
            Hierarchy.dates(pl.Series([days], dtype=pl.Int32).cast(pl.Date))
    late = pl.Series([2**62], dtype=pl.Int64).cast(pl.Datetime("ms"))
    with pytest.raises(InvalidParameterError, match=r"beyond the days Polars can write"):
        Hierarchy.dates(late)


def test_years_after_9999_are_written_one_way_in_every_label() -> None:
    day = pl.Series([2_932_897], dtype=pl.Int32).cast(pl.Date)  # 10000-01-01, which Polars writes '+10000-01-01'
    assert Hierarchy.dates(day).to_rows() == [
        ["+10000-01-01", "+10000-01", "+10000-Q1", "+10000", "+10000-+10004", "+10000-+10009", "*"]
    ]
