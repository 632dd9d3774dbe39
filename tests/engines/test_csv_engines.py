"""A CSV input reads alike on Polars, DuckDB and Spark (io.CSV_RULES): quoted empty fields, empty fields, null
strings, blank lines and records of no value; a value that breaks the inferred type is refused in the same words."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.job import Job

JOB = """input = "people.csv"
output = "out.parquet"
k = 2
insensitive = "id"
null_values = ["NA"]
engine = "{engine}"
[qids.sex]
hierarchy = "suppress"
"""

# "" in the String column sex is '', an empty field null, "NA" null quoted or not; "" in the numeric column age is
# null (and no evidence of a String: age is Int64); the blank lines and the record ,, (no value) are skipped
CSV = 'id,sex,age\n0,"",31\n1,,""\n\n2,"NA",33\n,,\n3,NA,\n4,F,"35"\n\n\n'
ROWS = [(0, "", 31), (1, None, None), (2, None, 33), (3, None, None), (4, "F", 35)]


def _read(engine: str, job: Job) -> pl.DataFrame:
    """The job's input as the engine reads it, on the driver."""
    from polars_anon.engines import get_engine
    from polars_anon.job import read_on_engine

    if engine == "polars":
        return job.scan().collect()
    on = get_engine(engine)
    return on.to_polars(read_on_engine(on, job))  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_every_engine_reads_empty_fields_and_blank_lines_alike(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Polars read "" as '' where DuckDB and Spark read null, and a blank line as a row of nulls that they skip."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "people.csv").write_text(CSV)
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    got = _read(engine, Job.load(tmp_path / "job.toml")).sort("id")
    assert got.schema == pl.Schema({"id": pl.Int64, "sex": pl.String, "age": pl.Int64})
    assert got.rows() == ROWS


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_value_that_breaks_the_inferred_type_is_refused_alike(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """age is Int64 by its first 100 rows; row 121 holds 'x': Polars refused in its words, DuckDB and Spark (which
    cast the column) in theirs; now the command line's one line is the same on each."""
    if engine == "spark":
        request.getfixturevalue("spark")
    rows = "".join(f"{i},{'FM'[i % 2]},{30 + i % 10}\n" for i in range(120))
    (tmp_path / "people.csv").write_text(f"id,sex,age\n{rows}120,F,x\n")
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    with pytest.raises(Exception) as caught:  # the engine's own exception type
        _read(engine, Job.load(tmp_path / "job.toml"))
    args = cli.parser().parse_args(["anonymize", str(tmp_path / "job.toml")])
    assert cli.csv_read_error(args, caught.value) == (
        f"cannot read '{tmp_path / 'people.csv'}' as CSV: could not parse `x` as dtype `i64` at column 'age' (column "
        "number 3); the type of column 'age' was inferred from the first rows and a later value breaks it: fix the "
        'value, read it as missing (job file: null_values = ["x"]) or convert the file to Parquet'
    )
