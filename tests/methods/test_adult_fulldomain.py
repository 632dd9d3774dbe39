"""Full-domain generalization on ARX Adult (skipped without ../shared/data)."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from tests.conftest import ADULT_QIDS
from tests.examples import is_truthful


@pytest.mark.parametrize("k", [2, 5, 10, 50])
def test_adult_fulldomain_is_k_anonymous_and_truthful(k: int, adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    res = pa.anonymize(adult, hierarchies=adult_hierarchies, k=k)
    out = res.collect()
    assert out.group_by(ADULT_QIDS).len()["len"].min() >= k
    assert out.height == adult.height and out["salary-class"].equals(adult["salary-class"])
    assert is_truthful(adult, out, adult_hierarchies)
    assert res.report["min_class_size"] >= k and res.report["suppressed"] == 0


def test_adult_fulldomain_optimum_is_minimal(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    """Lowering any one level of the chosen vector breaks 10-anonymity (the vector is minimal),
    and the reported loss equals the average cell NCP recomputed from the published labels."""
    res = pa.anonymize(adult, hierarchies=adult_hierarchies, k=10)
    out = res.collect()
    levels = res.report["details"]["levels"]
    for q in ADULT_QIDS:
        if levels[q] == 0:
            continue
        lower = levels | {q: levels[q] - 1}
        smaller = pa.generalize(adult.lazy(), adult_hierarchies, lower)
        assert not pa.is_k_anonymous(smaller, ADULT_QIDS, 10), q
    cells = 0.0
    for q, h in adult_hierarchies.items():
        leaves = dict(h.nodes.select("label", "leaves").iter_rows())
        cells += sum((leaves[v] - 1) / (h.n_leaves - 1) for v in out[q].to_list())
    assert cells / (adult.height * len(ADULT_QIDS)) == pytest.approx(res.report["loss"], abs=1e-12)


def test_adult_suppression_budget(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    res = pa.anonymize(adult, hierarchies=adult_hierarchies, k=10, max_suppressed=300)
    out = res.collect()
    assert 0 < res.report["suppressed"] <= 300 and out.height == adult.height - res.report["suppressed"]
    assert res.report["loss"] < pa.anonymize(adult, hierarchies=adult_hierarchies, k=10).report["loss"]
