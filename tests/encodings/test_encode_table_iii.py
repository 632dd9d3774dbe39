"""Paper 000 Table III: the proportional representation of the 3-anonymous Table Ib.

The columns G_00, G_01, G_11, R_00..R_06, R_10..R_12, R_20 of the paper are
M, F, * and cat, lion, tiger, dog, wolf, dolphin, whale, felidae, canine,
cetaceans, mammals (tests/examples.py explains the hierarchy reading). The paper
prints 1/3 and 2/3 as 0.33 and 0.66; the exact fractions are asserted here.
"""

from __future__ import annotations

import polars as pl
import pytest

from polars_anon.encode import encode, encoded_columns
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_I_PARTITION, TABLE_IB, TABLE_III_COLUMNS

T, S = 1 / 3, 2 / 3
PAPER_COLUMNS = [
    "G_00",
    "G_01",
    "G_11",
    "R_00",
    "R_01",
    "R_02",
    "R_03",
    "R_04",
    "R_05",
    "R_06",
    "R_10",
    "R_11",
    "R_12",
    "R_20",
]
# Table III, row by row (l1..l6), in the paper's column order
TABLE_III = [[T, S, 1, T, T, 0, T, 0, 0, 0, S, T, 0, 1]] * 3 + [[S, T, 1, 0, 0, 0, 0, 0, T, S, 0, 0, 1, 1]] * 3


def _matrix(df: pl.DataFrame) -> list[list[float]]:
    return [list(r) for r in df.select(TABLE_III_COLUMNS).rows()]


def test_column_names_and_order_match_table_iii():
    """Paper 000 Table III: columns by level, then depth-first, known before data is read."""
    names = encoded_columns("gender", ANIMAL_HIERARCHIES["gender"]) + encoded_columns(
        "race", ANIMAL_HIERARCHIES["race"]
    )
    assert names == TABLE_III_COLUMNS
    assert len(names) == len(PAPER_COLUMNS)


def test_table_iii_from_row_aligned_tables():
    """Paper 000 Table III from Table Ia (original) and Table Ib (3-anonymous), row-aligned."""
    out = encode(TABLE_IB, ANIMAL_HIERARCHIES, "proportional", original=TABLE_I).collect()
    assert out.columns == ["id", *TABLE_III_COLUMNS]
    assert out["id"].to_list() == ["l1", "l2", "l3", "l4", "l5", "l6"]
    assert all(out.schema[c] == pl.Float32 for c in TABLE_III_COLUMNS)
    for got, want in zip(_matrix(out), TABLE_III, strict=True):
        assert got == pytest.approx(want, abs=1e-7)


@pytest.mark.parametrize("shuffle", [False, True])
def test_table_iii_from_class_ids(shuffle):
    """Paper 000 Table III from the partition {l1,l2,l3}, {l4,l5,l6} as a class id column."""
    cls = pl.Series("cls", TABLE_I_PARTITION)
    original = TABLE_I.with_columns(cls)
    if shuffle:  # with a class id the original rows need not be aligned
        original = original.reverse()
    out = encode(TABLE_IB.with_columns(cls), ANIMAL_HIERARCHIES, original=original, class_col="cls").collect()
    for got, want in zip(_matrix(out), TABLE_III):
        assert got == pytest.approx(want, abs=1e-7)


def test_table_iii_from_partition_frame():
    """Paper 000 Table III from Table Ia plus its class ids alone (no published table given)."""
    out = encode(TABLE_I.with_columns(cls=pl.Series(TABLE_I_PARTITION)), ANIMAL_HIERARCHIES, class_col="cls").collect()
    for got, want in zip(_matrix(out), TABLE_III):
        assert got == pytest.approx(want, abs=1e-7)


def test_table_iii_float64():
    out = encode(TABLE_IB, ANIMAL_HIERARCHIES, original=TABLE_I, dtype=pl.Float64).collect()
    assert _matrix(out)[0] == pytest.approx(TABLE_III[0], abs=1e-15)
