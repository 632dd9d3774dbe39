"""The DuckDB road on a user's connection whose session settings change comparison, ordering or arithmetic.

hunt46: under ``SET default_collation = 'nocase'`` the road merged 'F' and 'f' into one class and published 'f' as
'F' (k only), or failed with NumPy's IndexError (with a privacy model). The road's rows, order and report must be
those of the Polars road whatever the session says, and the user's settings stay as they were.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import duckdb as pad

SEX = pa.Hierarchy.suppression(["F", "f", "M", "m"])
AGE = pa.Hierarchy.intervals(pl.Series([30, 31, 32, 33]), [2, 4])
H = {"sex": SEX, "age": AGE}
PEOPLE = pl.DataFrame(
    {
        "id": list(range(12)),
        "sex": ["F", "f", "F", "f", "M", "m", "M", "m", "F", "f", "M", "m"],
        "age": [30, 30, 31, 31, 32, 32, 33, 33, 30, 30, 32, 32],
        "s": ["x", "y", "x", "y", None, "y", "x", "z", "z", "x", "y", "z"],
    }
)

SETTINGS = {
    "default_collation": "nocase",
    "default_order": "desc",
    "default_null_order": "nulls_first",
    "integer_division": "true",
}
"""Each read by the road's SQL if it did not say what it means (a collation, a direction, a null order, '/')."""

RUNS = [
    {"k": 2},
    {"k": 2, "privacy": [pa.LDiversity("s", l=2, sensitive_null="value")]},
    {"k": 2, "privacy": [pa.TCloseness("s", t=0.5, distance="ordered", sensitive_null="value")]},
    {"k": 3, "method": "mondrian"},
]


def _settings(con: duckdb.DuckDBPyConnection) -> list:
    return con.execute("SELECT " + ", ".join(f"current_setting('{name}')" for name in SETTINGS)).fetchall()


@pytest.mark.parametrize("name", list(SETTINGS))
@pytest.mark.parametrize("run", RUNS, ids=["k", "l-diversity", "t-closeness ordered", "mondrian"])
def test_the_road_publishes_the_polars_rows_whatever_the_session_says(name: str, run: dict) -> None:
    expected = pa.anonymize(PEOPLE, hierarchies=H, insensitive="id", **run)
    want = expected.collect()
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT * FROM PEOPLE")
    con.execute(f"SET {name} = '{SETTINGS[name]}'")
    before = _settings(con)
    got = pad.anonymize("people", connection=con, hierarchies=H, insensitive="id", **run)
    assert got.collect().equals(want)  # the rows, their values ('f' stays 'f') and their order
    assert got.report["min_class_size"] == expected.report["min_class_size"]
    assert got.report["n_classes"] == expected.report["n_classes"]
    assert got.report["generalization"] == expected.report["generalization"]
    assert _settings(con) == before


def test_a_nocase_column_is_read_byte_wise() -> None:
    """A column declared ``COLLATE NOCASE`` in the user's table: the road compares its bytes all the same."""
    con = duckdb.connect()
    con.execute("CREATE TABLE people (id BIGINT, sex VARCHAR COLLATE NOCASE, age BIGINT, s VARCHAR)")
    con.register("people_frame", PEOPLE.to_arrow())
    con.execute("INSERT INTO people SELECT * FROM people_frame")
    assert con.sql("SELECT count(DISTINCT sex) FROM people").fetchall() == [(2,)]  # DuckDB reads 'F' and 'f' as one
    got = pad.anonymize("people", connection=con, hierarchies=H, k=2, insensitive="id").collect()
    assert got.equals(pa.anonymize(PEOPLE, hierarchies=H, k=2, insensitive="id").collect())
