"""The label rule's SQL twin (``anon_label``, sql/_labels.sql) against the rule itself (polars_anon.labels).

Each property test draws values of one type, hands them to DuckDB, and compares the SQL labels with
``label_series`` of the same values read back through Polars (``.pl()``: the values DuckDB holds, as Polars holds
them). The regression tests are the reviewer's reproducers: each failed while SQL labelled with ``v::VARCHAR``."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies, metric_pairs, register, sql_files
from polars_anon.generalize import generalize_expr
from polars_anon.labels import label_series
from polars_anon.metrics import METRICS, prepare
from tests.metrics.test_metrics_sql import _connect, assert_agree
from tests.sql_connection import frame, registered

EXAMPLES = settings(max_examples=15, deadline=None)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    c.execute("SET TimeZone = 'UTC'")
    register(c)
    yield c
    c.close()


def _agree(con: duckdb.DuckDBPyConnection, series: pl.Series, cast: str = "") -> None:
    """anon_label of `series` in DuckDB (``x::cast`` when given) equals label_series of the values DuckDB holds."""
    con.register("__labels_in", series.alias("x").to_frame().to_arrow())
    try:
        value = f"x::{cast}" if cast else "x"
        got = frame(con, f"SELECT {value} AS v, anon_label({value}) AS label FROM __labels_in")
    finally:
        con.unregister("__labels_in")
    assert got["label"].to_list() == label_series(got["v"]).to_list(), got["v"].dtype


def _lists(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.one_of(st.none(), values), min_size=1, max_size=20)


@EXAMPLES
@given(_lists(st.floats(allow_nan=True, allow_infinity=True)))
def test_double(con: duckdb.DuckDBPyConnection, values: list) -> None:
    _agree(con, pl.Series(values, dtype=pl.Float64))


@EXAMPLES
@given(_lists(st.floats(width=32, allow_nan=True, allow_infinity=True)))
def test_float(con: duckdb.DuckDBPyConnection, values: list) -> None:
    _agree(con, pl.Series(values, dtype=pl.Float32))


def test_floats_at_every_exponent(con: duckdb.DuckDBPyConnection) -> None:
    """Where Polars switches to an exponent (1e-5 / 1e16, FLOAT 1e-6 / 1e13), the powers of two (a FLOAT's shortest
    digits) and the float extremes."""
    doubles = [m * 10.0**e for e in range(-330, 309) for m in (1.0, 1.5, -1.2345678901234567)]
    doubles += [-0.0, 0.0, math.nan, -math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308]
    _agree(con, pl.Series(doubles))
    floats = [2.0**e for e in range(-149, 128)] + [m * 10.0**e for e in range(-45, 39) for m in (1.0, 1.5, -1.2345678)]
    _agree(con, pl.Series(floats, dtype=pl.Float32))


@EXAMPLES
@given(_lists(st.integers(-(2**63), 2**63 - 1)), _lists(st.integers(0, 2**64 - 1)), _lists(st.booleans()))
def test_integers_and_booleans(con: duckdb.DuckDBPyConnection, signed: list, unsigned: list, flags: list) -> None:
    _agree(con, pl.Series(signed, dtype=pl.Int64))
    _agree(con, pl.Series(unsigned, dtype=pl.UInt64))
    _agree(con, pl.Series(flags, dtype=pl.Boolean))


@EXAMPLES
@given(_lists(st.decimals(min_value=-(10**8), max_value=10**8, places=3, allow_nan=False)), _lists(st.text()))
def test_decimals_and_strings(con: duckdb.DuckDBPyConnection, numbers: list, texts: list) -> None:
    _agree(con, pl.Series(numbers, dtype=pl.Decimal(12, 3)))
    _agree(con, pl.Series(numbers, dtype=pl.Decimal(12, 3)).cast(pl.Decimal(38, 0), strict=False))
    _agree(con, pl.Series(texts, dtype=pl.String))


@EXAMPLES
@given(_lists(st.integers(-95_000_000, 95_000_000)))
def test_dates_of_every_year(con: duckdb.DuckDBPyConnection, days: list) -> None:
    """Dates BC and past 9999 too ('-0221-09-04', '+10000-01-01'), within the years Polars can write (about
    +-262,000: beyond them its String cast panics)."""
    _agree(con, pl.Series(days, dtype=pl.Int32).cast(pl.Date))


@EXAMPLES
@given(_lists(st.integers(-(2**62), 2**62)))
def test_timestamps_of_every_unit(con: duckdb.DuckDBPyConnection, ticks: list) -> None:
    """TIMESTAMP (us), _MS, _NS, _S (read by Polars in ms) and WITH TIME ZONE in a UTC session."""
    base = pl.Series(ticks, dtype=pl.Int64)
    _agree(con, (base // 1000).cast(pl.Datetime("us")))
    _agree(con, (base // 10**6).cast(pl.Datetime("ms")))
    _agree(con, base.cast(pl.Datetime("ns")))
    _agree(con, (base // 1000).cast(pl.Datetime("us")), cast="TIMESTAMP_S")
    _agree(con, (base // 1000).cast(pl.Datetime("us", "UTC")))


@EXAMPLES
@given(_lists(st.times()), _lists(st.integers(0, 86_400 * 10**9 - 1)))
def test_times(con: duckdb.DuckDBPyConnection, times: list, nanos: list) -> None:
    """TIME (us) and TIME_NS (a Polars Time): the fraction in 0, 3, 6 or 9 digits."""
    _agree(con, pl.Series(times, dtype=pl.Time), cast="TIME")
    _agree(con, pl.Series(nanos, dtype=pl.Int64).cast(pl.Time))


def test_the_rule_on_hand_picked_values(con: duckdb.DuckDBPyConnection) -> None:
    """The labels written out by hand (the reviewer's cases and a value of each kind)."""
    rows = con.sql(
        "SELECT anon_label(-0.0::DOUBLE), anon_label('nan'::DOUBLE), anon_label(1e-7::DOUBLE), "
        "anon_label(1e-5::DOUBLE), anon_label(1e16::DOUBLE), anon_label(1122099.25::FLOAT), "
        "anon_label(TIMESTAMP '2020-01-02 03:04:05'), anon_label(TIMESTAMP_MS '2020-01-02 03:04:05.12'), "
        "anon_label(TIME '01:02:03.456'), anon_label(TIME '01:02:03'), anon_label(DATE '10000-01-01'), "
        "anon_label(TIMESTAMPTZ '2020-01-02 03:04:05+00'), anon_label(1.50::DECIMAL(5, 2)), anon_label(NULL)"
    ).fetchall()[0]
    assert rows == (
        "0.0", "NaN", "1e-7", "0.00001", "1e+16", "1122099.2", "2020-01-02 03:04:05.000000",
        "2020-01-02 03:04:05.120", "01:02:03.456", "01:02:03", "+10000-01-01", "2020-01-02 03:04:05.000000+00:00",
        "1.50", None,
    )  # one label per value asked, in order  # fmt: skip


def test_anon_label_binds_its_float_rule_once() -> None:
    """A macro's argument is copied wherever the macro uses it, and DuckDB binds every branch of a CASE: anon_label
    bound anon_label_float twice (DOUBLE, FLOAT), each copying the digits and the exponent into anon_label_digits 4
    and 8 times, 36-41 ms per anon_label, which metric_pairs writes twice per qid (0.65 of 0.97 CPU s on Adult's
    8 qids) and every labelled SQL query pays. One anon_label_float now, reading them through a lambda (11 ms). The
    labels themselves are the property tests' above."""
    text = dict(sql_files())["_labels.sql"]
    rule = text[text.index("CREATE OR REPLACE TEMP MACRO anon_label_text(") :]
    assert rule[: rule.index(";\n")].count("anon_label_float(") == 1
    floats = text[text.index("CREATE OR REPLACE TEMP MACRO anon_label_float(") :]
    assert "anon_label_digits(x.d, x.e, lo, hi)" in floats[: floats.index(";\n")]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("TIMETZ '01:02:03+05'", "column 'c' has type TIME WITH TIME ZONE, which has no label"),
        ("INTERVAL 1 DAY", "column 'c' has type INTERVAL, which has no label"),
        ("uuid()", "column 'c' has type UUID, which has no label"),
        ("[1, 2]", "column 'c' has type INTEGER[], which has no label"),
        ("TIME '24:00:00'", "column 'c': the time 24:00:00 has no label (Polars reads it as null)"),
    ],
)
def test_types_without_a_label_are_refused(con: duckdb.DuckDBPyConnection, value: str, words: str) -> None:
    with pytest.raises(duckdb.Error, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        con.execute(f"SELECT anon_label({value}, what := 'c')").fetchall()


def test_a_time_zone_other_than_utc_is_refused() -> None:
    """DuckDB's ICU and Polars disagree on zone rules (DST after 2099): a session zone other than UTC is refused."""
    c = registered()  # the next user of it finds the time zone put back
    c.execute("SET TimeZone = 'Europe/Paris'")
    with pytest.raises(duckdb.Error, match="column 'ts' has type TIMESTAMP WITH TIME ZONE in the session's time zone"):
        c.execute("SELECT anon_label(TIMESTAMPTZ '2020-01-02 03:04:05+00', what := 'ts')").fetchall()


# ------------------------------------------------------------------ the reviewer's reproducers (v::VARCHAR in SQL)

FLOATS = pl.DataFrame({"x": [-0.0, 1.5, math.nan, 1e-7, 0.0]})
H_FLOAT = pa.Hierarchy.from_dict({"*": {"small": ["0.0", "1e-7"], "other": ["1.5", "NaN"]}})


SLOW_PLAN = "anon_label in a macro made every call plan 40x slower (anon_generalize 12 -> 500 ms): not used there"


def test_anon_generalize_refuses_a_text_that_is_not_the_label(con: duckdb.DuckDBPyConnection) -> None:
    """anon_generalize matches DuckDB's text of a value (SLOW_PLAN): -0.0 ('-0.0', the label '0.0') and a timestamp
    without its fraction are refused in one line, never published under another leaf; Python maps them."""
    load_hierarchies(con, {"x": pa.Hierarchy.from_dict({"*": ["0.0", "1.5"]})})
    with pytest.raises(duckdb.Error, match="'-0.0' is not a leaf"):
        con.execute("SELECT anon_generalize('x', -0.0::DOUBLE, 0)").fetchall()
    assert con.execute("SELECT anon_generalize('x', 0.0::DOUBLE, 1), anon_generalize('x', 1.5, 0)").fetchall() == [
        ("*", "1.5")
    ]
    python = pl.DataFrame({"x": [-0.0]}).select(generalize_expr("x", pa.Hierarchy.from_dict({"*": ["0.0", "1.5"]}), 0))
    assert python["x"].to_list() == ["0.0"]
    stamps = pl.DataFrame({"t": [dt.datetime(2020, 1, 2, 3, 4, 5)]})
    load_hierarchies(con, {"t": pa.Hierarchy.suppression(stamps["t"])})
    with pytest.raises(duckdb.Error, match="'2020-01-02 03:04:05' is not a leaf"):
        con.execute("SELECT anon_generalize('t', TIMESTAMP '2020-01-02 03:04:05', 0)").fetchall()


def test_times_with_fractions_have_their_own_leaves() -> None:
    """Polars' String cast drops a time's fraction: 09:00:00.5 and 09:00:00 had one leaf, one label published."""
    times = pl.Series("t", [dt.time(9), dt.time(9, 0, 0, 500_000), dt.time(9, 0, 0, 250)])
    assert sorted(pa.Hierarchy.suppression(times).leaf_labels) == ["09:00:00", "09:00:00.000250", "09:00:00.500"]
    frame = times.to_frame().with_row_index("rid")
    out = pa.anonymize(frame, hierarchies={"t": pa.Hierarchy.suppression(times)}, k=1, insensitive="rid").collect()
    assert out["t"].to_list() == ["09:00:00", "09:00:00.500", "09:00:00.000250"]


def test_metrics_read_negative_zero_and_nan_as_python_does() -> None:
    """metric_pairs (Python) reads -0.0 as the leaf '0.0' and NaN as 'NaN', and the sensitive -0.0 as one value with
    0.0: every metric of its pairs as pa.metrics' prepare computes it. The direct macros (anon_metric_pairs) read
    DuckDB's text and refuse such a value in one line: anon_label in them made every call plan 6x slower (60-70 ->
    410-460 ms on a 12-row table)."""
    original = FLOATS.with_columns(s=pl.Series([-0.0, 0.0, 1.0, 1.0, 0.0]))
    published = original.select(generalize_expr("x", H_FLOAT, 1), "s")
    con = _connect(original, published, {"x": H_FLOAT}, registered())
    data = prepare(original, published, ["x"], {"x": H_FLOAT}, sensitive="s")
    metric_pairs(con, "o", "a", ["x"], sensitive="s", name="pr")
    for name, metric in METRICS.items():  # the direct macros (anon_metric_pairs each) for two, to keep it short
        want = metric(data).collect()
        assert_agree(frame(con, f"FROM {metric.sql}_of('pr', ['x'])"), want, name)
    with pytest.raises(duckdb.Error, match="column 'x' in the original table: value 'nan' is not a leaf"):
        con.sql("FROM anon_ncp('o', 'a', ['x'], sensitive := 's')").pl()


def test_encode_classes_refuses_a_float_text_that_is_not_its_label() -> None:
    """anon_encode_classes reads DuckDB's text of a qid (anon_label there made every call plan several times
    slower): a float qid whose text is not its label (NaN: 'nan', the label 'NaN') is refused in one line, not
    encoded under another leaf."""
    original = FLOATS.select("x")
    con = registered()
    load_hierarchies(con, {"x": H_FLOAT})
    con.register("pub", original.to_arrow())
    con.register("orig", original.to_arrow())
    with pytest.raises(duckdb.Error, match="column 'x' of the published table: 'nan' is not a node of its hierarchy"):
        con.sql("FROM anon_encode_classes('pub', ['x'], representation := 'fillparent', orig := 'orig')").pl()


def test_hierarchical_closeness_refuses_a_float_text_that_is_not_a_leaf() -> None:
    """anon_t_closeness(distance := 'hierarchical') matches DuckDB's text of a value (SLOW_PLAN): a DOUBLE sensitive
    value whose text is not its label (NaN: 'nan') is refused in one line naming the column."""
    frame = pl.DataFrame({"q": ["a", "a", "b", "b", "b"], "s": [-0.0, 1.5, math.nan, 1e-7, 0.0]})
    con = registered()
    load_hierarchies(con, {"s": H_FLOAT})
    con.register("t", frame.to_arrow())
    with pytest.raises(duckdb.Error, match="'s'.*is not a leaf"):
        con.execute("FROM anon_t_closeness('t', ['q'], 's', t := 0.3, distance := 'hierarchical')").fetchall()
