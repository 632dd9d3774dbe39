"""Optimal full-domain generalization: one level per quasi-identifier.

The lattice of level vectors is searched for the k-anonymous vector that
minimizes the chosen objective (``metric``), allowing at most ``max_suppressed``
rows in classes smaller than k (those rows are then removed and counted). Each
vector is evaluated by one count over the class aggregates (one row per distinct
tuple), never over the rows. The objectives, their definitions and their bounds
are in :mod:`polars_anon.algorithms.objectives`; the default, ``ncp``, is the
average cell NCP (a suppressed row counting 1 per cell).

Search: vectors are visited by increasing static lower bound of the objective
(then level sum, then lexicographically). Monotonicity prunes: every
generalization of a k-anonymous vector is k-anonymous, every specialization of a
failing one fails (rows in classes smaller than k can only decrease when classes
merge), so a failing vector is climbed to a maximal failing one whose whole
down-set is skipped. A vector is also skipped when the objective proves it
cannot win: its static bound, or the bound an evaluated vector below it gives
for its up-set, is above the best found, or it would suppress more rows than any
vector that beats the best may. The search stops once the next static bound is
above the best value, so the result is optimal; objectives without a useful
static bound are thereby checked on every vector these rules leave (the lattice
is limited to ``MAX_LATTICE`` vectors). At equal value the vector that
suppresses fewer rows wins (so a table is never suppressed whole when
generalizing everything costs the same), then the smaller level sum, then the
lexicographically smaller vector.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from polars_anon._progress import bar as progress_bar
from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.algorithms.objectives import (
    OBJECTIVES,
    Evaluation,
    Objective,
    Score,
    Settings,
    check_settings,
    compare,
    make_objective,
)
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.tuplemap import TupleMap

__all__ = ["FulldomainOptions", "Lattice", "SearchResult", "neighbours", "search"]

MAX_LATTICE = 5_000_000
CACHED_VECTORS = 64
"""Evaluated vectors whose classes are kept to roll later vectors up from."""


@dataclass(frozen=True)
class FulldomainOptions:
    """Options of ``method="fulldomain"`` (the objective's options: see :mod:`polars_anon.algorithms.objectives`)."""

    max_suppressed: int = 0
    """Rows that may be suppressed (removed) when they sit in classes smaller than k."""
    aggregate: Literal["arithmetic", "geometric", "rank", "max", "sum"] | None = field(
        default=None, metadata={"expects": "one of ['arithmetic', 'geometric', 'rank', 'max', 'sum']"}
    )
    """How per-attribute parts combine (metrics loss, entropy, height, precision); None: the metric's default."""
    gs_factor: float | None = field(default=None, metadata={"expects": "a number in [0, 1]"})
    """Generalization against suppression in [0, 1] as ARX (loss, entropy, precision); None: 0.5."""
    monotonic: bool | None = field(default=None, metadata={"expects": "true or false"})
    """entropy: ARX's monotonic variant; discernibility: DM* instead of DM. None: False."""
    weights: dict[str, float] | None = field(default=None, metadata={"expects": "a mapping from quasi-identifiers to numbers"})
    """Attribute weights (loss, entropy, height, precision, ncp); unlisted qids weigh 1."""

    def __post_init__(self) -> None:
        if self.max_suppressed < 0:
            raise InvalidParameterError(f"max_suppressed must be an integer >= 0, got {self.max_suppressed!r}")
        if self.gs_factor is not None and not 0.0 <= self.gs_factor <= 1.0:
            raise InvalidParameterError(f"gs_factor must be a number in [0, 1], got {self.gs_factor!r}")

    def settings(self, metric: str) -> Settings:
        """The objective these options ask for, with `metric`."""
        return Settings(
            metric,
            self.aggregate,
            0.5 if self.gs_factor is None else float(self.gs_factor),
            bool(self.monotonic),
            self.weights,
            self.max_suppressed,
        )


def check_options(options: FulldomainOptions, metric: str | None, qids: Sequence[str]) -> None:
    """Refuse objective options the metric does not take (before any data is read)."""
    check_settings(
        metric or "ncp",
        qids,
        aggregate=options.aggregate,
        gs_factor=options.gs_factor,
        monotonic=options.monotonic,
        weights=options.weights,
        where="method 'fulldomain'",
    )


@dataclass(frozen=True)
class SearchResult:
    """The optimal vector: ``levels``, suppressed rows and which tuples they are, its score."""

    levels: dict[str, int]
    suppressed: int
    small: np.ndarray
    """Boolean per aggregate row: the tuple sits in a class smaller than k (suppressed)."""
    score: Score
    objective: dict[str, object]
    """The objective and its settings (see :meth:`Objective.describe`)."""
    evaluated: int


class Lattice:
    """The level vectors of a task, evaluated on its class aggregates.

    Per attribute and level it keeps each tuple's published node and its dense
    code among the published nodes, so a vector is evaluated by one combined code
    and one ``bincount`` (no BLAS: small products are slower through it on a busy
    machine).
    """

    def __init__(self, task: Task) -> None:
        agg = task.aggregates
        self.qids = list(task.qids)
        self.hs = [task.hierarchies[q] for q in self.qids]
        self.k = task.k
        self.constraints = task.constraints
        self.max_suppressed = 0
        """Set by the search: pruning on failing vectors needs monotonicity with suppression when it is above 0."""
        self.size = agg["size"].to_numpy().astype(np.int64)
        self.n_rows, self.m = int(self.size.sum()), len(self.qids)
        self.heights = [h.height for h in self.hs]
        n_vectors = int(np.prod(self.heights, dtype=np.float64))
        if n_vectors > MAX_LATTICE:
            raise InfeasibleError(
                f"the full-domain lattice has {n_vectors} level vectors (heights {dict(zip(self.qids, self.heights))}), "
                f"more than {MAX_LATTICE}; use method='greedy', 'mondrian' or 'datafly', or fewer quasi-identifiers"
            )
        self.nodes: list[list[np.ndarray]] = []
        """Per attribute and level: each tuple's published node id."""
        self.codes: list[list[np.ndarray]] = []
        """Per attribute and level: each tuple's published node as a dense code."""
        self.n_codes: list[list[int]] = []
        for q, h in zip(self.qids, self.hs):
            ids = h.ids_of(agg[q])
            published = [h.generalize_ids(lv)[ids] for lv in range(h.height)]
            dense = [np.unique(p, return_inverse=True) for p in published]
            self.nodes.append(published)
            self.codes.append([d.astype(np.int64).reshape(-1) for _, d in dense])
            self.n_codes.append([len(u) for u, _ in dense])
        self._cache: OrderedDict[tuple[int, ...], tuple[np.ndarray, np.ndarray, int]] = OrderedDict()
        """Vector -> (class id per tuple, a tuple of each class, number of classes)."""

    def grid(self) -> np.ndarray:
        """Every level vector, ``(N, m)``, in C order of the heights."""
        return np.stack(np.meshgrid(*[np.arange(hh) for hh in self.heights], indexing="ij"), -1).reshape(-1, self.m)

    def _key(self, vector: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """A class key of the tuples `rows` (default: all), below 4 times their number."""
        count = len(self.size) if rows is None else len(rows)
        key = np.zeros(count, dtype=np.int64)
        stride = 1
        for j in range(self.m):
            n_j = self.n_codes[j][vector[j]]
            if stride * n_j > 1 << 40:  # keep the combined key small: re-densify
                key = np.unique(key, return_inverse=True)[1].astype(np.int64).reshape(-1)
                stride = int(key.max()) + 1
            codes = self.codes[j][vector[j]]
            key += (codes if rows is None else codes[rows]) * stride
            stride *= n_j
        if stride > 4 * count:
            key = np.unique(key, return_inverse=True)[1].reshape(-1)
        return key

    @staticmethod
    def _dense(key: np.ndarray) -> tuple[np.ndarray, int]:
        """Dense class ids 0..n-1 of a small key, and n."""
        present = np.bincount(key) > 0
        return (np.cumsum(present) - 1)[key], int(np.count_nonzero(present))

    def classes(self, vector: np.ndarray) -> np.ndarray:
        """A dense class id per tuple: equal ids are equal published tuples at `vector`.

        Rolled up from the cached classes of a vector below when there is one (its
        classes are unions of theirs): the work is then on their classes, not the tuples.
        """
        at = tuple(int(x) for x in vector)
        if at in self._cache:
            self._cache.move_to_end(at)
            return self._cache[at][0]
        base, rep_base = None, np.arange(len(self.size))
        if self._cache:
            vectors = np.array(list(self._cache), dtype=np.int64).reshape(len(self._cache), self.m)
            counts = np.array([e[2] for e in self._cache.values()])
            below = np.flatnonzero(np.all(vectors <= vector, axis=1))
            if len(below):
                base, rep_base, _ = list(self._cache.values())[below[np.argmin(counts[below])]]
        dense, n = self._dense(self._key(vector, None if base is None else rep_base))
        cls = dense if base is None else dense[base]
        rep = np.empty(n, dtype=np.int64)
        rep[dense] = rep_base  # a tuple of each class
        self._cache[at] = (cls.astype(np.int32), rep, n)
        if len(self._cache) > CACHED_VECTORS:
            self._cache.popitem(last=False)
        return cls

    def evaluate(self, vector: np.ndarray) -> Evaluation:
        """Classes of `vector` and the tuples it suppresses (in classes that violate k or a model)."""
        key = self.classes(vector)
        return Evaluation(self, vector, key, self.violating(vector, key))

    def violating(self, vector: np.ndarray, key: np.ndarray | None = None) -> np.ndarray:
        """Per tuple: its class at `vector` violates k or a privacy model (``task.constraints``)."""
        key = self.classes(vector) if key is None else key
        if self.constraints.k_only:
            return np.bincount(key, weights=self.size)[key] < self.k
        levels = {q: int(lv) for q, lv in zip(self.qids, vector)} if self.constraints.needs_levels else None
        return self.constraints.violating(key, levels)[key]  # classes() gives dense ids

    @property
    def prunable(self) -> bool:
        """Whether a failing vector's specializations fail too (the models' monotonicity, with or without suppression)."""
        return self.constraints.monotone_suppression or (self.constraints.monotone and self.max_suppressed == 0)

    @property
    def monotone_suppression(self) -> bool:
        """Whether a vector suppresses every row that a vector above it suppresses (k-anonymity and monotone models)."""
        return self.constraints.monotone_suppression


def _maximal_failing(lattice: Lattice, v: np.ndarray, fails: Callable[[np.ndarray], bool]) -> np.ndarray:
    """Climb from a failing vector to a maximal failing one: its whole down-set fails too.

    Each attribute in turn, those with fewer levels first (measured on Adult, FARS
    and cup: fewer evaluations over a search), is raised one level at a time while
    the vector still fails (near the frontier one step usually settles an attribute).
    """
    u = v.copy()
    top = np.asarray(lattice.heights) - 1
    for j in np.argsort(top, kind="stable").tolist():
        while u[j] < top[j]:
            u[j] += 1
            if not fails(u):
                u[j] -= 1
                break
    return u


def _up(v: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(int(x), None) for x in v)


def _down(v: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(0, int(x) + 1) for x in v)


class _Search:
    """The state of one search: what is known of every vector (see the module docstring)."""

    def __init__(self, lattice: Lattice, objective: Objective, budget: int) -> None:
        self.lat, self.obj, self.budget = lattice, objective, budget
        shape = tuple(lattice.heights)
        self.suppressed = np.full(shape, -1, dtype=np.int64)
        """Rows each evaluated vector suppresses (-1: not evaluated)."""
        self.at_most = np.full(shape, np.iinfo(np.int64).max, dtype=np.int64)
        """The fewest rows an evaluated vector below suppresses: a vector suppresses at most that."""
        self.at_least = np.zeros(shape, dtype=np.int64)
        """The most rows an evaluated vector above suppresses: a vector suppresses at least that."""
        self.failing = np.zeros(shape, dtype=bool)
        """In the down-set of a vector suppressing more rows than any winner may."""
        self.above = np.full(shape, -np.inf)
        """The largest bound that evaluated vectors below give (width-1 objectives)."""
        self.below = np.full(shape, -np.inf)
        """The largest bound that evaluated vectors above give (width-1 objectives)."""
        self.below_parts: np.ndarray | None = None
        """Per part, the largest rise over the slope floor that evaluated vectors above give."""
        self.beaten = np.zeros(shape, dtype=bool)
        """Strict objectives: at or above a feasible vector."""
        self.best: tuple[np.ndarray, int, int, tuple[int, ...], Evaluation, Score] | None = None
        self.cap = budget
        self.count = 0

    def record(self, v: np.ndarray) -> int:
        """Evaluate `v` once: update the best and what it proves; its suppressed rows."""
        at = tuple(int(x) for x in v)
        if self.suppressed[at] >= 0:
            return int(self.suppressed[at])
        ev = self.lat.evaluate(v.copy())
        self.count += 1
        self.suppressed[at] = ev.suppressed
        if ev.suppressed <= self.budget:
            if self.obj.strict:
                self.beaten[_up(v)] = True
            if ev.suppressed <= self.cap:
                self._offer(at, ev, self.obj.value(ev))
        bound = self.obj.above(ev)
        if bound is not None:
            region = self.above[_up(v)]
            np.maximum(region, bound, out=region)
        if self.lat.prunable:
            region = self.at_most[_up(v)]
            np.minimum(region, ev.suppressed, out=region)
        if not self.lat.monotone_suppression:
            return ev.suppressed  # what follows needs: below a vector, every row it suppresses is suppressed
        region = self.at_least[_down(v)]
        np.maximum(region, ev.suppressed, out=region)
        bound = self.obj.below(ev)
        if bound is not None:
            region = self.below[_down(v)]
            np.maximum(region, bound, out=region)
        parts = self.obj.below_parts(ev)
        if parts is not None:
            if self.below_parts is None:
                self.below_parts = np.zeros((*self.suppressed.shape, len(parts)))
            region = self.below_parts[_down(v)]
            np.maximum(region, parts, out=region)
        return ev.suppressed

    def _offer(self, at: tuple[int, ...], ev: Evaluation, score: Score) -> None:
        if self.best is not None:
            c = compare(score.key, self.best[0], self.obj.atol, self.obj.rtol)
            if c > 0 or (c == 0 and (ev.suppressed, sum(at), at) >= self.best[1:4]):
                return
        self.best = (score.key, ev.suppressed, sum(at), at, ev, score)
        self.cap = self._cap(score.key)

    def _cap(self, best: np.ndarray) -> int:
        """The most rows a vector may suppress and still tie `best` (:meth:`Objective.floor_at`)."""
        fits = lambda s: compare(self.obj.floor_at(s), best, self.obj.atol, self.obj.rtol) <= 0
        if self.obj.floor_at(0) is None or fits(self.budget):
            return self.budget
        lo, hi = 0, self.budget  # fits(lo), not fits(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    def cannot_win(self, i: int, v: np.ndarray) -> bool:
        """Whether the bounds known for `v` (row `i` of the grid) exclude it (ties lost to a best that suppresses nothing)."""
        assert self.best is not None
        key, suppressed, lsum, at = self.best[:4]
        atol, rtol = self.obj.atol, self.obj.rtol
        at_v = tuple(v.tolist())
        c = compare(self.bound[i], key, atol, rtol)
        if c <= 0 and self.slopes is not None:
            floor, rise = self.slopes
            extra = self.at_least[at_v] * rise[i]
            if self.below_parts is not None:
                extra = np.maximum(extra, self.below_parts[at_v])
            if np.any(extra > 0):
                mixed = self.obj.combine(floor[i] + extra)
                c = max(c, compare(mixed * (1.0 - 1e-12), key, atol, rtol))  # a hair below: float noise must not exclude the optimum
        for known in (self.below[at_v],):
            if c <= 0 and np.isfinite(known):
                c = max(c, compare(np.array([known * (1.0 - 1e-12)]), key, atol, rtol))
        above = self.above[at_v]
        if c <= 0 and np.isfinite(above):
            c = max(c, compare(np.array([above]), key, atol, rtol))
            if c == 0 and self.obj.strict:
                return True
        return c > 0 or (c == 0 and suppressed == 0 and (int(v.sum()), at_v) > (lsum, at))

    def run(self) -> None:
        grid, lat = self.lat.grid(), self.lat
        self.bound = bound = self.obj.bound(grid)
        self.slopes = self.obj.slope(grid)
        self.floor_min = None if self.slopes is None else self.slopes[0].min(axis=0)
        self.below_bounds = type(self.obj).below is not Objective.below or type(self.obj).below_parts is not Objective.below_parts
        order = np.lexsort((*grid[:, ::-1].T, grid.sum(axis=1), *bound[:, ::-1].T))
        with progress_bar(total=len(order), desc="full-domain lattice", unit="vector") as bar:
            for done, i in enumerate(order):
                bar.update(1)
                v, at = grid[i], tuple(grid[i].tolist())
                if self.best is not None:
                    key = self.best[0]
                    if bound[i, 0] > key[0] + self.obj.atol + self.obj.rtol * abs(key[0]):
                        bar.update(len(order) - done - 1)
                        break  # every later vector has a higher static bound
                    if self.cannot_win(i, v):
                        continue
                if self.suppressed[at] >= 0 or self.failing[at] or self.beaten[at]:
                    continue
                self.record(v)
                if self.hopeless(at):
                    self.failing[_down(_maximal_failing(lat, v, self.fails))] = True

    def hopeless(self, at: tuple[int, ...]) -> bool:
        """Whether nothing at or below the evaluated vector `at` can win: it suppresses more rows than
        a winner may, or the bounds it gives its down-set are above the best (False when the privacy
        models do not let a failing vector's specializations fail)."""
        if not self.lat.prunable:
            return False
        if self.suppressed[at] > (self.cap if self.lat.monotone_suppression else self.budget):
            return True
        if self.best is None:
            return False
        floor = self.below[at]
        if self.below_parts is not None:
            floor = max(floor, float(self.obj.combine(self.floor_min + self.below_parts[at])[0]))
        return bool(np.isfinite(floor)) and compare(np.array([floor * (1.0 - 1e-12)]), self.best[0][:1], self.obj.atol, self.obj.rtol) > 0

    def fails(self, u: np.ndarray) -> bool:
        """:meth:`hopeless` for `u`, known without evaluating it when it can be."""
        at = tuple(u.tolist())
        if self.failing[at]:
            return True
        if self.suppressed[at] < 0:
            if self.at_most[at] <= (self.cap if self.lat.monotone_suppression else self.budget) and not self.below_bounds:
                return False
            self.record(u)
        return self.hopeless(at)


def search(task: Task, max_suppressed: int = 0, settings: Settings | None = None) -> SearchResult:
    """Find the optimal level vector for the objective of `settings` (default ``ncp``; see the module docstring)."""
    lattice = Lattice(task)
    lattice.max_suppressed = max_suppressed
    objective = make_objective(lattice, settings or Settings(max_suppressed=max_suppressed))
    state = _Search(lattice, objective, max_suppressed)
    state.run()
    if state.best is None:
        raise InfeasibleError(
            f"no full-domain generalization is {task.k}-anonymous{_models_text(task)} with at most {max_suppressed} "
            f"suppressed rows ({lattice.n_rows} rows); raise max_suppressed or lower k"
        )
    _, suppressed, _, at, ev, score = state.best
    levels = {q: lv for q, lv in zip(lattice.qids, at)}
    return SearchResult(levels, suppressed, ev.small, score, objective.describe(), state.count)


def _models_text(task: Task) -> str:
    models = task.constraints.models
    return " and satisfies " + ", ".join(m.describe() for m in models) if models else ""


def objective_details(found: SearchResult) -> dict[str, object]:
    """The report's ``details["objective"]``: the objective, its settings, value and per-qid parts."""
    out: dict[str, object] = dict(found.objective) | {"value": found.score.value}
    if found.score.parts is not None:
        out["by_qid"] = found.score.parts
    return out


@register_method("fulldomain", FulldomainOptions, metrics=tuple(OBJECTIVES), default_metric="ncp", check=check_options)
def run(task: Task, options: FulldomainOptions) -> Plan:
    """Full-domain generalization that minimizes the chosen objective (see the module docstring)."""
    settings = options.settings(task.metric or "ncp")
    found = search(task, options.max_suppressed, settings)
    tmap = TupleMap.from_levels(task.aggregates, task.hierarchies, found.levels, found.small if found.suppressed else None)
    details: dict[str, Any] = {"levels": found.levels, "evaluated_vectors": found.evaluated, "objective": objective_details(found)}
    details["neighbours"] = neighbours(task, found.levels, options.max_suppressed, settings)
    return Plan(tmap, details)


def neighbours(task: Task, levels: Mapping[str, int], max_suppressed: int, settings: Settings | None = None) -> list[dict[str, Any]]:
    """The lattice neighbours of a level vector (one qid one level up or down), evaluated as the search does.

    For the report: each neighbour's ``qid``, ``step`` (-1 or +1), ``levels``, ``loss``
    (the average cell NCP, as the report's ``loss``), ``value`` (the objective's, see
    `settings`; default ``ncp``), ``suppressed`` rows and whether it is ``feasible`` (at
    most `max_suppressed` rows in classes smaller than k or violating a model).
    Neighbours below a feasible optimum that are feasible have a higher value or
    suppress more rows; those above have a value at least as high.
    """
    lattice = Lattice(task)
    chosen = np.array([int(levels[q]) for q in lattice.qids], dtype=np.int64)
    ncp = make_objective(lattice, Settings(max_suppressed=max_suppressed))
    objective = make_objective(lattice, settings or Settings(max_suppressed=max_suppressed))
    out = []
    for j, q in enumerate(lattice.qids):
        for step in (-1, 1):
            if not 0 <= chosen[j] + step < lattice.heights[j]:
                continue
            vector = chosen.copy()
            vector[j] += step
            ev = lattice.evaluate(vector)
            value = objective.value(ev).value
            out.append({"qid": q, "step": step, "levels": {p: int(v) for p, v in zip(lattice.qids, vector)},
                        "loss": float(ncp.value(ev).value), "value": value, "suppressed": ev.suppressed,  # type: ignore[arg-type]
                        "feasible": ev.suppressed <= max_suppressed})  # fmt: skip
    return out

