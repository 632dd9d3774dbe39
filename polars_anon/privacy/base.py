"""What every privacy model is: a frozen dataclass the user writes, bound to the input as a check.

A model (:class:`Model`) holds only what the user asked for (``LDiversity("salary", l=3)``).
:meth:`Model.bind` turns it, with the input's :class:`Context` (the overall
distribution of each sensitive attribute, the population size), into a
:class:`Check` that works on class statistics, never on rows:

- a **class** check gives every class a measure (its l, its distance to the
  table, its delta ...) and a verdict, vectorized over a :class:`ClassView`
  (class sizes, a dense count per class and sensitive value, population counts);
- a **table** check judges a whole table from its class sizes (average risk,
  records at risk, population uniqueness). When it fails, single classes are
  suppressed, the smallest first (ties: the class whose first input row comes
  first, as ARX), as many as needed and no more (ARX's rule: the shortest such
  prefix, :meth:`Check.prefix_ok`); a class of at least :attr:`Check.floor`
  rows never needs suppressing, so local-recoding methods finish a class there.

Each model declares two monotonicity flags (as ARX's criteria do):
``monotone`` (merging two classes that both satisfy it gives a class that
satisfies it, so a search may prune on generalization) and
``monotone_suppression`` (merging classes never raises the number of rows in
violating classes, so a search that suppresses violating classes within a budget
may prune too).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl

from polars_anon._types import Road
from polars_anon._validate import is_integer
from polars_anon.errors import InvalidParameterError, NullValueError
from polars_anon.messages import ATTRIBUTE_ROLE, NOT_FRACTION, NOT_POSITIVE, SENSITIVE_NULL, setting

__all__ = [
    "SENSITIVE_NULLS",
    "TOLERANCE",
    "Check",
    "ClassView",
    "Context",
    "Domain",
    "Model",
    "Scope",
    "SensitiveNull",
    "Values",
    "check_attribute",
    "check_fraction",
    "check_model_roles",
    "check_models",
    "check_positive",
]

Scope = Literal["class", "table"]
SensitiveNull = Literal["error", "value", "ignore"]
SENSITIVE_NULLS = ("error", "value", "ignore")
"""How a model reads nulls in its sensitive attribute (``sensitive_null``), see :class:`Values`."""
TOLERANCE = 1e-12
"""Relative slack on thresholds compared with floating-point measures (an entropy of exactly log l passes)."""


@dataclass(frozen=True)
class Domain:
    """A sensitive attribute over the input: its values (code = position) and their overall shares."""

    attribute: str
    labels: pl.Series
    overall: np.ndarray
    """Share of the input's rows holding each value (sums to 1)."""
    nulls: int = 0
    """Rows whose value is null (the checked table's; the reference's when only it holds nulls)."""

    @property
    def m(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class Context:
    """What the checks need of the whole input, computed once."""

    domains: Mapping[str, Domain]
    n_rows: int
    hierarchies: Mapping[str, Any] = None  # type: ignore[assignment]
    """Hierarchies of sensitive attributes (hierarchical t-closeness), by attribute."""
    road: Road = "python"
    """How the run was asked (:attr:`~polars_anon.request.Request.road`): spells a refusal's way out."""

    def domain(self, attribute: str) -> Domain:
        return self.domains[attribute]


@dataclass(frozen=True)
class ClassView:
    """Statistics of n classes: the checks' only input."""

    size: np.ndarray
    """(n,) rows per class."""
    counts: Mapping[str, np.ndarray]
    """attribute -> (n, m) rows per class and sensitive value code."""
    population: np.ndarray | None = None
    """(n,) population rows per class (models given a population table)."""

    @property
    def n(self) -> int:
        return len(self.size)


class Check:
    """A model bound to the input; see the module docstring."""

    scope: Scope = "class"
    floor: int = 1
    """Table checks: a class of at least this many rows never needs suppressing."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def measure(self, view: ClassView) -> np.ndarray:
        """Per class, the model's measure (class checks)."""
        raise NotImplementedError

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        """Per class, whether it satisfies the model, from its measure (class checks)."""
        raise NotImplementedError

    def ok_one(self, size: int, counts: Mapping[str, np.ndarray]) -> bool:
        """Whether one class satisfies the model (class checks): `size` rows, `counts` its count per value code of
        each attribute (1-D). The verdict of :meth:`ok` on that one-class view; a check may answer with fewer steps
        (the greedy loop asks once per merge), from the same floats.
        """
        view = ClassView(np.array([size], dtype=np.int64), {a: c[None] for a, c in counts.items()})
        return bool(self.ok(view, self.measure(view))[0])

    def table_ok(self, size: np.ndarray, population: np.ndarray | None) -> bool:
        """Whether a table of classes of these sizes satisfies the model (table checks)."""
        raise NotImplementedError

    def prefix_ok(self, size: np.ndarray, population: np.ndarray | None) -> np.ndarray | None:
        """Table checks: for m = 0..n, whether the table holds once the first m of these classes are suppressed
        (the classes come in suppression order; m = n publishes nothing and holds), all at once; None when the
        check has no vectorized form (then :meth:`table_ok` is asked of each candidate suffix in turn)."""
        return None

    def table_measure(self, size: np.ndarray, population: np.ndarray | None) -> float:
        """The table's figure (table checks), for reports and messages."""
        raise NotImplementedError

    def infeasible(self, whole: float) -> str | None:
        """Why the model cannot be met when even the whole table as one class fails (None: it can)."""
        return None


class Model:
    """Base of every privacy model (a frozen dataclass); see the module docstring."""

    name: ClassVar[str]
    """The model's name in job files (``model = "l-diversity"``) and reports."""
    monotone: ClassVar[bool] = True
    monotone_suppression: ClassVar[bool] = False
    scope: ClassVar[Scope] = "class"
    quiet_defaults: ClassVar[tuple[str, ...]] = ()
    """Parameters :meth:`describe` leaves out while they hold their default (an option most users never set)."""
    uses_distribution: ClassVar[bool] = False
    """Whether classes are compared with an overall distribution of the attribute (t-closeness, β-likeness,
    δ-disclosure): its status then names the ``reference`` it was measured against."""

    @property
    def sensitive_attribute(self) -> str | None:
        """The sensitive attribute the model reads (None for models of class sizes only)."""
        return getattr(self, "attribute", None)

    @property
    def needs_population_table(self) -> bool:
        """True when the model compares classes with a population table (full-domain methods only)."""
        return False

    def relaxed(self, suppression: bool) -> Model | None:
        """A model this one implies that is monotone (with suppression when `suppression`): the model itself when it
        is, None when no such model is known. A search prunes on it where the model is not monotone
        (:meth:`~polars_anon.privacy.constraints.Constraints.monotone_part`)."""
        return self if (self.monotone_suppression if suppression else self.monotone) else None

    @property
    def population_frame(self) -> Any:
        return None

    def bind(self, context: Context) -> Check:
        raise NotImplementedError

    def describe(self) -> str:
        """A one-line name with its parameters, for messages and reports."""
        shown = {
            f.name: getattr(self, f.name)
            for f in fields(self)  # pyright: ignore[reportArgumentType]  (every concrete model is a @dataclass)
            if f.name not in ("attribute", "population", "hierarchy")
            and not (f.name in self.quiet_defaults and getattr(self, f.name) == f.default)
        }
        params = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v is not None)
        on = f" on {self.sensitive_attribute!r}" if self.sensitive_attribute is not None else ""
        return f"{self.name}{on} ({params})" if params else f"{self.name}{on}"

    def summary(self) -> dict[str, Any]:
        """The model as the report shows it (population tables as their row count)."""
        out: dict[str, Any] = {"model": self.name}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name == "population" and value is not None:
                value = "table"
            elif f.name == "hierarchy" and value is not None:
                value = "given"
            out[f.name] = value
        return out


def check_models(value: object, what: str = "privacy") -> list[Model]:
    """The privacy models given as the parameter `what`: one model or a list of them, else the error naming the
    parameter (or the entry) and what was received. The one check of ``anonymize(privacy=)``, ``check(privacy=)`` and
    ``risk(models=)`` (a string or None reached ``model.sensitive_attribute`` raw).

    >>> check_models(None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: privacy must be a list of privacy models (pa.LDiversity(...), ...), got \
NoneType
    """
    if isinstance(value, Model):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise InvalidParameterError(
            f"{what} must be a list of privacy models (pa.LDiversity(...), ...), got {type(value).__name__}"
        )
    for i, model in enumerate(value):
        if not isinstance(model, Model):
            raise InvalidParameterError(
                f"{what}[{i}] must be a privacy model such as pa.LDiversity('salary', l=2), got {type(model).__name__}"
            )
    return list(value)


def check_attribute(where: str, value: object) -> None:
    """A model's sensitive attribute: one column name (a string), else the error naming the model (`where`) and the
    value received (None or a list reached the checks' column lookups raw).

    >>> check_attribute("l-diversity", None)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: l-diversity: attribute must be a column name (a string), got None
    """
    if not isinstance(value, str):
        raise InvalidParameterError(f"{where}: attribute must be a column name (a string), got {value!r}")


def _finite(value: object) -> float | None:
    """`value` as a finite float; None when it is no number (a bool is none), NaN, infinite, or an integer too large
    for a float (``float(2**1030)`` raises OverflowError). A NumPy number is a number (``np.int64(3)``, as
    :func:`~polars_anon._validate.is_integer` says of an integer).

    >>> _finite(2), _finite(2**1030), _finite(True), _finite(float("inf")), _finite(np.int64(3))
    (2.0, None, None, None, 3.0)
    """
    if not (is_integer(value) or isinstance(value, (float, np.floating))):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def check_positive(
    model: str, key: str, value: object, *, at_least: float = 0.0, strict: bool = True, integer: bool = False
) -> None:
    """Refuse a parameter that is not a finite number above `at_least` (or at least it, `strict=False`).

    >>> check_positive("dp", "epsilon", 2**1030)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: dp: epsilon must be a number > 0 and at most 1.8e+308, got ...
    """
    v = _finite(value)
    if v is None or (integer and not v.is_integer()) or (v <= at_least if strict else v < at_least):
        kind = "an integer" if integer else "a number"
        bound = f"> {at_least:g}" if strict else f">= {at_least:g}"
        if is_integer(value) and value > at_least:  # a float cannot hold it
            bound += f" and at most {sys.float_info.max:.2g}"
        raise InvalidParameterError(NOT_POSITIVE(where=model, key=key, kind=kind, bound=bound, value=value))


def check_fraction(model: str, key: str, value: object, *, low_open: bool = False, high_open: bool = False) -> None:
    """Refuse a parameter outside [0, 1] (or (0, 1], [0, 1) ... as the flags say)."""
    v = _finite(value)
    ok = v is not None and (v > 0 if low_open else v >= 0) and (v < 1 if high_open else v <= 1)
    if not ok:
        interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
        raise InvalidParameterError(NOT_FRACTION(where=model, key=key, interval=interval, value=value))


def check_model_roles(
    models: Sequence[Model], qids: Sequence[str], insensitive: Sequence[str] = (), drop: Sequence[str] = ()
) -> None:
    """A privacy model reads a sensitive column: not a quasi-identifier, nor one declared insensitive or dropped.

    >>> from polars_anon.privacy import LDiversity
    >>> check_model_roles([LDiversity("age", l=2)], ["age"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: l-diversity on 'age': attribute 'age' is a quasi-identifier; ...
    """
    for model in models:
        attribute = model.sensitive_attribute
        if attribute is None:
            continue
        for role, names in (("a quasi-identifier", qids), ("declared insensitive", insensitive), ("in drop", drop)):
            if attribute in names:
                where = f"{model.name} on {attribute!r}"
                raise InvalidParameterError(ATTRIBUTE_ROLE(where=where, attribute=attribute, role=role))


class Values:
    """A model's reading of its sensitive attribute under its null policy (``sensitive_null``), the same for
    every model that reads one (l-diversity, t-closeness, β-likeness, δ-disclosure):

    - ``"error"`` (the default): a null in the attribute is refused, naming the column and the count
      (:class:`~polars_anon.errors.NullValueError`); nothing is guessed about what a null means;
    - ``"value"``: null is one more value, counted like any other (in the class and in the table's
      distribution; hierarchical t-closeness then refuses it, as no hierarchy has a null leaf);
    - ``"ignore"``: null rows are left out of the attribute: each class is judged on its non-null
      values and compared with the table's non-null distribution. A class with no non-null value
      shows nothing to judge and fails every such model (measure 0 for distinct and entropy
      l-diversity, infinite for the others), so merging it into a satisfying class still satisfies.

    >>> import polars as pl
    >>> d = Domain("s", pl.Series(["x", "y", None]), np.array([0.5, 0.25, 0.25]), 1)
    >>> from types import SimpleNamespace
    >>> v = Values(SimpleNamespace(attribute="s", name="l-diversity", sensitive_null="ignore"), Context({"s": d}, 4))
    >>> v.labels.to_list(), v.overall.tolist()
    (['x', 'y'], [0.6666666666666666, 0.3333333333333333])
    >>> v.counts(ClassView(np.array([4]), {"s": np.array([[2, 0, 2]])})).tolist()
    [[2, 0]]
    """

    def __init__(self, model: Any, context: Context | None) -> None:
        self.attribute: str = model.attribute
        self.keep: np.ndarray | None = None
        if context is None:  # a model bound without the input (doctests): no value is known to be null
            self.labels, self.overall = pl.Series([]), np.zeros(0)
            return
        domain = context.domain(self.attribute)
        self.labels, self.overall = domain.labels, domain.overall
        null = domain.labels.is_null().to_numpy()
        if not null.any() or model.sensitive_null == "value":
            return
        if model.sensitive_null == "error":
            where = f"{model.name} on {self.attribute!r}"
            ways = {w: setting("sensitive_null", w, context.road) for w in ("ignore", "value")}
            raise NullValueError(SENSITIVE_NULL(where=where, attribute=self.attribute, n=domain.nulls, **ways))
        self.keep = np.flatnonzero(~null)
        kept = domain.overall[self.keep]
        self.labels = domain.labels.filter(pl.Series(~null))
        self.overall = kept / kept.sum() if kept.sum() > 0 else kept

    @property
    def m(self) -> int:
        """Values read (nulls left out under ``"ignore"``)."""
        return len(self.labels)

    def counts(self, view: ClassView) -> np.ndarray:
        """(n, m) rows per class and value read."""
        counts = view.counts[self.attribute]
        return counts if self.keep is None else counts[:, self.keep]

    def shares(self, view: ClassView) -> tuple[np.ndarray, np.ndarray]:
        """(n, m) share of each value read in each class, and (n,) whether the class holds any value read."""
        counts = self.counts(view).astype(np.float64)
        total = counts.sum(axis=1)
        return counts / np.maximum(total, 1)[:, None], total > 0


def check_null_policy(where: str, value: object) -> None:
    """Refuse a ``sensitive_null`` outside :data:`SENSITIVE_NULLS`."""
    from polars_anon._validate import check_choice

    check_choice(f"{where}: sensitive_null", value, SENSITIVE_NULLS)
