"""compute() refuses bad input with a message naming the column, value or parameter."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.metrics import compute
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

Q = ["gender", "race"]


def test_unknown_metric() -> None:
    with pytest.raises(pa.InvalidParameterError, match="unknown metric 'nlm'; metrics are \\['distortion'"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, ["nlm"])


def test_metric_needing_the_sensitive_attribute() -> None:
    with pytest.raises(pa.InvalidParameterError, match="metric 'mi_loss' needs the sensitive attribute"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, "mi_loss")


def test_rows_removed_without_a_key() -> None:
    with pytest.raises(pa.InputError, match="anonymized table has 5 rows and the original 6.*key="):
        compute(TABLE_I, TABLE_IB.head(5), Q, ANIMAL_HIERARCHIES)


def test_key_not_unique() -> None:
    doubled = pl.concat([TABLE_IB, TABLE_IB.head(1)])
    with pytest.raises(
        pa.InvalidParameterError, match="key 'id' is not unique in the anonymized table: the join gave 7 rows"
    ):
        compute(TABLE_I, doubled, Q, ANIMAL_HIERARCHIES, key="id")


def test_key_missing_or_a_qid() -> None:
    with pytest.raises(pa.ColumnNotFoundError, match="key \\['row'\\] not in the frame"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, key="row")
    with pytest.raises(pa.InvalidParameterError, match="key 'race' is also a quasi-identifier"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, key="race")


def test_original_value_not_a_leaf() -> None:
    with pytest.raises(
        pa.ValueNotInHierarchyError,
        match="column 'race' in the original table: 'unicorn' is not a leaf of its hierarchy",
    ):
        compute(TABLE_I.with_columns(race=pl.lit("unicorn")), TABLE_IB, Q, ANIMAL_HIERARCHIES)
    with pytest.raises(
        pa.ValueNotInHierarchyError, match="column 'race' in the original table: .* inner nodes.*'felidae'"
    ):
        compute(TABLE_I.with_columns(race=pl.lit("felidae")), TABLE_IB, Q, ANIMAL_HIERARCHIES)


def test_published_value_not_a_node() -> None:
    with pytest.raises(
        pa.ValueNotInHierarchyError,
        match="column 'gender' in the anonymized table: 'X' is not a node of its hierarchy",
    ):
        compute(TABLE_I, TABLE_IB.with_columns(gender=pl.lit("X")), Q, ANIMAL_HIERARCHIES)


def test_nulls() -> None:
    with pytest.raises(pa.NullValueError, match="column 'gender' in the original table has null values"):
        compute(TABLE_I.with_columns(gender=pl.lit(None, pl.String)), TABLE_IB, Q, ANIMAL_HIERARCHIES)
    with pytest.raises(pa.NullValueError, match="column 'race' in the anonymized table has null values"):
        compute(TABLE_I, TABLE_IB.with_columns(race=pl.lit(None, pl.String)), Q, ANIMAL_HIERARCHIES)


def test_qids_and_hierarchies() -> None:
    with pytest.raises(pa.InvalidParameterError, match="qids \\['id'\\] have no hierarchy"):
        compute(TABLE_I, TABLE_IB, ["gender", "id"], ANIMAL_HIERARCHIES)
    with pytest.raises(pa.ColumnNotFoundError, match="qids \\['race'\\] not in the frame"):
        compute(TABLE_I, TABLE_IB.drop("race"), Q, ANIMAL_HIERARCHIES)
    with pytest.raises(pa.InvalidParameterError, match="qids is empty"):
        compute(TABLE_I, TABLE_IB, [], ANIMAL_HIERARCHIES)
    with pytest.raises(pa.InvalidParameterError, match="hierarchies\\['race'\\] must be a Hierarchy, got dict"):
        compute(TABLE_I, TABLE_IB, Q, {**ANIMAL_HIERARCHIES, "race": {"*": ["cat"]}})


def test_parameters() -> None:
    with pytest.raises(pa.InvalidParameterError, match="k must be an integer >= 1, got 0"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, k=0)
    with pytest.raises(pa.InvalidParameterError, match="levels\\['race'\\] must be an integer in 0..2, got 3"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, levels={"race": 3})
    with pytest.raises(pa.InvalidParameterError, match="levels names \\['age'\\], which are not qids"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, levels={"age": 1})
    with pytest.raises(pa.ColumnNotFoundError, match="sensitive \\['income'\\] not in the frame"):
        compute(TABLE_I, TABLE_IB, Q, ANIMAL_HIERARCHIES, sensitive="income")
    with pytest.raises(pa.InvalidParameterError, match="expected a Polars DataFrame or LazyFrame"):
        compute([1, 2], TABLE_IB, Q, ANIMAL_HIERARCHIES)  # type: ignore[arg-type]


H1 = {"g": pa.Hierarchy.suppression(["a", "b"])}


@pytest.mark.parametrize(
    ("original", "anonymized", "said"),
    [
        ({"row": [0, 0, 1], "g": ["a", "b", "b"]}, {"row": [0, 1], "g": ["*", "b"]}, "2 rows share a value"),
        ({"row": [0, None], "g": ["a", "b"]}, {"row": [0], "g": ["*"]}, "key 'row' has 1 null values in the original"),
        ({"row": [0, 1], "g": ["a", "b"]}, {"row": [0, 1, 7], "g": ["*", "b", "b"]}, "1 rows of the anonymized table"),
    ],
    ids=["repeated", "null", "stray"],
)
def test_a_key_that_cannot_line_up_the_rows_is_refused(original: dict, anonymized: dict, said: str) -> None:
    """hunt34: a repeated original key paired one published row twice (discernibility 5 where the published table
    has 2, ncp 1.0 for 0.5), a null one made its row look suppressed, and a stray anonymized key was left out."""
    with pytest.raises(pa.InvalidParameterError, match=said):
        compute(pl.DataFrame(original), pl.DataFrame(anonymized), ["g"], H1, ["ncp"], key="row")


def test_keys_of_two_types_are_refused_naming_both() -> None:
    """hunt34: Int64 against String was Polars' SchemaError (an anonymized CSV with no rows reads its key as String)."""
    original = pl.DataFrame({"row": [0, 1], "g": ["a", "b"]})
    anonymized = pl.DataFrame({"row": ["0", "1"], "g": ["*", "b"]})
    with pytest.raises(pa.InvalidParameterError, match="key 'row' is Int64 in the original table and String"):
        compute(original, anonymized, ["g"], H1, ["ncp"], key="row")


def test_c_avg_of_a_table_with_no_class_is_null_with_or_without_k() -> None:
    """hunt34: every row suppressed gave NaN with k (0 / (2 * 0)) and null without; null both ways, as documented."""
    original = pl.DataFrame({"row": [0, 1], "g": ["a", "b"]})
    none = pl.DataFrame({"row": [], "g": []}, schema={"row": pl.Int64, "g": pl.String})
    for k in (2, None):
        assert compute(original, none, ["g"], H1, ["c_avg"], k=k, key="row")["c_avg"].to_list() == [None]


def test_levels_leaving_out_a_qid() -> None:
    """A qid missing from `levels` was read as level 0 (hunt36): refused; all given, or none, gives the truth."""
    hs = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
    orig = pl.DataFrame({"age": [30, 31, 36, 37], "sex": ["F", "M", "F", "M"]})
    pub = pl.DataFrame({"age": ["30-34", "30-34", "35-39", "35-39"], "sex": ["*"] * 4})
    names = ["absolute_distance", "relative_distance"]
    with pytest.raises(pa.InvalidParameterError, match="levels leaves out the qids \\['sex'\\].*omit levels"):
        compute(orig, pub, ["age", "sex"], hs, names, levels={"age": 1})
    # age at level 1 of 0..3 (leaf, width 5, width 10, root), sex at 1 of 0..1: 1 + 1 = 2, 1/3 + 1/1
    for levels in ({"age": 1, "sex": 1}, None):
        row = compute(orig, pub, ["age", "sex"], hs, names, levels=levels).row(0, named=True)
        assert row["absolute_distance"] == 2
        assert row["relative_distance"] == pytest.approx(4 / 3, rel=1e-12)
