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
