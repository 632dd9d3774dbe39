"""Statistical disclosure control as statistics offices practise it (sdcMicro's toolkit), over Polars frames.

>>> import polars as pl
>>> from polars_anon import sdc
>>> sdc.frequencies(pl.LazyFrame({"a": [1, 1, 2]}), "a").collect()["fk"].to_list()
[2.0, 2.0, 1.0]
"""

from __future__ import annotations

from polars_anon.sdc.frequencies import Missing, frequencies, pattern_frequencies, wildcard_counts
from polars_anon.sdc.modrisk import ModelMethod, ModelRisk, model_risk
from polars_anon.sdc.perturbation import (
    NoiseMethod,
    add_noise,
    correlations,
    eigen_utility,
    il1s,
    invariant_matrix,
    invariant_pram,
    pram,
    rank_swap,
    resolve_seed,
)
from polars_anon.sdc.risk import (
    GlobalRisk,
    RiskMethod,
    benedetti_franconi,
    global_risk,
    household_risk,
    individual_risk,
)
from polars_anon.sdc.suda import Suda2Result, suda2
from polars_anon.sdc.suppression import SuppressionMethod, SuppressionResult, local_suppression, wildcard_fk

__all__ = [
    "GlobalRisk",
    "Missing",
    "ModelMethod",
    "ModelRisk",
    "NoiseMethod",
    "RiskMethod",
    "Suda2Result",
    "SuppressionMethod",
    "SuppressionResult",
    "add_noise",
    "benedetti_franconi",
    "correlations",
    "eigen_utility",
    "frequencies",
    "global_risk",
    "household_risk",
    "il1s",
    "individual_risk",
    "invariant_matrix",
    "invariant_pram",
    "local_suppression",
    "model_risk",
    "pattern_frequencies",
    "pram",
    "rank_swap",
    "resolve_seed",
    "suda2",
    "wildcard_counts",
    "wildcard_fk",
]
