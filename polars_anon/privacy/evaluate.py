"""Privacy models on any table: the independent check before writing, and :func:`check`.

Both group the table by its (published) quasi-identifiers, and by each sensitive
attribute a model reads, in one collect (the relational form: class sizes and
(class, value, count)); the models then judge those class statistics.

- :func:`verify_models` checks a published table against the constraints the
  algorithm enforced, with the *input's* sensitive distributions as reference
  (t-closeness, δ-disclosure and β-likeness compare with the table that was
  anonymized); any violation raises :class:`~polars_anon.errors.PrivacyModelError`
  and nothing is written (fail closed).
- :func:`check` verifies any table against any set of models, the table itself
  as reference; it returns each model's status and never raises for a violation.

>>> import polars as pl
>>> from polars_anon.privacy import LDiversity
>>> t = pl.DataFrame({"q": ["a", "a", "b", "b"], "s": ["x", "y", "x", "x"]})
>>> [(m["model"], m["satisfied"], m["violating_classes"]) for m in check(t, ["q"], [LDiversity("s", l=2)])["models"]]
[('l-diversity', False, 1)]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from polars_anon._passes import collect_apart, collect_by_tuples
from polars_anon._validate import (
    as_lazy,
    check_columns,
    check_k,
    check_mapping,
    check_qids,
    is_path,
    refuse_reserved,
)
from polars_anon.errors import InfeasibleError, InvalidParameterError, PrivacyModelError
from polars_anon.hierarchy import Hierarchy, check_hierarchies
from polars_anon.io import scan_input
from polars_anon.messages import NO_ROWS
from polars_anon.privacy.base import ClassView, Model, check_model_roles, check_models
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import (
    COUNT,
    WIDE,
    PopulationCounts,
    count_population,
    encode_counts,
    from_wide,
    grouped,
    population_counts,
    population_ids,
    read_population,
    same_table,
    sensitive_counts,
    value_codes,
    wide_columns,
)
from polars_anon.report import notebook

__all__ = [
    "DP_NOT_CHECKABLE",
    "CheckResult",
    "build_constraints",
    "check",
    "class_frames",
    "class_measures",
    "indexed",
    "matched_population",
    "population_frame",
    "refuse_empty",
    "verify_classes",
    "verify_models",
]

_CLASS = "__anon_class"
REFERENCE_UNREAD = (
    "reference is read by the models that compare classes with a distribution (t-closeness, beta-likeness, "
    "delta-disclosure), and none is given; give one, or leave out the reference"
)


class CheckResult(dict):
    """The figures of :func:`check` (a plain dict of them); a notebook shows them as a compact summary."""

    def _repr_html_(self) -> str:
        return notebook.check_html(self)


def class_frames(
    lf: pl.LazyFrame,
    keys: Sequence[str],
    attributes: Sequence[str],
    labels: Mapping[str, pl.Series] | None = None,
    *,
    few: bool = False,
) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
    """The classes of `lf` by `keys` (sorted, ``size``, a class index) and the (class, value) counts of each attribute.

    An attribute whose `labels` (its known values) are few is counted in the class pass
    itself, a column per value plus ``__anon_other_<attribute>`` (values not among them);
    its frame is then None. One pass over `lf` in that case (passes over shares of the classes
    on many rows: :func:`~polars_anon._passes.collect_by_tuples`). `few`: the classes are known
    to be few next to the rows (String keys are then grouped as they are, see
    :func:`~polars_anon.privacy.counts.grouped`); the result is the same.
    """
    keys, labels = list(keys), dict(labels or {})
    wide = [a for a in attributes if a in labels and len(labels[a]) <= WIDE]
    columns = [e for a in wide for e in (*wide_columns(a, labels[a]), _others(a, labels[a]))]

    def by_class(rows: pl.LazyFrame) -> list[pl.LazyFrame]:
        counts = [sensitive_counts(rows, keys, a) for a in attributes if a not in wide]
        return [grouped(rows, keys, pl.len().cast(pl.Int64).alias("size"), *columns, categorical=not few), *counts]

    frames = collect_by_tuples(lf, keys, by_class)  # materializes: one row per class (and per class and value)
    classes = indexed(frames[0], keys)
    rest = iter(frames[1:])
    return classes, [None if a in wide else next(rest) for a in attributes]


def indexed(classes: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Published classes (keys and ``size``, from any engine's group-by) sorted and numbered as the checks read them."""
    return classes.sort(list(keys), nulls_last=True).with_row_index(_CLASS)


def _others(attribute: str, labels: pl.Series) -> pl.Expr:
    known = labels.drop_nulls()
    col = pl.col(attribute)
    outside = col.is_not_null() & ~col.is_in(known.implode()) if len(known) else col.is_not_null()
    if labels.null_count() == 0:
        outside = outside | col.is_null()
    return outside.sum().cast(pl.Int64).alias(f"__anon_other_{attribute}")


def population_frame(constraints: Constraints, levels: Mapping[str, int]) -> pl.DataFrame:
    """Population records per generalized tuple at `levels` (the published labels of full-domain methods)."""
    pop = constraints.population
    assert pop is not None and constraints.aggregates is not None
    qids = [q for q in constraints.aggregates.columns if q != "size"]
    sample = constraints.aggregates.select(qids).with_columns(pl.Series(COUNT, pop.rows))
    frame = pl.concat([sample, pop.extra.select(*qids, pl.col(COUNT).cast(pl.Int64))])
    labels = []
    for q in qids:
        h = constraints.hierarchies[q]
        ids = h.generalize_ids(int(levels[q]))[h.ids_of(frame[q])]
        labels.append(pl.Series(q, h.labels, dtype=pl.String).gather(ids))
    return pl.DataFrame([*labels, frame[COUNT]]).group_by(qids).agg(pl.col(COUNT).sum())


def _view(
    classes: pl.DataFrame,
    keys: Sequence[str],
    frames: Sequence[pl.DataFrame | None],
    constraints: Constraints,
    population: pl.DataFrame | None,
) -> ClassView:
    n = classes.height
    counts = {}
    for attribute, frame in zip(constraints.sensitive, frames):
        domain = constraints.sensitive[attribute].domain
        if frame is None:
            if int(classes[f"__anon_other_{attribute}"].sum()):
                raise PrivacyModelError(
                    f"independent check failed: the published column {attribute!r} holds values the input does not; "
                    "nothing was written"
                )
            counts[attribute] = from_wide(classes, attribute, domain.labels).dense(n)
            continue
        joined = frame.join(
            classes.select(*keys, _CLASS), on=list(keys), how="left", nulls_equal=True, maintain_order="left"
        )
        code = value_codes(joined[attribute], domain.labels)
        if (code < 0).any():
            raise PrivacyModelError(
                f"independent check failed: the published column {attribute!r} holds values the input does not; "
                "nothing was written"
            )
        cls = joined[_CLASS].cast(pl.Int64).to_numpy()
        flat = np.bincount(cls * domain.m + code, weights=joined[COUNT].to_numpy(), minlength=n * domain.m)
        counts[attribute] = flat.reshape(n, domain.m).astype(np.int64)
    pop = None
    if population is not None:
        pop = (
            classes.join(population, on=list(keys), how="left", nulls_equal=True, maintain_order="left")[COUNT]
            .fill_null(0)
            .to_numpy()
        )
    return ClassView(classes["size"].to_numpy().astype(np.int64), counts, pop)


def verify_models(
    lf: pl.LazyFrame, keys: Sequence[str], constraints: Constraints, levels: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Check every model of `constraints` on the classes of `lf` grouped by `keys`; raise on any violation.

    Returns ``{"privacy": [status of each model]}`` ({} when no model is asked).
    """
    if constraints.k_only:
        return {}
    classes, frames = class_frames(lf, keys, list(constraints.sensitive), constraints.labels)
    return verify_classes(classes, frames, keys, constraints, levels)


def verify_classes(
    classes: pl.DataFrame,
    frames: Sequence[pl.DataFrame | None],
    keys: Sequence[str],
    constraints: Constraints,
    levels: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """:func:`verify_models` on class frames already collected (from :func:`class_frames`)."""
    if constraints.k_only:
        return {}
    population = None
    if constraints.population is not None:
        if levels is None:
            raise PrivacyModelError(
                "independent check failed: a population model needs the published levels; nothing was written"
            )
        population = population_frame(constraints, levels)
    view = _view(classes, keys, frames, constraints, population)
    status = constraints.status(view)
    for entry, model in zip(status, constraints.models):
        if not entry["satisfied"]:
            if entry["scope"] == "class":
                detail = (
                    f"{entry['violating_classes']} classes ({entry['violating_rows']} rows) violate it "
                    f"(measures from {entry['min_measure']} to {entry['max_measure']})"
                )
            else:
                detail = f"the table's figure is {entry['measure']}"
            raise PrivacyModelError(f"independent check failed: {model.describe()}: {detail}; nothing was written")
    return {"privacy": status}


def build_constraints(
    aggregates: pl.DataFrame,
    qids: Sequence[str],
    k: int,
    models: Sequence[Model],
    counts: Mapping[str, pl.DataFrame],
    population: PopulationCounts | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    reference: Mapping[str, pl.DataFrame] | None = None,
) -> Constraints:
    """:class:`Constraints` over class aggregates from the relational counts (one frame per sensitive attribute).

    `reference`: per attribute, (value, ``count``) of the table whose distribution the models compare
    classes with (the input of a release); without it, the counted table's own."""
    refs = dict(reference or {})
    sens = {a: encode_counts(f, aggregates, qids, a, refs.get(a)) for a, f in counts.items()}
    return Constraints(
        aggregates["size"].to_numpy(),
        k,
        models,
        sens,
        population,
        hierarchies,
        aggregates,
        reference="input" if reference is not None else "published",
    )


DP_NOT_CHECKABLE = (
    "check: differential-privacy is a property of how a table is released (a sampled, generalized draw), not of the "
    "table: no check of a table can show it; check the k its release enforced (k=, --k), and read the release's report"
)
"""Why :func:`check` refuses a differential-privacy model (a table whose classes hold its k rows would have been
called private)."""


def refuse_empty(n_rows: int) -> None:
    """Refuse a checked table of `n_rows` rows when it has none: no class to vouch for, so neither k-anonymous nor
    private, and not a "0 classes, all satisfied". The one refusal of :func:`check`, :func:`class_measures` and the
    command line's ``check`` (one line, exit 2); the SQL check macros (``anon_l_diversity``, ...) say it in the same
    words (``anon_check_model_table``), as ``pa.risk`` and ``anon_risk`` refuse an empty table alike.

    >>> refuse_empty(0)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InfeasibleError: check: the table has no rows; there is nothing to check
    """
    if n_rows == 0:
        raise InfeasibleError(NO_ROWS(what="check", why="there is nothing to check"))


def check(
    data: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    privacy: Sequence[Model] = (),
    *,
    k: int = 1,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: Mapping[str, int] | None = None,
    reference: pl.LazyFrame | pl.DataFrame | str | os.PathLike[str] | None = None,
) -> CheckResult:
    """Verify any table against k and any set of privacy models.

    Parameters
    ----------
    data
        The table (a published one: its classes are its distinct qid tuples).
    qids
        The quasi-identifier columns.
    privacy
        Models (:mod:`polars_anon.privacy`). Their attributes must be columns.
    k
        Also report whether every class has k rows.
    hierarchies, levels
        For models with a population table. With `hierarchies` alone, a class counts
        the population records whose every qid value is the class's value or lies under
        it in its hierarchy (any levels, one per class or per table:
        :func:`matched_population`); with `levels` too, the population is generalized to
        these levels and matched exactly; with neither it is matched as is (give a
        population already published the same way).
    reference
        The table whose sensitive distributions t-closeness, β-likeness and
        δ-disclosure compare classes with (a frame or a Parquet/CSV path, a str or ``pathlib.Path``): the input
        of a release, as :func:`polars_anon.anonymize` enforces and reports them
        (``"reference": "input"`` in its report). Without it the checked table is its
        own reference (``"reference": "published"``); the two differ when rows were
        suppressed.

    Returns
    -------
    dict
        ``k_anonymous``, ``min_class_size``, ``n_classes``, ``n_rows`` and ``models``:
        per model its parameters, ``satisfied`` and its figures.
    """
    lf = as_lazy(data)
    qids = check_qids(lf, qids)
    k = check_k(k)
    models = check_models(privacy)
    attributes = list(dict.fromkeys(m.sensitive_attribute for m in models if m.sensitive_attribute is not None))
    check_columns(lf, attributes, "privacy model attributes")
    if hierarchies is not None:
        hierarchies = check_hierarchies(hierarchies)
    if levels is not None:
        check_mapping(levels, "levels", "qid -> level")
    if reference is not None and not any(m.uses_distribution for m in models):
        raise InvalidParameterError(REFERENCE_UNREAD)
    if levels is not None and hierarchies is None:
        raise InvalidParameterError(
            f"check: levels {dict(levels)} generalize the population with hierarchies, and none is given; give "
            "hierarchies too, or leave out levels"
        )
    if any(m.name == "differential-privacy" for m in models):  # pa.check, pa.risk, the CLI's check/risk --model
        raise InvalidParameterError(DP_NOT_CHECKABLE)
    check_model_roles(models, qids)
    refuse_reserved(qids, attributes)  # the class sizes and the (class, value) counts sit beside them, as in the road
    classes, frames = class_frames(lf, qids, attributes)
    refuse_empty(classes.height)
    aggregates = classes.select(*qids, pl.col("size").cast(pl.UInt32))
    population = _population(models, lf, aggregates, qids, hierarchies, levels)
    refs = None
    if reference is not None:
        ref = scan_input(Path(reference), what="reference") if is_path(reference) else as_lazy(reference)
        check_columns(ref, attributes, "reference: columns")
        counted = [ref.group_by(a).agg(pl.len().cast(pl.Int64).alias(COUNT)) for a in attributes]
        refs = dict(zip(attributes, collect_apart(counted)))  # materializes: one row per value
    counts = {a: f for a, f in zip(attributes, frames) if f is not None}  # no labels given: every frame is there
    constraints = build_constraints(aggregates, qids, k, models, counts, population, hierarchies, refs)
    view = constraints.view(np.arange(aggregates.height))
    sizes = view.size
    return CheckResult(
        {
            "k": k,
            "k_anonymous": bool(sizes.min() >= k),
            "min_class_size": int(sizes.min()),
            "n_classes": len(sizes),
            "n_rows": int(sizes.sum()),
            "models": constraints.status(view),
        }
    )


def _population(
    models: Sequence[Model],
    lf: pl.LazyFrame,
    aggregates: pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy] | None,
    levels: Mapping[str, int] | None,
) -> PopulationCounts | None:
    tables = [m for m in models if m.needs_population_table]
    if not tables:
        return None
    if len({same_table(m.population_frame) for m in tables}) > 1:
        raise InvalidParameterError("the models name different population tables; give them one")
    if levels is None and hierarchies is not None and all(q in hierarchies for q in qids):
        counted = count_population(tables[0].population_frame, qids, tables[0].name)  # one row per tuple
        return matched_population(counted, aggregates, qids, hierarchies, tables[0].name, tables[0].population_frame)
    pop = read_population(tables[0].population_frame, qids, tables[0].name)
    if levels is not None:
        from polars_anon.generalize import generalize

        if hierarchies is None:
            raise InvalidParameterError("check: levels need hierarchies to generalize the population table")
        pop = generalize(pop, {q: hierarchies[q] for q in levels}, levels)
    counted = (
        pop.group_by(list(qids)).agg(pl.len().cast(pl.Int64).alias(COUNT)).collect()
    )  # materializes: one row per tuple
    counts = population_counts(counted, aggregates, qids, tables[0].name)
    # the classes are the table's own tuples and the population is matched to them as given (or generalized to
    # `levels` above): a population tuple no class holds counts towards no class
    return PopulationCounts(counts.rows, counts.extra.clear(), counts.total)


def matched_population(
    population: pl.DataFrame,
    classes: pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    what: str,
    table: object = None,
) -> PopulationCounts:
    """Population records per published class: those whose every qid value is the class's value or lies under it.

    `population` holds tuples of leaves and their ``count``; `classes` the published tuples (any
    levels, also a different level per class as local recoding publishes). A class whose values sit at
    levels ``L`` matches a leaf tuple exactly when the leaves generalized to ``L`` are the class's
    values (a node of level L is the highest ancestor of level at most L of each leaf under it), so
    the population is generalized once per distinct level combination among the classes.

    >>> import polars_anon as pa
    >>> h = {"age": pa.Hierarchy.from_rows([["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3-4", "*"]])}
    >>> pop = pl.DataFrame({"age": ["1", "2", "3"], "count": [4, 5, 6]})
    >>> matched_population(pop, pl.DataFrame({"age": ["1-2", "3", "*"]}), ["age"], h, "k-map").rows.tolist()
    [9, 6, 15]
    """
    qids = list(qids)
    node = {q: hierarchies[q].ids_of(classes[q]) for q in qids}
    leaf = population_ids(population, {q: hierarchies[q] for q in qids}, what, table)  # `table`: named if refused
    level = np.stack([hierarchies[q].level[node[q]] for q in qids], axis=1) if qids else np.zeros((classes.height, 0))
    signatures, which = np.unique(level, axis=0, return_inverse=True)
    which = which.ravel()
    rows = np.zeros(classes.height, dtype=np.int64)
    count = population[COUNT].to_numpy()
    for s, signature in enumerate(signatures):
        mine = np.flatnonzero(which == s)
        up = pl.DataFrame(
            {q: hierarchies[q].generalize_ids(int(lv))[leaf[q]] for q, lv in zip(qids, signature)} | {COUNT: count}
        )
        per = up.group_by(qids).agg(pl.col(COUNT).sum())
        cls = pl.DataFrame({q: node[q][mine] for q in qids} | {_CLASS: mine})
        hit = cls.join(per, on=qids, how="left", maintain_order="left")
        rows[hit[_CLASS].to_numpy()] = hit[COUNT].fill_null(0).to_numpy()
    size = classes["size"].to_numpy() if "size" in classes.columns else np.zeros(classes.height, dtype=np.int64)
    short = np.flatnonzero(rows < size)
    if len(short):
        first = classes.select(qids).row(int(short[0]), named=True)
        raise InfeasibleError(
            f"{what}: the population table does not contain the sample: {len(short)} classes have more rows than "
            f"population records that generalize to them (first: {first}); give the population the sample was drawn "
            "from"
        )
    return PopulationCounts(rows, population.clear().select(*qids, COUNT), int(count.sum()))


def class_measures(data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], model: Model) -> pl.DataFrame:
    """Per class of the table: its qids, ``size``, the model's ``measure`` and ``satisfied``.

    The table is the reference.

    The Python twin of the per-class DuckDB macros (``anon_l_diversity``, ``anon_t_closeness``, ...).

    >>> from polars_anon.privacy import LDiversity
    >>> t = pl.DataFrame({"q": ["a", "a", "b"], "s": ["x", "y", "x"]})
    >>> class_measures(t, ["q"], LDiversity("s", l=2)).rows()
    [('a', 2, 2.0, True), ('b', 1, 1.0, False)]
    """
    lf = as_lazy(data)
    qids = check_qids(lf, qids)
    attributes = [model.sensitive_attribute] if model.sensitive_attribute is not None else []
    check_columns(lf, attributes, f"{model.name}: attribute")
    classes, frames = class_frames(lf, qids, attributes)
    refuse_empty(classes.height)  # was a bare NumPy "zero-size array to reduction operation" ValueError
    aggregates = classes.select(*qids, pl.col("size").cast(pl.UInt32))
    counts = {a: f for a, f in zip(attributes, frames) if f is not None}  # no labels given: every frame is there
    constraints = build_constraints(aggregates, qids, 1, [model], counts)
    view = constraints.view(np.arange(aggregates.height))
    check_ = constraints.checks[0]
    if check_.scope != "class":
        raise InvalidParameterError(f"{model.describe()} judges the whole table, not each class; use check()")
    measure = check_.measure(view)
    return aggregates.select(*qids, pl.col("size").cast(pl.Int64)).with_columns(
        pl.Series("measure", measure, dtype=pl.Float64), pl.Series("satisfied", check_.ok(view, measure))
    )
