"""Individual, global and household re-identification risk (Benedetti-Franconi; sdcMicro's ``indivRisk``
and ``measure_risk``).

A record's individual risk estimates ``E[1/F_k | f_k]``, the chance that an intruder who knows the
record's key pattern picks the right person among the ``F_k`` population units sharing it, when
``F_k`` given the sample count ``f_k`` is negative binomial with success probability
``p_k = f_k / Fk`` (``Fk`` the weighted count) [Benedetti & Franconi 1998; Franconi & Polettini 2004]::

    r_k = p_k * integral_0^1 u^(f_k - 1) / (p_k + (1 - p_k) u) du

* ``method="exact"``: this integral, evaluated exactly (closed forms for ``f_k`` = 1 and 2, a stable
  recurrence for ``p_k <= 1/2``, Gauss-Laguerre quadrature otherwise). For integer ``f_k`` it equals
  sdcMicro's alternating series, which loses precision for large classes.
* ``method="approx"``: sdcMicro's approximation ``p_k / (f_k - 1 + p_k)`` for ``f_k > 2`` (exact for
  ``f_k`` = 1 and 2).

As in sdcMicro, a pattern with ``fk == Fk`` (no sampling, or weights of 1) has risk ``1 / fk``, and
without a weight column the risk is ``1 / fk``. A non-integer ``fk`` (from ``alpha < 1``) uses the
approximation in both methods (sdcMicro returns 0 for ``1 < fk < 2``, which we do not copy).

Global risk is the mean individual risk; expected re-identifications its sum. Household risk
(sdcMicro's ``measure_risk(hid=...)``, the fast form): each record gets
``1 - prod(1 - r_i)`` over the members of its household.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_columns, refuse_built_names
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import NO_ROWS, RISK_COUNTS, RISK_NOT_FINITE, WEIGHTS_BELOW_COUNT
from polars_anon.sdc.frequencies import Missing, check_frequency_args, exact_sum, hidden_keys, patterns

__all__ = [
    "NEAR_ONE",
    "GlobalRisk",
    "RiskMethod",
    "benedetti_franconi",
    "check_households",
    "global_risk",
    "household_expected",
    "household_expr",
    "household_risk",
    "individual_risk",
    "near_one",
    "null_households",
    "risk_patterns",
]

RiskMethod = Literal["approx", "exact"]
RISK_COLUMNS = ("fk", "Fk", "risk")
"""The columns :func:`individual_risk` adds to the table (no column of its input is named so)."""
_HOUSEHOLD = "__anon_household"
_RECURRENCE_MAX_F = 2000  # exact recurrence up to this fk (p <= 1/2); quadrature beyond


def _exact(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p * int_0^1 u^(f-1) / (p + q u) du for integer f >= 3, 0 < p < 1, elementwise."""
    q = 1.0 - p
    out = np.empty_like(p)
    rec = (p <= 0.5) & (f <= _RECURRENCE_MAX_F)
    if rec.any():
        fr, pr = f[rec], p[rec]
        qr = 1.0 - pr
        integral = np.log(1.0 / pr) / qr  # I_1
        res = np.empty_like(pr)
        for s in range(2, int(fr.max()) + 1):  # I_s = (1/(s-1) - p I_{s-1}) / q; error shrinks by p/q <= 1
            integral = (1.0 / (s - 1) - pr * integral) / qr
            res[fr == s] = integral[fr == s]
        out[rec] = pr * res
    quad = ~rec
    if quad.any():  # u = exp(-x/f): int = (1/f) int_0^inf e^-x / (p + q e^(-x/f)) dx, Gauss-Laguerre
        x, wts = np.polynomial.laguerre.laggauss(120)
        fq, pq, qq = f[quad][:, None], p[quad][:, None], q[quad][:, None]
        vals = (wts[None, :] / (pq + qq * np.exp(-x[None, :] / fq))).sum(axis=1)
        out[quad] = p[quad] * vals / f[quad]
    return out


NEAR_ONE = 0.05
"""Below this ``q = 1 - fk / Fk`` (weights within 5 % of 1), the risk of ``fk`` = 1 or 2 is computed from its series
in ``q`` (:func:`near_one`): the closed forms subtract numbers that agree in their leading digits there, losing about
``eps / q^2`` (``fk`` = 2 at weights ``1 + 1e-9`` gave 1.5 instead of 0.5, as sdcMicro's ``indivRisk`` does; 3e-11
relative at ``1 + 1.5e-3``)."""

_TERMS = 13  # q^13 / 14 < 1e-18 for q < NEAR_ONE


def _horner(q: Any, start: int) -> Any:
    """``sum(q^j / (j + start) for j < _TERMS)`` by Horner's rule, for an array or a SQL expression (a str)."""
    last = 1 / (_TERMS - 1 + start)
    acc: Any = repr(last) if isinstance(q, str) else last
    for j in range(_TERMS - 2, -1, -1):
        acc = f"({1 / (j + start)!r} + {q} * {acc})" if isinstance(q, str) else 1 / (j + start) + q * acc
    return acc


def near_one(f: Any, q: Any) -> Any:
    """The risk of ``fk`` = 1 or 2 for ``q < NEAR_ONE`` from ``-ln(1 - q) = q + q^2/2 + q^3/3 + ...`` (``p = 1 - q``):
    ``fk`` = 1 is ``p ln(1/p) / q = p (1 + q/2 + q^2/3 + ...)``, ``fk`` = 2 is ``p/q - (p/q)^2 ln(1/p) = p - p^2 (1/2 +
    q/3 + q^2/4 + ...)``. Arrays `f`, `q`, or SQL expressions (str) of them: the SQL roads compute the same sums.

    >>> [round(float(r), 6) for r in near_one(np.array([1.0, 2.0]), np.array([1e-9, 1e-9]))]
    [1.0, 0.5]
    """
    if isinstance(q, str):
        one, two = f"(1 - {q}) * {_horner(q, 1)}", f"(1 - {q}) - (1 - {q}) * (1 - {q}) * {_horner(q, 2)}"
        return f"CASE WHEN {f} = 1 THEN {one} ELSE {two} END"
    p = 1.0 - q
    return np.where(f == 1, p * _horner(q, 1), p - p * p * _horner(q, 2))


def benedetti_franconi(
    fk: Sequence[float] | np.ndarray, big_fk: Sequence[float] | np.ndarray, method: RiskMethod = "approx"
) -> np.ndarray:
    """Individual risk from the sample count ``fk`` and the weighted count ``Fk`` of each pattern.

    Parameters
    ----------
    fk, big_fk
        Sample and weighted population counts (same length).
    method
        ``"approx"`` or ``"exact"`` (see the module docstring).

    Examples
    --------
    sdcMicro's ``test_indivRisk.R`` (a class of 3 with weights summing to 108):

    >>> [round(float(r), 8) for r in benedetti_franconi([3, 1], [108.0, 45.5], "exact")]
    [0.01355297, 0.08579129]
    >>> round(float(benedetti_franconi([3], [108.0], "approx")[0]), 8)
    0.01369863
    """
    check_choice("method", method, get_args(RiskMethod))
    f = np.asarray(fk, dtype=np.float64)
    big = np.asarray(big_fk, dtype=np.float64)
    if f.shape != big.shape:
        raise InvalidParameterError(f"fk and Fk differ in length: {f.size} and {big.size}")
    for name, values in (("fk", f), ("Fk", big)):
        if not np.isfinite(values).all():
            bad = int(np.flatnonzero(~np.isfinite(values))[0])
            raise InvalidParameterError(RISK_NOT_FINITE(name=name, at=f"[{bad}]", value=float(values.flat[bad])))
    if np.any(f <= 0) or np.any(big < f):
        bad = int(np.flatnonzero((f <= 0) | (big < f))[0])
        raise InvalidParameterError(RISK_COUNTS(at=f"[{bad}]", fk=float(f.flat[bad]), big_fk=float(big.flat[bad])))
    p = f / big
    q = 1.0 - p
    r = np.empty_like(p)
    same = p >= 1.0
    one = (f == 1) & ~same
    two = (f == 2) & ~same
    with np.errstate(divide="ignore", invalid="ignore"):
        r[one] = p[one] / q[one] * np.log(1.0 / p[one])
        odds = p[two] / q[two]
        r[two] = odds - odds**2 * np.log(1.0 / p[two])
        rest = ~same & ~one & ~two
        integer = rest & (f == np.round(f)) & (f > 2)
        approx = rest & ~integer if method == "exact" else rest
        r[approx] = p[approx] / (f[approx] - q[approx])
        if method == "exact" and integer.any():
            r[integer] = _exact(f[integer], p[integer])
    near = (one | two) & (big - f < NEAR_ONE * big)  # Fk within 5 % of fk: the closed forms cancel, use the series
    r[near] = near_one(f[near], (big[near] - f[near]) / big[near])
    r[same] = 1.0 / f[same]
    return r


def individual_risk(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    weight: str | None = None,
    method: RiskMethod = "approx",
    missing: Missing = "category",
    alpha: float = 1.0,
) -> pl.LazyFrame:
    """Append ``fk``, ``Fk`` and the individual risk ``risk`` to every record, rows in their order.

    The risk is computed once per distinct key pattern (materializes one row per pattern) and
    joined back. Without ``weight`` the risk is ``1 / fk`` (sdcMicro's ``survey=FALSE``).

    Examples
    --------
    >>> lf = pl.LazyFrame({"a": [1, 1, 2], "w": [10.0, 10.0, 5.0]})
    >>> [round(r, 4) for r in individual_risk(lf, "a", weight="w").collect()["risk"]]
    [0.0827, 0.0827, 0.4024]
    """
    lf = as_lazy(data)
    keys = check_frequency_args(lf, keys, weight, missing, alpha)
    check_choice("method", method, get_args(RiskMethod))
    refuse_built_names(
        lf.collect_schema().names(),
        RISK_COLUMNS,
        "individual_risk: column",
        "individual_risk adds to the table",
        helpers=False,
    )
    hidden = hidden_keys(keys)
    pats = risk_patterns(lf, keys, weight, method, missing, alpha).select(*hidden, "fk", "Fk", "risk")
    return lf.join(pats.lazy(), left_on=keys, right_on=hidden, how="left", nulls_equal=True, maintain_order="left")


def risk_patterns(
    lf: pl.LazyFrame, keys: Sequence[str], weight: str | None, method: RiskMethod, missing: str, alpha: float
) -> pl.DataFrame:
    """:func:`polars_anon.sdc.frequencies.patterns` of checked arguments with the individual ``risk`` of each pattern
    (keys named by :func:`~polars_anon.sdc.frequencies.hidden_keys`)."""
    pats = patterns(lf, keys, weight, missing, alpha)
    if weight is None:
        risk = 1.0 / pats["fk"].to_numpy()
    else:
        low = pats.filter(pl.col("Fk") < pl.col("fk"))
        if low.height:
            first = f"; first: {low.select(hidden_keys(keys)).row(0)}"
            raise InvalidParameterError(WEIGHTS_BELOW_COUNT(where="", weight=weight, n=low.height, first=first))
        risk = benedetti_franconi(pats["fk"].to_numpy(), pats["Fk"].to_numpy(), method)
    return pats.with_columns(pl.Series("risk", risk, dtype=pl.Float64))


@dataclass(frozen=True)
class GlobalRisk:
    """Global risk of a sample (sdcMicro's ``measure_risk``).

    Attributes
    ----------
    risk
        Mean individual risk (``risk_pct`` is it in percent).
    expected_reidentifications
        Sum of the individual risks (sdcMicro's ``risk_ER``).
    n_rows, n_unique, n_pairs
        Records; records with ``fk == 1`` and with ``fk == 2`` (violating 2- and 3-anonymity).
    household_risk, household_expected_reidentifications
        The same for household risk, when a household id was given (else None).
    """

    risk: float
    expected_reidentifications: float
    n_rows: int
    n_unique: int
    n_pairs: int
    household_risk: float | None = None
    household_expected_reidentifications: float | None = None

    @property
    def risk_pct(self) -> float:
        """The global risk in percent."""
        return 100.0 * self.risk


def household_risk(
    data: pl.LazyFrame | pl.DataFrame, household: str, risk: str = "risk", name: str = "household_risk"
) -> pl.LazyFrame:
    """Append ``1 - prod(1 - risk)`` over each record's household (sdcMicro's fast hierarchical risk).

    A null household id is refused (:func:`check_households`): grouped, the nulls would make one giant household.

    Examples
    --------
    >>> lf = pl.LazyFrame({"hh": [1, 1, 2], "risk": [0.5, 0.5, 0.25]})
    >>> household_risk(lf, "hh").collect()["household_risk"].to_list()
    [0.75, 0.75, 0.25]
    """
    lf = as_lazy(data)
    check_columns(lf, [household], "household")
    check_columns(lf, [risk], "risk")
    if not isinstance(name, str):
        raise InvalidParameterError(f"household_risk: name must be a column name, got {name!r}")
    refuse_built_names(
        lf.collect_schema().names(),
        [name],
        "household_risk: column",
        "household_risk adds to the table (name=)",
        helpers=False,
    )
    check_households(lf, household)
    return _per_household(lf, household, risk, name)


def household_expr(risk: str) -> pl.Expr:
    """``1 - prod(1 - r)`` over a household's members (an aggregation): the factors sorted first, so that the product
    has the same bits whatever order the group-by gives the members in (every reader of household risk uses it)."""
    return 1.0 - (1.0 - pl.col(risk)).sort().product()


def _per_household(lf: pl.LazyFrame, household: str, risk: str, name: str) -> pl.LazyFrame:
    per_hh = lf.group_by(household).agg(household_expr(risk).alias(name))
    return lf.join(per_hh, on=household, how="left", maintain_order="left")


def household_expected(rows: pl.LazyFrame, household: str, risk: str) -> float:
    """The household expected re-identifications of `rows` (one per record: its `household` id and its individual
    `risk`): per household :func:`household_expr` times its size, summed by
    :func:`~polars_anon.sdc.frequencies.exact_sum` (the same bits in every run).

    >>> household_expected(pl.LazyFrame({"hh": [1, 1, 2], "r": [0.5, 0.5, 0.25]}), "hh", "r")  # 2 * 0.75 + 0.25
    1.75
    """
    per_hh = rows.group_by(household).agg((household_expr(risk) * pl.len()).alias("__anon_her"))
    return float(per_hh.select(exact_sum(pl.col("__anon_her"))).collect().item())  # materializes: one value


def check_households(lf: pl.LazyFrame, household: str) -> None:
    """Refuse null household ids, naming the column and how many rows (one pass over the column): grouped, every
    record of unknown household would join one giant household and get ``1 - prod(1 - r)`` over all of them.

    >>> check_households(pl.LazyFrame({"hh": [1, None, None]}), "hh")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: household column 'hh' has 2 null values; ... (or drop those rows)
    """
    n = int(lf.select(pl.col(household).null_count()).collect().item())  # materializes: one value
    if n:
        raise InvalidParameterError(null_households(household, n))


def null_households(household: str, n: int) -> str:
    """The refusal of `n` null household ids, as every engine words it."""
    return (
        f"household column {household!r} has {n} null values; a null household id would pool those records into one "
        "household: give each record of unknown household its own id (or drop those rows)"
    )


def global_risk(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    weight: str | None = None,
    method: RiskMethod = "approx",
    missing: Missing = "category",
    alpha: float = 1.0,
    household: str | None = None,
) -> GlobalRisk:
    """Global risk, expected re-identifications and (with ``household``) household risk.

    Examples
    --------
    >>> g = global_risk(pl.LazyFrame({"a": [1, 1, 2, 3]}), "a")
    >>> g.risk, g.expected_reidentifications, g.n_unique
    (0.75, 3.0, 2)
    """
    lf = as_lazy(data)
    keys = check_frequency_args(lf, keys, weight, missing, alpha)
    check_choice("method", method, get_args(RiskMethod))
    if household is not None:  # on the input: the risk pipeline is not run twice
        check_columns(lf, [household], "household")
        check_households(lf, household)
    # every column under a helper name: the user's names (a key named fk, risk, ...) stay out of the way
    hidden = hidden_keys(keys)
    pats = risk_patterns(lf, keys, weight, method, missing, alpha)  # sorted by the keys: a fixed order
    n_pat = pats["n_pattern"].to_numpy().astype(np.float64)
    fk, risk = pats["fk"].to_numpy(), pats["risk"].to_numpy()
    n = int(n_pat.sum())
    if n == 0:
        raise InvalidParameterError(NO_ROWS(what="global_risk", why="global risk is undefined"))
    er = float((risk * n_pat).sum())  # as pa.sdc.measures: per pattern, in the patterns' order (the same bits)
    her = None
    if household is not None:
        own = [pl.col(k).alias(h) for k, h in zip(keys, hidden, strict=True)]
        own.append(pl.col(household).alias(_HOUSEHOLD))
        rows = lf.select(own).join(pats.lazy().select(*hidden, "risk"), on=hidden, how="left", nulls_equal=True)
        her = household_expected(rows, _HOUSEHOLD, "risk")
    return GlobalRisk(
        risk=er / n,
        expected_reidentifications=er,
        n_rows=n,
        n_unique=int(n_pat[fk == 1].sum()),
        n_pairs=int(n_pat[fk == 2].sum()),
        household_risk=None if her is None else her / n,
        household_expected_reidentifications=None if her is None else float(her),
    )
