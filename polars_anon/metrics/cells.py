"""Cell- and record-level metrics of papers 002 (§4.2) and 003 (§2.2) over the hierarchies.

Readings taken where the papers leave a choice (each is tested):

- *Generalization level.* Paper 003 counts "the number of generalizations" k_ij
  of a cell and the height |DGH| of its hierarchy. We use the published node's
  level l_v (leaves 0, a node's longest distance down to a leaf, as paper 001)
  and h_i - 1, so a root is always fully generalized (k/|DGH| = 1) even in an
  unbalanced tree where a leaf hangs right under the root. Hierarchies of height
  1 contribute 0.
- *Numeric quasi-identifiers* are those whose every leaf label is a plain decimal
  number (``-?[0-9]+(.[0-9]+)?``); a node stands for the interval from its lowest
  to its highest leaf, and for its mean leaf value where a point is needed.
- Logarithms are natural (nats), as in scikit-learn's ``mutual_info_score``.

The examples use paper 000 Table I anonymized to Table Ib
(:func:`polars_anon.metrics._frames.example`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics._frames import cell_metric, stack, table_row
from polars_anon.metrics.cost import ncp
from polars_anon.metrics.data import SIZE, MetricData, orig_col, pub_col
from polars_anon.metrics.sums import stable_sum

__all__ = [
    "absolute_distance",
    "ambiguity",
    "entropy",
    "granularity",
    "iloss",
    "information_loss",
    "loss",
    "loss_per_node",
    "precision",
    "relative_distance",
    "squared_distance_error",
]

_SIZE = pl.col("size")
_LEVEL_FRACTION = pl.when(pl.col("h") > 1).then(pl.col("p_level") / (pl.col("h") - 1)).otherwise(0.0)
"""k_ij / |DGH_j| of a cell: published level over the hierarchy's top level."""


granularity = ncp
"""Granularity [paper 003 §2.2.8]: sum over cells of (|Phi^-1(x_ij)| - 1) / |A_j|: the same quantity as
:func:`polars_anon.metrics.cost.ncp` (|Phi^-1(x)| = nl(x), |A_j| = nl(G_j)), one implementation,
registered as an alias of ``ncp``."""

iloss = ncp
"""ILoss [paper 002 §4.2, Tao and Xiao 2008]: sum over cells of (|v_g| - 1) / |D_A|: the same quantity as
:func:`polars_anon.metrics.cost.ncp`, one implementation, registered as an alias of ``ncp``."""


def loss_per_node(h: Hierarchy) -> np.ndarray:
    """Loss of publishing a cell as each node: (nl(v) - 1) / (nl(root) - 1), indexed by node id.

    0 at a leaf, 1 at the root; all 0 for a one-leaf hierarchy (nothing can be
    lost). The one place this formula lives: the ``loss`` metric and the
    algorithms' reported ``loss`` use it.

    >>> from polars_anon import Hierarchy
    >>> loss_per_node(Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "d": None}})).tolist()  # *, A, a, b, c, d
    [1.0, 0.6666666666666666, 0.0, 0.0, 0.0, 0.0]
    """
    if h.n_leaves <= 1:
        return np.zeros(h.n_nodes)
    return (h.leaves - 1) / (h.n_leaves - 1)


def loss(data: MetricData) -> pl.LazyFrame:
    """Average cell loss: the mean over quasi-identifier cells of :func:`loss_per_node` of the published value.

    (nl(v) - 1) / (nl(G) - 1) per cell (the NCP of [paper 001 §4] rescaled so the
    root costs 1), a suppressed row counting 1 in every cell (one-leaf hierarchies
    included, as the full-domain search counts it); 0 for a kept cell of a
    one-leaf hierarchy. This is the ``loss`` the anonymization methods report.
    Per attribute: the mean over its cells. Range [0, 1].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(loss(example())), 6)  # (6 * 1 + 3 * 6/6 + 3 * 1/6) / 12
    0.791667
    """
    per_node = pl.concat(
        pl.DataFrame(
            {
                "i": np.full(h.n_nodes, i, dtype=np.int64),
                "pub": np.arange(h.n_nodes, dtype=np.int64),
                "p_loss": loss_per_node(h),
            }
        )
        for i, h in enumerate(data.hierarchies[q] for q in data.qids)
    )
    cells = data.cells.lazy().join(per_node.lazy(), on=["i", "pub"], how="left", maintain_order="left")
    cell = pl.when(pl.col("suppressed")).then(1.0).otherwise(pl.col("p_loss"))
    value = stable_sum(_SIZE * cell) / _SIZE.sum()
    per = cells.group_by("attribute", "i").agg(value.alias("value")).sort("i")
    return stack(data, cells.select(table_row(value)), per)


def precision(data: MetricData) -> pl.LazyFrame:
    """Precision [paper 003 §2.2.1, Sweeney 2002]: 1 - sum over cells of (k_ij / |DGH_j|) / (m |D|).

    k_ij = l_v, |DGH_j| = h_j - 1 (module docstring). A utility: 1 when nothing is
    generalized, 0 when every cell is at its root. Per attribute: 1 - mean of
    k_ij / |DGH_j| over its cells; the table value is the mean over attributes.
    Range [0, 1].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(precision(example()))  # 1 - (6 * 1 + 3 * 1 + 3 * 1/2) / 12
    0.125
    """
    return cell_metric(data, 1.0 - stable_sum(_SIZE * _LEVEL_FRACTION) / _SIZE.sum())


def information_loss(data: MetricData) -> pl.LazyFrame:
    """Information Loss of Byun et al. [paper 003 §2.2.10].

    The sum over classes e of |e| (sum_ord (e_max - e_min) / |A_j| + sum_unord k_ij / k_j).

    Per cell: for a numeric attribute the width of the published node's leaf
    interval over the width of the whole leaf domain (0 when the domain is one
    value); for the others k_ij / k_j = l_v / (h_j - 1). Summing |e| times the
    class's cell costs is the sum over cells. Range [0, n m].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(information_loss(example()))  # no numeric attribute: 6 * 1 + 3 * 1 + 3 * 1/2
    10.5
    """
    width = (
        pl.when(pl.col("domain") > 0).then((pl.col("p_num_hi") - pl.col("p_num_lo")) / pl.col("domain")).otherwise(0.0)
    )
    return cell_metric(data, stable_sum(_SIZE * pl.when(pl.col("numeric")).then(width).otherwise(_LEVEL_FRACTION)))


def _levels(data: MetricData) -> pl.LazyFrame:
    """Per attribute: i, h and its full-domain level L (null when the attribute is not full-domain).

    Given `levels` are taken as they are. Otherwise L is the highest level among
    the published nodes of the kept rows, and the attribute is full-domain when
    every kept cell is published at level L: v has level <= L and v is the root
    or its parent's level is above L (the highest ancestor whose level is at
    most L, as :meth:`Hierarchy.generalize_ids` publishes it). That L is the
    lowest level publishing the same values.
    """
    base = pl.LazyFrame(
        {
            "attribute": data.qids,
            "i": list(range(len(data.qids))),
            "h": [data.hierarchies[q].height for q in data.qids],
        },
        schema={"attribute": pl.String, "i": pl.Int64, "h": pl.Int64},
    )
    if data.levels is not None:
        return base.with_columns(pl.Series("L", [data.levels[q] for q in data.qids], dtype=pl.Int64))
    top = pl.col("p_level").max()
    inferred = (
        data.cells.lazy()
        .filter(~pl.col("suppressed"))
        .group_by("i")
        .agg(
            top.alias("L"),
            ((pl.col("p_level") <= top) & (pl.col("p_parent_level").is_null() | (pl.col("p_parent_level") > top)))
            .all()
            .alias("ok"),
        )
    )
    return base.join(inferred, on="i", how="left", maintain_order="left").select(
        "attribute", "i", "h", pl.when(pl.col("ok").fill_null(True)).then(pl.col("L").fill_null(0)).alias("L")
    )


def absolute_distance(data: MetricData) -> pl.LazyFrame:
    """Absolute distance [paper 003 §2.2.1, Samarati and Sweeney]: sum over attributes of the generalization level k_i.

    Only a full-domain result has one level per attribute. Pass ``levels`` (the
    report's ``levels``) or let them be inferred from the published values
    (see :func:`_levels`); an attribute that is not full-domain gets null and so
    does the table. Range [0, sum_i (h_i - 1)].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> print(value_of(absolute_distance(example())))  # race mixes mammals (level 2) and cetaceans (1)
    None
    """
    lv = _levels(data)
    return stack(
        data,
        lv.select(table_row(pl.when(pl.col("L").null_count() == 0).then(pl.col("L").sum()))),
        lv.select("attribute", pl.col("L").alias("value")),
    )


def relative_distance(data: MetricData) -> pl.LazyFrame:
    """Relative distance [paper 003 §2.2.1, Samarati and Sweeney]: sum over attributes of k_i / |DGH_i|.

    k_i / (h_i - 1) per attribute (0 for a one-node hierarchy), null when the
    attribute is not full-domain (see :func:`absolute_distance`). Range [0, m].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> from dataclasses import replace
    >>> value_of(relative_distance(replace(example(), levels={"gender": 1, "race": 2})))
    2.0
    """
    lv = _levels(data).with_columns(
        pl.when(pl.col("h") > 1).then(pl.col("L") / (pl.col("h") - 1)).otherwise(0.0).alias("r")
    )
    return stack(
        data,
        lv.select(table_row(pl.when(pl.col("r").null_count() == 0).then(stable_sum(pl.col("r"))))),
        lv.select("attribute", pl.col("r").alias("value")),
    )


def entropy(data: MetricData) -> pl.LazyFrame:
    """Conditional entropy of Gionis et al. [paper 003 §2.2.2]: sum over cells of H(x_ij).

    H(x) = -sum_{v leaf under x} P(v | x) ln P(v | x), with P(v | x) the share of
    v among the original values under x, counted in the original table.
    Range [0, n sum_j ln nl(G_j)].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(entropy(example())), 6)  # 6 ln 2 + 3 H(1,1,1,1,2) + 3 H(1,2)
    10.750557
    """
    counts = data.cells.lazy().group_by("attribute", "leaf").agg(_SIZE.sum().alias("c"))
    under = counts.join(data.closure().lazy(), on=["attribute", "leaf"])
    node_h = (
        under.with_columns((pl.col("c") / pl.col("c").sum().over("attribute", "ancestor")).alias("share"))
        .group_by("attribute", "ancestor")
        .agg(stable_sum(-(pl.col("share") * pl.col("share").log())).alias("H"))
    )
    cells = data.cells.lazy().join(node_h, left_on=["attribute", "pub"], right_on=["attribute", "ancestor"], how="left")
    per = cells.group_by("attribute", "i").agg(stable_sum(_SIZE * pl.col("H").fill_null(0.0)).alias("value")).sort("i")
    return stack(data, cells.select(table_row(stable_sum(_SIZE * pl.col("H").fill_null(0.0)))), per)


def ambiguity(data: MetricData) -> pl.LazyFrame:
    """Ambiguity [paper 003 §2.2.7, Nergiz and Clifton]: (1/|D|) sum over records of prod_j |Phi^-1(x_ij)|.

    The mean number of leaf combinations a published record could stand for
    (nl of each published value, multiplied). Per attribute: the mean nl of its
    published values. Range [1, prod_j nl(G_j)]: 1 untouched.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(ambiguity(example()))  # (3 * 2 * 7 + 3 * 2 * 2) / 6
    9.0
    """
    product = pl.lit(1.0)
    for i in range(len(data.qids)):
        product = product * pl.lit(data.nodes(i)["leaves"].cast(pl.Float64)).gather(pl.col(pub_col(i)))
    table = data.pairs.lazy().select(table_row(stable_sum(pl.col(SIZE) * product) / pl.col(SIZE).sum()))
    per = (
        data.cells.lazy()
        .group_by("attribute", "i")
        .agg((stable_sum(_SIZE * pl.col("p_leaves")) / _SIZE.sum()).alias("value"))
    )
    return stack(data, table, per.sort("i"))


def squared_distance_error(data: MetricData) -> pl.LazyFrame:
    """Squared Distance Error [paper 003 §2.2.9]: sum over records of sqrt(sum_j (a_ij - E(x_ij))^2).

    Over the numeric quasi-identifiers only; E(x) is the mean of the leaf values
    under the published node x (all leaves of the hierarchy, as the paper's
    Phi^-1(x)). Per attribute: sum over its cells of |a - E(x)|. Null when no
    quasi-identifier is numeric. Range [0, inf).

    >>> from polars_anon.metrics._frames import example, value_of
    >>> print(value_of(squared_distance_error(example())))  # gender and race are not numeric
    None
    """
    numeric = [i for i in range(len(data.qids)) if bool(data.nodes(i)["numeric"][0])]
    if numeric:
        squares = pl.sum_horizontal(
            (
                pl.lit(data.nodes(i)["num_lo"]).gather(pl.col(orig_col(i)))
                - pl.lit(data.nodes(i)["num_mean"]).gather(pl.col(pub_col(i)))
            )
            ** 2
            for i in numeric
        )
        table = data.pairs.lazy().select(table_row(stable_sum(pl.col(SIZE) * squares.sqrt())))
    else:
        table = pl.LazyFrame(
            {"attribute": [None], "value": [None]}, schema={"attribute": pl.String, "value": pl.Float64}
        )
    per = (
        data.cells.lazy()
        .group_by("attribute", "i")
        .agg(
            pl.when(pl.col("numeric").first())
            .then(stable_sum(_SIZE * (pl.col("l_num_lo") - pl.col("p_num_mean")).abs()))
            .alias("value")
        )
        .sort("i")
    )
    return stack(data, table, per)
