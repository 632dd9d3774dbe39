"""When the class aggregates outgrow the driver: the method runs as engine queries, or is refused.

Every engine hands the driver one row per distinct quasi-identifier tuple (the class
aggregates, :mod:`polars_anon.engines.pipeline`). ``driver_tuples`` caps that: the road's
own group-by is collected with a ``LIMIT`` of ``driver_tuples + 1`` rows, so below the
cap the same result is the road's aggregates (kept by :class:`~polars_anon.engines.GroupBys`,
no second pass) and above it nothing big reaches the driver. Above the cap the method's
:data:`Planner` takes over, if it has one: it computes the plan with engine queries and
returns the published engine table and a complete :class:`~polars_anon.anonymize.Planned`
(report included), which :class:`~polars_anon.engines.pipeline.EngineAnonymized` verifies and
writes as usual (fail closed). A method without a planner is refused, naming the cap.
A method that works on records (MDAV) runs through its planner whatever the size, where it has
one: the records never come to the driver.

Planners, by (method, engine):

>>> DRIVER_TUPLES
5000000
>>> sorted(PLANNERS)
[('greedy', 'spark'), ('mdav', 'spark'), ('mondrian', 'duckdb'), ('mondrian', 'spark')]
>>> check_driver_tuples(0)
Traceback (most recent call last):
...
polars_anon.errors.InvalidParameterError: driver_tuples must be an integer >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_anon._validate import is_integer
from polars_anon.engines import Engine
from polars_anon.errors import InvalidParameterError

if TYPE_CHECKING:
    from polars_anon.anonymize import Planned
    from polars_anon.request import Request

__all__ = ["DRIVER_TUPLES", "PLANNERS", "Planner", "check_driver_tuples", "route", "too_many"]

DRIVER_TUPLES = 5_000_000
"""Default cap on the class aggregates brought to the driver (distinct qid tuples): about 1 GB of driver
memory for a few String qids, with the method's working arrays."""

Planner = Callable[[Engine, Any, "Request", pl.Schema, float], "tuple[Any, Planned]"]
"""``planner(engine, table, request, schema, start) -> (published engine table, Planned with a complete report)``:
a method run as engine queries, for aggregates beyond ``driver_tuples``."""

PLANNERS: dict[tuple[str, str], Planner] = {}
"""(method, engine) -> its planner (open: each scaling method registers its own)."""


def check_driver_tuples(value: object, name: str = "driver_tuples") -> int:
    """`value` when it is an integer >= 1, else an error naming `name`.

    >>> check_driver_tuples(1000)
    1000
    """
    if not is_integer(value) or value < 1:  # type: ignore[operator]
        raise InvalidParameterError(f"{name} must be an integer >= 1, got {value!r}")
    return value  # type: ignore[return-value]


def too_many(method: str, driver_tuples: int, engine: str) -> str:
    """The refusal of a method without a planner on `engine` when the aggregates exceed `driver_tuples`.

    >>> too_many("fulldomain", 5_000_000, "duckdb")  # doctest: +NORMALIZE_WHITESPACE
    "the class aggregates have more than 5,000,000 distinct qid tuples (driver_tuples); method 'fulldomain' runs on the
    driver: raise driver_tuples if the driver can hold them, or use method 'mondrian'"
    >>> too_many("datafly", 10, "spark").rsplit(": ", 1)[1]
    "raise driver_tuples if the driver can hold them, or use method 'greedy' or 'mondrian'"
    """
    scaling = " or ".join(repr(m) for m, e in sorted(PLANNERS) if e == engine and m != "mdav")
    return (
        f"the class aggregates have more than {driver_tuples:,} distinct qid tuples (driver_tuples); method {method!r} runs on "
        f"the driver: raise driver_tuples if the driver can hold them, or use method {scaling}"
    )


def route(engine: Engine, table: Any, request: Request, driver_tuples: int) -> Planner | None:
    """The method's planner on `engine` for a method on records, else None when the qid group-by has at most
    `driver_tuples` rows (the road runs on the driver; the group-by is kept for it), else the method's planner;
    a method without one is refused."""
    key = (request.method.name, engine.name)
    if request.method.records:
        return PLANNERS[key]  # refuse_unsupported refused the engines without one
    counts = engine.counts(table, list(request.qids), limit=driver_tuples)
    if counts.height <= driver_tuples:
        return None
    planner = PLANNERS.get(key)
    if planner is None:
        raise InvalidParameterError(too_many(request.method.name, driver_tuples, engine.name))
    return planner


def _mondrian(engine: Engine, table: Any, request: Request, schema: pl.Schema, start: float) -> tuple[Any, Planned]:
    from polars_anon.engines.mondrian import plan_mondrian

    return plan_mondrian(engine, table, request, schema, start)


def _greedy(engine: Engine, table: Any, request: Request, schema: pl.Schema, start: float) -> tuple[Any, Planned]:
    from polars_anon.engines.spark_greedy import greedy_on_spark

    return greedy_on_spark(engine, table, request, schema, start)


def _mdav(engine: Engine, table: Any, request: Request, schema: pl.Schema, start: float) -> tuple[Any, Planned]:
    from polars_anon.engines.spark_mdav import mdav_on_spark

    return mdav_on_spark(engine, table, request, schema, start)


PLANNERS |= {
    ("mondrian", "duckdb"): _mondrian,
    ("mondrian", "spark"): _mondrian,
    ("greedy", "spark"): _greedy,
    ("mdav", "spark"): _mdav,
}
