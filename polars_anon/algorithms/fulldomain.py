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

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.metrics.cells import loss_per_node
from polars_anon.tuplemap import TupleMap

__all__ = ["FulldomainOptions", "Lattice", "SearchResult", "search"]

MAX_LATTICE = 5_000_000


@dataclass(frozen=True)
class FulldomainOptions:
    """Options of ``method="fulldomain"``."""

    max_suppressed: int = 0
    """Rows that may be suppressed (removed) when they sit in classes smaller than k."""

    def __post_init__(self) -> None:
        if self.max_suppressed < 0:
            raise InvalidParameterError(f"max_suppressed must be an integer >= 0, got {self.max_suppressed!r}")


@dataclass(frozen=True)
class SearchResult:
    """The optimal vector: ``levels``, suppressed rows and which tuples they are, its loss."""

    levels: dict[str, int]
    suppressed: int
    small: np.ndarray
    """Boolean per aggregate row: the tuple sits in a class smaller than k (suppressed)."""
    loss: float
    evaluated: int


class Lattice:
    """The level vectors of a task, evaluated on its class aggregates.

    Per attribute and level it keeps the dense code of each tuple's published node
    and the row-weighted cell loss, so a vector is evaluated by one combined code,
    one ``bincount`` and a few sums (no BLAS: small products are slower through it
    on a busy machine).
    """

    def __init__(self, task: Task) -> None:
        agg = task.aggregates
        self.qids = list(task.qids)
        hs = [task.hierarchies[q] for q in self.qids]
        self.k = task.k
        self.size = agg["size"].to_numpy().astype(np.int64)
        self.n_rows, self.m = int(self.size.sum()), len(self.qids)
        self.heights = [h.height for h in hs]
        n_vectors = int(np.prod(self.heights, dtype=np.float64))
        if n_vectors > MAX_LATTICE:
            raise InfeasibleError(
                f"the full-domain lattice has {n_vectors} level vectors (heights {dict(zip(self.qids, self.heights))}), "
                f"more than {MAX_LATTICE}; use method='greedy', 'mondrian' or 'datafly', or fewer quasi-identifiers"
            )
        self.codes: list[list[np.ndarray]] = []
        self.n_codes: list[list[int]] = []
        self.row_cost: list[list[np.ndarray]] = []
        self.level_cost = np.zeros((self.m, max(self.heights)))
        for j, (q, h) in enumerate(zip(self.qids, hs)):
            ids = h.ids_of(agg[q])
            cost = loss_per_node(h)
            cj, nj, rj = [], [], []
            for lv in range(h.height):
                published = h.generalize_ids(lv)[ids]
                uniq, dense = np.unique(published, return_inverse=True)
                cj.append(dense.astype(np.int64))
                nj.append(len(uniq))
                rj.append(self.size * cost[published])
                self.level_cost[j, lv] = float(rj[-1].sum())
            self.codes.append(cj)
            self.n_codes.append(nj)
            self.row_cost.append(rj)

    def classes(self, vector: np.ndarray) -> np.ndarray:
        """A class code per tuple: equal codes are equal published tuples at `vector`."""
        key = np.zeros(len(self.size), dtype=np.int64)
        stride = 1
        for j in range(self.m):
            n_j = self.n_codes[j][vector[j]]
            if stride * n_j > 1 << 40:  # keep the combined key small: re-densify
                key = np.unique(key, return_inverse=True)[1].astype(np.int64)
                stride = int(key.max()) + 1
            key += self.codes[j][vector[j]] * stride
            stride *= n_j
        if stride > 4 * len(key):
            key = np.unique(key, return_inverse=True)[1]
        return key

    def evaluate(self, vector: np.ndarray) -> tuple[int, float, np.ndarray]:
        """``(suppressed rows, loss, small)`` of a vector; `small` marks tuples in classes below k."""
        key = self.classes(vector)
        small = (np.bincount(key, weights=self.size)[key] < self.k)
        suppressed = int(self.size[small].sum())
        kept = ~small
        kept_cost = sum(float(self.row_cost[j][vector[j]][kept].sum()) for j in range(self.m))
        return suppressed, (kept_cost + suppressed * self.m) / (self.n_rows * self.m), small

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Every vector and the lower bound of its loss (the loss without suppression)."""
        grid = np.stack(np.meshgrid(*[np.arange(hh) for hh in self.heights], indexing="ij"), -1).reshape(-1, self.m)
        return grid, self.level_cost[np.arange(self.m), grid].sum(axis=1) / (self.n_rows * self.m)


def _maximal_failing(lattice: Lattice, v: np.ndarray, fails) -> np.ndarray:
    """Climb from a failing vector to a maximal failing one: its whole down-set fails too."""
    u = v.copy()
    top = np.asarray(lattice.heights) - 1
    for j in range(lattice.m):
        lo, hi = u[j], top[j]
        while lo < hi:  # highest level of attribute j that still fails
            mid = (lo + hi + 1) // 2
            u[j] = mid
            if fails(u):
                lo = mid
            else:
                hi = mid - 1
        u[j] = lo
    return u


def search(task: Task, max_suppressed: int = 0) -> SearchResult:
    """Find the optimal level vector (see the module docstring)."""
    lattice = Lattice(task)
    evaluated = 0

    def fails(vector: np.ndarray) -> bool:
        nonlocal evaluated
        evaluated += 1
        return lattice.evaluate(vector)[0] > max_suppressed

    grid, bound = lattice.bounds()
    order = np.lexsort((*grid[:, ::-1].T, grid.sum(axis=1), np.round(bound, 12)))
    failing = np.empty((0, lattice.m), dtype=np.int64)
    best: tuple[float, np.ndarray, int, np.ndarray] | None = None
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
            suppressed, loss, small = lattice.evaluate(v)
            if suppressed > max_suppressed:
                failing = np.vstack([failing, _maximal_failing(lattice, v, fails)])
                continue
            if best is None or loss < best[0] - 1e-15 or (loss <= best[0] + 1e-15 and suppressed < best[2]):
                best = (loss, v, suppressed, small)
    if best is None:
        raise InfeasibleError(
            f"no full-domain generalization is {task.k}-anonymous with at most {max_suppressed} suppressed rows "
            f"({lattice.n_rows} rows); raise max_suppressed or lower k"
        )
    loss, vector, suppressed, small = best
    levels = {q: int(lv) for q, lv in zip(lattice.qids, vector)}
    return SearchResult(levels, suppressed, small, float(loss), evaluated)


@register_method("fulldomain", FulldomainOptions, metrics=("ncp",), default_metric="ncp")
def run(task: Task, options: FulldomainOptions) -> Plan:
    """Full-domain generalization with the least average cell loss (see the module docstring)."""
    found = search(task, options.max_suppressed)
    tmap = TupleMap.from_levels(task.aggregates, task.hierarchies, found.levels, found.small if found.suppressed else None)
    return Plan(tmap, {"levels": found.levels, "evaluated_vectors": found.evaluated})
