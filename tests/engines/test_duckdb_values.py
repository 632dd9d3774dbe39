"""DuckDB values Polars cannot hold as DuckDB does, in a DuckDB relation's quasi-identifier: refused naming the column
and the value or type (mend49, from hunt47's t21 and t27), where the road's join or check failed in other words."""

from __future__ import annotations

import duckdb
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
from polars_anon.errors import AnonError


def _table(con: duckdb.DuckDBPyConnection, values: list[str]) -> None:
    """Table h: a qid c of `values` (SQL literals), each three times, beside a qid s of one value."""
    rows = ",".join(f"({v}, 'F')" for v in values for _ in range(3))
    con.execute(f"CREATE OR REPLACE TABLE h AS SELECT * FROM (VALUES {rows}) v(c, s)")


@pytest.mark.parametrize("method", ["greedy", "mondrian"])
def test_a_time_with_time_zone_qid_is_refused_by_type(method: str) -> None:
    """A TIMETZ qid was DuckDB's raw ConversionException (TIME WITH TIME ZONE -> TIME_NS) from the road's join:
    refused naming the column and the type, as the SQL macros refuse it."""
    con = duckdb.connect()
    _table(con, ["'09:00:00+02'::TIMETZ", "'09:00:00+00'::TIMETZ"])
    hs = {"s": pa.Hierarchy.suppression(["F"])}
    if method == "greedy":
        hs["c"] = pa.Hierarchy.suppression(["09:00:00", "07:00:00"])
    with pytest.raises(AnonError, match=r"column 'c' has type TIME WITH TIME ZONE, which has no label.*cast it"):
        pad.anonymize("h", connection=con, qids=["c", "s"], hierarchies=hs, k=3, method=method).collect()


@pytest.mark.parametrize("method", ["greedy", "mondrian"])
def test_the_time_24_00_00_in_a_qid_is_refused_by_value(method: str) -> None:
    """TIME '24:00:00' reached Polars as null: Mondrian said 'column 'c' has 2 null values', greedy with
    null='suppress' failed closed ('5 rows, but 7 were due'); refused naming the value and the column."""
    con = duckdb.connect()
    _table(con, ["'24:00:00'::TIME", "'00:00:00'::TIME", "'12:00:00'::TIME"])
    hs = {"s": pa.Hierarchy.suppression(["F"])}
    if method == "greedy":
        hs["c"] = pa.Hierarchy.suppression(["00:00:00", "12:00:00"])
    with pytest.raises(AnonError, match=r"column 'c': the time 24:00:00 has no label \(Polars reads it as null\)"):
        pad.anonymize(
            "h", connection=con, qids=["c", "s"], hierarchies=hs, k=3, method=method, null="suppress"
        ).collect()


class _CountingRelation:
    """A DuckDB relation that counts the queries run through it or any relation derived from it."""

    runs = 0

    def __init__(self, relation: duckdb.DuckDBPyRelation) -> None:
        self._relation = relation

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._relation, name)
        if not callable(attr):
            return attr

        def call(*args: object, **kwargs: object) -> object:
            if name.startswith("fetch") or name in ("pl", "df", "arrow", "execute"):
                _CountingRelation.runs += 1
            out = attr(*args, **kwargs)
            return _CountingRelation(out) if isinstance(out, duckdb.DuckDBPyRelation) else out

        return call


def test_the_time_24_00_00_is_looked_for_in_one_query() -> None:
    """mend51: the check ran the fetched query again for each TIME column holding nulls (four here): one query for
    all of them, naming the first column holding 24:00:00."""
    from polars_anon.engines.duckdb import _refuse_end_of_day

    rel = duckdb.sql("SELECT NULL::TIME a, NULL::TIME b, TIME '24:00:00' c, TIME '24:00:00' d FROM range(3)")
    _CountingRelation.runs = 0
    with pytest.raises(AnonError, match=r"^column 'c': the time 24:00:00 has no label"):
        _refuse_end_of_day(_CountingRelation(rel), rel.pl())  # pyright: ignore[reportArgumentType]
    assert _CountingRelation.runs == 1


def test_a_time_with_time_zone_beside_the_qids_is_published() -> None:
    """Only a qid's TIMETZ is refused: an insensitive one is written as the instant (in UTC), as before."""
    con = duckdb.connect()
    _table(con, ["'09:00:00+02'::TIMETZ", "'10:00:00+00'::TIMETZ"])
    hs = {"s": pa.Hierarchy.suppression(["F"])}
    out = pad.anonymize("h", connection=con, qids=["s"], hierarchies=hs, k=3, insensitive=["c"]).collect()
    assert out.height == 6


BEYOND = [  # (DuckDB literal of a value Polars cannot write as text, the dtype it reaches Polars as)
    ("'infinity'::DATE", "Date"),
    ("'-infinity'::DATE", "Date"),
    ("'infinity'::TIMESTAMP", "Datetime"),
]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", ["greedy", "mondrian"])
@pytest.mark.parametrize(("literal", "dtype"), BEYOND)
def test_a_date_beyond_polars_text_is_refused_naming_the_column(
    literal: str, dtype: str, method: str, engine: str
) -> None:
    """hunt47 t21/cli5: DuckDB's infinite dates (physical 2147483647 days, or microseconds) in a qid ended in
    pyo3_runtime.PanicException ('out-of-range date', not an Exception) where the road turns the qid's values into
    text labels (_passes.string_ranks on Polars, the engines' labels on DuckDB); refused naming the column."""
    con = duckdb.connect()
    _table(con, [literal, "'2020-01-01'::DATE"])
    hs = {"s": pa.Hierarchy.suppression(["F"])}
    if method == "greedy":
        hs["c"] = pa.Hierarchy.suppression(["2020-01-01", "2020-01-02"])
    data = con.sql("FROM h").pl() if engine == "polars" else "h"
    with pytest.raises(AnonError, match=rf"column 'c': 1 values are beyond the days Polars can write as text.*{dtype}"):
        run = pad.anonymize if engine == "duckdb" else pa.anonymize
        kwargs = {"connection": con} if engine == "duckdb" else {}
        run(data, qids=["c", "s"], hierarchies=hs, k=3, method=method, **kwargs).collect()  # type: ignore[operator]
