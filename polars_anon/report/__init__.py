"""The report of an anonymization: built in one place, with a documented JSON schema.

The road gathers the facts, then :func:`build_report` builds the report from all of them at once:
:func:`plan_facts` (computed once per run, before anything is published: the request, the input's
class aggregates and risk, the method's plan), the independent check's facts
(:data:`VERIFIED_KEYS`, the privacy models' status, the output's risk, attribute disclosure),
writing's (``output``, ``write_seconds``) and a job's (``input``, ``encodings``). A built report is a
:class:`Report`: a ``dict`` (JSON, the schema and the HTML page read it as one) that refuses every edit,
so no step can add a fact after it is built. The schema is ``polars_anon/report/schema.json``
(JSON Schema 2020-12); :func:`schema` loads it.

>>> r = build_report({"k": 2, "risk": {"input": 0.5}}, checked={"n_rows": 4, "risk": {"input": 0.5, "output": 0.2}})
>>> list(r), r["risk"]["output"]
(['k', 'risk', 'n_rows'], 0.2)
>>> r["k"] = 3
Traceback (most recent call last):
...
TypeError: a report is built once, from every fact (polars_anon.report.build_report), and never edited
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import resources
from typing import Any, NoReturn

import numpy as np
import polars as pl

from polars_anon._memory import release_freed_memory
from polars_anon._threads import beside
from polars_anon.metrics.arrays import many_pairs
from polars_anon.metrics.cell_counts import PairCells, counted_apart, qid_cells
from polars_anon.metrics.data import MetricData
from polars_anon.report.classes import distinct_sizes, guarantee_sizes, size_histogram
from polars_anon.report.columns import protected_columns
from polars_anon.report.generalization import generalization
from polars_anon.report.metrics import map_data, map_loss, report_metrics
from polars_anon.tuplemap import SIZE, out_col

__all__ = [
    "SCHEMA_VERSION",
    "UNDECLARED",
    "VERIFIED_KEYS",
    "Report",
    "build_report",
    "jsonable",
    "plan_facts",
    "schema",
]

SCHEMA_VERSION = 1
VERIFIED_KEYS = ("n_rows", "n_classes", "min_class_size")
"""Facts of the published table, set by the independent check (not by the algorithm)."""

_TREATMENT = {
    "quasi-identifier": "generalized",
    "sensitive": "published as is (sensitive)",
    "insensitive": "published as is",
    "identifying": "dropped",
}
UNDECLARED = "published as is (not declared)"
"""The treatment of an insensitive column that was not declared (any column the call or job left out): published as
is, and outside every risk figure (:func:`polars_anon.report.phrases.undeclared_phrase` says so in every summary)."""


class Report(dict[str, Any]):
    """A built report: a ``dict`` that refuses every edit (build a new one with :func:`build_report`)."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a report is built once, from every fact (polars_anon.report.build_report), and never edited")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    update = pop = popitem = setdefault = clear = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[Report], tuple[dict[str, Any]]]:
        return (Report, (dict(self),))  # pickle and deepcopy rebuild it whole, never item by item

    def __copy__(self) -> Report:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Report:
        return Report(copy.deepcopy(dict(self), memo))


def build_report(
    planned: Mapping[str, Any],
    *,
    checked: Mapping[str, Any] | None = None,
    output: str | None = None,
    write_seconds: float | None = None,
    input: str | None = None,
    encodings: Mapping[str, Mapping[str, Any]] | None = None,
    sdc: Mapping[str, Any] | None = None,
    unchanged: Mapping[str, float] | None = None,
    phases: Mapping[str, float] | None = None,
    dtypes: Mapping[str, str] | None = None,
) -> Report:
    """The report of a run, built once from every fact the road gathered (see ``schema.json``).

    `planned` is :func:`plan_facts` (what is known before anything is published); `checked` the
    independent check's facts (:data:`VERIFIED_KEYS`, ``privacy``, ``risk`` with the output's,
    ``attribute_disclosure``: None before the published table is verified); `output` and
    `write_seconds` (and the `phases` write and verify) what writing adds, `dtypes` the written file's own (a
    column's ``dtype`` is then the file's text: DuckDB and Spark write a zoned timestamp in 'UTC', whatever the
    session's zone was named); `input`, `sdc` and
    `encodings` what a job adds; `unchanged` replaces ``generalization.<qid>.unchanged`` of the qids a job's protect
    steps changed (:func:`polars_anon.sdc.job.unchanged_after_steps`: their cells changed count too). Keys come in
    this order: the planned facts (``risk`` replaced by the check's), ``input``, the check's, the
    write's, ``sdc``, ``encodings``.
    """
    facts: dict[str, Any] = {**planned, **({"input": input} if input is not None else {}), **(checked or {})}
    if output is not None:
        facts["write_seconds"] = write_seconds
        facts["output"] = output
    if dtypes:
        facts["columns"] = [{**c, "dtype": dtypes.get(c["name"], c["dtype"])} for c in facts["columns"]]
    if phases:  # the write's phases after the plan's
        facts["phases"] = {**facts.get("phases", {}), **phases}
    if unchanged:
        shares = facts.get("generalization") or {}
        facts["generalization"] = {
            q: {**g, "unchanged": unchanged.get(q, g.get("unchanged"))} for q, g in shares.items()
        }
    if sdc is not None:
        facts["sdc"] = dict(sdc)
        facts["columns"] = protected_columns(facts["columns"], sdc.get("steps") or [])
    if encodings is not None:
        facts["encodings"] = dict(encodings)
    return Report(jsonable(facts))


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


def _qid_treatment(request: Any, name: str, details: Mapping[str, Any]) -> str:
    """What the method did to quasi-identifier `name` (MDAV's `details`: how it published, which qids are numeric)."""
    method = request.method.name
    if method == "local_suppression":
        return "cells suppressed (set missing) where needed"
    if method == "mdav" and details.get("publish") == "permute":
        return "permuted within MDAV clusters of at least k rows"
    if method == "mdav":
        numeric = name in (details.get("numeric") or [])
        return "replaced by its MDAV cluster's " + ("mean" if numeric else "most frequent value")
    return "generalized with its hierarchy" if name in request.hierarchies else "generalized without a hierarchy"


def _columns(
    request: Any, schema_: pl.Schema, published: pl.Schema, details: Mapping[str, Any]
) -> list[dict[str, str]]:
    """Every input column: its type, the dtype of the published column (a quasi-identifier's: of its published
    labels in the map, which every engine writes; any other column is published as the engine read it) and its
    treatment."""
    out = []
    for name, kind in request.columns.items():
        treatment = UNDECLARED if name in request.undeclared else _TREATMENT[kind]
        if kind == "quasi-identifier":
            treatment = _qid_treatment(request, name, details)
        dtype = published.get(out_col(name)) if kind == "quasi-identifier" else None
        out.append({"name": name, "type": kind, "dtype": str(dtype or schema_.get(name, "")), "treatment": treatment})
    return out


def _options(options: Any, details: Mapping[str, Any]) -> Any:
    """The method's options as parsed; a differentially private release's without ``max_suppressed`` (refused when
    given: the release suppresses every class below its k, whatever the count, so the default 0 would be false)."""
    shown = jsonable(options)
    if "differential_privacy" in details and isinstance(shown, dict):
        shown.pop("max_suppressed", None)
    return shown


def _class_sizes(before: pl.Series, plan: Any, k: int) -> dict[str, Any]:
    """Histograms of the input's and the published class sizes (in any order), on the same bins. Published in the
    guarantee's reading (:func:`guarantee_sizes`): local suppression's patterns by their wildcard ``fk`` rounded
    down (a missing value matches any value), every other method's classes of equal published tuples."""
    sizes, rows = guarantee_sizes(plan)
    after = np.floor(sizes).astype(np.int64)  # a wildcard fk rounded down, as the check counts it
    largest = max(int(before.to_numpy().max(initial=1)), int(after.max(initial=1)))
    values, counts = distinct_sizes(before)  # the same histogram from a few hundred distinct sizes
    published = size_histogram(after, k, largest, rows=rows)
    return {"input": size_histogram(values, k, largest, counts=counts), "published": published}


def plan_facts(
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
    phases: Mapping[str, float] | None = None,
    pair_cells: Callable[[], PairCells | None] | None = None,
) -> Report:
    """The facts of a run known before the published table is verified (see :mod:`polars_anon.report` and
    ``schema.json``), computed once; :func:`build_report` builds the report from them and the later facts.

    `request` is the :class:`~polars_anon.request.Request`, `schema_` the input's
    schema, `plan` the method's :class:`~polars_anon.algorithms.Plan`. `metrics` False
    leaves the metrics empty (a map that does not hold every input tuple: an engine's
    Mondrian rounds, :mod:`polars_anon.engines.planners.mondrian`). `null_rows`: rows with a
    null qid published as roots; `engine`: where the rows were; `input_risk`: the input's
    risk figures. A planner whose map does not hold every input tuple gives what it counted
    instead: `input_sizes` (distinct class sizes and how many classes have each: the input's
    class-size histogram) and `unchanged` (qid -> rows published unchanged, which a partition
    map does not show). `details` are added to the method's own. `advice`: the better method, where one
    loses much less (:mod:`polars_anon.advice`). `phases`: seconds of the aggregation pass and the method.
    `pair_cells`: the original columns' pair cells of the map's tuples, counted by the caller (read when first needed:
    :func:`~polars_anon.metrics.cell_counts.counted_apart`).
    """
    extra = details or {}
    details = {**plan.details, **extra}
    metric = details.pop("metric", request.effective_metric)
    data = map_data(plan.map, request.hierarchies, request.k, details.get("levels")) if metrics else None
    if data is not None and pair_cells is not None:
        counted_apart(data, pair_cells)
    with ThreadPoolExecutor(1, thread_name_prefix="polars_anon_facts") as pool:
        measured = _metrics_beside(data, pool)
        facts = _map_facts(request, aggregates, plan, details, data, input_sizes, unchanged)
        settled = plan.settle()  # the method's report-only details (fulldomain's neighbours), beside the metrics
        computed = measured.result()
    if settled:
        details = {key: v for key, v in {**plan.details, **extra}.items() if key != "metric"}
        release_freed_memory()  # what they held (fulldomain's lattice) would stay resident under the write
    return Report(
        jsonable(
            {
                "schema_version": SCHEMA_VERSION,
                "k": request.k,
                "method": request.method.name,
                "metric": metric,
                "options": _options(request.options, details),
                "qids": list(request.qids),
                "sensitive": request.sensitive,
                "seed": request.seed,
                "null": request.null,
                "guarantee": plan.guarantee,
                "columns": _columns(request, schema_, plan.map.schema, details),
                "n_input_rows": int(aggregates["size"].sum()),
                "n_input_classes": facts["n_input_classes"],
                "suppressed": plan.map.suppressed_rows,
                "loss": facts["loss"],
                "loss_by_qid": facts["loss_by_qid"],
                **computed,
                "class_sizes": facts["class_sizes"],
                "generalization": facts["generalization"],
                "details": details,
                "seconds": round(seconds, 3),
                "null_rows": null_rows,
                "engine": engine,
                "risk": {"input": input_risk},
                **({"method_advice": advice} if advice is not None else {}),
                **({"phases": dict(phases)} if phases is not None else {}),
            }
        )
    )


def _metrics_beside(data: MetricData | None, pool: ThreadPoolExecutor) -> Future[dict[str, dict[str, Any]]]:
    """:func:`report_metrics` of `data` started on `pool`'s thread when its pairs are many (:func:`many_pairs`), beside
    the map's other facts (:func:`_map_facts`: NumPy and Polars release the GIL); else computed now. The cells both
    read are counted first, once (:func:`qid_cells`)."""
    start = data is not None and many_pairs(data.pairs.height)
    if data is not None and start:
        qid_cells(data)
    return beside(pool, start, report_metrics, data)


def _map_facts(
    request: Any,
    aggregates: pl.DataFrame,
    plan: Any,
    details: Mapping[str, Any],
    data: MetricData | None,
    input_sizes: tuple[np.ndarray, np.ndarray] | None,
    unchanged: dict[str, int] | None,
) -> dict[str, Any]:
    """The map's facts other than its metrics: loss, the input's class count, the class-size histograms and the
    generalization shares (see :func:`plan_facts`)."""
    loss, loss_by_qid = map_loss(plan.map, request.hierarchies)
    n_input_classes = aggregates.height
    class_sizes = _class_sizes(aggregates[SIZE], plan, request.k)
    if input_sizes is not None:  # a planner's route (never local suppression's wildcards)
        values, counts = input_sizes
        largest = max(int(values.max()), max(int(plan.map.class_sizes().max(initial=0)), 1))
        n_input_classes = int(counts.sum())
        class_sizes["input"] = size_histogram(values, request.k, largest, counts=counts)
    shares = generalization(plan.map, request.hierarchies, details.get("levels"), metric_data=data)
    for q, rows in (unchanged or {}).items():  # a partition map holds no original tuple: the planner counted them
        shares[q]["unchanged"] = float(rows) / plan.map.n_rows
    return {
        "n_input_classes": n_input_classes,
        "loss": loss,
        "loss_by_qid": loss_by_qid,
        "class_sizes": class_sizes,
        "generalization": shares,
    }
