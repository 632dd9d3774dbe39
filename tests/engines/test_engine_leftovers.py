"""A job leaves nothing in the temporary folder: DuckDB's spill folder (``polars_anon_duckdb_*``) goes when the job
ends, published or refused (it stayed until the engine was collected, and a process killed meanwhile left it), and a
Spark job on a session already running makes no log (``polars_anon_spark_<pid>.log``: an empty one was made per job).
A JVM the job starts writes its log until the process exits, which removes it: tests/reliability/test_interrupts.py
runs one in a process of its own and looks in its temporary folder."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.engines.duckdb import MEMORY_LIMIT, DuckDBEngine

JOB = """input = "people.parquet"
output = "out/anon.parquet"
k = {k}
engine = "{engine}"
insensitive = "id"
[qids.sex]
hierarchy = "suppress"
"""


def _left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, k: int) -> tuple[int, list[str]]:
    """Run a job on `engine` with `tmp_path`/tmp as the temporary folder: its exit code and what it left there."""
    pl.DataFrame({"id": list(range(8)), "sex": ["F", "M"] * 4}).write_parquet(tmp_path / "people.parquet")
    (tmp_path / "job.toml").write_text(JOB.format(k=k, engine=engine))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    code = cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"])
    return code, sorted(p.name for p in temporary.iterdir())


@pytest.mark.parametrize(("k", "code"), [(2, 0), (9, 2)], ids=["published", "refused"])
def test_a_duckdb_job_removes_its_spill_folder(
    k: int, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _left(tmp_path, monkeypatch, "duckdb", k) == (code, [])
    if k == 9:  # refused after DuckDB counted the rows: the engine had been made
        assert "k=9 is larger than the table (8 rows)" in capsys.readouterr().err


def test_a_spark_job_on_a_running_session_makes_no_log(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _left(tmp_path, monkeypatch, "spark", 2) == (0, [])


@pytest.mark.parametrize(("k", "code"), [(2, 0), (9, 2)], ids=["explored", "refused"])
def test_a_duckdb_explore_removes_its_spill_folder(
    k: int, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend31: explore on DuckDB left its engine open (its spill folder stayed until the engine was collected)."""
    pl.DataFrame({"id": list(range(8)), "sex": ["F", "M"] * 4}).write_parquet(tmp_path / "people.parquet")
    (tmp_path / "job.toml").write_text(JOB.format(k=2, engine="duckdb"))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    made: list[DuckDBEngine] = []  # held here: a collected engine would remove its folder, closed or not
    real = DuckDBEngine.own

    def own(memory_limit: str = MEMORY_LIMIT) -> DuckDBEngine:
        made.append(real(memory_limit))
        return made[-1]

    monkeypatch.setattr(DuckDBEngine, "own", own)
    assert cli.main(["explore", str(tmp_path / "job.toml"), "--k", str(k), "-q"]) == code
    assert len(made) == 1 and sorted(p.name for p in temporary.iterdir()) == []
    if k == 9:
        assert "k=9 is larger than the table (8 rows)" in capsys.readouterr().err
