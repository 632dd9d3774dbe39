"""Anonymization algorithms behind one interface.

An algorithm is a function ``run(task: Task) -> Plan``. It receives the validated
input (quasi-identifiers already cast to String) and its class aggregates (one row
per distinct quasi-identifier tuple with its ``size``: the materialized input of
the NumPy loops), and returns the published LazyFrame plus what it wants reported.
Register a new one in :data:`METHODS`; ``pa.anonymize(method=...)``, the namespace
and the CLI dispatch through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_anon.classes import tuple_key
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy

__all__ = ["METHODS", "Plan", "Task", "recode", "refuse_missing_hierarchies", "register_method"]


@dataclass(frozen=True)
class Task:
    """What an algorithm is asked to do."""

    lf: pl.LazyFrame
    """Validated input; quasi-identifiers are String, nulls already mapped if allowed."""
    aggregates: pl.DataFrame
    """Distinct quasi-identifier tuples (String) and their ``size`` (UInt32), sorted."""
    qids: Sequence[str]
    hierarchies: Mapping[str, Hierarchy]
    k: int
    seed: int = 0
    metric: str | None = None
    sensitive: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.aggregates["size"].sum())


@dataclass
class Plan:
    """What an algorithm returns: the published table and its own facts for the report."""

    lf: pl.LazyFrame
    suppressed: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    guarantee: str = "k-anonymity"
    """What the independent check before returning/writing verifies. "k-anonymity"
    (the default): the published table grouped by its quasi-identifiers has classes
    of at least k rows. Any other value (mdav's "probabilistic") must come with
    `verify`, which then replaces that group-by check."""
    verify: Callable[[pl.LazyFrame], dict[str, Any]] | None = None
    """The method's own independent check of its guarantee: takes the published
    LazyFrame (as collected or as re-read from the written file), raises
    NotKAnonymousError when it fails, returns facts for the report."""
    mapping: pl.DataFrame | None = None
    """The tuple map of a local-recoding method, for the report's metrics: one row per
    (original qid tuple, published qid tuple) with the original qids (String),
    ``__anon_out_<qid>`` (published label) and ``size`` (rows), optionally a Boolean
    ``__anon_suppressed``; class aggregates, never rows. The rows of one original
    tuple may go to several published tuples (Mondrian's relaxed cuts). Full-domain
    methods report ``levels`` in `details` instead."""

    def __post_init__(self) -> None:
        if self.guarantee != "k-anonymity" and self.verify is None:
            raise ValueError(f"a Plan with guarantee {self.guarantee!r} needs its own verify function")


def recode(lf: pl.LazyFrame, mapping: pl.DataFrame, qids: Sequence[str], *, suppressed: str | None = None) -> pl.LazyFrame:
    """Publish rows through a tuple map: original quasi-identifier tuple -> published tuple.

    `mapping` has the original quasi-identifiers (String) and, for each, a column
    ``__anon_out_<qid>``. When `suppressed` names a Boolean column of `mapping`,
    rows whose tuple is marked are removed (the others keep their order).
    """
    qids = list(qids)
    out_cols = [f"__anon_out_{q}" for q in qids]
    extra = [suppressed] if suppressed else []
    key = tuple_key(mapping, qids)
    if key is None:  # key space too large for one Int64: join on the String tuple
        joined = lf.join(pl.LazyFrame(mapping.select(*qids, *out_cols, *extra)), on=qids, how="left", maintain_order="left")
    else:  # one Int64 key per row, from Enum codes: a much cheaper join than four String keys
        table = mapping.select(key.alias("__anon_key"), *out_cols, *extra).lazy()
        joined = lf.with_columns(key.alias("__anon_key")).join(table, on="__anon_key", how="left", maintain_order="left")
        joined = joined.drop("__anon_key")
    if suppressed:
        joined = joined.filter(~pl.col(suppressed)).drop(suppressed)
    names = lf.collect_schema().names()
    return joined.with_columns(pl.col(o).alias(q) for q, o in zip(qids, out_cols)).select(names)


METHODS: dict[str, Callable[[Task], Plan]] = {}


def refuse_missing_hierarchies(method: str, missing: Sequence[str], what: str, hint: str) -> None:
    """Raise unless `method` publishes quasi-identifiers without a hierarchy (or none is missing).

    `what` says how the qids lack one; `hint` how to give one. Methods opt in with
    ``run.accepts_missing_hierarchies = True`` (mondrian, mdav).
    """
    if not missing or method not in METHODS or getattr(METHODS[method], "accepts_missing_hierarchies", False):
        return  # (an unknown method is refused by its own check)
    takers = sorted(m for m, f in METHODS.items() if getattr(f, "accepts_missing_hierarchies", False))
    raise InvalidParameterError(
        f"{what}, and method {method!r} needs a hierarchy for every qid; {hint}, or use a method that publishes "
        f"without one: {takers} (e.g. method='mondrian')"
    )


def register_method(name: str) -> Callable[[Callable[[Task], Plan]], Callable[[Task], Plan]]:
    """Decorator adding an algorithm to :data:`METHODS`."""

    def add(fn: Callable[[Task], Plan]) -> Callable[[Task], Plan]:
        METHODS[name] = fn
        return fn

    return add


from polars_anon.algorithms import (
    datafly,  # noqa: F401  (registers itself)
    fulldomain,  # noqa: F401  (registers itself)
    greedy,  # noqa: F401  (registers itself)
    mdav,  # noqa: F401  (registers itself)
    mondrian,  # noqa: F401  (registers itself)
)
