"""Refusals of Mondrian and Datafly options: each names the parameter and what is allowed."""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import InvalidParameterError, NullValueError

DF = pl.DataFrame({"c": ["a", "b", "c", "d"], "n": [1, 2, 3, 4]})
H = {"c": pa.Hierarchy.suppression(["a", "b", "c", "d"])}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "loose"}, r"option 'mode' must be one of \['strict', 'relaxed'\], got 'loose'"),
        ({"depth": 3}, r"method 'mondrian' does not take option 'depth'; it takes \['mode', 'order', 'publish'\]"),
        ({"order": "sideways"}, r"order for qid 'c' must be one of .*got 'sideways'"),
        ({"order": 3}, r"option 'order' must be a string or a dict qid -> order .*got 3"),
        ({"order": {"zz": "numeric"}}, r"order names \['zz'\], which are not qids"),
        ({"order": {"c": ["a", "b"]}}, r"order for qid 'c' misses 2 values of the column \(first: \['c', 'd'\]\)"),
        ({"order": {"c": ["a", "b", "c", "d", "a"]}}, r"order for qid 'c' lists values twice \(first: \['a'\]\)"),
        (
            {"order": {"c": "numeric"}},
            r"order 'numeric' for qid 'c': 4 values are not numbers \(first: \['a', 'b', 'c', 'd'\]\)",
        ),
        (
            {"publish": "mean"},
            r"publish for qid 'c' must be one of \['auto', 'hierarchy', 'range', 'set'\], got 'mean'",
        ),
        ({"publish": {"q": "set"}}, r"publish names \['q'\], which are not qids"),
    ],
)
def test_mondrian_options(options: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        pa.anonymize(DF, qids=["c"], insensitive="n", hierarchies=H, k=2, method="mondrian", **options)


def test_mondrian_without_hierarchy() -> None:
    with pytest.raises(InvalidParameterError, match=r"order 'hierarchy' for qid 'n', which has no hierarchy"):
        pa.anonymize(DF, qids=["n"], insensitive="c", hierarchies={}, k=2, method="mondrian", order="hierarchy")
    with pytest.raises(InvalidParameterError, match=r"publish 'hierarchy' for qid 'n', which has no hierarchy"):
        pa.anonymize(DF, qids=["n"], insensitive="c", hierarchies={}, k=2, method="mondrian", publish="hierarchy")
    with pytest.raises(NullValueError, match=r"column 'n' has 1 null values and no hierarchy"):
        pa.anonymize(
            DF.with_columns(pl.Series("n", [1, None, 3, 4])),
            qids=["n"],
            insensitive="c",
            hierarchies={},
            k=2,
            method="mondrian",
        )
    with pytest.raises(
        InvalidParameterError, match=r"qids \['n'\] have no hierarchy.*needs one for every qid.*'mondrian'"
    ):
        pa.anonymize(DF, qids=["n"], insensitive="c", hierarchies={}, k=2, method="datafly")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_suppressed": -1}, r"max_suppressed must be an integer >= 0, got -1"),
        ({"max_suppressed": True}, r"option 'max_suppressed' must be an integer or None, got True"),
        ({"suppress": "drop"}, r"option 'suppress' must be one of \['remove', 'root'\], got 'drop'"),
        (
            {"mode": "strict"},
            r"method 'datafly' does not take option 'mode'; it takes \['max_suppressed', 'suppress'\]",
        ),
    ],
)
def test_datafly_options(options: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        pa.anonymize(DF, qids=["c"], insensitive="n", hierarchies=H, k=2, method="datafly", **options)


@pytest.mark.parametrize("method", ["fulldomain", "datafly", "topdown"])
def test_a_budget_beyond_int64_is_refused(method: str) -> None:
    """A suppression budget no float holds (2**1030) was a bare OverflowError in the search's bounds (hunt35); 2**63 - 1
    is the largest taken (hunt35's note)."""
    with pytest.raises(
        InvalidParameterError, match=r"max_suppressed must be at most 9223372036854775807 .* 311 digits"
    ):
        pa.anonymize(DF, qids=["c"], insensitive="n", hierarchies=H, k=2, method=method, max_suppressed=2**1030)
    big = pa.anonymize(DF, qids=["c"], insensitive="n", hierarchies=H, k=2, method=method, max_suppressed=(1 << 63) - 1)
    assert big.collect().height + big.report["suppressed"] == DF.height


def test_job_file_qid_without_hierarchy_needs_a_method_that_takes_it(tmp_path) -> None:
    from polars_anon.job import Job, run_job

    DF.write_parquet(tmp_path / "in.parquet")
    raw = {"input": "in.parquet", "output": "out.parquet", "k": 2, "qids": {"c": {}, "n": {"hierarchy": "suppress"}}}
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(
        InvalidParameterError,
        match=r"qids \['c'\] have no hierarchy, and method 'greedy' needs one for every qid; .*\[qids.c\] "
        r"hierarchy = .*'mondrian'",
    ):
        run_job(Job.from_dict({**raw, "method": "greedy"}, tmp_path))
    with pytest.raises(InvalidParameterError, match=r"method 'fulldomain' needs one for every qid"):
        run_job(Job.from_dict(raw, tmp_path))  # the default method
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # refused before anything is written
    assert Job.from_dict({**raw, "method": "mondrian"}).qids == {"c": None, "n": "suppress"}
    with pytest.raises(InvalidParameterError, match=r"job file: \[qids.c\] must be a table"):
        Job.from_dict({**raw, "qids": {"c": "suppress"}})
    with pytest.raises(
        InvalidParameterError,
        match=r"job file: \[qids.c\] has unknown keys \['hierarcy'\]; the only key is 'hierarchy'",
    ):
        Job.from_dict(
            {**raw, "method": "mondrian", "qids": {"c": {"hierarcy": "c.csv"}}}
        )  # a typo is not "no hierarchy"
