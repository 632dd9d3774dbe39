"""Planners: methods run inside an engine, beyond what the driver holds.

Every engine hands the driver one row per distinct quasi-identifier tuple (the class
aggregates). ``driver_tuples`` caps that: the engine's own group-by is collected with a
``LIMIT`` of ``driver_tuples + 1`` rows, so below the cap the same result is the road's
aggregates (kept by :class:`~polars_anon.engines.GroupBys`, no second pass) and above it
nothing big reaches the driver. Above the cap the method's :data:`Planner` takes over, if
it has one (the capability table, :mod:`polars_anon.pipeline.capabilities`, says which and
refuses the rest before any data is read). A method that works on records (MDAV) runs
through its planner whatever the size: the records never come to the driver.

A planner returns an :class:`~polars_anon.pipeline.state.EnginePlan`: the method's plan (a
tuple map meeting the map's contract, checked by the road as every method's) and the
engine's own map. It never checks data (it reads the marginals the road checks with
:func:`polars_anon.request.check_marginals`), never builds a report, never publishes.

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
from typing import Any, Protocol

import polars as pl

from polars_anon._validate import is_integer
from polars_anon.engines import SQLEngine
from polars_anon.errors import InvalidParameterError
from polars_anon.pipeline.state import EnginePlan
from polars_anon.request import Request

__all__ = [
    "DRIVER_TUPLES",
    "PLANNERS",
    "PYTHON_TASKS",
    "Planner",
    "PlannerFactory",
    "check_driver_tuples",
    "too_many",
]

DRIVER_TUPLES = 5_000_000
"""Default cap on the class aggregates brought to the driver (distinct qid tuples): about 0.5 KB of driver memory
each with the method's working arrays, some 2.5-3 GB at the cap (``benchmarks/results/driver.md``: 4.5 million
tuples of the demo register's four qids peaked at 2.7 GB)."""


class Planner(Protocol):
    """A method run as engine queries or tasks, in two steps the road calls in order."""

    def marginals(self) -> dict[str, pl.DataFrame]:
        """Per qid, its distinct values (String labels as Polars spells them, null kept) and their ``size``:
        what the road checks (:func:`polars_anon.request.check_marginals`) before :meth:`plan`."""
        ...

    def plan(self) -> EnginePlan:
        """The method's plan (its map meets the map's contract) and the engine's own map."""
        ...


PlannerFactory = Callable[[SQLEngine, Any, Request], Planner]
"""``PLANNERS[(method, engine)](engine, table, request)``: the planner of one run."""


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
        f"the class aggregates have more than {driver_tuples:,} distinct qid tuples (driver_tuples); method {method!r} "
        f"runs on the driver: raise driver_tuples if the driver can hold them, or use method {scaling}"
    )


def _mondrian(engine: SQLEngine, table: Any, request: Request) -> Planner:
    from polars_anon.engines.planners.mondrian import plan_mondrian

    return plan_mondrian(engine, table, request)


def _greedy(engine: SQLEngine, table: Any, request: Request) -> Planner:
    from polars_anon.engines.planners.spark_greedy import greedy_on_spark

    return greedy_on_spark(engine, table, request)


def _mdav(engine: SQLEngine, table: Any, request: Request) -> Planner:
    from polars_anon.engines.planners.spark_mdav import mdav_on_spark

    return mdav_on_spark(engine, table, request)


PLANNERS: dict[tuple[str, str], PlannerFactory] = {
    ("mondrian", "duckdb"): _mondrian,
    ("mondrian", "spark"): _mondrian,
    ("greedy", "spark"): _greedy,
    ("mdav", "spark"): _mdav,
}
"""(method, engine) -> its planner (open: each scaling method registers its own)."""

PYTHON_TASKS = frozenset({("greedy", "spark"), ("mdav", "spark")})
"""(method, engine) whose planner runs polars_anon's own code in engine tasks (Spark's ``applyInArrow``): the
executors must import the package, checked before any data is read (``SparkEngine.check_executors``)."""
