"""``pa.risk(..., missing="wildcard")``: a missing qid value matches any value, as method local_suppression
guarantees and reports it (hunt32: ``pa.risk`` read a missing cell as a category of its own, so an auditor
re-checking a local-suppression report got 1.0 where the report said 0.5, and nothing said why)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli

PEOPLE = pl.DataFrame({"sex": ["f", "f", "m", "m", "f"], "age": [30, 30, 40, 40, 50]})


def _wildcard_fk(rows: list[tuple]) -> list[int]:
    """Each record's wildcard frequency by brute force: the records agreeing with it on every key both observe (no
    record here misses every key, and alpha is 1)."""
    return [sum(all(a is None or b is None or a == b for a, b in zip(r, s)) for s in rows) for r in rows]


def test_the_report_of_local_suppression_is_what_risk_says_with_wildcards(tmp_path: Path) -> None:
    """The example of docs/concepts/sdc.md: the published table holds (f, null); as a wildcard it matches both
    (f, 30) records, so every record's fk is at least 2 (highest risk 1/2); as a category it is a class of one."""
    result = pa.anonymize(PEOPLE, hierarchies={}, qids=["sex", "age"], k=2, method="local_suppression")
    out = result.collect()
    assert out.rows() == [("f", "30"), ("f", "30"), ("m", "40"), ("m", "40"), ("f", None)]
    wild = pa.risk(out, ["sex", "age"], missing="wildcard")
    assert dict(wild) == dict(result.report["risk"]["output"])
    fk = _wildcard_fk(out.rows())
    assert fk == [3, 3, 2, 2, 3]
    assert wild["prosecutor"]["highest"] == 0.5 and wild["prosecutor"]["lowest"] == 1 / 3
    assert math.isclose(wild["prosecutor"]["average"], sum(1 / f for f in fk) / 5)
    assert pa.risk(out, ["sex", "age"])["prosecutor"]["highest"] == 1.0  # the default: a category of its own


@pytest.mark.parametrize("seed", range(20))
def test_wildcard_risk_against_brute_force(seed: int) -> None:
    """Random tables of 2-3 keys with missing cells: every figure of the prosecutor risk from the brute-force fk."""
    import random

    rng = random.Random(seed)
    m = rng.choice([2, 3])
    rows = [tuple(rng.choice(["a", "b", None]) for _ in range(m)) for _ in range(rng.randint(1, 25))]
    rows = [r for r in rows if any(v is not None for v in r)] or [("a",) * m]  # all-missing records: sdcMicro's rule
    keys = [f"k{j}" for j in range(m)]
    table = pl.DataFrame(rows, schema=keys, orient="row")
    got = pa.risk(table, keys, missing="wildcard", threshold=0.3)["prosecutor"]
    risk = [1 / f for f in _wildcard_fk(rows)]
    assert got["highest"] == max(risk) and got["lowest"] == min(risk)
    assert math.isclose(got["average"], sum(risk) / len(rows))
    assert got["records_at_risk"] == sum(r > 0.3 for r in risk) / len(rows)


@pytest.mark.parametrize(
    ("asked", "named"),
    [
        ({"population_size": 100}, "population_size"),
        ({"sampling_fraction": 0.1}, "sampling_fraction"),
        ({"models": [pa.LDiversity("age", 2)]}, "models"),
    ],
)
def test_wildcards_take_no_population_or_models(asked: dict, named: str) -> None:
    with pytest.raises(pa.InvalidParameterError, match=f"missing='wildcard' takes no {named}"):
        pa.risk(PEOPLE, ["sex", "age"], missing="wildcard", **asked)
    with pytest.raises(pa.InvalidParameterError, match=r"missing must be one of \['category', 'wildcard'\]"):
        pa.risk(PEOPLE, ["sex", "age"], missing="any")


def test_the_cli_reads_missing_values_as_wildcards_in_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``polars-anon risk --missing wildcard`` (it applied to the --individual figures only); with a population size
    it is one line, exit 2."""
    path = tmp_path / "out.parquet"
    pl.DataFrame({"sex": ["f", "f", "m", "m", "f"], "age": ["30", "30", "40", "40", None]}).write_parquet(path)
    for missing, highest in [("category", 1.0), ("wildcard", 0.5)]:
        assert cli.main(["risk", str(path), "--qids", "sex,age", "--missing", missing]) == 0
        assert json.loads(capsys.readouterr().out)["prosecutor"]["highest"] == highest
    assert cli.main(["risk", str(path), "--qids", "sex,age", "--missing", "wildcard", "--population-size", "9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing='wildcard' takes no population_size" in err[0]


def test_alpha_recomputes_the_report_of_local_suppression_with_alpha(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """hunt42: docs/concepts/sdc.md promised ``risk.output`` key for key from ``pa.risk(..., missing="wildcard")``,
    false with the method's alpha=0.5 (pa.risk and the CLI took no alpha). By hand at alpha 0.5: (f, 30) counts its
    own 2 records and half of (f, missing): fk 2.5; (m, 40) 2; (f, missing) its own 1 and both (f, 30): 3."""
    qids = ["sex", "age"]
    result = pa.anonymize(PEOPLE, hierarchies={}, qids=qids, k=2, method="local_suppression", alpha=0.5)
    out = result.collect()
    assert out.rows() == [("f", "30"), ("f", "30"), ("m", "40"), ("m", "40"), ("f", None)]
    fk = [2.5, 2.5, 2, 2, 3]
    wild = pa.risk(out, qids, missing="wildcard", alpha=0.5)
    assert dict(wild) == dict(result.report["risk"]["output"])
    assert math.isclose(wild["prosecutor"]["average"], sum(1 / f for f in fk) / 5)
    assert dict(pa.risk(out, qids, missing="wildcard")) != dict(result.report["risk"]["output"])  # alpha 1: 0.4
    with pytest.raises(pa.InvalidParameterError, match="missing='category' takes none"):
        pa.risk(out, qids, alpha=0.5)
    path = tmp_path / "out.parquet"
    out.write_parquet(path)
    assert cli.main(["risk", str(path), "--qids", "sex,age", "--missing", "wildcard", "--alpha", "0.5"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {key: shown[key] for key in wild} == json.loads(json.dumps(dict(wild)))
