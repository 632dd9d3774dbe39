"""``df.anon``, ``lf.anon`` and ``pl.col(...).anon``: thin wrappers over the modules.

Each method only calls the function named in its docstring; the full
documentation lives there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon.classes import class_sizes, k_summary
from polars_anon.encode import encode
from polars_anon.generalize import generalize, generalize_expr
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics import compute
from polars_anon.pipeline.road import anonymize
from polars_anon.privacy.base import Model
from polars_anon.privacy.evaluate import check
from polars_anon.privacy.risk import risk

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

    def k_anonymize(self, *, hierarchies: Mapping[str, Hierarchy], k: int, **kwargs: Any) -> pl.LazyFrame:
        """k-anonymize; see :func:`polars_anon.pipeline.road.anonymize` (returns its LazyFrame).

        The algorithm runs now (it needs the class aggregates); the returned frame is
        lazy. Use :func:`polars_anon.anonymize` for the verified result and report.
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

    def k_anonymize(self, *, hierarchies: Mapping[str, Hierarchy], k: int, **kwargs: Any) -> pl.DataFrame:
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


@pl.api.register_expr_namespace("anon")
class AnonExpr:
    """``pl.col(c).anon``: column-level generalization (a streaming value map)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def generalize(self, hierarchy: Hierarchy, level: int) -> pl.Expr:
        """Publish the column at `level`; see :func:`polars_anon.generalize.generalize_expr`."""
        return generalize_expr(self._expr, hierarchy, level)
