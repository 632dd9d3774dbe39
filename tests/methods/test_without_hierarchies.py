"""A method that publishes without hierarchies (mondrian, mdav, local_suppression: ``needs_hierarchies=False`` in the
registry) runs without them being passed (mend45): ``pa.anonymize(df, qids=["a"], k=2, method="local_suppression")``
was Python's raw "anonymize() missing 1 required keyword-only argument: 'hierarchies'". A method that needs them
refuses in one line naming the qids without one, the method and how to give them (the request's check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
from polars_anon.algorithms import METHODS
from polars_anon.job import Job, run_job

DF = pl.DataFrame({"id": list(range(8)), "n": [1, 2, 2, 3, 5, 6, 6, 9], "c": ["x", "y"] * 4})
FREE = sorted(m for m, spec in METHODS.items() if not spec.needs_hierarchies)
NEEDING = sorted(m for m, spec in METHODS.items() if spec.needs_hierarchies)
ARGS: dict[str, Any] = {"qids": ["n"], "k": 2, "insensitive": "id"}


@pytest.mark.parametrize("method", FREE)
def test_a_method_that_needs_no_hierarchy_runs_without_them(method: str) -> None:
    want = pa.anonymize(DF, hierarchies={}, method=method, **ARGS).collect()
    assert pa.anonymize(DF, method=method, **ARGS).collect().equals(want)
    assert DF.anon.k_anonymize(method=method, **ARGS).equals(want)
    assert DF.lazy().anon.k_anonymize(method=method, **ARGS).collect().equals(want)


@pytest.mark.parametrize("method", NEEDING)
def test_a_method_that_needs_them_names_the_qids_the_method_and_how(method: str) -> None:
    said = (
        rf"qids \['n'\] have no hierarchy, and method '{method}' needs one for every qid; give one in hierarchies, "
        r"e\.g\. hierarchies=\{'n': pa\.Hierarchy\.suppression\(values\)\} \(or another builder\), or use a method "
        rf"that publishes without one: {FREE}".replace("[", r"\[")
        .replace("]", r"\]")
        .replace(r"\\", "\\")
    )
    for door in (
        lambda: pa.anonymize(DF, method=method, **ARGS),
        lambda: DF.anon.k_anonymize(method=method, **ARGS),
        lambda: DF.lazy().anon.k_anonymize(method=method, **ARGS),
        lambda: pad.anonymize(DF, connection=duckdb.connect(), method=method, **ARGS),
        lambda: pa.anonymize(DF, engine="duckdb", method=method, **ARGS),
    ):
        with pytest.raises(pa.InvalidParameterError, match=said) as refused:
            door()
        assert "\n" not in str(refused.value)


def test_a_job_names_its_own_key(tmp_path: Path) -> None:
    """A job file's qid without a hierarchy: the way out is the job file's key, not a Python keyword."""
    DF.write_parquet(tmp_path / "in.parquet")
    raw = {"input": "in.parquet", "output": "out.parquet", "k": 2, "qids": {"n": {}}, "insensitive": ["id"]}
    job = Job.from_dict(raw, tmp_path)
    with pytest.raises(
        pa.InvalidParameterError,
        match=r"qids \['n'\] have no hierarchy, and method 'fulldomain' needs one for every qid; give one in the job "
        r"file \(\[qids\.n\] hierarchy = \.\.\.\), or use a method",
    ):
        run_job(job)


def test_neither_qids_nor_hierarchies_says_which_to_give() -> None:
    with pytest.raises(
        pa.InvalidParameterError,
        match=r"no qids given; name the quasi-identifier columns in qids \(or give hierarchies, whose keys are the "
        r"qids\)",
    ):
        pa.anonymize(DF, k=2, method="mondrian")


def test_the_engines_run_a_method_that_needs_no_hierarchy_without_them() -> None:
    want = pa.anonymize(DF, method="mondrian", **ARGS).collect()
    assert pad.anonymize(DF, connection=duckdb.connect(), method="mondrian", **ARGS).collect().equals(want)
    assert pa.anonymize(DF, engine="duckdb", method="mondrian", **ARGS).collect().equals(want)


def test_explore_runs_without_hierarchies() -> None:
    grid = pa.explore(DF, qids=["n"], k=[2, 3], methods=["mondrian", "mdav"], insensitive="id")
    assert grid.select("method", "k", "feasible").rows() == [
        ("mondrian", 2, True),
        ("mondrian", 3, True),
        ("mdav", 2, True),
        ("mdav", 3, True),
    ]
