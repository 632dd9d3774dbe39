"""The .anon namespaces give what the module functions give, lazily and eagerly."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

import polars_anon as pa
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I

QIDS = ["gender", "race"]


def test_lazy_and_eager_agree() -> None:
    lf, df = TABLE_I.lazy(), TABLE_I
    levels = {"race": 1}
    assert_frame_equal(
        lf.anon.generalize(ANIMAL_HIERARCHIES, levels).collect(), df.anon.generalize(ANIMAL_HIERARCHIES, levels)
    )
    assert_frame_equal(lf.anon.classes(QIDS).collect(), df.anon.classes(QIDS))
    assert_frame_equal(lf.anon.check(QIDS, 2).collect(), df.anon.check(QIDS, 2))
    assert_frame_equal(
        lf.anon.k_anonymize(hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive="id").collect(),
        df.anon.k_anonymize(hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive="id"),
    )
    assert_frame_equal(
        df.anon.k_anonymize(hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive="id"),
        pa.anonymize(df, hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive="id").collect(),
    )


def test_expr_generalize_is_a_column_map() -> None:
    out = TABLE_I.select(pl.col("race").anon.generalize(ANIMAL_HIERARCHIES["race"], 1))
    assert out["race"].to_list() == ["felidae", "felidae", "canine", "cetaceans", "cetaceans", "cetaceans"]
    streamed = (
        TABLE_I.lazy().select(pl.col("race").anon.generalize(ANIMAL_HIERARCHIES["race"], 1)).collect(engine="streaming")
    )
    assert_frame_equal(out, streamed)


def test_check_facts() -> None:
    """race alone: cat, lion, dog, dolphin once, whale twice."""
    facts = TABLE_I.anon.check(["race"], 2).row(0, named=True)
    assert facts == {
        "k": 2,
        "min_class_size": 1,
        "n_classes": 5,
        "n_rows": 6,
        "violating_rows": 4,
        "k_anonymous": False,
    }
    assert TABLE_I.anon.check(QIDS, 1).row(0, named=True)["n_classes"] == 6
    hist = pa.class_size_histogram(TABLE_I.lazy(), ["race"]).collect()
    assert hist.rows() == [(1, 4, 4), (2, 1, 2)]
