"""The report's metrics from NumPy arrays: every metric's whole-table value, on the data and on T*, in one pass.

:func:`polars_anon.metrics.registry.evaluate_both` (the report) needs the whole-table value of every
metric and of the same metric on the fully suppressed table T* (its normalized divisor). The Polars
functions of :mod:`~polars_anon.metrics.cost`, :mod:`~polars_anon.metrics.cells`,
:mod:`~polars_anon.metrics.partition` and :mod:`~polars_anon.metrics.distribution` are one query each
(two with T*), about sixty queries over a few thousand cells: most of their CPU was Polars' per-query
work, not the sums. Here the pairs' integer node ids are read once into arrays, each qid's cells and the
published classes are counted once (``bincount`` or ``unique``), and every metric is a few NumPy
operations on them.

Same bits as the Polars functions, on purpose (a test compares every metric on random maps): every float
sum is the values sorted and added left to right (:func:`~polars_anon.metrics.sums.sorted_sum`, Polars'
``sort().cum_sum()``; equal values, 0.0 and -0.0 included, give the same result in any order), every
product and quotient the same IEEE operation on the same operands (an Int64 operand is cast to Float64
first, as Polars casts it), the logarithm is Polars' own (a Series), and so are the medians. Integer sums
are exact either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import TypeVar

import numpy as np
import polars as pl

from polars_anon._memory import release_freed_memory
from polars_anon._threads import beside
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.cell_counts import Cells, float_sizes, qid_cells
from polars_anon.metrics.cells import loss_per_node
from polars_anon.metrics.data import (
    SENSITIVE,
    SIZE,
    SUPPRESSED,
    MetricData,
    orig_col,
    pub_col,
)
from polars_anon.metrics.distribution import cramers_v_changes, hellinger_distance
from polars_anon.metrics.partition import diameter_of
from polars_anon.metrics.sums import sorted_sum
from polars_anon.metrics.weights import EDGE_METRICS

__all__ = ["MANY_PAIRS", "METRICS_FROM_ARRAYS", "grouped_sorted_sums", "many_pairs", "whole_table_values"]

Value = float | int | None
MANY_PAIRS = 100_000
"""From this many pairs the metrics' arrays are freed at once when done, and their passes over every pair run on a
second thread beside the rest (:func:`many_pairs`)."""


def many_pairs(pairs: int) -> bool:
    """Whether metrics over `pairs` pairs are worth a second thread: those of :data:`APART` beside the others, and the
    report's metrics beside its other facts (:func:`polars_anon.report.plan_facts`); with fewer than
    :data:`MANY_PAIRS`, a thread costs more than it saves."""
    return pairs >= MANY_PAIRS


T = TypeVar("T", float, np.ndarray)


def grouped_sorted_sums(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, its values sorted and added left to right (:func:`~polars_anon.metrics.sums.stable_sum` in a
    ``group_by(...).agg``): the same bits; 0.0 for a group without values.

    >>> grouped_sorted_sums(np.array([0.3, 5.0, 0.1, 0.2]), np.array([0, 2, 0, 0]), 3).tolist()
    [0.6000000000000001, 0.0, 5.0]
    """
    out = np.zeros(n_groups)
    if not len(values):
        return out
    order = np.lexsort((values, groups))
    v, g = values[order], groups[order]
    counts = np.bincount(g, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    present = np.flatnonzero(counts)
    out[present] = v[starts[present]]  # the first value of each group, then the others left to right
    small = present[counts[present] <= 64]
    for r in range(1, int(counts[small].max(initial=1))):
        long = small[counts[small] > r]
        out[long] += v[starts[long] + r]
    for group in present[counts[present] > 64]:  # a long group (a root over many leaves): its own cumulative sum
        out[group] = np.cumsum(v[starts[group] : starts[group] + counts[group]])[-1]
    return out + 0.0  # Polars' sums start from 0.0: all -0.0 sums to 0.0 (see sorted_sum)


def _packed(columns: Sequence[np.ndarray], radix: Sequence[int], rows: int) -> np.ndarray:
    """One Int64 code for each of the `rows` rows of `columns` (codes below `radix`, the first column fastest; 0 for
    no column); the caller checks that the radixes' product fits (:func:`_fits`)."""
    key, stride = np.zeros(rows, dtype=np.int64), 1
    for c, r in zip(columns, radix):
        key += c * stride
        stride *= r
    return key


def _ascending(key: np.ndarray) -> bool:
    """Whether `key` is strictly ascending (then every value occurs once)."""
    return bool((key[1:] > key[:-1]).all())


def _fits(radix: Sequence[int], limit: float = 2.0**62) -> bool:
    """Whether the product of `radix` is below `limit` (a packed code fits)."""
    return float(np.prod(np.asarray(radix, dtype=np.float64))) < limit


def _groups(columns: Sequence[np.ndarray], radix: Sequence[int], size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of `columns` (codes below `radix`) as a matrix, and the rows (`size`) of each."""
    if not len(size):
        return np.zeros((0, len(columns)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if _fits(radix):
        key = _packed(columns, radix, len(size))
        if len(key) <= 200_000:  # a sort costs less than a hash group-by's start here (fars k = 2: 100,000 keys)
            distinct, inverse = np.unique(key, return_inverse=True)
            rows = np.bincount(inverse, weights=size).astype(np.int64)
        else:  # a hash group-by (any order: every use of the groups is order-free), not a sort of every pair
            grouped = pl.DataFrame({"key": key, "size": size}).group_by("key").agg(pl.col("size").sum())
            distinct, rows = grouped["key"].to_numpy(), grouped["size"].to_numpy().astype(np.int64)
        tuples, stride = [], 1
        for r in radix:
            tuples.append(distinct // stride % r)
            stride *= r
        return np.stack(tuples, axis=1), rows
    else:
        matrix, inverse = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    return matrix, np.bincount(inverse.ravel(), weights=size).astype(np.int64)


class _Arrays:
    """The pairs of a :class:`MetricData` as arrays, and what several metrics share (each computed once)."""

    def __init__(self, data: MetricData) -> None:
        pairs = data.pairs
        self.data = data
        self.hs: list[Hierarchy] = [data.hierarchies[q] for q in data.qids]
        self.m = len(self.hs)
        self.size = pairs[SIZE].to_numpy().astype(np.int64, copy=False)
        self.sup = pairs[SUPPRESSED].to_numpy().astype(bool)
        self.o = [pairs[orig_col(i)].to_numpy().astype(np.int64, copy=False) for i in range(self.m)]
        self.p = [pairs[pub_col(i)].to_numpy().astype(np.int64, copy=False) for i in range(self.m)]
        self.n = int(self.size.sum())

    @cached_property
    def cells(self) -> list[Cells]:
        return qid_cells(self.data)

    @cached_property
    def star_cells(self) -> list[Cells]:
        """T*'s cells: each leaf's rows, published at the root (node 0), kept."""
        out = []
        for c, h in zip(self.cells, self.hs):
            rows = np.bincount(c.leaf, weights=c.size, minlength=h.n_nodes)
            leaf = np.flatnonzero(rows)
            zero = np.zeros(len(leaf), dtype=np.int64)
            out.append(Cells(leaf, zero, zero.astype(bool), rows[leaf].astype(np.int64)))
        return out

    @cached_property
    def classes(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct published tuples of the kept rows and their rows (the map's, when its builder knew them)."""
        if self.data.classes is not None:
            return self.data.classes
        kept = ~self.sup
        return _groups([p[kept] for p in self.p], [h.n_nodes for h in self.hs], self.size[kept])

    @cached_property
    def star_sizes(self) -> np.ndarray:
        """T*'s pair sizes: the rows of each distinct original tuple (the pairs' own when no tuple repeats)."""
        return self.size if self.distinct_originals else _groups(self.o, [h.n_nodes for h in self.hs], self.size)[1]

    @cached_property
    def distinct_originals(self) -> bool:
        """Whether every pair has another original tuple (a tuple map: then T*'s pairs are the pairs)."""
        radix = [h.n_nodes for h in self.hs]
        if not _fits(radix):
            frame = pl.DataFrame([pl.Series(str(i), o) for i, o in enumerate(self.o)])
            return frame.n_unique() == frame.height
        # ascending with the first qid slowest (a map of sorted aggregates whose leaf ids follow their labels'
        # order): every tuple once, found in one pass where the hash below cost 0.02 CPU s at 3M rows
        if len(self.size) < 2 or _ascending(_packed(self.o[::-1], radix[::-1], len(self.size))):
            return True
        key = _packed(self.o, radix, len(self.size))
        if _ascending(key):
            return True
        return pl.Series(key).n_unique() == len(key)  # a hash of one Int64 column

    @cached_property
    def nodes(self) -> list[dict[str, np.ndarray]]:
        """Per qid, its hierarchy's ``num_lo``, ``num_hi``, ``num_mean`` and ``numeric`` per node."""
        return [self.data.numbers(i) for i in range(self.m)]

    def sum_cells(self, star: bool, term: Callable[[int, Cells], np.ndarray]) -> float:
        """The sorted sum over every qid's cells of ``term(i, cells)`` (a Float64 array per qid)."""
        cells = self.star_cells if star else self.cells
        return sorted_sum(np.concatenate([term(i, c) for i, c in enumerate(cells)]))

    def cell_rows(self, star: bool) -> int:
        return int(sum(int(c.size.sum()) for c in (self.star_cells if star else self.cells)))

    def levels(self, star: bool) -> list[int | None]:
        """Each qid's full-domain level (None: not full-domain), as :func:`polars_anon.metrics.cells._levels`."""
        if star:
            return [h.height - 1 for h in self.hs]
        if self.data.levels is not None:
            return [self.data.levels[q] for q in self.data.qids]
        out: list[int | None] = []
        for c, h in zip(self.cells, self.hs):
            pub = c.pub[~c.sup]
            if not len(pub):
                out.append(0)
                continue
            level = h.level[pub]
            top = int(level.max())
            parent = h.parent[pub]
            above = (parent < 0) | (h.level[np.maximum(parent, 0)] > top)
            out.append(top if bool(((level <= top) & above).all()) else None)
        return out


def _edge(metric: str) -> Callable[[_Arrays, bool], Value]:
    def value(a: _Arrays, star: bool) -> Value:
        roots = a.data.roots[metric]
        return a.sum_cells(
            star,
            lambda i, c: c.size.astype(np.float64) * (roots[a.data.qids[i]][c.leaf] - roots[a.data.qids[i]][c.pub]),
        )

    return value


def _alteration(a: _Arrays, star: bool) -> Value:
    ratios: list[float | None] = []
    for metric in EDGE_METRICS:
        roots = a.data.roots[metric]
        num = _edge(metric)(a, star)
        den = a.sum_cells(star, lambda i, c, r=roots: c.size.astype(np.float64) * r[a.data.qids[i]][c.leaf])
        ratios.append(100.0 * float(num) / den if den > 0 else None)  # type: ignore[arg-type]
    present = [r for r in ratios if r is not None]
    return _horizontal_sum([0.0 if r is None else r for r in ratios]) / len(present) if present else 0.0


def _horizontal_sum(values: list[T]) -> T:
    """``pl.sum_horizontal`` (and ``pl.mean_horizontal``'s sum) of Float64 values (numbers or arrays, nulls as 0.0)
    in a lazy query: the first half (``len // 2`` values) and the second added left to right, then the two sums
    added (measured on Polars 2.1 for 1 to 9 columns, 1 to 100,000 rows, 1 to 4 threads; an eager
    ``DataFrame.select`` adds 5 columns or more in another order on two threads or more).

    >>> _horizontal_sum([1.0, 2.0, 3.0])  # 1 + (2 + 3)
    6.0
    """
    half = len(values) // 2
    if not half:
        return values[0]
    left, right = values[0], values[half]
    for v in values[1:half]:
        left = left + v  # type: ignore[operator]
    for v in values[half + 1 :]:
        right = right + v  # type: ignore[operator]
    return left + right  # type: ignore[operator]


def _changed(a: _Arrays, star: bool, root_only: bool) -> int:
    cells = a.star_cells if star else a.cells
    # a suppressed row's cell counts in every qid, a one-node hierarchy's too (its leaf is the root: hunt36)
    return sum(int(c.size[((c.leaf != c.pub) & ((c.pub == 0) if root_only else True)) | c.sup].sum()) for c in cells)


def _percent(num: int, den: int) -> float:
    return 100.0 * float(num) / float(den) if den > 0 else 0.0


def _modified(a: _Arrays, star: bool) -> Value:
    return _percent(_changed(a, star, False), a.cell_rows(star))


def _deleted(a: _Arrays, star: bool) -> Value:
    return _percent(_changed(a, star, True), a.cell_rows(star))


def _deleted_of_modified(a: _Arrays, star: bool) -> Value:
    return _percent(_changed(a, star, True), _changed(a, star, False))


def _level_fraction(h: Hierarchy, pub: np.ndarray) -> np.ndarray:
    if h.height > 1:
        return h.level[pub].astype(np.float64) / float(h.height - 1)
    return np.zeros(len(pub))


def _loss(a: _Arrays, star: bool) -> Value:
    per_node = [loss_per_node(h) for h in a.hs]
    total = a.sum_cells(star, lambda i, c: c.size.astype(np.float64) * np.where(c.sup, 1.0, per_node[i][c.pub]))
    return total / float(a.cell_rows(star))


def _precision(a: _Arrays, star: bool) -> Value:
    total = a.sum_cells(star, lambda i, c: c.size.astype(np.float64) * _level_fraction(a.hs[i], c.pub))
    return 1.0 - total / float(a.cell_rows(star))


def _information_loss(a: _Arrays, star: bool) -> Value:
    def term(i: int, c: Cells) -> np.ndarray:
        nodes = a.nodes[i]
        if not bool(nodes["numeric"][0]):
            return c.size.astype(np.float64) * _level_fraction(a.hs[i], c.pub)
        domain = float(nodes["num_hi"][0] - nodes["num_lo"][0])  # the root is node 0
        if not domain > 0:
            return c.size.astype(np.float64) * np.zeros(len(c.pub))
        return c.size.astype(np.float64) * ((nodes["num_hi"][c.pub] - nodes["num_lo"][c.pub]) / domain)

    return a.sum_cells(star, term)


def _absolute_distance(a: _Arrays, star: bool) -> Value:
    levels = a.levels(star)
    return None if any(lv is None for lv in levels) else sum(int(lv) for lv in levels if lv is not None)


def _relative_distance(a: _Arrays, star: bool) -> Value:
    ratios = [
        0.0 if h.height <= 1 else (None if lv is None else lv / (h.height - 1)) for lv, h in zip(a.levels(star), a.hs)
    ]
    return None if any(r is None for r in ratios) else sorted_sum(np.array(ratios, dtype=np.float64))


def _entropy(a: _Arrays, star: bool) -> Value:
    node_h = []
    for c, h in zip(a.cells, a.hs):  # the leaves' rows are the same in T*
        rows = np.bincount(c.leaf, weights=c.size, minlength=h.n_nodes)
        leaves = np.flatnonzero(rows)
        anc = h.ancestors_by_depth[leaves]  # leaf x depth -> ancestor (-1 below the leaf)
        wanted = np.zeros(h.n_nodes, dtype=bool)
        wanted[np.zeros(1, dtype=np.int64) if star else c.pub] = True
        keep = (anc >= 0) & wanted[np.maximum(anc, 0)]
        ancestor = anc[keep]
        count = np.broadcast_to(rows[leaves][:, None], anc.shape)[keep]
        share = count / np.bincount(ancestor, weights=count, minlength=h.n_nodes)[ancestor]
        log = pl.Series(share, dtype=pl.Float64).log().to_numpy()  # Polars' logarithm: the same bits
        node_h.append(grouped_sorted_sums(-(share * log), ancestor, h.n_nodes))
    return a.sum_cells(star, lambda i, c: c.size.astype(np.float64) * node_h[i][c.pub])


def _ambiguity(a: _Arrays, star: bool) -> Value:
    whole = _whole_ambiguity_sum(a, star)
    if whole is not None:
        return float(whole) / float(a.n)
    if star:
        product = 1.0
        for h in a.hs:
            product = product * float(h.leaves[0])
        # the sizes sorted, then times the positive product: the same ascending values as sorting the products
        # (a product by a positive number keeps the order), sorted by counting when the sizes are small
        sizes = a.star_sizes
        top = int(sizes.max(initial=0))
        ordered = np.repeat(np.arange(top + 1), np.bincount(sizes)) if top <= 4 * len(sizes) else np.sort(sizes)
        values = ordered.astype(np.float64) * product
        return (float(np.cumsum(values)[-1]) + 0.0 if len(values) else 0.0) / float(a.n)
    else:
        products = np.ones(len(a.size))
        for p, h in zip(a.p, a.hs):
            products = products * h.leaves[p].astype(np.float64)
        values = a.size.astype(np.float64) * products
    return sorted_sum(values) / float(a.n)


def _whole_ambiguity_sum(a: _Arrays, star: bool) -> int | None:
    """The sum over the pairs of their rows times the product of their published nodes' leaf counts, from the
    published classes and the suppressed rows (every qid at its root), when it is below 2**53; else None. The terms
    are whole numbers, so below 2**53 every partial sum of the sorted terms is exact and the sorted sum
    (:func:`~polars_anon.metrics.sums.sorted_sum`) is this sum, with the same bits, without a pass over the pairs."""
    root = math.prod(int(h.leaves[0]) for h in a.hs)  # a suppressed pair's product, and every pair's in T*
    if star:
        return a.n * root if a.n * root < 2**53 else None
    matrix, rows = a.classes
    products = np.ones(len(rows))
    for j, h in enumerate(a.hs):
        products = products * h.leaves[matrix[:, j]]  # whole numbers: exact while below 2**53
    if max(float(products.max(initial=0.0)), float(root)) * a.n >= 2.0**53:
        return None
    suppressed = int(a.size[a.sup].sum())
    return int((rows.astype(np.int64) * products.astype(np.int64)).sum()) + suppressed * root


def _squared_distance_error(a: _Arrays, star: bool) -> Value:
    numeric = [i for i in range(a.m) if bool(a.nodes[i]["numeric"][0])]
    if not numeric:
        return None
    if star and not a.distinct_originals:
        matrix, sizes = _groups(a.o, [h.n_nodes for h in a.hs], a.size)  # one call: the tuples and their rows
        orig = [matrix[:, i] for i in range(a.m)]
    else:
        orig, sizes = a.o, float_sizes(a.data)  # the pairs' sizes as Float64, converted once per data
    nodes = [a.nodes[i] for i in numeric]
    by_leaf = None if star else [a.cells[i].node_of_leaf for i in numeric]  # T*: every pair at the roots
    if by_leaf is None or all(f is not None for f in by_leaf):
        # each pair's squared differences depend on its leaves alone (its nodes are functions of them): computed
        # per leaf, gathered per pair; the same floats as per pair
        squares = [
            np.take(_leaf_squares(n, None if by_leaf is None else by_leaf[j]), orig[i], mode="clip")  # ids in range
            for j, (i, n) in enumerate(zip(numeric, nodes))
        ]
        distance = np.sqrt(_horizontal_sum(squares))
    else:
        distance = _distance(nodes, [orig[i] for i in numeric], [a.p[i] for i in numeric])
    return sorted_sum(sizes.astype(np.float64, copy=False) * distance)


def _leaf_squares(nodes: dict[str, np.ndarray], node_of: np.ndarray | None) -> np.ndarray:
    """Per leaf id, (a - E(x))^2 of a numeric qid: a the leaf's value, x the node its pairs are published as
    (`node_of[leaf]`; None: the root), as :func:`_distance` computes it per pair."""
    if node_of is None:
        diff = nodes["num_lo"] - nodes["num_mean"][0]
    else:  # a leaf past `node_of` is only in pairs of 0 rows (a map from_mapping was given): any node, times 0
        full = np.zeros(len(nodes["num_lo"]), dtype=np.int64)
        full[: len(node_of)] = node_of
        diff = nodes["num_lo"] - nodes["num_mean"][full]
    return diff * diff


def _distance(
    nodes: list[dict[str, np.ndarray]], leaves: list[np.ndarray], published: list[np.ndarray] | None
) -> np.ndarray:
    """sqrt(sum_j (a_j - E(x_j))^2) over the numeric qids (`published` None: every x_j the root), the squares added
    as ``pl.sum_horizontal`` adds them in a lazy query (:func:`_horizontal_sum`)."""
    squares = []
    for j, n in enumerate(nodes):
        mean = n["num_mean"][0] if published is None else n["num_mean"][published[j]]
        diff = n["num_lo"][leaves[j]] - mean
        squares.append(diff * diff)
    return np.sqrt(_horizontal_sum(squares))


def _discernibility(a: _Arrays, star: bool) -> Value:
    if star:
        return a.n * a.n
    sizes = a.classes[1]
    suppressed = int(a.size[a.sup].sum())
    return int((sizes * sizes).sum()) + suppressed * a.n


def _c_avg(a: _Arrays, star: bool) -> Value:
    sizes = a.classes[1]
    k = int(sizes.min()) if a.data.k is None else a.data.k
    return float(int(sizes.sum())) / float(k * len(sizes))


def _min_class_size(a: _Arrays, star: bool) -> Value:
    return int(a.classes[1].min())  # at least one class (whole_table_values' guard)


def _n_classes(a: _Arrays, star: bool) -> Value:
    return len(a.classes[1])


def _suppressed(a: _Arrays, star: bool) -> Value:
    return int(a.size[a.sup].sum())


def _k(a: _Arrays, star: bool) -> Value:
    return a.data.k


def _diameter(a: _Arrays, star: bool) -> Value:
    return diameter_of(a.classes[0])


def _hellinger(a: _Arrays, star: bool) -> Value:
    alone = a.m == 1
    values = [hellinger_distance(c.size, c.leaf, c.pub, h, float(a.n), alone) for c, h in zip(a.cells, a.hs)]
    return pl.Series(values, dtype=pl.Float64).median()  # type: ignore[return-value]


def _cramers_v(a: _Arrays, star: bool) -> Value:
    return pl.Series(cramers_v_changes(a.data), dtype=pl.Float64).abs().median()  # type: ignore[return-value]


METRICS_FROM_ARRAYS = {
    **{m: _edge(m) for m in EDGE_METRICS},
    "alteration": _alteration,
    "modified": _modified,
    "deleted": _deleted,
    "deleted_of_modified": _deleted_of_modified,
    "loss": _loss,
    "precision": _precision,
    "absolute_distance": _absolute_distance,
    "relative_distance": _relative_distance,
    "entropy": _entropy,
    "ambiguity": _ambiguity,
    "squared_distance_error": _squared_distance_error,
    "information_loss": _information_loss,
    "discernibility": _discernibility,
    "c_avg": _c_avg,
    "min_class_size": _min_class_size,
    "n_classes": _n_classes,
    "suppressed": _suppressed,
    "k": _k,
    "diameter": _diameter,
    "hellinger": _hellinger,
    "cramers_v": _cramers_v,
}
"""Metric (implementation) name -> its whole-table value from :class:`_Arrays`, on the data or on T*."""


def whole_table_values(
    data: MetricData, names: Sequence[str], star_names: Sequence[str]
) -> tuple[dict[str, Value], dict[str, Value]] | None:
    """The whole-table value of each metric in `names` on `data`, and of each in `star_names` on T*
    (:func:`~polars_anon.metrics.data.fully_suppressed`), uncast; None when they are not all computed here (a
    sensitive attribute, a metric not in :data:`METRICS_FROM_ARRAYS`, a table without a kept row).

    >>> from polars_anon import Hierarchy
    >>> from polars_anon.metrics.data import from_mapping
    >>> H = {"g": Hierarchy.suppression(["F", "M"])}
    >>> data = from_mapping(pl.DataFrame({"g": ["F", "M"], "__anon_out_g": ["F", "*"], "size": [3, 1]}), ["g"], H)
    >>> whole_table_values(data, ["ncp", "n_classes"], ["ncp"])  # 1 cell at * (1/2); T*: 4 cells at * (4/2)
    ({'ncp': 0.5, 'n_classes': 2}, {'ncp': 2.0})
    """
    if SENSITIVE in data.pairs.columns or any(n not in METRICS_FROM_ARRAYS for n in [*names, *star_names]):
        return None
    a = _Arrays(data)
    if a.n == 0 or not len(a.classes[1]) or a.m == 0:
        return None
    large = many_pairs(len(a.size))  # tens of MiB of arrays freed below
    raw, star = _values(a, names, star_names, apart=large)
    del a
    if large:
        release_freed_memory()  # glibc keeps the freed arrays resident under the later phases (15M: +45 MiB)
    return raw, star


APART = frozenset({"squared_distance_error"})
"""Metrics computed on a second thread beside the others over many pairs (:func:`_values`): NumPy passes over every
pair (gathers, a square root, a sort, a cumulative sum: the GIL released), about a third of the metrics' CPU on the
3M register (two of 0.065 s: on T* and on the data)."""


def _values(
    a: _Arrays, names: Sequence[str], star_names: Sequence[str], *, apart: bool
) -> tuple[dict[str, Value], dict[str, Value]]:
    """Each metric of `names` on the data and of `star_names` on T*, in their order; `apart`: those of :data:`APART`
    on a second thread beside the others (the same values: each is computed once, from the same arrays, whose shared
    facts are computed first)."""
    wanted = [(n, star) for star, chosen in ((False, names), (True, star_names)) for n in chosen]
    late = [w for w in wanted if w[0] in APART] if apart else []
    done: dict[tuple[str, bool], Value] = {}
    if late:
        _ = a.cells, a.nodes, float_sizes(a.data)  # what both threads read, made before they start (once)
    with ThreadPoolExecutor(1, thread_name_prefix="polars_anon_metrics") as pool:  # a thread only once submitted
        found = beside(pool, bool(late), lambda: {w: METRICS_FROM_ARRAYS[w[0]](a, w[1]) for w in late})
        done.update((w, METRICS_FROM_ARRAYS[w[0]](a, w[1])) for w in wanted if w not in late)
        done.update(found.result())
    return {n: done[(n, False)] for n in names}, {n: done[(n, True)] for n in star_names}
