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
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl

from polars_anon.labels import label_exprs, label_series

if TYPE_CHECKING:
    from polars_anon.hierarchy import Hierarchy

EngineType = Literal["auto", "in-memory", "streaming"]
"""The Polars engines a pass collects with (named here, not taken from Polars' private typing module)."""

__all__ = [
    "COUNT",
    "PASS_ROWS",
    "TupleCodes",
    "TupleCounts",
    "as_string_codes",
    "as_string_counts",
    "collect_apart",
    "collect_by_tuples",
    "count_tuples",
    "decoded",
    "string_ranks",
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
    """:func:`tuple_counts`' frames; none when the pass was made sorted (`sorted`)."""
    sorted: tuple[pl.DataFrame, TupleCodes | None] | None = field(default=None, compare=False, repr=False)
    """:func:`as_string_codes` of the one frame, when the pass made it so (no `by`: a Parquet dictionary pass,
    :mod:`polars_anon._parquet_counts`)."""
    values: dict[str, pl.Series] | None = field(default=None, compare=False, repr=False)
    """With `sorted`: each key's distinct values in its own type (nulls left out, in no set order)."""
    distinct: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    """Undeclared columns' distinct values (null counted as one), where the pass counted them: the road counts the
    others (:func:`polars_anon.attributes.distinct_counts`)."""

    def of(self, lf: pl.LazyFrame, keys: Sequence[str], by: Sequence[str] = ()) -> list[pl.DataFrame] | None:
        """The frames when they count `lf` by these columns, else None."""
        if self.lf is lf and self.keys == tuple(keys) and self.by == tuple(by) and self.sorted is None:
            return list(self.frames)
        return None

    def sorted_of(self, lf: pl.LazyFrame, keys: Sequence[str]) -> tuple[pl.DataFrame, TupleCodes | None] | None:
        """:func:`as_string_codes` of the counts of `lf` by `keys` (no `by`) when this pass made them, else None."""
        if self.lf is lf and self.keys == tuple(keys) and not self.by:
            return self.sorted
        return None

    def distinct_of(self, lf: pl.LazyFrame) -> dict[str, int]:
        """The undeclared columns' distinct counts when this pass read `lf`, else none."""
        return self.distinct if self.lf is lf else {}

    def distinct_values(self, key: str) -> pl.Series:
        """A key's distinct values (nulls left out, in no set order) as the pass grouped them: String keys as
        Categorical from :func:`tuple_counts`, as String from a sorted pass."""
        if self.values is not None:
            return self.values[key]
        # unique in first-seen order (the callers sort): a third of the default's CPU on the tuples
        return self.frames[0][key].drop_nulls().unique(maintain_order=True)


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
    """Rows per tuple of `keys`, in the columns' own types, String keys as Categorical (nulls a group): the pass that
    aggregates the input.

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
        """String keys grouped as Categorical (exact, and faster on many rows); the `by` column read back as
        String, the `keys` left Categorical (:func:`as_string_counts` labels them from their few distinct values:
        casting every tuple's code back cost 0.26 s CPU at 15M rows)."""
        strings = [c for c in columns if schema[c] == pl.String]
        rows = rows.with_columns(pl.col(c).cast(pl.Categorical) for c in strings)
        back = [c for c in strings if c not in keys]
        return rows.group_by(columns).agg(count).with_columns(pl.col(c).cast(pl.String) for c in back)

    def queries(rows: pl.LazyFrame) -> list[pl.LazyFrame]:
        if not by:
            return [group(rows, list(keys))]
        return [group(rows, [*keys, b]) for b in by]

    return collect_by_tuples(lf, keys, queries)  # materializes: one row per tuple (and value)


@dataclass(frozen=True)
class TupleCodes:
    """The qids of sorted tuple counts (:func:`as_string_codes`) as integer codes: per qid its distinct String labels,
    sorted (nulls left out), and each row's code, its label's position among them (their number: a null; Int32).
    The road hands them to the methods with the aggregates they were made with (``Task.codes``), so a method reads
    each row's hierarchy node from a few thousand labels, not from every tuple's String.

    >>> frame, codes = as_string_codes(pl.DataFrame({"q": ["b", None, "a", "b"], "count": [1, 2, 3, 4]}), ["q"])
    >>> frame["q"].to_list(), codes.labels["q"].to_list(), codes.codes["q"].tolist()
    (['a', 'b', 'b', None], ['a', 'b'], [0, 1, 1, 2])
    """

    labels: dict[str, pl.Series]
    codes: dict[str, np.ndarray] = field(repr=False)
    columns: dict[str, pl.Series] = field(default_factory=dict, repr=False)
    """The String columns decoded from them when they were made (the frame's own columns, sharing its memory): a
    column that is one of them matches the codes with no look at its rows (:meth:`decode_to`)."""

    def decode_to(self, qid: str, column: pl.Series) -> bool:
        """Whether `column` holds, row for row, the labels of `qid` these codes decode to: at once when it is the
        column they were decoded to (:attr:`columns`: the same memory), else each row's label hashed against its
        code's, gathered from the hashes of the few labels (no label gathered per row).

        >>> frame, codes = as_string_codes(pl.DataFrame({"q": ["b", "a", "c"], "count": [1, 2, 3]}), ["q"])
        >>> codes.decode_to("q", frame["q"]), codes.decode_to("q", frame["q"].reverse())
        (True, False)
        """
        made, codes = self.columns.get(qid), self.codes[qid]
        if len(column) != len(codes):
            return False
        if made is not None and _memory(made) == _memory(column) is not None:
            return True
        labels = self.labels[qid]
        table = pl.concat([labels, pl.Series([None], dtype=labels.dtype)]).hash()  # the code past them: a null
        as_text = column if column.dtype == labels.dtype else column.cast(labels.dtype)  # a Categorical: its labels
        return bool(np.array_equal(table.to_numpy()[codes], as_text.hash().to_numpy()))

    def ids_of(self, qid: str, hierarchy: Hierarchy) -> np.ndarray | None:
        """``hierarchy.ids_of(frame[qid])`` of the frame these codes were made with (Int64 node ids per row), from
        the distinct labels; None when a row holds a null (``ids_of`` refuses it, naming it).

        >>> from polars_anon import Hierarchy
        >>> _, codes = as_string_codes(pl.DataFrame({"q": ["M", "F", "M"], "count": [1, 1, 1]}), ["q"])
        >>> codes.ids_of("q", Hierarchy.suppression(["F", "M"])).tolist()
        [1, 2, 2]
        """
        ids = self.label_ids(qid, hierarchy)
        return None if ids is None else ids[self.codes[qid]]

    def label_ids(self, qid: str, hierarchy: Hierarchy) -> np.ndarray | None:
        """The node id (Int64) of each of `qid`'s distinct labels, by code (a row's is ``label_ids(...)[code]``);
        None when a row holds a null.

        >>> from polars_anon import Hierarchy
        >>> _, codes = as_string_codes(pl.DataFrame({"q": ["M", "F", "M"], "count": [1, 1, 1]}), ["q"])
        >>> codes.label_ids("q", Hierarchy.suppression(["F", "M"])).tolist()
        [1, 2]
        """
        labels, codes = self.labels[qid], self.codes[qid]
        if len(codes) and int(codes.max()) >= len(labels):
            return None
        return hierarchy.ids_of(labels)

    def decoded(self) -> pl.DataFrame:
        """Each qid's String label per row, gathered by its codes from its sorted labels (the code past them: null).

        >>> frame, codes = as_string_codes(pl.DataFrame({"q": ["b", None, "a"], "count": [1, 2, 3]}), ["q"])
        >>> codes.decoded()["q"].to_list() == frame["q"].to_list()
        True
        """
        return pl.DataFrame([decoded(q, labels, self.codes[q]) for q, labels in self.labels.items()])


def _memory(column: pl.Series) -> tuple[object, ...] | None:
    """Where a String column's rows are held (every buffer's address, its validity mask's included, with the offset and
    length; Arrow's string views, exported without a copy), None when it is not one chunk of them or PyArrow is not
    loaded yet (its import costs more than the hashes it would spare: a frame's road loads it for nothing else): two
    columns held at one place hold the same rows (a column with some rows nulled keeps the views, not the mask).

    >>> import pyarrow
    >>> s = pl.Series("q", ["a", "b"])
    >>> _memory(s) == _memory(s.alias("r")), _memory(s) == _memory(s.set(pl.Series([False, True]), None))
    (True, False)
    """
    if "pyarrow" not in sys.modules or column.dtype != pl.String or column.n_chunks() != 1:
        return None
    import pyarrow as pa

    array = column.to_arrow(compat_level=pl.CompatLevel.newest())
    if not isinstance(array, pa.StringViewArray):
        return None
    return (*(None if b is None else b.address for b in array.buffers()), array.offset, len(array))


def decoded(name: str, labels: pl.Series, codes: np.ndarray) -> pl.Series:
    """One qid's String label per row (:meth:`TupleCodes.decoded`): `labels` gathered by `codes` (the code past them:
    null), named `name`.

    >>> decoded("q", pl.Series(["a", "b"]), np.array([1, 2, 0])).to_list()
    ['b', None, 'a']
    """
    null = pl.Series([None], dtype=pl.String)
    # the labels and the null made one chunk: a gather from two chunks cost twice as much (0.079 -> 0.035 CPU s for
    # the 3M register's four qids). A gather per Series keeps each column one chunk: gathered in a lazy select on
    # Polars' threads they came in six, and the aggregates' first select rechunked them (0.045 s more)
    return pl.concat([labels, null], rechunk=True).gather(codes).alias(name)


def as_string_counts(frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str] = ()) -> pl.DataFrame:
    """Tuple counts with the qids cast to String (as the road's ``prepare`` casts them), equal tuples merged, sorted.

    Distinct strings, integers, dates and categories stay distinct as String: only other types are merged.
    """
    return _as_strings(frame, qids, by)[0]


def as_string_codes(frame: pl.DataFrame, qids: Sequence[str]) -> tuple[pl.DataFrame, TupleCodes | None]:
    """:func:`as_string_counts` (no `by`), and its qids as codes (:class:`TupleCodes`; None where the frame was sorted
    by its String columns: more than 2**62 combinations of ranks)."""
    return _as_strings(frame, qids, ())


def _as_strings(frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str]) -> tuple[pl.DataFrame, TupleCodes | None]:
    keys = [*qids, *by]
    if all(_distinct_as_string(frame.schema[q]) for q in qids):
        return _sort_strings(frame, qids, by)  # each qid cast once per distinct value, not per tuple
    cast = frame.with_columns(label_series(frame[q]) for q in qids)  # a date Polars cannot write: refused by name
    return _sort_strings(cast.group_by(keys).agg(pl.col(COUNT).sum()), qids, by)


def _sort_strings(
    frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str]
) -> tuple[pl.DataFrame, TupleCodes | None]:
    """``frame.sort([*qids, *by], nulls_last=True)`` with the qids as String labels (each qid cast to String), faster:
    each qid's rank among its distinct String labels (nulls last; :func:`string_ranks`: for a Categorical or integer
    column from its few distinct values, not from every tuple's String) and each `by` column's dense rank packed into
    one Int64 in the same order, that one column sorted (a sort by several String columns is slow), and each qid's
    labels gathered from its sorted distinct labels (not every tuple's String cast, then gathered). The frame is made
    one chunk first: gathering from a chunked frame cost eight times as much."""
    frame = frame.rechunk()
    ranked = [string_ranks(frame[q]) for q in qids]
    sizes = [len(labels) + 1 for _, labels in ranked] + [frame[b].n_unique() for b in by]
    if float(np.prod(sizes, dtype=np.float64)) >= 2.0**62:
        cast = frame.with_columns(label_exprs(frame.schema, qids))
        return cast.sort([*qids, *by], nulls_last=True), None
    packed = np.zeros(frame.height, dtype=np.int64)
    for (rank, _), size in zip(ranked, sizes):  # in place: no array of the tuples made per qid
        packed *= size
        packed += rank
    for b, size in zip(by, sizes[len(qids) :]):
        packed *= size
        packed += frame[b].rank("dense").cast(pl.Int64).fill_null(size).to_numpy() - 1
    order = _order_of_distinct(packed, int(np.prod(sizes, dtype=np.int64)))
    # a rank of len(labels) is the null; the codes Int32, or Int64 as string_ranks chose
    found = TupleCodes(
        {q: labels for q, (_, labels) in zip(qids, ranked)}, {q: r[order] for q, (r, _) in zip(qids, ranked)}
    )
    rest = frame.select(pl.exclude(qids))[order]
    found.columns.update((s.name, s) for s in found.decoded())  # the frame's own: decode_to knows them at once
    return pl.DataFrame(list(found.columns.values())).hstack(rest).select(frame.columns), found


def _order_of_distinct(keys: np.ndarray, bound: int) -> np.ndarray:
    """The order that sorts `keys` (in ``[0, bound)``; distinct, else a stable sort): each key's position placed in a
    slot array when `bound` is at most 16 times their number (a pass over the slots, 0.03 s CPU for the 3M register's
    684,166 tuples where NumPy's sort took 0.06-0.07), else NumPy's sort (distinct keys: any sort gives this order).

    >>> _order_of_distinct(np.array([5, 0, 3]), 6).tolist()
    [1, 2, 0]
    """
    if bound > 16 * len(keys):
        return np.argsort(keys)
    # Int32 slots when the positions fit: half the memory to touch (at 3M, 5.7M slots: 0.020 -> 0.012 CPU s warm,
    # 0.10 -> 0.016 on fresh pages, as in a job)
    kind = np.int32 if len(keys) < 1 << 31 else np.int64
    slots = np.full(bound, -1, dtype=kind)
    slots[keys] = np.arange(len(keys), dtype=kind)
    order = slots[slots >= 0]
    return order if len(order) == len(keys) else np.argsort(keys, kind="stable")  # equal keys: a stable sort


def string_ranks(column: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Each value's rank (Int32; Int64 from 2**31 - 1 distinct values) among the column's distinct values cast to
    String, sorted (a null: their number, last), and those sorted String labels (nulls dropped). A Categorical or an
    integer column is ranked from its distinct values through a lookup table of their codes; other types through the
    String cast of every value."""
    # unique in first-seen order (the order is sorted below): a third of the default's CPU on a frame of tuples
    distinct = column.drop_nulls().unique(maintain_order=True)
    kind, rank_dtype = (np.int32, pl.Int32) if len(distinct) < (1 << 31) - 1 else (np.int64, pl.Int64)
    labels = label_series(distinct)  # a date Polars cannot write as text: refused, naming the column
    order = labels.arg_sort()
    if len(distinct) and (isinstance(column.dtype, pl.Categorical) or column.dtype.is_integer()):
        codes = column.to_physical() if isinstance(column.dtype, pl.Categorical) else column
        keys = distinct.to_physical() if isinstance(column.dtype, pl.Categorical) else distinct
        low, high = int(keys.min()), int(keys.max())  # type: ignore[arg-type]
        if high - low < 1 << 24 and abs(low) < 1 << 62 and abs(high) < 1 << 62:  # at most 16M slots (128 MiB)
            table = np.full(high - low + 2, len(distinct), dtype=kind)  # the last slot: the null
            table[keys.gather(order).cast(pl.Int64).to_numpy() - low] = np.arange(len(distinct), dtype=kind)
            slots = (codes.cast(pl.Int64) - low).fill_null(high - low + 1).to_numpy()
            return table[slots], labels.gather(order)
    labels = labels.gather(order)
    rank = column.cast(pl.String).cast(pl.Enum(labels)).to_physical().cast(rank_dtype).fill_null(len(labels))
    return rank.to_numpy(), labels


def _distinct_as_string(dtype: pl.DataType) -> bool:
    """Whether distinct values of `dtype` always cast to distinct strings."""
    return dtype == pl.String or dtype.is_integer() or isinstance(dtype, (pl.Boolean, pl.Date, pl.Categorical, pl.Enum))
