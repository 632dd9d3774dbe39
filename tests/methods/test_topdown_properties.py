"""Top-down local recoding: the invariants, and agreement with a plain-Python reference of steps 1 and 2."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.algorithms.topdown import MAX_ROUNDS, _Axis, _distinct_ranges, _passes, _Rule, _without
from polars_anon.classes import class_sizes
from polars_anon.metrics.cells import loss_per_node
from polars_anon.privacy.constraints import Constraints
from tests.examples import is_truthful
from tests.methods.test_greedy_properties import _path
from tests.strategies import tables


def _lca(h: pa.Hierarchy, nodes: list[int]) -> int:
    top = nodes[0]
    for n in nodes[1:]:
        up = set(_path(h, top))
        top = next(a for a in _path(h, n) if a in up)
    return top


def _child(h: pa.Hierarchy, node: int, value: int) -> int | None:
    """The child of `node` on the path up from `value` (None when value is node)."""
    path = _path(h, value)
    i = path.index(node)
    return path[i - 1] if i > 0 else None


def _best_split(agg_nodes: dict, hs: dict, size: list[int], cls: list[int], k: int, defer: bool):
    """The split of one class the module docstring describes: (parts, set aside) or None."""
    total = sum(size[r] for r in cls)
    best_gain, best = 0.0, None
    for q, h in hs.items():
        loss = loss_per_node(h)
        node = _lca(h, [agg_nodes[q][r] for r in cls])
        groups: dict[int | None, list[int]] = {}
        for r in cls:
            groups.setdefault(_child(h, node, agg_nodes[q][r]), []).append(r)
        rows_of = {c: sum(size[r] for r in g) for c, g in groups.items()}
        big = sorted(c for c in groups if c is not None and rows_of[c] >= k)  # preorder ids: sibling order
        rest = [r for c, g in groups.items() if c not in big for r in g]
        rest_rows = sum(size[r] for r in rest)
        cost = {c: rows_of[c] * loss[_lca(h, [agg_nodes[q][r] for r in groups[c]])] for c in big}
        after = sum(cost.values())
        parts, aside = [groups[c] for c in big], []
        if rest_rows >= k:
            after += rest_rows * loss[_lca(h, [agg_nodes[q][r] for r in rest])]
            parts.append(rest)
        elif rest and big and defer:
            after += rest_rows * loss[_lca(h, [agg_nodes[q][r] for r in rest])]
            aside = rest
        elif rest and big:
            t = min(big, key=lambda c: (rows_of[c], c))
            joined = groups[t] + rest
            after += (rows_of[t] + rest_rows) * loss[_lca(h, [agg_nodes[q][r] for r in joined])] - cost[t]
            parts = [joined if c == t else groups[c] for c in big]
        if len(parts) + bool(aside) < 2:
            continue
        gain = total * loss[node] - after
        if gain > best_gain * (1 + 1e-12) + 1e-12:
            best_gain, best = gain, (parts, aside)
    return best


def reference(
    agg: pl.DataFrame, hs: dict[str, pa.Hierarchy], k: int, max_rounds: int = MAX_ROUNDS
) -> tuple[set[frozenset[int]], list[int]]:
    """Steps 1 and 2 written plainly, class by class: the classes (sets of aggregate rows) and the leftover."""
    size = agg["size"].to_list()
    nodes = {q: [h.id_of(v) for v in agg[q]] for q, h in hs.items()}
    placed: set[frozenset[int]] = set()
    todo = list(range(agg.height))
    for rounds in range(1, max_rounds + 2):
        open_, aside = [todo], []
        while open_:
            nxt = []
            for cls in open_:
                split = _best_split(nodes, hs, size, cls, k, rounds <= max_rounds)
                if split is None:
                    (placed.add(frozenset(cls)) if sum(size[r] for r in cls) >= k else aside.extend(cls))
                else:
                    nxt += split[0]
                    aside += split[1]
            open_ = nxt
        if sum(size[r] for r in aside) < k or len(aside) == len(todo):
            break
        todo = sorted(aside)
    return placed, sorted(aside)


@settings(max_examples=60, deadline=None)
@given(t=tables(n_qids=3, max_rows=40), k=st.integers(1, 6), max_rounds=st.sampled_from([0, 1, MAX_ROUNDS]))
@example(
    t=(pl.DataFrame({"row": range(6), "q0": list("xxxyyz")}), {"q0": pa.Hierarchy.suppression(["x", "y", "z"])}),
    k=2,
    max_rounds=0,
)
def test_passes_match_the_reference(t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int, max_rounds: int) -> None:
    """max_rounds 0 and 1 reach the last pass, which sets nothing aside (children below k join the smallest big one)."""
    df, hs = t
    assume(k <= df.height)
    agg = class_sizes(df.lazy(), list(hs)).collect()
    size = agg["size"].to_numpy().astype(np.int64)
    axes = [_Axis(h, agg[q]) for q, h in hs.items()]
    klass, n_classes, aside, _ = _passes(axes, size, _Rule(k, Constraints(size, k)), max_rounds)
    got = {frozenset(np.flatnonzero(klass == c).tolist()) for c in range(n_classes)}
    want, leftover = reference(agg, hs, k, max_rounds)
    assert got == want
    assert sorted(aside.tolist()) == leftover


@settings(max_examples=40, deadline=None)
@given(t=tables(n_qids=3, max_rows=40), k=st.integers(1, 8), budget=st.sampled_from([0, 1, 3, 10]))
def test_topdown_keeps_the_invariants(t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int, budget: int) -> None:
    df, hs = t
    assume(k <= df.height)
    res = pa.anonymize(df, hierarchies=hs, insensitive="row", k=k, method="topdown", max_suppressed=budget)
    out = res.collect()
    qids = list(hs)
    assert out.height + res.report["suppressed"] == df.height
    assert res.report["suppressed"] <= budget
    if out.height:
        assert out.group_by(qids).len()["len"].min() >= k  # k-anonymous
    kept = df.join(out.select("row"), on="row", how="semi", maintain_order="left")
    assert is_truthful(kept, out, hs)  # every published value is the original or an ancestor
    again = pa.anonymize(df, hierarchies=hs, insensitive="row", k=k, method="topdown", max_suppressed=budget).collect()
    assert again.equals(out)  # deterministic


@settings(max_examples=30, deadline=None)
@given(t=tables(n_qids=2, max_rows=30), k=st.integers(1, 5))
def test_loss_never_above_everything_at_the_roots(t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int) -> None:
    """The report's loss is in [0, 1], and 0 exactly when every tuple already holds k rows."""
    df, hs = t
    assume(k <= df.height)
    res = pa.anonymize(df, hierarchies=hs, insensitive="row", k=k, method="topdown")
    loss = res.report["loss"]
    assert 0.0 <= loss <= 1.0 + 1e-12
    smallest = df.group_by(list(hs)).len()["len"].min()
    if smallest >= k:
        assert loss == 0.0


@settings(max_examples=40, deadline=None)
@given(t=tables(n_qids=3, max_rows=40), k=st.integers(1, 6))
def test_improve_never_raises_the_loss(t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int) -> None:
    """Step 4 only takes changes that lower the loss; without suppression the report's loss cannot rise."""
    df, hs = t
    assume(k <= df.height)
    run = {"hierarchies": hs, "insensitive": "row", "k": k, "method": "topdown"}
    plain = pa.anonymize(df, improve=False, **run)
    better = pa.anonymize(df, **run)
    assert better.report["loss"] <= plain.report["loss"] + 1e-12
    out = better.collect()
    assert out.group_by(list(hs)).len()["len"].min() >= k
    assert is_truthful(df, out, hs)


@settings(max_examples=200, deadline=None)
@given(
    leaves=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 3)), min_size=1, max_size=30),
    at_leaves=st.booleans(),
)
def test_distinct_ranges_are_the_sorted_distinct_pairs(leaves: list[tuple[int, int]], at_leaves: bool) -> None:
    """The move pass's distinct leaf ranges (a mark per leaf when every tuple is at a leaf, else np.unique) against a
    plain-Python reference: the distinct (lo, hi) pairs sorted, and each tuple's place among them."""
    h = pa.Hierarchy.from_dict({"*": {f"n{i}": [f"v{i}{j}" for j in range(4)] for i in range(4)}})  # 16 leaves
    ax = _Axis(h, pl.Series([f"v{i // 4}{i % 4}" for i in range(16)]))
    t_lo = np.array([lo for lo, _ in leaves], dtype=np.int64)
    t_hi = t_lo if at_leaves else np.array([min(lo + w, 15) for lo, w in leaves], dtype=np.int64)
    (lo, hi), inverse = _distinct_ranges(ax, t_lo, t_hi)
    want = sorted(set(zip(t_lo.tolist(), t_hi.tolist())))
    assert list(zip(lo.tolist(), hi.tolist())) == want
    assert inverse.tolist() == [want.index(p) for p in zip(t_lo.tolist(), t_hi.tolist())]


@settings(max_examples=200, deadline=None)
@given(data=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), min_size=1, max_size=30), low=st.booleans())
def test_without_is_the_extreme_of_the_other_tuples(data: list[tuple[int, int]], low: bool) -> None:
    """_without: per tuple, its class's least (or greatest) value over the class's other tuples (none: the empty
    minimum's int64 max, the empty maximum's -1), against a plain-Python reference."""
    cid = np.array([c for c, _ in data], dtype=np.int64)
    x = np.array([v for _, v in data], dtype=np.int64)
    n = int(cid.max()) + 1
    pick = min if low else max
    extreme = np.array([pick([v for c, v in data if c == k], default=0) for k in range(n)], dtype=np.int64)
    got = _without(x, cid, extreme, np.minimum if low else np.maximum)
    for i, (c, _) in enumerate(data):
        others = [v for j, (d, v) in enumerate(data) if d == c and j != i]
        assert got[i] == (pick(others) if others else np.iinfo(np.int64).max if low else -1)
