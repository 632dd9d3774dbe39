"""benchmarks/scorer.py against hand-computed losses: nodes, suppressed rows (missing or ``*``), numeric ranges."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from tests.benchmarks import script

scorer = script("scorer")

# age: leaves 20, 24, 30, 38 (data span 18 when all occur); two bands and a root
AGE = pa.Hierarchy.from_dict({"*": {"20-29": ["20", "24"], "30-39": ["30", "38"]}})
# job: 5 leaves, root "any" (nl - 1 = 4)
JOB = pa.Hierarchy.from_dict({"any": {"office": ["clerk", "manager"], "field": ["driver", "farmer", "miner"]}})
ORIG = pl.DataFrame({"age": ["20", "24", "30", "38"], "job": ["clerk", "manager", "driver", "miner"]})
HS = {"age": AGE, "job": JOB}


def test_leaves_and_ranges_by_hand() -> None:
    pub = pl.DataFrame({"age": ["20-29", "20-29", "30-39", "38"], "job": ["office", "office", "field", "any"]})
    s = scorer.score(ORIG, pub, ["age", "job"], HS)
    # loss: age cells 1/3, 1/3, 1/3, 0; job cells 1/4, 1/4, 2/4, 1 -> (1 + 2) / 8
    assert s[scorer.LOSS] == pytest.approx(3 / 8)
    # NCP: age as ranges over the span 18: 4/18, 4/18, 8/18, 0; job as above (2 of 8 cells sum to 2)
    assert s[scorer.NCP] == pytest.approx((16 / 18 + 2) / 8)
    # granularity (leaves under node / leaves): age 2/4, 2/4, 2/4, 1/4; job 2/5, 2/5, 3/5, 5/5
    assert s[scorer.GRANULARITY] == pytest.approx((7 / 4 + 12 / 5) / 8)
    assert s[scorer.SUPPRESSED] == 0


def test_suppressed_rows_missing_or_star_cost_one_per_cell() -> None:
    with_row = ORIG.with_row_index("r")
    pub = pl.DataFrame({"r": [0, 1], "age": ["20-29", "20-29"], "job": ["office", "office"]}).cast({"r": pl.UInt32})
    s = scorer.score(with_row, pub, ["age", "job"], HS, row="r")
    # rows 2, 3 missing: 4 cells at 1; rows 0, 1: age 1/3 each, job 1/4 each
    assert s[scorer.LOSS] == pytest.approx((4 + 2 / 3 + 1 / 2) / 8)
    assert s[scorer.NCP] == pytest.approx((4 + 8 / 18 + 1 / 2) / 8)
    assert s[scorer.SUPPRESSED] == 2
    # ARX's way: the same two rows written as "*" (the job root is "any": "*" is suppression, not a node)
    star = pl.DataFrame({"age": ["20-29", "20-29", "*", "*"], "job": ["office", "office", "*", "*"]})
    assert scorer.score(ORIG, star, ["age", "job"], HS) == s


def test_numeric_range_clipped_to_the_data_span() -> None:
    # the data holds 20, 24, 30 only: span 10; "30-39" holds 30..38, clipped to 30..30 -> 0; "20-29" -> 4/10
    orig = pl.DataFrame({"age": ["20", "24", "30"]})
    pub = pl.DataFrame({"age": ["20-29", "20-29", "30-39"]})
    s = scorer.score(orig, pub, ["age"], {"age": AGE})
    assert s[scorer.NCP] == pytest.approx((0.4 + 0.4 + 0) / 3)
    assert s[scorer.LOSS] == pytest.approx(1 / 3)  # every cell nl 2 -> 1/3


def test_numeric_detection_and_override() -> None:
    assert scorer.is_numeric(AGE) and not scorer.is_numeric(JOB)
    zip_ = pa.Hierarchy.from_dict({"*": {"331**": ["33101", "33199"]}})
    assert not scorer.is_numeric(zip_)
    pub = pl.DataFrame({"age": ["20-29", "20-29", "30-39", "38"], "job": ORIG["job"]})
    as_category = scorer.score(ORIG, pub, ["age", "job"], HS, numeric=[])
    assert as_category[scorer.NCP] == pytest.approx(as_category[scorer.LOSS])


def test_a_label_that_does_not_generalize_the_value_is_refused() -> None:
    pub = pl.DataFrame({"age": ["30-39", "20", "30", "38"], "job": ORIG["job"]})
    with pytest.raises(ValueError, match="'age'.*'30-39'.*'20'"):
        scorer.score(ORIG, pub, ["age", "job"], HS)


def test_the_same_rows_in_another_order_score_the_same_float() -> None:
    # ARX writes its rows in a different order on each run: the scorer's means must not move with it
    # (a pairwise sum over rows rounds differently per order: 1 to 2 ulps apart on Adult's DP releases)
    rng = np.random.default_rng(7)
    n = 300
    ages, jobs = AGE.leaf_labels, JOB.leaf_labels
    orig = pl.DataFrame({"age": rng.choice(ages, n), "job": rng.choice(jobs, n)})
    up = {"age": dict(zip(ages, ["20-29", "20-29", "30-39", "30-39"])), "job": {j: "field" for j in jobs[2:]}}
    up["job"].update({"clerk": "office", "manager": "office"})
    level = rng.integers(0, 3, (n, 2))  # 0: the value, 1: its parent, 2: the root
    pub = pl.DataFrame(
        {
            q: [v if lv == 0 else up[q][v] if lv == 1 else h.labels[0] for v, lv in zip(orig[q], level[:, i])]
            for i, (q, h) in enumerate(HS.items())
        }
    )
    first = scorer.score(orig, pub, ["age", "job"], HS)
    for seed in range(20):
        order = np.random.default_rng(seed).permutation(n)
        again = scorer.score(orig[order], pub[order], ["age", "job"], HS)
        assert again == first, seed
