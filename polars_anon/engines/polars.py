"""The Polars engine (the default): lazy frames, streaming passes, one tuple-key join, Polars' Parquet writer.

The rows are a LazyFrame (a ``scan_parquet`` streams); the aggregation pass is
:func:`polars_anon.anonymize.aggregate_rows` (group-bys over shares of the qid tuples, in
bounded memory); the map is published by :func:`polars_anon.publish.publish` (an Int64
tuple-key join, row order kept, suppression applied once, a row map joined on the row
number); the published table is written by ``sink_parquet`` and re-read by ``scan_parquet``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._validate import as_lazy
from polars_anon.anonymize import aggregate_rows, prepare
from polars_anon.pipeline.state import Aggregated, EngineAggregates
from polars_anon.privacy.evaluate import class_frames
from polars_anon.publish import publish
from polars_anon.request import Request
from polars_anon.tuplemap import TupleMap

__all__ = ["POLARS", "PolarsEngine"]


class PolarsEngine:
    """The Polars engine: tables are LazyFrames.

    >>> lf = POLARS.table(pl.DataFrame({"a": [1, None, 1]}))
    >>> POLARS.to_polars(lf).height, POLARS.distinct(lf, ["a"])
    (3, {'a': 2})
    """

    name = "polars"

    def table(self, data: object) -> pl.LazyFrame:
        return as_lazy(data)

    def schema(self, table: pl.LazyFrame) -> pl.Schema:
        return table.collect_schema()

    def aggregate(self, table: pl.LazyFrame, request: Request) -> EngineAggregates:
        prepared = prepare(table, request)
        aggregates, distinct, counted = aggregate_rows(table, prepared, request)
        return EngineAggregates(aggregates, distinct, counted, rows=prepared)

    def distinct(self, table: pl.LazyFrame, columns: Sequence[str]) -> dict[str, int]:
        row = table.select(pl.col(c).n_unique() for c in columns).collect()  # materializes: one row
        return {c: int(row[c][0]) for c in columns}

    def publish(self, table: pl.LazyFrame, data: Aggregated, tmap: TupleMap, request: Request) -> pl.LazyFrame:
        """The prepared rows of `data`, published by `tmap` (lazy)."""
        return publish(data.prepared, tmap)

    def join_map(self, table: pl.LazyFrame, mapping: Any, request: Request, row_key: str | None = None) -> Any:
        raise NotImplementedError("the Polars engine has no planner: its methods run on the driver")

    def classes(
        self, table: pl.LazyFrame, qids: Sequence[str], attributes: Sequence[str], labels: Mapping[str, pl.Series]
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        return class_frames(table, qids, attributes, labels)

    def write(self, table: pl.LazyFrame, path: str | Path) -> None:
        table.sink_parquet(path)

    def read_parquet(self, path: str | Path) -> pl.LazyFrame:
        return pl.scan_parquet(path)

    def to_polars(self, table: pl.LazyFrame) -> pl.DataFrame:
        return table.collect()

    def __repr__(self) -> str:
        return "PolarsEngine()"


POLARS = PolarsEngine()
"""The Polars engine (it holds no state)."""
