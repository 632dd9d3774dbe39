"""Re-identification risk analysis of any table (``pa.risk``, ``polars-anon risk``, the report's ``risk``).

One group-by of the table on its quasi-identifiers gives the class sizes; every
figure comes from them (never from rows):

- prosecutor, journalist and marketer risk (:func:`~polars_anon.privacy.reidentification.risk_figures`:
  highest, lowest and average record risk, share of records above `threshold`),
  journalist and marketer against a population table when one is given (matched
  on the same quasi-identifiers), else the sample itself (as ARX);
- the distribution of class sizes and of per-record risk (buckets);
- the share of sample-unique records and, given a sampling fraction or a
  population size, the estimated share of population-unique records (Pitman,
  Zayatz, SNB and Dankar's rule: :mod:`polars_anon.privacy.uniqueness`);
- each model's status when models are given (:func:`~polars_anon.privacy.evaluate.check`).

>>> t = pl.DataFrame({"q": ["a", "a", "b", "c", "c", "c"]})
>>> r = risk(t, ["q"])
>>> r["prosecutor"], r["sample_uniques"]
({'highest': 1.0, 'lowest': 0.3333333333333333, 'average': 0.5, 'records_at_risk': 1.0}, 0.16666666666666666)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_qids, refuse_reserved
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.labels import label_exprs
from polars_anon.messages import NO_ROWS, alpha_needs_wildcard
from polars_anon.privacy.base import Model, check_fraction, check_models
from polars_anon.privacy.counts import COUNT, count_population, grouped
from polars_anon.privacy.presence import check_population_args, population_size
from polars_anon.privacy.reidentification import risk_figures
from polars_anon.privacy.uniqueness import estimates
from polars_anon.report import notebook

__all__ = ["RiskSummary", "risk", "risk_summary", "risk_summary_of_patterns", "risk_summary_of_sizes"]


class RiskSummary(dict):
    """The figures of :func:`risk` (a plain dict of them); a notebook shows them as a compact summary."""

    def _repr_html_(self) -> str:
        return notebook.risk_html(self)


SIZE_BUCKETS = ((1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, 999), (1000, None))
RISK_BUCKETS = ((0.5, 1.0), (0.2, 0.5), (0.1, 0.2), (0.05, 0.1), (0.01, 0.05), (0.0, 0.01))


def _distributions(
    size: np.ndarray, classes: np.ndarray | None = None, rows: np.ndarray | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The class-size and record-risk buckets; `classes[i]` (default 1) classes have `size[i]` rows (or `rows[i]`
    rows in all, when records are counted apart from their size: :func:`risk_summary_of_patterns`)."""
    weight = np.ones(len(size), dtype=np.int64) if classes is None else np.asarray(classes, dtype=np.int64)
    rows = size * weight if rows is None else rows
    n = float(rows.sum())
    sizes = []
    for lo, hi in SIZE_BUCKETS:
        inside = (size >= lo) & (size <= (hi if hi is not None else np.inf))
        label = str(lo) if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
        sizes.append({"size": label, "classes": int(weight[inside].sum()), "rows": int(rows[inside].sum())})
    risks = []
    risk = 1.0 / size
    for lo, hi in RISK_BUCKETS:
        inside = (risk > lo) & (risk <= hi) if lo > 0 else risk <= hi
        label = f"({lo:g}, {hi:g}]" if lo > 0 else f"[0, {hi:g}]"
        risks.append(
            {"risk": label, "records": int(rows[inside].sum()), "share": float(rows[inside].sum() / n) if n else 0.0}
        )
    return sizes, risks


EMPTY_RISK = "an empty table has no risk to measure (nor is it a release)"


def risk_summary_of_sizes(size: np.ndarray, classes: np.ndarray, *, threshold: float = 0.2) -> dict[str, Any]:
    """:func:`risk_summary` of a table known by its class-size histogram: `classes[i]` classes of `size[i]` rows
    (distinct sizes; no population, no population size), so the classes themselves need not be on hand.

    >>> sizes = np.array([1, 1, 2, 5, 5, 5])
    >>> expected = risk_summary(pl.DataFrame({"size": sizes}), [], aggregated=True)
    >>> risk_summary_of_sizes(np.array([1, 2, 5]), np.array([2, 1, 3])) == expected
    True
    """
    size, weight = np.asarray(size, dtype=np.int64), np.asarray(classes, dtype=np.int64)
    rows = size * weight
    n, n_classes = int(rows.sum()), int(weight.sum())
    sizes, risks = _distributions(size, weight)
    if n:
        risk = 1.0 / np.maximum(size, 1).astype(np.float64)
        figures = {
            "highest": float(risk.max()),
            "lowest": float(risk.min()),
            "average": n_classes / float(n),
            "records_at_risk": float(rows[risk > threshold].sum() / float(n)),
        }
    else:
        figures = {"highest": 0.0, "lowest": 0.0, "average": 0.0, "records_at_risk": 0.0}
    return {
        "n_rows": n,
        "n_classes": n_classes,
        "threshold": threshold,
        "prosecutor": figures,
        "journalist": dict(figures),
        "marketer": {"average": figures["average"]},
        "sample_uniques": float(rows[size == 1].sum() / n) if n else 0.0,
        "class_sizes": sizes,
        "record_risk": risks,
        "population_uniqueness": None,
    }


def risk_summary_of_patterns(fk: np.ndarray, records: np.ndarray, *, threshold: float = 0.2) -> dict[str, Any]:
    """:func:`risk_summary` of a table whose records are not a partition: missing cells read as wildcards (local
    suppression's output), each distinct published pattern with `records[i]` records, each matching `fk[i]` records
    (:func:`polars_anon.sdc.frequencies.pattern_frequencies` with ``missing="wildcard"``). A record's risk is
    ``1 / fk``; ``n_classes`` counts the patterns; the size buckets put each pattern under its whole ``fk`` (its
    ``classes``: patterns, its ``rows``: their records); ``missing`` says so (``"wildcard"``: displays name
    patterns, not classes).

    >>> s = risk_summary_of_patterns(np.array([3.0, 4.0, 4.0]), np.array([3, 2, 1]))
    >>> s["prosecutor"]["average"] == (3 / 3 + 2 / 4 + 1 / 4) / 6, s["n_classes"], s["class_sizes"][2]
    (True, 3, {'size': '3-4', 'classes': 3, 'rows': 6})
    """
    fk, records = np.asarray(fk, dtype=np.float64), np.asarray(records, dtype=np.int64)
    n = int(records.sum())
    sizes, risks = _distributions(np.floor(fk).astype(np.int64), rows=records)
    risk = 1.0 / np.maximum(fk, 1.0)
    figures = {"highest": 0.0, "lowest": 0.0, "average": 0.0, "records_at_risk": 0.0}
    if n:
        figures = {
            "highest": float(risk.max()),
            "lowest": float(risk.min()),
            "average": float(np.sort(records * risk).sum() / n),  # sorted: the same bits in any pattern order
            "records_at_risk": float(records[risk > threshold].sum() / n),
        }
    return {
        "n_rows": n,
        "n_classes": len(fk),
        "threshold": threshold,
        "prosecutor": figures,
        "journalist": dict(figures),
        "marketer": {"average": figures["average"]},
        "sample_uniques": float(records[fk < 2].sum() / n) if n else 0.0,
        "class_sizes": sizes,
        "record_risk": risks,
        "population_uniqueness": None,
        "missing": "wildcard",
    }


def _wildcard_risk(
    lf: pl.LazyFrame,
    qids: Sequence[str],
    threshold: float,
    asked: Mapping[str, object],
    models: Sequence[Model],
    alpha: float,
) -> RiskSummary:
    """:func:`risk` with missing values as wildcards (a record with missing values counting `alpha` toward another
    pattern): the figures of :func:`risk_summary_of_patterns`; `asked` the population arguments, all refused."""
    from polars_anon.sdc.frequencies import pattern_frequencies

    given = [name for name, value in asked.items() if value is not None] + (["models"] if models else [])
    if given:
        raise InvalidParameterError(
            f"risk: missing='wildcard' takes no {', '.join(given)}: the population estimates and the models group "
            "records into classes, and wildcard patterns are no partition; use missing='category'"
        )
    check_fraction("risk", "threshold", threshold)
    pats = pattern_frequencies(lf, list(qids), missing="wildcard", alpha=alpha)  # materializes: one row per pattern
    out = risk_summary_of_patterns(pats["fk"].to_numpy(), pats["n_pattern"].to_numpy(), threshold=threshold)
    if not out["n_rows"]:
        raise InfeasibleError(NO_ROWS(what="risk", why=EMPTY_RISK))
    return RiskSummary(out)


def risk_summary(
    data: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    *,
    threshold: float = 0.2,
    sampling_fraction: float | None = None,
    population_size_: int | None = None,
    population: pl.DataFrame | None = None,
    aggregated: bool = False,
) -> dict[str, Any]:
    """The risk figures of a table (see the module docstring); `data` holds rows, or class sizes when `aggregated`.

    `population` (qids and ``count``) gives the population count of each class.
    """
    qids = list(qids)
    classes = data if aggregated else grouped(as_lazy(data), qids, pl.len().alias("size"))
    frame = (
        classes.lazy().collect() if isinstance(classes, pl.LazyFrame) else classes
    )  # materializes: one row per class
    pop = None
    if population is not None:
        pop = (
            frame.join(population, on=qids, how="left", nulls_equal=True, maintain_order="left")[COUNT]
            .fill_null(0)
            .to_numpy()
        )
        if np.any(pop < frame["size"].to_numpy()):
            raise InfeasibleError(
                "risk: the population table does not contain the table: some classes have more rows than the population"
            )
    size = frame["size"].to_numpy().astype(np.int64)
    n = int(size.sum())
    sizes, risks = _distributions(size)
    out: dict[str, Any] = {
        "n_rows": n,
        "n_classes": len(size),
        "threshold": threshold,
        "prosecutor": risk_figures(size, None, "prosecutor", threshold),
        "journalist": risk_figures(size, pop, "journalist", threshold),
        "marketer": {"average": risk_figures(size, pop, "marketer", threshold)["average"]},
        "sample_uniques": float(size[size == 1].sum() / n) if n else 0.0,
        "class_sizes": sizes,
        "record_risk": risks,
        "population_uniqueness": None,
    }
    if (sampling_fraction is not None or population_size_ is not None) and n:
        big_n = population_size("risk", n, population_size_, sampling_fraction)
        sizes_u, counts_u = np.unique(size, return_counts=True)
        found = estimates(dict(zip(sizes_u.tolist(), counts_u.tolist())), big_n)
        # an estimator without a solution is None (JSON has no NaN)
        out["population_uniqueness"] = {"population_size": big_n} | {
            key: None if isinstance(v, float) and math.isnan(v) else v for key, v in found.items()
        }
    return out


def check_alpha_reading(missing: str, alpha: float | None, command_line: bool = False) -> None:
    """Refuse an `alpha` with missing values read as categories (it weighs the wildcard reading's matches), the way
    out spelled for a Python call or, `command_line`, the ``risk`` command's flags.

    >>> check_alpha_reading("wildcard", 0.5), check_alpha_reading("category", None)
    (None, None)
    """
    if missing != "wildcard" and alpha is not None:
        raise InvalidParameterError(alpha_needs_wildcard(alpha, command_line))


def risk(
    data: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    *,
    threshold: float = 0.2,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    population: object = None,
    models: Sequence[Model] = (),
    missing: Literal["category", "wildcard"] = "category",
    alpha: float | None = None,
) -> RiskSummary:
    """Re-identification risk of a table (see the module docstring).

    Parameters
    ----------
    data
        The table (original or published).
    qids
        The quasi-identifiers an adversary knows.
    threshold
        A record is *at risk* when its risk is above this (default 0.2, ARX's default).
    sampling_fraction, population_size
        The table is a sample of a population of this size (or this fraction of it):
        enables the population-uniqueness estimates.
    population
        A population table (LazyFrame, DataFrame or path) holding the qids: journalist
        and marketer risk against it (matched on equal qid tuples).
    models
        Privacy models whose status to report (see :func:`polars_anon.privacy.evaluate.check`).
    missing
        How a missing qid value matches: ``"category"`` (default) as a value of its own, so records missing
        the same cells form a class; ``"wildcard"`` as any value (sdcMicro's reading, and what method
        ``local_suppression`` guarantees and reports): a record's risk is ``1 / fk``, its wildcard frequency
        (:func:`polars_anon.sdc.frequencies.pattern_frequencies`), and the size buckets count patterns (the figures
        then hold ``"missing": "wildcard"``). The wildcard reading takes no population, population size, sampling
        fraction or model (refused).
    alpha
        With ``missing="wildcard"``: how much a record with missing values counts toward another pattern it matches,
        in [0, 1] (sdcMicro's, default 1; local suppression's option of the same name, whose report's
        ``risk.output`` this then recomputes). Refused with ``missing="category"``.

    Examples
    --------
    The wildcard fk of the records below: 3, 3, 4 (its missing sex matches f and m) and 2, so risks 1/3, 1/3, 1/4
    and 1/2 (average 17/48); as categories the last two are classes of one:

    >>> out = pl.DataFrame({"sex": ["f", "f", None, "m"], "age": [30, 30, 30, None]})
    >>> w = risk(out, ["sex", "age"], missing="wildcard")["prosecutor"]
    >>> risk(out, ["sex", "age"])["prosecutor"]["highest"], w["highest"], w["lowest"], round(w["average"] * 48, 9)
    (1.0, 0.5, 0.25, 17.0)
    """
    lf = as_lazy(data)
    check_choice("missing", missing, ("category", "wildcard"))
    qids = check_qids(lf, qids)
    models = check_models(models, "models")
    if missing == "wildcard":
        asked = {"sampling_fraction": sampling_fraction, "population_size": population_size, "population": population}
        return _wildcard_risk(lf, qids, threshold, asked, models, 1.0 if alpha is None else alpha)
    check_alpha_reading(missing, alpha)
    # the class sizes and the population's counts sit beside the qids (a model's check: also its helper columns)
    refuse_reserved(qids, helpers=bool(models))
    check_fraction("risk", "threshold", threshold)
    check_population_args("risk", population_size, sampling_fraction)
    pop = None
    if population is not None:
        pop = count_population(population, qids, "risk")  # one row per population tuple
        lf = lf.with_columns(label_exprs(lf.collect_schema(), qids))
    out = risk_summary(
        lf,
        qids,
        threshold=threshold,
        sampling_fraction=sampling_fraction,
        population_size_=population_size,
        population=pop,
    )
    if not out["n_rows"]:
        raise InfeasibleError(NO_ROWS(what="risk", why=EMPTY_RISK))
    if models:
        from polars_anon.privacy.evaluate import check

        out["models"] = check(lf, qids, models)["models"]
    return RiskSummary(out)
