"""Fail closed on DuckDB and Spark: a tampered written table is refused, a write that fails midway leaves
nothing, bad input gets the Polars road's messages (issue 18)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
import polars_anon.spark as pas
from polars_anon.engines.spark import SparkEngine
from polars_anon.pipeline.result import Anonymized
from tests.reliability.snapshot import unchanged

T = pl.DataFrame(
    {"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6, "party": ["a", "b", "c"] * 4}
)
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
KW: dict[str, Any] = {"hierarchies": H, "k": 2, "insensitive": "id"}


def _source(engine: str, spark: Any, frame: pl.DataFrame = T) -> Any:
    return spark.createDataFrame(frame.to_arrow()) if engine == "spark" else frame


@pytest.fixture(params=["duckdb", "spark"])
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def session(engine: str, request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("spark") if engine == "spark" else None


def _tampering(result: Anonymized, change: Callable[[pl.DataFrame], pl.DataFrame]) -> None:
    """Make the engine write `change` of the published rows instead of them (the written data is what is checked)."""
    engine, write = result.engine, result.engine.write

    def tampered(table: Any, path: Path) -> None:
        write(engine.table(change(engine.to_polars(table))), path)

    engine.write = tampered  # type: ignore[method-assign]


def test_tampered_class_is_refused(engine: str, session: Any, tmp_path: Path) -> None:
    """One row moved to a class of its own: the group-by of the written table refuses it; nothing is written."""
    (tmp_path / "existing.parquet").write_bytes(b"keep")
    result = pa.anonymize(_source(engine, session), engine=engine, **KW)
    _tampering(
        result,
        lambda df: df.with_columns(pl.when(pl.col("id") == 0).then(pl.lit("99")).otherwise(pl.col("age")).alias("age")),
    )
    with unchanged(tmp_path), pytest.raises(pa.NotKAnonymousError, match="smallest class has 1 rows, fewer than k=2"):
        result.sink_parquet(tmp_path / "anon.parquet")


def test_rows_added_or_lost_are_refused(engine: str, session: Any, tmp_path: Path) -> None:
    """Every row written twice: classes still hold k, but the written table has more rows than were due."""
    result = pa.anonymize(_source(engine, session), engine=engine, **KW)
    _tampering(result, lambda df: pl.concat([df, df]))
    with unchanged(tmp_path), pytest.raises(pa.NotKAnonymousError, match="has 24 rows, but 12 were due"):
        result.sink_parquet(tmp_path / "anon.parquet")


def test_tampered_sensitive_values_are_refused(engine: str, session: Any, tmp_path: Path) -> None:
    """The party of a class made all one value: l-diversity fails on the written table; nothing is written."""
    result = pa.anonymize(_source(engine, session), engine=engine, privacy=[pa.LDiversity("party", l=2)], **KW)
    _tampering(result, lambda df: df.with_columns(pl.lit("a").alias("party")))
    with unchanged(tmp_path), pytest.raises(pa.PrivacyModelError, match="independent check failed"):
        result.sink_parquet(tmp_path / "anon.parquet")


class Boom(RuntimeError):
    pass


def test_write_failing_midway_leaves_nothing(
    engine: str, session: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table is written to its temporary name, then the run dies before the rename: no output, no temporary
    folder, and an existing output replaced with overwrite=True is as it was."""
    old = tmp_path / "anon.parquet"
    pl.DataFrame({"x": [1]}).write_parquet(old)
    result = pa.anonymize(_source(engine, session), engine=engine, **KW)
    seen: list[Path] = []

    def dies(self: Anonymized, table: Any) -> dict[str, Any]:
        seen.extend(tmp_path.iterdir())
        raise Boom("killed after the write")

    monkeypatch.setattr(Anonymized, "verify", dies)
    with unchanged(tmp_path), pytest.raises(Boom):
        result.sink_parquet(old, overwrite=True)
    assert any(
        p.name.startswith(".anon.parquet.") for p in seen
    )  # the temporary output existed: the failure was midway


def test_written_output_reads_back(engine: str, session: Any, tmp_path: Path) -> None:
    report = pa.anonymize(_source(engine, session), engine=engine, **KW).sink_parquet(tmp_path / "anon.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["anon.parquet", "anon.report.html", "anon.report.json"]
    back = pl.read_parquet(tmp_path / "anon.parquet").sort("id")
    assert back.equals(pa.anonymize(T, **KW).collect()) and report["engine"] == engine and report["min_class_size"] >= 2


EMU = T.with_columns(pl.when(pl.col("id") == 3).then(99).otherwise(pl.col("age")).alias("age"))
NULLS = T.with_columns(pl.when(pl.col("id") < 2).then(None).otherwise(pl.col("age")).alias("age"))
CASES: dict[str, tuple[pl.DataFrame, dict[str, Any]]] = {
    "qid-not-a-column": (T, {"qids": ["zip"]}),
    "k-zero": (T, {"k": 0}),
    "k-above-rows": (T, {"k": 13}),
    "method-unknown": (T, {"method": "magic"}),
    "metric-unknown": (T, {"metric": "nllm"}),
    "drop-not-a-column": (T, {"drop": ["ssn"]}),
    "sensitive-is-a-qid": (T, {"sensitive": "age"}),
    "null-policy-unknown": (T, {"null": "drop"}),
    "option-unknown": (T, {"max_supressed": 1}),
    "undeclared-identifier": (T, {"insensitive": ()}),
    "value-not-a-leaf": (EMU, {}),
    "nulls-refused": (NULLS, {}),
    "empty-table": (T.head(0), {"k": 1}),
    "l-above-the-values": (T, {"privacy": [pa.LDiversity("party", l=4)]}),
}


def _message(call: Callable[[], object]) -> tuple[type, str]:
    with pytest.raises(pa.AnonError) as caught:
        call()
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_catalogue_same_messages(case: str, spark: Any) -> None:
    """Each bad input is refused by the DuckDB and Spark entry points with the Polars road's error and message."""
    frame, over = CASES[case]
    args = KW | over
    expected = _message(lambda: pa.anonymize(frame, **args).collect())
    con = duckdb.connect()
    con.register("people", frame.to_arrow())
    assert _message(lambda: pad.anonymize("people", connection=con, **args).table()) == expected
    assert _message(lambda: pa.anonymize(frame, engine="duckdb", **args).collect()) == expected
    assert _message(lambda: pas.anonymize(spark.createDataFrame(frame.to_arrow()), **args).table()) == expected


@pytest.mark.parametrize(
    ("over", "words"),
    [
        ({"method": "mdav"}, "method 'mdav' works on row records"),
        (
            {"qids": ["x"], "hierarchies": {}, "method": "mondrian", "mode": "relaxed", "insensitive": ()},
            "split the rows of one tuple",
        ),
        ({"engine": "oracle"}, "engine must be one of ['polars', 'duckdb', 'spark'], got 'oracle'"),
    ],
)
def test_what_runs_on_polars_only(over: dict[str, Any], words: str) -> None:
    args = KW | {"engine": "duckdb"} | over
    data = (
        pl.DataFrame({"x": [2, 3, 1, 2, 2]}) if over.get("qids") == ["x"] else T
    )  # relaxed cuts split the tuple x = 2
    with pytest.raises(pa.InvalidParameterError, match=words.replace("[", r"\[").replace("]", r"\]")):
        pa.anonymize(data, **args)


def test_every_front_door_names_itself_when_a_required_keyword_is_missing() -> None:
    """polars_anon.duckdb.anonymize and polars_anon.spark.anonymize without k raised a TypeError naming run(), a
    function the user never called (mend34): each refuses as pa.anonymize does, before any engine or session is made
    (the Spark door gets a table name no session could read). (hierarchies is optional since mend45: below.)"""
    args = {key: v for key, v in KW.items() if key != "k"}
    said = "anonymize() missing 1 required keyword-only argument: 'k'"
    for door, data in ((pa.anonymize, T), (pad.anonymize, T), (pas.anonymize, "no_such_table")):
        with pytest.raises(TypeError, match=re.escape(said)):
            door(data, **args)


def test_every_front_door_without_hierarchies_names_the_method_that_needs_them(spark: Any) -> None:
    """mend45: hierarchies is optional (mondrian, mdav and local_suppression publish without one); a method that
    needs one is refused by the request's check, in the same line at every door, naming the qids and the method
    (it was mend34's TypeError, "missing 1 required keyword-only argument: 'hierarchies'")."""
    said = r"qids \['age', 'sex'\] have no hierarchy, and method 'fulldomain' needs one for every qid; give one in"
    args = {"qids": ["age", "sex"], "k": 2, "insensitive": "id"}
    sdf = spark.createDataFrame(T.to_arrow())
    for door, data in ((pa.anonymize, T), (pad.anonymize, T), (pas.anonymize, sdf)):
        with pytest.raises(pa.InvalidParameterError, match=said):
            door(data, **args)
    want = pa.anonymize(T, method="mondrian", **args).collect()
    assert pas.anonymize(sdf, method="mondrian", **args).collect().equals(want)  # in input order


def test_a_table_name_that_needs_quoting_is_found() -> None:
    """`pad.anonymize('my "tbl"')` said "DuckDB has no table" of a table that exists (review7 F10): a name DuckDB
    cannot parse as a (qualified) name is looked up as one quoted name; qualified names still work."""
    con = duckdb.connect()
    con.register("frame", T.to_arrow())
    con.execute(
        'CREATE TABLE "my ""tbl""" AS SELECT * FROM frame; CREATE SCHEMA s; CREATE TABLE s.t AS SELECT * FROM frame'
    )
    for name in ('my "tbl"', "s.t"):
        assert pad.anonymize(name, connection=con, **KW).collect().sort("id")["id"].to_list() == list(range(12))


def test_unknown_table_names(spark: Any) -> None:
    with pytest.raises(pa.InvalidParameterError, match="DuckDB has no table or view 'nobody'"):
        pad.anonymize("nobody", connection=duckdb.connect(), **KW)
    with pytest.raises(pa.InvalidParameterError, match="Spark has no table or view 'nobody'"):
        pas.anonymize("nobody", **KW)


def test_a_path_duckdb_cannot_read_is_named_in_the_job_words(tmp_path: Path) -> None:
    """mend33: DuckDB said "no table or view 'flat'" of a path it could not read (a folder without Parquet, a Hive
    layout's key=value folder, a missing file): refused in the words a job's input is refused in, one line each;
    a Parquet file's name and a folder of parts are read (as a job reads them)."""
    from polars_anon.job import Job, run_job

    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "notes.txt").write_text("no parquet here")
    (tmp_path / "hive" / "y=1").mkdir(parents=True)
    T.write_parquet(tmp_path / "hive" / "y=1" / "part-0.parquet")
    (tmp_path / "parts").mkdir()
    T.write_parquet(tmp_path / "parts" / "part-0.parquet")
    for given in ("flat", "hive", "missing.parquet", "no/such/file"):
        path = str(tmp_path / given)
        job = {
            "input": path,
            "output": str(tmp_path / "out.parquet"),
            "k": 2,
            "qids": {"sex": {"hierarchy": "suppress"}},
        }
        with pytest.raises(pa.InputError) as polars_road:
            run_job(Job.from_dict(job))
        words = str(polars_road.value)
        assert f"{path!r}" in words and "\n" not in words
        with pytest.raises(pa.InputError) as duckdb_road:  # was InvalidParameterError: no table or view
            pad.anonymize(path, connection=duckdb.connect(), **KW)
        assert str(duckdb_road.value) == words
    for given in ("parts", "parts/part-0.parquet"):
        published = pad.anonymize(str(tmp_path / given), connection=duckdb.connect(), **KW).collect()
        assert published.sort("id")["id"].to_list() == list(range(12))


def test_a_folder_given_to_spark_is_read_as_duckdb_reads_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mend40: a folder of Parquet parts named without ``.parquet`` (``data/people``, or ``people`` from its parent
    folder) was looked up as a table name: Spark's raw ParseException for a path, "no table or view" for a bare
    name, where DuckDB (and a job) reads the folder. Spark reads it too, and refuses a folder it cannot read in the
    words DuckDB and a job use; an unknown bare name is still an unknown table."""
    (tmp_path / "parts").mkdir()
    T.write_parquet(tmp_path / "parts" / "part-0.parquet")
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "notes.txt").write_text("no parquet here")
    (tmp_path / "hive" / "y=1").mkdir(parents=True)
    T.write_parquet(tmp_path / "hive" / "y=1" / "part-0.parquet")
    monkeypatch.chdir(tmp_path)
    for given in (str(tmp_path / "parts"), "parts", "./parts"):
        published = pas.anonymize(given, **KW).collect()
        assert published.sort("id")["id"].to_list() == list(range(12)), given
    for given in (str(tmp_path / "flat"), "hive", str(tmp_path / "no" / "such")):
        with pytest.raises(pa.InputError) as duckdb_road:
            pad.anonymize(given, connection=duckdb.connect(), **KW)
        with pytest.raises(pa.InputError) as spark_road:
            pas.anonymize(given, **KW)
        assert str(spark_road.value) == str(duckdb_road.value), given
    with pytest.raises(pa.InvalidParameterError, match="Spark has no table or view 'people'"):
        pas.anonymize("people", **KW)


def test_spark_check_groups_once_and_agrees_with_polars(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sensitive attributes, l-diversity on one: Spark's check of the published table brings one grouped result
    to the driver (GROUPING SETS of (class, party) and (class, diag); the classes summed from the first), and finds
    the facts Polars' check finds on the same rows."""
    frame = T.with_columns(diag=pl.Series(["x", "y", "y", "z"] * 3))
    kw = {**KW, "sensitive": ["party", "diag"], "privacy": [pa.LDiversity("party", l=2)]}
    polars = pa.anonymize(frame, **kw)
    polars.collect()
    result = pa.anonymize(spark.createDataFrame(frame.to_arrow()), engine="spark", **kw)
    engine, collect, collected = result.engine, result.engine.to_polars, []
    monkeypatch.setattr(engine, "to_polars", lambda table: collected.append(1) or collect(table))
    result.table()
    assert len(collected) == 1
    for key in ("n_rows", "n_classes", "min_class_size", "privacy", "attribute_disclosure", "risk"):
        assert result.report[key] == polars.report[key], key


def test_spark_sources_are_the_files_read(spark: Any, tmp_path: Path) -> None:
    """What a Spark result never writes onto: the Parquet a DataFrame reads (``inputFiles``, a local ``file:`` URI
    as its path), a path given as the table, the files a LazyFrame scans; none for rows in memory."""
    path = tmp_path / "t.parquet"
    T.write_parquet(path)
    engine = SparkEngine(spark)
    assert engine.sources(spark.read.parquet(str(path))) == [str(path)]
    assert engine.sources(str(path)) == engine.sources(pl.scan_parquet(path)) == [str(path)]
    assert engine.sources(T) == []
    spark.read.parquet(str(path)).createOrReplaceTempView("anon_sources_view")  # a name in the catalog: its files
    assert engine.sources("anon_sources_view") == [str(path)]


def test_duckdb_sources_follow_table_macros_and_schemas(tmp_path: Path) -> None:
    """review14: a view over a table macro reading a file named no file (the output could replace it), and a view
    name matched the views of that name in every schema (a view binds its names in its own schema first, then on the
    search path)."""
    from polars_anon.engines.duckdb import DuckDBEngine

    for name in ("a", "b", "c"):
        T.write_parquet(tmp_path / f"{name}.parquet")
    a, b, c = (str(tmp_path / f"{name}.parquet").replace("'", "''") for name in ("a", "b", "c"))
    con = duckdb.connect()
    con.execute(f"CREATE MACRO m() AS TABLE SELECT * FROM '{a}'")
    con.execute("CREATE VIEW vm AS SELECT * FROM m()")
    con.execute(f"CREATE SCHEMA s; CREATE VIEW s.x AS SELECT * FROM '{b}'; CREATE VIEW main.x AS SELECT * FROM '{c}'")
    con.execute("CREATE VIEW s.v AS SELECT * FROM x")  # DuckDB reads s.x here
    engine = DuckDBEngine(con)
    assert con.sql("SELECT count(*) FROM s.v").fetchall() == [(T.height,)]
    assert engine.sources("vm") == [a.replace("''", "'")]
    assert engine.sources("x") == [c.replace("''", "'")]
    assert engine.sources("s.v") == [b.replace("''", "'")]


def test_duckdb_sources_follow_a_table_macro_into_its_callers_scope(tmp_path: Path) -> None:
    """review16: DuckDB binds a table macro's names where it is called, not in the macro's schema: ``s.my()`` over
    ``y`` reads main.y, and sources named only s.y's file (the output could replace main.y's)."""
    from polars_anon.engines.duckdb import DuckDBEngine

    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    T.head(1).write_parquet(a)
    T.write_parquet(b)
    con = duckdb.connect()
    con.execute(f"CREATE SCHEMA s; CREATE VIEW s.y AS FROM '{a}'; CREATE VIEW main.y AS FROM '{b}'")
    con.execute("CREATE MACRO s.my() AS TABLE SELECT * FROM y")
    assert con.sql("SELECT count(*) FROM s.my()").fetchall() == [(T.height,)]  # main.y's rows: b is read
    assert str(b) in DuckDBEngine(con).sources(con.sql("SELECT * FROM s.my()"))


def test_duckdb_sources_read_a_two_part_name_as_catalog_and_name(tmp_path: Path) -> None:
    """review16: ``db2.v2`` names view v2 of the attached database db2 (its default schema); sources looked for a
    schema db2 only and named no file."""
    from polars_anon.engines.duckdb import DuckDBEngine

    c = tmp_path / "c.parquet"
    T.write_parquet(c)
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 'db2.duckdb'}' AS db2")
    con.execute(f"CREATE VIEW db2.main.v2 AS FROM '{c}'")
    engine = DuckDBEngine(con)
    assert engine.sources("db2.v2") == engine.sources(con.table("db2.v2")) == [str(c)]


def test_duckdb_sources_refuse_a_macro_file_left_to_its_default(tmp_path: Path) -> None:
    """review16: a file named only in a table macro's default (``md(p := 'b.parquet')``, called ``md()``) is not in
    ``duckdb_functions()`` (the query only): sources named no file, and the output replaced b.parquet. The call is
    refused now, naming the parameter; given in the call, the file is named."""
    from polars_anon.engines.duckdb import DuckDBEngine

    b = tmp_path / "b.parquet"
    T.write_parquet(b)
    con = duckdb.connect()
    con.execute(f"CREATE MACRO md(n := 1, p := '{b}') AS TABLE SELECT * FROM read_parquet(p) LIMIT n")
    con.execute("CREATE VIEW vmd AS SELECT * FROM md()")
    engine = DuckDBEngine(con)
    with pytest.raises(pa.InvalidParameterError, match="table macro main.md reads parameter 'p' as a file"):
        engine.sources("vmd")
    assert engine.sources(con.sql(f"SELECT * FROM md(p := '{b}')")) == [str(b)]
    assert engine.sources(con.sql(f"SELECT * FROM md(2, '{b}')")) == [str(b)]


def test_duckdb_sources_after_use_follow_the_current_catalog(tmp_path: Path) -> None:
    """review16: after ``USE db2``, a name without a schema matched the view of that name in every catalog
    (``current_schemas(true)`` has no catalogs): both files were protected where DuckDB reads db2's only."""
    from polars_anon.engines.duckdb import DuckDBEngine

    d, e = tmp_path / "d.parquet", tmp_path / "e.parquet"
    T.head(1).write_parquet(d)
    T.write_parquet(e)
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 'db2.duckdb'}' AS db2")
    con.execute(f"CREATE VIEW db2.main.x AS FROM '{d}'; CREATE VIEW main.x AS FROM '{e}'; USE db2")
    assert con.sql("SELECT count(*) FROM x").fetchall() == [(1,)]  # db2's x: d
    assert DuckDBEngine(con).sources("x") == [str(d)]


PARTS = {
    "an integer width": ({"age": pl.Int32}, "column 'age' is Int32 in 'part-1.parquet' but Int64 in 'part-0.parquet'"),
    "a column": ({"drop": "party"}, "'part-1.parquet' lacks columns ['party'] of 'part-0.parquet'"),
}


@pytest.mark.parametrize("differs", list(PARTS))
@pytest.mark.parametrize("engine_name", ["polars", "duckdb", "spark"])
def test_a_folder_whose_parts_differ_is_refused_alike(
    engine_name: str, differs: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    """review20 #8: parts of a folder input that differ (an Int32 part beside Int64 ones, a part without a column)
    gave a Polars traceback, a DuckDB Binder error, or were read by DuckDB (Int32 into Int64) where Polars refused;
    now every engine, and check, refuse it in one line naming the folder, the part and the column."""
    from polars_anon import cli

    if engine_name == "spark":
        request.getfixturevalue("spark")
    change, words = PARTS[differs]
    parts = tmp_path / "parts"
    parts.mkdir()
    T.head(6).write_parquet(parts / "part-0.parquet")
    later = T.tail(6)
    later = later.drop(change["drop"]) if "drop" in change else later.cast(change)  # type: ignore[arg-type]
    later.write_parquet(parts / "part-1.parquet")
    job = 'input = "parts"\noutput = "out.parquet"\nk = 2\ninsensitive = "id"\nsensitive = "party"\n'
    job += f'engine = "{engine_name}"\n[qids.sex]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(job)
    said = f"polars-anon: error: input folder '{parts}' has parts that differ: {words}; write every part with the "
    said += "same columns and types\n"
    for args in (["anonymize", str(tmp_path / "job.toml")], ["check", str(parts), "--qids", "sex", "--k", "2"]):
        assert cli.main(args) == 2
        assert capsys.readouterr() == ("", said)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.toml", "parts"]
