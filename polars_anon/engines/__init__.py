"""Engines: where the rows live. Polars (the default), DuckDB or Apache Spark.

Every engine runs the same road (:mod:`polars_anon.engines.pipeline`): the engine
groups the rows by the quasi-identifiers (and by each sensitive attribute a privacy
model reads) and hands those class aggregates, as Arrow, to the same checks, the
same method and the same report builder on the driver; the method's
:class:`~polars_anon.tuplemap.TupleMap` comes back to the engine, which publishes
it with its own join, writes Parquet with its own writer to a temporary name,
groups the WRITTEN data again to check every guarantee (fail closed) and only
then lets it be renamed into place.

An engine module provides exactly the engine-specific steps (:class:`Engine`).

>>> ENGINES
('polars', 'duckdb', 'spark')
>>> get_engine("oracle")
Traceback (most recent call last):
...
polars_anon.errors.InvalidParameterError: engine must be one of ['polars', 'duckdb', 'spark'], got 'oracle'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from polars_anon._validate import check_choice

__all__ = ["ENGINES", "Engine", "GroupBys", "get_engine", "key_col"]

ENGINES = ("polars", "duckdb", "spark")


def key_col(qid: str) -> str:
    """Name of the column of a qid's original value (in the engine's type) in an engine's map."""
    return f"__anon_in_{qid}"


class GroupBys:
    """An engine's group-by, remembering its last result: a job's hierarchies and the road read one pass.

    Only the last (table, keys) is kept (the table with it, so its id stays its own). Asked with a `limit`,
    the group-by returns at most ``limit + 1`` rows (a SQL ``LIMIT``): more than `limit` rows says "too
    many" without bringing them all to the driver; at most `limit` rows is the whole result, kept and
    served to any later call (with or without a limit).

    >>> calls = []
    >>> counts = GroupBys(lambda table, keys, limit: calls.append((keys, limit)) or pl.DataFrame({"count": [1, 2]}).head(limit or 2))
    >>> t = object()
    >>> counts(t, ["a"], limit=5) is counts(t, ["a"]), calls
    (True, [(['a'], 6)])
    >>> counts(t, ["b"], limit=1).height, counts(t, ["b"]).height, calls[1:]
    (2, 2, [(['b'], 2), (['b'], None)])
    """

    def __init__(self, group: Callable[[Any, list[str], int | None], pl.DataFrame]) -> None:
        self._group = group
        self._last: tuple[object, tuple[str, ...], pl.DataFrame, bool] | None = None

    def __call__(self, table: object, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        last = self._last
        if (
            last is None
            or last[0] is not table
            or last[1] != tuple(keys)
            or not (last[3] or limit is not None and last[2].height > limit)
        ):
            frame = self._group(table, list(keys), None if limit is None else limit + 1)
            last = self._last = (table, tuple(keys), frame, limit is None or frame.height <= limit)
        return last[2]


class Engine(Protocol):
    """The engine-specific steps; tables are the engine's own (a DuckDB relation, a Spark DataFrame)."""

    name: str

    def table(self, data: object) -> Any:
        """The engine's table for `data`: its own table, or a Polars frame handed over as Arrow."""

    def read_parquet(self, path: Path) -> Any:
        """A table reading the Parquet at `path` (a file, or a folder of parts)."""

    def schema(self, table: Any) -> pl.Schema:
        """The table's columns as Polars types (through Arrow; no row is read)."""

    def counts(self, table: Any, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        """``GROUP BY keys``: the keys (their own types, nulls kept as a group) and ``count`` (Int64); the last
        result is kept (:class:`GroupBys`), so asking twice costs one pass. With `limit`, at most ``limit + 1``
        rows (more than `limit`: the group-by has too many to bring to the driver)."""

    def distinct(self, table: Any, columns: Sequence[str]) -> dict[str, int]:
        """The number of distinct values of each column, null counted as a value."""

    def publish(self, table: Any, mapping: pl.DataFrame, qids: Sequence[str], columns: Sequence[str]) -> Any:
        """Join `mapping` (see :func:`polars_anon.engines.pipeline.engine_map`) to the rows, drop the suppressed
        ones, and keep `columns` with each qid replaced by its published label."""

    def write(self, table: Any, path: Path) -> None:
        """Write the table as Parquet at `path` (nothing exists there yet)."""

    def to_polars(self, table: Any) -> pl.DataFrame:
        """Collect the table on the driver."""

    # SQL over names the engine makes (the rounds of :mod:`polars_anon.engines.mondrian`)
    def quote(self, name: str) -> str:
        """`name` as a quoted SQL identifier."""

    def sql(self, query: str) -> Any:
        """The (lazy) table of a query over names made by :meth:`view`, :meth:`register` and :meth:`keep`."""

    def view(self, table: Any) -> str:
        """A name the SQL can read for `table`."""

    def register(self, frame: pl.DataFrame) -> str:
        """A name the SQL can read for a frame on the driver (sent as Arrow)."""

    def keep(self, table: Any) -> str:
        """Materialize `table` now (engine side); its name."""

    def drop(self, name: str) -> None:
        """Forget a name made by :meth:`register` or :meth:`keep`."""

    def sorted_set(self, expr: str) -> str:
        """SQL aggregate: the distinct values of `expr` in a group, sorted, as a list."""


def get_engine(
    name: str,
    *,
    data: object = None,
    master: str | None = None,
    config: Mapping[str, str] | None = None,
    connection: object = None,
    memory_limit: str | None = None,
) -> Engine:
    """The engine called `name`.

    ``"duckdb"``: on `connection` (default DuckDB's default connection, where ``duckdb.sql``
    makes its relations); given `memory_limit` instead, on a connection of its own within it.
    ``"spark"``: the session of `data` when it is a Spark DataFrame, else the active session,
    else one built with `master` and `config` pairs. ``"polars"``
    has no engine object: it is the default road of :func:`polars_anon.anonymize`.
    """
    check_choice("engine", name, ENGINES)
    if name == "duckdb":
        from polars_anon.engines.duckdb import DuckDBEngine

        if memory_limit is not None:
            return DuckDBEngine.own(memory_limit)
        return DuckDBEngine(connection)  # type: ignore[arg-type]
    if name == "spark":
        from polars_anon.engines.spark import SparkEngine, session

        own = getattr(data, "sparkSession", None)
        return SparkEngine(own if own is not None else session(master, config))
    raise ValueError("the polars engine is pa.anonymize's own road; it has no engine object")
