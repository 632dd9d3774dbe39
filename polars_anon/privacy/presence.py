"""δ-presence [Nergiz et al. 2007] and k-map [El Emam and Dankar 2008]: classes against a population.

The published table is a sample (a research subset) of a population. A class's
*population count* is the number of population records whose quasi-identifiers
generalize to the class's published tuple.

- **δ-presence** (``DeltaPresence(population, dmin, dmax)``): the population table
  is given; every class's ``size / population count`` lies in ``[dmin, dmax]``, so
  an adversary who knows someone is in the population learns little about
  whether they are in the sample. Monotone under generalization only when
  ``dmin = 0``: generalizing merges classes and also brings in population records
  of tuples the sample lacks, so a class's ratio can only fall; it never rises
  above dmax, but it may fall below a positive dmin (so a search must not prune
  on it then, except on its dmax side: :meth:`DeltaPresence.relaxed`). Never
  monotone with suppression (a violating class merged with a good one may make
  both violate).
- **k-map** (``KMap(k, population=...)``): every class matches at least k
  population records. Without a population table, ``KMap(k, sampling_fraction=f)``
  (or ``population_size=N``, f = rows / N) derives, as ARX does, the sample class
  size k' that gives k-map with probability ``1 - significance`` under a Poisson
  (or zero-truncated Poisson) model of population class sizes with mean ``f k``;
  the check is then ``size >= min(k, k')``. Monotone (both flags).

A population table needs a method that publishes every population record the
same way as the sample (``fulldomain`` or ``datafly``: levels); other methods
are refused upfront, as ARX refuses local recoding for these models.

>>> KMap(10, sampling_fraction=0.01).derived_k(1000)
3
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl

from polars_anon._validate import check_choice, is_path
from polars_anon.errors import InvalidParameterError
from polars_anon.privacy.base import TOLERANCE, Check, ClassView, Context, Model, check_fraction, check_positive

__all__ = ["POPULATION_FIELD", "DeltaPresence", "KMap", "WithPopulation", "check_population", "population_size"]

ESTIMATORS = ("poisson", "zero-truncated-poisson")
POPULATION_FIELD = {"expects": "a LazyFrame, DataFrame or path of the population table"}
"""The metadata of a model's ``population`` field (what a job file's key expects)."""


def check_population(model: str, population: object) -> None:
    """A model's population table: a LazyFrame, DataFrame or file path (refused naming the model otherwise)."""
    if not (isinstance(population, (pl.LazyFrame, pl.DataFrame)) or is_path(population)):
        raise InvalidParameterError(
            f"{model}: population must be a LazyFrame, DataFrame or file path, got {type(population).__name__}"
        )


def population_size(model: str, n_rows: int, population_size: int | None, sampling_fraction: float | None) -> float:
    """The population size from one of `population_size` (>= rows) or `sampling_fraction` (rows / N)."""
    if population_size is not None:
        if population_size < n_rows:
            raise InvalidParameterError(
                f"{model}: population_size={population_size} is smaller than the table ({n_rows} rows); "
                "the population must contain the sample"
            )
        return float(population_size)
    return n_rows / float(sampling_fraction)  # type: ignore[arg-type]


def check_population_args(model: str, population_size: object, sampling_fraction: object) -> None:
    """At most one of the two; each in range."""
    if population_size is not None and sampling_fraction is not None:
        raise InvalidParameterError(f"{model}: give population_size or sampling_fraction, not both")
    if population_size is not None:
        check_positive(model, "population_size", population_size, integer=True)
    if sampling_fraction is not None:
        check_fraction(model, "sampling_fraction", sampling_fraction, low_open=True)


class WithPopulation:
    """A model that may compare classes with a population table (its ``population`` field)."""

    population: Any

    @property
    def needs_population_table(self) -> bool:
        return self.population is not None

    @property
    def population_frame(self) -> Any:
        return self.population


@dataclass(frozen=True)
class DeltaPresence(WithPopulation, Model):
    """(dmin, dmax)-presence against the population table `population` (see the module docstring)."""

    population: Any = field(compare=False, metadata=POPULATION_FIELD)
    dmin: float = 0.0
    dmax: float = 1.0

    name: ClassVar[str] = "delta-presence"

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        """Only with ``dmin = 0``: a generalized class gains population records of tuples the sample lacks, so
        its ratio may fall below a positive dmin where every part of it was above."""
        return self.dmin == 0

    def __post_init__(self) -> None:
        check_population("delta-presence", self.population)
        check_fraction("delta-presence", "dmin", self.dmin)
        check_fraction("delta-presence", "dmax", self.dmax)
        if self.dmin > self.dmax:
            raise InvalidParameterError(f"delta-presence: dmin={self.dmin!r} is above dmax={self.dmax!r}")

    def relaxed(self, suppression: bool) -> Model | None:
        """Without suppression, ``(0, dmax)``-presence: a ratio never rises when classes merge, so a vector with a
        class above dmax has one in each vector below (with suppression none: see the module docstring)."""
        if suppression:
            return None
        return self if self.dmin == 0 else replace(self, dmin=0.0)

    def bind(self, context: Context) -> Check:
        return _PresenceCheck(self)


class _PresenceCheck(Check):
    model: DeltaPresence

    def measure(self, view: ClassView) -> np.ndarray:
        assert view.population is not None
        return view.size / np.maximum(view.population, 1)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return (measure >= self.model.dmin * (1 - TOLERANCE)) & (measure <= self.model.dmax * (1 + TOLERANCE))

    def infeasible(self, whole: float) -> str | None:
        return f"the whole table is {whole:.6g} of the population; dmin <= {whole:.6g} <= dmax is needed at least"


@dataclass(frozen=True)
class KMap(WithPopulation, Model):
    """k-map (see the module docstring): a population table, or a population size or sampling fraction."""

    k: int
    population: Any = field(default=None, compare=False, metadata=POPULATION_FIELD)
    population_size: int | None = None
    sampling_fraction: float | None = None
    estimator: Literal["poisson", "zero-truncated-poisson"] = "poisson"
    significance: float = 0.01

    name: ClassVar[str] = "k-map"
    monotone_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_positive("k-map", "k", self.k, at_least=1, strict=False, integer=True)
        check_choice("k-map: estimator", self.estimator, ESTIMATORS)
        check_fraction("k-map", "significance", self.significance, high_open=True)
        given = [self.population is not None, self.population_size is not None, self.sampling_fraction is not None]
        if sum(given) != 1:
            raise InvalidParameterError(
                "k-map: give exactly one of population (a table), population_size or sampling_fraction"
            )
        if self.population is not None:
            check_population("k-map", self.population)
        check_population_args("k-map", self.population_size, self.sampling_fraction)

    def derived_k(self, n_rows: int) -> int:
        """The sample class size that gives k-map (estimated; ARX's KMap derivation)."""
        from scipy.special import gammaln, pdtr

        def pmf(c: int, lam: float) -> float:
            return math.exp(c * math.log(lam) - lam - float(gammaln(c + 1))) if lam > 0 else float(c == 0)

        f = n_rows / population_size("k-map", n_rows, self.population_size, self.sampling_fraction)
        lam, threshold = f * self.k, 1.0 - self.significance
        if self.estimator == "poisson":
            counter, value = 0, 0.0
            while value < threshold:
                value = float(pdtr(counter, lam))
                counter += 1
                if counter >= self.k:
                    break
            derived = counter + 1
        else:
            norm, counter, value = 1.0 - pmf(0, lam), 1, 0.0
            while value < threshold:
                value += pmf(counter, lam) / norm if norm > 0 else 1.0
                counter += 1
                if counter >= self.k:
                    break
            derived = counter
        return max(1, min(self.k, derived, n_rows))

    def bind(self, context: Context) -> Check:
        return _KMapCheck(self, None if self.population is not None else self.derived_k(context.n_rows))


class _KMapCheck(Check):
    model: KMap

    def __init__(self, model: KMap, derived: int | None) -> None:
        super().__init__(model)
        self.derived = derived

    def measure(self, view: ClassView) -> np.ndarray:
        if self.derived is None:
            assert view.population is not None
            return view.population.astype(np.float64)
        return view.size.astype(np.float64)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure >= (self.model.k if self.derived is None else self.derived)

    def infeasible(self, whole: float) -> str | None:
        return f"the whole population matches {int(whole)} records; the largest k that can be met is {int(whole)}"
