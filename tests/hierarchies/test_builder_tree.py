"""The builders' way to a tree (labels in preorder and parent ids straight from the rows, NumPy over the cells)
against the generic one (:meth:`Hierarchy.from_rows`: rows -> parent dict -> stack walk), and the tree's arrays
against a walk node by node (hypothesis).

Valid rows (a random tree's ARX rows, in a random row order, labels relabelled) give the same hierarchy both ways;
random rows over a small alphabet (empty labels, ragged rows, two parents, two tops, cycles, a leaf that is also a
group) give the same hierarchy, or the fast way gives none and the builder falls back to ``from_rows``' message.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_anon import Hierarchy, HierarchyError
from polars_anon.hierarchy import _preorder_of_rows
from tests.strategies import hierarchies


def reference_arrays(parent: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Depth, level (longest way down to a leaf) and leaf count of every node, each node walked on its own."""
    n = len(parent)
    children = [[c for c in range(n) if parent[c] == p] for p in range(n)]

    def ancestors(node: int) -> list[int]:
        out = []
        while parent[node] >= 0:
            node = parent[node]
            out.append(node)
        return out

    depth = [len(ancestors(i)) for i in range(n)]
    leaves_below = [
        [leaf for leaf in range(n) if not children[leaf] and (leaf == i or i in ancestors(leaf))] for i in range(n)
    ]
    level = [max(depth[leaf] - depth[i] for leaf in below) for i, below in enumerate(leaves_below)]
    return depth, level, [len(below) for below in leaves_below]


def assert_same(a: Hierarchy, b: Hierarchy) -> None:
    assert a.labels == b.labels
    for name in ("parent", "depth", "level", "leaves", "is_leaf"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.nodes.equals(b.nodes)


@settings(max_examples=150, deadline=None)
@given(h=hierarchies(max_nodes=30))
def test_tree_arrays_match_a_walk_node_by_node(h: Hierarchy) -> None:
    depth, level, leaves = reference_arrays(h.parent.tolist())
    assert h.depth.tolist() == depth
    assert h.level.tolist() == level
    assert h.leaves.tolist() == leaves


def test_tree_arrays_by_hand() -> None:
    h = Hierarchy.from_dict({"*": {"A": {"B": ["a", "b"]}, "c": None}})
    assert h.labels == ["*", "A", "B", "a", "b", "c"]
    assert h.depth.tolist() == [0, 1, 2, 3, 3, 1]
    assert h.level.tolist() == [3, 2, 1, 0, 0, 0]
    assert h.leaves.tolist() == [3, 2, 2, 1, 1, 1]
    assert Hierarchy.from_dict({"*": None}).depth.tolist() == [0]


@st.composite
def builder_rows(draw: st.DrawFn) -> list[list[str]]:
    """A random tree's rows in a random order, every label renamed (so first-seen order is not the tree's)."""
    rows = draw(hierarchies(max_nodes=25)).to_rows()
    order = draw(st.permutations(range(len(rows))))
    names = draw(st.permutations(sorted({c for r in rows for c in r})))
    rename = dict(zip(sorted({c for r in rows for c in r}), names))
    return [[rename[c] for c in rows[i]] for i in order]


@settings(max_examples=200, deadline=None)
@given(rows=builder_rows())
def test_valid_rows_give_the_tree_of_from_rows(rows: list[list[str]]) -> None:
    tree = _preorder_of_rows(rows)
    assert tree is not None
    assert_same(Hierarchy(*tree), Hierarchy.from_rows(rows))


LABELS = st.sampled_from(["a", "b", "c", "A", "B", "*", ""])


@st.composite
def any_rows(draw: st.DrawFn) -> list[list[str]]:
    width = draw(st.integers(1, 4))
    row = st.lists(LABELS, min_size=width, max_size=width) | st.lists(LABELS, min_size=0, max_size=5)
    return draw(st.lists(row, min_size=1, max_size=6))


def generic(rows: list[list[str]]) -> Hierarchy | str:
    """What the builders gave before the fast way: from_rows, then every row's first label a leaf."""
    try:
        h = Hierarchy.from_rows(rows, source="test")
    except HierarchyError as exc:
        return str(exc)
    return h if h.n_leaves == len(rows) else "not leaves"


@settings(max_examples=400, deadline=None)
@given(rows=any_rows())
def test_any_rows_give_the_tree_of_from_rows_or_none(rows: list[list[str]]) -> None:
    tree, expected = _preorder_of_rows(rows), generic(rows)
    if isinstance(expected, str):
        assert tree is None
    elif tree is not None:
        assert_same(Hierarchy(*tree), expected)


@pytest.mark.parametrize(
    "rows",
    [
        [["a", "A", "*"], ["b", "A"]],  # ragged
        [["a", "", "*"]],  # empty label
        [["a", "A", "*"], ["b", "B", "*"], ["c", "A", "+"]],  # two tops; 'c' ... two parents of nothing
        [["a", "A", "*"], ["A", "B", "*"]],  # 'A' a leaf and a group
        [["a", "A", "a"]],  # a cycle
        [["a", "A", "*"], ["a", "A", "*"]],  # one leaf twice
        [["a", 1, "*"]],  # not a String: from_rows casts it
    ],
)
def test_faults_take_the_generic_way(rows: list[list[str]]) -> None:
    assert _preorder_of_rows(rows) is None


def test_a_builder_still_names_the_fault() -> None:
    with pytest.raises(HierarchyError, match=r"masking: 1 values are also labels of groups above other values"):
        Hierarchy.masking(["3310*", "33101"], 1)
