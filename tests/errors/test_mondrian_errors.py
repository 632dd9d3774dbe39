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
        ({"mode": "loose"}, r"mode must be one of \['strict', 'relaxed'\], got 'loose'"),
        ({"depth": 3}, r"method 'mondrian' does not take options \['depth'\]; it takes mode, order, publish"),
        ({"order": "sideways"}, r"order for qid 'c' must be one of .*got 'sideways'"),
        ({"order": 3}, r"order must be a string or a dict qid -> order, got int"),
        ({"order": {"zz": "numeric"}}, r"order names \['zz'\], which are not qids"),
        ({"order": {"c": ["a", "b"]}}, r"order for qid 'c' misses 2 values of the column \(first: \['c', 'd'\]\)"),
        ({"order": {"c": ["a", "b", "c", "d", "a"]}}, r"order for qid 'c' lists values twice \(first: \['a'\]\)"),
        ({"order": {"c": "numeric"}}, r"order 'numeric' for qid 'c': 4 values are not numbers \(first: \['a', 'b', 'c', 'd'\]\)"),
        ({"publish": "mean"}, r"publish for qid 'c' must be one of \['auto', 'hierarchy', 'range', 'set'\], got 'mean'"),
        ({"publish": {"q": "set"}}, r"publish names \['q'\], which are not qids"),
    ],
)
def test_mondrian_options(options: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        pa.anonymize(DF, qids=["c"], hierarchies=H, k=2, method="mondrian", **options)


def test_mondrian_without_hierarchy() -> None:
    with pytest.raises(InvalidParameterError, match=r"order 'hierarchy' for qid 'n', which has no hierarchy"):
        pa.anonymize(DF, qids=["n"], hierarchies={}, k=2, method="mondrian", order="hierarchy")
    with pytest.raises(InvalidParameterError, match=r"publish 'hierarchy' for qid 'n', which has no hierarchy"):
        pa.anonymize(DF, qids=["n"], hierarchies={}, k=2, method="mondrian", publish="hierarchy")
    with pytest.raises(NullValueError, match=r"column 'n' has 1 null values and no hierarchy"):
        pa.anonymize(DF.with_columns(pl.Series("n", [1, None, 3, 4])), qids=["n"], hierarchies={}, k=2, method="mondrian")
    with pytest.raises(InvalidParameterError, match=r"qids \['n'\] have no hierarchy.*needs a hierarchy for every qid.*'mondrian'"):
        pa.anonymize(DF, qids=["n"], hierarchies={}, k=2, method="datafly")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_suppressed": -1}, r"max_suppressed must be an integer >= 0, got -1"),
        ({"max_suppressed": True}, r"max_suppressed must be an integer >= 0, got True"),
        ({"suppress": "drop"}, r"suppress must be one of \['remove', 'root'\], got 'drop'"),
        ({"mode": "strict"}, r"method 'datafly' does not take options \['mode'\]; it takes max_suppressed, suppress"),
    ],
)
def test_datafly_options(options: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        pa.anonymize(DF, qids=["c"], hierarchies=H, k=2, method="datafly", **options)


def test_job_file_qid_without_hierarchy_needs_a_method_that_takes_it(tmp_path) -> None:
    from polars_anon.job import Job

    raw = {"input": "in.parquet", "output": "out.parquet", "k": 2, "qids": {"c": {}, "n": {"hierarchy": "suppress"}}}
    with pytest.raises(InvalidParameterError, match=r"job file: qids \['c'\] have no 'hierarchy' key, and method 'greedy' needs a hierarchy for every qid; .*'mondrian'"):
        Job.from_dict({**raw, "method": "greedy"})
    with pytest.raises(InvalidParameterError, match=r"method 'fulldomain' needs a hierarchy"):
        Job.from_dict(raw)  # the default method
    assert Job.from_dict({**raw, "method": "mondrian"}).qids == {"c": None, "n": "suppress"}
    with pytest.raises(InvalidParameterError, match=r"job file: \[qids.c\] must be a table"):
        Job.from_dict({**raw, "qids": {"c": "suppress"}})
    with pytest.raises(InvalidParameterError, match=r"job file: \[qids.c\] has unknown keys \['hierarcy'\]; the only key is 'hierarchy'"):
        Job.from_dict({**raw, "method": "mondrian", "qids": {"c": {"hierarcy": "c.csv"}}})  # a typo is not "no hierarchy"
