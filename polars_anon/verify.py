"""Independent verification of a published table against every guarantee asked for.

The check runs on the published rows (as collected, or as re-read from the
written file before it is renamed into place): it never trusts the algorithm's
own accounting. An empty published table is refused: it protects no one and
informs no one, and a vacuous "every class has k rows" must not pass for a result.

>>> verify_k(pl.LazyFrame({"a": ["x", "x", "y", "y"]}), ["a"], 2)
{'min_class_size': 2, 'n_classes': 2, 'n_rows': 4}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon.classes import k_summary
from polars_anon.errors import NotKAnonymousError
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.evaluate import class_frames, verify_classes, verify_models

__all__ = ["Verifier", "verify_classes_of", "verify_k", "verify_privacy", "verify_published"]

Verifier = Callable[[pl.LazyFrame], dict[str, Any]]
"""Verifies a published LazyFrame; raises :class:`NotKAnonymousError`, returns facts for the report."""


def verify_k(lf: pl.LazyFrame, qids: Sequence[str], k: int) -> dict[str, int]:
    """Group the published table by its quasi-identifiers: every class must have k rows.

    Raises :class:`NotKAnonymousError` when a class is smaller than k or the table is
    empty; returns ``min_class_size``, ``n_classes`` and ``n_rows``.
    """
    summary = k_summary(lf, qids, k).collect().row(0, named=True)  # materializes: one row
    return _refuse(summary, k)


def _refuse(summary: dict[str, Any], k: int) -> dict[str, int]:
    if not summary["n_rows"]:
        raise NotKAnonymousError("independent check failed: the published table is empty; nothing was written")
    if not summary["k_anonymous"]:
        raise NotKAnonymousError(
            f"independent check failed: the smallest class has {summary['min_class_size']} rows, "
            f"fewer than k={k} ({summary['violating_rows']} rows in such classes); nothing was written"
        )
    return {key: int(summary[key]) for key in ("min_class_size", "n_classes", "n_rows")}


def verify_privacy(
    lf: pl.LazyFrame, qids: Sequence[str], constraints: Constraints, levels: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Group the published table by its quasi-identifiers: every class (and the table) must satisfy every model.

    The models judge the published classes with the input's sensitive distributions as
    reference; a population model matches the population generalized to `levels`.
    Raises :class:`~polars_anon.errors.PrivacyModelError` naming the model; returns
    ``{"privacy": [each model's status]}`` ({} without models).

    >>> from polars_anon.privacy import LDiversity
    >>> from polars_anon.privacy.evaluate import build_constraints
    >>> t = pl.DataFrame({"q": ["a", "a"], "s": ["x", "y"]})
    >>> c = build_constraints(t.group_by("q").len("size"), ["q"], 2, [LDiversity("s", l=2)],
    ...                       {"s": t.group_by("q", "s").len("count")})
    >>> verify_privacy(t.lazy(), ["q"], c)["privacy"][0]["satisfied"]
    True
    """
    return verify_models(lf, qids, constraints, levels)


def verify_published(
    lf: pl.LazyFrame, qids: Sequence[str], k: int, constraints: Constraints, levels: Mapping[str, int] | None = None
) -> tuple[dict[str, Any], pl.DataFrame]:
    """:func:`verify_k` and :func:`verify_privacy` from one pass over the published table.

    Returns the facts and the published classes (qids and ``size``), for the risk figures.
    """
    classes, frames = class_frames(lf, qids, list(constraints.sensitive), constraints.labels)
    return verify_classes_of(classes, frames, qids, k, constraints, levels)


def verify_classes_of(
    classes: pl.DataFrame,
    frames: Sequence[pl.DataFrame | None],
    qids: Sequence[str],
    k: int,
    constraints: Constraints,
    levels: Mapping[str, int] | None = None,
) -> tuple[dict[str, Any], pl.DataFrame]:
    """:func:`verify_published` on the published classes already grouped (by any engine).

    `classes` holds the published tuples and their ``size``, sorted, with the class index of
    :func:`~polars_anon.privacy.evaluate.class_frames`; `frames` the (tuple, value, ``count``)
    frame of each sensitive attribute of `constraints` (None: counted as columns of `classes`).
    """
    size = classes["size"]
    n_rows = int(size.sum())
    summary = {
        "n_rows": n_rows,
        "n_classes": classes.height,
        "min_class_size": int(size.min()) if n_rows else 0,  # type: ignore[arg-type]
        "violating_rows": int(size.filter(size < k).sum()),
        "k_anonymous": bool(n_rows) and int(size.min()) >= k,  # type: ignore[arg-type]
    }
    facts = _refuse(summary, k) | verify_classes(classes, frames, qids, constraints, levels)
    return facts, classes.select(*qids, "size")
