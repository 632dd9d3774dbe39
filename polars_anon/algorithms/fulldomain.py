"""Optimal full-domain generalization: one level per quasi-identifier.

The lattice of level vectors is searched for the k-anonymous vector of least
information loss, allowing at most ``max_suppressed`` rows in classes smaller than
k (those rows are then removed and counted). Each vector is evaluated by one count
over the class aggregates (one row per distinct tuple), never over the rows.

Loss (the default, and the only one until the metrics registry lets users choose):
the average cell NCP, ``(nl(published) - 1) / (nl(root) - 1)`` averaged over every
quasi-identifier cell of the input, a suppressed row counting 1 per cell. It is
0 on the untouched table and 1 when every cell is the root.

Search: vectors are visited by increasing lower bound of the loss (the loss
without suppression, which is separable per attribute and exact when nothing is
suppressed). Monotonicity prunes: every generalization of a k-anonymous vector is
k-anonymous, every specialization of a failing one fails (rows in classes smaller
than k can only decrease when classes merge). The search stops as soon as the
next lower bound is not below the best loss found, so the result is optimal.
At equal loss the vector that suppresses fewer rows wins (so a table is
never suppressed whole when generalizing everything costs the same), then the
smaller level sum, then the lexicographically smaller vector.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from tqdm.auto import tqdm

from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.generalize import generalize

__all__ = ["search"]

MAX_LATTICE = 5_000_000


def _ncp_costs(h) -> np.ndarray:
    """(nl(v) - 1) / (nl(root) - 1) per node; 0 for a one-leaf hierarchy."""
    if h.n_leaves <= 1:
        return np.zeros(h.n_nodes)
    return (h.leaves - 1) / (h.n_leaves - 1)


def search(task: Task, max_suppressed: int = 0) -> tuple[dict[str, int], int, float, int]:
    """Find the optimal level vector.

    Returns ``(levels, suppressed_rows, loss, evaluated_vectors)``.
    """
    agg = task.aggregates
    qids = list(task.qids)
    hs = [task.hierarchies[q] for q in qids]
    size = agg["size"].to_numpy().astype(np.int64)
    n_rows, m = int(size.sum()), len(qids)
    heights = [h.height for h in hs]
    n_vectors = int(np.prod(heights, dtype=np.float64))
    if n_vectors > MAX_LATTICE:
        raise InfeasibleError(
            f"the full-domain lattice has {n_vectors} level vectors (heights {dict(zip(qids, heights))}), "
            f"more than {MAX_LATTICE}; use method='greedy', 'mondrian' or 'datafly', or fewer quasi-identifiers"
        )
    # per attribute and level: dense codes of the published node, and its cost
    codes: list[list[np.ndarray]] = []
    n_codes: list[list[int]] = []
    level_cost = np.zeros((m, max(heights)))
    row_cost: list[list[np.ndarray]] = []
    for j, (q, h) in enumerate(zip(qids, hs)):
        ids = np.array([h.id_of(v) for v in agg[q].to_list()], dtype=np.int64)
        cost = _ncp_costs(h)
        cj, nj, rj = [], [], []
        for lv in range(h.height):
            published = h.generalize_ids(lv)[ids]
            uniq, dense = np.unique(published, return_inverse=True)
            cj.append(dense.astype(np.int64))
            nj.append(len(uniq))
            rj.append(size * cost[published])  # row-weighted cell costs; summed without BLAS
            level_cost[j, lv] = float(rj[-1].sum())
        codes.append(cj)
        n_codes.append(nj)
        row_cost.append(rj)

    def evaluate(vector: np.ndarray) -> tuple[int, float]:
        key = np.zeros(len(size), dtype=np.int64)
        stride = 1
        for j in range(m):
            n_j = n_codes[j][vector[j]]
            if stride * n_j > 1 << 40:  # keep the combined key small: re-densify
                key = np.unique(key, return_inverse=True)[1].astype(np.int64)
                stride = int(key.max()) + 1
            key += codes[j][vector[j]] * stride
            stride *= n_j
        if stride > 4 * len(key):
            key = np.unique(key, return_inverse=True)[1]
        class_size = np.bincount(key, weights=size)[key]
        small = class_size < task.k
        suppressed = int(size[small].sum())
        kept = ~small
        kept_cost = sum(float(row_cost[j][vector[j]][kept].sum()) for j in range(m))
        return suppressed, (kept_cost + suppressed * m) / (n_rows * m)

    def fails(vector: np.ndarray) -> bool:
        nonlocal evaluated
        evaluated += 1
        return evaluate(vector)[0] > max_suppressed

    grid = np.stack(np.meshgrid(*[np.arange(hh) for hh in heights], indexing="ij"), -1).reshape(-1, m)
    bound = level_cost[np.arange(m), grid].sum(axis=1) / (n_rows * m)
    order = np.lexsort((*grid[:, ::-1].T, grid.sum(axis=1), np.round(bound, 12)))
    failing = np.empty((0, m), dtype=np.int64)
    best: tuple[float, np.ndarray, int] | None = None
    evaluated = 0
    top = np.asarray(heights) - 1
    with tqdm(total=len(order), desc="full-domain lattice", unit="vector", leave=False, mininterval=0.5, disable=None) as bar:
        for done, i in enumerate(order):
            v = grid[i]
            if best is not None and (bound[i] > best[0] + 1e-15 or (bound[i] >= best[0] - 1e-15 and best[2] == 0)):
                bar.update(len(order) - done)
                break
            bar.update(1)
            if len(failing) and np.any(np.all(failing >= v, axis=1)):
                continue
            evaluated += 1
            suppressed, loss = evaluate(v)
            if suppressed > max_suppressed:
                # climb to a maximal failing vector: its whole down-set fails too
                u = v.copy()
                for j in range(m):
                    lo, hi = u[j], top[j]
                    while lo < hi:  # highest level of attribute j that still fails
                        mid = (lo + hi + 1) // 2
                        u[j] = mid
                        if fails(u):
                            lo = mid
                        else:
                            hi = mid - 1
                    u[j] = lo
                failing = np.vstack([failing, u])
                continue
            if best is None or loss < best[0] - 1e-15 or (loss <= best[0] + 1e-15 and suppressed < best[2]):
                best = (loss, v, suppressed)
    if best is None:
        raise InfeasibleError(
            f"no full-domain generalization is {task.k}-anonymous with at most {max_suppressed} suppressed rows "
            f"({n_rows} rows); raise max_suppressed or lower k"
        )
    loss, vector, suppressed = best
    return {q: int(lv) for q, lv in zip(qids, vector)}, suppressed, float(loss), evaluated


@register_method("fulldomain")
def run(task: Task) -> Plan:
    """Full-domain generalization with the least average NCP (see the module docstring).

    Options: ``max_suppressed`` (int, default 0).
    """
    options = dict(task.options)
    max_suppressed = options.pop("max_suppressed", 0)
    if options:
        raise InvalidParameterError(f"method 'fulldomain' does not take options {sorted(options)}; it takes max_suppressed")
    if isinstance(max_suppressed, bool) or not isinstance(max_suppressed, int) or max_suppressed < 0:
        raise InvalidParameterError(f"max_suppressed must be an integer >= 0, got {max_suppressed!r}")
    levels, suppressed, loss, evaluated = search(task, max_suppressed)
    published = generalize(task.lf, task.hierarchies, levels)
    if suppressed:
        qids = list(task.qids)
        small = (
            generalize(pl.LazyFrame(task.aggregates), task.hierarchies, levels)
            .group_by(qids)
            .agg(pl.col("size").sum())
            .filter(pl.col("size") < task.k)
            .select(*qids, pl.lit(True).alias("__anon_small"))
            .collect()  # materializes: one row per class
        )
        published = (
            published.join(small.lazy(), on=qids, how="left", maintain_order="left")
            .filter(pl.col("__anon_small").is_null())
            .drop("__anon_small")
        )
    return Plan(published, suppressed, {"levels": levels, "loss": loss, "evaluated_vectors": evaluated})
