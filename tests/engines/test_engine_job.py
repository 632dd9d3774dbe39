"""Job files and the CLI on other engines: ``engine = "spark"``, ``[spark]``, ``--engine``, ``--master`` (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.errors import InputError, InvalidParameterError
from polars_anon.io import cast_columns
from polars_anon.job import Job

JOB = """input = "people.parquet"
output = "out/anon.parquet"
k = 2
insensitive = "id"
{extra}
[qids.age]
hierarchy = {{intervals = [5, 10], bottom = 30, top = 40}}
[qids.sex]
hierarchy = "suppress"
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6}).write_parquet(
        tmp_path / "people.parquet"
    )
    pl.DataFrame({"id": [1]}).write_csv(tmp_path / "people.csv")
    return tmp_path


def _job(work: Path, extra: str = "") -> Path:
    path = work / "job.toml"
    path.write_text(JOB.format(extra=extra))
    return path


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ('engine = "oracle"', "job file: engine must be one of ['polars', 'duckdb', 'spark'], got 'oracle'"),
        ("engine = 3", "job file: key 'engine' must be"),
        (
            'engine = "duckdb"\n[spark]\nmaster = "local[2]"',
            "job file: [spark] settings are for engine = \"spark\", but engine is 'duckdb'",
        ),
        ('engine = "spark"\n[spark]\nmaster = 2', "job file: key 'spark.master' must be"),
        ('engine = "spark"\n[spark]\nmastr = "local"', "job file: [spark] has unknown keys ['mastr']"),
        (
            'engine = "spark"\n[spark.config]\n"spark.x" = [1]',
            "job file: key 'spark.config.spark.x' must be a string, number or boolean",
        ),
        ('engine = "spark"\nencode = "fillparent"', "encode ['fillparent'] runs on engine \"polars\" only"),
        (
            'engine = "polars"\n[duckdb]\nmemory_limit = "1GB"',
            "job file: [duckdb] settings are for engine = \"duckdb\", but engine is 'polars'",
        ),
        (
            'engine = "duckdb"\n[duckdb]\nmemory_limit = "lots"',
            "job file: key 'duckdb.memory_limit' must be a memory size such as '1GB' or '512MiB', got 'lots'",
        ),
        ('engine = "duckdb"\n[duckdb]\nthreads = 2', "job file: [duckdb] has unknown keys ['threads']"),
    ],
)
def test_job_refusals(extra: str, words: str, work: Path) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        Job.load(_job(work, extra))
    assert words in str(caught.value)


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_headerless_csv_with_float_codes_reads_as_its_parquet_on_every_engine(
    engine: str, work: Path, request: pytest.FixtureRequest
) -> None:
    """issue 27: has_header = false, columns, null_values and schema casts; DuckDB and Spark read CSV natively and
    publish the rows the Parquet job publishes."""
    if engine == "spark":
        request.getfixturevalue("spark")
    job = _job(work)
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    expected = pl.read_parquet(work / "out" / "anon.parquet")
    people = pl.read_parquet(work / "people.parquet")
    lines = [f"{i}.0;{a}.0;{s}" for i, a, s in people.rows()]
    (work / "people.data").write_text("\n".join(lines) + "\n")  # like UCI's processed.cleveland.data: no header
    extra = (
        'has_header = false\ncolumns = ["id", "age", "sex"]\nseparator = ";"\nnull_values = ["?"]\n'
        'schema = { id = "Int64", age = "Int64" }\n' + (f'engine = "{engine}"' if engine != "polars" else "")
    )
    job.write_text(JOB.format(extra=extra).replace('"people.parquet"', '"people.data"'))
    assert cli.main(["anonymize", str(job), "-q", "--overwrite"]) == 0
    got = pl.read_parquet(work / "out" / "anon.parquet")
    assert got.equals(expected)  # every engine publishes the input order


def test_a_schema_cast_that_loses_a_value_is_refused(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "people.data").write_text("0,31.5,F\n1,33.0,M\n")
    extra = 'has_header = false\ncolumns = ["id", "age", "sex"]\nschema = { age = "Int64" }\n'
    job = _job(work, extra)
    job.write_text(job.read_text().replace('"people.parquet"', '"people.data"'))
    assert cli.main(["anonymize", str(job)]) == 2
    assert capsys.readouterr().err == (
        "polars-anon: error: job file: schema: column 'age' has 1 values that are not Int64 (first: [31.5]); "
        "fix them or choose another type\n"
    )


def test_a_schema_date_parses_iso_text_and_refuses_other_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`schema = { d = "Date" }` on a CSV: Polars 2 no longer casts text to dates (the job crashed with Polars' own
    error, exit 1; review29); ISO dates are parsed, other text is refused by name."""
    (tmp_path / "in.csv").write_text("id,d\n0,2020-01-31\n1,2020-01-31\n")
    job = tmp_path / "job.toml"
    body = 'input = "{}"\noutput = "out/a.parquet"\nk = 2\ninsensitive = "id"\nschema = {{ d = "Date" }}\n'
    job.write_text(body.format("in.csv") + '[qids.d]\nhierarchy = { dates = ["month", "year"] }\n')
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    assert pl.read_parquet(tmp_path / "out" / "a.parquet")["d"].to_list() == ["2020-01-31"] * 2
    (tmp_path / "bad.csv").write_text("id,d\n0,2020-01-31\n1,31/01/2020\n")
    job.write_text(body.format("bad.csv").replace("out/a", "out/b") + '[qids.d]\nhierarchy = { dates = ["year"] }\n')
    assert cli.main(["anonymize", str(job)]) == 2
    assert "column 'd' has 1 values that are not Date (first: ['31/01/2020'])" in capsys.readouterr().err


def test_a_schema_boolean_reads_true_and_false_in_any_case_and_refuses_other_text() -> None:
    """`schema = { f = "Boolean" }` on a text column raised Polars' own "casting from Utf8View to Boolean not
    supported" (mend32); it reads the text Polars' CSV reader reads as a Boolean, refusing the rest by name."""
    got = cast_columns(pl.LazyFrame({"f": ["true", "False", "TRUE", None]}), {"f": "Boolean"}).collect()
    assert got["f"].to_list() == [True, False, True, None]
    with pytest.raises(InputError) as refused:
        cast_columns(pl.LazyFrame({"f": ["true", "yes", " true", "1"]}), {"f": "Boolean"})
    assert str(refused.value) == (
        "schema: column 'f' has 3 values that are not Boolean (first: ['yes', ' true', '1']); "
        "fix them or choose another type"
    )


def test_a_schema_float_reads_text_that_parses_as_a_number_and_refuses_a_value_it_loses() -> None:
    """Text to a float is exact when it parses (`1.50` was refused as it reads back `1.5`, `2` as `2.0`: mend32),
    unless it overflows to infinity, underflows to zero, or is a NaN with a sign (Spark reads `-nan` as null)."""
    text = ["1.50", "2", "1e2", ".5", "-0", "inf", "NaN", "0.0e5", None]
    got = cast_columns(pl.LazyFrame({"x": text}), {"x": "Float64"}).collect()["x"].to_list()
    assert got[:6] == [1.5, 2.0, 100.0, 0.5, -0.0, float("inf")] and got[6] != got[6] and got[7:] == [0.0, None]
    with pytest.raises(InputError) as refused:
        cast_columns(pl.LazyFrame({"x": ["1.5", "1e400", "1e-400", "-nan", "0x10"]}), {"x": "Float64"})
    assert "column 'x' has 4 values that are not Float64 (first: ['1e400', '1e-400', '-nan', '0x10'])" in str(
        refused.value
    )
    with pytest.raises(InputError, match=r"1 values that are not Float32 \(first: \['1e39'\]\)"):
        cast_columns(pl.LazyFrame({"x": ["1e38", "1e39"]}), {"x": "Float32"})


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_schema_float_of_a_csv_column_read_as_text_publishes_its_numbers(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A CSV column with a leading zero is read as text (`01.50`); `schema` asking Float64 makes it 1.5 on every
    engine (it was refused: `01.50` reads back `1.5`), and each engine reads the other spellings alike."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "in.csv").write_text("id,sex,w\n0,F,01.50\n1,F,2\n2,M,1e2\n3,M,.5\n4,M,5.\n5,F,-inf\n")
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "in.csv"\noutput = "out/a.parquet"\nk = 2\ninsensitive = ["id", "w"]\nengine = "{engine}"\n'
        'schema = { w = "Float64" }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    got = pl.read_parquet(tmp_path / "out" / "a.parquet").sort("id")
    assert got["w"].dtype == pl.Float64 and got["w"].to_list() == [1.5, 2.0, 100.0, 0.5, 5.0, float("-inf")]


def test_a_schema_float32_takes_the_nearest_value_and_refuses_only_what_it_cannot_hold() -> None:
    """mend33: `schema = { w = "Float32" }` refused 0.1 (the Float64 read does not read back through Float32). A
    float type takes the nearest value it holds (an integer too); a finite value that overflows to infinity or a
    nonzero one that underflows to zero is refused (as in text: the test above), naming the column and values."""
    frame = pl.LazyFrame({"w": [0.1, -2.5, 3.4e38, None, float("nan")], "i": [16_777_217, 1, 2, 3, 4]})
    got = cast_columns(frame, {"w": "Float32", "i": "Float32"}).collect()
    assert got.schema == pl.Schema({"w": pl.Float32, "i": pl.Float32})
    assert got["w"].to_list()[:4] == pl.Series([0.1, -2.5, 3.4e38, None], dtype=pl.Float32).to_list()
    assert got["i"].to_list() == [16_777_216.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(InputError) as refused:
        cast_columns(pl.LazyFrame({"w": [0.1, 1e39, -1e39, 1e-50, 0.0, float("inf")]}), {"w": "Float32"})
    assert str(refused.value) == (
        "schema: column 'w' has 3 values that are not Float32 (first: [1e+39, -1e+39, 1e-50]); fix them or choose "
        "another type"
    )


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_schema_float32_of_a_csv_publishes_the_nearest_value_on_every_engine(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The nearest Float32 of 0.1, 0.7 and 1e-3 (Polars reads them as Float64), the same on every engine."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "in.csv").write_text("id,sex,w\n0,F,0.1\n1,F,0.7\n2,M,1e-3\n3,M,2.5\n")
    (tmp_path / "job.toml").write_text(
        f'input = "in.csv"\noutput = "out/a.parquet"\nk = 2\ninsensitive = ["id", "w"]\nengine = "{engine}"\n'
        'schema = { w = "Float32" }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 0
    got = pl.read_parquet(tmp_path / "out" / "a.parquet").sort("id")["w"]
    assert got.dtype == pl.Float32 and got.equals(pl.Series("w", [0.1, 0.7, 1e-3, 2.5], dtype=pl.Float32))


def test_cli_engine_flags_replace_the_job_file(work: Path) -> None:
    job = Job.load(_job(work, 'engine = "duckdb"'), engine="spark", master="local[2]")
    assert (job.engine, job.spark) == ("spark", {"master": "local[2]", "config": {}})
    config = Job.load(
        _job(work, 'engine = "spark"\n[spark.config]\n"spark.sql.shuffle.partitions" = 4\n"spark.x" = true')
    )
    assert config.spark == {"master": None, "config": {"spark.sql.shuffle.partitions": "4", "spark.x": "true"}}


def test_duckdb_job_runs_on_its_own_connection_within_its_memory_limit(work: Path) -> None:
    from polars_anon.engines import get_engine

    job = Job.load(_job(work, 'engine = "duckdb"\n[duckdb]\nmemory_limit = "256MB"'))
    engine = get_engine("duckdb", memory_limit=job.duckdb["memory_limit"])
    limit, spill = engine.con.sql(
        "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
    ).fetchall()[0]  # type: ignore[attr-defined]
    assert limit == "244.1 MiB" and Path(spill).is_dir() and "polars_anon_duckdb_" in spill
    del engine
    import gc

    gc.collect()
    assert not Path(spill).exists()  # the spill folder goes with the engine


def test_a_duckdb_job_runs_on_the_connection_its_file_asks_for(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's own wiring: its connection had the file's memory limit, and no progress bar of DuckDB's."""
    from polars_anon.engines.duckdb import DuckDBEngine

    limits: list[tuple[str, bool]] = []
    own = DuckDBEngine.own

    def watched(memory_limit: str) -> DuckDBEngine:
        engine = own(memory_limit)
        limits.append(
            engine.con.sql("SELECT current_setting('memory_limit'), current_setting('enable_progress_bar')").fetchall()[
                0
            ]
        )
        return engine

    monkeypatch.setattr(DuckDBEngine, "own", staticmethod(watched))
    assert cli.main(["anonymize", str(_job(work, 'engine = "duckdb"\n[duckdb]\nmemory_limit = "256MB"')), "-q"]) == 0
    assert limits == [("244.1 MiB", False)]  # DuckDB's progress bar would print into the CLI's JSON on stdout


def test_cli_unknown_engine_is_one_line(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as code:
        cli.main(["anonymize", str(_job(work)), "--engine", "oracle"])
    assert code.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid choice: 'oracle'" in err[0]


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_cli_runs_the_job_on_the_engine(
    engine: str, work: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """The same job file, run on Polars then on the engine from the command line: the same rows, verified, in place."""
    if engine == "spark":
        request.getfixturevalue("spark")
    job = _job(work)
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    expected = pl.read_parquet(work / "out" / "anon.parquet")
    args = [
        "anonymize",
        str(job),
        "-q",
        "--overwrite",
        "--engine",
        engine,
        *(["--master", "local[2]"] if engine == "spark" else []),
    ]
    capsys.readouterr()
    assert cli.main(args) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["engine"] == engine and report["min_class_size"] >= 2
    assert pl.read_parquet(work / "out" / "anon.parquet").sort("id").equals(expected)
    assert (work / "out" / "anon.parquet").is_dir() == (engine == "spark")


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_input_folder_of_parts_is_one_table(engine: str, work: Path, request: pytest.FixtureRequest) -> None:
    """A folder of Parquet parts (Spark's layout, a _SUCCESS marker beside) reads as the one file it was cut from,
    on every engine; the parts are read in name order, so the same rows come out in the same order."""
    if engine == "spark":
        request.getfixturevalue("spark")
    job = _job(work)
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    expected = pl.read_parquet(work / "out" / "anon.parquet")
    parts = work / "parts"
    parts.mkdir()
    people = pl.read_parquet(work / "people.parquet")
    for i, start in enumerate((8, 4, 0)):  # written out of name order
        people.slice(start, 4).write_parquet(parts / f"part-{2 - i:05d}.parquet")
    (parts / "_SUCCESS").touch()
    job.write_text(job.read_text().replace('"people.parquet"', '"parts"'))
    args = [
        "anonymize",
        str(job),
        "-q",
        "--overwrite",
        "--engine",
        engine,
        *(["--master", "local[2]"] if engine == "spark" else []),
    ]
    assert cli.main(args) == 0
    got = pl.read_parquet(work / "out" / "anon.parquet")
    assert got.equals(expected)  # every engine publishes the input order


def test_an_input_folder_without_parquet_is_one_line(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "empty").mkdir()
    job = _job(work)
    job.write_text(job.read_text().replace('"people.parquet"', '"empty"'))
    assert cli.main(["anonymize", str(job), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"polars-anon: error: input folder {str(work / 'empty')!r} holds no .parquet file"]


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
@pytest.mark.parametrize("top", [False, True], ids=["hive", "parts-and-a-subfolder"])
def test_an_input_folder_with_nested_parts_is_one_line(
    top: bool, engine: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Hive layout (``sex=F/x.parquet``) was refused as holding no .parquet file, which is untrue; parts beside a
    subfolder of parts were read without the subfolder's rows. Refused on every engine before any engine starts,
    saying what is read and what to pass; a hidden folder beside the parts (Spark's ``_temporary``) is no part."""
    people = pl.read_parquet(work / "people.parquet")
    folder = work / "parts"
    for sex in ("F", "M"):
        (folder / f"sex={sex}").mkdir(parents=True)
        people.filter(pl.col("sex") == sex).drop("sex").write_parquet(folder / f"sex={sex}" / "x.parquet")
    if top:  # and a hidden folder, named before the others: skipped
        people.write_parquet(folder / "part-0.parquet")
        (folder / "_temporary").mkdir()
        people.write_parquet(folder / "_temporary" / "a.parquet")
    job = _job(work)
    job.write_text(job.read_text().replace('"people.parquet"', '"parts"'))
    assert cli.main(["anonymize", str(job), "-q", "--engine", engine]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"polars-anon: error: input folder {str(folder)!r} holds .parquet files in a subfolder ('sex=F/x.parquet'): "
        "a folder's parts are read from the folder itself, not from nested folders (a Hive layout's key=value "
        "folders); pass a folder with its parts directly in it, or one file: "
        f"pl.scan_parquet({str(folder)!r}, hive_partitioning=True).sink_parquet('table.parquet') writes one with "
        "the partition columns"
    ]
    assert not (work / "out").exists()
    if not top:  # the advice reads the Hive layout back as the table it was cut from
        table = pl.scan_parquet(folder, hive_partitioning=True).collect()
        assert table.sort("id").select(people.columns).equals(people.sort("id"))


def test_a_records_method_is_refused_before_the_engine_reads(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """MDAV on DuckDB (no planner there): one line, exit 2, and not one engine query was run."""
    from polars_anon.engines.duckdb import DuckDBEngine

    def no_reading(*args: object) -> None:
        raise AssertionError("the engine read the input before refusing")

    monkeypatch.setattr(DuckDBEngine, "read_parquet", no_reading)
    assert cli.main(["anonymize", str(_job(work, 'engine = "duckdb"\nmethod = "mdav"')), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        (
            "polars-anon: error: method 'mdav' works on row records, which engine 'duckdb' does not hand "
            "to the driver; use engine 'polars' or a method that works on class aggregates "
            "(datafly, fulldomain, greedy, mondrian, topdown)"
        )
    ]


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_every_null_string_is_null_on_every_engine(engine: str, work: Path, request: pytest.FixtureRequest) -> None:
    """issue 27: null_values = ["", "NA", "?"] (Spark's reader takes one): the engine reads the rows Polars reads."""
    from polars_anon.engines import get_engine
    from polars_anon.job import read_on_engine

    if engine == "spark":
        request.getfixturevalue("spark")
    (work / "people.csv").write_text(
        "id,age,sex,score\n0,31,F,1.5\n1,NA,M,?\n2,?,NA,2.0\n3,,?,NA\n4,38,,\n5,36,it's,-0.5\n"
    )
    extra = f'null_values = ["", "NA", "?"]\nschema = {{ score = "Float32" }}\nengine = "{engine}"'
    path = _job(work, extra)
    path.write_text(path.read_text().replace('"people.parquet"', '"people.csv"'))
    job = Job.load(path)
    expected = job.scan().collect()
    assert expected.null_count().row(0) == (0, 3, 3, 3)  # Polars: each of the three strings is null
    engine_ = get_engine(engine)
    got = engine_.to_polars(read_on_engine(engine_, job))  # type: ignore[attr-defined]
    assert got.schema == expected.schema
    assert got.sort("id").equals(expected.sort("id"))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_csv_column_typed_string_keeps_its_leading_zeros(engine: str, work: Path) -> None:
    """schema = { zip = "String" } reads a CSV's zip codes as written: 02139 stays 02139 (was: inferred as a number,
    then cast to String on Polars: 2139, where DuckDB's reader kept 02139: the engines disagreed)."""
    from polars_anon.engines import get_engine
    from polars_anon.job import read_on_engine

    (work / "people.csv").write_text("id,zip\n0,02139\n1,00501\n2,10001\n")
    path = _job(work, f'schema = {{ zip = "String" }}\nengine = "{engine}"')
    path.write_text(path.read_text().replace('"people.parquet"', '"people.csv"'))
    job = Job.load(path)
    got = (
        job.scan().collect()
        if engine == "polars"
        else get_engine(engine).to_polars(read_on_engine(get_engine(engine), job))
    )  # type: ignore[attr-defined]
    assert got.sort("id")["zip"].to_list() == ["02139", "00501", "10001"]


def test_an_empty_csv_field_is_null_on_duckdb_as_on_polars_with_null_strings_given(work: Path) -> None:
    """null_values = ["?"]: Polars reads an empty field as null; DuckDB read it as '' (its null strings replaced the
    empty one): the engines disagreed."""
    from polars_anon.engines import get_engine
    from polars_anon.job import read_on_engine

    (work / "people.csv").write_text("id,sex\n0,\n1,?\n2,F\n")
    path = _job(work, 'null_values = ["?"]\nengine = "duckdb"')
    path.write_text(path.read_text().replace('"people.parquet"', '"people.csv"'))
    job = Job.load(path)
    assert job.scan().collect().sort("id")["sex"].to_list() == [None, None, "F"]
    engine = get_engine("duckdb")
    got = engine.to_polars(read_on_engine(engine, job))  # type: ignore[attr-defined]
    assert got.sort("id")["sex"].to_list() == [None, None, "F"]


def test_a_zoned_datetime_qid_of_a_parquet_job_is_refused_on_duckdb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review9 M2: a job's Parquet input with a zoned Datetime qid was published in DuckDB's session zone ('...+00:00'
    on a UTC machine) where Polars wrote the file's own; the file's zone is consulted as for a Polars frame (a zone no
    machine runs in, so the session's differs)."""
    import datetime

    times = pl.Series("t", [datetime.datetime(2020, 1, 1, 10 + i % 2) for i in range(4)])
    pl.DataFrame({"t": times.dt.replace_time_zone("Pacific/Chatham"), "g": ["F", "M"] * 2}).write_parquet(
        tmp_path / "in.parquet"
    )
    job = tmp_path / "job.toml"
    job.write_text(
        'engine = "duckdb"\ninput = "in.parquet"\noutput = "out.parquet"\nk = 2\n'
        '[qids.t]\nhierarchy = "suppress"\n[qids.g]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(job), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "qid 't' is a Datetime in time zone 'Pacific/Chatham': DuckDB" in err
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_a_schema_with_a_parquet_input_is_refused_off_polars(
    engine: str, work: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    """DuckDB and Spark read a Parquet input with the file's own types, so a job's `schema` was silently ignored there
    (mend32: `schema = { w = "Int64" }` published the text '02190' on DuckDB, 2190 on Polars): refused in one line,
    nothing written; Polars still casts."""
    if engine == "spark":
        request.getfixturevalue("spark")  # the shared session (the job then starts none)
    pl.DataFrame({"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6}).with_columns(
        w=pl.lit("02190")
    ).write_parquet(work / "people.parquet")
    job = _job(work, 'schema = { w = "Int64" }\n')
    assert cli.main(["anonymize", str(job), "-q", "--engine", engine]) == 2
    assert capsys.readouterr().err == (
        f"polars-anon: error: job file: schema casts ['w'] on engine 'polars' and for a CSV input; engine {engine!r} "
        "reads the Parquet input 'people.parquet' with the file's own types: write the file with "
        "those types (pl.scan_parquet(path).cast({...}).sink_parquet(...)), or run on engine 'polars'\n"
    )
    assert not (work / "out").exists()
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    assert pl.read_parquet(work / "out" / "anon.parquet")["w"].unique().to_list() == [2190]


def test_a_schema_with_a_parquet_input_is_refused_before_a_spark_session(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mend33: the refusal above came after the job's Spark session had started (about 5 s of JVM): it is made when
    the job file is read (the job table of polars_anon.pipeline.capabilities), so no engine is made."""
    import polars_anon.engines.spark as spark_engine

    def started(*_: object, **__: object) -> None:
        raise AssertionError("a Spark session was started before the refusal")

    monkeypatch.setattr(spark_engine, "session", started)
    job = _job(work, 'schema = { age = "Int64" }\nengine = "spark"\n')
    with pytest.raises(InvalidParameterError, match=r"^job file: schema casts \['age'\] .* engine 'spark' reads the"):
        Job.load(job)
    with pytest.raises(InvalidParameterError, match=r"engine 'duckdb' reads the Parquet input 'people.parquet'"):
        Job.load(job, engine="duckdb")  # the command line's --engine too
    Job.load(job, engine="polars")  # Polars casts
    (work / "job.toml").write_text(JOB.format(extra='schema = {}\nengine = "spark"'))
    Job.load(work / "job.toml")  # an empty schema casts nothing
