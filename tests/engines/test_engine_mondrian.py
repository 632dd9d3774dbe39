"""Mondrian beyond ``driver_tuples``: the rounds as engine SQL, the same rows as the driver's Mondrian (issue 18).

``driver_tuples=1000`` forces the distributed route on Adult (30,000 rows, 16,000 distinct
tuples) and on a 5,000-row register (4,794). The reference is the Polars road (the driver's
:func:`polars_anon.algorithms.mondrian.partition`); rows are compared in input order on DuckDB,
after sorting by a row id on Spark; the report key by key, but for the metrics the rounds leave
out (listed in ``details.distributed``), timings, paths and the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon import duckdb as pad
from polars_anon.demo import demo_hierarchy_specs, voter_register
from polars_anon.engines.duckdb import DuckDBEngine
from polars_anon.errors import InvalidParameterError
from polars_anon.job import build_hierarchies
from polars_anon.pipeline.road import run

LEFT_OUT = {"metrics", "metrics_normalized", "metric_units"}
VARYING = {"seconds", "write_seconds", "output", "engine", "phases", "details", "loss", "loss_by_qid"}


def _same_report(got: dict[str, Any], want: dict[str, Any], limit: int) -> None:
    """Every figure of the driver road, but the metrics the rounds leave out (and list, when the driver road has them);
    losses to 1e-12."""
    assert got["engine"] in ("duckdb", "spark") and want["engine"] == "polars"
    distributed = got["details"].pop("distributed")
    assert distributed["driver_tuples"] == limit and set(distributed["left_out"]) == (
        LEFT_OUT if want["metrics"] else set()
    )
    assert set(distributed["metrics"]) == set(want["metrics"]) and all(got[key] == {} for key in LEFT_OUT)
    assert got["details"] == want["details"]  # rounds and partitions: the same cuts
    assert got["loss"] == pytest.approx(want["loss"], abs=1e-12)
    assert got["loss_by_qid"] == pytest.approx(want["loss_by_qid"], abs=1e-12)
    assert got.get("method_advice") is None  # no aggregates on the driver to rerun other methods on (advice.py)
    for key in sorted(set(got) | set(want) - VARYING - LEFT_OUT - {"method_advice"}):
        if key not in VARYING | LEFT_OUT:
            assert got.get(key) == want.get(key), key
    assert got["n_classes"] > 1 and got["min_class_size"] >= got["k"]


@pytest.mark.parametrize(
    "case",
    ["hierarchies", "ranges, sets, an order and nulls"],
)
def test_adult_on_duckdb_publishes_the_driver_rows(
    case: str, adult_rows: pl.DataFrame, adult_hierarchies: dict
) -> None:
    """Adult, k=10: every qid with its hierarchy; then age as numeric ranges and education as sets (no hierarchy),
    occupation in alphabetical order (its hierarchy labels the classes from their members, not their bounds) and
    a few null workclasses published as the root (null="suppress")."""
    rows, hierarchies, options = adult_rows, dict(adult_hierarchies), {}
    if case != "hierarchies":
        del hierarchies["age"], hierarchies["education"]
        rows = rows.with_columns(
            pl.when(pl.col("rid") % 997 == 0).then(None).otherwise(pl.col("workclass")).alias("workclass")
        )
        options = {"qids": list(adult_hierarchies), "order": {"occupation": "alphabetical"}, "null": "suppress"}
    want = pa.anonymize(rows, hierarchies=hierarchies, k=10, method="mondrian", insensitive="rid", **options)
    want_rows = want.collect()
    got = pad.anonymize(
        rows,
        connection=duckdb.connect(),
        hierarchies=hierarchies,
        k=10,
        method="mondrian",
        insensitive="rid",
        driver_tuples=1000,
        **options,
    )
    assert got.collect().equals(want_rows)  # DuckDB keeps the input order
    _same_report(got.report, want.report, 1000)
    if case != "hierarchies":
        assert (
            got.report["null_rows"] == 31
            and want_rows["age"].str.starts_with("[").any()
            and want_rows["education"].str.starts_with("{").any()
        )


@pytest.fixture(scope="module")
def register() -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    """A generated 5,000-row voter register with a row id, and the demo's hierarchies: 4,794 distinct tuples, above
    ``driver_tuples=1000``; k=50 cuts it in 7 rounds into 64 partitions (20,000 rows: 9 rounds, 271 partitions, 101
    Spark jobs where these take 85, at twice the JVM's CPU)."""
    df = voter_register(5_000, seed=5).with_row_index("rid").with_columns(pl.col("rid").cast(pl.Int64))
    return df, build_hierarchies(df.lazy(), demo_hierarchy_specs())


@pytest.fixture(scope="module")
def register_asked(register: tuple) -> dict[str, Any]:
    """What the register tests ask: k=50, Mondrian, the row id insensitive."""
    return {
        "hierarchies": register[1],
        "k": 50,
        "method": "mondrian",
        "insensitive": "rid",
        "drop": ["voter_id", "name"],
    }


@pytest.fixture(scope="module")
def register_driver(register: tuple, register_asked: dict[str, Any]) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The driver's Mondrian of the register (the Polars road): its rows and report, once for both engines."""
    want = pa.anonymize(register[0], **register_asked)
    return want.collect(), want.report


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_register_on_each_engine_publishes_the_driver_rows(
    engine: str,
    register: tuple,
    register_asked: dict[str, Any],
    register_driver: tuple,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    """The register, k=50. DuckDB: written by its writer, re-read and verified by its group-by, then read back;
    Spark (slower per query): collected, verified by Polars (the Spark writer is the agreement tests')."""
    df, asked = register[0], register_asked
    want_rows, want_report = register_driver
    if engine == "spark":
        spark = request.getfixturevalue("spark")
        got = pa.anonymize(spark.createDataFrame(df.to_arrow()), engine="spark", driver_tuples=1000, **asked)
        assert got.collect().equals(want_rows)  # in input order, as every engine publishes
        report = got.report
    else:
        got = pa.anonymize(df, engine="duckdb", driver_tuples=1000, **asked)
        report = got.sink_parquet(tmp_path / "out.parquet", report_html=False)
        assert pl.read_parquet(tmp_path / "out.parquet").equals(want_rows)
        assert json.loads((tmp_path / "out.report.json").read_text())["n_classes"] == report["n_classes"]
    _same_report(report, want_report, 1000)


def test_below_the_limit_the_road_groups_once(adult_rows: pl.DataFrame, adult_hierarchies: dict) -> None:
    """The limited group-by that measures the aggregates is the road's own: one qid group-by, then the usual road."""
    engine = DuckDBEngine(duckdb.connect())
    calls: list[tuple[list[str], int | None]] = []
    group = engine.counts._group
    engine.counts._group = lambda table, keys, limit: calls.append((keys, limit)) or group(table, keys, limit)  # type: ignore[method-assign]
    r = run(
        engine,
        adult_rows,
        hierarchies=adult_hierarchies,
        k=10,
        method="mondrian",
        insensitive="rid",
        driver_tuples=20_000,
    )
    assert calls == [(list(adult_hierarchies), 20_001)] and "distributed" not in r.report["details"]
    assert r.collect().equals(
        pa.anonymize(adult_rows, hierarchies=adult_hierarchies, k=10, method="mondrian", insensitive="rid").collect()
    )


def test_a_round_counts_every_attribute_in_one_group_by(register: tuple, register_asked: dict[str, Any]) -> None:
    """ci12: a round's statistics grouped the open tuples once per qid (a UNION ALL of group-bys: on Spark a shuffle,
    and with adaptive execution a job, each); now one group-by over the qids' ranks stacked, the same rows."""
    con = duckdb.connect()
    engine = DuckDBEngine(con)
    plans: list[str] = []
    sql = engine.sql

    def spied(query: str) -> Any:  # each round's statistics query: its plan, while its tables exist
        if "OVER (PARTITION BY pid, dim)" in query:
            plans.append("\n".join(str(row[1]) for row in con.sql(f"EXPLAIN {query}").fetchall()))
        return sql(query)

    engine.sql = spied  # type: ignore[method-assign]
    df = register[0].head(1_000)
    got = run(engine, df, driver_tuples=100, **register_asked)
    assert len(plans) == got.report["details"]["rounds"] + 1 >= 2
    assert all(plan.upper().replace("_", " ").count("GROUP BY") == 1 for plan in plans), plans[0]
    assert got.collect().equals(pa.anonymize(df, **register_asked).collect())


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        (
            {"method": "fulldomain"},
            (
                "the class aggregates have more than 1,000 distinct qid tuples (driver_tuples); method "
                "'fulldomain' runs on "
                "the driver: raise driver_tuples if the driver can hold them, or use method 'mondrian'"
            ),
        ),
        (
            {"method": "mondrian", "mode": "relaxed"},
            "mondrian mode 'relaxed' is not supported by the engine rounds (beyond driver_tuples)",
        ),
        (
            {"method": "mondrian", "privacy": [pa.LDiversity("salary-class", 2)]},
            "privacy models ['l-diversity'] are not supported by mondrian's engine rounds",
        ),
        ({"method": "mondrian", "driver_tuples": 0}, "driver_tuples must be an integer >= 1, got 0"),
        ({"method": "mondrian", "driver_tuples": True}, "driver_tuples must be an integer >= 1, got True"),
        (
            {"method": "mondrian", "engine": "polars", "driver_tuples": 1000},
            "engine 'polars' holds them in this process",
        ),
    ],
)
def test_refusals(asked: dict, words: str, adult_rows: pl.DataFrame, adult_hierarchies: dict) -> None:
    asked = {"engine": "duckdb", "driver_tuples": 1000, **asked}
    with pytest.raises(InvalidParameterError) as caught:
        pa.anonymize(adult_rows, hierarchies=adult_hierarchies, k=10, insensitive="rid", **asked)
    assert words in str(caught.value)


JOB = """input = "people.parquet"
output = "out/anon.parquet"
k = 2
insensitive = "id"
{extra}
[qids.age]
{age}
[qids.sex]
hierarchy = "suppress"
"""


def _job(path: Path, extra: str, age: str = "") -> Path:
    path.write_text(JOB.format(extra=extra, age=age))
    return path


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """40 people, 22 distinct (age, sex) tuples."""
    ages = [30 + (i * 7) % 11 for i in range(40)]
    pl.DataFrame({"id": list(range(40)), "age": ages, "sex": ["F", "M"] * 20}).write_parquet(
        tmp_path / "people.parquet"
    )
    return tmp_path / "job.toml"


@pytest.mark.parametrize(
    ("extra", "flags", "words"),
    [
        (
            'method = "mondrian"\nengine = "duckdb"\ndriver_tuples = 0',
            [],
            "job file: key 'driver_tuples' must be an integer >= 1, got 0",
        ),
        ('method = "mondrian"\nengine = "duckdb"\ndriver_tuples = "many"', [], "job file: key 'driver_tuples' must be"),
        (
            'method = "mondrian"\ndriver_tuples = 10',
            [],
            'job file: driver_tuples = 10 caps the class aggregates engines "duckdb" and "spark"',
        ),
        (
            'method = "mondrian"\nengine = "duckdb"',
            ["--driver-tuples", "0"],
            "--driver-tuples must be an integer >= 1, got 0",
        ),
        (
            'method = "mondrian"\nengine = "duckdb"',
            ["--driver-tuples", "x"],
            "argument --driver-tuples: invalid int value: 'x'",
        ),
        (
            'method = "datafly"\nengine = "duckdb"',
            ["--driver-tuples", "5"],
            "more than 5 distinct qid tuples (driver_tuples); method 'datafly' runs on the driver",
        ),
    ],
)
def test_job_and_cli_refusals_are_one_line(
    extra: str, flags: list[str], words: str, job: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _job(job, extra, "hierarchy = { intervals = [5, 10], bottom = 30, top = 50 }" if "datafly" in extra else "")
    try:
        code = cli.main(["anonymize", str(job), "-q", *flags])
    except SystemExit as exit_:  # argparse
        code = exit_.code  # type: ignore[assignment]
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert not (job.parent / "out").exists()


def test_cli_flag_replaces_the_file(job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--driver-tuples 5`` over the file's 1000: Mondrian's rounds run in DuckDB, the same rows as Polars."""
    _job(job, 'method = "mondrian"\nengine = "duckdb"\ndriver_tuples = 1000')
    assert cli.main(["anonymize", str(job), "-q", "--driver-tuples", "5"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["details"]["distributed"]["driver_tuples"] == 5 and report["engine"] == "duckdb"
    got = pl.read_parquet(job.parent / "out" / "anon.parquet")
    df = pl.read_parquet(job.parent / "people.parquet")
    want = pa.anonymize(
        df,
        hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])},
        qids=["age", "sex"],
        k=2,
        method="mondrian",
        insensitive="id",
    ).collect()
    assert got.equals(want) and report["n_classes"] > 1
