"""The hierarchy cost model of paper 001 §3-4: seven edge-weight metrics and the alteration figures.

Every quasi-identifier cell costs the path weight from its original leaf x to
its published node v, w(x -> v) = R[x] - R[v], with the edge weights of
:mod:`polars_anon.metrics.weights` (zero when the cell is not generalized); a
metric is the sum over all cells, as the papers' class costs |C| sum_i (...)
summed over classes. The examples use paper 000 Table I anonymized to Table Ib
(see :func:`polars_anon.metrics._frames.example`).
"""

from __future__ import annotations

import polars as pl

from polars_anon.metrics._frames import cell_metric
from polars_anon.metrics.data import MetricData
from polars_anon.metrics.sums import stable_sum
from polars_anon.metrics.weights import EDGE_METRICS

__all__ = [
    "alteration",
    "deleted",
    "deleted_of_modified",
    "distortion",
    "edge_cost",
    "llm",
    "modified",
    "ncp",
    "nllm",
    "total",
    "wllm",
    "wnllm",
]

_SIZE = pl.col("size")


def edge_cost(metric: str) -> pl.Expr:
    """Cost of the cells of a row of :attr:`MetricData.cells`: size * (R[leaf] - R[published])."""
    return _SIZE * (pl.col(f"l_r_{metric}") - pl.col(f"p_r_{metric}"))


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """100 num / den, null when den is 0."""
    return pl.when(den > 0).then(100.0 * num / den)


def _percent(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """100 num / den, and 0 when den is 0 (nothing that could change)."""
    return pl.when(den > 0).then(100.0 * num / den).otherwise(0.0)


def distortion(data: MetricData) -> pl.LazyFrame:
    """Distortion [paper 001 §4]: sum over cells of (sum_{j<=l_v} c_j) / (sum_{j<h} c_j) * wid(Q_i).

    With c_{j,j-1} = 1/(h_i - j) and the QID weights wid(Q_i) = 1 - (h_i-1)^m / sum_j (h_j-1)^m
    (1 for a single QID). Range [0, n sum_i wid(Q_i)].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(distortion(example())), 6)  # 6 (*) * wid 0.8 + 3 (mammals) * 0.2 + 3 (cetaceans) * 0.2 / 3
    5.6
    """
    return cell_metric(data, stable_sum(edge_cost("distortion")))


def ncp(data: MetricData) -> pl.LazyFrame:
    """Normalized Certainty Penalty [paper 001 §4, Xu et al. 2006]: sum over cells of (nl(v) - 1) / nl(G_i).

    Edge weight (nl(parent) - nl(child)) / nl(G_i). Range [0, n m]. Paper 002's
    ILoss and paper 003's granularity are the same sum: the registry lists them as
    aliases of this metric (``iloss``, ``granularity``).

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(ncp(example()))  # gender 6 * 1/2, race 3 * 6/7 + 3 * 1/7
    6.0
    """
    return cell_metric(data, stable_sum(edge_cost("ncp")))


def total(data: MetricData) -> pl.LazyFrame:
    """Total [paper 001 §4, Byun et al. 2007]: sum over cells of l_v / (h_i - 1).

    Edge weight (l_parent - l_child) / (h_i - 1). Range [0, n m].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(total(example()))  # gender 6 * 1, race 3 * 2/2 + 3 * 1/2
    10.5
    """
    return cell_metric(data, stable_sum(edge_cost("total")))


def llm(data: MetricData) -> pl.LazyFrame:
    """Lost Leaves Metric [paper 001 §4]: sum over cells of (nl(v) - 1) h_max / h_i.

    Edge weight (nl(parent) - nl(child)) h_max / h_i; the paper's nl(v) is read as
    nl(v) - 1 so that an ungeneralized cell costs 0. Range [0, n sum_i (nl(G_i) - 1) h_max / h_i].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(llm(example()))  # h_max 3: gender 6 * 1 * 3/2, race (3 * 6 + 3 * 1) * 3/3
    30.0
    """
    return cell_metric(data, stable_sum(edge_cost("llm")))


def nllm(data: MetricData) -> pl.LazyFrame:
    """Normalized LLM [paper 001 §4]: sum over cells of (nl(v) - 1) / nl(G_i) * h_max / h_i.

    Range [0, n sum_i h_max / h_i].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(nllm(example())), 6)  # gender 6 * 1/2 * 3/2, race 3 * 1
    7.5
    """
    return cell_metric(data, stable_sum(edge_cost("nllm")))


def wllm(data: MetricData) -> pl.LazyFrame:
    """Wid LLM [paper 001 §4]: sum over cells of (nl(v) - 1) wid(Q_i).

    Range [0, n sum_i (nl(G_i) - 1) wid(Q_i)].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(wllm(example())), 6)  # wid: gender 0.8, race 0.2; 6 * 1 * 0.8 + 21 * 0.2
    9.0
    """
    return cell_metric(data, stable_sum(edge_cost("wllm")))


def wnllm(data: MetricData) -> pl.LazyFrame:
    """Wid Normalized LLM [paper 001 §4]: sum over cells of (nl(v) - 1) / nl(G_i) * wid(Q_i).

    Range [0, n sum_i wid(Q_i)].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(wnllm(example())), 6)  # 6 * 1/2 * 0.8 + 3 * 0.2
    3.0
    """
    return cell_metric(data, stable_sum(edge_cost("wnllm")))


def alteration(data: MetricData) -> pl.LazyFrame:
    """Percentage of alteration against T* [paper 001 §5, Figure 10].

    For each of the seven metrics, 100 m(T) / m(T*), where T* publishes every
    cell at its hierarchy root (so m(T*) = sum over cells of R[leaf]); the value
    is the average over the seven metrics (the paper's "average percentage of
    alteration"). A metric whose m(T*) is 0 (it sees nothing to lose, e.g. the
    leaf-count metrics on a one-leaf hierarchy) is left out of the average; 0
    when all are. Per attribute the same ratio restricted to its cells. Range
    [0, 100]: 0 untouched, 100 for T*.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(alteration(example())), 4)  # (93.33 + 73.68 + 87.5 + 66.67 + 77.78 + 75 + 87.5) / 7
    80.2089
    """
    ratios = [_ratio(stable_sum(edge_cost(m)), stable_sum(_SIZE * pl.col(f"l_r_{m}"))) for m in EDGE_METRICS]
    return cell_metric(data, pl.mean_horizontal(ratios).fill_null(0.0))


# a suppressed row's cell is removed, so modified and deleted in every qid: also where its leaf is the root (a
# one-node hierarchy), which the comparison of leaf and published node alone missed (hunt36)
_MODIFIED = _SIZE * (pl.col("suppressed") | (pl.col("leaf") != pl.col("pub")))
_DELETED = _SIZE * (pl.col("suppressed") | (pl.col("p_is_root") & (pl.col("leaf") != pl.col("pub"))))


def modified(data: MetricData) -> pl.LazyFrame:
    """Percentage of modified values [paper 001 §5, Figure 11]: cells published as anything but their original value.

    100 * (cells with v != x) / (n m), whatever the level reached; suppressed rows
    count as modified in every quasi-identifier. Range [0, 100].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(modified(example()))
    100.0
    """
    return cell_metric(data, _percent(_MODIFIED.sum(), _SIZE.sum()))


def deleted(data: MetricData) -> pl.LazyFrame:
    """Percentage of deleted values [paper 001 §5, Figure 12]: cells generalized to the root of their hierarchy.

    100 * (cells with v = root != x) / (n m); suppressed rows count as deleted in
    every quasi-identifier. Range [0, 100].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(deleted(example()))  # the 6 gender cells and 3 race cells (mammals) of 12
    75.0
    """
    return cell_metric(data, _percent(_DELETED.sum(), _SIZE.sum()))


def deleted_of_modified(data: MetricData) -> pl.LazyFrame:
    """Deleted values among the modified ones [paper 001 §5, Figure 13], in percent.

    100 * deleted cells / modified cells; 0 when no cell was modified. Range [0, 100].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(deleted_of_modified(example()))
    75.0
    """
    return cell_metric(data, _percent(_DELETED.sum(), _MODIFIED.sum()))
