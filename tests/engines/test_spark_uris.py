"""Storage URIs through every interface (issue 32): ``file://`` on every engine, any Hadoop scheme on Spark, checked,
staged and renamed on Spark's file system; a LazyFrame read by Spark from its Parquet source; the executors' check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import Hierarchy, cli
from polars_anon.errors import InvalidParameterError, OutputExistsError

JOB = """input = "{input}"
output = "{output}"
k = 2
insensitive = "id"
{extra}
[qids.age]
hierarchy = {{intervals = [5, 10], bottom = 30, top = 40}}
[qids.sex]
hierarchy = "suppress"
"""

PEOPLE = pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36, 31, 33] * 2, "sex": ["F", "M"] * 6})
H = {"age": Hierarchy.intervals(range(30, 40), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    PEOPLE.write_parquet(tmp_path / "people.parquet")
    return tmp_path


def _job(work: Path, input: str, output: str, extra: str = "") -> Path:
    path = work / "job.toml"
    path.write_text(JOB.format(input=input, output=output, extra=extra))
    return path


def _expected(work: Path) -> pl.DataFrame:
    """The rows of the job on Polars with plain paths: the reference."""
    assert cli.main(["anonymize", str(_job(work, "people.parquet", "ref/anon.parquet")), "-q"]) == 0
    return pl.read_parquet(work / "ref" / "anon.parquet")  # in input order, as every engine publishes


def _listing(folder: Path) -> list[str]:
    """Every file and folder under `folder`, Spark's Parquet parts aside (their names are new on each write)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.name.startswith("part-"))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_file_uris_pass_on_polars_and_duckdb_and_other_schemes_are_one_line(
    engine: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _expected(work)
    uri = f"file://{work}"
    job = _job(work, f"{uri}/people.parquet", f"{uri}/out/anon.parquet", f'engine = "{engine}"')
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    assert pl.read_parquet(work / "out" / "anon.parquet").equals(expected)
    assert (work / "out" / "anon.report.json").is_file()
    before = _listing(work)
    capsys.readouterr()
    job = _job(work, "people.parquet", "hdfs://namenode:8020/out/anon.parquet", f'engine = "{engine}"')
    assert cli.main(["anonymize", str(job), "-q"]) == 2
    assert capsys.readouterr().err == (
        f"polars-anon: error: job file: output 'hdfs://namenode:8020/out/anon.parquet': engine '{engine}' reads and "
        "writes local paths and file:// URIs, not hdfs://; use engine 'spark' (its Hadoop file system knows hdfs://, "
        "s3a://, ...) or a local path\n"
    )
    assert _listing(work) == before


def test_a_polars_result_refuses_a_uri_it_cannot_write(work: Path) -> None:
    result = pa.anonymize(PEOPLE, hierarchies=H, k=2, insensitive="id")
    with pytest.raises(InvalidParameterError, match="output 's3a://bucket/x.parquet': engine 'polars' reads and"):
        result.sink_parquet("s3a://bucket/x.parquet")
    result.sink_parquet(f"file://{work}/py/anon.parquet")
    assert pl.read_parquet(work / "py" / "anon.parquet").equals(_expected(work))


def test_spark_job_with_file_uris_checks_stages_and_renames_on_hadoop(
    spark: Any, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Input and output named by file:// URIs go to Spark as written: read by Spark, the output checked for existence,
    written under a hidden name, verified and renamed by Hadoop's FileSystem API; the report beside it too."""
    expected = _expected(work)
    uri = f"file://{work}"
    job = _job(work, f"{uri}/people.parquet", f"{uri}/out/deep/anon.parquet", 'engine = "spark"')
    capsys.readouterr()
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    out = work / "out" / "deep"
    assert pl.read_parquet(out / "anon.parquet").equals(expected)
    assert sorted(p.name for p in out.iterdir()) == ["anon.parquet", "anon.report.html", "anon.report.json"]
    assert json.loads((out / "anon.report.json").read_text())["output"] == f"{uri}/out/deep/anon.parquet"
    assert report["input"] == f"{uri}/people.parquet"
    assert list(report["phases"]) == ["aggregate", "method", "write", "verify"]
    assert report["seconds"] >= report["phases"]["aggregate"]
    before = _listing(work)
    assert cli.main(["anonymize", str(job), "-q"]) == 2  # the output exists, as Hadoop's file system says
    assert "exists; add --overwrite to the command to replace it" in capsys.readouterr().err
    assert _listing(work) == before
    assert cli.main(["anonymize", str(job), "-q", "--overwrite"]) == 0
    assert pl.read_parquet(out / "anon.parquet").equals(expected)
    assert _listing(work) == before  # replaced: no temporary name left beside it
    capsys.readouterr()
    job = _job(work, f"{uri}/people.parquet", "nosuch://host/out/anon.parquet", 'engine = "spark"')
    assert cli.main(["anonymize", str(job), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot use 'nosuch://host/out/anon.parquet'" in err
    assert 'No FileSystem for scheme "nosuch"' in err
    assert _listing(work) == before


def test_a_lazyframe_goes_to_spark_as_its_parquet_source(spark: Any, work: Path) -> None:
    """pa.anonymize(scan, engine="spark") reads the scan's files with Spark (its plan reads the file, no rows went
    through the driver); sink_parquet to a file:// URI goes through Hadoop's file system."""
    from polars_anon.engines.spark import SparkEngine

    scan = pl.scan_parquet(work / "people.parquet")
    scan.select(pl.len()).collect()  # a scan Polars has run serializes wrapped ("IR"): still its file
    table = SparkEngine(spark).table(scan)
    assert [Path(f.removeprefix("file:")).name for f in table.inputFiles()] == ["people.parquet"]
    result = pa.anonymize(scan, hierarchies=H, k=2, insensitive="id", engine="spark")
    report = result.sink_parquet(f"file://{work}/py/anon.parquet")
    assert pl.read_parquet(work / "py" / "anon.parquet").equals(_expected(work))
    assert set(report["phases"]) == {"aggregate", "method", "write", "verify"}
    with pytest.raises(InvalidParameterError, match=r"this one is a query \(Filter\) over a file, not a plain scan"):
        pa.anonymize(scan.filter(pl.col("age") > 30), hierarchies=H, k=2, insensitive="id", engine="spark")


def test_executors_missing_a_module_are_refused_in_one_line(spark: Any) -> None:
    from polars_anon.engines.spark import check_executors

    check_executors(spark)  # this session's executors run this interpreter: all present
    with pytest.raises(InvalidParameterError) as caught:
        check_executors(spark, ("polars_anon", "no_such_module_32"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("Spark executors (Python ")
    assert "cannot import no_such_module_32 (ModuleNotFoundError: No module named 'no_such_module_32')" in message


def test_spark_pack_writes_a_site_packages_archive_executors_import_from(tmp_path: Path) -> None:
    """The archive is a site-packages folder: polars_anon (its SQL files inside) and each distribution asked for with
    what it requires; an interpreter without site-packages (-S) imports from it once unpacked."""
    import subprocess
    import sys
    import tarfile

    from polars_anon.spark_pack import pack

    facts = pack(tmp_path / "env.tar.gz", ["tqdm"])
    assert facts["distributions"] == ["tqdm"] and facts["python"] == "{}.{}".format(*sys.version_info[:2])
    with tarfile.open(tmp_path / "env.tar.gz") as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "env", filter="data")
    assert {"polars_anon/__init__.py", "polars_anon/spark_pack.py", "tqdm/__init__.py"} <= names
    assert any(n.startswith("polars_anon/sql/") and n.endswith(".sql") for n in names)
    assert not any("__pycache__" in n for n in names) and facts["files"] == len(names)
    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'env')!r}); import tqdm; print(tqdm.__file__)"
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(tmp_path / "env" / "tqdm" / "__init__.py")
    with pytest.raises(OutputExistsError, match="exists; pass overwrite=True"):
        pack(tmp_path / "env.tar.gz", ["tqdm"])
    with pytest.raises(InvalidParameterError, match=r"must end in .tar.gz"):
        pack(tmp_path / "env.zip", ["tqdm"])


def test_a_folder_spark_reads_is_protected_not_only_its_files(spark: Any, tmp_path: Path) -> None:
    """mend7: Spark's inputFiles() names the files, not the folder read: a new part inside a folder read by Spark was
    allowed (a Parquet file read by itself still leaves its folder writable, as on Polars)."""
    from polars_anon.engines.spark import SparkEngine
    from polars_anon.outputs import Outputs

    parts = tmp_path / "d"
    parts.mkdir()
    PEOPLE.write_parquet(parts / "part-0.parquet")
    engine, read = SparkEngine(spark), spark.read.schema("id LONG, age LONG, sex STRING")  # no inference job
    folder = Outputs(reads=engine.sources(read.parquet(str(parts))))
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        folder.check(parts / "new.parquet")
    pattern = Outputs(reads=engine.sources(read.parquet(str(parts / "*.parquet"))))  # as Polars: the pattern
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        pattern.check(parts / "new.parquet")
    assert pattern.check(parts / "sub" / "x.parquet") == parts / "sub" / "x.parquet"
    one_file = Outputs(reads=engine.sources(read.parquet(str(parts / "part-0.parquet"))))
    assert one_file.check(parts / "new.parquet") == parts / "new.parquet"
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        one_file.check(parts / "part-0.parquet")


def _no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make starting a Spark session fail the test: a refusal must come before one is started (tens of seconds)."""
    import polars_anon.engines.spark as spark_engine

    def started(*_: object, **__: object) -> None:
        raise AssertionError("a Spark session was started before the refusal")

    monkeypatch.setattr(spark_engine, "session", started)


def test_what_spark_cannot_read_is_refused_before_a_session_starts(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan of CSV and a CSV file's path (newuser4: refused after 26 s of start-up, then "no table or view
    'people.csv'", or Spark's raw error for a Path): one line at once, naming what reads a CSV on Spark."""
    _no_session(monkeypatch)
    PEOPLE.write_csv(work / "people.csv")
    with pytest.raises(InvalidParameterError, match=r"a scan of Csv, not of Parquet; .*a job file reads a CSV file"):
        pa.anonymize(pl.scan_csv(work / "people.csv"), hierarchies=H, k=2, insensitive="id", engine="spark")
    import polars_anon.spark as pas

    with pytest.raises(InvalidParameterError, match=r"a scan of Csv, not of Parquet"):  # hunt43: Spark's own door
        pas.anonymize(pl.scan_csv(work / "people.csv"), hierarchies=H, k=2, insensitive="id")
    for given in (work / "people.csv", str(work / "people.csv")):
        with pytest.raises(InvalidParameterError) as caught:
            pa.anonymize(given, hierarchies=H, k=2, insensitive="id", engine="spark")
        with pytest.raises(InvalidParameterError, match="names a CSV file; read it with a job file"):
            pas.anonymize(given, hierarchies=H, k=2, insensitive="id")
        assert str(caught.value) == (
            f"engine 'spark' reads a Parquet path or URI, a table name or a Spark DataFrame, and "
            f"{str(work / 'people.csv')!r} names a CSV file; read it with a job file (input = "
            f'"{work / "people.csv"}", engine = "spark"), or give spark.read.csv(...) with your options'
        )


def test_no_java_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyspark's JAVA_GATEWAY_EXITED (no java on the PATH nor in JAVA_HOME; newuser4 got the raw error) said in one
    line with what to install; any other failure to start is left as it is."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    import polars_anon.engines.spark as spark_engine

    def failing(condition: str) -> Any:
        def get_or_create(_: object) -> None:
            raise PySparkRuntimeError(errorClass=condition, messageParameters={})

        return get_or_create

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", failing("JAVA_GATEWAY_EXITED"))
    with pytest.raises(InvalidParameterError) as caught:
        spark_engine.session("local[1]")
    assert str(caught.value).startswith("engine 'spark' could not start Spark: its Java process exited at once")
    assert "install Java 17 or 21" in str(caught.value) and "\n" not in str(caught.value)
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", failing("SESSION_ALREADY_EXIST"))
    with pytest.raises(PySparkRuntimeError):
        spark_engine.session("local[1]")


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_spark_overwrite_never_replaces_a_folder_spark_did_not_write(
    spark: Any, work: Path, scheme: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """hunt48 #2: with overwrite, Spark replaced any folder at its output path (a user's notes and thesis deleted).
    Only a Spark output (parts, _SUCCESS, .crc) is replaced; another folder is one line, exit 2, left as it is."""
    folder = work / "out.parquet"
    (folder / "keep").mkdir(parents=True)
    (folder / "keep" / "notes.txt").write_text("mine")
    (folder / "thesis.docx").write_text("mine too")
    job = _job(work, f"{scheme}{work}/people.parquet", f"{scheme}{folder}", 'engine = "spark"')
    before = _listing(work)
    capsys.readouterr()
    assert cli.main(["anonymize", str(job), "-q", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder that is not a Spark output" in err and "'keep'" in err
    assert _listing(work) == before
    shutil.rmtree(folder)
    assert cli.main(["anonymize", str(job), "-q"]) == 0  # a Spark output now: replaced with overwrite
    assert cli.main(["anonymize", str(job), "-q", "--overwrite"]) == 0
    assert pl.read_parquet(folder).height == len(PEOPLE)
