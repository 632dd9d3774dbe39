"""Log-linear model risk (sdcMicro's ``modRisk``; Skinner and Holmes 1998, Skinner and Shlomo 2008).

The sample counts ``f_j`` of the cells ``j`` of the key variables' full cross-classification are taken as Poisson
with means ``lambda_j`` given by a log-linear model (main effects, and the two-way interactions asked for), fitted
on the cells; with ``p_j`` the cell's inclusion probability (the sum of ``1 / w`` over its records, as sdcMicro
computes it), two global risks are estimated over the sample uniques::

    risk1 = sum_{j: f_j = 1} exp(-(1 - p_j) lambda_j) / n_cells             # sample uniques that are population uniques
    risk2 = sum_{j: f_j = 1} (1 - exp(-v_j)) / v_j / n_cells, v_j = (1 - p_j) lambda_j     # correct matches

where ``n_cells`` counts the cells kept: ``0 < f_j <= bound`` and not fitted to 0 (sdcMicro's normalization). The
methods are sdcMicro's:

* ``"default"``: Poisson regression of the counts on the model;
* ``"CE"`` (Clogg and Eliason): the same with the offset ``log(f_j / F_j + 0.1)`` (``F_j`` the cell's weight sum; 0
  for an empty cell, so ``log 0.1``);
* ``"PML"`` (pseudo maximum likelihood): the response is ``round(F_j * n / sum(w))``;
* ``"weightedLLM"``: the cell's weight sum ``F_j`` is one more covariate;
* ``"IPF"``: iterative proportional fitting of the main effects (no interactions, as in sdcMicro).

The counts are one group-by over the records (it streams); the fit runs on the cells of the cross-classification
(at most ``max_cells``) by iteratively reweighted least squares, to a relative change of the deviance below 1e-12
(R's ``glm`` stops at 1e-8, so figures agree with sdcMicro's to about 1e-9). Records with a missing key value are
left out of the model and of the risk, as R's ``glm`` and ``xtabs`` leave them out in sdcMicro.

>>> import polars as pl
>>> lf = pl.LazyFrame({"a": ["x", "x", "y", "y", "y"], "b": [1, 2, 1, 1, 2], "w": [10.0] * 5})
>>> res = model_risk(lf, ["a", "b"], "w")   # independence: lambda = 1.2, 0.8, 1.8, 1.2; p = 0.1 per unique
>>> round(res.risk1, 6), res.n_cells        # (2 exp(-0.9 * 1.2) + exp(-0.9 * 0.8)) / 4
(0.291486, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_columns, is_integer, names_list, refuse_built_names
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import KEYS_EMPTY, NOT_NAMES
from polars_anon.sdc.frequencies import check_weights, exact_sum

__all__ = ["ModelMethod", "ModelRisk", "cell_counts", "check_cells", "fit_cells", "model_risk", "risks_of_fit"]

ModelMethod = Literal["default", "CE", "PML", "weightedLLM", "IPF"]


MODEL_COLUMNS = ("counts", "weights", "incl_prob", "lambda")
"""The columns of :attr:`ModelRisk.fitted` beside the keys (no key is named so)."""


@dataclass(frozen=True)
class ModelRisk:
    """The figures of :func:`model_risk`.

    Attributes
    ----------
    risk1
        Expected share of sample uniques that are population uniques (sdcMicro's ``gr1``).
    risk2
        Expected share of correct matches of sample uniques (sdcMicro's ``gr2``).
    method
        The fit.
    n_cells
        Cells kept for the risk (``0 < f <= bound``, fitted above 0).
    fitted
        One row per cell of the cross-classification: the keys, ``counts``, ``weights``, ``incl_prob`` and the
        fitted ``lambda``.
    """

    risk1: float
    risk2: float
    method: str
    n_cells: int
    fitted: pl.DataFrame

    @property
    def risk1_pct(self) -> float:
        return 100.0 * self.risk1

    @property
    def risk2_pct(self) -> float:
        return 100.0 * self.risk2


def cell_counts(data: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], weight: str) -> pl.DataFrame:
    """Per observed key pattern: ``counts`` (records), ``weights`` (sum of weights), ``incl_prob`` (sum of 1/w).

    Materializes one row per pattern."""
    w = pl.col(weight).cast(pl.Float64)
    return (
        as_lazy(data)
        .group_by(list(keys))
        .agg(
            pl.len().cast(pl.Float64).alias("counts"),
            exact_sum(w).alias("weights"),
            exact_sum(1.0 / w).alias("incl_prob"),
        )
        .collect()
    )


def check_cells(counts: pl.DataFrame, keys: Sequence[str], weight: str) -> None:
    """Refuse key cells whose inclusion probabilities sum above their record count (``sum 1/w > f``: weights below
    1), as :func:`~polars_anon.sdc.risk.individual_risk` refuses ``Fk < fk``: there ``v = (1 - p) lambda`` turns
    negative and the risks, shares of sample uniques, exceed 1. `counts` is :func:`cell_counts`' frame.

    >>> cells = pl.DataFrame({"a": ["x", "y"], "counts": [2.0, 1.0], "weights": [4.0, 0.5], "incl_prob": [1.0, 2.0]})
    >>> check_cells(cells, ["a"], "w")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: model risk: weight column 'w': 1 key cells have weights below 1 \
(their 1/w sum above the record count; first: ('y',)); sampling weights must be >= 1
    """
    low = counts.filter(pl.col("incl_prob") > pl.col("counts") * (1.0 + 1e-12))
    if low.height:
        first = low.sort(list(keys), nulls_last=True).select(list(keys)).row(0)
        raise InvalidParameterError(
            f"model risk: weight column {weight!r}: {low.height} key cells have weights below 1 (their 1/w sum above "
            f"the record count; first: {first}); sampling weights must be >= 1"
        )


def _design(grid: pl.DataFrame, keys: list[str], interactions: Sequence[tuple[str, str]]) -> np.ndarray:
    """Intercept, treatment dummies per key (first level the reference), products for each interaction."""
    cols = [np.ones(grid.height)]
    dummies: dict[str, list[np.ndarray]] = {}
    for k in keys:
        codes = grid[k].rank("dense").fill_null(0).to_numpy()
        levels = np.unique(codes)
        dummies[k] = [(codes == lv).astype(np.float64) for lv in levels[1:]]
        cols += dummies[k]
    for a, b in interactions:
        cols += [x * y for x in dummies[a] for y in dummies[b]]
    return np.column_stack(cols)


def _poisson(x: np.ndarray, y: np.ndarray, offset: np.ndarray, tol: float = 1e-12, max_iter: int = 200) -> np.ndarray:
    """Fitted means of a Poisson log-linear model by IRLS (R's glm start: mu = y + 0.1)."""
    mu = y + 0.1
    eta = np.log(mu)
    dev_old = math.inf
    for _ in range(max_iter):
        z = eta - offset + (y - mu) / mu
        sw = np.sqrt(mu)
        beta, *_ = np.linalg.lstsq(x * sw[:, None], z * sw, rcond=None)
        eta = x @ beta + offset
        mu = np.exp(eta)
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = 2.0 * float(np.sum(np.where(y > 0, y * np.log(y / mu), 0.0) - (y - mu)))
        if abs(dev - dev_old) / (abs(dev) + 0.1) < tol:
            break
        dev_old = dev
    return mu


def _ipf(grid: pl.DataFrame, keys: list[str], y: np.ndarray, tol: float = 1e-12, max_iter: int = 1000) -> np.ndarray:
    """Iterative proportional fitting of the one-way margins (the independence model)."""
    codes = [grid[k].rank("dense").fill_null(0).to_numpy().astype(np.int64) for k in keys]
    fit = np.ones_like(y)
    for _ in range(max_iter):
        before = fit.copy()
        for c in codes:
            target = np.bincount(c, weights=y)
            current = np.bincount(c, weights=fit)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(current > 0, target / current, 0.0)
            fit = fit * ratio[c]
        if np.max(np.abs(fit - before)) < tol:
            break
    return fit


def fit_cells(
    counts: pl.DataFrame,
    keys: Sequence[str],
    method: ModelMethod = "default",
    interactions: Sequence[tuple[str, str]] = (),
    max_cells: int = 2_000_000,
) -> pl.DataFrame:
    """The cross-classification of the observed key values with ``counts``, ``weights``, ``incl_prob`` (0 for an
    empty cell) and the fitted ``lambda`` (see the module docstring). `counts` is :func:`cell_counts`'s."""
    keys = list(keys)
    check_choice("method", method, get_args(ModelMethod))
    if method == "IPF" and interactions:
        raise InvalidParameterError(
            "model risk method 'IPF' fits main effects only; drop interactions or use 'default'"
        )
    if not isinstance(interactions, (list, tuple)) or not all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in interactions
    ):
        raise InvalidParameterError(
            f"model risk: interactions must be a list of key pairs such as [('sex', 'age')], got {interactions!r}"
        )
    if not is_integer(max_cells) or max_cells < 1:
        raise InvalidParameterError(f"model risk: max_cells must be an integer >= 1, got {max_cells!r}")
    for a, b in interactions:
        if a not in keys or b not in keys or a == b:
            raise InvalidParameterError(f"interaction ({a!r}, {b!r}) must name two different keys of {keys}")
    values = [counts.select(pl.col(k).unique().sort(nulls_last=True)) for k in keys]
    size = math.prod(v.height for v in values)
    if size > max_cells:
        raise InvalidParameterError(
            f"model risk: the cross-classification of {keys} has {size:,} cells, above max_cells={max_cells:,}; "
            "use fewer or coarser keys"
        )
    grid = values[0]
    for v in values[1:]:
        grid = grid.join(v, how="cross")
    grid = grid.join(counts, on=keys, how="left", nulls_equal=True, maintain_order="left").with_columns(
        pl.col("counts", "weights", "incl_prob").fill_null(0.0)
    )
    y = grid["counts"].to_numpy()
    wsum = grid["weights"].to_numpy()
    if method == "IPF":
        lam = _ipf(grid, keys, y)
    else:
        x = _design(grid, keys, interactions)
        offset = np.zeros(grid.height)
        response = y
        if method == "CE":
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(wsum > 0, y / wsum, 0.0)
            offset = np.log(ratio + 0.1)
        elif method == "PML":
            response = np.round(wsum * (y.sum() / wsum.sum()))
        elif method == "weightedLLM":
            x = np.column_stack([x, wsum])
        lam = _poisson(x, response, offset)
    return grid.with_columns(pl.Series("lambda", lam))


def model_risk(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    weight: str,
    method: ModelMethod = "default",
    interactions: Sequence[tuple[str, str]] = (),
    bound: float = math.inf,
    max_cells: int = 2_000_000,
) -> ModelRisk:
    """Log-linear model risk of a sample (sdcMicro's ``modRisk``; see the module docstring).

    Parameters
    ----------
    keys
        The key variables (the model's main effects).
    weight
        Column of sampling weights.
    method
        ``"default"``, ``"CE"``, ``"PML"``, ``"weightedLLM"`` or ``"IPF"``.
    interactions
        Two-way interactions, as pairs of keys.
    bound
        Only cells with ``0 < f <= bound`` count (sdcMicro's ``bound``).
    max_cells
        Bound on the cells of the cross-classification.

    Examples
    --------
    sdcMicro's ``test_modRisks.R`` (ten records, three keys, weights 100), ``method="default"``:

    >>> lf = pl.LazyFrame({"Var1": list("BCBCCABCBB"), "Var2": [2, 1, 2, 2, 1, 2, 1, 1, 1, 2],
    ...                    "Var3": [5, 4, 4, 5, 4, 4, 3, 3, 2, 2], "weights": [100.0] * 10})
    >>> res = model_risk(lf, ["Var1", "Var2", "Var3"], "weights")
    >>> round(res.risk1, 3), round(res.risk2, 3)
    (0.553, 0.705)
    """
    lf = as_lazy(data)
    keys = names_list(keys, "keys")
    if not keys:
        raise InvalidParameterError(KEYS_EMPTY(what="keys"))
    if not isinstance(weight, str):  # None was named as a column: "model risk columns [None] not in the frame"
        raise InvalidParameterError(
            NOT_NAMES(what="model risk: weight", takes="a column name (the model reads sampling weights)", value=weight)
        )
    check_columns(lf, [*keys, weight], "model risk columns")
    refuse_built_names(keys, MODEL_COLUMNS, "model_risk: key", "model_risk's fitted cells hold", helpers=False)
    if not (isinstance(bound, (int, float)) and bound > 0):
        raise InvalidParameterError(f"bound must be a number > 0, got {bound!r}")
    check_weights(lf, weight)  # numeric, none missing, NaN, infinite or not above 0: the values named
    counts = cell_counts(lf, keys, weight).drop_nulls(keys)  # as R's glm and xtabs: cells with a missing key left out
    if counts.height == 0:
        raise InvalidParameterError(_no_complete_row(lf, keys))
    check_cells(counts, keys, weight)
    fitted = fit_cells(counts, keys, method, interactions, max_cells)
    risk1, risk2, n_cells = risks_of_fit(fitted, bound)
    return ModelRisk(risk1, risk2, method, n_cells, fitted)


def _no_complete_row(lf: pl.LazyFrame, keys: list[str]) -> str:
    """Why no cell is left to fit: the table has no rows, or every row misses a key value (an all-null key said "the
    table has no rows" of a 5-row table), naming the keys that are null in every row."""
    n = int(lf.select(pl.len()).collect().item())  # materializes: one count (the error's path only)
    if n == 0:
        return "model risk: the table has no rows"
    nulls = lf.select(pl.col(keys).null_count()).collect().row(0)  # materializes: one row
    empty = [k for k, m in zip(keys, nulls) if m == n]
    which = f"keys {empty} are null in every row" if empty else "each row misses one key value or more"
    return (
        f"model risk: none of the {n} rows has every key value ({which}); the model leaves out the rows with a "
        "missing key, as R's glm does"
    )


def risks_of_fit(fitted: pl.DataFrame, bound: float = math.inf) -> tuple[float, float, int]:
    """sdcMicro's two global risks and the cells kept, from :func:`fit_cells`'s frame (module docstring)."""
    kept = fitted.filter((pl.col("counts") > 0) & (pl.col("counts") <= bound) & (pl.col("lambda") > 0))
    lam, p, f = kept["lambda"].to_numpy(), kept["incl_prob"].to_numpy(), kept["counts"].to_numpy()
    uniq = f == 1  # only sample uniques count; a larger cell's incl_prob (a sum of 1/w) can exceed 1 and overflow exp
    v = (1.0 - p[uniq]) * lam[uniq]
    r1 = np.exp(-v)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(v != 0, -np.expm1(-v) / v, 1.0)
    n = max(kept.height, 1)
    return float(r1.sum() / n), float(r2.sum() / n), kept.height
