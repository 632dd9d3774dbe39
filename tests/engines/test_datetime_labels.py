"""A Datetime qid of a Parquet file an engine reads itself (a job's input) is labelled as Polars labels it, in every
time unit, with and without a time zone: DuckDB and Spark read milliseconds as microseconds and labelled
``'2020-01-01 12:00:00.123'`` as ``'...123000'`` (hunt41 q1), so the engines published different rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon import cli

# 2020-01-01 12:00:00.123456789 and 2021-06-30 00:00:00 UTC, in nanoseconds since 1970
INSTANTS = [1_577_880_000_123_456_789, 1_625_011_200_000_000_000]
# the labels, written by hand: Polars' String cast writes every digit of the column's unit
LABELS = {
    "ms": ["2020-01-01 12:00:00.123", "2021-06-30 00:00:00.000"],
    "us": ["2020-01-01 12:00:00.123456", "2021-06-30 00:00:00.000000"],
    "ns": ["2020-01-01 12:00:00.123456789", "2021-06-30 00:00:00.000000000"],
}


def _published(tmp_path: Path, engine: str, unit: str, zone: str | None) -> list[str]:
    """The qid's published labels: the job's input a Parquet file of each instant twice in `unit` (and `zone`), its
    hierarchy the hand-written labels under one root (k=2: every row published at its leaf)."""
    t = pl.Series(INSTANTS * 2).cast(pl.Datetime("ns")).dt.cast_time_unit(unit)  # type: ignore[arg-type]
    if zone is not None:
        t = t.dt.replace_time_zone(zone)
    pl.DataFrame({"t": t, "id": [1, 2, 3, 4]}).write_parquet(tmp_path / "in.parquet")
    suffix = "" if zone is None else "+00:00"
    (tmp_path / "h.csv").write_text("".join(f"{label}{suffix};*\n" for label in LABELS[unit]))
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "in.parquet"\noutput = "out/{engine}.parquet"\nk = 2\nengine = "{engine}"\ninsensitive = "id"\n'
        '[qids.t]\nhierarchy = "h.csv"\n'
    )
    assert cli.main(["anonymize", str(job), "-q"]) == 0
    return pl.read_parquet(tmp_path / "out" / f"{engine}.parquet")["t"].to_list()


@pytest.mark.parametrize("zone", [None, "UTC"])
@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_datetime_qid_read_by_the_engine_is_labelled_as_polars_labels_it(
    engine: str, unit: str, zone: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix = "" if zone is None else "+00:00"
    assert _published(tmp_path, engine, unit, zone) == [f"{label}{suffix}" for label in LABELS[unit] * 2]


@pytest.mark.parametrize("zone", [None, "UTC"])
@pytest.mark.parametrize("unit", ["ms", "us"])  # Spark cannot read nanoseconds: refused by name
def test_spark_labels_a_datetime_qid_of_its_parquet_input_as_polars_does(
    unit: str, zone: str | None, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the tests' Spark session (the job's engine takes it), in zone UTC: a zoned qid in it is taken."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        published = _published(tmp_path, "spark", unit, zone)
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    suffix = "" if zone is None else "+00:00"
    assert published == [f"{label}{suffix}" for label in LABELS[unit] * 2]
