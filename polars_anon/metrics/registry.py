"""The metric registry and :func:`compute`.

Every metric is a :class:`Metric`: a Polars function over :class:`MetricData`
returning rows ``attribute, value`` (a null attribute for the whole table), its
DuckDB twin ``anon_<name>`` in ``sql/metrics.sql``, its source, formula, range
and declared output type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import polars as pl

from polars_anon._validate import names_list
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics import cells, cost, distribution, partition
from polars_anon.metrics.arrays import whole_table_values
from polars_anon.metrics.data import MetricData, fully_suppressed, label_tables, prepare

__all__ = ["FAMILIES", "K_ENFORCED", "METRICS", "Metric", "compute", "evaluate", "evaluate_both", "metric_names"]

FAMILIES = ("cost", "cells", "classes", "distribution")
"""cost: paper 001's hierarchy cost model; cells: per-cell and per-record loss over the
hierarchies; classes: the published partition; distribution: distances between the
original and published distributions."""


Scale = Callable[[MetricData, "str | None"], "float | None"]
"""Divisor of a metric's normalized value, for the whole table (None) or one quasi-identifier."""


@dataclass(frozen=True)
class Metric:
    """An information-loss metric: its Polars implementation, SQL twin and facts."""

    name: str
    polars: Callable[[MetricData], pl.LazyFrame]
    family: str
    source: str
    formula: str
    range: str
    unit: str
    """What the raw number counts ("cells", "rows²", "nats", "%", ...)."""
    dtype: type[pl.DataType] = pl.Float64
    needs_sensitive: bool = False
    untouched: float | None = 0.0
    """Value on an ungeneralized table (None: it depends on the data, e.g. class sizes)."""
    scale: Scale | None = None
    """Divisor of the normalized value: None divides by the same metric on the fully
    suppressed table T* (:func:`~polars_anon.metrics.data.fully_suppressed`); a function
    gives the metric's own range (already in [0, 1], a percentage, or where T* gives 0)."""
    normalization: str = "÷ value on T*"
    """How the normalized value is obtained, in words (the table of docs/concepts/metrics.md)."""
    better: Literal["lower", "higher"] | None = "lower"
    """Which values mean less information lost (None: a fact, neither)."""
    alias_of: str | None = None
    """The metric this one is another paper's name for (same implementation; listed once)."""

    @property
    def sql(self) -> str:
        """Name of the DuckDB macro: ``anon_<name>``."""
        return f"anon_{self.name}"

    @property
    def doc(self) -> str:
        """The Polars function's docstring: formula, source, readings taken."""
        return self.polars.__doc__ or ""

    def __call__(self, data: MetricData) -> pl.LazyFrame:
        """Rows ``attribute, value`` of this metric on prepared data."""
        return self.polars(data).select("attribute", pl.col("value").cast(self.dtype))

    def normalized(self, data: MetricData, star: MetricData | None = None) -> pl.LazyFrame:
        """Rows ``attribute, value`` of the normalized metric (Float64): the value over :attr:`scale`.

        With no `scale`, the divisor is the same metric on T* (pass `star`, the
        result of :func:`~polars_anon.metrics.data.fully_suppressed`, to share it
        between metrics). 0 / 0 gives 0, x / 0 and a null divisor give null.

        >>> from polars_anon.metrics._frames import example
        >>> # 6 / (3 + 36/7); gender 3 / 3; race 3 / (36/7)
        >>> rows = METRICS["ncp"].normalized(example()).collect().rows()
        >>> [(a, round(v, 6)) for a, v in rows]
        [(None, 0.736842), ('gender', 1.0), ('race', 0.583333)]
        """
        value = self(data).with_columns(pl.col("value").cast(pl.Float64))
        joined = value.join(
            self.divisors(data, star), on="attribute", how="left", nulls_equal=True, maintain_order="left"
        )
        return joined.select("attribute", _RATIO.alias("value"))

    def divisors(self, data: MetricData, star: MetricData | None = None) -> pl.LazyFrame:
        """Rows ``attribute, den``: what :meth:`normalized` divides by (see :attr:`scale`)."""
        if self.scale is None:
            return self(fully_suppressed(data) if star is None else star).select(
                "attribute", pl.col("value").cast(pl.Float64).alias("den")
            )
        attributes = [None, *data.qids] if data.per_attribute else [None]
        return pl.LazyFrame(
            {"attribute": attributes, "den": [self.scale(data, a) for a in attributes]},
            schema={"attribute": pl.String, "den": pl.Float64},
        )


_RATIO = pl.when(pl.col("den") != 0).then(pl.col("value") / pl.col("den")).when(pl.col("value") == 0).then(0.0)
"""value / den; 0 / 0 is 0; x / 0 and a null divisor are null."""


def _ratio(value: object, den: float | None) -> float | None:
    """:data:`_RATIO` of one value (cast to Float64 first) and its divisor, in Python: the same IEEE division.

    >>> _ratio(3, 4.0), _ratio(0, 0.0), _ratio(2.0, 0.0), _ratio(0.0, None), _ratio(1.0, None), _ratio(None, 2.0)
    (0.75, 0.0, None, 0.0, None, None)
    """
    if value is None:
        return None
    v = float(value)  # type: ignore[arg-type]  (a metric's value: Float64 or Int64)
    if den is not None and den != 0:
        return v / den
    return 0.0 if v == 0 else None


def _m(
    polars: Callable[[MetricData], pl.LazyFrame],
    family: str,
    source: str,
    formula: str,
    range_: str,
    unit: str,
    **kw: object,
) -> Metric:
    return Metric(polars.__name__, polars, family, source, formula, range_, unit, **kw)  # type: ignore[arg-type]


def _alias(name: str, of: Metric, family: str, source: str, formula: str) -> Metric:
    """Another paper's name for the quantity `of` computes: the same implementation and facts."""
    return replace(of, name=name, family=family, source=source, formula=formula, alias_of=of.name)


def _const(c: float) -> Scale:
    return lambda data, attribute: c


def _rows(data: MetricData, attribute: str | None) -> float:
    return float(data.n_rows)


def _qids(data: MetricData, attribute: str | None) -> float:
    return float(len(data.qids)) if attribute is None else 1.0


def _c_avg_star(data: MetricData, attribute: str | None) -> float | None:
    """C_avg of T* (one class of n rows): n / k; unknown without k."""
    return None if data.k is None else data.n_rows / data.k


K_ENFORCED = (
    "the k the release enforces: the requested k; with differential privacy, the larger of it and the model's own k"
)
"""What the ``k`` metric is, in the report's words (its ``k``, ``report.phrases.k_meaning``): the k a report's metrics
are computed with is the one its release enforces, which differential privacy may raise above the one asked."""

_AS_IS = {"scale": _const(1.0), "normalization": "as is (already in [0, 1])"}
_PERCENT = {"scale": _const(100.0), "normalization": "÷ 100 (a percentage)"}
_SHARE = {"scale": _rows, "normalization": "÷ n (a count of rows or classes)", "better": None}
_NCP = _m(cost.ncp, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) / nl(G)", "[0, n m]", "cells")

_ALL = [
    _m(
        cost.distortion,
        "cost",
        "paper 001 §4",
        "Σ cells (Σ_{j≤l_v} c_j / Σ_{j<h} c_j) wid(Q), c_j = 1/(h-j)",
        "[0, n Σ wid]",
        "cells × wid",
    ),
    _NCP,
    _m(cost.total, "cost", "paper 001 §4", "Σ cells l_v / (h - 1)", "[0, n m]", "cells"),
    _m(
        cost.llm,
        "cost",
        "paper 001 §4",
        "Σ cells (nl(v) - 1) h_max / h",
        "[0, n Σ (nl(G)-1) h_max/h]",
        "leaves × h_max/h",
    ),
    _m(
        cost.nllm,
        "cost",
        "paper 001 §4",
        "Σ cells (nl(v) - 1) / nl(G) · h_max / h",
        "[0, n Σ h_max/h]",
        "cells × h_max/h",
    ),
    _m(cost.wllm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) wid(Q)", "[0, n Σ (nl(G)-1) wid]", "leaves × wid"),
    _m(cost.wnllm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) / nl(G) · wid(Q)", "[0, n Σ wid]", "cells × wid"),
    _m(
        cost.alteration,
        "cost",
        "paper 001 §5 (Fig. 10)",
        "mean over the 7 metrics of 100 m(T) / m(T*)",
        "[0, 100]",
        "%",
        **_PERCENT,
    ),
    _m(cost.modified, "cost", "paper 001 §5 (Fig. 11)", "100 · cells with v ≠ x / (n m)", "[0, 100]", "%", **_PERCENT),
    _m(
        cost.deleted,
        "cost",
        "paper 001 §5 (Fig. 12)",
        "100 · cells with v = root ≠ x / (n m)",
        "[0, 100]",
        "%",
        **_PERCENT,
    ),
    _m(
        cost.deleted_of_modified,
        "cost",
        "paper 001 §5 (Fig. 13)",
        "100 · deleted / modified",
        "[0, 100]",
        "%",
        **_PERCENT,
    ),
    _alias("iloss", _NCP, "cells", "paper 002 §4.2", "Σ cells (|v_g| - 1) / |D_A|"),
    _alias("granularity", _NCP, "cells", "paper 003 §2.2.8", "Σ cells (|Φ⁻¹(x)| - 1) / |A_j|"),
    _m(
        cells.loss,
        "cells",
        "paper 001 §4 (NCP per cell, the methods' reported loss)",
        "mean over cells of (nl(v) - 1) / (nl(G) - 1), suppressed rows 1",
        "[0, 1]",
        "mean per cell",
        **_AS_IS,
    ),
    _m(
        cells.precision,
        "cells",
        "paper 003 §2.2.1",
        "1 - Σ cells (k_ij / |DGH_j|) / (m |D|)",
        "[0, 1] (1 = untouched)",
        "fraction",
        untouched=1.0,
        better="higher",
        **_AS_IS,
    ),
    _m(
        cells.absolute_distance,
        "cells",
        "paper 003 §2.2.1",
        "Σ_i k_i (full-domain levels)",
        "[0, Σ (h-1)]",
        "levels",
        dtype=pl.Int64,
    ),
    _m(cells.relative_distance, "cells", "paper 003 §2.2.1", "Σ_i k_i / |DGH_i|", "[0, m]", "qids (levels / height)"),
    _m(
        cells.entropy,
        "cells",
        "paper 003 §2.2.2",
        "Σ cells H(original | published value)",
        "[0, n Σ ln nl(G)]",
        "nats",
        normalization="÷ value on T*; above 1 possible under local recoding",
    ),
    _m(
        cells.ambiguity,
        "cells",
        "paper 003 §2.2.7",
        "(1/|D|) Σ records Π_j |Φ⁻¹(x_ij)|",
        "[1, Π nl(G)]",
        "leaf tuples per record",
        untouched=1.0,
    ),
    _m(
        cells.squared_distance_error,
        "cells",
        "paper 003 §2.2.9",
        "Σ records √(Σ_numeric j (a_ij - E(x_ij))²)",
        "[0, ∞)",
        "units of the numeric qids",
        normalization="÷ value on T*; above 1 possible (a node's mean can be farther away)",
    ),
    _m(
        cells.information_loss,
        "cells",
        "paper 003 §2.2.10",
        "Σ cells (range(v)/|A_j| ordered, k_ij/k_j unordered)",
        "[0, n m]",
        "cells",
    ),
    _m(
        partition.discernibility,
        "classes",
        "paper 002 §4.2, 003 §2.2.4",
        "Σ_E |E|² + |D| · suppressed",
        "[n, n²]",
        "rows²",
        dtype=pl.Int64,
        untouched=None,
    ),
    _m(
        partition.c_avg,
        "classes",
        "paper 003 §2.2.5",
        "|D'| / (k |eq(D')|)",
        "[1, n/k]",
        "ratio (class size / k)",
        untouched=None,
        scale=_c_avg_star,
        normalization="÷ n / k (its value on T*); null without k",
    ),
    _m(
        partition.cm,
        "classes",
        "paper 002 §4.2, 003 §2.2.3",
        "Σ rows penalty(r) / N",
        "[0, 1]",
        "fraction of rows",
        needs_sensitive=True,
        untouched=None,
        **_AS_IS,
    ),
    _m(
        partition.diameter,
        "classes",
        "paper 003 §2.2.6",
        "max Hamming distance of two published records",
        "[0, m]",
        "qids",
        dtype=pl.Int64,
        untouched=None,
        scale=_qids,
        normalization="÷ m (T* gives 0)",
        better="higher",
    ),
    _m(
        partition.k,
        "classes",
        "paper 001 §5",
        K_ENFORCED,
        "[1, n]",
        "rows",
        dtype=pl.Int64,
        untouched=None,
        **_SHARE,
    ),
    _m(
        partition.min_class_size,
        "classes",
        "paper 001 §5 (Fig. 9)",
        "min_E |E| (effective k)",
        "[0, n]",
        "rows",
        dtype=pl.Int64,
        untouched=None,
        **_SHARE,
    ),
    _m(
        partition.n_classes,
        "classes",
        "paper 003 §2.2.5",
        "|eq(D')|",
        "[0, n]",
        "classes",
        dtype=pl.Int64,
        untouched=None,
        **_SHARE,
    ),
    _m(
        partition.suppressed,
        "classes",
        "paper 002 §4.2",
        "rows of D not in D'",
        "[0, n]",
        "rows",
        dtype=pl.Int64,
        **{**_SHARE, "better": "lower", "normalization": "÷ n (T* gives 0)"},
    ),
    _m(
        distribution.hellinger,
        "distribution",
        "paper 003 §2.2.11",
        "median_j d_hell(P_j, Q_j)",
        "[0, 1]",
        "Hellinger distance",
        **_AS_IS,
    ),
    _m(
        distribution.cramers_v,
        "distribution",
        "paper 003 §2.2.12",
        "median_{j1<j2} |V(j1,j2) - V'(j1,j2)|",
        "[0, 1]",
        "Cramér's V",
        **_AS_IS,
    ),
    _m(
        distribution.mi_loss,
        "distribution",
        "paper 004 §5.1",
        "(1/m) Σ_a (MI_T[a] - MI_T'[a])",
        "(-∞, ∞)",
        "nats",
        needs_sensitive=True,
        normalization="÷ value on T*; below 0 when local recoding raised a dependence",
    ),
]

METRICS: dict[str, Metric] = {m.name: m for m in _ALL}
"""Every metric by name, in the order of the table of docs/concepts/metrics.md (aliases included: ``iloss`` and
``granularity`` are ``ncp``)."""


def metric_names(names: str | Iterable[str] | None, has_sensitive: bool) -> list[str]:
    """Metric names from names and family names; those needing a sensitive attribute only when there is one.

    None and a family name give each quantity once: an alias (``iloss``,
    ``granularity``: both are ``ncp``) only when asked for by name.
    """
    if names is None:
        return [n for n, m in METRICS.items() if (has_sensitive or not m.needs_sensitive) and m.alias_of is None]
    if not isinstance(names, (str, list, tuple)):
        raise InvalidParameterError(
            f"names must be a metric name, a family name or a list of them (None: every metric), got {names!r}"
        )
    chosen = [names] if isinstance(names, str) else list(names)
    families = {f: [n for n, m in METRICS.items() if m.family == f and m.alias_of is None] for f in FAMILIES}
    out: list[str] = []
    for n in chosen:
        for name in families.get(n, [n]):
            if name not in METRICS:
                raise InvalidParameterError(
                    f"unknown metric {name!r}; metrics are {list(METRICS)}, families are {list(FAMILIES)}"
                )
            if METRICS[name].needs_sensitive and not has_sensitive:
                if n in families:
                    continue  # a family asked for: skip what cannot be computed
                raise InvalidParameterError(f"metric {name!r} needs the sensitive attribute; pass sensitive='<column>'")
            if name not in out:
                out.append(name)
    return out


def evaluate(
    data: MetricData, names: str | Iterable[str] | None = None, *, by_attribute: bool = False, normalized: bool = False
) -> pl.DataFrame:
    """Compute metrics on prepared data (see :func:`compute`); all queries run together."""
    chosen = metric_names(names, data.sensitive is not None)
    if not by_attribute:
        data = data.whole_table()  # only the whole-table rows are read
    if normalized:
        star = fully_suppressed(data) if any(METRICS[n].scale is None for n in chosen) else None
        results = pl.collect_all([METRICS[n].normalized(data, star) for n in chosen])
        dtypes = dict.fromkeys(chosen, pl.Float64)
    else:
        results = pl.collect_all([METRICS[n](data) for n in chosen])
        dtypes = {n: METRICS[n].dtype for n in chosen}
    if by_attribute:
        columns = {"attribute": pl.Series("attribute", data.qids, dtype=pl.String)}
        for n, frame in zip(chosen, results):
            per = dict(frame.filter(pl.col("attribute").is_not_null()).iter_rows())
            columns[n] = pl.Series(n, [per.get(q) for q in data.qids], dtype=dtypes[n])
        return pl.DataFrame(columns)
    return pl.DataFrame(
        [
            pl.Series(n, frame.filter(pl.col("attribute").is_null())["value"], dtype=dtypes[n])
            for n, frame in zip(chosen, results)
        ]
    )


def evaluate_both(
    data: MetricData, names: str | Iterable[str] | None = None
) -> tuple[dict[str, object], dict[str, float | None]]:
    """Every metric's whole-table value and its normalized companion, each metric computed once.

    Same values as ``evaluate(data, names)`` and ``evaluate(data, names, normalized=True)``
    (the report needs both: this does not compute the raw values twice). Computed from NumPy arrays
    (:func:`~polars_anon.metrics.arrays.whole_table_values`: the pairs read once, no query per metric, the same
    bits) when they cover `names` and `data`; else from the Polars functions, a query per metric and divisor.
    """
    chosen = metric_names(names, data.sensitive is not None)
    data = data.whole_table()  # only the whole-table rows are read
    fast = _from_arrays(data, chosen)
    if fast is not None:
        return fast
    star = fully_suppressed(data) if any(METRICS[n].scale is None for n in chosen) else None
    frames = pl.collect_all([METRICS[n](data) for n in chosen] + [METRICS[n].divisors(data, star) for n in chosen])
    raw: dict[str, object] = {}
    normalized: dict[str, float | None] = {}
    for n, value, den in zip(chosen, frames[: len(chosen)], frames[len(chosen) :]):
        raw[n] = dict(value.iter_rows()).get(None)
        normalized[n] = _ratio(raw[n], dict(den.iter_rows()).get(None))
    return raw, normalized


def _from_arrays(data: MetricData, chosen: list[str]) -> tuple[dict[str, object], dict[str, float | None]] | None:
    """:func:`evaluate_both` from :func:`~polars_anon.metrics.arrays.whole_table_values` (the same bits as the
    Polars functions, without a query per metric), or None when they do not cover `chosen` or `data`."""
    impl = {n: METRICS[n].alias_of or n for n in chosen}
    star_names = sorted({impl[n] for n in chosen if METRICS[n].scale is None})
    values = whole_table_values(data, sorted(set(impl.values())), star_names)
    if values is None:
        return None
    table, star = values
    raw: dict[str, object] = {}
    normalized: dict[str, float | None] = {}
    for n in chosen:
        metric = METRICS[n]
        value = table[impl[n]]
        raw[n] = None if value is None else (int(value) if metric.dtype == pl.Int64 else float(value))
        if metric.scale is None:
            den = star[impl[n]]
            normalized[n] = _ratio(raw[n], None if den is None else float(den))
        else:
            normalized[n] = _ratio(raw[n], metric.scale(data, None))
    return raw, normalized


def _for_classes(
    original: pl.LazyFrame | pl.DataFrame,
    anonymized: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    chosen: list[str],
) -> tuple[pl.LazyFrame | pl.DataFrame, pl.LazyFrame | pl.DataFrame, Mapping[str, Hierarchy]]:
    """Both tables and `hierarchies`, with :func:`~polars_anon.metrics.data.label_tables`' flat hierarchy for each
    qid that has none, when every `chosen` metric is of the ``classes`` family (they read only which published cells
    are equal); else as given (:func:`prepare` refuses a qid without one)."""
    if not isinstance(hierarchies, Mapping) or not all(METRICS[n].family == "classes" for n in chosen):
        return original, anonymized, hierarchies
    unbuilt = [q for q in names_list(qids, "qids") if q not in hierarchies]
    if not unbuilt:
        return original, anonymized, hierarchies
    original, anonymized, flat = label_tables(original, anonymized, unbuilt)
    return original, anonymized, {**hierarchies, **flat}


def compute(
    original: pl.LazyFrame | pl.DataFrame,
    anonymized: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    names: str | Iterable[str] | None = None,
    *,
    sensitive: str | None = None,
    k: int | None = None,
    key: str | None = None,
    levels: Mapping[str, int] | None = None,
    by_attribute: bool = False,
    normalized: bool = False,
) -> pl.DataFrame:
    """Information-loss metrics of an anonymized table against its original.

    Parameters
    ----------
    original, anonymized
        The table before and after anonymization (LazyFrame or DataFrame, e.g.
        ``pl.scan_parquet``); only the qids, the key and the sensitive column are read.
    qids
        Quasi-identifier columns.
    hierarchies
        Quasi-identifier -> :class:`~polars_anon.Hierarchy`; original values must
        be leaves, published values nodes. A qid without one (published as
        ranges, sets or means: Mondrian, MDAV) is measured when every metric asked
        for is of the ``classes`` family (``names="classes"``), which reads only
        which published cells are equal (:func:`~polars_anon.metrics.data.label_tables`).
    names
        Metric names from :data:`METRICS`, family names from :data:`FAMILIES`, or
        None for every metric (those needing `sensitive` only when it is given).
        None and families list each quantity once: the aliases ``iloss`` and
        ``granularity`` (both equal to ``ncp``) only when named.
    sensitive
        The sensitive (class) attribute, for ``cm`` and ``mi_loss`` (read only
        when one of them is asked for).
    k
        The k (reported as ``k``; used by ``c_avg``); a release's is the k it enforces (:data:`K_ENFORCED`).
    key
        A unique row id column in both tables to line them up; without it rows
        are lined up by position and the anonymized table must keep every row
        (suppressed ones at the roots). Original rows missing from the
        anonymized table are the suppressed rows (see :mod:`polars_anon.metrics.data`).
    levels
        The full-domain levels of the anonymization, for the distances: one for
        every qid (a mapping that leaves one out is refused), or omitted to infer
        them all from the published values.
    by_attribute
        One row per quasi-identifier (column ``attribute``) instead of one row.
    normalized
        Every value scaled to [0, 1] as paper 003 §3.5 does (Float64): divided by
        the same metric on the fully suppressed table T* (every quasi-identifier
        cell at its root, no row removed), or by the metric's own range where it
        is already in [0, 1], is a percentage or a count of rows, or where T*
        gives 0 (:attr:`Metric.scale`, :attr:`Metric.normalization`). 0 is
        untouched for the losses, 1 as bad as T*; ``precision`` keeps its
        direction (1 untouched), ``mi_loss`` can be below 0.

    Returns
    -------
    pl.DataFrame
        One row with a column per metric (or per-attribute rows), typed as
        declared by each :class:`Metric`.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> H = {"race": Hierarchy.from_dict({"*": {"felidae": ["cat", "lion"], "canine": ["dog", "wolf"]}})}
    >>> t = pl.DataFrame({"race": ["cat", "lion", "dog", "wolf"]})
    >>> out = pl.DataFrame({"race": ["felidae", "felidae", "canine", "canine"]})
    >>> compute(t, out, ["race"], H, ["ncp", "discernibility", "modified"]).row(0)
    (1.0, 8, 100.0)
    >>> compute(t, t, ["race"], H, "cost")["alteration"].item()
    0.0
    >>> compute(t, out, ["race"], H, ["ncp", "discernibility"], normalized=True).row(0)  # ncp 1 / 3 (T*); 8 / 16
    (0.3333333333333333, 0.5)
    >>> ranges = out.with_columns(pl.lit("cat-lion").alias("race"))  # no hierarchy: the classes metrics alone
    >>> compute(t, ranges, ["race"], {}, ["n_classes", "min_class_size"]).row(0)
    (1, 4)
    """
    chosen = metric_names(names, sensitive is not None)
    original, anonymized, hierarchies = _for_classes(original, anonymized, qids, hierarchies, chosen)
    if not any(METRICS[n].needs_sensitive for n in chosen):
        sensitive = None  # the pass need not count the sensitive values
    data = prepare(original, anonymized, qids, hierarchies, key=key, sensitive=sensitive, k=k, levels=levels)
    return evaluate(data, chosen, by_attribute=by_attribute, normalized=normalized)
