"""Full-domain objectives on ARX Adult: ARX's own expected values and optima, and an exhaustive walk.

ARX's test suite (arx-deidentifier/arx, ``src/test/org/deidentifier/arx/test``) runs
its optimal search on ``data/adult.csv`` with every hierarchy in the folder as a
quasi-identifier, except the sensitive column it names (``occupation`` in
``TestUtilityMetrics*``). The expected numbers below are copied from those files
(named per test); ARX rounds each per-attribute loss down to 1e-10, hence the
tolerance on ``loss``. Skipped without ../shared/data.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.algorithms import Task
from polars_anon.algorithms.fulldomain import Lattice, search
from polars_anon.algorithms.objectives import Settings, make_objective
from tests.conftest import ADULT_QIDS
from tests.lattice_reference import optimum, tabulate

ARX9 = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
ARX8 = [q for q in ARX9 if q != "occupation"]  # TestUtilityMetrics*: occupation is the sensitive attribute


_TUPLES: dict[tuple[str, ...], pl.DataFrame] = {}


def tuples(adult: pl.DataFrame, qids: list[str]) -> pl.DataFrame:
    """Adult's class aggregates over `qids`, computed once per qid list (every test reads the same Adult)."""
    key = tuple(qids)
    if key not in _TUPLES:
        _TUPLES[key] = adult.group_by(qids).len("size").with_columns(pl.col("size").cast(pl.UInt32)).sort(qids)
    return _TUPLES[key]


@pytest.fixture(scope="module")
def hs(adult_dir) -> dict[str, pa.Hierarchy]:
    return {q: pa.Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in ARX9}


@pytest.fixture(scope="module")
def arx8(adult: pl.DataFrame, hs: dict[str, pa.Hierarchy]) -> Lattice:
    return Lattice(Task(tuples(adult, ARX8), ARX8, {q: hs[q] for q in ARX8}, 5))


# TestUtilityMetrics (k = 5): the objective at given transformations (suppressing every class below k)
UTILITY = {
    ("aecs", ()): {
        (0, 3, 1, 0, 0, 1, 1, 0): 53.38407079646018,
        (1, 2, 1, 2, 0, 2, 0, 1): 93.96261682242991,
        (0, 1, 1, 0, 0, 0, 0, 0): 30.683621566632755,
        (0, 3, 1, 2, 3, 1, 2, 1): 837.8333333333334,
        (0, 0, 0, 0, 0, 0, 0, 0): 29.113899613899616,
    },
    ("entropy", ()): {
        (0, 1, 0, 1, 0, 2, 1, 1): 199996.96695661292,
        (0, 2, 1, 2, 2, 0, 0, 0): 253206.5135958653,
        (1, 0, 0, 1, 2, 2, 0, 1): 198394.0850062312,
        (0, 0, 0, 0, 0, 0, 0, 0): 268778.22471939825,
    },
    ("discernibility", ()): {
        (0, 0, 1, 0, 3, 2, 0, 0): 1.10335369e8,
        (1, 2, 0, 2, 2, 1, 0, 0): 5.4541529e7,
        (0, 3, 1, 1, 1, 2, 0, 0): 3.4129719e7,
    },
    ("discernibility", (("monotonic", True),)): {
        (1, 1, 0, 1, 0, 2, 0, 0): 4426432.0,
        (1, 0, 1, 1, 3, 2, 2, 0): 8461812.0,
        (0, 0, 0, 0, 0, 0, 0, 0): 485542.0,
    },
    ("height", ()): {(0, 3, 0, 1, 3, 2, 1, 0): 10.0, (1, 4, 1, 2, 3, 2, 2, 1): 16.0},
    ("precision", ()): {
        (0, 0, 0, 2, 1, 2, 0, 0): 0.45063186570298164,
        (1, 0, 0, 1, 2, 1, 2, 1): 0.6099534734655084,
        (0, 1, 0, 0, 0, 0, 1, 0): 0.30136844373715277,
        (0, 0, 0, 0, 0, 0, 0, 0): 0.5090179696306611,
    },
    ("loss", (("aggregate", "rank"),)): {
        (0, 0, 0, 2, 0, 0, 0, 0): [1.0] + [0.3843909555] * 7,
        (0, 3, 1, 1, 1, 1, 0, 0): [1.0, 0.4535066198, 0.299545786, 0.220264444, 0.2196339765] + [0.0350772495] * 3,
        (1, 1, 1, 0, 1, 0, 1, 1): [1.0, 1.0, 1.0, 0.3444921234, 0.258026656, 0.1193682062, 0.0822889728, 0.0822889728],
    },
}


@pytest.mark.parametrize("objective", list(UTILITY), ids=lambda o: o[0] + "".join(f"-{k}={v}" for k, v in o[1]))
def test_values_match_arx(arx8: Lattice, objective: tuple[str, tuple]) -> None:
    metric, options = objective
    obj = make_objective(arx8, Settings(metric, **dict(options)))
    for vector, expected in UTILITY[objective].items():
        got = obj.value(arx8.evaluate(np.array(vector))).key.tolist()
        assert got == pytest.approx(np.atleast_1d(expected).tolist(), rel=1e-12, abs=1e-9), vector


# TestAnonymizationKAnonymity: non-uniform entropy, monotonic variant, 9 qids (the optimum and its value)
ENTROPY_OPTIMA = [
    (5, 0.04, (1, 0, 1, 1, 3, 2, 2, 0, 1), 255559.85455731067),
    (100, 0.04, (1, 1, 1, 1, 3, 2, 2, 1, 1), 379417.3460570988),
    (5, 0.0, (1, 2, 1, 1, 3, 2, 2, 1, 1), 407289.5388925293),
    (100, 0.0, (0, 4, 1, 1, 3, 2, 2, 1, 1), 453196.8932458743),
]


@pytest.mark.parametrize(("k", "limit", "vector", "value"), ENTROPY_OPTIMA)
def test_entropy_optimum_matches_arx(
    adult: pl.DataFrame, hs: dict, k: int, limit: float, vector: tuple, value: float
) -> None:
    budget = int(limit * adult.height)  # ARX: suppressed rows at most limit * rows
    found = search(
        Task(tuples(adult, ARX9), ARX9, hs, k), budget, Settings("entropy", monotonic=True, max_suppressed=budget)
    )
    assert tuple(found.levels.values()) == vector and found.score.value == pytest.approx(value, rel=1e-12)


# TestUtilityMetricsLoss: loss, rank aggregation, k = 5, suppression limit 100 %, 8 qids; weighted: ARX weighs
# the columns 1, 2, ... in file order. gs 1.0 (free generalization) ties every vector without suppression at 0.
W = {q: float(i + 1) for i, q in enumerate(ARX9)}
LOSS_OPTIMA = [
    (0.5, None, (0, 3, 0, 0, 1, 0, 0, 0), [0.297248193, 0.29678055] + [0.1297659306] * 6),
    (0.0, None, (0, 0, 0, 0, 0, 0, 0, 0), [0.0] * 8),
    (0.33, None, (0, 1, 0, 0, 0, 0, 0, 0), [0.2300344804] + [0.1976148796] * 7),
    (
        0.66,
        None,
        (0, 3, 0, 0, 1, 1, 1, 0),
        [0.2366229645, 0.2359393534, 0.1843930011, 0.1821869476] + [0.0624295471] * 4,
    ),
    (1.0, None, None, [0.0] * 8),
    (
        0.5,
        W,
        (1, 3, 0, 0, 0, 0, 0, 0),
        [
            0.1485312645,
            0.11552431683333335,
            0.1111111111111111,
            0.099020843,
            0.08251736916666667,
            0.06932099024444444,
            0.06601389533333334,
            0.0495104215,
        ],
    ),
    (0.0, W, (0, 0, 0, 0, 0, 0, 0, 0), [0.0] * 8),
    (
        0.33,
        W,
        (1, 3, 0, 0, 0, 0, 0, 0),
        [
            0.1111111111111111,
            0.0980306345,
            0.07624604905555556,
            0.06535375633333333,
            0.06025241473333332,
            0.054461463611111115,
            0.04356917088888889,
            0.032676878166666666,
        ],
    ),
    (
        0.66,
        W,
        (1, 3, 0, 0, 1, 0, 0, 0),
        [
            0.12176904994444444,
            0.1045686625,
            0.08133118194444446,
            0.06971244166666667,
            0.06287238585555556,
            0.04912232613333333,
            0.04647496111111111,
            0.03485622083333333,
        ],
    ),
]


@pytest.mark.parametrize(("gs", "weights", "vector", "value"), LOSS_OPTIMA)
def test_loss_rank_optimum_matches_arx(
    adult: pl.DataFrame, hs: dict, gs: float, weights: dict | None, vector: tuple | None, value: list
) -> None:
    chosen = {q: weights[q] for q in ARX8} if weights else None
    settings = Settings("loss", aggregate="rank", gs_factor=gs, weights=chosen, max_suppressed=adult.height)
    found = search(Task(tuples(adult, ARX8), ARX8, {q: hs[q] for q in ARX8}, 5), adult.height, settings)
    assert found.score.key.tolist() == pytest.approx(value, abs=1e-9)
    if vector is not None:  # gs 1.0: ARX's tie-break differs (ours: no suppression, then the lowest level sum)
        assert tuple(found.levels.values()) == vector


# Exhaustive: every objective, k in {5, 100}, at most 0 rows, 4 % of the rows or every row suppressed
CONFIGS = {
    "ncp": {"metric": "ncp"},
    "loss": {"metric": "loss"},
    "loss-rank-gs0.25-weighted": {
        "metric": "loss",
        "aggregate": "rank",
        "gs_factor": 0.25,
        "weights": [1, 2, 1, 1, 3, 1, 1, 1],
    },
    "entropy": {"metric": "entropy"},
    "entropy-monotonic": {"metric": "entropy", "monotonic": True},
    "discernibility": {"metric": "discernibility"},
    "discernibility-monotonic": {"metric": "discernibility", "monotonic": True},
    "aecs": {"metric": "aecs"},
    "height": {"metric": "height"},
    "precision": {"metric": "precision"},
    "kl_divergence": {"metric": "kl_divergence"},
    "ambiguity": {"metric": "ambiguity"},
}


@pytest.fixture(scope="module")
def exhaustive(adult: pl.DataFrame, adult_hierarchies: dict) -> dict:
    """Every vector of the 8-qid Adult lattice (6,480), every config, k 5 and 100: computed once for the module."""
    return tabulate(tuples(adult, ADULT_QIDS), ADULT_QIDS, adult_hierarchies, (5, 100), CONFIGS)


@pytest.mark.parametrize("limit", [0.0, 0.04, 1.0])
@pytest.mark.parametrize("k", [5, 100])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_search_equals_exhaustive(
    adult: pl.DataFrame, adult_hierarchies: dict, exhaustive: dict, name: str, k: int, limit: float
) -> None:
    budget = int(limit * adult.height)
    config = dict(CONFIGS[name])
    metric = str(config.pop("metric"))
    want = optimum(exhaustive[(k, name)], budget, metric, rows=adult.height)
    assert want is not None
    if "weights" in config:
        config["weights"] = dict(zip(ADULT_QIDS, map(float, config["weights"])))  # type: ignore[call-overload]
    settings = Settings(metric, max_suppressed=budget, **config)  # type: ignore[arg-type]
    found = search(Task(tuples(adult, ADULT_QIDS), ADULT_QIDS, adult_hierarchies, k), budget, settings)
    assert (tuple(found.levels.values()), found.suppressed) == (want[0], want[2])
    assert found.score.key.tolist() == pytest.approx(list(want[1]), rel=1e-9)
