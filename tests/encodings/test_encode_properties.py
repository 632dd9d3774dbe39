"""Invariants of the encodings on random tables and partitions [paper 000 §III-B]."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import example, given, settings
from hypothesis import strategies as st

from polars_anon.encode import encode, encoded_columns, indicator_table
from polars_anon.generalize import generalize_partition
from tests.examples import FIG2, RACE, TABLE_I, TABLE_I_PARTITION
from tests.strategies import hierarchies

H = {"x": FIG2, "race": RACE}


@st.composite
def partitions(draw):
    n = draw(st.integers(1, 25))
    x = draw(st.lists(st.sampled_from(FIG2.leaf_labels), min_size=n, max_size=n))
    race = draw(st.lists(st.sampled_from(RACE.leaf_labels), min_size=n, max_size=n))
    cls = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    return pl.DataFrame({"x": x, "race": race, "cls": cls})


PAPER = pl.DataFrame({"x": ["a", "b", "c", "d", "e", "f"], "race": TABLE_I["race"], "cls": TABLE_I_PARTITION})


def _cuts(h):
    """For each level L, the nodes a leaf is published as at L: they partition the leaves."""
    leaves = np.flatnonzero(h.is_leaf)
    return [sorted({int(v) for v in h.generalize_ids(lv)[leaves]}) for lv in range(h.height)]


@settings(max_examples=25, deadline=None)
@given(t=partitions())
@example(t=PAPER)
def test_proportional_invariants(t):
    published = generalize_partition(t.lazy(), H, "cls").collect()
    out = encode(published, H, "proportional", original=t).collect()
    assert out.height == t.height
    for q, h in H.items():
        names = encoded_columns(q, h)
        m = out.select(names).to_numpy()
        assert ((m >= 0) & (m <= 1 + 1e-6)).all()
        col_of = {int(i): j for j, i in enumerate(sorted(range(h.n_nodes), key=lambda i: (h.level[i], i)))}
        for cut in _cuts(h):  # each level sums to 1 in every row [paper 000 §III-B]
            assert np.allclose(m[:, [col_of[i] for i in cut]].sum(axis=1), 1.0, atol=1e-5)
        # the published node and its ancestors are 1: every original value lies under them
        pub_ids = h.ids_of(published[q]).tolist()
        assert np.allclose(m[np.arange(t.height), [col_of[i] for i in pub_ids]], 1.0)
    # rows of one class (same published tuple) are identical
    key = published.select(list(H)).with_row_index()
    wide = pl.concat([key, out.drop("cls")], how="horizontal")
    per_class = wide.group_by(list(H)).agg(pl.all().exclude("index").n_unique())
    assert (per_class.drop(list(H)).to_numpy() == 1).all()


@settings(max_examples=25, deadline=None)
@given(t=partitions(), seed=st.integers(0, 2**32))
def test_mappings_publish_leaves_under_the_published_node(t, seed):
    published = generalize_partition(t.lazy(), H, "cls").drop("cls").collect()
    for how in ("random", "statistical"):
        mapped = encode(published, H, how, original=t.drop("cls"), seed=seed).collect()
        assert mapped.equals(encode(published, H, how, original=t.drop("cls"), seed=seed).collect())
        for q, h in H.items():
            for leaf, pub in zip(mapped[q], published[q]):
                assert h.is_leaf[h.id_of(leaf)]
                assert h.lca(h.id_of(leaf), h.id_of(pub)) == h.id_of(pub)
            if how == "statistical":  # never a leaf absent from the original table
                assert set(mapped[q]) <= set(t[q])


@settings(max_examples=20, deadline=None)
@given(t=partitions())
def test_class_id_and_row_aligned_inputs_agree(t):
    published = generalize_partition(t.lazy(), H, "cls").collect()
    aligned = encode(published.drop("cls"), H, original=t.drop("cls")).collect()
    by_class = encode(t, H, class_col="cls").collect().drop("cls")
    # classes with equal published tuples merge in the row-aligned reading; compare only when distinct
    if published.select(*H, "cls").unique().height == published.select(*H).unique().height:
        assert aligned.equals(by_class)


def _marked(h, rep: str, node: str, column: str) -> bool:
    """The definition of an indicator cell (paper 000 Table II, paper 003 §3.4.1) from the labels' paths: `node`
    published, is `column`'s indicator set?"""
    if rep == "oneclass":
        return column == node
    if rep == "fillparent":
        return column in h.path_of(node)
    return node in h.path_of(column) and (rep == "fillchild" or column in h.leaf_labels)


@settings(max_examples=40, deadline=None)
@given(h=hierarchies(), rep=st.sampled_from(["oneclass", "fillparent", "fillchild", "setbinary"]))
@example(h=FIG2, rep="fillchild").via("Figure 2 of paper 001")
def test_indicator_table_marks_what_its_definition_marks(h, rep):
    """One row per node in node id order, one column per node of the block, 1 exactly where the definition says."""
    t = indicator_table("q", h, rep)
    assert t.columns == ["__anon_label", *encoded_columns("q", h, rep)] and t["__anon_label"].to_list() == h.labels
    assert all(dtype == pl.Float32 for dtype in t.schema.dtypes()[1:])
    for node, *cells in t.iter_rows():
        assert cells == [float(_marked(h, rep, node, c.removeprefix("q_"))) for c in t.columns[1:]], (rep, node)
