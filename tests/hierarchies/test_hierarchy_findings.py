"""Hierarchy findings of hunt39: each test fails on bee58f2; expected values are worked out by hand."""

from __future__ import annotations

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


def test_a_job_is_told_to_type_a_leading_zero_column_in_its_schema(tmp_path: Path, capsys) -> None:
    """A CSV column written 05, 07, 15 is read as String (the leading-zero rule, io.LEADING_ZERO); with an
    intervals hierarchy a job was told to cast it in Python (pl.col(...).cast(pl.Int64)), which a job cannot do
    (mend34): its way out is the job file's schema, and with it the job runs; a Python call keeps the cast."""
    from polars_anon import cli

    (tmp_path / "d.csv").write_text("age,sex\n05,f\n07,f\n15,m\n05,m\n07,f\n15,m\n")
    job = 'input = "d.csv"\noutput = "o.parquet"\nk = 2\n[qids.age]\nhierarchy = { intervals = [10] }\n'
    (tmp_path / "job.toml").write_text(job)
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 2
    said = capsys.readouterr().err.strip()
    assert said.endswith(
        "qid 'age': intervals: value '05' is not written as the integer 5 is, so the leaf '5' would not be the "
        'column\'s value: interval hierarchies need plain integers; set schema = { age = "Int64" } in the job file'
    )
    assert "pl.col" not in said and not (tmp_path / "o.parquet").exists()
    (tmp_path / "job.toml").write_text('schema = { age = "Int64" }\n' + job)
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--json"]) == 0
    assert pl.read_parquet(tmp_path / "o.parquet")["age"].to_list() == ["5", "7", "15", "5", "7", "15"]  # k = 2 as is
    with pytest.raises(InvalidParameterError, match=r"plain integers; cast the column: pl\.col\(\.\.\.\)\.cast\(pl"):
        Hierarchy.intervals(pl.Series(["05", "07"]), [10])
    with pytest.raises(
        InvalidParameterError, match=r"whole numbers; cast the column: pl\.col\(\.\.\.\)\.cast\(pl\.Int64\)$"
    ):
        Hierarchy.intervals(pl.Series([20.0, 31.0]), [10])  # a float column: the same cast, in Python's words


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


@pytest.mark.parametrize(
    "build",
    [
        lambda: Hierarchy.suppression(pl.Series("c", ["", "a"])),
        lambda: Hierarchy.ordered(pl.Series("c", ["", "a", "b"]), [2]),
        lambda: Hierarchy.from_levels(pl.Series("c", ["", "ab"]), [pl.col("v").str.slice(0, 1)]),
    ],
    ids=["suppression", "ordered", "from_levels"],
)
def test_a_builder_names_an_empty_string_value_and_the_way_out(build: object) -> None:
    """mend49 (hunt47 f_builder_empty): a builder given '' said "row 1 has an empty field: ['', '*']", a hierarchy
    file's words (no row, no field was given); it now says the value is the empty string and how to relabel it, as
    from_dict does."""
    with pytest.raises(HierarchyError, match=r"a value is the empty string '', which .*relabel it \(pl.col\(\.\.\.\)"):
        build()  # type: ignore[operator]


def test_a_value_equal_to_the_root_names_the_root_option() -> None:
    """mend49 (hunt47): suppression of data holding a literal '*' said "change the level labels", which a
    suppression user cannot do: the message names the root option that can."""
    with pytest.raises(HierarchyError, match=r"\['\*'\].*is the root label: choose another root, e.g. root="):
        Hierarchy.suppression(["*", "a"])
    assert Hierarchy.suppression(["*", "a"], root="(any)").root == "(any)"


def test_a_builder_refuses_a_date_polars_cannot_write_naming_the_column() -> None:
    """mend49 (hunt47 t21): Hierarchy.suppression of a Date column holding DuckDB's 'infinity' (day 2147483647)
    ended in pyo3_runtime.PanicException (not an Exception) at the String cast; refused naming builder and column."""
    days = pl.Series("c", [2147483647, 18262], dtype=pl.Int32).cast(pl.Date)
    with pytest.raises(InvalidParameterError, match=r"suppression: column 'c': 1 values are beyond the days Polars"):
        Hierarchy.suppression(days)


def _beyond_text_roads() -> dict[str, object]:
    """The roads that turned a qid's values into labels without refusing a date Polars cannot write (mend57): each a
    function of a frame whose Date column ``d`` holds one."""
    import duckdb

    import polars_anon as pa
    import polars_anon.duckdb as pad
    from polars_anon.distance import encode_records
    from polars_anon.encode import leaf_frequencies
    from polars_anon.transformers import HierarchyEncoder

    h = Hierarchy.suppression(["2020-01-01"])

    def planner(df: pl.DataFrame) -> None:
        con = duckdb.connect()
        con.register("t", df.to_arrow())
        con.execute("CREATE TABLE h AS FROM t")
        hs = {"s": Hierarchy.suppression(["F"])}
        pad.anonymize("h", qids=["d", "s"], hierarchies=hs, k=3, method="mondrian", connection=con, driver_tuples=1)

    return {
        "generalize": lambda df: df.select(pl.col("d").anon.generalize(h, 1)),
        "distance": lambda df: encode_records(df, [], ["d"]),
        "mondrian-planner": planner,
        "encoder-flat": lambda df: HierarchyEncoder().fit(df.select("d")),
        "encoder": lambda df: HierarchyEncoder({"d": h}, "fillparent").fit_transform(df.select("d")),
        "encode": lambda df: pa.encode(df.lazy(), {"d": h}, "fillparent").collect(),
        # mend59: the lazy labels of encode (and map_to_leaves, leaf_frequencies) without validate panicked at collect
        "encode-unvalidated": lambda df: pa.encode(df.lazy(), {"d": h}, "fillparent", validate=False).collect(),
        "encode-unvalidated-original": lambda df: pa.encode(
            df.lazy(), {"d": h}, "proportional", original=df.lazy(), validate=False
        ).collect(),
        "encode-unvalidated-statistical": lambda df: pa.encode(
            df.lazy(), {"d": h}, "statistical", original=df.lazy(), validate=False
        ).collect(),
        "encode-unvalidated-partition": lambda df: pa.encode(
            df.lazy(), {"d": h}, "oneclass", class_col="s", validate=False
        ).collect(),
        "map_to_leaves": lambda df: pa.map_to_leaves(df.lazy(), {"d": h}, "random").collect(),
        "map_to_leaves-unvalidated": lambda df: pa.map_to_leaves(
            df.lazy(), {"d": h}, "random", validate=False
        ).collect(),
        "leaf_frequencies": lambda df: leaf_frequencies(df.lazy(), {"d": h}),
    }


@pytest.mark.parametrize("road", sorted(_beyond_text_roads()))
def test_every_road_refuses_a_date_polars_cannot_write_naming_the_column(road: str) -> None:
    """mend57: generalize, the distance's records, the Mondrian planner (DuckDB, driver_tuples=1), the scikit-learn
    transformer and encode turned a Date holding DuckDB's 'infinity' (day 2147483647) into text unchecked and ended
    in pyo3_runtime.PanicException (not an Exception); the refusal now sits in labels.label_series, which they all
    call, and names the column."""
    days = pl.Series("d", [2147483647, 18262, 18262, 18262], dtype=pl.Int32).cast(pl.Date)
    df = pl.DataFrame({"d": days, "s": ["F"] * 4})
    with pytest.raises(InvalidParameterError, match=r"column 'd': 1 values are beyond the days Polars can write"):
        _beyond_text_roads()[road](df)  # type: ignore[operator]


@pytest.mark.parametrize("spec", ['"suppress"', "{ mask = 1 }"])
def test_a_job_names_an_empty_string_value_and_the_way_out_in_its_keys(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend52: a job whose qid holds '' was told to relabel it with pl.col(...).replace(...), a call a job file user
    has none of: the job's words are the input file and its keys (a CSV input reads '' as missing with null_values,
    then null = "suppress" publishes it at the root, which works); a Python builder keeps the Python way out."""
    from polars_anon.cli import main

    frame = pl.DataFrame({"z": ["a", "", "b", "a", "", "b"], "g": list("FMFMFM")})
    frame.write_csv(tmp_path / "in.csv")  # '' written as a quoted empty field: the empty string
    job = tmp_path / "job.toml"
    body = f'output = "out.parquet"\nk = 2\n[qids.z]\nhierarchy = {spec}\n[qids.g]\nhierarchy = "suppress"\n'
    job.write_text('input = "in.csv"\n' + body)
    assert main(["anonymize", str(job), "-q"]) == 2
    err = capsys.readouterr().err
    assert "qid 'z'" in err and "a value is the empty string ''" in err and "pl.col" not in err
    assert 'set null_values = [""] in the job file' in err and 'set null = "suppress" in the job file' in err
    job.write_text('input = "in.csv"\nnull_values = [""]\nnull = "suppress"\n' + body)
    assert main(["anonymize", str(job), "-q"]) == 0  # the way out the message gives
    assert pl.read_parquet(tmp_path / "out.parquet").height == 6
    with pytest.raises(HierarchyError, match=r"relabel it \(pl.col\(\.\.\.\)\.replace\('', '\(empty\)'\)\)"):
        Hierarchy.suppression(frame["z"])  # Python keeps its words


def test_an_empty_string_value_in_the_cli_and_python_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review35 #3: build_spec always gave the job file's way out, so `polars-anon encode` without --job and a
    Python `hierarchy_from_spec` call were told to edit "the job file", which they have none of: each road now gets
    its own words (the file the command reads; a Python relabelling)."""
    from polars_anon.cli import main
    from polars_anon.job import hierarchy_from_spec

    pl.DataFrame({"z": ["a", ""], "id": [0, 1]}).write_csv(tmp_path / "t.csv")
    t = str(tmp_path / "t.csv")
    argv = ["encode", t, "--original", t, "--hierarchy", "z=suppress", "--encoding", "proportional"]
    assert main([*argv, "--output", str(tmp_path / "e.parquet")]) == 2
    err = capsys.readouterr().err
    assert "qid 'z'" in err and "relabel it in the file the command reads" in err and "job file" not in err
    with pytest.raises(HierarchyError, match=r"qid 'z'.*relabel it \(pl.col\('z'\)\.replace\('', '\(empty\)'\)\)"):
        hierarchy_from_spec("z", "suppress", ["a", ""])


def test_needs_a_cast_and_short_codes_in_the_cli_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mend58: the CLI without --job was told its casts and widths in a job file's keys ('set schema = { zip =
    "String" } in the job file', 'give { width = 5 } in its hierarchy table'; failing before): the file it reads, a
    job file it may give, and its --hierarchy spec."""
    from polars_anon.cli import main

    pl.DataFrame({"zip": [8628, 12345] * 2, "age": [20.0, 30.0] * 2, "id": [0, 1, 2, 3]}).write_csv(tmp_path / "t.csv")
    t = str(tmp_path / "t.csv")
    argv = ["encode", t, "--original", t, "--encoding", "proportional", "--output", str(tmp_path / "e.parquet")]
    assert main([*argv, "--hierarchy", "zip=mask:2"]) == 2
    err = capsys.readouterr().err
    assert "read the column as text: store the column as String in the file the command reads" in err
    assert "(--hierarchy 'zip={ mask = N, width = 5 }')" in err and "in the job file" not in err
    assert "hierarchy table" not in err and err.count("\n") == 1
    assert main([*argv, "--hierarchy", "age=intervals:5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polars-anon: error: qid 'age': intervals: value 20.0 is not an integer")
    assert "store the column as Int64 in the file the command reads" in err and "in the job file" not in err
