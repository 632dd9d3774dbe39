"""null="suppress": a null quasi-identifier is published as its hierarchy's root, by every method."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from tests.examples import ANIMAL_HIERARCHIES, GENDER, RACE

ROWS = pl.DataFrame(
    {
        "gender": ["M", None, "F", "M", "F", "M", None, "F"],
        "race": ["cat", "lion", None, "dolphin", "whale", "dog", "wolf", None],
    }
)


@pytest.mark.parametrize("method", sorted(pa.METHODS))
def test_nulls_are_published_at_the_root(method):
    if method == "local_suppression":  # it publishes missing cells itself (wildcards): refused, capability table
        with pytest.raises(pa.InvalidParameterError, match="takes null='error' only"):
            pa.anonymize(ROWS, hierarchies=ANIMAL_HIERARCHIES, k=2, method=method, null="suppress")
        return
    out = pa.anonymize(ROWS, hierarchies=ANIMAL_HIERARCHIES, k=2, method=method, null="suppress").collect()
    assert out.height == ROWS.height  # the default budgets suppress nothing here
    assert out.null_count().row(0) == (0, 0)
    null_gender, null_race = ROWS["gender"].is_null(), ROWS["race"].is_null()
    if method == "mdav":  # values are permuted within each cluster [paper 004]: count the roots instead
        assert (out["gender"] == "*").sum() >= null_gender.sum()
        assert (out["race"] == RACE.root).sum() >= null_race.sum()
        return
    assert out.group_by("gender", "race").len()["len"].min() >= 2
    assert (out.filter(null_gender)["gender"] == "*").all()
    assert (out.filter(null_race)["race"] == RACE.root).all()


@pytest.mark.parametrize("method", sorted(pa.METHODS))
def test_nulls_are_refused_by_default(method):
    with pytest.raises(pa.NullValueError, match="'gender'"):
        pa.anonymize(ROWS, hierarchies=ANIMAL_HIERARCHIES, k=2, method=method)


SINGLE_CHILD = {  # the roots have one child: a null's leaf range is every leaf, as is the child's
    "zip": pa.Hierarchy.masking(["33101", "33102"]),  # ***** -> 3310* -> 33101, 33102
    "x": pa.Hierarchy.suppression(["a"]),  # * -> a
}


@pytest.mark.parametrize("method", ["fulldomain", "greedy", "topdown", "datafly", "mondrian"])
def test_a_null_under_a_root_with_one_child_is_published_at_the_root(method):
    """review21: topdown published a null zip as '3310*' and a null x as 'a' (values those rows never had): a
    class's node was the lowest common ancestor of its leaf ranges, and a root's range is its one child's."""
    df = pl.DataFrame(
        {
            "zip": ["33101", "33102", None, None, "33101", "33102", "33101", "33102"],
            "x": ["a", "a", None, None] + ["a"] * 4,
        }
    )
    out = pa.anonymize(df, hierarchies=SINGLE_CHILD, k=2, method=method, null="suppress").collect()
    nulls = df["zip"].is_null()
    assert out.filter(nulls).rows() == [("*****", "*"), ("*****", "*")]
    for was, got in zip(df.filter(~nulls).rows(), out.filter(~nulls).rows()):  # the others: their value or above
        assert got[0] in (was[0], "3310*", "*****") and got[1] in (was[1], "*")


@pytest.mark.parametrize("null", ["error", "suppress"])
@pytest.mark.parametrize("method", ["mdav", "mondrian"])
def test_nulls_in_a_qid_without_a_hierarchy_are_refused_on_the_road(method, null):
    """No root to publish them at: refused by the road's check of the data (MDAV crashed with a TypeError, comparing
    None with a String, whether the column was numbers or text)."""
    for x in ([1.0, 2.0, None, 4.0, None, 6.0], ["a", "b", None, "a", None, "b"]):
        df = pl.DataFrame({"x": x, "s": ["F", "M"] * 3})
        with pytest.raises(pa.NullValueError, match="column 'x' has 2 null values and no hierarchy"):
            pa.anonymize(df, qids=["x", "s"], hierarchies={"s": GENDER}, k=2, method=method, null=null)


def test_local_suppression_names_its_sdc_twin_for_nulls_without_a_hierarchy() -> None:
    """review31b: the road's null refusal (check_data) came before the method's own and said "give the qid a
    hierarchy", which leads to null='suppress', which local_suppression refuses: for it, the SDC function that reads
    nulls as wildcards is the way out (the method's own check, unreachable since, is gone)."""
    df = pl.DataFrame({"a": ["x", "y", None, "x", "y", "x"], "b": ["u"] * 6})
    with pytest.raises(pa.NullValueError) as refused:
        pa.anonymize(df, qids=["a", "b"], hierarchies={}, k=2, method="local_suppression")
    assert str(refused.value) == (
        "column 'a' has 1 null values and no hierarchy to publish them as its root; fill them, drop those rows, or use "
        "polars_anon.sdc.local_suppression, which reads them as wildcards"
    )
    with pytest.raises(pa.NullValueError, match="or give the qid a hierarchy$"):
        pa.anonymize(df, qids=["a", "b"], hierarchies={}, k=2, method="mondrian")
