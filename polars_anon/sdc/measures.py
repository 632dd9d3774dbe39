"""The SDC risk figures of a whole table, on any engine: what the job file's ``[sdc]`` table, the CLI's ``risk
--weights`` and the report's ``sdc`` key show.

:class:`Measures` says what to measure (the key variables, the sampling weight, a household id, the individual-risk
method, the reading of missing values, SUDA2); :func:`measure` computes the figures of one table:

* ``global_risk`` (mean individual risk), ``expected_reidentifications`` (their sum), ``max_individual_risk``;
* ``n_unique`` and ``n_pairs`` (records with ``fk`` 1 and 2) and ``violating`` (records with ``fk < k`` for
  k = 2, 3, 5, as sdcMicro prints them);
* with a household id, ``household_risk`` and ``household_expected_reidentifications``;
* with ``suda2``, SUDA2's summary (records with an MSU, the highest and mean DIS-SUDA score, each key's
  contribution, the MSUs per size).

On Polars the figures come from :mod:`polars_anon.sdc` (:func:`~polars_anon.sdc.frequencies.pattern_frequencies`,
:func:`~polars_anon.sdc.risk.benedetti_franconi`, :func:`~polars_anon.sdc.suda.suda2`). On DuckDB and Spark
(:func:`measure_sql`) one query per grouping: the rows' checks; the counts one SQL group-by over the keys (missing
values a category), the individual risk a SQL expression of ``fk`` and ``Fk`` (:func:`risk_sql`, the closed forms
and sdcMicro's approximation; the exact method's series is computed on the driver, once per distinct ``(fk, Fk)``
pair), household risk one more group-by. With SUDA2 or the model the key patterns are brought to the driver once,
and every figure is computed from them there. The wildcard reading of missing values is refused there (capability table,
:data:`polars_anon.pipeline.capabilities.SDC_MEASURE_REFUSALS`).

>>> import polars as pl
>>> lf = pl.LazyFrame({"a": [1, 1, 2, 3], "w": [2.0, 2.0, 1.0, 1.0]})
>>> fig = measure(lf, Measures(keys=("a",), weight="w"))
>>> round(fig["global_risk"], 4), fig["n_unique"], fig["violating"]["2"]   # (2 (1 - ln 2) + 2) / 4
(0.6534, 2, 2)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_columns
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import WEIGHTS_BELOW_COUNT
from polars_anon.pipeline.capabilities import consult_sdc_measures
from polars_anon.sdc.frequencies import bad_weights, check_weight_type, pattern_frequencies
from polars_anon.sdc.modrisk import cell_counts, fit_cells
from polars_anon.sdc.risk import (
    NEAR_ONE,
    benedetti_franconi,
    check_households,
    household_expected,
    near_one,
    null_households,
)
from polars_anon.sdc.spec import Measures
from polars_anon.sdc.suda import Suda2Result, suda2_patterns

__all__ = [
    "VIOLATING_K",
    "Measures",
    "check_measure_columns",
    "exact_sum_sql",
    "measure",
    "measure_patterns",
    "measure_sql",
    "risk_sql",
]

VIOLATING_K = (2, 3, 5)
"""The k of the ``violating`` counts (sdcMicro's print of k-anonymity violations)."""


def risk_sql(fk: str, big_fk: str) -> str:
    """The approximate individual risk (sdcMicro's ``indivRisk``, :func:`~polars_anon.sdc.risk.benedetti_franconi`
    with ``method="approx"``) as a SQL expression of the columns `fk` and `big_fk` (DuckDB and Spark SQL alike).

    >>> import duckdb
    >>> duckdb.sql(f"SELECT round({risk_sql('fk', 'wk')}, 8) FROM (VALUES (3, 108.0), (1, 45.5)) t(fk, wk)").fetchall()
    [(0.01369863,), (0.08579129,)]
    """
    p = f"(CAST({fk} AS DOUBLE) / {big_fk})"
    odds = f"({p} / (1 - {p}))"
    q = f"(({big_fk} - {fk}) / CAST({big_fk} AS DOUBLE))"
    return (
        f"(CASE WHEN {big_fk} <= {fk} THEN 1.0 / {fk} "
        f"WHEN {fk} IN (1, 2) AND {q} < {NEAR_ONE} THEN {near_one(fk, q)} "
        f"WHEN {fk} = 1 THEN {odds} * ln(1 / {p}) "
        f"WHEN {fk} = 2 THEN {odds} - {odds} * {odds} * ln(1 / {p}) "
        f"ELSE {p} / ({fk} - 1 + {p}) END)"
    )


def exact_sum_sql(value: str, engine: str) -> str:
    """:func:`~polars_anon.sdc.frequencies.exact_sum` as a SQL aggregate of the DOUBLE expression `value` on `engine`
    (``"duckdb"``: HUGEINT, ``"spark"``: DECIMAL(38, 0)): integer sums, the same bits in any row order and with
    any number of threads (SQL's SUM of doubles adds in the order the threads give); SUM itself when the values'
    magnitudes add up to 2^85 or more.

    SQL computes every aggregate of a CASE, the branch it does not take too, so no integer sum may overflow whatever
    the values: a row's ``hi = round(v 2^40)`` (below 2^125) is summed as ``t = trunc(hi / 2^85)`` (below 2^40) and
    ``hi - t 2^85`` (below 2^85), each sum safe up to 2^41 rows; ``t``'s sum is scaled back only when taken.

    >>> import duckdb
    >>> duckdb.sql(f"SELECT {exact_sum_sql('v', 'duckdb')} AS s FROM (VALUES (0.1), (0.2), (0.3)) t(v)").fetchall()
    [(0.6,)]
    >>> duckdb.sql(f"SELECT {exact_sum_sql('v', 'duckdb')} FROM (SELECT 1e25 AS v FROM range(20))").fetchall()
    [(2e+26,)]
    """
    big = "HUGEINT" if engine == "duckdb" else "DECIMAL(38, 0)"
    v = f"CAST({value} AS DOUBLE)"
    ok, scaled = f"ABS({v}) < {2.0**85!r}", f"{v} * {2.0**40!r}"  # no cast of an infinity, a NaN
    hi = f"(CASE WHEN {ok} THEN ROUND({scaled}) ELSE 0 END)"
    top = f"TRUNC({hi} / {2.0**85!r})" if engine == "duckdb" else f"CAST({hi} / {2.0**85!r} AS BIGINT)"  # trunc to 0
    rest = f"({hi} - {top} * {2.0**85!r})"  # exact: hi and top 2^85 share their high bits
    lo = f"(CASE WHEN {ok} THEN ROUND(({scaled} - ROUND({scaled})) * {2.0**80!r}) ELSE 0 END)"
    taken = f"SUM(ABS({v})) < {2.0**85!r}"
    tops = f"(CASE WHEN {taken} THEN SUM(CAST({top} AS {big})) ELSE 0 END)"  # the sum of hi, exact, below 2^125:
    his = f"({tops} * CAST('{2**85}' AS {big}) + SUM(CAST({rest} AS {big})))"
    exact = f"CAST({his} AS DOUBLE) / {2.0**40!r} + CAST(SUM(CAST({lo} AS {big})) AS DOUBLE) / {2.0**120!r}"
    return f"(CASE WHEN {taken} THEN {exact} ELSE SUM({v}) END)"


def _suda_summary(res: Suda2Result, scores: pl.DataFrame) -> dict[str, Any]:
    """SUDA2's figures: `scores` holds ``suda_score``, ``dis_suda_score`` and the record count ``n`` per pattern."""
    with_msu = scores.filter(pl.col("suda_score") > 0)
    n = float(scores["n"].sum())  # exact sums (fsum, integers): the patterns' order varies between runs
    return {
        "records_with_msu": int(with_msu["n"].sum()),
        "max_dis_suda_score": float(scores["dis_suda_score"].max() or 0.0),  # type: ignore[arg-type]
        "mean_dis_suda_score": math.fsum((scores["dis_suda_score"] * scores["n"]).to_list()) / n if n else 0.0,
        "max_suda_score": float(scores["suda_score"].max() or 0.0),  # type: ignore[arg-type]
        "contributions": res.contributions,
        "msu_counts": {str(k): v for k, v in res.msu_counts.items()},
    }


def measure_patterns(pats: pl.DataFrame, spec: Measures, household: float | None = None) -> dict[str, Any]:
    """The figures from the distinct patterns: ``n_pattern`` records, ``fk`` and ``Fk`` each (and their risk computed
    here). `household`, when the spec names one: the household expected re-identifications
    (:func:`~polars_anon.sdc.risk.household_expected`)."""
    fk, big = pats["fk"].to_numpy(), pats["Fk"].to_numpy()

    def first(low: np.ndarray) -> str:  # the first pattern whose weights sum below its record count
        return f"; first: {pats.filter(pl.Series(low)).select(list(spec.keys)).row(0)}"

    records = pats["n_pattern"].to_numpy().astype(np.float64)
    out = _driver_figures(fk, big, records, np.ones(pats.height, dtype=np.int64), spec, first)
    if household is not None:
        out |= _household_figures(household, out["n_rows"])
    return out


def _driver_figures(
    fk: np.ndarray,
    big: np.ndarray,
    records: np.ndarray,
    patterns: np.ndarray,
    spec: Measures,
    first: Callable[[np.ndarray], str] | None = None,
) -> dict[str, Any]:
    """The figures of rows of patterns alike on the driver: each row's ``fk``, ``Fk``, its `records` and the number of
    `patterns` it stands for (1 each, or a distinct ``(fk, Fk)`` pair's count). `first`: the text naming the first
    pattern with ``Fk < fk`` of a boolean mask (none: not named)."""
    low = big < fk if spec.weight is not None else np.zeros(fk.shape, dtype=bool)
    n = float(records.sum())
    _refuse_counts(n, int(patterns[low].sum()), spec, first(low) if first is not None and low.any() else "")
    risk = 1.0 / fk if spec.weight is None else benedetti_franconi(fk, big, spec.method)
    tallies = {"n_patterns": int(patterns.sum()), "n_unique": int(records[fk == 1].sum())}
    tallies |= {"n_pairs": int(records[fk == 2].sum())} | {f"v{k}": int(records[fk < k].sum()) for k in VIOLATING_K}
    er = math.fsum((risk * records).tolist())  # exact: the patterns come in any order
    return _figures(n, er, float(risk.max()), tallies)


def _refuse_counts(n: float, low: int, spec: Measures, first: str = "") -> None:
    """Refuse an empty table, and `low` key patterns whose weights sum below their record count."""
    if n == 0:
        raise InvalidParameterError("sdc: the table has no rows; its risk is undefined")
    if low:
        raise InvalidParameterError(WEIGHTS_BELOW_COUNT(where="sdc: ", weight=spec.weight, n=low, first=first))


def _figures(n: float, er: float, top: float, tallies: dict[str, int]) -> dict[str, Any]:
    """The report's figures of `n` records with expected re-identifications `er`, highest individual risk `top` and the
    pattern `tallies` (``n_patterns``, ``n_unique``, ``n_pairs``, ``v{k}``: records with ``fk < k``)."""
    return {
        "n_rows": int(n),
        "n_patterns": tallies["n_patterns"],
        "global_risk": er / n,
        "expected_reidentifications": er,
        "max_individual_risk": top,
        "n_unique": tallies["n_unique"],
        "n_pairs": tallies["n_pairs"],
        "violating": {str(k): tallies[f"v{k}"] for k in VIOLATING_K},
    }


def _household_figures(her: float, n: float) -> dict[str, float]:
    """The household figures from the household expected re-identifications `her` of `n` records."""
    return {"household_risk": her / n, "household_expected_reidentifications": her}


def measure(data: pl.LazyFrame | pl.DataFrame, spec: Measures) -> dict[str, Any]:
    """The figures of one Polars table (see the module docstring)."""
    lf = as_lazy(data)
    check_columns(lf, spec.columns, "sdc columns")
    keys = list(spec.keys)
    pats = pattern_frequencies(lf, keys, spec.weight, spec.missing, spec.alpha)  # materializes: one row per pattern
    if spec.weight is not None:
        pats = pats.with_columns(pl.Series("risk", _risks(pats, spec)))
    else:
        pats = pats.with_columns((1.0 / pl.col("fk")).alias("risk"))
    household = None
    if spec.household is not None:
        check_households(lf, spec.household)
        per_row = lf.select(*keys, spec.household).join(
            pats.lazy().select(*keys, "risk"), on=keys, how="left", nulls_equal=True
        )
        household = household_expected(per_row, spec.household, "risk")
    out = measure_patterns(pats, spec, household)
    if spec.suda2:
        counts = lf.group_by(keys).agg(pl.len().alias("n")).collect()  # materializes: one row per pattern
        res, scores = suda2_patterns(counts, keys, "n", dis_fraction=spec.dis_fraction)
        out["suda2"] = _suda_summary(res, scores)
    if spec.model is not None:
        out["model_risk"] = _model_figures(cell_counts(lf, keys, str(spec.weight)), spec)
    return out


def _model_figures(counts: pl.DataFrame, spec: Measures) -> dict[str, Any]:
    """The log-linear model risk of the cell counts (records with a missing key left out, as sdcMicro)."""
    from polars_anon.sdc.modrisk import check_cells, risks_of_fit

    counts = counts.drop_nulls(list(spec.keys))
    check_cells(counts, spec.keys, str(spec.weight))
    fitted = fit_cells(counts, spec.keys, spec.model or "default", spec.interactions)
    risk1, risk2, n_cells = risks_of_fit(fitted)
    return {"method": spec.model, "risk1": risk1, "risk2": risk2, "n_cells": n_cells}


def _risks(pats: pl.DataFrame, spec: Measures) -> np.ndarray:
    fk, big = pats["fk"].to_numpy(), pats["Fk"].to_numpy()
    if (big < fk).any():
        return np.full(fk.shape, np.nan)  # measure_patterns names the first pattern
    return benedetti_franconi(fk, big, spec.method)


def measure_sql(engine: Any, table: Any, spec: Measures) -> dict[str, Any]:
    """The figures of a table of a SQL engine (DuckDB, Spark; :class:`polars_anon.engines.SQLEngine`), one query per
    grouping, each figure read from it: the rows' checks (weights, household ids) one pass; the key patterns one
    group-by, brought to the driver when SUDA2 or the model reads them (every figure then computed there, as on
    Polars), else aggregated in the engine (the approximate risk in SQL; the exact one on the driver once per
    distinct ``(fk, Fk)``); household risk one more group-by.

    First it refuses what the capability table says the engine cannot compute, before any data is read
    (:func:`~polars_anon.pipeline.capabilities.consult_sdc_measures`, as its callers do: called directly too)."""
    consult_sdc_measures(spec, engine.name)
    schema = _check_sql_columns(engine, table, spec)
    view = engine.view(table)
    _check_sql_rows(engine, view, spec, schema)
    pats = _patterns_sql(engine, view, spec)
    if spec.suda2 or spec.model is not None:
        out = _patterns_on_driver(engine, view, spec)
    elif spec.method == "exact" and spec.weight is not None:
        out = _pairs_on_driver(engine, pats, spec)
    else:
        out = _sql_figures(engine, pats, spec)
    if spec.household is not None:
        out |= _household_figures(_household_sql(engine, view, pats, spec), out["n_rows"])
    return out


def _patterns_sql(engine: Any, view: str, spec: Measures, extra: str = "") -> str:
    """The key patterns' group-by: the keys, ``fk`` (records) and ``big_fk`` (their weights' exact sum), and `extra`."""
    keys = ", ".join(engine.quote(k) for k in spec.keys)
    big = exact_sum_sql(_weight_sql(engine, spec), engine.name)
    return f"SELECT {keys}, COUNT(*) AS fk, {big} AS big_fk{extra} FROM {view} GROUP BY {keys}"


def _weight_sql(engine: Any, spec: Measures) -> str:
    """A row's weight as a SQL DOUBLE (1.0 without a weight column)."""
    return f"CAST({engine.quote(spec.weight)} AS DOUBLE)" if spec.weight is not None else "1.0"


def _check_sql_columns(engine: Any, table: Any, spec: Measures) -> Any:
    """Refuse (naming them) the columns the spec reads that the engine's table lacks; the table's schema (or None)."""
    schema = engine.schema(table) if hasattr(engine, "schema") else None
    names = list(schema.names()) if schema is not None else []
    missing = [c for c in spec.columns if names and c not in names]
    if missing:
        raise InvalidParameterError(f"sdc columns {missing} are not columns of the table; columns: {names}")
    return schema


def _check_sql_rows(engine: Any, view: str, spec: Measures, schema: Any) -> None:
    """The rows checked as on Polars, in one pass: the weights (:func:`~polars_anon.sdc.frequencies.check_weights`,
    its message: numeric, none missing, NaN, infinite or not above 0; NaN sorts above infinity in DuckDB and Spark),
    then the household ids (none null, :func:`~polars_anon.sdc.risk.check_households`)."""
    if spec.weight is not None and schema is not None:
        check_weight_type(spec.weight, schema[spec.weight])
    w, hh = (engine.quote(str(c)) for c in (spec.weight, spec.household))
    bad = f"({w} IS NULL OR NOT (CAST({w} AS DOUBLE) > 0 AND CAST({w} AS DOUBLE) < CAST('Infinity' AS DOUBLE)))"
    counts = {"bad": (spec.weight, bad), "nulls": (spec.household, f"{hh} IS NULL")}
    asked = [f"SUM(CASE WHEN {test} THEN 1 ELSE 0 END) AS {name}" for name, (c, test) in counts.items() if c]
    if not asked:
        return
    row = engine.to_polars(engine.sql(f"SELECT {', '.join(asked)} FROM {view}")).row(0, named=True)
    if row.get("bad"):
        first = engine.to_polars(engine.sql(f"SELECT {w} FROM {view} WHERE {bad} LIMIT 5")).to_series().to_list()
        raise InvalidParameterError(bad_weights(str(spec.weight), int(row["bad"]), first))
    if row.get("nulls"):
        raise InvalidParameterError(null_households(str(spec.household), int(row["nulls"])))


def _patterns_on_driver(engine: Any, view: str, spec: Measures) -> dict[str, Any]:
    """The figures, SUDA2's and the model's too, from the key patterns brought to the driver (one group-by)."""
    keys = list(spec.keys)
    incl = f", {exact_sum_sql(f'1.0 / {_weight_sql(engine, spec)}', engine.name)} AS incl_prob" if spec.model else ""
    cells = engine.to_polars(engine.sql(_patterns_sql(engine, view, spec, incl)))  # materializes: one row per pattern
    pats = cells.select(*keys, pl.col("fk").alias("n_pattern"), pl.col("fk").cast(pl.Float64), Fk=pl.col("big_fk"))
    out = measure_patterns(pats, spec)
    if spec.suda2:
        res, scores = suda2_patterns(cells, keys, "fk", dis_fraction=spec.dis_fraction)
        out["suda2"] = _suda_summary(res, scores.rename({"fk": "n"}))
    if spec.model is not None:
        counts = pl.col("fk").cast(pl.Float64).alias("counts")
        out["model_risk"] = _model_figures(
            cells.select(*keys, counts, weights=pl.col("big_fk"), incl_prob=pl.col("incl_prob")), spec
        )
    return out


def _pairs_on_driver(engine: Any, pats: str, spec: Measures) -> dict[str, Any]:
    """The figures from the distinct ``(fk, Fk)`` pairs of the key patterns, brought to the driver with their count
    (the exact risk's series is computed there, once per pair)."""
    pairs = engine.to_polars(
        engine.sql(f"SELECT fk, big_fk, COUNT(*) AS n FROM ({pats}) p GROUP BY fk, big_fk")
    )  # materializes: one row per distinct (fk, Fk)
    fk, n = pairs["fk"].to_numpy(), pairs["n"].to_numpy()
    return _driver_figures(fk, pairs["big_fk"].to_numpy(), n * fk.astype(np.float64), n, spec)


def _sql_figures(engine: Any, pats: str, spec: Measures) -> dict[str, Any]:
    """The figures aggregated over the key patterns in the engine (one row): the approximate or closed-form risk ``r``
    a column of its own, so that the exact sum's many uses of its argument read it (Spark's plan of the expression
    written out in each use cost it three times the CPU)."""
    expected = exact_sum_sql("fk * r", engine.name)
    cases = ", ".join(f"SUM(CASE WHEN fk < {k} THEN fk ELSE 0 END) AS v{k}" for k in VIOLATING_K)
    row = engine.to_polars(
        engine.sql(
            f"SELECT {expected} AS er, SUM(fk) AS n, MAX(r) AS top, COUNT(*) AS n_patterns, "
            f"SUM(CASE WHEN fk = 1 THEN 1 ELSE 0 END) AS n_unique, SUM(CASE WHEN fk = 2 THEN 2 ELSE 0 END) AS n_pairs, "
            f"{cases}, SUM(CASE WHEN big_fk < fk THEN 1 ELSE 0 END) AS low "
            f"FROM (SELECT fk, big_fk, {_risk_expr(spec)} AS r FROM ({pats}) p0) p"
        )
    ).row(0, named=True)
    n = float(row.pop("n") or 0.0)
    _refuse_counts(n, int(row.pop("low") or 0), spec)
    er, top = (float(row.pop(name) or 0.0) for name in ("er", "top"))
    return _figures(n, er, top, {name: int(value or 0) for name, value in row.items()})


def _risk_expr(spec: Measures) -> str:
    """The individual risk as a SQL expression of a pattern's ``fk`` and ``big_fk``."""
    return "(1.0 / fk)" if spec.weight is None else risk_sql("fk", "big_fk")


def _household_sql(engine: Any, view: str, pats: str, spec: Measures) -> float:
    """The household expected re-identifications: per household ``1 - prod(1 - r)`` times its size, summed (the
    household ids checked by :func:`_check_sql_rows`)."""
    q = engine.quote
    keys = ", ".join(q(k) for k in spec.keys)
    on = " AND ".join(f"t.{q(k)} IS NOT DISTINCT FROM p.{q(k)}" for k in spec.keys)
    hh = q(str(spec.household))
    log = "CASE WHEN p.r < 1 THEN LN(1 - p.r) ELSE 0 END"  # a risk of 1 makes the household's 1 (MAX below)
    query = (
        f"SELECT {exact_sum_sql('hr * m', engine.name)} AS her FROM (SELECT t.{hh} AS h, COUNT(*) AS m, "
        f"CASE WHEN MAX(p.r) >= 1 THEN 1.0 ELSE 1 - EXP({exact_sum_sql(log, engine.name)}) END AS hr "
        f"FROM {view} t JOIN (SELECT {keys}, {_risk_expr(spec)} AS r FROM ({pats}) p0) p ON {on} GROUP BY t.{hh}) x"
    )
    return float(engine.to_polars(engine.sql(query)).item() or 0.0)


def check_measure_columns(schema: Sequence[str], spec: Measures, where: str = "sdc") -> None:
    """Refuse (naming them) columns the spec reads that the table lacks."""
    missing = [c for c in spec.columns if c not in schema]
    if missing:
        raise InvalidParameterError(f"{where}: columns {missing} are not columns of the input; columns: {list(schema)}")
