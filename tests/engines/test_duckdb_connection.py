"""The DuckDB entry point on the user's own connection: a database file is read, never written to."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import duckdb as pad

H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
PEOPLE = pl.DataFrame({"age": [31, 33, 38, 36, 35], "sex": ["F", "M", "F", "M", "F"]})


def _objects(path: Path) -> list[tuple[str, str]]:
    with duckdb.connect(str(path)) as con:
        return con.sql("SELECT table_name, table_type FROM information_schema.tables ORDER BY ALL").fetchall()


def test_a_database_file_gains_nothing(tmp_path: Path) -> None:
    """A table of the file and a Polars frame, on a connection to a database file (distributed Mondrian too): the
    same rows as the Polars road, and afterwards the file holds only the user's table."""
    path = tmp_path / "people.db"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE people AS SELECT * FROM PEOPLE")
    expected = pa.anonymize(PEOPLE, hierarchies=H, k=2).collect()
    assert pad.anonymize("people", connection=con, hierarchies=H, k=2).collect().equals(expected)
    assert pad.anonymize(PEOPLE, connection=con, hierarchies=H, k=2).collect().equals(expected)
    mondrian = pa.anonymize(PEOPLE, hierarchies=H, k=2, method="mondrian").collect()
    got = pad.anonymize("people", connection=con, hierarchies=H, k=2, method="mondrian", driver_tuples=1).collect()
    assert got.sort(pl.all()).equals(mondrian.sort(pl.all()))
    con.close()
    assert _objects(path) == [("people", "BASE TABLE")]


def test_a_relation_of_another_connection_is_named() -> None:
    """A relation of the user's in-memory connection handed to the default connection's engine is refused in one line
    that says to pass its connection (was: DuckDB's replacement-scan error); with it, the same rows as Polars."""
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT * FROM PEOPLE")
    with pytest.raises(pa.InvalidParameterError, match=r"another connection .* connection=con"):
        pa.anonymize(con.table("people"), hierarchies=H, k=2, engine="duckdb")
    expected = pa.anonymize(PEOPLE, hierarchies=H, k=2).collect()
    assert pad.anonymize(con.table("people"), connection=con, hierarchies=H, k=2).collect().equals(expected)
    with pytest.raises(pa.InvalidParameterError, match="connection must be a DuckDB connection .* got str"):
        pad.anonymize("people", connection="people.db", hierarchies=H, k=2)
    relation = con.table("people")
    con.close()  # a relation whose own connection is closed is not "of another connection"
    with pytest.raises(pa.InvalidParameterError, match="the DuckDB relation's connection is closed"):
        pa.anonymize(relation, hierarchies=H, k=2, engine="duckdb")
