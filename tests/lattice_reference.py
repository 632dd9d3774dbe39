"""An independent reference for the full-domain objectives: every vector, every objective.

Written from the definitions (ARX's ``metric.v2`` and the papers, see
``polars_anon/algorithms/objectives.py``) without its code: the classes of every
level vector are rolled up from the vector below in one walk over the whole
lattice, each objective is computed on the classes (not on the tuples, as the
search does), and the optimum is a plain minimum over every vector within the
suppression budget, ties broken by fewer suppressed rows, then the smaller level
sum, then the lexicographically smaller vector.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_anon import Hierarchy

ARX_DEFAULT_AGGREGATE = {"loss": "geometric", "entropy": "sum", "height": "sum", "precision": "arithmetic"}


@dataclass
class Classes:
    """The classes of one vector: size and published node per attribute."""

    vector: tuple[int, ...]
    size: np.ndarray
    nodes: np.ndarray  # (classes, m) published node ids
    rep: np.ndarray  # per class: one of its distinct input tuples


def walk(tuples: pl.DataFrame, qids: Sequence[str], hs: Mapping[str, Hierarchy]) -> Iterator[Classes]:
    """Classes of every vector, each rolled up from the vector one level below in its last raised attribute.

    Vectors come in odometer order (the last attribute fastest), so the vector below
    is always among the m kept (one per attribute: the latest raised in it).
    """
    size = tuples["size"].to_numpy().astype(np.int64)
    leaf = np.stack([hs[q].ids_of(tuples[q]) for q in qids], axis=1)
    m = len(qids)
    bottom = Classes((0,) * m, size, leaf.copy(), np.arange(len(size)))
    latest: list[Classes] = [bottom] * (m + 1)  # latest[j + 1]: the latest vector whose last raised attribute is j
    for v in itertools.product(*[range(hs[q].height) for q in qids]):
        raised = [i for i, x in enumerate(v) if x > 0]
        if not raised:
            yield bottom
            continue
        j = raised[-1]
        below = latest[j + 1] if v[j] > 1 else latest[raised[-2] + 1 if len(raised) > 1 else 0]
        nodes = below.nodes.copy()
        nodes[:, j] = hs[qids[j]].generalize_ids(v[j])[leaf[below.rep, j]]
        code = np.zeros(len(nodes), dtype=np.int64)
        for i in range(m):  # mixed radix over the node ids (small enough for the tables tested)
            code = code * hs[qids[i]].n_nodes + nodes[:, i]
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        latest[j + 1] = Classes(
            v, np.bincount(inverse, weights=below.size).astype(np.int64), nodes[first], below.rep[first]
        )
        yield latest[j + 1]


def _aggregate(parts: np.ndarray, weights: Sequence[float] | None, how: str) -> tuple[float, ...]:
    w = np.ones(len(parts)) if weights is None else np.asarray(weights, dtype=np.float64)
    x = [float(v) for v in parts * w / w.max()]
    if how == "arithmetic":
        return (sum(xi / len(x) for xi in x),)
    if how == "geometric":
        out = 1.0
        for xi in x:
            out *= (xi + 1.0) ** (1.0 / len(x))
        return (out - 1.0,)
    if how == "sum":
        return (sum(x),)
    if how == "max":
        return (max([0.0, *x]),)
    return tuple(sorted(x, reverse=True))


def _factors(gs: float) -> tuple[float, float]:
    return (1.0 if gs <= 0.5 else 2.0 - 2.0 * gs), (2.0 * gs if gs < 0.5 else 1.0)


@dataclass
class Table:
    """What every vector's objectives need beyond its classes.

    The attributes' nodes are laid end to end on one axis (attribute j's node v at ``start[j] + v``), so a sum per
    node over every attribute is one ``bincount`` and a sum per attribute one ``reduceat`` at ``start``.
    """

    hs: list[Hierarchy]
    n: float
    p_log_p: float  # sum over distinct tuples of p log2 p
    original: np.ndarray  # per attribute: sum over rows of log2 count(original value)
    domain: np.ndarray  # leaves of each hierarchy
    start: np.ndarray  # per attribute: where its nodes begin on the one node axis
    leaves: np.ndarray  # per node: the leaves under it
    share: np.ndarray  # per node: its leaves' share of its attribute's domain
    cost: np.ndarray  # per node: (leaves - 1) / (domain - 1), 0 for a one-leaf domain


def table_of(tuples: pl.DataFrame, qids: Sequence[str], hs: Mapping[str, Hierarchy]) -> Table:
    size = tuples["size"].to_numpy().astype(np.float64)
    n = float(size.sum())
    leaves = [hs[q].leaves.astype(np.float64) for q in qids]
    start = np.cumsum([0] + [len(x) for x in leaves[:-1]])
    cells = (np.stack([hs[q].ids_of(tuples[q]) for q in qids], axis=1) + start).ravel()
    counts = np.bincount(cells, weights=np.repeat(size, len(qids)), minlength=int(sum(map(len, leaves))))  # per node
    p = size / n
    domain = np.array([float(hs[q].n_leaves) for q in qids])
    return Table(
        [hs[q] for q in qids],
        n,
        float((p * np.log2(p)).sum()),
        _count_log_count(counts, start),  # summed as `values` sums a vector's: 0 at the bottom, not a rounding
        domain,
        start,
        np.concatenate(leaves),
        np.concatenate([x / d for x, d in zip(leaves, domain)]),
        np.concatenate([(x - 1) / (d - 1) if d > 1 else 0.0 * x for x, d in zip(leaves, domain)]),
    )


def _count_log_count(counts: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Per attribute: the sum over its nodes of c log2 c (rows c at the node; 0 for an empty node)."""
    return np.add.reduceat(counts * np.log2(np.where(counts > 0, counts, 1.0)), start)


def values(
    cls: Classes,
    t: Table,
    ks: Sequence[int],
    configs: Mapping[str, Mapping[str, object]],
    violating: np.ndarray | None = None,
) -> dict[tuple[int, str], tuple[tuple[float, ...], int]]:
    """``(k, name) -> (key, suppressed rows)`` of each config (``metric`` and options) on one vector's classes.

    `violating` (per class) marks classes suppressed for privacy models, besides those smaller than k.

    (Sums over classes are taken per node: a class count per node, then one sum of products with the
    node's values; no matrix products: BLAS threads are slow on a busy machine.)
    """
    n, m, hs = t.n, len(t.hs), t.hs
    size = cls.size.astype(np.float64)
    cells = (cls.nodes + t.start).ravel()  # every (class, attribute) cell's node on the one node axis
    cell_size = np.repeat(size, m)  # each cell weighs its class's rows
    area = t.leaves[cells].reshape(len(size), m).prod(axis=1)
    levels = np.array(cls.vector, dtype=np.float64)
    top = np.array([h.height - 1 for h in hs], dtype=np.float64)
    fraction = np.where(top > 0, levels / np.maximum(top, 1), 0.0)
    published = np.bincount(cells, weights=cell_size, minlength=len(t.leaves))  # rows per node
    generalized = _count_log_count(published, t.start) - t.original
    out = {}
    for k in ks:
        small = cls.size < k if violating is None else (cls.size < k) | violating
        s = float(size[small].sum())
        kept = np.where(small, 0.0, size)
        at_node = np.bincount(cells, weights=np.repeat(size - kept, m), minlength=len(t.leaves))  # suppressed rows
        kept_share = np.add.reduceat((published - at_node) * t.share, t.start)
        supp_share = np.add.reduceat(at_node * t.share, t.start)
        kept_cost = np.add.reduceat((published - at_node) * t.cost, t.start)
        pooled = np.add.reduceat(at_node * np.log2(np.where(at_node > 0, s / np.maximum(at_node, 1.0), 1.0)), t.start)
        for name, config in configs.items():
            metric = config["metric"]
            how = str(config.get("aggregate") or ARX_DEFAULT_AGGREGATE.get(str(metric), ""))
            g, sf = _factors(float(config.get("gs_factor", 0.5)))  # type: ignore[arg-type]
            weights = config.get("weights")
            monotonic = bool(config.get("monotonic", False))
            if metric == "ncp":
                w = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)
                key: tuple[float, ...] = (float((((kept_cost + s) / n) * w).sum() / w.sum()),)
            elif metric == "loss":
                raw = g * kept_share + (s if sf == 1.0 else supp_share * (1 - sf) + sf * s)
                low = g * n / t.domain
                parts = np.where(n - low > 0, np.maximum(0.0, (raw - low) / np.where(n - low > 0, n - low, 1.0)), 0.0)
                key = _aggregate(parts, weights, how)  # type: ignore[arg-type]
            elif metric == "entropy":
                key = _aggregate(g * generalized + (0.0 if monotonic else sf * pooled), weights, how)  # type: ignore[arg-type]
            elif metric == "precision":
                key = _aggregate(((n - s) * g * fraction + s * sf) / n, weights, how)  # type: ignore[arg-type]
            elif metric == "height":
                key = _aggregate(levels, weights, how)  # type: ignore[arg-type]
            elif metric == "discernibility":
                key = (float((size * size).sum()) if monotonic else float((kept * kept).sum()) + n * s,)
            elif metric == "aecs":
                key = (n / (int(np.count_nonzero(~small)) + (1 if s else 0)),)
            elif metric == "ambiguity":
                key = (float((kept * area).sum()) + s * float(t.domain.prod()),)
            else:
                assert metric == "kl_divergence"
                # the tuples of a class share its q, and their p sum to |E| / n
                q = np.where(small, (s / n) / t.domain.prod(), (size / n) / area)
                key = (t.p_log_p - float((size / n * np.log2(q)).sum()),)
            out[(k, name)] = (key, int(s))
    return out


def _better(
    a: tuple[tuple[float, ...], int, tuple[int, ...]], b: tuple[tuple[float, ...], int, tuple[int, ...]], rtol: float
) -> bool:
    for x, y in zip(a[0], b[0]):
        tol = 1e-15 + rtol * max(abs(x), abs(y))
        if x < y - tol:
            return True
        if x > y + tol:
            return False
    return (a[1], sum(a[2]), a[2]) < (b[1], sum(b[2]), b[2])


def tabulate(
    tuples: pl.DataFrame,
    qids: Sequence[str],
    hs: Mapping[str, Hierarchy],
    ks: Sequence[int],
    configs: Mapping[str, Mapping[str, object]],
) -> dict[tuple[int, str], list[tuple[tuple[int, ...], tuple[float, ...], int]]]:
    """For each k and named config: ``(vector, key, suppressed)`` of every vector (one walk)."""
    t = table_of(tuples, qids, hs)
    out: dict[tuple[int, str], list[tuple[tuple[int, ...], tuple[float, ...], int]]] = {
        (k, name): [] for k in ks for name in configs
    }
    for cls in walk(tuples, qids, hs):
        for at, (key, s) in values(cls, t, ks, configs).items():
            out[at].append((cls.vector, key, s))
    return out


def optimum(
    table: Sequence[tuple[tuple[int, ...], tuple[float, ...], int]], budget: int, metric: str, rows: int | None = None
) -> tuple[tuple[int, ...], tuple[float, ...], int] | None:
    """``(vector, key, suppressed)`` of the best vector of a tabulated config within `budget` (None: none is).

    With `rows` (the table's row count), a vector that suppresses every row is no release and is left out, as
    fulldomain leaves it out."""
    rtol = 0.0 if metric == "ncp" else 1e-12
    best = None
    for vector, key, s in table:
        if rows is not None and s >= rows:
            continue
        if s <= budget and (best is None or _better((key, s, vector), best, rtol)):
            best = (key, s, vector)
    return None if best is None else (best[2], best[0], best[1])
