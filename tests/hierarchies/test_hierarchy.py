"""Hierarchy builders, tables and lookups."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings

from polars_anon import Hierarchy
from tests.conftest import ADULT_QIDS
from tests.examples import FIG2, RACE
from tests.strategies import hierarchies


def test_arx_csv_with_quoted_intervals_and_repeated_labels(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text('1;"[0;4]";*\n2;"[0;4]";*\n9;9;*\n')
    h = Hierarchy.from_csv(path)
    assert h.leaf_labels == ["1", "2", "9"]
    assert h.level_map(1).filter(pl.col("label") == "9")["value"].item() == "9"  # `9;9;*` keeps 9 at level 1
    assert h.nodes.filter(pl.col("label") == "[0;4]")["leaves"].item() == 2
    assert h.level[h.id_of("9")] == 0 and h.height == 3


def test_closure_has_every_leaf_ancestor_pair() -> None:
    closure = FIG2.closure
    assert closure.height == 3 * 5 + 2  # five leaves at depth 2 (3 pairs each), f at depth 1
    got = {(FIG2.label_of(a), FIG2.label_of(b), d) for a, b, d in closure.rows()}
    assert {("a", "a", 0), ("a", "A", 1), ("a", "*", 2), ("f", "f", 0), ("f", "*", 1)} <= got


@settings(max_examples=40, deadline=None)
@given(h=hierarchies(max_nodes=20))
def test_closure_is_the_paths_of_the_leaves(h: Hierarchy) -> None:
    """The closure (built from the ancestor matrix) is the paths table's leaf rows, row for row and dtype for dtype."""
    leaves = np.flatnonzero(h.is_leaf).tolist()
    expected = h.paths.filter(pl.col("node").is_in(leaves)).rename({"node": "leaf"})
    assert h.closure.equals(expected) and h.closure.schema == expected.schema


def test_subtrees_are_leaf_intervals() -> None:
    nodes = RACE.nodes
    for node, lo, hi, leaves in nodes.select("node", "order_lo", "order_hi", "leaves").rows():
        under = RACE.closure.filter(pl.col("ancestor") == node)["leaf"].to_list()
        ranks = sorted(RACE.leaf_labels.index(RACE.label_of(x)) for x in under)
        assert ranks == list(range(lo, hi + 1)) and len(ranks) == leaves


def test_intervals_masking_suppression() -> None:
    h = Hierarchy.intervals([1917, 1931, 1915], [5, 10, 20])
    assert [h.label_of(h.generalize_ids(lv)[h.id_of("1917")]) for lv in range(4 + 1)] == [
        "1917",
        "1915-1919",
        "1910-1919",
        "1900-1919",
        "*",
    ]
    m = Hierarchy.masking(["33101", "33199", "34000"])
    assert [m.label_of(m.generalize_ids(lv)[m.id_of("33101")]) for lv in range(m.height)] == [
        "33101",
        "3310*",
        "331**",
        "33***",
        "3****",
        "*****",
    ]
    assert m.root == "*****" and m.height == 6
    s = Hierarchy.suppression(["F", "M", "F"])
    assert s.leaf_labels == ["F", "M"] and s.height == 2 and s.root == "*"


def test_generalize_ids_on_unbalanced_tree() -> None:
    """f sits directly under the root (level 2): at level 1 it stays f, as ARX's `f;f;*` row."""
    ids = FIG2.generalize_ids(1)
    assert [FIG2.label_of(ids[FIG2.id_of(x)]) for x in "abcdef"] == ["A", "A", "A", "B", "B", "f"]
    assert set(FIG2.generalize_ids(2).tolist()) == {0}


def test_lca_matrix_and_refusal() -> None:
    lca = FIG2.lca_matrix()
    assert lca.shape == (9, 9) and np.array_equal(lca, lca.T)
    assert FIG2.label_of(lca[FIG2.id_of("d"), FIG2.id_of("e")]) == "B"
    with pytest.raises(ValueError, match="more than max_nodes=4"):
        FIG2.lca_matrix(max_nodes=4)


def _walked(h: Hierarchy) -> np.ndarray:
    ids = np.arange(h.n_nodes)
    return h.lca(ids[:, None], ids[None, :])


@settings(max_examples=60, deadline=None)
@given(h=hierarchies(max_nodes=30))
def test_lca_matrix_is_the_pairwise_lca(h: Hierarchy) -> None:
    assert np.array_equal(h.lca_matrix(), _walked(h))
    leaves = np.flatnonzero(h.is_leaf)
    assert np.array_equal(h.leaf_lca_matrix(), _walked(h)[np.ix_(leaves, leaves)])


def test_lca_matrix_writes_each_cell_once_without_walking(monkeypatch: pytest.MonkeyPatch) -> None:
    """lca_matrix walked up from both nodes of every pair, a pass over the whole matrix per depth: 0.15-0.5 s for
    the 1,775-node hierarchy of the notebook page (greedy's pair tables, every docs build), 8 s for two 600-deep
    branches; topdown's leaf table (h.lca over every pair of leaves) 0.33 s there. Both fill the blocks of the
    preorder instead; here two deep branches and a chain."""
    two = {"r": None} | {f"{b}{i}": f"{b}{i - 1}" if i else "r" for b in "xy" for i in range(40)}
    chain = {f"c{i}": f"c{i - 1}" if i else None for i in range(30)}
    shapes = [Hierarchy.from_parents(two), Hierarchy.from_parents(chain), FIG2, RACE]
    want = [_walked(h) for h in shapes]
    monkeypatch.setattr(Hierarchy, "lca", lambda *a: pytest.fail("lca_matrix walked the pairs"))
    for h, expected in zip(shapes, want):
        leaves = np.flatnonzero(h.is_leaf)
        assert np.array_equal(h.lca_matrix(), expected)
        assert np.array_equal(h.leaf_lca_matrix(), expected[np.ix_(leaves, leaves)])
    with pytest.raises(ValueError, match="has 6 leaves, more than max_leaves=4"):
        FIG2.leaf_lca_matrix(max_leaves=4)


def test_root_weights_give_path_weights() -> None:
    w = np.zeros(FIG2.n_nodes)
    w[FIG2.id_of("a")], w[FIG2.id_of("A")] = 0.25, 0.5
    r = FIG2.root_weights(w)
    assert r[FIG2.id_of("a")] - r[FIG2.id_of("A")] == 0.25 and r[FIG2.id_of("a")] == 0.75


def test_every_adult_hierarchy_loads(adult_dir: Path, adult: pl.DataFrame) -> None:
    """All nine ARX Adult hierarchies load and cover every value of their column."""
    heights = {
        "sex": 2,
        "age": 5,
        "race": 2,
        "marital-status": 3,
        "education": 4,
        "native-country": 3,
        "workclass": 3,
        "occupation": 3,
        "salary-class": 2,
    }
    for col, height in heights.items():
        h = Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{col}.csv")
        assert h.height == height, col
        assert set(adult[col].unique().to_list()) <= set(h.leaf_labels), col
    assert len(ADULT_QIDS) == 8


def test_an_empty_string_label_is_refused_by_every_constructor(tmp_path: Path) -> None:
    """mend17: from_dict and from_parents took a leaf '' that from_csv refuses (an empty field is a missing value in a
    CSV): to_csv wrote a file from_csv could not read back. One rule now: no label is the empty string."""
    from polars_anon.errors import HierarchyError

    empty = "a hierarchy label is the empty string ''"
    for build in (
        lambda: Hierarchy.from_dict({"*": ["a", ""]}),
        lambda: Hierarchy.from_dict({"*": {"": ["a", "b"]}}),
        lambda: Hierarchy.from_parents({"a": "*", "": "*", "*": None}),
    ):
        with pytest.raises(HierarchyError, match=empty):
            build()
    (tmp_path / "h.csv").write_text("a;*\n;*\n")
    with pytest.raises(HierarchyError, match=r"row 2 has an empty field"):
        Hierarchy.from_csv(tmp_path / "h.csv")
    with pytest.raises(HierarchyError, match=r"suppression: a value is the empty string ''.*relabel it"):  # mend49
        Hierarchy.suppression(["a", ""])
    # the same values with a label of their own are one hierarchy whichever way they are given
    Hierarchy.from_dict({"*": ["a", "(empty)"]}).to_csv(tmp_path / "ok.csv")
    assert Hierarchy.from_csv(tmp_path / "ok.csv").leaf_labels == ["a", "(empty)"]
