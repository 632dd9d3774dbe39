"""Re-identification risk as constraints: prosecutor, journalist and marketer risk, population uniqueness.

A record's risk is the chance an adversary who knows its quasi-identifiers picks
it out [El Emam; ARX's ``RiskModelSampleSummary``]:

- **prosecutor** (knows the person is in the table): ``1 / f`` with f its class size;
- **journalist** (knows the person is in the population): ``1 / F`` with F the
  class's population count (a population table), or f without one (as ARX);
- **marketer** (re-identifies as many records as possible): the expected share
  re-identified, ``sum_classes f / F / n`` (``n_classes / n`` without a population).

``Risk(attacker, highest=..., average=..., threshold=..., share=...)`` bounds the
highest record risk, the average, and the share of records whose risk exceeds
`threshold`. ``AverageRisk(t)`` is ``Risk("prosecutor", average=t)`` (ARX's
average re-identification risk: the mean of 1/|class|). A bound on the highest
risk alone is a class constraint (every class of at least ``1 / highest`` records);
the others are table constraints (see :mod:`polars_anon.privacy.base`).
``PopulationUniqueness(t, sampling_fraction=...)`` bounds the estimated share of
population-unique records (:mod:`polars_anon.privacy.uniqueness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from polars_anon._validate import check_choice
from polars_anon.errors import InvalidParameterError
from polars_anon.privacy.base import TOLERANCE, Check, ClassView, Context, Model, Scope, check_fraction
from polars_anon.privacy.presence import (
    POPULATION_FIELD,
    WithPopulation,
    check_population,
    check_population_args,
    population_size,
)
from polars_anon.privacy.uniqueness import ESTIMATORS, estimate

__all__ = ["AverageRisk", "PopulationUniqueness", "Risk", "record_risk", "risk_figures"]

ATTACKERS = ("prosecutor", "journalist", "marketer")
EXACT_UNIQUES = 256
"""Population uniqueness: up to this many sample uniques, every suppression prefix is estimated in turn."""


def record_risk(size: np.ndarray, population: np.ndarray | None, attacker: str) -> np.ndarray:
    """Per class, the risk of each of its records (marketer: f / F / f = 1 / F, averaged as ARX does)."""
    base = size if attacker == "prosecutor" or population is None else population
    return 1.0 / np.maximum(base, 1).astype(np.float64)


def risk_figures(size: np.ndarray, population: np.ndarray | None, attacker: str, threshold: float) -> dict[str, float]:
    """``highest``, ``lowest``, ``average`` and ``records_at_risk`` (share above `threshold`) of a table's classes.

    >>> risk_figures(np.array([1, 3]), None, "prosecutor", 0.5)
    {'highest': 1.0, 'lowest': 0.3333333333333333, 'average': 0.5, 'records_at_risk': 0.25}
    """
    size = np.asarray(size, dtype=np.float64)
    n = float(size.sum())
    if n == 0:
        return {"highest": 0.0, "lowest": 0.0, "average": 0.0, "records_at_risk": 0.0}
    risk = record_risk(size, population, attacker)
    if population is None:
        average = len(size) / n
    elif attacker == "journalist":
        average = max(len(size) / float(np.sum(population)), float((size / np.maximum(population, 1)).sum()) / n)
    else:
        average = float((size / np.maximum(population, 1)).sum()) / n
    return {
        "highest": float(risk.max()),
        "lowest": float(risk.min()),
        "average": float(average),
        "records_at_risk": float(size[risk > threshold].sum() / n),
    }


@dataclass(frozen=True)
class Risk(WithPopulation, Model):
    """Bounds on one attacker's re-identification risk (see the module docstring)."""

    attacker: Literal["prosecutor", "journalist", "marketer"] = "prosecutor"
    highest: float | None = None
    average: float | None = None
    threshold: float | None = None
    share: float | None = None
    population: Any = field(default=None, compare=False, metadata=POPULATION_FIELD)

    name: ClassVar[str] = "risk"
    monotone_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        where = f"risk ({self.attacker})"
        check_choice("risk: attacker", self.attacker, ATTACKERS)
        for key in ("highest", "average", "threshold"):
            if getattr(self, key) is not None:
                check_fraction(where, key, getattr(self, key), low_open=True)
        if self.share is not None:
            check_fraction(where, "share", self.share)
        if (self.threshold is None) != (self.share is None):
            raise InvalidParameterError(
                f"{where}: threshold and share go together (the share of records whose risk is above threshold)"
            )
        if self.highest is None and self.average is None and self.threshold is None:
            raise InvalidParameterError(f"{where}: give at least one bound: highest, average, or threshold with share")
        if self.attacker == "marketer" and (self.highest is not None or self.threshold is not None):
            raise InvalidParameterError("risk (marketer): marketer risk is an average; give average only")
        if self.population is not None:
            if self.attacker == "prosecutor":
                raise InvalidParameterError(
                    "risk (prosecutor): prosecutor risk needs no population table; leave population out"
                )
            check_population(where, self.population)

    @property
    def scope(self) -> Scope:  # type: ignore[override]
        return "class" if self.average is None and self.threshold is None else "table"

    def bind(self, context: Context) -> Check:
        return _RiskCheck(self)


@dataclass(frozen=True)
class AverageRisk(Model):
    """ARX's average re-identification risk: the mean of 1/|class| over records at most `threshold`.

    The same check as ``Risk("prosecutor", average=threshold)``.
    """

    threshold: float

    name: ClassVar[str] = "average-risk"
    scope: ClassVar[Scope] = "table"
    monotone_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_fraction("average-risk", "threshold", self.threshold, low_open=True)

    def bind(self, context: Context) -> Check:
        check = _RiskCheck(Risk("prosecutor", average=self.threshold))
        check.model = self
        return check


class _RiskCheck(Check):
    def __init__(self, model: Risk) -> None:
        super().__init__(model)
        self.risk = model
        self.scope = model.scope
        bounds = [
            b for b in (model.highest, model.average, model.threshold if model.share == 0 else None) if b is not None
        ]
        if model.threshold is not None and model.share is not None and model.share < 1:
            bounds.append(model.threshold)
        self.floor = math.ceil(1 / min(bounds) - TOLERANCE) if bounds else 1

    def measure(self, view: ClassView) -> np.ndarray:
        return record_risk(view.size, view.population, self.risk.attacker)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure <= self.risk.highest * (1 + TOLERANCE)  # type: ignore[operator]

    def table_ok(self, size: np.ndarray, population: np.ndarray | None) -> bool:
        m = self.risk
        fig = risk_figures(size, population, m.attacker, m.threshold if m.threshold is not None else 1.0)
        return (
            (m.highest is None or fig["highest"] <= m.highest * (1 + TOLERANCE))
            and (m.average is None or fig["average"] <= m.average * (1 + TOLERANCE))
            and (m.share is None or fig["records_at_risk"] <= m.share * (1 + TOLERANCE))
        )

    def prefix_ok(self, size: np.ndarray, population: np.ndarray | None) -> np.ndarray:
        """:meth:`table_ok` of every suffix at once (suffix sums of :func:`risk_figures`' terms)."""
        m = self.risk
        size = np.asarray(size, dtype=np.float64)
        count = len(size)

        def suffix(x: np.ndarray) -> np.ndarray:  # sums over classes m.., m = 0..count
            return np.concatenate([np.cumsum(x[::-1])[::-1], [0.0]])

        rows, classes = suffix(size), np.arange(count, -1, -1, dtype=np.float64)
        safe = np.maximum(rows, 1.0)
        risk = record_risk(size, population, m.attacker)
        ok = np.ones(count + 1, dtype=bool)
        if m.highest is not None:
            highest = np.concatenate([np.maximum.accumulate(risk[::-1])[::-1], [0.0]])
            ok &= highest <= m.highest * (1 + TOLERANCE)
        if m.average is not None:
            if population is None:
                average = classes / safe
            else:
                average = suffix(size / np.maximum(population, 1)) / safe
                if m.attacker == "journalist":
                    average = np.maximum(average, classes / np.maximum(suffix(population.astype(np.float64)), 1.0))
            ok &= average <= m.average * (1 + TOLERANCE)
        if m.share is not None:
            threshold = m.threshold if m.threshold is not None else 1.0
            ok &= suffix(np.where(risk > threshold, size, 0.0)) / safe <= m.share * (1 + TOLERANCE)
        ok[-1] = True
        return ok

    def table_measure(self, size: np.ndarray, population: np.ndarray | None) -> float:
        m = self.risk
        fig = risk_figures(size, population, m.attacker, m.threshold if m.threshold is not None else 1.0)
        return fig["average"] if m.average is not None else fig["records_at_risk"]

    def infeasible(self, whole: float) -> str | None:
        return f"even the whole table as one class has risk {whole:.6g}; the bound must be at least that"


@dataclass(frozen=True)
class PopulationUniqueness(Model):
    """The estimated share of population-unique records at most `threshold` (see the module docstring)."""

    threshold: float
    estimator: Literal["pitman", "zayatz", "snb", "dankar"] = "dankar"
    sampling_fraction: float | None = None
    population_size: int | None = None

    name: ClassVar[str] = "population-uniqueness"
    scope: ClassVar[Scope] = "table"
    monotone: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_fraction("population-uniqueness", "threshold", self.threshold)
        check_choice("population-uniqueness: estimator", self.estimator, ESTIMATORS)
        check_population_args("population-uniqueness", self.population_size, self.sampling_fraction)
        if self.population_size is None and self.sampling_fraction is None:
            raise InvalidParameterError("population-uniqueness: give sampling_fraction or population_size")

    def bind(self, context: Context) -> Check:
        return _UniquenessCheck(
            self, population_size("population-uniqueness", context.n_rows, self.population_size, self.sampling_fraction)
        )


class _UniquenessCheck(Check):
    model: PopulationUniqueness
    scope: Scope = "table"
    floor = 2

    def __init__(self, model: PopulationUniqueness, population: float) -> None:
        super().__init__(model)
        self.population = population

    def table_measure(self, size: np.ndarray, population: np.ndarray | None) -> float:
        sizes, counts = np.unique(np.asarray(size, dtype=np.int64), return_counts=True)
        return estimate(dict(zip(sizes.tolist(), counts.tolist())), self.population, self.model.estimator)

    def prefix_ok(self, size: np.ndarray, population: np.ndarray | None) -> np.ndarray:
        """Classes come smallest first, so the first prefixes remove sample uniques one at a time and the table
        holds once none is left. With at most :data:`EXACT_UNIQUES` sample uniques every prefix is tried in turn
        (the shortest that holds, exactly); with more, the estimates are not monotone in the uniques removed
        (SNB and Dankar's rule may hold, fail, then hold again; Pitman's likelihood may lose its solution once
        many uniques are gone, and Dankar's rule then falls back to Zayatz), so the prefix is found by a
        galloping search from the short end (1, 2, 4, ... uniques removed, until one holds) and bisection
        between the last that failed and that one: a few estimates, the shortest prefix wherever holding is
        monotone up to it, possibly more rows than the shortest elsewhere. (A bisection over all the uniques
        lands among long prefixes whose estimate fails and suppresses far more than needed: on Adult with
        Dankar's rule and threshold 1e-4, ARX's optimum [0, 0, 1, 1, 1, 2, 1, 0, 0] holds after 702 rows;
        bisection over its 4,703 uniques found 4,446, Pitman's alone 4,703.)"""
        size = np.asarray(size, dtype=np.int64)
        uniques = int(np.count_nonzero(size == 1))
        out = np.zeros(len(size) + 1, dtype=bool)
        if uniques <= EXACT_UNIQUES:
            for m in range(uniques + 1):
                if m == uniques or self.table_ok(size[m:], None):
                    out[m:] = True
                    return out
        lo, hi, step = 0, uniques, 1  # fails at lo (checked above: lo = 0 is tried first), holds at hi
        if self.table_ok(size, None):
            out[:] = True
            return out
        while step < uniques:
            if self.table_ok(size[step:], None):
                hi = step
                break
            lo, step = step, step * 2
        lo += 1  # lo failed: the answer is in (lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if self.table_ok(size[mid:], None):
                hi = mid
            else:
                lo = mid + 1
        out[lo:] = True
        return out

    def table_ok(self, size: np.ndarray, population: np.ndarray | None) -> bool:
        if not np.any(np.asarray(size) == 1):
            return True
        value = self.table_measure(size, population)
        return math.isfinite(value) and 0 < value <= self.model.threshold * (1 + TOLERANCE)
