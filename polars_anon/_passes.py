"""Queries over the rows in bounded memory: what the Polars road's passes over the data hold.

Two habits of Polars make a pass's peak memory grow with the rows, not with its result:

- ``pl.collect_all`` shares the common input of its queries by default (comm_subplan_elim) and
  buffers that input in memory for them: the 15M-row demo's aggregation pass peaked at 1.9 GB
  (0.75 GB apart). :func:`collect_apart` collects several queries without that sharing.
- The streaming group-by pre-aggregates only a small table of frequent ("hot") keys; the rows
  of every other key are kept, partitioned, until the input ends, and only then aggregated.
  With millions of distinct qid tuples that is most rows (some 25 bytes each: 3.7 GB for the
  150M-row demo register's 2.4 million tuples). :func:`collect_by_tuples` runs such group-bys
  in passes, each over the rows of a disjoint share of the tuples (a hash of the tuple picks
  it), at most about :data:`PASS_ROWS` rows a pass, and stacks their results: one pass up to
  16.8M rows, 9 for the 150M-row register (8.4M rows a pass took 233 s instead of 161 s there,
  for the same peak, 1.1 GB, which is then the full-domain search's and the writer's).

>>> lf = pl.LazyFrame({"q": ["a", "b", "a", "c"], "x": [1, 2, 3, 4]})
>>> [f.sort("q").rows() for f in collect_by_tuples(lf, ["q"], lambda part: [part.group_by("q").len()], rows_per_pass=2)]
[[('a', 2), ('b', 1), ('c', 1)]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

EngineType = Literal["auto", "in-memory", "streaming"]
"""The Polars engines a pass collects with (named here, not taken from Polars' private typing module)."""

__all__ = [
    "COUNT",
    "PASS_ROWS",
    "TupleCounts",
    "as_string_counts",
    "collect_apart",
    "collect_by_tuples",
    "count_tuples",
    "tuple_counts",
]

PASS_ROWS = 1 << 24
"""Rows a pass of :func:`collect_by_tuples` reads at most (about; the tuples' hash shares them out)."""
COUNT = "count"
"""The row-count column of :func:`tuple_counts` (Int64)."""


def collect_apart(queries: Iterable[pl.LazyFrame], engine: EngineType = "auto") -> list[pl.DataFrame]:
    """``pl.collect_all`` without sharing the queries' common input: each streams its own scan of it.

    Sharing buffers the common input in memory, so queries over the rows are collected
    apart: the peak stays that of the largest result, and each query reads the input
    once more (cheap next to holding it).

    >>> lf = pl.LazyFrame({"a": [1, 1, 2]})
    >>> [f.item() for f in collect_apart([lf.select(pl.len()), lf.select(pl.col("a").n_unique())])]
    [3, 2]
    """
    return pl.collect_all(queries, engine=engine, optimizations=pl.QueryOptFlags(comm_subplan_elim=False))


def collect_by_tuples(
    lf: pl.LazyFrame,
    keys: Sequence[str],
    queries: Callable[[pl.LazyFrame], list[pl.LazyFrame]],
    *,
    rows_per_pass: int = PASS_ROWS,
) -> list[pl.DataFrame]:
    """Collect `queries` (built on a share of the rows of `lf`) in passes of at most about `rows_per_pass` rows.

    Every query must group by all of `keys` (and possibly more): each pass holds the rows of a
    disjoint set of key tuples, so a query's results stack into its result over all the rows
    (in no set order: sort them where order matters). One pass, the queries on `lf` itself,
    when `lf` has at most `rows_per_pass` rows (counted first: a Parquet scan reads its metadata).
    """
    n_rows = int(lf.select(pl.len()).collect().item())  # materializes: one number
    passes = max(1, math.ceil(n_rows / rows_per_pass))
    if passes == 1:
        return collect_apart(queries(lf))
    share = pl.struct(list(keys)).hash(seed=0) % passes
    results = [collect_apart(queries(lf.filter(share == p))) for p in range(passes)]  # materializes: each pass's groups
    return [pl.concat(frames, how="vertical") for frames in zip(*results)]


@dataclass(frozen=True)
class TupleCounts:
    """The tuple pass over one input (:func:`count_tuples`), made before the road runs and handed to it as an
    argument: a job builds its hierarchies' value lists from it, and the road's aggregation pass is this one."""

    lf: pl.LazyFrame = field(compare=False, repr=False)
    """The input counted (this object: another LazyFrame, even of the same rows, is counted anew)."""
    keys: tuple[str, ...]
    by: tuple[str, ...]
    frames: tuple[pl.DataFrame, ...] = field(compare=False, repr=False)

    def of(self, lf: pl.LazyFrame, keys: Sequence[str], by: Sequence[str] = ()) -> list[pl.DataFrame] | None:
        """The frames when they count `lf` by these columns, else None."""
        if self.lf is lf and self.keys == tuple(keys) and self.by == tuple(by):
            return list(self.frames)
        return None


def count_tuples(lf: pl.LazyFrame, keys: Sequence[str], by: Sequence[str] = ()) -> TupleCounts:
    """:func:`tuple_counts`, kept with its input and columns, to hand to the road.

    >>> lf = pl.LazyFrame({"q": ["a", "b", "a"]})
    >>> made = count_tuples(lf, ["q"])
    >>> tuple_counts(lf, ["q"], made=made)[0] is made.frames[0], made.of(pl.LazyFrame({"q": ["a"]}), ["q"]) is None
    (True, True)
    """
    return TupleCounts(lf, tuple(keys), tuple(by), tuple(tuple_counts(lf, keys, by)))


def tuple_counts(
    lf: pl.LazyFrame, keys: Sequence[str], by: Sequence[str] = (), *, made: TupleCounts | None = None
) -> list[pl.DataFrame]:
    """Rows per tuple of `keys`, in the columns' own types (nulls a group): the pass that aggregates the input.

    With no `by`, one frame (`keys`, :data:`COUNT`); else one frame (`keys`, b, :data:`COUNT`) per column b
    of `by` (rows per tuple and value: the rows per tuple are their sums). Each frame is one read of `lf`
    (:func:`collect_by_tuples`: memory bounded by the tuples, not the rows), in no set order.

    `made`: the same pass made before (:func:`count_tuples`), returned without reading when it counts this
    `lf` (the object) by these columns. So a job that builds its hierarchies from the column values in the
    tuples hands the road its aggregation pass, and the input is read once.

    >>> lf = pl.LazyFrame({"q": ["a", "b", "a"], "s": [1, 2, 1]})
    >>> [f.sort("q").rows() for f in tuple_counts(lf, ["q"], ["s"])]
    [[('a', 1, 2), ('b', 2, 1)]]
    """
    if made is not None:
        frames = made.of(lf, keys, by)
        if frames is not None:
            return frames
    keys, by = tuple(keys), tuple(by)
    count = pl.len().cast(pl.Int64).alias(COUNT)
    schema = lf.collect_schema()

    def group(rows: pl.LazyFrame, columns: list[str]) -> pl.LazyFrame:
        """String keys grouped as Categorical (exact, and faster on many rows), read back as String."""
        strings = [c for c in columns if schema[c] == pl.String]
        rows = rows.with_columns(pl.col(c).cast(pl.Categorical) for c in strings)
        return rows.group_by(columns).agg(count).with_columns(pl.col(c).cast(pl.String) for c in strings)

    def queries(rows: pl.LazyFrame) -> list[pl.LazyFrame]:
        if not by:
            return [group(rows, list(keys))]
        return [group(rows, [*keys, b]) for b in by]

    return collect_by_tuples(lf, keys, queries)  # materializes: one row per tuple (and value)


def as_string_counts(frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str] = ()) -> pl.DataFrame:
    """Tuple counts with the qids cast to String (as the road's ``prepare`` casts them), equal tuples merged, sorted.

    Distinct strings, integers, dates and categories stay distinct as String: only other types are merged.
    """
    keys = [*qids, *by]
    cast = frame.with_columns(pl.col(q).cast(pl.String) for q in qids)
    if not all(_distinct_as_string(frame.schema[q]) for q in qids):
        cast = cast.group_by(keys).agg(pl.col(COUNT).sum())
    return _sort_strings(cast, qids, by)


def _sort_strings(frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str]) -> pl.DataFrame:
    """``frame.sort([*qids, *by], nulls_last=True)`` for String qids, faster: each column's rank among its
    distinct values (nulls last; a qid's from an Enum of its sorted values) packed into one Int64 in the same
    order, and that one column sorted (a sort by several String columns is slow). The frame is made one chunk
    first: a group-by's result comes in chunks, and gathering from a chunked frame cost eight times as much
    (0.21 s CPU, not 0.03 s, for the 3M register's 684,166 tuples)."""
    frame = frame.rechunk()
    values = [frame[q].drop_nulls().unique().sort() for q in qids]
    sizes = [len(v) + 1 for v in values] + [frame[b].n_unique() for b in by]
    if float(np.prod(sizes, dtype=np.float64)) >= 2.0**62:
        return frame.sort([*qids, *by], nulls_last=True)
    ranks = [pl.col(q).cast(pl.Enum(v)).to_physical().cast(pl.Int64).fill_null(len(v)) for q, v in zip(qids, values)]
    ranks += [pl.col(b).rank("dense").cast(pl.Int64).fill_null(size) - 1 for b, size in zip(by, sizes[len(qids) :])]
    packed = pl.lit(0, pl.Int64)
    for rank, size in zip(ranks, sizes):
        packed = packed * size + rank
    return frame[frame.select(packed.arg_sort()).to_series()]


def _distinct_as_string(dtype: pl.DataType) -> bool:
    """Whether distinct values of `dtype` always cast to distinct strings."""
    return dtype == pl.String or dtype.is_integer() or isinstance(dtype, (pl.Boolean, pl.Date, pl.Categorical, pl.Enum))
