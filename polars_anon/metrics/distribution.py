"""How far the published distributions moved from the original ones [paper 003 §2.2.11-12, paper 004 §5.1].

The original table D holds leaves; the published table D' holds nodes, with
suppressed rows at the roots (both have the same n rows). Logarithms are
natural. The examples use paper 000 Table I anonymized to Table Ib
(:func:`polars_anon.metrics._frames.example`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import cast

import numpy as np
import polars as pl

from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics._frames import stack, table_row
from polars_anon.metrics.cell_counts import float_sizes, joint_cells, original_pair_cells, pair_cells, qid_cells
from polars_anon.metrics.data import SENSITIVE, SIZE, MetricData, orig_col, pub_col
from polars_anon.metrics.sums import sorted_sum, stable_mean

__all__ = ["cramers_v", "cramers_v_changes", "hellinger", "hellinger_distance", "mi_loss"]


def hellinger(data: MetricData) -> pl.LazyFrame:
    """Hellinger metric [paper 003 §2.2.11]: the median over attributes of d_hell(P_j, Q_j).

    P_j is the distribution of attribute j's leaves in D. Q_j is its distribution
    in D' read back onto the leaves: a cell published as node x spreads its mass
    uniformly over the nl(x) leaves under x. d_hell(P, Q) =
    sqrt(sum_leaf (sqrt p - sqrt q)^2) / sqrt 2, the standard Hellinger distance;
    the paper prints the formula without the square roots on p and q (that would
    be a Euclidean distance), we take the Hellinger distance it names. Range [0, 1].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(hellinger(example())), 6)  # median of gender (0) and race (0.337479)
    0.168739
    """
    cells = data.cells
    n = float(data.n_rows)
    alone = len(data.qids) == 1
    values = []
    for i, q in enumerate(data.qids):
        part = cells.filter(pl.col("i") == i)
        size, leaf, pub = (part[c].to_numpy().astype(np.int64) for c in ("size", "leaf", "pub"))
        values.append(hellinger_distance(size, leaf, pub, data.hierarchies[q], n, alone))
    per = pl.LazyFrame(
        {"attribute": data.qids, "i": list(range(len(data.qids))), "value": values},
        schema={"attribute": pl.String, "i": pl.Int64, "value": pl.Float64},
    )
    return stack(data, per.select(table_row(pl.col("value").median())), per)


def _scaled(x: np.ndarray, d: float, rows: int) -> np.ndarray:
    """`x` over `d` as Polars divides a Float64 column of `rows` rows by a literal: a product by 1 / d on two rows
    or more, a plain division on one (a one-row frame; the bits differ in the last place for some values).

    >>> float(_scaled(np.array([0.11]), 2**0.5, 1)[0]), float(_scaled(np.array([0.11]), 2**0.5, 2)[0])
    (0.07778174593052023, 0.07778174593052022)
    """
    return x / d if rows == 1 else x * (1.0 / d)


def hellinger_distance(
    size: np.ndarray, leaf: np.ndarray, pub: np.ndarray, h: Hierarchy, n: float, alone: bool
) -> float:
    """d_hell(P, Q) of one attribute from its :attr:`~polars_anon.metrics.data.MetricData.cells` (Int64 arrays: rows,
    original leaf and published node of each cell; any order), in NumPy: the same
    floats, in the same order, as the frames this replaced (a join of the published counts on the hierarchy's
    closure, 600,000 rows for Cup's ZIP: 0.19 of the report's CPU s), so the same bits but in the last places where
    those frames' group-by divided by the literal n in one group and multiplied by its inverse in another (they
    gave 7.85e-17 for a publication equal to its original; here P and Q are made alike: exactly 0): each division
    by the literal n or sqrt 2 as Polars made it on the replaced frame's column (:func:`_scaled`; that column spans
    every attribute, so it has one row only when the attribute is `alone` and the column holds one value). Per leaf:
    P its rows over n; Q the sum, sorted and added left to right, of c(x) / nl(x) / n over its published ancestors
    x (itself included); then the sorted sum of (sqrt P - sqrt Q)^2 over the leaves (a leaf with neither adds 0.0
    to a sum of non-negative numbers: no bit changes). Each leaf's ancestors come from the hierarchy's ancestor
    matrix.

    >>> from polars_anon import Hierarchy
    >>> h = Hierarchy.suppression(["F", "M"])  # nodes *, F, M: 2 F and 2 M rows, the M rows published as *
    >>> # P = (1/2, 1/2), Q = (3/4, 1/4): sqrt((sqrt .5 - sqrt .75)^2 + (sqrt .5 - sqrt .25)^2) / sqrt 2
    >>> round(hellinger_distance(np.array([2, 2]), np.array([1, 2]), np.array([1, 0]), h, 4.0, True), 6)
    0.184592
    """
    nodes = h.n_nodes
    p = np.bincount(leaf, weights=size, minlength=nodes)  # whole numbers summed: exact
    p = _scaled(p, n, int(np.count_nonzero(p)) if alone else 2)  # the frame: one row per occupied leaf
    c = np.bincount(pub, weights=size, minlength=nodes)
    published = c > 0
    share = np.zeros(nodes)
    under = h.leaves[published]  # the frame: one row per published node and leaf under it
    share[published] = _scaled(c[published] / under.astype(np.float64), n, int(under.sum()) if alone else 2)
    leaves = np.flatnonzero(h.is_leaf)
    anc = h.ancestors_by_depth[leaves]  # leaf x depth -> ancestor (-1 below the leaf)
    hit = (anc >= 0) & published[np.maximum(anc, 0)]
    terms = np.where(hit, share[np.maximum(anc, 0)], np.inf)
    terms.sort(axis=1)  # each leaf's contributions ascending, the absent ones (inf) last
    q = np.zeros(len(leaves))
    for d in range(terms.shape[1]):  # left to right: x + 0.0 is x, so the absent ones are skipped by adding 0.0
        column = terms[:, d]
        q += np.where(np.isfinite(column), column, 0.0)
    distance = np.array([math.sqrt(sorted_sum((np.sqrt(p[leaves]) - np.sqrt(q)) ** 2))])
    return float(_scaled(distance, 2.0**0.5, 1 if alone else 2)[0])


def _contingency(codes: _Codes, size: np.ndarray, a: str, b: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts n_ab > 0 of the pairs over columns a and b (dense codes), with the margins n_a and n_b of each cell.

    The cells :func:`joint_cells` counted for the pair, else a ``bincount`` over the combined code when the table
    is small enough (no sort), else the distinct combined codes (see :func:`pair_cells`).
    """
    found = codes.cells.get((a, b))
    n, ia, ib = pair_cells(codes[a], codes[b], size) if found is None else found
    return n, np.bincount(ia, weights=n)[ia], np.bincount(ib, weights=n)[ib]


class _Codes(dict):  # type: ignore[type-arg]  (column -> dense codes, with what :func:`_cramer` reuses)
    """Column -> its non-negative codes (:func:`_small_codes` of the pairs' column, when first read), plus caches
    shared by the pairs of one :func:`_pairwise` call.

    ``distinct``: column -> how many codes occur; ``function``: published column -> the map from the original
    column's codes to its codes when every row's published code is that function of its original code (a
    full-domain recoding without suppression), else None; ``same``: published column -> whether every row's code is
    its original column's; ``cells``: (a, b) -> :func:`pair_cells` of the pair. Each is found from the codes when first
    asked for, unless :func:`_facts_from_cells` or :func:`joint_cells` gave it.
    """

    def __init__(self, pairs: pl.DataFrame, origin: Mapping[str, str]) -> None:
        super().__init__()
        self.pairs = pairs
        self.origin = dict(origin)  # published column -> its original column
        self.distinct: dict[str, int] = {}
        self.function: dict[str, np.ndarray | None] = {}
        self.same: dict[str, bool] = {}
        self.cells: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def __missing__(self, c: str) -> np.ndarray:
        self[c] = codes = _small_codes(self.pairs[c])
        return codes

    def n_distinct(self, c: str) -> int:
        if c not in self.distinct:
            self.distinct[c] = int(np.count_nonzero(np.bincount(self[c])))
        return self.distinct[c]

    def function_of_origin(self, c: str) -> np.ndarray | None:
        if c not in self.function:
            o = self.origin.get(c)
            f = None
            if o is not None and o != c:
                f = np.zeros(int(self[o].max(initial=0)) + 1, dtype=np.int64)
                f[self[o]] = self[c]
                if not np.array_equal(f[self[o]], self[c]):
                    f = None
            self.function[c] = f
        return self.function[c]

    def is_same(self, c: str) -> bool:
        """Whether every row's code in column `c` is its original column's (published as is: level 0)."""
        o = self.origin.get(c, c)
        if c not in self.same:
            self.same[c] = o == c or bool(np.array_equal(self[o], self[c]))
        return self.same[c]


def _facts_from_cells(codes: _Codes, data: MetricData) -> None:
    """Give `codes` each qid's distinct counts, its published column's function of the original one and whether it
    is the original, from the qid's cells (:func:`~polars_anon.metrics.cell_counts.qid_cells`, which the report
    counts once: a few thousand cells, not a pass over the pairs per column). Only where the cells tell the same: the
    codes are the node ids themselves (:func:`_small_codes` keeps ids below 2**20) and every pair has rows (a cell
    counts the pairs with rows)."""
    size = data.pairs[SIZE]
    if not size.len() or any(h.n_nodes > 1 << 20 for h in data.hierarchies.values()) or cast(int, size.min()) < 1:
        return
    for i, c in enumerate(qid_cells(data)):
        o, p = orig_col(i), pub_col(i)
        codes.distinct[o], codes.distinct[p] = len(np.unique(c.leaf)), len(np.unique(c.pub))
        codes.function[p] = c.node_of_leaf
        codes.same[p] = bool(np.array_equal(c.leaf, c.pub))


def _cramer_cells(codes: _Codes, size: np.ndarray, a: str, b: str) -> tuple[np.ndarray, ...]:
    """:func:`pair_cells` of the pair (a, b); from the original pair's cells when both published columns are functions
    of their original ones (the same integer counts: each published cell is the sum of the original cells under it).
    """
    if (a, b) in codes.cells:
        return codes.cells[(a, b)]
    fa, fb = codes.function_of_origin(a), codes.function_of_origin(b)
    oa, ob = codes.origin.get(a, a), codes.origin.get(b, b)
    if fa is not None and fb is not None and (oa, ob) in codes.cells:
        n0, ia0, ib0 = codes.cells[(oa, ob)]
        found = pair_cells(fa[ia0], fb[ib0], n0)
    else:
        found = pair_cells(codes[a], codes[b], size)
    codes.cells[(a, b)] = found
    return found


def _cramer(codes: _Codes, size: np.ndarray, a: str, b: str) -> float:
    dof = min(codes.n_distinct(a), codes.n_distinct(b)) - 1
    if dof <= 0:
        return 0.0  # a column with one value: no table to count
    n, ia, ib = _cramer_cells(codes, size, a, b)
    na, nb = np.bincount(ia, weights=n)[ia], np.bincount(ib, weights=n)[ib]
    phi2 = math.fsum(n**2 / (na * nb)) - 1.0
    return float(np.sqrt(max(phi2, 0.0) / dof))


def _mutual_information(codes: _Codes, size: np.ndarray, a: str, b: str) -> float:
    n, na, nb = _contingency(codes, size, a, b)
    total = float(size.sum())
    return math.fsum(n / total * np.log(total * n / (na * nb)))


def _small_codes(column: pl.Series) -> np.ndarray:
    """Non-negative Int64 codes of a column, small enough to ``bincount``: node ids as they are, else dense ranks."""
    if (
        column.dtype.is_integer()
        and not column.null_count()
        and cast(int, column.min() or 0) >= 0
        and cast(int, column.max() or 0) < 1 << 20
    ):
        return column.to_numpy().astype(np.int64, copy=False)
    return column.rank("dense").fill_null(0).cast(pl.Int64).to_numpy()


def _pairwise(
    data: MetricData,
    columns: Sequence[tuple[str | None, str, str]],
    stat: Callable[[_Codes, np.ndarray, str, str], float],
) -> pl.LazyFrame:
    """One row per unordered pair of attributes: their names and ``delta`` = stat(D) - stat(D').

    `columns` lists (attribute name or None, original column, published column).
    The contingency tables are counted with NumPy over the pairs' dense codes (a
    few thousand rows): hundreds of attribute pairs cost milliseconds.
    """
    x, y, delta = _deltas(data, columns, stat)
    return pl.LazyFrame({"x": x, "y": y, "delta": delta}, schema={"x": pl.String, "y": pl.String, "delta": pl.Float64})


def cramers_v_changes(data: MetricData) -> list[float]:
    """V(j1, j2) in D minus V(j1, j2) in D' of every pair of qids (j1 < j2, in :func:`itertools.combinations`
    order): the values whose absolute median :func:`cramers_v` reports.

    >>> from polars_anon.metrics._frames import example
    >>> [round(d, 6) for d in cramers_v_changes(example())]
    [0.816497]
    """
    return _deltas(data, [(q, orig_col(i), pub_col(i)) for i, q in enumerate(data.qids)], _cramer)[2]


def _deltas(
    data: MetricData,
    columns: Sequence[tuple[str | None, str, str]],
    stat: Callable[[_Codes, np.ndarray, str, str], float],
) -> tuple[list[str | None], list[str | None], list[float]]:
    """The names and stat(D) - stat(D') of :func:`_pairwise`'s rows."""
    codes = _Codes(data.pairs, {p: o for _, o, p in columns})
    _facts_from_cells(codes, data)
    size = float_sizes(data)
    originals = [o for _, o, _ in columns]
    shared = original_pair_cells(data) if originals == [orig_col(i) for i in range(len(data.qids))] else None
    codes.cells.update(joint_cells(codes, size, originals) if shared is None else shared)  # the same cells
    x, y, delta = [], [], []
    for (name_a, oa, pa), (name_b, ob, pb) in combinations(columns, 2):
        x.append(name_a)
        y.append(name_b)
        before = stat(codes, size, oa, ob)
        delta.append(before - (before if codes.is_same(pa) and codes.is_same(pb) else stat(codes, size, pa, pb)))
    return x, y, delta


def _by_attribute(data: MetricData, pairs: pl.LazyFrame, value: pl.Expr, table: pl.Expr) -> pl.LazyFrame:
    """Per qid: `value` over the pairs involving it; table: `table` over all pairs."""
    per = [
        pairs.filter((pl.col("x") == q) | (pl.col("y") == q)).select(
            pl.lit(q, dtype=pl.String).alias("attribute"), value.alias("value")
        )
        for q in data.qids
    ]
    return stack(data, pairs.select(table_row(table)), pl.concat(per))


def cramers_v(data: MetricData) -> pl.LazyFrame:
    """Bivariate correlation metric [paper 003 §2.2.12]: median over QID pairs of |V(j1, j2) in D - V(j1, j2) in D'|.

    V is Cramér's V, sqrt(chi^2 / n / (min(r, c) - 1)), of the two columns'
    contingency table (leaves in D, published nodes in D'); a pair where one
    column takes a single value has V = 0. Per attribute: the median over the
    pairs that include it. Null with a single quasi-identifier. Range [0, 1].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(cramers_v(example())), 6)  # V(gender, race): sqrt(2/3) in D, 0 in D' (gender is all *)
    0.816497
    """
    columns = [(q, orig_col(i), pub_col(i)) for i, q in enumerate(data.qids)]
    change = pl.col("delta").abs()
    return _by_attribute(data, _pairwise(data, columns, _cramer), change.median(), change.median())


def mi_loss(data: MetricData) -> pl.LazyFrame:
    """Loss of mutual information [paper 004 §5.1]: (1/m) sum_a (MI_T[a] - MI_T'[a]).

    Over the attributes a = the quasi-identifiers and the sensitive attribute
    (unchanged in T'); MI_T[a] is the mean mutual information of a with each
    other attribute in the original table, MI_T'[a] the same in the published
    one. That equals the mean over attribute pairs of MI(D) - MI(D'). Per
    quasi-identifier: MI_T[a] - MI_T'[a]. Needs the sensitive attribute. Range
    (-inf, inf): 0 untouched; generalizing a column can only lower its mutual
    information with an unchanged one.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> # mean of (gender, race) 0.462098, (gender, habitat) 0.318257, (race, habitat) 0.087208
    >>> round(value_of(mi_loss(example())), 6)
    0.289188
    """
    columns = [(q, orig_col(i), pub_col(i)) for i, q in enumerate(data.qids)] + [(None, SENSITIVE, SENSITIVE)]
    return _by_attribute(
        data, _pairwise(data, columns, _mutual_information), stable_mean(pl.col("delta")), stable_mean(pl.col("delta"))
    )
