"""Column names Spark's column parser reads as more than a name (a dot: a struct field; a backtick: quoting) work as
qids on Spark as on Polars and DuckDB (mend49, from hunt47's tspark3): every name the Spark road writes is quoted by
the one Spark quoting helper."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_anon as pa


@pytest.mark.parametrize(("first", "second"), [("x.y", "select"), ("a`b", "my col")])
def test_spark_publishes_odd_qid_names_as_polars_does(first: str, second: str, spark: Any) -> None:
    """A qid named 'x.y' was AnalysisException UNRESOLVED_COLUMN, one named 'a`b' INVALID_ATTRIBUTE_NAME_SYNTAX."""
    df = pl.DataFrame({first: ["x", "y", "z", "x", "y", "z"] * 2, second: ["F", "M"] * 6})
    hs = {
        first: pa.Hierarchy.from_dict({"*": {"xy": ["x", "y"], "z": None}}),
        second: pa.Hierarchy.suppression(["F", "M"]),
    }
    want = pa.anonymize(df, hierarchies=hs, k=4, method="greedy").collect()
    got = pa.anonymize(df, hierarchies=hs, k=4, method="greedy", engine="spark").collect()
    assert got.equals(want)


ODD = ["x.y", "a`b", "c d", "année ñ"]
"""A dot, a backtick, a space, non-ASCII letters: names Spark's column parser reads as more than a name, and one it
reads as is."""


@pytest.mark.parametrize("method", ["mondrian", "greedy", "mdav"])
def test_spark_planners_publish_odd_qid_names_row_for_row_as_polars(method: str, spark: Any) -> None:
    """Spark's planners (beyond driver_tuples; MDAV at any size): greedy and MDAV refused a qid named 'a`b'
    (INVALID_ATTRIBUTE_NAME_SYNTAX, the planners' unquoted references); Mondrian published the driver's rows in
    another order (its map, a Spark table, was shuffle-joined to the rows; any qid names). Failing before."""
    rng = np.random.default_rng(0)
    df = pl.DataFrame({q: rng.integers(0, 12 + 6 * i, 120) for i, q in enumerate(ODD)})
    hs = {q: pa.Hierarchy.intervals(df[q].unique().sort().to_list(), [4, 8]) for q in ODD} if method == "greedy" else {}
    asked: dict[str, Any] = {"qids": ODD, "hierarchies": hs, "k": 4, "method": method}
    want = pa.anonymize(df, **asked).collect()
    got = pa.anonymize(df, engine="spark", driver_tuples=10, **asked)
    if method != "mdav":  # MDAV runs on Spark's records at any size
        assert got.report["details"]["distributed"]["driver_tuples"] == 10
    assert got.collect().equals(want)
