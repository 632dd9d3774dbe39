"""The SQL macros under a user's DuckDB session settings that change arithmetic or ordering.

hunt46: under ``SET integer_division = true`` the macros divided integer counts with ``/`` and dropped the
fraction (t-closeness 0.0 and "satisfied" for every class, l-diversity entropy NaN, every risk 0, δ-disclosure and
β-likeness DuckDB's raw division by zero); under ``SET default_order = 'desc'`` ordered t-closeness ranked the values
backwards. Each macro must give, under each such setting, what it gives on a connection left as DuckDB makes it.
A ``default_collation`` other than the byte-wise one is refused by name (the macros compare values as Python does).
"""

from __future__ import annotations

import math

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies, metric_pairs, register
from polars_anon.metrics import METRICS
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

SETTINGS = [
    "integer_division = true",
    "default_order = 'desc'",
    "default_null_order = 'nulls_first'",
    "ieee_floating_point_ops = false",
]
"""Session settings that change what ``/``, an ORDER BY without a direction or null order, and ``ln(0)`` mean (without
IEEE semantics DuckDB raises on ``ln(0)`` even in a row a FILTER leaves out: entropy l-diversity and δ-disclosure)."""

HABITAT = pl.Series("habitat", ["land", "land", "land", "sea", "sea", "land"])
SCORE = pl.Series("score", [1, 1, None, 5, 9, None])
QIDS = list(ANIMAL_HIERARCHIES)

QUERIES = [
    "SELECT class.gender, size, measure, satisfied FROM anon_l_diversity('o', ['gender'], 'habitat', l := 2)",
    "SELECT class.gender, size, measure, satisfied FROM anon_l_diversity('o', ['gender'], 'habitat', l := 1.5, "
    "variant := 'entropy')",
    "SELECT class.gender, size, measure, satisfied FROM anon_l_diversity('o', ['gender'], 'habitat', l := 2, "
    "variant := 'recursive', c := 2)",
    "SELECT class.gender, size, measure, satisfied FROM anon_t_closeness('o', ['gender'], 'habitat', t := 0.2)",
    "SELECT class.gender, size, measure, satisfied FROM anon_t_closeness('o', ['gender'], 'score', t := 0.2, "
    "distance := 'ordered', sensitive_null := 'value')",
    "SELECT class.gender, size, measure, satisfied FROM anon_t_closeness('o', ['gender'], 'race', t := 0.2, "
    "distance := 'hierarchical')",
    "SELECT class.gender, size, measure, satisfied FROM anon_delta_disclosure('o', ['gender'], 'habitat', "
    "delta := 1.0)",
    "SELECT class.gender, size, measure, satisfied FROM anon_beta_likeness('o', ['gender'], 'habitat', beta := 1.0)",
    "SELECT class.gender, size, measure, satisfied FROM anon_beta_likeness('o', ['gender'], 'habitat', beta := 1.0, "
    "variant := 'enhanced')",
    "FROM anon_risk('o', ['gender', 'race'], threshold := 0.4)",
    "FROM anon_risk('a', ['gender', 'race'])",
    "FROM anon_k_summary('a', ['gender', 'race'], k := 2)",
    "FROM anon_class_sizes('a', ['gender', 'race'], k := 2)",
    "FROM anon_frequencies('o', ['gender'])",
    "FROM anon_global_risk('o', ['gender', 'habitat'])",
    "FROM anon_level_map('race', 1)",
    *(
        f"FROM anon_encode_classes('a', ['gender', 'race'], representation := '{r}', orig := 'o')"
        for r in ("proportional", "oneclass", "fillparent", "fillchild")
    ),
    "FROM anon_metric('nllm', 'o', 'a', ['gender', 'race'], key := 'id', k := 2)",
    *(f"FROM {METRICS[name].sql}_of('pr', ['gender', 'race'], k := 2)" for name in sorted(METRICS)),
]
"""Every macro that divides or orders: the privacy models, risk, classes, SDC frequencies, encodings, and every
metric (over the pairs table ``metric_pairs`` makes, as the fast route does; one through ``anon_metric``)."""


def _connect(settings: list[str]) -> duckdb.DuckDBPyConnection:
    """A connection with `settings` made before the macros are registered and the tables loaded."""
    con = duckdb.connect()
    for setting in settings:
        con.execute(f"SET {setting}")
    register(con)
    load_hierarchies(con, ANIMAL_HIERARCHIES)
    con.register("o_frame", TABLE_I.with_columns(HABITAT, SCORE).to_arrow())
    con.register("a_frame", TABLE_IB.with_columns(HABITAT, SCORE).to_arrow())
    con.execute("CREATE TABLE o AS FROM o_frame")
    con.execute("CREATE TABLE a AS FROM a_frame")
    metric_pairs(con, "o", "a", QIDS, key="id", sensitive="habitat", name="pr")
    return con


def _rows(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple]:
    """The query's rows in the order the macro gives them, or the error's words (``execute`` binds the query once;
    ``sql`` bound it twice, to type the relation and to run it: a third of these tests' time)."""
    try:
        return con.execute(query).fetchall()
    except duckdb.Error as exc:
        return [("error", str(exc))]


def _same(got: object, want: object) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        return got == pytest.approx(want, abs=1e-12) or (math.isnan(got) and math.isnan(want)) or got == want
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    return got == want


def test_every_macro_gives_under_the_settings_what_it_gives_by_default() -> None:
    """All of SETTINGS on one connection (each alone broke 26 and 48 of these queries before the fix)."""
    default, hostile = _connect([]), _connect(SETTINGS)
    wrong = [q for q in QUERIES if not _same(_rows(hostile, q), _rows(default, q))]
    assert not wrong, wrong


def test_the_defaults_are_the_python_figures() -> None:
    """The comparison above is against the right figures: the defaults agree with Python on the hunt's cases."""
    con = _connect([])
    df = TABLE_I.with_columns(HABITAT, SCORE)
    want = pa.risk(df, ["gender", "race"], threshold=0.4)["prosecutor"]
    row = con.sql("FROM anon_risk('o', ['gender', 'race'], threshold := 0.4)").pl().row(0, named=True)
    assert row["highest"] == pytest.approx(want["highest"]) and row["average"] == pytest.approx(want["average"])


@pytest.mark.parametrize("collation", ["nocase", "noaccent", "nocase.noaccent"])
def test_a_default_collation_other_than_bytes_is_refused_naming_the_setting(collation: str) -> None:
    """hunt46: under nocase the macros merged 'F' and 'f' into one class (k-anonymous, risk 0.5 where Python says
    1.0). The macros compare values byte-wise, as Python does, or refuse."""
    con = duckdb.connect()
    register(con)
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('F', 'x'), ('f', 'y'), ('M', 'x'), ('m', 'y')) v(sex, s)")
    con.execute(f"SET default_collation = '{collation}'")
    for query in (
        "FROM anon_k_summary('t', ['sex'], k := 2)",
        "FROM anon_risk('t', ['sex'])",
        "FROM anon_l_diversity('t', ['sex'], 's', l := 2)",
    ):
        with pytest.raises(duckdb.Error, match=f"default_collation is '{collation}'.*SET default_collation = ''"):
            con.sql(query).fetchall()
    con.execute("SET default_collation = ''")
    assert con.sql("SELECT k_anonymous FROM anon_k_summary('t', ['sex'], k := 2)").fetchall() == [(False,)]
