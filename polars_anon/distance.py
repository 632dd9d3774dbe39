"""Dissimilarities between mixed records [paper 004 §4]: Gower and Ahmad-Dey.

Records are held column-wise as NumPy arrays: numeric attributes as Float64 (one row
per attribute), categorical attributes as integer codes. Distances are computed
some rows against many (``distances(a_rows, all_rows)`` gives an ``a x n`` block),
never as an ``n x n`` matrix.

Gower [paper 004 eq. 1]: the mean over attributes of ``|x - y| / range`` (numeric)
and ``[x != y]`` (categorical); all weights are 1 (the pipeline refuses nulls).

Ahmad-Dey [paper 004 eq. 2]: ``sum_r w_r (x_r - y_r)^2 + sum_s delta_s(x_s, y_s)``.
Readings taken:

- ``delta_s(a, b)`` is the mean over every other attribute ``A_v`` of
  ``max_omega P(omega|a) + P(not omega|b) - 1``, as in Ahmad and Dey's original
  definition (paper 004 writes that omega maximizes ``P(omega|a) + P(omega|b)``,
  which would make every delta 0; we read it as a typo). The maximum is reached by
  putting in omega every value u with ``P(u|a) > P(u|b)``, so delta equals the total
  variation distance ``1/2 sum_u |P(u|a) - P(u|b)|``, in [0, 1].
- Numeric attributes are scaled to [0, 1] by their range before squaring, and are
  discretized for the co-occurrence statistics into :data:`NUMERIC_BINS`
  equal-width bins (their own distinct values when there are no more than that).
- ``w_r`` is the mean of ``delta`` over all pairs of distinct occupied bins of
  attribute r (the paper's pairs of discretized values: an empty equal-width bin
  holds no value and is left out).
- With a single attribute there is no other attribute to co-occur with: delta is
  the 0/1 mismatch and w is 1.
- Equation 2 is used as printed: the categorical term is delta, not delta squared.

The co-occurrence counts are Polars group-by aggregations; the (value x value)
tables built from them are small (distinct values squared per attribute).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_anon.labels import label_series

__all__ = ["NUMERIC_BINS", "AhmadDey", "Gower", "Records", "encode_records", "make_distance"]

NUMERIC_BINS = 5


@dataclass(frozen=True)
class Records:
    """Quasi-identifier values of n records, column-wise.

    ``num`` is ``(p, n)`` Float64 for the numeric attributes, ``cat`` is ``(c, n)``
    Int64 codes for the categorical ones; ``labels[j]`` maps code -> value of the
    j-th categorical attribute.
    """

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    num: np.ndarray
    cat: np.ndarray
    labels: tuple[tuple[str, ...], ...]

    @property
    def n(self) -> int:
        return int(self.num.shape[1])

    @property
    def m(self) -> int:
        return len(self.numeric) + len(self.categorical)


def encode_records(
    df: pl.DataFrame,
    numeric: Sequence[str],
    categorical: Sequence[str],
    order: Mapping[str, Sequence[str]] | None = None,
) -> Records:
    """Column-wise arrays of `df`: numeric columns cast to Float64, categorical ones coded.

    Categorical codes follow ``order[q]`` (for example a hierarchy's leaf order, so
    that a code range is a run of related values) restricted to the values present,
    then any other value in sorted order.

    >>> r = encode_records(pl.DataFrame({"age": ["30", "40"], "sex": ["M", "F"]}), ["age"], ["sex"])
    >>> r.num.tolist(), r.cat.tolist(), r.labels
    ([[30.0, 40.0]], [[1, 0]], (('F', 'M'),))
    """
    order = order or {}
    n = df.height
    num = np.empty((len(numeric), n), dtype=np.float64)
    for j, q in enumerate(numeric):
        num[j] = df[q].cast(pl.Float64).to_numpy()
    cat = np.empty((len(categorical), n), dtype=np.int64)
    labels = []
    for j, q in enumerate(categorical):
        col = label_series(df[q])
        present = set(col.unique().to_list())
        first = [v for v in order.get(q, ()) if v in present]
        rest = sorted(present - set(first))
        levels = tuple(first + rest)
        cat[j] = col.cast(pl.Enum(levels)).to_physical().cast(pl.Int64).to_numpy()
        labels.append(levels)
    return Records(tuple(numeric), tuple(categorical), num, cat, tuple(labels))


class Gower:
    """Gower dissimilarity [paper 004 eq. 1], numeric ranges taken from `records`.

    >>> r = encode_records(pl.DataFrame({"age": [20.0, 30.0, 60.0], "sex": ["M", "F", "M"]}), ["age"], ["sex"])
    >>> g = Gower(r)
    >>> num, cat = g.transform(r)
    >>> g.distances(num[:, :1], cat[:, :1], num, cat).round(4).tolist()
    [[0.0, 0.625, 0.5]]
    """

    name = "gower"

    def __init__(self, records: Records) -> None:
        if records.num.size:
            lo, hi = records.num.min(axis=1), records.num.max(axis=1)
        else:
            lo = hi = np.zeros(len(records.numeric))
        span = hi - lo
        self.lo = lo
        self.scale = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        self.m = records.m

    def transform(self, records: Records) -> tuple[np.ndarray, np.ndarray]:
        """Numeric scaled to [0, 1] by the fitted range; codes unchanged."""
        return (records.num - self.lo[:, None]) * self.scale[:, None], records.cat

    def distances(self, num_a: np.ndarray, cat_a: np.ndarray, num: np.ndarray, cat: np.ndarray) -> np.ndarray:
        """``(a, n)`` dissimilarities of the a records (columns of num_a/cat_a) to the n records."""
        if num_a.shape[1] == 1:  # one row against many: scalar broadcasting, 1-D passes
            d = np.zeros(num.shape[1])
            for j in range(num.shape[0]):
                d += np.abs(num[j] - num_a[j, 0])
            for j in range(cat.shape[0]):
                d += cat[j] != cat_a[j, 0]
            d /= max(self.m, 1)
            return d[None, :]
        d = np.zeros((num_a.shape[1], num.shape[1]))
        for j in range(num.shape[0]):
            d += np.abs(num_a[j][:, None] - num[j][None, :])
        for j in range(cat.shape[0]):
            d += cat_a[j][:, None] != cat[j][None, :]
        return d / max(self.m, 1)


def _binned(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Bin codes of a numeric column: its distinct values if few, else equal-width bins."""
    values, inverse = np.unique(x, return_inverse=True)
    if len(values) <= NUMERIC_BINS:
        return inverse.astype(np.int64), len(values)
    lo, hi = values[0], values[-1]
    codes = np.minimum(((x - lo) / (hi - lo) * NUMERIC_BINS).astype(np.int64), NUMERIC_BINS - 1)
    return codes, NUMERIC_BINS


def _total_variation(p: np.ndarray) -> np.ndarray:
    """``(L, L)`` table of 1/2 sum_u |p[a, u] - p[b, u]| for the rows of p."""
    n_rows = p.shape[0]
    out = np.empty((n_rows, n_rows))
    step = max(1, int(2e7 // max(p.size, 1)))
    for start in range(0, n_rows, step):
        block = p[start : start + step]
        out[start : start + step] = 0.5 * np.abs(block[:, None, :] - p[None, :, :]).sum(axis=2)
    return out


class AhmadDey:
    """Ahmad-Dey dissimilarity [paper 004 eq. 2], statistics fitted on `records`.

    ``delta[j]`` is the (value x value) table of the j-th categorical attribute and
    ``weights`` the significance of each numeric attribute (module docstring).

    >>> df = pl.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "u", "u", "v"]})
    >>> ad = AhmadDey(encode_records(df, [], ["a", "b"]))
    >>> ad.delta[0].tolist()  # P(b|x) = (1, 0), P(b|y) = (1/2, 1/2)
    [[0.0, 0.5], [0.5, 0.0]]
    """

    name = "ahmad_dey"

    def __init__(self, records: Records) -> None:
        p, c = len(records.numeric), len(records.categorical)
        coded: dict[str, np.ndarray] = {}
        sizes: dict[str, int] = {}
        for j, q in enumerate(records.numeric):
            coded[q], sizes[q] = _binned(records.num[j])
        for j, q in enumerate(records.categorical):
            coded[q], sizes[q] = records.cat[j], len(records.labels[j])
        frame = pl.DataFrame({f"c{i}": v for i, v in enumerate(coded.values())})
        names = list(coded)
        col = {q: f"c{i}" for i, q in enumerate(names)}

        def delta(s: str) -> np.ndarray:
            others = [v for v in names if v != s]
            if not others:
                return 1.0 - np.eye(sizes[s])
            total = np.zeros((sizes[s], sizes[s]))
            for v in others:
                counts = frame.group_by(col[s], col[v]).len()  # co-occurrence counts
                table = np.zeros((sizes[s], sizes[v]))
                table[counts[col[s]].to_numpy(), counts[col[v]].to_numpy()] = counts["len"].to_numpy()
                rows = table.sum(axis=1, keepdims=True)
                total += _total_variation(table / np.where(rows > 0, rows, 1.0))
            return total / len(others)

        self.delta = [delta(q) for q in records.categorical]
        weights = np.ones(p)
        if p + c > 1:
            for j, q in enumerate(records.numeric):
                seen = np.unique(coded[q])  # occupied bins: an empty bin is no discretized value (hunt36)
                d = delta(q)[np.ix_(seen, seen)]
                weights[j] = d[np.triu_indices(len(seen), 1)].mean() if len(seen) > 1 else 0.0
        self.weights = weights
        self.gower = Gower(records)  # for the range scaling

    def transform(self, records: Records) -> tuple[np.ndarray, np.ndarray]:
        """Numeric scaled to [0, 1] and multiplied by sqrt(w); codes unchanged."""
        num, cat = self.gower.transform(records)
        return num * np.sqrt(self.weights)[:, None], cat

    def distances(self, num_a: np.ndarray, cat_a: np.ndarray, num: np.ndarray, cat: np.ndarray) -> np.ndarray:
        """``(a, n)`` dissimilarities of the a records to the n records."""
        if num_a.shape[1] == 1:  # one row against many: 1-D passes, one table row per attribute
            d = np.zeros(num.shape[1])
            for j in range(num.shape[0]):
                d += (num[j] - num_a[j, 0]) ** 2
            for j in range(cat.shape[0]):
                d += self.delta[j][cat_a[j, 0]].take(cat[j])
            return d[None, :]
        d = np.zeros((num_a.shape[1], num.shape[1]))
        for j in range(num.shape[0]):
            d += (num_a[j][:, None] - num[j][None, :]) ** 2
        for j in range(cat.shape[0]):
            d += self.delta[j][cat_a[j][:, None], cat[j][None, :]]
        return d


def make_distance(name: str, records: Records) -> Gower | AhmadDey:
    """The fitted dissimilarity called `name` ("gower" or "ahmad_dey")."""
    return Gower(records) if name == "gower" else AhmadDey(records)
