"""Hypothesis strategies: random hierarchies and random tables over their leaves."""

from __future__ import annotations

import polars as pl
from hypothesis import strategies as st

from polars_anon import Hierarchy


@st.composite
def hierarchies(draw: st.DrawFn, max_nodes: int = 12) -> Hierarchy:
    """A random rooted tree: node i > 0 hangs under a random earlier node."""
    n = draw(st.integers(2, max_nodes))
    parents = {"n0": None} | {f"n{i}": f"n{draw(st.integers(0, i - 1))}" for i in range(1, n)}
    return Hierarchy.from_parents(parents)


@st.composite
def tables(draw: st.DrawFn, n_qids: int = 2, max_rows: int = 30) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """A table with `n_qids` quasi-identifiers q0.. (values drawn from their leaves) and a row id."""
    hs = {f"q{j}": draw(hierarchies()) for j in range(n_qids)}
    rows = draw(st.integers(1, max_rows))
    cols = {q: draw(st.lists(st.sampled_from(h.leaf_labels), min_size=rows, max_size=rows)) for q, h in hs.items()}
    return pl.DataFrame({"row": list(range(rows)), **cols}), hs
