"""null="suppress": a null quasi-identifier is published as its hierarchy's root, by every method."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from tests.examples import ANIMAL_HIERARCHIES, RACE

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
