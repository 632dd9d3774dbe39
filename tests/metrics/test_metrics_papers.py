"""Every metric, computed by hand on the papers' worked examples.

- Paper 000 Table I anonymized to its Table Ib (tests/examples.py), with an added
  sensitive column ``habitat`` for CM and MI loss.
- The paper 001 Figure 2 hierarchy on a 6-row table with a gender attribute and a
  sensitive attribute S, published by local recoding into three classes.
- A small numeric attribute (not from the papers) for the squared distance error
  and Byun's ordered information loss.

Each expected value is written as the arithmetic it comes from.
"""

from __future__ import annotations

import math
from dataclasses import replace

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.metrics import METRICS, compute, prepare
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, TABLE_IB

ln = math.log


def H(*counts: int) -> float:
    """Entropy (nats) of a distribution given by counts."""
    n = sum(counts)
    return -sum(c / n * ln(c / n) for c in counts)


def hell(p: list[float], q: list[float]) -> float:
    return math.sqrt(sum((math.sqrt(a) - math.sqrt(b)) ** 2 for a, b in zip(p, q))) / math.sqrt(2)


# ------------------------------------------------------------------ paper 000 Table I -> Ib
HABITAT = ["land", "land", "land", "sea", "sea", "land"]
ANIMALS = ["gender", "race"]
# wid: (h-1)^2 = 1 (gender), 4 (race) -> 0.8, 0.2; h_max = 3; nl(G): 2 and 7.
# T*: every cell at the root: gender 6 cells at *, race 6 cells at mammals.
T_STAR_I = {
    "distortion": 6 * 0.8 + 6 * 0.2,
    "ncp": 6 * 1 / 2 + 6 * 6 / 7,
    "total": 6 + 6,
    "llm": 6 * 1 * 3 / 2 + 6 * 6 * 3 / 3,
    "nllm": 6 * 1 / 2 * 3 / 2 + 6 * 6 / 7,
    "wllm": 6 * 1 * 0.8 + 6 * 6 * 0.2,
    "wnllm": 6 * 1 / 2 * 0.8 + 6 * 6 / 7 * 0.2,
}
COST_I = {
    # gender: 6 cells at * (level 1 of 1); race: 3 cells at mammals (level 2), 3 at cetaceans (level 1, nl 2)
    "distortion": 6 * 0.8 + 3 * 0.2 + 3 * (0.5 / 1.5) * 0.2,  # c_1 = 1/2, c_2 = 1 for race
    "ncp": 6 * 1 / 2 + 3 * 6 / 7 + 3 * 1 / 7,
    "total": 6 * 1 + 3 * 2 / 2 + 3 * 1 / 2,
    "llm": 6 * 1 * 3 / 2 + (3 * 6 + 3 * 1) * 3 / 3,
    "nllm": 6 * 1 / 2 * 3 / 2 + (3 * 6 + 3 * 1) / 7,
    "wllm": 6 * 1 * 0.8 + (3 * 6 + 3 * 1) * 0.2,
    "wnllm": 6 * 1 / 2 * 0.8 + (3 * 6 + 3 * 1) / 7 * 0.2,
}
TABLE_I_EXPECTED = {
    **COST_I,
    "alteration": 100 * sum(COST_I[m] / T_STAR_I[m] for m in COST_I) / 7,
    "modified": 100.0,  # all 12 cells changed
    "deleted": 100 * 9 / 12,  # 6 gender cells, 3 race cells at mammals
    "deleted_of_modified": 100 * 9 / 12,
    "iloss": 6.0,
    "granularity": 6.0,
    # (nl(v) - 1) / (nl(G) - 1): gender 6 cells at * (1), race 3 at mammals (1), 3 at cetaceans ((2 - 1) / (7 - 1))
    "loss": (6 * 1 + 3 * 1 + 3 * 1 / 6) / 12,
    "precision": 1 - (6 * 1 + 3 * 1 + 3 * 1 / 2) / 12,
    "absolute_distance": None,  # race publishes mammals (level 2) and cetaceans (level 1): not full-domain
    "relative_distance": None,
    # original counts: M 3, F 3; cat, lion, dog, dolphin 1, whale 2
    "entropy": 6 * H(3, 3) + 3 * H(1, 1, 1, 1, 2) + 3 * H(1, 2),
    "ambiguity": (3 * 2 * 7 + 3 * 2 * 2) / 6,
    "squared_distance_error": None,  # no numeric attribute
    "information_loss": 6 * 1 + 3 * 1 + 3 * 1 / 2,  # no ordered attribute: l_v / (h - 1)
    "discernibility": 3**2 + 3**2,
    "c_avg": 6 / (3 * 2),
    "cm": 1 / 6,  # (land, land, land) pure, (sea, sea, land) one minority row
    "diameter": 1,  # (*, mammals) vs (*, cetaceans)
    "k": 3,
    "min_class_size": 3,
    "n_classes": 2,
    "suppressed": 0,
    # gender: P = Q = (1/2, 1/2); race over cat, lion, tiger, dog, wolf, dolphin, whale:
    # mammals' 3 rows spread 3/7 each, cetaceans' 3 rows 3/2 each
    "hellinger": (
        0
        + hell(
            [1 / 6, 1 / 6, 0, 1 / 6, 0, 1 / 6, 2 / 6],
            [1 / 14, 1 / 14, 1 / 14, 1 / 14, 1 / 14, 1 / 14 + 1 / 4, 1 / 14 + 1 / 4],
        )
    )
    / 2,
    # V(gender, race) in D: phi^2 = 4 * 1/3 + 2 * 1/6 - 1 = 2/3, min(2, 5) - 1 = 1; in D' gender is constant: 0
    "cramers_v": math.sqrt(2 / 3),
    # pairs (gender, race), (gender, habitat), (race, habitat); D' generalizes gender to one value
    "mi_loss": (
        (4 / 6 * ln(2) - 0)
        + (1 / 6 * ln(1 / 2) + 2 / 6 * ln(2) + 3 / 6 * ln(3 / 2) - 0)
        + (
            (4 / 6 * ln(3 / 2) + 1 / 6 * ln(3) + 1 / 6 * ln(3 / 4))
            - (3 / 6 * ln(3 / 2) + 2 / 6 * ln(2) + 1 / 6 * ln(1 / 2))
        )
    )
    / 3,
}


def _check(got: dict, expected: dict) -> None:
    assert set(expected) == set(METRICS), "every registered metric needs a hand value"
    for name, want in expected.items():
        value = got[name]
        if want is None:
            assert value is None, name
        else:
            assert value == pytest.approx(want, rel=1e-12, abs=1e-12), name


def test_table_i_every_metric() -> None:
    """Paper 000 Table I -> Table Ib, every metric."""
    original = TABLE_I.with_columns(habitat=pl.Series(HABITAT))
    published = TABLE_IB.with_columns(habitat=pl.Series(HABITAT))
    got = compute(original, published, ANIMALS, ANIMAL_HIERARCHIES, list(METRICS), sensitive="habitat", k=3).row(
        0, named=True
    )
    _check(got, TABLE_I_EXPECTED)


def test_table_i_per_attribute() -> None:
    """Paper 000 Table I -> Table Ib, per attribute: the cost model splits, the others are projections."""
    original = TABLE_I.with_columns(habitat=pl.Series(HABITAT))
    per = compute(original, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, sensitive="habitat", k=3, by_attribute=True)
    gender, race = per.row(0, named=True), per.row(1, named=True)
    assert gender["ncp"] == 3.0 and race["ncp"] == pytest.approx(3 * 6 / 7 + 3 * 1 / 7)
    assert gender["alteration"] == 100.0  # gender is already at its root everywhere
    # per attribute the factors cancel: five leaf-count metrics give 21/36, total 4.5/6, distortion (3 + 3/3)/6
    assert race["alteration"] == pytest.approx(100 * (5 * 21 / 36 + 4.5 / 6 + 4 / 6) / 7)
    assert gender["absolute_distance"] == 1 and race["absolute_distance"] is None
    assert gender["discernibility"] == 36 and race["discernibility"] == 18  # one class of 6; two of 3
    assert gender["diameter"] == 0 and race["diameter"] == 1
    assert gender["ambiguity"] == 2.0 and race["ambiguity"] == (3 * 7 + 3 * 2) / 6
    assert gender["hellinger"] == 0.0
    assert gender["cramers_v"] == race["cramers_v"] == pytest.approx(math.sqrt(2 / 3))
    assert gender["mi_loss"] == pytest.approx(
        (4 / 6 * ln(2) + 1 / 6 * ln(1 / 2) + 2 / 6 * ln(2) + 3 / 6 * ln(3 / 2)) / 2
    )


def test_table_i_with_levels() -> None:
    """Given full-domain levels, the distances are their sums (gender 1 of 1, race 2 of 2)."""
    data = prepare(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, levels={"gender": 1, "race": 2})
    out = pa.metrics.evaluate(data, ["absolute_distance", "relative_distance"]).row(0)
    assert out == (3, 2.0)


def test_table_i_suppressed_row() -> None:
    """Table Ib without l6, lined up by id: l6 counts as suppressed, published at the roots for the cells."""
    got = compute(TABLE_I, TABLE_IB.filter(pl.col("id") != "l6"), ANIMALS, ANIMAL_HIERARCHIES, key="id", k=2).row(
        0, named=True
    )
    assert got["suppressed"] == 1
    assert got["discernibility"] == 3**2 + 2**2 + 6 * 1  # a suppressed row costs |D| (Bayardo and Agrawal)
    assert got["n_classes"] == 2 and got["min_class_size"] == 2
    assert got["c_avg"] == 5 / (2 * 2)
    assert got["ncp"] == pytest.approx(6 * 1 / 2 + 3 * 6 / 7 + 2 * 1 / 7 + 6 / 7)
    assert got["deleted"] == pytest.approx(100 * (6 + 3 + 1) / 12)
    assert got["loss"] == pytest.approx((6 + 3 + 2 * 1 / 6 + 1) / 12)  # l6 counts 1 in both cells


def test_loss_of_one_leaf_hierarchy_and_suppressed_rows() -> None:
    """A kept cell of a one-leaf hierarchy costs 0; a suppressed row costs 1 in every cell, that one included."""
    h = {"c": pa.Hierarchy.suppression(["x"]), "g": pa.Hierarchy.suppression(["F", "M"])}
    original = pl.DataFrame({"id": [1, 2, 3], "c": ["x", "x", "x"], "g": ["F", "M", "F"]})
    published = pl.DataFrame({"id": [1, 2], "c": ["x", "*"], "g": ["F", "*"]})
    got = compute(original, published, ["c", "g"], h, "loss", key="id", by_attribute=True)
    # c: row 1 kept at x (0), row 2 kept at * (nl 1: 0), row 3 suppressed (1); g: 0, 1, 1
    assert got["loss"].to_list() == pytest.approx([1 / 3, 2 / 3])
    assert compute(original, published, ["c", "g"], h, "loss", key="id").item() == pytest.approx(3 / 6)


# ------------------------------------------------------------------ normalized by T* (paper 003 §3.5)
# T* of Table I publishes every gender cell as * and every race cell as mammals, no row removed.
MI_D = {  # mutual information in the original Table I with habitat (nats)
    ("gender", "race"): 2 / 3 * ln(2),  # H(gender) - H(gender | race): only whale is both M and F
    ("gender", "habitat"): H(4, 2) - H(1, 2) / 2,  # M: land 1, sea 2; F: land 3
    ("race", "habitat"): H(4, 2) - 2 / 6 * ln(2),  # only whale is both land and sea
}
T_STAR_I_ALL = {
    **T_STAR_I,
    "entropy": 6 * H(3, 3) + 6 * H(1, 1, 1, 1, 2),
    "ambiguity": 2 * 7,
    "information_loss": 6 + 6,
    "discernibility": 6**2,
    "absolute_distance": 1 + 2,
    "relative_distance": 2.0,
    "mi_loss": sum(MI_D.values()) / 3,  # the qids of T* are constant: no mutual information left
}
SCALE_I = {  # the metrics normalized by their own range
    "alteration": 100,
    "modified": 100,
    "deleted": 100,
    "deleted_of_modified": 100,
    "loss": 1,
    "precision": 1,
    "cm": 1,
    "hellinger": 1,
    "cramers_v": 1,
    "c_avg": 6 / 3,
    "diameter": 2,
    "k": 6,
    "min_class_size": 6,
    "n_classes": 6,
    "suppressed": 6,
}


def test_table_i_normalized() -> None:
    """Each metric over its value on T* (hand values), or over its own range; aliases as ncp."""
    original = TABLE_I.with_columns(habitat=pl.Series(HABITAT))
    published = TABLE_IB.with_columns(habitat=pl.Series(HABITAT))
    got = compute(
        original, published, ANIMALS, ANIMAL_HIERARCHIES, list(METRICS), sensitive="habitat", k=3, normalized=True
    )
    assert set(T_STAR_I_ALL) | set(SCALE_I) | {"iloss", "granularity", "squared_distance_error"} == set(METRICS)
    for name, raw in TABLE_I_EXPECTED.items():
        divisor = T_STAR_I_ALL.get(METRICS[name].alias_of or name, SCALE_I.get(name))
        want = None if raw is None else raw / divisor
        value = got[name].item()
        assert (value is None and want is None) or value == pytest.approx(want, rel=1e-12), name
    assert got.schema == dict.fromkeys(METRICS, pl.Float64)


def test_normalized_t_star_is_one() -> None:
    """The fully suppressed table itself normalizes to 1 wherever T* is the divisor."""
    original = TABLE_I.with_columns(habitat=pl.Series(HABITAT))
    star = original.with_columns(gender=pl.lit("*"), race=pl.lit("mammals"))
    got = compute(
        original, star, ANIMALS, ANIMAL_HIERARCHIES, sensitive="habitat", k=3, normalized=True, by_attribute=True
    )
    for name in got.columns[1:]:
        if METRICS[name].scale is None and name != "squared_distance_error":
            assert got[name].to_list() == pytest.approx([1.0, 1.0]), name


def test_normalized_c_avg_needs_k() -> None:
    got = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, ["c_avg", "diameter"], normalized=True)
    assert got.row(0) == (None, 0.5)


# ------------------------------------------------------------------ paper 001 Figure 2
# Q has the Figure 2 hierarchy (a, b, c -> A; d, e -> B; A, B, f -> *; h = 3, nl = 6);
# G is suppression only (M, F -> *; h = 2). wid: (h-1)^2 = 4 and 1 -> wid(Q) = 0.2, wid(G) = 0.8.
FIG2_ORIGINAL = pl.DataFrame(
    {"Q": ["a", "b", "c", "d", "e", "f"], "G": ["M", "M", "F", "F", "M", "F"], "S": ["x", "x", "y", "x", "y", "y"]}
)
FIG2_PUBLISHED = FIG2_ORIGINAL.with_columns(
    Q=pl.Series(["A", "A", "*", "*", "*", "*"]), G=pl.Series(["M", "M", "F", "F", "*", "*"])
)  # classes {a, b} -> (A, M), {c, d} -> (*, F), {e, f} -> (*, *)
FIG2_H = {"Q": FIG2, "G": pa.Hierarchy.suppression(["M", "F"])}
# Q cells: 2 at A (level 1, nl 3), 4 at *; G cells: 4 unchanged, 2 at *.
COST_F = {
    "distortion": 2 * (0.5 / 1.5) * 0.2 + 4 * 0.2 + 2 * 0.8,
    "ncp": 2 * 2 / 6 + 4 * 5 / 6 + 2 * 1 / 2,
    "total": 2 * 1 / 2 + 4 * 1 + 2 * 1,
    "llm": (2 * 2 + 4 * 5) * 3 / 3 + 2 * 1 * 3 / 2,
    "nllm": (2 * 2 + 4 * 5) / 6 + 2 * 1 / 2 * 3 / 2,
    "wllm": (2 * 2 + 4 * 5) * 0.2 + 2 * 1 * 0.8,
    "wnllm": (2 * 2 + 4 * 5) / 6 * 0.2 + 2 * 1 / 2 * 0.8,
}
T_STAR_F = {
    "distortion": 6 * 0.2 + 6 * 0.8,
    "ncp": 6 * 5 / 6 + 6 * 1 / 2,
    "total": 6 + 6,
    "llm": 6 * 5 + 6 * 3 / 2,
    "nllm": 6 * 5 / 6 + 6 * 1 / 2 * 3 / 2,
    "wllm": 6 * 5 * 0.2 + 6 * 0.8,
    "wnllm": 6 * 5 / 6 * 0.2 + 6 * 1 / 2 * 0.8,
}
FIG2_EXPECTED = {
    **COST_F,
    "alteration": 100 * sum(COST_F[m] / T_STAR_F[m] for m in COST_F) / 7,
    "modified": 100 * 8 / 12,  # every Q cell, 2 G cells
    "deleted": 100 * 6 / 12,  # 4 Q cells and 2 G cells at the roots
    "deleted_of_modified": 100 * 6 / 8,
    "iloss": COST_F["ncp"],
    "granularity": COST_F["ncp"],
    "loss": (2 * 2 / 5 + 4 * 1 + 2 * 1) / 12,  # Q: 2 at A (nl 3 of 6), 4 at *; G: 2 at *
    "precision": 1 - (2 * 1 / 2 + 4 * 1 + 2 * 1) / 12,
    "absolute_distance": None,  # Q mixes A (level 1) and * (level 2), G mixes M and *
    "relative_distance": None,
    "entropy": 2 * H(1, 1, 1) + 4 * H(1, 1, 1, 1, 1, 1) + 2 * H(3, 3),
    "ambiguity": (2 * 3 * 1 + 2 * 6 * 1 + 2 * 6 * 2) / 6,
    "squared_distance_error": None,
    "information_loss": 2 * 1 / 2 + 4 * 1 + 2 * 1,
    "discernibility": 2**2 * 3,
    "c_avg": 6 / (2 * 3),
    "cm": 1 / 6,  # class {c, d} has S = (y, x)
    "diameter": 2,  # (A, M) vs (*, F) differ in both attributes
    "k": 2,
    "min_class_size": 2,
    "n_classes": 3,
    "suppressed": 0,
    # Q: P uniform 1/6; D' spreads A's 2 rows over a, b, c and *'s 4 rows over all six leaves
    # -> a, b, c: (2/3 + 2/3) / 6 = 2/9, d, e, f: (2/3) / 6 = 1/9. G: M 2 + 1, F 2 + 1 -> P = Q.
    "hellinger": (hell([1 / 6] * 6, [2 / 9] * 3 + [1 / 9] * 3) + 0) / 2,
    # V(Q, G) = 1 in D (Q determines G; min(6, 2) - 1 = 1) and in D' (phi^2 = 1 + 1/2 + 1/2 - 1, min(2, 3) - 1 = 1)
    "cramers_v": 0.0,
    # pairs (Q, G), (Q, S), (G, S): MI(D) - MI(D'); recoding can raise MI(G, S)
    "mi_loss": (
        (ln(2) - (ln(3) + 2 * ln(3 / 2)) / 3)
        + (ln(2) - (2 / 6 * ln(2) + 1 / 6 * ln(1 / 2) + 3 / 6 * ln(3 / 2)))
        + ((4 / 6 * ln(4 / 3) + 2 / 6 * ln(2 / 3)) - 4 / 6 * ln(2))
    )
    / 3,
}


def test_figure_2_every_metric() -> None:
    """Paper 001 Figure 2 hierarchy with a gender attribute, three classes of 2, every metric."""
    got = compute(FIG2_ORIGINAL, FIG2_PUBLISHED, ["Q", "G"], FIG2_H, list(METRICS), sensitive="S", k=2).row(
        0, named=True
    )
    _check(got, FIG2_EXPECTED)


def test_figure_2_cost_of_one_cell() -> None:
    """Paper 001 Figure 4: w(a -> *) = w(a -> A) + w(A -> *); NCP of publishing a as * is 5/6."""
    one = pl.DataFrame({"Q": ["a"]})
    assert compute(one, pl.DataFrame({"Q": ["*"]}), ["Q"], {"Q": FIG2}, "ncp").item() == pytest.approx(5 / 6)
    assert compute(one, pl.DataFrame({"Q": ["A"]}), ["Q"], {"Q": FIG2}, "ncp").item() == pytest.approx(2 / 6)


# ------------------------------------------------------------------ a numeric attribute
def test_numeric_attribute() -> None:
    """Ages 30, 31, 35, 38 under 5- and 10-year bands: squared distance error and Byun's ordered loss."""
    h = pa.Hierarchy.intervals([30, 31, 35, 38], [5, 10])
    original = pl.DataFrame({"age": [30, 31, 35, 38]})
    published = pl.DataFrame({"age": ["30-34", "30-34", "35", "30-39"]})
    got = compute(original, published, ["age"], {"age": h}).row(0, named=True)
    # node means: 30-34 -> 30.5, 35 -> 35, 30-39 -> (30 + 31 + 35 + 38) / 4 = 33.5
    assert got["squared_distance_error"] == pytest.approx(0.5 + 0.5 + 0 + 4.5)
    # leaf intervals over the domain 38 - 30 = 8: 30-34 spans 30..31 (1/8), 35 spans 0, 30-39 spans 8/8
    assert got["information_loss"] == pytest.approx(2 * 1 / 8 + 0 + 1)
    # a numeric and a non-numeric qid: the record distance uses the numeric one only
    two = compute(
        original.with_columns(g=pl.lit("F")),
        published.with_columns(g=pl.lit("*")),
        ["age", "g"],
        {"age": h, "g": pa.Hierarchy.suppression(["F"])},
        "squared_distance_error",
    )
    assert two.item() == pytest.approx(5.5)


def test_example_data_matches_table_i() -> None:
    """The docstring examples' data is Table I -> Ib with the same habitat column."""
    from polars_anon.metrics._frames import example

    got = pa.metrics.evaluate(replace(example(), k=3), list(METRICS)).row(0, named=True)
    _check(got, TABLE_I_EXPECTED)
