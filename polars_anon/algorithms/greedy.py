"""Metric-guided greedy k-anonymization [paper 000 §III Algorithm 1; paper 001 §5 Algorithm 1].

While some equivalence class is smaller than k, pick one such class C_small, find
the partner C that minimizes the merge cost [paper 001 §3]

    MC(C1, C2) = sum_i Cost_i(x_i, y_i) |C1| + Cost_i(y_i, x_i) |C2|,
    Cost_i(n, m) = w(n -> LCA(n, m)) = R_i[n] - R_i[LCA(n, m)],

and replace both by Merge(C_small, C) = [LCA(x_1, y_1), ..., LCA(x_m, y_m)]
[paper 000 §II-A]. R_i is the cumulative edge weight up to the root of one of the
seven metrics of :mod:`polars_anon.metrics.weights` (default NLLM, the papers'
recommendation) or of user-given edge weights.

The loop runs in NumPy over class aggregates (one row per distinct
quasi-identifier tuple), never over records. A class is its LCA node per
attribute and its size; small attributes are fused into one code whose
lookup tables (``R[LCA(x, y)]`` and ``LCA(x, y)`` for every pair of codes) are
precomputed, so the cost of every candidate is one vectorized gather per fused
attribute group.

With privacy models (``task.constraints``), a class is *below k* (not finished) while
it has fewer than k rows or violates a model; each class carries its sensitive counts,
summed when classes merge, and the merge cost is unchanged.

Options (``task.options``)
--------------------------
first : ``"first"`` (default) | ``"smallest"``
    Which class below k goes first: the first one in the class order
    [paper 001] or one of the smallest, ties to the first [paper 000].
partners : ``"below_k"`` (default) | ``"all"``
    Where the partner is searched: among the other classes still below k
    [paper 001], or among every other class [paper 000]. With ``below_k``, when
    only one class is below k it merges with the cheapest class of any size.
weights : mapping qid -> array of ω(n, parent(n)) per node
    User edge weights instead of a named metric (give one or the other).
candidates : ``"auto"`` (default) | None or ``"exact"`` | int >= 2
    None (``"exact"`` in a job file): the exact loop (every candidate of the table is priced at every
    step; O(C^2)). An int B: blocked pruning (below). ``"auto"``: exact up to
    :data:`AUTO_EXACT` classes, else B = max(:data:`AUTO_BLOCK`, classes
    holding about :data:`AUTO_ROWS_K` x k rows).

Readings taken where the papers leave a choice
----------------------------------------------
- Class order. The papers pick "the first element of C(T)" without fixing the
  order. Here classes are sorted lexicographically on hierarchy keys: every
  (attribute, level) pair is a key (the value's ancestor at that level, as a
  depth-first node id), and keys go by decreasing mean cost of the
  generalization step they stand for, so the costliest distinctions vary
  slowest and neighbouring classes share their expensive ancestors. A merged
  class keeps the position of the earlier of the two, so ``first`` keeps
  growing one class until it reaches k before moving on.
- Ties: among equal computed costs, the earliest class in that order. The same
  input always gives the same partition.
- The merge cost of a class that is already merged uses its representative
  (the LCA tuple), as paper 001 §3 defines MC on class representatives.

Pruning (``candidates=B``)
--------------------------
Classes are cut, in the order above, into consecutive blocks of B to 2B - 1
classes, and the exact loop runs inside every block at once (one vectorized
step advances every block). A block whose classes all merge into one class
still below k leaves it over; the next round re-blocks the remaining classes
(so leftovers meet their neighbours, whatever their size) until no class is
below k. With B >= the number of classes this is exactly the exact loop.
Its cost against the exact loop is measured on Adult in
``benchmarks/greedy_bench.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from polars_anon._progress import bar as progress_bar
from polars_anon._validate import check_k, is_integer
from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.weights import EDGE_METRICS, edge_weights
from polars_anon.privacy.base import ClassView
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import TupleMap

__all__ = [
    "AUTO_BLOCK",
    "AUTO_EXACT",
    "AUTO_ROWS_K",
    "GreedyLoop",
    "GreedyOptions",
    "GreedyResult",
    "auto_block",
    "block_layout",
    "greedy_partition",
    "marginals",
    "merge_cost",
    "order_keys",
]

AUTO_EXACT = 30_000
"""``candidates="auto"`` runs the exact loop up to this many classes."""
AUTO_BLOCK = 256
"""``candidates="auto"`` uses blocks of at least this many classes above :data:`AUTO_EXACT`."""
AUTO_ROWS_K = 8
"""... and of at least enough classes to hold about ``AUTO_ROWS_K * k`` rows (large k needs wide blocks)."""
FUSE_NODES = 2048
"""Attributes are fused while the product of their node counts stays at most this."""
TABLE_NODES = 4096
"""An attribute with more nodes gets no pair table; its LCA is found by walking up."""
LAZY_TABLES = 8
"""A fused group gets no pair tables when ``LAZY_TABLES * attributes * classes ** 2`` is below its codes squared
(given the class count), and the exact loop builds them once ``LAZY_TABLES * attributes * pairs walked`` reaches
that: topdown's repairs of a few merges over thousands of classes do not build Adult's 2.7 million age x workclass
pairs. Walked or looked up, the sums are the same floats."""
ONE_BLOCK_LOOP = True
"""A round of one block (the exact loop) runs on 1-D arrays (:func:`_run_one_block`): the same merges, less CPU."""


# ----------------------------------------------------------------------------- cost model
def _root_weights(
    hierarchies: Mapping[str, Hierarchy], metric: str | None, weights: Mapping[str, Any] | None
) -> dict[str, np.ndarray]:
    """R per node for every qid, from a metric name or user edge weights."""
    if weights is not None:
        if metric is not None:
            raise InvalidParameterError(
                f"greedy: give either metric ({metric!r}) or weights, not both; weights replace the metric's "
                "edge weights"
            )
        if not isinstance(weights, Mapping):
            raise InvalidParameterError(
                f"greedy: weights must be a mapping qid -> edge weights per node, got {type(weights).__name__}"
            )
        missing = [q for q in hierarchies if q not in weights]
        extra = [q for q in weights if q not in hierarchies]
        if missing or extra:
            raise InvalidParameterError(
                f"greedy: weights must give one array per qid {list(hierarchies)}; missing {missing}, unknown {extra}"
            )
        out = {}
        for q, h in hierarchies.items():
            try:
                w = np.asarray(weights[q], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError(f"greedy: weights[{q!r}] must be numbers, one per node: {exc}") from None
            if w.shape != (h.n_nodes,):
                raise InvalidParameterError(
                    f"greedy: weights[{q!r}] must have one weight per node of its hierarchy ({h.n_nodes}, "
                    f"depth-first order, root first), got shape {w.shape}"
                )
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise InvalidParameterError(
                    f"greedy: weights[{q!r}] must be finite and >= 0, got "
                    f"{w[~(np.isfinite(w) & (w >= 0))][:5].tolist()}"
                )
            out[q] = h.root_weights(w)
        return out
    metric = "nllm" if metric is None else metric
    if metric not in EDGE_METRICS:
        raise InvalidParameterError(
            f"greedy: metric must be one of {list(EDGE_METRICS)} (the edge-weight metrics of paper 001 §4), "
            f"got {metric!r}; or give weights"
        )
    ew = edge_weights(metric, hierarchies)
    return {q: h.root_weights(ew[q]) for q, h in hierarchies.items()}


def merge_cost(
    hierarchies: Mapping[str, Hierarchy],
    x: Mapping[str, str],
    y: Mapping[str, str],
    size_x: int,
    size_y: int,
    *,
    metric: str | None = "nllm",
    weights: Mapping[str, Any] | None = None,
) -> float:
    """MC(C1, C2) of two classes given by their representatives [paper 001 §3].

    ``sum_i (R_i[x_i] - R_i[LCA]) |C1| + (R_i[y_i] - R_i[LCA]) |C2|``, the same
    cost the greedy loop minimizes (a scalar reference; the loop is vectorized).

    >>> from polars_anon import Hierarchy
    >>> h = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e"], "f": None}})
    >>> round(merge_cost({"q": h}, {"q": "a"}, {"q": "c"}, 2, 1, metric="ncp"), 6)  # 3 * (3-1)/6
    1.0
    """
    if weights is not None:
        metric = None
    roots = _root_weights(hierarchies, metric, weights)
    total = 0.0
    for q, h in hierarchies.items():
        a, b = h.id_of(x[q]), h.id_of(y[q])
        lca = int(h.lca(a, b))
        r = roots[q]
        total += (r[a] - r[lca]) * size_x + (r[b] - r[lca]) * size_y
    return float(total)


@dataclass
class _Group:
    """Fused attributes: code = sum node_i * stride_i, with pair tables over codes."""

    qids: list[str]
    sizes: list[int]  # node counts
    r: np.ndarray  # R summed over the group's attributes, per code
    rl: np.ndarray | None  # flat (n*n) R[LCA] per pair of codes, or None (walk)
    lca: np.ndarray | None  # flat (n*n) LCA code per pair, or None (walk)
    h: Hierarchy | None  # the hierarchy when the group walks (a single large attribute)
    hs: list[Hierarchy] | None = None  # without pair tables (few classes): each attribute's hierarchy, walked
    roots: list[np.ndarray] | None = None  # ... and its R per node

    def __post_init__(self) -> None:
        self.n = int(np.prod(self.sizes))  # codes per group (a plain int: read at every step)

    @property
    def lazy(self) -> bool:
        """No pair tables (yet): each pair's LCA is walked per attribute (the same sums as the tables hold)."""
        return self.rl is None and self.hs is not None

    def build_tables(self) -> None:
        """The pair tables ``R[LCA]`` and ``LCA`` over every pair of codes (attribute by attribute, from 0)."""
        assert self.hs is not None and self.roots is not None
        rl = np.zeros((1, 1))
        lca = np.zeros((1, 1), dtype=np.int64)
        for h, r_q in zip(self.hs, self.roots):
            n = h.n_nodes
            lca_q = h.lca_matrix(max_nodes=TABLE_NODES)
            rl_q = r_q[lca_q]
            m = rl.shape[0]
            rl = (rl[:, None, :, None] + rl_q[None, :, None, :]).reshape(m * n, m * n)
            lca = (lca[:, None, :, None] * n + lca_q[None, :, None, :]).reshape(m * n, m * n)
        code_dtype = np.int32 if self.r.size < 2**31 else np.int64
        self.rl, self.lca = rl.ravel(), lca.astype(code_dtype).ravel()
        self.hs = self.roots = None

    def encode(self, nodes: list[np.ndarray]) -> np.ndarray:
        code = np.zeros(len(nodes[0]), dtype=np.int64)
        for ids, n in zip(nodes, self.sizes):
            code = code * n + ids
        return code

    def decode(self, code: np.ndarray) -> list[np.ndarray]:
        out = []
        for n in reversed(self.sizes):
            out.append(code % n)
            code = code // n
        return out[::-1]

    def pair_rl(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """R[LCA(x, y)] for x (rows,) against y (rows, width)."""
        if self.rl is not None:
            if x.shape[0] == 1:
                return self.rl[x[0] * self.n : (x[0] + 1) * self.n].take(y)
            return self.rl.take(x[:, None] * self.n + y)
        if self.hs is not None and self.roots is not None:  # 0 + R_1[LCA] + R_2[LCA] + ...: the tables' order
            out = np.zeros(y.shape)
            for h, r, xq, yq in zip(self.hs, self.roots, self.decode(x), self.decode(y)):
                out += r[h.lca(np.broadcast_to(xq[:, None], yq.shape), yq)]
            return out
        assert self.h is not None
        return self.r[self.h.lca(np.broadcast_to(x[:, None], y.shape), y)]

    def pair_lca(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.lca is not None:
            return self.lca.take(x * self.n + y)
        if self.hs is not None:
            return self.encode([h.lca(xq, yq) for h, xq, yq in zip(self.hs, self.decode(x), self.decode(y))])
        assert self.h is not None
        return self.h.lca(x, y)


def _groups(
    hierarchies: Mapping[str, Hierarchy], roots: Mapping[str, np.ndarray], n_classes: int | None = None
) -> list[_Group]:
    """Fuse small attributes (first fit, largest first) so each step does fewer gathers.

    With `n_classes` given, a group whose pair tables would cost more to build than the
    walks of a loop over that many classes (:data:`LAZY_TABLES`) gets none (:attr:`_Group.lazy`).
    """
    qids = sorted(hierarchies, key=lambda q: (-hierarchies[q].n_nodes, list(hierarchies).index(q)))
    bins: list[list[str]] = []
    for q in qids:
        n = hierarchies[q].n_nodes
        for b in bins:
            if np.prod([hierarchies[p].n_nodes for p in b]) * n <= FUSE_NODES:
                b.append(q)
                break
        else:
            bins.append([q])
    out = []
    for b in bins:
        hs = [hierarchies[q] for q in b]
        if len(b) == 1 and hs[0].n_nodes > TABLE_NODES:
            out.append(_Group(b, [hs[0].n_nodes], roots[b[0]], None, None, hs[0]))
            continue
        sizes = [h.n_nodes for h in hs]
        r = np.zeros(1)
        for q, n in zip(b, sizes):
            r = (r[:, None] + roots[q][None, :]).reshape(r.size * n)
        g = _Group(b, sizes, r, None, None, None, hs, [roots[q] for q in b])
        if n_classes is None or LAZY_TABLES * len(b) * n_classes**2 >= g.n**2:
            g.build_tables()
        out.append(g)
    return out


# ----------------------------------------------------------------------------- the loop
class _Models:
    """Privacy models inside the loop: each slot's sensitive counts, summed when classes merge."""

    def __init__(self, constraints: Constraints, order: np.ndarray) -> None:
        self.constraints = constraints
        view = constraints.view(np.arange(len(order)), len(order), population=False)
        self.values = {a: c[order] for a, c in view.counts.items()}

    def block(self, alive: np.ndarray, nb: int, w: int, row: np.ndarray, col: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for a, v in self.values.items():
            b = np.zeros((nb, w, v.shape[1]), dtype=np.int64)
            b[row, col] = v[alive]
            out[a] = b
        return out

    def ok(self, size: np.ndarray, counts: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per class: at least the floor and every model satisfied (any array shape)."""
        flat = ClassView(size.reshape(-1), {a: c.reshape(-1, c.shape[-1]) for a, c in counts.items()})
        return (self.constraints.ok(flat) & (flat.size >= self.constraints.floor)).reshape(size.shape)

    def ok_one(self, size: int, counts: Mapping[str, np.ndarray]) -> bool:
        """:meth:`ok` of one class (`counts`: its count per value of each attribute)."""
        return size >= self.constraints.floor and self.constraints.ok_one(size, counts)

    def write_back(self, slots: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        for a, v in values.items():
            self.values[a][slots] = v

    def n_small(self, size: np.ndarray, slots: np.ndarray) -> int:
        return int((~self.ok(size[slots], {a: v[slots] for a, v in self.values.items()})).sum())


@dataclass
class GreedyResult:
    """A greedy partition of the class aggregates.

    ``class_id[i]`` is the class of aggregate row i (classes numbered by their
    first row); ``nodes[q][i]`` the node id published for row i's attribute q
    (the LCA of its class). ``rounds`` counts the blocked rounds (1 when exact).
    """

    class_id: np.ndarray
    nodes: dict[str, np.ndarray]
    n_classes: int
    merges: int
    rounds: int
    block: int | None
    seconds: float


def marginals(
    hierarchies: Mapping[str, Hierarchy], nodes: Mapping[str, np.ndarray], size: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per qid, its distinct node ids (ascending) and the rows holding each (Float64): all :func:`order_keys` reads.

    >>> marginals({"q": None}, {"q": np.array([3, 1, 3])}, np.array([2, 5, 1]))["q"]
    (array([1, 3]), array([5., 3.]))
    """
    out = {}
    for q in hierarchies:
        ids, inverse = np.unique(nodes[q], return_inverse=True)
        out[q] = (ids.astype(np.int64), np.bincount(inverse.ravel(), weights=size, minlength=len(ids)))
    return out


def order_keys(
    hierarchies: Mapping[str, Hierarchy],
    roots: Mapping[str, np.ndarray],
    margins: Mapping[str, tuple[np.ndarray, np.ndarray]],
) -> list[tuple[str, int]]:
    """The keys of the class order, most significant first: (qid, level L), the value's ancestor at level L.

    Keys go by the mean cost of generalizing from level L to L + 1 (weighted by rows;
    `margins` from :func:`marginals`), most expensive first; an attribute's coarser
    keys always come before its finer ones. Every engine computes the class order
    (and so the greedy blocks) from these keys: the driver here, Spark in
    :mod:`polars_anon.engines.planners.spark_greedy`.

    >>> from polars_anon import Hierarchy
    >>> h = Hierarchy.from_dict({"*": {"A": ["a", "b"], "B": ["c", "d"]}})
    >>> nodes = {"q": h.ids_of(pl.Series(["a", "c"]))}
    >>> order_keys({"q": h}, _root_weights({"q": h}, "nllm", None), marginals({"q": h}, nodes, np.array([1, 1])))
    [('q', 1), ('q', 0)]
    """
    keys: list[tuple[float, int, int, str]] = []
    for i, (q, h) in enumerate(hierarchies.items()):
        ids, rows = margins[q]
        total = max(float(rows.sum()), 1.0)
        upper = h.generalize_ids(h.height - 1)[ids]
        cost_above = 0.0
        for lv in range(h.height - 2, -1, -1):  # coarse to fine
            here = h.generalize_ids(lv)[ids]
            step = float((roots[q][here] - roots[q][upper]) @ rows) / total
            cost_above = step if lv == h.height - 2 else min(step, cost_above)
            keys.append((cost_above, i, lv, q))
            upper = here
    keys.sort(key=lambda t: (-t[0], t[1], -t[2]))
    return [(q, lv) for _, _, lv, q in keys]


def _order(
    hierarchies: Mapping[str, Hierarchy],
    nodes: dict[str, np.ndarray],
    roots: Mapping[str, np.ndarray],
    size: np.ndarray,
) -> np.ndarray:
    """Class order: a lexicographic order on hierarchy ancestors, costliest distinctions first (:func:`order_keys`).

    Classes close in this order share their expensive ancestors, so neighbours are cheap partners.
    """
    keys = order_keys(hierarchies, roots, marginals(hierarchies, nodes, size))
    if not keys:
        return np.arange(len(size), dtype=np.int64)
    # np.lexsort: the last key is the primary one
    return np.lexsort([hierarchies[q].generalize_ids(lv)[nodes[q]] for q, lv in reversed(keys)]).astype(np.int64)


def block_layout(n: int, width: int) -> np.ndarray:
    """Sizes of the consecutive blocks n classes (in class order) are cut into: width to 2 * width - 1 each.

    >>> block_layout(10, 4).tolist()
    [5, 5]
    >>> block_layout(3, 4).tolist()
    [3]
    """
    nb = max(1, n // width)  # blocks of width to 2 * width - 1 classes: each has a partner
    base, extra = divmod(n, nb)
    counts = np.full(nb, base, dtype=np.int64)
    counts[:extra] += 1
    return counts


@dataclass(slots=True)
class _State:
    """The merge loop's global state, one entry per slot (a class of the aggregates, in class order).

    Every round edits it in place (the privacy models' sensitive counts, also edited in
    place, are :attr:`_Models.values`).

    Attributes
    ----------
    codes
        Per fused group (:class:`_Group`), each slot's node code (the LCA tuple of its class).
    size
        Each slot's rows.
    rsum
        Each slot's R summed over the groups (``sum_g g.r[code_g]``).
    owner
        The slot each slot merged into (itself while it is live); chains resolve to the final class.
    live
        Whether the slot still holds a class (False once merged into another).
    """

    codes: list[np.ndarray]
    size: np.ndarray
    rsum: np.ndarray
    owner: np.ndarray
    live: np.ndarray

    def write_back(
        self,
        models: _Models | None,
        m: np.ndarray,
        slot: np.ndarray,
        size: np.ndarray,
        rsum: np.ndarray,
        codes: list[np.ndarray],
        counts: Mapping[str, np.ndarray],
    ) -> None:
        """A block's classes at positions `m` (the live ones) back into the state at their `slot`."""
        s_m = slot[m]
        self.size[s_m] = size[m]
        self.rsum[s_m] = rsum[m]
        for c, bc in zip(self.codes, codes):
            c[s_m] = bc[m]
        if models is not None:
            models.write_back(s_m, {a: v[m] for a, v in counts.items()})


@dataclass(frozen=True, slots=True)
class _Rules:
    """The loop's fixed choices, the same in every round.

    Attributes
    ----------
    groups
        The fused cost tables (:func:`_groups`); a lazy group may build its pair tables during a round.
    k
        The minimum class size.
    smallest
        ``first="smallest"``: the smallest small class goes first (ties: the earliest), else the earliest one.
    below_k
        ``partners="below_k"``: partners are the other classes below k (any class when only one is below k),
        else every live class.
    models
        The privacy models besides k (a class is small while it violates one), or None (k alone).
    """

    groups: list[_Group]
    k: int
    smallest: bool
    below_k: bool
    models: _Models | None


_BIG_INT = int(np.iinfo(np.int64).max)
"""The size of a class that is not small in the ``size_small`` arrays of :class:`_Blocks` and :class:`_Line`
(never the smallest)."""


class _Blocks:
    """The classes of one round laid out in consecutive blocks, one block per row of 2-D arrays.

    `slot` holds each position's global slot (-1: padding), `blive` whether it is a
    live class, `bsmall` whether it is small (below k or, with models, violating
    one), `bsize`, `brsum` and `bcodes` its size, R-sum and node codes; `a_live` is
    size * R-sum (+inf where no partner), `a_small` the same restricted to small
    classes, `size_small` the size restricted to small classes (for `smallest`).
    """

    ARRAYS = ("slot", "blive", "bsmall", "bsize", "brsum", "a_live", "a_small", "size_small")

    def __init__(self, alive: np.ndarray, width: int, state: _State, rules: _Rules) -> None:
        n = len(alive)
        counts = block_layout(n, width)
        nb = len(counts)
        self.w = w = int(counts.max())
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        row = np.repeat(np.arange(nb, dtype=np.int64), counts)
        col = np.arange(n, dtype=np.int64) - starts[row]

        def laid(values: np.ndarray | bool, dtype: Any, fill: Any = 0) -> np.ndarray:
            out = np.full((nb, w), fill, dtype=dtype)
            out[row, col] = values
            return out

        self.slot = laid(alive, np.int64, -1)
        self.blive = laid(True, bool, False)
        self.bsize = laid(state.size[alive], np.int64)
        self.brsum = laid(state.rsum[alive], np.float64)
        self.bcodes = [laid(c[alive], np.int64) for c in state.codes]
        self.rules = rules
        models = rules.models
        self.bsv = models.block(alive, nb, w, row, col) if models is not None else {}
        self.bsmall = self.blive & ((self.bsize < rules.k) if models is None else ~models.ok(self.bsize, self.bsv))
        self.nsmall = self.bsmall.sum(axis=1)
        self.nlive = counts.copy()
        # the cost of a partner is then const + a - (sx + size) * R[LCA] and masking is free
        self.a_live = np.where(self.blive, self.bsize * self.brsum, np.inf)
        self.a_small = np.where(self.bsmall, self.a_live, np.inf) if rules.below_k else self.a_live
        self.size_small = np.where(self.bsmall, self.bsize, _BIG_INT) if rules.smallest else self.bsize

    def retire(self, keep: np.ndarray, state: _State) -> None:
        """Write the blocks not kept back into the global state, then drop them."""
        rows = np.flatnonzero(~keep)
        bcodes, bsv = [bc[rows] for bc in self.bcodes], {a: v[rows] for a, v in self.bsv.items()}
        state.write_back(
            self.rules.models, self.blive[rows], self.slot[rows], self.bsize[rows], self.brsum[rows], bcodes, bsv
        )
        self._take(lambda a: a[keep], lambda a: a[keep])
        self.nsmall, self.nlive = self.nsmall[keep], self.nlive[keep]

    def pack(self) -> None:
        """Move live slots to the left, keeping their order, when that narrows the blocks by a quarter."""
        w_new = int(self.nlive.max())
        if len(self.nsmall) * self.w <= 4096 or w_new >= 0.75 * self.w:
            return
        perm = np.argsort(~self.blive, axis=1, kind="stable")[:, :w_new]
        self._take(lambda a: np.take_along_axis(a, perm, 1), lambda a: np.take_along_axis(a, perm[:, :, None], 1))
        self.w = w_new

    def _take(self, pick: Callable[[np.ndarray], np.ndarray], pick3: Callable[[np.ndarray], np.ndarray]) -> None:
        for name in self.ARRAYS:
            setattr(self, name, pick(getattr(self, name)))
        self.bcodes = [pick(bc) for bc in self.bcodes]
        self.bsv = {a: pick3(v) for a, v in self.bsv.items()}

    def merge(self, state: _State) -> np.ndarray:
        """One merge in every block: its first small class (or smallest) with its cheapest partner.

        Returns, per block, how many classes stopped being small."""
        r, s, sx, xc, j = self._partners()
        tgt, src = np.minimum(s, j), np.maximum(s, j)  # the merged class takes the earlier position
        j_small = self.bsmall[r, j].copy()
        new_size = sx + self.bsize[r, j]
        new_r = np.zeros(len(r))
        for g, x, bc in zip(self.rules.groups, xc, self.bcodes):
            new = g.pair_lca(x, bc[r, j])
            bc[r, tgt] = new
            new_r += g.r[new]
        still = self._merge_counts(r, s, j, tgt, new_size)
        self._set_merged(r, tgt, src, new_size, new_r, still)
        state.owner[self.slot[r, src]] = self.slot[r, tgt]
        state.live[self.slot[r, src]] = False
        left = 1 + j_small.astype(np.int64) - still
        self.nsmall = self.nsmall - left
        self.nlive = self.nlive - 1
        return left

    def _merge_counts(
        self, r: np.ndarray, s: np.ndarray, j: np.ndarray, tgt: np.ndarray, new_size: np.ndarray
    ) -> np.ndarray:
        """The sensitive counts of the merged classes (written at `tgt`); whether each is still small."""
        models = self.rules.models
        if models is None:
            return new_size < self.rules.k
        merged = {a: v[r, s] + v[r, j] for a, v in self.bsv.items()}
        for a, v in self.bsv.items():
            v[r, tgt] = merged[a]
        return ~models.ok(new_size, merged)

    def _set_merged(
        self,
        r: np.ndarray,
        tgt: np.ndarray,
        src: np.ndarray,
        new_size: np.ndarray,
        new_r: np.ndarray,
        still: np.ndarray,
    ) -> None:
        """The merged classes at `tgt` (their size, R-sum and partner costs); the positions `src` dead."""
        self.bsize[r, tgt] = new_size
        self.brsum[r, tgt] = new_r
        self.blive[r, src] = self.bsmall[r, src] = False
        self.bsmall[r, tgt] = still
        self.a_live[r, src] = np.inf
        self.a_live[r, tgt] = new_size * new_r
        if self.rules.below_k:
            self.a_small[r, src] = np.inf
            self.a_small[r, tgt] = np.where(still, new_size * new_r, np.inf)
        if self.rules.smallest:
            self.size_small[r, src] = _BIG_INT
            self.size_small[r, tgt] = np.where(still, new_size, _BIG_INT)

    def _partners(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
        """Per block: its first small class (or smallest) s and the partner j at the least cost (ties: the earliest).

        Returns the block rows, s, the size and codes of s, and j.
        """
        bsize, bcodes, groups = self.bsize, self.bcodes, self.rules.groups
        r = np.arange(len(self.nsmall))
        s = self.size_small.argmin(axis=1) if self.rules.smallest else self.bsmall.argmax(axis=1)
        sx = bsize[r, s]
        xc = [bc[r, s] for bc in bcodes]
        rl = groups[0].pair_rl(xc[0], bcodes[0])
        for g, x, bc in zip(groups[1:], xc[1:], bcodes[1:]):
            np.add(rl, g.pair_rl(x, bc), out=rl)
        a = self.a_live
        if self.rules.below_k:
            wide = self.nsmall == 1  # the only class below k: any class of the block is a partner
            a = (
                self.a_small
                if not wide.any()
                else self.a_live
                if wide.all()
                else np.where(wide[:, None], self.a_live, self.a_small)
            )
        t = bsize + sx[:, None]
        np.multiply(t, rl, out=rl)
        np.subtract(a, rl, out=rl)
        rl[r, s] = np.inf
        return r, s, sx, xc, rl.argmin(axis=1)  # ties (equal computed costs): the earliest class


def _run_blocks(alive: np.ndarray, width: int, state: _State, rules: _Rules, bar: Any) -> int:
    """One round: the exact loop inside consecutive blocks of `alive` (global slots in order).

    Updates `state` (and the models' sensitive counts) in place and returns the number of
    merges. A class is *small* (not finished) while it has fewer than k rows or, with
    models, violates one of them.
    """
    if ONE_BLOCK_LOOP and len(block_layout(len(alive), width)) == 1:
        return _run_one_block(alive, state, rules, bar)
    for g in rules.groups:  # many blocks: the pair tables pay
        if g.lazy:
            g.build_tables()
    blocks = _Blocks(alive, width, state, rules)
    merges = step = 0
    keep = blocks.nsmall > 0
    while True:
        if not keep.all():  # finished blocks and blocks left with one class go back to the global state
            blocks.retire(keep, state)
        if len(blocks.nsmall) == 0:
            return merges
        if step % 16 == 0:
            blocks.pack()
        step += 1
        left = blocks.merge(state)
        bar.update(int(left.sum()))
        merges += len(left)
        # a block is done when no class is below k, or when its only class is (left over)
        keep = (blocks.nsmall > 0) & (blocks.nlive > 1)


def _run_one_block(alive: np.ndarray, state: _State, rules: _Rules, bar: Any) -> int:
    """:func:`_run_blocks` when `alive` makes one block (the exact loop): the same merges on 1-D arrays.

    The same steps and the same floats as :meth:`_Blocks.merge` with one block row: the class
    first below k (or the smallest), its partner at the least ``a - (size + sx) * R[LCA]``
    (ties: the earliest), the merged class at the earlier position; the privacy models are
    asked only when the merged class holds the floor (below it the answer is no). Dead
    positions are dropped (the order kept) when they are a quarter of the arrays.
    """
    line = _Line.start(alive, state, rules)
    walks = _Walks(rules.groups)
    merges = 0
    while line.nsmall > 0 and line.nlive > 1:
        walks.step(len(line.slot))
        line.drop_dead()
        s = line.first()
        j = line.partner(s, walks.tables)
        left = line.merge(s, j, state)
        bar.update(left)
        merges += 1
    line.write_back(state)
    return merges


class _Walks:
    """Which groups have pair tables in :func:`_run_one_block`, and the pairs walked so far.

    A lazy group (:attr:`_Group.lazy`) walks its pairs until ``LAZY_TABLES * attributes * pairs walked``
    reaches its codes squared, then builds its tables (:data:`LAZY_TABLES`).
    """

    def __init__(self, groups: list[_Group]) -> None:
        self.groups = groups
        self.tables = [g.rl is not None for g in groups]
        self.walked = 0

    def step(self, pairs: int) -> None:
        """Count a step's `pairs` (one per position) and build the tables now due."""
        if all(self.tables):
            return
        self.walked += pairs
        for i, g in enumerate(self.groups):
            if g.lazy and LAZY_TABLES * len(g.qids) * self.walked >= g.n**2:
                g.build_tables()
            self.tables[i] = g.rl is not None


@dataclass(slots=True)
class _Line:
    """The classes of a one-block round on 1-D arrays, position i the i-th slot of `alive`, for :func:`_run_one_block`.

    Attributes
    ----------
    rules
        The loop's fixed choices.
    slot
        Each position's global slot.
    size, rsum, codes, counts
        Its class's rows, R-sum, node code per group and sensitive counts per model attribute
        (empty without models): copies of the global state, written back at the end.
    live
        Whether the position still holds a class.
    small
        Whether its class is small (below k or, with models, violating one).
    a_live
        ``size * rsum``, +inf at dead positions: the cost of a partner is ``a - (size + sx) * R[LCA]``.
    a_small
        `a_live` restricted to small classes with ``partners="below_k"``, else `a_live` itself.
    size_small
        `size` restricted to small classes (the largest int elsewhere) with ``first="smallest"``, else `size` itself.
    fsize
        `size` as float64 for the partner costs: ``fsize + sx`` is exactly ``size + sx`` (sizes stay below 2**53),
        and a float product costs less than a mixed one.
    nsmall, nlive
        How many positions hold a small class, a class.
    """

    rules: _Rules
    slot: np.ndarray
    size: np.ndarray
    rsum: np.ndarray
    codes: list[np.ndarray]
    counts: dict[str, np.ndarray]
    live: np.ndarray
    small: np.ndarray
    a_live: np.ndarray
    a_small: np.ndarray
    size_small: np.ndarray
    fsize: np.ndarray
    nsmall: int
    nlive: int

    @classmethod
    def start(cls, alive: np.ndarray, state: _State, rules: _Rules) -> _Line:
        """The global state at the slots `alive` (in order), copied."""
        models = rules.models
        size = state.size[alive].astype(np.int64)
        rsum = state.rsum[alive].astype(np.float64)
        codes = [c[alive].astype(np.int64) for c in state.codes]
        counts = {a: v[alive].astype(np.int64) for a, v in models.values.items()} if models is not None else {}
        small = (size < rules.k) if models is None else ~models.ok(size, counts)
        a_live = size * rsum
        a_small = np.where(small, a_live, np.inf) if rules.below_k else a_live
        size_small = np.where(small, size, _BIG_INT) if rules.smallest else size
        live = np.ones(len(alive), dtype=bool)
        slot = alive.astype(np.int64, copy=True)
        fsize = size.astype(np.float64)
        return cls(
            rules,
            slot,
            size,
            rsum,
            codes,
            counts,
            live,
            small,
            a_live,
            a_small,
            size_small,
            fsize,
            int(small.sum()),
            len(slot),
        )

    def drop_dead(self) -> None:
        """Drop the dead positions, keeping the order, once they are a quarter of the arrays (of 64 or more)."""
        if 4 * self.nlive > 3 * len(self.slot) or len(self.slot) < 64:
            return
        keep = np.flatnonzero(self.live)
        self.slot, self.size, self.rsum, self.live, self.small, self.a_live, self.fsize = (
            v[keep] for v in (self.slot, self.size, self.rsum, self.live, self.small, self.a_live, self.fsize)
        )
        self.codes, self.counts = [bc[keep] for bc in self.codes], {a: v[keep] for a, v in self.counts.items()}
        self.a_small = self.a_small[keep] if self.rules.below_k else self.a_live
        self.size_small = self.size_small[keep] if self.rules.smallest else self.size

    def first(self) -> int:
        """The class to merge: the first small one, or with ``first="smallest"`` the smallest (ties: the earliest)."""
        return int(self.size_small.argmin()) if self.rules.smallest else int(self.small.argmax())

    def partner(self, s: int, tables: list[bool]) -> int:
        """The partner of the class at `s`: the least ``a - (size + sx) * R[LCA]`` (ties: the earliest)."""
        rl = None
        for g, bc, table in zip(self.rules.groups, self.codes, tables):
            x = int(bc[s])
            if table:
                part = g.rl[x * g.n : (x + 1) * g.n].take(bc)  # type: ignore[index]
            else:  # walked: per attribute without tables (lazy), or up one large hierarchy
                part = g.pair_rl(np.array([x], dtype=np.int64), bc[None, :])[0]
            rl = part if rl is None else np.add(rl, part, out=rl)
        assert rl is not None
        a = self.a_small if self.rules.below_k and self.nsmall != 1 else self.a_live
        np.multiply(self.fsize + float(self.size[s]), rl, out=rl)  # (size + sx) * R[LCA], the same floats
        np.subtract(a, rl, out=rl)
        rl[s] = np.inf
        return int(rl.argmin())  # ties (equal computed costs): the earliest class

    def merge(self, s: int, j: int, state: _State) -> int:
        """Merge the classes at `s` and `j` into the earlier position; how many classes stopped being small."""
        tgt, src = min(s, j), max(s, j)
        j_small = bool(self.small[j])
        new_size = int(self.size[s]) + int(self.size[j])
        new_r = 0.0  # 0 + R_1 + R_2 + ...: the same float64 sums as one-element arrays
        for g, bc in zip(self.rules.groups, self.codes):
            x = int(bc[s])
            if g.lca is not None:  # a table: the pair's LCA code as a plain int
                new = int(g.lca[x * g.n + int(bc[j])])
            else:
                new = int(g.pair_lca(np.array([x], dtype=np.int64), bc[j : j + 1])[0])
            bc[tgt] = new
            new_r += float(g.r[new])
        still = self._still_small(s, j, tgt, new_size)
        self._set_merged(tgt, src, new_size, new_r, still)
        state.owner[self.slot[src]] = self.slot[tgt]
        state.live[self.slot[src]] = False
        left = 1 + int(j_small) - int(still)
        self.nsmall -= left
        self.nlive -= 1
        return left

    def _still_small(self, s: int, j: int, tgt: int, new_size: int) -> bool:
        """Whether the merged class is small; its sensitive counts (the sums) written at `tgt`."""
        models = self.rules.models
        if models is None:
            return new_size < self.rules.k
        for v in self.counts.values():
            v[tgt] = v[s] + v[j]
        if new_size < models.constraints.floor:  # below the floor: no model is asked
            return True
        return not models.ok_one(new_size, {a: v[tgt] for a, v in self.counts.items()})

    def _set_merged(self, tgt: int, src: int, new_size: int, new_r: float, still: bool) -> None:
        """The merged class at `tgt` (its size, R-sum and partner costs); the position `src` dead."""
        self.size[tgt] = self.fsize[tgt] = new_size
        self.rsum[tgt] = new_r
        self.live[src] = self.small[src] = False
        self.small[tgt] = still
        self.a_live[src] = np.inf
        self.a_live[tgt] = new_size * new_r
        if self.rules.below_k:
            self.a_small[src] = np.inf
            self.a_small[tgt] = self.a_live[tgt] if still else np.inf
        if self.rules.smallest:
            self.size_small[src] = _BIG_INT
            self.size_small[tgt] = new_size if still else _BIG_INT

    def write_back(self, state: _State) -> None:
        """The live classes back into the global state at their slots."""
        state.write_back(
            self.rules.models, np.flatnonzero(self.live), self.slot, self.size, self.rsum, self.codes, self.counts
        )


def auto_block(block: int | str | None, n_classes: int, n_rows: int, k: int) -> int | None:
    """The block size of ``candidates`` (None: the exact loop); ``"auto"`` as the module docstring says.

    >>> auto_block("auto", 100, 100, 5), auto_block(64, 100, 100, 5), auto_block("auto", 40_000, 80_000, 100)
    (None, 64, 400)
    """
    if block != "auto":
        return None if block is None else int(block)
    # enough classes per block to hold about AUTO_ROWS_K * k rows, at least AUTO_BLOCK
    rows_per_class = float(n_rows) / max(n_classes, 1)
    return None if n_classes <= AUTO_EXACT else max(AUTO_BLOCK, int(np.ceil(AUTO_ROWS_K * k / rows_per_class)))


@dataclass
class GreedyLoop:
    """The state of the greedy loop over classes in class order (slot i), and its rounds.

    :func:`greedy_partition` runs every round here; :mod:`polars_anon.engines.planners.spark_greedy`
    runs the first round of each block in a Spark task (:meth:`start` on the block's
    classes, then :meth:`round` over them) and the later rounds on the driver over the
    classes left (:meth:`start` on those, then :meth:`run`).
    """

    state: _State
    rules: _Rules

    @classmethod
    def start(
        cls,
        groups: list[_Group],
        nodes: Mapping[str, np.ndarray],
        size: np.ndarray,
        k: int,
        first: str,
        partners: str,
        models: _Models | None = None,
    ) -> GreedyLoop:
        """Classes given by their node ids per qid and sizes, in class order, none merged yet."""
        c = len(size)
        codes = [g.encode([np.asarray(nodes[q], dtype=np.int64) for q in g.qids]) for g in groups]
        rsum = np.zeros(c)
        for g, cd in zip(groups, codes):
            rsum += g.r[cd]
        size = np.asarray(size, dtype=np.int64).copy()
        state = _State(codes, size, rsum, np.arange(c, dtype=np.int64), np.ones(c, dtype=bool))
        return cls(state, _Rules(groups, k, first == "smallest", partners == "below_k", models))

    @property
    def size(self) -> np.ndarray:
        """Each slot's rows (its class's while the slot is live)."""
        return self.state.size

    @property
    def live(self) -> np.ndarray:
        """Whether each slot still holds a class."""
        return self.state.live

    def n_small(self, alive: np.ndarray | None = None) -> int:
        """Classes among `alive` (default all) below k or violating a model."""
        size, models = self.state.size, self.rules.models
        alive = np.arange(len(size)) if alive is None else alive
        if models is None:
            return int((size[alive] < self.rules.k).sum())
        return models.n_small(size, alive)

    def round(self, alive: np.ndarray, width: int, bar: Any) -> int:
        """One round over the slots `alive` (in order) cut into blocks of `width` (:func:`block_layout`); its merges."""
        return _run_blocks(alive, width, self.state, self.rules, bar)

    def run(self, block: int | None, bar: Any, rounds: int = 0) -> tuple[int, int]:
        """Rounds until no live class is below k (or one is left); returns (merges, rounds) counting from `rounds`."""
        merges = 0
        alive = np.flatnonzero(self.live).astype(np.int64)
        n_small = self.n_small(alive)
        while n_small and len(alive) > 1:
            width = len(alive) if block is None else min(int(block), len(alive))
            merges += self.round(alive, width, bar)
            rounds += 1
            alive = alive[self.live[alive]]
            n_small = self.n_small(alive)
        return merges, rounds

    def roots(self) -> np.ndarray:
        """The slot each slot's class ended in (merge chains resolved by pointer jumping)."""
        owner = self.state.owner
        while True:
            nxt = owner[owner]
            if np.array_equal(nxt, owner):
                return owner
            owner = nxt

    def nodes(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        """The node ids (per qid) of the classes at `slots` (their LCA tuples)."""
        out = {}
        for g, cd in zip(self.rules.groups, self.state.codes):
            for q, ids in zip(g.qids, g.decode(cd[slots])):
                out[q] = ids.astype(np.int64)
        return out


def greedy_partition(
    aggregates: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    *,
    metric: str | None = None,
    weights: Mapping[str, Any] | None = None,
    first: str = "first",
    partners: str = "below_k",
    candidates: int | str | None = "auto",
    progress: bool | None = None,
    constraints: Constraints | None = None,
    cost_tables: list[Any] | None = None,
) -> GreedyResult:
    """Greedy k-anonymous partition of class aggregates (see the module docstring).

    Parameters
    ----------
    aggregates
        One row per distinct quasi-identifier tuple: the qid columns (String,
        leaves or nodes of their hierarchies) and ``size``.
    hierarchies
        qid -> :class:`~polars_anon.Hierarchy` (its keys are the qids, in order).
    k
        Minimum class size (at most the total size).
    metric, weights
        The cost: a name from ``EDGE_METRICS`` (default ``"nllm"``) or user
        edge weights (qid -> ω(n, parent(n)) per node).
    first, partners, candidates
        See the module docstring.
    constraints
        Privacy models besides k (:class:`~polars_anon.privacy.constraints.Constraints`
        over the same aggregates): a class is finished only when it satisfies every
        model (and holds the table models' floor); the merge cost is unchanged.
    progress
        Show the bar (True), hide it (False); None: :func:`polars_anon.progress`, the
        environment, else only on a terminal (see :mod:`polars_anon._progress`).
    cost_tables
        :func:`cost_groups` of these hierarchies and of the R of `metric` / `weights`
        (:func:`root_weights`), built once by a caller that runs the loop again and again
        on the same hierarchies and costs (topdown's repair); None: built here.

    Returns
    -------
    GreedyResult

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> race = Hierarchy.from_dict({"mammals": {"felidae": ["cat", "lion"], "canine": ["dog", "wolf"]}})
    >>> agg = pl.DataFrame({"race": ["cat", "dog", "lion", "wolf"], "size": [1, 1, 1, 1]})
    >>> res = greedy_partition(agg, {"race": race}, 2)
    >>> res.class_id.tolist(), [race.label_of(i) for i in res.nodes["race"]]
    ([0, 1, 0, 1], ['felidae', 'canine', 'felidae', 'canine'])
    """
    start = time.perf_counter()
    first, partners, block = _check_options(first, partners, candidates)
    qids = list(hierarchies)
    roots = _root_weights(hierarchies, metric, weights)
    size0 = aggregates["size"].to_numpy().astype(np.int64)
    c = len(size0)
    check_k(k, int(size0.sum()) or None, who="greedy")  # an empty table: k's type alone (the road refuses it)
    nodes0 = {q: h.ids_of(aggregates[q]) for q, h in hierarchies.items()}
    order = _order(hierarchies, nodes0, roots, size0)
    block = auto_block(block, c, int(size0.sum()), k)
    groups = _groups(hierarchies, roots, c) if cost_tables is None else cost_tables
    models = _Models(constraints, order) if constraints is not None and not constraints.k_only else None
    # global state, in class order (slot i = aggregate row order[i])
    loop = GreedyLoop.start(groups, {q: nodes0[q][order] for q in qids}, size0[order], k, first, partners, models)
    with progress_bar(
        total=loop.n_small(), desc=f"greedy k={k}: classes below k", unit="class", enabled=progress
    ) as bar:
        merges, rounds = loop.run(block, bar)
    root_of_row = np.empty(c, dtype=np.int64)
    root_of_row[order] = loop.roots()  # merge chains resolved (pointer jumping)
    class_id, n_classes = _number_classes(root_of_row)
    published = loop.nodes(root_of_row)
    return GreedyResult(
        class_id=class_id,
        nodes={q: published[q] for q in qids},
        n_classes=n_classes,
        merges=merges,
        rounds=rounds,
        block=block,
        seconds=time.perf_counter() - start,
    )


def _number_classes(root_of_row: np.ndarray) -> tuple[np.ndarray, int]:
    """Class ids of the aggregate rows from their final slots: classes numbered by their first row; and their count.

    >>> _number_classes(np.array([7, 3, 7, 3, 5]))
    (array([0, 1, 0, 1, 2]), 3)
    """
    uniq, first_row, dense = np.unique(root_of_row, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first_row, kind="stable")] = np.arange(len(uniq))
    return rank[dense.ravel()], len(uniq)


def _check_options(first: object, partners: object, candidates: object) -> tuple[str, str, int | str | None]:
    if first not in ("first", "smallest"):
        raise InvalidParameterError(
            f"greedy: first must be 'first' (paper 001) or 'smallest' (paper 000), got {first!r}"
        )
    if partners not in ("below_k", "all"):
        raise InvalidParameterError(
            f"greedy: partners must be 'below_k' (paper 001) or 'all' (paper 000), got {partners!r}"
        )
    bad_int = not is_integer(candidates) or candidates < 2
    if candidates is not None and candidates not in ("auto", "exact") and bad_int:
        raise InvalidParameterError(
            "greedy: candidates must be None or 'exact' (exact loop), 'auto' or an integer block size >= 2, "
            f"got {candidates!r}"
        )
    return str(first), str(partners), None if candidates == "exact" else candidates  # type: ignore[return-value]


@dataclass(frozen=True)
class GreedyOptions:
    """Options of ``method="greedy"`` (see the module docstring); the cost is ``metric``."""

    first: Literal["first", "smallest"] = field(
        default="first", metadata={"expects": "'first' (paper 001) or 'smallest' (paper 000)"}
    )
    partners: Literal["below_k", "all"] = field(
        default="below_k", metadata={"expects": "'below_k' (paper 001) or 'all' (paper 000)"}
    )
    weights: Mapping[str, Any] | None = field(
        default=None, metadata={"expects": "a mapping qid -> edge weights per node"}
    )
    candidates: int | Literal["auto", "exact"] | None = field(
        default="auto", metadata={"expects": "None or 'exact' (exact loop), 'auto' or an integer block size >= 2"}
    )


@register_method("greedy", GreedyOptions, metrics=EDGE_METRICS, default_metric="nllm")
def run(task: Task, options: GreedyOptions) -> Plan:
    """Greedy k-anonymization (see the module docstring); publishes every class as its LCA tuple."""
    qids = list(task.qids)
    hierarchies = {q: task.hierarchies[q] for q in qids}
    agg = task.aggregates
    res = greedy_partition(
        agg,
        hierarchies,
        task.k,
        metric=task.metric,
        weights=options.weights,
        first=options.first,
        partners=options.partners,
        candidates=options.candidates,
        constraints=task.constraints,
    )
    details = {
        "metric": None if options.weights is not None else (task.metric or "nllm"),  # the effective cost
        "weights": "user" if options.weights is not None else None,
        "first": options.first,
        "partners": options.partners,
        "candidates": options.candidates,
        "block": res.block,
        "rounds": res.rounds,
        "merges": res.merges,
        "classes_before": agg.height,
        "classes_below_k_before": int((agg["size"] < task.k).sum()),
        "classes_after": res.n_classes,
    }
    return Plan(TupleMap.from_nodes(agg, hierarchies, res.nodes), details)


root_weights = _root_weights
"""R per node for every qid (public for the Spark planner, :mod:`polars_anon.engines.planners.spark_greedy`)."""
cost_groups = _groups
"""The fused cost tables of the qids (public for the Spark planner)."""
__all__ += ["cost_groups", "root_weights"]
