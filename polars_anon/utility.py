"""Utility of an anonymized table: train a model on one table, test it on another (imports scikit-learn).

The protocols of the papers:

- paper 000 §IV-B/C: an MLP (2 hidden layers of 5 and 2 neurons, relu, adam, constant
  learning rate 1e-3, batch 200, stop after 10 epochs without improvement of the loss,
  at most 500 epochs), 2/3 of the rows to train and 1/3 to test, 10 seeds, AUC-ROC;
  models trained on the original table (Figure 3) or on a 100-anonymous table (Figure 4),
  tested on k-anonymous tables in each representation.
- paper 002 §4.1: four scenarios with a decision tree: 1 original -> original,
  2 anonymized -> anonymized, 3 anonymized -> original (train -> test),
  4 original -> anonymized; generalized values mapped back to leaves at random or by
  the original frequencies (:func:`polars_anon.encode.map_to_leaves`).

All tables given to one evaluation are row-aligned (the same people in the same
order: what :func:`polars_anon.anonymize` publishes when nothing is suppressed), so a
train/test split of row numbers applies to all of them. Readings taken: the seed
varies the model initialisation (paper 000: "a different random seed for
initialization"); the train/test split is fixed by `split_seed` unless `folds`
asks for seeded k-fold cross-validation (paper 002: 6 folds).

``import polars_anon`` does not load this module (it imports scikit-learn).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
import polars as pl
from sklearn.base import ClassifierMixin, clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score
from sklearn.model_selection import KFold
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier

from polars_anon._progress import bar as progress_bar
from polars_anon._validate import is_integer
from polars_anon.encode import (
    MAPPINGS,
    READS_ORIGINALS,
    REPRESENTATIONS,
    canonical,
    encode,
    leaf_frequencies,
    map_to_leaves,
)
from polars_anon.errors import ColumnNotFoundError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy

__all__ = [
    "MODELS",
    "SCENARIO_REPRESENTATIONS",
    "SCORES",
    "Scenarios",
    "evaluate",
    "make_model",
    "scenarios",
    "split_rows",
    "summarize",
    "utility_grid",
]

MODELS = ("mlp", "tree", "logistic", "forest")
"""Model names accepted by :func:`make_model`."""
SCORES = ("auc", "accuracy", "f1")
"""Score names: AUC-ROC (one-vs-rest for more than two classes), accuracy, F1 (macro above two classes)."""
_RAW_SCHEMA = {
    "train": pl.String,
    "test": pl.String,
    "model": pl.String,
    "seed": pl.Int64,
    "fold": pl.Int64,
    "score": pl.String,
    "value": pl.Float64,
}
"""The columns of :func:`utility_grid`'s rows: one per (train, test, seed, fold, score)."""


def make_model(name: str, seed: int = 0, **params: Any) -> ClassifierMixin:
    """A fresh scikit-learn classifier with the papers' settings.

    ``mlp``: paper 000 §IV-C; ``tree``: entropy decision tree (paper 002 uses ID3);
    ``logistic`` and ``forest``: paper 003 §3.4.2. `params` override the settings.

    >>> make_model("mlp").get_params()["hidden_layer_sizes"]
    (5, 2)
    """
    if name == "mlp":
        base: dict[str, Any] = {
            "hidden_layer_sizes": (5, 2),
            "activation": "relu",
            "solver": "adam",
            "learning_rate": "constant",
            "learning_rate_init": 1e-3,
            "batch_size": 200,
            "n_iter_no_change": 10,
            "max_iter": 500,
        }
        return MLPClassifier(**{**base, **params, "random_state": seed})
    if name == "tree":
        return DecisionTreeClassifier(**{"criterion": "entropy", **params, "random_state": seed})
    if name == "logistic":
        return LogisticRegression(**{"max_iter": 1000, **params, "random_state": seed})
    if name == "forest":
        return RandomForestClassifier(**{"n_estimators": 100, "n_jobs": 1, **params, "random_state": seed})
    raise InvalidParameterError(f"model must be one of {list(MODELS)}, got {name!r}")


def split_rows(n_rows: int, test_size: float = 1 / 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, test) row numbers: a seeded random 1 - test_size / test_size split.

    >>> train, test = split_rows(6, 1 / 3, seed=0)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(6))
    (4, 2, True)
    """
    if not 0 < test_size < 1:
        raise InvalidParameterError(f"test_size must be in (0, 1), got {test_size!r}")
    if n_rows < 2:
        raise InvalidParameterError(f"a train/test split needs at least 2 rows, got {n_rows}")
    perm = np.random.default_rng(seed).permutation(n_rows)
    n_test = min(max(1, round(n_rows * test_size)), n_rows - 1)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _xy(table: pl.DataFrame, target: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The features (Float32) and labels of table `name`, once the target is a column without missing values and
    every other column is numeric."""
    if target not in table.columns:
        raise ColumnNotFoundError(f"target {target!r} not in the table; its columns are {table.columns}")
    label = table[target]
    missing = label.is_null() | (label.is_nan() if label.dtype.is_float() else False)
    if missing.any():
        rows = missing.arg_true().head(5).to_list()
        raise InvalidParameterError(
            f"target {target!r} has {int(missing.sum())} missing values in table {name!r} (first rows: {rows}); "
            "a label is needed on every row: drop or fill those rows in every table (they are row-aligned)"
        )
    features = table.drop(target)
    bad = [c for c, t in features.schema.items() if not (t.is_numeric() or t == pl.Boolean)]
    if bad:
        raise InvalidParameterError(
            f"feature columns {bad} are not numeric; encode them first (polars_anon.encode) or drop them"
        )
    return features.to_numpy().astype(np.float32, copy=False), table[target].to_numpy()


def _scores(
    model: ClassifierMixin, X: np.ndarray, y: np.ndarray, scores: Sequence[str], positive: object
) -> dict[str, float]:
    out: dict[str, float] = {}
    classes = list(model.classes_)  # type: ignore[attr-defined]
    pred = model.predict(X)  # type: ignore[attr-defined]
    for s in scores:
        if s == "accuracy":
            out[s] = float(accuracy_score(y, pred))
        elif s == "f1":
            if len(classes) == 2:
                pos_label: Any = positive if positive is not None else classes[-1]  # a class label, of any type
                out[s] = float(f1_score(y, pred, pos_label=pos_label))
            else:
                out[s] = float(f1_score(y, pred, average="macro"))
        elif s == "auc":
            proba = model.predict_proba(X)  # type: ignore[attr-defined]
            if len(np.unique(y)) < 2:
                out[s] = float("nan")
            elif len(classes) == 2:
                pos = positive if positive is not None else classes[-1]
                out[s] = float(roc_auc_score(y == pos, proba[:, classes.index(pos)]))
            else:
                out[s] = float(roc_auc_score(y, proba, multi_class="ovr", labels=classes))
        else:
            raise InvalidParameterError(f"scores must be among {list(SCORES)}, got {s!r}")
    return out


def utility_grid(
    tables: Mapping[str, pl.DataFrame],
    pairs: Iterable[tuple[str, str]],
    target: str,
    *,
    model: str = "mlp",
    seeds: Iterable[int] = range(10),
    scores: Sequence[str] = ("auc",),
    test_size: float = 1 / 3,
    split_seed: int = 0,
    folds: int | None = None,
    positive: object = None,
    model_params: Mapping[str, Any] | None = None,
    raw: bool = False,
) -> pl.DataFrame:
    """Train on one table, test on another, for every (train, test) pair and seed.

    Parameters
    ----------
    tables
        name -> row-aligned table of numeric features and the `target` column.
    pairs
        (train table name, test table name); one model is fitted per train table,
        seed and fold, and scored on every test table paired with it.
    target
        The label column.
    model, model_params
        See :func:`make_model`.
    seeds
        Model seeds (and fold seeds when `folds` is given).
    scores
        Names from :data:`SCORES`.
    test_size, split_seed
        The fixed holdout split (paper 000: 1/3 tested) when `folds` is None.
    folds
        k-fold cross-validation instead (shuffled with each seed; paper 002: 6): an integer from 2 to the row count.
    positive
        The positive label for binary AUC and F1 (default: the last label in sort order): a value of the target
        column, of its type (``1`` for integer labels, not ``"1"``).

    Raises
    ------
    InvalidParameterError
        Before any model is fitted: an unknown score, `folds` outside 2..rows, a missing target value (null or NaN),
        a `positive` that is not a label, ``"f1"`` where a model trained on two labels would be tested on rows
        holding a third (scikit-learn cannot score that binary F1), or ``logistic`` on train rows of one label.
    raw
        Return one row per (train, test, seed, fold, score) instead of mean/std.

    Returns
    -------
    pl.DataFrame
        ``train, test, model, score, mean, std, n`` (std is the sample standard
        deviation over seeds and folds; 0 when n = 1), sorted.

    Examples
    --------
    >>> t = pl.DataFrame({"x": [0.0, 1.0] * 20, "y": ["a", "b"] * 20})
    >>> utility_grid({"t": t}, [("t", "t")], "y", model="tree", seeds=[0, 1], scores=["accuracy"])["mean"].item()
    1.0
    """
    options = _GridOptions(model, list(seeds), scores, test_size, split_seed, folds, positive, model_params)
    return _grid(tables, list(pairs), target, options, raw=raw)


class _GridOptions(NamedTuple):
    """:func:`utility_grid`'s options but the tables, the pairs, the target and `raw`."""

    model: str
    seeds: list[int]
    scores: Sequence[str]
    test_size: float
    split_seed: int
    folds: int | None
    positive: object
    model_params: Mapping[str, Any] | None


def _grid(
    tables: Mapping[str, pl.DataFrame],
    pairs: list[tuple[str, str]],
    target: str,
    options: _GridOptions,
    *,
    raw: bool = False,
    kept: Mapping[str, dict[tuple[int, int], Any]] | None = None,
) -> pl.DataFrame:
    """:func:`utility_grid`; `kept` maps a train table's name to its models by (seed, fold): a model found there is
    scored as it is, one fitted here is put there (:class:`Scenarios` keeps the original table's models so)."""
    o = options
    n = _check_grid(tables, pairs, o.seeds)
    _check_options(o.scores, o.folds, n)
    data = {name: _xy(t, target, name) for name, t in tables.items() if any(name in p for p in pairs)}
    base = make_model(o.model, 0, **(o.model_params or {}))
    tests_of = _tests_of(pairs)
    splits = {seed: _splits(n, seed, o.folds, o.test_size, o.split_seed) for seed in o.seeds}
    _check_labels(data, tests_of, splits, target, model=o.model, scores=o.scores, positive=o.positive)
    rows = []
    with progress_bar(
        total=len(o.seeds) * (o.folds or 1) * len(tests_of), desc=f"utility grid ({o.model})", unit="fit"
    ) as fits:
        for seed in o.seeds:
            for fold, (train_idx, test_idx) in enumerate(splits[seed]):
                for tr, tests in tests_of.items():
                    est = _model(kept, tr, (seed, fold), base, data[tr], train_idx)
                    for te in tests:
                        Xt, yt = data[te]
                        for s, v in _scores(est, Xt[test_idx], yt[test_idx], o.scores, o.positive).items():
                            rows.append((tr, te, o.model, seed, fold, s, v))
                    fits.update(1)
    out = pl.DataFrame(rows, schema=_RAW_SCHEMA, orient="row")
    return (
        out.sort("train", "test", "score", "seed", "fold")
        if raw
        else summarize(out, ["train", "test", "model", "score"])
    )


def _model(
    kept: Mapping[str, dict[tuple[int, int], Any]] | None,
    train: str,
    at: tuple[int, int],
    base: ClassifierMixin,
    xy: tuple[np.ndarray, np.ndarray],
    train_idx: np.ndarray,
) -> Any:
    """The model of table `train` for `at` (seed, fold): the one in `kept`, else fitted on the train rows (and kept
    there when `kept` keeps that table's models)."""
    models = None if kept is None else kept.get(train)
    if models is not None and at in models:
        return models[at]
    est = _fit(base, at[0], *xy, train_idx)
    if models is not None:
        models[at] = est
    return est


def _check_grid(tables: Mapping[str, pl.DataFrame], pairs: list[tuple[str, str]], seeds: list[int]) -> int:
    """The row count of the grid's tables, after refusing no seeds, no pairs, unknown tables, unequal columns or row
    counts."""
    if not seeds:
        raise InvalidParameterError("seeds is empty; give at least one seed")
    if not pairs:  # nothing to fit (and no table to count rows of)
        raise InvalidParameterError("pairs is empty; give at least one (train table, test table) pair")
    for tr, te in pairs:
        for name in (tr, te):
            if name not in tables:
                raise InvalidParameterError(f"table {name!r} in pairs is not among tables {sorted(tables)}")
    for tr, te in pairs:
        if tables[tr].columns != tables[te].columns:
            raise InvalidParameterError(
                f"tables {tr!r} and {te!r} have different feature columns ({tables[tr].width} vs {tables[te].width}); "
                "encode both with the same hierarchies (every representation but setbinary has one column per node)"
            )
    heights = {name: t.height for name, t in tables.items()}
    if len(set(heights.values())) > 1:
        raise InvalidParameterError(f"tables must be row-aligned (same row count), got {heights}")
    return next(iter(heights.values()))


def _check_options(scores: Sequence[str], folds: object, n: int) -> None:
    """Refuse, before any model is fitted, an unknown score name or a fold count that is not 2..`n`."""
    if isinstance(scores, str):
        raise InvalidParameterError(f"scores must be a list of names among {list(SCORES)}, got the string {scores!r}")
    bad = [s for s in scores if s not in SCORES]
    if bad:
        raise InvalidParameterError(f"scores must be among {list(SCORES)}, got {bad[0]!r}")
    if folds is not None and not (is_integer(folds) and 2 <= folds <= n):
        raise InvalidParameterError(
            f"folds must be an integer from 2 to the row count ({n}), got {folds!r}; or None for the fixed "
            "train/test split (test_size)"
        )


def _check_labels(
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    tests_of: Mapping[str, list[str]],
    splits: Mapping[int, list[tuple[np.ndarray, np.ndarray]]],
    target: str,
    *,
    model: str,
    scores: Sequence[str],
    positive: object,
) -> None:
    """Refuse, before any model is fitted, what scikit-learn would refuse after some were: a `positive` that is not
    a label of the target, train rows of one label for ``logistic``, and an F1 that a two-label model cannot score
    (test rows holding a label its train rows lack)."""
    labels = _sorted({v for tr in tests_of for v in np.unique(data[tr][1]).tolist()})
    if positive is not None and positive not in labels:
        raise InvalidParameterError(
            f"positive={positive!r} is not a label of target {target!r} (its labels: {labels[:5]}"
            f"{', ...' if len(labels) > 5 else ''}); give one of them, of the same type"
        )
    for seed, folds in splits.items():
        for fold, (train_idx, test_idx) in enumerate(folds):
            for tr, tests in tests_of.items():
                seen = set(np.unique(data[tr][1][train_idx]).tolist())
                if model == "logistic" and len(seen) < 2:
                    raise InvalidParameterError(
                        f"model 'logistic' needs two or more {target!r} labels in its train rows, but the train rows "
                        f"of table {tr!r} hold only {_sorted(seen)} (seed {seed}, fold {fold}); use more rows or "
                        "another split, or model 'tree'"
                    )
                for te in tests if "f1" in scores and len(seen) == 2 else []:
                    unseen = set(np.unique(data[te][1][test_idx]).tolist()) - seen
                    if unseen:
                        raise InvalidParameterError(_unseen_labels(target, tr, te, _sorted(unseen), seed, fold))


def _sorted(values: Iterable[object]) -> list[object]:
    """`values` in order (by their text when they do not compare)."""
    values = list(values)
    try:
        return sorted(values)  # type: ignore[type-var]
    except TypeError:
        return sorted(values, key=repr)


def _unseen_labels(target: str, train: str, test: str, unseen: list[object], seed: int, fold: int) -> str:
    """The refusal of F1 on test rows whose labels a two-label model never saw."""
    return (
        f"scores 'f1' cannot be computed: the test rows of table {test!r} hold {target!r} labels {unseen[:5]} that "
        f"the train rows of table {train!r} lack (seed {seed}, fold {fold}), and a model trained on two labels "
        "scores F1 on those two only; drop the rare labels' rows, use more rows or other folds, or score "
        "'accuracy' or 'auc'"
    )


def _tests_of(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Each train table's test tables, both in the order the pairs first name them."""
    tests_of: dict[str, list[str]] = {}
    for tr, te in pairs:
        tests_of.setdefault(tr, [])
        if te not in tests_of[tr]:
            tests_of[tr].append(te)
    return tests_of


def _splits(
    n: int, seed: int, folds: int | None, test_size: float, split_seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """A seed's (train, test) row numbers: the fixed holdout split, or the `folds` of a k-fold shuffled with it."""
    if folds is None:
        return [split_rows(n, test_size, split_seed)]
    return [(a, b) for a, b in KFold(folds, shuffle=True, random_state=seed).split(np.arange(n))]


def _fit(base: ClassifierMixin, seed: int, X: np.ndarray, y: np.ndarray, train_idx: np.ndarray) -> Any:
    """A clone of `base` with this seed, fitted on the train rows (convergence warnings silenced)."""
    est = cast(Any, clone(base)).set_params(random_state=seed)
    if isinstance(est, MLPClassifier) and est.batch_size != "auto" and est.batch_size > len(train_idx):
        est.set_params(batch_size=len(train_idx))  # what scikit-learn clips it to, without its warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X[train_idx], y[train_idx])
    return est


def summarize(raw: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Mean, standard deviation (ddof 1, 0 for a single value) and count of ``value`` per group, sorted.

    >>> summarize(pl.DataFrame({"g": ["a", "a"], "value": [1.0, 3.0]}), ["g"]).row(0)
    ('a', 2.0, 1.4142135623730951, 2)
    """
    return (
        raw.group_by(list(by))
        .agg(
            pl.col("value").mean().alias("mean"),
            pl.col("value").std().fill_null(0.0).alias("std"),
            pl.len().cast(pl.Int64).alias("n"),
        )
        .sort(list(by))
    )


def evaluate(train: pl.DataFrame, test: pl.DataFrame, target: str, **kwargs: Any) -> pl.DataFrame:
    """Train on `train`, test on `test` (row-aligned); see :func:`utility_grid` for the options.

    >>> t = pl.DataFrame({"x": [0.0, 1.0] * 20, "y": ["a", "b"] * 20})
    >>> evaluate(t, t, "y", model="logistic", seeds=[0], scores=["accuracy"])["mean"].item()
    1.0
    """
    return utility_grid({"train": train, "test": test}, [("train", "test")], target, **kwargs)


SCENARIO_REPRESENTATIONS = tuple(r for r in REPRESENTATIONS if r not in READS_ORIGINALS)
"""The representations :func:`scenarios` encodes with: the tables are mapped back to leaves first (`mapping`), so an
encoding that reads original values (``proportional``) or maps to leaves again (``random``, ``statistical``) does
not apply."""


def _check_scenario(mapping: object, representation: object) -> tuple[str, str]:
    """:func:`scenarios`' `mapping` and `representation`, lower-cased, once each is one it takes."""
    kind = str(mapping).lower()
    if kind not in MAPPINGS:
        hint = f"; {mapping!r} is a representation: pass representation={mapping!r}" if kind in REPRESENTATIONS else ""
        raise InvalidParameterError(
            f"mapping must be one of {list(MAPPINGS)} (how generalized values go back to leaves), got {mapping!r}{hint}"
        )
    try:
        rep = canonical(representation)  # case and separators as encode takes them ("fillParent")
    except InvalidParameterError:
        rep = None
    if rep not in SCENARIO_REPRESENTATIONS:
        raise InvalidParameterError(
            f"representation must be one of {list(SCENARIO_REPRESENTATIONS)} in scenarios, got {representation!r}: "
            "both tables are mapped back to leaves first (mapping=), so encodings that read the original values or "
            "map to leaves do not apply"
        )
    return kind, str(rep)


def scenarios(
    original: pl.DataFrame,
    anonymized: pl.DataFrame,
    target: str,
    hierarchies: Mapping[str, Hierarchy],
    *,
    mapping: str = "random",
    model: str = "tree",
    seeds: Iterable[int] = range(10),
    scores: Sequence[str] = ("accuracy",),
    folds: int | None = None,
    test_size: float = 1 / 3,
    split_seed: int = 0,
    positive: object = None,
    representation: str = "setbinary",
) -> pl.DataFrame:
    """Paper 002's four scenarios on a row-aligned original / anonymized pair.

    The anonymized qids are mapped back to leaves (`mapping`: ``random`` or
    ``statistical``, seeded with `split_seed`; statistical uses the original
    table's leaf counts), then both tables are encoded with `representation` over
    the leaves (``setbinary``: one-hot of the leaves; one of
    :data:`SCENARIO_REPRESENTATIONS`). Other feature columns must be numeric.
    `mapping` and `representation` are checked before anything is computed; the
    label checks are :func:`utility_grid`'s. Several anonymized versions of one
    original: :class:`Scenarios` trains the original's models once for all of them.

    Returns ``scenario`` (1-4), ``train``, ``test``, ``mapping``, ``model``, ``score``,
    ``mean``, ``std``, ``n``.
    """
    _check_scenario(mapping, representation)
    return Scenarios(
        original,
        target,
        hierarchies,
        model=model,
        seeds=seeds,
        scores=scores,
        folds=folds,
        test_size=test_size,
        split_seed=split_seed,
        positive=positive,
        representation=representation,
    )(anonymized, mapping=mapping)


_PAIRS = (
    ("original", "original"),
    ("anonymized", "anonymized"),
    ("anonymized", "original"),
    ("original", "anonymized"),
)
"""Paper 002's scenarios 1-4 as (train, test) tables."""


class Scenarios:
    """Paper 002's four scenarios (:func:`scenarios`) for any number of anonymized versions of one original table.

    What depends on the original alone is computed once and kept: its encoding, its leaf counts (the statistical
    mapping's) and the models trained on it, one per seed and fold (scenarios 1 and 4), half of the fits of a
    :func:`scenarios` call. Calling the object with an anonymized table gives what :func:`scenarios` gives for it,
    the same values. The options are :func:`scenarios`' and fixed for every call; `representation` is checked here,
    `mapping` at each call.

    >>> from polars_anon import Hierarchy
    >>> h = {"race": Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})}
    >>> orig = pl.DataFrame({"race": ["a1", "b1", "a2", "b2"] * 15, "y": ["p", "q", "p", "q"] * 15})
    >>> each = Scenarios(orig, "y", h, seeds=[0])
    >>> out = [each(orig.with_columns(race=pl.col("race").str.slice(0, 1).str.to_uppercase()), m) for m in MAPPINGS]
    >>> [frame["scenario"].to_list() for frame in out]
    [[1, 2, 3, 4], [1, 2, 3, 4]]
    """

    def __init__(
        self,
        original: pl.DataFrame,
        target: str,
        hierarchies: Mapping[str, Hierarchy],
        *,
        model: str = "tree",
        seeds: Iterable[int] = range(10),
        scores: Sequence[str] = ("accuracy",),
        folds: int | None = None,
        test_size: float = 1 / 3,
        split_seed: int = 0,
        positive: object = None,
        representation: str = "setbinary",
    ) -> None:
        _, self.representation = _check_scenario("random", representation)
        self.original, self.target, self.hierarchies = original, target, hierarchies
        self.options = _GridOptions(model, list(seeds), scores, test_size, split_seed, folds, positive, None)
        self._encoded: pl.DataFrame | None = None
        self._frequencies: dict[str, np.ndarray] | None = None
        self._models: dict[str, dict[tuple[int, int], Any]] = {"original": {}}

    def __call__(self, anonymized: pl.DataFrame, mapping: str = "random") -> pl.DataFrame:
        """The four scenarios of `anonymized` (row-aligned with the original), mapped back to leaves by `mapping`."""
        kind, _ = _check_scenario(mapping, self.representation)
        if kind == "statistical" and self._frequencies is None:
            self._frequencies = leaf_frequencies(self.original.lazy(), self.hierarchies)
        frequencies = self._frequencies if kind == "statistical" else None
        seed = self.options.split_seed
        mapped = map_to_leaves(anonymized, self.hierarchies, kind, frequencies=frequencies, seed=seed).collect()
        if self._encoded is None:
            self._encoded = encode(self.original, self.hierarchies, self.representation).collect()
        tables = {
            "original": self._encoded,
            "anonymized": encode(mapped, self.hierarchies, self.representation).collect(),
        }
        out = _grid(tables, list(_PAIRS), self.target, self.options, kept=self._models)
        number = pl.DataFrame(
            {"train": [p[0] for p in _PAIRS], "test": [p[1] for p in _PAIRS], "scenario": [1, 2, 3, 4]}
        )
        return (
            out.join(number, on=["train", "test"])
            .with_columns(pl.lit(kind).alias("mapping"))
            .select("scenario", "train", "test", "mapping", "model", "score", "mean", "std", "n")
            .sort("scenario", "score")
        )
