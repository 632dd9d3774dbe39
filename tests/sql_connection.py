"""One DuckDB connection per test process with the ``anon_*`` macros registered, handed to each user as new.

``register()`` runs every ``sql/*.sql`` file (0.2-0.4 s of CPU); the SQL tests made a connection and registered the
macros for each test or hypothesis example, and spent most of their time there. :func:`registered` registers them
once and, at every call, takes away what an earlier user left: an open transaction, the tables, views, registered
frames, sequences and types it made, the rows of the hierarchies it loaded (the shipped ``anon_*`` tables stay,
emptied) and the settings of :data:`SETTINGS` it changed. A test sees what a new connection with ``register()`` run
on it holds.

Macros a test makes itself are not taken away (finding them reads ``duckdb_functions()``, about 70 ms with the
shipped macros there, as long as registering): such a test, tests of registration itself (idempotence, nothing
written into a database file, registering on demand), tests that change another setting and tests that close their
connection keep a connection of their own.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence

import duckdb
import polars as pl

from polars_anon.duckdb import register

_OBJECTS = """
SELECT 'VIEW', database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal
UNION ALL SELECT 'TABLE', database_name, schema_name, table_name FROM duckdb_tables() WHERE NOT internal
UNION ALL SELECT 'SEQUENCE', database_name, schema_name, sequence_name FROM duckdb_sequences()
UNION ALL SELECT 'TYPE', database_name, schema_name, type_name FROM duckdb_types() WHERE NOT internal
"""
_DROP_ORDER = ["VIEW", "TABLE", "SEQUENCE", "TYPE"]  # dependents first: a table may use a type or a sequence

SETTINGS = ["TimeZone", "Calendar", "default_order", "default_null_order", "preserve_insertion_order", "threads"]
"""The settings that change what a query returns or in which order, put back as they were after registering."""
_SETTINGS = "SELECT " + ", ".join(f"current_setting('{name}')" for name in SETTINGS)


def _qualified(database: str, schema: str, name: str) -> str:
    """``"database"."schema"."name"``, each part quoted as an identifier."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in (database, schema, name))


class _Shared:
    """The connection, and what it held right after ``register()``: its objects and its settings."""

    def __init__(self) -> None:
        self.con = duckdb.connect()
        register(self.con)
        self.objects = set(self.con.execute(_OBJECTS).fetchall())
        self.settings = self.con.execute(_SETTINGS).fetchall()[0]

    def reset(self) -> duckdb.DuckDBPyConnection:
        """Bring the connection back to what it held after registering, and return it."""
        con = self.con
        try:
            con.execute("ROLLBACK").fetchall()
        except duckdb.TransactionException:  # no transaction open: the usual case
            pass
        made = set(con.execute(_OBJECTS).fetchall()) - self.objects
        for kind, *path in sorted(made, key=lambda o: (_DROP_ORDER.index(o[0]), o)):
            con.execute(f"DROP {kind} IF EXISTS {_qualified(*path)}").fetchall()
        for _, *path in sorted(o for o in self.objects if o[0] == "TABLE"):
            con.execute(f"DELETE FROM {_qualified(*path)}").fetchall()  # fetched: DuckDB holds an unread result
        now = con.execute(_SETTINGS).fetchall()[0]
        for name, was, is_ in zip(SETTINGS, self.settings, now):
            if was != is_:
                con.execute(f'RESET "{name}"').fetchall()
        return con


def frame(con: duckdb.DuckDBPyConnection, query: str, params: Sequence[object] | None = None) -> pl.DataFrame:
    """The rows of `query` as a Polars frame, the query bound once.

    ``con.sql(query).pl()`` binds the query twice: ``con.sql`` binds it to type the relation, ``.pl()`` binds it again
    to run it. A macro over tables (``anon_ncp('o', 'a', ...)``) spends most of its time binding (its checks and
    messages are planned whatever the rows), so a test comparing such calls spent a quarter of its time on the
    first, unused bind. ``con.execute`` binds once; its Arrow result is the same table (the duckdb warning is about
    a copy of the rows, a few here).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)
        table = con.execute(query, params).to_arrow_table()
    result = pl.from_arrow(table, rechunk=False)
    assert isinstance(result, pl.DataFrame)
    return result


@functools.cache
def _shared() -> _Shared:
    return _Shared()


def registered() -> duckdb.DuckDBPyConnection:
    """The process's registered connection, holding nothing but the shipped macros and (empty) hierarchy tables.

    Do not close it. Each call empties it, so a test or hypothesis example calls it once, at its start.
    """
    return _shared().reset()
