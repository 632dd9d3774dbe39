"""The transformation of a differentially private release: given, or searched with the exponential mechanism.

:func:`run` turns the class aggregates of the *sample* (:mod:`polars_anon.privacy.differential` drew it)
into a full-domain tuple map: every qid at its level, every class of fewer than k rows suppressed.

**Search sample.** The transformation is scored on a second β-sample of the input, drawn with a key
independent of the released sample's (:attr:`~polars_anon.privacy.differential.Release.search_key`). The
search is then an ε1-differentially private algorithm run on a β-sample, which is
ε_search = ln(1 + β (e^ε1 - 1))-differentially private for the input (Li, Qardaji and Su, ASIACCS 2012,
Theorem 1), so it spends ε1 = ln(1 + (e^ε_search - 1) / β) on its sample
(:func:`~polars_anon.privacy.differential.search_epsilon_on_sample`: 11 times ε_search at β = 0.086, 1.2
times at β = 0.83). The release is the transformation t, then the released sample generalized to t
with classes below k suppressed, which is (ε_anon, δ)-differentially private for every fixed t (Li, Qardaji
and Su, Theorem 5); the two samples are independent, so basic sequential composition, which holds when the
second mechanism is chosen from the first one's output (Dwork and Roth 2014, §3.5), makes the release
(ε_search + ε_anon, δ) = (ε, δ)-differentially private. Only the loss's draw is a function of the search
sample alone (its n shifts every vector alike); discernibility and the class count weigh n, the input's rows,
so their draws spend ε1 = ε_search, unamplified. (Without the search sample's aggregates, as when
:func:`run` is called on one table only, the search runs on the released sample with ε1 = ε_search: SafePub's
setting, Bild, Kuhn and Prasser, PETS 2018, §4.)

**Draw.** When the lattice of level vectors has at most :data:`LATTICE_DRAW_MAX` vectors, the release's
vector is one draw of the exponential mechanism over the whole lattice with all of ε1: vector t with
probability proportional to exp(ε1 u(t) / (2 Δu)) (:func:`exponential_mechanism`). A larger lattice is
walked as SafePub does (§4): from the top (every qid at its root), each step adds the direct
specializations of the pivot to the candidates, drops the pivot and draws the next pivot from the
candidates; the release is then drawn among every vector the walk evaluated (a set the pivots fix), with
:data:`FINAL_SHARE` of ε1, the rest split over the steps.

*ARX returns the best pivot; we draw.* ARX's ``DataDependentEDDPAlgorithm`` returns the pivot of best
utility (``trackOptimum``), a deterministic function of the data over the pivots (two pivots whose
utilities swap between neighbouring tables swap the output), which sequential composition of the steps
does not cover; we draw the release by the exponential mechanism instead.

**Utilities** u(t) on the search sample, with Δu the calibration (the mechanism is ε1-differentially private
when, for any two neighbouring inputs, max_t d(t) - min_t d(t) <= 2 Δu, d(t) the change of u(t); McSherry
and Talwar 2007 calibrate by the largest |d(t)|, which bounds this width by twice itself; for a utility
whose d(t) always has the same sign the width is the largest |d(t)| itself, their monotone case):

=================  ===========================================================  ===================
``utility``        u (higher is better)                                          Δu
=================  ===========================================================  ===================
``loss``           -(n - sum over classes of g(s) (1 - cell loss of the class)),  (1 + (k - 1) / r) / 2
                   s the class's sampled rows, n the input's rows,
                   g(s) = s · clip((s - k + r) / r, 0, 1), r = max((k - 1) / 2, 1);
                   cell loss of a value (leaves under it - 1) / (leaves of the
                   hierarchy - 1), averaged over the qids (granularity,
                   SafePub §5.1, with a class of s in [k - r, k) rows counted
                   in part: :data:`RAMP`)
``discernibility`` -(sum over kept classes of size² + n · rows not kept)          n (k²/(k-1) + 1);
                   (SafePub §5.2)                                                 5 n when k = 1
``classes``        kept classes, plus one when any row is not kept                1
=================  ===========================================================  ===================

For the loss: adding a row to the input raises n by one (d(t) = -1 for every t when the row is not in
the search sample); when it is, its class grows from s to s + 1 and g grows by g(s + 1) - g(s), which is 1
for s >= k, 0 below k - r and at most (2 (k - 1) + 1 - k + r) / r = 1 + (k - 1) / r inside the ramp; times
(1 - cell loss) in [0, 1]. So d(t) lies in [-1, (k - 1) / r] for every t: a width of 1 + (k - 1) / r <= 3.
The hard threshold (r -> 1: a class counts only from k rows, SafePub's granularity) has width k; the
ramp trades a little bias (classes a little below k count in part, though the release suppresses them) for
a calibration k / 3 times finer. The discernibility and class-count bounds are SafePub's (§5.2, §5.4).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon.algorithms import Plan, Task
from polars_anon.algorithms.fulldomain import Lattice
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.privacy.differential import DifferentialPrivacy, Release, search_epsilon_on_sample
from polars_anon.tuplemap import TupleMap

__all__ = ["Scorer", "exponential_mechanism", "lattice_draw", "run", "search"]


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """Draw an index with probability proportional to exp(ε · score / 2); scores already divided by their
    calibration Δu (:class:`Scorer`). Returns the index and the probabilities.

    >>> i, p = exponential_mechanism(np.array([0.0, 2.0]), 1.0, np.random.default_rng(0))
    >>> round(float(p[1] / p[0]), 6) == round(float(np.exp(1.0)), 6)
    True
    """
    logits = 0.5 * epsilon * np.asarray(scores, dtype=np.float64)
    weights = np.exp(logits - logits.max())
    p = weights / weights.sum()
    index = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))
    return min(index, len(p) - 1), p


RAMP = 0.5
"""The loss utility's ramp r as a share of k - 1 (at least 1): a class of s rows counts
clip((s - k + r) / r, 0, 1) of its rows as kept (module docstring)."""
LATTICE_DRAW_MAX = 20_000
"""Lattices of at most this many vectors are drawn from whole; larger ones are walked (module docstring)."""
FINAL_SHARE = 0.9
"""In a walk, the share of ε1 spent on the final draw (the rest is split evenly over the steps)."""


class Scorer:
    """The utilities of level vectors on a sample's class aggregates, divided by their calibration Δu."""

    def __init__(self, task: Task, utility: str, k: int, n_rows: int) -> None:
        self.lattice = Lattice(task)
        self.utility, self.k, self.n_rows = utility, k, n_rows
        self.size = self.lattice.size_weights
        self._cell_cache: dict[tuple[int, int], np.ndarray] = {}
        self.share: list[np.ndarray] = []
        """Per qid: the cell loss of each node id, (leaves - 1) / (leaves of the hierarchy - 1)."""
        for h in self.lattice.hs:
            leaves = h.leaves.astype(np.float64)
            self.share.append((leaves - 1) / max(h.n_leaves - 1, 1))
        self.ramp = max((k - 1) * RAMP, 1.0)
        """The loss utility's r: classes of k - r to k rows count in part."""
        self.sample_only = utility == "loss"
        """Whether the draw depends on the sample alone: the loss's n shifts every vector's utility alike, while
        discernibility and the class count weigh n (the input's rows) against the sample, so only the loss's search
        is an algorithm on the sample that amplification by sampling applies to."""
        if utility == "loss":
            self.sensitivity = (1.0 + (k - 1) / self.ramp) / 2
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
        """The utility u (not divided by the calibration), from the classes of `vector` (a tuple, rows of each)."""
        found = self.lattice.evaluate(np.asarray(vector, dtype=np.int64))
        rows = found.rows
        if self.utility == "loss":
            r = self.ramp
            cells = np.zeros(len(rows))
            for j, level in enumerate(vector):
                cells += self._cells(j, int(level))[found.rep]
            cells /= max(len(vector), 1)
            counted = rows * np.clip((rows - self.k + r) / r, 0.0, 1.0)
            return -(self.n_rows - float((counted * (1.0 - cells)).sum()))
        kept_rows = rows[rows >= self.k]
        not_kept = self.n_rows - float(kept_rows.sum())
        if self.utility == "discernibility":
            return -(float((kept_rows**2).sum()) + self.n_rows * not_kept)
        return float(len(kept_rows)) + (1.0 if not_kept > 0 else 0.0)

    def cells(self, vector: Sequence[int]) -> np.ndarray:
        """Per tuple, its average cell loss at `vector`."""
        cells = np.zeros(len(self.size))
        for j, level in enumerate(vector):
            cells += self._cells(j, int(level))  # no BLAS dot: its threads spin on a busy machine
        return cells / max(len(vector), 1)

    def cost(self, vector: Sequence[int], kept: np.ndarray) -> float:
        """Sum over the input's rows of their average cell loss (1 for a row suppressed or not sampled)."""
        weights = np.where(kept, self.size, 0.0)
        return float((weights * self.cells(vector)).sum()) + (self.n_rows - float(weights.sum()))

    def _cells(self, j: int, level: int) -> np.ndarray:
        """Per tuple, the cell loss of qid `j` at `level` (computed once per qid and level)."""
        found = self._cell_cache.get((j, level))
        if found is None:
            found = self._cell_cache[(j, level)] = self.lattice.nodes[j].gather(self.share[j], level)
        return found

    def score(self, vector: Sequence[int]) -> float:
        """u / Δu: what the exponential mechanism weighs."""
        return self.raw(vector) / self.sensitivity

    def loss(self, vector: Sequence[int]) -> float:
        """The average cell loss over the whole input (rows not sampled or suppressed count 1): in [0, 1]."""
        _, _, kept = self.kept(vector)
        return self.cost(vector, kept) / max(self.n_rows, 1)


def lattice_draw(scorer: Scorer, epsilon: float, rng: np.random.Generator) -> tuple[tuple[int, ...], dict[str, Any]]:
    """One draw of the exponential mechanism over every vector of the lattice, spending `epsilon`."""
    vectors = list(itertools.product(*(range(h) for h in scorer.lattice.heights)))
    scores = np.array([scorer.score(v) for v in vectors])
    index, _ = exponential_mechanism(scores, epsilon, rng)
    facts = {"draw": "lattice", "steps_taken": 0, "evaluated_vectors": len(vectors), "epsilon_final": epsilon}
    return vectors[index], facts


def search(
    scorer: Scorer, epsilon: float, steps: int, rng: np.random.Generator
) -> tuple[tuple[int, ...], dict[str, Any], float]:
    """SafePub's walk from the top of the lattice, spending at most `epsilon` on its sample, the release drawn from
    the vectors it evaluated (module docstring); returns the vector, the facts and the ε spent."""
    heights = scorer.lattice.heights
    top = tuple(h - 1 for h in heights)
    final_eps = epsilon * FINAL_SHARE
    step_eps = (epsilon - final_eps) / steps
    seen: dict[tuple[int, ...], float] = {top: scorer.score(top)}
    candidates: dict[tuple[int, ...], float] = {}
    pivot, taken = top, 0
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
        taken += 1
    pool = list(seen)
    index, _ = exponential_mechanism(np.array([seen[v] for v in pool]), final_eps, rng)
    facts = {
        "draw": "walk",
        "steps_taken": taken,
        "evaluated_vectors": len(seen),
        "epsilon_per_step": step_eps,
        "epsilon_final": final_eps,
    }
    return pool[index], facts, taken * step_eps + final_eps


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


def choose(
    scorer: Scorer, model: DifferentialPrivacy, beta: float | None, rng: np.random.Generator
) -> tuple[tuple[int, ...], dict[str, Any]]:
    """The searched vector and the search's accounting: `scorer` on the search's own β-sample (`beta`), or on the
    released sample (`beta` None); amplified by sampling only on its own sample and for the loss."""
    sample = "released" if beta is None else "independent"
    budget = model.epsilon_search
    if not scorer.sample_only:
        beta = None  # the draw reads n too: no amplification (an ε_search draw on any sample is ε_search-private)
    on_sample = budget if beta is None else search_epsilon_on_sample(budget, beta)
    if math.prod(scorer.lattice.heights) <= LATTICE_DRAW_MAX:
        vector, facts = lattice_draw(scorer, on_sample, rng)
        spent = on_sample
    else:
        vector, facts, spent = search(scorer, on_sample, model.steps, rng)
    spent_input = spent if beta is None else math.log1p(beta * math.expm1(spent))
    facts |= {
        "search_sample": sample,
        "epsilon_search_on_sample": on_sample,
        "epsilon_search_spent": min(spent_input, budget),
    }
    return vector, facts


def run(task: Task, model: DifferentialPrivacy, search_aggregates: pl.DataFrame | None = None) -> Plan:
    """The release's plan on the sample's aggregates: the transformation (given or searched on
    `search_aggregates`, the search sample's class aggregates; None: on `task`'s), classes below k suppressed;
    ``details["differential_privacy"]`` holds the accounting for the report."""
    release: Release | None = model.release
    if release is None:
        raise ValueError("differential-privacy: the model was not prepared for a run (DifferentialPrivacy.prepared)")
    k = task.k
    scorer = Scorer(task, model.utility, k, release.n_rows)
    rng = np.random.default_rng(release.search_seed)
    if model.transformation is not None:
        vector, facts = _given(task, model.transformation), {}
    else:
        if search_aggregates is None:
            vector, facts = choose(scorer, model, None, rng)
        else:
            searched = Scorer(Task(search_aggregates, task.qids, task.hierarchies, k), model.utility, k, release.n_rows)
            vector, facts = choose(searched, model, release.beta, rng)
    _, _, kept = scorer.kept(vector)
    sampled = int(scorer.size.sum())
    kept_rows = int(scorer.size[kept].sum())
    if kept_rows == 0:
        raise InfeasibleError(
            f"differential-privacy (epsilon={model.epsilon!r}, delta={model.delta!r}): no class of the sample "
            f"({sampled:,} of {release.n_rows:,} rows, beta={release.beta:.4f}) reaches k={k} at the "
            f"transformation {dict(zip(task.qids, vector))}; nothing would be published: {model.advice(k)}"
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
        **({"k_asked": release.k_asked} if release.k_asked is not None else {}),
        "data_dependent": model.data_dependent,
        "utility": model.utility,
        "sensitivity": scorer.sensitivity,
        "steps": model.steps if facts.get("draw") == "walk" else 0,
        "transformation": levels,
        "utility_value": scorer.raw(vector),
        "loss_whole_table": scorer.loss(vector),
        "seed": model.describe_seed(),
        "n_rows": release.n_rows,
        "sampled_rows": sampled,
        "not_sampled_rows": release.n_rows - sampled,
        "suppressed_rows": sampled - kept_rows,
        "published_rows": kept_rows,
        "guarantee": (
            f"({model.epsilon:g}, {model.delta:g})-differential privacy for the whole published table, every column "
            f"of which is a quasi-identifier: rows sampled with probability {release.beta:.6f}, generalized to "
            f"{levels} by the hierarchies given (which must not be built from the data), classes below {k} rows "
            "suppressed; "
            "this report is for the data holder: its exact figures of the input (n_rows, sampled_rows, "
            "suppressed_rows, utility_value, loss_whole_table, the risk and metrics) are not covered by epsilon, and "
            "it must not be published with the table"
        ),
    }
    # the report's "metric" is what was optimized: no metric of the registry (the model's utility instead)
    return Plan(tmap, {"metric": None, "levels": levels, "differential_privacy": accounting})
