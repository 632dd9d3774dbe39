"""DuckDB front door: register the ``anon_*`` SQL macros and load hierarchies as tables.

>>> import duckdb, polars_anon as pa
>>> from polars_anon.duckdb import register, load_hierarchy
>>> con = duckdb.connect()
>>> "anon_class_sizes" in register(con)
True
>>> load_hierarchy(con, "sex", pa.Hierarchy.suppression(["F", "M"]))
>>> con.sql("SELECT anon_generalize('sex', 'F', 1)").fetchall()
[('*',)]
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from polars_anon.hierarchy import Hierarchy

__all__ = ["generalize_sql", "load_hierarchy", "register", "sql_files"]


def sql_files() -> list[tuple[str, str]]:
    """The shipped ``sql/*.sql`` files as (name, text), sorted by name."""
    try:
        root = resources.files("polars_anon") / "sql"
        files = [(f.name, f.read_text()) for f in root.iterdir() if f.name.endswith(".sql")]
    except (FileNotFoundError, NotADirectoryError):
        files = []
    if not files:  # editable install: sql/ sits beside the package
        here = Path(__file__).resolve().parent.parent / "sql"
        files = [(f.name, f.read_text()) for f in here.glob("*.sql")]
    return sorted(files)


def register(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create the hierarchy tables and every ``anon_*`` macro on `con` (TEMP; harmless to repeat).

    Returns the ``anon_*`` function names now defined.
    """
    for _, text in sql_files():
        con.execute(text)
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'anon\\_%' ESCAPE '\\' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def load_hierarchy(con: duckdb.DuckDBPyConnection, name: str, hierarchy: Hierarchy) -> None:
    """Load `hierarchy` into the ``anon_nodes``, ``anon_closure`` and ``anon_levels`` tables as `name`.

    Replaces an earlier hierarchy of the same name; calls :func:`register` first if needed.
    """
    register(con)
    nodes = hierarchy.nodes.with_columns(pl.lit(name).alias("hierarchy"))
    closure = hierarchy.closure.with_columns(pl.lit(name).alias("hierarchy"))
    levels = pl.concat(
        [hierarchy.level_map(lv).with_columns(pl.lit(lv, dtype=pl.Int64).alias("level")) for lv in range(hierarchy.height)]
    ).with_columns(pl.lit(name).alias("hierarchy"))
    con.execute("BEGIN")
    try:
        for table, frame in (("anon_nodes", nodes), ("anon_closure", closure), ("anon_levels", levels)):
            con.execute(f"DELETE FROM {table} WHERE hierarchy = ?", [name])
            con.register("__anon_frame", frame.to_arrow())
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM __anon_frame")
            con.unregister("__anon_frame")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def generalize_sql(relation: str, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> str:
    """SQL text that publishes `relation` (a table, view or ``read_parquet(...)``) at fixed levels.

    The hierarchies must have been loaded under their column names with
    :func:`load_hierarchy`. Column names are quoted as identifiers; levels are
    integers; no user value is formatted into the text. Rows keep their input
    order (a row number is carried through the lookups and sorted on).
    """
    parts = []
    for q in hierarchies:
        lv = int(levels.get(q, 0))
        ident = '"' + q.replace('"', '""') + '"'
        literal = "'" + q.replace("'", "''") + "'"
        parts.append(f"anon_generalize({literal}, {ident}, {lv}) AS {ident}")
    return (
        f"SELECT * EXCLUDE (__anon_row) REPLACE ({', '.join(parts)}) "
        f"FROM (SELECT *, row_number() OVER () AS __anon_row FROM {relation}) ORDER BY __anon_row"
    )
