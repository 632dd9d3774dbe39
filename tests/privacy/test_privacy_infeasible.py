"""A non-monotone model that even the whole table fails: every method refuses with one InfeasibleError, in one set of
words, before anything is published (greedy, mondrian and topdown stopped at the independent check, datafly at its
k check)."""

from __future__ import annotations

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


@pytest.mark.parametrize(
    ("method", "budget"),
    [
        ("fulldomain", " with at most 0 suppressed rows; raise max_suppressed, lower k or relax the models"),
        ("datafly", " with at most 1 suppressed rows; raise max_suppressed, lower k or relax the models"),
        ("topdown", " with at most 0 suppressed rows; raise max_suppressed, lower k or relax the models"),
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
    )
