"""Objectives of the full-domain search: what "least information loss" means.

Each objective scores one level vector from its class aggregates: the per-tuple
class code and the per-tuple "suppressed" mask of
:meth:`polars_anon.algorithms.fulldomain.Lattice.evaluate`, and the tuples'
published nodes at the vector's levels. It returns a :class:`Score`: the key the
search minimizes, the value reported and, for the objectives defined per
attribute, each quasi-identifier's part.

For the search to stay optimal, each objective also says what it knows before a
vector is evaluated (the *bounds*, each proved in the class docstring):

- :meth:`Objective.bound`: a lower bound of the key of every vector, from
  per-attribute tables only (no class is counted). The search visits vectors by
  increasing bound and stops once the next bound is above the best key found.
- :meth:`Objective.above`: after evaluating a vector ``u``, a lower bound of the
  key of every vector ``v >= u`` (``u`` itself included), whatever ``v``
  suppresses; vectors under such a bound above the best are skipped.
- :meth:`Objective.floor_at`: a lower bound of the key of any vector that
  suppresses ``s`` rows, non-decreasing in ``s``. A vector suppressing more rows
  than that allows cannot win, nor can any specialization of it (they suppress at
  least as many rows), so it prunes like a vector over the budget.

``strict`` objectives (DM*) have ``above(u)`` equal to the value of ``u`` and
rise with every merge of two classes: a vector above a feasible one cannot win.

Definitions follow ARX's ``org.deidentifier.arx.metric.v2`` where ARX has the
objective (names in each docstring). ``gs_factor`` g in [0, 1] gives ARX's
generalization and suppression factors: ``s = 2 g`` for g < 0.5 else 1, and
``gfac = 1`` for g <= 0.5 else ``2 - 2 g`` (0.5: both 1). Attribute weights
(``weights``, unlisted qids weigh 1) are divided by their maximum, as in ARX, and
multiply each attribute's part before the aggregation (``ncp``: a weighted mean).

>>> import polars as pl
>>> import polars_anon as pa
>>> df = pl.DataFrame({"zip": ["13053", "13068", "13053", "14850"], "age": ["28", "29", "21", "50"]})
>>> H = {"zip": pa.Hierarchy.masking(df["zip"], 3), "age": pa.Hierarchy.intervals(range(20, 60), [10, 40])}
>>> r = pa.anonymize(df, hierarchies=H, k=2, metric="height", max_suppressed=1)
>>> r.report["details"]["levels"], r.report["details"]["objective"]["value"]
({'zip': 2, 'age': 1}, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Protocol

import numpy as np

from polars_anon.errors import InvalidParameterError, NullValueError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.cells import loss_per_node

__all__ = [
    "AGGREGATES",
    "OBJECTIVES",
    "Classes",
    "Evaluation",
    "Lattice",
    "LevelNodes",
    "Objective",
    "Score",
    "Settings",
    "aggregate",
    "check_settings",
    "compare",
    "gs_factors",
    "make_objective",
]


class Lattice(Protocol):
    """What an objective reads of the search's lattice (:class:`polars_anon.algorithms.fulldomain.Lattice` is one;
    a protocol, so that this module imports nothing of the search that imports it)."""

    qids: list[str]
    hs: list[Hierarchy]
    k: int
    m: int
    n_rows: int
    heights: list[int]
    size: np.ndarray
    """Rows per tuple (int64)."""
    size_weights: np.ndarray
    """Rows per tuple as floats (read-only here: the lattice's one copy, the weights of its counts)."""

    @property
    def codes(self) -> Sequence[LevelCodes]:
        """Per attribute: each tuple's published node as a dense code per level (read-only here)."""
        ...

    @property
    def nodes(self) -> Sequence[LevelNodes]:
        """Per attribute: each tuple's published node id per level (read-only here: the lattice's own list)."""
        ...


class LevelCodes(Protocol):
    """What an objective reads of one attribute's dense codes per level
    (:class:`polars_anon.algorithms.fulldomain.LevelCodes`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, level: int) -> np.ndarray: ...

    def __iter__(self) -> Iterator[np.ndarray]: ...

    def take(self, level: int, rows: np.ndarray) -> np.ndarray: ...


class LevelNodes(Protocol):
    """What an objective reads of one attribute's published nodes per level
    (:class:`polars_anon.algorithms.fulldomain.LevelNodes`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, level: int) -> np.ndarray: ...

    def __iter__(self) -> Iterator[np.ndarray]: ...

    def gather(self, values: np.ndarray, level: int, rows: np.ndarray | slice = ...) -> np.ndarray: ...

    def extremes(self, values: np.ndarray, level: int) -> tuple[float, float]: ...


class Classes(Protocol):
    """What an evaluation reads of a vector's classes (:class:`polars_anon.algorithms.fulldomain.Classes`)."""

    rep: np.ndarray
    rows: np.ndarray
    n: int

    def ids(self) -> np.ndarray: ...


AGGREGATES = ("arithmetic", "geometric", "rank", "max", "sum")
"""How per-attribute parts combine (ARX's ``AggregateFunction``)."""


def gs_factors(gs_factor: float) -> tuple[float, float]:
    """ARX's ``(generalization factor, suppression factor)`` of a ``gs_factor`` in [0, 1].

    >>> gs_factors(0.5), gs_factors(0.1), gs_factors(0.75)
    ((1.0, 1.0), (1.0, 0.2), (0.5, 1.0))
    """
    suppression = 2.0 * gs_factor if gs_factor < 0.5 else 1.0
    generalization = 1.0 if gs_factor <= 0.5 else 1.0 - 2.0 * (gs_factor - 0.5)
    return generalization, suppression


def aggregate(parts: np.ndarray, weights: np.ndarray, how: str | None) -> np.ndarray:
    """Combine per-attribute parts ``(..., m)`` into keys ``(..., width)`` (ARX's aggregate functions).

    With ``x = parts * weights``: arithmetic ``sum(x) / m``, geometric
    ``prod(x + 1) ** (1 / m) - 1``, sum, max, and rank: ``x`` sorted in decreasing
    order, compared lexicographically (width m); "rank" or None (an objective that does
    not aggregate) give the rank keys.

    >>> p, w = np.array([0.5, 0.0, 1.0]), np.ones(3)
    >>> [round(float(aggregate(p, w, h)[0]), 4) for h in ("arithmetic", "geometric", "sum", "max")]
    [0.5, 0.4422, 1.5, 1.0]
    >>> aggregate(p, w, "rank").tolist()
    [1.0, 0.5, 0.0]
    """
    x = parts * weights
    m = parts.shape[-1]
    if how == "arithmetic":
        return x.sum(axis=-1, keepdims=True) / m
    if how == "geometric":
        return np.prod((x + 1.0) ** (1.0 / m), axis=-1, keepdims=True) - 1.0
    if how == "sum":
        return x.sum(axis=-1, keepdims=True)
    if how == "max":
        return x.max(axis=-1, keepdims=True)
    return -np.sort(-x, axis=-1)


def compare(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> int:
    """-1, 0 or 1: `a` below, equal to (within the tolerance) or above `b`, lexicographically.

    >>> compare(np.array([1.0, 2.0]), np.array([1.0 + 1e-16, 3.0]), 1e-15, 0.0)
    -1
    """
    for x, y in zip(a.tolist(), b.tolist()):
        tol = atol + rtol * max(abs(x), abs(y))
        if x < y - tol:
            return -1
        if x > y + tol:
            return 1
    return 0


@dataclass(frozen=True)
class Settings:
    """An objective and its options, as checked (see :func:`check_settings`)."""

    metric: str = "ncp"
    aggregate: str | None = None
    """None: the objective's default (ARX's)."""
    gs_factor: float = 0.5
    monotonic: bool = False
    weights: Mapping[str, float] | None = None
    max_suppressed: int = 0


@dataclass(frozen=True)
class Score:
    """What an evaluation of an objective gives."""

    key: np.ndarray
    """What the search minimizes (lexicographically, width 1 except for ``aggregate="rank"``)."""
    value: float | list[float]
    """The objective's value as reported."""
    parts: dict[str, float] | None = None
    """Each quasi-identifier's part, for the objectives defined per attribute."""


def _take(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index]`` for indices known valid (NumPy's checked path is several times slower on int32 indices)."""
    return np.take(values, index, mode="clip")


class Evaluation:
    """One evaluated level vector: its classes (a tuple and the rows of each, ids per tuple on demand), which are
    suppressed, and how many rows that is.

    `make` gives the classes and, per class, whether it violates k or a model; it is called at once, unless
    `tuples_small` is given: the vector's classes are then the tuples themselves (every attribute at its leaves)
    under k alone, `tuples_small` says which tuples are below k, the suppressed rows are theirs, and the classes (in
    their combined key's order, which the objectives' sums follow) are made when first read. The search's first
    vector is such a one, and most objectives read nothing of its classes when it fails: on the 3M register they
    were 684,166 classes, 45-95 ms of the job's CPU time in fresh memory.
    """

    def __init__(
        self,
        lattice: Lattice,
        vector: np.ndarray,
        make: Callable[[], tuple[Classes, np.ndarray]],
        tuples_small: np.ndarray | None = None,
    ) -> None:
        self.lattice = lattice
        self.vector = vector
        self._make, self._made, self._tuples_small = make, None, tuples_small
        if tuples_small is None:
            classes, small_class = self._made = make()
            self.n_classes = classes.n
            self.suppressed = int(classes.rows[small_class].sum()) if small_class.any() else 0
        else:  # whole numbers either way: the same sum
            self.n_classes = len(tuples_small)
            self.suppressed = int(lattice.size[tuples_small].sum()) if tuples_small.any() else 0
        self.cache: dict[str, Any] = {}
        """What objectives computed on this evaluation and use twice."""

    def _found(self) -> tuple[Classes, np.ndarray]:
        """The classes and which are suppressed, made now if they were not."""
        if self._made is None:
            self._made = self._make()
        return self._made

    @property
    def classes(self) -> Classes:
        """The vector's classes."""
        return self._found()[0]

    @property
    def small_class(self) -> np.ndarray:
        """Per class: its rows are suppressed."""
        return self._found()[1]

    @property
    def rep(self) -> np.ndarray:
        """Per class: one of its tuples (every tuple of a class has the same published values)."""
        return self.classes.rep

    @property
    def rows(self) -> np.ndarray:
        """Per class: its rows (float64, whole numbers)."""
        return self.classes.rows

    @cached_property
    def key(self) -> np.ndarray:
        """Class id per tuple (equal ids: one published class), dense: 0..n_classes - 1."""
        return self.classes.ids()

    @cached_property
    def small(self) -> np.ndarray:
        """Per tuple: its rows are suppressed (none when no row is: every class holds a row; then no class id is
        composed for it: the search's optimum on the 3M register, rolled up from two vectors, composed 684,166)."""
        if not self.suppressed:
            return np.zeros(len(self.lattice.size), dtype=bool)
        if self._tuples_small is not None:  # each tuple its own class
            return self._tuples_small
        return _take(self.small_class, self.key)

    @cached_property
    def suppressed_rows(self) -> np.ndarray:
        """Indices of the suppressed tuples."""
        return np.flatnonzero(self.small)

    @cached_property
    def n_kept_classes(self) -> int:
        return self.n_classes - int(np.count_nonzero(self.small_class))


class Objective:
    """An objective: its value on an evaluation and its bounds (see the module docstring)."""

    name: ClassVar[str]
    default_aggregate: ClassVar[str | None] = None
    """None: the objective does not aggregate attributes (no ``aggregate`` option)."""
    gs: ClassVar[bool] = False
    """Whether it takes ``gs_factor``."""
    monotonic_option: ClassVar[bool] = False
    """Whether it takes ``monotonic``."""
    weighted: ClassVar[bool] = False
    """Whether it takes ``weights``."""
    strict: bool = False
    atol: ClassVar[float] = 1e-15
    rtol: ClassVar[float] = 1e-12

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        self.lat = lattice
        self.settings = settings
        self.n = float(lattice.n_rows)
        self.how = settings.aggregate or self.default_aggregate
        self.gfac, self.sfac = gs_factors(settings.gs_factor)
        given = settings.weights or {}
        self.given_weights = np.array([float(given.get(q, 1.0)) for q in lattice.qids])
        self.weights = self.given_weights / self.given_weights.max()
        self.width = lattice.m if self.how == "rank" else 1

    # -- to override ------------------------------------------------------------
    def bound(self, grid: np.ndarray) -> np.ndarray:
        """Lower bound ``(N, width)`` of the key of every vector of `grid` ``(N, m)``."""
        return np.full((len(grid), self.width), -np.inf)

    def value(self, ev: Evaluation) -> Score:
        raise NotImplementedError

    def above(self, ev: Evaluation) -> float | None:
        """Lower bound of the key of every vector >= ``ev.vector`` (width-1 objectives), or None."""
        return None

    def floor_at(self, suppressed: int) -> np.ndarray | None:
        """Lower bound of the key of any vector suppressing `suppressed` rows, or None."""
        return None

    def below(self, ev: Evaluation) -> float | None:
        """Lower bound of the key of every vector <= ``ev.vector`` (width-1 objectives), or None."""
        return None

    def below_parts(self, ev: Evaluation) -> np.ndarray | None:
        """Per part, how much every vector <= ``ev.vector`` exceeds the floor of :meth:`slope`, or None."""
        return None

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """``(floor, rise)``, each ``(N, p)``: a vector of `grid` that suppresses at least s rows has a key
        of at least ``combine(floor + s * rise)`` (its parts rise by at least ``rise`` per suppressed row),
        or None."""
        return None

    def combine(self, parts: np.ndarray) -> np.ndarray:
        """Keys ``(..., width)`` from the parts of :meth:`slope`."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The objective's settings, for the report."""
        out: dict[str, Any] = {"metric": self.name}
        if self.default_aggregate is not None:
            out["aggregate"] = self.how
        if self.gs:
            out["gs_factor"] = self.settings.gs_factor
        if self.monotonic_option:
            out["monotonic"] = self.settings.monotonic
        if self.weighted:
            out["weights"] = {q: float(w) for q, w in zip(self.lat.qids, self.given_weights)}
        return out

    def _per_attribute(self, parts: np.ndarray) -> Score:
        key = aggregate(parts, self.weights, self.how)
        value: float | list[float] = key.tolist() if self.how == "rank" else float(key[0])
        return Score(key, value, {q: float(p) for q, p in zip(self.lat.qids, parts)})

    def _table_bound(self, table: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """Aggregate a per-(attribute, level) table of part bounds over `grid`."""
        parts = table[np.arange(self.lat.m), grid]
        return aggregate(parts, self.weights, self.how)

    def _levels(self, ev: Evaluation) -> list[tuple[int, int]]:
        return list(enumerate(ev.vector.tolist()))


class NCP(Objective):
    """Average cell NCP: ``(nl(published) - 1) / (nl(root) - 1)`` per cell, a suppressed row counting 1.

    Normalized Certainty Penalty of Xu et al. (2006) with the leaf counts nl of the
    hierarchy [paper 001 §4, paper 003 §2.2.8 (granularity)]; per attribute the mean
    over its cells (``parts``), the value their mean (weighted with ``weights``).
    0 on the untouched table, 1 when every cell is the root.

    Bound: the value with nothing suppressed (separable per attribute; exact when
    nothing is suppressed), valid since a suppressed cell costs 1 >= its NCP.
    ``floor_at(s) = s / n``: each suppressed row costs 1 in every attribute.
    """

    name = "ncp"
    weighted = True
    rtol = 0.0

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        self.node_loss = [loss_per_node(h) for h in lattice.hs]
        self.level_cost = np.zeros((lattice.m, max(lattice.heights)))
        self.max_cost = np.zeros((lattice.m, max(lattice.heights)))
        self.min_cost = np.zeros((lattice.m, max(lattice.heights)))
        for j, per in enumerate(lattice.nodes):
            for lv in range(len(per)):
                low, high = per.extremes(self.node_loss[j], lv)  # each tuple's NCP, smallest and largest
                self.min_cost[j, lv], self.max_cost[j, lv] = low, high
                self.level_cost[j, lv] = self._cost_sum(j, lv)
        self.uniform = bool(np.all(self.weights == 1.0))
        self.mean_weights = self.weights / self.weights.sum()

    def _cost_sum(
        self, j: int, level: int, rows: np.ndarray | slice = slice(None), size: np.ndarray | None = None
    ) -> float:
        """``float(self._cost(j, level, rows, size).sum())`` (default: every tuple, ``lat.size``), the same float:
        0.0 when every tuple's cost at the level is 0 (a level of leaves); their rows' count when every cost is 1 (the
        root: every partial sum is an integer below 2**53, so NumPy's sum is exact); the rows times the one cost when
        every tuple's is the same (the same products in the same order: the 3M register's birth years at level 3);
        else computed (the only case that gathers over the tuples)."""
        size = self.lat.size if size is None else size
        low, high = self.min_cost[j, level], self.max_cost[j, level]
        if high == 0.0:
            return 0.0
        if low == 1.0 and high == 1.0 and self.lat.n_rows < 1 << 53:
            return float(int(size.sum()))
        if low == high:  # every tuple's cost this one float: the same products without gathering them
            return float((size * low).sum())
        return float(self._cost(j, level, rows, size).sum())

    def _cost(self, j: int, level: int, rows: np.ndarray | slice, size: np.ndarray) -> np.ndarray:
        """Each tuple's (of `rows`) NCP times its rows (`size`: ``lat.size[rows]``, taken once for every attribute)
        in attribute `j` at `level` (computed when asked: a table per level would hold as much memory as the
        tuples). The products in place of the gathered costs (the same floats: one product per tuple, its rows cast to
        float64 as ``size * costs`` casts them), no second array over the tuples."""
        costs = self.lat.nodes[j].gather(self.node_loss[j], level, rows)
        return np.multiply(costs, size, out=costs)

    def _combine(self, per_attribute_costs: np.ndarray, suppressed: float) -> np.ndarray:
        if self.uniform:  # the unweighted mean, computed as before weights existed (same floats)
            return (per_attribute_costs.sum(axis=-1, keepdims=True) + suppressed * self.lat.m) / (self.n * self.lat.m)
        return (((per_attribute_costs + suppressed) / self.n) * self.mean_weights).sum(axis=-1, keepdims=True)

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return self._combine(self.level_cost[np.arange(self.lat.m), grid], 0.0)

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return self._combine(parts, 0.0)

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A suppressed row costs 1 in each attribute instead of its cell's NCP (at most the level's largest)."""
        rows = np.arange(self.lat.m)
        return self.level_cost[rows, grid], 1.0 - self.max_cost[rows, grid]

    def value(self, ev: Evaluation) -> Score:
        if ev.suppressed == 0:  # every tuple kept: the level's sum, the same floats
            costs = [float(self.level_cost[j, lv]) for j, lv in self._levels(ev)]
        else:
            kept = ~ev.small
            size = self.lat.size[kept]
            costs = [self._cost_sum(j, lv, kept, size) for j, lv in self._levels(ev)]
        if self.uniform:  # the formula and float order of the search before objectives existed
            key = np.array([(sum(costs) + ev.suppressed * self.lat.m) / (self.lat.n_rows * self.lat.m)])
        else:
            key = self._combine(np.array(costs), float(ev.suppressed))
        parts = (np.array(costs) + ev.suppressed) / self.n
        return Score(key, float(key[0]), {q: float(p) for q, p in zip(self.lat.qids, parts)})

    def floor_at(self, suppressed: int) -> np.ndarray:
        return np.array([suppressed / self.n])


class Loss(Objective):
    """ARX's loss (``MetricMDNMLoss``): generalization intensity per attribute, with gs_factor.

    Per attribute, with D its hierarchy's leaves, ``share = nl(published) / D`` and
    factors gfac, s of ``gs_factor`` (module docstring): a kept row adds
    ``gfac * share``, a suppressed row ``1`` when s = 1, else
    ``share + s * (1 - share)``; the part is ``(raw - gfac n / D) / (n - gfac n / D)``
    (at least 0; 0 for a one-leaf hierarchy). With gs_factor 0.5 and nothing
    suppressed it is the attribute's mean NCP. Parts combine by ``aggregate``
    (default geometric, as ARX). Matches ARX's values up to its rounding of each
    part down to 1e-10.

    Bound: every row counted kept (separable; exact when nothing is suppressed); a
    suppressed row adds at least ``share >= gfac * share``, and every aggregate is
    non-decreasing in each part (rank: the sorted parts rise too).
    ``floor_at(s)``: a suppressed row adds at least ``s + (1 - s) / D`` and a kept
    one ``gfac / D``.
    """

    name = "loss"
    default_aggregate = "geometric"
    gs = True
    weighted = True

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        self.domain = np.array([float(h.n_leaves) for h in lattice.hs])
        self.share = [
            [lattice.size * (per.gather(h.leaves, lv) / float(h.n_leaves)) for lv in range(len(per))]
            for h, per in zip(lattice.hs, lattice.nodes)
        ]
        self.total = np.zeros((lattice.m, max(lattice.heights)))
        for j, per in enumerate(self.share):
            for lv, s in enumerate(per):
                self.total[j, lv] = float(s.sum())
        self.low = self.gfac * self.n / self.domain
        self.span = self.n - self.low
        self.rise = np.zeros((lattice.m, max(lattice.heights)))
        for j, (h, per) in enumerate(zip(lattice.hs, lattice.nodes)):
            for lv in range(len(per)):
                share = per.gather(h.leaves, lv) / float(h.n_leaves)
                lo, hi = float(share.min()), float(share.max())
                self.rise[j, lv] = min(self._extra(lo), self._extra(hi))

    def _extra(self, share: float) -> float:
        """What a suppressed row adds beyond a kept one with this share."""
        suppressed = 1.0 if self.sfac == 1.0 else share + self.sfac * (1.0 - share)
        return max(0.0, suppressed - self.gfac * share)

    def _normalize(self, raw: np.ndarray) -> np.ndarray:
        """Parts from raw sums ``(..., m)``."""
        span, low = self.span, self.low
        return np.where(span > 0, np.maximum(0.0, (raw - low) / np.where(span > 0, span, 1.0)), 0.0)

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return aggregate(self._normalize(parts), self.weights, self.how)

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return self.combine(self.gfac * self.total[np.arange(self.lat.m), grid])

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A suppressed row adds its suppressed contribution instead of ``gfac * share``: at least the
        smallest difference over the level's shares (the difference is linear in the share)."""
        rows = np.arange(self.lat.m)
        return self.gfac * self.total[rows, grid], self.rise[rows, grid]

    def value(self, ev: Evaluation) -> Score:
        idx, s = ev.suppressed_rows, float(ev.suppressed)
        raw = np.empty(self.lat.m)
        for j, lv in self._levels(ev):
            sup = float(self.share[j][lv][idx].sum())
            supp_part = s if self.sfac == 1.0 else sup + self.sfac * (s - sup)
            raw[j] = self.gfac * (self.total[j, lv] - sup) + supp_part
        return self._per_attribute(self._normalize(raw))

    def floor_at(self, suppressed: int) -> np.ndarray:
        per_row = self.sfac + (1.0 - self.sfac - self.gfac) / self.domain
        return self.combine(suppressed * per_row + self.low)


class Entropy(Objective):
    """Non-uniform entropy (Gionis and Tassa 2007; de Waal and Willenborg 1999) [paper 003 §2.2.2].

    Per attribute, in bits: ``sum over rows of log2(count(published value) /
    count(original value))``, both counted on the input. ``monotonic=True`` is
    ARX's ``MetricMDNUEntropy``: that sum times gfac, whatever is suppressed (a
    suppressed row counts as generalized like the others). ``monotonic=False`` is
    ARX's ``MetricMDNUNMEntropy``: plus ``s * sum over published values v of
    c_v log2(S / c_v)``, c_v the suppressed rows published as v, S all suppressed
    rows (the information lost by pooling them). Parts combine by ``aggregate``
    (default sum, as ARX).

    Bound: the first sum (separable; the value itself when monotonic, exact when
    nothing is suppressed otherwise, the added term being >= 0). Below an evaluated
    u the suppressed rows are a superset of u's, at finer levels: the added term,
    ``S H(published values of the suppressed rows)``, only grows (more mass, finer
    values), so u's added term is a floor for every vector below it.
    """

    name = "entropy"
    default_aggregate = "sum"
    gs = True
    monotonic_option = True
    weighted = True

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        size = lattice.size_weights
        self.table = np.zeros((lattice.m, max(lattice.heights)))
        for j, (h, per) in enumerate(zip(lattice.hs, lattice.nodes)):
            original = np.bincount(per[0], weights=size, minlength=h.n_nodes)[per[0]]
            for lv, nodes in enumerate(per):
                published = np.bincount(nodes, weights=size, minlength=h.n_nodes)[nodes]
                self.table[j, lv] = float((size * np.log2(published / original)).sum())
        self.table *= self.gfac
        self.code_rows = [[np.bincount(codes, weights=size) for codes in per] for per in lattice.codes]
        """Per attribute and level: the rows of each published value (dense code)."""

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return self._table_bound(self.table, grid)

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return aggregate(parts, self.weights, self.how)

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        if self.settings.monotonic:
            return None
        floor = self.table[np.arange(self.lat.m), grid]
        return floor, np.zeros_like(floor)

    def _pooled(self, ev: Evaluation) -> np.ndarray:
        """Per attribute: ``s * sum_v c_v log2(S / c_v)`` over the suppressed rows."""
        out = np.zeros(self.lat.m)
        if self.settings.monotonic or not ev.suppressed:
            return out
        if "pooled" in ev.cache:
            return ev.cache["pooled"]
        ev.cache["pooled"] = out
        s = float(ev.suppressed)
        kept = ~ev.small_class
        fewer_kept = np.count_nonzero(kept) < len(kept) // 2  # then count the kept classes and subtract
        chosen = kept if fewer_kept else ev.small_class
        idx, weight = ev.rep[chosen], ev.rows[chosen]  # a tuple of each class; whole numbers: exact counts
        for j, lv in self._levels(ev):
            total = self.code_rows[j][lv]
            c = np.bincount(self.lat.codes[j].take(lv, idx), weights=weight, minlength=len(total))
            if fewer_kept:
                c = total - c
            c = c[c > 0]
            out[j] = self.sfac * float((c * np.log2(s / c)).sum())
        return out

    def value(self, ev: Evaluation) -> Score:
        return self._per_attribute(self.table[np.arange(self.lat.m), ev.vector] + self._pooled(ev))

    def below_parts(self, ev: Evaluation) -> np.ndarray | None:
        """Below u the suppressed rows are a superset at finer levels: the pooled term only grows."""
        return None if self.settings.monotonic else self._pooled(ev)


class Precision(Objective):
    """ARX's precision (``MetricMDNMPrecision``; Sweeney 2002) [paper 003 §2.2.1].

    Per attribute: ``((n - S) * gfac * l / (h - 1) + S * s) / n``, l the level, h
    the hierarchy's levels (0 for a one-level hierarchy), S suppressed rows. Parts
    combine by ``aggregate`` (default arithmetic, as ARX).

    Bound (separable): with ``a = gfac * l / (h - 1)``, ``a`` when s >= a, else
    ``a - (S_max / n) (a - s)`` with S_max the rows that may be suppressed (a
    suppressed row can cost less than a generalized one when gs_factor < 0.5).
    ``floor_at(S) = S * s / n`` per attribute.
    """

    name = "precision"
    default_aggregate = "arithmetic"
    gs = True
    weighted = True

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        self.fraction = np.zeros((lattice.m, max(lattice.heights)))
        for j, h in enumerate(lattice.heights):
            if h > 1:
                self.fraction[j, :h] = np.arange(h) / (h - 1)

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return self.combine(self.slope(grid)[0])

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return aggregate(parts, self.weights, self.how)

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The part is ``a + S (s - a) / n``: rising by ``(s - a) / n`` per suppressed row when s >= a."""
        a = self.gfac * self.fraction[np.arange(self.lat.m), grid]
        s_max = min(float(self.settings.max_suppressed), self.n)
        floor = np.where(self.sfac >= a, a, a - (s_max / self.n) * (a - self.sfac))
        return floor, np.maximum(0.0, self.sfac - a) / self.n

    def value(self, ev: Evaluation) -> Score:
        s = float(ev.suppressed)
        fraction = self.fraction[np.arange(self.lat.m), ev.vector]
        return self._per_attribute(((self.n - s) * self.gfac * fraction + s * self.sfac) / self.n)

    def floor_at(self, suppressed: int) -> np.ndarray:
        return aggregate(np.full(self.lat.m, suppressed * self.sfac / self.n), self.weights, self.how)


class Height(Objective):
    """Height (ARX's ``MetricMDHeight``): the generalization level of each attribute.

    Parts are the levels; they combine by ``aggregate`` (default sum: the height of
    the vector in the lattice). Suppression does not count. Bound: the value itself.
    """

    name = "height"
    default_aggregate = "sum"
    weighted = True

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return aggregate(grid.astype(np.float64), self.weights, self.how)

    def value(self, ev: Evaluation) -> Score:
        return self._per_attribute(ev.vector.astype(np.float64))


class Discernibility(Objective):
    """Discernibility (Bayardo and Agrawal 2005) [paper 003 §2.2.4, paper 002 §4.2].

    ``monotonic=False`` (DM, ARX's ``MetricSDNMDiscernability``): the sum over kept
    classes of ``|E|^2`` plus ``n`` for every suppressed row. ``monotonic=True``
    (DM*, El Emam et al. 2009; ARX's ``MetricSDDiscernability``): the sum over every
    class of ``|E|^2``, suppressed classes included.

    Bounds. DM*: ``above(u)`` is its value (a merge of classes a, b adds 2ab > 0, so
    a vector above a feasible one is either worse or has the same classes and a
    larger level sum: ``strict``). DM: a row costs n (suppressed) or |E| >= k
    (kept), and its class only grows above u, so ``above(u) = sum over classes of
    |E| max(|E|, k)``; ``floor_at(S) = k (n - S) + n S``. The static bound is the
    same quantity at the bottom of the lattice.
    """

    name = "discernibility"
    monotonic_option = True
    atol = 0.0

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        self.strict = settings.monotonic
        size = lattice.size_weights
        self.bottom = float((size * (size if settings.monotonic else np.maximum(size, lattice.k))).sum())

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return np.full((len(grid), 1), self.bottom)

    def value(self, ev: Evaluation) -> Score:
        rows = ev.rows  # whole numbers: the sums over classes are exact (below 2**53)
        if self.settings.monotonic:
            v = float((rows * rows).sum())
        else:
            v = float((rows * rows)[~ev.small_class].sum()) + self.n * ev.suppressed
        return Score(np.array([v]), v)

    def above(self, ev: Evaluation) -> float:
        rows = ev.rows
        if self.settings.monotonic:
            return float((rows * rows).sum())
        return float((rows * np.maximum(rows, self.lat.k)).sum())

    def floor_at(self, suppressed: int) -> np.ndarray | None:
        if self.settings.monotonic:
            return None
        return np.array([self.lat.k * (self.n - suppressed) + self.n * suppressed])

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return parts

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        if self.settings.monotonic:
            return None
        return np.full((len(grid), 1), float(self.lat.k) * self.n), np.full((len(grid), 1), self.n - self.lat.k)


class AECS(Objective):
    """Average equivalence class size (ARX's ``MetricSDAECS``; LeFevre et al. 2006's C_avg times k) [paper 003 §2.2.5].

    ``n / (K + [S > 0])``: all rows over the kept classes, the suppressed rows
    forming one more class.

    Bounds: a kept class holds >= k rows, so above u the kept classes are at most
    ``K(u) + floor(S(u) / k)`` (each contains a kept class of u or only suppressed
    rows of u), and at most the classes of u (one of them suppressed when any row
    is): ``above(u) = n / min(C(u), K(u) + floor(S(u) / k) + 1)``. Below u a kept
    class lies in a kept class E of u, at most ``|E| // k`` of them:
    ``below(u) = n / (sum over kept E of |E| // k + 1)``. The static bound is
    ``n / min(tuples, floor(n / k) + 1)``.
    """

    name = "aecs"

    def bound(self, grid: np.ndarray) -> np.ndarray:
        lat = self.lat
        return np.full((len(grid), 1), self.n / min(len(lat.size), lat.n_rows // lat.k + 1))

    def value(self, ev: Evaluation) -> Score:
        v = self.n / (ev.n_kept_classes + (1 if ev.suppressed else 0))
        return Score(np.array([v]), v)

    def above(self, ev: Evaluation) -> float:
        kept = ev.n_kept_classes + ev.suppressed // self.lat.k
        return self.n / min(ev.n_classes, kept + 1)

    def below(self, ev: Evaluation) -> float:
        """Below u a kept class lies in a kept class E of u, which holds at most ``|E| // k`` of them."""
        return self.n / (int((ev.rows[~ev.small_class] // self.lat.k).sum()) + 1)


class _Areas(Objective):
    """Shared tables of KL divergence and ambiguity: log2 of nl(published) per tuple and level."""

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        super().__init__(lattice, settings)
        self.p = lattice.size / self.n
        self.log_leaves = [
            [np.log2(per.gather(h.leaves, lv).astype(np.float64)) for lv in range(len(per))]
            for h, per in zip(lattice.hs, lattice.nodes)
        ]
        self.expected = np.zeros((lattice.m, max(lattice.heights)))
        for j, per in enumerate(self.log_leaves):
            for lv, ll in enumerate(per):
                self.expected[j, lv] = float((self.p * ll).sum())
        self.log_domain = float(sum(math.log2(h.n_leaves) for h in lattice.hs))
        self.max_log = np.zeros((lattice.m, max(lattice.heights)))
        for j, per in enumerate(self.log_leaves):
            for lv, ll in enumerate(per):
                self.max_log[j, lv] = float(ll.max())

    def log_area(self, ev: Evaluation) -> np.ndarray:
        """Per tuple: log2 of the product of nl(published) over the attributes, summed in attribute order
        (once per class when the classes are few: a class's tuples have the same published values)."""
        if "log_area" not in ev.cache:
            levels = self._levels(ev)
            few = 4 * ev.n_classes < len(self.lat.size)
            per = [self.log_leaves[j][lv] for j, lv in levels]
            out = _take(per[0], ev.rep) if few else per[0].copy()
            for leaves in per[1:]:
                out += _take(leaves, ev.rep) if few else leaves
            ev.cache["log_area"] = _take(out, ev.key) if few else out
        return ev.cache["log_area"]


class KLDivergence(_Areas):
    """KL divergence of the published distribution from the input's (Kifer and Gehrke 2006), in bits.

    ``sum over distinct input tuples t of p_t log2(p_t / q_t)``, ``p_t`` the input
    share of t; ``q_t`` spreads the share of t's class uniformly over the tuples its
    published values stand for: ``|E| / (n A_E)`` with ``A_E`` the product of
    nl(published), and ``S / (n M)`` for a suppressed row, M the product of the
    domain sizes (as ARX's ``MetricSDNMKLDivergence``, which however sums the terms
    over rows, weighting each tuple's term by its count again; we sum over distinct
    tuples, the definition).

    Bounds. With nothing suppressed the value is ``E[log2 A] - H(X) + H(classes)``;
    suppressing classes only raises it (log-sum inequality: the regions of distinct
    classes are disjoint, so their areas sum to at most M), and it rises above u
    (coarser regions: data processing), so ``above(u)`` is u's value with nothing
    suppressed. Static: ``H(classes) >= H(any one attribute's published values)``,
    so the bound is ``sum_j E[log2 nl_j] + max_j H_j - H(X)`` (separable parts).
    """

    name = "kl_divergence"

    def __init__(self, lattice: Lattice, settings: Settings) -> None:
        _refuse_roots(lattice)
        super().__init__(lattice, settings)
        self.neg_entropy = float((self.p * np.log2(self.p)).sum())  # -H(X), over distinct tuples
        size = lattice.size_weights
        self.attr_entropy = np.zeros((lattice.m, max(lattice.heights)))
        for j, per in enumerate(lattice.codes):
            for lv, codes in enumerate(per):
                q = np.bincount(codes, weights=size) / self.n
                q = q[q > 0]
                self.attr_entropy[j, lv] = float(-(q * np.log2(q)).sum())

    def bound(self, grid: np.ndarray) -> np.ndarray:
        rows = np.arange(self.lat.m)
        b = self.expected[rows, grid].sum(axis=1) + self.attr_entropy[rows, grid].max(axis=1) + self.neg_entropy
        return b[:, None]

    def _kept_terms(self, ev: Evaluation) -> np.ndarray:
        """Per tuple, its term as if kept (a new array): the class's part computed once per class."""
        return self.p * (_take(np.log2(ev.rows / self.n), ev.key) - self.log_area(ev))

    def value(self, ev: Evaluation) -> Score:
        terms = self._kept_terms(ev)
        if ev.suppressed:
            terms[ev.small] = self.p[ev.small] * (math.log2(ev.suppressed / self.n) - self.log_domain)
        v = self.neg_entropy - float(terms.sum())
        return Score(np.array([v]), v)

    def above(self, ev: Evaluation) -> float:
        return self.neg_entropy - float(self._kept_terms(ev).sum())


def _refuse_roots(lattice: Lattice) -> None:
    """Refuse input tuples that hold a node above the leaves (a null that ``null="suppress"`` publishes at the root):
    the KL divergence spreads each class over the leaves its published values stand for, and such a tuple's region
    overlaps its neighbours', so the shares sum past 1, the value can fall below 0 and the search's bounds (the
    log-sum inequality over disjoint regions) no longer hold: it returned a vector that its own neighbours beat."""
    for q, h, per in zip(lattice.qids, lattice.hs, lattice.nodes):
        above = ~h.is_leaf[per[0]]
        if above.any():
            rows = int(lattice.size[above].sum())
            raise NullValueError(
                f"metric 'kl_divergence' needs every input value at a leaf of its hierarchy, and column {q!r} has "
                f"{rows} {'row' if rows == 1 else 'rows'} whose null is published at the root (null='suppress'); "
                "fill the nulls, drop those rows, or choose another metric (e.g. 'ncp')"
            )


class Ambiguity(_Areas):
    """Ambiguity (Nergiz and Clifton 2007; ARX's ``MetricSDNMAmbiguity``) [paper 003 §2.2.7].

    ``sum over rows of the product over attributes of nl(published)``: the number
    of input tuples each published row could stand for; a suppressed row counts the
    product of the domain sizes.

    Bounds. Rows counted kept give at most the value (nl <= domain size), rising
    above u: ``above(u)`` is that sum at u. Static (AM-GM over rows):
    ``n * 2 ** (sum_j E[log2 nl_j])`` (separable parts). ``floor_at(S) = (n - S) + S M``.
    """

    name = "ambiguity"

    def bound(self, grid: np.ndarray) -> np.ndarray:
        return (self.n * np.exp2(self.expected[np.arange(self.lat.m), grid].sum(axis=1)))[:, None]

    def _all_kept(self, ev: Evaluation) -> np.ndarray:
        """Per tuple: its rows times its area (computed once per evaluation)."""
        if "all_kept" not in ev.cache:
            ev.cache["all_kept"] = self.lat.size * np.exp2(self.log_area(ev))
        return ev.cache["all_kept"]

    def value(self, ev: Evaluation) -> Score:
        per = self._all_kept(ev)
        v = float(per[~ev.small].sum()) + ev.suppressed * 2.0**self.log_domain
        return Score(np.array([v]), v)

    def above(self, ev: Evaluation) -> float:
        return float(self._all_kept(ev).sum())

    def floor_at(self, suppressed: int) -> np.ndarray:
        return np.array([(self.n - suppressed) + suppressed * 2.0**self.log_domain])

    def combine(self, parts: np.ndarray) -> np.ndarray:
        return parts

    def slope(self, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A suppressed row counts the domain product instead of its own (at most the largest leaf counts' product)."""
        largest = np.exp2(self.max_log[np.arange(self.lat.m), grid].sum(axis=1))
        return self.bound(grid), (2.0**self.log_domain - largest)[:, None]


OBJECTIVES: dict[str, type[Objective]] = {
    cls.name: cls for cls in (NCP, Loss, Entropy, Discernibility, AECS, Height, Precision, KLDivergence, Ambiguity)
}
"""Every objective by metric name; ``ncp`` first (the default)."""


def _takers(flag: str) -> list[str]:
    return [name for name, cls in OBJECTIVES.items() if getattr(cls, flag)]


def check_settings(
    metric: str,
    qids: Sequence[str],
    *,
    aggregate: str | None,
    gs_factor: float | None,
    monotonic: bool | None,
    weights: Mapping[str, float] | None,
    where: str,
) -> None:
    """Refuse an objective option the metric does not take, and weights that are not usable.

    >>> check_settings("ncp", ["a"], aggregate="sum", gs_factor=None, monotonic=None, weights=None, where="fulldomain")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: fulldomain: option 'aggregate' applies to metrics
    ['loss', 'entropy', 'height', 'precision'], not to metric='ncp'
    """
    cls = OBJECTIVES[metric]
    for option, given, flag in (
        ("aggregate", aggregate, "default_aggregate"),
        ("gs_factor", gs_factor, "gs"),
        ("monotonic", monotonic, "monotonic_option"),
        ("weights", weights, "weighted"),
    ):
        if given is not None and not getattr(cls, flag):
            raise InvalidParameterError(
                f"{where}: option {option!r} applies to metrics {_takers(flag)}, not to metric={metric!r}"
            )
    if weights is None:
        return
    unknown = [q for q in weights if q not in qids]
    if unknown:
        raise InvalidParameterError(
            f"{where}: weights name {unknown}, which are not quasi-identifiers; the qids are {list(qids)}"
        )
    bad = {q: w for q, w in weights.items() if not (math.isfinite(w) and w >= 0)}
    if bad:
        raise InvalidParameterError(f"{where}: weights must be finite numbers >= 0, got {bad}")
    if all(float(weights.get(q, 1.0)) == 0.0 for q in qids):
        raise InvalidParameterError(f"{where}: weights are all 0; give at least one quasi-identifier a weight > 0")


def make_objective(lattice: Lattice, settings: Settings) -> Objective:
    """The objective of `settings` on `lattice`."""
    return OBJECTIVES[settings.metric](lattice, settings)
