"""Local recoding by top-down specialization on the hierarchies, with the leftovers re-anonymized.

``method="topdown"`` publishes every class as hierarchy nodes (the lowest common
ancestor of its values on each quasi-identifier), like greedy, but builds the classes
from the top: every class boundary is a hierarchy boundary.

1. **Specialize.** Every tuple starts in one class. A class is split on the children
   of its node on one attribute: each child subtree holding k rows (:meth:`_Rule.ok`)
   becomes a class; the children below k together form one more class at the
   parent node when they hold k rows, and otherwise are *set aside*. The attribute
   is the one whose split scores most: the gain on that attribute, that is
   ``sum(size x loss(node))`` over the parts against ``size x loss(class node)``
   (set-aside rows counted at the node of their remainder), divided by ``H ** b``,
   H the entropy of the part sizes (a gain ratio: b > 0 prefers splits that cut off
   a few large parts over many-way ones, which keeps rows together for later
   splits). Steps 1 to 3 run once per balance b tried (option ``search``: by k, or every
   one of :data:`SPLIT_BALANCES`; with privacy models once per balance and set-aside
   penalty of :data:`ASIDE_PENALTIES`),
   steps 4 to 6 on the candidates within :data:`IMPROVE_MARGIN_K` (with privacy
   models :data:`IMPROVE_MARGIN`) of the least cost, and the partition that costs
   least after step 6 is kept. The candidates are built one after the other (with privacy
   models each penalty's first balance, then the penalties in the order of those costs), and a
   build stops as soon as the classes its passes placed cost more than the margin above the
   least cost so far: classes never lose rows after their pass and step 3 only merges classes
   (a union costs at least its parts) or suppresses rows, so that candidate would not have been
   finished, and the partition kept is the same (on Adult with 2-diversity, k = 2-100, the
   three penalty-2 builds stopped before step 3). A penalty whose first build stops is not
   built with the other balances (a rule from measurements, not a bound: :func:`_candidates`).
   A balance may be a pair: ``(0.25, 0)`` splits the first pass with b = 0.25 (that pass
   is shared with the candidate b = 0.25) and step 2's re-anonymizations with b = 0 (on
   cup at k = 100, 0.1785 after step 4 against 0.1812 with the other three balances). On Adult (8 qids)
   b = 0.25 gives 0.0747 / 0.1486 / 0.1918 at k = 10 / 50 / 100 against
   0.0755 / 0.1518 / 0.1940 with b = 0, and b = 0.5 gives 0.1906 at k = 100; b = 0
   wins on mach2019_int at k = 2 (0.1552 against 0.1574); which b wins varies with
   the data and k. With privacy models a set-aside row is priced above its
   node: at its node plus p times the rest of the way to the root on that
   attribute (p = 2: beyond the root, as a suppressed row costs every attribute).
   Rows that fail the models are set aside, and without the penalty the split that
   sets many of them aside looks free; with it the splits keep classes that pass.
   On Adult with 0.2-closeness on ``occupation`` (equal distance, k = 2 to 100) the
   loss fell from 0.460-0.515 (p = 0 only) to 0.432-0.438. Other attributes are
   not priced: on Adult, pricing the parts' exact lowest common ancestors on every
   attribute gives a higher final loss (0.054 / 0.079 / 0.199 against
   0.052 / 0.076 / 0.195 at k = 5 / 10 / 100), because it favours splits that
   tighten attributes by accident over the ones that open a hierarchy level.
   Classes split breadth-first, all at once, until no split lowers the loss. Ties go
   to the earlier quasi-identifier.
2. **Re-anonymize what was set aside.** The rows set aside (the rare values of
   each branch) are anonymized again from the roots by step 1, together; their
   classes are new classes (published tuples may equal earlier ones: classes only
   grow). This repeats while at least k rows are set aside, at most
   :data:`MAX_ROUNDS` times; the last round sets nothing aside (children below k
   then join the smallest child that holds k rows).
3. **Repair.** Rows that never formed a class (fewer than k left) are merged into
   the classes by the greedy merge loop of :mod:`polars_anon.algorithms.greedy`
   (each leftover offered its :data:`_NEAREST` cheapest classes, each class given as
   its published tuple, the merge cost exactly this loss), or suppressed when
   ``max_suppressed`` allows and that costs less. Without privacy models and with at
   most :data:`_JOIN_ALONE` leftover tuples, each instead joins the class whose cost
   it raises least, one after the other (no greedy loop). With privacy models the
   choice is per merged class: a class that took leftovers goes back to the classes
   it was made of, its leftovers suppressed, when that costs less.
4. **Improve** (``improve=True``, the default). *Re-split*: each class is paired with
   the class it joins at least cost (cheapest unions first, each class in one pair)
   and the pair is specialized again by step 1 from its lowest common ancestors
   (nothing set aside); the new classes replace the pair when they cost less, while
   some pair improves (up to :data:`MAX_RESPLIT_PASSES` passes, only up to
   :data:`MAX_RESPLIT_CLASSES` classes: it prices every pair). *Move*: a tuple whose
   removal lets its class (still k rows) be published lower goes to the class it
   joins at least added cost when that is below the gain; each pass takes the best
   moves first, each class the source or target of one move (costs stay exact),
   pricing at most :data:`MAX_MOVE_CELLS` (tuple, class, qid) cells, best-gain tuples
   first, up to :data:`MAX_MOVE_PASSES` passes; after the first pass only the classes a
   move touched are priced again (the 15M-row register job: 31 CPU s against 43 when
   every pass priced every class). Both keep every class passing
   :meth:`_Rule.ok`. On Adult they lower the loss by 0.4 % to 0.5 % (k = 5 / 100,
   0.0514 / 0.1953 to 0.0512 / 0.1943) for about twice the time; dissolving a whole
   class into its neighbours was measured and gained under 0.03 %.
5. **Unblock** (only with privacy models and ``max_suppressed`` > 0): every class is
   specialized again by step 1 with children that fail the models set aside; a class
   takes its new classes and its set-aside rows are suppressed when that costs less,
   best saving per suppressed row first, within the budget.
6. **Suppress outliers** (only with ``max_suppressed`` > 0): a tuple whose removal
   lets the rest of its class (still k rows) be published lower, by more than
   the tuple's own cost as a suppressed row (every cell at the root, as the loss
   counts it), is suppressed, best first, within the budget.
7. **Regroup late classes** (``improve=True``; on the partition kept only,
   :func:`_regroup_late`): a *late* class, all of whose rows were placed by
   pass :data:`LATE_PASS` of step 2 or later or are leftovers (rare tuples grouped
   among themselves), is specialized again by step 1 together with the g - 1 classes
   it joins at least cost (g = 2, 3, 4, 5, 6, 8, one size per pass, at most
   :data:`MAX_REGROUP_PASSES` passes); the new classes replace the group when they
   cost less. Those rows are where topdown lost to ARX's local recoding on cup:
   at k = 50, scored per row, ours was below ARX on the rows placed by passes 1 and 2
   (0.0842 and 0.0354 of the mean cell loss, against ARX's 0.0861 and 0.0359 on the
   same rows) and above on the rest (0.0261 against 0.0227; at k = 100 0.0297 against
   0.0260), which ARX mixes with common tuples (3,650 of the 5,253 such rows at k = 50
   sit in ARX classes where they are under three quarters of the rows; in ours, 21).
   Regrouping before the move pass instead of after step 6, on every candidate, gained
   little more (cup k = 50: 0.14440 against 0.14452) for up to three times the CPU.
   With privacy models every class counts as late (they are few: 208 on Adult with
   2-diversity at k = 100; every new class passes :meth:`_Rule.ok`, or the group stays), and
   step 4's move pass runs once more after the regrouping (steps 5 and 6 changed the classes
   after step 4's). On Adult with ``occupation`` sensitive, k = 2-100, that lowers the loss in
   all 18 cells of 2-diversity and 0.2-closeness (equal and hierarchical distance), e.g.
   2-diversity at k = 100 from 0.125007 / 0.130567 (loss / cell NCP) to 0.124861 / 0.130422,
   below ARX's local recoding under both (0.125775 / 0.130506); the move pass alone gave
   0.124887 / 0.130449, the regrouping alone 0.124980 / 0.130541.

With privacy models the search may miss a publication: step 1 splits a class only into parts that pass
:meth:`_Rule.ok`, step 2 restarts the set-aside rows from the roots and step 5 specializes only the classes formed,
so a class that lies only below parts failing the models is never formed (entropy 2-diversity over two values,
met only where they are equally frequent). The refusal says so (:data:`MISSES`); ``global_start`` starts from the
best full-domain node too (``benchmarks/results/topdown_misses.md``: of 1,000 random tables, fulldomain published
and the roots alone did not on 9, and with ``global_start`` topdown published on all 9).

The loss is the report's ``loss``: the mean over quasi-identifier cells of
``(nl(v) - 1) / (nl(root) - 1)`` (:func:`polars_anon.metrics.cells.loss_per_node`),
a suppressed row counting 1 per cell. Directions measured and left out: without
privacy models, giving set-aside rows a higher estimated cost (x1.5 to x5, or +0.05
to +1 per row) moved the Adult loss by at most 0.001 either way; starting step 1
from the classes of the best full-domain node *instead of* the roots (fulldomain's
search, failing classes set aside) gave 0.527 against 0.460 with 0.2-closeness at
k = 5 (as one more start, kept when it costs less, it is the option ``global_start``);
re-splitting classes of 2k rows or more has nothing to work on (on Adult at k=10,
0.5 % of the loss sits in such classes, each a single tuple); greedy over the set-aside
rows instead of step 2 is worse on Adult from k=5 on (0.056 against 0.051 at k=5 after one pass).

Everything runs over the class aggregates (one row per distinct tuple and its
size) in NumPy. A round groups the open tuples by (class, child) with dense
counts, per attribute; it skips an attribute for a class when no child can hold k
rows (then none can in any sub-class: the attribute is dead below) or when even
publishing every part at a leaf would not beat the best split found. The rule
that says whether a set of tuples may be published as a class is :meth:`_Rule.ok`,
and every split, merge and suppression asks it. A small round (at most :data:`STACKED_CELLS`
open tuple x attribute cells) prices every attribute in one pass instead (:func:`_price_all`),
without the second skip (a pair it would skip cannot win) and with the same splits.

Time: step 1's pricing and boxes take most of the CPU, then the move pass and, with privacy
models, the greedy repair of step 3. The whole ``pa.anonymize(...).collect()`` per run, in CPU
seconds (``benchmarks/results/local_recoding.md``, Nov 26 2026, a quiet machine, load 0.5-1.0):
Adult (8 qids) without a model 0.67-0.85 at k = 2-100, with 2-diversity 0.77-1.08, with
0.2-closeness 1.34-1.52 (equal distance) and 1.73-1.91 (hierarchical); FARS 0.34-0.53; cup
2.06-2.83; fars_int 1.40-1.61; adult_full_hierarchies (13 qids) 1.83-2.25; mach2019_int (16 qids)
3.56-4.70. The speed-ups of that day kept every output (``benchmarks/results/topdown_profile.md``:
topdown alone at 0.59-0.96 of before on 14 cells, 0.65-0.90 with 0.2-closeness in a third part,
the same hashes); step 7 with privacy models added 2.6-5.6 % (``docs/methods/topdown.md``). Pricing the small
rounds on every attribute at once took topdown to 0.81-0.99 of before with privacy models, 0.82-0.94 on FARS and
fars_int, and left Adult without a model and cup within the noise (the same outputs; fifth part there).

Step 7 and the balance ``(0.25, 0)`` lower cup at k = 50 / 100 from 0.14571 / 0.18118 to
0.14452 / 0.17829 (ARX's local recoding 0.14462 / 0.17844; cell NCP 0.14406 / 0.17785 against
0.14418 / 0.17800) and lower the loss in every cell of Adult, FARS and cup at k = 2-100 without a
privacy model (``docs/methods/topdown.md``, "Regrouping").

Options
-------
max_suppressed : int >= 0 (default 0)
    Rows that may be removed (steps 3, 5 and 6), each counted as all roots in the loss.
improve : bool (default True)
    Run step 4 (re-split and move) and step 7 (regroup late classes; with privacy models every
    class, then move once more).
search : "all" | "auto" | "one" (default "auto")
    The candidates of steps 1-3 (:func:`search_balances`): ``"all"``: every balance of :data:`SPLIT_BALANCES` (with
    privacy models :data:`MODEL_BALANCES` x :data:`ASIDE_PENALTIES`); ``"one"``: :data:`ONE_BALANCE` alone (with
    privacy models once per penalty); ``"auto"``: b = 0 alone up to k = :data:`AUTO_ZERO_K`, the two balances of
    :data:`AUTO_BALANCES` up to k = :data:`AUTO_ONE_K` (with privacy models each once per penalty), ``"all"`` above.
    Fewer candidates cost less CPU and may lose more: ``"auto"`` lost at or below ARX's local recoding in all 37
    cells of the local-recoding bench where ARX gives a result, ``"one"`` not (``benchmarks/results/
    topdown_profile.md``, twelfth to fourteenth parts).
global_start : bool (default False)
    Also run steps 1-3 once per balance from the classes of the best full-domain node
    (:func:`global_start`: fulldomain's optimum of this loss with the same budget, its
    suppressed tuples set aside to step 2), as ARX's local recoding starts from its best
    global node; a partition built so is kept only when it costs less. Measured without
    privacy models (load 9-16, Nov 26 2026): it lowers the loss on cup at k = 50 / 100
    (0.1457 / 0.1812 to 0.1450 / 0.1790; ARX 0.1446 / 0.1784) and on Adult at k = 10-100
    (0.1906 to 0.1887 at k = 100), and changes nothing at cup and Adult k = 2 and 5, but
    takes 2-4 times the CPU seconds (Adult 1.0-1.4 to 2.7-4.0 s, cup 4.2-7.1 to 7.5-10.0 s,
    fars_int 2.1-3.5 to 6.3-10.2 s): the full-domain search, then three more builds. On a
    large lattice the search dominates: adult_full_hierarchies (13 qids) at k = 2 took
    207.8 CPU s against 3.5, for the same loss.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from polars_anon._validate import check_k
from polars_anon.algorithms import Plan, Task, fulldomain, register_method
from polars_anon.algorithms.greedy import cost_groups, greedy_partition, root_weights
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.cells import loss_per_node
from polars_anon.options import check_max_suppressed
from polars_anon.privacy.constraints import Constraints, Triplets
from polars_anon.privacy.counts import SensitiveCounts
from polars_anon.tuplemap import TupleMap

__all__ = ["MAX_ROUNDS", "TopdownOptions", "TopdownResult", "global_start", "search_balances", "topdown_partition"]

MAX_ROUNDS = 32
"""Re-anonymizations of the set-aside rows (step 2) before the last round, which sets nothing aside."""
_TABLE_LEAVES = 2048
"""Up to this many leaves an attribute keeps a leaf x leaf table of lowest common ancestors (16 MB at most)."""
_COST_TABLE_LEAVES = 1024
"""Up to this many leaves an attribute also keeps the loss of each leaf pair's lowest common ancestor (8 MB)."""
_NONE = np.iinfo(np.int64).max
Balance = float | tuple[float, float]
"""A split balance b for every pass of steps 1-2, or ``(first, later)``: b of the first pass, b of the others."""
SPLIT_BALANCES: tuple[Balance, ...] = (0.0, 0.25, 0.5, (0.25, 0.0))
"""Step 1 runs once per exponent b (each run whole, steps 1-3); the partition that costs least is kept.

A split is chosen by its gain divided by ``H ** b``, H the entropy of its part sizes
(C4.5's gain ratio when b = 1): b > 0 prefers splits that cut off a few large parts
over many-way ones, which keep rows together for later splits."""
Search = Literal["all", "auto", "one"]
"""Values of the option ``search`` (:func:`search_balances`)."""
ONE_BALANCE = 0.25
"""The split balance of ``search="one"``.

Alone it took 0.44-0.69 of every balance's CPU on the local-recoding bench's cells at k <= 50, with the same loss or
up to 1 % more without a model and with 2-diversity, but lost more than ARX's local recoding with 0.2-closeness (equal
distance) at k = 2-20 (0.4549 against 0.4486-0.4503; every balance 0.4358) and at k = 100 (0.4578 / 0.4627 against
0.4563 / 0.4598), on cup at k = 50 and 100 (0.1460 against 0.1446; 0.1814 against 0.1784) and with 2-diversity at
k = 100 (cell NCP 0.13116 against 0.1305; ``benchmarks/results/topdown_profile.md``, seventh, twelfth and thirteenth
parts; the k = 100 cells by review25, from ARX's cached outputs)."""
AUTO_ZERO_K = 20
"""``search="auto"`` builds b = 0 alone up to this k (with privacy models once per penalty).

On the local-recoding bench's 37 cells with an ARX result, b = 0 alone lost at or below ARX's local recoding under
both scorers in every cell at k <= 20 (the same as every balance with 0.2-closeness, equal distance, and on cup at
k = 2, 5 and 20), but not at k = 50 (Adult without a model) nor 100 (Adult with and without 2-diversity, cup); b = 0.25
alone lost more than ARX with 0.2-closeness (equal distance) at k = 2-20 (``benchmarks/results/topdown_profile.md``,
fourteenth part). At small k the classes are small and the order of the splits matters less: the balance, which keeps
rows together for later splits, gained little there."""
AUTO_BALANCES: tuple[Balance, ...] = (0.0, ONE_BALANCE)
"""The split balances of ``search="auto"`` above k = :data:`AUTO_ZERO_K` up to k = :data:`AUTO_ONE_K`.

Each alone lost more than ARX in some cell of the local-recoding bench at k = 50 (b = 0: Adult without a model; b =
0.25: cup), the two together in none (``benchmarks/results/topdown_profile.md``, twelfth to fourteenth parts)."""
AUTO_ONE_K = 50
"""``search="auto"`` builds :data:`AUTO_BALANCES` up to this k, every balance above."""
_BOUND_SLACK = 1e-9
"""A build is stopped only when its cost so far is this fraction above the bound (sums in another order)."""
MODEL_BALANCES = (0.0, 0.25, 0.5)
"""The split balances tried with privacy models (their outcome varies more with the split order)."""
IMPROVE_MARGIN = 0.005
"""Steps 4-6 run only on the candidates (balance, penalty) whose cost after step 3 is within this fraction of the
least. Step 4 lowers a candidate by 0.1-0.5 % on Adult and FARS (1-2 % with 2-diversity) and reordered only
candidates within 0.05 % of each other after step 3 (Adult, 2-diversity, k = 20)."""
IMPROVE_MARGIN_K = 0.001
"""Without privacy models, steps 4-6 run only on the candidates within this fraction of the least cost after step 3.

On Adult, FARS and cup at k = 2 to 100 the partition kept is the same as with :data:`IMPROVE_MARGIN` (measured
with the split balances of :data:`SPLIT_BALANCES` before the regrouping of step 7), for one or two finishes
fewer on cup."""
ASIDE_PENALTIES = (0.5, 2.0)
"""With privacy models, step 1 runs once per set-aside penalty p (and per balance): a row set aside is priced
at its node plus p times the rest of the way to the root (p > 1: beyond it, as a suppressed row costs every
attribute), which steers the splits away from parts that fail the models. p = 0 (no penalty) never won where
it was measured on Adult (``occupation``: 2-diversity at k = 20 and 100, 0.2-closeness at k = 5, 50, 100 with equal
and k = 5, 100 with hierarchical distance; ``salary-class``: 0.2-closeness at k = 5), where its runs were the
slowest, and is not tried."""


@dataclass(frozen=True)
class _Rule:
    """Whether sets of tuples may be published as classes: the one rule behind every split, merge and suppression.

    k rows and, with privacy models, every model of ``task.constraints`` and the table
    models' floor (:class:`~polars_anon.privacy.constraints.Constraints`).
    """

    k: int
    constraints: Constraints

    def ok(
        self,
        sizes: np.ndarray,
        rows: np.ndarray,
        part: np.ndarray | Callable[[], np.ndarray],
        triplets: Callable[[], Triplets] | None = None,
    ) -> np.ndarray:
        """Per part, may it be a class?

        `sizes`: its rows; tuple ``rows[i]`` is in part ``part[i]`` (``len(sizes)``: none).

        `part` may be a function returning that array (built only when a model needs it).
        `triplets`: a function returning ``constraints.triplets(rows)`` (kept by the caller for many calls over
        the same rows); without it only the rows in a part are read.

        >>> _Rule(3, Constraints(np.ones(4), 3)).ok(np.array([2, 3, 5]), np.arange(4), np.array([0, 1, 2, 2])).tolist()
        [False, True, True]
        """
        good = sizes >= self.k
        if self.constraints.k_only:
            return good
        part = part() if callable(part) else part
        inside = part < len(sizes)
        # a quarter of the tuples or more judged: the kept triplets; fewer: the judged rows' own
        if triplets is not None and 4 * int(np.count_nonzero(inside)) >= len(part):
            view = self.constraints.view_parts(rows, part, len(sizes), triplets())
        else:
            at = _nonzero(inside)  # index arrays: a boolean index costs more here
            view = self.constraints.view_rows(rows[at], part[at], len(sizes))
        return good & self.constraints.ok(view) & (view.size >= self.constraints.floor)


class _Axis:
    """One quasi-identifier as arrays: each tuple's value as its leaf range in depth-first order.

    A set of values has as lowest common ancestor the one of its leftmost and
    rightmost leaves, so a class is described by ``lo`` / ``hi`` (leaf positions).
    """

    def __init__(self, h: Hierarchy, values: pl.Series) -> None:
        self.h = h
        self.value = h.ids_of(values)
        order = h.nodes.select("order_lo", "order_hi")
        self.lo = order["order_lo"].to_numpy()[self.value]
        self.hi = order["order_hi"].to_numpy()[self.value]
        if np.array_equal(self.lo, self.hi):  # every tuple at a leaf: one array, gathered once (:func:`_ranges_of`)
            self.hi = self.lo
        self.depth = h.depth
        self.loss = loss_per_node(h)
        self.leaf_node = _nonzero(h.is_leaf)
        self.is_leaf = h.is_leaf
        # children of a node: its fanout, and each node's rank among its siblings (preorder)
        self.fanout = np.bincount(h.parent[1:], minlength=h.n_nodes)
        rank = np.zeros(h.n_nodes, dtype=np.int64)
        by_parent = np.argsort(h.parent[1:], kind="stable") + 1
        first = np.concatenate([[0], self.fanout.cumsum()])[h.parent[by_parent]]
        rank[by_parent] = np.arange(len(by_parent)) - first
        anc = h.ancestors_by_depth
        # per tuple and depth d: 1 + the sibling rank of its ancestor at depth d (0 above its own depth; one
        # more column of 0 for the depth below the deepest leaf)
        self.width = anc.shape[1] + 1
        small = np.int16 if self.fanout.max() < np.iinfo(np.int16).max else np.int32
        slots = np.pad(np.where(anc >= 0, rank[anc] + 1, 0).astype(small), ((0, 0), (0, 1)))
        self.slot = slots[self.value].ravel()
        self.table = None
        self.cost_table = None
        self.n_leaves = len(self.leaf_node)  # the tables flat: leaf pair (lo, hi) at lo * n_leaves + hi
        # where node() has no table: per depth, each leaf's ancestor and the last leaf under it (-1 below the leaf's
        # own depth), and per leaf and depth that ancestor and its loss, flat (empty where node() has a table)
        leaf_anc = anc[self.leaf_node] if len(self.leaf_node) > _TABLE_LEAVES else anc[:0]
        self.anc_depths = leaf_anc.shape[1]
        self.anc_flat = leaf_anc.ravel()
        self.anc_loss_flat = self.loss[np.maximum(self.anc_flat, 0)]
        order_hi = order["order_hi"].to_numpy()
        self.anc_last = [np.where(leaf_anc[:, d] >= 0, order_hi[leaf_anc[:, d]], -1) for d in range(self.anc_depths)]
        if len(self.leaf_node) <= _TABLE_LEAVES:
            self.table = h.leaf_lca_matrix(max_leaves=_TABLE_LEAVES).astype(np.int32).ravel()
            if len(self.leaf_node) <= _COST_TABLE_LEAVES:
                self.cost_table = self.loss[self.table]

    def node(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The lowest common ancestor of the leaves at positions lo..hi."""
        if self.table is not None:
            return self.table[lo * self.n_leaves + hi].astype(np.int64)
        return self.anc_flat[self._at(lo, hi)]

    def _at(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Where node() has no table: the flat position (leaf lo, depth) of the lowest common ancestor (lo <= hi).

        The ancestors of leaf lo, root first, hold leaf hi down to the lowest common
        ancestor and not below (nor below leaf lo's own depth): their count is its depth + 1.
        """
        held = np.zeros(len(lo), dtype=np.int64)
        for last in self.anc_last[1:]:  # the root holds every leaf
            held += last[lo] >= hi
        held += lo * self.anc_depths
        return held

    def cost(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if self.cost_table is not None:
            return self.cost_table[lo * self.n_leaves + hi]
        if self.table is not None:
            return self.loss[self.table[lo * self.n_leaves + hi]]
        return self.anc_loss_flat[self._at(lo, hi)]


class _Stack:
    """The attributes' hierarchies side by side, so one NumPy call serves every attribute of a pricing round.

    Node ids of attribute j are offset by ``node_base[j]`` (``loss``, ``is_leaf``, ``fanout``, ``below`` are the
    concatenated per-node arrays), its slots (:attr:`_Axis.slot`) by ``slot_base[j]``, and its leaf-pair tables by
    ``table_base[j]`` (attributes without a table are walked one by one, :meth:`_Axis.node`).
    """

    def __init__(self, axes: Sequence[_Axis]) -> None:
        self.m = len(axes)
        sizes = [len(ax.loss) for ax in axes]
        self.node_base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.loss = np.concatenate([ax.loss for ax in axes])
        self.is_leaf = np.concatenate([ax.is_leaf for ax in axes])
        self.fanout = np.concatenate([ax.fanout for ax in axes])
        # per node, the slot column of its children (its depth + 1; :attr:`_Axis.slot`)
        self.below = np.concatenate([ax.depth for ax in axes]).astype(np.int64) + 1
        self.slot = np.concatenate([ax.slot.astype(np.int32) for ax in axes])
        self.slot_base = np.concatenate([[0], np.cumsum([len(ax.slot) for ax in axes])[:-1]]).astype(np.int64)
        self.width = np.array([ax.width for ax in axes], dtype=np.int64)
        # per aggregate row (rows) and attribute (columns): its leaf range
        self.lo = np.stack([ax.lo for ax in axes], axis=1).astype(np.int64) if axes else np.zeros((0, 0), np.int64)
        self.hi = self.lo
        if not all(ax.hi is ax.lo for ax in axes):  # some tuple above a leaf: its own array
            self.hi = np.stack([ax.hi for ax in axes], axis=1).astype(np.int64)
        self.tabled = np.array([ax.table is not None for ax in axes], dtype=bool)
        tables = [ax.table if ax.table is not None else np.zeros(0, dtype=np.int32) for ax in axes]
        self.table_base = np.concatenate([[0], np.cumsum([len(t) for t in tables])[:-1]]).astype(np.int64)
        self.table = np.concatenate([*tables, np.zeros(1, dtype=np.int32)])  # int32 as the axes', and a placeholder
        self.n_leaves = np.array([ax.n_leaves for ax in axes], dtype=np.int64)
        # the attributes without a leaf table, walked by their own axis
        self.walked = {j: ax for j, ax in enumerate(axes) if ax.table is None}

    @staticmethod
    def nbytes(axes: Sequence[_Axis]) -> int:
        """The bytes a stack of these axes copies: slots (int32), leaf ranges (int64), leaf-pair tables (int32)."""
        return sum(
            4 * len(ax.slot) + 16 * len(ax.lo) + (4 * len(ax.table) if ax.table is not None else 0) for ax in axes
        )

    def node(self, j: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The lowest common ancestor (a stacked node id) of leaves lo..hi of attribute ``j[i]``, per element."""
        at_table = self.table_base[j] + lo * self.n_leaves[j] + hi
        if self.walked:  # the placeholder for the walked attributes (no table), overwritten below
            at_table = np.where(self.tabled[j], at_table, len(self.table) - 1)
        out = self.table[at_table] + self.node_base[j]
        for a, ax in self.walked.items():
            at = _nonzero(j == a)
            if len(at):
                out[at] = ax.node(lo[at], hi[at]) + self.node_base[a]
        return out

    def cost(self, j: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """:meth:`_Axis.cost` of leaves lo..hi of attribute ``j[i]``, per element."""
        return self.loss[self.node(j, lo, hi)]


_STACK_BYTES = 64 << 20
"""A run stacks its axes (:class:`_Stack`) only when the copy takes at most this many bytes (:meth:`_Stack.nbytes`);
above it (millions of distinct tuples, or large leaf-pair tables), every round is priced attribute by attribute."""


class _Axes(list):
    """A run's axes (a list of :class:`_Axis`, one per quasi-identifier) and what is built once from them per run:
    their :class:`_Stack` and greedy's cost tables (:func:`_cost_tables`). Built by :func:`topdown_partition` and
    passed down; a plain list of axes works too, rebuilding these on every call."""

    def __init__(self, axes: Sequence[_Axis]) -> None:
        super().__init__(axes)
        self._stack: _Stack | None = None
        self._stacked = False
        self.tables: list | None = None

    @property
    def stack(self) -> _Stack | None:
        """The :class:`_Stack` of the axes; None when it would take more than :data:`_STACK_BYTES`."""
        if not self._stacked:
            self._stack = _Stack(self) if _Stack.nbytes(self) <= _STACK_BYTES else None
            self._stacked = True
        return self._stack


def _stack(axes: Sequence[_Axis]) -> _Stack | None:
    """The axes' :class:`_Stack` (built once per run when `axes` is the run's :class:`_Axes`), or None."""
    return (axes if isinstance(axes, _Axes) else _Axes(axes)).stack


def _nonzero(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)`` through the array's own methods: the same indices without NumPy's Python wrappers.

    A run calls it (and ``a.take``, ``a.cumsum``, ``a.repeat`` for ``np.take``, ``np.cumsum``, ``np.repeat``)
    thousands of times on small arrays, where the wrappers cost more than the work (about a microsecond a call here).

    >>> _nonzero(np.array([[False, True], [True, False]])).tolist()
    [1, 2]
    """
    return mask.ravel().nonzero()[0]


def _dense(ids: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Renumber ids in [0, n) densely in increasing order: ``(new id per element, count)``."""
    used = np.zeros(n, dtype=bool)
    used[ids] = True
    return (used.cumsum() - 1)[ids], int(used.sum())


@dataclass
class _Open:
    """The open classes of a specialization round."""

    rows: np.ndarray  # aggregate row of each open tuple
    cid: np.ndarray  # its class, 0..C-1
    size: np.ndarray  # (C,) rows per class
    lo: list[np.ndarray]  # per attribute (C,) leftmost leaf
    hi: list[np.ndarray]  # per attribute (C,) rightmost leaf
    dead: np.ndarray  # (C, m) no split on that attribute can ever give a child of k rows
    t_lo: list[np.ndarray]  # per attribute, each open tuple's leftmost leaf (``ax.lo[rows]``)
    t_hi: list[np.ndarray]  # per attribute, each open tuple's rightmost leaf
    weight: np.ndarray  # each open tuple's rows, as float (``size[rows]``)
    least: np.ndarray | None = None  # (C,) the least entropy of a split of each class (_least_entropy), when priced
    least_pow: tuple[float, np.ndarray] | None = None  # (balance, least ** balance), when priced
    triplets: Triplets | None = None  # the models' triplets of the open tuples (Constraints.triplets), when read
    wide: _Wide | None = None  # a small round's leaf ranges side by side, as :func:`_boxes` built them (:func:`_wide`)


@dataclass
class _Wide:
    """A small round's leaf ranges, every attribute not dead in every class (`cols`) side by side (:func:`_wide`)."""

    cols: np.ndarray
    t_lo: np.ndarray  # (T, cols)
    t_hi: np.ndarray
    lo: np.ndarray  # (cols, C)
    hi: np.ndarray


def _boxes(
    axes: Sequence[_Axis], size: np.ndarray, rows: np.ndarray, cid: np.ndarray, dead: np.ndarray | None = None
) -> _Open:
    """Classes from a class id per tuple (ids dense from 0): sizes and leaf ranges.

    An attribute `dead` for every class gets no ranges (leaf 0; step 1 never prices it again).
    """
    n = int(cid.max()) + 1 if len(cid) else 0
    all_dead = np.asarray(dead.all(axis=0)) if dead is not None and n else np.zeros(len(axes), dtype=bool)
    if dead is None:
        dead = np.zeros((n, len(axes)), dtype=bool)
    weight = size[rows].astype(np.float64)
    sizes = np.bincount(cid, weights=weight, minlength=n).astype(np.int64)
    cols = _nonzero(~all_dead)
    st = _stack(axes) if 0 < len(rows) * len(cols) <= STACKED_CELLS else None
    if st is not None:  # a small round: every attribute in one pass
        wide = _wide(st, rows, cid, n, cols)
        lo, hi = [np.zeros(n, dtype=np.int64) for _ in axes], [np.zeros(n, dtype=np.int64) for _ in axes]
        t_lo, t_hi = [rows[:0] for _ in axes], [rows[:0] for _ in axes]
        for k, j in enumerate(cols.tolist()):
            lo[j], hi[j], t_lo[j] = wide.lo[k], wide.hi[k], wide.t_lo[:, k]
            t_hi[j] = t_lo[j] if wide.t_hi is wide.t_lo else wide.t_hi[:, k]
        return _Open(rows, cid, sizes, lo, hi, dead, t_lo, t_hi, weight, wide=wide)
    lo, hi, t_lo, t_hi = [], [], [], []
    for j, ax in enumerate(axes):
        if all_dead[j]:
            t_lo.append(rows[:0])
            t_hi.append(rows[:0])
            lo.append(np.zeros(n, dtype=np.int64))
            hi.append(np.zeros(n, dtype=np.int64))
            continue
        both = _ranges_of(ax.lo, ax.hi, rows)
        t_lo.append(both[0])
        t_hi.append(both[1])
        if n == 1:  # one class (a pass's first round): its range is the tuples' (ufunc.at costs more)
            lo.append(t_lo[-1].min(keepdims=True))
            hi.append(t_hi[-1].max(keepdims=True))
            continue
        lo.append(np.full(n, _NONE, dtype=np.int64))
        np.minimum.at(lo[-1], cid, t_lo[-1])
        hi.append(np.full(n, -1, dtype=np.int64))
        np.maximum.at(hi[-1], cid, t_hi[-1])
    return _Open(rows, cid, sizes, lo, hi, dead, t_lo, t_hi, weight)


def _wide(st: _Stack, rows: np.ndarray, cid: np.ndarray, n: int, cols: np.ndarray) -> _Wide:
    """:func:`_boxes`' leaf ranges of the attributes `cols` in one pass."""
    # np.take of whole rows: the same values as st.lo[rows], several times faster on a 2-D array
    t_lo, t_hi = _ranges_of(st.lo, st.hi, rows)
    if len(cols) < st.m:
        t_lo, t_hi = _ranges_of(t_lo, t_hi, cols, axis=1)
    width = len(cols)
    flat = (cid[:, None] * width + np.arange(width)).ravel()
    lo = np.full(n * width, _NONE, dtype=np.int64)
    np.minimum.at(lo, flat, t_lo.ravel())
    hi = np.full(n * width, -1, dtype=np.int64)
    np.maximum.at(hi, flat, t_hi.ravel())
    return _Wide(cols, t_lo, t_hi, lo.reshape(n, width).T.copy(), hi.reshape(n, width).T.copy())


@dataclass
class _Split:
    """The best split found so far per class: its gain, attribute and, per open tuple, its part (-1: set aside)."""

    gain: np.ndarray
    attr: np.ndarray
    part: np.ndarray
    next_id: int = 0  # part ids of different attributes never meet


@dataclass
class _Pairs:
    """The (attribute, class) pairs priced in a round, attribute first, and their tuples (tuple first)."""

    attr: np.ndarray  # (P,) attribute of each pair
    col: np.ndarray  # (P,) its column in the open classes' arrays (``op.cols``)
    cls: np.ndarray  # (P,) its open class
    node: np.ndarray  # (P,) the class's node on that attribute (a stacked node id, :class:`_Stack`)
    live: np.ndarray  # (C, cols) the pairs as a mask
    mask: np.ndarray  # (T, cols) the same per open tuple (``live[op.cid]``)
    pair: np.ndarray  # (Q,) the pair of each of the pairs' tuples: per open tuple, its live columns in turn
    per_tuple: np.ndarray  # (T,) pairs of each open tuple
    cols: np.ndarray  # the attributes not dead in every open class (the columns)
    lo: np.ndarray  # (Q,) the leaf range of each of the pairs' tuples on the pair's attribute
    hi: np.ndarray
    base: np.ndarray  # (Q,) where its slots start in the stacked slots (:class:`_Stack`)


@dataclass
class _Groups:
    """Tuples grouped by (class or pair, child of its node), contiguous per class or pair (:func:`_layout`)."""

    of_row: np.ndarray  # group of each tuple
    cls: np.ndarray  # class (:func:`_group`) or pair (:func:`_group_all`) of each group
    child: np.ndarray  # False for the group of tuples whose value is the pair's node itself
    size: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray  # first group of each pair


def _group_all(st: _Stack, op: _Open, pairs: _Pairs) -> _Groups:
    """Group the pairs' tuples by (pair, child): slot 0 holds the values equal to the node, slot 1 + r its r-th child.

    An attribute's groups are laid out per pair (one slot per child, empty ones included) when its slots stay
    within a few times its tuples, else only its occupied slots are kept (as when each attribute was grouped
    alone: the empty groups are zeros in the per-pair sums, and the sums' order is kept).
    """
    n_pairs = len(pairs.node)
    span = st.fanout[pairs.node] + 1
    offset = np.zeros(n_pairs + 1, dtype=np.int64)
    span.cumsum(out=offset[1:])
    slot = st.slot.take(pairs.base + st.below[pairs.node].take(pairs.pair))  # .take: as a[idx], faster
    slots = np.bincount(pairs.col, weights=span, minlength=len(pairs.cols))
    tuples = pairs.live.T.astype(np.int64) @ np.bincount(op.cid, minlength=len(op.size))
    dense = (slots <= 4 * tuples + 4096)[pairs.col]  # per pair, as its attribute
    weight = op.weight.repeat(pairs.per_tuple)
    return _fill_groups(*_layout(offset, span, dense, pairs.pair, slot), weight, pairs.lo, pairs.hi)


def _fill_groups(
    of_row: np.ndarray,
    cls: np.ndarray,
    first: np.ndarray,
    g_slot: np.ndarray,
    weight: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> _Groups:
    """The groups of a layout (:func:`_layout`): their rows (`weight` per tuple) and leaf ranges."""
    n_groups = len(cls)
    g_size = np.bincount(of_row, weights=weight, minlength=n_groups).astype(np.int64)
    g_lo = np.full(n_groups, _NONE, dtype=np.int64)
    np.minimum.at(g_lo, of_row, lo)
    g_hi = np.full(n_groups, -1, dtype=np.int64)
    np.maximum.at(g_hi, of_row, hi)
    return _Groups(of_row, cls, g_slot > 0, g_size, g_lo, g_hi, first)


def _layout(
    offset: np.ndarray, span: np.ndarray, dense: np.ndarray, pair: np.ndarray, slot: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The groups of tuples by (pair or class, slot), contiguous per pair, for :func:`_group_all` and :func:`_group`.

    Pair p's slots are ``offset[p]`` to ``offset[p] + span[p] - 1``, tuple i is in pair ``pair[i]`` at slot
    ``slot[i]``. A `dense` pair's groups are all its slots (empty ones included), the others' only their occupied
    slots. Returns (group of each tuple, pair of each group, first group of each pair, slot of each group).
    """
    n_pairs = len(span)
    if dense.all():
        cls = np.arange(n_pairs).repeat(span)
        first = offset[:-1]
        return offset.take(pair) + slot, cls, first, np.arange(len(cls)) - first[cls]
    sparse = _nonzero(~dense[pair])
    key = offset[pair[sparse]] + slot[sparse]
    total = int(offset[-1])
    if total <= 32 * len(key) + 65536:  # the occupied slots by a mark per slot (np.unique sorts)
        used = np.zeros(total, dtype=bool)
        used[key] = True
        keys = _nonzero(used)
        inverse = (used.cumsum() - 1)[key]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
    key_pair = np.searchsorted(offset, keys, side="right") - 1
    per_pair = np.where(dense, span, 0) + np.bincount(key_pair, minlength=n_pairs)
    first = np.zeros(n_pairs, dtype=np.int64)
    per_pair[:-1].cumsum(out=first[1:])
    key_start = np.searchsorted(key_pair, np.arange(n_pairs))  # each pair's first occupied key
    of_row = first[pair] + slot
    of_row[sparse] = first[pair[sparse]] + inverse - key_start[pair[sparse]]
    cls = np.arange(n_pairs).repeat(per_pair)
    g_slot = np.arange(len(cls)) - first[cls]
    g_slot[first[key_pair] + np.arange(len(keys)) - key_start[key_pair]] = keys - offset[key_pair]
    return of_row, cls, first, g_slot


def _live_pairs(st: _Stack, op: _Open, wide: _Wide, balance: float) -> _Pairs:
    """The (attribute, class) pairs worth pricing, and marks the attributes dead where the class's node is a leaf.

    A split gains at most size x loss(node) (every part at a leaf), and H is at least that of one row against the
    rest: a pair whose bound is not above 0 cannot win. (Each attribute alone also skipped the pairs whose bound
    is below the best gain of the attributes before it: they cannot win either, so the winner is the same.)
    """
    n_open = len(op.size)
    cols = wide.cols
    attr = cols.repeat(n_open)
    lo, hi = wide.lo.ravel(), wide.hi.ravel()
    node = st.node(attr, lo, hi).reshape(len(cols), n_open)
    op.dead[:, cols] |= st.is_leaf[node].T
    bound = op.size * st.loss[node]
    if balance:
        if op.least is None:  # the same for every attribute of the round
            op.least = _least_entropy(op.size)
        if op.least_pow is None or op.least_pow[0] != balance:
            op.least_pow = (balance, op.least**balance)
        bound = bound / op.least_pow[1]
    live = ~op.dead[:, cols] & (bound.T > 1e-12)  # the first attribute's test (best gain 0: 0 * (1 + 1e-12) + 1e-12)
    p_col, p_cls = np.nonzero(live.T)
    of_pair = np.full(live.shape, -1, dtype=np.int64)
    of_pair[p_cls, p_col] = np.arange(len(p_col))
    per_class = of_pair.take(op.cid, axis=0)  # of_pair[op.cid], faster on a 2-D array
    mask = per_class >= 0
    per_tuple = np.count_nonzero(live, axis=1)[op.cid]
    at = _nonzero(mask)  # the mask's cells in row-major order, as a boolean index reads them
    lo, hi = _ranges_of(wide.t_lo.ravel(), wide.t_hi.ravel(), at)
    base = (op.rows[:, None] * st.width[cols] + st.slot_base[cols]).ravel()[at]
    return _Pairs(
        cols[p_col], p_col, p_cls, node[p_col, p_cls], live, mask, per_class.ravel()[at], per_tuple, cols, lo, hi, base
    )


@dataclass
class _Priced:
    """Per pair of a round: the split's score (-inf: no split), and per group the part its tuples go to."""

    gain: np.ndarray  # (P,)
    g_part: np.ndarray  # (groups,) group index of the part (a big child, or the one the rest joins), -1: set aside;
    rest: np.ndarray  # (groups,) True where the group's tuples go to its pair's rest part (a class at the node)


STACKED_CELLS = 30_000
"""A pricing round with at most this many (open tuple, attribute) cells prices every attribute in one pass
(:func:`_price_all`); larger rounds price attribute by attribute (:func:`_price`), which skips the classes whose
bound is below the best split of the attributes before (fewer cells, and the cells cost more than the calls).
Runs whose stack would be too large (:data:`_STACK_BYTES`) price every round attribute by attribute."""


def _price_round(
    axes: Sequence[_Axis], size: np.ndarray, op: _Open, rule: _Rule, defer: bool, balance: float, penalty: float
) -> _Split:
    """Step 1's pricing of one round: per open class, the best split (the same by either path)."""
    cols = np.array([j for j in range(len(axes)) if len(op.t_lo[j]) == len(op.rows)], dtype=np.int64)
    st = _stack(axes) if 0 < len(op.rows) * len(cols) <= STACKED_CELLS else None
    if st is not None:  # a small round: its ranges side by side, as _boxes built them (the same columns)
        wide = op.wide
        if wide is None or not np.array_equal(wide.cols, cols):  # read from the open classes now
            t_lo = np.stack([op.t_lo[j] for j in cols], axis=1)
            leaves = all(op.t_hi[j] is op.t_lo[j] for j in cols)
            t_hi = t_lo if leaves else np.stack([op.t_hi[j] for j in cols], axis=1)
            wide = _Wide(cols, t_lo, t_hi, np.stack([op.lo[j] for j in cols]), np.stack([op.hi[j] for j in cols]))
        return _price_all(st, op, wide, rule, defer, balance, penalty)
    n_open = len(op.size)
    best = _Split(np.zeros(n_open), np.full(n_open, -1, dtype=np.int64), np.full(len(op.rows), -1, dtype=np.int64))
    for j, ax in enumerate(axes):
        _price(ax, j, op, size, rule, defer, best, balance, penalty)
    return best


def _price_all(
    st: _Stack, op: _Open, wide: _Wide, rule: _Rule, defer: bool, balance: float, penalty: float = 0.0
) -> _Split:
    """Price the split of every open class on every attribute in one pass; per class the attribute that scores most.

    The score is the gain over ``H ** balance`` (:data:`SPLIT_BALANCES`). The attributes are taken in order and a
    later one wins only when it scores more by a margin (``gain > best * (1 + 1e-12) + 1e-12``). Marks the
    attribute dead for classes where no child holds k rows: in a sub-class the node is the same and its children
    hold fewer rows, so it stays dead below.
    """
    n_open = len(op.size)
    best = _Split(np.zeros(n_open), np.full(n_open, -1, dtype=np.int64), np.full(len(op.rows), -1, dtype=np.int64))
    pairs = _live_pairs(st, op, wide, balance)
    if not len(pairs.node):
        return best
    g = _group_all(st, op, pairs)
    priced = _price_pairs(st, op, pairs, g, rule, defer, balance, penalty)
    gains = np.full((st.m, n_open), -np.inf)
    gains[pairs.attr, pairs.cls] = priced.gain
    for j in range(st.m):  # attribute by attribute, as the margin makes the order count
        better = gains[j] > best.gain * (1 + 1e-12) + 1e-12
        best.gain[better], best.attr[better] = gains[j][better], j
    _write_parts(st, op, pairs, g, priced, best)
    return best


def _write_parts(st: _Stack, op: _Open, pairs: _Pairs, g: _Groups, priced: _Priced, best: _Split) -> None:
    """Each tuple's part under its class's winning attribute (-1: set aside), numbered as when each attribute was
    priced alone: by attribute, then its big children (by class, child), then its classes' rest parts."""
    n_pairs, n_groups, n_cols = len(pairs.node), len(g.size), len(pairs.cols)
    first_pair = np.searchsorted(pairs.col, np.arange(n_cols + 1))  # the pairs of column c: first_pair[c:c+2]
    end = np.append(g.first, n_groups)[first_pair[1:]]  # after the last group of each column
    group_id = np.arange(n_groups) + pairs.col[g.cls] * n_pairs
    rest_id = end[pairs.col] + pairs.col * n_pairs + (np.arange(n_pairs) - first_pair[pairs.col])
    part_id = np.where(priced.rest, rest_id[g.cls], np.where(priced.g_part >= 0, group_id[priced.g_part], -1))
    win = best.attr.take(op.cid)  # .take: as a[idx], faster here
    take = _nonzero(win >= 0)
    col_of = np.zeros(st.m, dtype=np.int64)
    col_of[pairs.cols] = np.arange(n_cols)
    rank = pairs.live.cumsum(axis=1) - 1  # a live pair's place among its class's live pairs
    start = pairs.per_tuple.cumsum() - pairs.per_tuple  # each open tuple's first pair
    cell = op.cid.take(take) * n_cols + col_of.take(win.take(take))  # rank[cid, col], flat
    q = start.take(take) + rank.take(cell)  # the tuple under its winning attribute
    best.part[take] = part_id.take(g.of_row.take(q))
    best.next_id = n_groups + n_cols * n_pairs


def _price_pairs(
    st: _Stack, op: _Open, pairs: _Pairs, g: _Groups, rule: _Rule, defer: bool, balance: float, penalty: float
) -> _Priced:
    """The score of every pair's split and the part of every group (:func:`_price_all`); marks the dead attributes."""
    rows = op.rows if rule.constraints.k_only else op.rows.repeat(pairs.per_tuple)  # read by the models only
    trip = _memo(lambda: rule.constraints.triplets(rows))
    sc = _score(
        g,
        op.size[pairs.cls],
        st.loss[pairs.node],
        lambda at, lo, hi: st.cost(pairs.attr[at], lo, hi),
        rows,
        pairs.pair,
        trip,
        rule,
        defer,
        penalty,
        (balance, op.least[pairs.cls]) if balance and op.least is not None else None,  # set by _live_pairs
    )
    op.dead[pairs.cls[sc.none], pairs.attr[sc.none]] = True  # no child of k rows
    g_part = np.where(sc.big, np.arange(len(g.size)), np.where(sc.merge[g.cls], sc.target[g.cls], -1))
    return _Priced(sc.gain, g_part, ~sc.big & sc.rest_ok[g.cls])


@dataclass
class _Score:
    """The splits of a round's classes (or pairs) on one attribute each, scored by :func:`_score`."""

    gain: np.ndarray  # per class, the gain over H ** balance (-inf: no split)
    big: np.ndarray  # per group, a part of its own (k rows, and the models)
    rest_ok: np.ndarray  # per class, its other rows a class at the node
    merge: np.ndarray  # per class, its other rows join its smallest big part (`target`)
    target: np.ndarray
    none: np.ndarray  # per class, no child of k rows (the attribute is dead for it)


def _score(
    g: _Groups,
    whole: np.ndarray,
    node_loss: np.ndarray,
    cost: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    rows: np.ndarray,
    cid: np.ndarray,
    trip: Callable[[], Triplets],
    rule: _Rule,
    defer: bool,
    penalty: float,
    least: tuple[float, np.ndarray] | None,
) -> _Score:
    """Score each class's split into its groups (:func:`_group`, :func:`_group_all`): the one pricing of both paths.

    `whole`, `node_loss`: per class its rows and its node's loss; ``cost(at, lo, hi)``: the loss of leaves lo..hi
    on the attribute of class ``at[i]``; tuple ``rows[i]`` is in class ``cid[i]``; `least`: the balance and each
    class's least entropy (:func:`_least_entropy`), or None (balance 0).
    """
    n_classes, n_groups = len(whole), len(g.size)
    child_k = g.child & (g.size >= rule.k)
    n_child_k = np.add.reduceat(child_k.astype(np.int64), g.first)
    none = n_child_k == 0
    # the models judge only the parts that could pass (k rows): the others fail on size alone
    big = child_k if rule.constraints.k_only else _ok_where(rule, child_k, g.size, rows, g.of_row, trip)
    n_big = n_child_k if big is child_k else np.add.reduceat(big.astype(np.int64), g.first)
    rest = np.add.reduceat(np.where(big, 0, g.size), g.first)
    rest_lo = np.minimum.reduceat(np.where(big, _NONE, g.lo), g.first)
    rest_hi = np.maximum.reduceat(np.where(big, -1, g.hi), g.first)
    g_cost = np.zeros(n_groups)
    bi = _nonzero(big)  # one index array for four gathers (a boolean index costs more)
    g_cost[bi] = g.size[bi] * cost(g.cls[bi], g.lo[bi], g.hi[bi])
    after = np.add.reduceat(g_cost, g.first)
    has_rest = rest > 0
    at = _nonzero(has_rest)
    rest_cost = np.zeros(n_classes)
    rest_cost[at] = rest[at] * cost(at, rest_lo[at], rest_hi[at])
    if rule.constraints.k_only:
        rest_ok = has_rest & (rest >= rule.k)
    else:
        rest_part = np.where(big[g.of_row], n_classes, cid)
        rest_ok = _ok_where(rule, has_rest & (rest >= rule.k), rest, rows, rest_part, trip)
    small_rest = has_rest & ~rest_ok & (n_big > 0)
    # children below k: their own class at the node (rest_ok), set aside (defer), or into the smallest big child
    target = np.full(n_classes, -1, dtype=np.int64) if defer else _smallest_big(big, g.size, g.cls, n_classes)
    merge = small_rest & (not defer)
    after += np.where(rest_ok | (small_rest & defer), rest_cost, 0.0)
    if penalty and defer:  # set-aside rows priced above their node: toward the root, beyond it when penalty > 1
        after += np.where(small_rest, penalty * (rest - rest_cost), 0.0)
    if merge.any() and not rule.constraints.k_only:  # the smallest big child with the rest: a class too?
        joined_part = np.where(merge[cid] & (~big[g.of_row] | (g.of_row == target[cid])), cid, n_classes)
        sizes = np.where(merge, rest + g.size[np.maximum(target, 0)], 0)
        merge &= rule.ok(sizes, rows, joined_part, trip)
    m = _nonzero(merge)
    if len(m):
        t = target[m]
        lo, hi = np.minimum(g.lo[t], rest_lo[m]), np.maximum(g.hi[t], rest_hi[m])
        after[m] += (g.size[t] + rest[m]) * cost(m, lo, hi) - g_cost[t]
    parts = n_big + rest_ok + (small_rest & defer)
    stuck = has_rest & ~rest_ok & ~(small_rest & defer) & ~merge  # rows with no class to go to: no split
    gain = np.where((parts >= 2) & ~stuck, whole * node_loss - after, -np.inf)
    if least is not None:
        _balance_gains(gain, g, big, rest, whole, least)
    return _Score(gain, big, rest_ok, merge, target, none)


def _balance_gains(
    gain: np.ndarray,
    g: _Groups,
    big: np.ndarray,
    rest: np.ndarray,
    whole: np.ndarray,
    least: tuple[float, np.ndarray],
) -> None:
    """Divide each positive gain by ``H ** balance`` in place: H the entropy of the split's parts, at least `least`'s.

    The parts: the `big` groups and the `rest` of each class (of `whole` rows); `least`: the
    balance and each class's least entropy (:func:`_least_entropy`).
    """
    balance, least_entropy = least
    ent = _entropy(np.where(big, g.size, 0), whole[g.cls], g.first) + _entropy(rest, whole)
    pos = _nonzero(gain > 0)  # the power only where it is taken
    gain[pos] = gain[pos] / np.maximum(ent[pos], least_entropy[pos]) ** balance


def _group(
    ax: _Axis, node: np.ndarray, rows: np.ndarray, cid: np.ndarray, lo: np.ndarray, hi: np.ndarray, weight: np.ndarray
) -> _Groups:
    """Group tuples by (class, child): slot 0 holds the values equal to the class's node, slot 1 + r its r-th child.

    `lo`, `hi`, `weight`: per tuple, its leaf range on `ax` and its rows.

    Groups are laid out per class (one slot per child, empty ones included) when that
    stays within a few times the tuples, else only the occupied slots are kept.
    """
    span = ax.fanout[node] + 1
    offset = np.zeros(len(span) + 1, dtype=np.int64)
    span.cumsum(out=offset[1:])
    slot = ax.slot.take(rows * ax.width + (ax.depth[node] + 1).take(cid))  # .take: as a[idx], faster
    dense = np.full(len(node), int(offset[-1]) <= 4 * len(rows) + 4096)
    return _fill_groups(*_layout(offset, span, dense, cid, slot), weight, lo, hi)


def _price(
    ax: _Axis,
    j: int,
    op: _Open,
    size: np.ndarray,
    rule: _Rule,
    defer: bool,
    best: _Split,
    balance: float,
    penalty: float = 0.0,
) -> None:
    """Price the split of every open class on attribute `ax` (index `j`); keep it where it scores most.

    The score is the gain over ``H ** balance`` (:data:`SPLIT_BALANCES`). Marks the
    attribute dead for classes where no child holds k rows: in a sub-class the node is
    the same and its children hold fewer rows, so it stays dead below.
    """
    node = ax.node(op.lo[j], op.hi[j])
    op.dead[:, j] |= ax.is_leaf[node]
    # a split gains at most size x loss(node) (every part at a leaf), and H is at least that of one row against
    # the rest: below the best so far, it cannot win
    bound = op.size * ax.loss[node]
    least = None
    if balance:
        if op.least is None:  # the same for every attribute of the round
            op.least = _least_entropy(op.size)
        least = op.least
        if op.least_pow is None or op.least_pow[0] != balance:
            op.least_pow = (balance, least**balance)
        bound = bound / op.least_pow[1]
    live = ~op.dead[:, j] & (bound > best.gain * (1 + 1e-12) + 1e-12)
    live_cls = _nonzero(live)
    if not len(live_cls):
        return
    n_classes = len(live_cls)
    sel, rows, cid, t_lo, t_hi, weight = _live_tuples(op, j, live, n_classes)
    node = node[live_cls]
    g = _group(ax, node, rows, cid, t_lo, t_hi, weight)
    trip = _open_triplets(rule, op) if sel is None else _memo(lambda: rule.constraints.triplets(rows))
    whole = op.size[live_cls]
    least_live = (balance, least[live_cls]) if least is not None else None
    sc = _score(
        g, whole, ax.loss[node], lambda _, lo, hi: ax.cost(lo, hi), rows, cid, trip, rule, defer, penalty, least_live
    )
    op.dead[live_cls[sc.none], j] = True  # no child of k rows
    better = sc.gain > best.gain[live_cls] * (1 + 1e-12) + 1e-12
    if better.any():
        _keep_better(best, g, sc, better, j, live_cls, cid, sel)


def _live_tuples(
    op: _Open, j: int, live: np.ndarray, n_live: int
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The open tuples of the `live` classes (`n_live` of them), for pricing attribute `j`.

    Returns their positions among the open tuples (None: all of them, every class live),
    aggregate rows, classes numbered among the live ones, leaf ranges on `j` and rows.
    """
    if n_live == len(op.size):  # every class live: the open tuples as they are
        return None, op.rows, op.cid, op.t_lo[j], op.t_hi[j], op.weight
    sel = _nonzero(live.take(op.cid))  # .take: the same values as a[idx], faster here
    cid = (live.cumsum() - 1).take(op.cid.take(sel))
    return sel, op.rows.take(sel), cid, *_ranges_of(op.t_lo[j], op.t_hi[j], sel), op.weight.take(sel)


def _keep_better(
    best: _Split,
    g: _Groups,
    sc: _Score,
    better: np.ndarray,
    j: int,
    live_cls: np.ndarray,
    cid: np.ndarray,
    sel: np.ndarray | None,
) -> None:
    """Record the split on attribute `j` where it scores `better` than the best so far: parts, gain, attribute.

    `live_cls`: the priced classes; `cid`: each priced tuple's class among them; `sel`: those
    tuples' positions among the open tuples (None: all). Each part gets a fresh id.
    """
    n_groups = len(g.size)
    rest_part = np.where(sc.rest_ok[g.cls], n_groups + g.cls, np.where(sc.merge[g.cls], sc.target[g.cls], -1))
    g_part = np.where(sc.big, np.arange(n_groups), rest_part)
    take = _nonzero(better.take(cid))  # .take: as a[idx], faster here
    part = g_part.take(g.of_row.take(take))
    best.part[take if sel is None else sel.take(take)] = np.where(part >= 0, part + best.next_id, -1)
    best.gain[live_cls[better]], best.attr[live_cls[better]] = sc.gain[better], j
    best.next_id += n_groups + len(live_cls)


def _ok_where(
    rule: _Rule,
    where: np.ndarray,
    sizes: np.ndarray,
    rows: np.ndarray,
    part: np.ndarray,
    triplets: Callable[[], Triplets] | None = None,
) -> np.ndarray:
    """:meth:`_Rule.ok` judged only for the parts `where` (False elsewhere): the others' tuples are left out.

    `part`: per tuple its part, ``len(sizes)`` for none.
    """
    out = np.zeros(len(sizes), dtype=bool)
    at = _nonzero(where)
    if len(at):
        compact = np.full(len(sizes) + 1, len(at), dtype=np.int64)
        compact[at] = np.arange(len(at))
        out[at] = rule.ok(sizes[at], rows, compact[part], triplets)
    return out


def _open_triplets(rule: _Rule, op: _Open) -> Callable[[], Triplets]:
    """The models' triplets of the open tuples, built at the first call and kept for the round (every attribute)."""

    def get() -> Triplets:
        if op.triplets is None:
            op.triplets = rule.constraints.triplets(op.rows)
        return op.triplets

    return get


def _memo(build: Callable[[], Triplets]) -> Callable[[], Triplets]:
    """`build` run at the first call only."""
    kept: list[Triplets] = []

    def get() -> Triplets:
        if not kept:
            kept.append(build())
        return kept[0]

    return get


def _first(balance: Balance) -> float:
    """The split balance of the first pass of step 1."""
    return balance[0] if isinstance(balance, tuple) else balance


def _later(balance: Balance) -> float:
    """The split balance of the re-anonymizations (step 2)."""
    return balance[1] if isinstance(balance, tuple) else balance


def _entropy(part: np.ndarray, whole: np.ndarray, first: np.ndarray | None = None) -> np.ndarray:
    """``-sum p ln p`` of part sizes over their class size (summed per class from `first` when given).

    >>> _entropy(np.array([1, 1]), np.array([2, 2]), np.array([0])).round(4).tolist()
    [0.6931]
    """
    h = np.zeros(len(part))
    nz = _nonzero(part > 0)  # the log only where it counts (empty parts add 0)
    p = part[nz] / whole[nz]
    h[nz] = -p * np.log(p)
    return h if first is None else np.add.reduceat(h, first)


def _least_entropy(n: np.ndarray) -> np.ndarray:
    """The entropy of a split of n rows into one row and the rest: the least of any split in two or more parts."""
    n = np.maximum(n, 2).astype(np.float64)
    return _entropy(np.ones_like(n), n) + _entropy(n - 1, n)


def _smallest_big(big: np.ndarray, g_size: np.ndarray, g_cid: np.ndarray, n_classes: int) -> np.ndarray:
    """Per class, the first of its smallest groups among the big ones (-1 when none)."""
    target = np.full(n_classes, -1, dtype=np.int64)
    idx = _nonzero(big)
    if len(idx):
        by = np.lexsort((idx, g_size[idx], g_cid[idx]))
        cls, first = np.unique(g_cid[idx][by], return_index=True)
        target[cls] = idx[by][first]
    return target


def _specialize(
    axes: Sequence[_Axis],
    size: np.ndarray,
    rows: np.ndarray,
    rule: _Rule,
    defer: bool,
    klass: np.ndarray,
    n_classes: int,
    start: np.ndarray | None = None,
    balance: float = SPLIT_BALANCES[0],
    penalty: float = 0.0,
) -> tuple[int, np.ndarray, int]:
    """Step 1 on the tuples `rows`: write a class id (from `n_classes` on) into `klass` for every tuple placed.

    Returns ``(classes now, tuples set aside, rounds)``; a class that may not be
    published (:meth:`_Rule.ok`, only possible for a starting class) is set aside whole.
    `start` gives the starting class of each tuple (dense ids; default: one class).
    """
    op = _boxes(axes, size, rows, np.zeros(len(rows), dtype=np.int64) if start is None else start)
    aside: list[np.ndarray] = []
    rounds = 0
    while len(op.rows):
        rounds += 1
        n_open = len(op.size)
        best = _price_round(axes, size, op, rule, defer, balance, penalty)
        split = best.attr[op.cid] >= 0
        closed = _nonzero(~split)
        if len(closed):
            used = np.zeros(n_open, dtype=bool)  # the closed classes, in id order (np.unique without its sort)
            used[op.cid[closed]] = True
            dense = (used.cumsum() - 1)[op.cid[closed]]
            fine = rule.ok(op.size[_nonzero(used)], op.rows[closed], dense)
            keep = fine[dense]
            aside.append(op.rows[closed[_nonzero(~keep)]])
            kept = _nonzero(keep)
            klass[op.rows[closed[kept]]] = n_classes + (fine.cumsum() - 1)[dense[kept]]
            n_classes += int(fine.sum())
        moving = _nonzero(split & (best.part >= 0))
        aside.append(op.rows[_nonzero(split & (best.part < 0))])
        cid, n_next = _dense(best.part[moving], best.next_id)
        parent = np.zeros(n_next, dtype=np.int64)
        parent[cid] = op.cid[moving]
        dead = op.dead.take(parent, axis=0)  # a part inherits what was dead in its class (op.dead[parent])
        op = _boxes(axes, size, op.rows[moving], cid, dead)
    return n_classes, np.sort(np.concatenate(aside)) if aside else np.zeros(0, dtype=np.int64), rounds


@dataclass
class TopdownResult:
    """A top-down partition of the class aggregates.

    ``class_id[i]``: the class of aggregate row i (-1 when suppressed);
    ``nodes[q][i]``: the node published for its attribute q (the class's lowest
    common ancestor; the root when suppressed); ``suppressed``: Boolean per row.
    """

    class_id: np.ndarray
    nodes: dict[str, np.ndarray]
    suppressed: np.ndarray
    n_classes: int
    rounds: int
    """Re-anonymizations of set-aside rows (step 2), the first pass included."""
    set_aside: list[int]
    """Rows set aside by each pass."""
    repaired: int
    """Rows that never formed a class and were merged by the greedy loop (step 3)."""
    seconds: float
    resplit: int = 0
    """Pairs of classes replaced by their re-split (step 4)."""
    moved: int = 0
    """Tuples moved to another class (step 4)."""
    balance: Balance = 0.0
    """The split balance of the partition kept (:data:`SPLIT_BALANCES`)."""
    regrouped: int = 0
    """Groups of late classes replaced by their re-split (step 7, :func:`_regroup_late`)."""
    own: dict[str, np.ndarray] = field(default_factory=dict)
    """``own[q][i]``: the node id of aggregate row i's own value of q (looked up once, for the map)."""


def _classes_frame(
    axes: Sequence[_Axis], qids: Sequence[str], lo: list[np.ndarray], hi: list[np.ndarray], sizes: np.ndarray
) -> pl.DataFrame:
    """Classes as aggregate rows: the label of each class's node per qid, and its size."""
    cols = {
        q: pl.Series(ax.h.labels, dtype=pl.String).gather(ax.node(lo[j], hi[j]))
        for j, (q, ax) in enumerate(zip(qids, axes))
    }
    return pl.DataFrame({**cols, "size": sizes})


def _greedy_weights(axes: Sequence[_Axis], qids: Sequence[str]) -> dict[str, np.ndarray]:
    """Edge weights under which the greedy merge cost is exactly this loss: ω(n) = loss(parent) - loss(n)."""
    out = {}
    for q, ax in zip(qids, axes):
        w = np.zeros(ax.h.n_nodes)
        w[1:] = ax.loss[ax.h.parent[1:]] - ax.loss[1:]
        out[q] = w
    return out


def _total_cost(axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray) -> float:
    """Sum over the tuples in classes (klass >= 0) of size x the loss of their class's nodes."""
    rows = _nonzero(klass >= 0)
    if not len(rows):
        return 0.0
    ids = klass[rows]
    low = int(ids.min())
    op = _boxes(axes, size, rows, _dense(ids - low, int(ids.max()) - low + 1)[0])  # np.unique's inverse, no sort
    # NumPy's own pairwise sum of the products: ``@`` goes to BLAS, whose threads took 30 ms CPU a product on
    # 10,000 classes with the machine busy (0.01 ms this way), and whose bits may vary with its thread count
    weight = op.size.astype(np.float64)
    return float(sum(float((weight * ax.cost(op.lo[j], op.hi[j])).sum()) for j, ax in enumerate(axes)))


def _repair(
    aggregates: pl.DataFrame,
    qids: Sequence[str],
    axes: Sequence[_Axis],
    rule: _Rule,
    klass: np.ndarray,
    n_classes: int,
    leftover: np.ndarray,
) -> tuple[np.ndarray, int]:
    """Step 3: the greedy merge loop over the leftover tuples and classes (each class as its published tuple).

    The classes offered are, for every leftover tuple, the :data:`_NEAREST` classes it
    would join at least cost (every class with privacy models: the greedy loop then
    merges until every class satisfies them). Returns the new class per aggregate row
    and the class count.
    """
    size = aggregates["size"].to_numpy().astype(np.int64)
    placed = _nonzero(klass >= 0)
    op = _boxes(axes, size, placed, klass[placed])
    near = _nearest(axes, op, size, leftover) if rule.constraints.k_only else np.arange(n_classes)
    classes = _classes_frame(axes, qids, [lo[near] for lo in op.lo], [hi[near] for hi in op.hi], op.size[near])
    frame = pl.concat([classes, aggregates[leftover].select(*qids, pl.col("size").cast(pl.Int64))])
    owner = np.full(len(size), -1, dtype=np.int64)  # frame row of each aggregate row (-1: a class not offered)
    position = np.full(n_classes, -1, dtype=np.int64)
    position[near] = np.arange(len(near))
    owner[placed] = position[klass[placed]]
    owner[leftover] = len(near) + np.arange(len(leftover))
    models = None if rule.constraints.k_only else _regrouped(rule.constraints, owner, frame.height)
    hierarchies = {q: ax.h for q, ax in zip(qids, axes)}
    weights = _greedy_weights(axes, qids)
    res = greedy_partition(
        frame,
        hierarchies,
        rule.k,
        weights=weights,
        partners="all",
        progress=False,
        constraints=models,
        cost_tables=_cost_tables(axes, hierarchies, weights),
    )
    new_of_class = np.arange(n_classes)  # classes not offered keep their id; the others take n_classes + greedy's
    new_of_class[near] = n_classes + res.class_id[: len(near)]
    out = np.full(len(size), -1, dtype=np.int64)
    out[placed] = new_of_class[klass[placed]]
    out[leftover] = n_classes + res.class_id[len(near) :]
    kept = _nonzero(out >= 0)
    out[kept], n = _dense(out[kept], n_classes + res.n_classes)
    return out, n


def _cost_tables(
    axes: Sequence[_Axis], hierarchies: Mapping[str, Hierarchy], weights: Mapping[str, np.ndarray]
) -> list:
    """greedy's cost groups (:func:`~polars_anon.algorithms.greedy.cost_groups`) of these axes, one set per run
    (kept by the run's :class:`_Axes`).

    Every repair of a run (one per balance and penalty) has the same hierarchies and
    weights (:func:`_greedy_weights` reads only the axes), so the same groups. They start
    without pair tables; the greedy loop builds a group's tables when its walks would cost
    more (:data:`~polars_anon.algorithms.greedy.LAZY_TABLES`), and the later repairs of
    the run find them built.
    """
    if isinstance(axes, _Axes) and axes.tables is not None:
        return axes.tables
    tables = cost_groups(hierarchies, root_weights(hierarchies, None, weights), 0)
    if isinstance(axes, _Axes):
        axes.tables = tables
    return tables


def _regrouped(constraints: Constraints, owner: np.ndarray, n: int) -> Constraints:
    """The constraints over groups of aggregate rows (``owner[i]``: the group of row i, -1 for none)."""
    keep = owner >= 0
    size = np.bincount(owner[keep], weights=constraints.size[keep], minlength=n).astype(np.int64)
    sensitive = {}
    for a, s in constraints.sensitive.items():
        inside = owner[s.row] >= 0
        sensitive[a] = SensitiveCounts(s.domain, owner[s.row[inside]], s.code[inside], s.count[inside])
    first_row = None
    if constraints.first_row is not None:  # a group's first row: its rows' smallest
        first_row = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_row, owner[keep], constraints.first_row[keep])
    return Constraints(
        size,
        constraints.k,
        constraints.models,
        sensitive,
        None,
        constraints.hierarchies,
        first_row=first_row,
        road=constraints.context.road,
    )


_NEAREST = 4
"""Classes offered to the greedy repair per leftover tuple."""


def _nearest(axes: Sequence[_Axis], op: _Open, size: np.ndarray, leftover: np.ndarray) -> np.ndarray:
    """The classes each leftover tuple would join at least added cost (:data:`_NEAREST` per tuple), sorted."""
    if not len(op.size):
        return np.zeros(0, dtype=np.int64)
    now = op.size * sum(ax.cost(op.lo[j], op.hi[j]) for j, ax in enumerate(axes))
    picked = []
    for t in leftover:
        joined = sum(
            ax.cost(np.minimum(op.lo[j], ax.lo[t]), np.maximum(op.hi[j], ax.hi[t])) for j, ax in enumerate(axes)
        )
        added = (op.size + size[t]) * joined - now
        n = min(_NEAREST, len(added))
        best = np.argpartition(added, n - 1)[:n] if n < len(added) else np.arange(len(added))
        picked.append(best)
    return np.unique(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)


def _leftovers(
    problem: _Problem, klass: np.ndarray, n_classes: int, leftover: np.ndarray
) -> tuple[np.ndarray, int, np.ndarray]:
    """Step 3: merge the leftover tuples into classes, or suppress them when the budget (``max_suppressed``) allows
    and that costs less.

    With privacy models the decision is taken per merged class: one that took leftover
    tuples goes back to the classes it was made of, its leftovers suppressed, when that
    costs less (:func:`_undo`). Returns ``(class per row, classes, suppressed rows)``.
    """
    axes, size, rule, budget = problem.axes, problem.size, problem.rule, problem.max_suppressed
    rows = int(size[leftover].sum())
    if rule.constraints.k_only and len(leftover) <= _JOIN_ALONE and n_classes:
        merged, added = _join_nearest(axes, size, klass, leftover)
        if rows <= budget and len(axes) * rows < added:
            return klass, n_classes, leftover
        return merged, n_classes, np.zeros(0, dtype=np.int64)
    merged, n_merged = _repair(problem.aggregates, problem.qids, axes, rule, klass, n_classes, leftover)
    if budget <= 0:
        return merged, n_merged, np.zeros(0, dtype=np.int64)
    return _undo(axes, size, klass, merged, leftover, budget)


def _undo(
    axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, merged: np.ndarray, leftover: np.ndarray, budget: int
) -> tuple[np.ndarray, int, np.ndarray]:
    """Step 3, per merged class: back to its classes before the merge, its leftover tuples suppressed, where cheaper.

    `klass`: the classes before (leftover tuples -1, every class publishable), `merged`:
    after the greedy loop (a class of `merged` holds whole classes of `klass` and
    leftover tuples). Classes are undone by saving per suppressed row, best first,
    within `budget` rows. Returns ``(class per row, classes, suppressed rows)``.
    """
    rows = _nonzero(merged >= 0)
    n_new = int(merged[rows].max()) + 1
    new_cost = _class_costs(axes, _boxes(axes, size, rows, merged[rows]))
    before = _nonzero(klass >= 0)
    old = _boxes(axes, size, before, klass[before])
    new_of_old = np.zeros(len(old.size), dtype=np.int64)
    new_of_old[klass[before]] = merged[before]
    # float64 (copy=False: what bincount gives with weights) also with no class before the merge, where NumPy's
    # bincount of no values gives Int64 and the sum below failed (hunt32: a whole table no class of which meets
    # entropy l-diversity, Grassberger's estimator, max_suppressed > 0)
    undone = np.bincount(new_of_old, weights=_class_costs(axes, old), minlength=n_new).astype(np.float64, copy=False)
    dropped = np.bincount(merged[leftover], weights=size[leftover], minlength=n_new).astype(np.float64, copy=False)
    undone += len(axes) * dropped
    saving = new_cost - undone
    good = _nonzero((saving > 1e-9 * np.maximum(new_cost, 1.0)) & (dropped > 0))
    good = good[np.lexsort((good, -saving[good] / dropped[good]))]
    good = good[dropped[good].cumsum() <= budget]
    if not len(good):
        return merged, n_new, np.zeros(0, dtype=np.int64)
    undo = np.zeros(n_new, dtype=bool)
    undo[good] = True
    out = merged.copy()
    back = before[undo[merged[before]]]
    out[back] = n_new + klass[back]
    gone = leftover[undo[merged[leftover]]]
    out[gone] = -1
    kept = _nonzero(out >= 0)
    out[kept], n = _dense(out[kept], n_new + len(old.size))
    return out, n, gone


_JOIN_ALONE = 64
"""Up to this many leftover tuples (k-anonymity alone), each joins the class it raises least, one after the other."""


def _join_nearest(
    axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, leftover: np.ndarray
) -> tuple[np.ndarray, float]:
    """Step 3 for a few leftover tuples: each joins the class whose cost it raises least, largest tuple first.

    Returns the new class per aggregate row and the cost added. Without privacy models
    every class stays publishable (classes only grow).
    """
    placed = _nonzero(klass >= 0)
    op = _boxes(axes, size, placed, klass[placed])
    now = _class_costs(axes, op)
    out = klass.copy()
    total = 0.0
    for t in leftover[np.lexsort((leftover, -size[leftover]))]:
        lo = [np.minimum(op.lo[j], ax.lo[t]) for j, ax in enumerate(axes)]
        hi = [np.maximum(op.hi[j], ax.hi[t]) for j, ax in enumerate(axes)]
        joined = (op.size + size[t]) * sum(ax.cost(lo[j], hi[j]) for j, ax in enumerate(axes))
        c = int(np.argmin(joined - now))
        total += float(joined[c] - now[c])
        out[t] = c
        now[c] = joined[c]
        op.size[c] += size[t]
        for j in range(len(axes)):
            op.lo[j][c], op.hi[j][c] = lo[j][c], hi[j][c]
    return out, total


def _outliers(axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, rule: _Rule, budget: int) -> np.ndarray:
    """Step 6: tuples worth suppressing, one per class and pass, best gain first, within `budget` rows.

    Removing tuple t from class C (still publishable) publishes the rest at the
    box of the other tuples; t then costs one per cell. Returns the rows to suppress.
    """
    chosen: list[np.ndarray] = []
    alive = klass >= 0
    for _ in range(64):
        rows = _nonzero(alive)
        if budget <= 0 or not len(rows):
            break
        cid = np.unique(klass[rows], return_inverse=True)[1].astype(np.int64)
        op = _boxes(axes, size, rows, cid)
        before = op.size * sum(ax.cost(op.lo[j], op.hi[j]) for j, ax in enumerate(axes))
        rest = op.size[cid] - size[rows]
        after = len(axes) * size[rows].astype(np.float64)
        for j, ax in enumerate(axes):
            t_lo, t_hi = _ranges_of(ax.lo, ax.hi, rows)
            lo, hi = _without(t_lo, cid, op.lo[j], np.minimum), _without(t_hi, cid, op.hi[j], np.maximum)
            after += rest * ax.cost(np.where(rest > 0, lo, op.lo[j][cid]), np.where(rest > 0, hi, op.hi[j][cid]))
        gain = before[cid] - after
        cand = _nonzero((gain > 1e-9) & (rest > 0) & (size[rows] <= budget))
        if not len(cand):
            break
        by = np.lexsort((cand, -gain[cand], cid[cand]))  # per class its best tuple, ties to the first row
        first = np.unique(cid[cand][by], return_index=True)[1]
        pick = cand[by][first]
        rest_of = op.size.copy()
        rest_of[cid[pick]] = rest[pick]
        part = cid.copy()
        part[pick] = len(op.size)
        pick = pick[rule.ok(rest_of, rows, part)[cid[pick]]]
        pick = pick[np.lexsort((pick, -gain[pick]))]
        pick = pick[size[rows[pick]].cumsum() <= budget]
        if not len(pick):
            break
        alive[rows[pick]] = False
        budget -= int(size[rows[pick]].sum())
        chosen.append(rows[pick])
    return np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)


def _unblock(
    axes: Sequence[_Axis],
    size: np.ndarray,
    klass: np.ndarray,
    rule: _Rule,
    budget: int,
    balance: float,
    penalty: float = 0.0,
) -> np.ndarray:
    """Step 5: split classes again by step 1 with rows set aside, and suppress those rows, where that pays.

    Every class is specialized again from its lowest common ancestors, children that
    may not be classes (:meth:`_Rule.ok`) set aside; a class takes its new classes and
    its set-aside rows are suppressed (each cell at the root) when that costs less than
    the class, best gain per suppressed row first, within `budget` rows. Edits `klass`
    in place; returns the rows to suppress.
    """
    rows = _nonzero(klass >= 0)
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    cid = np.unique(klass[rows], return_inverse=True)[1].astype(np.int64)
    n_cls = int(cid.max()) + 1
    own = _class_costs(axes, _boxes(axes, size, rows, cid))
    trial = np.full(len(size), -1, dtype=np.int64)
    _, aside, _ = _specialize(axes, size, rows, rule, True, trial, 0, cid, balance, penalty)
    of = np.full(len(size), -1, dtype=np.int64)
    of[rows] = cid
    placed = rows[trial[rows] >= 0]
    new = _boxes(axes, size, placed, trial[placed])
    per_row = _class_costs(axes, new)[trial[placed]] * size[placed] / new.size[trial[placed]]
    dropped = np.bincount(of[aside], weights=size[aside], minlength=n_cls)
    after = np.bincount(of[placed], weights=per_row, minlength=n_cls) + len(axes) * dropped
    gain = own - after
    good = _nonzero(gain > 1e-9 * np.maximum(own, 1.0))
    if not len(good):
        return np.zeros(0, dtype=np.int64)
    good = good[np.lexsort((good, -gain[good] / np.maximum(dropped[good], 1.0)))]
    free = dropped[good] == 0
    spent = np.where(free, 0, dropped[good]).cumsum()
    take = np.zeros(n_cls, dtype=bool)
    take[good[free | (spent <= budget)]] = True
    moved = placed[take[of[placed]]]
    klass[moved] = int(klass.max()) + 1 + trial[moved]
    out = aside[take[of[aside]]]
    klass[out] = -1
    return out


MAX_RESPLIT_CLASSES = 1000
"""The re-split step (step 4) pairs classes only up to this many classes (it prices every pair)."""
MAX_RESPLIT_PASSES = 16


def _class_costs(axes: Sequence[_Axis], op: _Open) -> np.ndarray:
    return op.size * sum(ax.cost(op.lo[j], op.hi[j]) for j, ax in enumerate(axes))


def _ranges(ax: _Axis, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct leaf ranges among `lo`..`hi`: (their lo, their hi, the range of each input)."""
    key, inverse = np.unique(lo * ax.n_leaves + hi, return_inverse=True)
    return key // ax.n_leaves, key % ax.n_leaves, inverse.ravel()


_UNION_SORT = 64
""":func:`_union_costs` looks for shared ranges only when both sides hold this many classes (two sorts per qid)."""


def _union_costs(ax: _Axis, lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> np.ndarray:
    """(a, b) the loss on `ax` of the union of range a with range b: the same values as ``ax.cost`` of each pair.

    Classes share few ranges on most qids (sex, race: a handful): then each distinct pair is priced once and
    gathered (one pass over the a x b cells instead of five).

    >>> ax = _Axis(Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1"]}}), pl.Series(["a1", "a2", "b1"]))
    >>> lo, hi = ax.lo, ax.hi
    >>> _union_costs(ax, lo, hi, lo[[0, 0]], hi[[0, 0]]).tolist()
    [[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]]
    >>> _union_costs(ax, lo[[0] * 64], hi[[0] * 64], lo[[1] * 64], hi[[1] * 64]).sum()  # one pair priced, 4,096 cells
    np.float64(2048.0)
    """
    if min(len(lo_a), len(lo_b)) >= _UNION_SORT:  # fewer cells on one side: the sorts would cost more
        la, ha, ia = _ranges(ax, lo_a, hi_a)
        lb, hb, ib = _ranges(ax, lo_b, hi_b)
        if 4 * len(la) * len(lb) <= len(lo_a) * len(lo_b):
            lo = np.minimum(la[:, None], lb[None, :])
            hi = np.maximum(ha[:, None], hb[None, :])
            pair = ax.cost(lo.ravel(), hi.ravel()).reshape(lo.shape)
            return pair.take(ib, axis=1).take(ia, axis=0)  # [:, ib][ia]: columns first, rows copied whole
    lo = np.minimum(lo_a[:, None], lo_b[None, :])
    hi = np.maximum(hi_a[:, None], hi_b[None, :])
    return ax.cost(lo.ravel(), hi.ravel()).reshape(lo.shape)


def _resplit(axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, rule: _Rule, balance: float) -> int:
    """Step 4: merge each class with the class it joins at least cost and split the pair again by step 1.

    Classes are paired greedily, the cheapest unions first, each class in one pair;
    every pair is specialized again from its lowest common ancestors (children below
    k join the smallest child that holds k rows, nothing is set aside), and the new
    classes replace the pair when they cost less. Repeats while a pair improves, at
    most :data:`MAX_RESPLIT_PASSES` times. Edits `klass` in place; returns the pairs replaced.
    """
    replaced = 0
    for _ in range(MAX_RESPLIT_PASSES):
        rows = _nonzero(klass >= 0)
        ids, cid = np.unique(klass[rows], return_inverse=True)
        cid = cid.astype(np.int64)
        n_cls = len(ids)
        if n_cls < 2 or n_cls > MAX_RESPLIT_CLASSES:
            break
        op = _boxes(axes, size, rows, cid)
        own = _class_costs(axes, op)
        union = np.zeros((n_cls, n_cls))
        for j, ax in enumerate(axes):
            union += _union_costs(ax, op.lo[j], op.hi[j], op.lo[j], op.hi[j])
        union *= op.size[:, None] + op.size[None, :]
        union -= own[:, None] + own[None, :]
        np.fill_diagonal(union, np.inf)
        partner = np.argmin(union, axis=1)
        pair = np.full(n_cls, -1, dtype=np.int64)
        n_pairs = 0
        for c in np.lexsort((np.arange(n_cls), union[np.arange(n_cls), partner])):
            d = partner[c]
            if pair[c] < 0 and pair[d] < 0:
                pair[c] = pair[d] = n_pairs
                n_pairs += 1
        paired = _nonzero(pair[cid] >= 0)
        trial = np.full(len(size), -1, dtype=np.int64)
        _, aside, _ = _specialize(axes, size, rows[paired], rule, False, trial, 0, pair[cid[paired]], balance)
        if len(aside):
            break
        new = _boxes(axes, size, rows[paired], trial[rows[paired]])
        new_cost = np.bincount(
            pair[cid[paired]],
            weights=_class_costs(axes, new)[trial[rows[paired]]] * size[rows[paired]] / new.size[trial[rows[paired]]],
            minlength=n_pairs,
        )
        old_cost = np.bincount(pair[pair >= 0], weights=own[pair >= 0], minlength=n_pairs)
        better = new_cost < old_cost * (1 - 1e-12) - 1e-9
        if not better.any():
            break
        take = paired[better[pair[cid[paired]]]]
        klass[rows[take]] = int(klass.max()) + 1 + trial[rows[take]]
        replaced += int(better.sum())
    return replaced


LATE_PASS = 3
"""Step 7's regrouping (:func:`_regroup_late`) works on the classes of the rows placed by this pass or later."""
REGROUP_SIZES = (2, 3, 4, 5, 6, 8)
"""Group sizes of the regrouping, one per pass, in turn."""
MAX_REGROUP_PASSES = 6
MAX_REGROUP_IDLE = 2
"""The regrouping stops after this many passes in a row that replace no group."""
MAX_REGROUP_CELLS = 1_000_000
"""The regrouping prices late classes x classes x qids unions per pass; above this, the costliest late classes only."""


def _regroup_late(
    axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, rule: _Rule, balance: float, late: np.ndarray
) -> int:
    """Step 7: specialize each late class again together with the g - 1 classes it joins at least cost.

    A class is late when its rows were all placed by pass :data:`LATE_PASS` of step 2 or
    later (or are leftovers): rare tuples that step 2 grouped among themselves; with privacy
    models the caller marks every row late, and step 1 keeps every new class passing
    :meth:`_Rule.ok` (else the group stays). Each pass
    takes one group size g of :data:`REGROUP_SIZES`; late classes (the one whose cheapest
    union is cheapest first) each take their g - 1 cheapest partners still free; every group
    is specialized again from its lowest common ancestors by step 1 (nothing set aside) and
    its new classes replace it when they cost less (they count as late). Stops after
    :data:`MAX_REGROUP_IDLE` passes in a row that replace nothing, or :data:`MAX_REGROUP_PASSES`
    passes. Edits `klass` (and `late`) in place; returns the groups replaced.
    """
    rows = _nonzero(klass >= 0)
    if not len(rows):
        return 0
    cid = np.unique(klass[rows], return_inverse=True)[1].astype(np.int64)
    op = _boxes(axes, size, rows, cid)  # every class so far (dead or alive), grown as groups are replaced
    own = _class_costs(axes, op)
    alive = np.ones(len(op.size), dtype=bool)
    is_late = np.ones(len(op.size), dtype=bool)
    np.logical_and.at(is_late, cid, late[rows])
    replaced, idle = 0, 0
    for turn in range(MAX_REGROUP_PASSES):
        g = REGROUP_SIZES[turn % len(REGROUP_SIZES)]
        cols = _nonzero(alive)  # in id order: ties go to the older class
        lc = _nonzero(is_late[cols])  # positions in cols
        if not len(lc) or len(cols) < 2:
            break
        lc, union = _late_unions(axes, op, own, cols, lc)
        group, n_groups = _pick_groups(union, lc, len(cols), g)
        of_class = np.full(len(op.size), -1, dtype=np.int64)  # group of each class id
        of_class[cols] = group
        inside = _nonzero(of_class[cid] >= 0)
        r, of = rows[inside], of_class[cid[inside]]
        tried = _respecialize(axes, size, rule, balance, r, of, own[cols], group, n_groups)
        if tried is None:
            break
        trial, new, new_own, better = tried
        if not better.any():
            idle += 1
            if idle >= MAX_REGROUP_IDLE:
                break
            continue
        idle = 0
        taken = better[of]
        alive[cols[(group >= 0) & better[np.maximum(group, 0)]]] = False
        own, alive, is_late = _replace_groups(
            op, own, alive, is_late, new, new_own, trial[r[taken]], cid, inside[taken]
        )
        late[r[taken]] = True
        replaced += int(better.sum())
    if replaced:
        klass[rows] = _dense(cid, len(op.size))[0]
    return replaced


def _respecialize(
    axes: Sequence[_Axis],
    size: np.ndarray,
    rule: _Rule,
    balance: float,
    r: np.ndarray,
    of: np.ndarray,
    c_own: np.ndarray,
    group: np.ndarray,
    n_groups: int,
) -> tuple[np.ndarray, _Open, np.ndarray, np.ndarray] | None:
    """Specialize each regrouping group again by step 1 (rows `r`, group `of`); None when any row is set aside.

    `c_own`, `group`: each live class's own cost and group. Returns the new class of each
    aggregate row (-1 outside), the new classes, their own costs, and per group whether they
    cost less than its classes now.
    """
    trial = np.full(len(size), -1, dtype=np.int64)
    _, aside, _ = _specialize(axes, size, r, rule, False, trial, 0, of, balance)
    if len(aside):
        return None
    new = _boxes(axes, size, r, trial[r])
    new_own = _class_costs(axes, new)
    new_cost = np.bincount(of, weights=new_own[trial[r]] * size[r] / new.size[trial[r]], minlength=n_groups)
    old_cost = np.bincount(group[group >= 0], weights=c_own[group >= 0], minlength=n_groups)
    return trial, new, new_own, new_cost < old_cost * (1 - 1e-12) - 1e-9


def _late_unions(
    axes: Sequence[_Axis], op: _Open, own: np.ndarray, cols: np.ndarray, lc: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A regrouping pass's late classes (positions `lc` in the live classes `cols`) and their union costs.

    Above :data:`MAX_REGROUP_CELLS` cells the late classes of highest cost per row only (ties to
    the older class). Returns those positions and the (late, live) matrix of the cost a union
    adds over its two classes' own costs (inf with itself).
    """
    n_cls = len(cols)
    c_size, c_own = op.size[cols], own[cols]
    most = max(1, MAX_REGROUP_CELLS // (n_cls * len(axes)))
    if len(lc) > most:
        lc = np.sort(lc[np.lexsort((lc, -c_own[lc] / c_size[lc]))[:most]])
    union = np.zeros((len(lc), n_cls))
    for j, ax in enumerate(axes):
        c_lo, c_hi = op.lo[j][cols], op.hi[j][cols]
        union += _union_costs(ax, c_lo[lc], c_hi[lc], c_lo, c_hi)
    union *= c_size[lc][:, None] + c_size[None, :]
    union -= c_own[lc][:, None] + c_own[None, :]
    union[np.arange(len(lc)), lc] = np.inf
    return lc, union


def _pick_groups(union: np.ndarray, lc: np.ndarray, n_cls: int, g: int) -> tuple[np.ndarray, int]:
    """Groups of g classes: each late class (cheapest union first) with its g - 1 cheapest partners still free.

    Returns each live class's group (-1: none) and the number of groups.

    >>> union = np.array([[np.inf, 1.0, 3.0, 2.0]])
    >>> _pick_groups(union, np.array([0]), 4, 2)
    (array([ 0,  0, -1, -1]), 1)
    """
    group = np.full(n_cls, -1, dtype=np.int64)
    n_groups = 0
    # each late class's nearest classes, cheapest first (ties to the older); all of them when those are taken
    near = min(n_cls - 1, 4 * g + 16)
    short = np.argpartition(union, near - 1, axis=1)[:, :near] if near < n_cls - 1 else None
    if short is not None:  # each row's nearest by (cost, class): one lexsort per row, all rows at once
        by = np.lexsort((short, np.take_along_axis(union, short, axis=1)), axis=-1)
        short = np.take_along_axis(short, by, axis=1)
    for i in np.lexsort((lc, union.min(axis=1))):
        c = lc[i]
        if group[c] >= 0:
            continue
        if short is None:
            order = np.arange(n_cls)
            order = order[np.lexsort((order, union[i][order]))]
        else:
            order = short[i]
        free = order[(group[order] < 0) & (order != c)][: g - 1]
        if len(free) < g - 1 and short is not None:
            order = np.argsort(union[i], kind="stable")
            free = order[(group[order] < 0) & (order != c)][: g - 1]
        if not len(free):
            continue
        group[c] = group[free] = n_groups
        n_groups += 1
    return group, n_groups


def _replace_groups(
    op: _Open,
    own: np.ndarray,
    alive: np.ndarray,
    is_late: np.ndarray,
    new: _Open,
    new_own: np.ndarray,
    taken_new: np.ndarray,
    cid: np.ndarray,
    moved: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Append the new classes `taken_new` (ids in `new`) to the regrouping's classes, as late and alive.

    Grows `op` and renumbers `cid` at `moved` (in place: row ``moved[i]`` goes to new class
    ``taken_new[i]``); returns the grown own costs, alive and late flags.
    """
    kept_new = np.zeros(len(new.size), dtype=bool)
    kept_new[taken_new] = True
    renumber = kept_new.cumsum() - 1 + len(op.size)
    cid[moved] = renumber[taken_new]
    op.size = np.concatenate([op.size, new.size[kept_new]])
    for j in range(len(op.lo)):
        op.lo[j] = np.concatenate([op.lo[j], new.lo[j][kept_new]])
        op.hi[j] = np.concatenate([op.hi[j], new.hi[j][kept_new]])
    own = np.concatenate([own, new_own[kept_new]])
    alive = np.concatenate([alive, np.ones(int(kept_new.sum()), dtype=bool)])
    is_late = np.concatenate([is_late, np.ones(int(kept_new.sum()), dtype=bool)])
    return own, alive, is_late


def _ranges_of(lo: np.ndarray, hi: np.ndarray, at: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``lo`` and ``hi`` taken at `at` along `axis` (whole rows of a 2-D array: ``np.take``, several times faster
    than ``a[at]`` here); one gather when `hi` is `lo` (every tuple at a leaf, :class:`_Axis`), then the same array
    twice (read only)."""
    t_lo = lo.take(at, axis=axis)
    return t_lo, t_lo if hi is lo else hi.take(at, axis=axis)


def _distinct_ranges(ax: _Axis, t_lo: np.ndarray, t_hi: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The distinct leaf ranges among tuples' (`t_lo`, `t_hi`) on `ax`, by (lo, hi), and each tuple's among them.

    Tuples at leaves (`t_hi` is `t_lo`) are marked per leaf (no sort) when the marks stay within a few times them;
    otherwise ``np.unique`` of ``lo * n_leaves + hi``: the same ranges in the same order either way.
    """
    if t_hi is t_lo and ax.n_leaves <= 32 * len(t_lo) + 65536:
        used = np.zeros(ax.n_leaves, dtype=bool)
        used[t_lo] = True
        leaves = _nonzero(used)
        return (leaves, leaves), (used.cumsum() - 1)[t_lo]
    ranges, first, inverse = np.unique(t_lo * ax.n_leaves + t_hi, return_index=True, return_inverse=True)
    return (t_lo[first], t_hi[first]), inverse


def _cheapest(
    axes: Sequence[_Axis], size: np.ndarray, op: _Open, before: np.ndarray, rows: np.ndarray, own: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per tuple in `rows`, the class (not its own, `own`) it joins at least added cost, and that cost."""
    n_cls = len(op.size)
    target = np.zeros(len(rows), dtype=np.int64)
    added = np.zeros(len(rows))
    block = min(_MOVE_BLOCK, max(_MOVE_BLOCK_LEAST, _MOVE_BLOCK_CELLS // max(n_cls, 1)))
    for b in range(0, len(rows), block):
        r = rows[b : b + block]
        joined = np.zeros((len(r), n_cls))
        for j, ax in enumerate(axes):
            # the cost row of each distinct leaf range among the tuples, then one row per tuple
            t_lo, t_hi = _ranges_of(ax.lo, ax.hi, r)
            ranges, inverse = _distinct_ranges(ax, t_lo, t_hi)
            if len(ranges[0]) < len(r):
                t_lo, t_hi = ranges
            lo = np.minimum(op.lo[j][None, :], t_lo[:, None])
            hi = np.maximum(op.hi[j][None, :], t_hi[:, None])
            if ax.cost_table is not None:  # ax.cost in place: the same flat positions and values, fewer temporaries
                lo *= ax.n_leaves
                lo += hi
                row = ax.cost_table.take(lo)
            else:
                row = ax.cost(lo.ravel(), hi.ravel()).reshape(lo.shape)
            joined += row.take(inverse, axis=0) if len(ranges[0]) < len(r) else row  # row[inverse]
        cost = (op.size[None, :] + size[r][:, None]) * joined - before[None, :]
        cost[np.arange(len(r)), own[b : b + len(r)]] = np.inf
        t = np.argmin(cost, axis=1)
        target[b : b + len(r)] = t
        added[b : b + len(r)] = cost[np.arange(len(r)), t]
    return target, added


_MOVE_BLOCK = 1024
"""Candidate tuples priced against every class at once by the move pass (step 4), at most."""
_MOVE_BLOCK_CELLS = 1 << 17
"""The move pass prices about this many (tuple, class) cells at once (1 MB of costs, which stays in the cache):
on Adult with 2-diversity at k = 2 (5,300 classes) 256 tuples at once took 0.14 CPU s a run, 32 took 0.05 (load 5;
this cap gives 131,072 // 5,300 = 24 tuples there, not measured); at k = 100 (about 200 classes) 1,024 at once took
0.10 against 0.12 with 256. Each tuple's costs are its own, so the block changes no result."""
_MOVE_BLOCK_LEAST = 16
"""Candidate tuples priced at once by the move pass, at least (each block costs a few NumPy calls per qid)."""
MAX_MOVE_CELLS = 3_000_000
"""The move pass prices candidates x classes x qids cells per pass; above this, only the best-gain candidates."""
MAX_MOVE_PASSES = 8
"""Passes of the move step (step 4) at most; each moves at most one tuple out of and into each class."""


def _moves(axes: Sequence[_Axis], size: np.ndarray, klass: np.ndarray, rule: _Rule) -> int:
    """Step 4: move tuples that widen their class into the class they join at least cost, while that lowers the loss.

    A tuple t of class C is a candidate when C without t still holds k rows and is
    published lower (the gain ``cost(C) - cost(C - t)``); it goes to the class D
    where ``cost(D + t) - cost(D)`` is least, when that is below the gain. Each pass
    takes the best moves first, every class the source or the target of one move at
    most (so every priced cost is exact), and keeps a move only when both classes
    still pass :meth:`_Rule.ok`. Edits `klass` in place; returns the tuples moved.
    """
    moved = 0
    rows = _nonzero(klass >= 0)  # the same rows and classes in every pass (a class keeps k rows)
    if not len(rows):
        return 0
    ids, cid = np.unique(klass[rows], return_inverse=True)
    cid = cid.astype(np.int64)
    op = _boxes(axes, size, rows, cid)
    n_cls = len(op.size)
    before = _class_costs(axes, op)
    gain, rest = _move_gains(axes, size, rows, cid, op, before)
    for _ in range(MAX_MOVE_PASSES):
        cand = _nonzero((gain > 1e-9) & (rest >= rule.k))
        if not len(cand) or n_cls < 2:
            break
        most = max(1, MAX_MOVE_CELLS // (n_cls * len(axes)))
        if len(cand) > most:  # the best-gain tuples only
            cand = np.sort(cand[np.lexsort((cand, -gain[cand]))[:most]])
        target, added = _cheapest(axes, size, op, before, rows[cand], cid[cand])
        net = gain[cand] - added
        good = _nonzero(net > 1e-9)
        if not len(good):
            break
        picks = _disjoint_moves(good[np.lexsort((cand[good], -net[good]))], cid[cand], target, n_cls)
        new_cid = cid.copy()
        new_cid[cand[picks]] = target[picks]
        if not rule.constraints.k_only:
            sizes = np.bincount(new_cid, weights=size[rows], minlength=n_cls).astype(np.int64)
            fine = rule.ok(sizes, rows, new_cid)
            keep = fine[cid[cand[picks]]] & fine[target[picks]]
            new_cid[cand[picks[~keep]]] = cid[cand[picks[~keep]]]
            picks = picks[keep]
            if not len(picks):
                break
        changed = np.zeros(n_cls, dtype=bool)
        changed[cid[cand[picks]]] = changed[target[picks]] = True
        cid = new_cid
        klass[rows] = ids[cid]
        moved += len(picks)
        _reprice_moved(axes, size, rows, cid, changed, op, before, gain, rest)
    return moved


def _disjoint_moves(good: np.ndarray, src: np.ndarray, dst: np.ndarray, n_cls: int) -> np.ndarray:
    """The moves `good` (best first) kept so that every class is the source or the target of one at most.

    `src`, `dst`: each candidate's class and target class.

    >>> _disjoint_moves(np.array([2, 0, 1]), np.array([0, 1, 2]), np.array([1, 3, 3]), 4)
    array([2, 0])
    """
    used = np.zeros(n_cls, dtype=bool)
    picks = []
    for i in good:
        s, d = src[i], dst[i]
        if used[s] or used[d]:
            continue
        used[s] = used[d] = True
        picks.append(i)
    return np.array(picks, dtype=np.int64)


def _reprice_moved(
    axes: Sequence[_Axis],
    size: np.ndarray,
    rows: np.ndarray,
    cid: np.ndarray,
    changed: np.ndarray,
    op: _Open,
    before: np.ndarray,
    gain: np.ndarray,
    rest: np.ndarray,
) -> None:
    """After a move pass: the boxes and costs of the `changed` classes and their tuples' gains, priced again.

    Only the classes a move touched change; edits `op`, `before`, `gain` and `rest` in place.
    """
    sel = _nonzero(changed[cid])
    local, _ = _dense(cid[sel], len(changed))
    sub = _boxes(axes, size, rows[sel], local)
    at = _nonzero(changed)
    op.size[at] = sub.size
    for j in range(len(axes)):
        op.lo[j][at], op.hi[j][at] = sub.lo[j], sub.hi[j]
    before[at] = _class_costs(axes, sub)
    gain[sel], rest[sel] = _move_gains(axes, size, rows[sel], local, sub, before[at])


def _move_gains(
    axes: Sequence[_Axis], size: np.ndarray, rows: np.ndarray, cid: np.ndarray, op: _Open, before: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per tuple: what its class's cost falls by without it (``cost(C) - cost(C - t)``), and the rows left in C."""
    rest = op.size[cid] - size[rows]
    after = np.zeros(len(rows))
    for j, ax in enumerate(axes):
        t_lo, t_hi = _ranges_of(ax.lo, ax.hi, rows)
        lo, hi = _without(t_lo, cid, op.lo[j], np.minimum), _without(t_hi, cid, op.hi[j], np.maximum)
        after += rest * ax.cost(np.where(rest > 0, lo, op.lo[j][cid]), np.where(rest > 0, hi, op.hi[j][cid]))
    return before[cid] - after, rest


def _without(x: np.ndarray, cid: np.ndarray, extreme: np.ndarray, fn: np.ufunc) -> np.ndarray:
    """Per tuple, the class's min (or max, by `fn`) of `x` over the other tuples of its class."""
    ext = extreme.take(cid)
    at = x == ext
    on, off = _nonzero(at), _nonzero(~at)  # index arrays: a boolean index costs more here
    n_at = np.bincount(cid.take(on), minlength=len(extreme))
    second = np.full(len(extreme), np.iinfo(np.int64).max if fn is np.minimum else -1, dtype=np.int64)
    fn.at(second, cid.take(off), x.take(off))
    alone = at & (n_at.take(cid) == 1)
    return np.where(alone, second.take(cid), ext)


def topdown_partition(
    aggregates: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    max_suppressed: int = 0,
    constraints: Constraints | None = None,
    improve: bool = True,
    max_rounds: int = MAX_ROUNDS,
    balances: Sequence[Balance] | None = None,
    penalties: Sequence[float] | None = None,
    starts: Sequence[np.ndarray] = (),
) -> TopdownResult:
    """Top-down local recoding of class aggregates (see the module docstring).

    Parameters
    ----------
    aggregates
        One row per distinct quasi-identifier tuple: the qid columns (String labels,
        nodes of their hierarchies) and ``size``.
    hierarchies
        qid -> :class:`~polars_anon.Hierarchy` (its keys are the qids, in order).
    k
        Minimum class size, from 1 to the number of rows.
    max_suppressed
        Rows that may be suppressed (steps 3, 5 and 6).
    constraints
        Privacy models besides k (:class:`~polars_anon.privacy.constraints.Constraints`
        over the same aggregates): every split, merge and suppression keeps each class
        satisfying them.
    improve
        Run step 4 (re-split pairs of classes, move tuples between classes) and step 7
        (regroup late classes; with privacy models every class, then move once more).
    max_rounds
        Re-anonymizations of the set-aside rows (step 2) before the last round.
    balances
        Split balances tried, the cheapest partition after step 6 kept (default
        :data:`SPLIT_BALANCES`, with privacy models :data:`MODEL_BALANCES`); a pair
        ``(first, later)`` is one balance for the first pass of step 1, another for the
        re-anonymizations of step 2.
    penalties
        Set-aside penalties tried with each balance (default 0 alone, with privacy
        models :data:`ASIDE_PENALTIES`).

    Examples
    --------
    >>> age = Hierarchy.from_dict({"*": {"20-29": ["21", "25"], "30-39": ["31", "35"]}})
    >>> agg = pl.DataFrame({"age": ["21", "25", "31", "35"], "size": [2, 1, 1, 2]})
    >>> res = topdown_partition(agg, {"age": age}, 3)
    >>> [age.label_of(i) for i in res.nodes["age"]]
    ['20-29', '20-29', '30-39', '30-39']
    """
    t0 = time.perf_counter()
    qids = list(hierarchies)
    size = aggregates["size"].to_numpy().astype(np.int64)
    n_rows = int(size.sum())
    check_k(k, n_rows or None, who="topdown")  # an empty table: k's type alone
    axes = _Axes([_Axis(hierarchies[q], aggregates[q]) for q in qids])  # and what a run builds once from them
    rule = _Rule(int(k), Constraints(size, int(k)) if constraints is None else constraints)
    balances, penalties, margin = _search_defaults(rule, balances, penalties)
    problem = _Problem(aggregates, qids, axes, size, rule, max_rounds, max_suppressed)
    kept, least = _candidates(problem, balances, penalties, starts, margin)
    best = min(
        (_finish(axes, size, rule, max_suppressed, x, improve) for x in kept if x.cost <= least * (1 + margin)),
        key=lambda x: x.cost,
    )
    if improve:  # the partition kept only: the regrouping costs about one finish
        _regroup(axes, size, rule, best)
    klass, suppressed, resplit, moved = best.klass, best.suppressed, best.resplit, best.moved
    res = _result(axes, qids, size, klass, suppressed, best.set_aside, best.repaired, time.perf_counter() - t0)
    res.resplit, res.moved, res.balance, res.regrouped = resplit, moved, best.balance, best.regrouped
    res.own = {q: ax.value for q, ax in zip(qids, axes)}
    return res


def _search_defaults(
    rule: _Rule, balances: Sequence[Balance] | None, penalties: Sequence[float] | None
) -> tuple[Sequence[Balance], Sequence[float], float]:
    """The balances and set-aside penalties tried (None: the defaults for k alone or with models), and the margin.

    The margin: candidates whose cost is within ``1 + margin`` of the least are finished.
    """
    k_only = rule.constraints.k_only
    if balances is None:
        balances = SPLIT_BALANCES if k_only else MODEL_BALANCES
    if penalties is None:
        penalties = (0.0,) if k_only else ASIDE_PENALTIES
    return balances, penalties, IMPROVE_MARGIN if not k_only else IMPROVE_MARGIN_K


def _regroup(axes: Sequence[_Axis], size: np.ndarray, rule: _Rule, best: _Built) -> None:
    """Step 7 on the kept partition `best` (edited in place); with privacy models, step 4's moves once more after it."""
    best.regrouped = _regroup_late(axes, size, best.klass, rule, _first(best.balance), _late(best, rule))
    if not rule.constraints.k_only:  # steps 5 and 6 changed classes after step 4's moves: move once more
        best.moved += _moves(axes, size, best.klass, rule)


@dataclass(frozen=True)
class _Problem:
    """What every candidate build of a run shares: the aggregates and their qids, axes and sizes, the rule, and the
    limits on the re-anonymization rounds and the suppressed rows."""

    aggregates: pl.DataFrame
    qids: Sequence[str]
    axes: Sequence[_Axis]
    size: np.ndarray
    rule: _Rule
    max_rounds: int
    max_suppressed: int


def _candidates(
    problem: _Problem,
    balances: Sequence[Balance],
    penalties: Sequence[float],
    starts: Sequence[np.ndarray],
    margin: float,
) -> tuple[list[_Built], float]:
    """Steps 1-3 for every (start, penalty, balance), in that order, and the least cost: the builds not stopped.

    Per start, each penalty's first balance is built first, then the penalties in the order of those costs, so the
    least cost is found early; a build that already costs more than `margin` above the least so far is stopped (it
    would not be finished: its classes only grow, see :func:`_passes`), so the partition kept is the same. A penalty
    whose first build was stopped is not built with the other balances: on the 18 cells of the local-recoding bench
    with privacy models no such build came within the margin (with 2-diversity every penalty-2 build stopped), and
    the partition kept was the same in all 18 (``benchmarks/results/topdown_profile.md``, fourteenth part). The
    penalties after the first are built only when the first one's first build shows the models binding
    (:func:`_models_bind`).
    """
    built: dict[tuple[int, int, int], _Built] = {}  # by (start, penalty, balance) index: the order kept on ties
    least = np.inf

    def run(s_i: int, start: np.ndarray | None, memo: dict, p_i: int, b_i: int) -> float:
        nonlocal least
        bound = least * (1 + margin) * (1 + _BOUND_SLACK)
        x = _build(problem, balances[b_i], penalties[p_i], start, memo, bound)
        if x is None:
            return np.inf
        built[s_i, p_i, b_i] = x
        least = min(least, x.cost)
        return x.cost

    for s_i, start in enumerate((None, *starts)):
        memo: dict = {}  # first passes shared by the balances that begin alike
        firsts = {0: run(s_i, start, memo, 0, 0)}
        if _models_bind(built.get((s_i, 0, 0))):
            firsts |= {p_i: run(s_i, start, memo, p_i, 0) for p_i in range(1, len(penalties))}
        for p_i in sorted(firsts, key=lambda i: (firsts[i], i)):
            if firsts[p_i] == np.inf:  # its first build was stopped: the penalty is not tried further
                continue
            for b_i in range(1, len(balances)):
                run(s_i, start, memo, p_i, b_i)
    return [built[key] for key in sorted(built)], least


ASIDE_AGAIN = 0.5
"""With privacy models, the set-aside penalties after the first are built only when the first penalty's first build
set aside again, in step 2's first re-anonymization, at least this share of the rows its first pass set aside."""


def _models_bind(first: _Built | None) -> bool:
    """Whether the other set-aside penalties are worth building, from the first penalty's first build (None: stopped).

    The penalty steers the splits away from parts that fail the privacy models. Rows that k alone set aside (rare
    values) mostly find a class when step 2 re-anonymizes them together; rows the models set aside are set aside
    again (:data:`ASIDE_AGAIN`). On Adult with ``occupation`` sensitive, k = 2-100, a second pass set aside again
    27-38 % of the first pass's rows with 2-diversity, where every penalty-2 build lost (stopped by the bound), and
    74-79 % with 0.2-closeness (either distance), where penalty 2 won in most cells
    (``benchmarks/results/topdown_profile.md``, fourteenth part).
    """
    if first is None or not first.set_aside[0]:
        return first is None
    again = first.set_aside[1] if len(first.set_aside) > 1 else 0
    return again >= ASIDE_AGAIN * first.set_aside[0]


@dataclass
class _Built:
    """Steps 1-4 under one split balance: classes, suppressed rows and their cost (suppressed rows as roots)."""

    balance: Balance
    penalty: float
    klass: np.ndarray
    suppressed: np.ndarray
    set_aside: list[int]
    repaired: int
    resplit: int
    moved: int
    cost: float
    late: np.ndarray
    """Per aggregate row: placed by pass :data:`LATE_PASS` of step 2 or later, or a leftover (step 3)."""
    regrouped: int = 0


def _build(
    problem: _Problem,
    balance: Balance,
    penalty: float,
    start: np.ndarray | None = None,
    memo: dict | None = None,
    bound: float = np.inf,
) -> _Built | None:
    """Steps 1-3 with one split balance (:data:`SPLIT_BALANCES`) and set-aside penalty (:data:`ASIDE_PENALTIES`).

    None when the classes of the passes of steps 1-2 already cost more than `bound` (:func:`_passes`).
    """
    axes, size, rule, max_rounds = problem.axes, problem.size, problem.rule, problem.max_rounds
    late = np.full(len(size), max_rounds + 2, dtype=np.int64)  # the pass that placed each row (leftovers: none)
    passes = _passes(axes, size, rule, max_rounds, balance, penalty, start, late, memo, bound)
    if passes is None:
        return None
    klass, n_classes, aside, set_aside = passes
    suppressed = np.zeros(len(size), dtype=bool)
    repaired = 0
    if len(aside):
        klass, n_classes, dropped = _leftovers(problem, klass, n_classes, aside)
        suppressed[dropped] = True
        repaired = 0 if len(dropped) else set_aside[-1]
    klass = np.where(suppressed, -1, klass)
    cost = _total_cost(axes, size, klass) + len(axes) * float(size[suppressed].sum())
    return _Built(balance, penalty, klass, suppressed, set_aside, repaired, 0, 0, cost, late >= LATE_PASS)


def _late(built: _Built, rule: _Rule) -> np.ndarray:
    """The rows whose classes step 7 regroups: the late ones, with privacy models every row (see the docstring)."""
    return built.late if rule.constraints.k_only else np.ones(len(built.late), dtype=bool)


def _finish(
    axes: Sequence[_Axis], size: np.ndarray, rule: _Rule, max_suppressed: int, built: _Built, improve: bool
) -> _Built:
    """Steps 4-6 on a partition of steps 1-3 (edited in place), its cost updated (suppressed rows as roots)."""
    klass, suppressed = built.klass, built.suppressed
    if improve:
        built.resplit = _resplit(axes, size, klass, rule, _first(built.balance))
        built.moved = _moves(axes, size, klass, rule)
    budget = max_suppressed - int(size[suppressed].sum())
    if budget > 0 and not rule.constraints.k_only:
        suppressed[_unblock(axes, size, klass, rule, budget, _first(built.balance), built.penalty)] = True
        budget = max_suppressed - int(size[suppressed].sum())
    if budget > 0:
        suppressed[_outliers(axes, size, np.where(suppressed, -1, klass), rule, budget)] = True
    klass[suppressed] = -1
    built.cost = _total_cost(axes, size, klass) + len(axes) * float(size[suppressed].sum())
    return built


def _passes(
    axes: Sequence[_Axis],
    size: np.ndarray,
    rule: _Rule,
    max_rounds: int = MAX_ROUNDS,
    balance: Balance = 0.0,
    penalty: float = 0.0,
    start: np.ndarray | None = None,
    placed: np.ndarray | None = None,
    memo: dict | None = None,
    bound: float = np.inf,
) -> tuple[np.ndarray, int, np.ndarray, list[int]] | None:
    """Steps 1 and 2: ``(class per aggregate row or -1, classes, leftover tuples, rows set aside per pass)``.

    `start` (optional): a starting class per aggregate row for the first pass (-1: set aside at once).
    `placed` (optional, edited): the pass that placed each aggregate row (1 for the first).
    `memo` (optional): the first pass kept by (first balance, penalty), reused by a balance
    ``(first, later)`` whose first pass was run already (same `start`).
    `bound` (optional): None as soon as the classes placed so far cost more. A bound on the cost of the
    partition after step 3 too: the classes of a pass never lose rows, step 3 only merges classes (the union of
    classes costs at least their sum: its nodes are at or above theirs) or suppresses leftover rows.
    """
    spent = 0.0
    klass = np.full(len(size), -1, dtype=np.int64)
    n_classes, todo, set_aside = 0, np.arange(len(size)), []
    aside = np.zeros(0, dtype=np.int64)
    first: np.ndarray | None = None
    if start is not None:
        todo = _nonzero(start >= 0)
        first = _dense(start[todo], int(start.max()) + 1)[0] if len(todo) else None
    key = (_first(balance), penalty)
    for rounds in range(1, max_rounds + 2):
        if rounds == 1 and memo is not None and key in memo:
            kept, n_classes, aside = memo[key]
            klass[:] = kept
        else:
            b = _first(balance) if rounds == 1 else _later(balance)
            n_classes, aside, _ = _specialize(
                axes, size, todo, rule, rounds <= max_rounds, klass, n_classes, first, b, penalty
            )
            if rounds == 1 and start is not None:
                aside = np.sort(np.concatenate([aside, _nonzero(start < 0)]))
            if rounds == 1 and memo is not None:
                memo[key] = (klass.copy(), n_classes, aside)
        first = None
        if placed is not None:
            placed[todo[klass[todo] >= 0]] = rounds
        if bound < np.inf:
            now = np.full(len(size), -1, dtype=np.int64)
            now[todo] = klass[todo]
            spent += _total_cost(axes, size, now)
            if spent > bound:
                return None
        set_aside.append(int(size[aside].sum()))
        if set_aside[-1] < rule.k or len(aside) == len(todo):
            break
        todo = aside
    return klass, n_classes, aside, set_aside


def _result(
    axes: Sequence[_Axis],
    qids: Sequence[str],
    size: np.ndarray,
    klass: np.ndarray,
    suppressed: np.ndarray,
    set_aside: list[int],
    repaired: int,
    seconds: float,
) -> TopdownResult:
    """Number the classes by their first row and publish each as its lowest common ancestors."""
    kept = _nonzero(~suppressed)
    uniq, first, dense = np.unique(klass[kept], return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    class_id = np.full(len(size), -1, dtype=np.int64)
    class_id[kept] = rank[dense.ravel()]
    nodes = {q: np.zeros(len(size), dtype=np.int64) for q in qids}
    if len(kept):
        op = _boxes(axes, size, kept, class_id[kept])
        for j, (q, ax) in enumerate(zip(qids, axes)):
            nodes[q][kept] = ax.node(op.lo[j], op.hi[j])[class_id[kept]]
    return TopdownResult(class_id, nodes, suppressed, len(uniq), len(set_aside), set_aside, repaired, seconds)


def global_start(task: Task, max_suppressed: int) -> np.ndarray:
    """The classes of the best full-domain node as a starting partition (one class id per aggregate row).

    The node is :func:`polars_anon.algorithms.fulldomain.search`'s optimum of the report's loss
    (``ncp``) with the same suppression budget; the tuples it suppresses get -1 (set aside).
    Raises :class:`~polars_anon.errors.InfeasibleError` when no node passes the privacy models.

    >>> age = Hierarchy.from_dict({"*": {"20-29": ["21", "25"], "30-39": ["31", "35"]}})
    >>> agg = pl.DataFrame({"age": ["21", "25", "31", "35"], "size": pl.Series([2, 1, 1, 2], dtype=pl.UInt32)})
    >>> global_start(Task(agg, ["age"], {"age": age}, 3), 0).tolist()
    [0, 0, 1, 1]
    """
    found = fulldomain.search(task, max_suppressed)
    agg = task.aggregates
    codes = []
    for q in task.qids:
        h = task.hierarchies[q]
        codes.append(h.generalize_ids(found.levels[q])[h.ids_of(agg[q])])
    inv = np.unique(np.stack(codes, 1), axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    inv[found.small] = -1
    return inv


def search_balances(search: Search, k: int) -> tuple[Balance, ...] | None:
    """The split balances option ``search`` tries at `k` (None: the defaults of :func:`topdown_partition`).

    ``"all"``: every balance (:data:`SPLIT_BALANCES`, with privacy models :data:`MODEL_BALANCES`); ``"one"``:
    :data:`ONE_BALANCE` alone (with privacy models once per penalty of :data:`ASIDE_PENALTIES`); ``"auto"``: b = 0
    alone up to k = :data:`AUTO_ZERO_K`, :data:`AUTO_BALANCES` up to k = :data:`AUTO_ONE_K` (each once per penalty),
    ``"all"`` above.

    >>> [search_balances("auto", k) for k in (20, 21, 50, 51)], search_balances("all", 2), search_balances("one", 100)
    ([(0.0,), (0.0, 0.25), (0.0, 0.25), None], None, (0.25,))
    """
    if search == "one":
        return (ONE_BALANCE,)
    if search == "auto" and k <= AUTO_ZERO_K:
        return (0.0,)
    if search == "auto" and k <= AUTO_ONE_K:
        return AUTO_BALANCES
    return None


@dataclass(frozen=True)
class TopdownOptions:
    """Options of ``method="topdown"`` (see the module docstring)."""

    max_suppressed: int = 0
    """Rows that may be suppressed (removed, counted as roots in the loss) when that lowers the loss."""
    improve: bool = True
    """Re-split pairs of classes, move tuples and regroup late classes when that lowers the loss (steps 4, 7)."""
    global_start: bool = False
    """Also start step 1 from the classes of the best full-domain node (:func:`global_start`); costs CPU."""
    search: Search = "auto"
    """The candidate builds of steps 1-3 (:data:`Search`): every balance, one (:data:`ONE_BALANCE`), or by k
    (b = 0 alone up to k = :data:`AUTO_ZERO_K`, :data:`AUTO_BALANCES` up to k = :data:`AUTO_ONE_K`, every balance
    above)."""

    def __post_init__(self) -> None:
        check_max_suppressed(self.max_suppressed)
        for name in ("improve", "global_start"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidParameterError(f"{name} must be true or false, got {getattr(self, name)!r}")


MISSES = (
    "topdown splits from the roots only into parts that meet the models, so it misses classes that lie only below "
    "parts failing them (a publication may exist there): global_start=True also starts from the best full-domain "
    "node, and method='fulldomain' searches every full-domain node"
)
"""What topdown's search cannot find, said in its refusal (:attr:`polars_anon.algorithms.Method.misses`)."""


@register_method("topdown", TopdownOptions, misses=MISSES)
def run(task: Task, options: TopdownOptions) -> Plan:
    """Top-down local recoding (see the module docstring); publishes every class as its lowest common ancestors."""
    qids = list(task.qids)
    hierarchies = {q: task.hierarchies[q] for q in qids}
    agg = task.aggregates
    starts = []
    if options.global_start:
        try:
            starts.append(global_start(task, options.max_suppressed))
        except InfeasibleError:  # no full-domain node passes the privacy models: the roots alone
            pass
    res = topdown_partition(
        agg,
        hierarchies,
        task.k,
        options.max_suppressed,
        task.constraints,
        options.improve,
        balances=search_balances(options.search, task.k),
        starts=starts,
    )
    details = {
        "max_suppressed": options.max_suppressed,
        "improve": options.improve,
        "global_start": options.global_start,
        "split_balance": list(res.balance) if isinstance(res.balance, tuple) else res.balance,
        "resplit_pairs": res.resplit,
        "regrouped_groups": res.regrouped,
        "moved_tuples": res.moved,
        "rounds": res.rounds,
        "set_aside": res.set_aside,
        "repaired": res.repaired,
        "classes_before": agg.height,
        "classes_after": res.n_classes,
    }
    nodes = {q: above_own(hierarchies[q], res.nodes[q], res.own[q], res.class_id) for q in qids}
    suppressed = res.suppressed if res.suppressed.any() else None
    # the rows' own ids, looked up once (step 1's axes): the map's checks and the report read them, not the labels
    return Plan(TupleMap.from_nodes(agg, hierarchies, nodes, suppressed, leaves=res.own), details)


def above_own(hierarchy: Hierarchy, nodes: np.ndarray, own: np.ndarray, class_id: np.ndarray) -> np.ndarray:
    """Each class's published node lifted, where needed, to an ancestor (or itself) of every member's own node.

    The classes' nodes are the lowest common ancestors of their leaf ranges. A member whose own value is an inner
    node (a null rooted by ``null="suppress"``, an input value already generalized) spans the same leaves as a
    chain of single-child nodes below it, and the range's ancestor is the lowest of them: a value the member never
    had ('a' for a null under a root whose one child is 'a'). Such a class publishes the highest of its members'
    nodes on that chain instead; with every member at a leaf nothing changes. `nodes`, `own`: node ids per row;
    `class_id`: the class per row (-1: suppressed, published at the root anyway).

    >>> h = Hierarchy.suppression(["a"])  # '*' -> 'a': the root has one child
    >>> above_own(h, np.array([1, 1, 1]), np.array([1, 0, 1]), np.array([0, 0, 1])).tolist()
    [0, 0, 1]
    """
    lifted = hierarchy.lca(nodes, own)  # the node itself, or a member's own node above it on its chain
    if np.array_equal(lifted, nodes):
        return nodes
    kept = class_id >= 0
    depth = hierarchy.depth[lifted]
    shallowest = np.full(int(class_id.max(initial=-1)) + 1, np.iinfo(np.int64).max)
    np.minimum.at(shallowest, class_id[kept], depth[kept])
    out = nodes.copy()
    out[kept] = hierarchy.ancestors_by_depth[nodes[kept], shallowest[class_id[kept]]]
    return out
