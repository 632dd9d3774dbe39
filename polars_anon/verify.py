"""Independent verification of a published table against every guarantee asked for.

The check runs on the published rows (as collected, or as re-read from the
written file before it is renamed into place): it never trusts the algorithm's
own accounting. An empty published table is refused: it protects no one and
informs no one, and a vacuous "every class has k rows" must not pass for a result.

>>> verify_k(pl.LazyFrame({"a": ["x", "x", "y", "y"]}), ["a"], 2)
{'min_class_size': 2, 'n_classes': 2, 'n_rows': 4}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from polars_anon.classes import k_summary
from polars_anon.errors import NotKAnonymousError

__all__ = ["Verifier", "verify_k"]

Verifier = Callable[[pl.LazyFrame], dict[str, Any]]
"""Verifies a published LazyFrame; raises :class:`NotKAnonymousError`, returns facts for the report."""


def verify_k(lf: pl.LazyFrame, qids: Sequence[str], k: int) -> dict[str, int]:
    """Group the published table by its quasi-identifiers: every class must have k rows.

    Raises :class:`NotKAnonymousError` when a class is smaller than k or the table is
    empty; returns ``min_class_size``, ``n_classes`` and ``n_rows``.
    """
    summary = k_summary(lf, qids, k).collect().row(0, named=True)  # materializes: one row
    if not summary["n_rows"]:
        raise NotKAnonymousError("independent check failed: the published table is empty; nothing was written")
    if not summary["k_anonymous"]:
        raise NotKAnonymousError(
            f"independent check failed: the smallest class has {summary['min_class_size']} rows, "
            f"fewer than k={k} ({summary['violating_rows']} rows in such classes); nothing was written"
        )
    return {key: int(summary[key]) for key in ("min_class_size", "n_classes", "n_rows")}
