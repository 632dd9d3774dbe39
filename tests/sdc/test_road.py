"""SDC on the road: method local_suppression, the job's [sdc] table and its report key, the CLI's risk flags, the
namespace, the DuckDB macros and the figures on DuckDB. Every expected value is a hand computation, sdcMicro's
test value, or a record-by-record loop (tests/sdc/reference.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import jsonschema
import numpy as np
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.duckdb as pa_duckdb
from polars_anon import cli
from polars_anon.algorithms.local_suppression import verify_wildcard
from polars_anon.engines.duckdb import DuckDBEngine
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.job import Job, run_job
from polars_anon.report import schema
from polars_anon.report.html import render_html
from polars_anon.sdc.measures import Measures, measure, measure_sql
from tests.sdc.reference import FRANCDAT, FRANCDAT_KEYS, is_k_anonymous_wildcard, wildcard_fk

PEOPLE = pl.DataFrame(
    {
        "sex": ["f", "f", "m", "m", "f", "m", "f", "m"],
        "age": ["30", "30", "40", "40", "50", "30", "40", "50"],
        "region": ["N", "N", "S", "S", "N", "S", "S", "N"],
        "w": [10.0, 20.0, 30.0, 10.0, 5.0, 40.0, 2.0, 8.0],
        "hh": [1, 1, 2, 2, 3, 4, 5, 5],
        "income": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
    }
)
KEYS = ["sex", "age", "region"]


def _risk(f: float, big: float) -> float:
    """Benedetti-Franconi's closed forms (f = 1, 2) and sdcMicro's approximation, by hand."""
    p = f / big
    if p >= 1:
        return 1 / f
    if f == 1:
        return p / (1 - p) * math.log(1 / p)
    if f == 2:
        o = p / (1 - p)
        return o - o * o * math.log(1 / p)
    return p / (f - 1 + p)


def test_local_suppression_on_the_road_reaches_wildcard_k_and_matches_pa_sdc() -> None:
    for k in (2, 3):
        res = pa.anonymize(
            PEOPLE, hierarchies={}, qids=KEYS, k=k, method="local_suppression", insensitive=["w", "hh", "income"]
        )
        out = res.collect()
        rows = out.select(KEYS).rows()
        assert is_k_anonymous_wildcard(rows, k)
        direct = pa.sdc.local_suppression(PEOPLE, KEYS, k).frame.collect()
        assert rows == direct.select(KEYS).rows()  # the same heuristic on the class aggregates as on the records
        blanked = {q: sum(v is None for v in out[q]) for q in KEYS}
        assert res.report["details"]["suppressed_cells"] == blanked
        assert res.report["guarantee"] == "wildcard-k-anonymity" and res.report["min_class_size"] >= k
        assert out.select("w", "hh", "income").equals(PEOPLE.select("w", "hh", "income"))
        kept = [(a, b) for a, b in zip(PEOPLE.select(KEYS).rows(), rows, strict=True)]
        assert all(y is None or x == y for a, b in kept for x, y in zip(a, b, strict=True))


def test_local_suppressions_output_risk_counts_missing_cells_as_wildcards() -> None:
    """The report's output risk of local suppression: each record's risk 1/fk with its wildcard fk (record by record,
    tests/sdc/reference.py), not its group with missing values as a category (which gave classes of 1 and a highest
    risk of 1.0 beside a wildcard k of 3)."""
    df = pl.DataFrame(
        {"a": [0, 0, 1, 1, 1, 2, 2, 0, 1, 2], "b": list("xyxyxyxyyx"), "c": [0, 1, 0, 1, 0, 1, 0, 0, 1, 1]}
    )
    res = pa.anonymize(df, hierarchies={}, qids=["a", "b", "c"], k=3, method="local_suppression")
    rows = res.collect().select("a", "b", "c").rows()
    fk = np.array([f for f, _ in wildcard_fk(rows, [1.0] * len(rows))])
    out = res.report["risk"]["output"]
    assert fk.min() >= 3 and res.report["min_class_size"] == int(fk.min())
    assert out["prosecutor"]["highest"] == 1 / fk.min() and out["prosecutor"]["lowest"] == 1 / fk.max()
    assert out["prosecutor"]["average"] == pytest.approx(float(np.mean(1 / fk)), rel=1e-12)
    assert out["prosecutor"]["records_at_risk"] == pytest.approx(float(np.mean(1 / fk > 0.2)))
    assert out["sample_uniques"] == 0.0 and out["n_rows"] == len(rows) and out["n_classes"] == len(set(rows))
    by_size = {b["size"]: b["rows"] for b in out["class_sizes"]}
    assert by_size["1"] == by_size["2"] == 0 and sum(by_size.values()) == len(rows)


def test_the_check_of_local_suppression_fails_closed() -> None:
    original = PEOPLE.lazy()
    ok = original.select("sex", pl.lit(None, pl.String).alias("age"), pl.lit(None, pl.String).alias("region"))
    facts = verify_wildcard(ok, original, KEYS, 4, 1.0)
    assert {k: facts[k] for k in ("n_rows", "n_classes", "min_class_size")} == {
        "n_rows": 8,
        "n_classes": 2,
        "min_class_size": 4,
    }
    with pytest.raises(NotKAnonymousError, match="differ from their input values"):
        verify_wildcard(ok.with_columns(pl.lit("m").alias("sex")), original, KEYS, 2, 1.0)
    with pytest.raises(NotKAnonymousError, match="fewer than k=2"):
        verify_wildcard(PEOPLE.lazy(), original, KEYS, 2, 1.0)
    with pytest.raises(NotKAnonymousError, match="7 rows, the input 8"):
        verify_wildcard(ok.head(7), original, KEYS, 2, 1.0)


def test_local_suppression_refusals_are_in_the_capability_table() -> None:
    with pytest.raises(InvalidParameterError, match="engine 'duckdb'.*wildcards"):
        pa_duckdb.anonymize(
            PEOPLE,
            hierarchies={},
            qids=KEYS,
            k=2,
            method="local_suppression",
            insensitive=["w", "hh", "income"],
            connection=duckdb.connect(),
        )
    with pytest.raises(InvalidParameterError, match="takes no privacy models"):
        pa.anonymize(
            PEOPLE,
            hierarchies={},
            qids=KEYS,
            k=2,
            method="local_suppression",
            sensitive="income",
            insensitive=["w", "hh"],
            privacy=[pa.privacy.LDiversity("income", 2)],
        )
    with pytest.raises(InvalidParameterError, match="importance must give every qid once"):
        pa.anonymize(
            PEOPLE,
            hierarchies={},
            qids=KEYS,
            k=2,
            method="local_suppression",
            importance={"sex": 1},
            insensitive=["w", "hh", "income"],
        )


def test_measures_by_hand_and_household() -> None:
    fig = measure(PEOPLE, Measures(keys=("sex", "region"), weight="w", household="hh"))
    # patterns: (f,N) 3 rows Fk 35; (m,S) 3 rows Fk 80; (f,S) 1 row Fk 2; (m,N) 1 row Fk 8
    r = {"fN": _risk(3, 35.0), "mS": _risk(3, 80.0), "fS": _risk(1, 2.0), "mN": _risk(1, 8.0)}
    per_row = [r["fN"], r["fN"], r["mS"], r["mS"], r["fN"], r["mS"], r["fS"], r["mN"]]
    assert fig["expected_reidentifications"] == pytest.approx(sum(per_row), abs=1e-12)
    assert fig["global_risk"] == pytest.approx(sum(per_row) / 8, abs=1e-12)
    assert (fig["n_unique"], fig["n_pairs"], fig["violating"]) == (2, 0, {"2": 2, "3": 2, "5": 8})
    hh = {1: [0, 1], 2: [2, 3], 3: [4], 4: [5], 5: [6, 7]}
    her = sum(len(m) * (1 - math.prod(1 - per_row[i] for i in m)) for m in hh.values())
    assert fig["household_expected_reidentifications"] == pytest.approx(her, abs=1e-12)


def test_measures_on_duckdb_agree_with_polars() -> None:
    engine = DuckDBEngine(duckdb.connect())
    table = engine.table(PEOPLE.with_columns(pl.when(pl.col("hh") == 3).then(None).otherwise("age").alias("age")))
    lf = engine.to_polars(table)
    for spec in (
        Measures(keys=tuple(KEYS), weight="w", household="hh", suda2=True, model="default"),
        Measures(keys=tuple(KEYS), weight="w", method="exact", model="CE", interactions=(("sex", "age"),)),
        Measures(keys=("sex", "age")),
    ):
        a, b = measure(lf, spec), measure_sql(engine, table, spec)
        assert set(a) == set(b)
        for key, value in a.items():
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, abs=1e-9), key
            elif key == "model_risk":
                assert b[key] == pytest.approx(value, abs=1e-9)
            else:
                assert b[key] == value, key


def test_measure_sql_sends_one_query_per_grouping() -> None:
    """ci8: measure_sql sent 8 queries for the weights, the households, SUDA2 and the model (on Spark 21 jobs, ~3.3 JVM
    CPU s on 9 rows): the weights checked twice, the risk and the tallies apart over the same key patterns, the null
    households, and the patterns again for SUDA2 and again for the model. Now one query per grouping, every figure
    read from it: the rows' checks, the key patterns (on the driver when SUDA2 or the model reads them), the
    households; the figures those of Polars."""

    class Counting(DuckDBEngine):
        sent = 0  # the queries run (each brought to the driver)

        def to_polars(self, table: duckdb.DuckDBPyRelation) -> pl.DataFrame:
            self.sent += 1
            return super().to_polars(table)

    asked_and_queries = [
        ({"weight": "w", "household": "hh", "suda2": True, "model": "default"}, 3),
        ({"weight": "w", "household": "hh"}, 3),  # the rows, the patterns' aggregate, the households
        ({"weight": "w", "method": "exact"}, 2),  # the rows, the distinct (fk, Fk)
        ({"suda2": True}, 1),
        ({}, 1),
    ]
    for asked, queries in asked_and_queries:
        engine = Counting(duckdb.connect())
        spec = Measures(keys=tuple(KEYS), **asked)
        got = measure_sql(engine, engine.table(PEOPLE), spec)
        assert engine.sent == queries, asked
        want = measure(PEOPLE, spec)
        assert got.keys() == want.keys()
        for key, value in want.items():
            close = isinstance(value, float) or key == "model_risk"
            assert got[key] == (pytest.approx(value, abs=1e-9) if close else value), key


def test_duckdb_macros_match_the_python_twins() -> None:
    con = duckdb.connect()
    pa_duckdb.register(con)
    francdat = pl.DataFrame(FRANCDAT)
    con.register("francdat", francdat.to_arrow())
    got = con.sql("FROM anon_individual_risk('francdat', ['Key1', 'Key2'], weight := 'w')").pl()
    want = pa.sdc.individual_risk(francdat, ["Key1", "Key2"], weight="w").collect().unique(["Key1", "Key2"])
    want = want.sort("Key1", "Key2")
    assert got["fk"].to_list() == want["fk"].to_list() and got["big_fk"].to_list() == want["Fk"].to_list()
    assert np.allclose(got["risk"].to_numpy(), want["risk"].to_numpy(), rtol=0, atol=1e-12)
    # sdcMicro's test_indivRisk.R: a class of 3 with weights summing to 108, approximate risk 0.01369863
    assert round(con.sql("SELECT anon_sdc_risk(3.0, 108.0)").fetchall()[0][0], 8) == 0.01369863
    glob = con.sql("FROM anon_global_risk('francdat', ['Key1', 'Key2', 'Key3', 'Key4'])").fetchall()[0]
    fk = [f for f, _ in wildcard_fk(francdat.select(FRANCDAT_KEYS).rows(), [1.0] * 8)]  # no missing: plain counts
    er = sum(1 / f for f in fk)  # no weight: risk 1/fk
    assert glob == (8, pytest.approx(er / 8), pytest.approx(er), fk.count(1), fk.count(2))
    assert (fk.count(1), fk.count(2)) == (4, 4)
    with pytest.raises(duckdb.Error, match="weight"):
        con.sql("FROM anon_frequencies('francdat', ['Key1'], weight := 'nope')").fetchall()
    # anon_sdc_risk is risk_sql's text: near Fk = fk it takes the series (the formulas cancel: it gave 1.5 for fk = 2,
    # Fk = 2.000000001); as Fk -> fk the risk tends to 1 / fk (no sampling), by hand
    from polars_anon.sdc.measures import risk_sql
    from polars_anon.sdc.risk import benedetti_franconi

    assert risk_sql("fk", "big_fk") in (Path(__file__).parents[2] / "sql" / "sdc.sql").read_text()
    for fk, big in [(1, 1.0000001), (2, 2.0000001), (2, 2.000000001), (2, 2 + 1e-13), (2, 2.5), (3, 3.0000001)]:
        got = con.sql(f"SELECT anon_sdc_risk({fk}.0, {big!r})").fetchall()[0][0]
        assert got == pytest.approx(benedetti_franconi(np.array([fk]), np.array([big]), "approx")[0], rel=1e-12)
        if big - fk < 1e-6:
            assert got == pytest.approx(1 / fk, rel=1e-6)
    # anon_exact_sum is exact_sum_sql's text; 0.1 + 0.2 + 0.3 is 0.6 (fsum), SUM's left-to-right 0.6000000000000001
    from polars_anon.sdc.measures import exact_sum_sql

    assert exact_sum_sql("v", "duckdb") in (Path(__file__).parents[2] / "sql" / "sdc.sql").read_text()
    assert con.sql("SELECT anon_exact_sum(v) FROM (VALUES (0.1), (0.2), (0.3)) t(v)").fetchall() == [(0.6,)]
    # review14: SQL sums both CASE branches; 20 weights of 1e25 overflowed the HUGEINT sums (raw OutOfRangeException)
    huge = [1e25] * 20 + [2.0**84 * 0.9, -(2.0**83), 0.1]  # the second group near 2^85: the exact branch's top part
    con.register("huge", pl.DataFrame({"g": [1] * 20 + [2] * 3, "v": huge}).to_arrow())
    got = con.sql("SELECT g, anon_exact_sum(v) FROM huge GROUP BY g ORDER BY g").fetchall()
    assert got == [(1, math.fsum(huge[:20])), (2, math.fsum(huge[20:]))]


def _job(tmp_path: Path, extra: str) -> Path:
    PEOPLE.write_parquet(tmp_path / "people.parquet")
    path = tmp_path / "job.toml"
    path.write_text(
        'input = "people.parquet"\noutput = "out/people.parquet"\nk = 2\nmethod = "local_suppression"\n'
        'insensitive = ["w", "hh", "income"]\nqids = { sex = {}, age = {}, region = {} }\n' + extra
    )
    return path


def test_a_job_with_sdc_reports_before_and_after(tmp_path: Path) -> None:
    job = _job(
        tmp_path,
        '[sdc]\nweight = "w"\nmissing = "wildcard"\nsuda2 = true\n'
        '[[sdc.protect]]\nstep = "noise"\ncolumns = ["income"]\nnoise = 50\n',
    )
    assert cli.main(["anonymize", str(job)]) == 0
    report = json.loads((tmp_path / "out" / "people.report.json").read_text())
    jsonschema.Draft202012Validator(schema()).validate(report)
    sdc = report["sdc"]
    assert sdc["input"] == measure(PEOPLE, Measures(keys=tuple(KEYS), weight="w", missing="wildcard", suda2=True))
    out = pl.read_parquet(tmp_path / "out" / "people.parquet")
    assert sdc["output"]["violating"]["2"] == 0 and sdc["input"]["n_unique"] > 0
    assert sdc["output"]["global_risk"] == pytest.approx(
        measure(out, Measures(keys=tuple(KEYS), weight="w", missing="wildcard"))["global_risk"], abs=1e-12
    )
    assert not out["income"].equals(PEOPLE["income"]) and out["w"].equals(PEOPLE["w"])
    html = (tmp_path / "out" / "people.report.html").read_text()
    assert 'id="sdc"' in html and "expected re-identifications" in html and "SUDA2" in html
    # hunt42: the noised column was reported "published as is"; the report names the step that changed it
    protection = {c["name"]: c.get("protection") for c in report["columns"]}
    assert protection == {"sex": None, "age": None, "region": None, "w": None, "hh": None, "income": ["noise added"]}
    # mend41 item 2: its treatment said "published as is" beside the protection "noise added"
    assert "<td>noise added ([[sdc.protect]]), then published as perturbed</td>" in html
    assert {c["name"]: c["treatment"] for c in report["columns"]}["income"] == "published as perturbed"


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ('[sdc]\nweights = "w"\n', "unknown key 'weights'"),
        ('[sdc]\n[[sdc.protect]]\nstep = "shuffle"\n', "step must be one of"),
        ('[sdc]\n[[sdc.protect]]\nstep = "pram"\n', "step 'pram' needs key 'column'"),
        ('[sdc]\nweight = "nope"\n', "columns \\['nope'\\] are not columns"),
        (
            '[[sdc.protect]]\nstep = "noise"\ncolumns = ["income"]\nnoise = nan\n',
            r"protect\[0\]: key 'noise' \(percent",
        ),
        (
            '[[sdc.protect]]\nstep = "noise"\ncolumns = ["income"]\nnoise = inf\n',
            r"key 'noise' .* finite number >= 0, got inf",
        ),
        ('[[sdc.protect]]\nstep = "rank_swap"\ncolumns = ["income"]\np = nan\n', r"key 'p' \(a percentage\)"),
        ('[[sdc.protect]]\nstep = "pram"\ncolumn = "sex"\npd = -inf\n', r"key 'pd' must be a number in \(0, 1\]"),
        ("[sdc]\ndis_fraction = nan\n", r"dis_fraction must be a number in \(0, 1\], got nan"),
        ("[sdc]\nseed = -1\n", r"\[sdc\]: seed must be an integer >= 0, got -1"),  # the one seed check
        # mend41 item 1: a key or a target the String column does not hold was accepted, and perturbed nothing
        (
            '[[sdc.protect]]\nstep = "pram"\ncolumn = "region"\nmatrix = { X = { N = 1.0 } }\n',
            r"protect\[0\]: PRAM matrix names 1 values column 'region' does not hold: \['X'\]; "
            r"its values: \['N', 'S'\]",
        ),
        (
            '[[sdc.protect]]\nstep = "pram"\ncolumn = "region"\nmatrix = { N = { Divorced = 1.0 } }\n',
            r"protect\[0\]: PRAM matrix names 1 values column 'region' does not hold: \['Divorced'\]",
        ),
        # mend41 item 4: a step's own refusal did not say which step
        (
            '[[sdc.protect]]\nstep = "noise"\ncolumns = ["sex"]\n',
            r"^job file: \[sdc\] protect\[0\]: columns \['sex'\] must be numeric, got String$",
        ),
        (  # hunt36: a PRAM matrix key of an Int64 column is read as an Int64 value, or refused naming it
            '[[sdc.protect]]\nstep = "pram"\ncolumn = "hh"\nmatrix = { x = { 2 = 1.0 } }\n',
            r"protect\[0\]: matrix key 'x' is not a value of column 'hh' \(Int64\)",
        ),
        (
            '[[sdc.protect]]\nstep = "pram"\ncolumn = "hh"\nmatrix = { 1 = { 2 = 0.5, 02 = 0.5 } }\n',
            r"matrix row 1 keys name the value 2 of column 'hh' twice",
        ),
        ('engine = "duckdb"\n[sdc]\nmissing = "wildcard"\n', "local_suppression' on engine 'duckdb'"),
    ],
)
def test_sdc_job_refusals(tmp_path: Path, extra: str, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = _job(tmp_path, "").read_text()
    if extra.startswith("engine"):
        text = text.replace('method = "local_suppression"\n', 'method = "mondrian"\n') + extra
        words = "missing = 'wildcard' on engine 'duckdb'"
    else:
        text += extra
    (tmp_path / "job.toml").write_text(text)
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    with pytest.raises(InvalidParameterError, match=words):
        run_job(Job.load(tmp_path / "job.toml"))


def test_the_reports_steps_record_the_defaults_they_ran_with(tmp_path: Path) -> None:
    """newuser6 (mend41 item 6): a pram step showed {'step': 'pram', 'column': 'region'}, without the pd and alpha it
    ran with."""
    extra = (
        '[sdc]\nseed = 5\n[[sdc.protect]]\nstep = "pram"\ncolumn = "region"\n'
        '[[sdc.protect]]\nstep = "noise"\ncolumns = ["income"]\nnoise = 20\n'
        '[[sdc.protect]]\nstep = "rank_swap"\ncolumns = ["w"]\n'
        '[[sdc.protect]]\nstep = "pram"\ncolumn = "sex"\nmatrix = { f = { f = 1.0 } }\n'
    )
    assert cli.main(["anonymize", str(_job(tmp_path, extra))]) == 0
    steps = json.loads((tmp_path / "out" / "people.report.json").read_text())["sdc"]["steps"]
    assert steps == [
        {"step": "pram", "column": "region", "pd": 0.8, "alpha": 0.5},
        {"step": "noise", "columns": ["income"], "noise": 20, "method": "additive"},
        {"step": "rank_swap", "columns": ["w"], "p": 5.0},
        {"step": "pram", "column": "sex", "matrix": {"f": {"f": 1.0}}},
    ]


def test_the_reports_rows_as_is_count_the_cells_a_step_changed(tmp_path: Path) -> None:
    """newuser6 (mend41 item 2): a PRAM'd qid was reported published as is for 99.36% of its rows when 89.8% were: the
    share counted the method's blanked cells only. Here every N region becomes S (4 of 8 rows changed), then local
    suppression blanks some cells: the share is the rows whose published region is their input's, counted by hand."""
    extra = '[sdc]\n[[sdc.protect]]\nstep = "pram"\ncolumn = "region"\nmatrix = { N = { S = 1.0 }, S = { S = 1.0 } }\n'
    assert cli.main(["anonymize", str(_job(tmp_path, extra))]) == 0
    report = json.loads((tmp_path / "out" / "people.report.json").read_text())
    out = pl.read_parquet(tmp_path / "out" / "people.parquet")
    for q in KEYS:
        kept = sum(a == b for a, b in zip(out[q].to_list(), PEOPLE[q].to_list()))
        assert report["generalization"][q]["unchanged"] == kept / 8, q
    assert report["generalization"]["region"]["unchanged"] <= 0.5


def test_a_bad_interaction_is_prefixed_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """hunt36: 'job file: [sdc]: job file: [sdc]: each interaction names two keys' (the prefix twice)."""
    assert cli.main(["anonymize", str(_job(tmp_path, '[sdc]\ninteractions = [["sex"]]\n'))]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("[sdc]") == 1 and "each interaction names two keys, got ['sex']" in err


def test_a_jobs_pram_matrix_reads_its_keys_as_the_columns_values(tmp_path: Path) -> None:
    """hunt36: TOML keys are strings; an Int64 column's matrix {1 = {2 = 1.0}, 5 = {3 = 1.0}} moves 1 to 2, 5 to 3."""
    extra = '[[sdc.protect]]\nstep = "pram"\ncolumn = "hh"\nmatrix = { 1 = { 2 = 1.0 }, 5 = { 3 = 1.0 } }\n'
    assert cli.main(["anonymize", str(_job(tmp_path, extra))]) == 0
    hh = pl.read_parquet(tmp_path / "out" / "people.parquet")["hh"]
    assert hh.dtype == pl.Int64 and hh.to_list() == [2, 2, 2, 2, 3, 4, 3, 3]  # from 1, 1, 2, 2, 3, 4, 5, 5
    columns = json.loads((tmp_path / "out" / "people.report.json").read_text())["columns"]
    assert [c["name"] for c in columns if c.get("protection") == ["PRAM (values recoded at random)"]] == ["hh"]


def test_cli_risk_with_weights_and_suda2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    PEOPLE.write_parquet(tmp_path / "p.parquet")
    argv = [
        "risk",
        str(tmp_path / "p.parquet"),
        "--qids",
        "sex,region",
        "--weights",
        "w",
        "--suda2",
        "--model-risk",
        "IPF",
    ]
    assert cli.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    want = measure(PEOPLE, Measures(keys=("sex", "region"), weight="w", suda2=True))
    assert doc["sdc"]["figures"]["global_risk"] == pytest.approx(want["global_risk"], abs=1e-12)
    assert doc["sdc"]["figures"]["suda2"]["records_with_msu"] == 2  # the two sample uniques, each unique on both keys
    # IPF (independence): lambda = n (f_sex / n)(f_region / n); the two uniques (f,S) w 2 and (m,N) w 8, 4 cells
    fit = {("f", "S"): 8 * (4 / 8) * (4 / 8), ("m", "N"): 8 * (4 / 8) * (4 / 8)}
    r1 = (math.exp(-(1 - 1 / 2) * fit[("f", "S")]) + math.exp(-(1 - 1 / 8) * fit[("m", "N")])) / 4
    assert doc["sdc"]["figures"]["model_risk"]["risk1"] == pytest.approx(r1, abs=1e-9)
    assert cli.main(["risk", str(tmp_path / "p.parquet"), "--qids", "sex", "--household", "nope"]) == 2


def test_namespace_sdc_methods() -> None:
    assert PEOPLE.anon.sdc_risk(["sex", "region"], weight="w") == measure(
        PEOPLE, Measures(keys=("sex", "region"), weight="w")
    )
    assert PEOPLE.anon.frequencies("sex")["fk"].to_list() == [4.0] * 8
    assert PEOPLE.anon.local_suppression(KEYS, 2).total == pa.sdc.local_suppression(PEOPLE, KEYS, 2).total
    assert (
        PEOPLE.lazy().anon.rank_swap("income", p=20, seed=1).collect()["income"].sort().equals(PEOPLE["income"].sort())
    )


def test_the_html_page_shows_sdc_figures() -> None:
    fig = measure(PEOPLE, Measures(keys=tuple(KEYS), weight="w"))
    page = render_html(
        {
            "k": 2,
            "method": "local_suppression",
            "sdc": {"keys": KEYS, "weight": "w", "input": fig, "output": fig, "steps": []},
        }
    )
    assert "Statistical disclosure control" in page and "records violating 3-anonymity" in page


def test_sdc_seed_keys_the_steps_and_the_report_never_shows_it(tmp_path: Path) -> None:
    """review4 finding 1: the steps' key is the [sdc] table's seed (a secret), or a fresh key from the OS; the report
    says which, never the value; a given seed gives the same bytes (keys seed + i, as apply_steps)."""
    from polars_anon.sdc.job import Step, apply_steps

    steps = '[[sdc.protect]]\nstep = "noise"\ncolumns = ["income"]\nnoise = 50\n'
    runs = {}
    for name, extra in (
        ("none", "[sdc]\n"),
        ("one", "[sdc]\nseed = 987654321\n"),
        ("two", "[sdc]\nseed = 987654321\n"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        assert cli.main(["anonymize", str(_job(folder, extra + steps))]) == 0
        text = (folder / "out" / "people.report.json").read_text()
        assert "987654321" not in text
        runs[name] = (
            json.loads(text)["sdc"]["seed"],
            (folder / "out" / "people.parquet").read_bytes(),
            pl.read_parquet(folder / "out" / "people.parquet")["income"],
        )
    assert runs["none"][0] == "not given: a fresh key from the operating system (not reproducible)"
    assert runs["one"][0] == runs["two"][0] == "given (secret, not shown)"
    assert runs["one"][1] == runs["two"][1]  # the same seed, the same bytes
    want = apply_steps(PEOPLE.lazy(), [Step("noise", {"columns": ["income"], "noise": 50})], seed=987654321)
    assert runs["one"][2].equals(want.collect()["income"]) and not runs["none"][2].equals(runs["one"][2])


def test_protection_steps_apply_in_order_and_are_seeded() -> None:
    from polars_anon.sdc.job import Step, apply_steps

    steps = [
        Step("pram", {"column": "region", "matrix": {"N": {"S": 1.0}, "S": {"S": 1.0}}}),  # every N becomes S
        Step("pram", {"column": "sex", "pd": 0.5}),
        Step("rank_swap", {"columns": ["income"], "p": 50.0}),
    ]
    out = apply_steps(PEOPLE.lazy(), steps, seed=3).collect()
    assert out["region"].to_list() == ["S"] * 8
    assert sorted(out["income"].to_list()) == sorted(PEOPLE["income"].to_list())  # a swap keeps the values
    assert set(out["sex"].to_list()) <= {"f", "m"} and out.height == 8
    assert out.equals(apply_steps(PEOPLE.lazy(), steps, seed=3).collect())  # the same seed, the same output


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        ({"missing": "wildcard"}, "sdc missing = 'wildcard' on engine '{e}': a missing key matching any category"),
        (
            {"weight": "w", "household": "hh", "method": "exact"},
            "sdc household risk with method = 'exact' on engine '{e}': the exact series is computed on the driver",
        ),
    ],
)
def test_sdc_figure_refusals_are_the_capability_tables_on_every_sql_entry(asked: dict, words: str) -> None:
    """review4 finding 8: DuckDB's and Spark's sdc_risk refuse with the capability table's one text (the job's,
    consult_sdc_measures), before any data is read (Spark's frame is never touched); so does measure_sql called
    directly (it answered, household risk approximated, where the table refuses)."""
    from polars_anon import spark as pas
    from polars_anon.pipeline.capabilities import consult_sdc_measures

    con = duckdb.connect()
    con.register("people", PEOPLE.to_arrow())
    spec = Measures(keys=tuple(KEYS), **asked)
    sql_engine = DuckDBEngine(con)
    calls = {
        "duckdb": [
            lambda: pa_duckdb.sdc_risk("people", KEYS, connection=con, **asked),
            lambda: consult_sdc_measures(spec, "duckdb"),
            lambda: measure_sql(sql_engine, sql_engine.table("people"), spec),
        ],  # called directly: the same row
        "spark": [lambda: pas.sdc_risk(object(), KEYS, **asked), lambda: consult_sdc_measures(spec, "spark")],
    }
    for engine, entries in calls.items():
        for call in entries:
            with pytest.raises(InvalidParameterError) as caught:
                call()
            assert str(caught.value).startswith(words.format(e=engine)), str(caught.value)


def test_bad_weights_are_refused_alike_on_polars_and_duckdb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review4 finding 2: DuckDB returned figures for weights 0, -4, null, NaN (global risk nan) and a String weight
    column ended a job in a DuckDB traceback (exit 1); now its message is Polars' (check_weights)."""
    con = duckdb.connect()
    for bad, shown in ((0.0, "0.0"), (-4.0, "-4.0"), (None, "None"), (float("nan"), "nan"), (float("inf"), "inf")):
        df = pl.DataFrame({"a": ["x", "x", "y", "y"], "w": [10.0, bad, 10.0, 10.0]})
        con.register("t", df.to_arrow())
        with pytest.raises(InvalidParameterError) as on_polars:
            measure(df, Measures(keys=("a",), weight="w"))
        with pytest.raises(InvalidParameterError) as on_duckdb:
            pa_duckdb.sdc_risk("t", ["a"], connection=con, weight="w")
        want = f"weight column 'w' has 1 values that are not positive numbers (first: [{shown}])"
        assert str(on_duckdb.value) == str(on_polars.value) and str(on_duckdb.value).startswith(want)
    PEOPLE.with_columns(pl.col("w").cast(pl.String)).write_parquet(tmp_path / "s.parquet")
    job = (
        'input = "s.parquet"\noutput = "out/s.parquet"\nk = 2\nengine = "duckdb"\n'
        'insensitive = ["w", "hh", "income"]\n[qids.sex]\nhierarchy = "suppress"\n[qids.age]\n'
        'hierarchy = "suppress"\n[qids.region]\nhierarchy = "suppress"\n[sdc]\nweight = "w"\n'
    )
    (tmp_path / "job.toml").write_text(job)
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["polars-anon: error: weight column 'w' must be numeric, got String"]


def test_null_household_ids_are_refused_naming_the_column_and_the_count() -> None:
    """review4 finding 3: 8 records of risk 0.5 with a null household each got 1 - 0.5^8 = 0.996 (one pooled
    household); now every entry refuses, Polars and SQL alike."""
    df = pl.DataFrame({"a": [1, 1, 2, 2, 3, 3, 4, 4], "hh": [None, None, None, 7, None, None, None, None]})
    con = duckdb.connect()
    con.register("t", df.to_arrow())
    calls = [
        lambda: pa.sdc.household_risk(df.with_columns(risk=pl.lit(0.5)), "hh").collect(),
        lambda: pa.sdc.global_risk(df, "a", household="hh"),
        lambda: measure(df, Measures(keys=("a",), household="hh")),
        lambda: pa_duckdb.sdc_risk("t", ["a"], connection=con, household="hh"),
    ]
    for call in calls:
        with pytest.raises(InvalidParameterError) as caught:
            call()
        assert str(caught.value).startswith("household column 'hh' has 7 null values;")


def test_the_reported_importance_is_sdcmicros() -> None:
    """review4 finding 7: details.importance was the internal rank (higher = suppressed first, from 0). Now it is
    sdcMicro's importance (1 = suppressed last): the one given, or the default's order as 1..m. By hand on PEOPLE:
    age has 3 categories (suppressed first: 3); sex and region 2 each, the later key first (region 2, sex 1)."""
    asked = {
        "hierarchies": {},
        "qids": KEYS,
        "k": 2,
        "method": "local_suppression",
        "insensitive": ["w", "hh", "income"],
    }
    default = pa.anonymize(PEOPLE, **asked).report
    assert default["details"]["importance"] == {"sex": 1, "age": 3, "region": 2}
    given = pa.anonymize(PEOPLE, **asked, importance={"sex": 2, "age": 1, "region": 3}).report
    assert given["details"]["importance"] == {"sex": 2, "age": 1, "region": 3}
    defs = schema()["$defs"]
    for report in (default, given):
        jsonschema.Draft202012Validator({"$defs": defs, **defs["local_suppression_details"]}).validate(
            report["details"]
        )
