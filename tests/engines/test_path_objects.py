"""A file's path given as an ``os.PathLike`` (``pathlib.Path``, or any object with ``__fspath__``) is read wherever
its string is (mend45): DuckDB refused ``pathlib.Path("x.parquet")`` as "takes a DuckDB relation, a table name or a
Polars frame, got PosixPath" where ``"x.parquet"`` was read, and Spark took a ``pathlib.Path`` only. A path object
names a file, never a table of the engine's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
import polars_anon.spark as pas
from polars_anon.engines.spark import refuse_unreadable

T = pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6})
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
KW: dict[str, Any] = {"hierarchies": H, "k": 2, "insensitive": "id"}


class FsPath:
    """A path object that is no ``pathlib.Path``: only ``__fspath__`` says where the file is."""

    def __init__(self, path: Path) -> None:
        self._path = str(path)

    def __fspath__(self) -> str:
        return self._path


def _given(tmp_path: Path, name: str = "people.parquet") -> Path:
    path = tmp_path / name
    T.write_parquet(path)
    return path


@pytest.mark.parametrize("kind", [Path, FsPath])
def test_duckdb_reads_a_path_object_as_its_string(tmp_path: Path, kind: type) -> None:
    path = _given(tmp_path)
    want = pad.anonymize(str(path), connection=duckdb.connect(), **KW).collect()
    for run in (
        lambda: pad.anonymize(kind(path), connection=duckdb.connect(), **KW),
        lambda: pa.anonymize(kind(path), engine="duckdb", **KW),
    ):
        result = run()
        assert result.collect().equals(want)
        assert result.reads == (str(path),)  # the file it read, never written onto
    assert pad.sdc_risk(kind(path), ["sex"]) == pad.sdc_risk(str(path), ["sex"])


def test_a_duckdb_path_object_names_a_file_never_a_table(tmp_path: Path) -> None:
    """A table named as the path's text is not read in its place; a path object naming no file is refused in the
    words a job's missing input is refused in."""
    con = duckdb.connect()
    con.register("frame", T.head(2).to_arrow())
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    (tmp_path / "people").mkdir()
    T.write_parquet(tmp_path / "people" / "part-0.parquet")
    folder = Path("people")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert pad.anonymize(folder, connection=con, **KW).collect().height == T.height
        with pytest.raises(pa.InputError, match="no_such.parquet"):
            pad.anonymize(Path("no_such.parquet"), connection=con, **KW)


def test_spark_refuses_a_csv_path_object_before_a_session(tmp_path: Path) -> None:
    """Any path object naming a CSV file is refused as its string is, before a session starts."""
    csv = tmp_path / "people.csv"
    T.write_csv(csv)
    for given in (str(csv), csv, FsPath(csv)):
        with pytest.raises(pa.InvalidParameterError, match=r"engine 'spark' reads a Parquet path .*people\.csv"):
            refuse_unreadable(given)


def test_spark_reads_a_path_object_as_its_string(spark: Any, tmp_path: Path) -> None:
    path = _given(tmp_path)
    want = pas.anonymize(str(path), **KW).collect()
    for given in (path, FsPath(path)):
        result = pas.anonymize(given, **KW)
        assert result.collect().equals(want)  # in input order
        assert result.reads == (str(path),)
