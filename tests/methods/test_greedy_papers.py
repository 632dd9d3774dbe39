"""Greedy k-anonymization on the papers' worked examples, checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

import polars_anon as pa
from polars_anon.algorithms.greedy import merge_cost
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, TABLE_IB

QIDS = ["gender", "race"]


def run(metric: str, **options: object) -> list[tuple[str, str, str]]:
    return (
        pa.anonymize(
            TABLE_I,
            qids=QIDS,
            hierarchies=ANIMAL_HIERARCHIES,
            insensitive="id",
            k=3,
            method="greedy",
            metric=metric,
            **options,
        )
        .collect()
        .rows()
    )


def test_table_i_to_table_ib_with_ncp() -> None:
    """Paper 000 Table Ia, k=3 -> Table Ib, under NCP with paper 001's choices (first, below_k).

    NCP root weights: gender leaf 1/2; race leaf 6/7, felidae 4/7, canine and cetaceans 5/7.
    Class order (race at level 1 costs 2/3 per row on average, gender 1/2, race leaf 4/21):
    (M,cat) (F,lion) (F,dog) (M,dolphin) (M,whale) (F,whale).
    1. (M,cat) + (F,lion) = 1/2+1/2+2/7+2/7 = 1.571 < (M,cat) + (M,dolphin) = 12/7 -> [*, felidae] (2 rows).
    2. [*, felidae] x2 + (F,dog): 1/2 + 2*4/7 + 6/7 = 2.5; dolphin, (M,whale), (F,whale) also 2.5:
       the tie goes to the earliest class, (F,dog) -> [*, mammals] = {l1, l2, l3}.
    3. (M,dolphin) + (M,whale) = 2/7, then + (F,whale) -> [*, cetaceans] = {l4, l5, l6}.
    """
    assert run("ncp") == TABLE_IB.rows()


def test_table_i_with_nllm_keeps_gender() -> None:
    """Paper 000 Table Ia, k=3, NLLM (h_max/h: gender x3/2): gender is the costliest attribute.

    NLLM cost of Table Ib: 6 * 3/4 (gender) + 3 * 6/7 + 3 * 1/7 = 7.5; keeping gender and
    publishing race as mammals costs 6 * 6/7 = 5.14. The loop: (M,cat) + (M,dolphin) = 12/7
    (tied with (M,whale), earliest wins) < (M,cat) + (F,lion) = 3/2 + 4/7; then [M, mammals] x2
    + (M,whale) = 6/7; then the three F rows -> [F, mammals].
    """
    assert run("nllm") == [
        ("l1", "M", "mammals"),
        ("l2", "F", "mammals"),
        ("l3", "F", "mammals"),
        ("l4", "M", "mammals"),
        ("l5", "M", "mammals"),
        ("l6", "F", "mammals"),
    ]


def test_table_i_paper_000_variant() -> None:
    """Paper 000 Algorithm 1 (smallest class first, partners among all classes), NCP.

    (M,cat)+(F,lion) -> [*, felidae] x2; smallest (F,dog) + (F,whale) = 12/7 < [*, felidae] 2.5
    -> [F, mammals] x2; (M,dolphin) + (M,whale) = 2/7 -> [M, cetaceans] x2; the earliest size-2
    class [*, felidae] + [F, mammals] = 1 + 8/7 < [M, cetaceans] 1 + 18/7 -> [*, mammals] x4;
    the last class below k, [M, cetaceans], merges into it: one class [*, mammals].
    """
    assert {(g, r) for _, g, r in run("ncp", first="smallest", partners="all")} == {("*", "mammals")}


@pytest.mark.parametrize(
    ("x", "y", "sx", "sy", "want"),
    [
        ("a", "c", 2, 1, 2 * 2 / 6 + 1 * 2 / 6),  # LCA A: w(a->A) = w(c->A) = 2/6
        ("a", "e", 1, 3, 5 / 6 + 3 * 5 / 6),  # LCA *: every leaf is 5/6 from the root
        ("B", "e", 2, 1, 0 + 1 / 6),  # LCA B: Cost(B, e) = 0, Cost(e, B) = 1/6
        ("a", "*", 1, 1, 5 / 6),  # Cost(*, a) = 0
        ("f", "f", 4, 4, 0.0),
    ],
)
def test_merge_cost_on_figure_2_ncp(x: str, y: str, sx: int, sy: int, want: float) -> None:
    """Paper 001 Figure 2 / Figure 4, NCP weights ω(n, m) = (nl(m) - nl(n)) / nl(G), nl(G) = 6."""
    assert merge_cost({"q": FIG2}, {"q": x}, {"q": y}, sx, sy, metric="ncp") == pytest.approx(want, abs=1e-12)


def test_merge_cost_with_user_weights() -> None:
    """Paper 001 Figure 3: arbitrary edge weights; MC(a, c) = ω(a,A)|C1| + ω(c,A)|C2|."""
    # nodes in preorder: *, A, a, b, c, B, d, e, f
    w = {"q": np.array([0, 10, 1, 2, 3, 20, 4, 5, 7], dtype=float)}
    assert merge_cost({"q": FIG2}, {"q": "a"}, {"q": "c"}, 2, 5, weights=w) == 1 * 2 + 3 * 5
    assert merge_cost({"q": FIG2}, {"q": "b"}, {"q": "d"}, 1, 1, weights=w) == (2 + 10) + (4 + 20)
    assert merge_cost({"q": FIG2}, {"q": "f"}, {"q": "B"}, 3, 2, weights=w) == 7 * 3 + 20 * 2


def test_merge_cost_nllm_two_attributes() -> None:
    """NLLM on the animal hierarchies (h_max = 3): gender x 3/2 * 1/2, race leaf->felidae 2/7."""
    hs = ANIMAL_HIERARCHIES
    got = merge_cost(hs, {"gender": "M", "race": "cat"}, {"gender": "F", "race": "lion"}, 1, 2, metric="nllm")
    assert got == pytest.approx(3 / 4 * 1 + 3 / 4 * 2 + 2 / 7 * 1 + 2 / 7 * 2, abs=1e-12)
