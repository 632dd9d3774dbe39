"""Greedy k-anonymization: options, errors, report, wiring (namespace, job file, CLI), Adult."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.algorithms.greedy import greedy_partition
from polars_anon.classes import class_sizes
from polars_anon.errors import InfeasibleError, InvalidParameterError
from tests.conftest import ADULT_QIDS
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, is_truthful

QIDS = ["gender", "race"]


def greedy(df: pl.DataFrame, k: int = 3, **kw: object) -> pa.Anonymized:
    return pa.anonymize(df, qids=QIDS, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=k, method="greedy", **kw)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"mode": "x"}, r"method 'greedy' does not take option 'mode'"),
        ({"first": "last"}, r"option 'first' must be 'first' \(paper 001\) or 'smallest' \(paper 000\), got 'last'"),
        ({"partners": "some"}, r"option 'partners' must be 'below_k' \(paper 001\) or 'all' \(paper 000\), got 'some'"),
        (
            {"candidates": 1},
            r"candidates'? must be None or .exact. \(exact loop\), .auto. or an integer block size >= 2, got 1",
        ),
        ({"candidates": "many"}, r"option 'candidates' must be .* got 'many'"),
        ({"candidates": True}, r"option 'candidates' must be .* got True"),
        (
            {"metric": "discernibility"},
            r"metric of method 'greedy' must be one of \['distortion', .*'wnllm'\].*got 'discernibility'",
        ),
        ({"metric": "ncp", "weights": {}}, r"give either metric \('ncp'\) or weights, not both"),
        ({"weights": [1, 2]}, r"option 'weights' must be a mapping qid -> edge weights per node, got \[1, 2\]"),
        ({"weights": {"gender": [0, 1, 1]}}, r"one array per qid \['gender', 'race'\]; missing \['race'\]"),
        (
            {"weights": {"gender": [0, 1], "race": [0] * 11}},
            r"weights\['gender'\] must have one weight per node of its hierarchy \(3",
        ),
        (
            {"weights": {"gender": [0, 1, -1], "race": [0] * 11}},
            r"weights\['gender'\] must be finite and >= 0, got \[-1.0\]",
        ),
        ({"weights": {"gender": [0, 1, "a"], "race": [0] * 11}}, r"weights\['gender'\] must be numbers"),
    ],
)
def test_bad_options_are_refused(kw: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        greedy(TABLE_I, **kw)


def test_k_above_the_row_count_is_refused() -> None:
    agg = class_sizes(TABLE_I.lazy(), QIDS).collect()
    with pytest.raises(InfeasibleError, match=r"greedy: k=7 is larger than the table \(6 rows\); choose k <= 6"):
        greedy_partition(agg, ANIMAL_HIERARCHIES, 7)
    with pytest.raises(InvalidParameterError, match=r"greedy: k must be an integer >= 1, got 0"):
        greedy_partition(agg, ANIMAL_HIERARCHIES, 0)


def test_report_details() -> None:
    r = greedy(TABLE_I, metric="ncp")
    r.collect()
    rep = r.report
    assert (
        rep["method"] == "greedy"
        and rep["metric"] == "ncp"
        and rep["details"]["first"] == "first"
        and rep["details"]["partners"] == "below_k"
    )
    assert (
        rep["details"]["classes_before"] == 6
        and rep["details"]["classes_below_k_before"] == 6
        and rep["details"]["classes_after"] == 2
        and rep["details"]["merges"] == 4
        and rep["details"]["rounds"] == 1
    )
    assert rep["details"]["candidates"] == "auto" and rep["details"]["block"] is None
    # Table Ib: gender all '*' (1 per cell), race 3 x mammals (1) + 3 x cetaceans (1/6): (6 + 3 + 0.5) / 12
    assert rep["loss"] == pytest.approx((6 + 3 + 3 * 1 / 6) / 12)
    assert greedy(TABLE_I).report["metric"] == "nllm"  # the papers' default


def test_user_weights_steer_the_merges() -> None:
    """Free gender and costly race: keep race, generalize gender (unlike NCP's Table Ib)."""
    w = {"gender": [0, 1e-6, 1e-6], "race": [0] + [1.0] * 10}
    r = greedy(TABLE_I, weights=w)
    out = r.collect()
    assert r.report["details"]["weights"] == "user" and r.report["metric"] is None
    assert set(out["gender"]) == {"*"}
    # whales and the dolphin share cetaceans; cat and lion felidae; dog has to climb to mammals
    assert out["race"].to_list() == ["mammals", "mammals", "mammals", "cetaceans", "cetaceans", "cetaceans"]


@pytest.mark.parametrize("partners", ["below_k", "all"])
@pytest.mark.parametrize("first", ["first", "smallest"])
def test_a_single_class_below_k_merges_with_the_cheapest_class(first: str, partners: str) -> None:
    """Only (f) is below k=3: it joins the cheapest class of any size. Under NCP on Figure 2,
    f costs 5/6 against anything; the partner pays 4 x w(x -> *): a (4 rows) 4 x 5/6,
    [A] (4 rows, already A) 4 x 3/6, e (3 rows) 3 x 5/6. Cheapest: [A] -> the [*] class."""
    df = pl.DataFrame({"q": ["a", "a", "b", "c", "e", "e", "e", "f"]})
    agg = class_sizes(pl.LazyFrame({"q": ["A"] * 4 + ["e"] * 3 + ["f"]}), ["q"]).collect()
    res = greedy_partition(
        agg, {"q": FIG2}, 3, metric="ncp", first=first, partners=partners, candidates=None, progress=False
    )
    labels = [FIG2.label_of(i) for i in res.nodes["q"]]
    assert dict(zip(agg["q"].to_list(), labels)) == {"A": "*", "e": "e", "f": "*"}
    out = pa.anonymize(
        df, hierarchies={"q": FIG2}, k=3, method="greedy", metric="ncp", first=first, partners=partners
    ).collect()
    assert out.group_by("q").len()["len"].min() >= 3


def test_k_1_changes_nothing() -> None:
    assert greedy(TABLE_I, k=1).collect().equals(TABLE_I)


def test_namespace_and_partition_agree() -> None:
    lf = TABLE_I.lazy()
    got = lf.anon.k_anonymize(
        hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=3, method="greedy", metric="ncp"
    ).collect()
    assert got.equals(
        TABLE_I.anon.k_anonymize(hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=3, method="greedy", metric="ncp")
    )
    assert got["race"].to_list() == ["mammals"] * 3 + ["cetaceans"] * 3


def test_blocks_at_least_the_class_count_are_the_exact_loop(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    qids = ADULT_QIDS[:5]
    agg = class_sizes(adult.lazy(), qids).collect()
    hs = {q: adult_hierarchies[q] for q in qids}
    exact = greedy_partition(agg, hs, 5, candidates=None, progress=False)
    same = greedy_partition(agg, hs, 5, candidates=agg.height, progress=False)
    assert np.array_equal(exact.class_id, same.class_id) and exact.rounds == 1
    named = greedy_partition(agg, hs, 5, candidates="exact", progress=False)  # the job-file spelling of None
    assert named.block is None and np.array_equal(exact.class_id, named.class_id)


def test_adult_pruned_is_k_anonymous_and_truthful(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    r = pa.anonymize(adult, qids=ADULT_QIDS, hierarchies=adult_hierarchies, k=10, method="greedy", candidates=64)
    out = r.collect()
    assert out.group_by(ADULT_QIDS).len()["len"].min() >= 10 and out.height == adult.height
    assert out["salary-class"].equals(adult["salary-class"])
    assert is_truthful(adult, out, adult_hierarchies)
    assert r.report["details"]["block"] == 64 and r.report["details"]["classes_before"] == 18109


def test_job_file_and_cli(tmp_path: Path, adult_dir: Path) -> None:
    qids = "\n".join(f'[qids.{q}]\nhierarchy = "{adult_dir}/adult_hierarchy_{q}.csv"' for q in ADULT_QIDS[:4])
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{adult_dir}/adult.csv"\nseparator = ";"\noutput = "out/g.parquet"\nk = 25\nmethod = "greedy"\n'
        f'metric = "wnllm"\nfirst = "smallest"\npartners = "all"\ncandidates = 32\n{qids}\n'
    )
    assert cli.main(["anonymize", str(job)]) == 0
    rep = json.loads((tmp_path / "out" / "g.report.json").read_text())
    assert rep["method"] == "greedy" and rep["metric"] == "wnllm" and rep["min_class_size"] >= 25
    assert (rep["details"]["first"], rep["details"]["partners"], rep["details"]["candidates"]) == (
        "smallest",
        "all",
        32,
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(job.read_text().replace("candidates = 32", "candidate = 32").replace("out/g", "out/h"))
    assert cli.main(["anonymize", str(bad)]) == 2
    assert not (tmp_path / "out" / "h.parquet").exists()


def test_demo_runs_greedy(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert cli.main(["demo", "--rows", "5000", "--k", "5", "--out", str(out), "--method", "greedy"]) == 0
    rep = json.loads((out / "report.json").read_text())
    assert rep["method"] == "greedy" and rep["min_class_size"] >= 5 and rep["n_rows"] == 5000


@pytest.mark.parametrize(("first", "partners"), [("first", "all"), ("smallest", "below_k")])
def test_one_block_loop_merges_as_the_blocks_do(
    adult: pl.DataFrame, adult_hierarchies: dict, monkeypatch: pytest.MonkeyPatch, first: str, partners: str
) -> None:
    """The exact loop's 1-D arrays against the 2-D block arrays (one block row), with privacy models: same classes."""
    import polars_anon.algorithms.greedy as greedy_module
    from polars_anon.privacy.evaluate import build_constraints

    qids, df = ADULT_QIDS[:4], adult.head(300)
    agg = class_sizes(df.lazy(), qids).collect()
    models = [pa.LDiversity("occupation", l=2), pa.TCloseness("occupation", t=0.3)]
    counts = {"occupation": df.group_by(*qids, "occupation").len("count")}
    hs = {q: adult_hierarchies[q] for q in qids}

    def run() -> np.ndarray:
        c = build_constraints(agg, qids, 3, models, counts)
        kw = {"first": first, "partners": partners, "candidates": None, "progress": False, "constraints": c}
        return greedy_partition(agg, hs, 3, **kw).class_id  # type: ignore[arg-type]

    fast = run()
    monkeypatch.setattr(greedy_module, "ONE_BLOCK_LOOP", False)
    assert np.array_equal(run(), fast)
    assert agg.height > 100 and 1 < len(np.unique(fast)) < agg.height / 3


@pytest.mark.parametrize("candidates", [None, 8])
def test_groups_without_pair_tables_merge_as_with_them(
    adult: pl.DataFrame, adult_hierarchies: dict, candidates: int | None
) -> None:
    """Few classes: the fused groups walk each LCA instead of building pair tables, with the same float sums."""
    from polars_anon.algorithms.greedy import cost_groups, root_weights

    qids = ADULT_QIDS[:5]
    agg = class_sizes(adult.head(120).lazy(), qids).collect()
    hs = {q: adult_hierarchies[q] for q in qids}
    assert any(g.lazy for g in cost_groups(hs, root_weights(hs, "nllm", None), agg.height))
    tables = cost_groups(hs, root_weights(hs, "nllm", None))
    assert not any(g.lazy for g in tables)
    walked = greedy_partition(agg, hs, 4, candidates=candidates, progress=False)
    tabled = greedy_partition(agg, hs, 4, candidates=candidates, progress=False, cost_tables=tables)
    assert np.array_equal(walked.class_id, tabled.class_id) and walked.merges == tabled.merges > 10
    for q in qids:
        assert np.array_equal(walked.nodes[q], tabled.nodes[q])


def test_pair_tables_built_during_the_loop_change_no_merge(adult: pl.DataFrame, adult_hierarchies: dict) -> None:
    """Groups handed over without tables get them once the walks cost more, mid-loop: the same partition."""
    from polars_anon.algorithms.greedy import cost_groups, root_weights

    qids = ADULT_QIDS[:4]
    agg = class_sizes(adult.head(1500).lazy(), qids).collect()
    hs = {q: adult_hierarchies[q] for q in qids}
    walked = cost_groups(hs, root_weights(hs, "nllm", None), 0)
    assert all(g.lazy for g in walked)
    a = greedy_partition(agg, hs, 3, candidates=None, progress=False, cost_tables=walked)
    b = greedy_partition(
        agg, hs, 3, candidates=None, progress=False, cost_tables=cost_groups(hs, root_weights(hs, "nllm", None))
    )
    assert any(not g.lazy for g in walked) and a.merges > 100  # built on the way
    assert np.array_equal(a.class_id, b.class_id)
