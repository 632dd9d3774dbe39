"""Invariants of Mondrian (strict, relaxed) and Datafly on random tables and hierarchies."""

from __future__ import annotations

import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.algorithms.mondrian import axes, coordinates, partition
from polars_anon.classes import class_sizes
from tests.strategies import tables

QIDS = ["q0", "q1"]


def _truthful(before: pl.DataFrame, after: pl.DataFrame, hs: dict[str, pa.Hierarchy]) -> bool:
    for q, h in hs.items():
        ok = {(h.label_of(a), h.label_of(b)) for a, b in zip(h.paths["node"], h.paths["ancestor"])}
        if not all((x, y) in ok for x, y in zip(before[q], after[q])):
            return False
    return True


@settings(max_examples=30, deadline=None)
@given(
    t=tables(n_qids=2, max_rows=30),
    k=st.integers(1, 5),
    mode=st.sampled_from(["strict", "relaxed"]),
    random=st.booleans(),
)
def test_mondrian_k_truthful_rows_kept(t: tuple[pl.DataFrame, dict], k: int, mode: str, random: bool) -> None:
    df, hs = t
    assume(k <= df.height)
    order = "random" if random else None
    out = pa.anonymize(
        df, hierarchies=hs, insensitive="row", k=k, method="mondrian", mode=mode, order=order, seed=7
    ).collect()
    assert out.height == df.height and out["row"].equals(df["row"])
    assert out.group_by(QIDS).len()["len"].min() >= k
    assert _truthful(df, out, hs)


@settings(max_examples=30, deadline=None)
@given(t=tables(n_qids=2, max_rows=40), k=st.integers(1, 5), counted=st.sampled_from([[], [0], [1], [0, 1]]))
def test_strict_closed_partitions_have_no_allowable_cut(
    t: tuple[pl.DataFrame, dict], k: int, counted: list[int]
) -> None:
    """With both median cuts (x <= m, x < m) tried, a strict partition is closed only when
    no threshold on any attribute leaves k rows on both sides: every threshold above the
    lower median leaves fewer on the right than x <= m, every one below fewer on the left
    than x < m."""
    df, hs = t
    assume(k <= df.height)
    agg = class_sizes(df.lazy(), QIDS).collect()
    coords = coordinates(agg, QIDS, axes({q: agg[q].unique().to_list() for q in QIDS}, hs))
    seg, _ = partition(coords, k, "strict", counted)
    rows = seg.join(coords.drop("__anon_size"), on="__anon_t")
    for j in range(2):
        per = (
            rows.group_by("__anon_pid", f"__anon_x{j}")
            .agg(pl.col("__anon_size").sum().alias("c"))
            .sort("__anon_pid", f"__anon_x{j}")
            .with_columns(
                pl.col("c").cum_sum().over("__anon_pid").alias("left"), pl.col("c").sum().over("__anon_pid").alias("n")
            )
        )
        assert per.filter((pl.col("left") >= k) & (pl.col("n") - pl.col("left") >= k)).height == 0


def _boxes(df: pl.DataFrame, hs: dict, k: int, mode: str) -> pl.DataFrame:
    agg = class_sizes(df.lazy(), QIDS).collect()
    ax = axes({q: agg[q].unique().to_list() for q in QIDS}, hs)
    coords = coordinates(agg, QIDS, ax)
    seg, _ = partition(coords, k, mode)
    return (
        seg.join(coords.drop("__anon_size"), on="__anon_t")
        .group_by("__anon_pid")
        .agg(
            pl.col("__anon_size").sum().alias("n"),
            *[f(f"__anon_x{j}").alias(f"{f.__name__}{j}") for j in range(2) for f in (pl.min, pl.max)],
        )
    )


@settings(max_examples=30, deadline=None)
@given(t=tables(n_qids=2, max_rows=40), k=st.integers(1, 5), mode=st.sampled_from(["strict", "relaxed"]))
def test_partitions_are_disjoint_boxes(t: tuple[pl.DataFrame, dict], k: int, mode: str) -> None:
    """Strict boxes never overlap; relaxed boxes may share a boundary value only."""
    df, hs = t
    assume(k <= df.height)
    b = _boxes(df, hs, k, mode)
    assert b["n"].min() >= k and b["n"].sum() == df.height
    rows = b.rows(named=True)
    for i, p in enumerate(rows):
        for r in rows[i + 1 :]:
            if mode == "strict":
                assert any(p[f"max{j}"] < r[f"min{j}"] or r[f"max{j}"] < p[f"min{j}"] for j in range(2))
            else:
                assert any(p[f"max{j}"] <= r[f"min{j}"] or r[f"max{j}"] <= p[f"min{j}"] for j in range(2))


@settings(max_examples=30, deadline=None)
@given(t=tables(n_qids=2, max_rows=30), k=st.integers(1, 5), budget=st.integers(0, 6), root=st.booleans())
def test_datafly_budget_and_k(t: tuple[pl.DataFrame, dict], k: int, budget: int, root: bool) -> None:
    df, hs = t
    assume(k <= df.height)
    r = pa.anonymize(
        df,
        hierarchies=hs,
        insensitive="row",
        k=k,
        method="datafly",
        max_suppressed=budget,
        suppress="root" if root else "remove",
    )
    out = r.collect()
    assert r.report["suppressed"] <= budget
    assert out.height == df.height - (0 if root else r.report["suppressed"])
    if out.height:
        assert out.group_by(QIDS).len()["len"].min() >= k
    kept = df.join(out.select("row"), on="row", how="semi", maintain_order="left")
    assert out["row"].equals(kept["row"])  # order kept
    assert _truthful(kept, out, hs)
