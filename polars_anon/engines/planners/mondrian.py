"""Mondrian (strict, k) as SQL rounds on an engine, for class aggregates beyond ``driver_tuples``.

One implementation for DuckDB and Spark: both run the same SQL text over names the
engine makes (``view``, ``register``, ``keep``, ``drop``, ``quote``, ``sorted_set``: the
engine-specific bits). The rows never leave the engine; the driver holds what
:func:`polars_anon.algorithms.mondrian.run` holds besides the tuples: each quasi-identifier's
distinct values (its axis), and per round one row per open partition and attribute.

1. Per qid, its distinct values and their row counts (one grouping-sets query): the marginals
   the road checks (:func:`polars_anon.request.check_marginals`), then the axes
   (:func:`~polars_anon.algorithms.mondrian.axes`: the same orders, the same ranks) and a
   lookup (engine value -> rank) sent back to the engine.
2. The tuples table (engine side): the qid group-by with each tuple's ranks, ``size``,
   partition id 0, open.
3. Each round: the engine groups the open tuples by (partition, attribute, rank) and runs
   the cumulative counts (window sums); the driver reads one row per (partition,
   attribute): rows, distinct ranks, lowest and highest rank, and the lower median with
   the rows up to it and before it. It chooses the cuts exactly as the driver's
   :func:`~polars_anon.algorithms.mondrian.partition` (the same normalized widths, divided
   the same way; the papers' ``x <= pv`` cut, else ``x < pv``; ties to the earlier qid;
   right halves numbered in partition order) and sends them back (one row per cut); the
   engine rewrites the tuples table with the new partition ids.
4. The partitions' bounds (lowest, highest rank per attribute; the ranks themselves for
   sets) come to the driver, which labels them as the driver road does
   (:func:`~polars_anon.algorithms.mondrian.bounds_labels`); the labels go back and are
   joined to the tuples, then to the rows (a shuffle join, engine side).

The plan's map has one row per partition (a *partition map*, see :class:`~polars_anon.tuplemap.TupleMap`):
the original tuple where the partition holds one, null where it holds several; the engine's map
(one row per original tuple) stays in the engine. The report has every figure of the driver road
computable from partitions and the input's class-size histogram; the metrics of
:mod:`polars_anon.metrics` read every input tuple and are left out, listed in
``details.distributed.left_out``. Refused by the capability table: privacy models besides k,
``mode="relaxed"`` (its cuts deal a tuple's rows out by row order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon._progress import stage
from polars_anon.algorithms import Plan
from polars_anon.algorithms.mondrian import PARTITION as _PID
from polars_anon.algorithms.mondrian import Axis, axes, bound_sets, bounds_labels, publish_modes
from polars_anon.engines import SQLEngine, grouping_set_counts, key_col, labelled_marginals
from polars_anon.labels import label_series
from polars_anon.metrics.registry import metric_names
from polars_anon.pipeline.state import EnginePlan
from polars_anon.request import Request
from polars_anon.tuplemap import PARTITION, SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["MondrianPlanner", "plan_mondrian"]

_SZ, _OPEN = "__anon_size", "__anon_open"


def _x(j: int) -> str:
    return f"__anon_x{j}"


def _labels(native: pl.DataFrame, q: str, request: Request) -> pl.Series:
    """A qid's engine values as the driver road's String labels (nulls at the root under ``null="suppress"``)."""
    label = label_series(native[q])
    h = request.hierarchies.get(q)
    if h is not None and request.null == "suppress":
        label = label.fill_null(h.root)
    return label


class _Rounds:
    """The SQL of the rounds over one engine (names quoted by the engine)."""

    def __init__(self, engine: SQLEngine, qids: Sequence[str]) -> None:
        self.e, self.qids, self.m = engine, list(qids), len(qids)
        self.Q = engine.quote

    def tuples(self, rows: str, lookups: Sequence[str]) -> str:
        Q, qids = self.Q, self.qids
        cols = ", ".join(Q(q) for q in qids)
        keys = ", ".join(f"t.{Q(q)} AS {Q(key_col(q))}" for q in qids)
        ranks = ", ".join(f"l{j}.x AS {Q(_x(j))}" for j in range(self.m))
        joins = " ".join(
            f"JOIN {Q(lk)} l{j} ON t.{Q(q)} IS NOT DISTINCT FROM l{j}.v" for j, (q, lk) in enumerate(zip(qids, lookups))
        )
        return (
            f"SELECT {keys}, {ranks}, t.{Q(_SZ)} AS {Q(_SZ)}, CAST(0 AS BIGINT) AS {Q(_PID)}, TRUE AS {Q(_OPEN)} "
            f"FROM (SELECT {cols}, COUNT(*) AS {Q(_SZ)} FROM {Q(rows)} GROUP BY {cols}) t {joins}"
        )

    def input_sizes(self, work: str) -> str:
        """The input's class-size histogram: equal ranks are equal labels, so one class of the driver road."""
        Q = self.Q
        ranks = ", ".join(Q(_x(j)) for j in range(self.m))
        nulls = " OR ".join(f"{Q(key_col(q))} IS NULL" for q in self.qids)
        return (
            "SELECT s, CAST(COUNT(*) AS BIGINT) AS classes, CAST(SUM(nullrows) AS BIGINT) AS nullrows "
            f"FROM (SELECT CAST(SUM({Q(_SZ)}) AS BIGINT) AS s, "
            f"SUM(CASE WHEN {nulls} THEN {Q(_SZ)} ELSE 0 END) AS nullrows FROM {Q(work)} GROUP BY {ranks}) c GROUP BY s"
        )

    def stats(self, work: str) -> str:
        """One row per open (partition, attribute): rows ``n``, distinct ranks ``nd``, ``lo``, ``hi``, the lower
        median ``pv`` (the rank holding row ``(n + 1) // 2``), the rows up to it ``lhs`` and before it ``bef``.

        The (partition, attribute, rank) counts are one group-by over the attributes' rows stacked (a ``UNION ALL``
        of one projection per attribute), not one group-by per attribute: on Spark each group-by was a shuffle of
        its own (with adaptive execution, a job of its own: m + 2 jobs a round, now 3)."""
        Q, P = self.Q, self.Q(_PID)
        stacked = " UNION ALL ".join(
            f"SELECT {P} AS pid, {j} AS dim, {Q(_x(j))} AS x, {Q(_SZ)} AS sz FROM {Q(work)} WHERE {Q(_OPEN)}"
            for j in range(self.m)
        )
        freq = f"SELECT pid, dim, x, CAST(SUM(sz) AS BIGINT) AS c FROM ({stacked}) s GROUP BY pid, dim, x"
        over = "OVER (PARTITION BY pid, dim)"
        # 2 * ((n + 1) // 2) = n + n % 2: integer arithmetic that both dialects spell alike
        return (
            f"SELECT pid, dim, n, nd, lo, hi, x AS pv, cum AS lhs, cum - c AS bef FROM ("
            "SELECT pid, dim, x, c, CAST(SUM(c) OVER (PARTITION BY pid, dim ORDER BY x ASC NULLS LAST "
            "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT) AS cum, "
            f"CAST(SUM(c) {over} AS BIGINT) AS n, CAST(COUNT(*) {over} AS BIGINT) AS nd, "
            f"MIN(x) {over} AS lo, MAX(x) {over} AS hi FROM ({freq}) f) w "
            f"WHERE 2 * cum >= n + n % 2 AND 2 * (cum - c) < n + n % 2"
        )

    def cut(self, work: str, cuts: str) -> str:
        """The tuples with the new partition ids: ``x <= pv`` keeps its id, the rest takes ``rhs``; open = just cut."""
        Q, P = self.Q, self.Q(_PID)
        keep = ", ".join(
            [*(f"w.{Q(key_col(q))}" for q in self.qids), *(f"w.{Q(_x(j))}" for j in range(self.m)), f"w.{Q(_SZ)}"]
        )
        chosen = "CASE d.dim " + " ".join(f"WHEN {j} THEN w.{Q(_x(j))}" for j in range(self.m)) + " END"
        return (
            f"SELECT {keep}, "
            f"CASE WHEN d.pid IS NULL THEN w.{P} WHEN {chosen} <= d.pv THEN w.{P} ELSE d.rhs END AS {P}, "
            f"d.pid IS NOT NULL AS {Q(_OPEN)} FROM {Q(work)} w LEFT JOIN {Q(cuts)} d ON w.{P} = d.pid"
        )

    def bounds(self, work: str, sets: Sequence[int]) -> str:
        Q, P = self.Q, self.Q(_PID)
        aggs = []
        for j in range(self.m):
            aggs += [f"MIN({Q(_x(j))}) AS {Q(f'__anon_lo{j}')}", f"MAX({Q(_x(j))}) AS {Q(f'__anon_hi{j}')}"]
            if j in sets:
                aggs.append(f"{self.e.sorted_set(Q(_x(j)))} AS {Q(f'__anon_set{j}')}")
        return f"SELECT {P}, {', '.join(aggs)}, CAST(SUM({Q(_SZ)}) AS BIGINT) AS {Q(SIZE)} FROM {Q(work)} GROUP BY {P}"

    def mapping(self, work: str, labels: str) -> str:
        Q, P = self.Q, self.Q(_PID)
        keys = ", ".join(f"w.{Q(key_col(q))}" for q in self.qids)
        outs = ", ".join(f"l.{Q(out_col(q))}" for q in self.qids)
        return f"SELECT {keys}, {outs}, FALSE AS {Q(SUPPRESSED)} FROM {Q(work)} w JOIN {Q(labels)} l ON w.{P} = l.{P}"


class _Cutter:
    """The driver's choice of cuts from one round's statistics (as
    :func:`~polars_anon.algorithms.mondrian.partition`)."""

    def __init__(
        self, axis_list: Sequence[Axis], present: Sequence[np.ndarray], counted: Sequence[bool], k: int
    ) -> None:
        bases = [len(ax.labels) for ax in axis_list]
        self.offsets = np.concatenate([[0], np.cumsum(bases)[:-1]]).astype(np.int64)
        self.values = np.concatenate([ax.values for ax in axis_list]).astype(np.float64)
        spans = [
            float(len(r) - 1) if c else float(ax.values[r].max() - ax.values[r].min())
            for ax, r, c in zip(axis_list, present, counted)
        ]  # over the values present, as the driver's partition()
        self.spans = np.array([sp if sp > 0 else 1.0 for sp in spans], dtype=np.float64)
        self.counted = np.array(counted, dtype=bool)
        self.k = k

    def __call__(self, stats: pl.DataFrame, next_id: int) -> pl.DataFrame:
        """One row per partition to cut: ``pid``, ``dim``, ``pv`` (cut ``x <= pv``), ``rhs`` (the right half's id)."""
        k = self.k
        dim = stats["dim"].to_numpy().astype(np.int64)
        lo, hi = stats["lo"].to_numpy().astype(np.int64), stats["hi"].to_numpy().astype(np.int64)
        off = self.offsets[dim]
        span = np.where(
            self.counted[dim],
            (stats["nd"].to_numpy() - 1).astype(np.float64),
            self.values[off + hi] - self.values[off + lo],
        )
        n, lhs, before = (stats[c].to_numpy().astype(np.int64) for c in ("n", "lhs", "bef"))
        ok_le = (lhs >= k) & (n - lhs >= k)
        ok_lt = (before >= k) & (n - before >= k)
        use_lt = ok_lt & ~ok_le
        decided = (
            stats.select("pid")
            .with_columns(
                pl.Series("dim", dim),
                pl.Series(
                    "width", span / self.spans[dim]
                ),  # elementwise, correctly rounded: as the driver's column division
                pl.Series("pv", np.where(use_lt, stats["pv"].to_numpy() - 1, stats["pv"].to_numpy()).astype(np.int64)),
                pl.Series("ok", ok_le | ok_lt),
            )
            .filter(pl.col("ok"))
            .sort("pid", "width", "dim", descending=[False, True, False])
            .unique("pid", keep="first", maintain_order=True)
        )
        return decided.select(
            pl.col("pid").cast(pl.Int64), "dim", "pv", (next_id + pl.int_range(pl.len(), dtype=pl.Int64)).alias("rhs")
        )


class MondrianPlanner:
    """Mondrian (strict) over `table` as engine SQL rounds (see the module docstring); a
    :class:`~polars_anon.engines.planners.Planner`: :meth:`marginals` for the road's checks, then :meth:`plan`."""

    def __init__(self, engine: SQLEngine, table: Any, request: Request) -> None:
        self.engine, self.table, self.request = engine, table, request
        self.per: dict[str, pl.DataFrame] = {}

    def marginals(self) -> dict[str, pl.DataFrame]:
        """Per qid, its distinct values (String labels as Polars spells them, null kept) and their ``size``."""
        self.per = grouping_set_counts(self.engine, self.table, list(self.request.qids))
        return labelled_marginals(self.per)

    def plan(self) -> EnginePlan:
        """The rounds; the plan (a partition map) and the engine's map (a table of the engine)."""
        return _rounds(self.engine, self.table, self.request, self.per)


def plan_mondrian(engine: SQLEngine, table: Any, request: Request) -> MondrianPlanner:
    """The Mondrian planner on `engine` (registered in :data:`~polars_anon.engines.planners.PLANNERS`)."""
    return MondrianPlanner(engine, table, request)


def _rounds(engine: SQLEngine, table: Any, request: Request, per: dict[str, pl.DataFrame]) -> EnginePlan:
    qids, k, e = list(request.qids), request.k, engine
    labels = {q: _labels(per[q], q, request) for q in qids}
    present = {q: labels[q].unique().to_list() for q in qids}
    axis_list = axes(present, request.hierarchies, request.options.order, request.seed, request.orders)
    modes = publish_modes(qids, axis_list, request.hierarchies, request.options.publish)
    rank_of = [dict(zip(ax.labels, range(len(ax.labels)))) for ax in axis_list]
    ranks = [np.array(sorted({rank_of[j][v] for v in present[q]}), dtype=np.int64) for j, q in enumerate(qids)]
    cutter = _Cutter(axis_list, ranks, [mode == "set" for mode in modes], k)
    sql = _Rounds(engine, qids)
    lookups: list[str] = []
    work: str | None = None
    done: str | None = None
    try:
        with stage("mondrian rounds"):
            for j, q in enumerate(qids):
                lookup = pl.DataFrame(
                    [per[q][q].alias("v"), pl.Series("x", [rank_of[j][v] for v in labels[q]], dtype=pl.Int64)]
                )
                lookups.append(e.register(lookup))
            rows = e.view(table)
            work = e.keep(e.sql(sql.tuples(rows, lookups)))
            sizes = e.to_polars(e.sql(sql.input_sizes(work))).sort("s")  # materializes: one row per class size
            next_id, rounds = 1, 0
            while True:
                stats = e.to_polars(e.sql(sql.stats(work))).sort(
                    "pid", "dim"
                )  # materializes: one row per open partition and attribute
                if done is not None:  # the table `work` was cut from: dropped once `work` has been read
                    e.drop(done)
                    done = None
                cuts = cutter(stats, next_id)
                if cuts.height == 0:
                    break
                next_id, rounds = next_id + cuts.height, rounds + 1
                reg = e.register(cuts)
                done, work = work, e.keep(e.sql(sql.cut(work, reg)))
                e.drop(reg)
            sets = bound_sets(axis_list, modes)
            bounds = e.to_polars(e.sql(sql.bounds(work, sets))).sort(_PID)  # materializes: one row per partition
            bounds = bounds.with_columns(
                pl.col(_PID).cast(pl.Int64), *(pl.col(f"__anon_set{j}").cast(pl.List(pl.Int64)) for j in sets)
            )
            published = bounds_labels(bounds, qids, axis_list, request.hierarchies, modes)
            reg = e.register(published.select(_PID, *(pl.col(q).alias(out_col(q)) for q in qids)))
            mapping = e.keep(e.sql(sql.mapping(work, reg)))  # read by the published table
            e.drop(reg)
    finally:  # the mapping is materialized: the tables of the rounds can go
        for name in [*lookups, *(n for n in (done, work) if n is not None)]:
            e.drop(name)
    plan, same = _plan(request, engine.name, bounds, published, axis_list, modes, rounds)
    return EnginePlan(
        plan,
        e.sql(f"SELECT * FROM {sql.Q(mapping)}"),
        plan.map.stored.select(SIZE),
        null_rows=int(sizes["nullrows"].sum()),
        input_sizes=sizes,
        facts={"unchanged": same},
    )


def _plan(
    request: Request,
    engine: str,
    bounds: pl.DataFrame,
    published: pl.DataFrame,
    axis_list: Sequence[Axis],
    modes: Sequence[str],
    rounds: int,
) -> tuple[Plan, dict[str, int]]:
    """The plan from the partitions: a partition map (one row per partition: its published tuple and rows), so
    the loss and the published classes are the driver road's; and per qid the rows of the partitions holding
    one value that is published unchanged (the generalization shares: a partition of several values is published
    as none of them, and the nulls null='suppress' put at a root are no value of their own, as on the driver)."""
    qids = list(request.qids)
    size = bounds[SIZE].cast(pl.Int64)
    same = {}
    for j, (q, ax) in enumerate(zip(qids, axis_list)):
        lo, hi = bounds[f"__anon_lo{j}"].to_numpy(), bounds[f"__anon_hi{j}"].to_numpy()
        value = pl.Series(np.asarray(ax.labels, dtype=object)[lo].tolist(), dtype=pl.String)
        kept = pl.Series(lo == hi) & (value == published[q]).fill_null(False)
        h = request.hierarchies.get(q)
        if h is not None and h.null_root is not None:  # the root holds the rooted nulls: not unchanged
            kept &= value != h.null_root
        same[q] = int(size.filter(kept).sum())
    frame = pl.DataFrame({PARTITION: bounds[_PID].cast(pl.Int64)}).with_columns(
        *(published[q].alias(out_col(q)) for q in qids),
        size.alias(SIZE),
        pl.lit(False).alias(SUPPRESSED),
    )
    # the driver road has metrics when every qid is published as a hierarchy node (report.metrics.map_data)
    left_out = (
        metric_names(None, has_sensitive=False)
        if all(q in request.hierarchies for q in qids) and set(modes) == {"hierarchy"}
        else []
    )
    details = {
        "mode": "strict",
        "rounds": rounds,
        "n_partitions": published.height,
        "distributed": {
            "engine": engine,
            "left_out": ["metrics", "metrics_normalized", "metric_units"] if left_out else [],
            "metrics": left_out,
            "why": "the metrics read every input tuple's original values, which stay in the engine",
        },
    }
    return Plan(TupleMap(tuple(qids), frame, by_partition=True), details), same
