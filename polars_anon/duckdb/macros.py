"""Register the ``anon_*`` macros, load hierarchies as tables, write generalization queries."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from polars_anon._validate import is_integer
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.messages import LEVEL_OUT_OF_RANGE, NAMES_NOT_QIDS
from polars_anon.quoting import duckdb_identifier, duckdb_literal

__all__ = ["generalize_sql", "load_hierarchies", "load_hierarchy", "register", "sql_files"]


def sql_files() -> list[tuple[str, str]]:
    """The shipped ``sql/*.sql`` files as (name, text), sorted by name (``_*.sql``, the shared helpers, first)."""
    try:
        root = resources.files("polars_anon") / "sql"
        files = [(f.name, f.read_text()) for f in root.iterdir() if f.name.endswith(".sql")]
    except (FileNotFoundError, NotADirectoryError):
        files = []
    if not files:  # editable install: sql/ sits beside the package
        here = Path(__file__).resolve().parents[2] / "sql"
        files = [(f.name, f.read_text()) for f in here.glob("*.sql")]
    return sorted(files)


REGISTERED = "anon_registered"
"""The TEMP view :func:`register` makes once every file has run: :func:`ensure_registered` reads it."""


def register(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create the hierarchy tables and every ``anon_*`` macro on `con` (TEMP; harmless to repeat), then the TEMP view
    :data:`REGISTERED`.

    Returns the ``anon_*`` function names now defined. The files are read under ``preserve_identifier_case =
    'preserve_case'`` (DuckDB's default), the connection's own setting put back after: a macro's identifiers are
    folded when it is created, and under ``'uppercase'`` the helper columns became ``__ANON_NONE`` and every table
    macro failed with DuckDB's Binder Error.
    """
    case = con.execute("SELECT current_setting('preserve_identifier_case')").fetchone()
    con.execute("SET preserve_identifier_case = 'preserve_case'")
    try:
        for _, text in sql_files():
            con.execute(text)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {REGISTERED} AS SELECT true AS registered")  # every file ran
    finally:
        con.execute(f"SET preserve_identifier_case = {duckdb_literal(case[0] if case else 'preserve_case')}")
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'anon\\_%' "
        "ESCAPE '\\' ORDER BY 1 ASC"
    ).fetchall()
    return [r[0] for r in rows]


@functools.cache
def _shipped_tables() -> list[str]:
    """The table names the shipped files define."""
    text = "\n".join(t for _, t in sql_files())
    return sorted(set(re.findall(r"CREATE TEMP TABLE IF NOT EXISTS (anon_\w+)", text)))


def ensure_registered(con: duckdb.DuckDBPyConnection) -> None:
    """:func:`register` on `con` unless a :func:`register` has run on it (its view :data:`REGISTERED`) and every
    shipped table is there.

    One catalogue query of views and tables (under a millisecond; DuckDB lists its ~3,000 functions in 23-27 ms)
    instead of re-running the files (about 0.2 s of CPU) at every hierarchy load or pairs table on the same
    connection. A connection whose macros were dropped after registering: call :func:`register` again.
    """
    tables = _shipped_tables()
    found = con.execute(
        "SELECT (SELECT count(*) FROM duckdb_views() WHERE temporary AND view_name = $1),"
        " (SELECT count(*) FROM duckdb_tables() WHERE temporary AND list_contains($2, table_name))",
        [REGISTERED, tables],
    ).fetchone()
    if found != (1, len(tables)):
        register(con)


def load_hierarchy(con: duckdb.DuckDBPyConnection, name: str, hierarchy: Hierarchy) -> None:
    """Load `hierarchy` into the ``anon_nodes``, ``anon_closure`` and ``anon_levels`` tables as `name`.

    Replaces an earlier hierarchy of the same name; registers the macros first if `con` lacks them.
    """
    load_hierarchies(con, {name: hierarchy})


def load_hierarchies(con: duckdb.DuckDBPyConnection, hierarchies: Mapping[str, Hierarchy]) -> None:
    """Register the macros on `con` and load every hierarchy under its name (its qid), in one transaction.

    Replaces earlier hierarchies of the same names; on an error none is loaded.

    >>> import duckdb, polars_anon as pa
    >>> con = duckdb.connect()
    >>> load_hierarchies(
    ...     con, {"sex": pa.Hierarchy.suppression(["F", "M"]), "age": pa.Hierarchy.intervals(range(20, 30), [5])}
    ... )
    >>> con.sql("SELECT hierarchy, count(*) FROM anon_nodes GROUP BY ALL ORDER BY 1").fetchall()
    [('age', 13), ('sex', 3)]
    """
    for name, hierarchy in hierarchies.items():
        if not isinstance(hierarchy, Hierarchy):
            raise InvalidParameterError(f"hierarchies[{name!r}] must be a Hierarchy, got {type(hierarchy).__name__}")
    ensure_registered(con)
    con.execute("BEGIN")
    try:
        for name, hierarchy in hierarchies.items():
            _load(con, name, hierarchy)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def _load(con: duckdb.DuckDBPyConnection, name: str, hierarchy: Hierarchy) -> None:
    """Replace the rows of hierarchy `name` in the three tables (inside the caller's transaction)."""
    nodes = hierarchy.nodes.with_columns(pl.lit(name).alias("hierarchy"))
    closure = hierarchy.closure.with_columns(pl.lit(name).alias("hierarchy"))
    leaf = pl.Series(hierarchy.is_leaf)
    levels = pl.concat(
        [
            hierarchy.level_map(lv).with_columns(pl.lit(lv, dtype=pl.Int64).alias("level"), leaf.alias("leaf"))
            for lv in range(hierarchy.height)
        ]
    ).with_columns(pl.lit(name).alias("hierarchy"))
    for table, frame in (("anon_nodes", nodes), ("anon_closure", closure), ("anon_levels", levels)):
        con.execute(f"DELETE FROM {table} WHERE hierarchy = ?", [name])
        con.register("__anon_frame", frame.to_arrow())
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM __anon_frame")
        con.unregister("__anon_frame")


def generalize_sql(relation: str, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> str:
    """SQL text that publishes `relation` (a table, view or ``read_parquet(...)``) at fixed levels.

    The hierarchies must have been loaded under their column names
    (:func:`load_hierarchies`). Column names are quoted as identifiers; levels are
    checked integers; no user value is formatted into the text. Rows keep their
    input order (a row number is carried through the lookups and sorted on). The
    query refuses, naming them, a hierarchy not loaded (even over an empty table)
    and a value that is no node of its hierarchy (see ``anon_generalize``).

    Raises
    ------
    InvalidParameterError
        `levels` names a column that has no hierarchy, or a level is not an
        integer from 0 to the hierarchy's top level.

    Examples
    --------
    >>> import duckdb, polars_anon as pa
    >>> H = {"age": pa.Hierarchy.intervals(range(20, 30), [5])}
    >>> con = duckdb.connect()
    >>> load_hierarchies(con, H)
    >>> _ = con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (23, 'x'), (27, 'y')) v(age, name)")
    >>> con.sql(generalize_sql("t", H, {"age": 1})).fetchall()
    [('20-24', 'x'), ('25-29', 'y')]
    """
    if not isinstance(relation, str):
        raise InvalidParameterError(
            f"generalize_sql(relation, hierarchies, levels): relation must be SQL text naming a table, view or "
            f"read_parquet(...), got {type(relation).__name__}; it takes no connection: run the text it returns with "
            "con.sql(...)"
        )
    for name, value in (("hierarchies", hierarchies), ("levels", levels)):
        if not isinstance(value, Mapping):
            raise InvalidParameterError(
                f"generalize_sql(relation, hierarchies, levels): {name} must be a mapping column -> "
                f"{'Hierarchy' if name == 'hierarchies' else 'level'}, got {type(value).__name__}"
            )
    for q, h in hierarchies.items():
        if not isinstance(h, Hierarchy):
            raise InvalidParameterError(
                f"generalize_sql: hierarchies[{q!r}] must be a Hierarchy, got {type(h).__name__}"
            )
    unknown = [q for q in levels if q not in hierarchies]
    if unknown:
        raise InvalidParameterError(NAMES_NOT_QIDS(what="levels", unknown=unknown, qids=list(hierarchies)))
    parts, checks = [], []
    for q, h in hierarchies.items():
        lv = levels.get(q, 0)
        if not is_integer(lv) or not 0 <= lv < h.height:
            raise InvalidParameterError(
                LEVEL_OUT_OF_RANGE(where=f"hierarchy {q!r}: ", level=lv, top=h.height - 1, root=h.root)
            )
        ident, literal = duckdb_identifier(q), duckdb_literal(q)
        parts.append(f"anon_generalize({literal}, {ident}, {lv}) AS {ident}")
        checks.append(f"anon_check_level({literal}, {lv})")
    return (
        f"SELECT * EXCLUDE (__anon_row) REPLACE ({', '.join(parts)}) "
        f"FROM (SELECT *, row_number() OVER () AS __anon_row FROM {relation}) "
        f"WHERE (SELECT {' AND '.join(checks) or 'true'}) ORDER BY __anon_row ASC"
    )
