"""Brute-force references for the SDC tests: plain loops over records, written from sdcMicro's R code."""

from __future__ import annotations

from collections.abc import Sequence

Row = Sequence[object]


def compatible(a: Row, b: Row) -> bool:
    """Two key patterns match when they agree wherever both are observed (None is missing)."""
    return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


def wildcard_fk(rows: Sequence[Row], weights: Sequence[float], alpha: float = 1.0) -> list[tuple[float, float]]:
    """sdcMicro freqCalc's fk/Fk with missing values as wildcards, record by record."""
    m, n = len(rows[0]), len(rows)
    out = []
    for a in rows:
        if all(x is None for x in a):
            out.append((float(n), float(sum(weights))))
            continue
        fk = big = 0.0
        for b, w in zip(rows, weights, strict=True):
            if not compatible(a, b):
                continue
            if tuple(b) == tuple(a):
                factor = 1.0
            elif all(x is not None for x in a):  # a complete: b has missing values
                factor = 0.0 if (m > 1 and all(y is None for y in b)) else alpha
            else:  # a partial
                factor = 1.0 if all(y is not None for y in b) else alpha
            fk += factor
            big += factor * w
        out.append((fk, big))
    return out


def is_k_anonymous_wildcard(rows: Sequence[Row], k: int) -> bool:
    """Every record's wildcard fk (alpha = 1) is at least k."""
    return all(fk >= k for fk, _ in wildcard_fk(rows, [1.0] * len(rows)))


# sdcMicro's `francdat` (data/francdat.rda, printed in its man pages): 8 records, keys Key1, Key2, Key3, Key4
# (sdcMicro's keyVars = c(2, 4, 5, 6)) and the weight w.
FRANCDAT = {
    "Key1": [1, 1, 1, 3, 4, 4, 6, 1],
    "Key2": [2, 2, 2, 3, 3, 3, 2, 2],
    "Key3": [5, 1, 1, 1, 1, 1, 1, 5],
    "Key4": [1, 1, 1, 5, 4, 1, 5, 1],
    "w": [18.0, 45.5, 39.0, 17.0, 541.0, 8.0, 5.0, 92.0],
}
FRANCDAT_KEYS = ["Key1", "Key2", "Key3", "Key4"]
