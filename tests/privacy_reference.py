"""Naive references for the privacy models: plain Python loops over the classes of a table.

Written from the papers' definitions, independently of polars_anon.privacy (no NumPy
vectorization, no shared helpers), so the property tests can compare the two.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict


def classes(rows: list[dict], qids: list[str], attribute: str | None = None) -> dict[tuple, list]:
    """Class tuple -> the list of its sensitive values (or of its rows when no attribute)."""
    out: dict[tuple, list] = defaultdict(list)
    for r in rows:
        out[tuple(r[q] for q in qids)].append(r[attribute] if attribute else r)
    return out


def distribution(values: list) -> dict:
    n = len(values)
    return {v: c / n for v, c in Counter(values).items()}


def distinct_l(values: list) -> float:
    return float(len(set(values)))


def entropy_l(values: list) -> float:
    return math.exp(-sum(p * math.log(p) for p in distribution(values).values()))


def recursive_ratio(values: list, l: int) -> float:
    r = sorted(Counter(values).values(), reverse=True)
    tail = sum(r[l - 1 :])
    return r[0] / tail if tail else math.inf


def emd_equal(values: list, overall: dict) -> float:
    p = distribution(values)
    return sum(abs(p.get(v, 0.0) - q) for v, q in overall.items()) / 2


def emd_ordered(values: list, overall: dict) -> float:
    p = distribution(values)
    order = sorted(overall)
    if len(order) < 2:
        return 0.0
    total, cum = 0.0, 0.0
    for v in order:
        cum += p.get(v, 0.0) - overall[v]
        total += abs(cum)
    return total / (len(order) - 1)


def emd_hierarchical(values: list, overall: dict, children: dict, level: dict, root: str) -> float:
    """Li et al. 2007, §4.2: cost(N) = level(N) / H * min(pos_extra(N), neg_extra(N)), summed over inner nodes."""
    p = distribution(values)
    height = level[root]
    total = 0.0

    def extra(node: str) -> float:
        nonlocal total
        kids = children.get(node, [])
        if not kids:
            return p.get(node, 0.0) - overall.get(node, 0.0)
        parts = [extra(c) for c in kids]
        pos = sum(e for e in parts if e > 0)
        neg = -sum(e for e in parts if e < 0)
        total += level[node] / height * min(pos, neg)
        return sum(parts)

    extra(root)
    return total


def delta_disclosure(values: list, overall: dict) -> float:
    return max(abs(math.log(p / overall[v])) for v, p in distribution(values).items())


def beta_basic(values: list, overall: dict) -> float:
    return max(max((p - overall[v]) / overall[v] for v, p in distribution(values).items()), 0.0)


def beta_enhanced(values: list, overall: dict) -> float:
    gains = {v: (p - overall[v]) / overall[v] for v, p in distribution(values).items()}
    if any(g > -math.log(overall[v]) * (1 + 1e-12) for v, g in gains.items()):
        return math.inf
    return max(max(gains.values()), 0.0)


def record_risks(rows: list[dict], qids: list[str]) -> list[float]:
    """Prosecutor risk of every record: 1 / the size of its class."""
    sizes = Counter(tuple(r[q] for q in qids) for r in rows)
    return [1 / sizes[tuple(r[q] for q in qids)] for r in rows]


def grassberger_term(n: int) -> float:
    """ARX's G_n: ``G_(2m) = -gamma - ln 2 + sum_(k=1..m) 2 / (2k - 1)`` [Grassberger 2003], m = n // 2
    (G_1 at m = 0)."""
    return -0.5772156649015329 - math.log(2) + sum(2 / (2 * k - 1) for k in range(1, n // 2 + 1))


def grassberger_l(values: list) -> float:
    """exp of Grassberger's entropy estimate: ``G_N - sum_i n_i / N G_(n_i)``."""
    n = len(values)
    return math.exp(grassberger_term(n) - sum(c * grassberger_term(c) for c in Counter(values).values()) / n)
