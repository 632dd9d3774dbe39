"""Privacy models as constraints, their checks on any table, re-identification risk, and attacks.

Models (small frozen dataclasses; each module documents its definitions and readings):

========================  =====================================  ================  ==========
model                     class                                  monotone          scope
========================  =====================================  ================  ==========
l-diversity               :class:`LDiversity` (distinct,         yes (distinct:    class
                          entropy, recursive)                    also with supp.;
                                                                 Grassberger: no)
t-closeness               :class:`TCloseness` (equal, ordered,   yes               class
                          hierarchical)
delta-disclosure          :class:`DeltaDisclosure`               no                class
beta-likeness             :class:`BetaLikeness` (basic,          yes               class
                          enhanced)
delta-presence            :class:`DeltaPresence`                 dmin = 0 only     class
k-map                     :class:`KMap`                          yes (also supp.)  class
risk                      :class:`Risk` (prosecutor, journalist, yes (also supp.)  class/table
                          marketer)
average-risk              :class:`AverageRisk`                   yes (also supp.)  table
population-uniqueness     :class:`PopulationUniqueness`          no                table
differential-privacy      :class:`DifferentialPrivacy` (SafePub: yes (k)          class
                          sampling, full-domain, suppression)
========================  =====================================  ================  ==========

:class:`Constraints` enforces them inside every algorithm; :func:`check` verifies
any table against any set of them; :func:`risk` analyses a table's
re-identification risk. The one-number checks (:func:`homogeneity_rate`,
:func:`l_diversity`, :func:`t_closeness`) and the attacks (:func:`record_linkage`,
:func:`ml_inference`) keep their names here.
"""

from __future__ import annotations

from polars_anon.privacy.attacks import ml_inference, record_linkage
from polars_anon.privacy.base import ClassView, Model
from polars_anon.privacy.checks import homogeneity_rate, l_diversity, t_closeness
from polars_anon.privacy.closeness import TCloseness
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.differential import DifferentialPrivacy
from polars_anon.privacy.diversity import LDiversity
from polars_anon.privacy.likeness import BetaLikeness, DeltaDisclosure
from polars_anon.privacy.presence import DeltaPresence, KMap
from polars_anon.privacy.reidentification import AverageRisk, PopulationUniqueness, Risk

__all__ = [
    "MODELS",
    "AverageRisk",
    "BetaLikeness",
    "ClassView",
    "Constraints",
    "DeltaDisclosure",
    "DeltaPresence",
    "DifferentialPrivacy",
    "KMap",
    "LDiversity",
    "Model",
    "PopulationUniqueness",
    "Risk",
    "TCloseness",
    "homogeneity_rate",
    "l_diversity",
    "ml_inference",
    "record_linkage",
    "t_closeness",
]

MODELS: dict[str, type[Model]] = {
    m.name: m
    for m in (
        LDiversity,
        TCloseness,
        DeltaDisclosure,
        BetaLikeness,
        DeltaPresence,
        KMap,
        Risk,
        AverageRisk,
        PopulationUniqueness,
        DifferentialPrivacy,
    )
}
"""Every model by its job-file name (``model = "l-diversity"``)."""
