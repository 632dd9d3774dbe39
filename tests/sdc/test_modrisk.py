"""Log-linear model risk (sdcMicro's modRisk) against sdcMicro: the values pinned in its test_modRisks.R (3
decimals) and, to 1e-9, the values sdcMicro 5.8.1 printed for the same data (12 decimals; R's glm stops at a relative
deviance change of 1e-8, so 1e-9 is what both fits share), with unequal weights and an interaction too."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from polars_anon.errors import InvalidParameterError
from polars_anon.sdc.modrisk import fit_cells, model_risk

# test_modRisks.R's sample_Data (set.seed(123); runif), as R printed it
SAMPLE = pl.DataFrame(
    {
        "Var1": list("BCBCCABCBB"),
        "Var2": [2, 1, 2, 2, 1, 2, 1, 1, 1, 2],
        "Var3": [5, 4, 4, 5, 4, 4, 3, 3, 2, 2],
        "weights": [100.0] * 10,
    }
)
KEYS = ["Var1", "Var2", "Var3"]
# sdcMicro 5.8.1, modRisk(sample_Data, method, ~Var1+Var2+Var3, "weights", bound): gr1, gr2
PRINTED = {
    ("default", math.inf): (0.552915951536, 0.705384209241),
    ("default", 1.5): (0.622030445478, 0.793557235397),
    ("CE", math.inf): (0.541680157934, 0.698679733343),
    ("CE", 1.5): (0.609390177676, 0.786014700011),
    ("PML", math.inf): (0.552915951536, 0.705384209241),
    ("PML", 1.5): (0.622030445478, 0.793557235397),
    ("weightedLLM", math.inf): (0.407966313196, 0.613254425551),
    ("weightedLLM", 1.5): (0.458962102346, 0.689911228744),
    ("IPF", math.inf): (0.552915951691, 0.705384209341),
    ("IPF", 1.5): (0.622030445652, 0.793557235509),
}
# test_modRisks.R's expectations, rounded to 3 decimals as there
PINNED = {("default", math.inf): (0.553, 0.705), ("CE", math.inf): (0.542, 0.699), ("PML", math.inf): (0.553, 0.705),
          ("weightedLLM", math.inf): (0.408, 0.613), ("default", 1.5): (0.622, 0.794), ("CE", 1.5): (0.609, 0.786),
          ("weightedLLM", 1.5): (0.459, 0.69), ("IPF", 1.5): (0.622, 0.794)}  # fmt: skip
# 60 records with unequal weights (R: set.seed(5); sample; runif) and what sdcMicro printed for them
UNEQUAL = pl.DataFrame({
    "a": [2, 3, 1, 3, 3, 1, 1, 1, 2, 3, 3, 3, 3, 2, 2, 3, 1, 4, 4, 2, 1, 4, 3, 1, 2, 4, 3, 2, 1, 2, 2, 3, 1, 2, 2, 4, 4,
          1, 3, 3, 3, 2, 2, 2, 4, 4, 1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 1, 3, 4, 4],
    "b": [1, 3, 3, 2, 1, 3, 3, 3, 2, 1, 2, 2, 1, 2, 3, 1, 3, 2, 1, 1, 2, 3, 1, 3, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 2, 1, 2,
          1, 2, 3, 2, 1, 2, 2, 3, 1, 2, 1, 3, 1, 1, 1, 3, 3, 1, 3, 3, 1, 2, 3],
    "c": [2, 1, 2, 1, 2, 2, 1, 1, 1, 1, 2, 1, 1, 1, 2, 1, 2, 2, 2, 2, 1, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 2, 1, 1, 2, 1, 2],
    "w": [36.7, 38.8, 28.2, 31.2, 13.3, 26.5, 16.8, 41.6, 38.9, 23.4, 27.1, 6.1, 19.6, 15.2, 9.9, 45.5, 5.8, 12.7, 24.9,
          47.6, 15.7, 49.8, 41, 30, 41.5, 9, 12, 40.5, 8.8, 7.7, 47.1, 35.5, 11.9, 28.4, 6.3, 23.9, 42.5, 44.6, 14.2,
          41.5, 49.7, 9.2, 28.2, 7.3, 10.6, 43.5, 18.3, 32.6, 10.1, 20.5, 12.8, 45.2, 7.7, 8.9, 47.5, 8.4, 33.6, 46,
          24.1, 6.1],
})  # R's data, a column a few lines (one value a line otherwise)  # fmt: skip
UNEQUAL_PRINTED = {
    "default": (0.043968760487, 0.120220656249),
    "CE": (0.035627287173, 0.112115968214),
    "PML": (0.062017781405, 0.136969557473),
    "weightedLLM": (0.081957178025, 0.153197482316),
    "IPF": (0.043968760487, 0.120220656249),
}


@pytest.mark.parametrize(("method", "bound"), list(PRINTED))
def test_sdcmicro_values(method: str, bound: float) -> None:
    res = model_risk(SAMPLE, KEYS, "weights", method, bound=bound)  # type: ignore[arg-type]
    assert (res.risk1, res.risk2) == pytest.approx(PRINTED[(method, bound)], abs=1e-9)
    if (method, bound) in PINNED:
        assert (round(res.risk1, 3), round(res.risk2, 3)) == PINNED[(method, bound)]


def test_fitted_frequencies_as_sdcmicro() -> None:
    fitted = fit_cells(
        model_risk(SAMPLE, KEYS, "weights").fitted.select(*KEYS, "counts", "weights", "incl_prob"), KEYS, "default"
    )
    # test_modRisks.R pins the 24 fitted values (2 decimals, R's cell order: Var1 fastest); the main-effects
    # fit is the independence model: lambda = n * prod(margin / n), here by hand
    n = 10.0
    m1, m2, m3 = {"A": 1, "B": 5, "C": 4}, {1: 5, 2: 5}, {2: 2, 3: 2, 4: 4, 5: 2}
    want = [n * (m1[a] / n) * (m2[b] / n) * (m3[c] / n) for a, b, c in fitted.select(KEYS).rows()]
    assert np.allclose(fitted["lambda"].to_numpy(), want, rtol=1e-9)
    r_order = fitted.sort("Var3", "Var2", "Var1")["lambda"].round(2).to_list()
    assert r_order == [
        0.1,
        0.5,
        0.4,
        0.1,
        0.5,
        0.4,
        0.1,
        0.5,
        0.4,
        0.1,
        0.5,
        0.4,
        0.2,
        1.0,
        0.8,
        0.2,
        1.0,
        0.8,
        0.1,
        0.5,
        0.4,
        0.1,
        0.5,
        0.4,
    ]


@pytest.mark.parametrize("method", list(UNEQUAL_PRINTED))
def test_unequal_weights_and_an_interaction(method: str) -> None:
    res = model_risk(UNEQUAL, ["a", "b", "c"], "w", method)  # type: ignore[arg-type]
    assert (res.risk1, res.risk2) == pytest.approx(UNEQUAL_PRINTED[method], abs=1e-9)
    if method == "default":
        both = model_risk(UNEQUAL, ["a", "b", "c"], "w", interactions=[("a", "b")])
        assert (both.risk1, both.risk2) == pytest.approx((0.061224021002, 0.135825832481), abs=1e-9)
        sample = model_risk(SAMPLE, KEYS, "weights", interactions=[("Var1", "Var2")])
        assert (sample.risk1, sample.risk2) == pytest.approx((0.533395941035, 0.692405899406), abs=1e-9)


def test_missing_keys_are_left_out_as_in_sdcmicro() -> None:
    # test_modRisks.R, "missing value" block, the sdcMicroObj tests (weights 100): bound 1.5
    data = pl.DataFrame(
        {
            "Var1": ["B", None, "B", "C", "C", "A", None, "C", None, "B"],
            "Var2": [2, 1, None, 2, None, 2, 1, 1, 1, None],
            "Var3": [5, None, 4, 5, 4, 4, 3, None, 2, 2],
            "weights": [100.0] * 10,
        }
    )
    pinned = {"default": 0.584, "CE": 0.573, "PML": 0.584, "weightedLLM": 0.372, "IPF": 0.584}
    for method, risk1 in pinned.items():
        assert round(model_risk(data, KEYS, "weights", method, bound=1.5).risk1, 3) == risk1  # type: ignore[arg-type]


def test_refusals() -> None:
    with pytest.raises(InvalidParameterError, match="'IPF' fits main effects only"):
        model_risk(SAMPLE, KEYS, "weights", "IPF", interactions=[("Var1", "Var2")])
    with pytest.raises(InvalidParameterError, match="above max_cells=10"):
        model_risk(SAMPLE, KEYS, "weights", max_cells=10)
    with pytest.raises(InvalidParameterError, match="method"):
        model_risk(SAMPLE, KEYS, "weights", "poisson")  # type: ignore[arg-type]


def test_model_risk_checks_every_weight():
    """review4 finding 5: a weight 0 or -5 was accepted silently, weights 0.5 gave risk1 = 2.216 (a share of sample
    uniques above 1) and a null weight read "must be > 0". Each is refused naming the value or the cell; the SDC
    figures ([sdc] model) refuse the cell the same way."""
    from polars_anon.sdc.measures import Measures, measure

    base = {"a": list("xxyyy"), "b": [1, 2, 1, 1, 2]}
    for w, words in (
        ([10.0, 10, 10, 0.0, 10], "weight column 'w' has 1 values that are not positive numbers (first: [0.0])"),
        ([10.0, 10, 10, -5.0, 10], "weight column 'w' has 1 values that are not positive numbers (first: [-5.0])"),
        ([10.0, None, 10, 10, 10], "weight column 'w' has 1 values that are not positive numbers (first: [None])"),
        (
            [0.5] * 5,
            "model risk: weight column 'w': 4 key cells have weights below 1 (their 1/w sum above the "
            "record count; first: ('x', 1))",
        ),
    ):
        with pytest.raises(InvalidParameterError) as caught:
            model_risk(pl.LazyFrame({**base, "w": w}), ["a", "b"], "w")
        assert str(caught.value).startswith(words)
    # cell (y, 1) holds weights 0.5 and 10: Fk = 10.5 >= fk = 2 passes individual risk, 1/w sums to 2.1 > 2
    mixed = pl.DataFrame({**base, "w": [10.0, 10.0, 0.5, 10.0, 10.0]})
    with pytest.raises(InvalidParameterError, match=r"1 key cells have weights below 1 .*first: \('y', 1\)"):
        measure(mixed, Measures(keys=("a", "b"), weight="w", model="default"))


def test_large_cells_no_overflow_and_no_risk():
    # a cell of hundreds of records has incl_prob (a sum of 1/w) far above 1: exp(-(1 - p) * lambda) overflowed with a
    # RuntimeWarning for cells that do not count; with no sample unique both risks are 0 (sdcMicro's sums over fk = 1)
    import warnings

    rng = np.random.default_rng(7)
    df = pl.DataFrame({"a": rng.integers(0, 3, 1500), "b": rng.integers(0, 2, 1500), "w": rng.uniform(1, 50, 1500)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = model_risk(df, ["a", "b"], "w")
    assert (got.risk1, got.risk2, got.n_cells) == (0.0, 0.0, 6)


def test_model_risk_says_what_is_wrong_with_its_weight_and_its_rows() -> None:
    """hunt42: weight=None said "model risk columns [None] not in the frame"; an all-null key said "the table has no
    rows" of a 5-row table."""
    lf = pl.LazyFrame({"a": ["x", "x", "y", "y", "y"], "b": [1, 2, 1, 1, 2], "w": [10.0] * 5})
    with pytest.raises(InvalidParameterError, match=r"^model risk: weight must be a column name .* got None$"):
        model_risk(lf, ["a", "b"], None)  # type: ignore[arg-type]
    no_a = lf.with_columns(a=pl.lit(None, pl.String))
    with pytest.raises(InvalidParameterError, match=r"none of the 5 rows has every key value \(keys \['a'\] are null"):
        model_risk(no_a, ["a", "b"], "w")
    scattered = lf.with_columns(a=pl.Series([None, "x", None, "y", None]), b=pl.Series([1, None, 2, None, 1]))
    with pytest.raises(InvalidParameterError, match=r"none of the 5 rows .*\(each row misses one key value or more\)"):
        model_risk(scattered, ["a", "b"], "w")
    with pytest.raises(InvalidParameterError, match=r"^model risk: the table has no rows$"):
        model_risk(lf.head(0), ["a", "b"], "w")
