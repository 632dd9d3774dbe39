"""Nulls in a sensitive attribute: one policy (``sensitive_null``), read the same way by every model and interface.

One table, classes by ``q``:  a = {x, x, null, null},  b = {y, x},  c = {null}.
Every figure below is worked by hand.

- ``"ignore"``: the non-null rows only. Table: x 3/4, y 1/4. a reads {x, x}, b {y, x}, c nothing
  (fails every model: measure 0 for distinct / entropy l-diversity, infinite for the others).
- ``"value"``: null is a value. Table: x 3/7, y 1/7, null 3/7.
- ``"error"`` (the default): refused, naming the model, the column and the 3 null rows.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.cli import main
from polars_anon.duckdb import load_hierarchies, register
from polars_anon.errors import NullValueError
from polars_anon.messages import SENSITIVE_NULL, setting
from polars_anon.privacy.evaluate import class_measures

T = pl.DataFrame({"q": ["a", "a", "a", "a", "b", "b", "c"], "s": ["x", "x", None, None, "y", "x", None]})
S = pa.Hierarchy.from_dict({"*": ["x", "y"]})
INF = math.inf
LN = math.log

# model -> ({policy: [measure of a, b, c]}, SQL macro call with '?' for the table and qids)
CASES = [
    (pa.LDiversity("s", l=2), {"ignore": [1, 2, 0], "value": [2, 2, 1]}, "anon_l_diversity(?, ?, 's', l := 2"),
    (
        pa.LDiversity("s", l=2, variant="entropy"),
        {"ignore": [1, 2, 0], "value": [2, 2, 1]},
        "anon_l_diversity(?, ?, 's', l := 2, variant := 'entropy'",
    ),
    (
        pa.LDiversity("s", l=2, variant="recursive", c=2),
        {"ignore": [INF, 1, INF], "value": [1, 1, INF]},
        "anon_l_diversity(?, ?, 's', l := 2, variant := 'recursive', c := 2",
    ),
    (
        pa.TCloseness("s", t=0.3),  # value: a = 1/2 (|1/2 - 3/7| + 1/7 + |1/2 - 3/7|) = 1/7
        {"ignore": [0.25, 0.25, INF], "value": [1 / 7, 3 / 7, 4 / 7]},
        "anon_t_closeness(?, ?, 's', t := 0.3",
    ),
    (
        pa.TCloseness("s", t=0.3, distance="ordered"),  # value: a cumulates (1/14, -1/14, 0) over m - 1 = 2
        {"ignore": [0.25, 0.25, INF], "value": [1 / 14, 0.25, 0.5]},
        "anon_t_closeness(?, ?, 's', t := 0.3, distance := 'ordered'",
    ),
    (
        pa.TCloseness("s", t=0.3, distance="hierarchical", hierarchy=S),  # two leaves under *: as equal
        {"ignore": [0.25, 0.25, INF]},
        "anon_t_closeness(?, ?, 's', t := 0.3, distance := 'hierarchical', hierarchy := 'h'",
    ),
    (
        pa.DeltaDisclosure("s", delta=1.0),
        {"ignore": [LN(4 / 3), LN(2), INF], "value": [LN(7 / 6), LN(3.5), LN(7 / 3)]},
        "anon_delta_disclosure(?, ?, 's', delta := 1.0",
    ),
    (
        pa.BetaLikeness("s", beta=1.0),
        {"ignore": [1 / 3, 1, INF], "value": [1 / 6, 2.5, 4 / 3]},
        "anon_beta_likeness(?, ?, 's', beta := 1.0",
    ),
    (
        pa.BetaLikeness("s", beta=1.0, variant="enhanced"),  # gains above -ln p: a's 1/3 > -ln(3/4), c's 4/3 > -ln(3/7)
        {"ignore": [INF, 1, INF], "value": [1 / 6, INF, INF]},
        "anon_beta_likeness(?, ?, 's', beta := 1.0, variant := 'enhanced'",
    ),
]
IDS = [m.describe() for m, _, _ in CASES]


def _with(model, policy: str):
    import dataclasses

    return dataclasses.replace(model, sensitive_null=policy)


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    """One connection with the macros registered (registering them is most of a macro call's time)."""
    out = duckdb.connect()
    register(out)
    load_hierarchies(out, {"h": S})
    out.register("t", T.to_arrow())
    return out


def _sql(con: duckdb.DuckDBPyConnection, macro: str, policy: str | None) -> list[tuple]:
    call = macro.replace("?", "'t'", 1).replace("?", "['q']", 1)
    call += f", sensitive_null := '{policy}')" if policy else ")"
    return con.sql(f"SELECT class.q, measure FROM {call} ORDER BY class.q").fetchall()


@pytest.mark.parametrize(("model", "want", "macro"), CASES, ids=IDS)
def test_every_model_reads_nulls_by_its_policy_in_python_and_sql(con, model, want, macro) -> None:
    for policy, measures in want.items():
        m = _with(model, policy)
        got = class_measures(T, ["q"], m)["measure"].to_list()
        assert got == pytest.approx(measures, abs=1e-12), policy
        sql = [v for _, v in _sql(con, macro, policy)]
        assert sql == pytest.approx(measures, abs=1e-12), policy
        status = pa.check(T, ["q"], [m])["models"][0]
        assert status["sensitive_null"] == policy
        assert status["violating_classes"] == sum(not _ok(m, v) for v in measures)
    # the default refuses, in Python and in SQL, with the same words, each way out in its own syntax (mend34: SQL
    # said "pass sensitive_null='ignore'", a Python keyword, where a macro takes sensitive_null := 'ignore')
    with pytest.raises(NullValueError) as python:
        pa.check(T, ["q"], [model])
    assert f"{model.name} on 's': column 's' holds 3 null values" in str(python.value)
    with pytest.raises(duckdb.Error) as sql_error:
        _sql(con, macro, None)

    def said(road: str) -> str:
        ways = {w: setting("sensitive_null", w, road) for w in ("ignore", "value")}  # type: ignore[arg-type]
        return SENSITIVE_NULL(where=f"{model.name} on 's'", attribute="s", n=3, **ways)

    assert str(python.value) == said("python") and "pass sensitive_null='ignore'" in said("python")
    assert said("sql") in str(sql_error.value) and "pass sensitive_null := 'ignore' (left out" in said("sql")
    assert "sensitive_null='" not in str(sql_error.value)


ALL_NULL = pl.DataFrame({"q": ["a", "a", "b"], "s": [None, None, None]}, schema={"q": pl.String, "s": pl.String})


@pytest.mark.parametrize(("model", "want", "macro"), CASES, ids=IDS)
def test_no_value_read_in_the_whole_table_fails_every_model(con, model, want, macro) -> None:
    """Every value null and ignored: no class shows a value (class c above, here the whole table), so each fails,
    also at l = 1: measure 0 for distinct / entropy l-diversity, infinite for the others, in Python and SQL."""
    import dataclasses

    m = _with(dataclasses.replace(model, l=1) if isinstance(model, pa.LDiversity) else model, "ignore")
    got = class_measures(ALL_NULL, ["q"], m)
    assert got["measure"].to_list() == [want["ignore"][2]] * 2 and not got["satisfied"].any()
    status = pa.check(ALL_NULL, ["q"], [m])["models"][0]
    assert not status["satisfied"] and status["violating_rows"] == 3
    con.register("all_null", ALL_NULL.to_arrow())
    call = macro.replace("?", "'all_null'", 1).replace("?", "['q']", 1).replace("l := 2", "l := 1")
    sql = con.sql(f"SELECT measure, satisfied FROM {call}, sensitive_null := 'ignore') ORDER BY class.q").fetchall()
    assert sql == [(want["ignore"][2], False)] * 2


def _ok(model, v: float) -> bool:
    if isinstance(model, pa.LDiversity):
        return v < model.c if model.variant == "recursive" else v >= model.l
    if isinstance(model, pa.TCloseness):
        return v <= model.t
    if isinstance(model, pa.DeltaDisclosure):
        return v < model.delta
    return v <= model.beta


def test_hierarchical_closeness_refuses_null_as_a_value() -> None:
    """No hierarchy has a null leaf: with sensitive_null='value' the null is refused as not a leaf."""
    m = pa.TCloseness("s", t=0.3, distance="hierarchical", hierarchy=S, sensitive_null="value")
    with pytest.raises(pa.errors.ValueNotInHierarchyError, match="None is not a leaf"):
        pa.check(T, ["q"], [m])


def test_a_policy_outside_the_choices_is_refused() -> None:
    with pytest.raises(pa.errors.InvalidParameterError, match=r"sensitive_null must be one of"):
        pa.LDiversity("s", l=2, sensitive_null="drop")  # type: ignore[arg-type]


H = {"q": pa.Hierarchy.suppression(["a", "b", "c"])}


def test_anonymize_enforces_and_reports_the_policy() -> None:
    """t <= 0.3, at most 1 row suppressed. ignore: a (0.25) and b (0.25) hold, c (no value) is suppressed.
    value: b (3/7) and c (4/7) fail, 3 rows > 1, so q goes to '*' (one class, distance 0)."""
    ignore = pa.anonymize(
        T, hierarchies=H, k=1, max_suppressed=1, privacy=[pa.TCloseness("s", 0.3, sensitive_null="ignore")]
    )
    ignore.collect()
    status = ignore.report["privacy"][0]
    assert ignore.report["suppressed"] == 1 and ignore.report["details"]["levels"] == {"q": 0}
    assert status["sensitive_null"] == "ignore" and status["max_measure"] == pytest.approx(0.25)
    value = pa.anonymize(
        T, hierarchies=H, k=1, max_suppressed=1, privacy=[pa.TCloseness("s", 0.3, sensitive_null="value")]
    )
    value.collect()
    assert value.report["suppressed"] == 0 and value.report["details"]["levels"] == {"q": 1}
    assert value.report["privacy"][0]["max_measure"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(NullValueError, match="holds 3 null values"):
        pa.anonymize(T, hierarchies=H, k=1, privacy=[pa.TCloseness("s", 0.3)]).collect()
    duck = pa.anonymize(
        T,
        hierarchies=H,
        k=1,
        max_suppressed=1,
        engine="duckdb",
        privacy=[pa.TCloseness("s", 0.3, sensitive_null="ignore")],
    )
    duck.collect()
    assert duck.report["suppressed"] == 1 and duck.report["privacy"][0]["max_measure"] == pytest.approx(0.25)


def test_job_file_and_cli_take_the_policy(tmp_path: Path, capsys) -> None:
    T.write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    text = (
        'input = "in.parquet"\noutput = "out.parquet"\nk = 1\nmax_suppressed = 1\nmethod = "fulldomain"\n'
        '[[privacy]]\nmodel = "l-diversity"\nattribute = "s"\nl = 2\nsensitive_null = "{}"\n'
        '[qids.q]\nhierarchy = "suppress"\n'
    )
    job.write_text(text.format("error"))
    assert main(["anonymize", str(job)]) == 2
    assert "l-diversity on 's': column 's' holds 3 null values" in capsys.readouterr().err
    job.write_text(text.format("ignore"))
    assert main(["anonymize", str(job)]) == 0  # a (1 value) and c (none) fail: 5 rows, so q = '*'
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert report["privacy"][0]["sensitive_null"] == "ignore" and report["details"]["levels"] == {"q": 1}
    assert report["privacy"][0]["min_measure"] == 2.0  # {x, x, y, x}: two values
    capsys.readouterr()
    base = ["check", str(tmp_path / "in.parquet"), "--qids", "q", "--k", "1", "--model"]
    assert main([*base, '{model = "l-diversity", attribute = "s", l = 2, sensitive_null = "value"}']) == 1
    got = json.loads(capsys.readouterr().out)["models"][0]
    assert (got["violating_classes"], got["max_measure"]) == (1, 2.0)  # c = {null}: one value
    assert main([*base, '{model = "l-diversity", attribute = "s", l = 2}']) == 2
    assert "holds 3 null values" in capsys.readouterr().err
