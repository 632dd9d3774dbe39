"""The qids' order is part of the request: the methods that break ties break them in favour of the earlier qid.

newuser4 compared two runs with the qids in another order and got other rows; docs/start/your-table.md now says so.
The table: two qids of two values each, every combination once twice over; at k = 2 a split (or a generalization) on
either qid is as good as on the other, so only the order decides."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa

DF = pl.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
H = {"a": pa.Hierarchy.suppression(["x", "y"]), "b": pa.Hierarchy.suppression(["u", "v"])}
A_KEPT = [("x", "*"), ("x", "*"), ("y", "*"), ("y", "*")]  # split on a: classes {x}, {y}; b at its root
B_KEPT = [("*", "u"), ("*", "v"), ("*", "u"), ("*", "v")]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(
    ("method", "first", "second"),
    [
        ("topdown", A_KEPT, B_KEPT),  # top-down splits on the earlier qid (the same loss either way)
        ("mondrian", A_KEPT, B_KEPT),  # Mondrian cuts the earlier of two equally wide qids
        ("datafly", B_KEPT, A_KEPT),  # Datafly generalizes the earlier of two qids with as many values
    ],
)
def test_ties_go_to_the_earlier_qid(engine: str, method: str, first: list, second: list) -> None:
    for order, expected in ((["a", "b"], first), (["b", "a"], second)):
        got = pa.anonymize(DF, hierarchies={q: H[q] for q in order}, k=2, method=method, engine=engine).collect()
        assert got.rows() == expected, (order, method)
