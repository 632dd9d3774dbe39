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


def test_scenarios_of_several_tables_train_the_original_s_models_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """paper002_bench and utility_bench call the scenarios for many anonymized versions of one table, and every call
    trained the original's models again (scenarios 1 and 4: half of its fits). Scenarios keeps them: the same values
    as scenarios() per table, each (seed, fold) of the original fitted once."""
    import polars_anon.utility as utility
    from polars_anon.utility import Scenarios

    race = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    orig = pl.DataFrame({"race": np.tile(["a1", "b1", "a2", "b2"], 15), "y": np.tile(["p", "q", "p", "q", "q"], 12)})
    versions = [
        orig.with_columns(pl.col("race").str.to_uppercase().str.slice(0, 1)),
        orig.with_columns(race=pl.lit("*")),
    ]
    options = {"seeds": [0, 1], "folds": 3, "scores": ["accuracy", "f1"]}
    calls = [(v, m) for v in versions for m in ("random", "statistical")]
    expected = [scenarios(orig, v, "y", {"race": race}, mapping=m, **options) for v, m in calls]
    fits, fit = [], utility._fit
    monkeypatch.setattr(utility, "_fit", lambda *a: fits.append(1) or fit(*a))
    each = Scenarios(orig, "y", {"race": race}, **options)
    got = [each(v, m) for v, m in calls]
    assert all(g.equals(e) for g, e in zip(got, expected))
    assert len(fits) == 2 * 3 + len(calls) * 2 * 3  # the original's 6 models once; each anonymized table's 6 per call


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


@pytest.fixture
def no_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any model fit: the refusals below must come before the first one."""
    import polars_anon.utility as utility

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was fitted before the input was refused")

    monkeypatch.setattr(utility, "_fit", refuse)


BINARY = CLEAN.with_columns(pl.col("x").cast(pl.Int64).alias("y"))  # integer labels 0 / 1


@pytest.mark.usefixtures("no_fit")
def test_label_and_fold_refusals_name_the_parameter_before_any_fit():
    """Each reached scikit-learn as a raw ValueError ('1' is not in list, "Target is multiclass but
    average='binary'", KFold's n_splits, "Input y contains NaN") after models were fitted (hunt45)."""
    with pytest.raises(
        InvalidParameterError, match=r"positive='1' is not a label of target 'y' \(its labels: \[0, 1\]\)"
    ):
        evaluate(BINARY, BINARY, "y", model="tree", seeds=[0], scores=["auc"], positive="1")
    _, test_rows = split_rows(N)
    third = CLEAN.with_columns(
        pl.when(pl.int_range(N) == int(test_rows[0])).then(pl.lit("z")).otherwise("y").alias("y")
    )
    with pytest.raises(
        InvalidParameterError,
        match=r"scores 'f1' cannot be computed: the test rows of table 'test' hold 'y' labels \['z'\]",
    ):
        evaluate(third, third, "y", model="tree", seeds=[0], scores=["accuracy", "f1"])
    for folds in (1, 0, 61, 2.0, True):
        with pytest.raises(
            InvalidParameterError, match=rf"folds must be an integer from 2 to the row count \(60\), got {folds!r}"
        ):
            evaluate(CLEAN, CLEAN, "y", model="tree", seeds=[0], folds=folds)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="scores must be among"):
        evaluate(CLEAN, CLEAN, "y", model="tree", seeds=[0], scores=["accuracy", "r2"])
    holes = {
        "null": CLEAN.with_columns(pl.when(pl.int_range(N) == 3).then(None).otherwise("y").alias("y")),
        "nan": BINARY.with_columns(pl.when(pl.int_range(N).is_in([3, 8])).then(float("nan")).otherwise("y").alias("y")),
    }
    for kind, table in holes.items():
        n = 1 if kind == "null" else 2
        with pytest.raises(
            InvalidParameterError, match=rf"target 'y' has {n} missing values in table 'train' \(first rows: \[3"
        ):
            evaluate(table, table, "y", model="tree", seeds=[0])


@pytest.mark.usefixtures("no_fit")
def test_logistic_on_train_rows_of_one_label_is_refused_before_any_fit():
    """scikit-learn's LogisticRegression raised "This solver needs samples of at least 2 classes" (hunt45)."""
    one = CLEAN.with_columns(pl.lit("a").alias("y"))
    with pytest.raises(
        InvalidParameterError, match=r"model 'logistic' needs two or more 'y' labels .* hold only \['a'\]"
    ):
        evaluate(one, one, "y", model="logistic", seeds=[0], scores=["accuracy"])


def test_f1_with_every_test_label_seen_and_integer_positive_still_score():
    """The checks refuse only what scikit-learn cannot score: a third label in train and test rows alike is macro F1."""
    three = CLEAN.with_columns(pl.when(pl.int_range(N) % 3 == 0).then(pl.lit("z")).otherwise("y").alias("y"))
    assert evaluate(three, three, "y", model="tree", seeds=[0], scores=["f1"])["mean"].item() >= 0.0
    assert evaluate(BINARY, BINARY, "y", model="tree", seeds=[0], scores=["auc"], positive=0)["mean"].item() == 1.0


@pytest.mark.usefixtures("no_fit")
def test_scenarios_refuse_mapping_and_representation_by_their_names():
    """scenarios(representation='proportional') told the user to pass original= (which scenarios does not take);
    mapping='fillparent' was refused as 'how' (map_to_leaves' parameter)."""
    race = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    orig = pl.DataFrame({"race": np.tile(["a1", "b1", "a2", "b2"], 15), "y": np.tile(["p", "q", "p", "q"], 15)})
    h = {"race": race}
    for rep in ("proportional", "statistical", "random", "bogus"):
        with pytest.raises(
            InvalidParameterError,
            match=rf"representation must be one of \['fillparent', 'fillchild', 'oneclass', 'setbinary'\] in "
            rf"scenarios, got '{rep}'",
        ):
            scenarios(orig, orig, "y", h, seeds=[0], representation=rep)
    with pytest.raises(
        InvalidParameterError,
        match=r"mapping must be one of \['random', 'statistical'\] .*got 'fillparent'; 'fillparent' is a "
        r"representation: pass representation='fillparent'",
    ):
        scenarios(orig, orig, "y", h, seeds=[0], mapping="fillparent")
