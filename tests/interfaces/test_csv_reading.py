"""A CSV input read by one set of rules on every road: the job's CSV options wherever the job's input is read, the
ragged-row check's gaps (issue: csvfix)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polars_anon import cli

HEADERLESS_JOB = """input = "people.data"
output = "out.parquet"
separator = ";"
has_header = false
columns = ["id", "age", "sex"]
k = 2
insensitive = "id"
[qids.age]
hierarchy = {intervals = [5, 10], bottom = 30, top = 40}
[qids.sex]
hierarchy = "suppress"
"""


def test_check_builds_a_jobs_hierarchies_with_the_jobs_csv_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check --job with a population model built the job's hierarchies from its input read with only the separator:
    a headerless input (has_header = false, columns) lost its first row to the header and its column names."""
    (tmp_path / "people.data").write_text("0;31;F\n1;33;M\n2;38;F\n3;36;M\n")
    (tmp_path / "pop.csv").write_text("age,sex\n31,F\n33,M\n38,F\n36,M\n31,F\n33,M\n")
    (tmp_path / "job.toml").write_text(HEADERLESS_JOB)
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 0
    model = f'{{model = "k-map", k = 1, population = "{tmp_path / "pop.csv"}"}}'
    capsys.readouterr()
    args = ["check", str(tmp_path / "out.parquet"), "--qids", "age,sex", "--k", "2"]
    assert cli.main([*args, "--job", str(tmp_path / "job.toml"), "--model", model]) == 0
    found = json.loads(capsys.readouterr().out)["models"][0]
    # the classes (30-39, F) and (30-39, M) each hold 3 of the 6 population rows
    assert (found["satisfied"], found["min_measure"], found["max_measure"]) == (True, 3.0, 3.0)
