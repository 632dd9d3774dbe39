"""Datafly: greedy full-domain generalization of the attribute with the most values.

[paper 003 §2.1, Algorithm 1] (Sweeney). Starting from the untouched table, each
round generalizes by one level the quasi-identifier that has the most distinct
values at its current level (ties: the earlier quasi-identifier; an attribute at
its hierarchy's top is never chosen), until at most ``max_suppressed`` rows (default
k, the paper's "more than k tuples are not k-anonymous") are in classes smaller than
k. Those rows are then suppressed: removed (``suppress="remove"``, the paper) or
published as the roots of every hierarchy (``suppress="root"``); the report counts
them under ``suppressed``.

Each round is one group-by over the class aggregates (one row per distinct tuple),
never over the rows.

Reading taken for ``suppress="root"``: the suppressed rows form one class (all
roots) together with any rows already published as all roots; that class must
hold at least k rows, so Datafly keeps generalizing while it would not (a
fully generalized table has no small class, so the loop ends).
"""

from __future__ import annotations

import polars as pl

from polars_anon.algorithms import Plan, Task, recode, register_method
from polars_anon.errors import InvalidParameterError
from polars_anon.generalize import generalize

__all__ = ["datafly_levels"]

_SUPPRESS = ("remove", "root")


def _generalized(task: Task, levels: dict[str, int]) -> pl.LazyFrame:
    """Aggregates with ``__anon_out_<qid>`` (published labels) and ``__anon_class`` (class size)."""
    qids = list(task.qids)
    agg = pl.LazyFrame(task.aggregates)
    out = generalize(agg.select(pl.col(q).alias(f"__anon_out_{q}") for q in qids), {f"__anon_out_{q}": task.hierarchies[q] for q in qids}, {f"__anon_out_{q}": lv for q, lv in levels.items()})
    outs = [f"__anon_out_{q}" for q in qids]
    return pl.concat([agg, out], how="horizontal").with_columns(pl.col("size").sum().over(outs).alias("__anon_class"))


def datafly_levels(task: Task, max_suppressed: int, suppress: str = "remove") -> tuple[dict[str, int], int, int]:
    """Run the Datafly rounds; returns ``(levels, suppressed_rows, rounds)``.

    >>> import polars as pl
    >>> from polars_anon import Hierarchy
    >>> agg = pl.DataFrame({"age": ["31", "33", "38"], "size": [1, 1, 1]}, schema_overrides={"size": pl.UInt32})
    >>> t = Task(pl.LazyFrame(), agg, ["age"], {"age": Hierarchy.intervals(range(30, 40), [5, 10])}, k=2)
    >>> datafly_levels(t, max_suppressed=1)
    ({'age': 1}, 1, 1)
    """
    qids = list(task.qids)
    levels = {q: 0 for q in qids}
    tops = {q: task.hierarchies[q].height - 1 for q in qids}
    k = task.k
    rounds = 0
    while True:
        g = _generalized(task, levels)
        small = pl.col("__anon_class") < k
        all_root = pl.all_horizontal(pl.col(f"__anon_out_{q}") == task.hierarchies[q].root for q in qids)
        stats = g.select(
            pl.col("size").filter(small).sum().cast(pl.Int64).alias("small"),
            pl.col("size").filter(~small & all_root).sum().cast(pl.Int64).alias("root_rows"),
            *[pl.col(f"__anon_out_{q}").n_unique().alias(q) for q in qids],
        ).collect()  # materializes: one row
        n_small, root_rows = int(stats["small"][0]), int(stats["root_rows"][0])
        ok = n_small <= max_suppressed
        if suppress == "root" and n_small:
            ok = ok and n_small + root_rows >= k
        open_qids = [q for q in qids if levels[q] < tops[q]]
        if ok or not open_qids:
            return levels, n_small, rounds
        best = max(open_qids, key=lambda q: (int(stats[q][0]), -qids.index(q)))
        levels[best] += 1
        rounds += 1


@register_method("datafly")
def run(task: Task) -> Plan:
    """Datafly (see the module docstring).

    Options: ``max_suppressed`` (int >= 0, default k), ``suppress`` ("remove" | "root").
    """
    options = dict(task.options)
    max_suppressed = options.pop("max_suppressed", task.k)
    suppress = options.pop("suppress", "remove")
    if options:
        raise InvalidParameterError(f"method 'datafly' does not take options {sorted(options)}; it takes max_suppressed, suppress")
    if isinstance(max_suppressed, bool) or not isinstance(max_suppressed, int) or max_suppressed < 0:
        raise InvalidParameterError(f"max_suppressed must be an integer >= 0, got {max_suppressed!r}")
    if suppress not in _SUPPRESS:
        raise InvalidParameterError(f"suppress must be one of {list(_SUPPRESS)}, got {suppress!r}")
    qids = list(task.qids)
    levels, n_small, rounds = datafly_levels(task, max_suppressed, suppress)
    small = pl.col("__anon_class") < task.k
    g = _generalized(task, levels)
    if suppress == "root":
        g = g.with_columns(
            pl.when(small).then(pl.lit(task.hierarchies[q].root)).otherwise(pl.col(f"__anon_out_{q}")).alias(f"__anon_out_{q}")
            for q in qids
        )
    mapping = g.with_columns(small.alias("__anon_small")).collect()  # materializes: one row per class
    published = recode(task.lf, mapping, qids, suppressed="__anon_small" if suppress == "remove" else None)
    details = {"levels": levels, "rounds": rounds, "suppress": suppress, "max_suppressed": max_suppressed}
    return Plan(published, n_small, details)
