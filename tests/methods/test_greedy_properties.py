"""Greedy k-anonymization: DESIGN.md invariants and agreement with a plain-Python reference loop."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.algorithms.greedy import _order, greedy_partition
from polars_anon.classes import class_sizes
from polars_anon.generalize import class_ancestors
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, is_truthful
from tests.strategies import tables

OPTIONS = st.sampled_from([("first", "below_k"), ("first", "all"), ("smallest", "below_k"), ("smallest", "all")])
METRICS = st.sampled_from(["nllm", "ncp", "distortion", "total", "llm", "wllm", "wnllm"])


def reference(
    agg: pl.DataFrame, hs: dict[str, pa.Hierarchy], k: int, w: dict[str, np.ndarray], first: str, partners: str
) -> list[int]:
    """The greedy loop written plainly: classes as lists, one partner at a time (integer weights)."""
    qids = list(hs)
    root_w = {}
    for q, h in hs.items():  # R by walking each node up to the root
        root_w[q] = [sum(w[q][m] for m in _path(h, n)[:-1]) for n in range(h.n_nodes)]

    def lca(h: pa.Hierarchy, a: int, b: int) -> int:
        up = set(_path(h, a))
        return next(n for n in _path(h, b) if n in up)

    nodes0 = {q: h.ids_of(agg[q]) for q, h in hs.items()}
    size0 = agg["size"].to_numpy().astype(np.int64)
    order = _order(hs, nodes0, root_w_np(root_w), size0)
    classes = [{"rows": [int(i)], "rep": [int(nodes0[q][i]) for q in qids], "size": int(size0[i])} for i in order]
    while any(c["size"] < k for c in classes):
        small = [i for i, c in enumerate(classes) if c["size"] < k]
        s = small[0] if first == "first" else min(small, key=lambda i: (classes[i]["size"], i))
        pool = [i for i in (small if partners == "below_k" and len(small) > 1 else range(len(classes))) if i != s]
        cx = classes[s]

        def cost(j: int, cx: dict = cx) -> float:
            cy = classes[j]
            total = 0
            for t, q in enumerate(qids):
                m = lca(hs[q], cx["rep"][t], cy["rep"][t])
                total += (root_w[q][cx["rep"][t]] - root_w[q][m]) * cx["size"] + (
                    root_w[q][cy["rep"][t]] - root_w[q][m]
                ) * cy["size"]
            return total

        j = min(pool, key=lambda i: (cost(i), i))
        cy = classes[j]
        merged = {
            "rows": cx["rows"] + cy["rows"],
            "rep": [lca(hs[q], cx["rep"][t], cy["rep"][t]) for t, q in enumerate(qids)],
            "size": cx["size"] + cy["size"],
        }
        classes[min(s, j)] = merged
        del classes[max(s, j)]
    out = [0] * agg.height
    for c in classes:
        for r in c["rows"]:
            out[r] = min(c["rows"])
    return out


def _path(h: pa.Hierarchy, n: int) -> list[int]:
    path = [n]
    while h.parent[path[-1]] >= 0:
        path.append(int(h.parent[path[-1]]))
    return path


def root_w_np(root_w: dict[str, list[float]]) -> dict[str, np.ndarray]:
    return {q: np.asarray(v, dtype=float) for q, v in root_w.items()}


def same_partition(a: np.ndarray | list[int], b: np.ndarray | list[int]) -> bool:
    """Equal as partitions (the labels may differ)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


@settings(max_examples=40, deadline=None)
@given(t=tables(max_rows=25), k=st.integers(1, 6), opts=OPTIONS, data=st.data())
def test_loop_matches_the_reference(
    t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int, opts: tuple[str, str], data: st.DataObject
) -> None:
    """Integer edge weights keep every cost exact, so the partition must be the reference's."""
    df, hs = t
    assume(k <= df.height)
    w = {
        q: np.array(
            [0] + data.draw(st.lists(st.integers(0, 5), min_size=h.n_nodes - 1, max_size=h.n_nodes - 1)), dtype=float
        )
        for q, h in hs.items()
    }
    agg = class_sizes(df.lazy(), list(hs)).collect()
    got = greedy_partition(agg, hs, k, weights=w, first=opts[0], partners=opts[1], candidates=None, progress=False)
    assert same_partition(got.class_id, reference(agg, hs, k, w, *opts))


@settings(max_examples=40, deadline=None)
@given(
    t=tables(n_qids=3, max_rows=40),
    k=st.integers(1, 8),
    opts=OPTIONS,
    metric=METRICS,
    block=st.sampled_from([None, 2, 3, 5]),
)
@example(
    t=(TABLE_I.rename({"id": "row"}), ANIMAL_HIERARCHIES), k=3, opts=("first", "below_k"), metric="nllm", block=None
)
def test_greedy_keeps_the_invariants(
    t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int, opts: tuple[str, str], metric: str, block: int | None
) -> None:
    df, hs = t
    assume(k <= df.height)
    res = pa.anonymize(
        df,
        hierarchies=hs,
        insensitive="row",
        k=k,
        method="greedy",
        metric=metric,
        first=opts[0],
        partners=opts[1],
        candidates=block,
    )
    out = res.collect()
    qids = list(hs)
    assert out.group_by(qids).len()["len"].min() >= k  # 1. k-anonymous
    assert is_truthful(df, out, hs)  # 2. truthful
    assert out.height == df.height and out["row"].to_list() == df["row"].to_list()  # 3 + 4
    again = pa.anonymize(
        df,
        hierarchies=hs,
        insensitive="row",
        k=k,
        method="greedy",
        metric=metric,
        first=opts[0],
        partners=opts[1],
        candidates=block,
    ).collect()
    assert again.equals(out)  # 5. deterministic


@settings(max_examples=30, deadline=None)
@given(t=tables(n_qids=3, max_rows=40), k=st.integers(2, 6), opts=OPTIONS, block=st.integers(2, 6))
def test_published_tuple_is_the_class_lca(
    t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int, opts: tuple[str, str], block: int
) -> None:
    """The LCA tuple tracked by the loop is the Foundation's LCA of the class members; blocks >= C are exact."""
    df, hs = t
    assume(k <= df.height)
    agg = class_sizes(df.lazy(), list(hs)).collect()
    res = greedy_partition(agg, hs, k, first=opts[0], partners=opts[1], candidates=block, progress=False)
    assigned = agg.with_columns(pl.Series("cls", res.class_id))
    want = assigned.select("cls").join(
        class_ancestors(assigned.lazy(), hs, "cls").collect(), on="cls", how="left", maintain_order="left"
    )
    for q, h in hs.items():
        assert [h.label_of(i) for i in res.nodes[q]] == want[q].to_list()
    sizes = np.bincount(res.class_id, weights=agg["size"].to_numpy())
    assert sizes.min() >= k
    if block >= agg.height:
        exact = greedy_partition(agg, hs, k, first=opts[0], partners=opts[1], candidates=None, progress=False)
        assert np.array_equal(exact.class_id, res.class_id)
