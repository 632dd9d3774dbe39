"""Metric properties on random hierarchies and random truthful publications.

- An untouched table loses nothing; T* (every cell at its root) is 100% altered.
- Generalizing one more cell never lowers a cell-level loss (NCP, LLM, NLLM, the
  other cost metrics, ambiguity, granularity, ...).
- Discernibility is monotone when a whole class is generalized (local recoding
  works on classes), not when a single cell is: see the counter-example.
- Values stay inside their documented ranges.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.metrics import METRICS, compute
from polars_anon.metrics.data import MetricData, from_mapping, fully_suppressed, prepare
from polars_anon.metrics.distribution import hellinger
from polars_anon.metrics.sums import sorted_products_numpy_sum, stable_sum
from tests.strategies import tables

QIDS = ["q0", "q1"]
CELL_MONOTONE = [
    "distortion",
    "ncp",
    "total",
    "llm",
    "nllm",
    "wllm",
    "wnllm",
    "modified",
    "deleted",
    "iloss",
    "granularity",
    "loss",
    "ambiguity",
    "information_loss",
]
ALL_BUT_SENSITIVE = [n for n, m in METRICS.items() if not m.needs_sensitive]  # aliases included
WITHIN_T_STAR = [
    "distortion",
    "ncp",
    "total",
    "llm",
    "nllm",
    "wllm",
    "wnllm",
    "ambiguity",
    "information_loss",
    "discernibility",
    "absolute_distance",
    "relative_distance",
]
"""Metrics that T* bounds for any truthful publication (entropy and the squared distance error are not bounded:
a node's leaves can be more evenly spread, or their mean further away, than the whole domain's)."""


def _ancestors(h: pa.Hierarchy, label: str) -> list[str]:
    node = h.id_of(label)
    out = []
    while node >= 0:
        out.append(h.label_of(node))
        node = int(h.parent[node])
    return out  # the value itself first, the root last


@st.composite
def publications(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """A random table and a random truthful publication of it (each cell at one of its ancestors)."""
    df, hs = draw(tables(n_qids=2, max_rows=25))
    published = df.with_columns(
        pl.Series(q, [draw(st.sampled_from(_ancestors(hs[q], v))) for v in df[q]], dtype=pl.String) for q in QIDS
    )
    return df, published, hs


def _all(original: pl.DataFrame, published: pl.DataFrame, hs: dict) -> dict:
    return compute(original, published, QIDS, hs, ALL_BUT_SENSITIVE).row(0, named=True)


@settings(max_examples=40, deadline=None)
@given(t=tables(n_qids=2, max_rows=25))
def test_untouched_table_loses_nothing(t: tuple) -> None:
    df, hs = t
    got = _all(df, df, hs)
    for name, m in METRICS.items():
        if m.untouched is not None and name in got:
            if name == "squared_distance_error":
                assert got[name] is None  # random hierarchies have no numeric leaves
            else:
                assert got[name] == pytest.approx(m.untouched, abs=1e-12), name
    classes = pa.class_sizes(df.lazy(), QIDS).collect()["size"]
    assert got["discernibility"] == int((classes.cast(pl.Int64) ** 2).sum())
    assert (got["n_classes"], got["min_class_size"]) == (classes.len(), classes.min())


@settings(max_examples=40, deadline=None)
@given(t=tables(n_qids=2, max_rows=25))
def test_t_star_is_fully_altered(t: tuple) -> None:
    df, hs = t
    star = df.with_columns(pl.lit(hs[q].root).alias(q) for q in QIDS)
    got = _all(df, star, hs)
    assert got["alteration"] == pytest.approx(100.0)  # every hierarchy has >= 2 nodes: some metric sees a loss
    assert got["precision"] == pytest.approx(0.0)
    assert got["n_classes"] == 1 and got["diameter"] == 0 and got["discernibility"] == df.height**2
    assert got["modified"] == got["deleted"] == 100.0  # every hierarchy has a root above its leaves


@settings(max_examples=50, deadline=None)
@given(p=publications(), data=st.data())
def test_generalizing_one_more_cell_never_lowers_cell_losses(p: tuple, data: st.DataObject) -> None:
    original, published, hs = p
    row = data.draw(st.integers(0, published.height - 1))
    q = data.draw(st.sampled_from(QIDS))
    chain = _ancestors(hs[q], published[q][row])
    if len(chain) == 1:
        return  # already the root
    more = published.with_columns(
        pl.when(pl.int_range(pl.len()) == row).then(pl.lit(chain[1])).otherwise(pl.col(q)).alias(q)
    )
    before, after = _all(original, published, hs), _all(original, more, hs)
    for name in CELL_MONOTONE:
        assert after[name] >= before[name] - 1e-9, name
    assert after["precision"] <= before["precision"] + 1e-9


@settings(max_examples=50, deadline=None)
@given(p=publications(), data=st.data())
def test_generalizing_a_whole_class_never_lowers_discernibility(p: tuple, data: st.DataObject) -> None:
    original, published, hs = p
    classes = published.select(QIDS).unique().sort(QIDS)
    target = classes.row(data.draw(st.integers(0, classes.height - 1)), named=True)
    q = data.draw(st.sampled_from(QIDS))
    chain = _ancestors(hs[q], target[q])
    if len(chain) == 1:
        return
    in_class = pl.all_horizontal(pl.col(c) == target[c] for c in QIDS)
    more = published.with_columns(pl.when(in_class).then(pl.lit(chain[1])).otherwise(pl.col(q)).alias(q))
    before, after = _all(original, published, hs), _all(original, more, hs)
    assert after["discernibility"] >= before["discernibility"]
    assert after["ncp"] >= before["ncp"] - 1e-9 and after["ambiguity"] >= before["ambiguity"] - 1e-9


def test_one_cell_can_lower_discernibility() -> None:
    """Why discernibility is monotone per class, not per cell: a class of 3 split 2 + 1 goes from 9 to 5."""
    h = pa.Hierarchy.from_dict({"*": {"A": ["a", "b"]}})
    original = pl.DataFrame({"q": ["a", "a", "b"]})
    published = pl.DataFrame({"q": ["A", "A", "A"]})
    one_more = pl.DataFrame({"q": ["A", "A", "*"]})
    dm = [compute(original, t, ["q"], {"q": h}, "discernibility").item() for t in (published, one_more)]
    assert dm == [9, 5]


@settings(max_examples=40, deadline=None)
@given(p=publications())
def test_values_stay_in_their_ranges(p: tuple) -> None:
    original, published, hs = p
    got = _all(original, published, hs)
    n, m = original.height, len(QIDS)
    for name in ("alteration", "modified", "deleted", "deleted_of_modified"):
        assert 0.0 <= got[name] <= 100.0 + 1e-9, name
    for name in ("precision", "hellinger", "cramers_v"):
        assert -1e-12 <= got[name] <= 1.0 + 1e-12, name
    for name in ("ncp", "iloss", "granularity", "total", "information_loss"):
        assert -1e-12 <= got[name] <= n * m + 1e-9, name
    assert -1e-12 <= got["loss"] <= 1.0 + 1e-12
    assert got["ambiguity"] >= 1.0 - 1e-12 and 0 <= got["diameter"] <= m
    assert n <= got["discernibility"] <= n * n
    assert got["min_class_size"] * got["n_classes"] <= n
    with_s = compute(
        original.with_columns(s=pl.col("q0")), published.with_columns(s=pl.col("q0")), QIDS, hs, "cm", sensitive="s"
    )
    assert 0.0 <= with_s.item() <= 1.0


@settings(max_examples=40, deadline=None)
@given(p=publications())
def test_normalized_values_stay_in_0_1(p: tuple) -> None:
    """Normalized by T*, the bounded metrics are in [0, 1]; those scaled by their own range too."""
    original, published, hs = p
    got = compute(original, published, QIDS, hs, ALL_BUT_SENSITIVE, k=1, normalized=True).row(0, named=True)
    bounded = WITHIN_T_STAR + [n for n, m in METRICS.items() if m.scale is not None and not m.needs_sensitive]
    for name in bounded:
        if got[name] is not None:
            assert -1e-12 <= got[name] <= 1.0 + 1e-12, name


@settings(max_examples=40, deadline=None)
@given(t=st.lists(st.lists(st.integers(0, 2), min_size=3, max_size=3), min_size=1, max_size=30))
def test_diameter_pairwise_and_by_subsets_agree(t: list) -> None:
    """The two exact ways of the diameter (every pair; Moebius over subsets) and a brute force give one number."""
    from polars_anon.metrics.partition import _diameter_by_subsets, _max_hamming

    rows = np.unique(np.array(t, dtype=np.int64), axis=0)
    brute = max((int((a != b).sum()) for a in rows for b in rows), default=0)
    frame = pl.LazyFrame(rows, schema=["p0", "p1", "p2"], orient="row")
    assert _max_hamming(rows) == _diameter_by_subsets(frame, ["p0", "p1", "p2"]) == brute


@settings(max_examples=40, deadline=None)
@given(t=st.lists(st.lists(st.integers(0, 2), min_size=3, max_size=3), min_size=1, max_size=30))
def test_diameter_many_tuples_agrees_with_brute_force(t: list) -> None:
    """Above the pairwise limit (set to 0 here) the diameter, by the pivots' shortcut or the subsets, is the brute
    force's."""
    from polars_anon.metrics import partition

    rows = np.unique(np.array(t, dtype=np.int64), axis=0)
    brute = max((int((a != b).sum()) for a in rows for b in rows), default=0)
    hs = {f"q{i}": pa.Hierarchy.suppression(["0", "1", "2"]) for i in range(3)}
    table = pl.DataFrame([[str(v) for v in r] for r in rows], schema=list(hs), orient="row")
    limit, partition.DIAMETER_MAX_TUPLES = partition.DIAMETER_MAX_TUPLES, 0
    try:
        got = compute(table, table, list(hs), hs, "diameter").item()
    finally:
        partition.DIAMETER_MAX_TUPLES = limit
    assert got == brute


def test_diameter_above_12_qids() -> None:
    """14 qids: the pairwise way still gives the diameter (two tuples differing in 13 qids)."""
    hs = {f"q{i}": pa.Hierarchy.suppression(["x", "y"]) for i in range(14)}
    original = pl.DataFrame({q: ["x", "y", "x"] if q != "q0" else ["x", "x", "y"] for q in hs})
    got = compute(original, original, list(hs), hs, "diameter").item()
    assert got == 14  # rows 2 and 3: q0 x vs y, q1..q13 y vs x


def test_diameter_above_12_qids_and_the_pairwise_limit_does_not_depend_on_the_row_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above both limits (13 qids; more tuples than the pairwise limit, lowered to 300 here) the diameter is null
    whatever the order of the tuples: the pivots' shortcut found the pair differing everywhere only when it came
    first (13 in one order, None in the other)."""
    from polars_anon.metrics import partition

    monkeypatch.setattr(partition, "DIAMETER_MAX_TUPLES", 300)
    rng = np.random.default_rng(0)
    t = rng.integers(2, 6, (400, 13))
    t[:, 0], t[:, 1] = 0, 1
    t[0], t[1] = 0, 1  # the only two rows differing in all 13 columns (the others share columns 0 and 1)
    got = [partition.diameter_of(t), partition.diameter_of(t[::-1].copy())]
    assert got == [None, None]


def _brute_cramer(a: list, b: list) -> float:
    """Cramér's V of two columns from the chi-square of their contingency table, in plain Python."""
    n, rows, cols = len(a), sorted(set(a)), sorted(set(b))
    if min(len(rows), len(cols)) < 2:
        return 0.0
    count = {(x, y): 0 for x in rows for y in cols}
    for x, y in zip(a, b):
        count[(x, y)] += 1
    na = {x: a.count(x) for x in rows}
    nb = {y: b.count(y) for y in cols}
    chi2 = sum((count[(x, y)] - na[x] * nb[y] / n) ** 2 / (na[x] * nb[y] / n) for x in rows for y in cols)
    return (chi2 / n / (min(len(rows), len(cols)) - 1)) ** 0.5


@pytest.mark.parametrize("suppress", [False, True])
def test_cramers_v_of_a_full_domain_recoding_equals_brute_force(suppress: bool) -> None:
    """The published pairs' tables counted from the original pairs' cells (each published column a function of its
    original one) or, with suppressed rows (not a function), from the rows: both equal the chi-square by hand."""
    rng = np.random.default_rng(7)
    values = {"a": [f"a{i}" for i in range(6)], "b": [f"b{i}" for i in range(5)], "c": [f"c{i}" for i in range(4)]}
    hs = {
        q: pa.Hierarchy.from_parents(
            {v: f"{q}{i % 2}*" for i, v in enumerate(vs)} | {f"{q}0*": "*", f"{q}1*": "*", "*": None}
        )
        for q, vs in values.items()
    }
    original = pl.DataFrame({q: rng.choice(vs, 60).tolist() for q, vs in values.items()})
    top = {v: f"a{i % 2}*" for i, v in enumerate(values["a"])}
    published = original.with_columns(
        pl.col("a").replace_strict(top),
        pl.col("c").replace_strict({v: f"c{i % 2}*" for i, v in enumerate(values["c"])}),
    )
    if suppress:
        published = published.with_columns(
            pl.when(pl.int_range(60) < 7).then(pl.lit("*")).otherwise(pl.col(q)).alias(q) for q in values
        )
    got = compute(original, published, list(values), hs, "cramers_v", by_attribute=True)
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    delta = {
        p: abs(
            _brute_cramer(original[p[0]].to_list(), original[p[1]].to_list())
            - _brute_cramer(published[p[0]].to_list(), published[p[1]].to_list())
        )
        for p in pairs
    }
    for q in values:
        assert got.filter(pl.col("attribute") == q)["cramers_v"].item() == pytest.approx(
            float(np.median([d for p, d in delta.items() if q in p])), abs=1e-12
        )


@settings(max_examples=15, deadline=None)
@given(p=publications())
def test_t_star_cells_from_the_tables_cells_equal_its_own_count(p: tuple) -> None:
    """T*'s cells summed from the published table's cells are the group-by of T*'s own pairs, frame for frame."""
    original, published, hs = p
    data = prepare(original, published, QIDS, hs)
    star = fully_suppressed(data)
    fresh = MetricData(star.pairs, star.qids, star.hierarchies, star.sensitive, star.k, star.levels)
    assert star.cells.equals(fresh.cells)


def test_t_star_cells_with_suppressed_rows() -> None:
    """Suppressed rows (published at the root, flagged) count in T*'s cells at their original leaf."""
    h = pa.Hierarchy.from_parents({"a": "ab", "b": "ab", "c": "cd", "d": "cd", "ab": "*", "cd": "*", "*": None})
    mapping = pl.DataFrame(
        {
            "q": ["a", "b", "c", "d", "a"],
            "__anon_out_q": ["ab", "ab", "*", "*", "a"],
            "size": [3, 2, 1, 1, 4],
            "sup": [False, False, True, True, False],
        }
    )
    data = from_mapping(mapping, ["q"], {"q": h}, suppressed="sup")
    star = fully_suppressed(data)
    fresh = MetricData(star.pairs, star.qids, star.hierarchies, star.sensitive, star.k, star.levels)
    assert star.cells.equals(fresh.cells)
    assert dict(zip(star.cells["leaf"].to_list(), star.cells["size"].to_list())) == {
        h.id_of("a"): 7,
        h.id_of("b"): 2,
        h.id_of("c"): 1,
        h.id_of("d"): 1,
    }


@pytest.mark.parametrize("seed", range(5))
def test_sorted_products_numpy_sum_is_the_sum_of_the_sorted_products(seed: int) -> None:
    """The same bits as NumPy's sum of every row's product, sorted (the report's per-qid loss), in any row order;
    the last seed has more values than rows (the values are not deduplicated then)."""
    rng = np.random.default_rng(seed)
    values = np.append(rng.random(30) * rng.integers(1, 1000), [0.0, 1.0, 1.0 / 3.0])
    rows = [5000, 5000, 5000, 5000, 20][seed]
    codes, counts = rng.integers(0, len(values), rows), rng.integers(1, [2, 50, 400, 5000, 50][seed], rows)
    expected = float(np.sort(values[codes] * counts.astype(np.float64)).sum())
    order = rng.permutation(rows)
    assert sorted_products_numpy_sum(values, codes, counts) == expected
    assert sorted_products_numpy_sum(values, codes[order], counts[order]) == expected


def _hellinger_frames(data: MetricData) -> list[float]:
    """d_hell per attribute as the frames computed it before the NumPy version (a join on the closure): the
    reference it must equal to the last places (Polars' own division by a literal included)."""
    cells, n = data.cells.lazy(), pl.lit(float(data.n_rows))
    p = cells.group_by("attribute", "i", "leaf").agg((pl.col("size").sum() / n).alias("P"))
    q = (
        cells.group_by("attribute", "i", "pub", "p_leaves")
        .agg(pl.col("size").sum().alias("c"))
        .join(data.closure().lazy(), left_on=["attribute", "pub"], right_on=["attribute", "ancestor"])
        .group_by("attribute", "i", "leaf")
        .agg(stable_sum(pl.col("c") / pl.col("p_leaves") / n).alias("Q"))
    )
    square = (pl.col("P").fill_null(0.0).sqrt() - pl.col("Q").fill_null(0.0).sqrt()) ** 2
    per = p.join(q, on=["attribute", "i", "leaf"], how="full", coalesce=True).group_by("attribute", "i")
    return per.agg(stable_sum(square).sqrt().truediv(2.0**0.5).alias("v")).sort("i").collect()["v"].to_list()


@settings(max_examples=40, deadline=None)
@given(t=tables(n_qids=1, max_rows=12), two=st.booleans(), data=st.data())
def test_hellinger_has_the_bits_of_the_frames_it_replaced(t: tuple, two: bool, data: st.DataObject) -> None:
    """One qid (one-row frames: Polars divides, not multiplies by the inverse) or two, random publications."""
    df, hs = t
    if two:
        df, hs = df.with_columns(pl.col("q0").alias("q1")), {**hs, "q1": hs["q0"]}
    qids = list(hs)
    published = df.with_columns(
        pl.Series(q, [data.draw(st.sampled_from(_ancestors(hs[q], v))) for v in df[q]], dtype=pl.String) for q in qids
    )
    prepared = prepare(df, published, qids, hs)
    got = hellinger(prepared).collect()["value"].to_list()[1:]  # the table's median first, then each attribute
    # the frames' bits, but for the last places: Polars divided by the literal n in a group or multiplied by its
    # inverse as the group came, so the frames gave 7.85e-17 for a publication equal to its original (n1 x 5, n2)
    assert got == pytest.approx(_hellinger_frames(prepared), rel=1e-12, abs=1e-15)
    if published.equals(df):  # P = Q leaf by leaf: exactly 0 (by hand), as the NumPy version gives it
        assert got == [0.0] * len(qids)
