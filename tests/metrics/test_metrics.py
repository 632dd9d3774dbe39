"""The metric registry, compute(), the namespace, the CLI and the anonymization report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_anon as pa
from polars_anon.cli import main
from polars_anon.metrics import FAMILIES, METRICS, compute, cost_matrix, edge_weights, merge_cost, prepare
from tests.conftest import ADULT_QIDS
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, TABLE_IB

REPO = Path(__file__).resolve().parents[2]
ANIMALS = ["gender", "race"]


@pytest.mark.parametrize("name", sorted(METRICS))
def test_registry_entry_is_complete(name: str) -> None:
    m = METRICS[name]
    assert m.name == name and m.sql == f"anon_{name}"
    assert m.polars.__name__ == (m.alias_of or name)  # an alias runs the implementation of the metric it names
    assert m.family in FAMILIES and m.dtype in (pl.Int64, pl.Float64)
    assert m.formula and m.range and m.unit and m.normalization and m.source.startswith("paper ")
    assert "[paper 00" in m.doc and ">>>" in m.doc  # formula, source and a running example


def test_aliases_are_ncp() -> None:
    assert {n: m.alias_of for n, m in METRICS.items() if m.alias_of} == {"iloss": "ncp", "granularity": "ncp"}
    got = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, ["ncp", "iloss", "granularity"]).row(0)
    assert got[0] == got[1] == got[2] == pytest.approx(3 + 3 * 6 / 7 + 3 * 1 / 7)


def test_docs_table_lists_every_metric() -> None:
    section = (REPO / "docs" / "concepts" / "metrics.md").read_text()
    for name, m in METRICS.items():
        assert f"| `{name}` |" in section, name
        row = next(line for line in section.splitlines() if line.startswith(f"| `{name}` |"))
        assert ("yes" in row.split("|")[-2]) == m.needs_sensitive, name


def test_the_k_metric_is_the_k_the_release_enforces() -> None:
    """The registry called the ``k`` metric "requested k" (the docs' table, the schema's ``metrics.k``, and the HTML
    page's line read from its docstring: "The requested k"), while a differentially private release measures with
    the k it enforces, the model's 4 here with 1 asked. It says what the report's ``k`` says now, in its words."""
    from polars_anon.report import schema
    from polars_anon.report.html import render_html

    df = pl.DataFrame({"g": ["a", "b"] * 100 + ["c"] * 3})
    model = pa.DifferentialPrivacy(1.0, 0.2, transformation={"g": 0}, seed=1)
    result = pa.anonymize(df, hierarchies={"g": pa.Hierarchy.suppression(["a", "b", "c"])}, k=1, privacy=[model])
    result.collect()
    rep = result.report
    assert rep["k"] == rep["metrics"]["k"] == model.k == 4
    words = METRICS["k"].formula
    assert words.startswith("the k the release enforces") and "requested" in words and "differential privacy" in words
    properties = schema()["properties"]
    assert properties["k"]["description"].startswith(words)  # the report's own k, in the same words
    assert properties["metrics"]["properties"]["k"]["description"].startswith(f"classes: {words};")
    assert f"| `k` | classes | {words} |" in (REPO / "docs" / "concepts" / "metrics.md").read_text()
    page = render_html(rep)
    assert "The k the release enforces" in page and "requested k" not in page


def test_names_families_and_defaults() -> None:
    all_but_sensitive = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES)
    assert all_but_sensitive.columns == [n for n, m in METRICS.items() if not m.needs_sensitive and not m.alias_of]
    assert "iloss" not in all_but_sensitive.columns and "ncp" in all_but_sensitive.columns  # each quantity once
    cost = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, "cost")
    assert cost.columns == [n for n, m in METRICS.items() if m.family == "cost"]
    cells = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, "cells")
    assert cells.columns[0] == "loss" and "granularity" not in cells.columns
    assert (
        compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, "classes").columns[0] == "discernibility"
    )  # cm skipped
    both = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, ["ncp", "cost", "ncp"])
    assert both.columns == ["ncp", *[c for c in cost.columns if c != "ncp"]]  # once each, in order of first mention
    assert all_but_sensitive.schema == {n: METRICS[n].dtype for n in all_but_sensitive.columns}


def test_by_attribute_shape() -> None:
    per = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, ["ncp", "diameter"], by_attribute=True)
    assert per.columns == ["attribute", "ncp", "diameter"] and per["attribute"].to_list() == ANIMALS
    assert per["ncp"].sum() == pytest.approx(compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, "ncp").item())


def test_key_and_position_agree_without_suppression() -> None:
    by_position = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES)
    shuffled = TABLE_IB.reverse()
    by_key = compute(TABLE_I, shuffled, ANIMALS, ANIMAL_HIERARCHIES, key="id")
    assert_frame_equal(by_position, by_key)


def test_lazy_eager_and_namespace_agree() -> None:
    eager = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, k=3)
    assert_frame_equal(eager, compute(TABLE_I.lazy(), TABLE_IB.lazy(), ANIMALS, ANIMAL_HIERARCHIES, k=3))
    assert_frame_equal(eager, TABLE_I.anon.metrics(TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, k=3))
    lazy = TABLE_I.lazy().anon.metrics(TABLE_IB.lazy(), ANIMALS, ANIMAL_HIERARCHIES, k=3)
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(eager, lazy.collect())
    assert_frame_equal(eager, pa.metrics.compute(TABLE_I.to_pandas(), TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, k=3))


def test_figure_4_cost_matrix_with_any_edge_weights() -> None:
    """Paper 001 Figure 4 and the Cost_Q table: Cost(n, m) = w(n -> LCA(n, m)), for arbitrary edge weights."""
    rng = np.random.default_rng(0)
    w = rng.uniform(0.1, 1.0, FIG2.n_nodes)
    c = cost_matrix(FIG2, w)
    i = FIG2.id_of
    omega = {x: w[i(x)] for x in FIG2.labels}  # ω(x, parent(x))
    assert c[i("a"), i("*")] == pytest.approx(omega["a"] + omega["A"]) and c[i("*"), i("a")] == 0
    assert c[i("a"), i("c")] == pytest.approx(omega["a"]) and c[i("c"), i("a")] == pytest.approx(omega["c"])
    assert c[i("e"), i("B")] == pytest.approx(omega["e"]) and c[i("B"), i("e")] == 0
    assert c[i("A"), i("d")] == pytest.approx(omega["A"]) and c[i("d"), i("A")] == pytest.approx(
        omega["d"] + omega["B"]
    )
    assert np.all(np.diag(c) == 0) and np.all(c[i("*")] == 0)  # the root's row is zero
    assert np.allclose(cost_matrix(FIG2, lambda h: w), c)


def test_merge_cost_is_the_cost_of_publishing_the_merge() -> None:
    """MC(C1, C2) equals the NCP added by publishing both classes at their LCA tuple."""
    costs = {
        q: cost_matrix(h, lambda hh, q=q: edge_weights("ncp", ANIMAL_HIERARCHIES)[q])
        for q, h in ANIMAL_HIERARCHIES.items()
    }
    ids = {q: h.id_of for q, h in ANIMAL_HIERARCHIES.items()}
    x = {"gender": ids["gender"]("M"), "race": ids["race"]("cat")}
    y = {"gender": ids["gender"]("F"), "race": ids["race"]("lion")}
    mc = merge_cost(costs, x, y, 2, 1)
    original = pl.DataFrame({"gender": ["M", "M", "F"], "race": ["cat", "cat", "lion"]})
    merged = pl.DataFrame({"gender": ["*"] * 3, "race": ["felidae"] * 3})
    assert mc == pytest.approx(compute(original, merged, ANIMALS, ANIMAL_HIERARCHIES, "ncp").item())
    batch = merge_cost(costs, x, {q: np.array([v, v]) for q, v in y.items()}, 2, np.array([1, 1]))
    assert np.allclose(batch, [mc, mc])


@pytest.mark.slow
def test_adult_report_metrics_match_compute_on_rows(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    """The report's metrics, computed on the class aggregates, equal compute() on the rows (with suppression)."""
    original = adult.with_row_index("row")
    result = pa.anonymize(
        original, qids=ADULT_QIDS, hierarchies=adult_hierarchies, insensitive="row", k=20, max_suppressed=300
    )
    assert result.report["suppressed"] > 0
    published = result.collect()
    rows = compute(
        original, published, ADULT_QIDS, adult_hierarchies, key="row", k=20, levels=result.report["details"]["levels"]
    )
    report = result.report["metrics"]
    assert list(report) == rows.columns
    for name, value in rows.row(0, named=True).items():
        assert report[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name
    json.dumps(report)  # plain numbers for the report file


def test_report_metrics_from_a_levels_map() -> None:
    """Table I at levels gender 1 (*) and race 2 (*): every cell at its root, NCP 3 x 1/... + 6 x 6/7."""
    from polars_anon.report.metrics import map_data, report_metrics
    from polars_anon.tuplemap import TupleMap

    agg = pa.class_sizes(TABLE_I.lazy(), ANIMALS).collect()
    tmap = TupleMap.from_levels(agg, ANIMAL_HIERARCHIES, {"gender": 1, "race": 2})
    parts = report_metrics(map_data(tmap, ANIMAL_HIERARCHIES, 2))
    assert parts["metrics"]["ncp"] == pytest.approx(3 + 6 * 6 / 7)
    assert parts["metrics_normalized"]["ncp"] == pytest.approx(1.0) and parts["metrics_normalized"]["loss"] == 1.0
    assert report_metrics(None) == {"metrics": {}, "metrics_normalized": {}, "metric_units": {}}


# ------------------------------------------------------------------ CLI
@pytest.fixture()
def files(tmp_path: Path) -> Path:
    TABLE_I.write_parquet(tmp_path / "t.parquet")
    TABLE_IB.write_csv(tmp_path / "tb.csv")
    rows = [
        "cat;felidae;mammals",
        "lion;felidae;mammals",
        "tiger;felidae;mammals",
        "dog;canine;mammals",
        "wolf;canine;mammals",
        "dolphin;cetaceans;mammals",
        "whale;cetaceans;mammals",
    ]
    (tmp_path / "race.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


def test_cli_prints_a_table_and_writes_json(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "metrics",
            str(files / "t.parquet"),
            str(files / "tb.csv"),
            "--hierarchy",
            "gender=suppress",
            "--hierarchy",
            f"race={files / 'race.csv'}",
            "--k",
            "3",
            "--by-attribute",
            "--json",
            str(files / "m.json"),
        ]
    )
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["metric", "table", "gender", "race"]
    assert next(line for line in out if line.startswith("ncp ")).split() == ["ncp", "6", "3", "3"]
    doc = json.loads((files / "m.json").read_text())
    assert doc["metrics"]["discernibility"] == 18 and doc["by_attribute"]["race"]["ncp"] == pytest.approx(3.0)
    assert doc["qids"] == ANIMALS and doc["k"] == 3


def test_cli_takes_a_job_file(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = files / "job.toml"
    job.write_text(
        'input = "t.parquet"\noutput = "out.parquet"\nk = 3\n[qids.gender]\nhierarchy = "suppress"\n'
        '[qids.race]\nhierarchy = "race.csv"\n'
    )
    assert (
        main(["metrics", str(files / "t.parquet"), str(files / "tb.csv"), "--job", str(job), "--names", "cost,k"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == [n for n, m in METRICS.items() if m.family == "cost"] + ["k"]
    assert lines[-1].split() == ["k", "3"]


def test_cli_refuses_with_a_message(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["metrics", str(files / "t.parquet"), str(files / "tb.csv"), "--hierarchy", "gender=suppress"]
    assert main([*args, "--names", "cm"]) == 2
    assert "needs the sensitive attribute" in capsys.readouterr().err
    assert main([*args, "--qids", "gender,race"]) == 2
    assert "qids ['race'] have no hierarchy" in capsys.readouterr().err
    (files / "m.json").write_text("{}")
    assert main([*args, "--json", str(files / "m.json")]) == 2
    assert "exists" in capsys.readouterr().err


def test_prepare_counts_suppressed_rows_once() -> None:
    data = prepare(TABLE_I, TABLE_IB.head(4), ANIMALS, ANIMAL_HIERARCHIES, key="id")
    assert data.n_rows == 6 and data.suppressed_rows == 2


@pytest.mark.parametrize("case", ["example", "suppressed"])
def test_evaluate_both_equals_evaluate_raw_and_normalized(case: str) -> None:
    """The report's one-pass evaluation (whole-table rows alone) gives the same numbers as the two separate
    evaluations (every row); with suppressed rows too."""
    from polars_anon.metrics._frames import example
    from polars_anon.metrics.registry import evaluate, evaluate_both

    if case == "example":
        data = example()
    else:
        data = prepare(TABLE_I, TABLE_IB.head(4), ANIMALS, ANIMAL_HIERARCHIES, key="id", k=2)
    raw, normalized = evaluate_both(data)
    want_raw = evaluate(data).row(0, named=True)
    assert set(raw) == set(want_raw)
    for name, value in want_raw.items():  # the same sums, run in another query plan: equal to the last bits or so
        assert raw[name] == (pytest.approx(value, rel=1e-12) if value is not None else None), name
    want = evaluate(data, normalized=True).row(0, named=True)
    assert set(normalized) == set(want)
    for name, value in want.items():
        assert normalized[name] == (pytest.approx(value) if value is not None else None), name


def test_whole_table_rows_equal_the_table_row_of_every_metric() -> None:
    """Asked for the whole-table row alone (MetricData.whole_table, the report's path), every metric gives exactly
    the null-attribute row it gives among its per-attribute rows (Table I, two rows suppressed)."""
    data = prepare(TABLE_I, TABLE_IB.head(4), ANIMALS, ANIMAL_HIERARCHIES, key="id", k=2)
    table = data.whole_table()
    assert not table.per_attribute and data.per_attribute and table.whole_table() is table
    for name, metric in METRICS.items():
        if metric.needs_sensitive:
            continue
        full = metric(data).collect()
        assert metric(table).collect().rows() == full.filter(pl.col("attribute").is_null()).rows(), name
        assert full.height == 1 + len(ANIMALS), name


def test_classes_metrics_need_no_hierarchy() -> None:
    """mend46: a qid published without a hierarchy (Mondrian's ranges, MDAV's means) is measured by the classes
    metrics, which read only which published cells are equal: the same values as with a hierarchy whose nodes the
    release holds (fails before: 'have no hierarchy'). Any other metric still needs one, and says which apply."""
    ranges = TABLE_IB.with_columns(pl.col("race").replace({"mammals": "1-3", "cetaceans": "4-6"}))
    want = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, "classes", by_attribute=True)
    only_gender = {"gender": ANIMAL_HIERARCHIES["gender"]}
    assert_frame_equal(compute(TABLE_I, ranges, ANIMALS, only_gender, "classes", by_attribute=True), want)
    whole = compute(TABLE_I, TABLE_IB, ANIMALS, ANIMAL_HIERARCHIES, ["n_classes", "min_class_size"], k=3)
    assert_frame_equal(compute(TABLE_I, ranges, ANIMALS, {}, ["n_classes", "min_class_size"], k=3), whole)
    with pytest.raises(pa.InvalidParameterError, match=r"qids \['race'\] have no hierarchy.*names='classes'"):
        compute(TABLE_I, ranges, ANIMALS, only_gender, ["n_classes", "ncp"])


def test_classes_metrics_without_hierarchy_measure_an_empty_string_label() -> None:
    """review34: a Mondrian release publishing '' for a qid without a hierarchy was refused by the label hierarchy's
    builder ("suppression: a value is the empty string ... pl.col(...).replace(...)", a builder the user never
    called); then in the classes metrics' words. mend51: the SQL twins measure it, and so does compute now: '' is a
    value like any other (the same figures as the table with another label in its place, beside the label "''"
    that its stand-in must not take), and label_hierarchies, which cannot make it a leaf, names the function that
    can."""
    df = pl.DataFrame({"a": ["", "", "''", "''", "y", "y", "y"], "b": ["*", "*", "**", "**", "e", "e", "*"]})
    out = pa.anonymize(df.select("a"), qids=["a"], k=2, method="mondrian").collect().with_columns(df["b"])
    assert out["a"].to_list()[:2] == ["", ""]  # Mondrian publishes '' as it is
    for other in ["e", "*"]:
        renamed = [t.with_columns(pl.col("a").replace("", other)) for t in (df, out)]
        assert_frame_equal(compute(df, out, ["a", "b"], {}, "classes"), compute(*renamed, ["a", "b"], {}, "classes"))
    with pytest.raises(pa.InputError, match=r"qid 'a' holds the empty string '', .*metrics.label_tables"):
        pa.metrics.label_hierarchies(df, out, ["a"])
