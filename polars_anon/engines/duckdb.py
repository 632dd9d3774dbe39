"""The DuckDB engine: group-bys, the publishing join and the Parquet writer in DuckDB.

Rows are published in input order: the input is numbered (``row_number() OVER ()``,
insertion order) and the join's result sorted by that number, so the same input,
parameters and seed write the same bytes.

>>> import polars as pl
>>> e = DuckDBEngine()
>>> t = e.table(pl.DataFrame({"sex": ["F", "M", "F"]}))
>>> e.counts(t, ["sex"]).sort("sex").rows()
[('F', 2), ('M', 1)]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import duckdb
import polars as pl

from polars_anon._passes import TupleCounts
from polars_anon._validate import is_path
from polars_anon.engines import (
    GroupBys,
    TimeUnit,
    engine_map,
    enum_columns,
    grouped_aggregates,
    grouped_classes,
    grouping_set_counts,
    in_enums,
    in_source_units,
    key_col,
    labelled_marginals,
    source_types,
)
from polars_anon.errors import InvalidParameterError
from polars_anon.interrupts import interruptible
from polars_anon.io import (
    check_source,
    is_csv,
    literal_path,
    named_path,
    names_parquet,
    names_path,
    parquet_parts,
    scanned_files,
)
from polars_anon.pipeline.state import FIRST_ROW, Aggregated, EngineAggregates
from polars_anon.privacy.differential import HASH, ROW, sample_sql_steps
from polars_anon.quoting import duckdb_identifier as _q
from polars_anon.quoting import duckdb_literal
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["MEMORY_LIMIT", "DuckDBEngine", "memory_size"]


def _nodes(node: object, within: bool = False) -> Iterator[tuple[dict[str, Any], bool]]:
    """Every object of a parsed query (DuckDB's ``json_serialize_sql``), in order, each with whether it lies inside a
    table function's call (`within`)."""
    if isinstance(node, list):
        for value in node:
            yield from _nodes(value, within)
    elif isinstance(node, dict):
        yield node, within
        inside = within or node.get("type") == "TABLE_FUNCTION"
        for value in node.values():
            yield from _nodes(value, inside)


def _named_files(tree: object) -> list[str]:
    """The strings a parsed query passes to its table functions, and the tables it names that are files (a
    replacement scan: ``FROM 'x.parquet'``)."""
    files = []
    for node, within in _nodes(tree):
        name, literal = node.get("table_name"), node.get("literal")
        if node.get("type") == "BASE_TABLE" and isinstance(name, str) and ("." in name or "/" in name):
            files.append(name)
        elif within and isinstance(literal, dict) and literal.get("kind") == "STRING":
            files.append(str(literal.get("text")))
    return files


def _table_calls(tree: object) -> list[tuple[tuple[str, str, str], tuple[int, frozenset[str]]]]:
    """The table functions a parsed query calls (a table macro among them): (catalog, schema, name), '' where not
    given, each with the arguments it is given: how many by position, and the (lower-cased) names of the others."""
    found = []
    for node, _ in _nodes(tree):
        call = node.get("function")
        if (
            node.get("type") == "TABLE_FUNCTION"
            and isinstance(call, dict)
            and isinstance(call.get("function_name"), str)
        ):
            args = [a for a in call.get("arguments") or [] if isinstance(a, dict)]
            named = frozenset(str(a["name"]).lower() for a in args if a.get("name"))
            given = (sum(1 for a in args if not a.get("name")), named)
            found.append(
                ((str(call.get("catalog") or ""), str(call.get("schema") or ""), call["function_name"]), given)
            )
    return found


def _file_parameters(tree: object) -> set[str]:
    """The names (lower-cased) a parsed query passes to its table functions as a bare column (a table macro's
    parameter read as a file there: ``read_parquet(p)``)."""
    return {
        str(node["column_names"][0]).lower()
        for node, within in _nodes(tree)
        if within
        and node.get("class") == "COLUMN_REF"
        and isinstance(node.get("column_names"), list)
        and len(node["column_names"]) == 1
    }


def _base_tables(tree: object) -> list[tuple[str, str, str]]:
    """The tables and views a parsed query names: (catalog, schema, name), '' where not given."""
    return [
        (str(node.get("catalog_name") or ""), str(node.get("schema_name") or ""), node["table_name"])
        for node, _ in _nodes(tree)
        if node.get("type") == "BASE_TABLE" and isinstance(node.get("table_name"), str)
    ]


MEMORY_LIMIT = "1GB"
"""DuckDB's memory limit on a connection of its own (a job's): what goes beyond spills to a temporary folder.
Publishing in input order sorts every row: the 15M-row demo register's fulldomain job peaked at 3.0 GB with a
limit of 16GB and at 1.7 GB within 1GB (Nov 26 2026)."""


# the views and table macros a name (lower-cased $1; $2 schema, $3 catalog, '' when not given) may be (output safety)
_WHERE = (
    "lower({name}) = lower($1) AND ($2 = '' OR lower(schema_name) = lower($2)) "
    "AND ($3 = '' OR lower(database_name) = lower($3))"
)
_VIEWS = "SELECT database_name, schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal AND " + (
    _WHERE.format(name="view_name")
)
_TABLE_MACROS = (
    "SELECT DISTINCT database_name, schema_name, function_name, macro_definition FROM duckdb_functions() "
    "WHERE function_type = 'table_macro' AND NOT internal AND " + _WHERE.format(name="function_name")
)


_OWN_TYPES: dict[str, pl.DataType] = {"INTERVAL": pl.Duration("us"), "HUGEINT": pl.Int128(), "UHUGEINT": pl.UInt128()}
"""DuckDB types Polars is not handed as they are, and the Polars type that names each in the engine's schema."""


class DuckDBEngine:
    """DuckDB: on `connection` (default DuckDB's default connection; a relation must belong to it)."""

    name = "duckdb"

    def __init__(self, connection: duckdb.DuckDBPyConnection | None = None) -> None:
        if connection is not None and not isinstance(connection, duckdb.DuckDBPyConnection):
            raise InvalidParameterError(
                f"connection must be a DuckDB connection (duckdb.connect()), got {type(connection).__name__}"
            )
        self.con = connection if connection is not None else duckdb.default_connection()
        self.counts = GroupBys(self._counts)
        self._units: weakref.WeakKeyDictionary[duckdb.DuckDBPyRelation, dict[str, TimeUnit]] = (
            weakref.WeakKeyDictionary()
        )
        """Per relation, the time units its Datetime columns reach Polars in (:meth:`read_parquet`): those of the
        Parquet file it reads, kept by each relation this engine derives from it (:meth:`units`)."""
        self._named_units: dict[str, dict[str, TimeUnit]] = {}
        """The same, per name this engine made for a relation (:meth:`view`, :meth:`keep`) while it exists."""
        self._closer: weakref.finalize[Any, Any] | None = None
        """Closes a connection of its own and removes its spill folder (:meth:`own`, :meth:`close`)."""

    @property
    def time_zone(self) -> str:
        """The session's time zone, in which DuckDB hands back a timestamp with time zone."""
        with interruptible(self.con.interrupt):
            return str(self.con.sql("SELECT current_setting('TimeZone')").fetchall()[0][0])

    @classmethod
    def own(cls, memory_limit: str = MEMORY_LIMIT) -> DuckDBEngine:
        """An engine on a connection of its own, within `memory_limit` (DuckDB's syntax), spilling to a temporary
        folder (``polars_anon_duckdb_*``, readable by this user only) that is removed with the connection: by
        :meth:`close` (a job's engine, when the job ends, failed or not), else when the engine is collected or the
        process exits. DuckDB's own progress bar is off: it prints to standard output, where the command line writes
        its JSON report (the job's progress bars are polars_anon's, on standard error).

        >>> DuckDBEngine.own("512MB").con.sql("SELECT current_setting('memory_limit')").fetchall()[0][0]
        '488.2 MiB'
        """
        limit = memory_size("memory_limit", memory_limit)
        spill = tempfile.mkdtemp(prefix="polars_anon_duckdb_")
        try:
            engine = cls(duckdb.connect(config={"memory_limit": limit, "temp_directory": spill}))
            engine.con.execute("SET enable_progress_bar = false")  # a session setting only
        except BaseException:
            shutil.rmtree(spill, ignore_errors=True)
            raise
        engine._closer = weakref.finalize(engine, _close, engine.con, spill)
        return engine

    def close(self) -> None:
        """Close the connection of an engine made by :meth:`own` and remove its spill folder, now (once; nothing more
        is read on it); an engine on a connection it was given leaves that connection open.

        >>> engine = DuckDBEngine.own()
        >>> spill = engine.con.sql("SELECT current_setting('temp_directory')").fetchall()[0][0]
        >>> engine.close(); engine.close()
        >>> Path(spill).exists()
        False
        """
        if self._closer is not None:
            self._closer()

    def units(self, table: duckdb.DuckDBPyRelation) -> dict[str, TimeUnit]:
        """The time unit each Datetime column of `table` reaches Polars in, where it is not DuckDB's own: a relation
        of :meth:`read_parquet` carries those Polars reads its file with (DuckDB reads milliseconds as microseconds),
        and so does every relation this engine derives from it (:meth:`view`, :meth:`keep`, :meth:`sql`,
        :meth:`join_map`, :meth:`sample`); any other relation, none. Two files read by one engine keep their own.

        >>> e = DuckDBEngine()
        >>> e.units(e.table(pl.DataFrame({"at": [1]})))
        {}
        """
        return self._units.get(table, {})

    def _carrying(self, table: duckdb.DuckDBPyRelation, units: Mapping[str, TimeUnit]) -> duckdb.DuckDBPyRelation:
        """`table`, remembered as carrying `units` (:meth:`units`)."""
        if units:
            self._units[table] = dict(units)
        return table

    def view(self, table: duckdb.DuckDBPyRelation) -> str:
        """A temporary view name for `table`, for the SQL that follows (this session only: nothing is stored in
        the connection's database file, and a relation over a Python object may be read); it carries `table`'s
        :meth:`units` into the SQL that reads it (:meth:`sql`)."""
        name = f"__anon_{uuid.uuid4().hex[:12]}"
        self.con.register(name, table)
        if self.units(table):
            self._named_units[name] = self.units(table)
        return name

    def _fetch(self, relation: duckdb.DuckDBPyRelation, query: str) -> pl.DataFrame:
        """`query` (naming `relation` as ``{view}``) collected, its view dropped: nothing piles up on the connection.
        The road's queries (class counts, distinct counts) hand the qids' and attributes' values to Polars here, so a
        type or value Polars cannot hold as DuckDB does is refused here, naming the column."""
        view = self.view(relation)
        try:
            with interruptible(self.con.interrupt):
                result = self.con.sql(query.format(view=view))
                _refuse_unlabelled_types(result)
                frame = self._polars(result, self.units(relation))
                _refuse_end_of_day(result, frame)
                return frame
        finally:
            self.con.unregister(view)
            self._named_units.pop(view, None)

    def table(self, data: object) -> duckdb.DuckDBPyRelation:
        """A relation, a table or view name on the connection, or a Polars frame (read through Arrow), its text
        columns compared byte-wise (:func:`_bytewise`)."""
        relation = self._relation(data)
        return self._carrying(_bytewise(relation), self.units(relation))

    def _relation(self, data: object) -> duckdb.DuckDBPyRelation:
        """`data` as a relation of this connection (:meth:`table`), as it is."""
        if isinstance(data, duckdb.DuckDBPyRelation):
            try:  # a relation of another connection's in-memory database cannot be read here: say so now, in one line
                self._fetch(data, "SELECT 1 FROM {view} LIMIT 0")
            except duckdb.InvalidInputException as exc:
                if "closed" in str(exc):  # DuckDB's words when the relation's own connection was closed
                    raise InvalidParameterError(
                        "the DuckDB relation's connection is closed; build the relation again on an open connection"
                    ) from exc
                raise InvalidParameterError(
                    "the DuckDB relation belongs to another connection than the engine's (DuckDB's default one "
                    "unless given); pass its connection: polars_anon.duckdb.anonymize(relation, connection=con)"
                ) from exc
            return data
        if is_path(data) and not isinstance(data, str):  # a path object names a file, never a table: as its text is
            path = os.fspath(data)  # read, a CSV file's by DuckDB's reader of a file named as a table
            return self._relation(path) if is_csv(path) else self.read_parquet(path)
        if isinstance(data, str):
            if names_parquet(data):  # a Parquet file's name (or pattern) or a URI, as on Spark
                return self.read_parquet(data)
            for name in (data, _q(data)):  # a (qualified) name as DuckDB parses it, else the whole string as one name
                try:
                    return self.con.table(name)
                except duckdb.Error as exc:
                    error = exc
            if names_path(data):  # no table of that name: a path, as on Spark
                return self.read_parquet(data)
            raise InvalidParameterError(f"DuckDB has no table or view {data!r} on this connection") from error
        if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
            frame = (
                data.collect() if isinstance(data, pl.LazyFrame) else data
            )  # materializes: handed to DuckDB as Arrow
            return _as_enums(self.con.from_arrow(frame.to_arrow()), enum_columns(frame.schema))
        raise InvalidParameterError(
            f"engine 'duckdb' takes a DuckDB relation, a table name, a file path or a Polars frame, got "
            f"{type(data).__name__}"
        )

    def sources(self, data: object) -> list[str]:
        """The files of a scanned LazyFrame, or those a relation's query names (a table function's string
        arguments, such as ``read_parquet('x.parquet')``, and a file named as a table, ``FROM 'x.parquet'``), through
        every view it reads (a table or view given by its name too): a view's query is read from ``duckdb_views()``;
        one whose query DuckDB cannot parse back counts every quoted string of its text as a file it may read."""
        if isinstance(data, pl.LazyFrame):
            return scanned_files(data)
        if is_path(data):
            try:
                data = self.table(data)
            except InvalidParameterError:  # no such table: the road's table() names it
                return []
        if not isinstance(data, duckdb.DuckDBPyRelation):
            return []
        try:
            query = data.sql_query()
        except duckdb.Error:  # a relation over a Python object has no query text to parse: it reads no file
            return []
        return list(dict.fromkeys(self._query_files(query, set())))

    def _query_files(
        self, query: str, seen: set[tuple[str, str, str]], homes: tuple[tuple[str, str], ...] = (("", ""),)
    ) -> list[str]:
        """The files `query` names (:func:`_named_files`) and those of the views and table macros it reads, each
        once; its names without a schema resolve in `homes` (:meth:`_in_scope`)."""
        tree = self._parsed(query)
        if tree is None:
            return []
        files = _named_files(tree)
        for ref, given in _table_calls(tree):
            for macro, sql in self._macros(ref, homes):
                self._refuse_defaulted_files(macro, sql, given)
                if macro not in seen:
                    seen.add(macro)
                    # its parameters' values: the call's, above; DuckDB binds its names where it is called (the
                    # caller's scope), not in its own schema: both are followed
                    files += self._query_files(sql, seen, (macro[:2], *homes))
        for ref in _base_tables(tree):
            for view, sql in self._views(ref, homes):
                if view in seen:
                    continue
                seen.add(view)
                text = sql.strip().rstrip(";")
                # the query follows an AS of "CREATE VIEW name [(columns)] AS query": the first that parses
                starts = [m.end() for m in re.finditer(r"\bAS\b", text, re.I)]
                body = next((text[i:] for i in starts if self._parsed(text[i:]) is not None), None)
                if body is None:  # not parsed back: every quoted string may be a file it reads
                    files += [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", text)]
                else:
                    files += self._query_files(body, seen, (view[:2],))
        return files

    def _refuse_defaulted_files(self, macro: tuple[str, str, str], sql: str, given: tuple[int, frozenset[str]]) -> None:
        """Refuse a call of table macro `macro` (catalog, schema, ``"macro "`` + name; its query `sql`) that leaves a
        parameter its query reads as a file to its default value: DuckDB does not show a macro's defaults
        (``duckdb_functions()`` has the parameters' names and the query only), so the file it reads is not known
        and the output could replace it (fail closed). `given`: the call's arguments (:func:`_table_calls`)."""
        files = _file_parameters(self._parsed(sql) or [])
        if not files:
            return
        catalog, schema, name = macro[0], macro[1], macro[2].removeprefix("macro ")
        lists = self.con.execute(
            "SELECT parameters FROM duckdb_functions() WHERE function_type = 'table_macro' AND database_name = $1 "
            "AND schema_name = $2 AND function_name = $3 AND macro_definition = $4",
            [catalog, schema, name, sql],
        ).fetchall()
        positional, named = given
        for (parameters,) in lists:
            left = [p for p in list(parameters or [])[positional:] if p.lower() not in named and p.lower() in files]
            if left:
                raise InvalidParameterError(
                    f"table macro {schema}.{name} reads parameter {left[0]!r} as a file, left to its default value "
                    f"by the call, which DuckDB does not show: the run cannot tell which file it reads (an output "
                    f"could replace it); give {left[0]} in the call"
                )

    def _parsed(self, query: str) -> list[Any] | None:
        """DuckDB's parse of a SELECT query (``json_serialize_sql``), None when it is not one."""
        try:
            rows = self.con.execute("SELECT json_serialize_sql(?::VARCHAR)", [query]).fetchall()
        except duckdb.Error:
            return None
        tree = [json.loads(row[0]) for row in rows]
        return None if any(t.get("error") for t in tree) else tree

    def _views(
        self, ref: tuple[str, str, str], homes: tuple[tuple[str, str], ...]
    ) -> list[tuple[tuple[str, str, str], str]]:
        """The views a table reference (catalog, schema, name; '' when not given) may name, with their SQL text."""
        return self._named(_VIEWS, ref, homes, "")

    def _macros(
        self, ref: tuple[str, str, str], homes: tuple[tuple[str, str], ...]
    ) -> list[tuple[tuple[str, str, str], str]]:
        """The table macros a table function call (catalog, schema, name; '' when not given) may name, with their
        query (``duckdb_functions()``)."""
        return self._named(_TABLE_MACROS, ref, homes, "macro ")

    def _named(
        self, query: str, ref: tuple[str, str, str], homes: tuple[tuple[str, str], ...], kind: str
    ) -> list[tuple[tuple[str, str, str], str]]:
        """The catalog objects of `query` (rows: catalog, schema, name, SQL) that `ref` may name, in scope, each as
        (catalog, schema, `kind` + name) with its SQL."""
        catalog, schema, name = ref
        rows = self.con.execute(query, [name, schema, catalog]).fetchall()
        found = self._in_scope(rows, schema, homes)
        if schema and not catalog:  # a.b: a may be a catalog too (an attached database: its objects in any schema)
            found += self.con.execute(query, [name, "", schema]).fetchall()
        return [((str(d), str(s), f"{kind}{n}"), str(sql or "")) for d, s, n, sql in dict.fromkeys(found)]

    def _in_scope(self, rows: list[Any], schema: str, homes: tuple[tuple[str, str], ...]) -> list[Any]:
        """The rows (catalog, schema, name, ...) a name without a schema may resolve to, for each of `homes` (a
        catalog and schema; ('', ''): none): those of the home (that of the view whose query names it: DuckDB binds a
        view's names there first), else those of a schema on the search path (``current_schemas(true)``: the current
        one, ``main``, the temporary one), else every row (each may be it). A table macro's names have two homes (its
        own schema and the scope it is called in: DuckDB binds them in the latter): every one is followed."""
        if schema:
            return rows
        path = self._search_path()
        found = []
        for home in homes:
            mine = [r for r in rows if (str(r[0]).lower(), str(r[1]).lower()) == tuple(h.lower() for h in home)]
            found += mine or [r for r in rows if path(str(r[0]).lower(), str(r[1]).lower())] or rows
        return found

    def _search_path(self) -> Callable[[str, str], bool]:
        """Whether a (lower-cased) catalog and schema is on the search path: the current catalog's current schema,
        the temporary and system ones, and those of ``search_path`` (``db2.main`` after ``USE db2``; an entry of one
        part is a schema of any catalog, or a catalog). With a quoted entry, any catalog's schema of a name in
        ``current_schemas(true)`` (the search path's schemas, without their catalogs)."""
        database, schema, schemas, setting = self.con.execute(
            "SELECT current_database(), current_schema(), current_schemas(true), current_setting('search_path')"
        ).fetchall()[0]
        if '"' in str(setting):
            names = {str(s).lower() for s in schemas}
            return lambda c, s: s in names
        pairs = {(str(database).lower(), str(schema).lower()), ("temp", "main"), ("system", "main")}
        pairs |= {("system", "pg_catalog"), ("system", "information_schema")}
        ones = set()
        for entry in (e.strip().lower() for e in str(setting or "").split(",") if e.strip()):
            if "." in entry:
                catalog, _, name = entry.partition(".")
                pairs.add((catalog, name))
            else:
                ones.add(entry)
        return lambda c, s: (c, s) in pairs or s in ones or c in ones

    def read_parquet(self, path: str | Path) -> duckdb.DuckDBPyRelation:
        """A Parquet file, or a folder of parts read in the order of their names (as Polars reads it); a path that
        exists is read by its name (``p[1].parquet`` is no pattern), one that does not as DuckDB reads it. Its rows
        reach Polars with the Datetime units Polars reads the file with (:func:`in_source_units`: DuckDB reads
        milliseconds as microseconds), so they are labelled as on the Polars engine: the relation carries them
        (:meth:`units`)."""
        check_source(path)  # one that names no file refused in the words of the Polars road (not DuckDB's own)
        if Path(path).is_dir():
            table = self.con.read_parquet([literal_path(p, "duckdb") for p in parquet_parts(path)])
        else:
            table = self.con.read_parquet(named_path(path, "duckdb"))
        units, enums = source_types(path)
        return self._carrying(_as_enums(table, enums), units)

    def schema(self, table: duckdb.DuckDBPyRelation) -> pl.Schema:
        """The columns as Polars types; an INTERVAL as a Duration (Polars cannot import one: it is named here, so a
        quasi-identifier of that type is refused by the request, as on Polars), a HUGEINT as an Int128 and a UHUGEINT
        as a UInt128 (Polars would be handed a Decimal(38, 0), which a UHUGEINT wraps in and a HUGEINT overflows:
        named here, so the capability table refuses them, naming the column)."""
        own = {c: _OWN_TYPES[str(t)] for c, t in zip(table.columns, table.types) if str(t) in _OWN_TYPES}
        empty = table.limit(0)
        if own:
            empty = empty.project(", ".join(f"NULL::BIGINT AS {_q(c)}" if c in own else _q(c) for c in table.columns))
        with interruptible(self.con.interrupt):
            schema = self._polars(empty, self.units(table)).schema
        return pl.Schema({c: own.get(c, t) for c, t in schema.items()})

    def _counts(self, table: duckdb.DuckDBPyRelation, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        cols, cap = ", ".join(_q(k) for k in keys), "" if limit is None else f" LIMIT {int(limit)}"
        return self._fetch(table, f"SELECT {cols}, count(*)::BIGINT AS count FROM {{view}} GROUP BY ALL{cap}")

    def first_rows(self, table: duckdb.DuckDBPyRelation, keys: Sequence[str]) -> pl.DataFrame:
        cols = ", ".join(_q(k) for k in keys)
        numbered = f"SELECT {cols}, (row_number() OVER () - 1)::BIGINT AS {_q(FIRST_ROW)} FROM {{view}}"
        return self._fetch(
            table, f"SELECT {cols}, min({_q(FIRST_ROW)}) AS {_q(FIRST_ROW)} FROM ({numbered}) GROUP BY ALL"
        )

    def distinct(self, table: duckdb.DuckDBPyRelation, columns: Sequence[str]) -> dict[str, int]:
        exprs = ", ".join(
            f"(count(DISTINCT {_q(c)}) + coalesce(max(({_q(c)} IS NULL)::INT), 0))::BIGINT AS {_q(c)}" for c in columns
        )
        return self._fetch(table, f"SELECT {exprs} FROM {{view}}").row(0, named=True)

    def marginals(self, table: duckdb.DuckDBPyRelation, qids: Sequence[str]) -> dict[str, pl.DataFrame]:
        return labelled_marginals(grouping_set_counts(self, table, qids))

    def sample(self, table: duckdb.DuckDBPyRelation, key: tuple[int, int, int], threshold: int) -> Any:
        """The rows the keyed hash keeps (:func:`polars_anon.privacy.differential.sample_sql_steps`), in input order."""
        view = self.view(table)
        query = f"SELECT *, (row_number() OVER () - 1)::BIGINT AS {ROW} FROM {view}"
        for i, step in enumerate(sample_sql_steps(key, "duckdb")):
            how = f"*, {step} AS {HASH}" if i == 0 else f"* REPLACE ({step} AS {HASH})"
            query = f"SELECT {how} FROM ({query})"
        return self.sql(f"SELECT * EXCLUDE ({ROW}, {HASH}) FROM ({query}) WHERE {HASH} < {int(threshold)}")

    def aggregate(
        self, table: duckdb.DuckDBPyRelation, request: Request, counts: TupleCounts | None = None
    ) -> EngineAggregates:
        return grouped_aggregates(self, table, request)  # its own group-by, kept (GroupBys): counts are not read

    def classes(
        self,
        table: duckdb.DuckDBPyRelation,
        qids: Sequence[str],
        attributes: Sequence[str],
        labels: Mapping[str, pl.Series],
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        return grouped_classes(self, table, qids, attributes)

    def publish(
        self, table: duckdb.DuckDBPyRelation, data: Aggregated, tmap: TupleMap, request: Request
    ) -> duckdb.DuckDBPyRelation:
        assert data.native is not None  # the engine's aggregation pass keeps its own group-by
        return self.join_map(table, engine_map(tmap, data.native, request), request)

    def expand(self, classes: pl.DataFrame, columns: Sequence[str]) -> duckdb.DuckDBPyRelation:
        """The rows of `classes` sorted (see :meth:`polars_anon.engines.Engine.expand`): each class ``unnest``-ed
        over ``range(size)``, ordered in the binary collation (UTF-8 bytes, whatever the connection's
        ``default_collation``; DuckDB's sort spills beyond its memory limit)."""
        name, cols = self.register(classes), ", ".join(_q(c) for c in columns)
        keys = ", ".join(f'{_q(c)} COLLATE "binary" ASC NULLS LAST' for c in columns)
        rows = f"SELECT {cols}, unnest(range({_q(SIZE)})) AS __anon_i FROM {name}"
        return self.con.sql(f"SELECT {cols} FROM ({rows}) ORDER BY {keys}")

    def join_map(
        self,
        table: duckdb.DuckDBPyRelation,
        mapping: Any,
        request: Request,
        row_key: str | None = None,
    ) -> duckdb.DuckDBPyRelation:
        """Join `mapping` (on the driver, or a relation of this connection) to the rows, in input order."""
        if row_key is not None:
            raise NotImplementedError("engine 'duckdb' has no planner with a row map")
        qids, columns = list(request.qids), request.published_columns
        view = self.view(table)
        mapped = self.register(mapping) if isinstance(mapping, pl.DataFrame) else self.view(mapping)
        out = ", ".join(f"m.{_q(out_col(c))} AS {_q(c)}" if c in qids else f"t.{_q(c)}" for c in columns)
        on = " AND ".join(f"t.{_q(q)} IS NOT DISTINCT FROM m.{_q(key_col(q))}" for q in qids)
        # the ORDER BY keeps the input order once DuckDB reads in parallel (tests/engines/test_duckdb_row_order.py)
        return self.sql(
            f"SELECT {out} FROM (SELECT *, row_number() OVER () AS __anon_rowid FROM {view}) t "
            f"JOIN {mapped} m ON {on} WHERE NOT m.{_q(SUPPRESSED)} ORDER BY t.__anon_rowid ASC"
        )

    # ------------------------------------------------------------ SQL rounds (polars_anon.engines.planners.mondrian)
    quote = staticmethod(_q)

    def sql(self, query: str) -> duckdb.DuckDBPyRelation:
        """The relation of a query over the names this engine made (lazy), carrying the :meth:`units` of the
        relations it reads by those names (a column two of them carry in different units: in DuckDB's own)."""
        carried: dict[str, TimeUnit] = {}
        clash: set[str] = set()
        for name in dict.fromkeys(re.findall(r"__anon_\w+", query)):
            for column, unit in self._named_units.get(name, {}).items():
                clash |= {column} if carried.setdefault(column, unit) != unit else set()
        return self._carrying(self.con.sql(query), {c: u for c, u in carried.items() if c not in clash})

    def register(self, frame: pl.DataFrame) -> str:
        """A name the SQL can read for a frame on the driver (handed over as Arrow)."""
        name = f"__anon_reg_{uuid.uuid4().hex[:12]}"
        self.con.register(name, frame.to_arrow())
        return name

    def keep(self, table: duckdb.DuckDBPyRelation) -> str:
        """Materialize `table` now (a temporary table, spilling beyond the memory limit); its name."""
        name, view = f"__anon_tmp_{uuid.uuid4().hex[:12]}", self.view(table)
        with interruptible(self.con.interrupt):  # TEMP: nothing written into a database file
            self.con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM {view}")
        self.con.unregister(view)
        carried = self._named_units.pop(view, None)
        if carried:
            self._named_units[name] = carried
        return name

    def drop(self, name: str) -> None:
        """Forget a table made by :meth:`keep` or :meth:`register`."""
        self._named_units.pop(name, None)
        if name.startswith("__anon_reg_"):
            self.con.unregister(name)
        else:
            self.con.execute(f"DROP TABLE IF EXISTS {_q(name)}")

    @staticmethod
    def sorted_set(expr: str) -> str:
        """SQL aggregate: the distinct values of `expr` in a group, sorted, as a list."""
        return f"list_sort(list(DISTINCT {expr}), 'ASC', 'NULLS LAST')"

    def write(self, table: duckdb.DuckDBPyRelation, path: str | Path) -> None:
        """Write `table` to Parquet, each Datetime column without zone in the unit it reaches Polars in
        (:meth:`units`): a job's ``Datetime('ms')`` input is written in ``ms``, as Polars writes it, not in the
        microseconds DuckDB read it as. A zoned one is written as DuckDB holds it (the instant, in UTC, in ``us``).
        Every column is written nullable (optional), as Polars and Spark write it (:func:`_nullable`)."""
        with interruptible(self.con.interrupt):
            _nullable(_in_units(table, self.units(table))).to_parquet(str(path))

    def to_polars(self, table: duckdb.DuckDBPyRelation) -> pl.DataFrame:
        with interruptible(self.con.interrupt):
            return self._polars(table, self.units(table))

    @staticmethod
    def _polars(relation: duckdb.DuckDBPyRelation, units: Mapping[str, TimeUnit]) -> pl.DataFrame:
        """The rows of `relation` in Polars: each ENUM column as a Polars Enum of the same values in the same order
        (DuckDB hands it over as a Categorical, which sorts its values as text), each Datetime in `units`."""
        enums = {
            c: pl.Enum(cast(list[str], dict(t.children)["values"]))
            for c, t in zip(relation.columns, relation.types)
            if t.id == "enum"
        }
        return in_source_units(in_enums(relation.pl(), enums), units)

    def __repr__(self) -> str:
        return "DuckDBEngine()"


_NAIVE = {"ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}
"""DuckDB's timestamp type without time zone of each Polars time unit."""


def _as_enums(table: duckdb.DuckDBPyRelation, enums: Mapping[str, pl.Enum]) -> duckdb.DuckDBPyRelation:
    """`table` with each column named in `enums` (a Polars Enum that reached DuckDB as text: through Arrow, or from
    a Parquet file Polars wrote) cast to a DuckDB ENUM of the same values in the same order: DuckDB then groups, sorts
    and hands it back in that order (:meth:`DuckDBEngine.to_polars`), and the macros read it so too.

    >>> con = duckdb.connect()
    >>> t = _as_enums(con.sql("SELECT 'mid' AS s UNION ALL SELECT 'low'"), {"s": pl.Enum(["mid", "low"])})
    >>> t.order("s").fetchall()
    [('mid',), ('low',)]
    """
    given = {c: e for c, e in enums.items() if c in table.columns and len(e.categories)}
    if not given:
        return table
    types = {c: "ENUM(" + ", ".join(duckdb_literal(v) for v in e.categories.to_list()) + ")" for c, e in given.items()}
    return table.project(", ".join(f"{_q(c)}::{types[c]} AS {_q(c)}" if c in types else _q(c) for c in table.columns))


def _in_units(table: duckdb.DuckDBPyRelation, units: Mapping[str, TimeUnit]) -> duckdb.DuckDBPyRelation:
    """`table` with each timestamp column without zone named in `units` cast to that unit (the rest as they are).

    >>> con = duckdb.connect()
    >>> _in_units(con.sql("SELECT TIMESTAMP '2020-01-01' AS t, 1 AS n"), {"t": "ms"}).types
    [TIMESTAMP_MS, INTEGER]
    """
    naive = set(_NAIVE.values())
    cast = {
        c: _NAIVE[units[c]]
        for c, t in zip(table.columns, table.types)
        if c in units and str(t) in naive and str(t) != _NAIVE[units[c]]
    }
    if not cast:
        return table
    return table.project(", ".join(f"{_q(c)}::{cast[c]} AS {_q(c)}" if c in cast else _q(c) for c in table.columns))


def _nullable(table: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """`table` with each column's values as they are, but no longer known to hold no null: DuckDB's Parquet writer
    marks a column ``required`` (not null) when its statistics say it has no null (a column read from a Parquet file
    whose footer counts none, published untouched), where Polars and Spark write every column ``optional``; the same
    job then wrote another schema on DuckDB (``pq.read_schema``: ``int64 not null`` against ``int64``). A ``CASE``
    that gives the value, or a null where it is null, carries no statistics of nulls.

    >>> con = duckdb.connect()
    >>> path = f"{tempfile.mkdtemp()}/t.parquet"
    >>> _nullable(con.sql("SELECT 1 AS n")).to_parquet(path)
    >>> con.sql(f"SELECT repetition_type FROM parquet_schema('{path}') WHERE name = 'n'").fetchall()
    [('OPTIONAL',)]
    """
    columns = [_q(c) for c in table.columns]
    return table.project(", ".join(f"CASE WHEN {c} IS NULL THEN NULL ELSE {c} END AS {c}" for c in columns))


def _bytewise(table: duckdb.DuckDBPyRelation) -> duckdb.DuckDBPyRelation:
    """`table` with each VARCHAR column under the ``binary`` collation: every group-by, join and sort the road runs on
    it compares UTF-8 bytes, as Polars does, whatever the connection's ``default_collation`` (under ``'nocase'`` the
    road merged 'F' and 'f' into one class and published 'f' as 'F') or a collation the column was declared with. The
    collation travels with the column through views, subqueries, joins and temporary tables; the connection's
    settings are left as they are.

    >>> con = duckdb.connect()
    >>> _ = con.execute("SET default_collation = 'nocase'")
    >>> t = _bytewise(con.sql("SELECT * FROM (VALUES ('F', 1), ('f', 2)) v(sex, n)"))
    >>> sorted(t.aggregate("sex, count(*)").fetchall())
    [('F', 1), ('f', 1)]
    """
    text = {c for c, t in zip(table.columns, table.types) if t.id == "varchar"}
    if not text:
        return table
    return table.project(
        ", ".join(f'{_q(c)} COLLATE "binary" AS {_q(c)}' if c in text else _q(c) for c in table.columns)
    )


_NO_LABEL_TYPES = {"time with time zone": "TIME WITH TIME ZONE"}
"""DuckDB types (``DuckDBPyType.id``) whose values reach Polars changed (a TIMETZ loses its offset, so two instants
would share one label), by the name the SQL macros give them (``anon_label``)."""


def _refuse_unlabelled_types(result: duckdb.DuckDBPyRelation) -> None:
    """Refuse a column of `result` of a type in :data:`_NO_LABEL_TYPES`, in the words of the SQL macros.

    >>> _refuse_unlabelled_types(duckdb.sql("SELECT TIMETZ '09:00:00+02' AS c"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'c' has type TIME WITH TIME ZONE, which has no label ...
    """
    for column, dtype in zip(result.columns, result.types):
        if dtype.id in _NO_LABEL_TYPES:
            raise InvalidParameterError(
                f"column {column!r} has type {_NO_LABEL_TYPES[dtype.id]}, which has no label polars_anon matches "
                "(Polars drops the offset, so two instants would share one); cast it first, to VARCHAR or to TIME"
            )


def _refuse_end_of_day(result: duckdb.DuckDBPyRelation, frame: pl.DataFrame) -> None:
    """Refuse the TIME 24:00:00 in a column of `result` (`frame`: it in Polars, which reads that time as null; DuckDB
    is asked only of the TIME columns holding nulls there, all in one query), naming the first such column, in the
    words of the SQL macros.

    >>> rel = duckdb.sql("SELECT TIME '24:00:00' AS c")
    >>> _refuse_end_of_day(rel, rel.pl())
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'c': the time 24:00:00 has no label (Polars reads it as null); \
write it as 00:00:00 or leave it out
    """
    columns = [
        column
        for column, dtype in zip(result.columns, result.types)
        if dtype.id == "time" and frame[column].null_count()
    ]
    if not columns:
        return
    (found,) = result.aggregate(
        ", ".join(f"coalesce(bool_or({_q(column)} = TIME '24:00:00'), false)" for column in columns)
    ).fetchall()
    for column, held in zip(columns, found):
        if held:
            raise InvalidParameterError(
                f"column {column!r}: the time 24:00:00 has no label (Polars reads it as null); write it as 00:00:00 "
                "or leave it out"
            )


def memory_size(name: str, value: object) -> str:
    """`value` if it is a memory size as DuckDB spells one (``"1GB"``, ``"512 MiB"``), else an error naming `name`.

    >>> memory_size("memory_limit", "2GB")
    '2GB'
    >>> memory_size("memory_limit", "lots")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: memory_limit must be a memory size such as '1GB' or '512MiB', got 'lots'
    """
    if not isinstance(value, str) or not _SIZE.fullmatch(value):
        raise InvalidParameterError(f"{name} must be a memory size such as '1GB' or '512MiB', got {value!r}")
    return value


_SIZE = re.compile(r"\s*\d+(\.\d+)?\s*([KMGT]i?B|B)\s*", re.IGNORECASE)


def _close(con: duckdb.DuckDBPyConnection, spill: str) -> None:
    try:
        con.close()
    finally:  # the folder goes even when closing fails
        shutil.rmtree(spill, ignore_errors=True)
