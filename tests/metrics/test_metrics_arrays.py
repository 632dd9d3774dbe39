"""The report's metrics from NumPy arrays (:mod:`polars_anon.metrics.arrays`) give the Polars functions' bits.

:func:`~polars_anon.metrics.registry.evaluate_both` computes the report's metrics from arrays; the reference is
each metric's Polars function (:class:`~polars_anon.metrics.Metric`, raw) and its divisor (on T*, or its scale),
divided as the report divides. Random hierarchies (some with numeric leaves), random truthful tuple maps with
suppressed rows, repeated original tuples, given or inferred levels: every value equal to the last bit (-0.0 and
0.0 apart, NaN equal to NaN).
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_anon import Hierarchy
from polars_anon.metrics import METRICS
from polars_anon.metrics.arrays import grouped_sorted_sums
from polars_anon.metrics.cell_counts import counted_apart, leaf_pair_cells, original_pair_cells, qid_cells
from polars_anon.metrics.data import SIZE, SUPPRESSED, MetricData, from_mapping, fully_suppressed, orig_col, pub_col
from polars_anon.metrics.registry import evaluate_both, metric_names
from polars_anon.metrics.sums import sorted_products_numpy_sum, sorted_sum
from tests.strategies import hierarchies


def _bits(value: object) -> object:
    return struct.pack("<d", value) if isinstance(value, float) else (type(value), value)


def _reference(data: MetricData) -> tuple[dict[str, object], dict[str, object]]:
    """Every metric's Polars whole-table value, and that value over its Polars divisor (the report's division)."""
    data = data.whole_table()
    star = fully_suppressed(data)
    raw, normalized = {}, {}
    for n in metric_names(None, has_sensitive=False):
        value = dict(METRICS[n](data).collect().iter_rows()).get(None)
        den = dict(METRICS[n].divisors(data, star).collect().iter_rows()).get(None)
        raw[n] = value
        if value is None:
            normalized[n] = None
        elif den is not None and den != 0:
            normalized[n] = float(value) / den
        else:
            normalized[n] = 0.0 if float(value) == 0 else None
    return raw, normalized


@st.composite
def _hierarchy(draw: st.DrawFn) -> Hierarchy:
    h = draw(hierarchies(max_nodes=9))
    if not draw(st.booleans()):
        return h
    # the same tree with numeric leaves (whole or decimal numbers, negative ones too)
    numbers = draw(st.lists(st.integers(-50, 50), min_size=h.n_leaves, max_size=h.n_leaves, unique=True))
    decimal = draw(st.booleans())
    leaves = iter(f"{x / 10}" if decimal else str(x) for x in numbers)
    labels = [next(leaves) if leaf else label for label, leaf in zip(h.labels, h.is_leaf)]
    return Hierarchy.from_parents({labels[i]: None if p < 0 else labels[p] for i, p in enumerate(h.parent)})


@st.composite
def maps(draw: st.DrawFn) -> MetricData:
    """A random tuple map as :class:`MetricData` (published values are ancestors of the original ones)."""
    m = draw(st.integers(1, 5))
    hs = {f"q{j}": draw(_hierarchy()) for j in range(m)}
    rows = draw(st.integers(1, 12))
    full_domain = draw(st.booleans())  # each qid at one level, nothing suppressed: a leaf is published as one node
    columns: dict[str, Sequence[object]] = {}
    for q, h in hs.items():
        leaves = draw(st.lists(st.sampled_from(np.flatnonzero(h.is_leaf).tolist()), min_size=rows, max_size=rows))
        if full_domain:
            published = h.generalize_ids(draw(st.integers(0, h.height - 1)))[leaves].tolist()
        else:
            up = draw(st.lists(st.integers(0, 4), min_size=rows, max_size=rows))
            published = []
            for leaf, steps in zip(leaves, up):
                node = leaf
                for _ in range(steps):
                    node = max(int(h.parent[node]), 0) if node else 0
                published.append(node)
        columns[q] = [h.label_of(x) for x in leaves]
        columns[f"__anon_out_{q}"] = [h.label_of(x) for x in published]
    columns["size"] = draw(st.lists(st.sampled_from([1, 2, 3, 7, 1000]), min_size=rows, max_size=rows))
    marks = st.lists(st.booleans(), min_size=rows, max_size=rows).filter(lambda s: not all(s))
    columns["sup"] = [False] * rows if full_domain else draw(marks)
    levels = None
    if draw(st.booleans()):
        levels = {q: draw(st.integers(0, h.height - 1)) for q, h in hs.items()}
    k = draw(st.sampled_from([None, 1, 2, 5]))
    return from_mapping(pl.DataFrame(columns), list(hs), hs, suppressed="sup", k=k, levels=levels)


@settings(max_examples=12, deadline=None)
@given(maps())
def test_arrays_give_the_polars_metrics_bits(data: MetricData) -> None:
    raw, normalized = evaluate_both(data)
    want_raw, want_normalized = _reference(data)
    assert list(raw) == list(want_raw) and list(normalized) == list(want_normalized)
    for n in want_raw:
        assert _bits(raw[n]) == _bits(want_raw[n]), (n, raw[n], want_raw[n])
        assert _bits(normalized[n]) == _bits(want_normalized[n]), (n, normalized[n], want_normalized[n])


@settings(max_examples=30, deadline=None)
@given(maps())
def test_qid_cells_are_each_leaf_node_and_mark_once_with_its_rows(data: MetricData) -> None:
    """Each qid's cells are its distinct (original leaf, published node, suppressed) with their rows summed, in
    ascending order (a Python dict over the pairs; a suppressed pair published at the root)."""
    pairs = data.pairs.to_dicts()
    for i, cells in enumerate(qid_cells(data)):
        want: dict[tuple[int, int, bool], int] = {}
        for row in pairs:
            sup = bool(row[SUPPRESSED])
            key = (row[orig_col(i)], 0 if sup else row[pub_col(i)], sup)
            want[key] = want.get(key, 0) + row[SIZE]
        got = list(zip(cells.leaf.tolist(), cells.pub.tolist(), cells.sup.tolist()))
        assert got == sorted(want) and cells.size.tolist() == [want[c] for c in sorted(want)]


@settings(max_examples=30, deadline=None)
@given(maps())
def test_original_pair_cells_are_each_pair_of_leaves_once_with_its_rows(data: MetricData) -> None:
    """The cells of every pair of original columns, counted once per data (Cramer's V and the cells of a map's
    leaves read them), are each distinct (leaf, leaf) with its rows, in ascending order (a Python dict over the
    pairs); none with one qid."""
    found = original_pair_cells(data)
    m = len(data.qids)
    if m < 2:
        assert found is None
        return
    assert found is not None and original_pair_cells(data) is found  # counted once
    pairs = data.pairs.to_dicts()
    for i in range(m):
        for j in range(i + 1, m):
            want: dict[tuple[int, int], float] = {}
            for row in pairs:
                if row[SIZE]:
                    key = (row[orig_col(i)], row[orig_col(j)])
                    want[key] = want.get(key, 0.0) + row[SIZE]
            n, a, b = found[(orig_col(i), orig_col(j))]
            assert list(zip(a.tolist(), b.tolist())) == sorted(want) and n.tolist() == [want[c] for c in sorted(want)]


@settings(max_examples=30, deadline=None)
@given(maps(), st.randoms(use_true_random=False))
def test_pair_cells_of_the_leaves_in_any_order_are_the_original_pair_cells(data: MetricData, rnd: object) -> None:
    """perf8: the road counts the original columns' pair cells from the aggregates' leaf ids beside the method
    (:func:`leaf_pair_cells`, the tuples in the aggregates' order) and hands them to the report's metric data
    (:func:`counted_apart`): the same arrays, dtype and bits, as :func:`original_pair_cells` counts from the map's
    pairs, whatever the tuples' order."""
    columns = [orig_col(i) for i in range(len(data.qids))]
    order = list(range(data.pairs.height))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    shuffled = data.pairs[order]
    hierarchies = [data.hierarchies[q] for q in data.qids]
    leaves = [shuffled[c].to_numpy().astype(np.int32) for c in columns]  # the lattice's leaf ids are Int32
    found = leaf_pair_cells(leaves, shuffled[SIZE].to_numpy(), hierarchies)
    apart = dataclasses.replace(data)  # the same pairs, nothing counted yet
    counted_apart(apart, lambda: found)
    want = original_pair_cells(data)
    assert (found is None) == (want is None) and original_pair_cells(apart) is found
    if want is None or found is None:
        return
    assert list(found) == list(want)
    for key in want:
        for got, expected in zip(found[key], want[key]):
            assert got.dtype == expected.dtype and np.array_equal(got, expected), key


def _cramer_by_hand(pairs: list[dict[str, object]], a: str, b: str) -> float:
    """Cramér's V of columns `a` and `b` of the pairs weighted by their rows: a dict of the table's cells and
    margins, phi² the exact sum of n² / (n_a n_b) less 1, over min(r, c) - 1 (0.0 for a column of one value)."""
    cells: dict[tuple[object, object], float] = {}
    for row in pairs:
        key = (row[a], row[b])
        cells[key] = cells.get(key, 0.0) + float(row[SIZE])  # type: ignore[arg-type]
    na: dict[object, float] = {}
    nb: dict[object, float] = {}
    for (x, y), n in cells.items():
        na[x], nb[y] = na.get(x, 0.0) + n, nb.get(y, 0.0) + n
    dof = min(len(na), len(nb)) - 1
    if dof <= 0:
        return 0.0
    phi2 = math.fsum(n * n / (na[x] * nb[y]) for (x, y), n in cells.items()) - 1.0
    return math.sqrt(max(phi2, 0.0) / dof)


@settings(max_examples=40, deadline=None)
@given(maps())
def test_cramers_v_changes_equal_the_tables_counted_by_hand(data: MetricData) -> None:
    """Cramér's V in the original minus in the published pairs, for every pair of qids, to the last bit: the
    contingency tables counted from joint tables of three or more columns, from the original pairs' cells (a
    full-domain map) or from the pairs, against a dict of each pair's table."""
    from polars_anon.metrics.distribution import cramers_v_changes

    pairs = data.pairs.to_dicts()
    m = len(data.qids)
    want = [
        _cramer_by_hand(pairs, orig_col(i), orig_col(j)) - _cramer_by_hand(pairs, pub_col(i), pub_col(j))
        for i in range(m)
        for j in range(i + 1, m)
    ]
    assert [_bits(v) for v in cramers_v_changes(data)] == [_bits(v) for v in want]


@pytest.mark.parametrize("suppress", [False, True])
def test_cramers_v_changes_of_four_qids_equal_the_tables_counted_by_hand(suppress: bool) -> None:
    """Four qids of 3 to 2,000 values over 300 random tuples (two joint tables of three columns, a pair on its
    own), each published at one level, with and without suppressed tuples: every pair's change to the last bit."""
    from polars_anon.metrics.distribution import cramers_v_changes

    rng = np.random.default_rng(11)
    hs = {
        "a": Hierarchy.intervals(range(2000), [5, 10]),
        "b": Hierarchy.suppression(["F", "M", "U"]),
        "c": Hierarchy.suppression([f"r{i}" for i in range(7)]),
        "d": Hierarchy.intervals(range(20), [4]),
    }
    levels = {"a": 1, "b": 0, "c": 1, "d": 0}
    columns: dict[str, object] = {}
    for q, h in hs.items():
        leaves = rng.choice(np.flatnonzero(h.is_leaf), 300)
        columns[q] = [h.labels[x] for x in leaves]
        columns[f"__anon_out_{q}"] = [h.labels[x] for x in h.generalize_ids(levels[q])[leaves]]
    frame = pl.DataFrame(columns).with_columns(
        size=pl.Series(rng.integers(1, 9, 300)), sup=pl.Series(suppress & (rng.random(300) < 0.1))
    )
    data = from_mapping(frame, list(hs), hs, suppressed="sup")
    pairs = data.pairs.to_dicts()
    want = [
        _cramer_by_hand(pairs, orig_col(i), orig_col(j)) - _cramer_by_hand(pairs, pub_col(i), pub_col(j))
        for i in range(4)
        for j in range(i + 1, 4)
    ]
    assert [_bits(v) for v in cramers_v_changes(data)] == [_bits(v) for v in want]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(-1e3, 1e3)), max_size=200))
def test_grouped_sorted_sums_add_each_group_sorted_left_to_right(items: list[tuple[int, float]]) -> None:
    groups = np.array([g for g, _ in items], dtype=np.int64)
    values = np.array([v for _, v in items], dtype=np.float64)
    got = grouped_sorted_sums(values, groups, 4)
    for g in range(4):
        assert _bits(float(got[g])) == _bits(sorted_sum(values[groups == g])), g


def _running_sum(values: np.ndarray) -> float:
    """The values sorted by Python (NaN last) and added one by one from 0.0: the reference of a sorted sum."""
    total = 0.0
    for v in sorted(values.tolist(), key=lambda x: (math.isnan(x), x)):
        total += v
    return total


def test_large_sorted_sums_give_a_running_sum_of_the_sorted_values() -> None:
    """Sums of thousands of values (NumPy's sort takes its vectorized path there) give the bits of Python's sort and
    running sum from 0.0, also with -0.0 and 0.0 mixed (the pair that compares equal with other bits, which the
    sort may put in any order), all -0.0, negatives and NaN, in any row order."""
    rng = np.random.default_rng(7)
    n = 4609
    zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    cases = {
        "mixed zeros": np.concatenate([zeros, rng.random(n)]),
        "only zeros": zeros,
        "all -0.0": np.full(n, -0.0),
        "negatives": np.concatenate([-rng.random(n), zeros, rng.random(n) * 1e6]),
        "nan": np.concatenate([rng.random(n), [np.nan]]),
    }
    for name, values in cases.items():
        want = _running_sum(values)
        assert _bits(sorted_sum(values)) == _bits(want), name
        rng.shuffle(values)
        assert _bits(sorted_sum(values)) == _bits(want), name
    counts = rng.integers(1, 3 * n, n)
    many = rng.random(2000)  # many values and pairs: the products sorted at once
    for values in (np.array([0.5, -0.0, 0.0]), np.array([0.1, 0.2, 0.3]), many):  # signed zeros, few values, many
        codes = rng.integers(0, len(values), n)
        want = float(np.sort(values[codes] * counts).sum())
        assert _bits(sorted_products_numpy_sum(values, codes, counts)) == _bits(want)


def test_ambiguity_beyond_exact_whole_sums_gives_the_polars_bits() -> None:
    """Ambiguity's terms (rows times leaf counts) are whole numbers, summed from the classes while below 2**53;
    with rows of 2**50 the sums reach past it (some partial sums round) and the terms are summed one by one: both
    give the Polars function's bits, on the data and on T*."""
    h = Hierarchy.from_dict({"*": {"A": ["a", "b", "c"], "B": ["d", "e", "f", "g", "h", "i"]}})
    for sizes in ([3, 5, 7, 11], [2**50, 3, 2**50 + 1, 1]):
        frame = pl.DataFrame(
            {"q": ["a", "b", "d", "e"], "__anon_out_q": ["A", "A", "B", "e"], "size": sizes, "sup": [0, 0, 0, 1]}
        ).with_columns(pl.col("sup").cast(pl.Boolean))
        data = from_mapping(frame, ["q"], {"q": h}, suppressed="sup")
        raw, normalized = evaluate_both(data, ["ambiguity"])
        want_raw, want_normalized = _reference(data)
        assert _bits(raw["ambiguity"]) == _bits(want_raw["ambiguity"]), sizes
        assert _bits(normalized["ambiguity"]) == _bits(want_normalized["ambiguity"]), sizes


def test_precision_with_every_hierarchy_of_one_height_divides_as_polars() -> None:
    """Every qid's hierarchy of height 6: Polars holds the cells' ``h`` as one repeated value and divides a level by
    h - 1 as a product by the inverse (3 * (1/5) is not 3 / 5 in the last bit); the report's value is the Polars
    one. A numeric qid alone (domain 49, two cells at the root) likewise."""
    chain = Hierarchy.from_parents({"r": None, "a": "r", "b": "a", "c": "b", "d": "c", "x": "d", "y": "d", "z": "r"})
    assert chain.height == 6 and int(chain.level[chain.id_of("b")]) == 3 and 3 * (1 / 5) != 3 / 5
    mapping = pl.DataFrame(
        {
            "q0": ["x", "y", "x", "z"],
            "__anon_out_q0": ["b", "y", "x", "r"],
            "q1": ["x", "y", "y", "z"],
            "__anon_out_q1": ["x", "b", "y", "z"],
            "size": [1, 2, 1, 3],
        }
    )
    numeric = Hierarchy.from_parents({"n0": None, "0": "n0", "1": "n0", "-48": "n0"})
    alone = pl.DataFrame({"v": ["1", "1", "1"], "__anon_out_v": ["1", "n0", "n0"], "size": [1, 1, 1]})
    for data in (
        from_mapping(mapping, ["q0", "q1"], {"q0": chain, "q1": chain}, k=2),
        from_mapping(alone.with_columns(sup=pl.Series([False, False, True])), ["v"], {"v": numeric}, suppressed="sup"),
    ):
        raw, normalized = evaluate_both(data)
        want_raw, want_normalized = _reference(data)
        for n in ("precision", "information_loss"):
            assert _bits(raw[n]) == _bits(want_raw[n]), (n, raw[n], want_raw[n])
            assert _bits(normalized[n]) == _bits(want_normalized[n]), n


def test_t_star_of_repeated_and_distinct_original_tuples_in_every_row_order() -> None:
    """T*'s pairs are the map's only when no original tuple repeats: a map whose tuples are distinct and sorted with
    the first qid slowest (found in one pass), the same map shuffled (found by the hash), and with a tuple repeated
    next to itself (sorted, not strictly ascending: merged for T*) give the Polars functions' bits."""
    h = {"a": Hierarchy.suppression(["x", "y", "z"]), "b": Hierarchy.intervals(range(0, 8), [2, 4])}
    pairs = [(a, b) for a in ("x", "y", "z") for b in ("0", "3", "5", "7")]  # leaf ids follow the labels' order
    rng = np.random.default_rng(4)
    distinct = pl.DataFrame(
        {"a": [a for a, _ in pairs], "b": [b for _, b in pairs], "size": rng.integers(1, 9, len(pairs))}
    )
    repeated = pl.concat([distinct.head(3), distinct.slice(2)])  # the third tuple twice, next to itself
    for frame in (distinct, distinct.sample(fraction=1.0, shuffle=True, seed=1), repeated):
        published = frame.with_columns(pl.lit("*").alias("__anon_out_a"), pl.col("b").alias("__anon_out_b"))
        data = from_mapping(published, ["a", "b"], h)
        raw, normalized = evaluate_both(data)
        want_raw, want_normalized = _reference(data)
        for n in want_raw:
            assert _bits(raw[n]) == _bits(want_raw[n]), (n, raw[n], want_raw[n])
            assert _bits(normalized[n]) == _bits(want_normalized[n]), (n, normalized[n], want_normalized[n])


def test_a_map_row_of_no_rows_adds_nothing() -> None:
    """A map row of size 0 whose leaf is in no other row (from_mapping takes it; review27: the per-leaf squared
    distance error read past its table). By hand: ages 1 and 2 published as 0-4 (mean of the leaves 0..4: 2), 3 and 2
    rows: (1 - 2)^2 * 3 + (2 - 2)^2 * 2 = 3; the row of 19 (0 rows) adds nothing."""
    from polars_anon.report.metrics import report_metrics

    hs = {"age": Hierarchy.intervals(range(0, 20), [5, 10]), "g": Hierarchy.suppression(["F", "M"])}
    mapping = pl.DataFrame(
        {
            "age": ["1", "2", "19"],
            "g": ["F", "M", "F"],
            "__anon_out_age": ["0-4", "0-4", "10-19"],
            "__anon_out_g": ["F", "M", "*"],
            "size": [3, 2, 0],
        }
    )
    metrics = report_metrics(from_mapping(mapping, ["age", "g"], hs, k=2))["metrics"]
    assert metrics["squared_distance_error"] == 3.0


@pytest.mark.parametrize(
    "leaves",
    [
        ["b", "a", "c"],  # not numeric: no numbers
        [30, 31, 35, 42],  # whole numbers: NumPy
        [-2, 0, 7],
        ["0.5", "1.25", "3.5"],  # decimals: node_stats' group-by
    ],
)
def test_node_numbers_are_node_stats_columns(leaves: list) -> None:
    """The report's metrics read each hierarchy's numbers from node_numbers: node_stats' columns, NaN for null. By
    hand for the whole numbers (the root's mean of 30, 31, 35, 42 is 34.5)."""
    from polars_anon.metrics.data import node_numbers, node_stats

    if isinstance(leaves[0], int):
        h = Hierarchy.intervals(leaves, [10])
    else:
        h = Hierarchy.suppression([str(v) for v in leaves])
    found, stats = node_numbers(h), node_stats(h)
    for c in ("numeric", "num_lo", "num_hi", "num_mean"):
        assert np.array_equal(found[c], stats[c].to_numpy(), equal_nan=c != "numeric"), c
    if leaves[0] == 30:
        assert found["num_mean"][0] == 34.5 and found["num_lo"][0] == 30.0 and found["num_hi"][0] == 42.0
