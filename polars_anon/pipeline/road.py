"""The one road: every engine, every method, every interface.

:func:`run` (``pa.anonymize`` is :func:`anonymize`, the job file, the CLI, the namespace, the Spark and
DuckDB front doors all call it):

1. :func:`~polars_anon.request.check_request` on the input's schema (no row read);
2. the capability table (:func:`~polars_anon.pipeline.capabilities.consult`): refused now what no route runs;
3. the route: on DuckDB and Spark, the engine's qid group-by with a ``LIMIT`` of ``driver_tuples + 1``
   decides between the driver and the method's planner (the group-by is kept: no second pass);
4. driver route: the engine's aggregation pass (:func:`aggregate`), :func:`~polars_anon.request.check_data`
   on it, the method (:func:`run_method`; its map checked by :func:`check_map`), the report, the engine
   publishes the map; planner route: the engine's marginals checked
   (:func:`~polars_anon.request.check_marginals`), the planner's plan (its map checked the same way), the
   report, the engine joins the planner's engine map;
5. the result (:class:`~polars_anon.pipeline.result.Anonymized`) verifies on collect, table or write.
"""

from __future__ import annotations

import difflib
import inspect
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl

from polars_anon._memory import raise_mmap_threshold, release_freed_memory
from polars_anon._passes import TupleCounts
from polars_anon._progress import stage
from polars_anon._threads import on_own_thread
from polars_anon._types import EngineName, Method, NullPolicy, Road
from polars_anon.advice import method_advice
from polars_anon.algorithms import METHODS, Plan, dpsearch
from polars_anon.engines import Engine, SQLEngine, get_engine
from polars_anon.engines.planners import PLANNERS, PYTHON_TASKS
from polars_anon.errors import InfeasibleError, InvalidParameterError, NotKAnonymousError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import FileStamp, csv_errors, file_stamps
from polars_anon.messages import K_ABOVE_ROWS
from polars_anon.metrics.arrays import many_pairs
from polars_anon.metrics.cell_counts import PairCells, leaf_pair_cells
from polars_anon.options import option_names
from polars_anon.pipeline.capabilities import Capability, consult, consult_input, consult_session, consult_table
from polars_anon.pipeline.result import Anonymized, Check
from polars_anon.pipeline.state import (
    Aggregated,
    EnginePlan,
    Planned,
    population_size,
    root_exprs,
    rooted_aggregates,
    task_constraints,
)
from polars_anon.privacy.base import Model
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import population_files
from polars_anon.privacy.differential import DifferentialPrivacy
from polars_anon.privacy.risk import risk_summary, risk_summary_of_sizes
from polars_anon.report import plan_facts
from polars_anon.report.classes import distinct_sizes
from polars_anon.request import NO_INPUT_ROWS, Request, check_data, check_marginals, check_request
from polars_anon.tuplemap import SIZE

__all__ = [
    "aggregate",
    "anonymize",
    "check_map",
    "differential_model",
    "plan_request",
    "prepare_engine",
    "run",
    "run_method",
]

_NAMED = ("qids", "method", "metric", "drop", "sensitive", "insensitive", "seed", "null", "privacy")


def differential_model(request: Request) -> DifferentialPrivacy | None:
    """The request's differential-privacy model, if it asks for one."""
    found = [m for m in request.privacy if isinstance(m, DifferentialPrivacy)]
    return found[0] if found else None


def sample(engine: Engine, table: Any, request: Request, model: DifferentialPrivacy) -> tuple[Any, Request]:
    """A differentially private release's first step: the rows sampled in the engine (a keyed hash of the row
    number, :mod:`polars_anon.privacy.differential`), and the request with the model prepared for this run and
    k raised to the model's."""
    with stage("sample rows"):
        n_rows = check_input(engine, table, request)
        k = max(request.k, model.k)
        prepared = model.prepared(n_rows, k, k_asked=request.k)
        assert prepared.release is not None
        sampled = engine.sample(table, prepared.release.key, prepared.release.threshold)
    privacy = tuple(prepared if m is model else m for m in request.privacy)
    return sampled, replace(request, k=k, privacy=privacy)


def _sample_too_small(exc: InfeasibleError, request: Request) -> InfeasibleError | None:
    """The refusal of a differentially private release whose sample has fewer rows than its k, or none (`exc`
    refused the sample for that: k above its rows, or no rows at all), in the model's terms: the input's rows, the
    sample's, β, and the model's advice. None for any other refusal of the sample."""
    model = differential_model(request)
    text = str(exc)
    if model is None or model.release is None:
        return None
    if text == NO_INPUT_ROWS:
        kept = "is empty"
    elif re.fullmatch(K_ABOVE_ROWS.pattern(k=request.k), text):
        rows = re.search(r"\((\d+) rows\)", text)
        kept = f"has {rows[1] if rows else 'fewer'} rows"
    else:
        return None
    return InfeasibleError(
        f"differential-privacy (epsilon={model.epsilon!r}, delta={model.delta!r}) needs classes of k={request.k} "
        f"rows, and the sample of the input's {model.release.n_rows:,} rows (each row kept with probability "
        f"{model.beta:.4f}) {kept}; {model.advice(request.k)}"
    )


def check_input(engine: Engine, table: Any, request: Request) -> int:
    """The whole input's checks before it is sampled, and its row count: the values outside their hierarchy and the
    nulls, counted on the input (:func:`~polars_anon.request.check_marginals`, one pass: each qid's values), not on the
    sample (a value only some seeds sample was refused with one seed and published with another; the null count was
    the sample's). This pass is the one that counted the rows."""
    marginals = engine.marginals(table, list(request.qids))
    check_marginals(marginals, request, {})
    return int(marginals[request.qids[0]][SIZE].sum())


def search_sample(engine: Engine, table: Any, request: Request, model: DifferentialPrivacy) -> pl.DataFrame | None:
    """The class aggregates of the search's own sample of `table` (the input, not the released sample): the rows a
    hash with the run's independent search key keeps, at the same threshold (:mod:`polars_anon.algorithms.dpsearch`:
    the search then costs ln(1 + β (e^ε1 - 1)) of ε). None when the transformation is given (no search)."""
    if not model.data_dependent or model.release is None:
        return None
    with stage("sample rows for the search"):
        sampled = engine.sample(table, model.release.search_key, model.release.threshold)
    try:  # k=1: a search sample smaller than k is scored all the same (every vector then keeps nothing)
        return aggregate(engine, sampled, replace(request, k=1), records=False).aggregates
    except InfeasibleError:  # an empty sample: no tuple, every vector scores alike (a uniform draw)
        return pl.DataFrame(
            {q: pl.Series([], dtype=pl.String) for q in request.qids} | {SIZE: pl.Series([], dtype=pl.UInt32)}
        )


def aggregate(
    engine: Engine, table: Any, request: Request, *, records: bool | None = None, counts: TupleCounts | None = None
) -> Aggregated:
    """The engine's aggregation pass over `table`, checked against `request`.

    `records` (default: whether the request's method needs them) also collects the qids of every
    row (Polars). `counts`: the tuple pass a job already made over `table` to build its hierarchies,
    handed on to the engine (Polars then reads the input no more for the class aggregates). The checks
    of the data hold for every request that differs from `request` only by its method, options, metric
    or a k no larger.

    >>> from polars_anon.engines.polars import POLARS
    >>> from polars_anon import Hierarchy
    >>> req = check_request(pl.Schema({"sex": pl.String}), hierarchies={"sex": Hierarchy.suppression(["F", "M"])}, k=2)
    >>> aggregate(POLARS, pl.LazyFrame({"sex": ["F", "M", "F"]}), req).aggregates.rows()
    [('F', 2), ('M', 1)]
    """
    with stage("aggregate classes"):
        raw = engine.aggregate(table, request, counts)
    check_data(raw.table, request, raw.distinct, None if raw.codes is None else raw.codes.labels)
    table_, null_rows = rooted_aggregates(raw.table, request)
    prepared = pl.LazyFrame() if raw.rows is None else raw.rows
    if null_rows and raw.rows is not None:
        prepared = prepared.with_columns(root_exprs(request))
    rows = None
    if (request.method.records if records is None else records) and raw.rows is not None:
        keep = [*request.qids, *request.sensitives]
        rows = prepared.select(keep).collect()  # materializes: the qids of every row (the method works on records)
    aggregates = table_.select(*request.qids, SIZE)
    # kept for a method that reads them (their memory otherwise freed now); rooted nulls merge rows: not theirs
    codes = raw.codes if request.method.codes and not null_rows else None
    return Aggregated(prepared, aggregates, null_rows, rows, table_, raw.counted, raw.native, codes=codes)


def check_map(
    plan: Plan, aggregates: pl.DataFrame | None, request: Request, constraints: Constraints | None = None
) -> None:
    """The map's contract, for every method and planner: every input row sent once (when the input's tuples are
    on the driver), every published node its row's value or an ancestor of it (a map of node ids:
    :meth:`~polars_anon.tuplemap.TupleMap.check_truthful`) and, for k-anonymity, classes of at least k rows (fail
    early, before anything is published); with `constraints`, no publication that is the whole table or nothing
    when the whole table fails a model (:func:`refuse_coarsest`)."""
    if aggregates is not None:
        plan.map.check_covers(aggregates)
    plan.map.check_truthful()
    if constraints is not None:
        refuse_coarsest(plan, constraints, request)
    if plan.guarantee == "k-anonymity" and not plan.map.by_row:
        sizes = plan.map.class_sizes()
        smallest = int(sizes.min()) if len(sizes) else 0
        if smallest < request.k:
            raise NotKAnonymousError(
                f"method {request.method.name!r} produced a class of {smallest} rows, fewer than k={request.k}; "
                "nothing was written"
            )


def refuse_coarsest(plan: Plan, constraints: Constraints, request: Request) -> None:
    """A publication that is the whole table as one class, or nothing, when the whole table fails a model (one the
    up-front refusal leaves to the methods: not monotone, or a budget to suppress within) meets no model: the method
    found no publication, :meth:`Constraints.no_publication`'s refusal, the same from every method. With a population
    table one class is judged by the method at its own nodes (three identical rows under leaves match fewer
    population records than under the roots), and the written file is verified as always."""
    if constraints.k_only or plan.map.by_row or plan.map.by_partition:
        return
    sizes = plan.map.class_sizes()
    one_class = len(sizes) == 1 and int(sizes[0]) == constraints.n_rows
    if one_class and constraints.population is not None:
        return  # its population count is its published nodes', not the whole population's: the method judged it
    coarsest = len(sizes) == 0 or one_class
    if coarsest and not all(entry["satisfied"] for entry in constraints.status(constraints.whole())):
        budget = plan.details.get("max_suppressed", getattr(request.options, "max_suppressed", None))
        raise constraints.no_publication(request.method.name, budget, request.method.misses)


def run_method(
    data: Aggregated, request: Request, constraints: tuple[Constraints, dict[str, pl.LazyFrame]] | None = None
) -> Plan:
    """Run the request's method on the aggregates; its map is checked (:func:`check_map`).

    `constraints` (from :func:`~polars_anon.pipeline.state.task_constraints`; built when not given) are what
    the method enforces.
    """
    records = data.records if request.method.records else None
    if request.method.records and records is None:
        raise ValueError(f"method {request.method.name!r} works on records: aggregate(..., records=True)")
    built, counts = task_constraints(data, request) if constraints is None else constraints
    task = request.task(data.aggregates, records=records, sensitive_counts=counts, constraints=built, codes=data.codes)
    dp = differential_model(request)
    plan = dpsearch.run(task, dp, data.search) if dp is not None else request.method.run(task, request.options)
    release_freed_memory()  # the method's working arrays, freed now, would stay resident otherwise
    check_map(plan, data.aggregates, request, built)
    return plan


def _input_risk(aggregates: pl.DataFrame, request: Request, population: int | None) -> dict[str, Any]:
    """The input's risk figures from its class aggregates: without a population size, the same figures from the
    distinct class sizes (a few hundred numbers, not every class); with one, from every class and its estimates."""
    if population is None:
        return risk_summary_of_sizes(*distinct_sizes(aggregates[SIZE]))
    return risk_summary(aggregates, list(request.qids), aggregated=True, population_size_=population)


def plan_request(
    data: Aggregated,
    request: Request,
    schema: pl.Schema,
    start: float,
    engine: str = "polars",
    *,
    aggregated_at: float | None = None,
) -> Planned:
    """Run the request's method on the aggregates and gather the report's facts (the driver route of every engine);
    `aggregated_at` (a ``time.perf_counter()``) when the aggregation pass ended: the report's phases."""
    constraints = task_constraints(data, request)
    pair_cells = _pair_cells_beside(data, request)
    plan = run_method(data, request, constraints)
    phases = (
        None if aggregated_at is None else _phases(start, {"aggregate": aggregated_at, "method": time.perf_counter()})
    )
    population = population_size(request, constraints[0].n_rows)
    input_risk = _input_risk(data.aggregates, request, population)
    advice = None  # a differentially private release runs no other method on its sample
    if differential_model(request) is None:
        advice = method_advice(data, request, plan, constraints, run_method)  # cheap: on the aggregates, small ones
    facts = plan_facts(
        request,
        schema,
        data.aggregates,
        plan,
        time.perf_counter() - start,
        null_rows=data.null_rows,
        engine=engine,
        input_risk=input_risk,
        advice=advice,
        phases=phases,
        pair_cells=None if pair_cells is None else pair_cells.result,
    )
    return Planned(plan, facts, constraints[0], input_risk, population)


def _pair_cells_beside(data: Aggregated, request: Request) -> Future[PairCells | None] | None:
    """The report's cells of the original columns' pairs (:func:`~polars_anon.metrics.cell_counts.leaf_pair_cells`),
    counted from the aggregates on a thread of their own while the method runs, when the road has their codes (a
    method on codes: its map holds the aggregates' tuples, as every map of them) and they are many
    (:func:`~polars_anon.metrics.arrays.many_pairs`); else None (the report counts them from the map). The leaves
    are read on that thread too: their codes' check (:meth:`~polars_anon.algorithms.Task.leaf_index`) hashes every
    row where PyArrow is not loaded, and the method's task checks them again."""
    if data.codes is None or differential_model(request) is not None or not many_pairs(data.aggregates.height):
        return None
    task = request.task(data.aggregates, codes=data.codes)
    sizes = data.aggregates[SIZE].to_numpy()

    def count() -> PairCells | None:
        leaves = [task.leaf_index(q) for q in request.qids]
        ids = [index if labels is None else np.take(labels, index) for index, labels in leaves]
        return leaf_pair_cells(ids, sizes, [request.hierarchies[q] for q in request.qids])

    return on_own_thread(count)


def prepare_engine(engine: Engine, request: Request) -> None:
    """What the engine must have before any data is read: on Spark, for a method whose planner runs the package's
    code in Spark tasks (:data:`~polars_anon.engines.planners.PYTHON_TASKS`), executors that import it (one tiny
    task, once per Spark application; refused in one line naming what is missing)."""
    check = getattr(engine, "check_executors", None)
    if check is not None and (request.method.name, engine.name) in PYTHON_TASKS:
        check()


def _phases(start: float, marks: dict[str, float]) -> dict[str, float]:
    """Seconds of each phase from `start` and the times each one ended, in order."""
    out, last = {}, start
    for name, end in marks.items():
        out[name], last = round(end - last, 3), end
    return out


def _planner_route(
    engine: SQLEngine,
    table: Any,
    request: Request,
    schema: pl.Schema,
    start: float,
    capability: Capability,
    reads: Sequence[str] = (),
    missing: Callable[[str], str] | None = None,
    stamps: Mapping[str, FileStamp] | None = None,
) -> Anonymized:
    """The method inside the engine: its plan, checked and reported as the driver route's; the engine's map joined."""
    capability.refuse_planner()
    planner = PLANNERS[(request.method.name, engine.name)](engine, table, request)
    with stage("aggregate values"):
        marginals = planner.marginals()
        distinct = engine.distinct(table, request.undeclared) if request.undeclared else {}
    aggregated_at = time.perf_counter()
    check_marginals(marginals, request, distinct)
    done: EnginePlan = planner.plan()
    plan = done.plan
    check_map(plan, done.aggregates, request)
    phases = _phases(start, {"aggregate": aggregated_at, "method": time.perf_counter()})
    details = None
    if not request.method.records:
        details = {"distributed": {**plan.details.get("distributed", {}), "driver_tuples": capability.driver_tuples}}
    constraints = Constraints(done.aggregates[SIZE].to_numpy(), request.k)
    counted: dict[str, Any] = {}  # a map without every input tuple: what the planner counted instead
    if done.input_sizes is not None:
        sizes = done.input_sizes
        values, counts = sizes["s"].to_numpy().astype(np.int64), sizes["classes"].to_numpy().astype(np.int64)
        input_risk, population = risk_summary_of_sizes(values, counts), None
        counted = {"metrics": False, "input_sizes": (values, counts), "unchanged": done.facts.get("unchanged")}
    else:
        data = Aggregated(pl.LazyFrame(), done.aggregates, done.null_rows)
        constraints = task_constraints(data, request)[0]
        population = population_size(request, constraints.n_rows)
        input_risk = _input_risk(done.aggregates, request, population)
    facts = plan_facts(
        request,
        schema,
        done.aggregates,
        plan,
        time.perf_counter() - start,
        null_rows=done.null_rows,
        engine=engine.name,
        input_risk=input_risk,
        details=details,
        phases=phases,
        **counted,
    )
    planned = Planned(plan, facts, constraints, input_risk, population)
    rows = table if done.rows is None else done.rows
    published = engine.join_map(rows, done.mapping, request, done.row_key)
    check = Check(request, planned, None, engine)
    protects = _protects(request)
    return Anonymized(
        published, facts, check, None, engine, reads=tuple(reads), missing=missing, protects=protects, stamps=stamps
    )


def run(
    engine: Engine,
    data: object,
    *,
    hierarchies: Mapping[str, Any] | None,
    k: int,
    driver_tuples: int | None = None,
    counts: TupleCounts | None = None,
    start: float | None = None,
    road: Road = "python",
    **asked: Any,
) -> Anonymized:
    """:func:`anonymize` on `engine` (same parameters; `data` is the engine's table or a Polars frame).

    `counts`: the tuple pass over `data` a caller made before (a job, to build its hierarchies' values:
    :func:`~polars_anon._passes.count_tuples`), handed to the aggregation pass, which then reads no more.
    `start` (a ``time.perf_counter()``; default now): when the run began, for a caller that already ran the
    engine's group-by (a job builds its hierarchies from it): the report's ``seconds`` and phases count from it.
    `road`: ``"job"`` from a job file, whose keys then spell the refusals' way out (:attr:`Request.road`).
    """
    _refuse_misspelt_keywords(asked)
    start = time.perf_counter() if start is None else start
    raise_mmap_threshold()  # once per process: a first run's arrays served from the heap (polars_anon._memory)
    consult_session(engine)
    reads = engine.sources(data)  # the files the rows come from: the result never writes onto them
    # a CSV input's late value: one line naming it, on every entry (pa.anonymize, the engines' own, a job)
    with csv_errors(reads, _missing_option(engine, data)):
        return _run(engine, data, reads, hierarchies, k, driver_tuples, counts, start, asked, road)


def _refuse_misspelt_keywords(asked: Mapping[str, Any]) -> None:
    """Refuse a keyword that is no method's option but close to a keyword of :func:`anonymize` (``mehtod=``), naming
    that keyword, as a job names its key; any other unknown keyword is left to the method's options, which name
    theirs (:func:`~polars_anon.options.parse_options`).

    >>> _refuse_misspelt_keywords({"method": "topdown", "mehtod": "greedy"})
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: anonymize() got an unknown keyword 'mehtod'; did you mean 'method'?
    """
    keywords = [p for p in inspect.signature(anonymize).parameters if p not in ("data", "options")]
    options = {name for spec in METHODS.values() for name in option_names(spec.options)}
    for key in asked:
        if key in keywords or key in options:
            continue
        near = difflib.get_close_matches(key, keywords, n=1, cutoff=0.75)
        if near:
            raise InvalidParameterError(f"anonymize() got an unknown keyword {key!r}; did you mean {near[0]!r}?")


def _protects(request: Request) -> tuple[str, ...]:
    """The files of the models' population tables: the result never writes onto them either."""
    return tuple(f for model in request.privacy for f in population_files(model.population_frame))


def _missing_option(engine: Engine, data: object) -> Callable[[str], str] | None:
    """How to read a late CSV value as missing where `data` was read: Polars' ``null_values`` (None: the default of
    :func:`~polars_anon.io.csv_errors`) for a Polars frame, the reader's option for the engine's own table."""
    if isinstance(data, (pl.LazyFrame, pl.DataFrame)):
        return None
    if engine.name == "duckdb":
        return lambda value: "read_csv(..., nullstr = '{}')".format(value.replace("'", "''"))
    if engine.name == "spark":
        return lambda value: f"spark.read.option('nullValue', {value!r})"
    return None


def _run(
    engine: Engine,
    data: object,
    reads: Sequence[str],
    hierarchies: Mapping[str, Any] | None,
    k: int,
    driver_tuples: int | None,
    counts: TupleCounts | None,
    start: float,
    asked: dict[str, Any],
    road: Road,
) -> Anonymized:
    """:func:`run` once the input's files are known (`reads`)."""
    stamps = file_stamps(reads)  # before any read: a file changed from here on is named if publishing it fails
    missing = _missing_option(engine, data)
    consult_input(engine.name, data, reads)
    table = engine.table(data)
    schema = engine.schema(table)
    options = {key: value for key, value in asked.items() if key not in _NAMED}
    named = {key: asked[key] for key in _NAMED if key in asked}
    request = check_request(schema, hierarchies=hierarchies, k=k, options=options, road=road, **named)
    capability = consult(request, engine.name, driver_tuples)
    consult_table(engine.name, getattr(engine, "time_zone", None), data, reads, schema, request)
    prepare_engine(engine, request)
    dp = differential_model(request)
    source = table
    if dp is not None:
        table, request = sample(engine, table, request, dp)
    if engine.name != "polars":
        sql_engine: SQLEngine = engine  # type: ignore[assignment]  (DuckDB and Spark group by SQL)
        if capability.records:
            return _planner_route(sql_engine, table, request, schema, start, capability, reads, missing, stamps)
        probe = sql_engine.counts(table, list(request.qids), limit=capability.driver_tuples)
        if probe.height > capability.driver_tuples:
            return _planner_route(sql_engine, table, request, schema, start, capability, reads, missing, stamps)
    try:
        aggregated = aggregate(engine, table, request, counts=counts)
    except InfeasibleError as exc:
        small = None if dp is None else _sample_too_small(exc, request)
        if small is None:
            raise
        raise small from exc
    prepared_dp = differential_model(request)
    if prepared_dp is not None:
        aggregated = replace(aggregated, search=search_sample(engine, source, request, prepared_dp))
    aggregated_at = time.perf_counter()
    planned = plan_request(aggregated, request, schema, start, engine.name, aggregated_at=aggregated_at)
    capability.refuse_map(planned.plan.map)
    if dp is None:
        published = engine.publish(table, aggregated, planned.plan.map, request)
    else:  # every published column a qid: the rows are the published classes, sorted (where a row sat must not show)
        published = engine.expand(planned.plan.map.published_sizes(), request.published_columns)
    check = Check(request, planned, aggregated.prepared, engine)
    prepared = aggregated.prepared if engine.name == "polars" else None
    protects = _protects(request)
    return Anonymized(
        published, planned.facts, check, prepared, engine, planned.plan.map, tuple(reads), missing, protects, stamps
    )


def anonymize(
    data: pl.LazyFrame | pl.DataFrame | Any,
    *,
    qids: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k: int,
    method: Method = "fulldomain",
    metric: str | None = None,
    drop: Sequence[str] | str = (),
    sensitive: str | Sequence[str] | None = None,
    insensitive: Sequence[str] | str = (),
    seed: int = 0,
    null: NullPolicy = "error",
    privacy: Sequence[Model] = (),
    engine: EngineName = "polars",
    driver_tuples: int | None = None,
    **options: Any,
) -> Anonymized:
    """Anonymize a table (k-anonymity and each method's guarantee).

    Parameters
    ----------
    data
        Polars LazyFrame or DataFrame (for example ``pl.scan_parquet(...)``); on engines ``"duckdb"`` and
        ``"spark"`` also the engine's own table, or a Parquet path (a str, or a ``pathlib.Path`` or any
        ``os.PathLike``: a path object always names a file, never a table).
    qids
        Quasi-identifier columns; defaults to the keys of `hierarchies`.
    hierarchies
        Quasi-identifier -> :class:`~polars_anon.Hierarchy` (a key that is not a qid is refused). Optional for the
        methods that publish without one (``mondrian``, ``mdav``, ``local_suppression``: those whose
        :data:`~polars_anon.algorithms.METHODS` entry says ``needs_hierarchies=False``); a method that needs one for
        every qid refuses naming the qids without one.
    k
        Minimum class size, >= 1 and at most the row count.
    method
        Algorithm name from :data:`polars_anon.algorithms.METHODS`.
    metric
        The cost the method optimizes, for methods that take one (others refuse it).
    drop
        Identifying columns (direct identifiers) to remove before publishing.
    sensitive
        The sensitive attribute, or a list of them (published as is; privacy models
        and some metrics read them; a model's attribute is sensitive without being listed).
    insensitive
        Columns published as is that would otherwise be refused because nearly every
        value is distinct (see :mod:`polars_anon.attributes`).
    seed
        Seed for randomized steps; same input, parameters and seed give the same bytes.
    null
        ``"error"`` refuses nulls in a quasi-identifier with their count;
        ``"suppress"`` publishes them as the hierarchy root.
    privacy
        Privacy models every class must satisfy besides k (``pa.LDiversity``,
        ``pa.TCloseness``, ... see :mod:`polars_anon.privacy`); each method enforces
        them and the published table is checked against each before it is returned.
    engine
        Where the rows are grouped, published, verified and written: ``"polars"``
        (default), ``"duckdb"`` or ``"spark"`` (the active Spark session, or a local one).
        The method runs on the driver over the class aggregates either way; the result
        of another engine offers ``.table()`` (its own table), ``.collect()`` and
        ``.sink_parquet()``. See :mod:`polars_anon.engines`.
    driver_tuples
        Engines ``"duckdb"`` and ``"spark"`` only: the most class aggregates (distinct
        quasi-identifier tuples) brought to the driver (default 5,000,000). Beyond it,
        ``method="mondrian"`` runs its rounds as engine queries, ``"greedy"`` on Spark its
        first round per block in Spark tasks, and other methods are refused (see
        :mod:`polars_anon.engines.planners` and :mod:`polars_anon.pipeline.capabilities`).
    **options
        The method's options (its dataclass in :mod:`polars_anon.algorithms`; unknown
        keys and wrong types are refused, a misspelt key naming the closest keyword or option).

    Returns
    -------
    Anonymized
        ``.collect()`` or ``.sink_parquet(path)`` verify and return or write the table;
        ``.report`` holds the facts.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> df = pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"]})
    >>> H = {"age": Hierarchy.intervals(range(30, 40), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}
    >>> anonymize(df, hierarchies=H, k=2).collect().rows()
    [('30-39', 'F'), ('30-39', 'M'), ('30-39', 'F'), ('30-39', 'M')]
    """
    asked = {
        "qids": qids,
        "method": method,
        "metric": metric,
        "drop": drop,
        "sensitive": sensitive,
        "insensitive": insensitive,
        "seed": seed,
        "null": null,
        "privacy": privacy,
    }
    on = get_engine(engine, data=data)
    return run(on, data, hierarchies=hierarchies, k=k, driver_tuples=driver_tuples, **asked, **options)
