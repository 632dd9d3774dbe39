"""Datafly [paper 003 Algorithm 1]: hand-computed runs, suppression modes, Adult."""

from __future__ import annotations

import polars as pl

import polars_anon as pa
from tests.conftest import ADULT_QIDS

# paper 003 Figure 2.5 (a)
FIG25 = pl.DataFrame({"zip": ["97385", "97412", "97492", "97365"], "age": [21, 21, 36, 36]})
FIG25_H = {"zip": pa.Hierarchy.masking(FIG25["zip"], 5), "age": pa.Hierarchy.intervals([21, 36], [20])}


def test_fig25_reaches_d_double_prime() -> None:
    """zip has 4 distinct values, age 2: zip -> 9738* ... (still 4), -> 973**/974** (2),
    then the tie 2 vs 2 goes to zip (first qid) -> 97***: classes (97***, 21) and
    (97***, 36) of 2 rows, Figure 2.5 (c) D''."""
    r = pa.anonymize(FIG25, hierarchies=FIG25_H, k=2, method="datafly", max_suppressed=0)
    assert r.collect().rows() == [("97***", "21"), ("97***", "21"), ("97***", "36"), ("97***", "36")]
    assert (
        r.report["details"]["levels"] == {"zip": 3, "age": 0}
        and r.report["details"]["rounds"] == 3
        and r.report["suppressed"] == 0
    )


def test_budget_suppresses_outlier() -> None:
    """g = a, a, b, b, c with k=2 and budget 1: already fine after removing the c row."""
    df = pl.DataFrame({"g": ["a", "a", "b", "c", "b"], "row": [0, 1, 2, 3, 4]})
    h = {"g": pa.Hierarchy.suppression(["a", "b", "c"])}
    r = pa.anonymize(df, hierarchies=h, insensitive="row", k=2, method="datafly", max_suppressed=1)
    out = r.collect()
    assert out.rows() == [("a", 0), ("a", 1), ("b", 2), ("b", 4)] and r.report["suppressed"] == 1


def test_default_budget_is_k() -> None:
    df = pl.DataFrame({"g": ["a", "a", "b", "c", "b"]})
    h = {"g": pa.Hierarchy.suppression(["a", "b", "c"])}
    r = pa.anonymize(df, hierarchies=h, k=2, method="datafly")
    assert r.report["details"]["max_suppressed"] == 2 and r.report["suppressed"] == 1


def test_suppress_to_root_needs_a_class_of_k() -> None:
    """Published as the root, the single c row would be a class of 1 < k: Datafly keeps
    generalizing until every row is '*' (nothing left to suppress)."""
    df = pl.DataFrame({"g": ["a", "a", "b", "c", "b"]})
    h = {"g": pa.Hierarchy.suppression(["a", "b", "c"])}
    r = pa.anonymize(df, hierarchies=h, k=2, method="datafly", max_suppressed=1, suppress="root")
    assert r.collect()["g"].to_list() == ["*"] * 5 and r.report["suppressed"] == 0
    df3 = pl.DataFrame({"g": ["a", "a", "b", "b", "c", "d"], "x": ["u"] * 6})
    h3 = {"g": pa.Hierarchy.suppression(["a", "b", "c", "d"]), "x": pa.Hierarchy.suppression(["u"])}
    r = pa.anonymize(df3, hierarchies=h3, k=2, method="datafly", max_suppressed=2, suppress="root")
    assert r.collect().rows() == [("a", "u"), ("a", "u"), ("b", "u"), ("b", "u"), ("*", "*"), ("*", "*")]
    assert r.report["suppressed"] == 0 and r.report["details"]["rows_at_root"] == 2  # published as roots, not removed


def test_adult(adult: pl.DataFrame, adult_hierarchies: dict[str, pa.Hierarchy]) -> None:
    r = pa.anonymize(adult, hierarchies=adult_hierarchies, k=100, method="datafly")
    out = r.collect()
    assert r.report["suppressed"] <= 100 and out.height == adult.height - r.report["suppressed"]
    assert out.group_by(ADULT_QIDS).len()["len"].min() >= 100
    # the generalized columns are the hierarchy columns of the chosen levels
    for q, lv in r.report["details"]["levels"].items():
        assert set(out[q].unique()) <= set(adult_hierarchies[q].level_map(lv)["value"])
