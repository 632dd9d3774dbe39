"""Greedy on Spark: the first round of the blocked greedy loop in Spark tasks, one per block.

The driver's blocked greedy (:mod:`polars_anon.algorithms.greedy`, ``candidates=B``)
sorts the class aggregates in class order, cuts them into consecutive blocks of B to
2B - 1 classes (:func:`~polars_anon.algorithms.greedy.block_layout`) and runs the
exact loop inside every block; later rounds re-block the classes left. Here:

1. Spark groups the rows by the quasi-identifiers; the class aggregates stay there.
   The driver reads each quasi-identifier's marginal counts (one row per value): the
   road's checks of the data (:func:`polars_anon.request.check_marginals`) and the
   class order's keys (:func:`~polars_anon.algorithms.greedy.order_keys`) need no more.
2. Each class gets its keys (broadcast lookups), Spark sorts the classes on them and
   numbers them (the position in class order); a class's block follows from its
   position, as on the driver.
3. ``groupBy(block).applyInArrow``: each task runs round 1 of its block with the
   driver's NumPy loop (:class:`~polars_anon.algorithms.greedy.GreedyLoop`).
4. Only the classes left after round 1 (a few per block) come to the driver, where
   the later rounds run; their published tuples go back to Spark, which joins them to
   the classes.
5. The map (one row per class: original and published tuple) stays on Spark: it is the
   engine's map the road joins to the rows. The driver receives one row per published
   class (the plan's partition map, checked and reported by the road), the input's
   class-size histogram and, per qid, the rows published with their own value.

Blocks and rounds are the driver's, so the rows and the report are those of
``pa.anonymize(..., method="greedy", candidates=B)`` on Polars, but for the metrics that
read every input tuple (left out, and listed in ``details.distributed``, as Mondrian's rounds do).

Executors import :mod:`polars_anon` (the tasks run its NumPy loop): install it there.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from polars_anon._progress import bar as progress_bar
from polars_anon._progress import stage
from polars_anon.algorithms import Plan
from polars_anon.algorithms.greedy import GreedyLoop, auto_block, block_layout, cost_groups, order_keys, root_weights
from polars_anon.engines import key_col
from polars_anon.engines.spark import BROADCAST_ROWS, spark_columns
from polars_anon.labels import label_expr
from polars_anon.metrics.registry import metric_names
from polars_anon.pipeline.state import EnginePlan
from polars_anon.quoting import spark_identifier
from polars_anon.request import Request
from polars_anon.tuplemap import PARTITION, SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["GreedyPlanner", "arrow_task", "greedy_on_spark"]

POS, BLOCK, ROOT, LEFT = "__anon_pos", "__anon_block", "__anon_root", "__anon_left"


def _node(i: int) -> str:
    return f"__anon_node_{i}"


def _key(i: int) -> str:
    return f"__anon_key_{i}"


def _marginals(classes: Any, engine: Any, request: Request) -> dict[str, pl.DataFrame]:
    """Per qid: its native values (``__anon_in_<qid>``), their labels (String, as Polars spells them) and counts,
    from the classes on Spark (one grouping-sets query)."""
    F = _functions()
    qids = list(request.qids)
    cols = spark_columns(qids)
    flags = [F.grouping(c).alias(f"__anon_g{i}") for i, c in enumerate(cols)]
    sets = classes.groupingSets([[c] for c in cols], *cols).agg(F.sum(SIZE).alias(SIZE), *flags)
    frame = engine.to_polars(sets)  # materializes: one row per value of each qid
    out = {}
    for i, q in enumerate(qids):
        one = frame.filter(pl.col(f"__anon_g{i}") == 0)
        out[q] = one.select(
            pl.col(q).alias(key_col(q)), label_expr(q, one.schema[q]), pl.col(SIZE).cast(pl.Int64)
        ).sort(q, nulls_last=True)
    return out


def _round_one(spec: dict[str, Any], table: pa.Table) -> pa.Table:
    """Round 1 of one block (a Spark task): the classes in class order, merged by the driver's loop.

    Returns every class with the position of the class it merged into (``__anon_root``) and,
    for the classes left (``__anon_left``), their size and node ids."""
    frame = pl.from_arrow(table).sort(POS)  # type: ignore[union-attr]
    qids = spec["qids"]
    groups = _cached_groups(spec)
    nodes = {q: frame[_node(i)].to_numpy() for i, q in enumerate(qids)}
    loop = GreedyLoop.start(groups, nodes, frame[SIZE].to_numpy(), spec["k"], spec["first"], spec["partners"])
    m = frame.height
    if spec["merge"] and m > 1:
        loop.round(np.arange(m, dtype=np.int64), m, _NoBar())
    pos = frame[POS].to_numpy()
    root = loop.roots()
    left = loop.live.copy()
    published = loop.nodes(np.arange(m))
    out = pl.DataFrame(
        {POS: pos, ROOT: pos[root], LEFT: left, SIZE: loop.size, **{_node(i): published[q] for i, q in enumerate(qids)}}
    )
    return out.to_arrow()


_GROUPS: dict[str, Any] = {}


def _cached_groups(spec: dict[str, Any]) -> Any:
    """The fused cost tables, built once per Python worker and job."""
    token = spec["token"]
    if token not in _GROUPS:
        _GROUPS.clear()
        roots = root_weights(spec["hierarchies"], spec["metric"], spec["weights"])
        _GROUPS[token] = cost_groups(spec["hierarchies"], roots)
    return _GROUPS[token]


def arrow_task(fn: Callable[[dict[str, Any], pa.Table], pa.Table], spec: dict[str, Any]) -> Callable[..., Any]:
    """`fn` with its `spec` bound, as a plain function of a ``pyarrow.Table`` (what ``applyInArrow`` calls;
    it reads the kind of function from type hints, which a ``functools.partial`` lacks)."""

    def task(table):  # type: ignore[no-untyped-def]  (no hints: Spark takes an unannotated function as Table -> Table)
        return fn(spec, table)

    return task


class _NoBar:
    def update(self, n: int) -> None:
        pass


def _positions(spark: Any, keyed: Any, keys: list[str], k: int) -> tuple[Any, int, int]:
    """`keyed` sorted on `keys` (unique per row), each row with its position ``__anon_pos`` (0, 1, ...); and the
    number of classes and of those below k.

    Spark sorts by range partitions; the rows are numbered within each partition and
    offset by the sizes of the partitions before it (a small collect)."""
    F = _functions()
    ordered = (
        keyed.orderBy(*keys)
        .withColumn("__anon_pid", F.spark_partition_id())
        .withColumn("__anon_mid", F.monotonically_increasing_id())
    )
    ordered = ordered.localCheckpoint(eager=True)  # fixes the partitions and ids: numbered once
    small = F.sum(F.when(F.col(SIZE) < k, 1).otherwise(0)).alias("small")
    parts = (
        ordered.groupBy("__anon_pid")
        .agg(F.count(F.lit(1)).alias("n"), F.min("__anon_mid").alias("lo"), small)
        .toArrow()
    )
    parts = pl.from_arrow(parts).sort("__anon_pid")  # type: ignore[union-attr]
    offsets = parts.select(
        pl.col("__anon_pid"), (pl.col("n").cum_sum() - pl.col("n")).alias("__anon_off"), pl.col("lo").alias("__anon_lo")
    )
    table = F.broadcast(spark.createDataFrame(offsets.to_arrow()))
    numbered = ordered.join(table, on="__anon_pid").withColumn(
        POS, F.col("__anon_off") + F.col("__anon_mid") - F.col("__anon_lo")
    )
    return (
        numbered.drop("__anon_pid", "__anon_mid", "__anon_off", "__anon_lo"),
        int(parts["n"].sum()),
        int(parts["small"].sum()),
    )


def _block_expr(n: int, width: int) -> Any:
    """Spark expression of a position's block under :func:`block_layout` (larger blocks first)."""
    F = _functions()
    counts = block_layout(n, width)
    base, extra = int(counts[-1]), int((counts > counts[-1]).sum())
    cut = extra * (base + 1)
    pos = F.col(POS)
    return (
        F.when(pos < cut, F.expr(f"{POS} div {base + 1}"))
        .otherwise(F.expr(f"({POS} - {cut}) div {base}") + extra)
        .cast("long")
    )


def _functions() -> Any:
    from pyspark.sql import functions

    return functions


class GreedyPlanner:
    """Greedy k-anonymization with the class aggregates on Spark (the module docstring); a
    :class:`~polars_anon.engines.planners.Planner`: :meth:`marginals`, then :meth:`plan`, which gives
    the driver road's map, rows and figures (timings aside)."""

    def __init__(self, engine: Any, table: Any, request: Request) -> None:
        self.engine, self.table, self.request = engine, table, request
        self.classes: Any = None
        self.margins: dict[str, pl.DataFrame] = {}

    def marginals(self) -> dict[str, pl.DataFrame]:
        F = _functions()
        qids = list(self.request.qids)
        self.classes = (
            self.table.groupBy(*spark_columns(qids)).agg(F.count(F.lit(1)).alias(SIZE)).cache()
        )  # stays on Spark
        self.margins = _marginals(self.classes, self.engine, self.request)
        return {q: m.select(q, SIZE) for q, m in self.margins.items()}

    def plan(self) -> EnginePlan:
        return _plan(self.engine, self.request, self.classes, self.margins)


def greedy_on_spark(engine: Any, table: Any, request: Request) -> GreedyPlanner:
    """The greedy planner on Spark (registered in :data:`~polars_anon.engines.planners.PLANNERS`)."""
    return GreedyPlanner(engine, table, request)


def _plan(engine: Any, request: Request, classes: Any, margins: dict[str, pl.DataFrame]) -> EnginePlan:
    qids, k, options = list(request.qids), request.k, request.options
    hierarchies = {q: request.hierarchies[q] for q in qids}
    roots = root_weights(hierarchies, request.metric, options.weights)
    ids = {q: hierarchies[q].ids_of(margins[q][q]) for q in qids}
    keyed, n_keys = _keyed(engine.spark, classes, request, margins, ids, roots)
    key_names = [_key(j) for j in range(n_keys)] or [_node(i) for i in range(len(qids))]
    numbered, c, n_small = _positions(engine.spark, keyed, key_names, k)
    n_rows = int(next(iter(margins.values()))[SIZE].sum())
    block = auto_block(None if options.candidates == "exact" else options.candidates, c, n_rows, k)
    numbered = numbered.withColumn(BLOCK, _block_expr(c, max(c if block is None else min(block, c), 1)))
    merge = bool(n_small) and c > 1
    first = _first_round(numbered, request, merge)
    with stage("greedy later rounds"):
        survivors = pl.from_arrow(first.filter(_functions().col(LEFT)).drop(LEFT, ROOT).toArrow()).sort(POS)  # type: ignore[union-attr]
        loop = GreedyLoop.start(
            cost_groups(hierarchies, roots),
            {q: survivors[_node(i)].to_numpy() for i, q in enumerate(qids)},
            survivors[SIZE].to_numpy(),
            k,
            options.first,
            options.partners,
        )
        with progress_bar(
            total=loop.n_small(), desc=f"greedy k={k}: classes below k", unit="class", enabled=None
        ) as bar:
            later, rounds = loop.run(block, bar, rounds=int(merge))
        final = loop.roots()
        published = loop.nodes(final)
    tops = pl.DataFrame({ROOT: survivors[POS], **{out_col(q): published[q] for q in qids}})
    with stage("publish the map on Spark"):
        per_class, sizes, unchanged, groups = _published(engine, classes, first, numbered, tops, qids)
    classes.unpersist()
    frame = _partition_frame(groups, hierarchies, qids)
    details = {
        "metric": None if options.weights is not None else (request.metric or "nllm"),
        "weights": "user" if options.weights is not None else None,
        "first": options.first,
        "partners": options.partners,
        "candidates": options.candidates,
        "block": block,
        "rounds": rounds,
        "merges": (c - survivors.height) + later,
        "classes_before": c,
        "classes_below_k_before": n_small,
        "classes_after": len(np.unique(final)),
        "distributed": {
            "engine": "spark",
            "left_out": ["metrics", "metrics_normalized", "metric_units"],
            "metrics": metric_names(None, has_sensitive=False),
            "why": "the metrics read every input tuple's original values, which stay in the engine",
        },
    }
    return EnginePlan(
        Plan(TupleMap(tuple(qids), frame, by_partition=True), details),
        _engine_map(engine.spark, per_class, hierarchies, qids),
        frame.select(SIZE),
        input_sizes=sizes,
        facts={"unchanged": unchanged},
    )


def _keyed(
    spark: Any,
    classes: Any,
    request: Request,
    margins: dict[str, pl.DataFrame],
    ids: dict[str, np.ndarray],
    roots: Any,
) -> tuple[Any, int]:
    """The classes with their node ids and class-order keys (broadcast lookups: one row per value of each
    qid), and the number of keys."""
    F = _functions()
    qids = list(request.qids)
    hierarchies = request.hierarchies
    node_margins = {}
    for q in qids:
        by_node = pl.DataFrame({"id": ids[q], "n": margins[q][SIZE]}).group_by("id").agg(pl.col("n").sum()).sort("id")
        node_margins[q] = (by_node["id"].to_numpy().astype(np.int64), by_node["n"].to_numpy().astype(np.float64))
    keys = order_keys({q: hierarchies[q] for q in qids}, roots, node_margins)
    keyed = classes
    for i, q in enumerate(qids):
        h = hierarchies[q]
        cols = {key_col(q): margins[q][key_col(q)], _node(i): ids[q]}
        for j, (kq, lv) in enumerate(keys):
            if kq == q:
                cols[_key(j)] = h.generalize_ids(lv)[ids[q]]
        lookup = spark.createDataFrame(pl.DataFrame(cols).to_arrow())
        on = keyed[spark_identifier(q)] == lookup[spark_identifier(key_col(q))]
        keyed = keyed.join(F.broadcast(lookup), on).drop(key_col(q))  # drop takes a name as it is (not parsed)
    return keyed, len(keys)


def _first_round(numbered: Any, request: Request, merge: bool) -> Any:
    """Round 1 of every block, one Spark task per block (checkpointed): per class its position, its root's
    position, whether it is left for the later rounds, its size and node ids."""
    qids, options = list(request.qids), request.options
    spec = {
        "token": uuid.uuid4().hex,
        "qids": qids,
        "hierarchies": {q: request.hierarchies[q] for q in qids},
        "metric": request.metric,
        "weights": options.weights,
        "k": request.k,
        "first": options.first,
        "partners": options.partners,
        "merge": merge,
    }
    nodes = [f"{_node(i)} long" for i in range(len(qids))]
    out_schema = ", ".join([f"{POS} long", f"{ROOT} long", f"{LEFT} boolean", f"{SIZE} long", *nodes])
    inputs = numbered.select(BLOCK, POS, SIZE, *(_node(i) for i in range(len(qids))))
    with stage("greedy round 1 on Spark"):
        return inputs.groupBy(BLOCK).applyInArrow(arrow_task(_round_one, spec), out_schema).localCheckpoint(eager=True)


def _published(
    engine: Any, classes: Any, first: Any, numbered: Any, tops: pl.DataFrame, qids: list[str]
) -> tuple[Any, pl.DataFrame, dict[str, int], pl.DataFrame]:
    """One row per class on Spark (its original values and node ids, its published node ids), and what the
    driver reads of it: the input's class-size histogram, and one row per published class with, per qid, its rows
    published with their own value (summed here: one query, where a query of its own had read them)."""
    F = _functions()
    tops_sdf = engine.spark.createDataFrame(tops.to_arrow())
    tops_sdf = F.broadcast(tops_sdf) if tops.height <= BROADCAST_ROWS else tops_sdf
    nodes_in = [_node(i) for i in range(len(qids))]
    per_class = (
        first.select(POS, ROOT)
        .join(tops_sdf, on=ROOT)
        .join(numbered.select(POS, *spark_columns(qids), *nodes_in, SIZE), on=POS)
    ).localCheckpoint(eager=True)
    sizes = engine.to_polars(
        classes.groupBy(SIZE)
        .agg(F.count(F.lit(1)).alias("classes"))
        .select(
            F.col(SIZE).cast("long").alias("s"),
            F.col("classes").cast("long"),
            F.lit(0).cast("long").alias("nullrows"),
        )
    ).sort("s")  # materializes: one row per class size
    outs = spark_columns([out_col(q) for q in qids])
    kept = [  # per published class and qid, its rows published with their own value (summed on the driver)
        F.sum(F.when(F.col(_node(i)) == out, F.col(SIZE)).otherwise(0)).cast("long").alias(_node(i))
        for i, out in enumerate(outs)
    ]
    both = engine.to_polars(
        per_class.groupBy(*outs).agg(F.sum(SIZE).cast("long").alias(SIZE), *kept)
    )  # materializes: one row per published class
    unchanged = {q: int(both[_node(i)].sum()) for i, q in enumerate(qids)}
    return per_class, sizes, unchanged, both.drop(_node(i) for i in range(len(qids)))


def _engine_map(spark: Any, per_class: Any, hierarchies: dict[str, Any], qids: list[str]) -> Any:
    """The engine's map, on Spark: original values -> published labels (each published node id joined to its
    hierarchy's label, broadcast)."""
    F = _functions()
    mapping = per_class
    for i, q in enumerate(qids):
        lookup = spark.createDataFrame(
            pl.DataFrame(
                {
                    f"__anon_id_{i}": np.arange(len(hierarchies[q].labels), dtype=np.int64),
                    f"__anon_label_{i}": pl.Series(hierarchies[q].labels, dtype=pl.String),
                }
            ).to_arrow()
        )
        mapping = mapping.join(F.broadcast(lookup), mapping[spark_identifier(out_col(q))] == lookup[f"__anon_id_{i}"])
    return mapping.select(
        *(col.alias(key_col(q)) for q, col in zip(qids, spark_columns(qids))),
        *(F.col(f"__anon_label_{i}").alias(out_col(q)) for i, q in enumerate(qids)),
        F.lit(False).alias(SUPPRESSED),
    )


def _partition_frame(groups: pl.DataFrame, hierarchies: dict[str, Any], qids: list[str]) -> pl.DataFrame:
    """The plan's partition map: one row per published class (its labels, rows), sorted by its labels."""
    frame = groups.with_columns(
        pl.Series(hierarchies[q].labels, dtype=pl.String).gather(groups[out_col(q)]).alias(out_col(q)) for q in qids
    ).sort([out_col(q) for q in qids])
    return frame.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias(PARTITION),
        *(out_col(q) for q in qids),
        pl.col(SIZE).cast(pl.Int64),
        pl.lit(False).alias(SUPPRESSED),
    )
