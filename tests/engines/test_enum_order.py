"""An Enum sensitive attribute keeps its order on every engine (ordered t-closeness measures in it).

Six rows, (30, low) x3, (31, mid), (31, high) x2, the sensitive column an Enum low < mid < high: each age's EMD to
the table is 0.4167 in the Enum's order and 0.25 in text order (high < low < mid). With t = 0.333 the ages must be
generalized to one class (level 1). DuckDB read a Polars Enum as text and a DuckDB ENUM as a Polars Categorical,
Spark as text: both sorted the values as text, published level 0 and reported "satisfied, max 0.25". The order now
comes from the input's schema (a Polars Enum, a DuckDB ENUM, an Enum a Parquet file holds), and the rows reach
Polars as that Enum again; DuckDB and Spark write the column as text (docs/guides/engines.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pad
from polars_anon.cli import main

LEVELS = pl.Enum(["low", "mid", "high"])
ROWS = pl.DataFrame(
    {"age": [30, 30, 30, 31, 31, 31], "s": ["low", "low", "low", "mid", "high", "high"]},
    schema={"age": pl.Int64, "s": LEVELS},
)
H = {"age": pa.Hierarchy.intervals(pl.Series([30, 31]), [2])}
ORDERED = [pa.TCloseness("s", t=0.333, distance="ordered")]


def _published(result: Any) -> tuple[int, bool, float, pl.DataType]:
    """The age's level, the model's verdict and worst measure, and the published column's dtype."""
    out = result.collect()
    status = result.report["privacy"][0]
    return result.report["generalization"]["age"]["level"], status["satisfied"], status["max_measure"], out["s"].dtype


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_an_enum_frame_keeps_its_order(engine: str) -> None:
    result = pa.anonymize(ROWS, hierarchies=H, k=1, privacy=ORDERED, engine=engine)
    assert _published(result) == (1, True, 0.0, LEVELS)


def test_a_duckdb_enum_table_keeps_its_order() -> None:
    """A native ENUM through polars_anon.duckdb.anonymize: measured as the anon_t_closeness macro measures it."""
    con = duckdb.connect()
    con.sql("CREATE TYPE lvl AS ENUM ('low', 'mid', 'high')")
    con.sql("CREATE TABLE t (age BIGINT, s lvl)")
    con.sql("INSERT INTO t VALUES (30,'low'),(30,'low'),(30,'low'),(31,'mid'),(31,'high'),(31,'high')")
    result = pad.anonymize("t", connection=con, hierarchies=H, k=1, privacy=ORDERED)
    assert _published(result) == (1, True, 0.0, LEVELS)
    pad.register(con)
    macro = con.sql(
        "SELECT round(max(measure), 4) FROM anon_t_closeness('t', ['age'], 's', t := 0.333, distance := 'ordered')"
    )
    assert macro.fetchall() == [(0.4167,)]  # level 0 fails, as the road judged


def test_a_duckdb_job_and_its_check_keep_the_order(tmp_path: Path) -> None:
    """A job reading a Parquet file Polars wrote (the Enum in its footer) on DuckDB: level 1; the written column is
    text, and `check --reference` the input measures in the input's order."""
    ROWS.write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 1\nengine = "duckdb"\n[qids.age]\n'
        'hierarchy = { intervals = [2] }\n[[privacy]]\nmodel = "t-closeness"\nattribute = "s"\nt = 0.333\n'
        'distance = "ordered"\n'
    )
    assert main(["anonymize", str(job), "-q"]) == 0
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert report["generalization"]["age"]["level"] == 1
    assert pl.read_parquet(tmp_path / "out.parquet").schema["s"] == pl.String
    level0 = pl.DataFrame({"age": ["30"] * 3 + ["31"] * 3, "s": ROWS["s"].cast(pl.String)})
    level0.write_parquet(tmp_path / "level0.parquet")
    model = '{model = "t-closeness", attribute = "s", t = 0.333, distance = "ordered"}'
    args = ["check", str(tmp_path / "level0.parquet"), "--qids", "age", "--k", "1", "--model", model, "-q"]
    assert main([*args, "--reference", str(tmp_path / "in.parquet")]) == 1  # 0.4167 > 0.333 in the input's order


def test_spark_keeps_the_order_of_an_enum_frame(spark: Any) -> None:
    result = pa.anonymize(ROWS, hierarchies=H, k=1, privacy=ORDERED, engine="spark")
    assert _published(result) == (1, True, 0.0, LEVELS)


GRADES = pl.DataFrame({"g": ["low", "mid", "mid", "high"], "n": [1, 2, 3, 4]}, schema={"g": LEVELS, "n": pl.Int64})
"""mend46: Mondrian on an Enum qid without a hierarchy cut it in text order (high < low < mid): at k = 2 it cut
{high, low} | {mid}, classes no ordinal reading makes. In the Enum's order (low < mid < high) no cut leaves 2 rows on
both sides of one point, so the four rows form one class."""
ONE_CLASS = ["{low,mid,high}"] * 4


@pytest.mark.parametrize(("engine", "driver_tuples"), [("polars", None), ("duckdb", None), ("duckdb", 1)])
def test_mondrian_cuts_an_enum_qid_in_its_order(engine: str, driver_tuples: int | None) -> None:
    """On the driver, and beyond it on DuckDB (driver_tuples = 1: the planner's rounds in SQL)."""
    asked: dict[str, Any] = {"driver_tuples": driver_tuples} if driver_tuples is not None else {}
    result = pa.anonymize(
        GRADES, qids=["g"], hierarchies={}, k=2, method="mondrian", insensitive=["n"], engine=engine, **asked
    )
    assert result.collect()["g"].to_list() == ONE_CLASS
    text = pa.anonymize(
        GRADES, qids=["g"], hierarchies={}, k=2, method="mondrian", insensitive=["n"], order="alphabetical"
    )
    assert text.collect()["g"].to_list() == ["{high,low}", "mid", "mid", "{high,low}"]  # asked for: as before


def test_spark_mondrian_cuts_an_enum_qid_in_its_order(spark: Any) -> None:
    for limit in (None, 1):
        asked: dict[str, Any] = {} if limit is None else {"driver_tuples": limit}
        result = pa.anonymize(
            GRADES, qids=["g"], hierarchies={}, k=2, method="mondrian", insensitive=["n"], engine="spark", **asked
        )
        assert result.collect()["g"].to_list() == ONE_CLASS


TIED = pl.DataFrame({"g": ["low", "high", "mid", "mid"], "n": [1, 2, 3, 4]}, schema={"g": LEVELS, "n": pl.Int64})
"""mend47: MDAV codes a categorical qid without a hierarchy in text order (high < low < mid), and a cluster's mode
ties go to the lower code, so the cluster {low, high} published 'high'. In the Enum's order (low < mid < high) it
publishes 'low'; the same values as String keep text order."""
BY_ENUM, BY_TEXT = ["low", "low", "mid", "mid"], ["high", "high", "mid", "mid"]


def _mdav(frame: pl.DataFrame, engine: str) -> list[str]:
    result = pa.anonymize(frame, qids=["g"], hierarchies={}, k=2, method="mdav", insensitive=["n"], engine=engine)
    return result.collect()["g"].cast(pl.String).to_list()


def test_mdav_ties_an_enum_qid_in_its_order() -> None:
    assert _mdav(TIED, "polars") == BY_ENUM
    assert _mdav(TIED.with_columns(pl.col("g").cast(pl.String)), "polars") == BY_TEXT  # only an Enum changes


def test_spark_mdav_ties_an_enum_qid_in_its_order(spark: Any) -> None:
    """On Spark the planner runs MDAV beyond the driver, coding the qid as the driver's run does."""
    assert _mdav(TIED, "spark") == BY_ENUM
    assert _mdav(TIED.with_columns(pl.col("g").cast(pl.String)), "spark") == BY_TEXT


NUMBERED = pl.Enum(["10", "9", "100", "5"])
SIZES = pl.DataFrame(
    {"g": ["10", "10", "9", "9", "100", "100", "5", "5"], "n": range(8)}, schema={"g": NUMBERED, "n": pl.Int64}
)
"""mend52: an Enum whose categories read as numbers. MDAV took it for a numeric qid and averaged it (k = 4: 55.0 and
7.0, no category of the Enum, published as floats), where Mondrian orders it as declared. Both now read it in the
Enum's order (10 < 9 < 100 < 5): the clusters {10, 9} and {100, 5}; MDAV publishes each one's mode (the tie to the
lower code), Mondrian the sets; `numeric=["g"]` still asks MDAV for means."""


@pytest.mark.parametrize("engine", ["polars", "spark"])
def test_mdav_keeps_an_enum_of_numbers_categorical(engine: str, request: pytest.FixtureRequest) -> None:
    if engine == "spark":
        request.getfixturevalue("spark")
    result = pa.anonymize(SIZES, qids=["g"], hierarchies={}, k=4, method="mdav", insensitive=["n"], engine=engine)
    out = result.collect()["g"]
    assert out.cast(pl.String).to_list() == ["10"] * 4 + ["100"] * 4  # before: [55.0, 55.0, 7.0, 7.0, ...]
    if engine == "polars":
        means = pa.anonymize(SIZES, qids=["g"], hierarchies={}, k=4, method="mdav", insensitive=["n"], numeric=["g"])
        assert means.collect()["g"].to_list() == [55.0, 55.0, 7.0, 7.0, 55.0, 55.0, 7.0, 7.0]  # asked for: as before


def test_mondrian_cuts_an_enum_of_numbers_in_its_order() -> None:
    result = pa.anonymize(SIZES, qids=["g"], hierarchies={}, k=4, method="mondrian", insensitive=["n"])
    assert result.collect()["g"].to_list() == ["{10,9}"] * 4 + ["{100,5}"] * 4  # not 5 < 9 < 10 < 100


def test_a_task_carries_every_field_its_request_asks() -> None:
    """review35 #4: the Task was built field by field in two places (the road and Spark's MDAV planner; mend52 had to
    add `orders` to both): Request.task is now the one constructor, carrying the request's fields and the road's."""
    from polars_anon.request import check_request

    schema = pl.Schema({"age": pl.Int64, "s": LEVELS, "g": pl.String})
    hierarchies = {**H, "s": pa.Hierarchy.suppression(["low", "mid", "high"])}
    request = check_request(schema, hierarchies=hierarchies, k=2, sensitive="g", seed=5, metric="loss")
    assert request.orders == {"s": ("low", "mid", "high")}
    aggregates = pl.DataFrame({"age": ["30", "31"], "s": ["low", "mid"], "size": [3, 3]})
    aggregates = aggregates.with_columns(pl.col("size").cast(pl.UInt32))
    task = request.task(aggregates, codes=None)
    asked = (request.qids, request.hierarchies, request.k, request.seed, request.metric, request.sensitive)
    assert (task.qids, task.hierarchies, task.k, task.seed, task.metric, task.sensitive) == asked
    assert task.orders == request.orders and task.aggregates is aggregates and task.n_rows == 6
