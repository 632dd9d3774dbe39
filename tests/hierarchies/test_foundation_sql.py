"""The DuckDB macros agree with their Polars twins."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_anon as pa
from polars_anon.duckdb import generalize_sql, load_hierarchies, load_hierarchy, register, sql_files
from polars_anon.messages import K_NOT_INTEGER, LEVEL_OUT_OF_RANGE
from tests.conftest import ADULT_QIDS
from tests.sql_connection import registered


@pytest.fixture()
def con() -> duckdb.DuckDBPyConnection:
    """The registered connection of tests/sql_connection.py, emptied."""
    return registered()


def test_every_macro_has_a_polars_twin(con: duckdb.DuckDBPyConnection) -> None:
    """Each macro's comment names its twin `Twin: module.function`, and the twin imports."""
    names = set(register(con))
    documented = {}
    for _, text in sql_files():
        for block, name in re.findall(r"((?:--[^\n]*\n)+)CREATE OR REPLACE TEMP MACRO (anon_\w+)", text):
            twin = re.search(r"Twin: ([\w.]+)", block)
            assert twin, f"macro {name} has no 'Twin:' comment"
            documented[name] = twin.group(1)
    assert names == set(documented)
    for name, path in documented.items():
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
            break
        else:
            pytest.fail(f"twin {path} of {name} does not import")


def test_register_is_idempotent() -> None:
    con = duckdb.connect()  # its own: the first call registers on a connection without the macros
    assert register(con) == register(con)


def test_register_writes_nothing_into_a_database_file(tmp_path: Path) -> None:
    """TEMP macros and tables: a database file opened again has none of them."""
    path = str(tmp_path / "user.duckdb")
    with duckdb.connect(path) as c:
        names = register(c)
        load_hierarchies(c, {"sex": pa.Hierarchy.suppression(["F", "M"])})
        assert "anon_generalize" in names and all(n.startswith("anon_") for n in names)
    with duckdb.connect(path) as c:
        assert c.sql("SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE 'anon_%'").fetchall() == [(0,)]
        assert c.sql("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'anon_%'").fetchall() == [(0,)]


def test_a_hierarchy_load_registers_only_a_connection_not_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_hierarchy registers the macros when the connection lacks them, else not. It counted the macros in
    duckdb_functions() (23-27 ms of CPU per load: DuckDB lists its 3,000 functions); register() now ends with the
    TEMP view anon_registered, which it reads (fails before: no such view)."""
    import polars_anon.duckdb.macros as macros

    calls: list[int] = []
    real = macros.register
    monkeypatch.setattr(macros, "register", lambda con: calls.append(1) or real(con))
    con = duckdb.connect()
    sex = pa.Hierarchy.suppression(["F", "M"])
    load_hierarchy(con, "sex", sex)
    assert calls == [1] and con.sql("FROM anon_registered").fetchall() == [(True,)]
    load_hierarchy(con, "sex", sex)
    assert calls == [1]  # registered: not again
    con.execute("DROP TABLE anon_levels")  # a shipped table gone (or the view): registered again
    load_hierarchy(con, "sex", sex)
    con.execute("DROP VIEW anon_registered")
    load_hierarchy(con, "sex", sex)
    assert calls == [1, 1, 1] and con.sql("SELECT anon_generalize('sex', 'F', 1)").fetchall() == [("*",)]


@pytest.mark.parametrize(
    "levels",
    [
        {
            "sex": 1,
            "age": 2,
            "race": 0,
            "marital-status": 1,
            "education": 3,
            "native-country": 1,
            "workclass": 2,
            "occupation": 1,
        },
        {"age": 1, "education": 1},
    ],
)
def test_generalized_adult_and_classes_agree(
    levels: dict, adult: pl.DataFrame, adult_hierarchies: dict, con: duckdb.DuckDBPyConnection
) -> None:
    load_hierarchies(con, adult_hierarchies)
    con.register("adult_src", adult.to_arrow())
    via_sql = con.sql(generalize_sql("adult_src", adult_hierarchies, levels)).pl()
    via_polars = pa.generalize(adult.lazy(), adult_hierarchies, levels).collect()
    assert_frame_equal(via_sql, via_polars)  # same rows in the same order
    con.register("published", via_polars.to_arrow())
    qlist = "[" + ", ".join(f"'{q}'" for q in ADULT_QIDS) + "]"
    sql_sizes = con.sql(f"SELECT * EXCLUDE (violates) FROM anon_class_sizes('published', {qlist}, k := 10)").pl()
    pl_sizes = pa.class_sizes(via_polars.lazy(), ADULT_QIDS).collect()
    assert_frame_equal(sql_sizes, pl_sizes.with_columns(pl.col("size").cast(pl.Int64)), check_row_order=False)
    sql_summary = con.sql(f"FROM anon_k_summary('published', {qlist}, k := 10)").pl()
    assert_frame_equal(sql_summary, pa.k_summary(via_polars.lazy(), ADULT_QIDS, 10).collect())


def test_sql_errors_name_the_parameter(con: duckdb.DuckDBPyConnection) -> None:
    con.sql("CREATE TABLE t AS SELECT 1 AS a")
    with pytest.raises(duckdb.Error, match=K_NOT_INTEGER.pattern(k=0)):
        con.sql("FROM anon_class_sizes('t', ['a'], k := 0)").fetchall()
    load_hierarchy(con, "a", pa.Hierarchy.suppression(["1"]))
    with pytest.raises(
        duckdb.Error, match=LEVEL_OUT_OF_RANGE.pattern(where="hierarchy 'a': ", level=-1, top=1, root="*")
    ):
        con.sql("SELECT anon_generalize('a', 1, -1)").fetchall()


def test_level_map_matches(con: duckdb.DuckDBPyConnection) -> None:
    h = pa.Hierarchy.intervals(range(20, 40), [5, 10])
    load_hierarchy(con, "age", h)
    assert_frame_equal(con.sql("FROM anon_level_map('age', 1)").pl(), h.level_map(1).sort("label"))
