"""The transformation of a differentially private release: given, or searched with the exponential mechanism.

:func:`run` turns the class aggregates of the *sample* (:mod:`polars_anon.privacy.differential` drew it)
into a full-domain tuple map: every qid at its level, every class of fewer than k rows suppressed.

**Search** (SafePub, Bild, Kuhn and Prasser, PETS 2018, §4): the lattice of level vectors is walked from
its top (every qid at its root). Each step adds the direct specializations of the current pivot (one qid
one level down) to the candidates, drops the pivot from them, and draws the next pivot from the candidates
with the exponential mechanism: candidate t with probability proportional to exp(ε_step u(t) / (2 Δu)),
where u is the utility on the sample and Δu its sensitivity (:func:`exponential_mechanism`). The release
is then drawn by the exponential mechanism once more (ε_final) among every vector the walk evaluated: the
pivots and their direct specializations, a set fixed by the pivots (so as public as they are). Budget:
:data:`FINAL_SHARE` (90%) of ε_search goes to the final draw, the rest is split evenly over the steps, so
ε_step · steps + ε_final = ε_search; a walk that runs out of candidates early spends less (the report
states what was spent). By sequential composition the search is ε_search-differentially private, and the
release (ε_anon + ε_search, δ) = (ε, δ)-differentially private. (On Adult, 4 seeds at ε 0.5, 1, 2: the
final draw among the evaluated vectors with 90% of the budget lost 0.86, 0.74, 0.62 on average, among the
pivots with half of it 0.89, 0.82, 0.72; per-step budgets this small make the walk nearly uniform anyway.)

*One reading differs from ARX.* ARX's implementation returns the pivot with the best utility, which is a
deterministic function of the data over the pivots (two pivots whose utilities swap between neighbouring
tables swap the output), so it is not covered by the composition argument; we draw the release from the
evaluated vectors with the exponential mechanism instead, and pay for it from ε_search.

**Utilities** u(t) on the sample, each divided by its sensitivity (add or remove one input row: the row
may enter the sample and move one class across k):

=================  ===========================================================  ==================
``utility``        u (higher is better)                                          sensitivity Δu
=================  ===========================================================  ==================
``loss``           -(sum over kept rows of their average cell loss + rows not      max(k - 1, 1)
                   kept: suppressed or not sampled); cell loss of a value is
                   (leaves under it - 1) / (leaves of the hierarchy - 1)
                   (granularity, SafePub §5.1)
``discernibility`` -(sum over kept classes of size² + n · rows not kept),         n (k²/(k-1) + 1);
                   n the input's rows (SafePub §5.2)                               5 n when k = 1
``classes``        kept classes, plus one when any row is not kept                1
=================  ===========================================================  ==================

For the loss: a row entering the sample costs at most 1 itself, and can lift a class of k - 1 rows to k,
which then is kept: those k - 1 rows go from cost 1 to a cost in [0, 1]; so u moves by at most
max(k - 1, 1). The discernibility and class-count bounds are SafePub's (§5.2, §5.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polars_anon.algorithms import Plan, Task
from polars_anon.algorithms.fulldomain import Lattice
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.privacy.differential import DifferentialPrivacy, Release
from polars_anon.tuplemap import TupleMap

__all__ = ["Scorer", "exponential_mechanism", "run", "search"]


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """Draw an index with probability proportional to exp(ε · score / 2); scores already divided by their
    sensitivity. Returns the index and the probabilities.

    >>> i, p = exponential_mechanism(np.array([0.0, 2.0]), 1.0, np.random.default_rng(0))
    >>> round(float(p[1] / p[0]), 6) == round(float(np.exp(1.0)), 6)
    True
    """
    logits = 0.5 * epsilon * np.asarray(scores, dtype=np.float64)
    weights = np.exp(logits - logits.max())
    p = weights / weights.sum()
    index = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
    return min(index, len(p) - 1), p


class Scorer:
    """The utilities of level vectors on the sample's class aggregates, divided by their sensitivity."""

    def __init__(self, task: Task, utility: str, k: int, n_rows: int) -> None:
        self.lattice = Lattice(task)
        self.utility, self.k, self.n_rows = utility, k, n_rows
        self.size = self.lattice.size.astype(np.float64)
        self._cell_cache: dict[tuple[int, int], np.ndarray] = {}
        self.share: list[np.ndarray] = []
        """Per qid: the cell loss of each node id, (leaves - 1) / (leaves of the hierarchy - 1)."""
        for h in self.lattice.hs:
            leaves = h.leaves.astype(np.float64)
            self.share.append((leaves - 1) / max(h.n_leaves - 1, 1))
        if utility == "loss":
            self.sensitivity = float(max(k - 1, 1))
        elif utility == "discernibility":
            self.sensitivity = float(n_rows) * (k * k / (k - 1) + 1 if k > 1 else 5.0)
        else:
            self.sensitivity = 1.0

    def kept(self, vector: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per tuple its class id, per class its rows, per tuple whether it is kept (its class has k rows)."""
        ids = self.lattice.classes(np.asarray(vector, dtype=np.int64))
        rows = np.bincount(ids, weights=self.size)
        return ids, rows, rows[ids] >= self.k

    def raw(self, vector: Sequence[int]) -> float:
        """The utility u (not divided by the sensitivity)."""
        _, rows, kept = self.kept(vector)
        if self.utility == "loss":
            return -self.cost(vector, kept)
        kept_rows = rows[rows >= self.k]
        not_kept = self.n_rows - float(kept_rows.sum())
        if self.utility == "discernibility":
            return -(float((kept_rows**2).sum()) + self.n_rows * not_kept)
        return float(len(kept_rows)) + (1.0 if not_kept > 0 else 0.0)

    def cost(self, vector: Sequence[int], kept: np.ndarray) -> float:
        """Sum over the input's rows of their average cell loss (1 for a row suppressed or not sampled)."""
        weights = np.where(kept, self.size, 0.0)
        cells = np.zeros(len(weights))
        for j, level in enumerate(vector):
            cells += self._cells(j, int(level))  # no BLAS dot: its threads spin on a busy machine
        total = float((weights * cells).sum())
        kept_rows = float(weights.sum())
        return total / max(len(vector), 1) + (self.n_rows - kept_rows)

    def _cells(self, j: int, level: int) -> np.ndarray:
        """Per tuple, the cell loss of qid `j` at `level` (computed once per qid and level)."""
        found = self._cell_cache.get((j, level))
        if found is None:
            found = self._cell_cache[(j, level)] = self.share[j][self.lattice.nodes[j][level]]
        return found

    def score(self, vector: Sequence[int]) -> float:
        """u / Δu: what the exponential mechanism weighs."""
        return self.raw(vector) / self.sensitivity

    def loss(self, vector: Sequence[int]) -> float:
        """The average cell loss over the whole input (rows not sampled or suppressed count 1): in [0, 1]."""
        _, _, kept = self.kept(vector)
        return self.cost(vector, kept) / max(self.n_rows, 1)


FINAL_SHARE = 0.9
"""The share of ε_search spent on the final draw (the rest is split evenly over the steps)."""
FINAL_FROM = "seen"
"""The final draw is among the walk's pivots ("pivots") or every vector it evaluated ("seen": the pivots and
their direct specializations, a set fixed by the pivots, so as public as they are)."""


def search(
    scorer: Scorer, epsilon_search: float, steps: int, rng: np.random.Generator
) -> tuple[tuple[int, ...], dict[str, Any]]:
    """SafePub's walk from the top of the lattice, the release drawn from its pivots (module docstring)."""
    heights = scorer.lattice.heights
    top = tuple(h - 1 for h in heights)
    final_eps = epsilon_search * FINAL_SHARE
    step_eps = (epsilon_search - final_eps) / steps
    seen: dict[tuple[int, ...], float] = {top: scorer.score(top)}
    candidates: dict[tuple[int, ...], float] = {}
    pivots, pivot, taken = [top], top, 0
    for _ in range(steps):
        for j in range(len(pivot)):
            if pivot[j] == 0:
                continue
            below = pivot[:j] + (pivot[j] - 1,) + pivot[j + 1 :]
            if below not in seen:
                seen[below] = scorer.score(below)
                candidates[below] = seen[below]
        candidates.pop(pivot, None)
        if not candidates:
            break
        vectors = list(candidates)
        index, _ = exponential_mechanism(np.array([candidates[v] for v in vectors]), step_eps, rng)
        pivot = vectors[index]
        pivots.append(pivot)
        taken += 1
    pool = pivots if FINAL_FROM == "pivots" else list(seen)
    index, _ = exponential_mechanism(np.array([seen[v] for v in pool]), final_eps, rng)
    spent = taken * step_eps + final_eps
    facts = {
        "steps_taken": taken,
        "evaluated_vectors": len(seen),
        "pivots": len(pivots),
        "epsilon_per_step": step_eps,
        "epsilon_final": final_eps,
        "epsilon_search_spent": spent,
    }
    return pool[index], facts


def _given(task: Task, transformation: dict[str, int]) -> tuple[int, ...]:
    qids = list(task.qids)
    extra = [q for q in transformation if q not in qids]
    missing = [q for q in qids if q not in transformation]
    if extra or missing:
        raise InvalidParameterError(
            f"differential-privacy: transformation must give a level for each quasi-identifier {qids}; "
            + (f"missing {missing}" if missing else f"not quasi-identifiers: {extra}")
        )
    return tuple(task.hierarchies[q].check_level(transformation[q], f"transformation[{q!r}]: ") for q in qids)


def run(task: Task, model: DifferentialPrivacy) -> Plan:
    """The release's plan on the sample's aggregates: the transformation (given or searched), classes below k
    suppressed; ``details["differential_privacy"]`` holds the accounting for the report."""
    release: Release | None = model.release
    if release is None:
        raise ValueError("differential-privacy: the model was not prepared for a run (DifferentialPrivacy.prepared)")
    k = task.k
    scorer = Scorer(task, model.utility, k, release.n_rows)
    rng = np.random.default_rng(release.search_seed)
    if model.transformation is not None:
        vector, facts = _given(task, model.transformation), {}
    else:
        vector, facts = search(scorer, model.epsilon_search, model.steps, rng)
    _, _, kept = scorer.kept(vector)
    sampled = int(scorer.size.sum())
    kept_rows = int(scorer.size[kept].sum())
    if kept_rows == 0:
        raise InfeasibleError(
            f"differential-privacy (epsilon={model.epsilon!r}, delta={model.delta!r}): no class of the sample "
            f"({sampled:,} of {release.n_rows:,} rows, beta={release.beta:.4f}) reaches k={k} at the "
            f"transformation {dict(zip(task.qids, vector))}; nothing would be published: raise epsilon or delta, "
            "or use a table with more rows"
        )
    levels = {q: int(v) for q, v in zip(task.qids, vector)}
    tmap = TupleMap.from_levels(task.aggregates, task.hierarchies, levels, ~kept)
    accounting = {
        "epsilon": model.epsilon,
        "delta": model.delta,
        "epsilon_anonymization": model.epsilon_anonymization,
        "epsilon_search": model.epsilon_search,
        **facts,
        "beta": release.beta,
        "k": k,
        "k_derived": model.k,
        "data_dependent": model.data_dependent,
        "utility": model.utility,
        "sensitivity": scorer.sensitivity,
        "steps": model.steps if model.data_dependent else 0,
        "transformation": levels,
        "utility_value": scorer.raw(vector),
        "loss_whole_table": scorer.loss(vector),
        "seed": model.seed if release.reproducible else "not reproducible",
        "n_rows": release.n_rows,
        "sampled_rows": sampled,
        "not_sampled_rows": release.n_rows - sampled,
        "suppressed_rows": sampled - kept_rows,
        "published_rows": kept_rows,
        "guarantee": (
            f"({model.epsilon:g}, {model.delta:g})-differential privacy for the whole published table: rows sampled "
            f"with probability {release.beta:.6f}, generalized to {levels}, classes below {k} rows suppressed"
        ),
    }
    # the report's "metric" is what was optimized: no metric of the registry (the model's utility instead)
    return Plan(tmap, {"metric": None, "levels": levels, "differential_privacy": accounting})
