"""Information-loss metrics: a registry of name -> aggregation over class aggregates.

>>> import polars_anon as pa
>>> "nllm" in pa.metrics.METRICS and pa.metrics.METRICS["nllm"].sql
'anon_nllm'

See :func:`compute` for the entry point, :data:`METRICS` for the catalogue and
``sql/metrics.sql`` for the DuckDB twins.
"""

from __future__ import annotations

from polars_anon.metrics.data import MetricData, from_mapping, label_hierarchies, label_tables, prepare
from polars_anon.metrics.registry import FAMILIES, METRICS, Metric, compute, evaluate, metric_names
from polars_anon.metrics.weights import EDGE_METRICS, cost_matrix, edge_weights, merge_cost, root_weights, wid

__all__ = [
    "EDGE_METRICS",
    "FAMILIES",
    "METRICS",
    "Metric",
    "MetricData",
    "compute",
    "cost_matrix",
    "edge_weights",
    "evaluate",
    "from_mapping",
    "label_hierarchies",
    "label_tables",
    "merge_cost",
    "metric_names",
    "prepare",
    "root_weights",
    "wid",
]
