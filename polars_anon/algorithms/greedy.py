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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from polars_anon._progress import bar as progress_bar
from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.weights import EDGE_METRICS, edge_weights
from polars_anon.privacy.base import ClassView
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import TupleMap

__all__ = ["AUTO_BLOCK", "AUTO_EXACT", "AUTO_ROWS_K", "GreedyOptions", "GreedyResult", "greedy_partition", "merge_cost"]

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


# ----------------------------------------------------------------------------- cost model
def _root_weights(
    hierarchies: Mapping[str, Hierarchy], metric: str | None, weights: Mapping[str, Any] | None
) -> dict[str, np.ndarray]:
    """R per node for every qid, from a metric name or user edge weights."""
    if weights is not None:
        if metric is not None:
            raise InvalidParameterError(
                f"greedy: give either metric ({metric!r}) or weights, not both; weights replace the metric's edge weights"
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
                    f"greedy: weights[{q!r}] must be finite and >= 0, got {w[~(np.isfinite(w) & (w >= 0))][:5].tolist()}"
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

    def __post_init__(self) -> None:
        self.n = int(np.prod(self.sizes))  # codes per group (a plain int: read at every step)

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
        assert self.h is not None
        return self.r[self.h.lca(np.broadcast_to(x[:, None], y.shape), y)]

    def pair_lca(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self.lca is not None:
            return self.lca.take(x * self.n + y)
        assert self.h is not None
        return self.h.lca(x, y)


def _groups(hierarchies: Mapping[str, Hierarchy], roots: Mapping[str, np.ndarray]) -> list[_Group]:
    """Fuse small attributes (first fit, largest first) so each step does fewer gathers."""
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
        r = np.zeros(1)
        rl = np.zeros((1, 1))
        lca = np.zeros((1, 1), dtype=np.int64)
        for q, h in zip(b, hs):
            n = h.n_nodes
            lca_q = h.lca_matrix(max_nodes=TABLE_NODES)
            rl_q = roots[q][lca_q]
            m = r.size
            r = (r[:, None] + roots[q][None, :]).reshape(m * n)
            rl = (rl[:, None, :, None] + rl_q[None, :, None, :]).reshape(m * n, m * n)
            lca = (lca[:, None, :, None] * n + lca_q[None, :, None, :]).reshape(m * n, m * n)
        code_dtype = np.int32 if r.size < 2**31 else np.int64
        out.append(_Group(b, [h.n_nodes for h in hs], r, rl.ravel(), lca.astype(code_dtype).ravel(), None))
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


def _order(
    hierarchies: Mapping[str, Hierarchy],
    nodes: dict[str, np.ndarray],
    roots: Mapping[str, np.ndarray],
    size: np.ndarray,
) -> np.ndarray:
    """Class order: a lexicographic order on hierarchy ancestors, costliest distinctions first.

    Each (attribute, level L) is a key: the value's ancestor published at level L.
    Keys are sorted by the mean cost of generalizing from level L to L + 1
    (weighted by class size), most expensive first; an attribute's coarser keys
    always come before its finer ones. Classes close in this order share their
    expensive ancestors, so neighbours are cheap partners.
    """
    total = max(float(size.sum()), 1.0)
    keys: list[tuple[float, int, int, np.ndarray]] = []
    for i, (q, h) in enumerate(hierarchies.items()):
        ids = nodes[q]
        upper = h.generalize_ids(h.height - 1)[ids]
        cost_above = 0.0
        for lv in range(h.height - 2, -1, -1):  # coarse to fine
            here = h.generalize_ids(lv)[ids]
            step = float((roots[q][here] - roots[q][upper]) @ size) / total
            cost_above = step if lv == h.height - 2 else min(step, cost_above)
            keys.append((cost_above, i, lv, here))
            upper = here
    keys.sort(key=lambda t: (-t[0], t[1], -t[2]))
    if not keys:
        return np.arange(len(size), dtype=np.int64)
    # np.lexsort: the last key is the primary one
    return np.lexsort([t[3] for t in reversed(keys)]).astype(np.int64)


def _run_blocks(
    alive: np.ndarray,
    width: int,
    groups: list[_Group],
    codes: list[np.ndarray],
    size: np.ndarray,
    rsum: np.ndarray,
    owner: np.ndarray,
    live: np.ndarray,
    k: int,
    smallest: bool,
    below_k: bool,
    bar: Any,
    models: _Models | None = None,
) -> int:
    """One round: the exact loop inside consecutive blocks of `alive` (global slots in order).

    Updates the global state (codes, size, rsum, owner, live, and the models'
    sensitive counts) in place and returns the number of merges. A class is
    *small* (not finished) while it has fewer than k rows or, with `models`,
    violates one of them.
    """
    n = len(alive)
    nb = max(1, n // width)  # blocks of width to 2 * width - 1 classes: each has a partner
    base, extra = divmod(n, nb)
    counts = np.full(nb, base, dtype=np.int64)
    counts[:extra] += 1
    w = int(counts.max())
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    row = np.repeat(np.arange(nb, dtype=np.int64), counts)
    col = np.arange(n, dtype=np.int64) - starts[row]
    slot = np.full((nb, w), -1, dtype=np.int64)
    slot[row, col] = alive
    blive = np.zeros((nb, w), dtype=bool)
    blive[row, col] = True
    bsize = np.zeros((nb, w), dtype=np.int64)
    bsize[row, col] = size[alive]
    brsum = np.zeros((nb, w), dtype=np.float64)
    brsum[row, col] = rsum[alive]
    bcodes = []
    for c in codes:
        bc = np.zeros((nb, w), dtype=np.int64)
        bc[row, col] = c[alive]
        bcodes.append(bc)
    bsv = models.block(alive, nb, w, row, col) if models is not None else {}
    bsmall = blive & ((bsize < k) if models is None else ~models.ok(bsize, bsv))
    nsmall = bsmall.sum(axis=1)
    nlive = counts.copy()
    # size * R-sum of each class, +inf where the class is no partner (dead / not below k):
    # the cost of a partner is then const + a - (sx + size) * R[LCA] and masking is free
    a_live = np.where(blive, bsize * brsum, np.inf)
    a_small = np.where(bsmall, a_live, np.inf) if below_k else a_live
    size_small = np.where(bsmall, bsize, np.iinfo(np.int64).max) if smallest else bsize
    arrays = ["slot", "blive", "bsmall", "bsize", "brsum", "a_live", "a_small", "size_small"]
    state = {"slot": slot, "blive": blive, "bsmall": bsmall, "bsize": bsize, "brsum": brsum}
    state |= {"a_live": a_live, "a_small": a_small, "size_small": size_small}

    def write_back(rows: np.ndarray) -> None:
        m = state["blive"][rows]
        s = state["slot"][rows][m]
        size[s] = state["bsize"][rows][m]
        rsum[s] = state["brsum"][rows][m]
        for c, bc in zip(codes, bcodes):
            c[s] = bc[rows][m]
        if models is not None:
            models.write_back(s, {a: v[rows][m] for a, v in bsv.items()})

    merges = 0
    step = 0
    keep = nsmall > 0
    while True:
        if not keep.all():  # drop finished blocks and blocks left with one class (write their state back first)
            write_back(np.flatnonzero(~keep))
            state = {name: state[name][keep] for name in arrays}
            nsmall, nlive = nsmall[keep], nlive[keep]
            bcodes = [bc[keep] for bc in bcodes]
            bsv = {a: v[keep] for a, v in bsv.items()}
        nr = len(nsmall)
        if nr == 0:
            break
        if step % 16 == 0 and nr * w > 4096:  # pack live slots to the left, keeping their order
            w_new = int(nlive.max())
            if w_new < 0.75 * w:
                perm = np.argsort(~state["blive"], axis=1, kind="stable")[:, :w_new]
                state = {name: np.take_along_axis(state[name], perm, 1) for name in arrays}
                bcodes = [np.take_along_axis(bc, perm, 1) for bc in bcodes]
                bsv = {a: np.take_along_axis(v, perm[:, :, None], 1) for a, v in bsv.items()}
                w = w_new
        step += 1
        slot, blive, bsmall, bsize, brsum = (state[name] for name in arrays[:5])
        a_live, a_small, size_small = state["a_live"], state["a_small"], state["size_small"]
        r = np.arange(nr)
        s = size_small.argmin(axis=1) if smallest else bsmall.argmax(axis=1)
        sx = bsize[r, s]
        xc = [bc[r, s] for bc in bcodes]
        rl = groups[0].pair_rl(xc[0], bcodes[0])
        for g, x, bc in zip(groups[1:], xc[1:], bcodes[1:]):
            np.add(rl, g.pair_rl(x, bc), out=rl)
        if below_k:
            wide = nsmall == 1  # the only class below k: any class of the block is a partner
            if not wide.any():
                a = a_small
            elif wide.all():
                a = a_live
            else:
                a = np.where(wide[:, None], a_live, a_small)
        else:
            a = a_live
        t = bsize + sx[:, None]
        np.multiply(t, rl, out=rl)
        np.subtract(a, rl, out=rl)
        rl[r, s] = np.inf
        j = rl.argmin(axis=1)  # ties (equal computed costs): the earliest class
        # merge: the merged class takes the earlier position of the two
        tgt, src = np.minimum(s, j), np.maximum(s, j)
        sy = bsize[r, j]
        j_small = bsmall[r, j].copy()
        new_size = sx + sy
        new_r = np.zeros(nr)
        for g, x, bc in zip(groups, xc, bcodes):
            new = g.pair_lca(x, bc[r, j])
            bc[r, tgt] = new
            new_r += g.r[new]
        if models is None:
            still = new_size < k
        else:
            merged = {a: v[r, s] + v[r, j] for a, v in bsv.items()}
            for a, v in bsv.items():
                v[r, tgt] = merged[a]
            still = ~models.ok(new_size, merged)
        bsize[r, tgt] = new_size
        brsum[r, tgt] = new_r
        blive[r, src] = False
        bsmall[r, src] = False
        bsmall[r, tgt] = still
        a_live[r, src] = np.inf
        a_live[r, tgt] = new_size * new_r
        if below_k:
            a_small[r, src] = np.inf
            a_small[r, tgt] = np.where(still, new_size * new_r, np.inf)
        if smallest:
            size_small[r, src] = np.iinfo(np.int64).max
            size_small[r, tgt] = np.where(still, new_size, np.iinfo(np.int64).max)
        owner[slot[r, src]] = slot[r, tgt]
        live[slot[r, src]] = False
        left = 1 + j_small.astype(np.int64) - still
        nsmall = nsmall - left
        nlive = nlive - 1
        bar.update(int(left.sum()))
        merges += nr
        # a block is done when no class is below k, or when its only class is (left over)
        keep = (nsmall > 0) & (nlive > 1)
    return merges


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
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= max(int(size0.sum()), 1):
        raise InvalidParameterError(
            f"greedy: k must be an integer from 1 to the number of rows ({int(size0.sum())}), got {k!r}"
        )
    nodes0 = {q: h.ids_of(aggregates[q]) for q, h in hierarchies.items()}
    order = _order(hierarchies, nodes0, roots, size0)
    if block == "auto":
        # enough classes per block to hold about AUTO_ROWS_K * k rows, at least AUTO_BLOCK
        rows_per_class = float(size0.sum()) / max(c, 1)
        block = None if c <= AUTO_EXACT else max(AUTO_BLOCK, int(np.ceil(AUTO_ROWS_K * k / rows_per_class)))
    groups = _groups(hierarchies, roots)
    # global state, in class order (slot i = aggregate row order[i])
    codes = [g.encode([nodes0[q][order] for q in g.qids]) for g in groups]
    size = size0[order].copy()
    rsum = np.zeros(c)
    for g, cd in zip(groups, codes):
        rsum += g.r[cd]
    owner = np.arange(c, dtype=np.int64)
    live = np.ones(c, dtype=bool)
    merges = rounds = 0
    models = _Models(constraints, order) if constraints is not None and not constraints.k_only else None
    n_small = int((size < k).sum()) if models is None else models.n_small(size, np.arange(c))
    with progress_bar(total=n_small, desc=f"greedy k={k}: classes below k", unit="class", enabled=progress) as bar:
        alive = np.arange(c, dtype=np.int64)
        while n_small and len(alive) > 1:
            width = len(alive) if block is None else min(int(block), len(alive))
            merges += _run_blocks(
                alive, width, groups, codes, size, rsum, owner, live, k, first == "smallest", partners == "below_k", bar, models
            )
            rounds += 1
            alive = alive[live[alive]]
            n_small = int((size[alive] < k).sum()) if models is None else models.n_small(size, alive)
    # resolve merge chains (pointer jumping), then number classes by their first aggregate row
    while True:
        nxt = owner[owner]
        if np.array_equal(nxt, owner):
            break
        owner = nxt
    root_of_row = np.empty(c, dtype=np.int64)
    root_of_row[order] = owner
    uniq, first_row, dense = np.unique(root_of_row, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first_row, kind="stable")] = np.arange(len(uniq))
    class_id = rank[dense.ravel()]
    published = {}
    for g, cd in zip(groups, codes):
        for q, ids in zip(g.qids, g.decode(cd[root_of_row])):
            published[q] = ids.astype(np.int64)
    return GreedyResult(
        class_id=class_id,
        nodes={q: published[q] for q in qids},
        n_classes=len(uniq),
        merges=merges,
        rounds=rounds,
        block=None if block is None else int(block),
        seconds=time.perf_counter() - start,
    )


def _check_options(first: object, partners: object, candidates: object) -> tuple[str, str, int | str | None]:
    if first not in ("first", "smallest"):
        raise InvalidParameterError(
            f"greedy: first must be 'first' (paper 001) or 'smallest' (paper 000), got {first!r}"
        )
    if partners not in ("below_k", "all"):
        raise InvalidParameterError(
            f"greedy: partners must be 'below_k' (paper 001) or 'all' (paper 000), got {partners!r}"
        )
    bad_int = isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)) or candidates < 2
    if candidates is not None and candidates not in ("auto", "exact") and bad_int:
        raise InvalidParameterError(
            "greedy: candidates must be None or 'exact' (exact loop), 'auto' or an integer block size >= 2, "
            f"got {candidates!r}"
        )
    return str(first), str(partners), None if candidates == "exact" else candidates  # type: ignore[return-value]


@dataclass(frozen=True)
class GreedyOptions:
    """Options of ``method="greedy"`` (see the module docstring); the cost is ``metric``."""

    first: Literal["first", "smallest"] = field(default="first", metadata={"expects": "'first' (paper 001) or 'smallest' (paper 000)"})
    partners: Literal["below_k", "all"] = field(default="below_k", metadata={"expects": "'below_k' (paper 001) or 'all' (paper 000)"})
    weights: Mapping[str, Any] | None = field(default=None, metadata={"expects": "a mapping qid -> edge weights per node"})
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
        agg, hierarchies, task.k, metric=task.metric, weights=options.weights,
        first=options.first, partners=options.partners, candidates=options.candidates, constraints=task.constraints,
    )  # fmt: skip
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
        "loop_seconds": round(res.seconds, 3),
    }
    return Plan(TupleMap.from_nodes(agg, hierarchies, res.nodes), details)
