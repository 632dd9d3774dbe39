"""Anonymization algorithms behind one interface.

An algorithm is a function ``run(task: Task, options) -> Plan``. It receives the
class aggregates (one row per distinct quasi-identifier tuple with its ``size``)
and its parsed options, and returns a :class:`Plan`: a
:class:`~polars_anon.tuplemap.TupleMap` (original tuple -> published tuple) plus
its own facts for the report. Nothing here touches the row-level LazyFrame: the
pipeline (:mod:`polars_anon.pipeline.road`) computes the aggregates, publishes the
map (:func:`polars_anon.publish.publish`) and verifies the result; so the same
algorithm serves every engine. A method that works on records (MDAV) declares
``records=True`` and receives the quasi-identifier columns of every row.

A method is declared once, with :func:`register_method`: its name, its options
dataclass (unknown keys and wrong types are refused by
:func:`polars_anon.options.parse_options`), the metrics it can optimize (a metric
given to a method that cannot use it is refused), whether every quasi-identifier
needs a hierarchy, and whether it needs records. ``pa.anonymize``, the namespace,
the job file and the CLI all dispatch through :data:`METHODS`. A method may also
declare ``check(options, metric, qids)``, its own refusals of option values that
depend on the metric or the quasi-identifiers (run before any data is read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from polars_anon._passes import TupleCodes
from polars_anon.hierarchy import Hierarchy
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import TupleMap

__all__ = ["METHODS", "Method", "Plan", "Task", "register_method"]


@dataclass(frozen=True)
class Task:
    """What an algorithm is asked to do."""

    aggregates: pl.DataFrame
    """Distinct quasi-identifier tuples (String labels, nulls already mapped when allowed)
    and their ``size`` (UInt32), sorted by the tuple."""
    qids: Sequence[str]
    hierarchies: Mapping[str, Hierarchy]
    k: int
    seed: int = 0
    metric: str | None = None
    sensitive: str | None = None
    records: pl.DataFrame | None = None
    """Only for methods declared with ``records=True``: the quasi-identifiers (String) and,
    when there is one, the sensitive column of every input row, in row order."""
    sensitive_counts: Mapping[str, pl.LazyFrame] = field(default_factory=dict)
    """Per sensitive attribute a privacy model reads: rows per (qid tuple, value), columns
    qids, the attribute and ``count`` (the relational form of the models' input; lazy: the
    constraints already hold it as counts per aggregate row)."""
    constraints: Constraints = None  # type: ignore[assignment]
    """k and every privacy model, to ask of any class or partition (always present:
    k-anonymity alone when no model is asked; see :mod:`polars_anon.privacy.constraints`)."""
    codes: TupleCodes | None = None
    """The qids of `aggregates` as integer codes, row for row, when the engine made them and the method declares
    ``codes=True`` (the road's; None otherwise): :meth:`leaf_ids` reads them."""
    orders: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """The order each Enum qid declares (its categories as labels; :attr:`~polars_anon.request.Request.orders`)."""

    def __post_init__(self) -> None:
        if self.constraints is None:
            object.__setattr__(self, "constraints", Constraints(self.aggregates["size"].to_numpy(), self.k))

    @property
    def n_rows(self) -> int:
        return int(self.aggregates["size"].sum())

    def leaf_ids(self, qid: str) -> np.ndarray:
        """The node id (Int64) of each aggregate row's value of `qid` in its hierarchy: ``hierarchies[qid].ids_of``
        of the column, from the codes' few distinct labels when there are codes.

        >>> from polars_anon import Hierarchy
        >>> h = Hierarchy.suppression(["F", "M"])
        >>> t = Task(pl.DataFrame({"g": ["M", "F"], "size": [2, 2]}), ["g"], {"g": h}, 2)
        >>> t.leaf_ids("g").tolist()
        [2, 1]
        """
        index, ids = self.leaf_index(qid)
        return index if ids is None else ids[index]

    def leaf_index(self, qid: str) -> tuple[np.ndarray, np.ndarray | None]:
        """Each aggregate row's leaf of `qid` as ``(index, ids)``: its node id is ``ids[index]`` (:meth:`leaf_ids`).
        With codes, the codes and their distinct labels' node ids (no gather over the rows); else the node ids and
        None.

        >>> from polars_anon import Hierarchy
        >>> h = Hierarchy.suppression(["F", "M"])
        >>> index, ids = Task(pl.DataFrame({"g": ["M", "F"], "size": [2, 2]}), ["g"], {"g": h}, 2).leaf_index("g")
        >>> index.tolist(), ids
        ([2, 1], None)
        """
        codes, h = self.codes, self.hierarchies[qid]
        ids = None if codes is None else codes.label_ids(qid, h)
        if codes is None or ids is None:
            return h.ids_of(self.aggregates[qid]), None
        index = codes.codes[qid]
        if len(index) != self.aggregates.height:  # codes of other aggregates: never used silently
            raise RuntimeError(f"codes of {len(index)} rows for {self.aggregates.height} aggregate rows ({qid!r})")
        if not codes.decode_to(qid, self.aggregates[qid]):
            raise RuntimeError(f"codes that do not decode to the aggregates' column {qid!r}, row for row")
        return index, ids


@dataclass
class Plan:
    """What an algorithm returns: the tuple map and its own facts for the report."""

    map: TupleMap
    details: dict[str, Any] = field(default_factory=dict)
    guarantee: str = "k-anonymity"
    """What the independent check verifies. "k-anonymity" (the default): the published
    table grouped by its quasi-identifiers has classes of at least k rows. Any other
    value (mdav's "probabilistic") must come with `verify`, which replaces that check."""
    verify: Callable[[pl.LazyFrame, pl.LazyFrame], dict[str, Any]] | None = None
    """The method's own check of its guarantee: ``verify(published, prepared_input)``
    raises :class:`~polars_anon.errors.NotKAnonymousError` when it fails and returns
    facts for the report (``min_class_size``, ``n_classes``, ``n_rows``, ...); and ``output_risk`` (the
    published table's risk figures) when its records are not a partition of classes (local suppression's
    wildcards: :func:`~polars_anon.privacy.risk.risk_summary_of_patterns`); else the road groups the table."""
    later: dict[str, Callable[[], Any]] = field(default_factory=dict)
    """Details for the report only, read when the report's facts are (:meth:`settle`, beside the report's metrics in
    :func:`~polars_anon.report.plan_facts`): each a function returning the detail, which may compute it then or
    wait for a thread the method began (fulldomain's neighbours, which read its search's lattice: over many tuples on
    a thread of their own from the search's end; else computed when read, so a plan never reported, such as
    explore's, does not compute them)."""

    def __post_init__(self) -> None:
        if self.guarantee != "k-anonymity" and self.verify is None:
            raise ValueError(f"a Plan with guarantee {self.guarantee!r} needs its own verify function")

    def settle(self) -> bool:
        """Compute the :attr:`later` details into :attr:`details` (after the method's own, in their order) and drop
        them, with what they held (fulldomain's lattice); whether there were any.

        >>> agg = pl.DataFrame({"g": ["F"], "size": [1]})
        >>> plan = Plan(TupleMap.from_labels(agg, ["g"], {"g": agg["g"]}), {"a": 1})
        >>> plan.later["b"] = lambda: 2
        >>> plan.settle(), plan.details, plan.later
        (True, {'a': 1, 'b': 2}, {})
        """
        later, self.later = self.later, {}
        for key, compute in later.items():
            self.details[key] = compute()
        return bool(later)


@dataclass(frozen=True)
class Method:
    """A registered anonymization method and what it declares."""

    name: str
    run: Callable[[Task, Any], Plan]
    options: type
    """Dataclass of the method's options (see :mod:`polars_anon.options`)."""
    metrics: tuple[str, ...] = ()
    """Names of the costs the method can optimize (empty: it takes no ``metric``)."""
    default_metric: str | None = None
    needs_hierarchies: bool = True
    """False when quasi-identifiers without a hierarchy are published anyway (ranges, sets, means)."""
    records: bool = False
    """True when the method works on records rather than class aggregates (MDAV)."""
    guarantee: str = "k-anonymity"
    """The guarantee it publishes (a one-line description for documentation)."""
    check: Callable[[Any, str | None, Sequence[str]], None] | None = None
    """``check(options, metric, qids)``: the method's own checks of its options against the
    metric and the quasi-identifiers, run with the request's checks, before any data is read."""
    codes: bool = False
    """True when the method reads :attr:`Task.codes` (the road keeps them for it: at 15M rows they hold 22 MiB)."""
    misses: str = ""
    """What the method's search cannot find, appended to its refusal when it publishes nothing that meets the
    models (:meth:`~polars_anon.privacy.constraints.Constraints.no_publication`); empty when nothing to say."""
    blanks: bool = False
    """True when the method publishes each qid cell as it was or blanked (null): ``polars-anon metrics`` then reads a
    blank as its hierarchy's root, and a qid without a hierarchy as suppression only (local suppression)."""
    tuple_classes: Callable[[Any], bool] = lambda options: True
    """``tuple_classes(options)``: True when a release made with these (parsed) options is k-anonymous in classes of
    equal published tuples, what the independent check groups and the ``classes`` metrics measure; False where its
    guarantee counts other groups (local suppression's wildcard patterns, MDAV's permuted clusters)."""


METHODS: dict[str, Method] = {}
"""Every method by name."""


def register_method(
    name: str,
    options: type,
    *,
    metrics: Sequence[str] = (),
    default_metric: str | None = None,
    needs_hierarchies: bool = True,
    records: bool = False,
    guarantee: str = "k-anonymity",
    check: Callable[[Any, str | None, Sequence[str]], None] | None = None,
    codes: bool = False,
    misses: str = "",
    blanks: bool = False,
    tuple_classes: Callable[[Any], bool] = lambda options: True,
) -> Callable[[Callable[[Task, Any], Plan]], Callable[[Task, Any], Plan]]:
    """Decorator declaring an algorithm in :data:`METHODS`."""

    def add(fn: Callable[[Task, Any], Plan]) -> Callable[[Task, Any], Plan]:
        METHODS[name] = Method(
            name,
            fn,
            options,
            tuple(metrics),
            default_metric,
            needs_hierarchies,
            records,
            guarantee,
            check,
            codes,
            misses,
            blanks,
            tuple_classes,
        )
        return fn

    return add


# The methods register themselves through `register` above, so they are imported after it.
from polars_anon.algorithms import (  # noqa: E402
    datafly,  # noqa: F401  (registers itself)
    fulldomain,  # noqa: F401  (registers itself)
    greedy,  # noqa: F401  (registers itself)
    local_suppression,  # noqa: F401  (registers itself)
    mdav,  # noqa: F401  (registers itself)
    mondrian,  # noqa: F401  (registers itself)
    topdown,  # noqa: F401  (registers itself)
)
