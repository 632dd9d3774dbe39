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

>>> from polars_anon.request import check_request
>>> import polars as pl
>>> req = check_request(pl.Schema({"x": pl.String}), hierarchies={}, qids=["x"], k=2, method="mdav")
>>> consult(req, "duckdb")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
polars_anon.errors.InvalidParameterError: method 'mdav' works on row records, which engine 'duckdb' does not hand ...
>>> consult(req, "polars").planner is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from polars_anon.engines.planners import DRIVER_TUPLES, PLANNERS, check_driver_tuples, too_many
from polars_anon.errors import InvalidParameterError
from polars_anon.locations import URI, local_path, scheme_of
from polars_anon.request import Request
from polars_anon.tuplemap import TupleMap

__all__ = ["REFUSALS", "STORAGE", "Capability", "Refusal", "consult", "refuse_driver_tuples", "storage"]

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


REFUSALS: tuple[Refusal, ...] = (
    *(
        Refusal(
            "*",
            engine,
            "any",
            _no_planner(engine),
            lambda r, e=engine: (
                f"method {r.method.name!r} works on row records, which engine {e!r} does not hand to the driver; use "
                "engine 'polars' or a method that works on class aggregates (fulldomain, greedy, mondrian, datafly)"
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
    Refusal(
        "mondrian",
        "*",
        "planner",
        lambda r: bool(r.privacy),
        lambda r: (
            f"privacy models {[m.name for m in r.privacy]} are not supported by mondrian's engine rounds (beyond "
            "driver_tuples): they read every tuple's sensitive values on the driver; raise driver_tuples, or anonymize "
            "for k alone"
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


def refuse_driver_tuples(engine: str, driver_tuples: object, *, job: bool = False) -> None:
    """``driver_tuples`` given with engine ``"polars"``, which holds the class aggregates in this process: refused
    (in a job file's words when `job`).

    >>> refuse_driver_tuples("duckdb", 10)
    >>> refuse_driver_tuples("polars", 10, job=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: job file: driver_tuples = 10 caps the class aggregates engines ...
    """
    if engine != "polars" or driver_tuples is None:
        return
    if job:
        raise InvalidParameterError(
            f'job file: driver_tuples = {driver_tuples} caps the class aggregates engines "duckdb" and "spark" bring '
            'to their driver; drop it or set engine = "duckdb" or "spark"'
        )
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
