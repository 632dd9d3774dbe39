"""Attribute-disclosure checks on a published table, as one number each [paper 004 §5.2].

:func:`homogeneity_rate` (share of records whose class holds a single sensitive
value: the homogeneity attack on standard k-anonymity), :func:`l_diversity`
(distinct l-diversity: the fewest sensitive values in a class) and
:func:`t_closeness` (the largest distance between a class's sensitive distribution
and the table's; equal ground distance, so the Earth Mover's distance is the total
variation distance). Each is the one-number form of a privacy model's per-class
measure (:func:`~polars_anon.privacy.evaluate.class_measures` with
:class:`~polars_anon.privacy.LDiversity` or :class:`~polars_anon.privacy.TCloseness`):
the models are the one definition, and so of the nulls of the sensitive column: ``sensitive_null`` is the
models' (``"error"``, the default, refuses them; ``"ignore"`` leaves them out of every distribution;
``"value"`` counts null as one more value).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon._validate import as_lazy, check_columns
from polars_anon.privacy.base import SensitiveNull
from polars_anon.privacy.closeness import TCloseness
from polars_anon.privacy.diversity import LDiversity
from polars_anon.privacy.evaluate import class_measures

__all__ = ["homogeneity_rate", "l_diversity", "t_closeness"]


def _measures(
    data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str, model: LDiversity | TCloseness
) -> pl.DataFrame:
    lf = as_lazy(data)
    check_columns(lf, [*qids, sensitive], "columns")
    return class_measures(lf, qids, model)


def homogeneity_rate(
    data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str, sensitive_null: SensitiveNull = "error"
) -> float:
    """Share of records in classes where every record has the same sensitive value [paper 004 §5.2].

    >>> df = pl.DataFrame({"q": ["a", "a", "b", "b", "b"], "s": [1, 1, 1, 2, 2]})
    >>> homogeneity_rate(df, ["q"], "s")
    0.4
    >>> homogeneity_rate(pl.DataFrame({"q": [1, 1], "s": [1, None]}), ["q"], "s", sensitive_null="value")
    0.0
    """
    classes = _measures(data, qids, sensitive, LDiversity(sensitive, l=1, sensitive_null=sensitive_null))
    total = int(classes["size"].sum())
    return float(classes.filter(pl.col("measure") == 1)["size"].sum()) / total if total else 0.0


def l_diversity(
    data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str, sensitive_null: SensitiveNull = "error"
) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values in any class.

    >>> l_diversity(pl.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 2, 1, 1]}), ["q"], "s")
    1
    """
    measure = _measures(data, qids, sensitive, LDiversity(sensitive, l=1, sensitive_null=sensitive_null))["measure"]
    return int(measure.min() or 0)  # type: ignore[arg-type]


def t_closeness(
    data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str, sensitive_null: SensitiveNull = "error"
) -> float:
    """The largest distance between a class's sensitive distribution and the whole table's.

    The distance is the Earth Mover's distance with equal ground distance (t-closeness
    for categorical values), which is the total variation ``1/2 sum |p - q|``.

    >>> t_closeness(pl.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 1, 2, 2]}), ["q"], "s")
    0.5
    """
    measure = _measures(data, qids, sensitive, TCloseness(sensitive, t=1.0, sensitive_null=sensitive_null))["measure"]
    return float(measure.max() or 0.0)  # type: ignore[arg-type]
