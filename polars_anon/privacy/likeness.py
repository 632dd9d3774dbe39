"""δ-disclosure privacy [Brickell and Shmatikov 2008] and β-likeness [Cao and Karras 2012].

With q_s the share of value s in a class and p_s its share in the input, over the
values the class holds (q_s > 0, as ARX and pycanon read it):

- **δ-disclosure**: ``|ln(q_s / p_s)| < δ`` for every value s the class holds (natural
  log, as the paper and pycanon; ARX uses log2). Read literally over every s of the
  domain, no class missing a value could meet it (``ln 0``); ARX
  (``DDisclosurePrivacy.isAnonymous``: the class's non-empty buckets) and pycanon
  (``aux_calculate_delta_disclosure``: the ratios ``> 0``) check the values the class
  holds, and so does this model. Measure: the largest ``|ln(q_s / p_s)|`` over those
  values. Not monotone: merging may bring in a rare value.
- **basic β-likeness**: ``(q_s - p_s) / p_s <= β`` for every value s the class holds
  (a value it lacks has a negative gain). Measure: the largest relative gain
  ``(q_s - p_s) / p_s``.
- **enhanced β-likeness**: ``(q_s - p_s) / p_s <= min(β, -ln p_s)``. Measure: the
  largest relative gain when every gain is within ``-ln p_s`` (then the class is
  enhanced β-like exactly for β at least that), else infinity.

β-likeness is monotone under generalization (a merged class's shares are weighted
averages), not with suppression (ARX's flags).

>>> import numpy as np
>>> from polars_anon.privacy.base import ClassView, Context, Domain
>>> ctx = Context({"s": Domain("s", pl.Series(["a", "b"]), np.array([0.5, 0.5]))}, 4)
>>> view = ClassView(np.array([4]), {"s": np.array([[3, 1]])})
>>> BetaLikeness("s", beta=1.0).bind(ctx).measure(view).tolist()
[0.5]

A class holding 'a' and 'b' but not 'c' is measured on 'a' and 'b' only (|ln 2| each), not ``ln 0`` for 'c':

>>> ctx = Context({"s": Domain("s", pl.Series(["a", "b", "c"]), np.array([0.25, 0.25, 0.5]))}, 8)
>>> d = DeltaDisclosure("s", delta=1.0).bind(ctx)
>>> view = ClassView(np.array([4]), {"s": np.array([[2, 2, 0]])})
>>> round(float(d.measure(view)[0]), 4), bool(d.ok(view, d.measure(view))[0])
(0.6931, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import polars as pl  # noqa: F401  (the doctests)

from polars_anon._validate import check_choice
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

__all__ = ["BetaLikeness", "DeltaDisclosure"]


@dataclass(frozen=True)
class DeltaDisclosure(Model):
    """δ-disclosure privacy of `attribute` (see the module docstring)."""

    attribute: str
    delta: float
    sensitive_null: SensitiveNull = "error"
    """Nulls in `attribute`: refused, one more value or left out; see :class:`~polars_anon.privacy.base.Values`."""

    name: ClassVar[str] = "delta-disclosure"
    quiet_defaults: ClassVar[tuple[str, ...]] = ("sensitive_null",)
    uses_distribution: ClassVar[bool] = True
    monotone: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_attribute(self.name, self.attribute)
        check_positive(f"delta-disclosure on {self.attribute!r}", "delta", self.delta)
        check_null_policy(f"delta-disclosure on {self.attribute!r}", self.sensitive_null)

    def bind(self, context: Context) -> Check:
        return _DisclosureCheck(self, context)


@dataclass(frozen=True)
class BetaLikeness(Model):
    """β-likeness of `attribute`, basic or enhanced (see the module docstring)."""

    attribute: str
    beta: float
    variant: Literal["basic", "enhanced"] = "basic"
    sensitive_null: SensitiveNull = "error"
    """Nulls in `attribute`: refused, one more value or left out; see :class:`~polars_anon.privacy.base.Values`."""

    name: ClassVar[str] = "beta-likeness"
    quiet_defaults: ClassVar[tuple[str, ...]] = ("sensitive_null",)
    uses_distribution: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_attribute(self.name, self.attribute)
        where = f"beta-likeness on {self.attribute!r}"
        check_choice(f"{where}: variant", self.variant, ("basic", "enhanced"))
        check_positive(where, "beta", self.beta)
        check_null_policy(where, self.sensitive_null)

    def bind(self, context: Context) -> Check:
        return _LikenessCheck(self, context)


class _Relative(Check):
    def __init__(self, model: DeltaDisclosure | BetaLikeness, context: Context) -> None:
        super().__init__(model)
        self.values = Values(model, context)
        self.p = self.values.overall

    def ratios(self, view: ClassView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n, m) q / p, the mask of values the class holds, and (n,) whether it holds any value read."""
        q, any_ = self.values.shares(view)
        with np.errstate(divide="ignore", invalid="ignore"):
            return q / self.p[None, :], q > 0, any_


class _DisclosureCheck(_Relative):
    model: DeltaDisclosure

    def measure(self, view: ClassView) -> np.ndarray:
        ratio, held, any_ = self.ratios(view)
        logs = np.abs(np.log(np.where(held, ratio, 1.0)))
        worst = logs.max(axis=1) if logs.shape[1] else np.zeros(view.n)
        return np.where(any_, worst, np.inf)  # no value read: nothing to judge, fails

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure < self.model.delta


class _LikenessCheck(_Relative):
    model: BetaLikeness

    def measure(self, view: ClassView) -> np.ndarray:
        ratio, held, any_ = self.ratios(view)
        gain = np.where(held, ratio - 1.0, -np.inf)
        worst = gain.max(axis=1) if gain.shape[1] else np.zeros(view.n)
        worst = np.maximum(worst, 0.0)
        if self.model.variant == "enhanced":
            over = (gain > self._caps()[None, :] * (1 + TOLERANCE)).any(axis=1)
            worst = np.where(over, np.inf, worst)
        return np.where(any_, worst, np.inf)  # no value read: nothing to judge, fails

    def _caps(self) -> np.ndarray:
        """Enhanced beta-likeness's cap on each value's gain, -ln p: none (inf) for a value no row holds (p = 0, every
        row of it suppressed), written out rather than left to a divide-by-zero warning."""
        caps = np.full(self.p.shape, np.inf)
        held = self.p > 0
        caps[held] = -np.log(self.p[held])
        return caps

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure <= self.model.beta * (1 + TOLERANCE)
