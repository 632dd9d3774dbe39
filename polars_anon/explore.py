"""Choosing k with evidence: one job over a grid of k and methods, on one aggregation pass.

:func:`explore` checks every configuration of the grid before any data is read,
aggregates the input once (:func:`polars_anon.pipeline.road.aggregate`), then runs
each method at each k on those class aggregates (:func:`polars_anon.pipeline.road.run_method`,
whose map is checked like any run's) and measures it from its tuple map: no table
is published or written. Each row holds what the report of that configuration
run alone would say (loss, loss per quasi-identifier, suppressed rows, classes,
smallest class) and three prosecutor-risk figures from the published class sizes
(:func:`polars_anon.report.classes.size_risk`): the highest risk 1 / smallest
class, the average risk, and the share of records in classes smaller than
`risk_threshold` rows (default: the largest k of the grid, so every configuration
is measured against the strictest one). A configuration a method cannot reach
(fulldomain without enough suppression budget) is a row with ``feasible`` false
and the reason.

The Pareto front of each risk figure against the loss marks the configurations
that no other beats on both (``front_highest_risk``, ``front_records_at_risk``).
:func:`write_explore` writes the table (CSV or Parquet) and an HTML page with the
utility-vs-risk curves, all or nothing.

Method options and the metric apply to the methods that take them (each row
says which it used); one that no method of the grid takes is refused.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polars_anon._progress import bar
from polars_anon._scans import missing_sources
from polars_anon._types import Method, NullPolicy
from polars_anon._validate import as_lazy, check_choice, check_k, is_integer
from polars_anon.algorithms import METHODS
from polars_anon.engines import Engine
from polars_anon.engines.polars import POLARS
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.job import Job, build_hierarchies, engine_faults, job_engine, job_models, open_on_engine
from polars_anon.outputs import Outputs, staged_write
from polars_anon.pipeline.capabilities import consult_explore
from polars_anon.pipeline.road import aggregate, run_method
from polars_anon.pipeline.state import Aggregated
from polars_anon.privacy.base import Model
from polars_anon.report import notebook
from polars_anon.report.classes import guarantee_sizes, size_histogram, size_risk
from polars_anon.report.guarantee import counts
from polars_anon.report.metrics import map_loss
from polars_anon.request import DEFERRED, Request, check_request
from polars_anon.tuplemap import SIZE

__all__ = [
    "DEFAULT_K",
    "DEFAULT_METHODS",
    "RISKS",
    "ExploreGrid",
    "explore",
    "explore_job",
    "explore_targets",
    "pareto",
    "requests",
    "write_explore",
]

DEFAULT_K = (2, 5, 10, 20, 50, 100)
DEFAULT_METHODS = ("fulldomain", "greedy", "mondrian")
RISKS = ("highest_risk", "records_at_risk")
"""The risk figures a Pareto front is drawn against (each with the loss)."""


def _repeated(values: Sequence[object]) -> list[object]:
    """The values listed more than once, sorted by their text."""
    return sorted({v for v in values if values.count(v) > 1}, key=str)


def _grid(k: Sequence[int] | int, methods: Sequence[str] | str) -> tuple[list[int], list[str]]:
    if not (is_integer(k) or isinstance(k, (list, tuple, range))):
        raise InvalidParameterError(f"explore: k must be an integer >= 1 or a list of them, got {k!r}")
    if not isinstance(methods, (str, list, tuple)):
        raise InvalidParameterError(f"explore: methods must be a method name or a list of them, got {methods!r}")
    ks = [k] if is_integer(k) else list(k)  # type: ignore[arg-type]
    names = [methods] if isinstance(methods, str) else list(methods)
    if not ks or not names:
        raise InvalidParameterError("explore: the grid is empty; give at least one k and one method")
    ks = [check_k(value) for value in ks]  # Python ints: NumPy's are taken, as every method takes them
    for name in names:
        check_choice("explore: method", name, sorted(METHODS))
    for what, values in (("k", ks), ("methods", names)):
        dup = _repeated(values)
        if dup:
            raise InvalidParameterError(f"explore: {what} lists {dup} more than once")
    return sorted(ks), names


def _taken(name: str, options: Mapping[str, Any], metric: str | None) -> tuple[dict[str, Any], str | None]:
    """The options and metric of `options`/`metric` that method `name` takes."""
    spec = METHODS[name]
    fields = {f.name for f in dataclasses.fields(spec.options)}
    return {key: v for key, v in options.items() if key in fields}, metric if metric in spec.metrics else None


def requests(
    schema: pl.Schema,
    *,
    k: Sequence[int] | int,
    methods: Sequence[str] | str,
    hierarchies: Mapping[str, Any] | None,
    metric: str | None = None,
    options: Mapping[str, Any] | None = None,
    **asked: Any,
) -> list[Request]:
    """Every configuration of the grid as a checked request (method-major, k ascending); no data is read.

    `asked` holds the other :func:`~polars_anon.request.check_request` keywords (qids,
    drop, sensitive, insensitive, seed, null). `hierarchies` may hold
    :data:`~polars_anon.request.DEFERRED` to check a job before its hierarchies are built.
    """
    ks, names = _grid(k, methods)
    options = dict(options or {})
    unused = [key for key in options if not any(key in _taken(m, options, None)[0] for m in names)]
    if unused:
        raise InvalidParameterError(f"explore: options {unused} are taken by none of the methods {names}")
    if metric is not None and not any(metric in METHODS[m].metrics for m in names):
        raise InvalidParameterError(f"explore: metric {metric!r} is taken by none of the methods {names}")
    out = []
    for name in names:
        own, own_metric = _taken(name, options, metric)
        for value in ks:
            out.append(
                check_request(
                    schema, hierarchies=hierarchies, k=value, method=name, metric=own_metric, options=own, **asked
                )
            )
    return out


class ExploreGrid(pl.DataFrame):
    """The table :func:`explore` returns (a Polars DataFrame); a notebook shows it with the Pareto front marked."""

    def _repr_html_(self, **kwargs: Any) -> str:
        return notebook.explore_html(self)


def explore(
    data: pl.LazyFrame | pl.DataFrame,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k: Sequence[int] | int = DEFAULT_K,
    methods: Sequence[Method] | Method = DEFAULT_METHODS,
    qids: Sequence[str] | None = None,
    metric: str | None = None,
    drop: Sequence[str] | str = (),
    sensitive: str | None = None,
    insensitive: Sequence[str] | str = (),
    seed: int = 0,
    null: NullPolicy = "error",
    privacy: Sequence[Model] = (),
    risk_threshold: int | None = None,
    **options: Any,
) -> ExploreGrid:
    """Run an anonymization over a grid of k and methods and measure each configuration (see the module docstring).

    The parameters are those of :func:`polars_anon.anonymize` with `k` and `methods`
    as lists (privacy models included: every configuration enforces them, as
    anonymize would); `risk_threshold` (rows, default the largest k) sets
    ``records_at_risk``. Explore runs on Polars (a job file's ``engine = "duckdb"`` or ``"spark"``: see
    :func:`explore_job`).

    Returns
    -------
    pl.DataFrame
        One row per (method, k): ``method, k, metric, options, feasible, error, loss,
        loss_<qid>..., suppressed, n_classes, min_class_size, highest_risk, average_risk,
        records_at_risk, risk_threshold, levels, seconds, front_highest_risk,
        front_records_at_risk``.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> df = pl.DataFrame({"age": [31, 33, 38, 36, 41, 44], "sex": ["F", "M", "F", "M", "F", "M"]})
    >>> H = {"age": Hierarchy.intervals(range(30, 50), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}
    >>> t = explore(df, hierarchies=H, k=[2, 3], methods=["fulldomain", "greedy"])
    >>> t.select("method", "k", "loss", "min_class_size", "front_highest_risk").rows()  # fulldomain: age to *, sex kept
    [('fulldomain', 2, 0.5, 3, True), ('fulldomain', 3, 0.5, 3, True),
     ('greedy', 2, 0.3596..., 2, True), ('greedy', 3, 0.5, 3, True)]
    """
    asked = {
        "qids": qids,
        "drop": drop,
        "sensitive": sensitive,
        "insensitive": insensitive,
        "seed": seed,
        "null": null,
        "privacy": privacy,
    }
    return ExploreGrid(_explore(as_lazy(data), hierarchies, k, methods, metric, options, asked, risk_threshold)[0])


def _explore(
    lf: pl.LazyFrame,
    hierarchies: Mapping[str, Hierarchy] | None,
    k: Sequence[int] | int,
    methods: Sequence[str] | str,
    metric: str | None,
    options: Mapping[str, Any],
    asked: Mapping[str, Any],
    risk_threshold: int | None,
    engine: Engine = POLARS,
    table: Any = None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """:func:`explore`, and facts of the run (rows, classes, seconds) for the page. On another `engine` its `table`
    is aggregated there (one pass) and every configuration runs on the driver, as the road's driver route."""
    start = time.perf_counter()
    table = lf if table is None else table
    with missing_sources(lf):  # a scan of a file that does not exist: one line naming it
        schema = lf.collect_schema() if engine is POLARS else engine.schema(table)
    grid = requests(schema, k=k, methods=methods, hierarchies=hierarchies, metric=metric, options=options, **asked)
    for request in grid:  # before any data is read
        consult_explore(request, "polars")  # every configuration runs here, on the class aggregates
    largest = max(grid, key=lambda r: r.k)  # the data checks at the largest k hold for every k of the grid
    threshold = largest.k if risk_threshold is None else _check_threshold(risk_threshold)
    data = aggregate(engine, table, largest, records=any(r.method.records for r in grid))
    aggregated = time.perf_counter() - start
    rows = [_measure(data, r, threshold) for r in bar(grid, desc=f"explore {len(grid)} configurations", unit="run")]
    facts = {
        "n_input_rows": int(data.aggregates[SIZE].sum()),
        "n_input_classes": data.aggregates.height,
        "qids": list(largest.qids),
        "risk_threshold": threshold,
        "aggregate_seconds": round(aggregated, 3),
        "seconds": round(time.perf_counter() - start, 3),
    }
    return _table(rows, list(largest.qids)), facts


def _check_threshold(value: object) -> int:
    if not is_integer(value) or value < 1:
        raise InvalidParameterError(
            f"explore: risk_threshold (CLI: --risk-threshold) must be an integer >= 1, got {value!r}; records in "
            "classes smaller than it are counted at risk"
        )
    return int(value)


def explore_job(
    job: Job,
    *,
    k: Sequence[int] | int = DEFAULT_K,
    methods: Sequence[str] | str = DEFAULT_METHODS,
    risk_threshold: int | None = None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """:func:`explore` with a job file's input, quasi-identifiers, hierarchies, roles and options (its k and method
    are replaced by the grid). Every configuration is checked before any data is read. Returns the table and facts
    of the run (input, rows, classes, seconds) for :func:`write_explore`'s page.

    With ``engine = "duckdb"`` or ``"spark"`` the engine reads the input and aggregates it (one pass, as the road's
    driver route) and every configuration runs on those aggregates here: the rows equal Polars' explore of the same
    input. Refused, naming the culprit: a method the engine cannot run, a method on records (MDAV: inside the
    engine), and an input with more distinct quasi-identifier tuples than ``driver_tuples``."""
    lf = job.scan()
    asked = {
        "qids": list(job.qids),
        "drop": job.drop,
        "insensitive": job.insensitive,
        "sensitive": job.sensitive,
        "seed": job.seed,
        "null": job.null,
        "road": "job",  # the refusals of its data name the job's keys
    }
    deferred = {q: DEFERRED for q, spec in job.qids.items() if spec is not None}
    deferred |= {p.model.sensitive_attribute: DEFERRED for p in job.privacy if p.hierarchy is not None}
    grid = requests(
        lf.collect_schema(),
        k=k,
        methods=methods,
        hierarchies=deferred,
        metric=job.metric,
        options=job.options,
        privacy=[p.model for p in job.privacy],
        **asked,
    )
    if job.engine != "polars":
        with engine_faults(job):
            table, facts = _explore_on_engine(job, lf, grid, k, methods, asked, risk_threshold)
        return table, {"input": str(job.input), "engine": job.engine, **facts}
    hierarchies = build_hierarchies(lf, job.qids, job.base)
    asked["privacy"] = job_models(job, lf)
    table, facts = _explore(lf, hierarchies, k, methods, job.metric, job.options, asked, risk_threshold)
    return table, {"input": str(job.input), **facts}


def _explore_on_engine(
    job: Job,
    lf: pl.LazyFrame,
    grid: list[Request],
    k: Sequence[int] | int,
    methods: Sequence[str] | str,
    asked: dict[str, Any],
    risk_threshold: int | None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """A job on DuckDB or Spark: the engine reads the input and aggregates it once (the road's driver route), every
    configuration runs on the driver. What the engine cannot run, a method on records (it runs inside the engine,
    one configuration at a time) and an input with more distinct tuples than ``driver_tuples`` are refused."""
    limit = 0
    for request in grid:  # before any data is read
        limit = consult_explore(request, job.engine, job.driver_tuples).driver_tuples
    with job_engine(job) as engine_of:  # closed when explore ends, failed or not
        engine, table, hierarchies, counts, _ = open_on_engine(job, lf, limit, engine_of())
        if counts.height > limit:
            raise InvalidParameterError(
                f"explore: the input has more than driver_tuples={limit:,} distinct quasi-identifier tuples; explore "
                f"measures every configuration on the class aggregates in this process, but on engine {job.engine!r} "
                "such an input is anonymized inside the engine (run anonymize per configuration), or raise "
                "driver_tuples"
            )
        asked = {**asked, "privacy": job_models(job, lf)}
        return _explore(lf, hierarchies, k, methods, job.metric, job.options, asked, risk_threshold, engine, table)


def _measure(data: Aggregated, request: Request, threshold: int) -> dict[str, Any]:
    """One configuration: run it on the aggregates and measure its map (the figures its report would give)."""
    row: dict[str, Any] = {
        "method": request.method.name,
        "k": request.k,
        "metric": request.effective_metric,
        "options": json.dumps(dataclasses.asdict(request.options), sort_keys=True, default=str),
        "models": "; ".join(m.describe() for m in request.privacy) or None,
    }
    start = time.perf_counter()
    try:
        plan = run_method(data, request)
    except InfeasibleError as exc:
        return {**row, "feasible": False, "error": str(exc), "seconds": time.perf_counter() - start}
    seconds = time.perf_counter() - start
    loss, by_qid = map_loss(plan.map, request.hierarchies)
    sizes, rows = guarantee_sizes(plan)  # the report's reading of the guarantee (local suppression: wildcard fk)
    published = size_histogram(np.floor(sizes).astype(np.int64), rows=rows)
    n_classes, smallest = counts(
        {"guarantee": plan.guarantee, "details": plan.details, "class_sizes": {"published": published}}
    )
    levels = plan.details.get("levels")
    return {
        **row,
        "feasible": True,
        "error": None,
        "guarantee": plan.guarantee,
        "loss": loss,
        **{f"loss_{q}": v for q, v in by_qid.items()},
        "suppressed": plan.map.suppressed_rows,
        "n_classes": n_classes,
        "min_class_size": int(smallest or 0),
        **size_risk(sizes, threshold, rows),
        "levels": json.dumps(levels) if levels else None,
        "seconds": seconds,
    }


def _table(rows: list[dict[str, Any]], qids: list[str]) -> pl.DataFrame:
    schema = {
        "method": pl.String,
        "k": pl.Int64,
        "metric": pl.String,
        "options": pl.String,
        "models": pl.String,
        "feasible": pl.Boolean,
        "error": pl.String,
        "guarantee": pl.String,
        "loss": pl.Float64,
        **{f"loss_{q}": pl.Float64 for q in qids},
        "suppressed": pl.Int64,
        "n_classes": pl.Int64,
        "min_class_size": pl.Int64,
        "highest_risk": pl.Float64,
        "average_risk": pl.Float64,
        "records_at_risk": pl.Float64,
        "risk_threshold": pl.Int64,
        "levels": pl.String,
        "seconds": pl.Float64,
    }
    table = pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema, orient="row")
    fronts = {f"front_{risk}": pl.Series(pareto(table[risk], table["loss"])) for risk in RISKS}
    return table.with_columns(**fronts)


def pareto(risk: Sequence[float | None] | pl.Series, loss: Sequence[float | None] | pl.Series) -> list[bool]:
    """Which points are on the Pareto front (no other point has risk and loss both <=, one of them <).

    Points with a missing value are not on it.

    >>> pareto([0.5, 0.1, 0.1, 0.2], [0.1, 0.4, 0.3, 0.3])
    [True, False, True, False]
    """
    pts = list(zip(risk, loss))
    out = []
    for i, (r, lo) in enumerate(pts):
        if r is None or lo is None:
            out.append(False)
            continue
        beaten = any(
            j != i and r2 is not None and l2 is not None and r2 <= r and l2 <= lo and (r2 < r or l2 < lo)
            for j, (r2, l2) in enumerate(pts)
        )
        out.append(not beaten)
    return out


def explore_targets(path: str | Path, *, html: bool = True) -> list[Path]:
    """The files :func:`write_explore` writes for `path`: the table and, unless `html` is False, its page
    ``<stem>.html`` (nothing is read: an interface checks them before running the grid).

    >>> [str(p) for p in explore_targets("out/grid.csv")]
    ['out/grid.csv', 'out/grid.html']
    >>> explore_targets("grid.json")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: explore output 'grid.json' must end in .csv or .parquet
    """
    path = Path(path)
    if path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        raise InvalidParameterError(f"explore output {str(path)!r} must end in .csv or .parquet")
    return [path, path.with_suffix(".html")] if html else [path]


def write_explore(
    table: pl.DataFrame,
    path: str | Path,
    *,
    meta: Mapping[str, Any] | None = None,
    html: bool = True,
    overwrite: bool = False,
) -> dict[str, str]:
    """Write the explore table (``.csv`` or ``.parquet``) and its page; all or nothing.

    The page is ``<stem>.html``, written unless `html` is False.

    `meta` (input, rows, timings, ...) is shown on the page. Returns the paths written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    page = path.with_suffix(".html")
    written = {"table": str(path)}
    with Outputs(overwrite=overwrite) as out:
        for target in explore_targets(path, html=html):
            out.check(target)
        staged_write(out, path, lambda tmp: table.write_csv(tmp) if suffix == ".csv" else table.write_parquet(tmp))
        if html:
            from polars_anon.report.explore_html import render_explore_html  # imports the plotting library

            text = render_explore_html(table.to_dicts(), dict(meta or {}))
            staged_write(out, page, lambda tmp: tmp.write_text(text, encoding="utf-8"))
            written["html"] = str(page)
        out.commit()
    return written
