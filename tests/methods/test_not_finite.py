"""NaN and infinities in a float quasi-identifier: refused by every method on every engine, under either null policy,
unless the qid's hierarchy names them as leaves (a place the user gave them) and the method publishes its nodes.

Before, MDAV published every row with the mean NaN (or inf), verified and written, and Mondrian without a hierarchy
published NaN and inf as range ends (``[42.0..NaN]``, ``[43.0-inf]``). NaN is not a null (as in Polars):
``fill_nan(None)`` makes it one, and ``null="suppress"`` then publishes it at the root.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_anon as pa

NAN, INF = float("nan"), float("inf")
X = pl.DataFrame(
    {
        "x": [20.0, 21.0, 22.0, 23.0, NAN, NAN, INF, -INF, -INF, -INF, 40.0, 41.0],
        "s": ["F", "M"] * 6,
    }
)
"""NaN in rows 4 and 5, inf in row 6, -inf in rows 7 to 9 (counted by hand: 2, 1 and 3 rows)."""
REFUSED = (
    "column 'x' holds NaN in 2 rows, inf in 1 row and -inf in 3 rows, which a method places only where the qid's "
    "hierarchy names them as leaves"
)
S = pa.Hierarchy.suppression(["F", "M"])
FINITE = ["20.0", "21.0", "22.0", "23.0", "40.0", "41.0"]
ALL_LEAVES = pa.Hierarchy.suppression([*FINITE, "NaN", "inf", "-inf"])
"""A hierarchy that holds the labels NaN, inf and -inf as leaves: the user gave them a place."""


def _hierarchies(method: str) -> dict[str, pa.Hierarchy]:
    """`x` without a hierarchy for the methods that publish numbers without one (MDAV's means, Mondrian's ranges), and
    one of the finite values for the others (NaN and the infinities have no place in it)."""
    return {"s": S} if method in ("mdav", "mondrian") else {"x": pa.Hierarchy.suppression(FINITE), "s": S}


def _source(engine: str, request: pytest.FixtureRequest, frame: pl.DataFrame) -> Any:
    return request.getfixturevalue("spark").createDataFrame(frame.to_arrow()) if engine == "spark" else frame


@pytest.mark.parametrize("null", ["error", "suppress"])
@pytest.mark.parametrize("method", sorted(pa.METHODS))
def test_every_method_refuses_nan_and_infinities(method: str, null: str) -> None:
    if method == "local_suppression" and null == "suppress":
        pytest.skip("local_suppression takes null='error' only (refused before the data is read)")
    with pytest.raises(pa.NotFiniteError, match=REFUSED):
        pa.anonymize(X, qids=["x", "s"], hierarchies=_hierarchies(method), k=2, method=method, null=null)


@pytest.mark.parametrize(
    ("engine", "method", "options"),
    [
        ("duckdb", "fulldomain", {}),
        ("duckdb", "greedy", {}),
        ("duckdb", "mondrian", {"driver_tuples": 1}),  # the planner route: its marginals are checked
        ("spark", "fulldomain", {}),
        ("spark", "mdav", {}),  # MDAV inside Spark: published every mean NaN before
        ("spark", "mondrian", {"driver_tuples": 1}),
    ],
)
def test_the_engines_refuse_them_alike(engine: str, method: str, options: dict[str, Any], request) -> None:
    data = _source(engine, request, X)
    with pytest.raises(pa.NotFiniteError, match=REFUSED):
        pa.anonymize(
            data, qids=["x", "s"], hierarchies=_hierarchies(method), k=2, method=method, engine=engine, **options
        )


@pytest.mark.parametrize("method", sorted(set(pa.METHODS) - {"mdav"}))
def test_a_hierarchy_that_names_them_as_leaves_places_them(method: str) -> None:
    """review31b: a hierarchy holding 'NaN', 'inf' and '-inf' as leaves gives them a place; every method that
    publishes the hierarchy's nodes publishes them as it published them before the refusal (the leaf, or '*'), the
    other columns as they were; MDAV, which averages the numbers, still refuses them."""
    if method == "local_suppression":
        pytest.skip("local_suppression needs no hierarchy to hold them: covered by the methods that generalize")
    out = pa.anonymize(X, qids=["x", "s"], hierarchies={"x": ALL_LEAVES, "s": S}, k=2, method=method).collect()
    truth = X["x"].cast(pl.String).to_list()
    assert out.height == 12 and out["s"].to_list() == X["s"].to_list()
    assert all(got in (was, "*") for got, was in zip(out["x"].to_list(), truth))
    assert pa.check(out, ["x", "s"], k=2)["k_anonymous"]
    with pytest.raises(pa.NotFiniteError, match=REFUSED):
        pa.anonymize(X, qids=["x", "s"], hierarchies={"x": ALL_LEAVES, "s": S}, k=2, method="mdav")


def test_mdav_no_longer_publishes_nan_means() -> None:
    """The defect as found: two NaN rows among ten, every published mean was NaN."""
    df = X.head(6).with_columns(pl.col("x").fill_nan(30.0)).vstack(X.slice(4, 2)).with_row_index("id")
    with pytest.raises(pa.NotFiniteError, match="column 'x' holds NaN in 2 rows, which a method places only"):
        pa.anonymize(df, qids=["x"], hierarchies={}, k=2, method="mdav", insensitive="id")


def test_float32_is_refused_too() -> None:
    df = X.with_columns(pl.col("x").cast(pl.Float32))
    with pytest.raises(pa.NotFiniteError, match=REFUSED):
        pa.anonymize(df, qids=["x", "s"], hierarchies={"s": S}, k=2, method="mondrian")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_differentially_private_release_counts_them_on_the_whole_input(engine: str) -> None:
    """The rows are sampled after the input's checks: 20 copies of X hold NaN in 40 rows, whatever the sample."""
    model = pa.DifferentialPrivacy(2.0, 1e-3, seed=1)
    with pytest.raises(pa.NotFiniteError, match="NaN in 40 rows, inf in 20 rows and -inf in 60 rows"):
        pa.anonymize(pl.concat([X] * 20), hierarchies=_hierarchies("fulldomain"), k=2, privacy=[model], engine=engine)


def test_the_message_says_how_to_make_nan_missing_and_that_advice_works() -> None:
    """fill_nan(None) as the message says, then null='suppress': the two rows at the root, the others kept (k=2
    holds at level 0: 20/21/22/23 twice each below)."""
    df = pl.DataFrame({"x": [20.0, 20.0, 21.0, 21.0, NAN, NAN]})
    with pytest.raises(pa.NotFiniteError, match=r"pl\.col\('x'\)\.fill_nan\(None\)") as refused:
        pa.anonymize(df, hierarchies={"x": pa.Hierarchy.suppression(["20.0", "21.0"])}, k=2, null="suppress")
    assert "null='suppress' does not publish it at the root" in str(refused.value)
    assert "infinite" not in str(refused.value)  # no advice about values that are not there
    fixed = df.with_columns(pl.col("x").fill_nan(None))
    out = pa.anonymize(fixed, hierarchies={"x": pa.Hierarchy.suppression(["20.0", "21.0"])}, k=2, null="suppress")
    assert out.collect()["x"].to_list() == ["20.0", "20.0", "21.0", "21.0", "*", "*"]


def test_text_nan_in_a_string_column_is_a_category() -> None:
    """Only a float's NaN is refused: the text 'NaN' in a String column is a value like any other."""
    df = pl.DataFrame({"x": ["NaN", "NaN", "inf", "inf"]})
    out = pa.anonymize(df, hierarchies={"x": pa.Hierarchy.suppression(["NaN", "inf"])}, k=2).collect()
    assert out["x"].to_list() == ["NaN", "NaN", "inf", "inf"]


@pytest.mark.parametrize("numeric", [None, ["x"]])
def test_mdav_refuses_text_it_would_read_as_nan(numeric: list[str] | None) -> None:
    """A CSV's 'NaN' is text (Polars infers the column as String); MDAV reads the column as numbers, and published
    every mean NaN before. Refused as a float's NaN, named as the file spells it, whether MDAV chose the column as
    numeric or was told to."""
    df = pl.DataFrame({"x": ["20.5", "21", "NaN", "23", "nan", "25", "Infinity", "27"]})
    with pytest.raises(pa.NotFiniteError) as refused:
        pa.anonymize(df, hierarchies={}, qids=["x"], k=2, method="mdav", numeric=numeric)
    assert str(refused.value).startswith(
        "column 'x' holds NaN in 1 row, Infinity in 1 row and nan in 1 row, which a method places only where the qid's "
        "hierarchy names them as leaves (MDAV never: it averages numbers); NaN is "
        "not a null (as in Polars), so null='suppress' does not publish it at the root: make NaN null (a CSV: "
        'null_values = ["NaN", "nan"]) or drop those rows; replace or drop the infinite values'
    )
