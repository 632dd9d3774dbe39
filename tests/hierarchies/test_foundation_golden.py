"""Worked examples of the papers for hierarchies, generalization and full-domain search."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

import polars_anon as pa
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, TABLE_I_PARTITION, TABLE_IB, is_truthful


def test_figure2_levels_and_leaves() -> None:
    """Paper 001 Figure 2: leaves are level 0, A and B level 1, the root level 2; h = 3."""
    nodes = FIG2.nodes.select("label", "level", "leaves").rows()
    assert {label: (level, leaves) for label, level, leaves in nodes} == {
        "*": (2, 6),
        "A": (1, 3),
        "B": (1, 2),
        "a": (0, 1),
        "b": (0, 1),
        "c": (0, 1),
        "d": (0, 1),
        "e": (0, 1),
        "f": (0, 1),
    }
    assert FIG2.height == 3 and FIG2.n_leaves == 6 and FIG2.root == "*"


def test_figure2_lca() -> None:
    """Paper 001 Figure 4: LCA(a, c) = A, LCA(a, *) = *, LCA(e, B) = B."""
    lca = lambda x, y: FIG2.label_of(FIG2.lca(FIG2.id_of(x), FIG2.id_of(y)))
    assert (lca("a", "c"), lca("a", "*"), lca("e", "B"), lca("d", "f"), lca("b", "b")) == ("A", "*", "B", "*", "b")


def test_figure2_cost_matrix_pattern() -> None:
    """Paper 001 §3: Cost_Q(n, m) = w(n -> LCA(n, m)), the matrix printed in the paper."""
    omega = {"A": 1.0, "B": 2.0, "a": 3.0, "b": 4.0, "c": 5.0, "d": 6.0, "e": 7.0, "f": 8.0}
    weights = np.array([omega.get(label, 0.0) for label in FIG2.labels])
    up = {  # w(n -> A), w(n -> B), w(n -> *) by hand
        ("A", "*"): 1,
        ("B", "*"): 2,
        ("a", "A"): 3,
        ("a", "*"): 4,
        ("b", "A"): 4,
        ("b", "*"): 5,
        ("c", "A"): 5,
        ("c", "*"): 6,
        ("d", "B"): 6,
        ("d", "*"): 8,
        ("e", "B"): 7,
        ("e", "*"): 9,
        ("f", "*"): 8,
    }
    order = ["*", "A", "B", "a", "b", "c", "d", "e", "f"]
    paper = {  # row n: the ancestor of n reached when merged with each column m (None: cost 0)
        "*": [None] * 9,
        "A": ["*", None, "*", None, None, None, "*", "*", "*"],
        "B": ["*", "*", None, "*", "*", "*", None, None, "*"],
        "a": ["*", "A", "*", None, "A", "A", "*", "*", "*"],
        "b": ["*", "A", "*", "A", None, "A", "*", "*", "*"],
        "c": ["*", "A", "*", "A", "A", None, "*", "*", "*"],
        "d": ["*", "*", "B", "*", "*", "*", None, "B", "*"],
        "e": ["*", "*", "B", "*", "*", "*", "B", None, "*"],
        "f": ["*"] * 8 + [None],
    }
    cost = FIG2.cost_matrix(weights)
    for n in order:
        for m, target in zip(order, paper[n]):
            want = 0.0 if target is None else up[(n, target)]
            assert cost[FIG2.id_of(n), FIG2.id_of(m)] == want, (n, m)


def test_table_i_partition_gives_table_ib() -> None:
    """Paper 000 Table I: merging {l1,l2,l3} and {l4,l5,l6} publishes Table Ib."""
    lf = TABLE_I.with_columns(pl.Series("cls", TABLE_I_PARTITION)).lazy()
    out = pa.generalize_partition(lf, ANIMAL_HIERARCHIES, "cls").drop("cls").collect()
    assert_frame_equal(out, TABLE_IB)


def test_table_i_fulldomain_k3() -> None:
    """Table I at k=3, full-domain: race must reach mammals (canine alone at level 1);
    then gender can stay (M: l1, l4, l5; F: l2, l3, l6), average NCP (0 + 1) / 2."""
    res = pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=3)
    out = res.collect()
    assert out["race"].to_list() == ["mammals"] * 6
    assert out["gender"].to_list() == TABLE_I["gender"].to_list()
    assert res.report["details"]["levels"] == {"gender": 0, "race": 2} and res.report["loss"] == 0.5
    assert res.report["min_class_size"] == 3 and is_truthful(TABLE_I, out, ANIMAL_HIERARCHIES)
