"""The report of an anonymization: built in one place, with a documented JSON schema.

:func:`build_report` makes the report of a run from the request, the class
aggregates and the method's plan; the verification of the published table adds
its facts (:data:`VERIFIED_KEYS`), writing adds the output paths. The schema is
``polars_anon/report/schema.json`` (JSON Schema 2020-12); :func:`schema` loads it.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from typing import Any

import numpy as np
import polars as pl

from polars_anon.report.classes import size_histogram
from polars_anon.report.generalization import generalization
from polars_anon.report.metrics import map_data, map_loss, report_metrics
from polars_anon.tuplemap import SIZE

__all__ = ["SCHEMA_VERSION", "VERIFIED_KEYS", "build_report", "jsonable", "schema"]

SCHEMA_VERSION = 1
VERIFIED_KEYS = ("n_rows", "n_classes", "min_class_size")
"""Facts of the published table, set by the independent check (not by the algorithm)."""

_TREATMENT = {
    "quasi-identifier": "generalized",
    "sensitive": "published as is (sensitive)",
    "insensitive": "published as is",
    "identifying": "dropped",
}


def schema() -> dict[str, Any]:
    """The report's JSON Schema."""
    return json.loads((resources.files("polars_anon.report") / "schema.json").read_text())


def jsonable(value: Any) -> Any:
    """A JSON-ready copy of `value` (NumPy scalars and arrays, dataclasses, tuples)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (pl.Series,)):
        return value.to_list()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _columns(request: Any, schema_: pl.Schema) -> list[dict[str, str]]:
    out = []
    for name, kind in request.columns.items():
        treatment = _TREATMENT[kind]
        if kind == "quasi-identifier" and request.method.name == "local_suppression":
            treatment = "cells suppressed (set missing) where needed"
        elif kind == "quasi-identifier":
            treatment = (
                "generalized with its hierarchy" if name in request.hierarchies else "generalized without a hierarchy"
            )
        out.append({"name": name, "type": kind, "dtype": str(schema_.get(name, "")), "treatment": treatment})
    return out


def _class_sizes(before: pl.Series, after: pl.Series, k: int) -> dict[str, Any]:
    """Histograms of the input's and the published class sizes, on the same bins."""
    largest = max(int(before.to_numpy().max(initial=1)), int(after.to_numpy().max(initial=1)))
    return {"input": size_histogram(before, k, largest), "published": size_histogram(after, k, largest)}


def build_report(
    request: Any,
    schema_: pl.Schema,
    aggregates: pl.DataFrame,
    plan: Any,
    seconds: float,
    *,
    metrics: bool = True,
    null_rows: int = 0,
    engine: str = "polars",
    input_risk: dict[str, Any] | None = None,
    input_sizes: tuple[np.ndarray, np.ndarray] | None = None,
    unchanged: dict[str, int] | None = None,
    details: dict[str, Any] | None = None,
    advice: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of a run (see :mod:`polars_anon.report` and ``schema.json``): every fact known before the
    published table is verified; the check adds its own facts (:data:`VERIFIED_KEYS`), writing the paths.

    `request` is the :class:`~polars_anon.request.Request`, `schema_` the input's
    schema, `plan` the method's :class:`~polars_anon.algorithms.Plan`. `metrics` False
    leaves the metrics empty (a map that does not hold every input tuple: an engine's
    Mondrian rounds, :mod:`polars_anon.engines.planners.mondrian`). `null_rows`: rows with a
    null qid published as roots; `engine`: where the rows were; `input_risk`: the input's
    risk figures. A planner whose map does not hold every input tuple gives what it counted
    instead: `input_sizes` (distinct class sizes and how many classes have each: the input's
    class-size histogram) and `unchanged` (qid -> rows published unchanged, which a partition
    map does not show). `details` are added to the method's own. `advice`: the better method, where one
    loses much less (:mod:`polars_anon.advice`).
    """
    details = {**plan.details, **(details or {})}
    metric = details.pop("metric", request.effective_metric)
    loss, loss_by_qid = map_loss(plan.map, request.hierarchies)
    data = map_data(plan.map, request.hierarchies, request.k, details.get("levels")) if metrics else None
    published = plan.map.published_sizes()[SIZE]
    n_input_classes = aggregates.height
    class_sizes = _class_sizes(aggregates[SIZE], published, request.k)
    if input_sizes is not None:
        values, counts = input_sizes
        largest = max(int(values.max()), int(published.max() or 1))
        n_input_classes = int(counts.sum())
        class_sizes["input"] = size_histogram(values, request.k, largest, counts=counts)
    shares = generalization(plan.map, request.hierarchies, details.get("levels"))
    for q, rows in (unchanged or {}).items():  # a partition map holds no original tuple: the planner counted them
        shares[q]["unchanged"] = float(rows) / plan.map.n_rows
    return jsonable(
        {
            "schema_version": SCHEMA_VERSION,
            "k": request.k,
            "method": request.method.name,
            "metric": metric,
            "options": request.options,
            "qids": list(request.qids),
            "sensitive": request.sensitive,
            "seed": request.seed,
            "null": request.null,
            "guarantee": plan.guarantee,
            "columns": _columns(request, schema_),
            "n_input_rows": int(aggregates["size"].sum()),
            "n_input_classes": n_input_classes,
            "suppressed": plan.map.suppressed_rows,
            "loss": loss,
            "loss_by_qid": loss_by_qid,
            **report_metrics(data),
            "class_sizes": class_sizes,
            "generalization": shares,
            "details": details,
            "seconds": round(seconds, 3),
            "null_rows": null_rows,
            "engine": engine,
            "risk": {"input": input_risk},
            **({"method_advice": advice} if advice is not None else {}),
        }
    )
