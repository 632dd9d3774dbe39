"""Column names Spark's column parser reads as more than a name (a dot: a struct field; a backtick: quoting) work as
qids on Spark as on Polars and DuckDB (mend49, from hunt47's tspark3): every name the Spark road writes is quoted by
the one Spark quoting helper."""

from __future__ import annotations

from typing import Any

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
