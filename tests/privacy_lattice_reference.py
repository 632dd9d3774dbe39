"""An exhaustive reference for full-domain search under privacy models: every vector, plain loops.

For every level vector the rows are grouped into classes by a dict, each class is judged
by the definitions of :mod:`tests.privacy_reference` (and a population table counted by a
plain loop over its rows), table models suppress whole classes one at a time, smallest
first (ties: :func:`suppressed_classes`), until they hold; the objective of the
vector then comes from :func:`tests.lattice_reference.values` and the optimum from
:func:`tests.lattice_reference.optimum`. Nothing here reads ``polars_anon.privacy``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from polars_anon import Hierarchy
from tests import privacy_reference as ref
from tests.lattice_reference import Classes, optimum, table_of, values


@dataclass
class RefModel:
    """A model as the reference reads it: a class verdict or a table verdict, from plain values."""

    name: str
    klass: Callable[[list, int, dict], bool] | None = None
    """(sensitive values of the class, its population count, overall distribution) -> satisfied."""
    table: Callable[[list[int]], bool] | None = None
    """(sizes of the kept classes) -> satisfied."""
    params: dict = field(default_factory=dict)


def l_distinct(l: int) -> RefModel:
    return RefModel("distinct", klass=lambda v, p, o: ref.distinct_l(v) >= l)


def l_entropy(l: float) -> RefModel:
    return RefModel("entropy", klass=lambda v, p, o: ref.entropy_l(v) >= l * (1 - 1e-12))


def l_grassberger(l: float) -> RefModel:
    return RefModel(
        "grassberger", klass=lambda v, p, o: ref.grassberger_l(v) >= l * (1 - 1e-12) and len(set(v)) >= math.ceil(l)
    )


def l_recursive(c: float, l: int) -> RefModel:
    return RefModel("recursive", klass=lambda v, p, o: ref.recursive_ratio(v, l) < c)


def t_equal(t: float) -> RefModel:
    return RefModel("t-equal", klass=lambda v, p, o: ref.emd_equal(v, o) <= t + 1e-12)


def delta_disclosure(delta: float) -> RefModel:
    return RefModel("delta-disclosure", klass=lambda v, p, o: ref.delta_disclosure(v, o) < delta)


def beta_basic(beta: float) -> RefModel:
    return RefModel("beta", klass=lambda v, p, o: ref.beta_basic(v, o) <= beta * (1 + 1e-12))


def presence(dmin: float, dmax: float) -> RefModel:
    return RefModel(
        "presence", klass=lambda v, p, o: dmin * (1 - 1e-12) <= len(v) / p <= dmax * (1 + 1e-12), params={"pop": True}
    )


def k_map(k: int) -> RefModel:
    return RefModel("k-map", klass=lambda v, p, o: p >= k, params={"pop": True})


def average_risk(threshold: float) -> RefModel:
    """Prosecutor average risk of the kept records: kept classes / kept rows."""
    return RefModel("average-risk", table=lambda sizes: not sizes or len(sizes) / sum(sizes) <= threshold * (1 + 1e-12))


def sample_uniques(share: float) -> RefModel:
    """Records in classes of one row (risk 1 > threshold 0.5) at most `share` of the kept rows."""
    return RefModel(
        "sample-uniques", table=lambda sizes: not sizes or sum(s for s in sizes if s == 1) / sum(sizes) <= share
    )


def classes_at(rows: list[tuple], leaf_ids: np.ndarray, hs: Sequence[Hierarchy], vector: Sequence[int]) -> dict:
    """Published node tuple -> row indices, in first-row order."""
    up = [h.generalize_ids(lv) for h, lv in zip(hs, vector)]
    out: dict[tuple, list[int]] = defaultdict(list)
    for i in range(len(rows)):
        out[tuple(int(up[j][leaf_ids[i, j]]) for j in range(len(hs)))].append(i)
    return dict(out)


def suppressed_classes(
    groups: dict,
    sensitive: list,
    pop: Counter | None,
    k: int,
    models: Sequence[RefModel],
    overall: dict,
    rows: list[tuple],
) -> list[tuple]:
    """The published tuples whose classes are suppressed: class models and k first, then table models by
    suppressing single kept classes, smallest first, until every table model holds. Ties: the class whose
    first input row comes first (ARX's order, polars_anon's documented one)."""
    bad = []
    for key, members in groups.items():
        values_ = [sensitive[i] for i in members]
        p = pop[key] if pop is not None else 0
        if len(members) < k or any(m.klass is not None and not m.klass(values_, p, overall) for m in models):
            bad.append(key)
    tables = [m for m in models if m.table is not None]
    if tables:
        first = {key: min(g) for key, g in groups.items()}  # row indices
        kept = sorted((len(g), first[key], key) for key, g in groups.items() if key not in bad)
        while kept and not all(m.table([s for s, _, _ in kept]) for m in tables):
            bad.append(kept.pop(0)[2])
        if not kept and not all(m.table([]) for m in tables):
            raise AssertionError("unreachable: an empty table holds every table model")
    return bad


def walk_optimum(
    df: pl.DataFrame,
    qids: Sequence[str],
    hs: Mapping[str, Hierarchy],
    k: int,
    models: Sequence[RefModel],
    budget: int,
    config: Mapping[str, object],
    sensitive: str | None = None,
    population: pl.DataFrame | None = None,
) -> tuple[tuple[int, ...], tuple[float, ...], int] | None:
    """``(vector, key, suppressed)`` of the best vector within `budget` (None: none is), by an exhaustive walk."""
    hl = [hs[q] for q in qids]
    rows = df.select(qids).rows()
    leaf = np.array([[h.id_of(v) for h, v in zip(hl, r)] for r in rows], dtype=np.int64).reshape(len(rows), len(qids))
    values_s = df[sensitive].to_list() if sensitive else [None] * len(rows)
    overall = ref.distribution(values_s) if sensitive else {}
    pop_leaf = None
    if population is not None:
        pop_rows = population.select(qids).rows()
        pop_leaf = np.array([[h.id_of(v) for h, v in zip(hl, r)] for r in pop_rows], dtype=np.int64)
    tuples = df.group_by(qids).len("size").sort(qids)
    t = table_of(tuples, qids, hs)
    found = []
    for vector in itertools.product(*[range(h.height) for h in hl]):
        groups = classes_at(rows, leaf, hl, vector)
        pop = None
        if pop_leaf is not None:
            up = [h.generalize_ids(lv) for h, lv in zip(hl, vector)]
            pop = Counter(tuple(int(up[j][r[j]]) for j in range(len(hl))) for r in pop_leaf)
        bad = set(suppressed_classes(groups, values_s, pop, k, models, overall, rows))
        keys = list(groups)
        cls = Classes(
            tuple(vector),
            np.array([len(groups[key]) for key in keys], dtype=np.int64),
            np.array(keys, dtype=np.int64).reshape(len(keys), len(hl)),
            np.zeros(len(keys), dtype=np.int64),
        )
        key, s = values(cls, t, [k], {"c": config}, np.array([key in bad for key in keys]))[(k, "c")]
        if s < len(rows):  # a vector that suppresses every row publishes nothing: no solution
            found.append((tuple(vector), key, s))
    return optimum(found, budget, str(config["metric"]))
