"""The one object every algorithm asks: does a class (or a partition) satisfy k and every model?

:class:`Constraints` is built once per task from the class aggregates (the
``size`` of each distinct qid tuple), k, the requested models and their inputs
(the sensitive counts per aggregate row, a population table); the global context
the models need (the overall sensitive distributions, the population counts) is
computed here, once. Algorithms then ask:

- :meth:`Constraints.violating` ``(class_of)``: given a class id per aggregate row,
  which classes violate k or a model (True = suppress or keep merging). Table
  models (average risk, population uniqueness ...) then mark single classes, the
  smallest first, as many as they need (ARX's rule), see :mod:`polars_anon.privacy.base`;
- :meth:`Constraints.satisfied` ``(rows)``: whether these aggregate rows, taken as one
  class, satisfy k and every model (and are at least :attr:`floor` rows, so no
  table model would ever suppress them): the split / merge test;
- :meth:`Constraints.ok` ``(view)``: the same on many classes at once, from their
  statistics (:class:`~polars_anon.privacy.base.ClassView`), for vectorized loops.

``monotone`` says merging classes that satisfy every model gives a class that
does (prune on generalization); ``monotone_suppression`` that merging never
adds violating rows (prune with a suppression budget).

>>> c = Constraints(np.array([1, 1, 2]), k=2)
>>> c.violating(np.array([0, 0, 1])).tolist(), c.satisfied(np.array([0])), c.monotone
([False, False], False, True)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon._types import Road
from polars_anon.errors import InfeasibleError
from polars_anon.hierarchy import Hierarchy
from polars_anon.privacy.base import Check, ClassView, Context, Domain, Model
from polars_anon.privacy.counts import PopulationCounts, SensitiveCounts

__all__ = ["Constraints", "Triplets"]

Triplets = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
"""Per sensitive attribute, the triplets of some aggregate rows (:meth:`Constraints.triplets`)."""


CELLS = 1 << 23
"""Dense class x value cells built at once (larger partitions are checked in chunks of classes)."""


class Constraints:
    """k-anonymity and the requested privacy models over a task's class aggregates (module docstring)."""

    def __init__(
        self,
        size: np.ndarray,
        k: int,
        models: Sequence[Model] = (),
        sensitive: Mapping[str, SensitiveCounts] | None = None,
        population: PopulationCounts | None = None,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        aggregates: pl.DataFrame | None = None,
        reference: str = "input",
        first_row: np.ndarray | None = None,
        road: Road = "python",
    ) -> None:
        self.size = np.asarray(size, dtype=np.int64)
        self.first_row = None if first_row is None else np.asarray(first_row, dtype=np.int64)
        """Per aggregate row, the position of its tuple's first input row (the aggregation pass adds it when a
        table model is asked): the tie order of :meth:`_suppress_for_tables`; None: the aggregate row order."""
        self.reference = reference
        """Where the overall distributions come from: ``"input"`` (the table anonymized: enforcement and the
        check before writing) or ``"published"`` (the table checked: :func:`~polars_anon.privacy.evaluate.check`
        without a reference)."""
        self.k = int(k)
        self.models = tuple(models)
        self.sensitive = dict(sensitive or {})
        self.population = population
        self.hierarchies = dict(hierarchies or {})
        self.aggregates = aggregates
        self.n_rows = int(self.size.sum())
        self.context = Context({a: s.domain for a, s in self.sensitive.items()}, self.n_rows, self.hierarchies, road)
        self.checks: list[Check] = [m.bind(self.context) for m in self.models]
        self.class_checks = [c for c in self.checks if c.scope == "class"]
        self.table_checks = [c for c in self.checks if c.scope == "table"]
        self.monotone = all(m.monotone for m in self.models)
        self.monotone_suppression = all(m.monotone_suppression for m in self.models)
        self.floor = max([self.k, *(c.floor for c in self.table_checks)])
        """A class of at least this many rows is never suppressed for k or a table model."""

    # ------------------------------------------------------------------ facts
    @property
    def k_only(self) -> bool:
        """True when no model is asked (k-anonymity alone)."""
        return not self.models

    @property
    def labels(self) -> dict[str, pl.Series]:
        """The values of each sensitive attribute (code order)."""
        return {a: s.domain.labels for a, s in self.sensitive.items()}

    @property
    def needs_levels(self) -> bool:
        """True when population tuples absent from the sample must be generalized (pass ``levels``)."""
        return self.population is not None and self.population.extra.height > 0

    def monotone_part(self, suppression: bool) -> Constraints | None:
        """k and the class models' monotone relaxations (:meth:`Model.relaxed`; the model itself when it is monotone,
        with suppression when `suppression`): a copy judging only them.

        When these alone make a vector fail a search (with `suppression`: suppress more rows than a budget; without:
        suppress any row), every specialization of it fails them too, and the whole, whose violating classes include
        theirs (a relaxation is implied by its model), fails as well: a search may prune there even when the whole is
        not monotone (δ-presence with dmin > 0 relaxes to dmin = 0 without suppression). Table models are left
        out (they mark classes after the class models, which need not include the part's marks). None when the part
        is everything or never fails (k = 1 and no such model).

        >>> c = Constraints(np.array([1, 1, 2]), 2)
        >>> c.monotone_part(True) is None, c.monotone_part(False) is None  # k alone: the whole is monotone
        (True, True)
        """
        models, checks = [], []
        for m, c in zip(self.models, self.checks):
            r = m.relaxed(suppression)
            check = c if r is m else None if r is None else r.bind(self.context)
            if r is not None and check is not None and check.scope == "class":
                models.append(r)
                checks.append(check)
        if (len(models) == len(self.models) and all(r is m for r, m in zip(models, self.models))) or (
            not models and self.k <= 1
        ):
            return None
        part = copy.copy(self)
        part.models = tuple(models)
        part.checks = checks
        part.class_checks = list(part.checks)
        part.table_checks = []
        part.monotone = all(m.monotone for m in part.models)
        part.monotone_suppression = all(m.monotone_suppression for m in part.models)
        part.floor = self.k
        if not any(m.needs_population_table for m in part.models):
            part.population = None
        return part

    # ------------------------------------------------------------------ statistics
    def view(
        self,
        class_of: np.ndarray,
        n_classes: int | None = None,
        levels: Mapping[str, int] | None = None,
        population: bool = True,
    ) -> ClassView:
        """Class statistics of a partition (class id per aggregate row, ids 0..n-1)."""
        class_of = np.asarray(class_of, dtype=np.int64)
        n = int(class_of.max()) + 1 if n_classes is None else n_classes
        size = np.bincount(class_of, weights=self.size, minlength=n).astype(np.int64)
        counts = {}
        for a, s in self.sensitive.items():
            m = s.domain.m
            flat = np.bincount(class_of[s.row] * m + s.code, weights=s.count, minlength=n * m)
            counts[a] = flat.reshape(n, m).astype(np.int64)
        return ClassView(size, counts, self._population_of(class_of, n, levels) if population else None)

    def view_rows(self, rows: np.ndarray, class_of: np.ndarray, n_classes: int) -> ClassView:
        """Class statistics of classes given as (aggregate row, class) pairs; a row may sit in several classes.

        For candidate splits: each candidate side is a class over the rows it would hold.
        Population counts are the sums of the rows' own population counts.
        """
        return self.view_parts(rows, class_of, n_classes)

    def triplets(self, rows: np.ndarray) -> Triplets:
        """Per sensitive attribute, the (row, value, count) triplets of `rows` in turn: (triplets per row, their
        value codes, their counts). Built once for many :meth:`view_parts` calls over the same rows."""
        rows = np.asarray(rows, dtype=np.int64)
        out = {}
        for a in self.sensitive:
            start, code, count = self._by_row(a)
            first = start[rows]
            lengths = self._row_lengths(a)[rows]
            ends = np.cumsum(lengths)
            # the triplets of each row in turn: row r's run starts at start[r] (its place in `code` / `count`)
            first -= ends
            first += lengths
            pick = np.repeat(first, lengths)
            pick += np.arange(len(pick), dtype=np.int64)
            out[a] = (lengths, code[pick], count[pick])
        return out

    def view_parts(
        self,
        rows: np.ndarray,
        part: np.ndarray,
        n_classes: int,
        triplets: Triplets | None = None,
    ) -> ClassView:
        """:meth:`view_rows` with aggregate row ``rows[i]`` in class ``part[i]`` (``n_classes`` or more: in none).

        `triplets`: :meth:`triplets` of `rows` (built here when not given).

        >>> c = Constraints(np.array([2, 1]), 1)
        >>> c.view_parts(np.array([0, 1, 1]), np.array([0, 1, 2]), 2).size.tolist()
        [2, 1]
        """
        rows, part = np.asarray(rows, dtype=np.int64), np.asarray(part, dtype=np.int64)
        if triplets is None:
            triplets = self.triplets(rows)
        n1 = n_classes + 1
        counts = {}
        for a, s in self.sensitive.items():
            lengths, code, count = triplets[a]
            m = s.domain.m
            owner = np.repeat(part, lengths)
            owner *= m
            owner += code
            flat = np.bincount(owner, weights=count, minlength=n1 * m)[: n_classes * m]
            counts[a] = flat.reshape(n_classes, m).astype(np.int64)
        if counts and self._counts_cover_size():  # a part's rows: its counts' sum (whole numbers, exact)
            size = next(iter(counts.values())).sum(axis=1)
        else:
            size = np.bincount(part, weights=self.size[rows], minlength=n1)[:n_classes].astype(np.int64)
        pop = None
        if self.population is not None:
            pop = np.bincount(part, weights=self.population.rows[rows], minlength=n1)[:n_classes].astype(np.int64)
        return ClassView(size, counts, pop)

    def _by_row(self, attribute: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Triplets of `attribute` grouped by aggregate row: (row start offsets, their codes, their counts as float,
        the weights :meth:`view_parts` sums: whole numbers, exact)."""
        cache = self.__dict__.setdefault("_rows_triplets", {})
        if attribute not in cache:
            s = self.sensitive[attribute]
            order = np.argsort(s.row, kind="stable")
            start = np.zeros(len(self.size) + 1, dtype=np.int64)
            np.cumsum(np.bincount(s.row, minlength=len(self.size)), out=start[1:])
            count = np.asarray(s.count[order], dtype=np.float64)
            cache[attribute] = (start, np.asarray(s.code[order], dtype=np.int64), count)
        return cache[attribute]

    def _row_lengths(self, attribute: str) -> np.ndarray:
        """Per aggregate row, its triplets of `attribute` (the runs of :meth:`_by_row`)."""
        cache = self.__dict__.setdefault("_rows_lengths", {})
        if attribute not in cache:
            cache[attribute] = np.diff(self._by_row(attribute)[0])
        return cache[attribute]

    def _counts_cover_size(self) -> bool:
        """Whether each aggregate row's counts of the first sensitive attribute sum to its size (every row counted
        once, nulls as a value): then a class's size is the sum of its counts."""
        if "_cover" not in self.__dict__:
            s = next(iter(self.sensitive.values()))
            totals = np.bincount(s.row, weights=s.count, minlength=len(self.size))
            self.__dict__["_cover"] = bool(
                len(totals) == len(self.size) and np.array_equal(totals, self.size.astype(np.float64))
            )
        return self.__dict__["_cover"]

    def min_size(self) -> int:
        """The smallest class size that satisfies k, the table floor and every model that reads only class sizes.

        Raises ValueError when a model reads sensitive values or a population (then size alone decides nothing).
        """
        if any(m.sensitive_attribute is not None or m.needs_population_table for m in self.models):
            raise ValueError(
                "these constraints read sensitive values or a population; class size alone does not decide them"
            )
        size = self.floor
        while not self.ok(ClassView(np.array([size]), {}))[0]:
            size += 1
        return size

    def _population_of(self, class_of: np.ndarray, n: int, levels: Mapping[str, int] | None) -> np.ndarray | None:
        if self.population is None:
            return None
        pop = np.bincount(class_of, weights=self.population.rows, minlength=n)
        if not self.needs_levels:
            return pop.astype(np.int64)
        if levels is None:
            raise ValueError(
                "these constraints compare classes with a population table: pass the levels of the partition"
            )
        sample, extra = self._level_keys(levels)
        # a class's published tuple is the same for all its sample tuples: map each key to its class
        order = np.argsort(sample, kind="stable")
        ordered = sample[order]
        at = np.minimum(np.searchsorted(ordered, extra), max(len(ordered) - 1, 0))
        inside = ordered[at] == extra if len(ordered) else np.zeros(len(extra), dtype=bool)
        hit = class_of[order[at[inside]]]
        pop += np.bincount(hit, weights=self._extra_count()[inside], minlength=n)
        return pop.astype(np.int64)

    def _extra_count(self) -> np.ndarray:
        """The population counts of the tuples the sample lacks, in :meth:`_extra_order`."""
        cache = self.__dict__.setdefault("_extra_counts", {})
        if "count" not in cache:
            assert self.population is not None
            counts = self.population.extra["count"].to_numpy().astype(np.float64)
            cache["count"] = counts[self._extra_order()]
        return cache["count"]

    def _extra_order(self) -> np.ndarray:
        """The population tuples the sample lacks, sorted by their hierarchy node ids (``PopulationCounts.extra_ids``,
        mapped once, where the road checked them; the last qid first, as the keys of :meth:`_level_keys` weigh
        them). Node ids are in tree order and generalizing keeps their order, so at any levels the keys stay sorted
        by their highest digit: the binary searches of :meth:`_population_of` then walk the sorted sample keys mostly
        forward (each population count lands in the same class whatever the order; the sums are of whole numbers,
        exact)."""
        cache = self.__dict__.setdefault("_extra_counts", {})
        if "order" not in cache:
            assert self.population is not None
            mapped = self.population.extra_ids
            ids = [mapped[q] for q in self.hierarchies if q in mapped]
            cache["order"] = np.lexsort(ids) if ids else np.arange(self.population.extra.height)
        return cache["order"]

    def _level_keys(self, levels: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """One int64 key per sample tuple and per population tuple the sample lacks: their published tuple at
        `levels` (node ids in mixed radix; equal keys are equal published tuples)."""
        assert self.aggregates is not None and self.population is not None
        cache = self.__dict__.setdefault("_node_ids", {})
        frames = (self.aggregates, self.population.extra)
        keys = [np.zeros(f.height, dtype=np.int64) for f in frames]
        stride = 1
        for q, h in self.hierarchies.items():
            if q not in levels:
                continue
            if q not in cache:
                cache[q] = [h.ids_of(frames[0][q]), self.population.extra_ids[q][self._extra_order()]]
            level = int(levels[q])
            if (q, level) not in cache:  # the node ids at this level, per tuple (the search asks each level often)
                up = h.generalize_ids(level)
                cache[q, level] = [up[ids] for ids in cache[q]]
            if stride * h.n_nodes >= 1 << 62:  # keep the key in 63 bits: make it dense again
                both = np.unique(np.concatenate(keys), return_inverse=True)[1].ravel()
                keys, stride = [both[: len(keys[0])], both[len(keys[0]) :]], len(both) + 1
            for key, nodes in zip(keys, cache[q, level]):
                key += nodes * stride
            stride *= h.n_nodes
        return keys[0], keys[1]

    # ------------------------------------------------------------------ verdicts
    def ok(self, view: ClassView) -> np.ndarray:
        """Per class: at least k rows and every class model satisfied (table models are not judged here)."""
        good = view.size >= self.k
        for check in self.class_checks:
            good &= check.ok(view, check.measure(view))
        return good

    def ok_one(self, size: int, counts: Mapping[str, np.ndarray]) -> bool:
        """:meth:`ok` of one class: `size` rows, `counts` its count per value code of each attribute (1-D).

        >>> from polars_anon.privacy import LDiversity
        >>> from polars_anon.privacy.base import Domain
        >>> d = Domain("s", pl.Series(["x", "y"]), np.array([0.5, 0.5]))
        >>> s = SensitiveCounts(d, np.array([0, 1]), np.array([0, 1]), np.array([2, 2]))
        >>> c = Constraints(np.array([2, 2]), 2, [LDiversity("s", l=2)], {"s": s})
        >>> [c.ok_one(n, {"s": np.array(v)}) for n, v in ((4, [2, 2]), (4, [4, 0]), (1, [1, 0]))]
        [True, False, False]
        """
        return size >= self.k and all(check.ok_one(size, counts) for check in self.class_checks)

    def violating(self, class_of: np.ndarray, levels: Mapping[str, int] | None = None) -> np.ndarray:
        """Per class (ids 0..n-1 in `class_of`, one per aggregate row): True when it violates k or a model.

        Table models then mark single remaining classes, the smallest first, as many as they need
        (see :meth:`_suppress_for_tables`).
        `levels` (full-domain methods) is needed only when :attr:`needs_levels`.
        """
        class_of = np.asarray(class_of, dtype=np.int64)
        n = int(class_of.max()) + 1 if len(class_of) else 0
        if self.k_only or not self.class_checks:
            size = np.bincount(class_of, weights=self.size, minlength=n)
            bad = size < self.k
            view = None
        else:
            bad, view = self._chunked(class_of, n, levels)
            size = view.size if view is not None else np.bincount(class_of, weights=self.size, minlength=n)
        if self.table_checks:
            pop = view.population if view is not None else self._population_of(class_of, n, levels)
            bad = self._suppress_for_tables(np.asarray(size, dtype=np.int64), pop, bad, class_of)
        return bad

    def _chunked(
        self, class_of: np.ndarray, n: int, levels: Mapping[str, int] | None
    ) -> tuple[np.ndarray, ClassView | None]:
        widest = max([s.domain.m for s in self.sensitive.values()] or [1])
        if n * widest <= CELLS:
            view = self.view(class_of, n, levels)
            return ~self.ok(view), view
        pop = self._population_of(class_of, n, levels)
        bad = np.zeros(n, dtype=bool)
        step = max(1, CELLS // widest)
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            local = np.where((class_of >= lo) & (class_of < hi), class_of - lo, hi - lo)  # others: a dropped class
            part = self.view(local, hi - lo + 1, population=False)
            view = ClassView(
                part.size[:-1], {a: c[:-1] for a, c in part.counts.items()}, None if pop is None else pop[lo:hi]
            )
            bad[lo:hi] = ~self.ok(view)
        return bad, None

    def _suppress_for_tables(
        self, size: np.ndarray, pop: np.ndarray | None, bad: np.ndarray, class_of: np.ndarray
    ) -> np.ndarray:
        """Mark single kept classes, one at a time, until every table model holds on the rest (ARX's rule).

        Order: the smallest class first; among classes of one size, the one whose first input row
        comes first (ARX's ``representative``; :attr:`first_row`, which the aggregation pass adds for
        table models; without it, the class's first aggregate row: the input's tuples sorted by their
        qid values). As many as needed and no more: the shortest prefix of that order after which
        every table model holds (all kept classes when none does).

        >>> from polars_anon.privacy import AverageRisk
        >>> c = Constraints(np.array([1, 1, 1, 5]), 1, [AverageRisk(0.45)], first_row=np.array([7, 2, 9, 0]))
        >>> c.violating(np.arange(4)).tolist()  # 4 classes / 8 rows > 0.45 > 3 / 7: the class of row 2 goes
        [False, True, False, False]
        """
        kept = np.flatnonzero(~bad & (size > 0))  # a class id without rows is no class
        position = np.arange(len(class_of), dtype=np.int64) if self.first_row is None else self.first_row
        first = np.full(len(size), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, class_of, position)
        order = kept[np.lexsort((first[kept], size[kept]))]
        p = None if pop is None else pop[order]
        holds = np.ones(len(order) + 1, dtype=bool)
        slow = []
        for c in self.table_checks:
            fast = c.prefix_ok(size[order], p)
            if fast is None:
                slow.append(c)
            else:
                holds &= fast
        m = len(order)
        for at in np.flatnonzero(holds[:-1]).tolist():
            if all(c.table_ok(size[order[at:]], None if p is None else p[at:]) for c in slow):
                m = at
                break
        out = bad.copy()
        out[order[:m]] = True
        return out

    def satisfied(self, rows: np.ndarray) -> bool:
        """Whether these aggregate rows (indices), as one class, satisfy k and every model.

        The class needs at least :attr:`floor` rows.
        """
        rows = np.asarray(rows, dtype=np.int64)
        size = int(self.size[rows].sum())
        if size < self.floor:
            return False
        if not self.class_checks:
            return True
        counts = {}
        for a, s in self.sensitive.items():
            inside = np.isin(s.row, rows)
            counts[a] = np.bincount(s.code[inside], weights=s.count[inside], minlength=s.domain.m).astype(np.int64)[
                None, :
            ]
        pop = None if self.population is None else np.array([int(self.population.rows[rows].sum())])
        return bool(self.ok(ClassView(np.array([size]), counts, pop))[0])

    def no_publication(self, method: str, max_suppressed: int | None, misses: str = "") -> InfeasibleError:
        """The one refusal of a method that ends with no publication meeting k and every model (`max_suppressed`:
        its budget, None for a method that takes none): fulldomain when no vector passes, and every method whose
        publication is the whole table as one class, or nothing, when the whole table fails a model
        (:func:`polars_anon.pipeline.road.check_map`). `misses`: what the method's search cannot find, and where to
        look instead (:attr:`polars_anon.algorithms.Method.misses`), appended after a semicolon.

        >>> print(Constraints(np.array([2, 2]), k=5).no_publication("greedy", None))
        method 'greedy' found no publication of this table (4 rows) that is 5-anonymous with no row suppressed; \
lower k or relax the models
        """
        models = " and satisfies " + ", ".join(m.describe() for m in self.models) if self.models else ""
        budget = (
            "with no row suppressed; lower k"
            if max_suppressed is None
            else f"with at most {max_suppressed} suppressed rows; raise max_suppressed, lower k"
        )
        return InfeasibleError(
            f"method {method!r} found no publication of this table ({self.n_rows} rows) that is {self.k}-anonymous"
            f"{models} {budget} or relax the models{'; ' + misses if misses else ''}"
        )

    def whole(self) -> ClassView:
        """The whole input as one class (what the coarsest generalization publishes)."""
        view = (
            self.view(np.zeros(len(self.size), dtype=np.int64), 1, population=False)
            if len(self.size)
            else ClassView(np.zeros(1, np.int64), {})
        )
        if self.population is not None:
            view = ClassView(view.size, view.counts, np.array([self.population.total]))
        return view

    # ------------------------------------------------------------------ reports
    def _published_domain(self, attribute: str, view: ClassView) -> Domain:
        """The distribution of `attribute` over the classes of `view` (the published rows), on the same codes."""
        domain = self.sensitive[attribute].domain
        totals = view.counts[attribute].sum(axis=0).astype(np.float64)
        nulls = int(totals[domain.labels.is_null().to_numpy()].sum())
        return Domain(attribute, domain.labels, totals / max(float(totals.sum()), 1.0), nulls)

    def status(self, view: ClassView) -> list[dict[str, Any]]:
        """Each model's verdict on a partition: satisfied, violating classes and rows, worst measure."""
        out = []
        for model, check in zip(self.models, self.checks):
            entry: dict[str, Any] = {**model.summary(), "scope": check.scope}
            if model.uses_distribution:
                entry["reference"] = self.reference
            if check.scope == "class":
                entry |= _verdict(check, view)
                if model.uses_distribution and self.reference == "input":
                    # what a checker holding only the published table finds (its own distribution as reference)
                    published = {a: self._published_domain(a, view) for a in self.sensitive}
                    own = model.bind(Context(published, int(view.size.sum()), self.hierarchies, self.context.road))
                    entry["published_reference"] = {
                        k: v
                        for k, v in _verdict(own, view).items()
                        if k in ("satisfied", "violating_classes", "max_measure")
                    }
            else:
                entry |= {
                    "satisfied": bool(check.table_ok(view.size, view.population)),
                    "measure": float(check.table_measure(view.size, view.population)),
                }
            out.append(entry)
        return out


def _verdict(check: Check, view: ClassView) -> dict[str, Any]:
    """A class check's verdict on the classes of `view`: satisfied, violating classes and rows, measures."""
    measure = check.measure(view)
    good = check.ok(view, measure)
    finite = measure[np.isfinite(measure)]
    return {
        "satisfied": bool(good.all()),
        "violating_classes": int((~good).sum()),
        "violating_rows": int(view.size[~good].sum()),
        "min_measure": float(finite.min()) if len(finite) else None,
        "max_measure": float(finite.max()) if len(finite) else None,
    }
