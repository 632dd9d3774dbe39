"""Hierarchy findings of hunt39: each test fails on bee58f2; expected values are worked out by hand."""

from __future__ import annotations

import subprocess
import sys

import polars as pl

from polars_anon import Hierarchy
from polars_anon.hierarchy_spec import build_spec, parse_spec


# ---------------------------------------------------------------- 1. suppression does not depend on the input order
def test_suppression_leaves_are_sorted_whatever_the_input_order() -> None:
    a = Hierarchy.suppression(pl.Series(["M", "é", "F", "M"]))
    b = Hierarchy.suppression(["é", "F", "M"])
    assert a.leaf_labels == ["F", "M", "é"]  # code point order, as a job file reads the column
    assert a == b
    assert Hierarchy.suppression([10, 2]).leaf_labels == ["2", "10"]  # numbers in number order


def test_documented_recipe_gives_the_same_table_in_two_processes() -> None:
    script = (
        "import hashlib, random, polars as pl, polars_anon as pa\n"
        "rng = random.Random(3)\n"
        "df = pl.DataFrame({'id': range(60), 'sex': [rng.choice(['F', 'M', 'é', 'q', 'ab']) for _ in range(60)]})\n"
        "H = {'sex': pa.Hierarchy.suppression(df['sex'].unique())}\n"
        "t = pa.anonymize(df, hierarchies=H, k=5, insensitive='id').collect()\n"
        "print(hashlib.sha256(t.write_csv().encode()).hexdigest(), H['sex'].leaf_labels)\n"
    )
    runs = {
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        for _ in range(4)
    }
    assert len(runs) == 1, runs


# ---------------------------------------------------------------- 2. masking masks every value at every level
def test_a_value_shorter_than_the_mask_is_fully_masked_at_every_level() -> None:
    h = Hierarchy.masking(["a", "bc"])
    assert dict(h.level_map(1).rows())["a"] == "*" and dict(h.level_map(1).rows())["bc"] == "b*"
    assert h.to_rows() == [["a", "*", "**"], ["bc", "b*", "**"]]  # by hand: '**' masks both, and is the root


def test_job_mask_spec_masks_a_one_digit_value_at_level_one() -> None:
    values = pl.Series(["9", "33101", "33102", "4711"]).sort()
    h = build_spec("zip", parse_spec("zip", {"mask": 5}), values)
    for level in range(1, h.height):
        published = dict(h.level_map(level).rows())
        for v in values:  # level L masks min(L, len) characters of every value
            assert published[v].endswith("*" * min(level, len(v))), (level, v, published[v])
    assert h.path_of("9") == ["9", "*", "**", "***", "****", "*****"]


def test_masking_with_fewer_digits_than_a_short_value_needs_a_root_of_its_own() -> None:
    h = Hierarchy.masking(["a", "bcd"], 1)  # level 1: '*' (a fully masked) and 'bc*'; the root above is '**'
    assert h.to_rows() == [["a", "*", "**"], ["bcd", "bc*", "**"]]
