"""MDAV clustering, blocks and publishing [paper 004 Algorithms 1 and 2] on small hand tables."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_anon as pa
from polars_anon import Hierarchy
from polars_anon.algorithms.mdav import (
    aggregate,
    cluster,
    mdav,
    mutual_information,
    permutation_keys,
    permute,
    qid_blocks,
    split_blocks,
    verify_permutation,
)
from polars_anon.distance import Gower, encode_records
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.job import Job, run_job
from polars_anon.publish import publish


def _labels(values, k, seed=0):
    r = encode_records(pl.DataFrame({"x": [float(v) for v in values]}), ["x"], [])
    g = Gower(r)
    return mdav(*g.transform(r), g, k, np.random.default_rng(seed))


def _partition(labels):
    groups = {}
    for i, c in enumerate(labels.tolist()):
        groups.setdefault(c, []).append(i)
    return sorted(groups.values())


def test_two_separated_groups_whatever_the_random_start():
    for seed in range(5):
        assert _partition(_labels([0, 1, 2, 100, 101, 102], 3, seed)) == [[0, 1, 2], [3, 4, 5]]


def test_remainder_rule_sizes():
    # 11 records, k=3: rounds at 11 and 8 left form clusters of 3; the 5 left (k..2k-1) form one cluster
    assert sorted(np.bincount(_labels(range(11), 3)).tolist()) == [3, 3, 5]
    # 2k - 1 records: no round, one cluster
    assert np.bincount(_labels(range(5), 3)).tolist() == [5]
    # exactly 2k: one round, then k left
    assert sorted(np.bincount(_labels(range(6), 3)).tolist()) == [3, 3]


def test_cluster_is_the_furthest_point_and_its_nearest():
    # from any start, the furthest record is 0 or 100; its 2 nearest are its neighbours
    part = _partition(_labels([0, 1, 3, 50, 97, 99, 100], 3))
    assert [0, 1, 2] in part or [4, 5, 6] in part
    assert all(3 <= len(c) <= 5 for c in part)


def test_ties_go_to_the_earlier_row():
    # all records identical: q is random, p = the first row (argmax tie), its cluster p + the next rows
    assert _labels([7] * 6, 3).tolist() == [0, 0, 0, 1, 1, 1]


def test_seed_makes_it_deterministic():
    values = np.random.default_rng(1).integers(0, 50, 80)
    assert _labels(values, 4, seed=7).tolist() == _labels(values, 4, seed=7).tolist()


def test_split_blocks_partitions_within_bounds():
    rng = np.random.default_rng(0)
    num = rng.random((2, 1000))
    cat = rng.integers(0, 6, (1, 1000))
    blocks = split_blocks(num, cat, 5, 100)
    rows = np.sort(np.concatenate(blocks))
    assert rows.tolist() == list(range(1000))
    assert all(5 <= len(b) <= 100 for b in blocks)


def test_median_cut_keeps_equal_values_together_when_balanced():
    num = np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5]])
    blocks = split_blocks(num, np.zeros((0, 8), int), 1, 4)
    # first cut at the median 0.5 (values < 0.5 | >= 0.5), then the 5 rows >= 0.5 at their median 1
    assert sorted(sorted(b.tolist()) for b in blocks) == [[0, 1, 2], [3, 4, 5], [6, 7]]


def test_blocked_clusters_stay_inside_blocks_and_reach_k():
    rng = np.random.default_rng(2)
    df = pl.DataFrame({"x": rng.integers(0, 100, 600).astype(float), "c": rng.choice(list("abcde"), 600)})
    r = encode_records(df, ["x"], ["c"])
    labels, n_blocks = cluster(r, "gower", 4, seed=0, block_size=100)
    assert n_blocks >= 6
    sizes = np.bincount(labels)
    assert sizes.min() >= 4 and sizes.max() <= 7


def test_mutual_information_hand_values():
    lf = pl.LazyFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 1, 1]})
    assert mutual_information(lf, "a", "b").collect().item() == pytest.approx(0.0)
    assert mutual_information(lf, "a", "c").collect().item() == pytest.approx(math.log(2))
    # a = (0, 0, 1, 1) vs d = (0, 1, 1, 1): H(a) - H(a|d) = ln 2 - 3/4 * H(1/3, 2/3)
    d = pl.LazyFrame({"a": [0, 0, 1, 1], "d": [0, 1, 1, 1]})
    h = -(1 / 3 * math.log(1 / 3) + 2 / 3 * math.log(2 / 3))
    assert mutual_information(d, "a", "d").collect().item() == pytest.approx(math.log(2) - 0.75 * h)


def test_qid_blocks():
    assert qid_blocks(["a", "b", "c", "d"], {"a": 0.0, "b": 0.3, "c": 0.2, "d": 0.1}) == [["b", "c"], ["d", "a"]]
    assert qid_blocks(["a"]) == [["a"]]
    assert qid_blocks(["a", "b", "c"]) == [["a", "b", "c"]]


def test_permutation_moves_blocks_together_and_changes_every_nonconstant_cluster():
    df = pl.DataFrame({"a": list("xyzxyzww"), "b": list("12312399"), "s": range(8)})
    r = encode_records(df, [], ["a", "b"])
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    keys, constant, _ = permutation_keys(r, labels, [["a", "b"]], seed=3)
    assert constant == [1]  # cluster 2 is (w, 9) twice
    out = publish(df.lazy(), permute(df, labels, [["a", "b"]], keys)).collect()
    assert out["s"].to_list() == list(range(8))
    pairs = {("x", "1"), ("y", "2"), ("z", "3")}
    for c in (0, 1):
        rows = np.flatnonzero(labels == c).tolist()
        got = list(zip(out["a"].gather(rows), out["b"].gather(rows)))
        assert set(got) == pairs and got != [("x", "1"), ("y", "2"), ("z", "3")]
    assert out.row(6) == ("w", "9", 6) and out.row(7) == ("w", "9", 7)


def test_permutation_rejection_redraws_an_identity_draw():
    """Two-row clusters of distinct values: a uniform draw keeps the order half the time; none may stay."""
    n = 200
    df = pl.DataFrame({"a": [str(i) for i in range(n)]})
    labels = np.repeat(np.arange(n // 2), 2)
    r = encode_records(df, [], ["a"])
    keys, constant, rounds = permutation_keys(r, labels, [["a"]], seed=0)
    out = publish(df.lazy(), permute(df, labels, [["a"]], keys)).collect()
    swapped = [str(i + 1 - 2 * (i % 2)) for i in range(n)]
    assert out["a"].to_list() == swapped and constant == [0] and rounds >= 1


def test_aggregate_means_and_modes():
    df = pl.DataFrame({"x": ["1", "2", "6", "10", "10", "13"], "c": ["u", "v", "v", "w", "u", "w"]})
    r = encode_records(df, ["x"], ["c"], {"c": ["w", "v", "u"]})
    out = publish(df.lazy(), aggregate(r, np.array([0, 0, 0, 1, 1, 1]))).collect()
    assert out["x"].to_list() == [3.0, 3.0, 3.0, 11.0, 11.0, 11.0]
    assert out["c"].to_list() == ["v"] * 3 + ["w"] * 3


def test_aggregate_mode_tie_goes_to_hierarchy_order():
    df = pl.DataFrame({"c": ["u", "v"]})
    r = encode_records(df, [], ["c"], {"c": ["v", "u"]})
    assert publish(df.lazy(), aggregate(r, np.array([0, 0]))).collect()["c"].to_list() == ["v", "v"]


# ---------------------------------------------------------------- pipeline

TABLE = pl.DataFrame(
    {
        "id": [f"r{i}" for i in range(12)],
        "age": [21, 22, 23, 35, 36, 37, 50, 51, 52, 53, 70, 71],
        "sex": ["F", "M", "F", "M", "M", "F", "F", "F", "M", "M", "F", "M"],
        "disease": ["flu", "flu", "cold", "cold", "hiv", "flu", "hiv", "flu", "cold", "flu", "flu", "hiv"],
    }
)
H = {"age": Hierarchy.intervals(range(100), [10, 50]), "sex": Hierarchy.suppression(["F", "M"])}


def test_default_publish_is_aggregate_and_meets_k_for_every_row():
    res = pa.anonymize(TABLE, hierarchies=H, insensitive="id", k=3, method="mdav")
    out = res.collect()
    assert res.report["guarantee"] == "k-anonymity" and res.report["details"]["publish"] == "aggregate"
    assert out.group_by("age", "sex").len()["len"].min() >= 3 and "own_tuple_records" not in res.report


def test_permute_counts_the_records_published_with_their_own_tuple():
    """The report's own-tuple figures against a plain loop over the rows (issue 27)."""
    res = pa.anonymize(
        TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", sensitive="disease", seed=1, publish="permute"
    )
    out = res.collect()
    published = list(zip(out["age"].to_list(), out["sex"].to_list()))
    original = list(zip((str(a) for a in TABLE["age"]), TABLE["sex"].to_list()))
    own = [i for i, (p, o) in enumerate(zip(published, original)) if p == o]
    unique = [i for i in own if published.count(published[i]) == 1]
    assert res.report["own_tuple_records"] == len(own) and res.report["own_tuple_unique"] == len(unique)
    assert len(own) > 0  # this seed leaves some in place, so the figure is exercised


def test_anonymize_permute_reports_probabilistic_guarantee():
    res = pa.anonymize(
        TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", sensitive="disease", seed=1, publish="permute"
    )
    out = res.collect()
    assert res.report["guarantee"] == "probabilistic"
    assert res.report["min_class_size"] >= 3 and res.report["n_rows"] == 12
    assert res.report["details"]["numeric"] == ["age"]
    assert len(res.report["details"]["qid_blocks"]) == 1 and sorted(res.report["details"]["qid_blocks"][0]) == [
        "age",
        "sex",
    ]
    assert out["id"].to_list() == TABLE["id"].to_list() and out["disease"].to_list() == TABLE["disease"].to_list()
    assert sorted(out["age"].to_list()) == sorted(str(a) for a in TABLE["age"])
    again = pa.anonymize(
        TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", sensitive="disease", seed=1, publish="permute"
    ).collect()
    assert_frame_equal(out, again)


def test_anonymize_aggregate_passes_the_classic_check():
    res = pa.anonymize(TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", publish="aggregate")
    out = res.collect()
    assert res.report["guarantee"] == "k-anonymity"
    assert out.group_by("age", "sex").len()["len"].min() >= 3
    assert out.schema["age"] == pl.Float64


def test_ahmad_dey_through_anonymize():
    res = pa.anonymize(
        TABLE, hierarchies=H, insensitive="id", k=4, method="mdav", distance="ahmad_dey", publish="aggregate"
    )
    assert res.collect().group_by("age", "sex").len()["len"].min() >= 4
    assert res.report["details"]["distance"] == "ahmad_dey"


def test_verify_permutation_catches_values_moved_across_clusters():
    labels = np.array([0, 0, 0, 1, 1, 1])
    orig = pl.LazyFrame({"a": ["1", "2", "3", "4", "5", "6"], "s": list("xyzxyz")})
    good = pl.LazyFrame({"a": ["2", "3", "1", "6", "4", "5"], "s": list("xyzxyz")})
    assert verify_permutation(good, orig, labels, [["a"]], 3)["min_class_size"] == 3
    bad = pl.LazyFrame({"a": ["4", "3", "1", "6", "2", "5"], "s": list("xyzxyz")})
    with pytest.raises(NotKAnonymousError, match=r"block \['a'\]: 4 \(cluster, value\) counts differ"):
        verify_permutation(bad, orig, labels, [["a"]], 3)
    touched = good.with_columns(pl.lit("x").alias("s"))
    with pytest.raises(NotKAnonymousError, match="4 rows changed non-quasi-identifier columns"):
        verify_permutation(touched, orig, labels, [["a"]], 3)
    with pytest.raises(NotKAnonymousError, match="a cluster has 3 rows, fewer than k=4"):
        verify_permutation(good, orig, labels, [["a"]], 4)


def test_sink_parquet_verifies_and_writes(tmp_path):
    res = pa.anonymize(
        TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", sensitive="disease", publish="permute"
    )
    rep = res.sink_parquet(tmp_path / "out.parquet")
    assert rep["guarantee"] == "probabilistic" and rep["n_rows"] == 12
    assert json.loads((tmp_path / "out.report.json").read_text())["details"]["publish"] == "permute"
    assert_frame_equal(pl.read_parquet(tmp_path / "out.parquet"), res.collect())


def test_namespace_and_job(tmp_path):
    out = TABLE.anon.k_anonymize(hierarchies=H, insensitive="id", k=3, method="mdav", publish="aggregate")
    assert out.group_by("age", "sex").len()["len"].min() >= 3
    TABLE.write_parquet(tmp_path / "in.parquet")
    job = Job.from_dict(
        {
            "input": "in.parquet",
            "output": "out.parquet",
            "k": 3,
            "method": "mdav",
            "publish": "permute",
            "insensitive": "id",
            "distance": "ahmad_dey",
            "blocks": [["age", "sex"]],
            "sensitive": "disease",
            "qids": {"age": {"hierarchy": {"intervals": [10, 50]}}, "sex": {"hierarchy": "suppress"}},
        },
        tmp_path,
    )
    rep = run_job(job)
    assert rep["details"]["qid_blocks"] == [["age", "sex"]] and rep["details"]["distance"] == "ahmad_dey"
    assert pl.read_parquet(tmp_path / "out.parquet")["id"].to_list() == TABLE["id"].to_list()


def test_cli_runs_an_mdav_job(tmp_path, capsys):
    from polars_anon.cli import main

    TABLE.write_parquet(tmp_path / "in.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 3\nmethod = "mdav"\npublish = '
        '"aggregate"\ninsensitive = ["id"]\n'
        '[qids.age]\nhierarchy = { intervals = [10, 50] }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    assert main(["anonymize", str(tmp_path / "job.toml")]) == 0
    assert pl.read_parquet(tmp_path / "out.parquet").group_by("age", "sex").len()["len"].min() >= 3


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"pubish": "permute"},
            r"method 'mdav' does not take option 'pubish'; did you mean 'publish'\? It takes \['publish', 'distance', "
            r"'block_size', 'numeric', 'blocks'\]",
        ),
        ({"publish": "swap"}, r"option 'publish' must be one of \['aggregate', 'permute'\], got 'swap'"),
        ({"distance": "euclid"}, r"option 'distance' must be one of \['gower', 'ahmad_dey'\], got 'euclid'"),
        ({"block_size": 5}, r"block_size must be an integer >= 2k = 6, got 5"),
        ({"numeric": ["id"]}, r"numeric names \['id'\], which are not qids"),
        ({"numeric": ["sex"]}, r"numeric qid 'sex' has 2 values that are not numbers \(first: \['F', 'M'\]\)"),
        ({"numeric": "age"}, r"option 'numeric' must be a list of qid names, got 'age'"),
        ({"blocks": [["age"]]}, r"blocks must name every qid exactly once"),
        ({"blocks": "age"}, r"option 'blocks' must be a list of non-empty lists of qid names, got 'age'"),
    ],
)
def test_bad_options_are_refused(options, match):
    with pytest.raises(InvalidParameterError, match=match):
        pa.anonymize(TABLE, hierarchies=H, insensitive="id", k=3, method="mdav", **options)


def test_adult_permute_and_aggregate(adult, adult_hierarchies):
    """Adult, 8 qids, k=5, blocked Gower MDAV: permute is probabilistic only, aggregate is classic."""
    res = pa.anonymize(
        adult, hierarchies=adult_hierarchies, k=5, method="mdav", sensitive="salary-class", publish="permute"
    )
    out = res.collect()
    rep = res.report
    assert rep["guarantee"] == "probabilistic" and rep["n_rows"] == 30_162 and rep["details"]["n_blocks"] >= 3
    assert rep["min_class_size"] >= 5 and rep["details"]["max_cluster_size"] <= 9
    assert rep["classic_min_class_size"] < 5  # permuted values do not form classic classes
    assert (
        all(len(b) >= 2 for b in rep["details"]["qid_blocks"])
        and rep["details"]["qid_blocks"][0][0] == "marital-status"
    )
    assert out["salary-class"].equals(adult["salary-class"])
    for q in adult_hierarchies:
        assert out[q].sort().equals(adult[q].sort())  # permutation keeps every column multiset
    agg = pa.anonymize(adult, hierarchies=adult_hierarchies, k=5, method="mdav", publish="aggregate")
    assert agg.collect().group_by(list(adult_hierarchies)).len()["len"].min() >= 5


def test_qids_need_no_hierarchy():
    res = pa.anonymize(
        TABLE, qids=["age", "sex"], hierarchies={}, insensitive="id", k=3, method="mdav", publish="aggregate"
    )
    out = res.collect()
    assert out.group_by("age", "sex").len()["len"].min() >= 3 and res.report["details"]["numeric"] == ["age"]


def test_cli_demo_mdav_publishes_k_anonymous_aggregates_by_default(tmp_path, capsys):
    from polars_anon.cli import main

    assert main(["demo", "--rows", "2000", "--k", "5", "--method", "mdav", "--out", str(tmp_path)]) == 0
    assert "k=5: every published combination" in capsys.readouterr().out
    out = pl.read_parquet(tmp_path / "anonymized.parquet")
    assert out.group_by(["zip", "gender", "race", "birth_year"]).len()["len"].min() >= 5


def test_nulls_published_as_the_root_are_named_as_such() -> None:
    """review32: with numeric=['a'], null='suppress' and a hierarchy, the refusal named '*' as a value of the input
    that is not a number; it is the root the nulls were published as."""
    df = pl.DataFrame({"a": [1.0, 2.0, None, 4.0, 5.0, 6.0]})
    h = {"a": Hierarchy.suppression(["1.0", "2.0", "4.0", "5.0", "6.0"])}
    with pytest.raises(InvalidParameterError, match=r"numeric qid 'a' holds nulls, published as its hierarchy's root"):
        pa.anonymize(df, hierarchies=h, k=2, method="mdav", numeric=["a"], null="suppress")
    out = pa.anonymize(df.fill_null(3.0), qids=["a"], hierarchies={}, k=2, method="mdav", numeric=["a"]).collect()
    assert out.height == 6  # filled as the message says, it publishes


def test_a_root_that_reads_as_a_number_is_no_number() -> None:
    """A hierarchy whose root label reads as a number ('0'): under null='suppress' the nulls stand at it, and MDAV
    averaged them as 0. Now the column is a category (every published value one of the column's labels, as with the
    root '*') unless given in numeric, which is refused naming the root."""
    df = pl.DataFrame({"a": [1.0, 2.0, None, 4.0, 5.0, 6.0]})
    h = {"a": Hierarchy.from_dict({"0": ["1.0", "2.0", "4.0", "5.0", "6.0"]})}
    out = pa.anonymize(df, hierarchies=h, k=2, method="mdav", null="suppress").collect()
    assert set(out["a"].to_list()) <= {"0", "1.0", "2.0", "4.0", "5.0", "6.0"}
    with pytest.raises(InvalidParameterError, match=r"published as its hierarchy's root '0' under null='suppress'"):
        pa.anonymize(df, hierarchies=h, k=2, method="mdav", null="suppress", numeric=["a"])
