"""The full-domain objectives on a 6-row table, computed by hand.

Table: g in {a, b, c, d} (a, b -> A; c, d -> C; A, C -> *), s in {m, f} (-> *), n = 6:
(a,m) (a,m) (b,m) (c,f) (c,f) (d,m). At vector (1, 0) with k = 3 the class (A,m)
keeps 3 rows; (C,f) x2 and (C,m) x1 are suppressed (S = 3). Domain sizes 4 and 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.algorithms import Task
from polars_anon.algorithms.fulldomain import Lattice
from polars_anon.algorithms.objectives import Settings, make_objective

DF = pl.DataFrame({"g": ["a", "a", "b", "c", "c", "d"], "s": ["m", "m", "m", "f", "f", "m"]})
H = {
    "g": pa.Hierarchy.from_dict({"*": {"A": ["a", "b"], "C": ["c", "d"]}}),
    "s": pa.Hierarchy.from_dict({"*": ["m", "f"]}),
}
L2 = math.log2


def score(metric: str, vector: tuple[int, int] = (1, 0), k: int = 3, **options: object):
    agg = DF.group_by("g", "s").len("size").with_columns(pl.col("size").cast(pl.UInt32)).sort("g", "s")
    lattice = Lattice(Task(agg, ["g", "s"], H, k))
    objective = make_objective(lattice, Settings(metric, max_suppressed=6, **options))  # type: ignore[arg-type]
    return objective.value(lattice.evaluate(np.array(vector)))


def test_ncp() -> None:
    """g: 3 kept rows at A (nl 2: (2-1)/(4-1) = 1/3) + 3 suppressed (1 each) -> 4/6; s: 3/6."""
    sc = score("ncp")
    assert sc.parts == pytest.approx({"g": 2 / 3, "s": 1 / 2})
    assert sc.value == pytest.approx(7 / 12)
    assert score("ncp", weights={"g": 3.0}).value == pytest.approx((3 * 2 / 3 + 1 / 2) / 4)


def test_loss_parts_match_ncp_at_gs_half() -> None:
    """ARX loss, gs 0.5: g raw = 3 * 2/4 + 3 = 4.5, (4.5 - 6/4) / (6 - 6/4) = 2/3; s: (4.5 - 3) / 3 = 1/2."""
    sc = score("loss")
    assert sc.parts == pytest.approx({"g": 2 / 3, "s": 1 / 2})
    assert sc.value == pytest.approx(math.sqrt((1 + 2 / 3) * (1 + 1 / 2)) - 1)  # geometric, ARX's default


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [
        ("arithmetic", [7 / 12]),
        ("geometric", [math.sqrt(2.5) - 1]),
        ("sum", [7 / 6]),
        ("max", [2 / 3]),
        ("rank", [2 / 3, 1 / 2]),
    ],
)
def test_loss_aggregates(aggregate: str, expected: list[float]) -> None:
    sc = score("loss", aggregate=aggregate)
    assert sc.key.tolist() == pytest.approx(expected)


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [
        ("arithmetic", [5 / 12]),
        ("geometric", [math.sqrt(2) - 1]),
        ("sum", [5 / 6]),
        ("max", [1 / 2]),
        ("rank", [1 / 2, 1 / 3]),
    ],
)
def test_loss_weights_are_divided_by_their_maximum(aggregate: str, expected: list[float]) -> None:
    """weights g 1, s 2 -> 0.5 and 1: x = (1/3, 1/2)."""
    assert score("loss", aggregate=aggregate, weights={"g": 1.0, "s": 2.0}).key.tolist() == pytest.approx(expected)


def test_loss_gs_factor() -> None:
    """gs 0.25: s-factor 0.5, a suppressed row adds share + 0.5 (1 - share) = 0.75 (both published
    values have share 1/2): g (1.5 + 2.25 - 1.5) / 4.5 = 1/2, s (3.75 - 3) / 3 = 1/4.
    gs 0.75: g-factor 0.5: g (0.75 + 3 - 0.75) / (6 - 0.75) = 4/7, s (0.75 + 3 - 1.5) / (6 - 1.5) = 1/2."""
    assert score("loss", gs_factor=0.25).parts == pytest.approx({"g": 1 / 2, "s": 1 / 4})
    assert score("loss", gs_factor=0.75).parts == pytest.approx({"g": 4 / 7, "s": 1 / 2})
    assert score("loss", gs_factor=0.0).parts == pytest.approx(
        {"g": 1 / 3, "s": 0.0}
    )  # suppression weighs its share only


def test_entropy() -> None:
    """g: a a b c c d -> A A A C C C: 4 log2(3/2) + 2 log2(3). Non-monotonic adds, for s, the
    suppressed f f m pooled: 2 log2(3/2) + log2(3) (g: all C, nothing)."""
    gen = 4 * L2(3 / 2) + 2 * L2(3)
    mono = score("entropy", monotonic=True)
    assert mono.parts == pytest.approx({"g": gen, "s": 0.0}) and mono.value == pytest.approx(gen)
    exact = score("entropy")
    assert exact.parts == pytest.approx({"g": gen, "s": 2 * L2(3 / 2) + L2(3)})
    assert exact.value == pytest.approx(gen + 2 * L2(3 / 2) + L2(3))
    assert score("entropy", monotonic=True, gs_factor=0.75).value == pytest.approx(gen / 2)


def test_precision_and_height() -> None:
    """precision g: (3 * 1 * 1/2 + 3) / 6 = 3/4, s: 3/6; height 1 + 0."""
    assert score("precision").parts == pytest.approx({"g": 3 / 4, "s": 1 / 2})
    assert score("precision").value == pytest.approx(5 / 8)
    assert score("height").value == 1.0 and score("height", aggregate="max").value == 1.0


def test_class_objectives() -> None:
    """DM: 3^2 + 3 * 6 = 27; DM*: 9 + 4 + 1 = 14; AECS 6 / (1 + 1); ambiguity 3 * (2 * 1) + 3 * (4 * 2)."""
    assert score("discernibility").value == 27.0
    assert score("discernibility", monotonic=True).value == 14.0
    assert score("aecs").value == 3.0
    assert score("ambiguity").value == 30.0


def test_kl_divergence() -> None:
    """p = 1/3, 1/6, 1/3, 1/6 for (a,m) (b,m) (c,f) (d,m); q = (3/6) / (2 * 1) for the kept class,
    (3/6) / (4 * 2) for the suppressed rows."""
    expected = (
        (1 / 3) * L2((1 / 3) / (1 / 4))
        + (1 / 6) * L2((1 / 6) / (1 / 4))
        + (1 / 3) * L2((1 / 3) / (1 / 16))
        + (1 / 6) * L2((1 / 6) / (1 / 16))
    )
    assert score("kl_divergence").value == pytest.approx(expected)
    assert score("kl_divergence", vector=(2, 1)).value == pytest.approx(
        2 * (1 / 3) * L2(8 / 3) + 2 * (1 / 6) * L2(8 / 6)
    )


@pytest.mark.parametrize(
    ("metric", "options", "levels"),
    [
        ("ncp", {}, {"g": 1, "s": 0}),  # 7/12 against 2/3, 2/3, 1
        ("loss", {}, {"g": 1, "s": 0}),
        ("entropy", {}, {"g": 1, "s": 0}),
        ("precision", {}, {"g": 1, "s": 0}),
        ("height", {}, {"g": 1, "s": 0}),
        ("discernibility", {"monotonic": True}, {"g": 1, "s": 0}),  # DM* 14 against 20, 18, 36
        ("discernibility", {}, {"g": 1, "s": 1}),  # DM 18 against 27, 28, 36
        ("aecs", {}, {"g": 1, "s": 1}),  # 3 = 3 = 3: the vector that suppresses nothing
        ("ambiguity", {}, {"g": 1, "s": 1}),  # 24 against 30, 32, 48
        ("kl_divergence", {}, {"g": 1, "s": 1}),  # (1,0), (1,1), (2,1) tie: no suppression, then level sum
    ],
)
def test_the_objective_picks_the_optimum(metric: str, options: dict, levels: dict) -> None:
    """k = 3, at most 3 suppressed: feasible (1,0) S=3, (2,0) S=2, (1,1) and (2,1) S=0."""
    r = pa.anonymize(DF, hierarchies=H, k=3, max_suppressed=3, metric=metric, **options)
    assert r.report["details"]["levels"] == levels
    assert r.report["metric"] == metric and r.report["details"]["objective"]["metric"] == metric


def test_report_states_the_objective() -> None:
    """loss, rank, weights g 1 s 2 (-> 1/2, 1): (1,0) x = (1/3, 1/2) and (2,0) x = (1/2, 1/3) tie at
    [1/2, 1/3]; (2,0) suppresses 2 rows, (1,0) 3; (1,1) [1, 1/6], (2,1) [1, 1/2]."""
    r = pa.anonymize(DF, hierarchies=H, k=3, max_suppressed=3, metric="loss", aggregate="rank", weights={"s": 2.0})
    assert r.report["details"]["levels"] == {"g": 2, "s": 0} and r.report["suppressed"] == 2
    obj = r.report["details"]["objective"]
    assert obj == {
        "metric": "loss",
        "aggregate": "rank",
        "gs_factor": 0.5,
        "weights": {"g": 1.0, "s": 2.0},
        "value": pytest.approx([1 / 2, 1 / 3]),
        "by_qid": pytest.approx({"g": 1.0, "s": 1 / 3}),
    }
    assert r.report["options"]["aggregate"] == "rank"


def test_default_is_ncp_and_unchanged() -> None:
    """Without metric the search minimizes the average cell NCP: the report's loss."""
    r = pa.anonymize(DF, hierarchies=H, k=3, max_suppressed=3)
    assert r.report["metric"] == "ncp"
    assert r.report["details"]["objective"]["value"] == pytest.approx(r.report["loss"]) == pytest.approx(7 / 12)


def test_job_file_takes_the_metric_and_its_options(tmp_path: Path) -> None:
    DF.write_csv(tmp_path / "t.csv")
    for q, h in H.items():
        h.to_csv(tmp_path / f"{q}.csv")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.csv"\noutput = "out.parquet"\nk = 3\nmetric = "entropy"\nmax_suppressed = 3\nmonotonic = true\n'
        'weights = { g = 2 }\n[qids.g]\nhierarchy = "g.csv"\n[qids.s]\nhierarchy = "s.csv"\n'
    )
    assert cli.main(["anonymize", str(job)]) == 0
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert report["metric"] == "entropy" and report["details"]["levels"] == {"g": 1, "s": 0}
    obj = report["details"]["objective"]
    assert {k: obj[k] for k in ("metric", "aggregate", "gs_factor", "monotonic", "weights")} == {
        "metric": "entropy",
        "aggregate": "sum",
        "gs_factor": 0.5,
        "monotonic": True,
        "weights": {"g": 2.0, "s": 1.0},
    }
    assert obj["value"] == pytest.approx(2 / 2 * (4 * L2(3 / 2) + 2 * L2(3)))  # weights / max: g 1, s 1/2 (s part 0)


@pytest.mark.parametrize("n_values", [6, 120])  # few values: each present one marked; many: the radix sort
def test_lattice_classes_are_the_published_tuples_in_order(n_values: int) -> None:
    """The lattice's class ids at every vector against the published node ids grouped by NumPy: equal ids exactly for
    equal published tuples, numbered in the order of the tuples with the last qid slowest (its classes' own order)."""
    rng = np.random.default_rng(n_values)
    qids = ["a", "b", "c"]
    df = pl.DataFrame({q: rng.integers(0, n_values, 400) for q in qids})
    agg = df.group_by(qids).len("size").with_columns(pl.col(q).cast(pl.String) for q in qids).sort(qids)
    hs = {q: pa.Hierarchy.intervals(range(n_values), [2, 6]) for q in qids}
    lattice = Lattice(Task(agg.with_columns(pl.col("size").cast(pl.UInt32)), qids, hs, 2))
    leaves = {q: hs[q].ids_of(agg[q]) for q in qids}
    for vector in lattice.grid():
        nodes = [hs[q].generalize_ids(int(lv))[leaves[q]] for q, lv in zip(qids, vector)]
        _, expected = np.unique(np.stack(nodes[::-1], axis=1), axis=0, return_inverse=True)
        ids = lattice.classes(vector)
        assert ids.tolist() == expected.ravel().tolist(), vector


@pytest.mark.parametrize(
    ("n_values", "widths", "n_qids", "orders"),
    [
        (6, [2, 6], 3, ["grid", "reverse"]),  # few values: at most 216 classes, most vectors rolled up from below
        (2000, [10, 100], 3, ["grid", "reverse"]),  # each tuple its own class low down; keys past 32 bits (radix)
        (10_000, [100, 1000], 5, ["grid"]),  # keys past 63 bits: re-densified between attributes
    ],
)
def test_lattice_classes_hold_their_rows_and_a_tuple_each(
    n_values: int, widths: list[int], n_qids: int, orders: list[str]
) -> None:
    """Each class of every vector, in the search's order and its reverse (vectors rolled up from cached classes, from
    classes that are the tuples, or from the tuples): its rows are the sum of its tuples' rows (as floats, exact), its
    tuple is one of its own, and the ids are the published tuples' in order, as NumPy groups the published node ids."""
    rng = np.random.default_rng(n_values)
    qids = [f"q{i}" for i in range(n_qids)]
    df = pl.DataFrame({q: rng.integers(0, n_values, 300) for q in qids})
    agg = df.group_by(qids).len("size").with_columns(pl.col(q).cast(pl.String) for q in qids).sort(qids)
    hs = {q: pa.Hierarchy.intervals(range(n_values), widths) for q in qids}
    size, leaves = agg["size"].to_numpy().astype(np.int64), {q: hs[q].ids_of(agg[q]) for q in qids}
    for order in orders:
        lattice = Lattice(Task(agg.with_columns(pl.col("size").cast(pl.UInt32)), qids, hs, 2))
        grid = lattice.grid()
        for vector in grid if order == "grid" else grid[::-1]:
            nodes = [hs[q].generalize_ids(int(lv))[leaves[q]] for q, lv in zip(qids, vector)]
            _, expected = np.unique(np.stack(nodes[::-1], axis=1), axis=0, return_inverse=True)
            found = lattice._classes(vector)
            ids = found.ids()
            assert ids.tolist() == expected.ravel().tolist(), vector
            assert found.rows.dtype == np.float64
            assert found.rows.tolist() == np.bincount(ids, weights=size).tolist(), vector
            assert ids[found.rep].tolist() == list(range(found.n)), vector


def test_ncp_parts_with_suppressed_rows_equal_the_sums_over_the_kept_rows() -> None:
    """At every vector of random lattices (k = 4: most vectors suppress rows), each NCP part is the NumPy sum over
    the kept tuples of rows x cell NCP plus the suppressed rows, over the row count, bit for bit, computed here from
    the hierarchies' own node ids: the levels of leaves (every cost 0) and of roots (every cost 1) included, which
    the objective adds up without a pass over the tuples."""
    from polars_anon.metrics.cells import loss_per_node

    rng = np.random.default_rng(3)
    qids = ["a", "b", "c"]
    hs = {q: pa.Hierarchy.intervals(range(12), [2, 6]) for q in qids}
    for _ in range(5):
        df = pl.DataFrame({q: rng.integers(0, 12, 300) for q in qids})
        agg = df.group_by(qids).len("size").with_columns(pl.col(q).cast(pl.String) for q in qids).sort(qids)
        lattice = Lattice(Task(agg.with_columns(pl.col("size").cast(pl.UInt32)), qids, hs, 4))
        objective = make_objective(lattice, Settings("ncp", max_suppressed=300))
        size, n = agg["size"].to_numpy().astype(np.int64), float(agg["size"].sum())
        leaves = {q: hs[q].ids_of(agg[q]) for q in qids}
        suppressing = 0
        for vector in lattice.grid():
            ev = lattice.evaluate(vector)
            kept = ~ev.small if ev.suppressed else np.ones(len(size), dtype=bool)
            suppressing += ev.suppressed > 0
            for q, lv in zip(qids, vector.tolist()):
                cost = loss_per_node(hs[q]).astype(np.float64)[hs[q].generalize_ids(lv)[leaves[q]]]
                part = float((size[kept] * cost[kept]).sum())
                assert objective.value(ev).parts[q] == (part + ev.suppressed) / n, (vector, q)
        assert suppressing > 0


def test_each_tuple_is_suppressed_with_its_class() -> None:
    """At every vector (k = 4: some suppress rows, some none), an evaluation's suppressed tuples are those of its
    suppressed classes, read through the class ids; without a suppressed row none is, and no class id is composed."""
    rng = np.random.default_rng(5)
    qids = ["a", "b", "c"]
    df = pl.DataFrame({q: rng.integers(0, 12, 300) for q in qids})
    agg = df.group_by(qids).len("size").with_columns(pl.col(q).cast(pl.String) for q in qids).sort(qids)
    hs = {q: pa.Hierarchy.intervals(range(12), [2, 6]) for q in qids}
    lattice = Lattice(Task(agg.with_columns(pl.col("size").cast(pl.UInt32)), qids, hs, 4))
    for vector in lattice.grid():
        ev = lattice.evaluate(vector)
        small = ev.small
        assert small.dtype == np.bool_ and small.shape == (agg.height,)
        assert small.tolist() == ev.small_class[ev.classes.ids()].tolist(), vector
    lattice = Lattice(Task(agg.with_columns(pl.col("size").cast(pl.UInt32)), qids, hs, 4))
    lattice.evaluate(np.array([1, 1, 1]))
    top = lattice.evaluate(np.array([2, 2, 2]))  # one class of 300 rows, rolled up from (1, 1, 1)
    assert top.suppressed == 0 and not top.small.any()
    assert top.classes._ids is None  # type: ignore[attr-defined]  # no id composed for it


def test_the_lattice_indexes_its_tables_by_the_road_codes() -> None:
    """With the road's codes the lattice's per-level tables are composed with the labels' node ids and indexed by
    the codes themselves (no node id gathered per tuple: 4 x 684,166 Int64 on the 3M register); every tuple's nodes,
    dense codes, extremes and gathers are those of the lattice indexed by node ids, and codes of other aggregates
    are refused as by ``leaf_ids``."""
    import dataclasses

    from polars_anon._passes import as_string_codes

    counts = DF.group_by("g", "s").len("count").with_columns(pl.col("count").cast(pl.UInt32))
    frame, codes = as_string_codes(counts, ["g", "s"])
    agg = frame.rename({"count": "size"})
    assert codes is not None
    coded, plain = Lattice(Task(agg, ["g", "s"], H, 3, codes=codes)), Lattice(Task(agg, ["g", "s"], H, 3))
    loss = [np.arange(h.n_nodes, dtype=np.float64) / 7 for h in coded.hs]
    for j, q in enumerate(coded.qids):
        assert coded.nodes[j].index is codes.codes[q] and coded.codes[j].index is codes.codes[q]
        assert coded.n_codes[j] == plain.n_codes[j]
        for lv in range(coded.heights[j]):
            assert np.array_equal(coded.nodes[j][lv], plain.nodes[j][lv])
            assert np.array_equal(coded.codes[j][lv], plain.codes[j][lv])
            assert np.array_equal(coded.codes[j].take(lv, np.array([2, 0])), plain.codes[j].take(lv, np.array([2, 0])))
            assert coded.nodes[j].extremes(loss[j], lv) == plain.nodes[j].extremes(loss[j], lv)
            assert np.array_equal(
                coded.nodes[j].gather(loss[j], lv, agg["size"].to_numpy() > 1),
                plain.nodes[j].gather(loss[j], lv, agg["size"].to_numpy() > 1),
            )
    reordered = Task(agg.reverse(), ["g", "s"], H, 3, codes=codes)
    with pytest.raises(RuntimeError, match="codes that do not decode to the aggregates' column"):
        Lattice(reordered)
    assert dataclasses.replace(reordered, codes=None).leaf_index("g")[1] is None
