"""The metric registry and :func:`compute`.

Every metric is a :class:`Metric`: a Polars function over :class:`MetricData`
returning rows ``attribute, value`` (a null attribute for the whole table), its
DuckDB twin ``anon_<name>`` in ``sql/metrics.sql``, its source, formula, range
and declared output type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics import cells, cost, distribution, partition
from polars_anon.metrics.data import MetricData, prepare

__all__ = ["FAMILIES", "METRICS", "Metric", "compute", "evaluate", "metric_names"]

FAMILIES = ("cost", "cells", "classes", "distribution")
"""cost: paper 001's hierarchy cost model; cells: per-cell and per-record loss over the
hierarchies; classes: the published partition; distribution: distances between the
original and published distributions."""


@dataclass(frozen=True)
class Metric:
    """An information-loss metric: its Polars implementation, SQL twin and facts."""

    name: str
    polars: Callable[[MetricData], pl.LazyFrame]
    family: str
    source: str
    formula: str
    range: str
    dtype: type[pl.DataType] = pl.Float64
    needs_sensitive: bool = False
    untouched: float | None = 0.0
    """Value on an ungeneralized table (None: it depends on the data, e.g. class sizes)."""

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


def _m(polars: Callable[[MetricData], pl.LazyFrame], family: str, source: str, formula: str, range_: str, **kw: object) -> Metric:
    return Metric(polars.__name__, polars, family, source, formula, range_, **kw)  # type: ignore[arg-type]


_ALL = [
    _m(cost.distortion, "cost", "paper 001 §4", "Σ cells (Σ_{j≤l_v} c_j / Σ_{j<h} c_j) wid(Q), c_j = 1/(h-j)", "[0, n Σ wid]"),
    _m(cost.ncp, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) / nl(G)", "[0, n m]"),
    _m(cost.total, "cost", "paper 001 §4", "Σ cells l_v / (h - 1)", "[0, n m]"),
    _m(cost.llm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) h_max / h", "[0, n Σ (nl(G)-1) h_max/h]"),
    _m(cost.nllm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) / nl(G) · h_max / h", "[0, n Σ h_max/h]"),
    _m(cost.wllm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) wid(Q)", "[0, n Σ (nl(G)-1) wid]"),
    _m(cost.wnllm, "cost", "paper 001 §4", "Σ cells (nl(v) - 1) / nl(G) · wid(Q)", "[0, n Σ wid]"),
    _m(cost.alteration, "cost", "paper 001 §5 (Fig. 10)", "mean over the 7 metrics of 100 m(T) / m(T*)", "[0, 100]"),
    _m(cost.modified, "cost", "paper 001 §5 (Fig. 11)", "100 · cells with v ≠ x / (n m)", "[0, 100]"),
    _m(cost.deleted, "cost", "paper 001 §5 (Fig. 12)", "100 · cells with v = root ≠ x / (n m)", "[0, 100]"),
    _m(cost.deleted_of_modified, "cost", "paper 001 §5 (Fig. 13)", "100 · deleted / modified", "[0, 100]"),
    _m(cells.iloss, "cells", "paper 002 §4.2", "Σ cells (|v_g| - 1) / |D_A|", "[0, n m]"),
    _m(cells.granularity, "cells", "paper 003 §2.2.8", "Σ cells (|Φ⁻¹(x)| - 1) / |A_j|", "[0, n m]"),
    _m(cells.precision, "cells", "paper 003 §2.2.1", "1 - Σ cells (k_ij / |DGH_j|) / (m |D|)", "[0, 1] (1 = untouched)", untouched=1.0),
    _m(cells.absolute_distance, "cells", "paper 003 §2.2.1", "Σ_i k_i (full-domain levels)", "[0, Σ (h-1)]", dtype=pl.Int64),
    _m(cells.relative_distance, "cells", "paper 003 §2.2.1", "Σ_i k_i / |DGH_i|", "[0, m]"),
    _m(cells.entropy, "cells", "paper 003 §2.2.2", "Σ cells H(original | published value)", "[0, n Σ ln nl(G)]"),
    _m(cells.ambiguity, "cells", "paper 003 §2.2.7", "(1/|D|) Σ records Π_j |Φ⁻¹(x_ij)|", "[1, Π nl(G)]", untouched=1.0),
    _m(cells.squared_distance_error, "cells", "paper 003 §2.2.9", "Σ records √(Σ_numeric j (a_ij - E(x_ij))²)", "[0, ∞)"),
    _m(cells.information_loss, "cells", "paper 003 §2.2.10", "Σ cells (range(v)/|A_j| ordered, k_ij/k_j unordered)", "[0, n m]"),
    _m(partition.discernibility, "classes", "paper 002 §4.2, 003 §2.2.4", "Σ_E |E|² + |D| · suppressed", "[n, n²]", dtype=pl.Int64, untouched=None),
    _m(partition.c_avg, "classes", "paper 003 §2.2.5", "|D'| / (k |eq(D')|)", "[1, n/k]", untouched=None),
    _m(partition.cm, "classes", "paper 002 §4.2, 003 §2.2.3", "Σ rows penalty(r) / N", "[0, 1]", needs_sensitive=True, untouched=None),
    _m(partition.diameter, "classes", "paper 003 §2.2.6", "max Hamming distance of two published records", "[0, m]", dtype=pl.Int64, untouched=None),
    _m(partition.k, "classes", "paper 001 §5", "requested k", "[1, n]", dtype=pl.Int64, untouched=None),
    _m(partition.min_class_size, "classes", "paper 001 §5 (Fig. 9)", "min_E |E| (effective k)", "[0, n]", dtype=pl.Int64, untouched=None),
    _m(partition.n_classes, "classes", "paper 003 §2.2.5", "|eq(D')|", "[0, n]", dtype=pl.Int64, untouched=None),
    _m(partition.suppressed, "classes", "paper 002 §4.2", "rows of D not in D'", "[0, n]", dtype=pl.Int64),
    _m(distribution.hellinger, "distribution", "paper 003 §2.2.11", "median_j d_hell(P_j, Q_j)", "[0, 1]"),
    _m(distribution.cramers_v, "distribution", "paper 003 §2.2.12", "median_{j1<j2} |V(j1,j2) - V'(j1,j2)|", "[0, 1]"),
    _m(distribution.mi_loss, "distribution", "paper 004 §5.1", "(1/m) Σ_a (MI_T[a] - MI_T'[a])", "(-∞, ∞)", needs_sensitive=True),
]

METRICS: dict[str, Metric] = {m.name: m for m in _ALL}
"""Every metric by name, in the order of the README table."""


def metric_names(names: str | Iterable[str] | None, has_sensitive: bool) -> list[str]:
    """Metric names from names and family names; those needing a sensitive attribute only when there is one."""
    if names is None:
        return [n for n, m in METRICS.items() if has_sensitive or not m.needs_sensitive]
    chosen = [names] if isinstance(names, str) else list(names)
    families = {f: [n for n, m in METRICS.items() if m.family == f] for f in FAMILIES}
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


def evaluate(data: MetricData, names: str | Iterable[str] | None = None, *, by_attribute: bool = False) -> pl.DataFrame:
    """Compute metrics on prepared data (see :func:`compute`); all queries run together."""
    chosen = metric_names(names, data.sensitive is not None)
    results = pl.collect_all([METRICS[n](data) for n in chosen])
    if by_attribute:
        columns = {"attribute": pl.Series("attribute", data.qids, dtype=pl.String)}
        for n, frame in zip(chosen, results):
            per = dict(frame.filter(pl.col("attribute").is_not_null()).iter_rows())
            columns[n] = pl.Series(n, [per.get(q) for q in data.qids], dtype=METRICS[n].dtype)
        return pl.DataFrame(columns)
    return pl.DataFrame(
        [pl.Series(n, frame.filter(pl.col("attribute").is_null())["value"], dtype=METRICS[n].dtype) for n, frame in zip(chosen, results)]
    )


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
        be leaves, published values nodes.
    names
        Metric names from :data:`METRICS`, family names from :data:`FAMILIES`, or
        None for every metric (those needing `sensitive` only when it is given).
    sensitive
        The sensitive (class) attribute, for ``cm`` and ``mi_loss`` (read only
        when one of them is asked for).
    k
        The requested k (reported as ``k``; used by ``c_avg``).
    key
        A unique row id column in both tables to line them up; without it rows
        are lined up by position and the anonymized table must keep every row
        (suppressed ones at the roots). Original rows missing from the
        anonymized table are the suppressed rows (see :mod:`polars_anon.metrics.data`).
    levels
        The full-domain levels of the anonymization, for the distances; inferred
        from the published values when omitted.
    by_attribute
        One row per quasi-identifier (column ``attribute``) instead of one row.

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
    """
    chosen = metric_names(names, sensitive is not None)
    if not any(METRICS[n].needs_sensitive for n in chosen):
        sensitive = None  # the pass need not count the sensitive values
    data = prepare(original, anonymized, qids, hierarchies, key=key, sensitive=sensitive, k=k, levels=levels)
    return evaluate(data, chosen, by_attribute=by_attribute)
