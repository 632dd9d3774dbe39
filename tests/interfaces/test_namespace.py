"""The .anon namespaces give what the module functions give, lazily and eagerly."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
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


def test_lazy_result_checks_the_rows_it_publishes_when_it_runs(tmp_path: Path) -> None:
    """The method ran on a, a, b, b (k = 2: the leaves); the file then holds a, a, a, b. The plan publishes b as a
    class of one row: the checked LazyFrame refuses it (whatever follows it in the query); the unchecked one does
    not."""
    hierarchies = {"q": pa.Hierarchy.suppression(["a", "b"])}
    path = tmp_path / "in.parquet"
    pl.DataFrame({"q": ["a", "a", "b", "b"]}).write_parquet(path)
    lazy = pl.scan_parquet(path).anon.k_anonymize(hierarchies=hierarchies, k=2)
    result = pa.anonymize(pl.scan_parquet(path), hierarchies=hierarchies, k=2)
    assert lazy.collect()["q"].to_list() == ["a", "a", "b", "b"]
    assert lazy.head(1).collect()["q"].to_list() == ["a"]  # the whole table checked, then sliced
    pl.DataFrame({"q": ["a", "a", "a", "b"]}).write_parquet(path)
    for query in (lazy, lazy.filter(pl.col("q") == "a"), lazy.head(1), result.lazy(), result.lf):
        with pytest.raises(pa.NotKAnonymousError, match="1 rows|smallest|k=2"):
            query.collect()
    with pytest.raises(pa.NotKAnonymousError):
        lazy.sink_parquet(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()
    assert result.lazy(verify=False).collect()["q"].to_list() == ["a", "a", "a", "b"]  # unchecked, as documented


def test_lazy_result_report_holds_the_check() -> None:
    result = pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive="id")
    assert "min_class_size" not in result.report
    rows = result.lazy().collect()
    assert result.report["min_class_size"] == rows.group_by(QIDS).len()["len"].min() >= 3
