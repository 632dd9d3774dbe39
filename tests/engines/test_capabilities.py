"""The capability table (polars_anon.pipeline.capabilities) and the map contract every route hands the road.

The table is consulted before any row is read: a frame whose rows cannot be read (reading them raises) still
gets the table's refusal. Each refusal below is one row of the table, matched by hand to the request.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
from polars_anon.errors import InvalidParameterError
from polars_anon.pipeline.capabilities import REFUSALS, consult, consult_frame
from polars_anon.publish import publish
from polars_anon.request import check_request
from polars_anon.tuplemap import PARTITION, SIZE, SUPPRESSED, TupleMap, out_col

SEX = {"sex": pa.Hierarchy.suppression(["F", "M"])}


def _unreadable() -> pl.LazyFrame:
    """A frame whose schema is known but whose rows raise when read."""

    def boom(s: pl.Series) -> pl.Series:
        raise RuntimeError("the rows were read")

    return pl.LazyFrame({"sex": ["F", "M"]}).with_columns(pl.col("sex").map_batches(boom, return_dtype=pl.String))


def _request(**asked: Any) -> Any:
    return check_request(pl.Schema({"sex": pl.String}), hierarchies=SEX, k=2, **asked)


def test_refused_on_polars_before_any_row_is_read() -> None:
    with pytest.raises(InvalidParameterError, match="engine 'polars' holds them in this process"):
        pa.anonymize(_unreadable(), hierarchies=SEX, k=2, driver_tuples=10)


@pytest.mark.parametrize(
    ("engine", "asked", "words"),
    [
        ("duckdb", {"method": "mdav"}, "method 'mdav' works on row records, which engine 'duckdb'"),
        ("spark", {"method": "mdav", "options": {"publish": "permute"}}, "publish='permute' draws one random"),
        (
            "spark",
            {"method": "mdav", "options": {"publish": "aggregate", "distance": "ahmad_dey"}},
            "distance='ahmad_dey' is fitted on co-occurrences",
        ),
        ("spark", {"method": "mdav", "options": {"publish": "aggregate"}, "null": "suppress"}, "null='suppress'"),
    ],
)
def test_what_no_route_runs_is_refused_when_consulted(engine: str, asked: dict, words: str) -> None:
    with pytest.raises(InvalidParameterError, match=words):
        consult(_request(**asked), engine)


@pytest.mark.parametrize(
    ("engine", "asked", "words"),
    [
        ("duckdb", {"method": "mondrian", "options": {"mode": "relaxed"}}, "mondrian mode 'relaxed' is not supported"),
        ("spark", {"method": "greedy", "null": "suppress"}, 'greedy on Spark\'s blocks takes null="error" only'),
        ("duckdb", {"method": "greedy"}, "method 'greedy' runs on the driver: raise driver_tuples"),
        ("spark", {"method": "fulldomain"}, "or use method 'greedy' or 'mondrian'$"),
    ],
)
def test_the_planner_route_is_decided_before_the_data_and_refused_when_taken(
    engine: str, asked: dict, words: str
) -> None:
    """Below driver_tuples these run on the driver; the table's answer holds the planner route's refusal."""
    capability = consult(_request(**asked), engine, 100)
    assert capability.driver_tuples == 100
    with pytest.raises(InvalidParameterError, match=words):
        capability.refuse_planner()


def test_model_and_method_refusals_are_rows_of_the_table() -> None:
    """A population-table model with a method that is not full-domain, and Mondrian relaxed with a model reading a
    sensitive attribute, were refused in check_request and inside Mondrian (after the rows were read): both are rows
    of the table now, consulted before any row is read (issue 31)."""
    schema = pl.Schema({"sex": pl.String, "s": pl.String})
    population = pl.DataFrame({"sex": ["F", "M", "F"]})
    kmap = check_request(schema, hierarchies=SEX, k=2, method="greedy", privacy=[pa.KMap(2, population=population)])
    with pytest.raises(
        InvalidParameterError, match=r"k-map.* needs a method .*\['fulldomain', 'datafly'\], got method"
    ):
        consult(kmap, "polars")
    for method in ("fulldomain", "datafly"):
        consult(
            check_request(schema, hierarchies=SEX, k=2, method=method, privacy=[pa.KMap(2, population=population)]),
            "polars",
        )
    relaxed = check_request(
        schema, hierarchies=SEX, k=2, method="mondrian", options={"mode": "relaxed"}, privacy=[pa.LDiversity("s", 2)]
    )
    for engine, limit in (("polars", None), ("duckdb", 100)):
        with pytest.raises(InvalidParameterError, match=r"mondrian mode 'relaxed' splits .*\['l-diversity'\]"):
            consult(relaxed, engine, limit)
    rows = _unreadable().with_columns(pl.lit("x").alias("s"))
    with pytest.raises(InvalidParameterError, match="mondrian mode 'relaxed' splits"):
        pa.anonymize(rows, hierarchies=SEX, k=2, method="mondrian", mode="relaxed", privacy=[pa.LDiversity("s", 2)])


def test_supported_routes_pass() -> None:
    for engine, method in [("duckdb", "mondrian"), ("spark", "mondrian"), ("spark", "greedy"), ("polars", "mdav")]:
        capability = consult(_request(method=method), engine)
        assert capability.planner is None
        capability.refuse_planner()


def test_every_row_names_a_known_method_and_engine() -> None:
    assert {r.engine for r in REFUSALS} <= {"*", "duckdb", "spark"}
    assert {r.method for r in REFUSALS} <= {"*", *pa.METHODS}
    assert {r.route for r in REFUSALS} <= {"any", "driver", "planner"}


def test_a_tuple_map_never_has_a_null_original_tuple() -> None:
    frame = pl.DataFrame({"sex": ["F", None], out_col("sex"): ["*", "*"], SIZE: [2, 2], SUPPRESSED: [False, False]})
    with pytest.raises(ValueError, match=r"never null; null in \['sex'\]"):
        TupleMap(("sex",), frame)


def test_a_partition_map_sends_every_row_to_one_partition() -> None:
    """A planner's partition map: one row per published class; its rows must add up to the input's."""
    frame = pl.DataFrame({PARTITION: [0, 1], out_col("sex"): ["F", "M"], SIZE: [3, 2], SUPPRESSED: [False, False]})
    tmap = TupleMap(("sex",), frame, by_partition=True)
    tmap.check_covers(pl.DataFrame({"sex": ["F", "M"], SIZE: [3, 2]}))
    assert tmap.published_sizes().rows() == [("F", 3), ("M", 2)]
    with pytest.raises(AssertionError, match="every input row to one partition"):
        tmap.check_covers(pl.DataFrame({"sex": ["F", "M"], SIZE: [3, 3]}))
    with pytest.raises(ValueError, match="joined by its engine"):
        publish(pl.LazyFrame({"sex": ["F"]}), tmap)


class _ConnectSession:
    """Stands for a Spark Connect session (``sc://...``) where no server runs: its class lives in pyspark's connect
    package, and anything asked of it fails (the refusal must come before)."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the Connect session was used: {name}")


_ConnectSession.__module__ = "pyspark.sql.connect.session"


class _ConnectFrame:
    """Stands for a Spark Connect DataFrame: its session is a Connect one, and its rows are never read."""

    sparkSession = _ConnectSession()

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the Connect DataFrame was read: {name}")


def test_spark_connect_refused_in_one_line_before_the_session_is_used() -> None:
    pytest.importorskip("pyspark")
    from polars_anon import spark as pas

    why = "engine 'spark' needs a classic Spark session .* not Spark Connect: .*Hadoop's FileSystem API"
    for call in (
        lambda: pa.anonymize(_ConnectFrame(), hierarchies=SEX, k=2, engine="spark"),
        lambda: pas.anonymize(_ConnectFrame(), hierarchies=SEX, k=2),
        lambda: pas.sdc_risk(_ConnectFrame(), ["sex"]),
    ):
        with pytest.raises(InvalidParameterError, match=why) as caught:
            call()
        assert "\n" not in str(caught.value)


def test_spark_connect_asked_for_is_refused_before_pyspark_builds_a_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SPARK_REMOTE`` set (or ``spark.api.mode = connect``) and no session yet: pyspark's own errors came first (a
    missing Connect client, 'Spark master cannot be configured') as tracebacks, exit 1 (guides31); now the same
    one-line refusal, before pyspark is asked for anything."""
    pytest.importorskip("pyspark")
    from polars_anon.engines.spark import session

    why = "engine 'spark' needs a classic Spark session .* not Spark Connect"
    with pytest.raises(InvalidParameterError, match=why):
        session("local[1]", {"spark.api.mode": "connect"})
    monkeypatch.setenv("SPARK_CONNECT_MODE", "1")  # pyspark's default mode, Connect (review31)
    with pytest.raises(InvalidParameterError, match=why):
        session("local[1]")
    monkeypatch.delenv("SPARK_CONNECT_MODE")
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost:15002")
    with pytest.raises(InvalidParameterError, match=why):
        session("local[1]")
    assert not os.environ.get("SPARK_CONNECT_MODE_ENABLED")  # refused before pyspark set it


def test_cli_spark_connect_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyspark")
    from polars_anon import cli

    pl.DataFrame({"sex": ["F", "M"] * 2}).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{tmp_path / "in.parquet"}"\noutput = "{tmp_path / "out.parquet"}"\nk = 2\n'
        '[qids.sex]\nhierarchy = "suppress"\n'
    )
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost:15002")
    assert cli.main(["anonymize", str(job), "--engine", "spark", "--master", "local[1]"]) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("polars-anon: error: engine 'spark' needs a classic Spark session") and "\n" not in said
    assert not (tmp_path / "out.parquet").exists()


def test_a_128_bit_integer_column_is_refused_on_duckdb_and_spark_before_any_row_is_read() -> None:
    """Arrow has no 128-bit integer: DuckDB crashed with a raw ArrowInvalid where Polars publishes the column
    (review7 F7b); the table refuses the frame naming the column, from its schema alone."""
    rows = _unreadable().with_columns(pl.lit(7, dtype=pl.Int128).alias("big"))
    with pytest.raises(InvalidParameterError, match=r"column 'big' has dtype Int128: engine 'duckdb' takes"):
        pa.anonymize(rows, hierarchies=SEX, k=2, insensitive="big", engine="duckdb")
    with pytest.raises(InvalidParameterError, match=r"column 'u' has dtype UInt128: engine 'spark' takes"):
        consult_frame("spark", pl.LazyFrame({"u": pl.Series([1], dtype=pl.UInt128)}))
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "big": pl.Series([1, 2, 3, 4], dtype=pl.Int128)})
    assert pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="big").collect()["big"].to_list() == [1, 2, 3, 4]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_object_column_is_refused_on_every_engine_before_any_row_is_read(engine: str) -> None:
    """hunt41: DuckDB published an Object column as a Binary column of 8-byte memory addresses (and called an Object
    qid "Binary"); Polars failed at the write with a raw ComputeError naming no column. One line naming it now."""
    said = r"column 'obj' has dtype Object: it holds Python objects, which no engine publishes"
    rows = _unreadable().with_columns(pl.col("sex").map_batches(lambda s: s, return_dtype=pl.Object).alias("obj"))
    with pytest.raises(InvalidParameterError, match=said):
        pa.anonymize(rows, hierarchies=SEX, k=2, insensitive="obj", engine=engine)
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "obj": pl.Series([object()] * 4, dtype=pl.Object)})
    with pytest.raises(InvalidParameterError, match=said):
        pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="obj", engine=engine)
    with pytest.raises(InvalidParameterError, match=said):  # a qid too, by its own dtype
        pa.anonymize(frame, hierarchies={"obj": pa.Hierarchy.from_dict({"*": ["x"]})}, k=2, engine=engine)
    with pytest.raises(InvalidParameterError, match=said):
        consult_frame("spark", frame)


def test_a_zoned_datetime_qid_is_labelled_in_its_own_zone_or_refused_on_duckdb() -> None:
    """DuckDB hands a timestamp with time zone back in its session's zone: a 'Europe/Paris' qid was labelled
    '...+00:00' on a UTC session and refused as not in its hierarchy (built from the column, '...+01:00'), while Polars
    published it (review7 F5). The table refuses it unless the session's zone is the column's."""
    times = [datetime.datetime(2020, 1, 1, 10 + i % 2) for i in range(4)]
    q = pl.Series("q", times).dt.replace_time_zone("Europe/Paris")
    frame = pl.DataFrame({"q": q, "id": range(4)})
    H = {"q": pa.Hierarchy.suppression(q.unique())}
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    with pytest.raises(InvalidParameterError, match=r"qid 'q' is a Datetime in time zone 'Europe/Paris': DuckDB holds"):
        pad.anonymize(frame, connection=con, hierarchies=H, k=2, insensitive="id")
    con.sql("SET TimeZone = 'Europe/Paris'")
    duck = pad.anonymize(frame, connection=con, hierarchies=H, k=2, insensitive="id").collect()
    want = ["2020-01-01 10:00:00.000000+01:00", "2020-01-01 11:00:00.000000+01:00"] * 2  # level 0: each row's leaf
    assert (
        duck["q"].to_list()
        == pa.anonymize(frame, hierarchies=H, k=2, insensitive="id").collect()["q"].to_list()
        == want
    )


def test_a_zoned_datetime_qid_of_a_relation_over_parquet_follows_the_same_rule(tmp_path: Any) -> None:
    """mend7: a DuckDB relation over a Parquet file whose qid Polars writes in 'Europe/Paris' was published in the
    session's zone ('...+00:00' on UTC) where Polars, the job and a Polars frame on DuckDB label it in the file's own
    (or refuse): the file's zone is now consulted for a relation too, same message; in the file's zone it is allowed
    and labelled as Polars labels it."""
    q = pl.Series("q", [datetime.datetime(2020, 1, 1, 10 + i % 2) for i in range(4)]).dt.replace_time_zone(
        "Europe/Paris"
    )
    frame = pl.DataFrame({"q": q, "id": range(4)})
    path = tmp_path / "zoned.parquet"
    frame.write_parquet(path)
    H = {"q": pa.Hierarchy.suppression(q.unique())}
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    for relation in (f"SELECT * FROM read_parquet('{path}')", f"SELECT * FROM '{tmp_path}/*.parquet'"):
        with pytest.raises(InvalidParameterError, match=r"qid 'q' is a Datetime in time zone 'Europe/Paris': DuckDB"):
            pad.anonymize(con.sql(relation), connection=con, hierarchies=H, k=2, insensitive="id")
    con.sql("SET TimeZone = 'Europe/Paris'")
    duck = pad.anonymize(con.sql(f"FROM read_parquet('{path}')"), connection=con, hierarchies=H, k=2, insensitive="id")
    want = ["2020-01-01 10:00:00.000000+01:00", "2020-01-01 11:00:00.000000+01:00"] * 2  # level 0: each row's leaf
    assert duck.collect()["q"].to_list() == want


def test_a_relation_s_zone_is_judged_by_its_own_types_not_by_footer_names(tmp_path: Any) -> None:
    """review12 7: the DuckDB zone check matched the qid to the file's footer by name: ``SELECT t::TIMESTAMP AS t``
    (naive: labelled as DuckDB holds it) was refused as zoned, and ``SELECT u AS t`` over a Paris ``u`` was not
    judged (published '+00:00' where Polars labels '+01:00'); only the first file read was consulted."""
    ts = [datetime.datetime(2020, 1, 1, 10 + i % 2) for i in range(4)]
    paris = pl.Series(ts).dt.replace_time_zone("Europe/Paris")
    pl.DataFrame({"t": paris, "id": range(4)}).write_parquet(tmp_path / "zoned.parquet")
    pl.DataFrame({"u": paris, "id": range(4)}).write_parquet(tmp_path / "u.parquet")
    pl.DataFrame({"t": pl.Series(ts), "id": range(4)}).write_parquet(tmp_path / "naive.parquet")
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    naive = con.sql(f"SELECT t::TIMESTAMP AS t, id FROM '{tmp_path / 'zoned.parquet'}'")
    H = {"t": pa.Hierarchy.suppression(["2020-01-01 09:00:00.000000", "2020-01-01 10:00:00.000000"])}
    out = pad.anonymize(naive, connection=con, hierarchies=H, k=2, insensitive="id").collect()
    assert sorted(out["t"].to_list()) == ["2020-01-01 09:00:00.000000"] * 2 + ["2020-01-01 10:00:00.000000"] * 2
    H = {"t": pa.Hierarchy.suppression(paris.unique())}
    for query in (
        f"SELECT u AS t, id FROM '{tmp_path / 'u.parquet'}'",  # renamed: its file's zones
        f"FROM read_parquet(['{tmp_path / 'naive.parquet'}', '{tmp_path / 'zoned.parquet'}'], union_by_name = true)",
    ):
        with pytest.raises(InvalidParameterError, match=r"qid 't' is a Datetime in time zone 'Europe/Paris': DuckDB"):
            pad.anonymize(con.sql(query), connection=con, hierarchies=H, k=2, insensitive="id")


def test_a_zoned_datetime_qid_is_refused_on_spark_unless_the_session_is_in_its_zone(spark: Any, tmp_path: Any) -> None:
    """Spark, too, hands a timestamp back in its session's zone: a 'Europe/Paris' qid was published as
    '2019-12-31 23:00:00.000000+00:00' where Polars wrote '2020-01-01 00:00:00.000000+01:00' (review8 F4)."""
    from polars_anon.engines.spark import SparkEngine

    q = pl.Series("q", [datetime.datetime(2020, 1, 1, i % 2) for i in range(4)]).dt.replace_time_zone("Europe/Paris")
    frame = pl.DataFrame({"q": q, "id": range(4)})
    H = {"q": pa.Hierarchy.suppression(q.unique())}
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        assert SparkEngine(spark).time_zone == "UTC"
        with pytest.raises(InvalidParameterError, match=r"qid 'q' is a Datetime in time zone 'Europe/Paris': Spark"):
            pa.anonymize(frame, hierarchies=H, k=2, insensitive="id", engine="spark")
        # mend7: handed as Spark's own DataFrame, the file's zone is consulted the same way (was published in UTC)
        path = str(tmp_path / "zoned.parquet")
        frame.write_parquet(path)
        with pytest.raises(InvalidParameterError, match=r"qid 'q' is a Datetime in time zone 'Europe/Paris': Spark"):
            pa.anonymize(spark.read.parquet(path), hierarchies=H, k=2, insensitive="id", engine="spark")
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_a_zoned_datetime_qid_on_spark_in_its_zone_is_labelled_as_polars_labels_it(spark: Any, tmp_path: Any) -> None:
    """review12 3: on a 'Europe/Paris' session, a Paris qid (a frame or spark.read) was labelled in UTC,
    '2019-12-31 23:00:00.000000+00:00' (Spark's Arrow hands timestamps in UTC), and its suppression hierarchy of Paris
    values raised ValueNotInHierarchyError; Polars labels it '2020-01-01 00:00:00.000000+01:00'."""
    q = pl.Series("q", [datetime.datetime(2020, 1, 1, i % 2) for i in range(4)]).dt.replace_time_zone("Europe/Paris")
    frame = pl.DataFrame({"q": q, "id": range(4)})
    H = {"q": pa.Hierarchy.suppression(q.unique())}
    want = ["2020-01-01 00:00:00.000000+01:00", "2020-01-01 01:00:00.000000+01:00"] * 2  # Polars' labels, by hand
    assert pa.anonymize(frame, hierarchies=H, k=2, insensitive="id").collect()["q"].to_list() == want
    path = str(tmp_path / "zoned.parquet")
    frame.write_parquet(path)
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
        result = pa.anonymize(spark.read.parquet(path), hierarchies=H, k=2, insensitive="id", engine="spark")
        assert result.collect().sort("id")["q"].to_list() == want  # a frame goes through the same to_polars
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def test_a_time_column_of_a_parquet_input_on_spark_is_refused_by_name(
    spark: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """review12 4: a Time column in a Parquet file on Spark gave a raw AnalysisException [UNSUPPORTED_TIME_TYPE]
    (the CLI a traceback, exit 1); only a Polars frame was refused by name. Now one line naming the column (exit 2)."""
    frame = pl.DataFrame({"age": [20, 21, 20, 21], "at": [datetime.time(9, i) for i in range(4)]})
    frame.write_parquet(tmp_path / "t.parquet")
    H = {"age": pa.Hierarchy.intervals(range(15, 30), [5, 10])}
    with pytest.raises(InvalidParameterError, match=r"column 'at' of '.*t\.parquet' has dtype Time: Spark has no"):
        pa.anonymize(str(tmp_path / "t.parquet"), hierarchies=H, k=2, insensitive="at", engine="spark")
    _refused_by_a_spark_job(tmp_path, capsys, "column 'at' of", "has dtype Time: Spark has no")


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_a_nanosecond_datetime_of_a_parquet_input_on_spark_is_refused_by_name(
    zone: str | None, spark: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """hunt41 s1: a Datetime[ns] column in a Parquet file on Spark gave a 39-line AnalysisException
    [PARQUET_TYPE_ILLEGAL], exit 1. Now one line naming the column and the file (exit 2), from the footer."""
    at = pl.Series([datetime.datetime(2020, 1, 1, 9, i) for i in range(4)]).cast(pl.Datetime("ns", zone))
    pl.DataFrame({"age": [20, 21, 20, 21], "at": at}).write_parquet(tmp_path / "t.parquet")
    said = r"column 'at' of '.*t\.parquet' has dtype Datetime\(time_unit='ns', .*\): Spark reads no timestamp in nano"
    H = {"age": pa.Hierarchy.intervals(range(15, 30), [5, 10])}
    with pytest.raises(InvalidParameterError, match=said):
        pa.anonymize(str(tmp_path / "t.parquet"), hierarchies=H, k=2, insensitive="at", engine="spark")
    _refused_by_a_spark_job(tmp_path, capsys, "column 'at' of", "Spark reads no timestamp in nanoseconds")


def _refused_by_a_spark_job(tmp_path: Any, capsys: pytest.CaptureFixture[str], *said: str) -> None:
    """A job on Spark over `tmp_path`'s t.parquet (qid age, column at insensitive): exit 2, one line holding each of
    `said`, nothing written."""
    from polars_anon import cli

    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "mondrian"\ninsensitive = ["at"]\n'
        "qids = { age = {} }\n"
    )
    assert cli.main(["anonymize", str(job), "--engine", "spark"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(words in err for words in said)
    assert not (tmp_path / "out.parquet").exists()


def test_names_equal_but_for_case_are_refused_on_duckdb_and_spark_naming_both(
    spark: Any, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """review12 6: columns 'fk' and 'Fk' (Polars publishes them) broke DuckDB (ColumnNotFoundError ... 'Fk_1') and
    Spark (a raw AMBIGUOUS_REFERENCE): both engines' names are case-insensitive. Refused before any read now."""
    from polars_anon import cli

    frame = pl.DataFrame({"fk": [20, 21, 20, 21], "x": [1, 2, 3, 4], "Fk": ["a", "b"] * 2})
    H = {"fk": pa.Hierarchy.intervals(range(15, 30), [5, 10])}
    assert pa.anonymize(frame, hierarchies=H, k=2, insensitive=["x", "Fk"]).collect()["Fk"].to_list() == ["a", "b"] * 2
    want = r"columns 'fk' and 'Fk'{} differ only in case: {}"
    for engine, who in (("duckdb", "DuckDB's column names are"), ("spark", "Spark resolves column names")):
        with pytest.raises(InvalidParameterError, match=want.format("", who)):
            pa.anonymize(frame.lazy(), hierarchies=H, k=2, insensitive=["x", "Fk"], engine=engine)
    frame.write_parquet(tmp_path / "t.parquet")  # a file the engine reads itself: from its footer
    with pytest.raises(InvalidParameterError, match=want.format(r" of '.*t\.parquet'", "DuckDB")):
        relation = duckdb.connect().sql(f"FROM '{tmp_path / 't.parquet'}'")  # DuckDB reads 'Fk' as 'Fk_1'
        pa.anonymize(relation, hierarchies=H, k=2, insensitive=["x", "Fk"], engine="duckdb")
    frame.write_csv(tmp_path / "t.csv")
    job = tmp_path / "job.toml"
    job.write_text('input = "t.csv"\noutput = "out.parquet"\nk = 2\nmethod = "mondrian"\nqids = { fk = {} }\n')
    assert cli.main(["anonymize", str(job), "--engine", "duckdb"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "columns 'fk' and 'Fk' of" in err and "differ only in case: DuckDB's" in err


def test_a_source_footer_is_read_from_the_file_named_even_with_brackets(tmp_path: Any) -> None:
    """The case-only name check read `p[1].parquet`'s footer as a pattern: it read a decoy `p1.parquet` (or nothing)
    and let Spark fail with a raw error (review13 2)."""
    from polars_anon.pipeline.capabilities import consult_source_dtypes

    pl.DataFrame({"id": [1], "Id": [2]}).write_parquet(tmp_path / "p[1].parquet")
    pl.DataFrame({"id": [1]}).write_parquet(tmp_path / "p1.parquet")  # what the pattern p[1] matches
    with pytest.raises(InvalidParameterError, match="columns 'id' and 'Id' of .*p\\[1\\].parquet' differ only in case"):
        consult_source_dtypes("spark", [str(tmp_path / "p[1].parquet")])


def test_a_parquet_source_naming_a_column_twice_is_refused_whatever_its_name_form(tmp_path: Any) -> None:
    """mend17: DuckDB read a file naming 'sex' twice with the copy as 'sex_1' (published under that name), by a path, a
    ``file://`` URI or a pattern alike; and the case check ('sex' and 'Sex') skipped a ``file://`` URI (then 'Sex_1'
    was named missing). Every local form now goes through the one footer check."""
    import pyarrow
    import pyarrow.parquet

    H = {"sex": pa.Hierarchy.suppression(["F", "M"])}
    for names, refused in (
        (["sex", "x", "sex"], r"names 'sex' more than once"),
        (["sex", "x", "Sex"], r"columns 'sex' and 'Sex' of '.*' differ only in case"),
    ):
        folder = tmp_path / names[2]
        folder.mkdir()
        columns = [pyarrow.array(["F", "M"] * 2), pyarrow.array(["a", "b"] * 2), pyarrow.array(range(4))]
        pyarrow.parquet.write_table(pyarrow.table(columns, names=names), folder / "t.parquet")
        for source in (folder / "t.parquet", f"file://{folder}/t.parquet", f"{folder}/*.parquet"):
            with pytest.raises(InvalidParameterError, match=refused):
                pad.anonymize(str(source), hierarchies=H, k=2, insensitive=["x", f"{names[2]}_1"])
