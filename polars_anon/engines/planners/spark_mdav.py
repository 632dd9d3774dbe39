"""MDAV on Spark: the records stay on Spark, each median-cut block is clustered in a Spark task.

The Polars road (:mod:`polars_anon.algorithms.mdav`) collects the quasi-identifiers of
every row, cuts them into blocks of at most ``block_size`` rows by recursive median
cuts (:func:`~polars_anon.algorithms.mdav.split_blocks`) and runs MDAV in each block.
Here the rows never come to the driver:

1. Spark groups the rows by the quasi-identifiers (the engine's aggregation pass; the road
   checks its marginals); from the distinct values the
   driver fits what the Polars road fits on all records (which qids are numbers, the
   categorical codes, Gower's ranges: a value's range and codes depend only on the set
   of values present) and sends each qid's lookup (value -> code or scaled number) to
   Spark.
2. The blocks: a driver-side plan over per-block summaries, one tree level at a time.
   Spark aggregates, per block still too large, its row count and the range of every
   attribute; the driver picks the attribute (widest normalized range); Spark counts
   that attribute's values per block; the driver applies
   :func:`~polars_anon.algorithms.mdav.cut_rule` to those counts. A ``"half"`` cut
   sends the earliest rows at the median left: Spark finds the row id where it stops
   (a window over those rows only). Each level is three small queries at most, whatever
   the number of blocks; no row moves to the driver. Blocks are numbered in the order
   ``split_blocks`` returns them (depth first, left first), which seeds each block's
   random picks as on the Polars road.
3. ``groupBy(block).applyInArrow``: a task sorts its block's rows by row id, runs the
   same :func:`~polars_anon.algorithms.mdav.mdav` and gives each row its cluster's means
   and modes (:func:`~polars_anon.algorithms.mdav.aggregate`): the engine's row map
   (row id -> published tuple), which the road joins to the rows (in row-id order) like
   every other map.
4. The plan's map is a partition map (:class:`~polars_anon.tuplemap.TupleMap`): one row per
   published class (its tuple and size), with the cluster counts; the engine's group-by of
   the published (and written) table verifies k-anonymity, as the Polars road verifies
   ``publish="aggregate"``.

Row order. MDAV's random picks and ties follow row order; on Spark a row's place is the
engine's ``row_numbers``: for Parquet files the order Polars reads them in (the files in
the order given, a folder's by name, then each file's rows), so the clusters are the
Polars road's; for rows not read from files (a Polars frame handed to Spark: one
partition after another), the partitions' order.

Not on Spark (refused with the reason by the capability table,
:mod:`polars_anon.pipeline.capabilities`): ``publish="permute"`` (it draws one random
permutation key per row over the whole table), ``distance="ahmad_dey"`` (its statistics
are co-occurrences over all records), privacy models (their merge of violating
clusters runs over all clusters) and ``null="suppress"``.

Executors import :mod:`polars_anon` (the tasks run its NumPy loop): install it there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from polars_anon._progress import stage
from polars_anon.algorithms import Plan
from polars_anon.algorithms.mdav import (
    aggregate,
    check_task,
    code_orders,
    cut_rule,
    mdav,
    numeric_qids,
    run_details,
    widest,
)
from polars_anon.distance import Gower, Records, encode_records
from polars_anon.engines import key_col
from polars_anon.engines.planners.spark_greedy import arrow_task
from polars_anon.engines.spark import spark_columns
from polars_anon.errors import NotKAnonymousError
from polars_anon.labels import label_expr
from polars_anon.pipeline.state import EnginePlan
from polars_anon.quoting import spark_identifier
from polars_anon.request import Request
from polars_anon.tuplemap import PARTITION, SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["MdavPlanner", "mdav_on_spark"]

RID, BLOCK, CLUSTER = "__anon_rid", "__anon_block", "__anon_cluster"


def _split(j: int) -> str:
    return f"__anon_s{j}"


def _value(j: int) -> str:
    return f"__anon_v{j}"


class _Fitted:
    """What the Polars road fits on all records, from each qid's distinct labels: codes, ranges, Gower."""

    def __init__(
        self, labels: dict[str, pl.Series], numeric: list[str], categorical: list[str], order: dict[str, list[str]]
    ) -> None:
        self.numeric, self.categorical = numeric, categorical
        self.values = {q: encode_records(pl.DataFrame({q: labels[q]}), [q], []).num[0] for q in numeric}
        coded = {q: encode_records(pl.DataFrame({q: labels[q]}), [], [q], order) for q in categorical}
        self.codes = {q: r.cat[0] for q, r in coded.items()}
        self.levels = tuple(coded[q].labels[0] for q in categorical)
        lo_hi = np.array([[v.min(), v.max()] for v in self.values.values()]).reshape(len(numeric), 2)
        self.gower = Gower(
            Records(
                tuple(numeric), tuple(categorical), lo_hi, np.zeros((len(categorical), 2), dtype=np.int64), self.levels
            )
        )
        self.cat_span = np.array([max(len(lv) - 1, 1) for lv in self.levels], dtype=np.int64)

    def scaled(self, j: int, q: str) -> np.ndarray:
        """The numeric qid's values as Gower scales them (the same float operations as ``Gower.transform``)."""
        return (self.values[q] - self.gower.lo[j]) * self.gower.scale[j]


def _blocks(rows: Any, n_attrs: int, n_numeric: int, cat_span: np.ndarray, k: int, block_size: int) -> tuple[Any, int]:
    """`rows` (with ``__anon_rid`` and the split values ``__anon_s<j>``) with the block ``__anon_block`` of each row,
    numbered as :func:`~polars_anon.algorithms.mdav.split_blocks` returns them; and the number of blocks."""
    from pyspark.sql import functions as F

    spark = rows.sparkSession
    split = [_split(j) for j in range(n_attrs)]
    current = rows.withColumn(BLOCK, F.lit(0).cast("long"))
    paths, active, leaves, next_id = {0: ""}, [0], {}, 1
    pairs = F.explode(
        F.array(*(F.struct(F.lit(j).alias("j"), F.col(s).cast("double").alias("x")) for j, s in enumerate(split)))
    )
    while active:
        # one query per level: each active block's value counts of every attribute (its size and ranges follow)
        live = current.filter(F.col(BLOCK).isin(active)).select(BLOCK, pairs.alias("p")).select(BLOCK, "p.j", "p.x")
        hist = pl.DataFrame(pl.from_arrow(live.groupBy(BLOCK, "j", "x").agg(F.count(F.lit(1)).alias("n")).toArrow()))
        rules = []
        for (b,), part in hist.sort(BLOCK, "j", "x").group_by(BLOCK, maintain_order=True):
            n = int(part.filter(pl.col("j") == 0)["n"].sum())
            if n <= block_size:
                leaves[b] = paths[b]
                continue
            rule, n_left = _cut(part, n, n_numeric, cat_span, k)
            rules.append({BLOCK: b, **rule, "__anon_l": next_id, "__anon_r": next_id + 1})
            for child, size in ((next_id, n_left), (next_id + 1, n - n_left)):
                paths[child] = paths[b] + ("0" if child == next_id else "1")
                if size <= block_size:  # known small: a leaf without another query
                    leaves[child] = paths[child]
            next_id += 2
        if not rules:
            break
        current = _split_rows(current, pl.DataFrame(rules), split)
        active = [b for r in rules for b in (r["__anon_l"], r["__anon_r"]) if b not in leaves]
    order = sorted(leaves, key=lambda b: leaves[b])  # depth first, left first: split_blocks' order
    number = spark.createDataFrame(pl.DataFrame({BLOCK: order, "__anon_b": list(range(len(order)))}).to_arrow())
    numbered = current.join(F.broadcast(number), on=BLOCK).drop(BLOCK).withColumnRenamed("__anon_b", BLOCK)
    return numbered, len(order)


def _cut(part: pl.DataFrame, n: int, n_numeric: int, cat_span: np.ndarray, k: int) -> tuple[dict[str, Any], int]:
    """One block's cut from its value counts (``j``, ``x``, ``n``): the widest attribute, its median and rule
    (as :func:`~polars_anon.algorithms.mdav.split_blocks` cuts), and the rows that go left."""
    ranges = part.group_by("j").agg((pl.col("x").max() - pl.col("x").min()).alias("ptp")).sort("j")["ptp"].to_numpy()
    spread = np.concatenate([ranges[:n_numeric], ranges[n_numeric:].astype(np.int64) / cat_span])
    j = widest(spread)
    values = part.filter(pl.col("j") == j)
    median, rule = cut_rule(values["x"].to_numpy(), values["n"].to_numpy(), k)
    below = int(values.filter(pl.col("x") < median)["n"].sum())
    at_most = int(values.filter(pl.col("x") <= median)["n"].sum())
    n_left = {"lt": below, "le": at_most, "half": n // 2}[rule]
    need = n // 2 - below if rule == "half" else 0
    return {"__anon_j": j, "__anon_m": float(median), "__anon_rule": rule, "__anon_need": need}, n_left


def _split_rows(current: Any, table: pl.DataFrame, split: list[str]) -> Any:
    """`current` with each row of a block being cut moved to its left or right child (`table`: one rule per
    block); a tie at the median under the "half" rule goes left up to the block's need, in row id order."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spark = current.sparkSession
    x = F.element_at(F.array(*(F.col(s).cast("double") for s in split)), (F.col("__anon_j") + 1).cast("int"))
    cut = table.with_columns(pl.when(pl.col("__anon_rule") == "le").then(2**62).otherwise(-1).alias("__anon_cut"))
    halves = table.filter(pl.col("__anon_rule") == "half")
    if halves.height:  # the row id of the last row at the median that goes left, per block
        sides = F.broadcast(
            spark.createDataFrame(halves.select(BLOCK, "__anon_j", "__anon_m", "__anon_need").to_arrow())
        )
        ties = current.join(sides, on=BLOCK).filter(x == F.col("__anon_m"))
        ranked = ties.withColumn("__anon_rank", F.row_number().over(Window.partitionBy(BLOCK).orderBy(RID)))
        last = pl.DataFrame(
            pl.from_arrow(ranked.filter(F.col("__anon_rank") == F.col("__anon_need")).select(BLOCK, RID).toArrow())
        )
        cut = cut.join(last, on=BLOCK, how="left").with_columns(pl.coalesce(RID, "__anon_cut").alias("__anon_cut"))
        cut = cut.drop(RID)
    rule_sdf = F.broadcast(
        spark.createDataFrame(
            cut.select(BLOCK, "__anon_j", "__anon_m", "__anon_cut", "__anon_l", "__anon_r").to_arrow()
        )
    )
    left = (x < F.col("__anon_m")) | ((x == F.col("__anon_m")) & (F.col(RID) <= F.col("__anon_cut")))
    child = F.when(F.col("__anon_l").isNull(), F.col(BLOCK)).when(left, F.col("__anon_l")).otherwise(F.col("__anon_r"))
    current = current.join(rule_sdf, on=BLOCK, how="left").withColumn(BLOCK, child.cast("long"))
    return current.drop("__anon_j", "__anon_m", "__anon_cut", "__anon_l", "__anon_r")


def _cluster_block(spec: dict[str, Any], table: pa.Table) -> pa.Table:
    """One block (a Spark task): its rows in row order, MDAV, then each row's cluster means and modes (its row id,
    its published qids, its cluster): the block's part of the engine's row map."""
    import pyarrow.compute as pc

    table = table.take(pc.sort_indices(table, sort_keys=[(RID, "ascending")]))  # type: ignore[attr-defined]
    numeric, categorical = spec["numeric"], spec["categorical"]
    qids = spec["qids"]
    fitted = spec["fitted"]
    m = table.num_rows
    num = np.empty((len(numeric), m))
    for j, q in enumerate(numeric):
        num[j] = table.column(_value(qids.index(q))).to_numpy()
    cat = np.empty((len(categorical), m), dtype=np.int64)
    for j, q in enumerate(categorical):
        cat[j] = table.column(_value(qids.index(q))).to_numpy()
    records = Records(tuple(numeric), tuple(categorical), num, cat, fitted.levels)
    block = int(table.column(BLOCK)[0].as_py())
    num_scaled, cat_codes = fitted.gower.transform(records)
    labels = mdav(num_scaled, cat_codes, fitted.gower, spec["k"], np.random.default_rng([spec["seed"], block]))
    published = aggregate(records, labels).frame
    columns, arrays = [RID], [table.column(RID)]
    for name in qids:
        columns.append(out_col(name))
        if name in numeric:
            arrays.append(pa.array(published[out_col(name)].to_numpy(), type=pa.float64()))
        else:
            arrays.append(pa.array(published[out_col(name)].to_list(), type=pa.string()))
    arrays.append(pa.array(block * (1 << 32) + labels, type=pa.int64()))
    return pa.Table.from_arrays(arrays, names=[*columns, CLUSTER])


class MdavPlanner:
    """MDAV (``publish="aggregate"``, Gower) with the records on Spark (the module docstring); a
    :class:`~polars_anon.engines.planners.Planner`: :meth:`marginals` (from the engine's aggregation pass),
    then :meth:`plan`, whose clusters are the Polars road's for the same blocks."""

    def __init__(self, engine: Any, table: Any, request: Request) -> None:
        self.engine, self.table, self.request = engine, table, request
        self.aggregates = pl.DataFrame()
        self.native = pl.DataFrame()

    def marginals(self) -> dict[str, pl.DataFrame]:
        raw = self.engine.aggregate(self.table, self.request)
        assert raw.native is not None
        self.aggregates, self.native = raw.table.select(*self.request.qids, SIZE), raw.native
        return {
            q: self.aggregates.group_by(q).agg(pl.col(SIZE).sum()).sort(q, nulls_last=True) for q in self.request.qids
        }

    def plan(self) -> EnginePlan:
        return _plan(self.engine, self.table, self.request, self.aggregates, self.native)


def mdav_on_spark(engine: Any, table: Any, request: Request) -> MdavPlanner:
    """The MDAV planner on Spark (registered in :data:`~polars_anon.engines.planners.PLANNERS`)."""
    return MdavPlanner(engine, table, request)


def _plan(engine: Any, table: Any, request: Request, aggregates: pl.DataFrame, native: pl.DataFrame) -> EnginePlan:
    from pyspark.sql import functions as F

    options, qids = request.options, list(request.qids)
    task = request.task(aggregates)
    check_task(task, options)
    numeric = numeric_qids(task, options.numeric)
    categorical = [q for q in qids if q not in numeric]
    labels = {q: aggregates[q].unique().sort() for q in qids}
    fitted = _Fitted(labels, numeric, categorical, code_orders(categorical, request.hierarchies, request.orders))
    rows = _valued_rows(engine, table, native, fitted, labels)
    n_rows = int(aggregates[SIZE].sum())
    with stage("mdav blocks on Spark"):
        if n_rows <= options.block_size:
            blocked, n_blocks = rows.withColumn(BLOCK, F.lit(0).cast("long")), 1
        else:
            blocked, n_blocks = _blocks(rows, len(qids), len(numeric), fitted.cat_span, request.k, options.block_size)
    with stage("mdav clusters on Spark"):
        clustered, classes, facts = _clustered(engine, blocked, fitted, request)
    n_clusters, smallest = int(facts["clusters"]), int(facts["lo"] or 0)
    _check_clusters(classes, n_clusters, smallest, n_rows, request.k)
    details = run_details(options, numeric, n_blocks, n_clusters, smallest, int(facts["hi"]))
    # a partition map of a method on records: one row per published class; the Polars road's row-map figures
    outs = [out_col(q) for q in qids]
    frame = classes.sort(outs, nulls_last=True).select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias(PARTITION),
        *outs,
        pl.col(SIZE).cast(pl.Int64),
        pl.lit(False).alias(SUPPRESSED),
    )
    plan = Plan(TupleMap(tuple(qids), frame, by_row=True, by_partition=True), details)
    mapping = clustered.select(RID, *spark_columns(outs), F.lit(False).alias(SUPPRESSED))
    return EnginePlan(plan, mapping, aggregates, rows=rows, row_key=RID)


def _valued_rows(engine: Any, table: Any, native: pl.DataFrame, fitted: _Fitted, labels: dict[str, pl.Series]) -> Any:
    """The rows with their row id (the engine's ``row_numbers``: the order Polars reads them in) and, per qid, its
    split value (scaled number or code) and the task's value (number or code), from one broadcast lookup per qid
    (native value -> both); checkpointed."""
    from pyspark.sql import functions as F

    qids, numeric = list(labels), fitted.numeric
    attrs = [*numeric, *fitted.categorical]  # split_blocks' attribute order: numeric, then categorical
    spark, rows = engine.spark, table.withColumn(RID, engine.row_numbers(table, dense=False))
    for q in qids:
        j = attrs.index(q)
        lookup = native.select(pl.col(q).unique()).select(
            pl.col(q).alias(key_col(q)), label_expr(q, native.schema[q]).alias("__anon_label")
        )
        if q in numeric:
            split, value = fitted.scaled(numeric.index(q), q), fitted.values[q]
        else:
            split = value = fitted.codes[q].astype(np.int64)
        values = pl.DataFrame({"__anon_label": labels[q], _split(j): split, _value(qids.index(q)): value})
        lookup = lookup.join(values, on="__anon_label").drop("__anon_label")
        sdf = F.broadcast(spark.createDataFrame(lookup.to_arrow()))
        on = rows[spark_identifier(q)] == sdf[spark_identifier(key_col(q))]
        rows = rows.join(sdf, on).drop(key_col(q))  # drop takes a name as it is (not parsed)
    return rows.localCheckpoint(eager=True)  # the row ids, fixed: every query below reads these rows


def _clustered(engine: Any, blocked: Any, fitted: _Fitted, request: Request) -> tuple[Any, pl.DataFrame, Any]:
    """MDAV in each block, one Spark task per block (checkpointed: row id, published tuple, cluster), the
    published classes read to the driver (tuple, rows, clusters) and one row of cluster facts."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    qids, numeric = list(request.qids), fitted.numeric
    spec = {
        "qids": qids,
        "numeric": numeric,
        "categorical": fitted.categorical,
        "fitted": fitted,
        "k": request.k,
        "seed": request.seed,
    }
    out_schema = T.StructType(
        [
            T.StructField(RID, T.LongType(), False),
            *(T.StructField(out_col(q), T.DoubleType() if q in numeric else T.StringType(), True) for q in qids),
            T.StructField(CLUSTER, T.LongType(), False),
        ]
    )
    inputs = blocked.select(RID, BLOCK, *(_value(i) for i in range(len(qids))))  # the rows carry their block
    clustered = (
        inputs.groupBy(BLOCK).applyInArrow(arrow_task(_cluster_block, spec), out_schema).localCheckpoint(eager=True)
    )
    outs = [out_col(q) for q in qids]
    classes = engine.to_polars(
        clustered.groupBy(*spark_columns(outs)).agg(F.count(F.lit(1)).alias(SIZE), F.count_distinct(CLUSTER).alias("c"))
    )
    per_cluster = clustered.groupBy(CLUSTER).agg(F.count(F.lit(1)).alias("n"))
    facts = per_cluster.agg(F.count(F.lit(1)).alias("clusters"), F.min("n").alias("lo"), F.max("n").alias("hi"))
    return clustered, classes, facts.collect()[0]


def _check_clusters(classes: pl.DataFrame, n_clusters: int, smallest: int, n_rows: int, k: int) -> None:
    """Fail closed unless every cluster is published as one tuple, every row is in one, and each holds k."""
    if int(classes["c"].sum()) != n_clusters:
        raise NotKAnonymousError(
            "independent check failed: a cluster was published as several tuples; nothing was written"
        )
    if int(classes[SIZE].sum()) != n_rows or smallest < k:
        raise NotKAnonymousError(
            f"independent check failed: the clusters hold {int(classes[SIZE].sum())} of {n_rows} rows, the smallest "
            f"{smallest} (k={k}); nothing was written"
        )
