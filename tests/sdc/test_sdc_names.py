"""Columns named like the columns an SDC function or ``pa.risk`` builds (review: raw Polars errors before).

Per function, from what it adds: a name it adds to the user's table (or to the frame it returns) is refused by name;
a name it only uses inside works, with the same answer as under another name."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import sdc
from polars_anon.errors import InvalidParameterError

# 'v' has a missing value, so the wildcard reading matches patterns pair by pair
BASE = {"h": [1, 1, 2, 2, 3, 3], "v": [1, 1, 2, None, 2, 3], "w": [2.0, 2.0, 3.0, 2.0, 2.0, 2.0]}


def _named(name: str) -> pl.LazyFrame:
    """BASE with key 'v' named `name`."""
    return pl.LazyFrame(BASE).rename({"v": name})


@pytest.mark.parametrize("name", ["n_pattern", "n", "fk", "risk", "household_risk", "__anon_k1"])
def test_a_key_named_like_an_inner_column_gives_the_same_figures(name):
    """global_risk and local_suppression add nothing to the table; frequencies drops ``n_pattern``: any key name."""
    plain, named = _named("v"), _named(name)
    want = sdc.global_risk(plain, ["v", "h"], weight="w", missing="wildcard", household="h")
    got = sdc.global_risk(named, [name, "h"], weight="w", missing="wildcard", household="h")
    assert dataclasses.astuple(got) == pytest.approx(dataclasses.astuple(want), rel=1e-12)  # sums: to the last bits
    for method in ("heuristic", "exact"):
        want_ls = sdc.local_suppression(plain, ["v", "h"], k=2, method=method)
        got_ls = sdc.local_suppression(named, [name, "h"], k=2, method=method)
        assert got_ls.frame.collect().rename({name: "v"}).equals(want_ls.frame.collect())
        assert got_ls.suppressed == {name if v == "v" else v: n for v, n in want_ls.suppressed.items()}
    if name not in ("fk", "risk"):
        got = sdc.frequencies(named, [name, "h"], weight="w", missing="wildcard").collect()
        assert got.rename({name: "v"}).equals(
            sdc.frequencies(plain, ["v", "h"], weight="w", missing="wildcard").collect()
        )


def test_a_key_named_n_pattern_counts_by_hand():
    """Hand count: keys (n_pattern, h) with n_pattern missing once; wildcard fk of (None, 2) = its own + (2, 2)."""
    out = sdc.frequencies(_named("n_pattern"), ["n_pattern", "h"], missing="wildcard").collect()
    assert out["fk"].to_list() == [2.0, 2.0, 2.0, 2.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("call", "column"),
    [
        (lambda lf: sdc.frequencies(lf, ["fk", "h"]), "fk"),
        (lambda lf: sdc.frequencies(lf.rename({"fk": "Fk"}), ["h"], weight="w"), "Fk"),
        (lambda lf: sdc.pattern_frequencies(lf.rename({"fk": "n_pattern"}), ["n_pattern", "h"]), "n_pattern"),
        (lambda lf: sdc.individual_risk(lf.rename({"fk": "risk"}), ["h"]), "risk"),
        (lambda lf: sdc.suda2(lf.rename({"fk": "h_contribution"}).fill_null(0), ["h", "w"]), "h_contribution"),
        (lambda lf: sdc.model_risk(lf.rename({"fk": "lambda"}).fill_null(0), ["lambda", "h"], "w"), "lambda"),
        (lambda lf: sdc.household_risk(lf.with_columns(risk=0.5), "h", name="fk"), "fk"),
        (lambda lf: pa.risk(lf.rename({"fk": "size"}), ["size", "h"]), "size"),
    ],
)
def test_a_column_named_like_one_a_function_adds_is_refused_by_name(call, column):
    """frequencies adds fk/Fk, pattern_frequencies n_pattern, individual_risk risk, suda2 {key}_contribution (it
    overwrote the user's column), model_risk's fitted cells lambda (overwrote the key), pa.risk's classes size."""
    with pytest.raises(InvalidParameterError, match=rf"'{column}' is a name .*rename the column first"):
        call(_named("fk"))


def test_risk_keeps_names_it_does_not_build():
    """pa.risk builds only 'size' (and a population's 'count'): a qid 'fk' or '__anon_x' is measured as any other."""
    want = pa.risk(_named("v"), ["v", "h"])
    assert pa.risk(_named("__anon_x"), ["__anon_x", "h"]) == want
    assert pa.risk(_named("fk"), ["fk", "h"]) == want


@pytest.mark.parametrize("name", ["fk", "Fk", "n_pattern"])
def test_method_local_suppression_takes_a_qid_named_like_its_patterns_columns(name):
    """The road's local_suppression ran its patterns under the qids' own names (raw DuplicateError/SchemaError for a
    qid 'fk', 'Fk', 'n_pattern'); by hand: (3, y) is the one record below k=2, its first qid is blanked."""
    frame = pl.DataFrame({name: [1, 1, 2, 2, 3], "b": ["x", "x", "y", "y", "y"]})
    out = pa.anonymize(frame, qids=[name, "b"], hierarchies={}, k=2, method="local_suppression").collect()
    assert out[name].to_list() == ["1", "1", "2", "2", None] and out["b"].to_list() == ["x", "x", "y", "y", "y"]


def test_cli_risk_and_check_refuse_a_qid_named_size_in_one_line(tmp_path, capsys):
    """`polars-anon risk --qids size` ended in Polars' raw DuplicateError; pa.check, too (and a sensitive 'count').
    review12 9: pa.risk and pa.check/the road refuse it by one rule, in one message."""
    from polars_anon import cli
    from polars_anon.privacy import LDiversity
    from polars_anon.privacy.evaluate import check

    table = pl.DataFrame({"size": [1, 1, 2, 2], "count": ["a", "b", "a", "b"], "g": [1, 1, 2, 2]})
    table.write_parquet(tmp_path / "t.parquet")
    assert cli.main(["risk", str(tmp_path / "t.parquet"), "--qids", "size"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "qid column 'size' is a name the anonymizer reserves" in err
    with pytest.raises(InvalidParameterError, match=r"qid column 'size' is a name the anonymizer reserves"):
        check(table, ["size"], [LDiversity("count", 2)])
    with pytest.raises(InvalidParameterError, match=r"sensitive column 'count' is a name the anonymizer reserves"):
        check(table, ["g"], [LDiversity("count", 2)])


def test_a_column_named_like_a_perturbation_helper_is_refused_not_replaced():
    """pram dropped the user's column '__anon_u' (its uniform draw), and every perturbation met a column
    '__anon_row' with a raw DuplicateError: their helper columns' prefix is refused, naming the column."""
    lf = pl.LazyFrame({"g": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0], "y": [2.0, 1.0, 4.0, 3.0], "__anon_u": 1})
    for who, call in (
        ("pram", lambda: sdc.pram(lf, "g", {"a": {"b": 1.0}}, seed=1)),
        ("invariant_pram", lambda: sdc.invariant_pram(lf, "g", seed=1)),
        ("add_noise", lambda: sdc.add_noise(lf, ["x", "y"], seed=1)),
    ):
        with pytest.raises(
            InvalidParameterError, match=rf"{who}: column '__anon_u' .*lf.rename\({{'__anon_u': 'anon_u'}}"
        ):
            call()


def test_the_sdc_spec_refuses_every_name_a_single_figure_builds() -> None:
    """review12 9: SDC_COLUMNS was kept by hand as the union of the per-function tuples and already lagged behind
    them (MODEL_COLUMNS has 'lambda', the model fit's column): an [sdc] key 'lambda' was not refused by the spec."""
    from polars_anon.sdc.spec import Measures

    with pytest.raises(InvalidParameterError, match=r"sdc: key 'lambda' is a name the SDC figures use"):
        Measures(keys=("lambda",), model="default")
