"""l-diversity: distinct, entropy and recursive (c, l) [Machanavajjhala et al. 2007].

Per class, with r_1 >= r_2 >= ... the counts of its sensitive values:

- **distinct**: the class holds at least l distinct values;
- **entropy**: ``-sum p log p >= log l`` (natural log; the measure reported is
  ``exp(entropy)``, the class's "effective l");
- **recursive (c, l)**: ``r_1 < c (r_l + r_(l+1) + ... + r_m)``, and at least l values
  (the measure reported is ``r_1 / (r_l + ... + r_m)``, infinite with fewer than l values).

All three are monotone under generalization (merging two l-diverse classes gives
an l-diverse class); only distinct l-diversity is monotone with suppression (ARX's
flags: merging a diverse class with a non-diverse one may lose entropy).

>>> import numpy as np
>>> from polars_anon.privacy.base import ClassView
>>> view = ClassView(np.array([4, 4]), {"s": np.array([[2, 2, 0], [3, 1, 0]])})
>>> LDiversity("s", l=2, variant="entropy").bind(None).measure(view).round(3).tolist()
[2.0, 1.755]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from polars_anon._validate import check_choice
from polars_anon.errors import InvalidParameterError
from polars_anon.privacy.base import TOLERANCE, Check, ClassView, Context, Model, check_positive

__all__ = ["LDiversity", "entropy"]

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


@dataclass(frozen=True)
class LDiversity(Model):
    """l-diversity of `attribute` (see the module docstring); `c` only for ``variant="recursive"``."""

    attribute: str
    l: float
    variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: float | None = None

    name: ClassVar[str] = "l-diversity"

    def __post_init__(self) -> None:
        where = f"l-diversity on {self.attribute!r}"
        check_choice(f"{where}: variant", self.variant, VARIANTS)
        check_positive(where, "l", self.l, at_least=1, strict=False, integer=self.variant != "entropy")
        if self.variant == "recursive":
            check_positive(where, "c", self.c)
        elif self.c is not None:
            raise InvalidParameterError(
                f"{where}: c is a parameter of variant 'recursive' only, got c={self.c!r} with variant {self.variant!r}"
            )

    @property
    def monotone_suppression(self) -> bool:  # type: ignore[override]
        return self.variant == "distinct"

    def bind(self, context: Context | None) -> Check:
        return _DiversityCheck(self)


class _DiversityCheck(Check):
    model: LDiversity

    def measure(self, view: ClassView) -> np.ndarray:
        counts = view.counts[self.model.attribute]
        variant = self.model.variant
        if variant == "distinct":
            return (counts > 0).sum(axis=1).astype(np.float64)
        if variant == "entropy":
            return np.exp(entropy(counts))
        ordered = -np.sort(-counts, axis=1)
        lv = int(self.model.l)
        tail = (
            ordered[:, lv - 1 :].sum(axis=1).astype(np.float64) if lv - 1 < counts.shape[1] else np.zeros(len(counts))
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tail > 0, ordered[:, 0] / np.where(tail > 0, tail, 1), np.inf)
        return ratio

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        m = self.model
        if m.variant == "distinct":
            return measure >= m.l
        if m.variant == "entropy":
            return measure >= m.l * (1 - TOLERANCE)
        return measure < m.c  # type: ignore[operator]

    def infeasible(self, whole: float) -> str | None:
        m = self.model
        if m.variant == "distinct":
            return f"the table holds {int(whole)} distinct values of {m.attribute!r}; the largest l that can be met is {int(whole)}"
        if m.variant == "entropy":
            best = math.floor(whole * (1 + TOLERANCE) * 1e6) / 1e6
            return f"the whole table has entropy log({best:g}) in {m.attribute!r}; the largest l that can be met is {best:g}"
        if not math.isfinite(whole):
            return f"the table holds fewer than l={int(m.l)} distinct values of {m.attribute!r}; lower l"
        return f"over the whole table r_1 / (r_l + ... + r_m) = {whole:.6g}; c must be larger than that (or lower l)"
