"""A generated voter register with a birth date (Date dtype) through every method and the job file.

k-anonymity is checked by grouping the published rows; truthfulness by reading
each published label back as the calendar span it names (parser written from the
label format in tests/hierarchies/test_hierarchy_builders_properties.py) and
checking the original birth date lies in it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.demo import voter_register
from tests.hierarchies.test_hierarchy_builders_properties import span

QIDS = ["birth", "zip", "gender"]
K = 5


@pytest.fixture(scope="module")
def register() -> pl.DataFrame:
    df = voter_register(800, seed=11)
    offsets = np.random.default_rng(5).integers(0, 365, df.height)
    birth = [dt.date(int(y), 1, 1) + dt.timedelta(days=int(d)) for y, d in zip(df["birth_year"], offsets)]
    # 3-digit zip areas and two genders, so that full-domain keeps the birth decade rather than suppress it
    coarser = [pl.col("zip").str.slice(0, 3), pl.col("gender").replace("U", "F")]
    return df.with_columns(*coarser, birth=pl.Series(birth, dtype=pl.Date)).drop("birth_year")


def hierarchies(df: pl.DataFrame) -> dict[str, pa.Hierarchy]:
    """The job file's hierarchies (built from the sorted distinct values, as build_hierarchies reads them)."""
    return {
        "birth": pa.Hierarchy.dates(df["birth"].unique().sort(), ["month", "year", "5years", "decade"]),
        "zip": pa.Hierarchy.masking(df["zip"].unique().sort()),
        "gender": pa.Hierarchy.suppression(df["gender"].unique().sort()),
    }


def assert_k_anonymous_and_truthful(original: pl.DataFrame, out: pl.DataFrame) -> None:
    assert out.height == original.height
    assert out.group_by(QIDS).len()["len"].min() >= K
    for day, label in zip(original["birth"], out["birth"]):
        assert label == "*" or span(label)[0] <= day <= span(label)[1], (day, label)
    for z, label in zip(original["zip"], out["zip"]):
        stem = label.rstrip("*")
        assert label == "*" or (len(label) == len(z) and z.startswith(stem)), (z, label)
    assert all(g == p or p == "*" for g, p in zip(original["gender"], out["gender"]))
    assert out["voter_id"].equals(original["voter_id"])  # rows kept in their order


@pytest.mark.parametrize("method", ["fulldomain", "greedy"])
def test_fulldomain_and_greedy_on_a_birth_date_register(register: pl.DataFrame, method: str) -> None:
    result = pa.anonymize(
        register,
        qids=QIDS,
        hierarchies=hierarchies(register),
        k=K,
        method=method,
        drop=["name"],
        insensitive="voter_id",
    )
    out = result.collect()
    assert result.report["suppressed"] == 0 and out["birth"].dtype == pl.String
    assert_k_anonymous_and_truthful(register, out)
    assert out["birth"].n_unique() > 1  # generalized, not all suppressed


@pytest.mark.parametrize("method", ["mondrian", "datafly"])
def test_other_methods_accept_a_date_qid(register: pl.DataFrame, method: str) -> None:
    options = {"max_suppressed": 0} if method == "datafly" else {}
    out = pa.anonymize(
        register,
        qids=QIDS,
        hierarchies=hierarchies(register),
        k=K,
        method=method,
        drop=["name"],
        insensitive="voter_id",
        **options,
    )
    assert_k_anonymous_and_truthful(register, out.collect())


@pytest.mark.parametrize("publish", ["aggregate", "permute"])
def test_mdav_accepts_a_date_qid(register: pl.DataFrame, publish: str) -> None:
    """MDAV reads date labels as categorical values (they do not parse as numbers)."""
    result = pa.anonymize(
        register,
        qids=QIDS,
        hierarchies=hierarchies(register),
        k=K,
        method="mdav",
        drop=["name"],
        insensitive="voter_id",
        publish=publish,
    )
    out = result.collect()
    assert out.height == register.height and set(out["birth"]) <= set(register["birth"].cast(pl.String))
    if publish == "aggregate":
        assert out.group_by(QIDS).len()["len"].min() >= K


@pytest.mark.parametrize("method", ["fulldomain", "greedy"])
def test_job_file_with_a_birth_date_column(register: pl.DataFrame, method: str, tmp_path: Path) -> None:
    register.write_parquet(tmp_path / "voters.parquet")
    (tmp_path / "job.toml").write_text(
        f'input = "voters.parquet"\noutput = "out.parquet"\nk = {K}\nmethod = "{method}"\ndrop = '
        '["name"]\ninsensitive = ["voter_id"]\n'
        '[qids.birth]\nhierarchy = { dates = ["month", "year", "5years", "decade"] }\n'
        '[qids.zip]\nhierarchy = { mask = 5 }\n[qids.gender]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert_k_anonymous_and_truthful(register, out)
    direct = pa.anonymize(
        register,
        qids=QIDS,
        hierarchies=hierarchies(register),
        k=K,
        method=method,
        drop=["name"],
        insensitive="voter_id",
    ).collect()
    assert out.equals(direct)  # the job-file spec builds the same hierarchy as the Python call


def test_datetime_with_time_zone_is_generalized_by_its_local_day() -> None:
    instants = [
        dt.datetime(2020, 2, 29, 23, 30),
        dt.datetime(2020, 2, 29, 23, 45),
        dt.datetime(2020, 3, 1, 10),
        dt.datetime(2020, 3, 1, 11),
    ]
    s = pl.Series(instants).dt.replace_time_zone("UTC").dt.convert_time_zone("Europe/Paris")
    df = pl.DataFrame({"t": s})
    out = pa.anonymize(df, hierarchies={"t": pa.Hierarchy.dates(s, ["day", "month"])}, k=2).collect()
    assert out["t"].to_list() == ["2020-03-01"] * 4  # 23:30 UTC on Feb 29 is March 1 in Paris


def test_csv_iso_dates_through_the_job_file(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("birth\n2020-02-29\n2020-03-01\n1999-12-31\n1999-01-01\n")
    (tmp_path / "job.toml").write_text(
        'input = "in.csv"\noutput = "out.parquet"\nk = 2\n[qids.birth]\nhierarchy = { dates = ["month", "year"] }\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    assert pl.read_parquet(tmp_path / "out.parquet")["birth"].to_list() == ["2020", "2020", "1999", "1999"]
