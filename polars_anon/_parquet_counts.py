"""The tuple pass over local Parquet files from their dictionaries: the sorted tuple counts without a group-by.

A Parquet writer stores a String column as a dictionary of its distinct values and, per row, an integer
index into it. :func:`parquet_counts` reads the qids so (pyarrow's ``read_dictionary``; an integer column
through a table over its range of values), gives every distinct value a global id, ranks the ids by their
String labels, packs each row's ranks into one Int64 in the qids' order and counts those keys (in place where
the key space is small, else by sorting them): the distinct keys, in order, are the sorted tuples. The result
is what :func:`~polars_anon._passes.tuple_counts` followed by :func:`~polars_anon._passes.as_string_codes`
return (the same frame, row for row, and the same codes), in about half their CPU
(`benchmarks/results/floor.md`).

It applies only where it is exact and bounded: the LazyFrame is a plain scan of the files (its unoptimized
plan is that of ``pl.scan_parquet(files, glob=False)`` and it reads those files: no cast, filter or added
column), every qid is a String or an integer column stored so, no ``by`` column, at most
:data:`~polars_anon._passes.PASS_ROWS` rows and at most :data:`QID_VALUES` distinct values a qid (each is held
once as a Python object; the rows cost one to four bytes a qid for their ids, and eight for their keys).
Otherwise it returns None and the group-by runs.

>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "t.parquet"
>>> pl.DataFrame({"q": ["b", None, "a", "b"], "y": [2, 1, 1, 2]}).write_parquet(path)
>>> frame, codes = parquet_counts(pl.scan_parquet([path], glob=False), [path], ["q", "y"]).sorted
>>> frame.rows(), codes.codes["q"].tolist()
([('a', '1', 1), ('b', '2', 2), (None, '1', 1)], [0, 1, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from polars_anon._memory import release_freed_memory
from polars_anon._passes import COUNT, PASS_ROWS, TupleCodes, TupleCounts, decoded, string_ranks
from polars_anon._threads import beside
from polars_anon.io import scanned_files

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

__all__ = ["DISTINCT_CAP", "QID_VALUES", "parquet_counts"]

DISTINCT_CAP = 1 << 16
"""At most this many distinct values of an undeclared column are counted by the pass (the road counts beyond)."""
QID_VALUES = 1 << 18
"""Beyond this many distinct values of a qid the pass stops and the group-by runs: each value is held as a Python
object (a qid of 3M distinct Strings peaked 150 MiB above the group-by and took more CPU)."""
NARROW_KEYS = 1 << 31
"""Below this many combinations of the qids' labels (and a null each) the rows' keys are packed as Int32, else Int64."""
BATCH_ROWS = 1 << 17
"""Rows read at a time (whole row groups), each read on one thread (the next while this one is counted): pyarrow
keeps pages it read, and a job's later phases peaked higher by as much (greedy on the 15M register: 889-957 MiB
reading 2**19-2**21 rows at a time on threads, 855-868 so, 826-829 without the pass). The ids kept per row are one
to four bytes a qid, not the values."""


def parquet_counts(
    lf: pl.LazyFrame, files: Sequence[Path], qids: Sequence[str], undeclared: Sequence[str] = ()
) -> TupleCounts | None:
    """The tuple pass over `lf` by `qids` (no `by`) made sorted from the dictionaries of `files` (a
    :class:`~polars_anon._passes.TupleCounts` with ``sorted`` and ``values``), or None where that is not exact or
    not bounded (see the module): then :func:`~polars_anon._passes.count_tuples` groups the rows. The same read
    counts the distinct values (null counted as one) of each of the `undeclared` columns that is a String or an
    integer column with at most :data:`DISTINCT_CAP` distinct values (``TupleCounts.distinct``; the road counts the
    others)."""
    import pyarrow as pa

    schema = lf.collect_schema()
    if not files or not all(_simple(schema[q]) for q in qids) or not _plain_scan(lf, files):
        return None
    opened = _open(files, schema, qids, [c for c in undeclared if _simple(schema[c])])
    if opened is None:
        return None
    readers, extra = opened
    ids, distinct = _GlobalIds(qids, schema, sum(r.metadata.num_rows for r in readers)), _Distinct(extra)
    try:
        for batch in _batches(readers, lambda: [*qids, *distinct.values]):  # the extra columns still counted
            ids.add(batch)
            distinct.add(batch)
            if ids.too_many():
                return None
    except UnicodeDecodeError:  # not UTF-8: the group-by refuses it as it always did
        return None
    finally:
        pa.default_memory_pool().release_unused()  # pyarrow's pool keeps the batches' pages: later passes need them
    found = ids.counted()
    release_freed_memory()  # the batches' ids (a few hundred KiB each) freed in glibc's heap (Polars allocates apart)
    if found is None:
        return None
    values = {q: pl.Series(q, list(ids.seen[q]), dtype=schema[q]) for q in qids}
    return TupleCounts(lf, tuple(qids), (), (), sorted=found, values=values, distinct=distinct.counts())


def _open(
    files: Sequence[Path], schema: pl.Schema, qids: Sequence[str], extra: list[str]
) -> tuple[list[pq.ParquetFile], list[str]] | None:
    """The files opened for the pass (String columns read as dictionaries) and the `extra` columns stored as read; None
    where a file cannot be opened, a qid is stored otherwise or the rows are more than one pass holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    strings = [c for c in [*qids, *extra] if schema[c] == pl.String]
    try:
        readers = [pq.ParquetFile(f, read_dictionary=strings) for f in files]
    except (pa.ArrowException, OSError):  # a file pyarrow cannot open as Polars does (e.g. an Int128 column)
        return None
    if sum(r.metadata.num_rows for r in readers) > PASS_ROWS or not all(_stored(r, schema, qids) for r in readers):
        return None
    return readers, [c for c in extra if all(_stored(r, schema, [c]) for r in readers)]


def _stored(reader: pq.ParquetFile, schema: pl.Schema, columns: Sequence[str]) -> bool:
    """Whether each column is stored as pyarrow reads it here: a String column as a string (read as a dictionary), an
    integer column as an integer (not, e.g., Polars' Int128 as a decimal)."""
    import pyarrow as pa

    stored = reader.schema_arrow
    for c in columns:
        if c not in stored.names:
            return False
        kind = stored.field(c).type
        if schema[c].is_integer() and str(kind) not in _NUMPY:  # the integer types NumPy holds as they are
            return False
        text = pa.types.is_dictionary(kind) and (
            pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type)
        )
        if not schema[c].is_integer() and not text:
            return False
    return True


def _simple(dtype: pl.DataType) -> bool:
    """A type whose values the pass reads exactly: String (from the dictionaries) or an integer."""
    return dtype == pl.String or dtype.is_integer()


def _plain_scan(lf: pl.LazyFrame, files: Sequence[Path]) -> bool:
    """Whether `lf` is ``pl.scan_parquet(files, glob=False)`` and nothing more (no cast, filter or added column): the
    same printed plan (which names the first file only) and the same files read, in order."""
    try:
        plain = lf.explain(optimized=False) == pl.scan_parquet(list(files), glob=False).explain(optimized=False)
    except (pl.exceptions.PolarsError, OSError):
        return False
    return plain and list(dict.fromkeys(scanned_files(lf))) == [str(f) for f in files]


def _batches(readers: Sequence[pq.ParquetFile], columns: Callable[[], list[str]]) -> Iterator[pa.Table]:
    """The `columns()` (asked before each read), whole row groups at a time, about :data:`BATCH_ROWS` rows each,
    file after file; the next batch is read on a second thread (pyarrow releases the GIL) while the caller works on
    this one."""
    with ThreadPoolExecutor(1, thread_name_prefix="polars_anon_pass") as pool:
        pending = None
        for reader, groups in _row_groups(readers):
            read = pool.submit(reader.read_row_groups, groups, columns=columns(), use_threads=False)
            if pending is not None:
                yield pending.result()
            pending = read
        if pending is not None:
            yield pending.result()


def _row_groups(readers: Sequence[pq.ParquetFile]) -> Iterator[tuple[pq.ParquetFile, list[int]]]:
    """Each file's row groups gathered into runs of about :data:`BATCH_ROWS` rows."""
    for reader in readers:
        meta = reader.metadata
        group: list[int] = []
        held = 0
        for g in range(meta.num_row_groups):
            group.append(g)
            held += meta.row_group(g).num_rows
            if held >= BATCH_ROWS:
                yield reader, group
                group, held = [], 0
        if group:
            yield reader, group


class _GlobalIds:
    """Each qid's distinct values in first-seen order (a value's id: its position) and, per batch, each row's id plus
    one (0: a null) in the smallest unsigned type that holds the ids seen so far (:attr:`stored`); the batches' keys
    packed as they are read once the qids' values stop changing (:attr:`packing`, :class:`_Packing`)."""

    def __init__(self, qids: Sequence[str], schema: pl.Schema, rows: int) -> None:
        self.qids, self.schema, self.rows = list(qids), schema, rows
        self.seen: dict[str, dict[object, int]] = {q: {} for q in qids}
        self.stored: list[list[np.ndarray]] = []
        self.packing: _Packing | None = None
        self.packings = 0
        self.read = 0  # the rows stored

    def add(self, batch: pa.Table) -> None:
        """Store `batch`'s ids, and pack its keys where no qid gained a value in it (with the ranks of the values seen:
        they hold until a qid gains one; then the batches packed so far are packed again at the end, and packing starts
        again at most :data:`PACKINGS` times in all: ranking costs as much as the values seen)."""
        sizes, start = [len(seen) for seen in self.seen.values()], self.read
        self.stored.append([self._ids(q, batch.column(q)) for q in self.qids])
        self.read += len(self.stored[-1][0]) if self.qids else 0
        if [len(seen) for seen in self.seen.values()] != sizes:
            self.packing = None
        elif self.packing is None and self.packings < PACKINGS and not self.too_many():
            self.packing = _Packing.of([self._ranks(q, self.schema[q]) for q in self.qids], self.rows)
            self.packings += 1
        if self.packing is not None:
            self.packing.add(len(self.stored) - 1, start, self.stored[-1])

    def _ids(self, qid: str, column: pa.ChunkedArray) -> np.ndarray:
        import pyarrow as pa

        if not pa.types.is_dictionary(column.type):
            return self._integer_ids(qid, column)
        values, indices = _dictionary(column, marked=False)  # entries no row uses: dropped in counted()
        table = self._table(qid, values)
        parts = [_gathered(table, i) for i in indices]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=table.dtype)

    def _integer_ids(self, qid: str, column: pa.ChunkedArray) -> np.ndarray:
        """An integer column's ids through a table over the batch's range of values (:func:`_distinct_integers`), or
        through pyarrow's dictionary encoding where that range is wide."""
        found = _distinct_integers(column)
        if found is None:
            encoded = column.dictionary_encode().unify_dictionaries()
            values_of, indices = _dictionary(encoded, marked=False)  # every entry a row's
            table = self._table(qid, values_of)
            return np.concatenate([_gathered(table, i) for i in indices])
        slots, low, distinct, dtype = found
        if not len(distinct):
            return np.zeros(len(slots), dtype=np.uint8)  # nulls only (or no row): id 0
        table = self._table(qid, _plus(distinct, low, dtype))
        lookup = np.zeros(int(distinct[-1]) + 2, dtype=table.dtype)  # the last slot: a null's
        lookup[distinct] = table[:-1]
        return _gathered(lookup, slots)

    def _table(self, qid: str, values: Sequence[object]) -> np.ndarray:
        """Each of `values`' id plus one (first seen: a new id; :data:`_UNUSED`, a dictionary entry no row uses: 0,
        never read), and a last slot for a null (0), in the smallest unsigned type that holds every id seen so far."""
        seen = self.seen[qid]
        ids = list(map(seen.get, values))  # each value's id where every value is seen (most batches): no Python loop
        if None in ids:
            ids = [-1 if v is _UNUSED else seen.setdefault(v, len(seen)) for v in values]
        return (np.array([*ids, -1], dtype=np.int64) + 1).astype(_unsigned(len(seen)))

    def too_many(self) -> bool:
        """Whether a qid holds more than :data:`QID_VALUES` distinct values (then the group-by costs less)."""
        return any(len(seen) > QID_VALUES for seen in self.seen.values())

    def counted(self) -> tuple[pl.DataFrame, TupleCodes] | None:
        """The sorted tuple counts and their codes from every batch's ids (freed batch by batch as they are packed;
        those packed as they were read with the ranks that still hold are not packed again)."""
        packing = self.packing
        ranked = packing.ranked if packing is not None else [self._ranks(q, self.schema[q]) for q in self.qids]
        sizes = [len(labels) + 1 for _, labels in ranked]
        if float(np.prod(sizes, dtype=np.float64)) >= 2.0**62:
            return None
        found, counts = _count(_packed(self.stored, [rank for rank, _ in ranked], sizes, packing))
        codes, labels, columns = {}, {}, {}
        with ThreadPoolExecutor(1, thread_name_prefix="polars_anon_labels") as pool:
            for j in reversed(range(len(self.qids))):
                q = self.qids[j]
                found, code = _divmod(found, sizes[j])
                code = code.astype(np.int32 if sizes[j] <= (1 << 31) - 1 else np.int64, copy=False)  # as _passes ranks
                labels[q], codes[q] = self._used(q, *ranked[j], code)
                start = j > 0 and len(counts) >= LABELS_BESIDE  # the first qid's gathered last, on this thread
                columns[q] = beside(pool, start, decoded, q, labels[q], codes[q])
            frame = pl.DataFrame([columns[q].result() for q in self.qids])
        made = TupleCodes({q: labels[q] for q in self.qids}, {q: codes[q] for q in self.qids}, dict(frame.to_dict()))
        return frame.with_columns(pl.Series(COUNT, counts, dtype=pl.Int64)), made

    def _used(self, qid: str, rank: np.ndarray, labels: pl.Series, codes: np.ndarray) -> tuple[pl.Series, np.ndarray]:
        """The labels some tuple holds and the tuples' codes among them: a dictionary may keep entries no row uses
        (found here, on the tuples' codes, not marked row by row as the batches are read: 0.015-0.02 CPU s on the
        3M register); they are dropped from :attr:`seen` too (the hierarchies' values)."""
        used = np.zeros(len(labels) + 1, dtype=bool)  # marks, not counts: a bincount of the 3M register's 684,166
        used[codes] = True  # codes took 1.7-10 ms a qid, these marks 1.2-1.4 (and no Int64 copy of the codes)
        used[-1] = True  # the null's code: past the labels, as before
        if used.all():
            return labels, codes
        keep = used[rank[1:]]  # per first-seen value (id 0, the null, left out)
        kept = [v for v, k in zip(self.seen[qid], keep.tolist()) if k]
        self.seen[qid] = {v: i for i, v in enumerate(kept)}
        return labels.filter(pl.Series(used[:-1])), (np.cumsum(used) - 1).astype(codes.dtype)[codes]

    def _ranks(self, qid: str, dtype: pl.DataType) -> tuple[np.ndarray, pl.Series]:
        """Per stored id (0: null) its rank among the distinct values' String labels (a null: their number, last),
        and those sorted labels: :func:`~polars_anon._passes.string_ranks` of the first-seen values."""
        rank, labels = string_ranks(pl.Series(qid, list(self.seen[qid]), dtype=dtype))
        return np.concatenate([[len(labels)], rank.astype(np.int64)]), labels


LABELS_BESIDE = 100_000
"""From this many tuples each qid's String labels (:func:`~polars_anon._passes.decoded`) are gathered on a second thread
as soon as its codes are known, beside the next qid's codes (the 3M register's 684,166 tuples: 0.025 CPU s of gathers,
Polars releasing the GIL; the first qid's gathered last, on the caller's thread); below, a thread costs more."""


class _Distinct:
    """The distinct values of a few columns, each batch's dictionary (or an integer column's range table) added to a
    set; a column whose values pass :data:`DISTINCT_CAP` is dropped (a column that identifies people: the road's
    bounded count refuses it)."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.values: dict[str, set[object]] = {c: set() for c in columns}
        self.nulls: dict[str, bool] = dict.fromkeys(columns, False)

    def add(self, batch: pa.Table) -> None:
        import pyarrow as pa

        for c in list(self.values):
            column = batch.column(c)
            self.nulls[c] |= column.null_count > 0
            if pa.types.is_dictionary(column.type):
                if not self.values[c].issuperset(_dictionary(column, marked=False)[0]):  # else no row to mark
                    self.values[c].update(v for v in _dictionary(column)[0] if v is not _UNUSED)
            else:
                found = _distinct_integers(column)
                if found is None:  # a range wider than 2**24: more values than the cap, likely
                    del self.values[c]
                    continue
                self.values[c].update(_plus(found[2], found[1], found[3]))
            if len(self.values[c]) > DISTINCT_CAP:
                del self.values[c]

    def counts(self) -> dict[str, int]:
        """Each column's distinct values, a null counted as one value."""
        return {c: len(v) + self.nulls[c] for c, v in self.values.items()}


def _distinct_integers(column: pa.ChunkedArray) -> tuple[np.ndarray, int, np.ndarray, np.dtype] | None:
    """An integer column's slots in a table over its range of values (each value less the smallest; a null: the slot
    past the largest), the smallest value, the distinct values less that (ascending) and the column's NumPy type; None
    where the range is wider than 2**24."""
    values, valid = _numpy(column.combine_chunks())
    present_values = values[valid] if valid is not None else values
    if not len(present_values):
        return np.zeros(len(values), dtype=np.int64), 0, np.zeros(0, dtype=np.int64), values.dtype
    low, high = int(present_values.min()), int(present_values.max())
    if high - low >= 1 << 24:
        return None
    slots = _offsets(values, low)  # a null's slot: any value, set below
    if valid is not None:
        slots[~valid] = high - low + 1
    present = np.zeros(high - low + 2, dtype=bool)
    present[slots] = True
    return slots, low, np.flatnonzero(present[:-1]), values.dtype


def _offsets(values: np.ndarray, low: int) -> np.ndarray:
    """Each value less `low`, as Int64 (in a narrow type, Int8's 33 - -119, it would wrap; a UInt64 beyond 2**63
    does not fit an Int64 before the subtraction)."""
    if values.dtype == np.uint64:
        return (values - np.uint64(low)).astype(np.int64)
    return np.subtract(values, low, dtype=np.int64)  # one pass, in Int64 (no copy of the values first)


_UNUSED = object()
"""A dictionary entry no row uses (a writer may keep them: an Arrow dictionary written without its schema)."""


def _dictionary(column: pa.ChunkedArray, *, marked: bool = True) -> tuple[list[object], list[np.ndarray]]:
    """A dictionary column's values (one dictionary for every chunk), :data:`_UNUSED` for those no row uses (`marked`;
    else every value as it is), and each chunk's indices (a null: the number of values)."""
    column = column.unify_dictionaries()
    values = column.chunk(0).dictionary.to_pylist() if column.num_chunks else []
    indices = [_filled(c.indices, len(values)) for c in column.chunks]
    if not marked:
        return values, indices
    used = np.zeros(len(values) + 1, dtype=bool)
    for i in indices:
        used[i] = True
    return [v if u else _UNUSED for v, u in zip(values, used[:-1].tolist())], indices


def _plus(offsets: np.ndarray, low: int, dtype: np.dtype) -> list[int]:
    """`low` plus each offset, computed in the column's own type (a UInt64 beyond 2**63 does not fit an Int64)."""
    return (offsets.astype(dtype) + dtype.type(low)).tolist()


def _filled(indices: pa.Array, null: int) -> np.ndarray:
    """Dictionary indices as a NumPy array, a null as `null`."""
    values, valid = _numpy(indices)
    return values if valid is None else np.where(valid, values, null)


def _numpy(array: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """An integer array's values (a null's slot: any value) and where they are valid (None: all), from its buffers:
    without pyarrow's ``to_numpy`` (it imports pandas) or a float conversion (exact only to 2**53)."""
    bitmap, data = array.buffers()[:2]
    start, end = array.offset, array.offset + len(array)
    values = np.frombuffer(data, dtype=_NUMPY[str(array.type)])[start:end] if end else np.zeros(0, np.int64)
    if not array.null_count:
        return values, None
    valid = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")[start:end].astype(bool)
    return values, valid


_NUMPY = {f"{sign}int{bits}": np.dtype(f"{sign}int{bits}") for sign in ("", "u") for bits in (8, 16, 32, 64)}
"""pyarrow's integer types by name, as NumPy's (``to_numpy`` and ``to_pandas_dtype`` import pandas: 0.3 s)."""


def _unsigned(n: int) -> type[np.unsignedinteger]:
    """The smallest unsigned type holding 0..n."""
    return np.uint8 if n < 1 << 8 else np.uint16 if n < 1 << 16 else np.uint32


PACKINGS = 2
"""The batches are packed as they are read at most this many times from the start of a run of batches that add no
value (each start ranks the values seen; a later batch that adds one voids it)."""


@dataclass
class _Packing:
    """Batches' keys packed as they are read (on the caller's thread while pyarrow reads the next batch, not after
    the read): the ranks of the values seen so far (:meth:`_GlobalIds._ranks` of each qid), every row's key (the
    batches packed filled in) and the batches packed."""

    ranked: list[tuple[np.ndarray, pl.Series]]
    sizes: list[int]
    keys: np.ndarray
    ranks: list[np.ndarray]
    done: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, ranked: list[tuple[np.ndarray, pl.Series]], rows: int) -> _Packing | None:
        """Packing with `ranked` for `rows` rows in all; None where there is no qid or the keys pass 2**62."""
        sizes = [len(labels) + 1 for _, labels in ranked]
        if not ranked or float(np.prod(sizes, dtype=np.float64)) >= 2.0**62:
            return None
        keys = _keys(rows, sizes)
        return cls(ranked, sizes, keys, [rank.astype(keys.dtype) for rank, _ in ranked])

    def add(self, index: int, start: int, ids: list[np.ndarray]) -> None:
        """Pack batch `index`'s `ids`, its rows from `start`."""
        _pack(self.keys[start : start + len(ids[0])], ids, self.ranks, self.sizes)
        self.done.add(index)


def _keys(rows: int, sizes: list[int]) -> np.ndarray:
    """Room for `rows` keys over `sizes`: Int32 where every key fits one (the 3M register's 5.7M keys: sorted in 8 ms,
    not 15), else Int64."""
    return np.empty(rows, dtype=np.int32 if float(np.prod(sizes, dtype=np.float64)) < NARROW_KEYS else np.int64)


def _packed(
    stored: list[list[np.ndarray]], ranks: list[np.ndarray], sizes: list[int], packing: _Packing | None
) -> np.ndarray:
    """Every row's ranks packed into one integer, the first qid the most significant (the labels' sorted order), those
    of `packing` as they are; each batch's ids dropped from `stored` once packed."""
    if packing is not None:
        keys, done = packing.keys, packing.done
    else:
        keys, done = _keys(sum(len(ids[0]) for ids in stored if ids), sizes), set()
    ranks = [rank.astype(keys.dtype) for rank in ranks]  # a value per label: the gathers below in the keys' type
    start = 0
    for index in range(len(stored)):
        ids = stored.pop(0)
        rows = len(ids[0]) if ids else 0
        if index not in done:
            _pack(keys[start : start + rows], ids, ranks, sizes)
        start += rows
    return keys


def _pack(key: np.ndarray, ids: list[np.ndarray], ranks: list[np.ndarray], sizes: list[int]) -> None:
    """A batch's keys from its ids (per qid), written into `key`."""
    key[:] = 0
    for column, rank, size in zip(ids, ranks, sizes):
        key *= size
        key += _gathered(rank, column)


def _divmod(keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.divmod(keys, size)`` for non-negative `keys`, in their type: a floor division (NumPy divides by a
    constant with libdivide) and the remainder as ``keys - quotient * size`` in place of the product. ``np.divmod``
    took twice as long over the 3M register's 684,166 tuples (its four qids: 40-50 ms against 18-26, loaded
    machine)."""
    quotient = np.floor_divide(keys, size)
    rest = np.multiply(quotient, size)
    np.subtract(keys, rest, out=rest)
    return quotient, rest


def _gathered(table: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``table[indices]`` for `indices` known to be in its range (dictionary indices, ids): NumPy's ``take`` in its
    ``clip`` mode checks no bound and gathers through Int32, UInt16 or UInt8 indices as they are, where indexing first
    converts them to Int64 (131,072 indices: 0.10-0.11 ms against 0.25)."""
    return np.take(table, indices, mode="clip")


def _count(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, ascending, and the rows of each: `keys` sorted in place. NumPy's sort of the 3M register's
    keys took 15 ms here as Int64, 8 as Int32 (its AVX-512 sort; a stable sort, 200 ms). ``np.bincount`` over their
    bound (5.7M) took 170 ms in a fresh process, as in a job: most of it the first touch of its 45 MB of counts (47 ms
    on warm memory)."""
    keys.sort()
    if not len(keys):
        return keys, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.diff(np.append(starts, len(keys)))
