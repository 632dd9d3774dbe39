"""What the SDC risk figures measure (:class:`Measures`): the spec, apart from the figures
(:mod:`polars_anon.sdc.measures`), so that the capability table (:mod:`polars_anon.pipeline.capabilities`) reads
it and the figures consult the table without an import circle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from polars_anon._validate import check_choice, refuse_built_names
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import KEYS_EMPTY, model_needs_weight
from polars_anon.sdc.frequencies import FREQUENCY_COLUMNS, PATTERN_COLUMNS, Missing, check_alpha
from polars_anon.sdc.modrisk import MODEL_COLUMNS, ModelMethod
from polars_anon.sdc.risk import RISK_COLUMNS, RiskMethod
from polars_anon.sdc.suda import check_dis_fraction

__all__ = ["Measures", "check_model_weight"]


SUDA_COUNT = "n"
"""The column of the pattern counts the report's SUDA2 figures read (:mod:`polars_anon.sdc.measures`)."""

SDC_COLUMNS = tuple(dict.fromkeys((SUDA_COUNT, *PATTERN_COLUMNS, *FREQUENCY_COLUMNS, *RISK_COLUMNS, *MODEL_COLUMNS)))
"""The columns the report's SDC figures (``[sdc]``, :class:`Measures`) build beside the key
variables, one figure or another (with every ``__anon_*`` name): no key of theirs is named so. The union of the
single functions' own (each builds fewer and takes the others), so it never lags behind one of them.

>>> SDC_COLUMNS
('n', 'n_pattern', 'fk', 'Fk', 'risk', 'counts', 'weights', 'incl_prob', 'lambda')
"""


def check_model_weight(model: str | None, weight: str | None, command_line: bool = False) -> None:
    """Refuse the log-linear model risk (`model`) without sampling weights, naming the Python or job parameter or,
    `command_line`, the ``risk`` command's flags.

    >>> check_model_weight(None, None), check_model_weight("CE", "w")
    (None, None)
    """
    if model is not None and weight is None:
        raise InvalidParameterError(model_needs_weight(command_line))


@dataclass(frozen=True)
class Measures:
    """What to measure.

    Attributes
    ----------
    keys
        The categorical key variables (quasi-identifiers).
    weight
        Column of sampling weights (None: ``Fk = fk``, risk ``1/fk``).
    household
        Column of household ids: adds household risk.
    method
        Individual risk: ``"approx"`` (sdcMicro's default) or ``"exact"``.
    missing, alpha
        The reading of missing key values (:func:`polars_anon.sdc.frequencies.frequencies`).
    suda2
        Also run SUDA2 on the keys.
    dis_fraction
        SUDA2's sampling fraction for the DIS score.
    model, interactions
        Also the log-linear model risk (:func:`polars_anon.sdc.modrisk.model_risk`): the fit (``"default"``,
        ``"CE"``, ``"PML"``, ``"weightedLLM"``, ``"IPF"``) and its two-way interactions.
    """

    keys: tuple[str, ...]
    weight: str | None = None
    household: str | None = None
    method: RiskMethod = "approx"
    missing: Missing = "category"
    alpha: float = 1.0
    suda2: bool = False
    dis_fraction: float = 0.01
    model: ModelMethod | None = None
    interactions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.keys:
            raise InvalidParameterError(KEYS_EMPTY(what="sdc: keys"))
        if len(set(self.keys)) != len(self.keys):
            raise InvalidParameterError(f"sdc: keys name a column twice: {list(self.keys)}")
        refuse_built_names(self.keys, SDC_COLUMNS, "sdc: key", "the SDC figures use for their own columns")
        for name, value in (("weight", self.weight), ("household", self.household)):
            if value is not None and value in self.keys:
                raise InvalidParameterError(f"sdc: {name} column {value!r} is also a key; pass it once")
        check_choice("sdc: method", self.method, get_args(RiskMethod))
        check_choice("sdc: missing", self.missing, get_args(Missing))
        check_alpha(self.alpha, "sdc: alpha")
        check_dis_fraction(self.dis_fraction, "sdc: dis_fraction")
        if self.model is not None:
            check_choice("sdc: model", self.model, get_args(ModelMethod))
            check_model_weight(self.model, self.weight)
        elif self.interactions:
            raise InvalidParameterError("sdc: interactions are terms of the log-linear model; give model too")

    @property
    def columns(self) -> list[str]:
        """Every column the figures read."""
        return [*self.keys, *(c for c in (self.weight, self.household) if c is not None)]

    def describe(self) -> dict[str, Any]:
        """The settings as the report shows them."""
        return {
            "keys": list(self.keys),
            "weight": self.weight,
            "household": self.household,
            "method": self.method,
            "missing": self.missing,
            "alpha": float(self.alpha),
            "suda2": self.suda2,
            "model": self.model,
            "interactions": [list(i) for i in self.interactions],
        }
