"""Table-level risk models suppress single classes: the smallest first, as many as needed and no more.

Hand computations on class sizes (average prosecutor risk = kept classes / kept rows;
records at risk = rows in classes whose risk 1/size is above the threshold), and the
Adult figure of issue 26 (ARX's TestAnonymizationRiskBased, case 0).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.algorithms import Task
from polars_anon.algorithms.fulldomain import Lattice
from polars_anon.privacy.constraints import Constraints


def suppressed(sizes: list[int], model: pa.Model, class_of: list[int] | None = None) -> list[bool]:
    size = np.array(sizes)
    c = Constraints(size, 1, [model])
    return c.violating(np.arange(len(sizes)) if class_of is None else np.array(class_of)).tolist()


def test_average_risk_suppresses_one_singleton_where_one_suffices() -> None:
    """Sizes 1, 1, 1, 5, 5: risk 5/13 = 0.385 > 0.35; one singleton out: 4/12 = 0.333 (the old rule took all three)."""
    assert suppressed([1, 1, 1, 5, 5], pa.AverageRisk(0.35)) == [True, False, False, False, False]


def test_as_many_as_needed() -> None:
    """Sizes 1, 1, 2, 4 at 0.4: 4/8 = 0.5, 3/7 = 0.43, 2/6 = 0.33: two singletons; at 0.3 also the pair: 1/4."""
    assert suppressed([1, 1, 2, 4], pa.AverageRisk(0.4)) == [True, True, False, False]
    assert suppressed([1, 1, 2, 4], pa.AverageRisk(0.3)) == [True, True, True, False]


def test_ties_go_to_the_class_of_the_first_tuple() -> None:
    """Two classes of 2 tuples each, sizes 1 + 1 and 2; tuples 0..3 in sorted order; classes 0 = {1, 3}, 1 = {0},
    2 = {2}: the singletons are classes 1 and 2 (tuples 0 and 2), class 1 holds the first tuple and goes first."""
    sizes = [1, 1, 1, 1]  # per tuple
    c = Constraints(np.array(sizes), 1, [pa.AverageRisk(0.5)])
    # classes: 0 = tuples {1, 3} (2 rows), 1 = {0}, 2 = {2}: 3 classes / 4 rows = 0.75; one out: 2/3; two: 1/2
    assert c.violating(np.array([1, 0, 2, 0])).tolist() == [False, True, True]
    c = Constraints(np.array([1, 1, 1, 3]), 1, [pa.AverageRisk(0.5)])
    # classes 0 = {2}, 1 = {0}, 2 = {1}, 3 = {3}: 4/6; out class 1 (tuple 0): 3/5; out class 2 (tuple 1): 2/4
    assert c.violating(np.array([1, 2, 0, 3])).tolist() == [False, True, True, False]


def test_records_at_risk_share() -> None:
    """Sizes 1, 1, 1, 7 (10 rows), share of records in classes of one row <= 0.15: 3/10, 2/9, 1/8 = 0.125: two out."""
    model = pa.Risk("prosecutor", threshold=0.5, share=0.15)
    assert suppressed([1, 1, 1, 7], model) == [True, True, False, False]


def test_population_uniqueness_removes_singletons_one_at_a_time() -> None:
    """No sample unique: no population unique; the rule stops at the first prefix that holds (at most every
    singleton)."""
    model = pa.PopulationUniqueness(0.0, sampling_fraction=0.5)
    assert suppressed([1, 2, 1, 3], model) == [True, False, True, False]


def test_pipeline_publishes_the_kept_classes() -> None:
    """Through pa.anonymize (fulldomain at the bottom vector): the first of the three singletons goes."""
    t = pl.DataFrame({"q": ["a", "b", "c"] + ["d"] * 5 + ["e"] * 5})
    res = pa.anonymize(
        t,
        hierarchies={"q": pa.Hierarchy.suppression(list("abcde"))},
        k=1,
        max_suppressed=1,
        privacy=[pa.AverageRisk(0.35)],
    )
    out = res.collect()
    assert res.report["suppressed"] == 1 and sorted(set(out["q"])) == ["b", "c", "d", "e"]


@pytest.mark.slow
def test_adult_average_risk_needs_608_rows(adult: pl.DataFrame, adult_dir) -> None:
    """ARX's TestAnonymizationRiskBased case 0: average risk <= 0.01 on Adult's 9 columns at ARX's optimum
    (1, 0, 1, 1, 3, 2, 2, 1, 1): single classes, smallest first, need 608 rows (all classes of a size at once: 622)."""
    qids = [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
        "salary-class",
    ]
    hs = {q: pa.Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in qids}
    agg = adult.group_by(qids).len("size").with_columns(pl.col("size").cast(pl.UInt32)).sort(qids)
    c = Constraints(agg["size"].to_numpy(), 1, [pa.AverageRisk(0.01)])
    lat = Lattice(Task(agg, qids, hs, 1, constraints=c))
    assert lat.evaluate(np.array([1, 0, 1, 1, 3, 2, 2, 1, 1])).suppressed == 608


def test_grassberger_by_hand_and_not_monotone() -> None:
    """G_1 = -gamma - ln 2, G_2 = G_1 + 2, G_4 = G_2 + 2/3 [Grassberger 2003]. {x, y}: G_2 - G_1 = 2 (7.39 effective
    values); {x, x, y, y}: G_4 - G_2 = 2/3 (1.95): two classes that meet l = 2 merge into one that does not."""
    import math

    model = pa.LDiversity("s", l=2, variant="entropy", estimator="grassberger")
    assert not model.monotone and pa.LDiversity("s", l=2, variant="entropy").monotone
    table = pl.DataFrame({"q": ["a", "a", "b", "b", "b", "b"], "s": ["x", "y", "x", "x", "y", "y"]})
    got = pa.privacy.evaluate.class_measures(table, ["q"], model)
    assert got["measure"].to_list() == pytest.approx([math.exp(2.0), math.exp(2 / 3)])
    assert got["satisfied"].to_list() == [True, False]


def test_adult_population_uniqueness_finds_the_short_prefix(adult: pl.DataFrame, adult_dir) -> None:
    """ARX's TestAnonymizationRiskBased case 2 (Dankar's rule, threshold 1e-4, USA's population) at ARX's optimum
    (0, 0, 1, 1, 1, 2, 1, 0, 0): 4,703 sample uniques. Pitman's estimate falls as uniques go and holds after
    702 (the 701st still fails), then loses its solution for long prefixes (Dankar falls back to Zayatz, above
    the threshold) until 4,446: a bisection over all uniques ended there, beyond ARX's 1,206-row budget."""
    from polars_anon.privacy.base import Context

    qids = [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
        "salary-class",
    ]
    vector = [0, 0, 1, 1, 1, 2, 1, 0, 0]
    hs = {q: pa.Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in qids}
    g = adult.select(*(pl.col(q).anon.generalize(hs[q], lv) for q, lv in zip(qids, vector)))
    sizes = np.sort(g.group_by(qids).len()["len"].to_numpy())
    assert int((sizes == 1).sum()) == 4703
    check = pa.PopulationUniqueness(1e-4, population_size=317238626).bind(Context({}, int(sizes.sum())))
    holds = check.prefix_ok(sizes, None)
    assert int(np.argmax(holds)) == 702
    assert check.table_ok(sizes[702:], None) and not check.table_ok(sizes[701:], None)
    assert not check.table_ok(sizes[2500:], None)  # longer prefixes fail again (Pitman has no solution there)
