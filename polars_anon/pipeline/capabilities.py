"""The capability table: which method runs on which engine, by which route, with which options and models.

Every "is this supported?" of the road is a row of :data:`REFUSALS`; the road consults the table
once, right after :func:`~polars_anon.request.check_request` and before any data is read
(:func:`consult`). A row names the method and the engine it concerns (``"*"``: any), the route
(``"any"``; ``"driver"``: the method on the class aggregates on the driver; ``"planner"``: the
method run inside the engine, :mod:`polars_anon.engines.planners`), when it applies (a predicate
on the request) and the reason given. Which route a non-record method takes on DuckDB or Spark
depends on the number of distinct qid tuples (``driver_tuples``), known only once the engine
has counted them: :func:`consult` therefore returns a :class:`Capability` that already holds the
decision for both routes, and the road raises the planner route's refusal when it takes that route.
One fact no request shows, whether a method split one tuple's rows over several classes
(Mondrian's relaxed cuts), is decided on the map by :meth:`Capability.refuse_map`.

A job file adds what an interface, not a method, decides: which engine takes which job key (encodings
run on Polars, ``driver_tuples`` caps the other engines), which keys suit which input format (the
CSV reading keys need a CSV input) and which hierarchy specs a differential-privacy model takes (files only: the
built-in kinds are built from the data). Those are the rows of :data:`JOB_REFUSALS`, consulted once by
:func:`consult_job` when the job file is read, before any data is. ``explore`` adds two rows of its own (a
differential-privacy model; a method on records on DuckDB or Spark), held by :func:`consult_explore`. What an
engine cannot take from a Polars frame is refused by :func:`consult_frame` (:data:`FRAME_DTYPES`: a 128-bit integer
column, which Arrow cannot carry) and :func:`consult_zones` (:data:`SESSION_ZONES`: a time-zone-aware qid that DuckDB
or Spark would hand back, and so label, in its session's zone), both from the frame's schema before any row is read.

>>> from polars_anon.request import check_request
>>> import polars as pl
>>> req = check_request(pl.Schema({"x": pl.String}), qids=["x"], k=2, method="mdav")
>>> consult(req, "duckdb")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
polars_anon.errors.InvalidParameterError: method 'mdav' works on row records, which engine 'duckdb' does not hand ...
>>> consult(req, "polars").planner is None
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl
from polars.datatypes import DataTypeClass  # a dtype class (pl.Int64), as nested dtypes hold their inner types

from polars_anon._dtypes import map_nested
from polars_anon.algorithms.local_suppression import NULLS as LOCAL_SUPPRESSION_NULLS
from polars_anon.encode import ENCODINGS, READS_ORIGINALS
from polars_anon.engines.planners import DRIVER_TUPLES, PLANNERS, check_driver_tuples, too_many
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.hierarchy_spec import parse_spec
from polars_anon.io import CSV_SUFFIXES, is_csv, parquet_footer
from polars_anon.locations import URI, local_path, scheme_of
from polars_anon.pipeline.sessions import SESSIONS, consult_session, refuse_session
from polars_anon.request import FULL_DOMAIN_METHODS, Request
from polars_anon.sdc.job import SdcSpec
from polars_anon.sdc.spec import Measures
from polars_anon.tuplemap import TupleMap

__all__ = [
    "CASELESS_NAMES",
    "COLUMN_DTYPES",
    "CSV_KEYS",
    "Capability",
    "FRAME_DTYPES",
    "JOB_REFUSALS",
    "JobRefusal",
    "REFUSALS",
    "Refusal",
    "SDC_MEASURE_REFUSALS",
    "SDC_REFUSALS",
    "SESSIONS",
    "SESSION_ZONES",
    "SOURCE_DTYPES",
    "STORAGE",
    "SdcMeasureRefusal",
    "SdcRefusal",
    "consult",
    "consult_columns",
    "consult_explore",
    "consult_frame",
    "consult_input",
    "consult_job",
    "consult_names",
    "consult_sdc",
    "consult_sdc_measures",
    "consult_session",
    "consult_source_dtypes",
    "consult_source_zones",
    "consult_table",
    "consult_values",
    "consult_zones",
    "input_format",
    "refuse_driver_tuples",
    "refuse_session",
    "storage",
]

Route = Literal["any", "driver", "planner"]


@dataclass(frozen=True)
class Refusal:
    """One row of the table: `method` on `engine` by `route` is refused when `when(request)`, saying `why(request)`."""

    method: str
    engine: str
    route: Route
    when: Callable[[Request], bool]
    why: Callable[[Request], str]

    def matches(self, request: Request, engine: str, route: Route) -> bool:
        return (
            self.method in ("*", request.method.name)
            and self.engine in ("*", engine)
            and self.route in ("any", route)
            and self.when(request)
        )


def _always(request: Request) -> bool:
    return True


def _no_planner(engine: str) -> Callable[[Request], bool]:
    return lambda r: r.method.records and (r.method.name, engine) not in PLANNERS


def _mdav_spark(why: str) -> Callable[[Request], str]:
    return lambda r: f"method 'mdav' on engine 'spark': {why}, or use engine 'polars'"


def _dp(request: Request) -> bool:
    return any(m.name == "differential-privacy" for m in request.privacy)


def _dp_why(reason: str) -> Callable[[Request], str]:
    return lambda r: f"differential-privacy: {reason}"


def _dp_levels(request: Request) -> str | None:
    """What is wrong with a differential-privacy model's given transformation (None: nothing, or none given)."""
    for model in request.privacy:
        levels = getattr(model, "transformation", None)
        if model.name != "differential-privacy" or levels is None:
            continue
        qids = list(request.qids)
        missing, extra = [q for q in qids if q not in levels], [q for q in levels if q not in qids]
        if missing or extra:
            wrong = "; ".join(
                [*([f"missing {missing}"] if missing else []), *([f"not quasi-identifiers: {extra}"] if extra else [])]
            )
            return f"transformation must give a level for each quasi-identifier {qids}; {wrong}"
        for q in qids:
            h = request.hierarchies.get(q)
            if isinstance(h, Hierarchy) and not 0 <= levels[q] < h.height:
                return f"transformation[{q!r}]: level {levels[q]} is outside this hierarchy's levels 0..{h.height - 1}"
    return None


def _dp_raw_columns(request: Request) -> list[str]:
    """The published columns that are not quasi-identifiers (they would be published as they are)."""
    return [c for c in request.published_columns if c not in request.qids]


_DP_REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "*",
        "*",
        "any",
        lambda r: _dp(r) and bool(_dp_raw_columns(r)),
        lambda r: (
            f"differential privacy covers the whole published row: columns {_dp_raw_columns(r)} are not "
            "quasi-identifiers and would be published as they are; make each a qid with a hierarchy, or drop it"
        ),
    ),
    Refusal(
        "fulldomain",
        "*",
        "any",
        lambda r: _dp(r) and _dp_levels(r) is not None,
        lambda r: f"differential-privacy: {_dp_levels(r)}",
    ),
    Refusal(
        "*",
        "*",
        "any",
        lambda r: _dp(r) and r.method.name != "fulldomain",
        lambda r: (
            f"differential-privacy is proven for full-domain generalization only (a transformation applied to "
            f"every row the same way, SafePub); method {r.method.name!r} chooses per class from the data; use "
            "method='fulldomain'"
        ),
    ),
    Refusal(
        "fulldomain",
        "*",
        "any",
        lambda r: _dp(r) and len(r.privacy) > 1,
        lambda r: (
            f"differential-privacy cannot be combined with other privacy models "
            f"({[m.name for m in r.privacy if m.name != 'differential-privacy']}): the search and its guarantee "
            "know only class sizes; anonymize with differential-privacy alone"
            if any(m.name != "differential-privacy" for m in r.privacy)
            else f"differential-privacy is given {len(r.privacy)} times; give one model (its epsilon and delta are "
            "the release's whole budget)"
        ),
    ),
    Refusal(
        "fulldomain",
        "*",
        "any",
        lambda r: _dp(r) and int(getattr(r.options, "max_suppressed", 0) or 0) > 0,
        _dp_why(
            "max_suppressed is not taken: the mechanism suppresses every class smaller than its k, whatever the "
            "count; drop max_suppressed"
        ),
    ),
    Refusal(
        "fulldomain",
        "*",
        "any",
        lambda r: _dp(r) and r.metric is not None,
        lambda r: (
            f"differential-privacy: metric={r.metric!r} is not taken: the search maximizes the model's own utility "
            "(utility = 'loss', 'discernibility' or 'classes'), whose sensitivity is bounded; drop metric"
        ),
    ),
    Refusal(
        "fulldomain",
        "*",
        "any",
        lambda r: (
            _dp(r)
            and any(getattr(r.options, o, None) is not None for o in ("aggregate", "gs_factor", "monotonic", "weights"))
        ),
        _dp_why(
            "the full-domain objective's options (aggregate, gs_factor, monotonic, weights) are not taken: the "
            "search maximizes the model's own utility; drop them"
        ),
    ),
)


def _on_aggregates(engine: str) -> list[str]:
    """The methods that work on class aggregates (every one not on records) and that `engine` does not refuse
    outright (a row of this table that always applies), in the registry's order."""
    from polars_anon.algorithms import METHODS

    refused = {r.method for r in REFUSALS if r.engine in (engine, "*") and r.route == "any" and r.when is _always}
    return [name for name, method in METHODS.items() if not method.records and name not in refused]


REFUSALS: tuple[Refusal, ...] = (
    *_DP_REFUSALS,
    *(
        Refusal(
            "*",
            engine,
            "any",
            _no_planner(engine),
            lambda r, e=engine: (
                f"method {r.method.name!r} works on row records, which engine {e!r} does not hand to the driver; use "
                f"engine 'polars' or a method that works on class aggregates ({', '.join(_on_aggregates(e))})"
            ),
        )
        for engine in ("duckdb", "spark")
    ),
    Refusal(
        "mdav",
        "spark",
        "planner",
        lambda r: r.options.publish != "aggregate",
        _mdav_spark(
            "publish='permute' draws one random permutation key per row over the whole table; use publish='aggregate'"
        ),
    ),
    Refusal(
        "mdav",
        "spark",
        "planner",
        lambda r: r.options.distance != "gower",
        _mdav_spark("distance='ahmad_dey' is fitted on co-occurrences over all records; use distance='gower'"),
    ),
    Refusal(
        "mdav",
        "spark",
        "planner",
        lambda r: bool(r.privacy),
        _mdav_spark("privacy models merge violating clusters over the whole table; leave out privacy"),
    ),
    Refusal(
        "mdav",
        "spark",
        "planner",
        lambda r: r.null == "suppress",
        _mdav_spark("null='suppress' is not supported; fill the nulls before"),
    ),
    *(
        Refusal(
            "local_suppression",
            engine,
            "any",
            _always,
            lambda r, e=engine: (
                f"method 'local_suppression' on engine {e!r}: its independent check counts missing values as "
                "wildcards over the published rows, which runs on Polars rows only; use engine 'polars' (it streams "
                "the rows: only the distinct qid tuples are held)"
            ),
        )
        for engine in ("duckdb", "spark")
    ),
    Refusal(
        "local_suppression",
        "*",
        "any",
        lambda r: r.null == "suppress",
        lambda r: LOCAL_SUPPRESSION_NULLS,
    ),
    Refusal(
        "local_suppression",
        "*",
        "any",
        lambda r: bool(r.privacy),
        lambda r: (
            f"method 'local_suppression' takes no privacy models (got {[m.name for m in r.privacy]}): a published "
            "missing value matches any category, so its records belong to several classes and no class holds their "
            "sensitive values; leave out privacy, or use a method that generalizes"
        ),
    ),
    Refusal(
        "*",
        "*",
        "any",
        lambda r: r.method.name not in FULL_DOMAIN_METHODS and any(m.needs_population_table for m in r.privacy),
        lambda r: (
            f"{next(m for m in r.privacy if m.needs_population_table).describe()} compares classes with a population "
            "table, which needs a method that generalizes every population record the same way: "
            f"{list(FULL_DOMAIN_METHODS)}, got method {r.method.name!r}"
        ),
    ),
    Refusal(
        "mondrian",
        "*",
        "any",
        lambda r: r.options.mode == "relaxed" and any(m.sensitive_attribute is not None for m in r.privacy),
        lambda r: (
            "mondrian mode 'relaxed' splits a tuple's rows by row order, so the sensitive values of each side are not "
            "known from the class aggregates; use mode='strict' with privacy models that read a sensitive attribute "
            f"(got {[m.name for m in r.privacy if m.sensitive_attribute is not None]})"
        ),
    ),
    Refusal(
        "mondrian",
        "*",
        "planner",
        lambda r: bool(r.privacy),
        lambda r: (
            f"privacy models {[m.name for m in r.privacy]} are not supported by mondrian's engine rounds (beyond "
            "driver_tuples): the rounds split on class sizes alone, and a model is measured on the classes of tuples "
            "held on the driver; raise driver_tuples, or anonymize for k alone"
        ),
    ),
    Refusal(
        "mondrian",
        "*",
        "planner",
        lambda r: r.options.mode != "strict",
        lambda r: (
            f"mondrian mode {r.options.mode!r} is not supported by the engine rounds (beyond driver_tuples): its cuts "
            "deal a tuple's rows out by row order; use mode = 'strict' or raise driver_tuples"
        ),
    ),
    Refusal(
        "greedy",
        "spark",
        "planner",
        lambda r: bool(r.privacy),
        lambda r: (
            "greedy on Spark's blocks enforces k only; privacy models need the class aggregates on the driver "
            "(leave out privacy, or run with fewer classes than the driver limit)"
        ),
    ),
    Refusal(
        "greedy",
        "spark",
        "planner",
        lambda r: r.null == "suppress",
        lambda r: 'greedy on Spark\'s blocks takes null="error" only; fill the nulls before, or use the driver road',
    ),
)
"""Every refusal of a (method, engine, route, option or model) combination, in the order they are asked."""


@dataclass(frozen=True)
class Capability:
    """The table's answer for one request on one engine, before any data is read."""

    engine: str
    request: Request
    driver_tuples: int
    """The cap on the class aggregates brought to the driver (DuckDB, Spark)."""
    planner: str | None
    """Why the planner route is refused (None: the method has a planner here and it takes this request)."""
    records: bool
    """The method works on records: on DuckDB and Spark it always takes its planner."""

    def refuse_planner(self) -> None:
        """Called when the road takes the planner route (records, or beyond ``driver_tuples``)."""
        if self.planner is not None:
            raise InvalidParameterError(self.planner)

    def refuse_map(self, tmap: TupleMap) -> None:
        """An engine other than Polars joins a map on the original tuples: a tuple split over several classes (row
        order deciding which rows go where) or a row map cannot be joined."""
        if self.engine != "polars" and (tmap.by_row or tmap.split):
            raise InvalidParameterError(
                f"method {self.request.method.name!r} split the rows of one tuple over several classes (row order "
                f"decides which goes where), which only engine 'polars' publishes; use mondrian's mode = 'strict' or "
                "engine 'polars'"
            )


def _first(request: Request, engine: str, route: Route) -> str | None:
    for row in REFUSALS:
        if row.matches(request, engine, route):
            return row.why(request)
    return None


def refuse_driver_tuples(engine: str, driver_tuples: object) -> None:
    """``driver_tuples`` given with engine ``"polars"``, which holds the class aggregates in this process: refused
    (a job file's is a row of :data:`JOB_REFUSALS`).

    >>> refuse_driver_tuples("duckdb", 10)
    >>> refuse_driver_tuples("polars", 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: driver_tuples=10 caps the class aggregates engines 'duckdb' and ...
    """
    if engine != "polars" or driver_tuples is None:
        return
    raise InvalidParameterError(
        f"driver_tuples={driver_tuples!r} caps the class aggregates engines 'duckdb' and 'spark' bring to "
        "their driver; engine 'polars' holds them in this process: drop driver_tuples or choose engine "
        "'duckdb' or 'spark'"
    )


def consult(request: Request, engine: str, driver_tuples: int | None = None) -> Capability:
    """Consult the table for `request` on `engine` (before any data is read): refuse what no route runs, and
    return the decisions for the routes the data will choose between.

    `driver_tuples` (engines ``"duckdb"`` and ``"spark"``; default :data:`~polars_anon.engines.planners.DRIVER_TUPLES`)
    is refused on engine ``"polars"``, which holds the aggregates in this process.
    """
    if engine == "polars":
        refuse_driver_tuples(engine, driver_tuples)
        why = _first(request, engine, "any")
        if why is not None:
            raise InvalidParameterError(why)
        return Capability(engine, request, 0, None, request.method.records)
    limit = DRIVER_TUPLES if driver_tuples is None else check_driver_tuples(driver_tuples)
    why = _first(request, engine, "any")
    if why is not None:
        raise InvalidParameterError(why)
    planner = _first(request, engine, "planner")
    if (request.method.name, engine) not in PLANNERS:
        planner = too_many(request.method.name, limit, engine)
    capability = Capability(engine, request, limit, planner, request.method.records)
    if request.method.records:  # always the planner route: refused now
        capability.refuse_planner()
    return capability


def consult_explore(request: Request, engine: str, driver_tuples: int | None = None) -> Capability:
    """:func:`consult` for one configuration of an explore grid, with the two rows explore adds (before any data is
    read): a differential-privacy model (each configuration would be one more release of the same data, compared on
    the data itself) and a method on records on DuckDB or Spark (it runs inside the engine, one configuration at a
    time, where explore measures every configuration on the class aggregates)."""
    if _dp(request):
        raise InvalidParameterError(
            "explore: differential-privacy is refused: each configuration would be a release of the same data (their "
            "budgets add up) compared on the data itself; choose epsilon and delta up front and run pa.anonymize once"
        )
    capability = consult(request, engine, driver_tuples)
    if capability.records and engine != "polars":
        raise InvalidParameterError(
            f"explore: method {request.method.name!r} on engine {engine!r} works on the rows inside the "
            "engine, not on the class aggregates explore measures every configuration on; leave it out of "
            'methods, or explore the job with engine = "polars"'
        )
    return capability


InputFormat = Literal["parquet", "csv"]
CSV_KEYS = ("separator", "has_header", "columns", "null_values")
"""The job keys that say how a CSV input is read."""


@dataclass(frozen=True)
class JobRefusal:
    """One row of the job table: job key `key`, given with engine `engine` (``"*"``: any), an input of format
    `input` (``"*"``: any) and method `method`, is refused saying `why(value, input)` (the key's value, the input as
    the file names it)."""

    engine: str
    input: InputFormat | Literal["*"]
    key: str
    why: Callable[[Any, str], str]
    method: str = "*"
    """The job's method the row refuses the key with (``"*"``: any)."""
    when: Callable[[Mapping[str, Any]], bool] = lambda given: True
    """What else the job must give for the row to apply (default: nothing)."""

    def matches(self, engine: str, input_format: InputFormat, given: Mapping[str, Any]) -> bool:
        return (
            self.engine in ("*", engine)
            and self.input in ("*", input_format)
            and self.method in ("*", given.get("method", "fulldomain"))
            and given.get(self.key) is not None
            and self.when(given)
        )


def _job_dp(given: Mapping[str, Any]) -> bool:
    """Whether a job file's ``[[privacy]]`` tables ask for differential privacy."""
    tables = given.get("privacy")
    return isinstance(tables, list) and any(
        isinstance(t, Mapping) and t.get("model") == "differential-privacy" for t in tables
    )


def _built_from_data(qids: object) -> dict[str, str]:
    """The qids of a job's ``[qids]`` table whose hierarchy the job builds from the column's values, with the spec's
    kind (:attr:`~polars_anon.hierarchy_spec.HierarchySpec.needs_values`: every kind but a hierarchy file; a spec
    that does not parse is left to the ``[qids]`` checks)."""
    out: dict[str, str] = {}
    for name, table in qids.items() if isinstance(qids, Mapping) else ():
        spec = table.get("hierarchy") if isinstance(table, Mapping) else None
        try:
            parsed = None if spec is None else parse_spec(str(name), spec)
        except InvalidParameterError:
            continue
        if parsed is not None and parsed.needs_values:
            out[str(name)] = parsed.kind
    return out


JOB_REFUSALS: tuple[JobRefusal, ...] = (
    JobRefusal(
        "*",
        "*",
        "encode",
        lambda value, _: (
            f"job file: encode {[e for e in value if e in READS_ORIGINALS]} is computed from the original "
            "values of each class, which differential privacy does not cover (it covers the published table, and "
            "what is computed from it alone); drop them, or use "
            f"{[e for e in ENCODINGS if e not in READS_ORIGINALS]}"
        ),
        when=lambda given: _job_dp(given) and any(e in READS_ORIGINALS for e in given["encode"]),
    ),
    JobRefusal(
        "*",
        "*",
        "qids",
        lambda qids, _: (
            "job file: differential privacy needs each hierarchy fixed without looking at the data, but the job "
            "would build those of "
            + ", ".join(f"{q!r} ({kind})" for q, kind in _built_from_data(qids).items())
            + " from the columns' values (their leaves, labels and levels would depend on other people's rows); "
            'give each a hierarchy file (hierarchy = "name.csv") made without the data'
        ),
        when=lambda given: _job_dp(given) and bool(_built_from_data(given.get("qids"))),
    ),
    JobRefusal(
        "*",
        "*",
        "sdc",
        lambda sdc, _: (
            f"job file: [sdc] protect steps {[step.get('step') for step in sdc['protect']]} change the rows before "
            "the differentially private release, and the guarantee is made for the release of the rows as given "
            "(a swap or noise scaled by the column's spread moves values between people); drop protect, or protect "
            "another job's output"
        ),
        when=lambda given: _job_dp(given) and isinstance(given["sdc"], Mapping) and bool(given["sdc"].get("protect")),
    ),
    JobRefusal(
        "polars",
        "*",
        "driver_tuples",
        lambda value, _: (
            f'job file: driver_tuples = {value} caps the class aggregates engines "duckdb" and "spark" bring to their '
            'driver; drop it or set engine = "duckdb" or "spark"'
        ),
    ),
    *(
        JobRefusal(
            engine,
            "*",
            "encode",
            lambda value, _: (
                f'job file: encode {value} runs on engine "polars" only; drop encode or set engine = "polars"'
            ),
        )
        for engine in ("duckdb", "spark")
    ),
    JobRefusal(
        "*",
        "*",
        "encode",
        lambda value, _: (
            f"job file: encode {value} needs published hierarchy nodes, each over its row's original value, but method "
            '"mdav" publishes cluster means or values permuted between rows; drop encode or choose another method'
        ),
        method="mdav",
    ),
    *(
        JobRefusal(
            engine,
            "parquet",
            "schema",
            lambda value, source, engine=engine: (
                f"job file: schema casts {sorted(value)} on engine 'polars' and for a CSV input; engine {engine!r} "
                f"reads the Parquet input {source!r} with the file's own types: write the file with those types "
                "(pl.scan_parquet(path).cast({...}).sink_parquet(...)), or run on engine 'polars'"
            ),
            when=lambda given: bool(given["schema"]),
        )
        # mend32: the casts were silently skipped there (schema = { w = "Int64" } published the text '02190' on
        # DuckDB, 2190 on Polars); refused when the job file is read, before a Spark session starts (mend33)
        for engine in ("duckdb", "spark")
    ),
    *(
        JobRefusal(
            "*",
            "parquet",
            key,
            lambda _, source, key=key: (
                f"job file: key {key!r} is for CSV input, but input {source!r} is read as Parquet "
                f"(CSV files end in {', '.join(CSV_SUFFIXES)})"
            ),
        )
        for key in CSV_KEYS
    ),
)
"""Every refusal of a job key on an engine or an input format, in the order they are asked."""


def input_format(source: str | Path) -> InputFormat:
    """How an input is read: ``"csv"`` when its name ends in a CSV suffix, else ``"parquet"``.

    >>> input_format("adult.CSV"), input_format("register.parquet")
    ('csv', 'parquet')
    """
    return "csv" if is_csv(source) else "parquet"


def consult_job(engine: str, source: str, given: Mapping[str, Any]) -> None:
    """Consult the job table for a job file's keys `given` (a key is given when not None; encodings by their canonical
    names, None for none) on `engine`, with
    input `source` (as the file names it): the first row that matches is refused. Called once, when the job file is
    read (before any data is).

    >>> consult_job("polars", "t.csv", {"encode": ["fillparent"], "separator": ";"})
    >>> consult_job("spark", "t.parquet", {"encode": ["fillparent"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: job file: encode ['fillparent'] runs on engine "polars" only; ...
    """
    format_ = input_format(source)
    for row in JOB_REFUSALS:
        if row.matches(engine, format_, given):
            raise InvalidParameterError(row.why(given[row.key], source))


@dataclass(frozen=True)
class SdcMeasureRefusal:
    """One row of the SDC figures' table: the figures `spec` asks are refused on `engine` when `when(spec)`; asked by
    the job's ``[sdc]`` table, by every ``sdc_risk`` and by :func:`~polars_anon.sdc.measures.measure_sql` itself
    (:func:`consult_sdc_measures`)."""

    engine: str
    when: Callable[[Measures], bool]
    why: Callable[[Measures, str], str]


_SQL_ENGINES = ("duckdb", "spark")
SDC_MEASURE_REFUSALS: tuple[SdcMeasureRefusal, ...] = (
    *(
        SdcMeasureRefusal(
            engine,
            lambda m: m.missing == "wildcard",
            lambda m, e: (
                f"sdc missing = 'wildcard' on engine {e!r}: a missing key matching any category is counted per pair "
                "of missing-value shapes on the driver's patterns (Polars); use missing = 'category' or engine "
                "'polars'"
            ),
        )
        for engine in _SQL_ENGINES
    ),
    *(
        SdcMeasureRefusal(
            engine,
            lambda m: m.household is not None and m.method == "exact" and m.weight is not None,
            lambda m, e: (
                f"sdc household risk with method = 'exact' on engine {e!r}: the exact series is computed on the "
                "driver per (fk, Fk), not per record; use method = 'approx' or engine 'polars'"
            ),
        )
        for engine in _SQL_ENGINES
    ),
)
"""Every refusal of an SDC figure on an engine (the job's ``[sdc]`` table, ``polars_anon.duckdb.sdc_risk``,
``polars_anon.spark.sdc_risk``), asked before any data."""


def consult_sdc_measures(spec: Measures, engine: str) -> None:
    """Refuse (before any data is read) the figures `spec` asks that `engine` cannot compute.

    >>> consult_sdc_measures(Measures(keys=("a",), missing="wildcard"), "duckdb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: sdc missing = 'wildcard' on engine 'duckdb': ...
    """
    for row in SDC_MEASURE_REFUSALS:
        if row.engine in ("*", engine) and row.when(spec):
            raise InvalidParameterError(row.why(spec, engine))


@dataclass(frozen=True)
class SdcRefusal:
    """One row of the SDC table: the job's ``[sdc]`` table on `engine` is refused when `when(spec, request)`."""

    engine: str
    when: Callable[[SdcSpec, Request], bool]
    why: Callable[[SdcSpec, Request], str]


SDC_REFUSALS: tuple[SdcRefusal, ...] = (
    *(
        SdcRefusal(
            engine,
            lambda s, r: bool(s.steps),
            lambda s, r, e=engine: (
                f"sdc protect steps {[st.step for st in s.steps]} on engine {e!r}: PRAM, noise and rank swapping are "
                "seeded row-addressed Polars expressions (rank swapping sorts in memory); use engine 'polars'"
            ),
        )
        for engine in _SQL_ENGINES
    ),
    SdcRefusal(
        "*",
        lambda s, r: any(c in r.drop for c in s.measures.columns),
        lambda s, r: (
            f"sdc reads columns {[c for c in s.measures.columns if c in r.drop]} of the published file for its "
            "output figures, but they are dropped; keep them (insensitive) or leave them out of [sdc]"
        ),
    ),
    SdcRefusal(
        "*",
        lambda s, r: any(c in r.qids for c in (s.measures.weight, s.measures.household) if c is not None),
        lambda s, r: (
            "sdc weight and household columns are published as they are; they cannot be quasi-identifiers "
            f"(qids: {list(r.qids)})"
        ),
    ),
    SdcRefusal(
        "*",
        lambda s, r: any(c in r.drop for st in s.steps for c in st.columns),
        lambda s, r: (
            f"sdc protect steps change columns {[c for st in s.steps for c in st.columns if c in r.drop]}, which "
            "are dropped; leave them out of the steps"
        ),
    ),
)
"""Every refusal of an ``[sdc]`` table's protection steps and columns on an engine (its figures:
:data:`SDC_MEASURE_REFUSALS`), asked before any data."""


def consult_sdc(spec: SdcSpec, request: Request, engine: str) -> None:
    """Refuse (before any data is read) what the ``[sdc]`` table asks that `engine` cannot do."""
    consult_sdc_measures(spec.measures, engine)
    for row in SDC_REFUSALS:
        if row.engine in ("*", engine) and row.when(spec, request):
            raise InvalidParameterError(row.why(spec, request))


STORAGE: dict[str, tuple[str, ...] | None] = {"polars": ("file",), "duckdb": ("file",), "spark": None}
"""The URI schemes each engine reads and writes (None: any its file system knows, Spark's Hadoop configuration
says which). A plain path is every engine's; a ``file://`` URI on Polars and DuckDB is that local path."""


def storage(engine: str, path: str | Path, what: str = "input") -> Path | URI:
    """`path` as `engine` reads or writes it, refused in one line when the engine cannot (before any data is read).

    >>> storage("polars", "file:///data/voters.parquet")
    PosixPath('/data/voters.parquet')
    >>> storage("spark", "hdfs://nn:8020/data/voters.parquet")
    'hdfs://nn:8020/data/voters.parquet'
    >>> storage("duckdb", "hdfs://nn:8020/out/v.parquet", "output")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: output 'hdfs://nn:8020/out/v.parquet': engine 'duckdb' reads and \
writes local paths and file:// URIs, not hdfs://; use engine 'spark' (its Hadoop file system knows hdfs://, s3a://, \
...) or a local path
    """
    scheme = scheme_of(path)
    if scheme is None:
        return Path(path)
    allowed = STORAGE[engine]
    if allowed is None:
        return path if isinstance(path, URI) else URI(path)
    if scheme == "file" and "file" in allowed:
        return local_path(str(path))
    raise InvalidParameterError(
        f"{what} {str(path)!r}: engine {engine!r} reads and writes local paths and file:// URIs, not {scheme}://; "
        f"use engine 'spark' (its Hadoop file system knows hdfs://, s3a://, ...) or a local path"
    )


DtypeKey = type[pl.DataType] | str
"""How a refusal table names a dtype: its class, or a Datetime's class and unit (``'Datetime[ns]'``: :func:`_keys`)."""

FRAME_DTYPES: dict[tuple[str, DtypeKey], str] = {
    ("spark", pl.Time): "Spark has no time-of-day type; cast the column (to String) or use engine 'polars'",
}
FRAME_DTYPES.update(
    (
        (engine, dtype),
        f"engine {engine!r} takes a Polars frame through Arrow, which has no {dtype.__name__}"
        " (a 128-bit integer); cast the column (to Int64, Decimal or String) or use engine 'polars'",
    )
    for engine in ("duckdb", "spark")
    for dtype in (pl.Int128, pl.UInt128)
)
FRAME_DTYPES.update(
    (
        (engine, pl.Object),
        "it holds Python objects, which no engine publishes (Polars cannot write them, DuckDB would write their memory "
        "addresses); convert it (to String, say) or take it out of the frame",
    )
    for engine in ("polars", "duckdb", "spark")
)
"""The dtypes of a Polars frame an engine cannot be handed (engine, dtype -> why)."""


def consult_frame(engine: str, data: object) -> None:
    """Refuse a Polars frame whose column has a dtype `engine` cannot take (:data:`FRAME_DTYPES`), naming the column,
    before any row is read (a LazyFrame's schema only is resolved).

    >>> consult_frame("duckdb", pl.DataFrame({"id": pl.Series([1], dtype=pl.Int128)}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'id' has dtype Int128: engine 'duckdb' takes a Polars frame ...
    >>> consult_frame("polars", pl.DataFrame({"id": pl.Series([1], dtype=pl.Int128)}))
    """
    if not isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        return
    _refuse_dtypes(FRAME_DTYPES, engine, data.collect_schema() if isinstance(data, pl.LazyFrame) else data.schema)


def _refuse_dtypes(table: Mapping[tuple[str, DtypeKey], str], engine: str, schema: pl.Schema, where: str = "") -> None:
    """Refuse the first column of `schema` whose dtype, or a dtype nested in it (:func:`_nested`), `table` refuses on
    `engine`, naming it (`where`: its file).

    >>> nested = pl.Schema({"n": pl.Struct({"a": pl.List(pl.Null)})})
    >>> _refuse_dtypes(COLUMN_DTYPES, "spark", nested)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'n' has dtype Struct({'a': List(Null)}): Spark writes a column ...
    """
    for name, dtype in schema.items():
        keys = [key for d in _nested(dtype) for key in _keys(d)]
        why = next((w for key in keys if (w := table.get((engine, key))) is not None), None)
        if why is not None:
            raise InvalidParameterError(f"column {name!r}{where} has dtype {dtype}: {why}")


def _keys(dtype: pl.DataType) -> list[DtypeKey]:
    """What a refusal table may name `dtype` by: its class, and a Datetime's with its unit too (``'Datetime[ns]'``).

    >>> _keys(pl.Datetime("ns", "UTC")), _keys(pl.Int8())
    ([Datetime, 'Datetime[ns]'], [Int8])
    """
    unit = f"Datetime[{dtype.time_unit}]" if isinstance(dtype, pl.Datetime) else None
    return [type(dtype)] if unit is None else [type(dtype), unit]


def _nested(dtype: Any) -> list[pl.DataType]:
    """`dtype` and every dtype nested in it, depth first (:func:`~polars_anon._dtypes.map_nested`'s walk)."""
    seen: list[pl.DataType] = []

    def record(d: pl.DataType) -> pl.DataType:
        seen.append(d)
        return d

    map_nested(dtype, record)
    return seen


CASELESS_NAMES: dict[str, str] = {
    "duckdb": "DuckDB's column names are case-insensitive, so it cannot tell them apart",
    "spark": "Spark resolves column names case-insensitively (spark.sql.caseSensitive), so it cannot tell them apart",
}
"""The engines that cannot hold two columns whose names differ only in case (engine -> why)."""


def consult_names(engine: str, columns: Sequence[str], where: str = "") -> None:
    """Refuse two columns whose names are equal but for case (``fk`` and ``Fk``) on an engine whose names are
    case-insensitive (:data:`CASELESS_NAMES`), naming both, before any row is read; `where` names the file.

    >>> consult_names("duckdb", ["fk", "x", "Fk"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: columns 'fk' and 'Fk' differ only in case: DuckDB's column names are ...
    >>> consult_names("polars", ["fk", "x", "Fk"])
    """
    why = CASELESS_NAMES.get(engine)
    if why is None:
        return
    seen: dict[str, str] = {}
    for name in columns:
        first = seen.setdefault(name.casefold(), name)
        if first != name:
            raise InvalidParameterError(
                f"columns {first!r} and {name!r}{where} differ only in case: {why}; rename one or use engine 'polars'"
            )


SOURCE_DTYPES: dict[tuple[str, DtypeKey], str] = {
    ("spark", pl.Time): "Spark has no time-of-day type and cannot read the file; cast the column (to String) in the "
    "file or use engine 'polars'",
    ("spark", "Datetime[ns]"): "Spark reads no timestamp in nanoseconds and cannot read the file; cast the column "
    "(to Datetime('us'), Spark's unit) in the file or use engine 'polars'",
}
"""The dtypes of a Parquet file an engine cannot read itself (engine, dtype or ``'Datetime[<unit>]'`` -> why)."""


def consult_source_dtypes(engine: str, files: Sequence[str | Path | URI]) -> None:
    """Refuse a local Parquet file `engine` is handed to read itself (a path, a scan, a job's input: ``Engine.sources``)
    whose column has a dtype the engine cannot read (:data:`SOURCE_DTYPES`), naming the column and the file, from its
    footer, before any row is read (a folder or a pattern: its first file's, as Polars resolves its schema).

    >>> import tempfile, datetime
    >>> path = f"{tempfile.mkdtemp()}/t.parquet"
    >>> pl.DataFrame({"at": [datetime.time(9)]}).write_parquet(path)
    >>> consult_source_dtypes("spark", [path])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'at' of '...t.parquet' has dtype Time: Spark has no time-of-day ...
    >>> consult_source_dtypes("duckdb", [path])
    """
    if engine not in CASELESS_NAMES and not any(kind == engine for kind, _ in SOURCE_DTYPES):
        return
    for name, stored in _local_footers(files):
        consult_names(engine, list(stored), f" of {name!r}")
        _refuse_dtypes(SOURCE_DTYPES, engine, stored, f" of {name!r}")


def _local_footers(files: Sequence[str | Path | URI]) -> list[tuple[str, pl.Schema]]:
    """Each local Parquet source of `files` (a path, a pattern, a folder or a ``file://`` URI) with the schema it stores
    (:func:`~polars_anon.io.parquet_footer`), refusing one that names a column twice; a remote one's footer is not
    fetched for this, and one
    not readable here as Parquet is left to the engine, which says so itself."""
    found = []
    for name in files:
        scheme = scheme_of(str(name))
        if scheme not in (None, "file") or (scheme == "file" and urlsplit(str(name)).netloc not in ("", "localhost")):
            continue  # a remote source: its footer is not fetched for this
        try:
            found.append((str(name), parquet_footer(name if scheme is None else local_path(str(name)))))
        except pl.exceptions.DuplicateError as exc:  # Polars refuses it; DuckDB reads the copy as '<name>_1'
            named = re.search(r"column with name '(.*)' has more than one occurrence", str(exc))
            column = repr(named.group(1)) if named else "a column"
            raise InvalidParameterError(
                f"Parquet file {str(name)!r} names {column} more than once (DuckDB would read the second as another "
                "column, Polars and Spark refuse it); rewrite the file with one name per column"
            ) from exc
        except Exception:  # noqa: BLE001  (not Parquet, or not readable here)
            continue
    return found


COLUMN_DTYPES: dict[tuple[str, DtypeKey], str] = {
    (
        "spark",
        pl.Null,
    ): "Spark writes a column of nulls (or one nested in a list, struct or map) with a Parquet annotation "
    "(UNKNOWN) that Polars cannot read back; cast it (to String, say), drop it, or use engine 'polars' or 'duckdb'",
    ("duckdb", pl.Duration): (
        "DuckDB holds a Duration as an INTERVAL and writes it so, and Polars cannot read an INTERVAL back; cast the "
        "column (pl.col(...).dt.total_microseconds(), in DuckDB epoch_us(...)) or use engine 'polars'"
    ),
}
COLUMN_DTYPES.update(
    (
        ("duckdb", dtype),
        f"DuckDB's {sql} (a 128-bit integer) reaches Polars as a Decimal(38, 0), which {fate}, and is written to "
        "Parquet as a DOUBLE (digits lost); cast the column (to BIGINT, DECIMAL(38, 0) or VARCHAR) in the query",
    )
    for dtype, sql, fate in (
        (pl.Int128, "HUGEINT", "cannot hold its largest values"),
        (pl.UInt128, "UHUGEINT", "wraps"),
    )
)
"""The dtypes of an engine's table (its schema, as Polars types: a DuckDB INTERVAL is a Duration) that the engine
cannot publish readably (engine, dtype -> why); a quasi-identifier of such a type is refused by the request first."""


def consult_values(engine: str, data: object, columns: Sequence[str]) -> None:
    """On Spark, refuse a value Spark cannot hold as given in `columns` (those the job reads) of a Polars frame `data`,
    naming the column and its first such value: a nanosecond time (Datetime or Duration, also inside a List, Array or
    Struct) with a part below the microsecond (Spark holds times in microseconds and would cut it silently: distinct
    values published as one, a label that is not the original), a UInt64 above 2**63 - 1 (Spark's largest integer:
    its signed Int64 cannot hold it). Whole microseconds are kept exactly; a column the job drops is not read, so not
    refused. (A Parquet file in nanoseconds is refused by :data:`SOURCE_DTYPES`.)

    >>> at = pl.Series([0, 1_000, 1_000_001], dtype=pl.Int64).cast(pl.Datetime("ns"))
    >>> consult_values("spark", pl.DataFrame({"at": at, "x": at}), ["x"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'x' holds 1970-01-01 00:00:00.001000001, a time below the \
microsecond: Spark holds times in microseconds and would publish it cut...
    >>> consult_values("spark", pl.DataFrame({"at": at, "x": [1, 2, 3]}), ["x"])  # 'at' is not read
    >>> big = pl.Series([1, 2**64 - 1], dtype=pl.UInt64)
    >>> consult_values("spark", pl.DataFrame({"id": big, "x": [1, 2]}), ["x"])  # 'id' is not read
    >>> consult_values("spark", pl.DataFrame({"id": big}), ["id"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'id' holds the UInt64 value 18446744073709551615, above Spark's...
    """
    if engine != "spark" or not isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        return
    schema = data.collect_schema()
    _refuse_cut_times(data, [c for c in columns if c in schema and _has_nanoseconds(schema[c])])
    _refuse_large_unsigned(data, schema, [c for c in columns if c in schema and pl.UInt64 in _nested(schema[c])])


def _refuse_large_unsigned(data: pl.DataFrame | pl.LazyFrame, schema: pl.Schema, columns: Sequence[str]) -> None:
    """:func:`consult_values` for the `columns` that are or nest (in a List, Array or Struct) a UInt64: the first
    holding a value above 2**63 - 1 (a nested one was sent as Spark's Int64 unchecked, or refused by Spark's Arrow
    conversion as a raw error)."""
    if not columns:
        return
    # materializes: one row, each column's largest UInt64 value (a nested column's values gathered first)
    top = data.lazy().select(_largest_unsigned(pl.col(c), schema[c]).alias(c) for c in columns).collect()
    for name in columns:
        if (top[name][0] or 0) > 2**63 - 1:
            raise InvalidParameterError(
                f"column {name!r} holds the UInt64 value {top[name][0]}, above Spark's largest integer (2**63 - 1, "
                "its Int64): Spark cannot hold it; drop the column, cast it (to String, say), or use engine 'polars' "
                "or 'duckdb'"
            )


def _largest_unsigned(value: pl.Expr, dtype: pl.DataType | DataTypeClass) -> pl.Expr:
    """The largest UInt64 in `value` (of type `dtype`): itself, its lists' or arrays' items, its structs' fields (null
    where there is none)."""
    if isinstance(dtype, pl.List):
        return _largest_unsigned(value.explode(), dtype.inner)
    if isinstance(dtype, pl.Array):
        return _largest_unsigned(value.explode(), dtype.inner)
    if isinstance(dtype, pl.Struct):
        parts = [_largest_unsigned(value.struct.field(f.name), f.dtype) for f in dtype.fields]
        return pl.max_horizontal(parts) if parts else pl.lit(None, pl.UInt64)
    return value.max() if dtype == pl.UInt64 else pl.lit(None, pl.UInt64)


def _refuse_cut_times(data: pl.DataFrame | pl.LazyFrame, timed: Sequence[str]) -> None:
    """:func:`consult_values` for the nanosecond-time columns `timed`: the first value below the microsecond."""
    if not timed:
        return
    frame = data.select(timed).lazy().collect()  # materializes: the columns holding nanosecond times (few, rare)
    for name in timed:
        for values in _times_in(frame[name]):
            cut = values.filter(values.to_physical() % 1_000 != 0)
            if cut.len():
                way = f"pl.col({name!r}).dt.cast_time_unit('us')" if values.name == name else "its times cast to 'us'"
                raise InvalidParameterError(
                    f"column {name!r} holds {cut.cast(pl.String)[0]}, a time below the microsecond: Spark holds "
                    "times in microseconds and would publish it cut (values that differ below it as one); round the "
                    f"column to microseconds ({way}) or use engine 'polars' or 'duckdb'"
                )


def _has_nanoseconds(dtype: pl.DataType | DataTypeClass) -> bool:
    """Whether `dtype` is, or nests (:func:`_nested`), a Datetime or Duration in nanoseconds."""
    return any(isinstance(d, (pl.Datetime, pl.Duration)) and d.time_unit == "ns" for d in _nested(dtype))


def _times_in(series: pl.Series) -> Iterator[pl.Series]:
    """The nanosecond time Series inside `series` (itself, its lists' values, its structs' fields), nulls left in;
    a nested one named by its path (``seen[].at``)."""
    dtype = series.dtype
    if isinstance(dtype, (pl.Datetime, pl.Duration)) and dtype.time_unit == "ns":
        yield series
    elif isinstance(dtype, pl.List):
        yield from _times_in(series.list.explode().alias(f"{series.name}[]"))
    elif isinstance(dtype, pl.Array):
        yield from _times_in(series.arr.explode().alias(f"{series.name}[]"))
    elif isinstance(dtype, pl.Struct):
        for field in series.struct.unnest().iter_columns():
            yield from _times_in(field.alias(f"{series.name}.{field.name}"))


def consult_columns(engine: str, schema: pl.Schema) -> None:
    """Refuse a published column of the engine's table (`schema`: those published) whose dtype `engine` cannot
    publish readably (:data:`COLUMN_DTYPES`), naming it, before any row is read; a dropped column is never written.

    >>> consult_columns("duckdb", pl.Schema({"d": pl.Duration("us")}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: column 'd' has dtype Duration(time_unit='us'): DuckDB holds a Duration ...
    """
    _refuse_dtypes(COLUMN_DTYPES, engine, schema)


SESSION_ZONES: dict[str, str] = {
    "duckdb": (
        "DuckDB holds a timestamp with time zone as an instant and hands it back in its session's zone {session!r}, "
        "so the qid's labels would be in that zone, not in the column's own as on engine 'polars'"
    ),
    "spark": (
        "Spark holds a timestamp as an instant and hands it back in its session's zone {session!r} "
        "(spark.sql.session.timeZone), so the qid's labels would be in that zone, not in the column's own as on "
        "engine 'polars'"
    ),
}
"""The engines whose session relabels a time-zone-aware Datetime in its own zone (engine -> why)."""
_SET_ZONE = {
    "duckdb": "con.execute(\"SET TimeZone = '...'\")",
    "spark": "spark.conf.set('spark.sql.session.timeZone', ...)",
}


def _same_zone(zone: str, other: str | None) -> bool:
    """Whether two time zones give every instant the same UTC offset (so the same labels): the same name, or aliases
    such as 'UTC' and 'Etc/UTC' (offsets compared on the 1st and 15th of every month, 1900-2100)."""
    if other is None or zone == other:
        return zone == other
    try:
        a, b = ZoneInfo(zone), ZoneInfo(other)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    instants = [datetime(y, m, d, tzinfo=UTC) for y in range(1900, 2101) for m in range(1, 13) for d in (1, 15)]
    return all(t.astimezone(a).utcoffset() == t.astimezone(b).utcoffset() for t in instants)


def consult_zones(engine: str, session_zone: str | None, data: object, qids: Sequence[str]) -> None:
    """Refuse a quasi-identifier of a Polars frame that is a Datetime in a time zone other than `engine`'s session
    zone (:data:`SESSION_ZONES`), naming the column, before any row is read.

    >>> zoned = pl.LazyFrame({"t": pl.Series([0], dtype=pl.Datetime("us", "Europe/Paris"))})
    >>> consult_zones("duckdb", "UTC", zoned, ["t"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qid 't' is a Datetime in time zone 'Europe/Paris': DuckDB holds ...
    >>> consult_zones("duckdb", "Europe/Paris", zoned, ["t"]), consult_zones("polars", None, zoned, ["t"])
    (None, None)
    """
    why = SESSION_ZONES.get(engine)
    if why is None or not isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        return
    schema = data.collect_schema() if isinstance(data, pl.LazyFrame) else data.schema
    for q in qids:
        dtype = schema.get(q)
        zone = getattr(dtype, "time_zone", None)
        if zone is not None and not _same_zone(zone, session_zone):
            raise InvalidParameterError(
                f"qid {q!r} is a Datetime in time zone {zone!r}: {why.format(session=session_zone)}; convert it "
                f"(pl.col({q!r}).dt.convert_time_zone({session_zone!r})), set the session's zone ({_SET_ZONE[engine]})"
                f" to {zone!r} or use engine 'polars'"
            )


def consult_input(engine: str, data: object, reads: Sequence[str]) -> None:
    """Before `engine` reads `data` (the road's first look): what it cannot take from a Polars frame (its dtypes,
    names equal but for case), or from the Parquet files it reads itself (`reads`, ``Engine.sources``: their
    footers)."""
    if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        consult_frame(engine, data)
        consult_names(engine, data.collect_schema().names())
    else:
        consult_source_dtypes(engine, reads)


def consult_table(
    engine: str, session_zone: str | None, data: object, reads: Sequence[str], schema: pl.Schema, request: Request
) -> None:
    """Once the request is checked (`schema`: the engine's table's): the published columns `engine` cannot write
    readably, and the zoned qids it would label in its session's zone, judged by a Polars frame's schema or, for the
    engine's own table, by the zones its files (`reads`) store."""
    consult_columns(engine, pl.Schema({c: schema[c] for c in request.published_columns if c in schema}))
    consult_values(engine, data, request.published_columns)
    if isinstance(data, (pl.DataFrame, pl.LazyFrame)):
        consult_zones(engine, session_zone, data, request.qids)
    else:
        consult_source_zones(engine, session_zone, reads, schema, request.qids)


def consult_source_zones(
    engine: str, session_zone: str | None, files: Sequence[str], schema: pl.Schema, qids: Sequence[str]
) -> None:
    """:func:`consult_zones` for a table handed to `engine` as its own (a DuckDB relation or table, a Spark DataFrame,
    a Parquet path): DuckDB and Spark keep a timestamp as an instant, without its zone, so each qid the engine holds
    as a timestamp with time zone (by `schema`, the engine's own types: one cast to a naive timestamp is not judged)
    is judged in the zone the Parquet files it reads (`files`: ``Engine.sources``, every one) store, the one Polars
    labels it in: their column of its name, or, where none is zoned (renamed or computed in the query), every zone
    their columns hold. Nothing is judged when no local Parquet file holds a zoned column (a table built in memory
    keeps no zone: it is labelled in the session's).

    >>> import tempfile
    >>> path = f"{tempfile.mkdtemp()}/t.parquet"
    >>> pl.DataFrame({"t": pl.Series([0], dtype=pl.Datetime("us", "Europe/Paris"))}).write_parquet(path)
    >>> held = pl.Schema({"t": pl.Datetime("us", "UTC")})  # the engine's type: an instant
    >>> consult_source_zones("spark", "UTC", [path], held, ["t"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: qid 't' is a Datetime in time zone 'Europe/Paris': Spark holds ...
    """
    # the engine's own type: a qid it holds without zone (a cast to TIMESTAMP) is labelled as it is written
    zoned = [q for q in qids if getattr(schema.get(q), "time_zone", None) is not None]
    if engine not in SESSION_ZONES or not zoned:
        return
    footers = [footer for _, footer in _local_footers(files)]  # every file read (a folder or a pattern: its first's)
    for q in zoned:
        named = [footer[q] for footer in footers if getattr(footer.get(q), "time_zone", None) is not None]
        if not named:  # renamed or computed in the query: the zones of every zoned column its files hold
            named = [dtype for footer in footers for dtype in footer.values() if getattr(dtype, "time_zone", None)]
        for dtype in dict.fromkeys(named):
            consult_zones(engine, session_zone, pl.LazyFrame(schema={q: dtype}), [q])
