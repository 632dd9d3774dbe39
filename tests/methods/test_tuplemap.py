"""TupleMap.check_covers: every input row sent exactly once, on the aligned fast path and through the join."""

from __future__ import annotations

import polars as pl
import pytest

from polars_anon.tuplemap import OFFSET, SIZE, SUPPRESSED, TupleMap, out_col

AGG = pl.DataFrame({"g": ["F", "M", "X"], SIZE: [3, 1, 2]}, schema_overrides={SIZE: pl.UInt32})


def _map(g: list[str], sizes: list[int], **extra: list[int]) -> TupleMap:
    frame = pl.DataFrame({"g": g, out_col("g"): ["*"] * len(g), SIZE: sizes, SUPPRESSED: [False] * len(g), **extra})
    return TupleMap(("g",), frame.with_columns(pl.col(SIZE).cast(pl.Int64)))


@pytest.mark.parametrize(
    "tmap",
    [
        _map(["F", "M", "X"], [3, 1, 2]),  # aligned with the aggregates
        _map(["X", "F", "M"], [2, 3, 1]),  # another order
        _map(["F", "F", "M", "X"], [1, 2, 1, 2], **{OFFSET: [0, 1, 0, 0]}),  # a split tuple
    ],
)
def test_covering_maps_pass(tmap: TupleMap) -> None:
    tmap.check_covers(AGG)


@pytest.mark.parametrize(
    "tmap",
    [
        _map(["F", "M", "X"], [3, 1, 1]),  # a row lost
        _map(["F", "M", "M"], [3, 1, 2]),  # a tuple missing, another doubled
        _map(["F", "M"], [3, 1]),
    ],
)
def test_maps_that_do_not_cover_fail(tmap: TupleMap) -> None:
    with pytest.raises(AssertionError, match="does not cover the input rows exactly"):
        tmap.check_covers(AGG)
