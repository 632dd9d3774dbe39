"""polars_anon.utility on tiny tables with hand-known outcomes."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

from polars_anon import Hierarchy
from polars_anon.errors import ColumnNotFoundError, InvalidParameterError
from polars_anon.utility import evaluate, make_model, scenarios, split_rows, summarize, utility_grid

N = 60
CLEAN = pl.DataFrame({"x": np.tile([0.0, 1.0], N // 2), "y": np.tile(["<=50K", ">50K"], N // 2)})
FLIPPED = CLEAN.with_columns((1.0 - pl.col("x")).alias("x"))


def test_mlp_has_paper_000_settings():
    """Paper 000 §IV-C: 2 hidden layers (5, 2), relu, adam, lr 1e-3 constant, batch 200, 10 epochs, 500 max."""
    p = make_model("mlp", seed=7).get_params()
    assert (p["hidden_layer_sizes"], p["activation"], p["solver"]) == ((5, 2), "relu", "adam")
    assert (p["learning_rate"], p["learning_rate_init"], p["batch_size"]) == ("constant", 1e-3, 200)
    assert (p["n_iter_no_change"], p["max_iter"], p["random_state"]) == (10, 500, 7)
    assert make_model("tree").get_params()["criterion"] == "entropy"
    assert make_model("forest", max_depth=2).get_params()["max_depth"] == 2


def test_split_rows():
    train, test = split_rows(30, 1 / 3, seed=1)
    assert len(test) == 10 and len(train) == 20 and not set(train) & set(test)
    assert np.array_equal(split_rows(30, 1 / 3, seed=1)[1], test)
    assert not np.array_equal(split_rows(30, 1 / 3, seed=2)[1], test)


def test_grid_scores_hand_known():
    tables = {"clean": CLEAN, "flipped": FLIPPED}
    pairs = [("clean", "clean"), ("clean", "flipped")]
    out = utility_grid(tables, pairs, "y", model="tree", seeds=[0, 1, 2], scores=["accuracy", "auc", "f1"])
    assert out.columns == ["train", "test", "model", "score", "mean", "std", "n"]
    got = {(r["test"], r["score"]): (r["mean"], r["std"], r["n"]) for r in out.iter_rows(named=True)}
    assert got[("clean", "accuracy")] == (1.0, 0.0, 3)
    assert got[("clean", "auc")] == (1.0, 0.0, 3)
    assert got[("flipped", "accuracy")] == (0.0, 0.0, 3)  # the tree learnt x -> y; the test flips x
    assert got[("flipped", "f1")] == (0.0, 0.0, 3)
    raw = utility_grid(tables, pairs, "y", model="tree", seeds=[0, 1], scores=["accuracy"], folds=3, raw=True)
    assert raw.height == 2 * 3 * 2 and set(raw["fold"]) == {0, 1, 2}


def test_mlp_batch_above_the_training_rows_is_clipped_without_a_warning():
    """The papers' batch of 200 on a 40-row training set: the same fit as a batch of 40 (scikit-learn's own clip),
    without scikit-learn's warning (5 of the suite's warnings, from the utility benchmark's quick run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        a = evaluate(CLEAN, CLEAN, "y", model="mlp", seeds=[0], scores=["auc"], model_params={"max_iter": 5})
    n_train = len(split_rows(CLEAN.height)[0])
    params = {"max_iter": 5, "batch_size": n_train}
    assert a.equals(evaluate(CLEAN, CLEAN, "y", model="mlp", seeds=[0], scores=["auc"], model_params=params))


def test_mlp_runs_and_is_seeded():
    params = {"max_iter": 20, "batch_size": 32}  # the paper's 200 is more than these rows: sklearn warns and clips
    a = evaluate(CLEAN, CLEAN, "y", model="mlp", seeds=[0, 1], scores=["auc"], model_params=params)
    b = evaluate(CLEAN, CLEAN, "y", model="mlp", seeds=[0, 1], scores=["auc"], model_params=params)
    assert a.equals(b) and 0.0 <= a["mean"].item() <= 1.0


def test_summarize_std():
    raw = pl.DataFrame({"g": ["a", "a", "a", "b"], "value": [1.0, 2.0, 3.0, 5.0]})
    assert summarize(raw, ["g"]).rows() == [("a", 2.0, 1.0, 3), ("b", 5.0, 0.0, 1)]


def test_four_scenarios():
    """Paper 002 §4.1: 1 orig->orig, 2 anon->anon, 3 anon->orig, 4 orig->anon."""
    race = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    orig = pl.DataFrame({"race": np.tile(["a1", "b1", "a2", "b2"], 15), "y": np.tile(["p", "q", "p", "q"], 15)})
    anon = orig.with_columns(pl.col("race").str.to_uppercase().str.slice(0, 1))  # publish A / B
    out = scenarios(orig, anon, "y", {"race": race}, mapping="statistical", seeds=[0], scores=["accuracy"])
    assert out["scenario"].to_list() == [1, 2, 3, 4]
    assert out.select("train", "test").rows()[2] == ("anonymized", "original")
    # A -> p and B -> q survive generalization: every scenario is perfect
    assert out["mean"].to_list() == [1.0, 1.0, 1.0, 1.0]
    anon_root = orig.with_columns(pl.lit("*").alias("race"))
    rnd = scenarios(orig, anon_root, "y", {"race": race}, mapping="random", seeds=[0], scores=["accuracy"])
    assert rnd["mean"][0] == 1.0 and rnd["mean"][1] < 0.8  # the root keeps no signal


def test_errors():
    with pytest.raises(InvalidParameterError, match="model must be one of"):
        make_model("svm")
    with pytest.raises(InvalidParameterError, match="row-aligned"):
        utility_grid({"a": CLEAN, "b": CLEAN.head(10)}, [("a", "b")], "y")
    with pytest.raises(InvalidParameterError, match=r"tables 'a' and 'b' have different feature columns"):
        utility_grid({"a": CLEAN, "b": CLEAN.rename({"x": "w"})}, [("a", "b")], "y")
    with pytest.raises(InvalidParameterError, match=r"table 'c' in pairs is not among"):
        utility_grid({"a": CLEAN}, [("a", "c")], "y")
    with pytest.raises(ColumnNotFoundError, match="target 'z' not in the table"):
        evaluate(CLEAN, CLEAN, "z")
    with pytest.raises(InvalidParameterError, match=r"feature columns \['s'\] are not numeric"):
        evaluate(CLEAN.with_columns(s=pl.lit("u")), CLEAN.with_columns(s=pl.lit("u")), "y")
    with pytest.raises(InvalidParameterError, match="scores must be among"):
        evaluate(CLEAN, CLEAN, "y", model="tree", seeds=[0], scores=["r2"])
    with pytest.raises(InvalidParameterError, match="test_size must be in"):
        split_rows(10, 1.5)
    with pytest.raises(InvalidParameterError, match="seeds is empty"):
        evaluate(CLEAN, CLEAN, "y", seeds=[])
    for tables in ({}, {"a": CLEAN}):  # no pair: a bare StopIteration on no table, an empty frame on some (tidy32)
        with pytest.raises(InvalidParameterError, match=r"pairs is empty; give at least one \(train table, test"):
            utility_grid(tables, [], "y")
