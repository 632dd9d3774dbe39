"""The guide docs/guides/first-real-file.md, run as written: its job file alone on the heart-disease CSV (issue 27)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from polars_anon import cli
from tests.conftest import REPO, SHARED_DATA

GUIDE = REPO / "docs" / "guides" / "first-real-file.md"
DATA = SHARED_DATA / "heart_disease_cleveland" / "processed.cleveland.data"
COLUMNS = [
    "age",
    "sex",
    "cp",
    "trestbps",
    "chol",
    "fbs",
    "restecg",
    "thalach",
    "exang",
    "oldpeak",
    "slope",
    "ca",
    "thal",
    "num",
]
QIDS = ["age", "sex", "cp", "trestbps"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    if not DATA.exists():
        pytest.skip(f"needs {DATA} (the ../shared/data folder beside the repository)")
    toml = re.search(r"```toml\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    assert toml is not None
    (tmp_path / "job.toml").write_text(toml.group(1).replace("../shared/data", str(SHARED_DATA)))
    return tmp_path


def _original() -> pl.DataFrame:
    """The file read by hand: no header, '?' missing, floats."""
    rows = [line.split(",") for line in DATA.read_text().splitlines()]
    return pl.DataFrame({c: [None if r[i] == "?" else float(r[i]) for r in rows] for i, c in enumerate(COLUMNS)})


def _band(value: str) -> tuple[int, int] | None:
    if value == "*":
        return None
    lo, _, hi = value.partition("-")
    return int(lo), int(hi or lo)


def test_the_guides_job_runs_from_the_file_alone(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["anonymize", str(work / "job.toml")]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    published = pl.read_parquet(work / "out" / "heart_k5.parquet")
    original = _original()
    assert published.height == original.height == 303 and report["suppressed"] == 0
    classes = published.group_by(QIDS).agg(pl.len(), pl.col("num").n_unique().alias("diagnoses"))
    assert classes["len"].min() >= 5 and classes["diagnoses"].min() >= 2  # k = 5 and l = 2, by a plain group-by
    for q in ("age", "trestbps"):  # truthful: each band holds the original value
        for got, was in zip(published[q].to_list(), original[q].to_list()):
            band = _band(got)
            assert band is None or band[0] <= was <= band[1]
    for c in ("chol", "thalach", "oldpeak", "ca"):  # published as is, nulls where the file had "?"
        assert published[c].to_list() == original[c].to_list()
    assert report["attribute_disclosure"]["num"]["records_single_value"] == 0
    assert captured.err.startswith("polars-anon: topdown k=5: published 303 rows in ")
    said = GUIDE.read_text()  # the third run's figures as the guide quotes them
    assert f"result has {report['n_classes']} classes, the smallest of {report['min_class_size']} patients" in said
    assert f"loss {report['loss']:.2f}," in said
    largest = report["attribute_disclosure"]["num"]["largest_value_share"]
    assert f"holds in a class: {largest:.0%} here" in said
    html = (work / "out" / "heart_k5.report.html").read_text()
    assert "Attribute disclosure" in html


def test_the_first_run_advises_topdown(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (work / "job.toml").read_text()
    first = text.split("[[privacy]]")[0].replace('method = "topdown"', "").replace("heart_k5", "heart_first")
    (work / "first.toml").write_text(first)
    (work / "td.toml").write_text('method = "topdown"\n' + first.replace("heart_first", "heart_td"))
    assert cli.main(["anonymize", str(work / "first.toml")]) == 0
    captured = capsys.readouterr()
    advice = json.loads(captured.out)["method_advice"]
    assert cli.main(["anonymize", str(work / "td.toml")]) == 0
    second = capsys.readouterr()
    alone = json.loads(second.out)
    quoted = re.findall(r"```text\n(.*?)```", GUIDE.read_text(), re.DOTALL)  # the two runs' lines, as the guide quotes
    assert " ".join(quoted[0].split()) == captured.err.strip().replace(f"{work}/out/heart_first", "out/heart_k5")
    assert quoted[1].strip() in second.err
    share = (pl.read_parquet(work / "out" / "heart_td.parquet")["cp"] != "*").mean()
    assert f"loss {alone['loss']:.2f}: chest-pain type\npublished for {share:.0%} of the patients" in GUIDE.read_text()
    assert advice["chosen"] == "fulldomain" and advice["better"] == "topdown"
    assert advice["better_loss"] == pytest.approx(alone["loss"])
    single = (
        pl.read_parquet(work / "out" / "heart_td.parquet")
        .group_by(QIDS)
        .agg(pl.len(), pl.col("num").n_unique().alias("d"))
        .filter(pl.col("d") == 1)["len"]
        .sum()
    )
    assert alone["attribute_disclosure"]["num"]["records_single_value"] == single > 0
