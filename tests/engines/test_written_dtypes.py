"""The written Parquet type of each input dtype on every engine (docs/guides/engines.md, "Column types on each
engine"): the same rows everywhere; a dtype Parquet has no type for is written as its engine can, and a dtype an
engine cannot carry or write readably is refused by the capability table, naming the column."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
from polars_anon.errors import InvalidParameterError

SEX = {"sex": pa.Hierarchy.suppression(["F", "M"])}
FRAME = pl.DataFrame(
    {
        "sex": ["F", "M"] * 2,
        "cat": pl.Series(["a", "b"] * 2, dtype=pl.Categorical),
        "enum": pl.Series(["x", "y"] * 2, dtype=pl.Enum(["x", "y", "z"])),
        "date": [datetime.date(2020, 1, 1 + i % 2) for i in range(4)],
        "dec": pl.Series([decimal.Decimal("1.25"), decimal.Decimal("2.50")] * 2, dtype=pl.Decimal(10, 2)),
        "u8": pl.Series([1, 2] * 2, dtype=pl.UInt8),
        "u64": pl.Series([1, 2] * 2, dtype=pl.UInt64),
        "ms": pl.Series([datetime.datetime(2020, 1, 1, i % 2) for i in range(4)], dtype=pl.Datetime("ms")),
        "time": [datetime.time(1, i % 2) for i in range(4)],
        "zoned": pl.Series([datetime.datetime(2020, 1, 1, 1)] * 4).dt.replace_time_zone("Europe/Paris"),
        "null": [None] * 4,
        "arr": pl.Series([[1, 2], [3, 4]] * 2, dtype=pl.Array(pl.Int64, 2)),
    }
)
# Parquet has no categorical type: Polars keeps Categorical/Enum in the Arrow schema it stores beside the file,
# DuckDB writes the strings, and a zoned Datetime as the instant in UTC (documented); every other type as given
# a Null column as Int32 and an Array as a List (Parquet has neither: DuckDB stores no Arrow schema beside the file)
DUCKDB = dict(FRAME.schema) | {
    "cat": pl.String,
    "enum": pl.String,
    "zoned": pl.Datetime("us", "UTC"),
    "null": pl.Int32,
    "arr": pl.List(pl.Int64),
}


def test_polars_and_duckdb_write_the_documented_types(tmp_path: Any) -> None:
    insensitive = [c for c in FRAME.columns if c != "sex"]
    written = {}
    for engine in ("polars", "duckdb"):
        out = tmp_path / f"{engine}.parquet"
        pa.anonymize(FRAME, hierarchies=SEX, k=2, insensitive=insensitive, engine=engine).sink_parquet(
            out, report_html=False
        )
        written[engine] = pl.read_parquet(out)
    assert dict(written["polars"].schema) == dict(FRAME.schema)
    assert dict(written["duckdb"].schema) == DUCKDB
    assert written["duckdb"].equals(written["polars"].cast(DUCKDB))  # the same rows


@pytest.mark.parametrize(
    "nulls",
    [pl.Series([None] * 4), pl.Series([[None]] * 4), pl.Series([{"a": None, "b": 1}] * 4)],
    ids=["null", "list", "struct"],
)
def test_a_column_of_nulls_on_spark_is_refused_by_name(spark: Any, nulls: pl.Series) -> None:
    """Spark wrote a Null column (review24: or one nested in a list or a struct, or a Spark DataFrame's own NullType)
    with Parquet's UNKNOWN annotation: the run passed (Spark reads its file back), and Polars could not read the
    published file ("Cannot annotate Unknown from Boolean fields"). A dropped one is never written: published."""
    from pyspark.sql import functions as F

    import polars_anon.spark as pas

    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "n": nulls})
    with pytest.raises(InvalidParameterError, match=r"column 'n' has dtype .*Null.*: Spark writes .* Polars cannot"):
        pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="n", engine="spark")
    if nulls.dtype == pl.Null:  # one Spark run for the dropped column, one DataFrame of Spark's own
        assert pa.anonymize(frame, hierarchies=SEX, k=2, drop="n", engine="spark").collect().columns == ["sex"]
        sdf = spark.createDataFrame([("F",), ("M",)] * 2, ["sex"])
        for column, dtype in ((F.lit(None), "Null"), (F.create_map(F.lit("a"), F.lit(None)), "Map")):  # review25: map
            with pytest.raises(InvalidParameterError, match=rf"column 'n' has dtype {dtype}.*: Spark writes"):
                pas.anonymize(sdf.withColumn("n", column), hierarchies=SEX, k=2, insensitive="n")


def test_a_duration_on_duckdb_is_refused_by_name() -> None:
    """mend7: DuckDB held a Duration as an INTERVAL, which Polars cannot import: collect() ended in Polars' raw
    'could not import from month_day_nano_interval', and a written file could not be read back by Polars. A qid of
    that type is refused by the request first, as on every engine (the catalogue)."""
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "d": [datetime.timedelta(seconds=1)] * 4})
    with pytest.raises(InvalidParameterError, match=r"column 'd' has dtype Duration.*DuckDB .* INTERVAL"):
        pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="d", engine="duckdb")
    con = duckdb.connect()  # a relation's own INTERVAL too
    relation = con.sql("SELECT * FROM (VALUES ('F', INTERVAL 1 DAY), ('M', INTERVAL 2 DAY)) t(sex, d), range(2)")
    with pytest.raises(InvalidParameterError, match=r"column 'd' has dtype Duration.*DuckDB .* INTERVAL"):
        pad.anonymize(relation.select("sex", "d"), connection=con, hierarchies=SEX, k=2, insensitive="d")


def test_a_dropped_duration_on_duckdb_is_not_refused() -> None:
    """review12 8: DuckDB's Duration refusal judged every column, a dropped one too (never written): Polars and
    DuckDB publish the same rows without it (by hand: each sex twice, k = 2 holds)."""
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "d": [datetime.timedelta(seconds=1)] * 4})
    for engine in ("polars", "duckdb"):
        out = pa.anonymize(frame, hierarchies=SEX, k=2, drop="d", engine=engine).collect()
        assert out.columns == ["sex"] and sorted(out["sex"].to_list()) == ["F", "F", "M", "M"]


@pytest.mark.parametrize(
    ("sql", "dtype", "big"),
    [("HUGEINT", "Int128", "170141183460469231731687303715884105000"), ("UHUGEINT", "UInt128", str(2**128 - 1000))],
)
def test_a_128_bit_integer_of_a_duckdb_relation_is_refused_by_name(sql: str, dtype: str, big: str) -> None:
    """mend17: a HUGEINT qid past Decimal(38, 0) ended in DuckDB's raw 'Conversion Error', a UHUGEINT one wrapped
    ('-456' published, refused as not a leaf), and as an insensitive column the first was written as a DOUBLE (two
    values one apart published alike) and the second collected as Decimal('-456'). Refused in one line; dropped, not."""
    con = duckdb.connect()
    relation = con.sql(
        f"SELECT ['F', 'M'][i % 2 + 1] AS sex, '{big}'::{sql} + (i // 2)::{sql} AS big FROM range(4) t(i)"
    )
    both = SEX | {"big": pa.Hierarchy.suppression([str(int(big) + i) for i in range(2)])}
    for hierarchies, insensitive in ((both, []), (SEX, ["big"])):
        with pytest.raises(InvalidParameterError, match=rf"^column 'big' has dtype {dtype}: DuckDB's {sql} \(a 128"):
            pad.anonymize(relation, connection=con, hierarchies=hierarchies, k=2, insensitive=insensitive)
    out = pad.anonymize(relation, connection=con, hierarchies=SEX, k=2, drop="big").collect()
    assert sorted(out["sex"].to_list()) == ["F", "F", "M", "M"]


def test_a_time_on_spark_is_refused_by_name(spark: Any) -> None:
    """mend7: Spark has no time-of-day type: a Time column ended in Spark's raw UNSUPPORTED_TIME_TYPE."""
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "t": [datetime.time(1)] * 4})
    with pytest.raises(InvalidParameterError, match=r"column 't' has dtype Time: Spark has no time-of-day type"):
        pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="t", engine="spark")


def test_a_uint64_above_spark_s_largest_integer_is_refused_only_where_the_job_reads_it(spark: Any) -> None:
    """mend58: every UInt64 column of a frame handed to Spark was checked when Spark received it, before the request
    was read: a dropped id column holding 2**64 - 1 was refused (failing before). Dropped, it is not read: the job
    publishes; published (insensitive), it is refused naming the column and the value."""
    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "id": pl.Series([1, 2, 3, 2**64 - 1], dtype=pl.UInt64)})
    out = pa.anonymize(frame, hierarchies=SEX, k=2, drop="id", engine="spark").collect()
    assert out.equals(pa.anonymize(frame, hierarchies=SEX, k=2, drop="id").collect())
    with pytest.raises(InvalidParameterError, match=r"^column 'id' holds the UInt64 value 18446744073709551615, above"):
        pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="id", engine="spark")


def test_a_uint64_nested_in_a_list_or_struct_is_checked_as_a_flat_one_on_spark(spark: Any) -> None:
    """mend59: an unsigned integer inside a List, Array or Struct column reached Spark's Arrow conversion unwidened
    (PySparkTypeError 'uint64 is not supported in conversion to Arrow', whatever the values), and the check of
    2**63 - 1 looked at flat columns only. Nested items are widened as flat columns are (published as Polars
    publishes them, Int64 items); a value above 2**63 - 1 inside a column the job reads is refused naming it; a
    dropped one is not read."""
    big = 2**64 - 1
    nested = {
        "list": pl.Series([[1], [2], [3], [big]], dtype=pl.List(pl.UInt64)),
        "array": pl.Series([[1], [2], [3], [big]], dtype=pl.Array(pl.UInt64, 1)),
        "struct": pl.Series([{"a": i, "b": "x"} for i in (1, 2, 3, big)], dtype=pl.Struct({"a": pl.UInt64, "b": str})),
    }
    for name, values in nested.items():
        frame = pl.DataFrame({"sex": ["F", "M"] * 2, "id": values})
        with pytest.raises(InvalidParameterError, match=rf"^column 'id' holds the UInt64 value {big}, above"):
            pa.anonymize(frame, hierarchies=SEX, k=2, insensitive="id", engine="spark")
        out = pa.anonymize(frame, hierarchies=SEX, k=2, drop="id", engine="spark").collect()
        assert out.equals(pa.anonymize(frame, hierarchies=SEX, k=2, drop="id").collect()), name
    small = pl.DataFrame(
        {"sex": ["F", "M"] * 2, "id": pl.Series([[1], [2], [2**32 - 1], []], dtype=pl.List(pl.UInt32))}
    )
    out = pa.anonymize(small, hierarchies=SEX, k=2, insensitive="id", engine="spark").collect()
    assert out["id"].to_list() == pa.anonymize(small, hierarchies=SEX, k=2, insensitive="id").collect()["id"].to_list()


def test_a_naive_datetime_on_spark_keeps_its_wall_clock_time(spark: Any) -> None:
    """mend7: Spark read a Polars frame's naive Datetime (sent as Arrow) as a time in its session's zone: a naive
    qid was labelled '2020-01-01 10:00:00.000000+00:00' (refused as not in its hierarchy, where Polars published it),
    and on a 'Europe/Paris' session an insensitive one was published an hour early. Sent as TIMESTAMP_NTZ now: the
    rows Spark hands back (the aggregates labelled, the published table) are the frame's."""
    from polars_anon.engines.spark import SparkEngine

    frame = pl.DataFrame({"ts": [datetime.datetime(2020, 1, 1, 10, 2, 3)], "ms": FRAME["ms"][:1]})
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
        engine = SparkEngine(spark)
        back = engine.to_polars(engine.table(frame))
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    assert back.equals(frame.cast({"ms": pl.Datetime("us")}))  # Spark's timestamps are in microseconds


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_a_parquet_datetime_keeps_its_unit_on_every_road(unit: str, tmp_path: Any) -> None:
    """mend33: a DuckDB job wrote an insensitive Datetime('ms') column of its Parquet input as microseconds (DuckDB
    reads milliseconds as microseconds), where the Polars job and pa.anonymize(engine='duckdb').sink_parquet kept
    'ms'. The Arrow schema of every road's file names the input's unit."""
    from polars_anon.job import Job, run_job

    at = [datetime.datetime(2020, 1, 1, i % 3, 0, 0, 123000) for i in range(8)]
    data = tmp_path / "in.parquet"
    pl.DataFrame({"sex": ["F", "M"] * 4, "at": pl.Series(at, dtype=pl.Datetime(unit))}).write_parquet(data)  # type: ignore[arg-type]
    keys = {"input": str(data), "k": 2, "report_html": False, "qids": {"sex": {"hierarchy": "suppress"}}}
    outputs = []
    for engine in ("polars", "duckdb"):
        outputs.append(tmp_path / f"job_{engine}.parquet")
        run_job(Job.from_dict({**keys, "engine": engine, "insensitive": ["at"], "output": str(outputs[-1])}))
        outputs.append(tmp_path / f"api_{engine}.parquet")
        result = pa.anonymize(pl.scan_parquet(data), hierarchies=SEX, k=2, insensitive="at", engine=engine)
        result.sink_parquet(outputs[-1], report_html=False)
    outputs.append(tmp_path / "path_duckdb.parquet")  # the file's name, read by DuckDB itself (it said us there too)
    result = pa.anonymize(str(data), hierarchies=SEX, k=2, insensitive="at", engine="duckdb")
    assert result.collect()["at"].dtype == pl.Datetime(unit)  # type: ignore[arg-type]
    result.sink_parquet(outputs[-1], report_html=False)
    types = {path.name: str(pq.read_schema(path).field("at").type) for path in outputs}
    assert types == dict.fromkeys(types, f"timestamp[{unit}]")
    assert all(pl.read_parquet(path)["at"].sort().to_list() == sorted(at) for path in outputs)  # the same values


def test_every_road_writes_every_column_nullable(tmp_path: Any) -> None:
    """mend40: DuckDB's Parquet writer marked a column ``required`` (not null) when its statistics said it held no
    null: a job's insensitive and sensitive columns of a Parquet input without nulls, published untouched, were
    ``int64 not null`` and ``string not null`` on DuckDB, ``int64`` and ``string`` on Polars (``pq.read_schema``),
    for the same job. Every column is nullable on both engines, a job's file and a sink's alike."""
    from polars_anon.job import Job, run_job

    data = tmp_path / "in.parquet"
    FRAME.select("sex", "u8", "dec", "date", "ms", "time", "zoned", party=pl.Series(["a", "b", "c", "a"])).with_columns(
        id=pl.int_range(4, dtype=pl.Int64)
    ).write_parquet(data)
    insensitive = ["id", "u8", "dec", "date", "ms", "time", "zoned"]
    keys = {"input": str(data), "k": 2, "report_html": False, "qids": {"sex": {"hierarchy": "suppress"}}}
    nullable = {}
    for engine in ("polars", "duckdb"):
        out = tmp_path / f"job_{engine}.parquet"
        job = {**keys, "engine": engine, "insensitive": insensitive, "sensitive": "party", "output": str(out)}
        run_job(Job.from_dict(job))
        sink = tmp_path / f"sink_{engine}.parquet"
        pa.anonymize(
            pl.scan_parquet(data), hierarchies=SEX, k=2, insensitive=insensitive, sensitive="party", engine=engine
        ).sink_parquet(sink, report_html=False)
        for path in (out, sink):
            nullable[path.name] = {f.name: f.nullable for f in pq.read_schema(path)}
    columns = ["sex", "u8", "dec", "date", "ms", "time", "zoned", "party", "id"]
    assert nullable == dict.fromkeys(nullable, dict.fromkeys(columns, True))
