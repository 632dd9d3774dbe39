"""TupleMap.check_covers: every input row sent exactly once, on the aligned fast path and through the join; the
map's facts from the node ids its builder knew equal those of its labels."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

from polars_anon import Hierarchy
from polars_anon.tuplemap import OFFSET, SIZE, SUPPRESSED, TupleMap, out_col

AGG = pl.DataFrame({"g": ["F", "M", "X"], SIZE: [3, 1, 2]}, schema_overrides={SIZE: pl.UInt32})


def _map(g: list[str], sizes: list[int], **extra: list[int]) -> TupleMap:
    frame = pl.DataFrame({"g": g, out_col("g"): ["*"] * len(g), SIZE: sizes, SUPPRESSED: [False] * len(g), **extra})
    return TupleMap(("g",), frame.with_columns(pl.col(SIZE).cast(pl.Int64)))


@pytest.mark.parametrize(
    "tmap",
    [
        _map(["F", "M", "X"], [3, 1, 2]),  # aligned with the aggregates
        _map(["X", "F", "M"], [2, 3, 1]),  # another order
        _map(["F", "F", "M", "X"], [1, 2, 1, 2], **{OFFSET: [0, 1, 0, 0]}),  # a split tuple
    ],
)
def test_covering_maps_pass(tmap: TupleMap) -> None:
    tmap.check_covers(AGG)


@pytest.mark.parametrize(
    "tmap",
    [
        _map(["F", "M", "X"], [3, 1, 1]),  # a row lost
        _map(["F", "M", "M"], [3, 1, 2]),  # a tuple missing, another doubled
        _map(["F", "M"], [3, 1]),
    ],
)
def test_maps_that_do_not_cover_fail(tmap: TupleMap) -> None:
    with pytest.raises(AssertionError, match="does not cover the input rows exactly"):
        tmap.check_covers(AGG)


def test_facts_from_node_ids_equal_the_group_by_of_the_labels() -> None:
    """A map built from node ids (its builder's ids kept) gives the published class sizes and the report's
    generalization shares that a map of the same labels without ids gives (the group-by of every row's Strings),
    suppressed rows left out: brute force over random maps of two qids."""
    from polars.testing import assert_frame_equal

    from polars_anon.report.generalization import generalization

    hs = _two_hierarchies()
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, leaves, agg = _random_tuples(rng, hs)
        levels = {q: int(rng.integers(0, h.height)) for q, h in hs.items()}
        suppressed = rng.random(n) < 0.3
        known = TupleMap.from_levels(agg, hs, levels, suppressed, leaves=leaves)
        plain = TupleMap(known.qids, known.frame)  # the same labels, no ids: grouped as Strings
        assert known.known("a") is not None and plain.known("a") is None
        assert_frame_equal(known.published_sizes(), plain.published_sizes())
        assert generalization(known, hs, levels) == generalization(plain, hs, levels)


def test_shares_from_the_metric_datas_cells_equal_the_group_by_of_the_labels() -> None:
    """The generalization shares read from the report's metric data (each qid's cells) equal those of the same
    labels without ids (the group-by and the label filters of every row's Strings): random full-domain maps with and
    without suppressed rows (without, a leaf is published as one node: the cells come from the leaves' counts)."""
    from polars_anon.report.generalization import generalization
    from polars_anon.report.metrics import map_data

    hs = _two_hierarchies()
    rng = np.random.default_rng(5)
    for i in range(30):
        n, leaves, agg = _random_tuples(rng, hs)
        levels = {q: int(rng.integers(0, h.height)) for q, h in hs.items()}
        suppressed = rng.random(n) < 0.3 if i % 2 else None
        known = TupleMap.from_levels(agg, hs, levels, suppressed, leaves=leaves)
        plain = TupleMap(known.qids, known.frame)
        data = map_data(known, hs, 2, levels)
        assert data is not None
        assert generalization(known, hs, levels, metric_data=data) == generalization(plain, hs, levels)


def test_cells_and_metrics_from_a_maps_leaf_nodes_equal_those_of_its_labels() -> None:
    """A full-domain map without suppression hands the report's metric data each leaf's node: its cells (one count
    of the leaves) and every report metric equal those of the same labels without ids (the cells counted over the
    pairs looked up from the Strings); with a suppressed row nothing is handed. Random maps of two qids."""
    from polars_anon.metrics.cell_counts import qid_cells
    from polars_anon.report.metrics import map_data, report_metrics

    hs = _two_hierarchies()
    rng = np.random.default_rng(12)
    for i in range(30):
        n, leaves, agg = _random_tuples(rng, hs)
        levels = {q: int(rng.integers(0, h.height)) for q, h in hs.items()}
        suppressed = rng.random(n) < 0.3 if i % 3 == 2 else None
        known = TupleMap.from_levels(agg, hs, levels, suppressed, leaves=leaves)
        data, plain = map_data(known, hs, 2, levels), map_data(TupleMap(known.qids, known.frame), hs, 2, levels)
        assert data is not None and plain is not None and plain.leaf_nodes is None
        assert (data.leaf_nodes is not None) == (not known.suppressed_rows)
        for got, want in zip(qid_cells(data), qid_cells(plain)):
            assert all(np.array_equal(getattr(got, f), getattr(want, f)) for f in ("leaf", "pub", "sup", "size"))
        if n:
            assert report_metrics(data) == report_metrics(plain)


def test_metric_data_refuses_an_inner_node_as_an_original_value_from_the_leaf_tables_too() -> None:
    """An original value that is an inner node of its hierarchy (``A`` over ``x`` and ``y``) is refused by the metric
    data's check whether it reads the pairs' codes or the map's leaf tables (a full-domain map without suppression
    hands them): no metric data, on both roads; the same map of leaves only gets its data."""
    from polars_anon.hierarchy import ValueNotInHierarchyError
    from polars_anon.metrics.data import from_mapping
    from polars_anon.report.metrics import map_data

    hs = _two_hierarchies()
    for labels, refused in ((["x", "A", "v"], True), (["x", "y", "v"], False)):
        agg = pl.DataFrame({"a": labels, "b": ["0", "1", "2"], SIZE: [2, 3, 4]})
        tmap = TupleMap.from_levels(agg, hs, {"a": 1, "b": 0})
        assert tmap.leaf_nodes("a") is not None
        assert (map_data(tmap, hs, 2) is None) == refused
        ids = {q: tmap.known_ids(q, h) for q, h in hs.items()}
        tables = {q: tmap.leaf_nodes(q) for q in hs}
        if refused:
            with pytest.raises(ValueNotInHierarchyError, match="inner nodes of its hierarchy"):
                from_mapping(tmap.stored, tmap.qids, hs, suppressed=SUPPRESSED, ids=ids, leaf_nodes=tables)
            with pytest.raises(ValueNotInHierarchyError, match="inner nodes of its hierarchy"):
                from_mapping(tmap.frame, tmap.qids, hs, suppressed=SUPPRESSED)


def test_shares_from_node_ids_and_given_leaves_equal_the_group_by_of_the_labels() -> None:
    """A local recoding's map (published node ids known, the original leaves not: topdown's) with the leaves the
    report's metric data read gives the generalization shares of the same labels without ids (the group-by and the
    label filters of every row's Strings), and its published class sizes those of the labels (sorted as Strings:
    ``w`` before ``z``, ``[0, 2)`` after ``7``): brute force over random maps, each row at its own level."""
    from polars.testing import assert_frame_equal

    from polars_anon.metrics.data import orig_col
    from polars_anon.report.generalization import generalization
    from polars_anon.report.metrics import map_data

    hs = _two_hierarchies()
    rng = np.random.default_rng(1)
    for _ in range(20):
        n, leaves, agg = _random_tuples(rng, hs)
        nodes = {
            q: np.array([h.generalize_ids(int(rng.integers(0, h.height)))[i] for i in leaves[q]], dtype=np.int64)
            for q, h in hs.items()
        }
        suppressed = rng.random(n) < 0.3
        tmap = TupleMap.from_nodes(agg, hs, nodes, suppressed)
        plain = TupleMap(tmap.qids, tmap.frame)
        data = map_data(tmap, hs, 2)
        known = tmap.known("a")
        assert data is not None and known is not None and known.leaves is None
        given = {q: data.pairs[orig_col(i)].to_numpy() for i, q in enumerate(data.qids)}
        assert [given[q].tolist() for q in hs] == [leaves[q].tolist() for q in hs]
        assert generalization(tmap, hs, metric_data=data) == generalization(plain, hs)
        assert_frame_equal(tmap.published_sizes(), plain.published_sizes())  # sorted by label ranks, as Strings


def test_leaf_nodes_and_the_truthfulness_check_against_a_loop_over_the_rows() -> None:
    """``leaf_nodes`` is each leaf's one published node (a dict over the rows; None when a leaf is published as two
    nodes or the leaves are not known), and ``check_truthful`` passes a map whose every published node is its
    row's leaf or an ancestor and names a row's leaf and node that are not (one row made untruthful), whether the
    map publishes each leaf as one node (checked per leaf) or not (per row): random maps of two qids."""
    hs = _two_hierarchies()
    rng = np.random.default_rng(6)
    for i in range(40):
        n, leaves, agg = _random_tuples(rng, hs)
        if i % 2:  # one level per qid: a function of the leaf unless a row is suppressed
            nodes = {q: h.generalize_ids(int(rng.integers(0, h.height)))[leaves[q]] for q, h in hs.items()}
        else:
            nodes = {
                q: np.array([h.generalize_ids(int(rng.integers(0, h.height)))[x] for x in leaves[q]])
                for q, h in hs.items()
            }
        suppressed = rng.random(n) < 0.2 if i % 4 == 1 else None
        tmap = TupleMap.from_nodes(agg, hs, nodes, suppressed, leaves=leaves)
        for q in hs:
            published = np.where(np.zeros(n, dtype=bool) if suppressed is None else suppressed, 0, nodes[q])
            seen: dict[int, set[int]] = {}
            for leaf, node in zip(leaves[q].tolist(), published.tolist()):
                seen.setdefault(leaf, set()).add(node)
            got = tmap.leaf_nodes(q)
            if any(len(v) > 1 for v in seen.values()):
                assert got is None
            else:
                assert got is not None and {x: {int(got[x])} for x in np.flatnonzero(got >= 0)} == seen
        tmap.check_truthful()
        assert TupleMap.from_nodes(agg, hs, nodes, suppressed).leaf_nodes("a") is None  # leaves not known
        if not n:
            continue
        bad = {q: v.copy() for q, v in nodes.items()}
        row = int(rng.integers(0, n))
        h = hs["b"]
        bad["b"][row] = next(x for x in range(h.n_nodes) if h.ancestors_by_depth[leaves["b"][row], h.depth[x]] != x)
        if suppressed is not None:
            suppressed[row] = False
        wrong = TupleMap.from_nodes(agg, hs, bad, suppressed, leaves=leaves)
        with pytest.raises(AssertionError, match="publishes 'b' = '.*' for the original value '.*', not one of"):
            wrong.check_truthful()


def test_a_full_domain_maps_leaf_nodes_are_the_labels_its_rows_publish() -> None:
    """A full-domain map (``from_levels``) gives ``leaf_nodes`` from its levels' tables: each leaf some row holds
    maps to the one label its rows publish (a dict over the map's frame of String labels, built by hand), every other
    node to -1; with a suppressed row, the general search (None when a leaf's rows are published as two nodes).
    Random maps of two qids, int32 leaves and Int64 ones."""
    hs = _two_hierarchies()
    rng = np.random.default_rng(11)
    for i in range(40):
        n, leaves, agg = _random_tuples(rng, hs)
        if i % 2:
            leaves = {q: v.astype(np.int32) for q, v in leaves.items()}
        levels = {q: int(rng.integers(0, h.height)) for q, h in hs.items()}
        suppressed = rng.random(n) < 0.3 if i % 4 == 3 else None
        tmap = TupleMap.from_levels(agg, hs, levels, suppressed, leaves=leaves)
        rows = tmap.frame.rows(named=True)
        for q, h in hs.items():
            seen: dict[str, set[str]] = {}
            for row in rows:
                seen.setdefault(row[q], set()).add(row[out_col(q)])
            got = tmap.leaf_nodes(q)
            if any(len(v) > 1 for v in seen.values()):
                assert got is None
                continue
            assert got is not None and len(got) == h.n_nodes
            assert {h.labels[x]: {h.labels[int(got[x])]} for x in np.flatnonzero(got >= 0)} == seen
            assert tmap.known_ids(q, h)[1] is not None and tmap.known_ids(q, h)[1].dtype == np.int32
        tmap.check_truthful()


def test_map_loss_equals_the_sorted_sum_over_the_rows() -> None:
    """The report's loss per qid is the sum (NumPy's, of the sorted values) of each map row's cell loss times its
    rows (1 for a suppressed row) over the row count, and the mean of the qids': computed by hand over the rows for
    random full-domain maps (qids at their leaves, at their roots or between, with and without suppressed rows),
    to the last bit, and equal to the same map's labels without ids."""
    import math

    from polars_anon.metrics.cells import loss_per_node
    from polars_anon.report.metrics import map_loss

    hs = _two_hierarchies()
    rng = np.random.default_rng(8)
    for i in range(40):
        n, leaves, agg = _random_tuples(rng, hs)
        levels = {q: int(rng.choice([0, h.height - 1, int(rng.integers(0, h.height))])) for q, h in hs.items()}
        suppressed = rng.random(n) < 0.3 if i % 2 else None
        tmap = TupleMap.from_levels(agg, hs, levels, suppressed, leaves=leaves)
        tmap.published_sizes()  # the map check's classes, which the loss reads
        sizes = agg[SIZE].to_numpy()
        sup = np.zeros(n, dtype=bool) if suppressed is None else suppressed
        want = {}
        for q, h in hs.items():
            cost = loss_per_node(h)[h.generalize_ids(levels[q])[leaves[q]]]
            terms = np.sort(np.where(sup, 1.0, cost) * sizes)
            want[q] = float(terms.sum()) / float(sizes.sum()) if n else 0.0
        got = map_loss(tmap, hs)
        assert repr(got) == repr((math.fsum(want.values()) / 2, want))  # repr: -0.0 and 0.0 apart
        assert repr(got) == repr(map_loss(TupleMap(tmap.qids, tmap.frame), hs))


def _two_hierarchies() -> dict[str, Hierarchy]:
    """A tree whose labels' String order differs from their id order (``w`` before ``z``) and integer intervals
    (``[0, 2)`` after ``7`` as Strings)."""
    return {
        "a": Hierarchy.from_dict({"*": {"A": ["x", "y"], "B": ["z", "w"], "v": None}}),
        "b": Hierarchy.intervals(range(0, 8), [2, 4]),
    }


def _random_tuples(
    rng: np.random.Generator, hs: dict[str, Hierarchy]
) -> tuple[int, dict[str, np.ndarray], pl.DataFrame]:
    """Up to 11 random leaf tuples of `hs` with random sizes: ``(n, leaf ids per qid, the aggregates)``."""
    n = int(rng.integers(0, 12))
    leaves = {q: rng.choice(np.flatnonzero(h.is_leaf), n) for q, h in hs.items()}
    agg = pl.DataFrame({q: pl.Series([h.labels[i] for i in leaves[q]], dtype=pl.String) for q, h in hs.items()})
    return n, leaves, agg.with_columns(pl.Series(SIZE, rng.integers(1, 5, n), dtype=pl.Int64))


def test_a_map_of_node_ids_gathers_the_labels_a_map_of_labels_holds() -> None:
    """A map built from node ids stores no published label; its frame (gathered on the first read), its schema and
    its facts are those of the map built from the same labels, looked up by hand in the hierarchy (a suppressed row
    at the root): random maps of two qids, with and without suppression."""
    from polars.testing import assert_frame_equal

    hs = _two_hierarchies()
    rng = np.random.default_rng(2)
    for _ in range(20):
        n, leaves, agg = _random_tuples(rng, hs)
        nodes = {
            q: np.array([h.generalize_ids(int(rng.integers(0, h.height)))[i] for i in leaves[q]]) for q, h in hs.items()
        }
        suppressed = rng.random(n) < 0.3 if rng.random() < 0.5 else None
        by_ids = TupleMap.from_nodes(agg, hs, nodes, suppressed)
        sup = np.zeros(n, dtype=bool) if suppressed is None else suppressed
        labels = {q: pl.Series([h.root if s else h.labels[i] for i, s in zip(nodes[q], sup)]) for q, h in hs.items()}
        by_labels = TupleMap.from_labels(agg, list(hs), labels, suppressed)
        assert all(out_col(q) not in by_ids.stored.columns for q in hs)
        assert by_ids.schema == by_labels.frame.schema
        assert (by_ids.n_rows, by_ids.suppressed_rows) == (by_labels.n_rows, by_labels.suppressed_rows)
        by_ids.check_covers(agg)
        assert_frame_equal(by_ids.frame, by_labels.frame)
        assert by_ids.frame is by_ids.frame  # gathered once


def test_published_nodes_and_the_metrics_of_known_classes_equal_a_brute_force_group_by() -> None:
    """The published classes as node ids (grouped by a mixed-radix code of the known ids) are each distinct kept
    published tuple once with its rows (a Python dict over the rows), and the report's metrics that read them
    (:attr:`MetricData.classes`) equal those of the same map's labels grouped again: random maps of two qids."""
    from polars_anon.metrics.arrays import METRICS_FROM_ARRAYS, whole_table_values
    from polars_anon.metrics.data import from_mapping
    from polars_anon.report.metrics import map_data

    hs = _two_hierarchies()
    rng = np.random.default_rng(3)
    names = sorted(METRICS_FROM_ARRAYS)
    for j in range(30):
        n, leaves, agg = _random_tuples(rng, hs)
        if j % 2:  # a level per row, some rows suppressed
            nodes = {
                q: np.array([h.generalize_ids(int(rng.integers(0, h.height)))[i] for i in leaves[q]])
                for q, h in hs.items()
            }
            suppressed = rng.random(n) < 0.3
        else:  # a level per qid, nothing suppressed: each leaf published as one node (its nodes read per leaf)
            nodes = {q: h.generalize_ids(int(rng.integers(0, h.height)))[leaves[q]] for q, h in hs.items()}
            suppressed = np.zeros(n, dtype=bool)
        tmap = TupleMap.from_nodes(agg, hs, nodes, suppressed, leaves=leaves)
        assert j % 2 or all(tmap.leaf_nodes(q) is not None for q in hs)
        want: dict[tuple[int, ...], int] = {}
        for i in range(n):
            if not suppressed[i]:
                key = tuple(int(nodes[q][i]) for q in hs)
                want[key] = want.get(key, 0) + int(agg[SIZE][i])
        found = tmap.published_nodes()
        assert found is not None
        matrix, rows = found
        assert {tuple(r): int(s) for r, s in zip(matrix.tolist(), rows.tolist())} == want and len(rows) == len(want)
        data = map_data(tmap, hs, 2)
        plain = from_mapping(TupleMap(tmap.qids, tmap.frame).frame, tmap.qids, hs, suppressed=SUPPRESSED, k=2)
        assert data is not None and data.classes is found and plain.classes is None
        assert whole_table_values(data, names, names) == whole_table_values(plain, names, names)


def test_a_full_domain_maps_classes_from_its_lattice_are_those_it_would_count() -> None:
    """The published classes a full-domain map takes from its lattice (:meth:`Lattice.class_rows`, rolled up from
    the vectors evaluated before, as the search does) are the classes, in the order, that the map counts from its
    rows (its nodes' mixed-radix code) without them; classes given in another order, or not holding every row, are
    not taken (counted anew: the same result). Random tuples of two qids at every level vector."""
    from polars_anon.algorithms import Task
    from polars_anon.algorithms.fulldomain import Lattice

    hs = _two_hierarchies()
    rng = np.random.default_rng(5)
    for _ in range(12):
        n, leaves, agg = _random_tuples(rng, hs)
        if not n:
            continue
        lattice = Lattice(Task(agg, list(hs), hs, 1))
        for vector in rng.permutation(lattice.grid()):
            levels = {q: int(lv) for q, lv in zip(hs, vector)}
            rep, rows = lattice.class_rows(vector)
            counted = TupleMap.from_levels(agg, hs, levels, leaves=leaves).published_nodes()
            given = TupleMap.from_levels(agg, hs, levels, leaves=leaves, classes=(rep, rows))
            assert counted is not None and "_published_nodes" in given.__dict__  # taken, not counted
            found = given.published_nodes()
            assert found is not None and all(np.array_equal(x, y) for x, y in zip(found, counted))
            for wrong in [(rep, rows + 1), *([(rep[::-1], rows[::-1])] if len(rep) > 1 else [])]:
                other = TupleMap.from_levels(agg, hs, levels, leaves=leaves, classes=wrong)
                assert "_published_nodes" not in other.__dict__  # not taken
                again = other.published_nodes()
                assert again is not None and all(np.array_equal(x, y) for x, y in zip(again, counted))


def test_a_map_of_the_aggregates_own_columns_covers_them_without_comparing_values(monkeypatch) -> None:
    """A map that keeps the aggregates' own qid columns (the same memory) covers them: no value is compared; a map
    of equal values in other memory is compared value by value, and one of other values fails."""
    hs = _two_hierarchies()
    agg = pl.DataFrame({"a": ["x", "z"], "b": ["1", "5"], SIZE: [2, 3]})
    tmap = TupleMap.from_levels(agg, hs, {"a": 1, "b": 1})

    def refuse(*_: object) -> bool:
        raise AssertionError("values compared")

    with monkeypatch.context() as patched:
        patched.setattr(pl.DataFrame, "equals", refuse)
        tmap.check_covers(agg)
    copied = pl.DataFrame({"a": ["x", "z"], "b": ["1", "5"], SIZE: [2, 3]})
    tmap.check_covers(copied)
    with pytest.raises(AssertionError, match="does not cover"):
        tmap.check_covers(copied.with_columns(pl.Series("a", ["x", "y"])))


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("corrupt", ["tuple missing", "node not an ancestor"])
def test_a_corrupted_full_domain_map_is_refused_by_the_road(
    monkeypatch: pytest.MonkeyPatch, engine: str, corrupt: str
) -> None:
    """mend51 (review34 read check_covers as unable to fail for full-domain maps): a full-domain map built from the
    road's own aggregates covers them by construction (its tuples are their columns: check_covers returns at its
    first comparison), but one broken on purpose is refused before anything is published: a tuple left out by
    check_covers, a published node that is not an ancestor of its leaf by check_truthful."""
    import polars_anon as pa
    from polars_anon.algorithms import fulldomain
    from tests.examples import ANIMAL_HIERARCHIES, TABLE_I

    real = TupleMap.from_levels

    def broken(
        aggregates: pl.DataFrame, hierarchies: dict, levels: dict, suppressed: Any = None, **kw: Any
    ) -> TupleMap:
        if corrupt == "tuple missing":
            leaves = {q: v[:-1] for q, v in kw["leaves"].items()}
            return real(aggregates.head(-1), hierarchies, levels, None, leaves=leaves)
        out = real(aggregates, hierarchies, levels, suppressed, **kw)
        known = out.ids["race"]
        nodes = known.nodes.copy()
        nodes[0] = next(x for x in known.leaves if x != known.leaves[0])  # another row's
        return TupleMap(out.qids, out.stored, ids={**out.ids, "race": known._replace(nodes=nodes)})

    monkeypatch.setattr(fulldomain.TupleMap, "from_levels", broken)
    table = pl.concat([TABLE_I] * 2)  # k=2 is met at the leaves: one map row per tuple
    match = "does not cover the input rows" if corrupt == "tuple missing" else "publishes 'race' = .* not one of"
    with pytest.raises(AssertionError, match=match):
        pa.anonymize(
            table,
            qids=["gender", "race"],
            hierarchies=ANIMAL_HIERARCHIES,
            k=2,
            method="fulldomain",
            engine=engine,
            insensitive="id",
        ).collect()
