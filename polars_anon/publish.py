"""The one publish step: a :class:`~polars_anon.tuplemap.TupleMap` turned into rows.

Every method's map goes through :func:`publish`; nothing else writes published
quasi-identifier values. Row order is kept, suppressed rows are removed (the
others keep their order), other columns are untouched.

How rows meet their map entry: each row's quasi-identifier tuple becomes one
Int64 code (the Enum codes of its values, combined with strides; see
:func:`polars_anon.classes.tuple_key`). When the code space is small (at most
:data:`DENSE_KEYS` tuples) the code indexes a dense array of map rows and each
published column is a gather, which streams and needs no join; otherwise the rows
are joined to the map on the code. A row map (MDAV) is joined on the row number.

A map that publishes each column's value from that value alone and suppresses no
row (full-domain generalization, and any map where it happens to hold: checked on the
map, :func:`column_maps`) is published column by column, with no tuple code: a column
kept as is is left alone, a column published as one value is that value, any other is
a gather from its own small table of values (the same rows, so the same bytes).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_anon.classes import tuple_key, tuple_labels
from polars_anon.tuplemap import OFFSET, ROW, ROW_HASH, SIZE, SUPPRESSED, TupleMap, out_col, row_hash

__all__ = ["DENSE_KEYS", "column_maps", "publish"]

DENSE_KEYS = 1 << 24
"""Largest tuple-code space published by a dense gather instead of a join."""
_KEY, _AT, _RANK = "__anon_key", "__anon_at", "__anon_rank"


def publish(lf: pl.LazyFrame, tmap: TupleMap) -> pl.LazyFrame:
    """Publish the rows of `lf` through `tmap` (lazy; row order kept).

    `lf` is the prepared input the map was computed from (quasi-identifiers as
    String labels); every tuple of `lf` must be in the map.

    Examples
    --------
    >>> agg = pl.DataFrame({"sex": ["F", "M"], "size": [2, 1]})
    >>> m = TupleMap.from_labels(agg, ["sex"], {"sex": pl.Series(["F", "*"])}, np.array([False, True]))
    >>> publish(pl.LazyFrame({"sex": ["F", "M", "F"], "x": [1, 2, 3]}), m).collect().rows()
    [('F', 1), ('F', 3)]
    """
    if tmap.by_partition:
        raise ValueError("a partition map is joined by its engine (the original tuples stay there), not published here")
    names = lf.collect_schema().names()
    qids = list(tmap.qids)
    if tmap.by_row:
        joined = (
            lf.with_row_index(ROW)
            .with_columns(pl.col(ROW).cast(pl.Int64))
            .join(tmap.frame.lazy(), on=ROW, how="left", maintain_order="left")
        )
        if ROW_HASH in tmap.stored.columns:  # a row that is not the one the method read: null labels (refused)
            same = pl.col(ROW_HASH) == row_hash(qids)
            joined = joined.with_columns(pl.when(same).then(pl.col(out_col(q))).alias(out_col(q)) for q in qids)
    elif tmap.split:
        joined = _publish_split(lf, tmap)
    elif (columns := column_maps(tmap)) is not None:
        return lf.with_columns(_column_exprs(columns)).select(names)
    else:
        joined = _publish_tuples(lf, tmap)
    if tmap.suppressed_rows:
        joined = joined.filter(~pl.col(SUPPRESSED))
    return joined.with_columns(pl.col(out_col(q)).alias(q) for q in qids).select(names)


def column_maps(tmap: TupleMap) -> dict[str, pl.DataFrame] | None:
    """Per qid, its original values (sorted) and the published value of each, when the map publishes every
    column from its own value alone and suppresses no row; else None.

    >>> agg = pl.DataFrame({"a": ["x", "y", "x"], "b": ["u", "u", "v"], "size": [1, 2, 3]})
    >>> m = TupleMap.from_labels(agg, ["a", "b"], {"a": pl.Series(["*", "*", "*"]), "b": pl.Series(["u", "u", "v"])})
    >>> {q: f.rows() for q, f in column_maps(m).items()}
    {'a': [('x', '*'), ('y', '*')], 'b': [('u', 'u'), ('v', 'v')]}
    >>> column_maps(TupleMap.from_labels(agg, ["a", "b"], {"a": pl.Series(["x", "*", "y"]), "b": agg["b"]})) is None
    True
    """
    if tmap.by_row or tmap.by_partition or tmap.split or bool(tmap.stored[SUPPRESSED].any()):
        return None
    out = {}
    for q in tmap.qids:
        pairs = _known_pairs(tmap, q)
        if pairs is None:
            pairs = tmap.frame.select(q, out_col(q)).unique().sort(q)  # materializes: the column's distinct values
            if pairs[q].n_unique() != pairs.height:
                return None  # a value published as two values: the tuple decides
        elif pairs.is_empty():
            return None
        out[q] = pairs
    return out


def _known_pairs(tmap: TupleMap, q: str) -> pl.DataFrame | None:
    """:func:`column_maps`'s table of `q` from the node ids the map's builder knew (no String compared): None when
    they are not known, empty when a value is published as two."""
    known = tmap.known(q)
    if known is None or known.leaves is None:
        return None
    first = tmap.leaf_nodes(q)
    if first is None:
        return pl.DataFrame()
    present = np.flatnonzero(first >= 0)
    labels = pl.Series(known.hierarchy.labels, dtype=pl.String)
    return pl.DataFrame([labels.gather(present).alias(q), labels.gather(first[present]).alias(out_col(q))])


def _column_exprs(columns: dict[str, pl.DataFrame]) -> list[pl.Expr]:
    """Each qid published from its own value (see :func:`column_maps`): kept, one value, or a gather."""
    exprs = []
    for q, pairs in columns.items():
        original, published = pairs[q], pairs[out_col(q)]
        if original.equals(published):
            continue  # published as is
        if published.n_unique() == 1:
            exprs.append(pl.lit(published[0], dtype=pl.String).alias(q))
        else:
            # a value the map does not hold (the input changed since the method read it) is published null, which
            # the check refuses as a class the map did not plan (a strict cast failed in Polars' own words)
            at = pl.col(q).cast(pl.Enum(original), strict=False).to_physical()
            exprs.append(pl.lit(published).gather(at).alias(q))
    return exprs


def _publish_tuples(lf: pl.LazyFrame, tmap: TupleMap) -> pl.LazyFrame:
    """One map row per original tuple: a dense gather on the tuple code, or a join on it."""
    qids, frame = list(tmap.qids), tmap.frame
    carried = [*(out_col(q) for q in qids), SUPPRESSED]
    labels = tuple_labels(frame, qids)  # a map's tuples are never null: the distinct values of each qid
    key = tuple_key(frame, qids, labels)
    if key is None:  # the code would overflow Int64: join on the String tuple
        return lf.join(frame.lazy().select(*qids, *carried), on=qids, how="left", maintain_order="left")
    codes = frame.select(key.alias(_KEY))[_KEY].to_numpy()
    space = int(np.prod([max(len(v), 1) for v in labels], dtype=np.float64))
    if space <= DENSE_KEYS:
        at = np.full(space, -1, dtype=np.int32)
        at[codes] = np.arange(frame.height, dtype=np.int32)
        # a code no map row holds is null (as the join's miss), not -1: a gather at -1 reads the last map row
        index = pl.lit(pl.Series(np.ma.masked_array(at, at < 0))).gather(key)
        return lf.with_columns(index.alias(_AT)).with_columns(
            pl.lit(frame[c]).gather(pl.col(_AT)).alias(c) for c in carried
        )
    # the join finds each row's map row (a tuple not in the map: null, published as nulls and dropped as suppressed)
    # and the columns are gathered from there: a join that carried them cost twice the CPU (fars_int's 100,937 rows
    # and 60,806 map rows: 0.030 -> 0.015 CPU s; the same at 10M rows and 2M keys, streamed, no more memory)
    at = pl.Series(_AT, np.arange(frame.height, dtype=np.int32 if frame.height < 1 << 31 else np.int64))
    joined = lf.with_columns(key.alias(_KEY)).join(
        pl.LazyFrame([pl.Series(_KEY, codes), at]), on=_KEY, how="left", maintain_order="left"
    )
    return joined.with_columns(pl.lit(frame[c]).gather(pl.col(_AT)).alias(c) for c in carried)


def _publish_split(lf: pl.LazyFrame, tmap: TupleMap) -> pl.LazyFrame:
    """Some tuples go to several published tuples: the i-th row of a tuple (row order)
    takes the entry whose ``[offset, offset + size)`` holds i."""
    qids, frame = list(tmap.qids), tmap.frame
    carried = [*(out_col(q) for q in qids), SUPPRESSED]
    ranges = frame.lazy().select(*qids, pl.col(OFFSET), (pl.col(OFFSET) + pl.col(SIZE)).alias("__anon_end"), *carried)
    return (
        lf.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over(qids).alias(_RANK))
        .join(ranges, on=qids, how="left", maintain_order="left")
        .filter((pl.col(_RANK) >= pl.col(OFFSET)) & (pl.col(_RANK) < pl.col("__anon_end")))
    )
