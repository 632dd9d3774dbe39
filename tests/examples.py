"""The papers' worked examples, shared by the tests.

- FIG2: the 9-node hierarchy of paper 001 Figure 2 (a, b, c -> A; d, e -> B; A, B, f -> *).
- RACE, GENDER, TABLE_I, TABLE_IB: paper 000 Example 1 / Table I. The race hierarchy
  is built to match Table III's columns: R_00..R_06 = cat, lion, tiger, dog, wolf,
  dolphin, whale; R_10..R_12 = felidae, canine, cetaceans; R_20 = mammals. (Table II
  of the paper gives canine three leaves, which contradicts Table III; the issue
  asks for the Table III reading.) Gender: G_00 = M, G_01 = F, G_11 = *.
"""

from __future__ import annotations

import polars as pl

from polars_anon import Hierarchy

FIG2 = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e"], "f": None}})

RACE = Hierarchy.from_dict(
    {"mammals": {"felidae": ["cat", "lion", "tiger"], "canine": ["dog", "wolf"], "cetaceans": ["dolphin", "whale"]}}
)
GENDER = Hierarchy.from_dict({"*": ["M", "F"]})
ANIMAL_HIERARCHIES = {"gender": GENDER, "race": RACE}

TABLE_I = pl.DataFrame(
    {
        "id": ["l1", "l2", "l3", "l4", "l5", "l6"],
        "gender": ["M", "F", "F", "M", "M", "F"],
        "race": ["cat", "lion", "dog", "dolphin", "whale", "whale"],
    }
)
TABLE_IB = pl.DataFrame(
    {
        "id": ["l1", "l2", "l3", "l4", "l5", "l6"],
        "gender": ["*"] * 6,
        "race": ["mammals"] * 3 + ["cetaceans"] * 3,
    }
)
TABLE_I_PARTITION = [0, 0, 0, 1, 1, 1]  # {l1, l2, l3}, {l4, l5, l6}


def is_truthful(original: pl.DataFrame, published: pl.DataFrame, hierarchies: dict[str, Hierarchy]) -> bool:
    """Every published quasi-identifier value is its row's original value or an ancestor of it.

    The frames are row-aligned (same order, same length).
    """
    if original.height != published.height:
        return False
    for q, h in hierarchies.items():
        pairs = h.paths.select(
            pl.col("node").replace_strict(list(range(h.n_nodes)), h.labels, return_dtype=pl.String).alias("orig"),
            pl.col("ancestor").replace_strict(list(range(h.n_nodes)), h.labels, return_dtype=pl.String).alias("pub"),
        )
        rows = pl.DataFrame({"orig": original[q].cast(pl.String), "pub": published[q].cast(pl.String)})
        if rows.join(pairs, on=["orig", "pub"], how="anti").height:
            return False
    return True


TABLE_III_COLUMNS = [
    "gender_M",
    "gender_F",
    "gender_*",
    "race_cat",
    "race_lion",
    "race_tiger",
    "race_dog",
    "race_wolf",
    "race_dolphin",
    "race_whale",
    "race_felidae",
    "race_canine",
    "race_cetaceans",
    "race_mammals",
]
"""The encoded columns of Table I (paper 000 Table III): one per hierarchy node, leaves first, in our order."""
