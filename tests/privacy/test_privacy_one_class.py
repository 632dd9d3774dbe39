"""The one-class verdict (``Constraints.ok_one``, the greedy loop's check per merge) against the many-class one.

``ok_one`` takes its own steps for t-closeness and distinct l-diversity; on random counts, thresholds set at
a class's own measure (a tie) or a hair above or below, and nulls read or ignored, it must give the verdict of
``Constraints.ok`` on the one-class view (which the reports and the other algorithms read).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.privacy import LDiversity, TCloseness
from polars_anon.privacy.base import ClassView, Domain
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import SensitiveCounts

LABELS = ["a1", "a2", "b1", "b2", "b3", None]
TREE = pa.Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2", "b3"]}})


def _constraints(model, overall: np.ndarray, nulls: bool) -> Constraints:
    labels = pl.Series(LABELS if nulls else LABELS[:-1])
    m = len(labels)
    domain = Domain("s", labels, overall[:m] / overall[:m].sum(), int(nulls))
    rows = np.repeat(np.arange(2), m)
    counts = SensitiveCounts(domain, rows, np.tile(np.arange(m), 2), np.ones(2 * m, dtype=np.int64))
    return Constraints(np.array([m, m]), 1, [model], {"s": counts}, hierarchies={"s": TREE})


MODELS = st.sampled_from(
    [
        ("equal", False, "value"),
        ("ordered", False, "value"),
        ("hierarchical", False, "error"),
        ("equal", True, "ignore"),
        ("ordered", True, "value"),
        ("distinct", False, "value"),
        ("distinct", True, "ignore"),
    ]
)


def _model(kind: Any, nulls: Any, threshold: float) -> LDiversity | TCloseness:
    if kind == "distinct":
        return LDiversity("s", l=max(1, round(threshold)), sensitive_null=nulls)
    return TCloseness("s", t=min(max(threshold, 0.0), 1.0), distance=kind, sensitive_null=nulls)


@settings(max_examples=120, deadline=None)
@given(
    spec=MODELS,
    overall=st.lists(st.integers(1, 9), min_size=6, max_size=6),
    counts=st.lists(st.integers(0, 7), min_size=6, max_size=6),
    shift=st.sampled_from([0.0, 1e-13, -1e-13, 1e-9, -1e-9, 0.05]),
)
def test_ok_one_is_ok_of_one_class(spec, overall, counts, shift) -> None:
    kind, nulls, policy = spec
    m = 6 if nulls else 5
    c = np.array(counts[:m], dtype=np.int64)
    probe = _constraints(_model(kind, policy, 0.5 if kind != "distinct" else 1), np.array(overall, float), nulls)
    view = ClassView(np.array([int(c.sum())]), {"s": c[None]})
    measure = float(probe.class_checks[0].measure(view)[0])
    threshold = (measure if np.isfinite(measure) else 0.3) + shift  # at the class's own measure: a tie
    cons = _constraints(_model(kind, policy, threshold), np.array(overall, float), nulls)
    size = int(c.sum())
    assert cons.ok_one(size, {"s": c}) == bool(cons.ok(view)[0])
