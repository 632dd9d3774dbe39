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

from polars_anon._passes import TupleCounts
from polars_anon._validate import as_lazy
from polars_anon.anonymize import aggregate_rows, prepare
from polars_anon.engines import labelled_marginals
from polars_anon.io import scanned_files
from polars_anon.outputs import ROW_GROUP
from polars_anon.pipeline.state import Aggregated, EngineAggregates
from polars_anon.privacy.counts import COUNT
from polars_anon.privacy.differential import sample_frame
from polars_anon.privacy.evaluate import class_frames
from polars_anon.publish import publish
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE, TupleMap

__all__ = ["EXPAND_CHUNK", "FEW", "FEW_CLASSES", "FEW_ROWS", "POLARS", "PolarsEngine", "few_classes"]

EXPAND_CHUNK = 1 << 20
"""Rows made at a time by :meth:`PolarsEngine.expand`."""
_AT = "__anon_at"

FEW = 24
"""The published classes are few when there is at most one in this many rows and at most :data:`FEW_CLASSES` (the
check then groups Strings as they are: see :func:`polars_anon.privacy.counts.grouped`, where both forms cost the
same near one in 24)."""
FEW_CLASSES = 65_536
"""At most this many classes are few (beyond, grouping the Strings as they are holds more memory: 418,556 topdown
classes of the 15M register peaked 136 MiB higher)."""
FEW_ROWS = 1 << 20
"""On a table of at most this many rows, at most :data:`FEW_CLASSES` classes are few whatever their share of the rows:
there grouping the Strings as they are cost at most the Categorical form's CPU (topdown's published tables, k = 2:
Adult, 30,162 rows, 0.003 s against 0.007; fars_int, 100,937 rows, 0.009 against 0.016; 8 random String columns in
65,000 classes: 0.07 against 0.10 at 655,000 rows, 0.18-0.19 against 0.20-0.21 at 1.5M; at 3M, 0.39-0.50 against
0.44, two runs)."""


def few_classes(classes: int, rows: int) -> bool:
    """Whether `classes` published classes are few next to `rows` rows (the check then groups the Strings as they
    are: see :data:`FEW`, :data:`FEW_ROWS`, :data:`FEW_CLASSES`).

    >>> few_classes(15_000, 30_000), few_classes(100_000, 3_000_000), few_classes(81, 3_000_000)
    (True, False, True)
    """
    return 0 < classes <= FEW_CLASSES and (classes * FEW <= rows or rows <= FEW_ROWS)


class PolarsEngine:
    """The Polars engine: tables are LazyFrames.

    >>> lf = POLARS.table(pl.DataFrame({"a": [1, None, 1]}))
    >>> POLARS.to_polars(lf).height, POLARS.distinct(lf, ["a"])
    (3, {'a': 2})
    """

    name = "polars"

    def table(self, data: object) -> pl.LazyFrame:
        return as_lazy(data)

    def sources(self, data: object) -> list[str]:
        return scanned_files(data) if isinstance(data, pl.LazyFrame) else []

    def schema(self, table: pl.LazyFrame) -> pl.Schema:
        return table.collect_schema()

    def aggregate(self, table: pl.LazyFrame, request: Request, counts: TupleCounts | None = None) -> EngineAggregates:
        prepared = prepare(table, request)
        aggregates, distinct, counted, codes = aggregate_rows(table, prepared, request, counts)
        return EngineAggregates(aggregates, distinct, counted, rows=prepared, codes=codes)

    def distinct(self, table: pl.LazyFrame, columns: Sequence[str]) -> dict[str, int]:
        row = table.select(pl.col(c).n_unique() for c in columns).collect()  # materializes: one row
        return {c: int(row[c][0]) for c in columns}

    def marginals(self, table: pl.LazyFrame, qids: Sequence[str]) -> dict[str, pl.DataFrame]:
        counts = [pl.col(q).value_counts(name=COUNT).implode() for q in qids]
        row = table.select(counts).collect()  # materializes: one row, each qid's distinct values and counts
        return labelled_marginals({q: row[q].explode().struct.unnest() for q in qids})

    def sample(self, table: pl.LazyFrame, key: tuple[int, int, int], threshold: int) -> pl.LazyFrame:
        return sample_frame(table, key, threshold)

    def publish(self, table: pl.LazyFrame, data: Aggregated, tmap: TupleMap, request: Request) -> pl.LazyFrame:
        """The prepared rows of `data`, published by `tmap` (lazy)."""
        return publish(data.prepared, tmap)

    def expand(self, classes: pl.DataFrame, columns: Sequence[str]) -> pl.LazyFrame:
        """The rows of `classes` sorted (see :meth:`polars_anon.engines.Engine.expand`), made in chunks of
        :data:`EXPAND_CHUNK` rows (each a gather from the sorted classes by a search in their cumulative sizes):
        streamed to the writer, in memory the classes and one chunk.

        >>> POLARS.expand(pl.DataFrame({"a": ["b", "a", "B"], "size": [1, 2, 1]}), ["a"]).collect()["a"].to_list()
        ['B', 'a', 'a', 'b']
        """
        ordered = classes.sort(list(columns), nulls_last=True)
        ends = ordered[SIZE].cast(pl.Int64).cum_sum()
        total = int(ends[-1]) if len(ends) else 0
        frames = []
        for start in range(0, total, EXPAND_CHUNK):
            rows = pl.int_range(start, min(start + EXPAND_CHUNK, total), dtype=pl.Int64)
            at = pl.LazyFrame().select(pl.lit(ends).search_sorted(rows, side="right").alias(_AT))
            frames.append(at.select(pl.lit(ordered[c]).gather(pl.col(_AT)).alias(c) for c in columns))
        return pl.concat(frames) if frames else ordered.lazy().select(columns)

    def join_map(self, table: pl.LazyFrame, mapping: Any, request: Request, row_key: str | None = None) -> Any:
        raise NotImplementedError("the Polars engine has no planner: its methods run on the driver")

    def classes(
        self,
        table: pl.LazyFrame,
        qids: Sequence[str],
        attributes: Sequence[str],
        labels: Mapping[str, pl.Series],
        *,
        few: bool = False,
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        """The engine's :meth:`~polars_anon.engines.Engine.classes`; `few`: the classes are known to be few next to
        the rows (see :data:`FEW`: the Strings are then grouped as they are, not as Categorical)."""
        return class_frames(table, qids, attributes, labels, few=few)

    def write(self, table: pl.LazyFrame, path: str | Path) -> None:
        table.sink_parquet(path, row_group_size=ROW_GROUP)

    def read_parquet(self, path: str | Path) -> pl.LazyFrame:
        """A Parquet file or a folder of parts; a path that exists is read by its name (``p[1].parquet`` is no
        pattern), one that does not as Polars reads it (a pattern such as ``parts/*.parquet``)."""
        return pl.scan_parquet(path, glob=not Path(path).exists())

    def to_polars(self, table: pl.LazyFrame) -> pl.DataFrame:
        return table.collect()

    def __repr__(self) -> str:
        return "PolarsEngine()"


POLARS = PolarsEngine()
"""The Polars engine (it holds no state)."""
