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


_SIX = pl.DataFrame({"sex": ["F", "M"] * 3, "age": [1, 2, 3, 4, 5, 6], "x": [10, 20, 30, 40, 50, 60]})
_STEPS = {  # one step of a query on the published table; each a function of a LazyFrame
    "head": lambda lf, n: lf.head(n % 5),
    "tail": lambda lf, n: lf.tail(n % 5),
    "slice": lambda lf, n: lf.slice(n % 3, n % 4 + 1),
    "filter_x": lambda lf, n: lf.filter(pl.col("x") > 10 * (n % 6)),
    "filter_sex": lambda lf, n: lf.filter(pl.col("sex") == ("F" if n % 2 else "M")),
    "select": lambda lf, n: lf.select(["x"] if n % 2 else ["sex", "age"]),
    "row_index": lambda lf, n: lf.with_row_index().select("index"),
    "len": lambda lf, n: lf.select(pl.len()),
    "sort": lambda lf, n: lf.sort("x", descending=bool(n % 2)),
}

_LAST = {"select", "row_index", "len"}
"""The steps that drop columns: last in a chain."""


@pytest.mark.parametrize("seed", range(60))
def test_any_query_on_the_checked_frame_sees_what_it_sees_on_the_collected_table(seed: int) -> None:
    """review31b: the checked frame is a source that receives Polars' pushdowns; a slice before a filter
    (``head(3).filter(...)``) was applied after it (3 rows where 1 is due), and a query reading no column
    (``with_row_index().select("index")``) got no row. Each random chain of 1-3 steps must give on ``lazy()`` what it
    gives on ``collect()``, in memory and streaming."""
    import random

    rng = random.Random(seed)
    rows = sorted(set(_STEPS) - _LAST)  # steps that keep every column; the projections end a chain
    chain = [(rng.choice(rows), rng.randrange(12)) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.5:
        chain.append((rng.choice(sorted(_LAST)), rng.randrange(12)))
    if seed == 0:
        chain = [("head", 3), ("filter_x", 2)]  # the two cases as found
    elif seed == 1:
        chain = [("row_index", 0)]
    result = pa.anonymize(
        _SIX.lazy(), hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive=["age", "x"]
    )

    def query(lf: pl.LazyFrame) -> pl.LazyFrame:
        for name, n in chain:
            lf = _STEPS[name](lf, n)
        return lf

    expected = query(result.collect().lazy()).collect()
    for engine in ("in-memory", "streaming"):
        assert_frame_equal(query(result.lazy()).collect(engine=engine), expected, check_row_order=True)
