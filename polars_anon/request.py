"""The one validation layer: :func:`check_request` before any data is read,
:func:`check_data` on the class aggregates.

Every interface (``pa.anonymize``, the namespace, the job file, the demo, the CLI)
goes through these two functions; shells hold no checks of their own. Every
refusal names the culprit (column, value, parameter).

>>> import polars as pl
>>> from polars_anon import Hierarchy
>>> schema = pl.Schema({"sex": pl.String, "id": pl.Int64})
>>> req = check_request(schema, hierarchies={"sex": Hierarchy.suppression(["F", "M"])}, k=2, drop=["id"])
>>> req.qids, req.method.name, req.columns
(('sex',), 'fulldomain', {'sex': 'quasi-identifier', 'id': 'identifying'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_anon._types import Road
from polars_anon._validate import (
    check_choice,
    check_columns_in,
    check_k,
    check_seed,
    check_unique,
    check_values,
    names_list,
    refuse_not_finite,
    refuse_reserved,
)
from polars_anon.algorithms import METHODS, Method, Task
from polars_anon.algorithms.local_suppression import NULLS as LOCAL_SUPPRESSION_NULLS
from polars_anon.attributes import attribute_types, refuse_identifying
from polars_anon.errors import InfeasibleError, InvalidParameterError, NullValueError
from polars_anon.hierarchy import Hierarchy, check_hierarchies
from polars_anon.labels import NOT_FINITE
from polars_anon.messages import setting
from polars_anon.options import parse_options
from polars_anon.privacy.base import Model, check_model_roles, check_models
from polars_anon.privacy.constraints import Constraints

__all__ = [
    "DEFERRED",
    "NO_INPUT_ROWS",
    "Request",
    "check_data",
    "check_marginals",
    "check_model_roles",
    "check_privacy",
    "check_request",
]

NULL_POLICIES = ("error", "suppress")
NO_INPUT_ROWS = "the input has no rows; there is nothing to anonymize"
"""The refusal of an input without rows (:func:`check_data`, :func:`check_marginals`)."""


class _Deferred:
    """Stands for a hierarchy that will be built from the data (a job file's built-in kinds)."""

    def __repr__(self) -> str:
        return "DEFERRED"


DEFERRED = _Deferred()
"""Pass as a hierarchy to :func:`check_request` to check a request before the data is read."""


@dataclass(frozen=True)
class Request:
    """A checked anonymization request: everything asked for, before any data is read."""

    qids: tuple[str, ...]
    hierarchies: dict[str, Hierarchy]
    """The hierarchies of the qids that have one (in qid order)."""
    k: int
    method: Method
    metric: str | None
    """The metric given (None: the method's default, :attr:`effective_metric`)."""
    options: Any
    """The method's parsed options dataclass."""
    drop: tuple[str, ...]
    sensitive: str | None
    """The first sensitive attribute (the one metrics such as ``cm`` read), None without one."""
    insensitive: tuple[str, ...]
    null: str
    seed: int
    columns: dict[str, str]
    """Every input column and its attribute type (see :mod:`polars_anon.attributes`)."""
    privacy: tuple[Model, ...] = ()
    """The privacy models asked for, besides k-anonymity."""
    sensitives: tuple[str, ...] = ()
    """Every sensitive attribute: those declared in ``sensitive`` and those the models read, in that order."""
    sensitive_hierarchies: dict[str, Hierarchy] | None = None
    """Hierarchies given for sensitive attributes (hierarchical t-closeness), by attribute."""
    floats: tuple[str, ...] = ()
    """The qids of a float type: their NaN and infinities are refused (:func:`check_data`)."""
    orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The order each Enum qid declares: its categories, as labels, from the input's schema (on every engine: DuckDB's
    ENUM and Spark's carried Enum reach it as a Polars Enum). Mondrian's default axis of such a qid without a
    hierarchy (:func:`~polars_anon.algorithms.mondrian.axes`), and MDAV's codes of such a qid
    (:func:`~polars_anon.algorithms.mdav.code_orders`)."""
    road: Road = "python"
    """How it was asked (a Python call or a job file): the refusals of its data spell their way out in its words."""

    @property
    def effective_metric(self) -> str | None:
        """The metric the method optimizes: the one given, else the method's default."""
        return self.metric if self.metric is not None else self.method.default_metric

    @property
    def undeclared(self) -> list[str]:
        """Columns published as is without being declared insensitive (checked for identifying values)."""
        return [c for c, t in self.columns.items() if t == "insensitive" and c not in self.insensitive]

    @property
    def published_columns(self) -> list[str]:
        """The columns of the published table, in input order: every input column but those dropped."""
        return [c for c in self.columns if c not in self.drop]

    def task(self, aggregates: pl.DataFrame, **road: Any) -> Task:
        """The task this request asks of `aggregates`: the one place a request's fields (qids, hierarchies, k, seed,
        metric, sensitive, orders) become a task's; `road`: what the caller's road adds (records, sensitive_counts,
        constraints, codes)."""
        return Task(
            aggregates,
            self.qids,
            self.hierarchies,
            self.k,
            self.seed,
            self.metric,
            self.sensitive,
            orders=self.orders,
            **road,
        )


def _qids(qids: object, hierarchies: Mapping[str, object]) -> list[str]:
    """The qids asked for: `qids`, else the keys of `hierarchies`; one of them must name a column, none twice, none
    the empty name."""
    if qids is None and not hierarchies:
        raise InvalidParameterError(
            "no qids given; name the quasi-identifier columns in qids (or give hierarchies, whose keys are the qids)"
        )
    out = list(hierarchies) if qids is None else names_list(qids, "qids")
    if not out:
        raise InvalidParameterError("qids is empty; name at least one quasi-identifier column")
    check_unique(out, "qids")
    if "" in out:  # Polars' frames and DuckDB's relations address such a column by a made-up name, or not at all
        raise InvalidParameterError(
            "qids hold an empty column name '', which the engines cannot address; rename it first, e.g. "
            "lf.rename({'': 'c'}) (or name the column in the CSV header)"
        )
    return out


def _declared_orders(schema: pl.Schema | Sequence[str], qids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """:attr:`Request.orders`: each Enum qid's categories, in their declared order.

    >>> _declared_orders(pl.Schema({"a": pl.Enum(["lo", "hi"]), "b": pl.String}), ["a", "b"])
    {'a': ('lo', 'hi')}
    """
    if not isinstance(schema, pl.Schema):
        return {}
    dtypes = {q: schema[q] for q in qids}
    return {q: tuple(d.categories.to_list()) for q, d in dtypes.items() if isinstance(d, pl.Enum)}


def _refuse_qid_dtypes(schema: pl.Schema, qids: Sequence[str]) -> None:
    """Refuse a quasi-identifier whose values are not single values (lists, arrays, structs, objects), are bytes or
    are durations: none has a label to generalize or to find in a hierarchy."""
    for q in qids:
        dtype = schema[q]
        if dtype.is_nested() or isinstance(dtype, (pl.Binary, pl.Object)):
            raise InvalidParameterError(
                f"qid {q!r} has dtype {dtype}, which cannot be generalized; a quasi-identifier holds strings, "
                "numbers, booleans, dates or categoricals: cast it (or unnest it into such columns) or leave it out"
            )
        if isinstance(dtype, pl.Duration):  # no text label: Polars cannot cast it to String, DuckDB hands an interval
            raise InvalidParameterError(
                f"qid {q!r} has dtype {dtype}, which has no label to generalize; cast it to a number first "
                f"(pl.col({q!r}).dt.total_seconds(), or another unit), or leave it out"
            )


def _hierarchies(
    hierarchies: Mapping[str, Hierarchy], qids: list[str], method: Method, sensitive: Sequence[str], road: Road
) -> dict[str, Hierarchy]:
    """The hierarchies of the qids, in qid order; a qid without one is refused when `method` needs one for every
    qid (its registry entry), the way out spelled for the `road` the request came by."""
    extra = [q for q in hierarchies if q not in qids and q not in sensitive]
    if extra:
        raise InvalidParameterError(
            f"hierarchies given for {extra}, which are not in qids {qids}; add them to qids or leave them out"
        )
    missing = [q for q in qids if q not in hierarchies]
    if missing and method.needs_hierarchies:
        takers = sorted(m for m, spec in METHODS.items() if not spec.needs_hierarchies)
        how = (
            f"in the job file ([qids.{missing[0]}] hierarchy = ...)"
            if road == "job"
            else f"in hierarchies, e.g. hierarchies={{{missing[0]!r}: pa.Hierarchy.suppression(values)}} (or another "
            "builder)"
        )
        raise InvalidParameterError(
            f"qids {missing} have no hierarchy, and method {method.name!r} needs one for every qid; give one {how}, "
            f"or use a method that publishes without one: {takers}"
        )
    return {q: hierarchies[q] for q in qids if q in hierarchies}


def _metric(metric: object, method: Method) -> str | None:
    if metric is None:
        return None
    if not method.metrics:
        takers = sorted(m for m, spec in METHODS.items() if spec.metrics)
        raise InvalidParameterError(
            f"method {method.name!r} takes no metric, got metric={metric!r}; methods that do: {takers}"
        )
    return check_choice(f"metric of method {method.name!r}", metric, method.metrics)


def _roles(columns: list[str], qids: list[str], drop: list[str], sensitives: list[str], insensitive: list[str]) -> None:
    """Each column has one role."""
    both = [q for q in qids if q in drop]
    if both:
        raise InvalidParameterError(
            f"qids {both} are also in drop; a column is a quasi-identifier or dropped, not both"
        )
    for sensitive in sensitives:
        if sensitive in qids:
            raise InvalidParameterError(
                f"sensitive {sensitive!r} is also a quasi-identifier; it must be one or the other"
            )
        if sensitive in drop:
            raise InvalidParameterError(
                f"sensitive {sensitive!r} is also in drop; a dropped column cannot be the sensitive attribute"
            )
        if sensitive in insensitive:
            raise InvalidParameterError(f"sensitive {sensitive!r} is also in insensitive; declare it once")
    clash = [c for c in insensitive if c in qids or c in drop]
    if clash:
        raise InvalidParameterError(f"insensitive {clash} are also qids or in drop; declare each column once")


FULL_DOMAIN_METHODS = ("fulldomain", "datafly")
"""Methods that publish every value of a qid at one level: a population table's records generalize the same way."""


def _models(privacy: object, columns: list[str], method: Method) -> list[Model]:
    """The privacy models: each a model object, reading a column of the input."""
    models = check_models(privacy)
    for model in models:
        if model.sensitive_attribute is not None:
            check_columns_in(columns, [model.sensitive_attribute], f"{model.name}: attribute")
    return models


def _model_hierarchies(models: Sequence[Model], hierarchies: Mapping[str, object]) -> None:
    """Hierarchical t-closeness needs the attribute's hierarchy (in the model or in hierarchies)."""
    for model in models:
        if getattr(model, "distance", None) == "hierarchical" and getattr(model, "hierarchy", None) is None:
            attribute = model.sensitive_attribute
            if attribute not in hierarchies:
                raise InvalidParameterError(
                    f"{model.describe()}: distance 'hierarchical' needs a hierarchy of {attribute!r}; give it in "
                    "hierarchies "
                    f"(job file: hierarchy = ... in the [[privacy]] table) or as TCloseness(..., hierarchy=h)"
                )


def check_request(
    schema: pl.Schema | Sequence[str],
    *,
    qids: Sequence[str] | str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k: int,
    method: str = "fulldomain",
    metric: str | None = None,
    options: Mapping[str, Any] | None = None,
    drop: Sequence[str] | str = (),
    sensitive: str | Sequence[str] | None = None,
    insensitive: Sequence[str] | str = (),
    null: str = "error",
    seed: int = 0,
    privacy: Sequence[Model] = (),
    road: Road = "python",
) -> Request:
    """Check everything asked for against the input's columns (no data is read); see the module docstring. `road`:
    how it was asked (a job passes ``"job"``), kept for the data's refusals (:func:`~polars_anon.messages.setting`)."""
    spec = METHODS[check_choice("method", method, sorted(METHODS))]
    columns = list(schema.names() if isinstance(schema, pl.Schema) else schema)
    given = {} if hierarchies is None else check_hierarchies(hierarchies, allow=DEFERRED)
    qid_list = _qids(qids, given)
    check_columns_in(columns, qid_list, "qids")
    if isinstance(schema, pl.Schema):
        _refuse_qid_dtypes(schema, qid_list)
    drop_list, insensitive_list = names_list(drop, "drop"), names_list(insensitive, "insensitive")
    declared = [] if sensitive is None else names_list(sensitive, "sensitive")
    check_columns_in(columns, declared, "sensitive")
    models = _models(privacy, columns, spec)
    sensitives = list(
        dict.fromkeys([*declared, *(m.sensitive_attribute for m in models if m.sensitive_attribute is not None)])
    )
    refuse_reserved(qid_list, sensitives, columns)
    hs = _hierarchies(given, qid_list, spec, sensitives, road)
    check_columns_in(columns, drop_list, "drop")
    check_columns_in(columns, insensitive_list, "insensitive")
    check_model_roles(models, qid_list, insensitive_list, drop_list)
    _roles(columns, qid_list, drop_list, sensitives, insensitive_list)
    sensitive_hs = {a: h for a, h in given.items() if a in sensitives and a not in qid_list}
    _model_hierarchies(models, sensitive_hs)
    check_k(k)
    check_choice("null", null, NULL_POLICIES)
    check_seed(seed)
    chosen = _metric(metric, spec)
    parsed = parse_options(spec.options, dict(options or {}), f"method {spec.name!r}")
    if spec.check is not None:
        spec.check(parsed, chosen if chosen is not None else spec.default_metric, qid_list)
    return Request(
        qids=tuple(qid_list),
        hierarchies=hs,
        k=k,
        method=spec,
        metric=chosen,
        options=parsed,
        drop=tuple(drop_list),
        sensitive=sensitives[0] if sensitives else None,
        insensitive=tuple(insensitive_list),
        null=null,
        seed=seed,
        columns=attribute_types(
            columns, qids=qid_list, sensitive=sensitives, insensitive=insensitive_list, drop=drop_list
        ),
        privacy=tuple(models),
        sensitives=tuple(sensitives),
        sensitive_hierarchies=sensitive_hs,
        floats=tuple(q for q in qid_list if isinstance(schema, pl.Schema) and schema[q].is_float()),
        orders=_declared_orders(schema, qid_list),
        road=road,
    )


def check_data(
    aggregates: pl.DataFrame,
    request: Request,
    distinct: Mapping[str, int],
    labels: Mapping[str, pl.Series] | None = None,
) -> None:
    """Check the data, seen through its class aggregates, against the request.

    `aggregates` holds the distinct qid tuples (String) and their ``size``;
    `distinct` the number of distinct values of each undeclared column; `labels`, when known, each qid's distinct
    non-null values in `aggregates`, sorted (the aggregates' codes: not looked for again). A float qid's NaN and
    infinities are refused first, under either null policy (:func:`~polars_anon._validate.refuse_not_finite`); then
    each qid with a hierarchy, its nulls the request cannot publish (:func:`_refuse_nulls`) and its values not leaves;
    then k and the identifying columns; then the nulls of a qid without a hierarchy.
    """
    n_rows = int(aggregates["size"].sum())
    if n_rows == 0:
        raise InfeasibleError(NO_INPUT_ROWS)
    for q in request.floats:
        refuse_not_finite(aggregates, q, None if labels is None else labels.get(q), leaves=_placed(request, q))
    for q, h in request.hierarchies.items():  # each qid's nulls, then its values (review32: the order as before)
        _refuse_nulls(aggregates, q, request)
        check_values(aggregates, {q: h}, labels=labels)
    check_k(request.k, n_rows)
    refuse_identifying(dict(distinct), n_rows, request.road)
    for q in request.qids:
        if q not in request.hierarchies:
            _refuse_nulls(aggregates, q, request)


def check_marginals(marginals: Mapping[str, pl.DataFrame], request: Request, distinct: Mapping[str, int]) -> None:
    """:func:`check_data` on the marginals a planner reads instead of the class aggregates (the same refusals,
    the same messages, the same order): `marginals` holds, per qid, its distinct values (String labels, null
    kept) and their ``size``.

    >>> from polars_anon import Hierarchy
    >>> req = check_request(pl.Schema({"sex": pl.String}), hierarchies={"sex": Hierarchy.suppression(["F", "M"])}, k=3)
    >>> check_marginals({"sex": pl.DataFrame({"sex": ["F", "M"], "size": [1, 1]})}, req, {})
    Traceback (most recent call last):
    ...
    polars_anon.errors.InfeasibleError: k=3 is larger than the table (2 rows); choose k <= 2
    """
    qids = list(request.qids)
    n_rows = int(marginals[qids[0]]["size"].sum())
    if n_rows == 0:
        raise InfeasibleError(NO_INPUT_ROWS)
    for q in request.floats:
        refuse_not_finite(marginals[q], q, leaves=_placed(request, q))
    for q, h in request.hierarchies.items():
        _refuse_nulls(marginals[q], q, request)
        check_values(marginals[q], {q: h})
    check_k(request.k, n_rows)
    refuse_identifying(dict(distinct), n_rows, request.road)
    for q in qids:
        if q not in request.hierarchies:
            _refuse_nulls(marginals[q], q, request)


def _placed(request: Request, q: str) -> list[str]:
    """The labels of NaN and the infinities that float qid `q`'s hierarchy names as leaves, where the method publishes
    the hierarchy's nodes (every method but MDAV, which averages the numbers): their place is the user's."""
    h = request.hierarchies.get(q)
    if h is None or request.method.records:
        return []
    leaves = set(h.leaf_labels)
    return [v for v in NOT_FINITE if v in leaves]


def _refuse_nulls(values: pl.DataFrame, q: str, request: Request) -> None:
    """Refuse the nulls of qid `q` that `request` cannot publish, with the way out that fits it; `values` holds `q`'s
    labels and their ``size``. null='suppress' publishes them as the root of `q`'s hierarchy: without one no method
    publishes them (MDAV crashed on them), and local_suppression takes none (null='suppress' is refused for it: its
    advice, :data:`~polars_anon.algorithms.local_suppression.NULLS`, says all in the first refusal)."""
    if not values[q].null_count():
        return
    n_null = int(values.filter(pl.col(q).is_null())["size"].sum())
    if request.method.name == "local_suppression":
        raise NullValueError(f"column {q!r} has {n_null} null values; {LOCAL_SUPPRESSION_NULLS}")
    if q not in request.hierarchies:
        raise NullValueError(
            f"column {q!r} has {n_null} null values and no hierarchy to publish them as its root; "
            "fill them, drop those rows, or give the qid a hierarchy"
        )
    if request.null != "suppress":
        raise NullValueError(
            f"column {q!r} has {n_null} null values; fill them, drop those rows, "
            f"or {setting('null', 'suppress', request.road)} to publish them as the hierarchy root"
        )


def check_privacy(constraints: Constraints, may_suppress: bool = False) -> None:
    """Refuse a model that no generalization can meet: it fails on the whole table as one class.

    The coarsest publication puts every row in one class; a monotone class model that
    fails there fails in some class of every publication (every method's classes are at
    most that merged), so it is refused unless rows may be suppressed (`may_suppress`);
    a table model that needs the only class suppressed leaves nothing to publish.
    The message names the model, why, and the largest value that could be met.
    """
    whole = constraints.whole()
    for model, check in zip(constraints.models, constraints.checks):
        if not model.monotone:
            continue  # a finer table may meet it where the whole fails (δ-presence with dmin > 0)
        if check.scope == "class" and may_suppress:
            continue  # the classes that fail it at a finer level may be suppressed within the budget
        if check.scope == "class":
            measure = check.measure(whole)
            if bool(check.ok(whole, measure)[0]):
                continue
            why = check.infeasible(float(measure[0])) or f"its measure on the whole table is {float(measure[0]):.6g}"
        else:
            if check.table_ok(whole.size, whole.population):
                continue
            why = (
                check.infeasible(float(check.table_measure(whole.size, whole.population)))
                or "it fails on the whole table"
            )
        raise InfeasibleError(f"{model.describe()} cannot be met by any generalization of this table: {why}")
