"""l-diversity: distinct, entropy and recursive (c, l) [Machanavajjhala et al. 2007].

Per class, with r_1 >= r_2 >= ... the counts of its sensitive values:

- **distinct**: the class holds at least l distinct values;
- **entropy**: ``-sum p log p >= log l`` (natural log; the measure reported is
  ``exp(entropy)``, the class's "effective l"); ``estimator="grassberger"`` uses
  Grassberger's bias-corrected estimate instead (:func:`grassberger_entropy`, as ARX);
- **recursive (c, l)**: ``r_1 < c (r_l + r_(l+1) + ... + r_m)``, and at least l values
  (the measure reported is ``r_1 / (r_l + ... + r_m)``, infinite with fewer than l values).

All three are monotone under generalization (merging two l-diverse classes gives
an l-diverse class), entropy l-diversity with Grassberger's estimator excepted (see
:attr:`LDiversity.monotone`); only distinct l-diversity is monotone with suppression
(ARX's flags: merging a diverse class with a non-diverse one may lose entropy).

>>> import numpy as np
>>> from polars_anon.privacy.base import ClassView
>>> view = ClassView(np.array([4, 4]), {"s": np.array([[2, 2, 0], [3, 1, 0]])})
>>> LDiversity("s", l=2, variant="entropy").bind(None).measure(view).round(3).tolist()
[2.0, 1.755]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from polars_anon._validate import check_choice
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import VARIANT_PARAMETER
from polars_anon.privacy.base import (
    TOLERANCE,
    Check,
    ClassView,
    Context,
    Model,
    SensitiveNull,
    Values,
    check_attribute,
    check_null_policy,
    check_positive,
)

__all__ = ["LDiversity", "entropy", "grassberger_entropy", "grassberger_g"]

VARIANTS = ("distinct", "entropy", "recursive")


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of counts (0 log 0 = 0).

    >>> entropy(np.array([[1, 1], [2, 0]])).round(6).tolist()
    [0.693147, 0.0]
    """
    c = counts.astype(np.float64)
    n = c.sum(axis=1, keepdims=True)
    p = np.divide(c, n, out=np.zeros_like(c), where=n > 0)
    logp = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logp).sum(axis=1) + 0.0  # no -0.0


ESTIMATORS = ("shannon", "grassberger")
_S1, _S2, _S3 = 1 / 24, 7 / 960, 31 / 8064


def grassberger_g(n: np.ndarray) -> np.ndarray:
    """Grassberger's correction term G_n as ARX computes it (``EntropyLDiversity.EntropyEstimator``).

    ``G_n = psi(n) + (-1)^n / 2 (psi((n + 1) / 2) - psi(n / 2))`` [Grassberger 2003, eq. 30], taken
    at the even number below an odd n > 1 (ARX's table holds G_1 and even n up to 100); above 100
    ARX's expansion ``log n + m (1/24 - m (7/960 - m 31/8064))``, m = 1 / (n/2)^2.

    >>> grassberger_g(np.array([1, 2, 3, 4, 101])).round(10).tolist()
    [-1.2703628455, 0.7296371545, 0.7296371545, 1.3963038212, 4.6051868515]
    """
    from scipy.special import digamma

    n = np.asarray(n, dtype=np.int64)
    even = np.where(n > 1, n - n % 2, 1).astype(np.float64)
    sign = np.where(even % 2 == 0, 1.0, -1.0)
    small = digamma(even) + sign / 2 * (digamma((even + 1) / 2) - digamma(even / 2))
    m = 1.0 / (np.maximum(np.floor(even / 2), 1.0) ** 2)
    large = np.log(even) + m * (_S1 - m * (_S2 - m * _S3))
    return np.where(n <= 100, small, large)


def grassberger_entropy(counts: np.ndarray) -> np.ndarray:
    """Grassberger's entropy estimate (nats) of each row: ``G_N - sum_i (n_i / N) G_(n_i)`` (ARX's reading).

    >>> grassberger_entropy(np.array([[1, 1], [2, 2]])).round(6).tolist()
    [2.0, 0.666667]
    """
    c = np.asarray(counts, dtype=np.int64)
    n = c.sum(axis=1)
    terms = np.where(c > 0, c * grassberger_g(np.maximum(c, 1)), 0.0).sum(axis=1)
    return np.where(n > 0, grassberger_g(np.maximum(n, 1)) - terms / np.maximum(n, 1), 0.0)


@dataclass(frozen=True)
class LDiversity(Model):
    """l-diversity of `attribute` (see the module docstring); `c` only for ``variant="recursive"``."""

    quiet_defaults = ("estimator", "sensitive_null")
    attribute: str
    l: float
    variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: float | None = None
    estimator: Literal["shannon", "grassberger"] = "shannon"
    """Entropy variant: the plug-in (Shannon) entropy, or Grassberger's corrected estimate (as ARX's
    ``EntropyEstimator.GRASSBERGER``; then a class also needs at least ceil(l) distinct values, as ARX)."""
    sensitive_null: SensitiveNull = "error"
    """Nulls in `attribute`: refused (``"error"``), one more value (``"value"``) or left out (``"ignore"``);
    see :class:`~polars_anon.privacy.base.Values`."""

    name: ClassVar[str] = "l-diversity"

    def __post_init__(self) -> None:
        check_attribute(self.name, self.attribute)
        where = f"l-diversity on {self.attribute!r}"
        check_choice(f"{where}: variant", self.variant, VARIANTS)
        check_positive(where, "l", self.l, at_least=1, strict=False, integer=self.variant != "entropy")
        if self.variant == "recursive":
            check_positive(where, "c", self.c)
        elif self.c is not None:
            raise InvalidParameterError(
                VARIANT_PARAMETER(where=where, key="c", needs="recursive", value=self.c, variant=self.variant)
            )
        check_choice(f"{where}: estimator", self.estimator, ESTIMATORS)
        check_null_policy(where, self.sensitive_null)
        if self.estimator != "shannon" and self.variant != "entropy":
            raise InvalidParameterError(
                VARIANT_PARAMETER(
                    where=where, key="estimator", needs="entropy", value=self.estimator, variant=self.variant
                )
            )

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        """Not with Grassberger's estimator: two classes {x, y} each estimate exp(2.0) = 7.4 "effective values",
        merged {x, x, y, y} only exp(0.67) = 1.9 (the bias correction shrinks as classes grow; ARX
        declares it monotone and may miss the optimum)."""
        return self.estimator == "shannon"

    @property
    def monotone_suppression(self) -> bool:  # type: ignore[override]
        return self.variant == "distinct"

    def bind(self, context: Context | None) -> Check:
        return _DiversityCheck(self, context)


class _DiversityCheck(Check):
    model: LDiversity

    def __init__(self, model: LDiversity, context: Context | None) -> None:
        super().__init__(model)
        self.values = Values(model, context)

    def counts(self, view: ClassView) -> np.ndarray:
        """(n, m) counts of the values read: none when every value is null and ignored (every class then fails)."""
        return self.values.counts(view)

    def measure(self, view: ClassView) -> np.ndarray:
        counts = self.counts(view)
        variant = self.model.variant
        if variant == "distinct":
            return (counts > 0).sum(axis=1).astype(np.float64)
        if variant == "entropy":
            held = counts.sum(axis=1) > 0  # a class without a value read (all null, ignored) has none
            if self.model.estimator == "grassberger":
                return np.where(held, np.exp(grassberger_entropy(counts)), 0.0)
            return np.where(held, np.exp(entropy(counts)), 0.0)
        if not counts.shape[1]:  # no value read anywhere: r_1 / 0, fails
            return np.full(len(counts), np.inf)
        ordered = -np.sort(-counts, axis=1)
        lv = int(self.model.l)
        tail = (
            ordered[:, lv - 1 :].sum(axis=1).astype(np.float64) if lv - 1 < counts.shape[1] else np.zeros(len(counts))
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tail > 0, ordered[:, 0] / np.where(tail > 0, tail, 1), np.inf)
        return ratio

    def ok_one(self, size: int, counts: Mapping[str, np.ndarray]) -> bool:
        if self.model.variant != "distinct":
            return super().ok_one(size, counts)
        c = counts[self.model.attribute]
        if self.values.keep is not None:
            c = c[self.values.keep]
        return int(np.count_nonzero(c)) >= self.model.l  # the distinct values (measure) against l (ok)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        m = self.model
        if m.variant == "distinct":
            return measure >= m.l
        if m.variant == "entropy":
            good = measure >= m.l * (1 - TOLERANCE)
            if m.estimator == "grassberger":
                good &= (self.counts(view) > 0).sum(axis=1) >= math.ceil(m.l)
            return good
        return measure < m.c  # type: ignore[operator]

    def infeasible(self, whole: float) -> str | None:
        m = self.model
        if m.variant == "distinct":
            return (
                f"the table holds {int(whole)} distinct values of {m.attribute!r}; "
                f"the largest l that can be met is {int(whole)}"
            )
        if m.variant == "entropy":
            best = math.floor(whole * (1 + TOLERANCE) * 1e6) / 1e6
            return (
                f"the whole table has entropy log({best:g}) in {m.attribute!r}; "
                f"the largest l that can be met is {best:g}"
            )
        if not math.isfinite(whole):
            return f"the table holds fewer than l={int(m.l)} distinct values of {m.attribute!r}; lower l"
        return f"over the whole table r_1 / (r_l + ... + r_m) = {whole:.6g}; c must be larger than that (or lower l)"
