"""Engines: where the rows live. Polars (the default), DuckDB or Apache Spark.

Every engine is one implementation of :class:`Engine`, and every engine runs the one road
(:mod:`polars_anon.pipeline.road`): the engine aggregates the rows by the quasi-identifiers
(and by each sensitive attribute a privacy model reads) and hands those class aggregates to
the same checks, the same method and the same report builder on the driver; the method's
:class:`~polars_anon.tuplemap.TupleMap` comes back to the engine, which publishes it with its
own join, writes Parquet with its own writer to a temporary name, groups the WRITTEN data
again to check every guarantee (fail closed) and only then lets it be renamed into place.
Methods run inside an engine beyond the driver are its planners
(:mod:`polars_anon.engines.planners`).

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
from typing import Any, Literal, Protocol

import polars as pl

from polars_anon._passes import TupleCounts, as_string_counts
from polars_anon._validate import check_choice
from polars_anon.io import parquet_footer
from polars_anon.labels import label_expr, label_series
from polars_anon.locations import is_uri
from polars_anon.pipeline.state import (
    Aggregated,
    Counted,
    EngineAggregates,
    counted_attributes,
    first_rows_frame,
    needs_first_rows,
    population_model,
)
from polars_anon.privacy.counts import COUNT, count_population
from polars_anon.privacy.evaluate import indexed
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = [
    "ENGINES",
    "Engine",
    "GroupBys",
    "SQLEngine",
    "engine_map",
    "enum_columns",
    "get_engine",
    "grouped_aggregates",
    "grouped_classes",
    "grouping_set_counts",
    "in_enums",
    "in_source_units",
    "key_col",
    "labelled_marginals",
    "source_types",
]

ENGINES = ("polars", "duckdb", "spark")

TimeUnit = Literal["ns", "us", "ms"]


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
    >>> def group(table, keys, limit):
    ...     calls.append((keys, limit))
    ...     return pl.DataFrame({"count": [1, 2]}).head(limit or 2)
    >>> counts = GroupBys(group)
    >>> t = object()
    >>> counts(t, ["a"], limit=5) is counts(t, ["a"]), calls
    (True, [(['a'], 6)])
    >>> counts(t, ["b"], limit=1).height, counts(t, ["b"]).height, calls[1:]
    (2, 2, [(['b'], 2), (['b'], None)])
    """

    def __init__(
        self,
        group: Callable[[Any, list[str], int | None], pl.DataFrame],
        sets: Callable[[Any, list[list[str]]], list[pl.DataFrame]] | None = None,
    ) -> None:
        self._group = group
        self._sets = sets
        self._last: tuple[object, tuple[str, ...], pl.DataFrame, bool] | None = None
        self._many: tuple[object, dict[tuple[str, ...], pl.DataFrame]] | None = None

    def prefetch(self, table: object, key_sets: Sequence[Sequence[str]]) -> None:
        """Group `table` by each of `key_sets` in one pass, when the engine groups several key sets at once (Spark:
        one query); the results are kept for `table` (until the next prefetch) and served by later calls. On an
        engine that does not, nothing happens: each call groups.

        >>> passes = []
        >>> def sets(table, key_sets):
        ...     passes.append(key_sets)
        ...     return [pl.DataFrame({"count": [len(keys)]}) for keys in key_sets]
        >>> counts = GroupBys(lambda table, keys, limit: pl.DataFrame({"count": [0]}), sets)
        >>> t = object()
        >>> counts.prefetch(t, [["a"], ["a", "b"], ["a"]])
        >>> counts(t, ["a", "b"])["count"].item(), counts(t, ["a"])["count"].item(), passes
        (2, 1, [[['a'], ['a', 'b']]])
        """
        wanted = [list(keys) for keys in dict.fromkeys(tuple(keys) for keys in key_sets)]
        if self._sets is None or len(wanted) < 2:
            return
        self._many = (table, {tuple(keys): frame for keys, frame in zip(wanted, self._sets(table, wanted))})

    def __call__(self, table: object, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        many = self._many
        if many is not None and many[0] is table and tuple(keys) in many[1]:
            return many[1][tuple(keys)]
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
    """One engine: the steps of the road that touch rows. Tables are the engine's own (a Polars LazyFrame,
    a DuckDB relation, a Spark DataFrame)."""

    name: str

    def table(self, data: object) -> Any:
        """The engine's table for `data`: its own table, or a Polars frame handed over."""
        ...

    def sources(self, data: object) -> list[str]:
        """The files `data` (as given to :meth:`table`) reads, as far as the engine can tell (none for rows in
        memory): a writer never replaces them (:meth:`polars_anon.outputs.Outputs.protect`)."""
        ...

    def schema(self, table: Any) -> pl.Schema:
        """The table's columns as Polars types (no row is read)."""
        ...

    def aggregate(self, table: Any, request: Request, counts: TupleCounts | None = None) -> EngineAggregates:
        """The aggregation pass: the class aggregates (qids as String labels, as Polars spells them), the models'
        counts, the distinct values of the undeclared columns; unchecked (the road checks them). `counts`: the
        tuple pass a caller already made over `table` (Polars reads its counts from it; DuckDB and Spark keep
        their own group-by, :class:`GroupBys`)."""
        ...

    def distinct(self, table: Any, columns: Sequence[str]) -> dict[str, int]:
        """The number of distinct values of each column, null counted as a value."""
        ...

    def marginals(self, table: Any, qids: Sequence[str]) -> dict[str, pl.DataFrame]:
        """Per qid, its distinct values (String labels, null kept) and their ``size``, in one pass over `table`
        (:func:`polars_anon.request.check_marginals` reads them; their sizes sum to the row count)."""
        ...

    def sample(self, table: Any, key: tuple[int, int, int], threshold: int) -> Any:
        """The rows the keyed sampling hash keeps (:func:`polars_anon.privacy.differential.keep_mask`: the 0-based
        row number in input order, hashed with `key`, below `threshold`), in input order."""
        ...

    def publish(self, table: Any, data: Aggregated, tmap: TupleMap, request: Request) -> Any:
        """The published table of a checked tuple map computed on the driver from `data`."""
        ...

    def expand(self, classes: pl.DataFrame, columns: Sequence[str]) -> Any:
        """A table of the rows of `classes` (one row per published tuple, its ``size``): each tuple `size` times,
        sorted by `columns` (each ascending, Strings by their UTF-8 bytes, nulls last). A differentially private
        release is published so: its rows hold its qids only, and their order is a function of the published
        multiset alone, alike on every engine (where a row sat in the input must not show)."""
        ...

    def join_map(self, table: Any, mapping: Any, request: Request, row_key: str | None = None) -> Any:
        """Join an engine map (:class:`~polars_anon.pipeline.state.EnginePlan`) to the rows of `table`, drop the
        suppressed ones, and keep the input's columns (less those dropped) with each qid's published label."""
        ...

    def classes(
        self, table: Any, qids: Sequence[str], attributes: Sequence[str], labels: Mapping[str, pl.Series]
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        """The group-by of a published table (for the independent check): its classes (sorted, indexed, ``size``)
        and each sensitive attribute's (class, value, ``count``) frame (None: counted as columns of the classes)."""
        ...

    def write(self, table: Any, path: str | Path) -> None:
        """Write the table as Parquet at `path` (nothing exists there yet)."""
        ...

    def read_parquet(self, path: str | Path) -> Any:
        """A table reading the Parquet at `path` (a file, or a folder of parts)."""
        ...

    def to_polars(self, table: Any) -> pl.DataFrame:
        """Collect the table on the driver."""
        ...


class SQLEngine(Engine, Protocol):
    """An engine the planners run SQL on (DuckDB, Spark): group-bys with a limit, and names the SQL can read.

    ``counts(table, keys, limit=None)`` (a :class:`GroupBys`): ``GROUP BY keys``, the keys (their own types, nulls
    kept as a group) and ``count`` (Int64); the last result is kept, so asking twice costs one pass. With `limit`,
    at most ``limit + 1`` rows (more than `limit`: the group-by has too many to bring to the driver).
    """

    counts: GroupBys

    def quote(self, name: str) -> str:
        """`name` as a quoted SQL identifier of the engine's dialect."""
        ...

    def sql(self, query: str) -> Any:
        """The (lazy) table of a query over names made by :meth:`view`, :meth:`register` and :meth:`keep`."""
        ...

    def view(self, table: Any) -> str:
        """A name the SQL can read for `table`."""
        ...

    def register(self, frame: pl.DataFrame) -> str:
        """A name the SQL can read for a frame on the driver (sent as Arrow)."""
        ...

    def keep(self, table: Any) -> str:
        """Materialize `table` now (engine side); its name."""
        ...

    def drop(self, name: str) -> None:
        """Forget a name made by :meth:`register` or :meth:`keep`."""
        ...

    def sorted_set(self, expr: str) -> str:
        """SQL aggregate: the distinct values of `expr` in a group, sorted, as a list."""
        ...

    def first_rows(self, table: Any, keys: Sequence[str]) -> pl.DataFrame:
        """``GROUP BY keys``: the keys (their own types) and the smallest position of a row of each tuple
        (:data:`~polars_anon.pipeline.state.FIRST_ROW`: any key increasing in input order), one read."""
        ...


def grouping_set_counts(engine: SQLEngine, table: Any, qids: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Per qid, its distinct values (the engine's type, null included) and ``count``: one query (grouping sets), one
    pass over `table`."""
    Q = engine.quote
    cols = ", ".join(Q(q) for q in qids)
    flags = ", ".join(f"GROUPING({Q(q)}) AS {Q(f'__anon_g{j}')}" for j, q in enumerate(qids))
    sets = ", ".join(f"({Q(q)})" for q in qids)
    rows = engine.view(table)
    query = (
        f"SELECT {cols}, {flags}, CAST(COUNT(*) AS BIGINT) AS {Q(COUNT)} FROM {Q(rows)} GROUP BY GROUPING SETS ({sets})"
    )
    both = engine.to_polars(engine.sql(query))  # materializes: one row per qid and value
    return {
        q: both.filter(pl.col(f"__anon_g{j}") == 0).select(q, COUNT).sort(q, nulls_last=True)
        for j, q in enumerate(qids)
    }


def source_types(path: str | Path) -> tuple[dict[str, TimeUnit], dict[str, pl.Enum]]:
    """What the local Parquet source `path` holds that an engine reading the file itself loses, from one read of its
    footer as Polars reads it (a folder or a pattern: its first file's): the time unit of each Datetime column (DuckDB
    and Spark read milliseconds as microseconds) and the Enum of each Enum column (Polars writes its categories into
    the file; the engines see text: the order of the values travels from here, a sensitive attribute's order for
    ordered t-closeness). Both empty for a URI or a source not readable here (the engine says why).

    >>> import tempfile, datetime
    >>> path = f"{tempfile.mkdtemp()}/t.parquet"
    >>> at = pl.Series([datetime.datetime(2020, 1, 1)], dtype=pl.Datetime("ms"))
    >>> pl.DataFrame({"at": at, "s": pl.Series(["mid"], dtype=pl.Enum(["low", "mid"]))}).write_parquet(path)
    >>> source_types(path), source_types("s3://bucket/t.parquet")
    (({'at': 'ms'}, {'s': Enum(categories=['low', 'mid'])}), ({}, {}))
    """
    footer = _footer(path)
    units: dict[str, TimeUnit] = {n: dtype.time_unit for n, dtype in footer.items() if isinstance(dtype, pl.Datetime)}
    return units, enum_columns(footer)


def enum_columns(schema: Mapping[str, pl.DataType]) -> dict[str, pl.Enum]:
    """The Enum columns of `schema` (a Polars frame's), each with its Enum: what an engine that has no such type
    carries beside its rows, so they reach Polars as Enums again (:func:`in_enums`)."""
    return {name: dtype for name, dtype in schema.items() if isinstance(dtype, pl.Enum)}


def in_enums(frame: pl.DataFrame, enums: Mapping[str, pl.Enum]) -> pl.DataFrame:
    """`frame` with each column named in `enums` cast to its Enum (an engine's text, or DuckDB's ENUM as a
    Categorical): its values sort, and are published, in the Enum's order, as on the Polars engine.

    >>> in_enums(pl.DataFrame({"s": ["mid", "low"]}), {"s": pl.Enum(["mid", "low"])})["s"].sort().to_list()
    ['mid', 'low']
    """
    cast = [pl.col(name).cast(dtype) for name, dtype in enums.items() if name in frame.columns]
    return frame.with_columns(cast) if cast else frame


def _footer(path: str | Path) -> pl.Schema:
    """The schema Polars reads the local Parquet source `path` with; empty for a URI or a source not readable here
    (the engine's own reader says why)."""
    if is_uri(str(path)):
        return pl.Schema()
    try:
        return parquet_footer(path)
    except Exception:  # noqa: BLE001  (not Parquet, or not readable here: the engine's reader says so itself)
        return pl.Schema()


def in_source_units(frame: pl.DataFrame, units: Mapping[str, TimeUnit]) -> pl.DataFrame:
    """`frame` with each Datetime column named in `units` in that unit (its zone kept): an engine's rows of a Parquet
    file it read itself, as Polars reads the file, so their labels are the Polars engine's (a Datetime[ms] value is
    labelled ``'2020-01-01 12:00:00.123'``, not ``'...123000'``); the values came from that unit, nothing is lost.

    >>> t = pl.DataFrame({"at": pl.Series([1_500], dtype=pl.Datetime("us"))})
    >>> in_source_units(t, {"at": "ms"})["at"].cast(pl.String).to_list()
    ['1970-01-01 00:00:00.001']
    """
    cast = [
        pl.col(name).dt.cast_time_unit(units[name])
        for name, dtype in frame.schema.items()
        if name in units and isinstance(dtype, pl.Datetime) and dtype.time_unit != units[name]
    ]
    return frame.with_columns(cast) if cast else frame


def labelled_marginals(per: Mapping[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Per qid, the values of `per` (a qid's values and ``count``) as String labels with their ``size``: what
    :func:`polars_anon.request.check_marginals` reads (a value's label as the aggregates spell it).

    >>> labelled_marginals({"x": pl.DataFrame({"x": [-0.0, None], "count": [2, 1]})})["x"].rows()
    [('0.0', 2), (None, 1)]
    """
    return {q: pl.DataFrame([label_series(f[q]), f[COUNT].alias(SIZE)]) for q, f in per.items()}


def grouped_aggregates(engine: SQLEngine, table: Any, request: Request) -> EngineAggregates:
    """The aggregation pass of an engine that groups by SQL (DuckDB, Spark): its group-by of the qids (kept by
    :class:`GroupBys`, so the road's size probe costs nothing more), each sensitive attribute a model reads
    counted as a (tuple, value, ``count``) frame, the undeclared columns' distinct counts, the population's
    tuple counts (read by Polars); for table risk models only, each tuple's first row (``first_rows``).
    The engine groups by the qids in their own types; the labels are cast to String with Polars, so the
    hierarchies see exactly the labels of the Polars engine."""
    qids, counted = list(request.qids), counted_attributes(request)
    native = engine.counts(table, qids)
    classes = as_string_counts(native, qids).rename({COUNT: SIZE}).with_columns(pl.col(SIZE).cast(pl.UInt32))
    long = {a: as_string_counts(engine.counts(table, [*qids, a]), qids, [a]) for a in counted}
    distinct = engine.distinct(table, request.undeclared) if request.undeclared else {}
    population = None
    model = population_model(request)
    if model is not None:
        population = count_population(model.population_frame, qids, model.name)  # one row per population tuple
    labels = {a: f[a].unique().sort(nulls_last=True) for a, f in long.items()}
    first_rows = None
    if needs_first_rows(request):  # table risk models only: the tie order of their single-class suppression
        first_rows = first_rows_frame(engine.first_rows(table, qids), qids)
    return EngineAggregates(classes, distinct, Counted(labels, long, population, first_rows), native=native)


def grouped_classes(
    engine: SQLEngine, table: Any, qids: Sequence[str], attributes: Sequence[str]
) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
    """An SQL engine's group-by of a published table: its classes (sorted, indexed) and each attribute's counts."""
    classes = indexed(engine.counts(table, list(qids)).rename({COUNT: SIZE}), qids)
    return classes, [engine.counts(table, [*qids, a]) for a in attributes]


def engine_map(tmap: TupleMap, native: pl.DataFrame, request: Request) -> pl.DataFrame:
    """The map in the engine's key types: ``__anon_in_<qid>`` (each original value, null included under
    ``null="suppress"``), ``__anon_out_<qid>`` (its published label) and ``__anon_suppressed``.

    The capability table refused the maps an engine cannot join (a tuple's rows split over classes, a row map
    computed on the driver) before any data was read."""
    qids = list(request.qids)
    frame = tmap.frame.select(*qids, *(out_col(q) for q in qids), SUPPRESSED)
    for q in qids:
        values = native.select(pl.col(q).unique())
        label = label_expr(q, values.schema[q])
        if q in request.hierarchies and request.null == "suppress":
            label = label.fill_null(request.hierarchies[q].root)
        lookup = values.select(pl.col(q).alias(key_col(q)), label.alias(q))
        frame = frame.join(lookup, on=q, how="inner", nulls_equal=True)
    return frame.select(*(key_col(q) for q in qids), *(out_col(q) for q in qids), SUPPRESSED)


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
    else one built with `master` and `config` pairs. ``"polars"``: the Polars engine (streaming).
    """
    check_choice("engine", name, ENGINES)
    if name == "duckdb":
        from polars_anon.engines.duckdb import DuckDBEngine

        if memory_limit is not None:
            return DuckDBEngine.own(memory_limit)
        return DuckDBEngine(connection)  # type: ignore[arg-type]
    if name == "spark":
        from polars_anon.engines.spark import SparkEngine, refuse_unreadable, session

        refuse_unreadable(data)  # before a session starts (tens of seconds): its refusal at once
        own = getattr(data, "sparkSession", None)
        return SparkEngine(own if own is not None else session(master, config))
    from polars_anon.engines.polars import POLARS

    return POLARS
