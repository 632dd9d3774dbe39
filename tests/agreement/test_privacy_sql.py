"""The DuckDB privacy macros (sql/privacy.sql) against their Python twins, class by class."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.duckdb import register
from polars_anon.privacy import BetaLikeness, DeltaDisclosure, LDiversity, TCloseness
from polars_anon.privacy.evaluate import class_measures

ADULT = Path(__file__).resolve().parents[2] / "../shared/data/adult/adult.csv"

CASES = [
    (LDiversity("s", l=2), "anon_l_diversity(?, ?, 's', l := 2)"),
    (LDiversity("s", l=2, variant="entropy"), "anon_l_diversity(?, ?, 's', l := 2, variant := 'entropy')"),
    (LDiversity("s", l=2, variant="recursive", c=1.5), "anon_l_diversity(?, ?, 's', l := 2, variant := 'recursive', c := 1.5)"),
    (TCloseness("s", t=0.2), "anon_t_closeness(?, ?, 's', t := 0.2)"),
    (TCloseness("s", t=0.2, distance="ordered"), "anon_t_closeness(?, ?, 's', t := 0.2, distance := 'ordered')"),
    (DeltaDisclosure("s", delta=1.0), "anon_delta_disclosure(?, ?, 's', delta := 1.0)"),
    (BetaLikeness("s", beta=1.0), "anon_beta_likeness(?, ?, 's', beta := 1.0)"),
    (BetaLikeness("s", beta=1.0, variant="enhanced"), "anon_beta_likeness(?, ?, 's', beta := 1.0, variant := 'enhanced')"),
]


def _agree(df: pl.DataFrame, qids: list[str], model, macro: str) -> None:
    con = duckdb.connect()
    register(con)
    con.register("t", df.to_arrow())
    sql = macro.replace("?", "'t'", 1).replace("?", "[" + ", ".join(f"'{q}'" for q in qids) + "]", 1)
    got = con.sql(f"SELECT {', '.join(f'class.{q}' for q in qids)}, size, measure, satisfied FROM {sql}").pl()
    want = class_measures(df, qids, model)
    got = got.sort(qids, nulls_last=True)
    want = want.sort(qids, nulls_last=True)
    assert got[qids].equals(want[qids])
    assert got["size"].to_list() == want["size"].to_list()
    for a, b in zip(got["measure"], want["measure"]):
        assert a == pytest.approx(b, abs=1e-9) or (a == b == float("inf"))
    assert got["satisfied"].to_list() == want["satisfied"].to_list()


@settings(max_examples=25, deadline=None)
@given(
    q=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=30),
    data=st.data(),
    case=st.sampled_from(CASES),
)
def test_macros_match_python_on_random_tables(q: list[str], data, case) -> None:
    s = data.draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=len(q), max_size=len(q)))
    model, macro = case
    _agree(pl.DataFrame({"q": q, "s": s}), ["q"], model, macro)


@pytest.mark.skipif(not ADULT.exists(), reason="shared/data/adult/adult.csv not present")
@pytest.mark.parametrize(("model", "macro"), CASES)
def test_macros_match_python_on_adult(model, macro) -> None:
    df = pl.read_csv(ADULT, separator=";").select("sex", "race", "education", pl.col("salary-class").alias("s"))
    _agree(df, ["sex", "race", "education"], model, macro)


def test_anon_risk_matches_pa_risk() -> None:
    df = pl.DataFrame({"q": ["a", "a", "b", "c", "c", "c"], "r": ["1"] * 6})
    con = duckdb.connect()
    register(con)
    con.register("t", df.to_arrow())
    row = con.sql("FROM anon_risk('t', ['q', 'r'], threshold := 0.4)").pl().row(0, named=True)
    want = pa.risk(df, ["q", "r"], threshold=0.4)
    assert row["n_rows"] == want["n_rows"] and row["n_classes"] == want["n_classes"]
    for key in ("highest", "lowest", "average", "records_at_risk"):
        assert row[key] == pytest.approx(want["prosecutor"][key])
    assert row["sample_uniques"] == pytest.approx(want["sample_uniques"])


def test_macros_refuse_like_python() -> None:
    con = duckdb.connect()
    register(con)
    con.register("t", pl.DataFrame({"q": ["a"], "s": ["x"]}).to_arrow())
    with pytest.raises(duckdb.Error, match=r"sensitive \['salary'\] not in table 't'"):
        con.sql("FROM anon_l_diversity('t', ['q'], 'salary')").fetchall()
    with pytest.raises(duckdb.Error, match=r"variant must be one of \['distinct', 'entropy', 'recursive'\], got 'mean'"):
        con.sql("FROM anon_l_diversity('t', ['q'], 's', variant := 'mean')").fetchall()
