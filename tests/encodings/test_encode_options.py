"""The encode options object: built once at each public entry, every bad value refused there, naming the parameter."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest

from polars_anon import Hierarchy
from polars_anon.encode import EncodeOptions, encode
from polars_anon.encoded_io import write_encoded
from polars_anon.errors import InvalidParameterError

G = {"g": Hierarchy.from_dict({"*": ["M", "F"]})}
PUB = pl.DataFrame({"g": ["*", "M"]})

BAD = [
    ({"representation": "bogus"}, "encoding must be one of"),
    ({"seed": 1.5}, "seed must be an integer >= 0, got 1.5"),
    ({"seed": True}, "seed must be an integer >= 0, got True"),
    ({"dtype": pl.String}, "dtype must be a numeric Polars dtype"),
    ({"class_col": 3}, "class_col must be a column name"),
    ({"validate": "yes"}, "validate must be True or False, got 'yes'"),
    ({"layout": "tall"}, r"layout must be one of \['wide', 'classes'\], got 'tall'"),
    ({"chunk_rows": 0}, "chunk_rows must be an integer >= 1, got 0"),
    ({"original": [1, 2]}, "expected a Polars DataFrame or LazyFrame"),
]


@pytest.mark.parametrize(("bad", "message"), BAD, ids=[next(iter(b)) for b, _ in BAD])
def test_refused_by_the_object_and_every_entry(bad: dict, message: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        EncodeOptions(**bad)
    path = tmp_path / "e.parquet"
    with pytest.raises(InvalidParameterError, match=message):
        write_encoded(PUB, G, path, **bad)
    assert list(tmp_path.iterdir()) == []  # refused before anything is written
    if "layout" not in bad and "chunk_rows" not in bad:  # encode() has no writing keywords
        with pytest.raises(InvalidParameterError, match=message):
            encode(PUB, G, **bad)


def test_normalized_once_and_frozen() -> None:
    options = EncodeOptions("fillParent", PUB, dtype=pl.Float64)
    assert options.representation == "fillparent"
    assert isinstance(options.original, pl.LazyFrame) and options.output_dtype == pl.Float64
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 2  # type: ignore[misc]
    assert encode(PUB, G, "fillParent").collect().row(1) == (1.0, 0.0, 1.0)  # hand: M -> M and its parent


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Boolean, pl.Decimal(10, 0)])
def test_proportional_shares_need_a_float(dtype: pl.DataType) -> None:
    """hunt33: 1/3 and 2/3 were cut to 0 (Int8), True (Boolean) or 0 and 1 (Decimal); the 0/1 encodings keep them."""
    original = pl.DataFrame({"g": ["M", "F", "F"]})
    with pytest.raises(InvalidParameterError, match="'proportional' holds shares of a class"):
        encode(pl.DataFrame({"g": ["*", "*", "*"]}), G, "proportional", original=original, dtype=dtype)
    got = encode(pl.DataFrame({"g": ["*"] * 3}), G, "proportional", original=original, dtype=pl.Float64).collect()
    assert got.row(0) == (1 / 3, 2 / 3, 1.0)  # g_M, g_F, g_* by hand: one M and two F under '*'
    assert encode(PUB, G, "fillparent", dtype=dtype).collect().height == 2


def test_class_col_with_original_checks_every_class() -> None:
    """hunt33: with class_col, a published class no original row holds came out as nulls, and originals not under
    their class's published value were encoded (g_A = 1 on a row published B); both refused, as without class_col."""
    g = {"g": Hierarchy.from_dict({"*": {"A": ["a", "b"], "B": ["c", "d"]}})}
    published = pl.DataFrame({"g": ["A", "A", "B", "B"], "cls": [0, 0, 1, 1]})
    short = pl.DataFrame({"g": ["a", "b"], "cls": [0, 0]})
    with pytest.raises(InvalidParameterError, match="2 published rows have a class_col 'cls' value that no row"):
        encode(published, g, "proportional", original=short, class_col="cls")
    wrong = pl.DataFrame({"g": ["a", "b", "a", "b"], "cls": [0, 0, 1, 1]})
    with pytest.raises(InvalidParameterError, match=r"not under their published value \(first: \['a' -> 'B'"):
        encode(published, g, "proportional", original=wrong, class_col="cls")
    right = pl.DataFrame({"g": ["a", "b", "c", "c"], "cls": [0, 0, 1, 1]})
    got = encode(published, g, "proportional", original=right, class_col="cls").collect()
    assert got.select("g_a", "g_c", "g_A", "g_B").rows() == [(0.5, 0.0, 1.0, 0.0)] * 2 + [(0.0, 1.0, 0.0, 1.0)] * 2
