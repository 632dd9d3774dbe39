"""The job table of the capability table: which engine and input format take which job key, decided once when the
job file is read (before any data): every row fires with its message, and a key its engine and input take passes."""

from __future__ import annotations

from typing import Any

import pytest

from polars_anon.errors import InvalidParameterError
from polars_anon.job import Job
from polars_anon.pipeline.capabilities import CSV_KEYS, JOB_REFUSALS

BASE = {"output": "out.parquet", "k": 2, "qids": {"sex": {"hierarchy": "suppress"}}}
CSV_VALUES: dict[str, Any] = {"separator": ";", "has_header": True, "columns": ["sex"], "null_values": ["?"]}

DP = {"privacy": [{"model": "differential-privacy", "epsilon": 1.0, "delta": 0.1}]}
CASES = [
    (
        {"input": "t.parquet", **DP, "encode": ["statistical", "oneclass"]},
        "job file: encode ['statistical'] is computed from the original values of each class, which differential",
    ),
    (
        {"input": "t.parquet", **DP},
        "job file: differential privacy needs each hierarchy fixed without looking at the data, but the job would "
        "build those of 'sex' (suppress) from",
    ),
    (
        {
            "input": "t.parquet",
            **DP,
            "qids": {"sex": {"hierarchy": "sex.csv"}},
            "sdc": {"keys": ["sex"], "protect": [{"step": "rank_swap", "columns": ["age"]}]},
        },
        "job file: [sdc] protect steps ['rank_swap'] change the rows before the differentially private release",
    ),
    (
        {"input": "t.parquet", "driver_tuples": 10},
        'job file: driver_tuples = 10 caps the class aggregates engines "duckdb"',
    ),
    ({"input": "t.parquet", "engine": "duckdb", "encode": "fillParent"}, "job file: encode ['fillparent'] runs on"),
    (
        {"input": "t.parquet", "engine": "spark", "encode": ["proportional"]},
        "job file: encode ['proportional'] runs on",
    ),
    (
        {"input": "t.parquet", "method": "mdav", "encode": ["proportional"]},
        "job file: encode ['proportional'] needs published hierarchy nodes, each over its row's original value, but "
        'method "mdav"',
    ),
    *(
        (
            {"input": "t.parquet", "engine": engine, "schema": {"w": "Int64"}},
            f"job file: schema casts ['w'] on engine 'polars' and for a CSV input; engine {engine!r} reads the Parquet "
            "input 't.parquet' with the file's own types",
        )
        for engine in ("duckdb", "spark")
    ),
    *(
        ({"input": "t.parquet", key: value}, f"job file: key {key!r} is for CSV input, but input 't.parquet' is read")
        for key, value in CSV_VALUES.items()
    ),
]


def test_every_row_has_a_case() -> None:
    assert len(CASES) == len(JOB_REFUSALS) and set(CSV_VALUES) == set(CSV_KEYS)


@pytest.mark.parametrize(("keys", "words"), CASES, ids=[str(sorted(k)) for k, _ in CASES])
def test_refused_when_the_file_is_read(keys: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        Job.from_dict({**BASE, **keys})  # the input does not exist: refused before any read
    assert words in str(caught.value)


def test_what_the_engine_and_input_take_passes() -> None:
    assert Job.from_dict({**BASE, "input": "t.csv", **CSV_VALUES, "encode": "fillparent"}).encode == ["fillparent"]
    assert Job.from_dict({**BASE, "input": "t.parquet", "engine": "duckdb", "driver_tuples": 10}).driver_tuples == 10
    assert Job.from_dict({**BASE, "input": "t.parquet", "engine": "spark", "encode": []}).encode == []
    assert Job.from_dict({**BASE, "input": "t.csv", "engine": "spark", "schema": {"w": "Int64"}}).schema == {
        "w": "Int64"
    }
    assert Job.from_dict({**BASE, "input": "t.parquet", "method": "mondrian", "encode": "fillparent"}).encode == [
        "fillparent"
    ]
    local = {**BASE, "input": "t.parquet", "method": "local_suppression", "encode": ["proportional", "fillparent"]}
    assert Job.from_dict(local).encode == ["proportional", "fillparent"]  # mend47: encoded, a blank as the root
