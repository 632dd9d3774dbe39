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
    ({"seed": 1.5}, "seed must be an integer, got 1.5"),
    ({"seed": True}, "seed must be an integer, got True"),
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
