"""Mondrian strict and relaxed: hand-computed examples, Adult, options, job file and namespace."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.algorithms.mondrian import axes, bound_sets, bounds_labels, coordinates, partition
from polars_anon.classes import class_sizes
from polars_anon.job import Job
from polars_anon.labels import set_label, set_members
from tests.conftest import ADULT_QIDS

EDU = pa.Hierarchy.from_dict(
    {"*": {"Secondary": ["HS-Dropout", "HS-Grad"], "Further-Studies": ["Bachelors", "Masters", "PhD"]}}
)
# paper 003 Figure 2.6-style table: education (with a hierarchy) and zipcode (numeric, none)
FIG26 = pl.DataFrame(
    {
        "id": list(range(1, 9)),
        "education": ["HS-Dropout", "HS-Dropout", "HS-Grad", "HS-Grad", "Masters", "PhD", "Bachelors", "Bachelors"],
        "zip": [34986, 34917, 34990, 34995, 34986, 34986, 35001, 35010],
    }
)


def test_fig26_strict_hand_computed() -> None:
    """Paper 003 Figure 2.6 / (2.1)-(2.4). Round 1: both widths are 1, education (first qid)
    is cut at its lower median HS-Grad (4 | 4). Round 2: the secondary half is cut on zip
    (width 78/93 > 1/4) at 34986 (2 | 2), the further-studies half on education (width
    2/4 > 24/93) at Bachelors (2 | 2). Classes of 2 cannot be cut for k=2."""
    r = pa.anonymize(
        FIG26, insensitive="id", qids=["education", "zip"], hierarchies={"education": EDU}, k=2, method="mondrian"
    )
    out = r.collect()
    assert out.rows() == [
        (1, "HS-Dropout", "[34917-34986]"),
        (2, "HS-Dropout", "[34917-34986]"),
        (3, "HS-Grad", "[34990-34995]"),
        (4, "HS-Grad", "[34990-34995]"),
        (5, "Further-Studies", "34986"),
        (6, "Further-Studies", "34986"),
        (7, "Bachelors", "[35001-35010]"),
        (8, "Bachelors", "[35001-35010]"),
    ]
    assert (
        r.report["details"]["rounds"] == 2
        and r.report["details"]["n_partitions"] == 4
        and r.report["details"]["mode"] == "strict"
    )


def test_fig26_set_labels() -> None:
    """Paper 003 (2.4): without a hierarchy a class publishes the set of its values."""
    out = pa.anonymize(
        FIG26,
        insensitive="id",
        qids=["education", "zip"],
        hierarchies={"education": EDU},
        k=2,
        method="mondrian",
        publish={"education": "set"},
    ).collect()
    assert out["education"].to_list()[4:6] == ["{Masters,PhD}"] * 2
    assert out["education"].to_list()[:2] == ["HS-Dropout"] * 2


def test_strict_cannot_cut_relaxed_can() -> None:
    """x = 2, 3, 1, 2, 2 with k=2. Strict: lower median 2 puts 4 rows left and 1 right: no
    allowable cut, one class. Relaxed: lhs takes floor(5/2) = 2 rows: the 1 and the first
    2 in row order; rhs the other two 2s and the 3."""
    df = pl.DataFrame({"x": [2, 3, 1, 2, 2]})
    strict = pa.anonymize(df, qids=["x"], hierarchies={}, k=2, method="mondrian", mode="strict")
    assert strict.collect()["x"].to_list() == ["[1-3]"] * 5 and strict.report["details"]["n_partitions"] == 1
    relaxed = pa.anonymize(df, qids=["x"], hierarchies={}, k=2, method="mondrian", mode="relaxed")
    assert relaxed.collect()["x"].to_list() == ["[1-2]", "[2-3]", "[1-2]", "[2-3]", "[2-3]"]
    assert relaxed.report["details"]["n_partitions"] == 2


def test_strict_second_median_cut_when_first_is_not_allowable() -> None:
    """sex = F, M, M, M, M, F, k=2 (as sex on Adult: the modal value holds more than half).
    The lower median is M (record 3 of F F M M M M): x <= M keeps 6 | 0, not allowable;
    x < M keeps 2 | 4, allowable and strict (no value on both sides). The literal cut
    alone of paper 003 Algorithm 3 would leave one class {F,M}."""
    df = pl.DataFrame({"sex": ["F", "M", "M", "M", "M", "F"]})
    r = pa.anonymize(df, qids=["sex"], hierarchies={}, k=2, method="mondrian")
    assert r.collect()["sex"].to_list() == ["F", "M", "M", "M", "M", "F"]
    assert r.report["details"]["n_partitions"] == 2


def test_strict_keeps_the_papers_cut_when_allowable() -> None:
    """x = 1 x5, 2 x2, 3 x4, k=4: lower median 2 (record 6 of 11). The papers' x <= 2
    gives 7 | 4, allowable, so it is taken although x < 2 (5 | 6) would be more balanced.
    The 7 rows (< 2k) are not cut again."""
    df = pl.DataFrame({"x": [1] * 5 + [2] * 2 + [3] * 4})
    out = pa.anonymize(df, qids=["x"], hierarchies={}, k=4, method="mondrian").collect()
    assert out["x"].to_list() == ["[1-2]"] * 7 + ["3"] * 4


def test_strict_second_cut_on_a_numeric_axis() -> None:
    """x = 1 x3, 5 x4, k=3: lower median 5 is the largest value, x <= 5 keeps 7 | 0; x < 5
    keeps 3 | 4."""
    df = pl.DataFrame({"x": [5, 1, 5, 1, 5, 1, 5]})
    out = pa.anonymize(df, qids=["x"], hierarchies={}, k=3, method="mondrian").collect()
    assert out["x"].to_list() == ["5", "1", "5", "1", "5", "1", "5"]


# c (F/M) is cut first (all widths are 1, ties to the first qid); in the M half, a holds
# {x, z} of x < y < z and b holds 1..4 of 1..5.
WIDTH = pl.DataFrame({"c": ["F"] * 4 + ["M"] * 4, "a": ["y"] * 4 + ["x", "z", "x", "z"], "b": [5] * 4 + [1, 2, 3, 4]})


def test_width_of_a_set_counts_its_values() -> None:
    """In the M half, a published as a set has width (2 - 1) / (3 - 1) = 0.5 and b has
    (4 - 1) / (5 - 1) = 0.75: b is cut (at its lower median 2). Published as a range, a has
    the width of its rank span, (2 - 0) / 2 = 1 > 0.75: a is cut (at x)."""
    kw = {"qids": ["c", "a", "b"], "hierarchies": {}, "k": 2, "method": "mondrian"}
    as_set = pa.anonymize(WIDTH, **kw).collect()
    assert as_set.select("a", "b").rows()[4:] == [
        ("{x,z}", "[1-2]"),
        ("{x,z}", "[1-2]"),
        ("{x,z}", "[3-4]"),
        ("{x,z}", "[3-4]"),
    ]
    as_range = pa.anonymize(WIDTH, publish={"a": "range"}, **kw).collect()
    assert as_range.select("a", "b").rows()[4:] == [("x", "[1-3]"), ("z", "[2-4]"), ("x", "[1-3]"), ("z", "[2-4]")]
    assert as_set["c"].to_list() == as_range["c"].to_list() == WIDTH["c"].to_list()


def test_numeric_order_not_alphabetical() -> None:
    """'9' < '10' on a numeric axis; the cut of 8, 9 | 10, 11 publishes numeric ranges."""
    df = pl.DataFrame({"age": [10, 9, 11, 8]})
    out = pa.anonymize(df, qids=["age"], hierarchies={}, k=2, method="mondrian").collect()
    assert out["age"].to_list() == ["[10-11]", "[8-9]", "[10-11]", "[8-9]"]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_date_qid_is_ordered_and_published_as_ranges(engine: str) -> None:
    """A Date qid without hierarchy is an ordered axis, as a number is: sorted 01-15 < 03-01 < 12-31 < 2021-07-04,
    the lower median is 2020-03-01 and x <= it keeps 2 | 2; each class publishes its range (was: sets of dates)."""
    days = [dt.date(2020, 3, 1), dt.date(2020, 1, 15), dt.date(2021, 7, 4), dt.date(2020, 12, 31)]
    out = pa.anonymize(pl.DataFrame({"d": days}), qids=["d"], hierarchies={}, k=2, method="mondrian", engine=engine)
    low, high = "[2020-01-15-2020-03-01]", "[2020-12-31-2021-07-04]"
    assert out.collect()["d"].to_list() == [low, low, high, high]


def test_datetime_qid_is_ordered_by_instant() -> None:
    """Paris at the 2020 fall-back: 02:05+02 (00:05 UTC) < 02:25+02 (00:25) < 02:15+01 (01:15) < 02:35+01 (01:35).
    In time the halves are {02:05, 02:25} | {02:15, 02:35}; the labels' alphabetical order would pair 02:05 with
    02:15."""
    utc = [dt.datetime(2020, 10, 25, 0, 5), dt.datetime(2020, 10, 25, 1, 15)]
    utc += [dt.datetime(2020, 10, 25, 0, 25), dt.datetime(2020, 10, 25, 1, 35)]
    t = pl.Series("t", utc).dt.replace_time_zone("UTC").dt.convert_time_zone("Europe/Paris")
    out = pa.anonymize(pl.DataFrame({"t": t}), qids=["t"], hierarchies={}, k=2, method="mondrian").collect()
    first = "[2020-10-25 02:05:00.000000+02:00-2020-10-25 02:25:00.000000+02:00]"
    second = "[2020-10-25 02:15:00.000000+01:00-2020-10-25 02:35:00.000000+01:00]"
    assert out["t"].to_list() == [first, second, first, second]


def test_explicit_and_random_order() -> None:
    df = pl.DataFrame({"c": ["a", "b", "c", "d"]})
    explicit = pa.anonymize(df, qids=["c"], hierarchies={}, k=2, method="mondrian", order={"c": ["a", "c", "b", "d"]})
    assert explicit.collect()["c"].to_list() == ["{a,c}", "{b,d}", "{a,c}", "{b,d}"]
    runs = [
        pa.anonymize(df, qids=["c"], hierarchies={}, k=2, method="mondrian", order="random", seed=s).collect()
        for s in (1, 1, 2, 3, 4, 5)
    ]
    assert runs[0].equals(runs[1])
    assert len({tuple(r["c"]) for r in runs}) > 1  # some seed orders the values differently
    for r in runs:
        assert r.group_by("c").len()["len"].min() >= 2


def test_hierarchy_with_random_order_publishes_true_lca() -> None:
    """A random order breaks subtrees apart; the published value is still the LCA of the class."""
    h = pa.Hierarchy.from_dict({"*": {"A": ["a", "b"], "B": ["c", "d"]}})
    df = pl.DataFrame({"c": ["a", "b", "c", "d"] * 2})
    for seed in range(6):
        out = pa.anonymize(df, hierarchies={"c": h}, k=4, method="mondrian", order="random", seed=seed).collect()
        for orig, pub in zip(df["c"], out["c"]):
            assert pub in ("*", "A" if orig in "ab" else "B")


def test_partition_segments_cover_tuples() -> None:
    agg = pl.DataFrame({"x": ["1", "2", "3"], "size": [3, 4, 3]}, schema_overrides={"size": pl.UInt32})
    seg, rounds = partition(coordinates(agg, ["x"], axes({"x": ["1", "2", "3"]}, {})), k=3, mode="relaxed")
    # n=10: lhs takes 5 = three 1s + two 2s; rhs the other two 2s + three 3s
    assert seg.select("__anon_t", "__anon_off", "__anon_size", "__anon_pid").rows() == [
        (0, 0, 3, 0),
        (1, 0, 2, 0),
        (1, 2, 2, 1),
        (2, 0, 3, 1),
    ]
    assert rounds == 1


def test_adult_strict_and_relaxed(adult: pl.DataFrame, adult_hierarchies: dict[str, pa.Hierarchy]) -> None:
    """Both modes are k-anonymous, keep every row in order, publish ancestors; relaxed makes
    more (smaller) classes than strict, as in paper 002 Figure 4 (at k=25: 1024 vs 865; at
    k=5 and 10 strict, with its second median cut, makes slightly more: 2102 vs 2046 at k=10)."""
    parts = {}
    for mode in ("strict", "relaxed"):
        r = pa.anonymize(adult, hierarchies=adult_hierarchies, k=25, method="mondrian", mode=mode)
        out = r.collect()
        assert out.height == adult.height and out["salary-class"].equals(adult["salary-class"])
        assert out.group_by(ADULT_QIDS).len()["len"].min() >= 25
        for q in ("age", "education"):
            h = adult_hierarchies[q]
            pairs = set(zip(h.paths["node"].to_list(), h.paths["ancestor"].to_list()))
            ids = {lab: i for i, lab in enumerate(h.labels)}
            got = pl.DataFrame({"a": adult[q], "b": out[q]}).unique().rows()
            assert all((ids[a], ids[b]) in pairs for a, b in got)
        parts[mode] = r.report["details"]["n_partitions"]
    assert parts["relaxed"] > parts["strict"]


def test_adult_partition_sizes(adult: pl.DataFrame, adult_hierarchies: dict[str, pa.Hierarchy]) -> None:
    """Every partition has at least k rows and all rows are covered; in relaxed mode a
    partition of 2k rows or more could still be halved, so it must hold one tuple only."""
    agg = class_sizes(adult.lazy(), ADULT_QIDS).collect()
    ax = axes({q: agg[q].unique().to_list() for q in ADULT_QIDS}, adult_hierarchies)
    for mode in ("strict", "relaxed"):
        seg, _ = partition(coordinates(agg, ADULT_QIDS, ax), 25, mode)
        per = seg.group_by("__anon_pid").agg(pl.col("__anon_size").sum(), pl.col("__anon_t").n_unique().alias("tuples"))
        assert per["__anon_size"].min() >= 25 and per["__anon_size"].sum() == adult.height
        if mode == "relaxed":
            assert per.filter(pl.col("__anon_size") >= 50)["tuples"].max() in (None, 1)


def test_job_file_and_namespace(tmp_path: Path) -> None:
    df = FIG26.with_columns(pl.col("zip").cast(pl.String))
    df.write_parquet(tmp_path / "in.parquet")
    (tmp_path / "edu.csv").write_text(
        "\n".join(
            f"{leaf};{p};*"
            for leaf, p in [
                ("HS-Dropout", "Secondary"),
                ("HS-Grad", "Secondary"),
                ("Bachelors", "Further-Studies"),
                ("Masters", "Further-Studies"),
                ("PhD", "Further-Studies"),
            ]
        )
        + "\n"
    )
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "mondrian"\ninsensitive = '
        '"id"\nmode = "relaxed"\n'
        '[qids.education]\nhierarchy = "edu.csv"\n[qids.zip]\nhierarchy = { mask = 5 }\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert report["method"] == "mondrian" and report["details"]["mode"] == "relaxed" and report["min_class_size"] >= 2
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert out["id"].to_list() == list(range(1, 9))
    lazy = FIG26.lazy().anon.k_anonymize(
        insensitive="id", hierarchies={"education": EDU}, qids=["education", "zip"], k=2, method="mondrian"
    )
    assert lazy.collect()["zip"].to_list()[:2] == ["[34917-34986]"] * 2
    eager = FIG26.anon.k_anonymize(
        insensitive="id", hierarchies={"education": EDU}, qids=["education", "zip"], k=4, method="mondrian"
    )
    assert eager.group_by("education", "zip").len()["len"].min() >= 4


def test_gather_and_join_publishing_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dense-gather publishing (small key spaces) and the tuple-map join give the same rows."""
    from polars_anon import publish

    df = FIG26.with_columns(pl.Series("region", ["n", "s", "n", "s", "n", "n", "s", "s"]))
    kwargs = {
        "qids": ["education", "zip", "region"],
        "hierarchies": {"education": EDU},
        "k": 2,
        "method": "mondrian",
        "insensitive": "id",
    }
    gathered = pa.anonymize(df, **kwargs).collect()
    monkeypatch.setattr(publish, "DENSE_KEYS", 0)
    joined = pa.anonymize(df, **kwargs).collect()
    assert gathered.equals(joined) and gathered.group_by("education", "zip", "region").len()["len"].min() >= 2


def test_null_suppress_publishes_root() -> None:
    """null='suppress' maps nulls to the root before the rounds; the root sorts after the leaves.

    a and b hold 2 rows each, so they stay apart; the null row (published as *) and c form
    the third class. (Before the null-suppress fix every tuple counted 1 row, and a and b
    were merged into A.)"""
    df = pl.DataFrame({"g": ["a", "b", None, "a", "b", "c"]})
    h = {"g": pa.Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})}
    out = pa.anonymize(df, hierarchies=h, k=2, method="mondrian", null="suppress").collect()
    assert out["g"].to_list() == ["a", "b", "*", "a", "b", "*"]


@pytest.mark.parametrize(
    ("leaves", "order"),
    [
        (["a", "b", "c"], "hierarchy"),
        (["a", "b", "c"], "alphabetical"),
        (["a", "b", "c"], ["b", "a", "c"]),
        (["1", "2", "3"], "numeric"),
    ],
)
def test_null_suppress_ranks_the_root_last_on_every_order(leaves: list[str], order: object) -> None:
    """The nulls, published at the root, rank after the column's values whatever the order, and an explicit list
    need not name the root (a value the column never holds). By hand, for every order here (axis x, y, z, *; x, y
    holding 2 rows, z and the null 1): the lower median (record 3) is y, {x, y} | {z, *} leaves 4 | 2 rows, then
    {x} | {y} (2 | 2); {z, *} publishes its lowest common ancestor, the root. (Before: 'alphabetical' ranked the
    root first, *, a, b, c, and published everything as *; 'numeric' and the list were refused as missing '*'.)"""
    x, y, z = leaves if order != ["b", "a", "c"] else ["b", "a", "c"]
    df = pl.DataFrame({"g": [x, y, None, x, y, z]})
    h = {"g": pa.Hierarchy.from_dict({"*": {"A": leaves[:2], leaves[2]: None}})}
    out = pa.anonymize(df, hierarchies=h, k=2, method="mondrian", null="suppress", order={"g": order}).collect()
    assert out["g"].to_list() == [x, y, "*", x, y, "*"]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_null_suppress_range_of_a_class_holding_the_root_is_the_root(engine: str) -> None:
    """publish='range': a class holding nulls published at the root publishes the root, not a range ending at it
    (was '[5-*]', which says nothing true of a null row). By hand: axis 1 < ... < 6 < * (2 rows), 8 rows, k=3;
    the lower median (record 4) is 4 and x <= 4 keeps 4 | 4, which no cut splits further into 3 | 3."""
    df = pl.DataFrame({"age": [1, 2, 3, 4, None, None, 5, 6]})
    h = {"age": pa.Hierarchy.suppression([str(v) for v in range(1, 7)])}
    out = pa.anonymize(df, hierarchies=h, k=3, method="mondrian", null="suppress", publish="range", engine=engine)
    assert out.collect()["age"].to_list() == ["[1-4]"] * 4 + ["*"] * 4


def test_range_across_a_root_an_explicit_order_places_inside() -> None:
    """An explicit order 1, 2, *, 3, 4 may rank the root between two values: a class {2, 3} spans it without
    holding it and publishes [2-3], a class holding it publishes the root whatever its bounds (its members are
    kept for that: bound_sets)."""
    h = pa.Hierarchy.suppression(["1", "2", "3", "4"])
    ax = axes({"a": ["1", "2", "3", "4", "*"]}, {"a": h}, {"a": ["1", "2", "*", "3", "4"]})
    assert ax[0].labels == ["1", "2", "*", "3", "4"] and bound_sets(ax, ["range"]) == [0]
    members = [[1, 3], [1, 2, 3], [2], [0, 1], [4]]
    bounds = pl.DataFrame(
        {
            "__anon_pid": range(5),
            "__anon_lo0": [m[0] for m in members],
            "__anon_hi0": [m[-1] for m in members],
            "__anon_set0": members,
        }
    )
    got = bounds_labels(bounds, ["a"], ax, {"a": h}, ["range"])["a"].to_list()
    assert got == ["[2-3]", "*", "*", "[1-2]", "4"]


def test_random_order_ranks_the_same_values_as_the_hierarchy_order() -> None:
    """'random' permutes the hierarchy's leaves and ranks the root the nulls were published at last, as
    'hierarchy' does (it used to leave the root out: a raw Polars error). Every seed publishes a k-anonymous table
    of ancestors, each null at the root."""
    h = pa.Hierarchy.from_dict({"*": {"A": ["a", "b"], "B": ["c", "d"]}})
    by_hierarchy = axes({"g": ["a", "*", "c"]}, {"g": h}, "hierarchy")[0].labels
    assert by_hierarchy == ["a", "b", "c", "d", "*"]
    df = pl.DataFrame({"g": ["a", "b", None, "c", "d", None, "a", "c"]})
    up = {"a": "A", "b": "A", "c": "B", "d": "B"}
    for seed in range(8):
        labels = axes({"g": ["a", "*", "c"]}, {"g": h}, "random", seed)[0].labels
        assert sorted(labels) == sorted(by_hierarchy) and labels[-1] == "*"
        out = pa.anonymize(df, hierarchies={"g": h}, k=2, method="mondrian", null="suppress", order="random", seed=seed)
        got = out.collect()["g"].to_list()
        assert all(p in (v, up.get(v), "*") if v is not None else p == "*" for v, p in zip(df["g"], got))
        assert min(got.count(p) for p in got) >= 2


def test_numeric_order_refusal_names_only_the_column_values() -> None:
    """A numeric order over words names the words, not the root the nulls were published at."""
    df = pl.DataFrame({"g": ["a", None, "b", "a"]})
    h = {"g": pa.Hierarchy.suppression(["a", "b"])}
    with pytest.raises(pa.InvalidParameterError, match=r"'g': 2 values are not numbers \(first: \['a', 'b'\]\)"):
        pa.anonymize(df, hierarchies=h, k=2, method="mondrian", null="suppress", order="numeric").collect()


def test_job_file_qid_without_hierarchy(tmp_path: Path) -> None:
    """A [qids.<name>] table without a 'hierarchy' key declares a qid without hierarchy:
    mondrian publishes it as a set (categorical) or a range (numeric)."""
    FIG26.write_parquet(tmp_path / "in.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "mondrian"\ninsensitive = '
        '"id"\n[qids.education]\n[qids.zip]\n'
    )
    job = Job.load(tmp_path / "job.toml")
    assert job.qids == {"education": None, "zip": None}
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    out = pl.read_parquet(tmp_path / "out.parquet")
    expected = pa.anonymize(
        FIG26, insensitive="id", qids=["education", "zip"], hierarchies={}, k=2, method="mondrian"
    ).collect()
    assert out.equals(expected)
    assert out["education"].to_list()[4:6] == ["{Masters,PhD}"] * 2  # a set: no hierarchy to climb


def test_job_file_mixes_qids_with_and_without_hierarchy(tmp_path: Path) -> None:
    df = FIG26.with_columns(pl.col("zip").cast(pl.String))
    df.write_parquet(tmp_path / "in.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "mondrian"\ninsensitive = '
        '"id"\n[qids.education]\n[qids.zip]\nhierarchy = { mask = 5 }\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    out = pl.read_parquet(tmp_path / "out.parquet")
    zip_h = pa.Hierarchy.masking(sorted(df["zip"].unique()), 5)
    expected = pa.anonymize(
        df, insensitive="id", qids=["education", "zip"], hierarchies={"zip": zip_h}, k=2, method="mondrian"
    ).collect()
    assert out.equals(expected) and out.group_by("education", "zip").len()["len"].min() >= 2
    assert set(out["zip"]) - set(df["zip"]) <= set(zip_h.labels)  # ancestors from the mask hierarchy


def test_set_labels_escape_their_separator_on_every_engine_and_read_back() -> None:
    """A class holding 'a,b' and 'a' published '{a,a,b}', which also names a class of 'a', 'a' and 'b' (review7 F8):
    members escape '\\', ',', '{' and '}' with a backslash, and set_members reads each label back to the values."""
    vals = ["a,b"] * 4 + ["a"] * 2 + ["b"] * 2 + ["c"] * 4
    df = pl.DataFrame({"rid": range(len(vals)), "s": vals, "age": [30, 31, 32, 33, 50, 51, 52, 53, 70, 71, 72, 73]})
    kw: dict[str, Any] = {"hierarchies": {}, "qids": ["s", "age"], "k": 2, "method": "mondrian", "insensitive": ["rid"]}
    want = ["a,b"] * 3 + ["{a,a\\,b}"] * 3 + ["{b,c}"] * 3 + ["c"] * 3  # by hand: cuts at 30-32 | 33-51 | ...
    cases: list[dict[str, Any]] = [{"engine": "polars"}, {"engine": "duckdb"}, {"engine": "duckdb", "driver_tuples": 2}]
    for extra in cases:  # Polars; DuckDB on the driver; DuckDB's SQL rounds
        out = pa.anonymize(df, **kw, **extra).collect().sort("rid")
        assert out["s"].to_list() == want, extra
    classes = pl.DataFrame({"s": want, "v": vals}).group_by("s").agg(pl.col("v").unique().sort())
    assert all(set_members(s) == v for s, v in classes.iter_rows())  # each label lists its class's values
    assert set_members(set_label(["{x}"])) == ["{x}"] and set_label(["x}"]) == "x}"  # a lone '{...' is a set
