"""Edge weights of the hierarchy cost model [paper 001 §3-4].

Each of the seven metrics Distortion, NCP, Total, LLM, NLLM, WLLM and WNLLM is a
weight ω(n, parent(n)) on every edge of every quasi-identifier's hierarchy. The
cost of publishing a leaf x as its ancestor v is the path weight
w(x -> v) = R[x] - R[v], where R is the cumulative weight up to the root
(:meth:`Hierarchy.root_weights`); the merge cost of paper 001 §3 is
MC(C1, C2) = sum_i Cost_i(x_i, y_i)|C1| + Cost_i(y_i, x_i)|C2| with
Cost(n, m) = w(n -> LCA(n, m)).

Reading taken where the paper is ambiguous: the metric formulas of §4 use nl(v)
(1 for a leaf), while the edge weights sum to nl(v) - 1. We follow the edge
weights, so every metric is 0 on an ungeneralized table; e.g. NCP of a cell is
(nl(v) - 1) / nl(G) and LLM is (nl(v) - 1) h_max / h_i.

Hierarchies of height 1 (a single node) carry no cost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy

__all__ = ["EDGE_METRICS", "cost_matrix", "edge_weights", "merge_cost", "root_weights", "wid"]

EDGE_METRICS = ("distortion", "ncp", "total", "llm", "nllm", "wllm", "wnllm")


def wid(hierarchies: Mapping[str, Hierarchy]) -> dict[str, float]:
    """QID weights wid(Q_i) = 1 - (h_i - 1)^m / sum_j (h_j - 1)^m; 1 for a single QID [paper 001 §4].

    >>> from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
    >>> two = Hierarchy.suppression(["F", "M"])
    >>> three = Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})
    >>> {q: round(w, 6) for q, w in wid({"g": two, "r": three}).items()}
    {'g': 0.8, 'r': 0.2}
    """
    hierarchies = check_hierarchies(hierarchies)
    m = len(hierarchies)
    if m == 1:
        return {q: 1.0 for q in hierarchies}
    powers = {q: float(h.height - 1) ** m for q, h in hierarchies.items()}
    total = sum(powers.values())
    return {q: (1.0 - p / total) if total else 1.0 for q, p in powers.items()}


def edge_weights(metric: str, hierarchies: Mapping[str, Hierarchy]) -> dict[str, np.ndarray]:
    """ω(n, parent(n)) per node of every hierarchy (0 at the root) for one of :data:`EDGE_METRICS`.

    >>> from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
    >>> h = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e"], "f": None}})
    >>> [round(x, 4) for x in edge_weights("ncp", {"q": h})["q"].tolist()]  # nodes *, A, a, b, c, B, d, e, f
    [0.0, 0.5, 0.3333, 0.3333, 0.3333, 0.6667, 0.1667, 0.1667, 0.8333]
    """
    if metric not in EDGE_METRICS:
        raise InvalidParameterError(f"metric must be one of {list(EDGE_METRICS)}, got {metric!r}")
    hierarchies = check_hierarchies(hierarchies)
    h_max = max(h.height for h in hierarchies.values())
    wids = wid(hierarchies)
    out: dict[str, np.ndarray] = {}
    for q, h in hierarchies.items():
        w = np.zeros(h.n_nodes, dtype=np.float64)
        child = np.arange(1, h.n_nodes)
        parent = h.parent[1:]
        if h.height > 1 and len(child):
            gained = (h.leaves[parent] - h.leaves[child]).astype(np.float64)
            if metric == "distortion":
                hi = h.height
                c = np.zeros(hi)  # c[j] = c_{j,j-1} = 1 / (h_i - j), j = 1..h_i-1
                c[1:] = 1.0 / (hi - np.arange(1, hi))
                cum = np.cumsum(c)  # cum[l] = sum_{j<=l} c_j
                w[child] = (cum[h.level[parent]] - cum[h.level[child]]) / cum[hi - 1] * wids[q]
            elif metric == "ncp":
                w[child] = gained / h.n_leaves
            elif metric == "total":
                w[child] = (h.level[parent] - h.level[child]) / (h.height - 1)
            elif metric == "llm":
                w[child] = gained * h_max / h.height
            elif metric == "nllm":
                w[child] = gained / h.n_leaves * h_max / h.height
            elif metric == "wllm":
                w[child] = gained * wids[q]
            else:  # wnllm
                w[child] = gained / h.n_leaves * wids[q]
        out[q] = w
    return out


def root_weights(metric: str | Mapping[str, np.ndarray], hierarchies: Mapping[str, Hierarchy]) -> dict[str, np.ndarray]:
    """Cumulative weight R per node up to the root, so w(n -> m) = R[n] - R[m].

    `metric` is a name from :data:`EDGE_METRICS` or user-given edge weights
    (qid -> array of ω(n, parent(n)) per node).
    """
    hierarchies = check_hierarchies(hierarchies)
    if isinstance(metric, str):
        weights = edge_weights(metric, hierarchies)
    else:
        if not isinstance(metric, Mapping):
            raise InvalidParameterError(
                f"metric must be one of {list(EDGE_METRICS)} or a mapping qid -> edge weights, got {metric!r}"
            )
        weights = metric
        missing = [q for q in hierarchies if q not in weights]
        if missing:
            raise InvalidParameterError(f"metric gives no edge weights for qids {missing}; it has {list(weights)}")
    return {q: h.root_weights(np.asarray(weights[q], dtype=np.float64)) for q, h in hierarchies.items()}


def cost_matrix(
    h: Hierarchy, weights: np.ndarray | Callable[[Hierarchy], np.ndarray], max_nodes: int = 8192
) -> np.ndarray:
    """Cost_Q(n, m) = w(n -> LCA(n, m)) for every pair of nodes of `h` [paper 001 §3].

    `weights` gives ω(n, parent(n)) per node (depth-first node order, the root's
    entry ignored): an array, or any edge-weight function ``h -> array`` (for a
    metric of :data:`EDGE_METRICS`, ``lambda h: edge_weights("ncp", {"q": h})["q"]``).
    Row n, column m is the cost of generalizing n to the smallest node that also
    covers m; 0 when n is already an ancestor of m. Refused above `max_nodes`
    nodes (the matrix grows with the square): use :meth:`Hierarchy.lca` and
    :func:`root_weights` on id arrays instead.

    >>> from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
    >>> fig2 = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e"], "f": None}})
    >>> c = cost_matrix(fig2, lambda h: edge_weights("ncp", {"Q": h})["Q"])
    >>> a, cc, star = fig2.id_of("a"), fig2.id_of("c"), fig2.id_of("*")
    >>> [round(float(v), 4) for v in (c[a, cc], c[a, star], c[star, a])]  # w(a -> A) = 2/6, w(a -> *) = 5/6, 0
    [0.3333, 0.8333, 0.0]
    """
    check_hierarchy(h, "h")
    w = weights(h) if callable(weights) else weights
    return h.cost_matrix(np.asarray(w, dtype=np.float64), max_nodes)


def merge_cost(
    costs: Mapping[str, np.ndarray],
    x: Mapping[str, np.ndarray | int],
    y: Mapping[str, np.ndarray | int],
    size_x: np.ndarray | int,
    size_y: np.ndarray | int,
) -> np.ndarray | float:
    """MC(C1, C2) = sum_i Cost_i(x_i, y_i) |C1| + Cost_i(y_i, x_i) |C2| [paper 001 §3].

    `costs` maps each quasi-identifier to its :func:`cost_matrix`; `x` and `y`
    map them to the node ids of the two classes' representatives (ints, or
    arrays that broadcast, to price many candidate merges at once); `size_x` and
    `size_y` are the class sizes. This is the cost of generalizing both classes
    to their lowest common ancestors, which the greedy algorithm minimizes.

    >>> from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
    >>> fig2 = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e"], "f": None}})
    >>> c = {"Q": cost_matrix(fig2, lambda h: edge_weights("ncp", {"Q": h})["Q"])}
    >>> a, cc, d = fig2.id_of("a"), fig2.id_of("c"), fig2.id_of("d")
    >>> round(float(merge_cost(c, {"Q": a}, {"Q": cc}, 2, 1)), 6)  # 2 * 2/6 + 1 * 2/6
    1.0
    >>> # with d: 2 * 5/6 + 5/6
    >>> np.round(merge_cost(c, {"Q": a}, {"Q": np.array([cc, d])}, 2, np.array([1, 1])), 6).tolist()
    [1.0, 2.5]
    """
    missing = [q for q in costs if q not in x or q not in y]
    if missing:
        raise InvalidParameterError(f"merge_cost: x and y must give a node for every qid of costs; missing {missing}")
    total: np.ndarray | float = 0.0
    for q, c in costs.items():
        xi, yi = np.asarray(x[q]), np.asarray(y[q])
        total = total + c[xi, yi] * size_x + c[yi, xi] * size_y
    return total
