"""Random hierarchies [paper 003 §3.3.2]: ordered and shuffled, equal depth, seeded."""

from __future__ import annotations

import numpy as np
import pytest

from polars_anon import Hierarchy, HierarchyError, InvalidParameterError
from polars_anon.labels import set_members

random_ordered, random_shuffled = Hierarchy.random_ordered, Hierarchy.random_shuffled


def _equal_depth(h: Hierarchy) -> bool:
    return bool((h.depth[h.is_leaf] == h.height - 1).all())


@pytest.mark.parametrize("seed", range(8))
def test_ordered_keeps_order_and_depth(seed: int) -> None:
    values = list(range(100, 140))
    h = Hierarchy.random_ordered(values, seed=seed)
    assert h.leaf_labels == [str(v) for v in values] and _equal_depth(h)
    # each inner node is a run of consecutive values labelled by its ends
    for node in np.flatnonzero(~h.is_leaf)[1:]:
        lo, hi = h.nodes["order_lo"][int(node)], h.nodes["order_hi"][int(node)]
        assert h.label_of(node) == f"[{values[lo]}..{values[hi]}]"


@pytest.mark.parametrize("seed", range(8))
def test_shuffled_covers_values_and_depth(seed: int) -> None:
    h = random_shuffled(list("abcdefghijklmnop"), seed=seed)
    assert sorted(h.leaf_labels) == list("abcdefghijklmnop") and _equal_depth(h)
    for node in np.flatnonzero(~h.is_leaf)[1:]:  # a set label lists exactly its leaves
        leaves = h.closure.filter(h.closure["ancestor"] == int(node))["leaf"].to_list()
        assert sorted(set_members(h.label_of(node))) == sorted(h.label_of(i) for i in leaves)


def test_shuffled_set_labels_escape_commas() -> None:
    """A leaf 'a,b' made the node label '{a,b,c}' of leaves 'a,b' and 'c' (review7 F8): members are escaped."""
    values = ["a,b", "c", "{d}", *"efghijklm"]
    h = random_shuffled(values, seed=0, max_children=2)
    assert "{a\\,b,e,g,h,k}" in h.labels and "{c,\\{d\\},f,i,j,l,m}" in h.labels  # (this seed's two inner nodes)
    for node in np.flatnonzero(~h.is_leaf)[1:]:
        leaves = h.closure.filter(h.closure["ancestor"] == int(node))["leaf"].to_list()
        assert sorted(set_members(h.label_of(node))) == sorted(h.label_of(i) for i in leaves)


def test_seeded() -> None:
    assert random_ordered(range(50), seed=3) == random_ordered(range(50), seed=3)
    assert len({repr(random_shuffled(range(50), seed=s).labels) for s in range(5)}) > 1
    assert any(random_shuffled(range(30), seed=s).leaf_labels != [str(v) for v in range(30)] for s in range(5))


def test_binary_trees_are_deeper_and_single_value() -> None:
    assert max(random_ordered(range(200), seed=s, max_children=2).height for s in range(5)) >= 4
    assert random_ordered(["x"]).labels == ["*", "x"]


def test_paper_depth_rule_small() -> None:
    """Figure 3.3: with the shallowest leaf at depth 1 every value hangs under the root."""
    trees = [random_ordered(range(5), seed=s) for s in range(20)]
    for h in trees:
        assert _equal_depth(h) and h.n_leaves == 5
    assert {h.height for h in trees} >= {2, 3}


def test_errors() -> None:
    with pytest.raises(HierarchyError, match="no values given"):
        random_ordered([])
    with pytest.raises(HierarchyError, match=r"given twice \(first: \['a'\]\)"):
        random_shuffled(["a", "b", "a"])
    with pytest.raises(InvalidParameterError, match="max_children must be an integer >= 2, got 1"):
        random_ordered(["a", "b", "c"], max_children=1)
    with pytest.raises(HierarchyError, match="root label '\\*' is also a value"):
        random_ordered(["a", "*"])


@pytest.mark.parametrize("seed", [-1, "x", 1.7, True, None])
def test_seed_is_checked_as_a_method_checks_it(seed: object) -> None:
    """A seed is an integer >= 0, as every method's (_validate.check_seed): -1 reached NumPy's bare 'expected
    non-negative integer', 'x' a bare int() error, and 1.7 and True were taken as 1."""
    for build in (random_ordered, random_shuffled):
        with pytest.raises(
            InvalidParameterError, match=rf"^random hierarchy: seed must be an integer >= 0, got {seed!r}$"
        ):
            build(range(4), seed=seed)  # type: ignore[arg-type]


def test_a_numpy_seed_builds_the_python_seed_tree() -> None:
    assert random_shuffled(range(7), seed=np.int64(4)) == random_shuffled(range(7), seed=4)
