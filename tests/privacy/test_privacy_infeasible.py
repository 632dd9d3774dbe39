"""A non-monotone model that even the whole table fails: every method refuses with one InfeasibleError, in one set of
words, before anything is published (greedy, mondrian and topdown stopped at the independent check, datafly at its
k check); topdown's ends with what its search misses."""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.privacy import LDiversity

# Grassberger's entropy needs ceil(l) = 3 distinct values in a class (the rule ARX applies); s has two, so no
# class of any publication meets it; the model is not monotone, so the up-front refusal of the whole table skips it.
TABLE = pl.DataFrame({"q": list("aabb"), "s": list("xxxy")})
H = {"q": pa.Hierarchy.suppression(["a", "b"])}
MODEL = LDiversity("s", 3, "entropy", estimator="grassberger")
WORDS = "l-diversity on 's' (l=3, variant='entropy', estimator='grassberger')"
TOPDOWN_MISSES = (
    "; topdown splits from the roots only into parts that meet the models, so it misses classes that lie only below "
    "parts failing them (a publication may exist there): global_start=True also starts from the best full-domain "
    "node, and method='fulldomain' searches every full-domain node"
)


@pytest.mark.parametrize(
    ("method", "budget"),
    [
        ("fulldomain", " with at most 0 suppressed rows; raise max_suppressed, lower k or relax the models"),
        ("datafly", " with at most 1 suppressed rows; raise max_suppressed, lower k or relax the models"),
        (
            "topdown",
            " with at most 0 suppressed rows; raise max_suppressed, lower k or relax the models" + TOPDOWN_MISSES,
        ),
        ("greedy", " with no row suppressed; lower k or relax the models"),
        ("mondrian", " with no row suppressed; lower k or relax the models"),
    ],
)
def test_every_method_refuses_a_model_no_publication_meets_alike(method: str, budget: str) -> None:
    assert not MODEL.monotone
    with pytest.raises(pa.InfeasibleError) as got:
        pa.anonymize(TABLE, qids=["q"], hierarchies=H, k=1, method=method, sensitive=["s"], privacy=[MODEL]).collect()
    expected = (
        f"method {method!r} found no publication of this table (4 rows) that is 1-anonymous and satisfies {WORDS}"
    )
    assert str(got.value) == expected + budget


def test_a_finer_publication_that_meets_the_model_is_still_found() -> None:
    """The whole table {x, x, y, y} fails l=2 (exp(0.67) = 1.9 effective values) but each class {x, y} meets it:
    the refusal reads the method's publication, not the whole table alone."""
    table = pl.DataFrame({"q": list("aabb"), "s": list("xyxy")})
    model = LDiversity("s", 2, "entropy", estimator="grassberger")
    for method in ("fulldomain", "datafly", "topdown", "greedy", "mondrian"):
        out = pa.anonymize(table, qids=["q"], hierarchies=H, k=1, method=method, sensitive=["s"], privacy=[model])
        assert sorted(out.collect().rows()) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")], method


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", ["topdown", "fulldomain", "datafly"])
def test_a_suppression_budget_changes_only_the_words(method: str, engine: str) -> None:
    """hunt32: with max_suppressed above 0 and no class of any publication meeting the model, topdown's undo step
    summed an Int64 count with floats (NumPy's bincount of no values) and raised UFuncTypeError on both engines."""
    table = pl.DataFrame({"q": list("aabbcc"), "s": list("xxxxxy")})
    model = LDiversity("s", 2.5, "entropy", estimator="grassberger")
    h = {"q": pa.Hierarchy.from_dict({"*": ["a", "b", "c"]})}
    with pytest.raises(pa.InfeasibleError) as got:
        pa.anonymize(table, hierarchies=h, k=2, method=method, privacy=[model], max_suppressed=1, engine=engine)
    words = "l-diversity on 's' (l=2.5, variant='entropy', estimator='grassberger')"
    assert str(got.value) == (
        f"method {method!r} found no publication of this table (6 rows) that is 2-anonymous and satisfies {words} "
        "with at most 1 suppressed rows; raise max_suppressed, lower k or relax the models"
    ) + (TOPDOWN_MISSES if method == "topdown" else "")


# The whole table (s: 7 a, 1 b) has entropy exp(-(7/8 ln 7/8 + 1/8 ln 1/8)) = 1.458 < 2 effective values: no
# generalization meets entropy l=2 (a monotone model), but the class x1 = {a, b} does (exactly 2) once x2's six rows
# are suppressed.
SKEWED = pl.DataFrame({"x": ["x1", "x1"] + ["x2"] * 6, "s": ["a", "b"] + ["a"] * 6})
SKEWED_H = {"x": pa.Hierarchy.suppression(["x1", "x2"])}
ENTROPY_2 = LDiversity("s", 2, "entropy")


def _entropy_l(values: list[str]) -> float:
    """exp of the Shannon entropy of `values` (the effective number of sensitive values), by hand."""
    n = len(values)
    return math.exp(-sum(c / n * math.log(c / n) for c in (values.count(v) for v in set(values))))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", ["fulldomain", "topdown", "datafly"])
def test_a_budget_publishes_where_the_whole_table_fails_a_monotone_model(method: str, engine: str) -> None:
    """hunt40: topdown and datafly were refused up front ("cannot be met by any generalization") though suppressing
    within their budget publishes, as fulldomain did: each now publishes x1's class, 2-anonymous and 2-diverse."""
    assert ENTROPY_2.monotone and _entropy_l(SKEWED["s"].to_list()) < 2
    got = pa.anonymize(
        SKEWED, hierarchies=SKEWED_H, k=2, method=method, privacy=[ENTROPY_2], max_suppressed=6, engine=engine
    )
    out = got.collect()
    assert sorted(out.rows()) == [("x1", "a"), ("x1", "b")] and got.report["suppressed"] == 6
    for _, members in out.group_by("x"):
        assert members.height >= 2 and _entropy_l(members["s"].to_list()) >= 2 - 1e-12


@pytest.mark.parametrize("method", ["fulldomain", "topdown", "datafly"])
def test_a_budget_too_small_refuses_with_the_method_words(method: str) -> None:
    """Five rows of budget cannot suppress x2's six: each method says it found no publication within its budget."""
    with pytest.raises(pa.InfeasibleError) as got:
        pa.anonymize(SKEWED, hierarchies=SKEWED_H, k=2, method=method, privacy=[ENTROPY_2], max_suppressed=5)
    assert str(got.value) == (
        f"method {method!r} found no publication of this table (8 rows) that is 2-anonymous and satisfies "
        "l-diversity on 's' (l=2, variant='entropy') with at most 5 suppressed rows; raise max_suppressed, lower k "
        "or relax the models"
    ) + (TOPDOWN_MISSES if method == "topdown" else "")


def test_datafly_default_budget_of_k_rows_publishes_where_the_whole_table_fails() -> None:
    """Datafly's default budget is k rows. s: 4 a, 2 b over the whole table, exp(entropy) = 1.89 < 2; at level 0
    x1 = {a, b} and x2 = {a, b} meet l=2 and x3 = {a, a} (2 rows, within k = 2) is suppressed."""
    table = pl.DataFrame({"x": ["x1", "x1", "x2", "x2", "x3", "x3"], "s": ["a", "b", "a", "b", "a", "a"]})
    assert _entropy_l(table["s"].to_list()) < 2
    h = {"x": pa.Hierarchy.suppression(["x1", "x2", "x3"])}
    got = pa.anonymize(table, hierarchies=h, k=2, method="datafly", privacy=[ENTROPY_2])
    assert got.collect().rows() == [("x1", "a"), ("x1", "b"), ("x2", "a"), ("x2", "b")]
    assert got.report["suppressed"] == 2
