"""The input every metric works on: original -> published tuple pairs with counts.

Metrics never look at rows one by one. :func:`prepare` makes one pass over the
original and the anonymized table and keeps, for every distinct
(original tuple, published tuple, sensitive value), its row count: the *pairs*
aggregate (a few thousand rows for Adult, about 1.4 million for a 15-million-row
voter register). Values are hierarchy node ids, so every metric is a join on the
hierarchy ``nodes`` table plus aggregations over the pairs.

Row alignment
-------------
The two tables describe the same people. Two ways to line them up:

- ``key=None`` (default): by position. The anonymized table has the same rows in
  the same order (DESIGN.md invariant 3). Suppressed rows must then be kept,
  published as the hierarchy roots; a table with rows removed is refused, with
  a hint to pass a key.
- ``key="col"``: by a unique row key present in both tables. Original rows whose
  key is absent from the anonymized table are the *suppressed* rows.

Suppressed rows are treated as published with every quasi-identifier at its
hierarchy root by every cell-level metric (as the full-domain search counts
them); the class-level metrics (discernibility, C_avg, classification metric,
diameter, class facts) set them apart as the papers do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TypeVar, cast

import numpy as np
import polars as pl

from polars_anon._passes import collect_apart
from polars_anon._validate import (
    as_lazy,
    check_columns,
    check_k,
    check_mapping,
    is_integer,
    names_list,
    not_in_hierarchy,
)
from polars_anon.classes import pack_codes, unpack_codes
from polars_anon.errors import (
    InputError,
    InvalidParameterError,
    NullValueError,
    ValueNotInHierarchyError,
    preview,
)
from polars_anon.hierarchy import Hierarchy, check_hierarchies
from polars_anon.labels import label_expr, label_exprs
from polars_anon.messages import KEY_NOT_UNIQUE, KEY_NULL, KEY_SHARED, KEY_STRAY
from polars_anon.metrics.sums import stable_mean
from polars_anon.metrics.weights import EDGE_METRICS, root_weights

__all__ = [
    "SENSITIVE",
    "SIZE",
    "SUPPRESSED",
    "MetricData",
    "cells_table",
    "from_mapping",
    "fully_suppressed",
    "label_hierarchies",
    "label_tables",
    "node_numbers",
    "node_stats",
    "orig_col",
    "prepare",
    "pub_col",
]

SIZE = "__anon_size"
SUPPRESSED = "__anon_suppressed"
SENSITIVE = "__anon_s"
_HIT = "__anon_hit"
T = TypeVar("T")
_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
"""A leaf label is a number when it matches this (the SQL twin uses the same pattern)."""


def orig_col(i: int) -> str:
    """Column of the i-th quasi-identifier's original leaf (node id) in the pairs."""
    return f"__anon_o{i}"


def pub_col(i: int) -> str:
    """Column of the i-th quasi-identifier's published node (node id) in the pairs."""
    return f"__anon_p{i}"


@dataclass(frozen=True)
class MetricData:
    """The pairs aggregate and what the metrics need to read it.

    ``pairs`` has, for the i-th quasi-identifier, ``__anon_o{i}`` (original leaf)
    and ``__anon_p{i}`` (published node) as Int64 node ids of its hierarchy,
    ``__anon_s`` (the sensitive value as String, when `sensitive` is set),
    ``__anon_suppressed`` (Boolean; such rows are published at the roots) and
    ``__anon_size`` (Int64 rows).

    ``per_attribute`` False asks the metrics for their whole-table row alone (the
    report reads nothing else): they leave out the per-attribute rows, a query each
    (:meth:`whole_table`).
    """

    pairs: pl.DataFrame
    qids: list[str]
    hierarchies: dict[str, Hierarchy]
    sensitive: str | None = None
    k: int | None = None
    levels: dict[str, int] | None = None
    per_attribute: bool = True
    classes: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)
    """The published classes of the kept pairs, when a map's builder knew them
    (:meth:`~polars_anon.tuplemap.TupleMap.published_nodes`): node ids (a row per class, a column per qid, any
    order) and each class's rows; the metrics then do not group the pairs again."""
    leaf_nodes: dict[str, np.ndarray] | None = field(default=None, repr=False, compare=False)
    """Per qid, the node every pair holding a leaf publishes (-1 where no pair holds it), when no pair is suppressed
    and a map's builder knew it (:meth:`~polars_anon.tuplemap.TupleMap.leaf_nodes`): the qid's cells are then one
    count of its leaves (:func:`~polars_anon.metrics.cell_counts.qid_cells`), no pass to find that function."""
    _cache: dict[str, object] = field(default_factory=dict, init=False, repr=False, compare=False)

    def remember(self, key: str, make: Callable[[], T]) -> T:
        """``make()``, computed once for this data under `key` (what several metrics read).

        >>> from polars_anon.metrics._frames import example
        >>> example().remember("answer", lambda: 42), example().remember("answer", lambda: 0)
        (42, 42)
        """
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]  # type: ignore[return-value]

    def whole_table(self) -> MetricData:
        """The same data with ``per_attribute`` False; what was computed on it so far is shared, not redone.

        >>> from polars_anon.metrics._frames import example
        >>> from polars_anon.metrics.partition import n_classes
        >>> n_classes(example().whole_table()).collect().rows()  # the per-attribute rows left out
        [(None, 2)]
        """
        if not self.per_attribute:
            return self
        out = replace(self, per_attribute=False)
        out.__dict__.update((k, v) for k, v in self.__dict__.items() if k != "per_attribute")  # caches included
        return out

    @cached_property
    def n_rows(self) -> int:
        """Rows of the original table (suppressed ones included)."""
        return int(self.pairs[SIZE].sum())

    @cached_property
    def suppressed_rows(self) -> int:
        """Rows of the original table absent from the anonymized one."""
        return int(self.pairs.filter(pl.col(SUPPRESSED))[SIZE].sum())

    @cached_property
    def roots(self) -> dict[str, dict[str, np.ndarray]]:
        """R per node (weight up to the root) of every edge metric: ``roots[metric][qid]``."""
        return {m: root_weights(m, self.hierarchies) for m in EDGE_METRICS}

    def nodes(self, i: int) -> pl.DataFrame:
        """Per-node facts of the i-th hierarchy (see :func:`node_stats`) plus R of each edge metric."""
        key = f"nodes{i}"
        if key not in self._cache:
            q = self.qids[i]
            stats = node_stats(self.hierarchies[q])
            self._cache[key] = stats.with_columns(
                pl.Series(f"r_{m}", self.roots[m][q], dtype=pl.Float64) for m in EDGE_METRICS
            )
        return self._cache[key]  # type: ignore[return-value]

    def numbers(self, i: int) -> dict[str, np.ndarray]:
        """:func:`node_numbers` of the i-th hierarchy, computed once."""
        return self.remember(f"numbers{i}", lambda: node_numbers(self.hierarchies[self.qids[i]]))

    @property
    def cells(self) -> pl.DataFrame:
        """One row per (attribute, original leaf, published node, suppressed) with its row count.

        Columns: ``attribute`` (qid name), ``i`` (its index), ``leaf``, ``pub``,
        ``suppressed``, ``size``; the hierarchy facts of the leaf (``l_*``) and of
        the published node (``p_*``) from :meth:`nodes`; and per attribute ``h``
        (height), ``n_leaves``, ``numeric`` and ``domain`` (numeric range of the
        leaves, null when not numeric). Computed once; :func:`fully_suppressed` gives
        T* a cheaper way (from its table's cells) under ``make_cells``.
        """
        if "cells" not in self._cache:
            make = cast(Callable[[], pl.DataFrame], self._cache.get("make_cells", self._count_cells))
            self._cache["cells"] = make()
        return cast(pl.DataFrame, self._cache["cells"])

    def _count_cells(self) -> pl.DataFrame:
        """:attr:`cells` counted from the pairs (a group-by per attribute)."""
        frames = []
        for i, q in enumerate(self.qids):
            h = self.hierarchies[q]
            nodes = self.nodes(i).drop("label")
            root = nodes.filter(pl.col("is_root"))
            domain = float(root["num_hi"].item() - root["num_lo"].item()) if bool(root["numeric"].item()) else None
            counted = (
                self.pairs.lazy()
                .group_by(
                    pl.col(orig_col(i)).alias("leaf"),
                    pl.col(pub_col(i)).alias("pub"),
                    pl.col(SUPPRESSED).alias("suppressed"),
                )
                .agg(pl.col(SIZE).sum().alias("size"))
                .join(nodes.lazy().select(pl.all().name.prefix("l_")), left_on="leaf", right_on="l_node")
                .join(nodes.lazy().select(pl.all().name.prefix("p_")), left_on="pub", right_on="p_node")
            )
            frames.append((q, h, domain, counted))
        return cells_table(frames)

    def closure(self) -> pl.DataFrame:
        """Every (attribute, leaf, ancestor) of the hierarchies, leaf itself included."""
        key = "closure"
        if key not in self._cache:
            self._cache[key] = pl.concat(
                [
                    self.hierarchies[q].closure.select(
                        pl.lit(q, dtype=pl.String).alias("attribute"), "leaf", "ancestor"
                    )
                    for q in self.qids
                ]
            )
        return self._cache[key]  # type: ignore[return-value]


def cells_table(per_qid: Sequence[tuple[str, Hierarchy, float | None, pl.LazyFrame]]) -> pl.DataFrame:
    """:attr:`MetricData.cells` from each qid's name, hierarchy, numeric domain (None: not numeric) and cells (its
    ``leaf``, ``pub``, ``suppressed``, ``size`` and node facts, in the order they are given): each qid's constants
    (``attribute``, ``i``, ``h``, ``n_leaves``, ``numeric``, ``domain``) added in front (the divisors ``h`` and
    ``domain`` stored value by value), the qids stacked and sorted.

    >>> from polars_anon import Hierarchy
    >>> cells = pl.LazyFrame({"leaf": [2, 1], "pub": [0, 1], "suppressed": [False, False], "size": [3, 1]})
    >>> table = cells_table([("g", Hierarchy.suppression(["F", "M"]), None, cells)])
    >>> table.columns[:6], table["leaf"].to_list(), table["domain"].to_list()  # not numeric: no domain (null)
    (['attribute', 'i', 'h', 'n_leaves', 'numeric', 'domain'], [1, 2], [None, None])
    """
    frames = [
        cells.select(
            pl.lit(q, dtype=pl.String).alias("attribute"),
            pl.lit(i, dtype=pl.Int64).alias("i"),
            pl.lit(h.height, dtype=pl.Int64).alias("h"),
            pl.lit(h.n_leaves, dtype=pl.Int64).alias("n_leaves"),
            pl.lit(domain is not None).alias("numeric"),
            pl.lit(domain, dtype=pl.Float64).alias("domain"),
            pl.all(),
        )
        for i, (q, h, domain, cells) in enumerate(per_qid)
    ]
    # materializes: one row per (attribute, leaf, published node), a few thousand at most
    table = pl.concat(frames).sort("i", "leaf", "pub", "suppressed").collect()
    # the divisors as stored values: a column Polars holds as one repeated value it divides by as by a scalar, by a
    # product with the inverse or not as its threads cut the rows (precision 0.3999999999999999 at one thread, 0.4
    # at two); stored, each value is divided by its divisor, whatever the threads
    return table.with_columns(pl.Series(c, table[c].to_list(), dtype=table.schema[c]) for c in ("h", "domain"))


def fully_suppressed(data: MetricData) -> MetricData:
    """The fully suppressed table T* of the same original rows: every quasi-identifier cell at its root.

    No row is removed (T* is 1-class, n rows) and the full-domain levels are the
    tops; k and the sensitive values are kept. The worst case that paper 001 §5
    divides by for its percentage of alteration and paper 003 §3.5 for its
    normalized metrics (see :func:`polars_anon.metrics.compute`, ``normalized``).

    >>> from polars_anon.metrics._frames import example
    >>> star = fully_suppressed(example())
    >>> star.pairs.select(pub_col(0), pub_col(1), SUPPRESSED).unique().rows(), star.n_rows, star.levels
    ([(0, 0, False)], 6, {'gender': 1, 'race': 2})
    """
    m = len(data.qids)
    o_cols, p_cols = [orig_col(i) for i in range(m)], [pub_col(i) for i in range(m)]
    extra = [SENSITIVE] if SENSITIVE in data.pairs.columns else []
    keys = [*o_cols, *extra]
    integers = all(data.pairs.schema[c].is_integer() for c in keys)
    radix = [int(cast(int, data.pairs[c].max() or 0)) + 1 for c in keys] if integers else []
    packed = pack_codes([pl.col(c).cast(pl.Int64) for c in keys], radix) if integers else None
    if packed is not None and data.pairs.select(packed.n_unique()).item() == data.pairs.height:
        grouped = data.pairs.lazy()  # every original tuple once (a tuple map): nothing to merge, the order kept
    elif packed is None:
        grouped = data.pairs.lazy().group_by(keys).agg(pl.col(SIZE).sum()).sort(keys)
    else:  # one Int64 key: a much cheaper group-by than one column per qid
        grouped = (
            data.pairs.lazy()
            .group_by(packed.alias("__anon_key"))
            .agg(pl.col(SIZE).sum())
            .sort("__anon_key")
            .select(*unpack_codes("__anon_key", radix, keys), SIZE)
        )
    pairs = (
        grouped.with_columns(*(pl.lit(0, dtype=pl.Int64).alias(c) for c in p_cols), pl.lit(False).alias(SUPPRESSED))
        .select(data.pairs.columns)
        .collect()
    )  # materializes: at most as many rows as the pairs
    tops = {q: data.hierarchies[q].height - 1 for q in data.qids}
    star = MetricData(pairs, data.qids, data.hierarchies, data.sensitive, data.k, tops, data.per_attribute)
    for i in range(m):  # the same hierarchies: their facts are not computed twice
        data.nodes(i)
        star.remember(f"nodes{i}", lambda i=i: data.nodes(i))
    star.remember("make_cells", lambda: lambda: _star_cells(data))
    return star


def _star_cells(data: MetricData) -> pl.DataFrame:
    """The :attr:`~MetricData.cells` of T* from those of `data` (the same original rows): each (attribute, leaf)'s
    rows summed, published at node 0 (the root, as in T*'s pairs), unsuppressed; the same frame as T*'s own
    group-by of its pairs (integer sizes), from a few thousand cells instead of every pair.
    """
    cells = data.cells
    keys = [c for c in cells.columns if c not in ("pub", "suppressed", "size") and not c.startswith("p_")]
    roots = (
        pl.concat(
            [
                data.nodes(i).filter(pl.col("node") == 0).select(pl.lit(i, dtype=pl.Int64).alias("i"), pl.all())
                for i in range(len(data.qids))
            ]
        )
        .drop("label")
        .select("i", pl.all().exclude("i").name.prefix("p_"))
    )
    return (
        cells.lazy()
        .group_by(keys)
        .agg(pl.col("size").sum())
        .join(roots.lazy(), on="i")
        .with_columns(pl.col("p_node").alias("pub"), pl.lit(False).alias("suppressed"))
        .select(cells.columns)
        .sort("i", "leaf", "pub", "suppressed")
        .collect()
    )


def node_stats(h: Hierarchy) -> pl.DataFrame:
    """Facts per node of a hierarchy, used by the metrics.

    Columns: ``node``, ``label``, ``leaves`` (nl), ``level``, ``is_root``,
    ``is_leaf``, ``parent_level`` (level of the parent, null at the root),
    ``numeric`` (every leaf label is a plain decimal number), and for numeric
    hierarchies ``num_lo``/``num_hi``/``num_mean``: the smallest, largest and mean
    leaf value under the node (null otherwise).

    >>> node_stats(Hierarchy.intervals([30, 31, 35], [5])).select("label", "num_mean").rows()
    [('*', 32.0), ('30-34', 30.5), ('30', 30.0), ('31', 31.0), ('35-39', 35.0), ('35', 35.0)]
    """
    labels = pl.Series("label", h.labels, dtype=pl.String)
    numeric = _numeric(h, labels)
    parent = h.parent
    out = pl.DataFrame(
        {
            "node": np.arange(h.n_nodes, dtype=np.int64),
            "label": labels,
            "leaves": h.leaves.astype(np.int64),
            "level": h.level.astype(np.int64),
            "is_root": parent < 0,
            "is_leaf": h.is_leaf,
            "parent_level": pl.Series(np.where(parent < 0, -1, h.level[np.maximum(parent, 0)]), dtype=pl.Int64).replace(
                -1, None
            ),
            "numeric": np.full(h.n_nodes, numeric),
        }
    )
    if not numeric:
        return out.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in ("num_lo", "num_hi", "num_mean"))
    values = labels.cast(pl.Float64, strict=False).to_numpy()
    exact = _integer_facts(h, values)
    if exact is not None:
        return out.with_columns(exact)
    nums = (
        h.closure.with_columns(pl.Series("v", values[h.closure["leaf"].to_numpy()], dtype=pl.Float64))
        .group_by("ancestor")
        .agg(
            pl.col("v").min().alias("num_lo"),
            pl.col("v").max().alias("num_hi"),
            stable_mean(pl.col("v")).alias("num_mean"),
        )
    )
    return out.join(nums, left_on="node", right_on="ancestor", how="left", maintain_order="left")


def _numeric(h: Hierarchy, labels: pl.Series) -> bool:
    """Whether every leaf label of `h` (its `labels`) is a plain decimal number (:func:`node_stats`' ``numeric``)."""
    return bool(labels.gather(np.flatnonzero(h.is_leaf)).str.contains(_NUMBER).all())


def node_numbers(h: Hierarchy) -> dict[str, np.ndarray]:
    """:func:`node_stats`' ``numeric``, ``num_lo``, ``num_hi`` and ``num_mean`` as arrays (NaN for a null), what the
    report's metrics read (:mod:`~polars_anon.metrics.arrays`): with NumPy alone when the hierarchy is not numeric
    or its leaves are whole numbers (:func:`_integer_facts`), no frame built (Adult's 8 hierarchies: about
    0.003 CPU s less per report); else node_stats' own columns.

    >>> h = Hierarchy.intervals([30, 31, 35], [5])
    >>> all(np.array_equal(node_numbers(h)[c], node_stats(h)[c].to_numpy()) for c in ("num_mean", "numeric"))
    True
    """
    labels = pl.Series("label", h.labels, dtype=pl.String)
    numeric = np.full(h.n_nodes, _numeric(h, labels))
    columns = ("num_lo", "num_hi", "num_mean")
    if not numeric.all():
        return {"numeric": numeric, **{c: np.full(h.n_nodes, np.nan) for c in columns}}
    exact = _integer_facts(h, labels.cast(pl.Float64, strict=False).to_numpy())
    if exact is None:
        stats = node_stats(h)
        return {"numeric": numeric, **{c: stats[c].to_numpy() for c in columns}}
    return {"numeric": numeric, **{c: s.to_numpy() for c, s in zip(columns, exact)}}


def _integer_facts(h: Hierarchy, values: np.ndarray) -> list[pl.Series] | None:
    """``num_lo``, ``num_hi``, ``num_mean`` of :func:`node_stats` with NumPy, when the leaves are whole numbers whose
    absolute values sum to at most 2**53 and none is -0.0: every partial sum is then exact, so the sum of a node's
    leaves is the same float in any order (the sorted sum of :func:`~polars_anon.metrics.sums.stable_sum` included)
    and its mean the same division. None otherwise, or when a node has no leaf (the frame path gives it nulls).
    Cup's ZIP hierarchy (100,000 leaves, 600,000 leaf-ancestor pairs): 0.15 CPU s by the group-by, 0.03 here.

    >>> h = Hierarchy.intervals([30, 31, 35], [5])
    >>> [s.to_list() for s in _integer_facts(h, np.array([np.nan, np.nan, 30.0, 31.0, np.nan, 35.0]))]
    [[30.0, 30.0, 30.0, 31.0, 35.0, 35.0], [35.0, 31.0, 30.0, 31.0, 35.0, 35.0], [32.0, 30.5, 30.0, 31.0, 35.0, 35.0]]
    """
    leaf_ids = np.flatnonzero(h.is_leaf)
    leaf_values = values[leaf_ids]
    if (
        not np.isfinite(leaf_values).all()
        or (leaf_values != np.floor(leaf_values)).any()
        or (np.signbit(leaf_values) & (leaf_values == 0)).any()
        or float(np.abs(leaf_values).sum()) > 2.0**53
    ):
        return None
    anc = h.ancestors_by_depth[leaf_ids]  # leaf x depth -> ancestor (-1 below the leaf)
    node = anc.ravel()
    keep = node >= 0
    node, v = node[keep], np.repeat(leaf_values, anc.shape[1])[keep]
    count = np.bincount(node, minlength=h.n_nodes)
    if (count == 0).any():
        return None
    total = np.bincount(node, weights=v, minlength=h.n_nodes)  # exact: whole numbers, |sum| <= 2**53
    order = np.lexsort((v, node))
    ends = np.cumsum(count)  # each node's rows end here in `order` (nodes ascending, values ascending within)
    return [
        pl.Series("num_lo", v[order[ends - count]], dtype=pl.Float64),
        pl.Series("num_hi", v[order[ends - 1]], dtype=pl.Float64),
        pl.Series("num_mean", total / count, dtype=pl.Float64),
    ]


def _code(column: str, h: Hierarchy) -> pl.Expr:
    """Node id of a column's values (String-matched to labels); n_nodes for nulls and unknown values."""
    return (
        pl.col(column)
        .cast(pl.String)
        .cast(pl.Enum(h.labels), strict=False)
        .to_physical()
        .cast(pl.Int64)
        .fill_null(h.n_nodes)
    )


def _tuple_code(columns: Sequence[str], hs: Sequence[Hierarchy]) -> tuple[pl.Expr, list[int]] | None:
    """One Int64 per tuple of node ids (:func:`polars_anon.classes.pack_codes`), or None when it would not fit."""
    radix = [h.n_nodes + 1 for h in hs]
    packed = pack_codes([_code(c, h) for c, h in zip(columns, hs)], radix)
    return None if packed is None else (packed, radix)


def _check_arguments(
    orig: pl.LazyFrame,
    anon: pl.LazyFrame,
    qids: list[str],
    hierarchies: Mapping[str, Hierarchy],
    key: str | None,
    sensitive: str | None,
    k: int | None,
    levels: Mapping[str, int] | None,
) -> tuple[dict[str, Hierarchy], dict[str, int] | None]:
    """The checks of :func:`prepare` (no data read): the qids' hierarchies and the checked levels."""
    hierarchies = check_hierarchies(hierarchies)
    if not qids:
        raise InvalidParameterError("qids is empty; name at least one quasi-identifier column")
    missing = [q for q in qids if q not in hierarchies]
    if missing:
        raise InvalidParameterError(
            f"qids {missing} have no hierarchy; hierarchies are given for {list(hierarchies)} (without one, only the "
            "classes metrics measure a qid: compute(..., names='classes'))"
        )
    hs = {q: hierarchies[q] for q in qids}
    check_columns(orig, qids, "qids")
    check_columns(anon, qids, "qids")
    if key is not None:
        check_columns(orig, [key], "key")
        check_columns(anon, [key], "key")
        if key in qids:
            raise InvalidParameterError(f"key {key!r} is also a quasi-identifier; the key must be a row id column")
        o_type, a_type = orig.collect_schema()[key], anon.collect_schema()[key]
        if o_type != a_type:  # a join of Int64 with String was Polars' SchemaError (hunt34)
            raise InvalidParameterError(
                f"key {key!r} is {o_type} in the original table and {a_type} in the anonymized one; read both with "
                "the same type (a CSV with no rows reads it as String)"
            )
    if sensitive is not None:
        check_columns(orig, [sensitive], "sensitive")
        if sensitive in qids:
            raise InvalidParameterError(
                f"sensitive {sensitive!r} is also a quasi-identifier; it must be one or the other"
            )
    if k is not None:
        check_k(k)  # the one k check (a NumPy integer too)
    levels = _check_levels(levels, hs)
    return hs, levels


def _key_facts(orig: pl.LazyFrame, anon: pl.LazyFrame, key: str) -> pl.LazyFrame:
    """One row: the original's rows sharing a key value with another, its null keys, and the anonymized rows whose
    key the original does not hold."""
    strays = anon.select(key).join(orig.select(key), on=key, how="anti").select(pl.len().alias("strays"))
    shared = orig.select(pl.col(key).is_duplicated().sum().alias("shared"), pl.col(key).null_count().alias("nulls"))
    return pl.concat([shared, strays], how="horizontal")


def _refuse_keys(key: str, shared: int, nulls: int, strays: int) -> None:
    """Refuse a key that cannot line up the rows (hunt34: a repeated original key doubled a published row, a null
    one made its row suppressed, an unknown anonymized one was left out of every metric)."""
    if shared:
        raise InvalidParameterError(KEY_SHARED(key=key, rows=shared))
    if nulls:
        raise InvalidParameterError(KEY_NULL(key=key, rows=nulls))
    if strays:
        raise InvalidParameterError(KEY_STRAY(key=key, rows=strays))


def _sensitive_codes(orig: pl.LazyFrame, sensitive: str | None) -> tuple[pl.Series | None, pl.Expr | None]:
    """The sensitive column's labels (sorted, then null: the last code) and the expression coding it; Nones without."""
    if not sensitive:
        return None, None
    # as labels, as SQL's anon_metric_pairs reads them (one value for -0.0 and 0.0)
    s_label = label_expr(sensitive, orig.collect_schema()[sensitive])
    values = orig.select(s_label.drop_nulls().unique().sort()).collect(engine="streaming")[sensitive]
    s_labels = pl.concat([values, pl.Series([None], dtype=pl.String)])  # the last code is null
    return s_labels, s_label.cast(pl.Enum(values)).to_physical().cast(pl.Int64).fill_null(values.len())


def _code_exprs(
    qids: Sequence[str], ordered: Sequence[Hierarchy], n_s: int
) -> tuple[list[pl.Expr], list[pl.Expr], list[int] | None]:
    """Each side's node ids: one packed Int64 per tuple when the whole group key fits (with the radix), else a column
    per qid (radix None)."""
    packed = _tuple_code(qids, ordered)
    if packed is not None and math.prod(packed[1]) ** 2 * n_s * 2 < 2**62:
        # one Int64 per (original tuple, published tuple, sensitive value, suppressed): the leanest group-by
        return [packed[0].alias("__anon_oc")], [packed[0].alias("__anon_pc")], packed[1]
    o_exprs = [_code(q, h).alias(orig_col(i)) for i, (q, h) in enumerate(zip(qids, ordered))]
    p_exprs = [_code(q, h).alias(pub_col(i)) for i, (q, h) in enumerate(zip(qids, ordered))]
    return o_exprs, p_exprs, None


def _line_up(
    orig: pl.LazyFrame,
    anon: pl.LazyFrame,
    o_exprs: list[pl.Expr],
    p_exprs: list[pl.Expr],
    s_code: pl.Expr | None,
    key: str | None,
) -> pl.LazyFrame:
    """Each original row's codes beside its published row's (by position, or by `key`), flagged SUPPRESSED when the
    anonymized table has no such row."""
    o_side = orig.select(*([key] if key else []), *o_exprs, *([s_code.alias(SENSITIVE)] if s_code is not None else []))
    a_side = anon.select(*([key] if key else []), *p_exprs, pl.lit(True).alias(_HIT))
    if key is None:
        n_orig, n_anon = (int(f.item()) for f in collect_apart([orig.select(pl.len()), anon.select(pl.len())]))
        if n_orig != n_anon:
            raise InputError(
                f"the anonymized table has {n_anon} rows and the original {n_orig}; without a key they are lined up "
                "by position, so suppressed rows must be kept (published as the hierarchy roots). "
                "Pass key='<row id column>' when rows were removed"
            )
        joined = pl.concat([o_side, a_side], how="horizontal")
    else:
        joined = o_side.join(a_side, on=key, how="left")
    return joined.with_columns(pl.col(_HIT).is_null().alias(SUPPRESSED))


def _group_packed(
    joined: pl.LazyFrame, radix: list[int], o_cols: list[str], p_cols: list[str], extra: list[str], n_s: int
) -> pl.LazyFrame:
    """Row counts per (original tuple, published tuple, sensitive value, suppressed), the four packed into one Int64
    key for the group-by and unpacked into their columns after (sorted by the key)."""
    r = math.prod(radix)
    combined = (
        pl.col("__anon_oc")
        + pl.col("__anon_pc").fill_null(0) * r
        + (pl.col(SENSITIVE) if extra else pl.lit(0)) * (r * r)
        + pl.col(SUPPRESSED).cast(pl.Int64) * (r * r * n_s)
    )
    return (
        joined.select(combined.alias("__anon_key"))
        .group_by("__anon_key")
        .agg(pl.len().cast(pl.Int64).alias(SIZE))
        .sort("__anon_key")
        .select(
            *unpack_codes("__anon_key", radix, o_cols),
            *unpack_codes(pl.col("__anon_key") // r, radix, p_cols),
            *([(pl.col("__anon_key") // (r * r) % n_s).alias(SENSITIVE)] if extra else []),
            (pl.col("__anon_key") // (r * r * n_s) == 1).alias(SUPPRESSED),
            SIZE,
        )
    )


def _group_columns(joined: pl.LazyFrame, o_cols: list[str], p_cols: list[str], extra: list[str]) -> pl.LazyFrame:
    """Row counts per (original tuple, published tuple, sensitive value, suppressed), grouped by their columns."""
    return (
        joined.group_by(*o_cols, *p_cols, *extra, SUPPRESSED)
        .agg(pl.len().cast(pl.Int64).alias(SIZE))
        .sort(*o_cols, *p_cols, *extra, SUPPRESSED)
    )


def _collect_pairs(grouped: pl.LazyFrame, orig: pl.LazyFrame, anon: pl.LazyFrame, key: str | None) -> pl.DataFrame:
    """The pairs, in one streaming pass; with a key, refused unless it lines up every original row once."""
    # the streaming engine keeps memory to the groups (a 15M-row register: 0.6 GB, not 2.3 GB, and faster)
    if key is None:
        # materializes: one row per (original tuple, published tuple, sensitive value)
        return grouped.collect(engine="streaming")
    pairs, n_rows, keys = collect_apart(
        [grouped, orig.select(pl.len()), _key_facts(orig, anon, key)], engine="streaming"
    )  # materializes: as above, a count and three
    n_orig = int(n_rows.item())
    if int(pairs[SIZE].sum()) != n_orig:
        raise InvalidParameterError(KEY_NOT_UNIQUE(key=key, total=int(pairs[SIZE].sum()), n_orig=n_orig))
    _refuse_keys(key, *keys.row(0))
    return pairs


def prepare(
    original: pl.LazyFrame | pl.DataFrame,
    anonymized: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    *,
    key: str | None = None,
    sensitive: str | None = None,
    k: int | None = None,
    levels: Mapping[str, int] | None = None,
) -> MetricData:
    """Line up the original and the anonymized table and aggregate them into :class:`MetricData`.

    One pass over both tables: each quasi-identifier value becomes its node id
    (a cast to an Enum of the hierarchy labels), each tuple one Int64, and the
    rows are counted per (original tuple, published tuple, sensitive value).
    See the module docstring for `key` and suppressed rows.

    Raises
    ------
    ColumnNotFoundError
        A qid, the key or the sensitive column is missing.
    InvalidParameterError
        A qid without a hierarchy, k < 1, levels out of range, a key that is not unique.
    InputError
        Without a key, the two tables have different row counts.
    NullValueError, ValueNotInHierarchyError
        An original value is null or not a leaf; a published value is not a node.
    """
    orig, anon = as_lazy(original), as_lazy(anonymized)
    qids = names_list(qids, "qids")
    hs, levels = _check_arguments(orig, anon, qids, hierarchies, key, sensitive, k, levels)
    orig = orig.with_columns(label_exprs(orig.collect_schema(), qids))  # each value as the road labels it
    anon = anon.with_columns(label_exprs(anon.collect_schema(), qids))

    ordered = [hs[q] for q in qids]
    o_cols = [orig_col(i) for i in range(len(qids))]
    p_cols = [pub_col(i) for i in range(len(qids))]
    # each side becomes node ids before the rows are lined up; the sensitive values become codes too
    s_labels, s_code = _sensitive_codes(orig, sensitive)
    n_s = 1 if s_labels is None else s_labels.len()
    o_exprs, p_exprs, radix = _code_exprs(qids, ordered, n_s)
    joined = _line_up(orig, anon, o_exprs, p_exprs, s_code, key)
    extra = [SENSITIVE] if s_labels is not None else []
    if radix is not None:
        grouped = _group_packed(joined, radix, o_cols, p_cols, extra, n_s)
    else:
        grouped = _group_columns(joined, o_cols, p_cols, extra)
    pairs = _collect_pairs(grouped, orig, anon, key)
    if pairs.is_empty():
        raise InputError("the original table has no rows: there is nothing to measure")
    _check_pairs(pairs, qids, ordered, orig, anon)
    # suppressed rows are published at the roots (node 0); rows stay sorted, so every sum runs in one order
    pairs = pairs.with_columns(pl.when(pl.col(SUPPRESSED)).then(0).otherwise(pl.col(c)).alias(c) for c in p_cols)
    if s_labels is not None:
        pairs = pairs.with_columns(pl.lit(s_labels).gather(pl.col(SENSITIVE)).alias(SENSITIVE))
    return MetricData(pairs, qids, hs, sensitive, k, levels)


def label_hierarchies(
    original: pl.LazyFrame | pl.DataFrame, anonymized: pl.LazyFrame | pl.DataFrame, qids: Sequence[str]
) -> dict[str, Hierarchy]:
    """For qids published without a hierarchy (Mondrian's ranges and sets, MDAV's means): per qid, a flat hierarchy
    whose leaves are the labels of both tables (as :func:`prepare` reads them; nulls left out, for :func:`prepare` to
    refuse) under a root no label takes. Only the ``classes`` metrics may read it: they see which published cells are
    equal, and these leaves tell them that; every other metric reads how far a cell is from its original, which a
    flat hierarchy cannot say (a published range would be a leaf, unchanged). A qid holding the empty string (no
    hierarchy label is empty) is refused here: :func:`label_tables` measures it.

    >>> h = label_hierarchies(pl.DataFrame({"a": [3, 4]}), pl.DataFrame({"a": ["3-4", "3-4"]}), ["a"])["a"]
    >>> h.leaf_labels, h.root
    (['3', '3-4', '4'], '*')
    """
    out = {}
    for q, taken in _labels_taken(original, anonymized, qids).items():
        if "" in taken:
            raise InputError(
                f"qid {q!r} holds the empty string '', which no hierarchy label is; measure it with "
                "polars_anon.metrics.label_tables (or compute(..., names='classes')), which reads it as a value"
            )
        out[q] = _flat_hierarchy(taken)
    return out


def label_tables(
    original: pl.LazyFrame | pl.DataFrame, anonymized: pl.LazyFrame | pl.DataFrame, qids: Sequence[str]
) -> tuple[pl.LazyFrame, pl.LazyFrame, dict[str, Hierarchy]]:
    """Both tables and :func:`label_hierarchies`' flat hierarchies of `qids`, for the ``classes`` metrics, with the
    empty string read as a value as the SQL twins read it: a qid's ``''`` cells (no hierarchy label is empty) are
    relabelled, in both tables, to a label neither holds (``"''"``, then ``"''*"``, ...), so equal cells stay equal.

    >>> o, a, hs = label_tables(pl.DataFrame({"a": ["", "x"]}), pl.DataFrame({"a": ["", "x"]}), ["a"])
    >>> hs["a"].leaf_labels, a.collect()["a"].to_list()
    (["''", 'x'], ["''", 'x'])
    """
    taken = _labels_taken(original, anonymized, qids)
    stand_ins = {q: _free_label("''", labels) for q, labels in taken.items() if "" in labels}
    hierarchies = {
        q: _flat_hierarchy(labels - {""} | ({stand_ins[q]} if q in stand_ins else set())) for q, labels in taken.items()
    }
    sides = [as_lazy(original), as_lazy(anonymized)]
    if stand_ins:
        relabel = [
            pl.when(pl.col(q).cast(pl.String) == "").then(pl.lit(stand)).otherwise(pl.col(q).cast(pl.String)).alias(q)
            for q, stand in stand_ins.items()
        ]
        sides = [side.with_columns(relabel) for side in sides]
    return sides[0], sides[1], hierarchies


def _labels_taken(
    original: pl.LazyFrame | pl.DataFrame, anonymized: pl.LazyFrame | pl.DataFrame, qids: Sequence[str]
) -> dict[str, set[str]]:
    """Per qid, the labels either table holds (as :func:`prepare` reads them; nulls left out)."""
    qids = names_list(qids, "qids")
    sides = [as_lazy(original), as_lazy(anonymized)]
    for side in sides:
        check_columns(side, qids, "qids")
    o, a = (side.select(label_exprs(side.collect_schema(), qids)) for side in sides)
    # materializes: the distinct labels of each qid
    found = collect_apart([pl.concat([o.select(q), a.select(q)]).drop_nulls().unique() for q in qids])
    return {q: set(values[q].to_list()) for q, values in zip(qids, found)}


def _free_label(label: str, taken: set[str]) -> str:
    """`label`, with ``*`` appended until no label of `taken` is it."""
    while label in taken:
        label += "*"
    return label


def _flat_hierarchy(labels: set[str]) -> Hierarchy:
    """`labels` as leaves under a root none of them is (a label the release holds is a leaf, never the root)."""
    return Hierarchy.suppression(sorted(labels), root=_free_label("*", labels))


def from_mapping(
    mapping: pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    *,
    size: str = "size",
    suppressed: str | None = None,
    k: int | None = None,
    levels: Mapping[str, int] | None = None,
    ids: Mapping[str, tuple[np.ndarray | None, np.ndarray | None]] | None = None,
    classes: tuple[np.ndarray, np.ndarray] | None = None,
    leaf_nodes: Mapping[str, np.ndarray] | None = None,
) -> MetricData:
    """:class:`MetricData` from a tuple map: original tuple -> published tuple, with row counts.

    `mapping` has the original quasi-identifiers (labels), ``__anon_out_<qid>``
    (published labels, as :func:`polars_anon.algorithms.recode` takes them), the
    row count column `size` and optionally a Boolean `suppressed` column. This is
    the cheap path of the anonymization report: class aggregates, not rows.
    Rows need not be distinct (every metric sums sizes); keep them in a fixed
    order (class aggregates are sorted) for byte-identical sums. `ids` (qid -> the
    original leaf ids and published node ids per mapping row, a suppressed row's the root, 0; either None) are the
    node ids a map's builder already knew (:meth:`~polars_anon.tuplemap.TupleMap.known_ids`):
    they are not looked up again from the labels; `classes` the published classes it knew as node ids
    (:attr:`MetricData.classes`), `leaf_nodes` each leaf's one published node (:attr:`MetricData.leaf_nodes`).
    """
    qids = list(qids)
    hs = {q: hierarchies[q] for q in qids}
    sup = pl.col(suppressed) if suppressed else pl.lit(False)
    known = {q: (ids or {}).get(q, (None, None)) for q in qids}

    def code(q: str, column: str, given: np.ndarray | None) -> pl.Expr:
        return _code(column, hs[q]) if given is None else pl.lit(pl.Series(given, dtype=pl.Int64))

    def published(q: str) -> pl.Expr:  # a suppressed row's node is the root, 0 (the given ids have it already)
        given = known[q][1]
        found = code(q, f"__anon_out_{q}", given)
        return found if given is not None else pl.when(sup).then(0).otherwise(found)

    pairs = mapping.select(
        *[code(q, q, known[q][0]).alias(orig_col(i)) for i, q in enumerate(qids)],
        *[published(q).alias(pub_col(i)) for i, q in enumerate(qids)],
        sup.alias(SUPPRESSED),
        pl.col(size).cast(pl.Int64).alias(SIZE),
    )
    functions = None if leaf_nodes is None else dict(leaf_nodes)
    # a qid whose rows' ids were given with each leaf's node: its codes are checked on the leaves it holds
    tables = {q: t for q, t in (functions or {}).items() if known[q][0] is not None and known[q][1] is not None}
    _check_pairs(pairs, qids, [hs[q] for q in qids], None, None, [tables.get(q) for q in qids])
    return MetricData(pairs, qids, hs, None, k, _check_levels(levels, hs), classes=classes, leaf_nodes=functions)


def _check_levels(levels: Mapping[str, int] | None, hs: Mapping[str, Hierarchy]) -> dict[str, int] | None:
    if levels is None:
        return None
    check_mapping(levels, "levels", "qid -> level")
    unknown = [q for q in levels if q not in hs]
    if unknown:
        raise InvalidParameterError(f"levels names {unknown}, which are not qids; qids are {list(hs)}")
    for q, lv in levels.items():
        top = hs[q].height - 1
        if not is_integer(lv) or not 0 <= int(lv) <= top:
            raise InvalidParameterError(f"levels[{q!r}] must be an integer in 0..{top}, got {lv!r}")
    missing = [q for q in hs if q not in levels]
    if missing:  # a missing qid read as level 0 gave a wrong distance (hunt36)
        raise InvalidParameterError(
            f"levels leaves out the qids {missing}; give a level for every qid ({list(hs)}) or omit levels to infer "
            "them all from the published values"
        )
    return {q: int(levels[q]) for q in hs}


def _check_pairs(
    pairs: pl.DataFrame,
    qids: Sequence[str],
    hs: Sequence[Hierarchy],
    orig: pl.LazyFrame | None,
    anon: pl.LazyFrame | None,
    leaf_nodes: Sequence[np.ndarray | None] | None = None,
) -> None:
    """Original values must be leaves, published values nodes (or absent for suppressed rows). `leaf_nodes`: per
    qid, the node its pairs publish each leaf as (-1 for a node no pair holds; :attr:`MetricData.leaf_nodes`), or
    None: the pairs' own codes are read."""
    for i, (q, h) in enumerate(zip(qids, hs)):
        o, p = pairs[orig_col(i)], pairs[pub_col(i)]
        by_leaf = None if leaf_nodes is None else leaf_nodes[i]
        if _leaves_fine(by_leaf, h) if by_leaf is not None and o.len() else _all_fine(o, p, h):
            continue  # nothing below would be found
        bad = pairs.filter(o >= h.n_nodes)
        if bad.height:
            _refuse_values(q, h, orig, "original", int(bad[SIZE].sum()))
        not_leaf = o.filter(~pl.Series(h.is_leaf).gather(o.clip(0, h.n_nodes - 1))).unique().sort()
        if not_leaf.len():
            labels: list[object] = [h.label_of(x) for x in not_leaf.to_list()]
            raise ValueNotInHierarchyError(
                f"column {q!r} in the original table: {len(labels)} distinct values are inner nodes of its hierarchy, "
                f"not leaves (first: {preview(labels)}); the original table must hold ungeneralized values"
            )
        bad = pairs.filter((p >= h.n_nodes) & ~pl.col(SUPPRESSED))
        if bad.height:
            _refuse_values(q, h, anon, "anonymized", int(bad[SIZE].sum()))


def _all_fine(o: pl.Series, p: pl.Series, h: Hierarchy) -> bool:
    """True when every original code is a leaf's and every published code a node's (no null): one NumPy pass
    each, no frame filtered. False sends :func:`_check_pairs` to its slower search for what is wrong."""
    if o.null_count() or p.null_count() or not o.len():
        return False
    codes, published = o.to_numpy(), p.to_numpy()
    if int(codes.min()) < 0 or int(codes.max()) >= h.n_nodes or int(published.max()) >= h.n_nodes:
        return False
    return bool(h.is_leaf[codes].all())


def _leaves_fine(by_leaf: np.ndarray, h: Hierarchy) -> bool:
    """:func:`_all_fine` from the node each held leaf is published as (`by_leaf`, per node id, -1 where no pair holds
    it): the codes the pairs hold are the ids where it is not -1, their published codes its values there; a few
    thousand nodes read, not every pair."""
    held = np.flatnonzero(by_leaf >= 0)
    return len(by_leaf) == h.n_nodes and int(by_leaf.max(initial=0)) < h.n_nodes and bool(h.is_leaf[held].all())


def _refuse_values(q: str, h: Hierarchy, lf: pl.LazyFrame | None, where: str, n_bad: int) -> None:
    """Name the nulls or the values of column `q` that are not nodes (a second, small query)."""
    col = f"__anon_{where[0]}"
    if lf is None:
        raise ValueNotInHierarchyError(
            f"column {q!r} in the {where} tuples holds {n_bad} rows that are null or not nodes of its hierarchy"
        )
    values = lf.select(pl.col(q).cast(pl.String).alias(col)).unique().collect()[col]
    if values.null_count():
        raise NullValueError(
            f"column {q!r} in the {where} table has null values; metrics need every value, fill or drop them"
        )
    kind = "leaves" if where == "original" else "nodes"
    allowed = h.leaf_labels if where == "original" else h.labels
    bad = values.filter(~values.is_in(allowed)).sort().to_list()
    raise ValueNotInHierarchyError(
        f"column {q!r} in the {where} table: {not_in_hierarchy(bad, kind)}; check the hierarchy or the columns compared"
    )
