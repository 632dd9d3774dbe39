"""The scripts that anonymize the generated voter register declare its ``voter_id`` (an undeclared column with a
distinct value on every row is refused), on a small register: greedy_bench's voters case, mondrian_bench's scale
run and encode_bench's register run (metrics_bench's data, about 1.3 s CPU, has no test here)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl
import pytest

from polars_anon.demo import write_voter_register
from tests.benchmarks import script

ROWS = 500


@pytest.fixture(scope="module")
def register(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_voter_register(tmp_path_factory.mktemp("register") / f"voters_{ROWS}.parquet", ROWS, seed=0)


def test_greedy_voters_case(register: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = script("greedy_bench")
    monkeypatch.setattr(bench, "DATA", register.parent)
    facts = bench.case_voters(ROWS)
    assert facts["rows"] == ROWS and facts["min_class_size"] >= 10


def test_mondrian_scale_run(register: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = script("mondrian_bench")
    out = tmp_path / "out.parquet"
    bench.cmd_scale_run(argparse.Namespace(input=str(register), output=str(out), k=10, mode="strict"))
    facts = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    published = pl.read_parquet(out)
    assert facts["n_rows"] == published.height == ROWS
    assert "voter_id" in published.columns and "name" not in published.columns
    classes = published.group_by("zip", "gender", "race", "birth_year").len()
    assert facts["n_classes"] == classes.height and classes["len"].min() == facts["min_class_size"] >= 10
    assert facts["rounds"] >= 1 and facts["n_partitions"] >= facts["n_classes"]  # read from the report's details


def test_encode_register(
    register: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = script("encode_bench")
    monkeypatch.setattr(bench, "DATA", tmp_path)
    (tmp_path / f"encode_voters_{ROWS}.parquet").symlink_to(register)
    assert bench.register_bench(ROWS, [], [], False)["rows"] == ROWS
    published = tmp_path / f"encode_voters_{ROWS}_k10.parquet"
    assert pl.read_parquet(published).height == ROWS
    args = {"voters": str(register), "published": str(published), "stage": "classes", "layout": "wide", "out": None}
    bench._child(argparse.Namespace(rep="fillparent", **args))  # the classes stage plans the encoding in process
    facts = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert facts["class_rows"] == sum(facts["nodes"].values())  # fillparent: an indicator row per hierarchy node
