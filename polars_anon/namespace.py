"""``df.anon``, ``lf.anon`` and ``pl.col(...).anon``: thin wrappers over the modules.

Each method only calls the function named in its docstring; the full
documentation lives there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon._validate import names_list
from polars_anon.classes import class_sizes, k_summary
from polars_anon.encode import encode
from polars_anon.generalize import generalize, generalize_expr
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics import compute
from polars_anon.pipeline.road import anonymize
from polars_anon.privacy.base import Model
from polars_anon.privacy.evaluate import check
from polars_anon.privacy.risk import risk
from polars_anon.sdc import frequencies, individual_risk, local_suppression, suda2
from polars_anon.sdc.measures import Measures, measure
from polars_anon.sdc.perturbation import add_noise, invariant_pram, pram, rank_swap
from polars_anon.sdc.suda import Suda2Result
from polars_anon.sdc.suppression import SuppressionResult

__all__ = ["AnonDataFrame", "AnonExpr", "AnonLazyFrame"]


@pl.api.register_lazyframe_namespace("anon")
class AnonLazyFrame:
    """``lf.anon``: anonymization methods on a LazyFrame (lazy in, lazy out)."""

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._lf = lf

    def generalize(self, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> pl.LazyFrame:
        """Publish qids at fixed levels; see :func:`polars_anon.generalize.generalize`."""
        return generalize(self._lf, hierarchies, levels)

    def classes(self, qids: Sequence[str]) -> pl.LazyFrame:
        """Equivalence classes and sizes; see :func:`polars_anon.classes.class_sizes`."""
        return class_sizes(self._lf, qids)

    def check(self, qids: Sequence[str], k: int = 1) -> pl.LazyFrame:
        """k-anonymity facts in one row; see :func:`polars_anon.classes.k_summary`."""
        return k_summary(self._lf, qids, k)

    def check_privacy(self, qids: Sequence[str], privacy: Sequence[Model], k: int = 1, **kwargs: Any) -> dict[str, Any]:
        """k and every privacy model on this table; see :func:`polars_anon.privacy.evaluate.check`."""
        return check(self._lf, qids, privacy, k=k, **kwargs)

    def risk(self, qids: Sequence[str], **kwargs: Any) -> dict[str, Any]:
        """Re-identification risk of this table; see :func:`polars_anon.privacy.risk.risk`."""
        return risk(self._lf, qids, **kwargs)

    def k_anonymize(self, *, hierarchies: Mapping[str, Hierarchy] | None = None, k: int, **kwargs: Any) -> pl.LazyFrame:
        """k-anonymize; see :func:`polars_anon.pipeline.road.anonymize` (returns its checked LazyFrame).

        The algorithm runs now (it needs the class aggregates); the returned frame is lazy and checks every
        guarantee on the whole published table when it runs (:meth:`polars_anon.Anonymized.lazy`), so it is held
        in memory then. Use :func:`polars_anon.anonymize` for the report and a streamed, checked write.
        """
        return anonymize(self._lf, hierarchies=hierarchies, k=k, **kwargs).lazy()

    def encode(
        self, hierarchies: Mapping[str, Hierarchy], representation: str = "proportional", **kwargs: Any
    ) -> pl.LazyFrame:
        """Encode qids for machine learning; see :func:`polars_anon.encode.encode`."""
        return encode(self._lf, hierarchies, representation, **kwargs)

    def metrics(
        self,
        anonymized: pl.LazyFrame | pl.DataFrame,
        qids: Sequence[str],
        hierarchies: Mapping[str, Hierarchy],
        names: str | Sequence[str] | None = None,
        **kwargs: Any,
    ) -> pl.LazyFrame:
        """Information-loss metrics of `anonymized` against this original frame.

        See :func:`polars_anon.metrics.compute`.

        They are computed now (one pass over both frames); the returned frame is lazy.
        """
        return compute(self._lf, anonymized, qids, hierarchies, names, **kwargs).lazy()

    # statistical disclosure control (polars_anon.sdc): measures and transformations
    def frequencies(self, keys: Sequence[str] | str, weight: str | None = None, **kwargs: Any) -> pl.LazyFrame:
        """Append ``fk`` and ``Fk``; see :func:`polars_anon.sdc.frequencies.frequencies`."""
        return frequencies(self._lf, keys, weight, **kwargs)

    def individual_risk(self, keys: Sequence[str] | str, weight: str | None = None, **kwargs: Any) -> pl.LazyFrame:
        """Append ``fk``, ``Fk`` and ``risk``; see :func:`polars_anon.sdc.risk.individual_risk`."""
        return individual_risk(self._lf, keys, weight, **kwargs)

    def sdc_risk(self, keys: Sequence[str] | str, **kwargs: Any) -> dict[str, Any]:
        """Global and household risk, k-anonymity violations, SUDA2 (the report's ``sdc`` figures); `kwargs` are the
        fields of :class:`polars_anon.sdc.measures.Measures`; see :func:`polars_anon.sdc.measures.measure`."""
        return measure(self._lf, Measures(keys=tuple(names_list(keys, "keys")), **kwargs))

    def suda2(self, keys: Sequence[str] | str, **kwargs: Any) -> Suda2Result:
        """SUDA2 scores per record; see :func:`polars_anon.sdc.suda.suda2`."""
        return suda2(self._lf, keys, **kwargs)

    def local_suppression(self, keys: Sequence[str] | str, k: int = 2, **kwargs: Any) -> SuppressionResult:
        """Suppress key cells to wildcard k-anonymity; see :func:`polars_anon.sdc.suppression.local_suppression`."""
        return local_suppression(self._lf, keys, k, **kwargs)

    def pram(
        self, column: str, matrix: Mapping[object, Mapping[object, float]], seed: int | None = None
    ) -> pl.LazyFrame:
        """PRAM with a given transition matrix; see :func:`polars_anon.sdc.perturbation.pram`."""
        return pram(self._lf, column, matrix, seed)

    def invariant_pram(self, column: str, pd: float = 0.8, alpha: float = 0.5, seed: int | None = None) -> pl.LazyFrame:
        """Invariant PRAM (sdcMicro's); see :func:`polars_anon.sdc.perturbation.invariant_pram`."""
        return invariant_pram(self._lf, column, pd, alpha, seed)

    def add_noise(self, columns: Sequence[str] | str, noise: float = 150.0, **kwargs: Any) -> pl.LazyFrame:
        """Noise on numeric columns (keyed by a secret seed); see :func:`polars_anon.sdc.perturbation.add_noise`."""
        return add_noise(self._lf, columns, noise, **kwargs)

    def rank_swap(self, columns: Sequence[str] | str, p: float = 5.0, seed: int | None = None) -> pl.LazyFrame:
        """Rank swapping within p% of the ranks (in memory); see :func:`polars_anon.sdc.perturbation.rank_swap`."""
        return rank_swap(self._lf, columns, p, seed).lazy()


@pl.api.register_dataframe_namespace("anon")
class AnonDataFrame:
    """``df.anon``: the same methods on a DataFrame, collected."""

    def __init__(self, df: pl.DataFrame) -> None:
        self._df = df

    def _lazy(self) -> AnonLazyFrame:
        """``self._df.lazy().anon``, typed (registered namespaces are invisible to type checkers)."""
        return AnonLazyFrame(self._df.lazy())

    def generalize(self, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.generalize`."""
        return self._lazy().generalize(hierarchies, levels).collect()

    def classes(self, qids: Sequence[str]) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.classes`."""
        return self._lazy().classes(qids).collect()

    def check(self, qids: Sequence[str], k: int = 1) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.check`."""
        return self._lazy().check(qids, k).collect()

    def check_privacy(self, qids: Sequence[str], privacy: Sequence[Model], k: int = 1, **kwargs: Any) -> dict[str, Any]:
        """See :meth:`AnonLazyFrame.check_privacy`."""
        return self._lazy().check_privacy(qids, privacy, k, **kwargs)

    def risk(self, qids: Sequence[str], **kwargs: Any) -> dict[str, Any]:
        """See :meth:`AnonLazyFrame.risk`."""
        return self._lazy().risk(qids, **kwargs)

    def k_anonymize(self, *, hierarchies: Mapping[str, Hierarchy] | None = None, k: int, **kwargs: Any) -> pl.DataFrame:
        """k-anonymize and verify; see :func:`polars_anon.pipeline.road.anonymize`."""
        return anonymize(self._df, hierarchies=hierarchies, k=k, **kwargs).collect()

    def encode(
        self, hierarchies: Mapping[str, Hierarchy], representation: str = "proportional", **kwargs: Any
    ) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.encode`."""
        return self._lazy().encode(hierarchies, representation, **kwargs).collect()

    def metrics(
        self,
        anonymized: pl.LazyFrame | pl.DataFrame,
        qids: Sequence[str],
        hierarchies: Mapping[str, Hierarchy],
        names: str | Sequence[str] | None = None,
        **kwargs: Any,
    ) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.metrics`."""
        return self._lazy().metrics(anonymized, qids, hierarchies, names, **kwargs).collect()

    def frequencies(self, keys: Sequence[str] | str, weight: str | None = None, **kwargs: Any) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.frequencies`."""
        return self._lazy().frequencies(keys, weight, **kwargs).collect()

    def individual_risk(self, keys: Sequence[str] | str, weight: str | None = None, **kwargs: Any) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.individual_risk`."""
        return self._lazy().individual_risk(keys, weight, **kwargs).collect()

    def sdc_risk(self, keys: Sequence[str] | str, **kwargs: Any) -> dict[str, Any]:
        """See :meth:`AnonLazyFrame.sdc_risk`."""
        return self._lazy().sdc_risk(keys, **kwargs)

    def suda2(self, keys: Sequence[str] | str, **kwargs: Any) -> Suda2Result:
        """See :meth:`AnonLazyFrame.suda2`."""
        return self._lazy().suda2(keys, **kwargs)

    def local_suppression(self, keys: Sequence[str] | str, k: int = 2, **kwargs: Any) -> SuppressionResult:
        """See :meth:`AnonLazyFrame.local_suppression`."""
        return self._lazy().local_suppression(keys, k, **kwargs)

    def pram(
        self, column: str, matrix: Mapping[object, Mapping[object, float]], seed: int | None = None
    ) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.pram`."""
        return self._lazy().pram(column, matrix, seed).collect()

    def invariant_pram(self, column: str, pd: float = 0.8, alpha: float = 0.5, seed: int | None = None) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.invariant_pram`."""
        return self._lazy().invariant_pram(column, pd, alpha, seed).collect()

    def add_noise(self, columns: Sequence[str] | str, noise: float = 150.0, **kwargs: Any) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.add_noise`."""
        return self._lazy().add_noise(columns, noise, **kwargs).collect()

    def rank_swap(self, columns: Sequence[str] | str, p: float = 5.0, seed: int | None = None) -> pl.DataFrame:
        """See :meth:`AnonLazyFrame.rank_swap`."""
        return self._lazy().rank_swap(columns, p, seed).collect()


@pl.api.register_expr_namespace("anon")
class AnonExpr:
    """``pl.col(c).anon``: column-level generalization (a streaming value map)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def generalize(self, hierarchy: Hierarchy, level: int) -> pl.Expr:
        """Publish the column at `level`; see :func:`polars_anon.generalize.generalize_expr`."""
        return generalize_expr(self._expr, hierarchy, level)
