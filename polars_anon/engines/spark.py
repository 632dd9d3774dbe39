"""The Apache Spark engine: distributed group-bys, a broadcast (or shuffle) join, Spark's Parquet writer.

The class aggregates come to the driver as Arrow (``DataFrame.toArrow``); the map goes
back as a small DataFrame, broadcast to every executor when it has at most
:data:`BROADCAST_ROWS` rows, shuffled otherwise. The output is a folder of Parquet
parts (Spark's layout), written under a temporary name, re-read and checked by a
Spark group-by, then renamed into place (a local or mounted file system: the rename
is the commit).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from functools import reduce
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._passes import TupleCounts
from polars_anon.engines import GroupBys, engine_map, grouped_aggregates, grouped_classes, key_col
from polars_anon.errors import InvalidParameterError
from polars_anon.pipeline.state import Aggregated, EngineAggregates
from polars_anon.privacy.differential import HASH, ROW, sample_sql_steps
from polars_anon.quoting import spark_identifier
from polars_anon.request import Request
from polars_anon.tuplemap import SUPPRESSED, TupleMap, out_col

__all__ = ["BROADCAST_ROWS", "DEFAULTS", "LOCAL_DEFAULTS", "SparkEngine", "session"]

BROADCAST_ROWS = 2_000_000
"""Largest map (one row per original tuple) sent to every executor; a larger one is shuffle-joined."""

DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
}
"""Settings of a session this module builds (a given ``config`` pair wins): no progress bars, and an output
folder of Parquet parts only (no ``_SUCCESS`` marker, no ``.crc`` files), so Polars and DuckDB read it as is."""
LOCAL_DEFAULTS = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "8"}
"""Also set for a ``local[...]`` master: no web UI, few shuffle partitions (one machine)."""


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError as exc:
        raise InvalidParameterError(
            'engine "spark" needs pyspark: pip install "polars_anon[spark]" (and a Java 17+ runtime)'
        ) from exc
    return pyspark.sql


def session(master: str | None = None, config: Mapping[str, str] | None = None) -> Any:
    """The active Spark session, or a new one on `master` with `config` pairs.

    Under ``spark-submit`` leave `master` out: spark-submit's ``--master`` and ``--conf`` settings apply.
    """
    sql = _pyspark()
    active = sql.SparkSession.getActiveSession()
    if active is not None and master is None and not config:
        return active
    builder = sql.SparkSession.builder.appName("polars_anon")
    settings = dict(DEFAULTS)
    if master is not None:  # none given: spark-submit's --master (or pyspark's local[*])
        builder = builder.master(master)
        settings |= LOCAL_DEFAULTS if master.startswith("local") else {}
    for key, value in {**settings, **dict(config or {})}.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


_WIDER = {pl.UInt8: pl.Int16, pl.UInt16: pl.Int32, pl.UInt32: pl.Int64, pl.UInt64: pl.Int64}


def _signed(frame: pl.DataFrame) -> pl.DataFrame:
    """Spark has no unsigned integers: such columns become the signed type that holds them (UInt64 must fit Int64)."""
    wider = {c: _WIDER[t] for c, t in frame.schema.items() if t in _WIDER}
    too_big = [c for c, t in frame.schema.items() if t == pl.UInt64 and (frame[c].max() or 0) > 2**63 - 1]  # type: ignore[operator]
    if too_big:
        raise InvalidParameterError(
            f"column {too_big[0]!r} holds UInt64 values above Spark's largest integer (2**63 - 1)"
        )
    return frame.cast(wider) if wider else frame  # type: ignore[arg-type]


class SparkEngine:
    """Spark, on `spark` (a SparkSession)."""

    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.counts = GroupBys(self._counts)

    def table(self, data: object) -> Any:
        """A Spark DataFrame, a table name in the session's catalog, or a Polars frame (sent as Arrow)."""
        sql = _pyspark()
        if isinstance(data, sql.DataFrame):
            return data
        if isinstance(data, str):
            if not self.spark.catalog.tableExists(data):
                raise InvalidParameterError(f"Spark has no table or view {data!r} in this session's catalog")
            return self.spark.table(data)
        if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
            frame = data.collect() if isinstance(data, pl.LazyFrame) else data  # materializes: handed to Spark as Arrow
            return self.spark.createDataFrame(_signed(frame).to_arrow())
        raise InvalidParameterError(
            f"engine 'spark' takes a Spark DataFrame, a table name or a Polars frame, got {type(data).__name__}"
        )

    def read_parquet(self, path: Path) -> Any:
        return self.spark.read.parquet(str(path))

    def schema(self, table: Any) -> pl.Schema:
        return self.to_polars(table.limit(0)).schema

    def _counts(self, table: Any, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        grouped = table.groupBy(*keys).count()
        frame = self.to_polars(grouped if limit is None else grouped.limit(int(limit)))
        return frame.with_columns(pl.col("count").cast(pl.Int64))

    def distinct(self, table: Any, columns: Sequence[str]) -> dict[str, int]:
        F = _pyspark().functions
        exprs = [
            (F.count_distinct(F.col(c)) + F.coalesce(F.max(F.col(c).isNull().cast("int")), F.lit(0))).alias(c)
            for c in columns
        ]
        row = table.agg(*exprs).collect()[0]
        return {c: int(row[c]) for c in columns}

    def count_rows(self, table: Any) -> int:
        return int(table.count())

    def sample(self, table: Any, key: tuple[int, int, int], threshold: int) -> Any:
        """The rows the keyed hash keeps (:func:`polars_anon.privacy.differential.sample_sql_steps`), in input order.

        The row number is the partition's offset (rows of the partitions before it: one small group-by) plus the
        row's place in its partition (the low 33 bits of ``monotonically_increasing_id``), all in the JVM, as
        ``zipWithIndex`` numbers rows but without sending them through Python."""
        F = _pyspark().functions
        mid, low = F.monotonically_increasing_id(), (1 << 33) - 1
        numbered = table.withColumn(ROW, mid)
        sizes = numbered.groupBy(F.shiftright(F.col(ROW), 33).alias("p")).count().collect()
        offsets, total = [], 0
        for row in sorted(sizes, key=lambda r: int(r["p"])):
            offsets += [F.lit(int(row["p"])), F.lit(total)]
            total += int(row["count"])
        start = F.create_map(*offsets)[F.shiftright(F.col(ROW), 33)] if offsets else F.lit(0)
        numbered = numbered.withColumn(ROW, (start + F.col(ROW).bitwiseAND(F.lit(low))).cast("long"))
        for step in sample_sql_steps(key, "spark"):
            numbered = numbered.withColumn(HASH, F.expr(step))
        return numbered.filter(F.col(HASH) < F.lit(int(threshold))).drop(ROW, HASH)

    def aggregate(self, table: Any, request: Request, counts: TupleCounts | None = None) -> EngineAggregates:
        return grouped_aggregates(self, table, request)  # its own group-by, kept (GroupBys): counts are not read

    def classes(
        self, table: Any, qids: Sequence[str], attributes: Sequence[str], labels: Mapping[str, pl.Series]
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        return grouped_classes(self, table, qids, attributes)

    def publish(self, table: Any, data: Aggregated, tmap: TupleMap, request: Request) -> Any:
        assert data.native is not None  # the engine's aggregation pass keeps its own group-by
        return self.join_map(table, engine_map(tmap, data.native, request), request)

    def join_map(self, table: Any, mapping: pl.DataFrame | Any, request: Request, row_key: str | None = None) -> Any:
        """Join `mapping` (on the driver: broadcast when small; or a Spark DataFrame: shuffle-joined) to the rows:
        on the original qid values, or on the row id `row_key` of a row map (which `table` then carries)."""
        F = _pyspark().functions
        if isinstance(mapping, pl.DataFrame):
            m = self.spark.createDataFrame(mapping.to_arrow())
            if mapping.height <= BROADCAST_ROWS:
                m = F.broadcast(m)
        else:
            m = mapping
        qids, columns = list(request.qids), request.published_columns
        if row_key is not None:  # a row map: the rows in row-id order (the input's order)
            joined = table.join(m, on=table[row_key] == m[row_key], how="inner").filter(~m[SUPPRESSED])
            joined = joined.orderBy(table[row_key])
        else:
            on = reduce(lambda a, b: a & b, [table[q].eqNullSafe(m[key_col(q)]) for q in qids])
            joined = table.join(m, on=on, how="inner").filter(~m[SUPPRESSED])
        return joined.select(*(m[out_col(c)].alias(c) if c in qids else table[c] for c in columns))

    # ------------------------------------------------------------ SQL rounds (polars_anon.engines.planners.mondrian)
    quote = staticmethod(spark_identifier)

    def sql(self, query: str) -> Any:
        """The DataFrame of a query over the names this engine made (lazy)."""
        return self.spark.sql(query)

    def view(self, table: Any) -> str:
        """A temporary view of `table`, for the SQL that follows."""
        return self._name(table, "view")

    def register(self, frame: pl.DataFrame) -> str:
        """A temporary view of a frame on the driver (sent as Arrow)."""
        return self._name(self.spark.createDataFrame(_signed(frame).to_arrow()), "reg")

    def keep(self, table: Any) -> str:
        """Materialize `table` (a local checkpoint: computed now, its lineage cut, as rounds pile up); its view."""
        return self._name(table.localCheckpoint(eager=True), "tmp")

    def _name(self, table: Any, kind: str) -> str:
        name = f"__anon_{kind}_{uuid.uuid4().hex[:12]}"
        table.createOrReplaceTempView(name)
        return name

    def drop(self, name: str) -> None:
        """Forget a view made by :meth:`keep` or :meth:`register`."""
        self.spark.catalog.dropTempView(name)

    @staticmethod
    def sorted_set(expr: str) -> str:
        """SQL aggregate: the distinct values of `expr` in a group, sorted, as an array."""
        return f"sort_array(collect_set({expr}))"

    def write(self, table: Any, path: Path) -> None:
        table.write.mode("errorifexists").option("compression", "zstd").parquet(str(path))  # as Polars writes

    def to_polars(self, table: Any) -> pl.DataFrame:
        return pl.from_arrow(table.toArrow())  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"SparkEngine({self.spark.sparkContext.master})"
