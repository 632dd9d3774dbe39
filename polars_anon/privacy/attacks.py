"""Attribute-disclosure attacks on a published table [paper 004 §5.2].

Attacks by an adversary who holds the original quasi-identifiers ``E = T \\ S`` of
every published record: :func:`record_linkage` (distance-based record linkage with
Gower) and :func:`ml_inference` (a random forest trained on the published
quasi-identifiers). They evaluate any published table: permuted, microaggregated or
generalized (a generalized value is just another category).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy
from polars_anon.distance import Gower, Records, encode_records

__all__ = ["ml_inference", "record_linkage"]


def _numeric(frames: Sequence[pl.DataFrame], qids: Sequence[str], numeric: Sequence[str] | None) -> list[str]:
    """Qids that read as numbers in every frame (or the given ones that do)."""
    candidates = list(qids) if numeric is None else [q for q in qids if q in numeric]
    return [
        q
        for q in candidates
        if all(f[q].null_count() == 0 and f[q].cast(pl.Float64, strict=False).null_count() == 0 for f in frames)
    ]


def _tuples(df: pl.DataFrame, qids: list[str], sensitive: str, values: list[Any]) -> tuple[pl.DataFrame, np.ndarray]:
    """Distinct qid tuples (sorted) and their counts per sensitive value (tuples x values)."""
    counts = df.group_by(*qids, sensitive).len().sort([*qids, sensitive], nulls_last=True)
    tuples = counts.select(qids).unique(maintain_order=True)
    index = tuples.with_row_index("__anon_t")
    coded = counts.join(index, on=qids, how="left", nulls_equal=True, maintain_order="left")
    s_code = {v: i for i, v in enumerate(values)}
    matrix = np.zeros((tuples.height, len(values)))
    rows = coded["__anon_t"].to_numpy()
    cols = np.array([s_code[v] for v in coded[sensitive].to_list()], dtype=np.int64)
    np.add.at(matrix, (rows, cols), coded["len"].to_numpy())
    return tuples, matrix


def _pair(
    original: object, published: object, qids: list[str], sensitive: str, numeric: Sequence[str] | None
) -> tuple[pl.DataFrame, pl.DataFrame, list[str], list[str]]:
    """Both tables' qids + sensitive column, and the qids split into numeric and categorical."""
    o = as_lazy(original).select(*qids, sensitive).collect()  # materializes: qids + sensitive of every row
    p = as_lazy(published).select(*qids, sensitive).collect()  # materializes: qids + sensitive of every row
    num = _numeric([o, p], qids, numeric)
    return o, p, num, [q for q in qids if q not in num]


def record_linkage(
    original: pl.LazyFrame | pl.DataFrame,
    published: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    sensitive: str,
    *,
    numeric: Sequence[str] | None = None,
) -> float:
    """Attribute disclosure by distance-based record linkage [paper 004 §5.2].

    For each original record, the adversary links the published record nearest in
    Gower dissimilarity over the quasi-identifiers (numeric ranges from the original)
    and reads its sensitive value. Returns the share of original records whose
    linked sensitive value is their own. Ties (several published records at the same
    least distance) are broken uniformly at random and counted in expectation, so
    the result does not depend on row order. A qid is numeric when its values read
    as numbers in both tables (restricted to `numeric` if given); others compare by
    equality. Both tables are reduced to their distinct tuples first, and distances
    are computed in chunks of original tuples against all published tuples.

    >>> orig = pl.DataFrame({"age": [20, 21, 60, 61], "s": ["a", "a", "b", "c"]})
    >>> record_linkage(orig, orig, ["age"], "s")
    1.0
    >>> pub = orig.with_columns(pl.col("age").reverse())
    >>> record_linkage(orig, pub, ["age"], "s")
    0.0
    """
    qids = list(qids)
    o, p, num, cat = _pair(original, published, qids, sensitive, numeric)
    values = sorted(set(o[sensitive].unique().to_list()) | set(p[sensitive].unique().to_list()), key=str)
    to = [pl.col(q).cast(pl.Float64) for q in num] + [pl.col(q).cast(pl.String) for q in cat]
    o, p = o.with_columns(to), p.with_columns(to)
    o_tuples, o_counts = _tuples(o, qids, sensitive, values)
    p_tuples, p_counts = _tuples(p, qids, sensitive, values)
    both = encode_records(pl.concat([o_tuples, p_tuples]), num, cat)
    u = o_tuples.height
    orig_records = Records(both.numeric, both.categorical, both.num[:, :u], both.cat[:, :u], both.labels)
    gower = Gower(orig_records)
    a_num, a_cat = gower.transform(both)
    o_num, o_cat, p_num, p_cat = a_num[:, :u], a_cat[:, :u], a_num[:, u:], a_cat[:, u:]
    step = max(1, int(2e7 // max(p_tuples.height, 1)))
    correct = 0.0
    for start in range(0, u, step):
        sl = slice(start, start + step)
        d = gower.distances(o_num[:, sl], o_cat[:, sl], p_num, p_cat)
        nearest = (d <= d.min(axis=1, keepdims=True) + 1e-12).astype(np.float64)
        guess = nearest @ p_counts
        guess /= guess.sum(axis=1, keepdims=True)
        correct += float((o_counts[sl] * guess).sum())
    return correct / float(o_counts.sum())


def ml_inference(
    original: pl.LazyFrame | pl.DataFrame,
    published: pl.LazyFrame | pl.DataFrame,
    qids: Sequence[str],
    sensitive: str,
    *,
    numeric: Sequence[str] | None = None,
    seed: int = 0,
    model: Any = None,
) -> float:
    """Attribute disclosure by ML inference [paper 004 §5.2]: micro-averaged F1.

    A classifier (default: scikit-learn's random forest, 100 trees, seeded) is trained
    on the published quasi-identifiers to predict `sensitive`, then predicts the
    sensitive value of every original record from its original quasi-identifiers.
    Numeric qids (as in :func:`record_linkage`) are used as numbers, the others as
    ordinal codes over the values of both tables. With `original` a held-out table,
    this is the utility test of paper 004 §5.3 (train on published, test on originals).

    >>> orig = pl.DataFrame({"q": ["a", "b"] * 10, "s": ["x", "y"] * 10})
    >>> ml_inference(orig, orig, ["q"], "s")
    1.0
    """
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import f1_score

    qids = list(qids)
    o, p, num, cat = _pair(original, published, qids, sensitive, numeric)
    both = encode_records(pl.concat([o.select(qids).cast(pl.String), p.select(qids).cast(pl.String)]), num, cat)
    x = np.vstack([both.num, both.cat.astype(np.float64)]).T
    x_orig, x_pub = x[: o.height], x[o.height :]
    clf: Any = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1) if model is None else clone(model)
    y_pub = p[sensitive].cast(pl.String).to_numpy()
    y_orig = o[sensitive].cast(pl.String).to_numpy()
    clf.fit(x_pub, y_pub)
    return float(f1_score(y_orig, clf.predict(x_orig), average="micro"))
