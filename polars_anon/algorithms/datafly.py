"""Datafly: greedy full-domain generalization of the attribute with the most values.

[paper 003 §2.1, Algorithm 1] (Sweeney). Starting from the untouched table, each
round generalizes by one level the quasi-identifier that has the most distinct
values at its current level (ties: the earlier quasi-identifier; an attribute at
its hierarchy's top is never chosen), until at most ``max_suppressed`` rows (default
k, the paper's "more than k tuples are not k-anonymous") are in classes smaller than
k and at least one row is left to publish (a budget that covers every row never
suppresses the whole table: Datafly then generalizes on). Those rows are then suppressed:
removed (``suppress="remove"``, the paper) or
published as the roots of every hierarchy (``suppress="root"``); the report counts
them under ``suppressed``.

Each round is one group-by over the class aggregates (one row per distinct tuple),
never over the rows. With privacy models (``task.constraints``), a class "smaller than
k" reads "violating k or a model": Datafly generalizes until every class satisfies every
model or is suppressed within the budget (with ``suppress="root"`` the root class must
satisfy them too).

Datafly declares no ``metric``: its choice of attribute is the paper's (most
distinct values), it minimizes no objective, so ``metric=`` is refused and names
the methods that take one (``fulldomain`` finds the optimum of each objective of
:mod:`polars_anon.algorithms.objectives`). Choosing the attribute by an objective
instead would be another heuristic, not Datafly.

Reading taken for ``suppress="root"``: the suppressed rows form one class (all
roots) together with any rows already published as all roots; that class must
hold at least k rows, so Datafly keeps generalizing while it would not (a
fully generalized table has no small class, so the loop ends).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.generalize import generalize
from polars_anon.options import check_max_suppressed
from polars_anon.tuplemap import TupleMap

__all__ = ["DataflyOptions", "datafly_levels"]


@dataclass(frozen=True)
class DataflyOptions:
    """Options of ``method="datafly"``."""

    max_suppressed: int | None = None
    """Rows that may be suppressed; None: k (the paper's rule)."""
    suppress: Literal["remove", "root"] = "remove"
    """Suppressed rows are removed, or published as the roots of every hierarchy."""

    def __post_init__(self) -> None:
        check_max_suppressed(self.max_suppressed)


def _generalized(task: Task, levels: dict[str, int]) -> pl.LazyFrame:
    """Aggregates with ``__anon_out_<qid>`` (published labels) and ``__anon_class`` (class size)."""
    qids = list(task.qids)
    agg = pl.LazyFrame(task.aggregates)
    outs = [f"__anon_out_{q}" for q in qids]
    out = generalize(
        agg.select(pl.col(q).alias(o) for q, o in zip(qids, outs)),
        {o: task.hierarchies[q] for q, o in zip(qids, outs)},
        {o: levels[q] for q, o in zip(qids, outs)},
    )
    return pl.concat([agg, out], how="horizontal").with_columns(pl.col("size").sum().over(outs).alias("__anon_class"))


def _small(task: Task, levels: dict[str, int]) -> pl.Expr:
    """Per aggregate row: its class at `levels` violates k or a privacy model (``task.constraints``)."""
    if task.constraints.k_only:
        return pl.col("__anon_class") < task.k
    codes = []
    for q in task.qids:
        h = task.hierarchies[q]
        codes.append(h.generalize_ids(levels[q])[h.ids_of(task.aggregates[q])])
    dense = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)[1].ravel()
    mask = task.constraints.violating(dense, levels if task.constraints.needs_levels else None)[dense]
    return pl.lit(pl.Series(mask, dtype=pl.Boolean))


def _root_class_ok(task: Task, g: pl.LazyFrame, small: pl.Expr, all_root: pl.Expr) -> bool:
    """``suppress="root"``: the rows published as roots (suppressed or not) form one class.

    That class must satisfy every model.
    """
    mask = g.select(small | all_root).collect().to_series().to_numpy()  # materializes: one row per tuple
    return task.constraints.satisfied(np.flatnonzero(mask))


def datafly_levels(task: Task, max_suppressed: int, suppress: str = "remove") -> tuple[dict[str, int], int, int]:
    """Run the Datafly rounds; returns ``(levels, suppressed_rows, rounds)``.

    >>> import polars as pl
    >>> from polars_anon import Hierarchy
    >>> agg = pl.DataFrame({"age": ["31", "33", "38"], "size": [1, 1, 1]}, schema_overrides={"size": pl.UInt32})
    >>> t = Task(agg, ["age"], {"age": Hierarchy.intervals(range(30, 40), [5, 10])}, k=2)
    >>> datafly_levels(t, max_suppressed=1)
    ({'age': 1}, 1, 1)
    """
    qids = list(task.qids)
    levels = {q: 0 for q in qids}
    tops = {q: task.hierarchies[q].height - 1 for q in qids}
    k, n_rows = task.k, task.n_rows
    rounds = 0
    while True:
        g = _generalized(task, levels)
        small = _small(task, levels)
        all_root = pl.all_horizontal(pl.col(f"__anon_out_{q}") == task.hierarchies[q].root for q in qids)
        stats = g.select(
            pl.col("size").filter(small).sum().cast(pl.Int64).alias("small"),
            pl.col("size").filter(~small & all_root).sum().cast(pl.Int64).alias("root_rows"),
            *[pl.col(f"__anon_out_{q}").n_unique().alias(q) for q in qids],
        ).collect()  # materializes: one row
        n_small, root_rows = int(stats["small"][0]), int(stats["root_rows"][0])
        ok = n_small <= max_suppressed and (n_small < n_rows or suppress == "root")
        if suppress == "root" and n_small:
            ok = (
                ok
                and n_small + root_rows >= k
                and (task.constraints.k_only or _root_class_ok(task, g, small, all_root))
            )
        open_qids = [q for q in qids if levels[q] < tops[q]]
        if ok or not open_qids:
            return levels, n_small, rounds
        best = max(open_qids, key=lambda q: (int(stats[q][0]), -qids.index(q)))
        levels[best] += 1
        rounds += 1


@register_method("datafly", DataflyOptions)
def run(task: Task, options: DataflyOptions) -> Plan:
    """Datafly (see the module docstring)."""
    max_suppressed = task.k if options.max_suppressed is None else options.max_suppressed
    levels, n_small, rounds = datafly_levels(task, max_suppressed, options.suppress)
    small = (
        _generalized(task, levels).select(_small(task, levels)).collect().to_series().to_numpy()
    )  # materializes: one row per class
    details = {"levels": levels, "rounds": rounds, "suppress": options.suppress, "max_suppressed": max_suppressed}
    if options.suppress == "root":  # published as the roots, not removed
        nodes = {
            q: np.where(small, 0, h.generalize_ids(levels[q])[h.ids_of(task.aggregates[q])])
            for q, h in task.hierarchies.items()
        }
        return Plan(TupleMap.from_nodes(task.aggregates, task.hierarchies, nodes), details | {"rows_at_root": n_small})
    return Plan(TupleMap.from_levels(task.aggregates, task.hierarchies, levels, small if n_small else None), details)
