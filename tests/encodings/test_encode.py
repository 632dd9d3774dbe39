"""Unit tests of polars_anon.encode on hand-computed values (paper 000 Table II, paper 003 §3.4.1)."""

from __future__ import annotations

import polars as pl
import pytest

from polars_anon import Hierarchy
from polars_anon.encode import (
    ENCODINGS,
    canonical,
    encode,
    encoded_columns,
    indicator_table,
    map_to_leaves,
    node_order,
    output_columns,
)
from polars_anon.errors import (
    ColumnNotFoundError,
    InvalidParameterError,
    NullValueError,
    ValueNotInHierarchyError,
)
from tests.examples import ANIMAL_HIERARCHIES, FIG2, RACE, TABLE_I, TABLE_IB

RACE_COLS = encoded_columns("race", RACE)


def _row(rep: str, value: str) -> dict[str, float]:
    out = encode(pl.DataFrame({"race": [value]}), {"race": RACE}, rep).collect()
    return {c.removeprefix("race_"): v for c, v in out.row(0, named=True).items() if v}


def test_node_order_is_level_then_depth_first():
    assert [FIG2.label_of(i) for i in node_order(FIG2)] == ["a", "b", "c", "d", "e", "f", "A", "B", "*"]
    assert [FIG2.label_of(i) for i in node_order(FIG2, "setbinary")] == ["a", "b", "c", "d", "e", "f"]
    assert encoded_columns("x", FIG2, "random") == ["x"]


def test_table_ii_oneclass():
    """Paper 000 Table IIa: each generalization is its own category."""
    assert _row("oneclass", "cat") == {"cat": 1.0}
    assert _row("oneClass", "felidae") == {"felidae": 1.0}
    assert _row("oneclass", "mammals") == {"mammals": 1.0}


def test_table_ii_fillparent():
    """Paper 000 Table IIb: a value exhibits all features of its parents.

    (The paper's 'dog' row sets R_12 and not R_20, which contradicts its own
    'cat' row; the consistent reading, used here, sets canine and mammals.)
    """
    assert _row("fillParent", "cat") == {"cat": 1.0, "felidae": 1.0, "mammals": 1.0}
    assert _row("fillparent", "dog") == {"dog": 1.0, "canine": 1.0, "mammals": 1.0}
    assert _row("fillparent", "canine") == {"canine": 1.0, "mammals": 1.0}
    assert _row("fillparent", "mammals") == {"mammals": 1.0}


def test_table_ii_fillchild():
    """Paper 000 Table IIc: a generalized value exhibits the features of all its descendants."""
    assert _row("fillChild", "cat") == {"cat": 1.0}
    assert _row("fillchild", "felidae") == {"cat": 1.0, "lion": 1.0, "tiger": 1.0, "felidae": 1.0}
    assert len(_row("fillchild", "mammals")) == RACE.n_nodes


def test_setbinary_is_leaf_tuple():
    """Paper 003 §3.4.1: a binary tuple over the leaves, 1 where the leaf is in the published set."""
    out = encode(pl.DataFrame({"race": ["cetaceans", "dog"]}), {"race": RACE}, "setbinary").collect()
    assert out.columns == ["race_cat", "race_lion", "race_tiger", "race_dog", "race_wolf", "race_dolphin", "race_whale"]
    assert out.rows() == [(0, 0, 0, 0, 0, 1, 1), (0, 0, 0, 1, 0, 0, 0)]


def test_indicator_table_has_one_row_per_node():
    t = indicator_table("race", RACE, "fillchild")
    assert t.height == RACE.n_nodes and t.columns == ["__anon_label", *RACE_COLS]
    assert t.filter(pl.col("__anon_label") == "canine").row(0)[1:] == (0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0)
    with pytest.raises(InvalidParameterError, match="'proportional' is not an indicator encoding"):
        indicator_table("race", RACE, "proportional")


def test_proportional_k1_equals_fillparent():
    """Paper 000 §IV-D-1: on the non-anonymous table, proportional and fillParent coincide."""
    prop = encode(TABLE_I, ANIMAL_HIERARCHIES, "proportional", original=TABLE_I).collect()
    fill = encode(TABLE_I, ANIMAL_HIERARCHIES, "fillparent").collect()
    assert prop.equals(fill)


def test_unbalanced_hierarchy_proportional():
    """FIG2 (paper 001 Figure 2): class {a, a, b, f} published as '*'."""
    pub = pl.DataFrame({"x": ["*"] * 4, "y": [1, 2, 3, 4]})
    orig = pl.DataFrame({"x": ["a", "a", "b", "f"]})
    out = encode(pub, {"x": FIG2}, original=orig).collect()
    assert out.columns == ["x_a", "x_b", "x_c", "x_d", "x_e", "x_f", "x_A", "x_B", "x_*", "y"]
    assert out.row(0) == (0.5, 0.25, 0, 0, 0, 0.25, 0.75, 0, 1, 1)
    assert out["y"].to_list() == [1, 2, 3, 4]


def test_schema_known_before_data_and_lazy_equals_eager():
    lf = encode(TABLE_IB.lazy(), ANIMAL_HIERARCHIES, "proportional", original=TABLE_I.lazy(), validate=False)
    assert lf.collect_schema().names() == output_columns(TABLE_IB.columns, ANIMAL_HIERARCHIES)
    eager = encode(TABLE_IB, ANIMAL_HIERARCHIES, "proportional", original=TABLE_I).collect()
    assert lf.collect(engine="streaming").equals(eager)


def test_pandas_input():
    pd = pytest.importorskip("pandas")
    out = encode(pd.DataFrame({"race": ["cat", "canine"]}), {"race": RACE}, "oneclass").collect()
    assert out["race_canine"].to_list() == [0.0, 1.0]


def test_dtype_and_non_string_qids():
    h = Hierarchy.intervals(range(30, 40), [5])
    out = encode(pl.DataFrame({"age": [31, 38]}), {"age": h}, "fillparent", dtype=pl.UInt8).collect()
    assert out.schema["age_31"] == pl.UInt8
    assert out.select("age_31", "age_30-34", "age_35-39", "age_*").rows() == [(1, 1, 0, 1), (0, 0, 1, 1)]


def test_mappings_are_seeded_and_truthful():
    """Paper 002 §3.3: random / statistical mapping back to a leaf under the published node."""
    pub = pl.DataFrame({"race": ["felidae"] * 50 + ["whale"] * 5 + ["mammals"] * 50})
    a = map_to_leaves(pub, {"race": RACE}, "random", seed=3).collect()
    assert a.equals(map_to_leaves(pub, {"race": RACE}, "random", seed=3).collect())
    assert not a.equals(map_to_leaves(pub, {"race": RACE}, "random", seed=4).collect())
    assert set(a["race"][:50]) == {"cat", "lion", "tiger"}  # 50 draws hit all three
    assert a["race"][50:55].to_list() == ["whale"] * 5
    assert len(set(a["race"][55:])) >= 5
    # weights: only dog and whale seen in the original -> mammals maps to those two only
    freqs = {"race": [0, 0, 0, 3, 0, 0, 1]}
    s = map_to_leaves(pub, {"race": RACE}, "statistical", frequencies=freqs, seed=0).collect()["race"]
    assert set(s[55:]) == {"dog", "whale"}
    assert (s[55:] == "dog").sum() > (s[55:] == "whale").sum()
    assert set(s[:50]) <= {"cat", "lion", "tiger"}  # felidae has no weight: uniform fallback


def test_statistical_uses_original_frequencies():
    out = encode(TABLE_IB, ANIMAL_HIERARCHIES, "statistical", original=TABLE_I, seed=0).collect()
    seen = set(TABLE_I["race"])
    assert set(out["race"]) <= seen and out.columns == TABLE_IB.columns


def test_canonical_names():
    assert [canonical(n) for n in ["fillParent", "FILL_CHILD", "one-class", "setBinary"]] == [
        "fillparent",
        "fillchild",
        "oneclass",
        "setbinary",
    ]
    assert len(ENCODINGS) == 7


# ------------------------------------------------------------------ errors
def test_unknown_encoding():
    with pytest.raises(InvalidParameterError, match=r"encoding must be one of .*got 'onehot'"):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, "onehot")


def test_proportional_needs_original():
    with pytest.raises(InvalidParameterError, match="'proportional' needs the original values"):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, "proportional")


def test_missing_qid_column():
    with pytest.raises(ColumnNotFoundError, match=r"qids \['race'\] not in the frame"):
        encode(TABLE_IB.drop("race"), ANIMAL_HIERARCHIES, "oneclass")
    with pytest.raises(ColumnNotFoundError, match=r"class_col \['cls'\] not in the frame"):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, class_col="cls")


def test_value_not_a_node():
    bad = TABLE_IB.with_columns(pl.lit("reptiles").alias("race"))
    with pytest.raises(
        ValueNotInHierarchyError, match=r"column 'race' of the published table: 'reptiles' is not a node"
    ):
        encode(bad, ANIMAL_HIERARCHIES, "fillparent")
    with pytest.raises(ValueNotInHierarchyError, match=r"column 'gender' of the original table: '\*' is not a leaf"):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, original=TABLE_IB)


def test_null_value():
    bad = TABLE_IB.with_columns(pl.when(pl.col("id") == "l1").then(None).otherwise(pl.col("race")).alias("race"))
    with pytest.raises(NullValueError, match="column 'race' of the published table has null values"):
        encode(bad, ANIMAL_HIERARCHIES, "oneclass")


def test_a_null_class_id_is_refused_naming_the_class_column():
    """hunt45: a partition frame (or published and original frames sharing class_col) with a null class id was
    refused as "column 'g' of the published table has null values": the qid, not the class column."""
    g = Hierarchy.suppression(["a", "b", "c"])
    partition = pl.DataFrame({"g": ["a", "b", "c"], "cls": [0, None, 1]})
    want = "class_col 'cls' of the partition table has 1 null value; every row needs the id of its class"
    with pytest.raises(NullValueError, match=want):
        encode(partition, {"g": g}, "proportional", class_col="cls")
    from polars_anon.transformers import HierarchyEncoder

    with pytest.raises(NullValueError, match=want):
        HierarchyEncoder({"g": g}, "proportional", class_col="cls").fit_transform(partition)
    published = pl.DataFrame({"g": ["*", "*", "c"], "cls": [0, None, 1]})
    original = pl.DataFrame({"g": ["a", "b", "c"], "cls": [0, 0, 1]})
    with pytest.raises(NullValueError, match="class_col 'cls' of the published table has 1 null value"):
        encode(published, {"g": g}, "proportional", original=original, class_col="cls")


def test_proportional_sums_to_1_over_the_nodes_leaves_are_published_as_not_over_a_level():
    """The encodings guide's uneven hierarchy: level 1 holds A alone (c is a leaf), so A's column is below 1 where c
    occurs; the leaves, and A with c (what the leaves are published as at level 1), sum to 1."""
    h = Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})
    t = pl.DataFrame({"g": ["a", "b", "c", "a"], "cls": [0, 0, 0, 1]})
    out = encode(t, {"g": h}, "proportional", class_col="cls").collect()
    leaves = out.select(pl.sum_horizontal("g_a", "g_b", "g_c"))
    assert leaves.to_series().to_list() == pytest.approx([1.0] * 4)
    assert out["g_A"].to_list() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 1.0])
    assert (out["g_A"] + out["g_c"]).to_list() == pytest.approx([1.0] * 4)


def test_misaligned_original_is_refused():
    with pytest.raises(
        InvalidParameterError, match=r"column 'race': original values are not under .*'cat' -> 'cetaceans'"
    ):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, original=TABLE_I.reverse())


def test_name_collision_and_bad_dtype():
    df = TABLE_IB.with_columns(pl.lit(1).alias("race_cat"))
    with pytest.raises(InvalidParameterError, match=r"encoded column names collide: \['race_cat'\]"):
        encode(df, ANIMAL_HIERARCHIES, "oneclass")
    with pytest.raises(InvalidParameterError, match="dtype must be a numeric Polars dtype"):
        encode(TABLE_IB, ANIMAL_HIERARCHIES, "oneclass", dtype=pl.String)
    with pytest.raises(InvalidParameterError, match="hierarchies is empty"):
        encode(TABLE_IB, {}, "oneclass")
    with pytest.raises(InvalidParameterError, match=r"hierarchies\['race'\] must be a Hierarchy"):
        encode(TABLE_IB, {"race": "x"}, "oneclass")  # type: ignore[dict-item]


def test_statistical_needs_frequencies():
    with pytest.raises(InvalidParameterError, match="needs frequencies="):
        map_to_leaves(TABLE_IB, {"race": RACE}, "statistical")
    with pytest.raises(InvalidParameterError, match=r"frequencies\['race'\] must hold 7 counts"):
        map_to_leaves(TABLE_IB, {"race": RACE}, "statistical", frequencies={"race": [1, 2]}).collect()
    with pytest.raises(ColumnNotFoundError, match="frequencies has no entry for qid 'race'"):
        map_to_leaves(TABLE_IB, {"race": RACE}, "statistical", frequencies={"x": [1]})
    with pytest.raises(InvalidParameterError, match="how must be one of"):
        map_to_leaves(TABLE_IB, {"race": RACE}, "oneclass")


@pytest.mark.parametrize("rep", ["proportional", "fillchild", "random"])
def test_write_encoded_in_chunks_equals_encode(tmp_path, rep):
    from polars_anon.encoded_io import write_encoded
    from polars_anon.errors import OutputExistsError

    want = encode(TABLE_IB, ANIMAL_HIERARCHIES, rep, original=TABLE_I).collect()
    facts = write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "e.parquet", rep, original=TABLE_I, chunk_rows=4)
    assert pl.read_parquet(tmp_path / "e.parquet").equals(want)
    assert facts["rows"] == 6 and facts["columns"] == want.width
    with pytest.raises(OutputExistsError, match="exists"):
        write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "e.parquet", rep, original=TABLE_I)
    if rep != "random":
        with pytest.raises(InvalidParameterError, match="chunk_rows must be an integer >= 1, got 0"):
            write_encoded(TABLE_IB, ANIMAL_HIERARCHIES, tmp_path / "f.parquet", rep, original=TABLE_I, chunk_rows=0)
        assert not (tmp_path / "f.parquet").exists()
