"""Passes over the input: the Polars road reads it no more often than the DuckDB road (issue 31, item 4).

The reads are counted by benchmarks/passes_bench.py's :class:`Reads` (every query that scans the input
file with at least one column), on a small register: what is counted is the number of queries, which
does not depend on the size.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tests.benchmarks import script

pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def register(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return script("passes_bench").write_input(tmp_path_factory.mktemp("passes") / "register.parquet", 3_000)


def _reads(register: Path, tmp_path: Path, engine: str, variant: str) -> int:
    return script("passes_bench").count_reads(register, tmp_path / f"{engine}-{variant}", engine, variant).reads


@pytest.mark.parametrize("variant", ["plain", "l-diversity"])
def test_polars_reads_no_more_than_duckdb(register: Path, tmp_path: Path, variant: str) -> None:
    polars, duckdb = _reads(register, tmp_path, "polars", variant), _reads(register, tmp_path, "duckdb", variant)
    assert 1 <= polars <= duckdb


def test_counts_by_hand(register: Path, tmp_path: Path) -> None:
    """Plain: the tuple pass (hierarchy values, aggregates and the distinct count of ``party``, from the Parquet
    dictionaries), the write; proportional encoding: none more (it was one: the published rows read again from the
    input; the encoding now reads the table as written and verified, not the input)."""
    assert _reads(register, tmp_path, "polars", "plain") == 2
    assert _reads(register, tmp_path, "polars", "proportional") == 2


def test_the_counter_sees_every_read(tmp_path: Path) -> None:
    """:class:`Reads` on queries whose reads are known: two group-bys apart, a row count from the metadata, a
    pyarrow read of the input (and one of another file, not counted)."""
    path = tmp_path / "t.parquet"
    pl.DataFrame({"a": [1, 2, 2], "b": ["x", "y", "y"]}).write_parquet(path)
    other = tmp_path / "other.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(other)
    reads = script("passes_bench").Reads(path)
    lf = pl.scan_parquet(path)
    with reads.installed():
        lf.group_by("a").len().collect()
        pl.collect_all([lf.select("b"), lf.select("a")], optimizations=pl.QueryOptFlags(comm_subplan_elim=False))
        lf.select(pl.len()).collect()
        pq.ParquetFile(path).read_row_groups([0])  # the tuple pass from the Parquet dictionaries opens it once
        pq.ParquetFile(other).read()  # another file: not the input
    assert (reads.reads, reads.metadata) == (4, 1)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["b", "a", "ab", None]), st.integers(0, 3), st.sampled_from([None, 2.5, -1.0])),
        max_size=40,
    )
)
def test_the_tuple_pass_merges_and_sorts_like_a_group_by(rows: list[tuple[str | None, int, float | None]]) -> None:
    """Tuple counts in the columns' own types, cast to String as the road casts the qids, merged and sorted:
    the String group-by of the rows, sorted (brute force; ``y`` Float64 is a type whose cast may merge)."""
    from polars_anon._passes import as_string_codes, as_string_counts, tuple_counts

    lf = pl.LazyFrame(rows, schema={"q": pl.String, "r": pl.Int64, "y": pl.Float64}, orient="row")
    for keys, by in ((["q", "r"], []), (["q", "y"], ["r"]), (["r"], ["q"])):
        got = as_string_counts(tuple_counts(lf, keys, by)[0], keys, by)
        cast = lf.with_columns(pl.col(k).cast(pl.String) for k in keys)
        want = cast.group_by([*keys, *by]).agg(pl.len().cast(pl.Int64).alias("count"))
        assert_frame_equal(got, want.sort([*keys, *by], nulls_last=True).collect())
        if not by:  # the codes decode to the frame's labels, row for row (its sorted distinct labels, null last)
            frame, codes = as_string_codes(tuple_counts(lf, keys)[0], keys)
            assert_frame_equal(frame, got)
            assert codes is not None
            for k in keys:
                labels = codes.labels[k]
                assert labels.to_list() == sorted(frame[k].drop_nulls().unique().to_list())
                decoded = pl.concat([labels, pl.Series([None], dtype=pl.String)]).gather(codes.codes[k])
                assert decoded.to_list() == frame[k].to_list(), k


def test_the_tuple_pass_is_handed_to_the_road_not_remembered() -> None:
    """A job's tuple pass reaches the road as an argument (``counts``): used for that LazyFrame and those columns
    only, and no module keeps one between calls."""
    from polars_anon import _passes
    from polars_anon._passes import TupleCounts, tuple_counts

    lf = pl.LazyFrame({"q": ["a", "b", "a"]})
    held = pl.DataFrame({"q": ["held"], "count": [9]})
    made = TupleCounts(lf, ("q",), (), (held,))
    assert tuple_counts(lf, ["q"], made=made)[0] is held  # handed over: not read
    assert tuple_counts(lf, ["q"], made=made)[0] is held  # as often as asked: nothing is consumed
    other = pl.LazyFrame({"q": ["a", "b", "a"]})  # the same rows, another input: read
    assert sorted(tuple_counts(other, ["q"], made=made)[0].rows()) == [("a", 2), ("b", 1)]
    assert sorted(tuple_counts(lf, ["q"])[0].rows()) == [("a", 2), ("b", 1)]  # none handed: read
    state = [n for n, v in vars(_passes).items() if isinstance(v, (list, dict, set)) and not n.startswith("__")]
    assert state == []


def test_the_codes_labels_check_the_values_as_the_column_does() -> None:
    """check_values with the codes' labels (the road's, no distinct values looked for again) refuses what the
    column's own distinct values refuse, with the same message; and accepts what they accept."""
    from polars_anon import Hierarchy
    from polars_anon._passes import as_string_codes
    from polars_anon._validate import check_values

    h = {"q": Hierarchy.suppression(["a", "b"])}
    for values in (["c", "a", "x", "c", "b"], ["b", "a"]):
        raw = pl.DataFrame({"q": values, "count": [1] * len(values)})
        frame, codes = as_string_codes(raw, ["q"])
        assert codes is not None
        tuples = frame.rename({"count": "size"})
        messages = []
        for labels in (None, codes.labels):
            try:
                check_values(tuples, h, labels=labels)
                messages.append(None)
            except Exception as error:  # noqa: BLE001 (the two refusals compared)
                messages.append(str(error))
        assert messages[0] == messages[1], messages
    assert messages == [None, None]


def test_the_road_keeps_the_codes_for_a_method_that_reads_them() -> None:
    """The aggregates' codes reach the method only when it declares ``codes=True`` (fulldomain), decoding to the
    leaves ``Hierarchy.ids_of`` reads from the String aggregates; nulls merged at the roots drop them."""
    from polars_anon import Hierarchy
    from polars_anon.engines.polars import POLARS
    from polars_anon.pipeline.road import aggregate
    from polars_anon.request import check_request

    h = {"g": Hierarchy.suppression(["F", "M", "X"])}
    lf = pl.LazyFrame({"g": ["M", "F", "M", "X"]})
    for method, null, kept in (("fulldomain", "error", True), ("greedy", "error", False)):
        data = aggregate(POLARS, lf, check_request(lf.collect_schema(), hierarchies=h, k=1, method=method, null=null))
        assert (data.codes is not None) == kept, method
    assert data.codes is None
    data = aggregate(POLARS, lf, check_request(lf.collect_schema(), hierarchies=h, k=1))
    assert data.codes is not None
    assert data.codes.ids_of("g", h["g"]).tolist() == h["g"].ids_of(data.aggregates["g"]).tolist()
    nulls = pl.LazyFrame({"g": ["M", None, "M", "X"]})
    request = check_request(nulls.collect_schema(), hierarchies=h, k=1, null="suppress")
    assert aggregate(POLARS, nulls, request).codes is None


def test_codes_of_other_aggregates_are_refused_not_used() -> None:
    """A Task whose codes were made with other aggregates (e.g. a later filter of the frame) fails loudly in
    ``leaf_ids`` instead of giving wrong node ids; with matching codes it gives the column's own ids."""
    import dataclasses

    from polars_anon import Hierarchy
    from polars_anon._passes import as_string_codes
    from polars_anon.algorithms import Task

    h = {"q": Hierarchy.suppression(["a", "b"])}
    frame, codes = as_string_codes(pl.DataFrame({"q": ["b", "a", "b"], "count": [1, 2, 3]}), ["q"])
    task = Task(frame.rename({"count": "size"}), ["q"], h, 2, codes=codes)
    assert task.leaf_ids("q").tolist() == h["q"].ids_of(task.aggregates["q"]).tolist() == [1, 2, 2]  # a, b, b
    shorter = dataclasses.replace(task, aggregates=task.aggregates.head(1))
    with pytest.raises(RuntimeError, match="codes of 3 rows for 1 aggregate rows"):
        shorter.leaf_ids("q")
    reordered = dataclasses.replace(task, aggregates=task.aggregates.reverse())  # b, b, a: same rows, other order
    with pytest.raises(RuntimeError, match="codes that do not decode to the aggregates' column"):
        reordered.leaf_ids("q")


def test_codes_misaligned_between_their_ends_are_refused() -> None:
    """mend57: the codes were checked against the aggregates' first and last labels only: two rows swapped between
    them passed, and each got the other's node ids (a method then published a tuple under a node that is not its
    ancestor). Every row is compared now, by the hashes of the few labels (fails before: no error, ids swapped)."""
    import dataclasses

    from polars_anon import Hierarchy
    from polars_anon._passes import as_string_codes
    from polars_anon.algorithms import Task

    h = {"q": Hierarchy.suppression(["a", "b", "c", "d"])}
    frame, codes = as_string_codes(pl.DataFrame({"q": ["a", "b", "c", "d"], "count": [1, 2, 3, 4]}), ["q"])
    task = Task(frame.rename({"count": "size"}), ["q"], h, 2, codes=codes)
    assert task.leaf_ids("q").tolist() == h["q"].ids_of(task.aggregates["q"]).tolist()
    swapped = task.aggregates[[0, 2, 1, 3]]  # a, c, b, d: both ends kept
    with pytest.raises(RuntimeError, match="codes that do not decode to the aggregates' column"):
        dataclasses.replace(task, aggregates=swapped).leaf_ids("q")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["b", "a", None]),
            st.sampled_from(["y", "x"]),
            st.sampled_from(["p", "q", None]),
            st.integers(0, 79),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_the_class_aggregates_with_counted_attributes_match_a_loop_over_the_rows(
    rows: list[tuple[str | None, str, str | None, int]],
) -> None:
    """The class aggregates of a request whose models count two attributes (``s``: few values and a null, counted as
    a column per value; ``t``: more than WIDE values, counted apart): a row per tuple, sorted with nulls last, its
    size and the count of each value of ``s``, as a Counter over the rows gives them."""
    from collections import Counter

    import polars_anon as pa
    from polars_anon.engines.polars import POLARS
    from polars_anon.pipeline.road import aggregate
    from polars_anon.privacy.counts import WIDE
    from polars_anon.request import check_request

    schema = {"q": pl.String, "r": pl.String, "s": pl.String, "t": pl.Int64}
    frame = pl.DataFrame(rows, schema=schema, orient="row").with_columns(pl.col("t").cast(pl.String))
    frame = pl.concat([frame, pl.DataFrame({"q": "a", "r": "x", "s": "p", "t": [str(i) for i in range(WIDE + 1)]})])
    h = {"q": pa.Hierarchy.suppression(["a", "b"]), "r": pa.Hierarchy.suppression(["x", "y"])}
    request = check_request(
        frame.schema,
        hierarchies=h,
        k=1,
        null="suppress",
        privacy=[pa.TCloseness("s", t=1.0), pa.TCloseness("t", t=1.0)],
    )
    table = aggregate(POLARS, frame.lazy(), request).table
    root = {"q": "*", "r": "*"}  # null="suppress": a null qid is published as its root, counted there
    tuples = Counter((r["q"] if r["q"] is not None else root["q"], r["r"]) for r in frame.iter_rows(named=True))
    values = Counter(
        ((r["q"] if r["q"] is not None else root["q"], r["r"]), r["s"]) for r in frame.iter_rows(named=True)
    )
    labels = sorted({s for s in frame["s"].to_list() if s is not None}) + ([None] if frame["s"].null_count() else [])
    expected = [
        (*t, tuples[t], *(values[(t, v)] for v in labels))
        for t in sorted(tuples, key=lambda t: tuple((v is None, v) for v in t))
    ]
    columns = ["q", "r", "size", *(f"__anon_n_s_{i}" for i in range(len(labels)))]
    assert table.select(columns).rows() == expected
    assert [c for c in table.columns if c.startswith("__anon_n_t_")] == []  # t: counted apart, not as columns


def test_the_codes_know_the_columns_they_were_decoded_to_without_reading_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """mend57: checking every row costs a hash per aggregate row and qid; the aggregates the road hands a method are
    the columns the codes were decoded to (the same memory): known at once, no row hashed (PyArrow loaded, as a job
    over Parquet has it); another column of the same rows is compared row by row."""
    import pyarrow  # noqa: F401  (the road over Parquet has loaded it)

    from polars_anon._passes import as_string_codes

    frame, codes = as_string_codes(pl.DataFrame({"q": ["b", "a", "c", "a"], "count": [1, 2, 3, 4]}), ["q"])
    assert codes is not None
    aggregates = frame.rename({"count": "size"}).select("q", "size")  # as the road selects them
    hashed: list[int] = []
    real = pl.Series.hash
    monkeypatch.setattr(pl.Series, "hash", lambda self, *a, **k: hashed.append(len(self)) or real(self, *a, **k))
    assert codes.decode_to("q", aggregates["q"]) and hashed == []
    assert codes.decode_to("q", pl.Series("q", aggregates["q"].to_list())) and hashed


def test_a_column_of_the_codes_with_rows_nulled_is_compared_row_by_row() -> None:
    """review36: the codes knew a column as their own by where its string views are held; Polars keeps the views when
    it nulls some rows, so a column with a row nulled passed as the codes' own and that row got the label's node id.
    The validity mask's address counts too (fails before: no error, ids [1, 2, 3])."""
    import dataclasses

    import pyarrow  # noqa: F401  (the shortcut is taken where PyArrow is loaded)

    from polars_anon import Hierarchy
    from polars_anon._passes import as_string_codes
    from polars_anon.algorithms import Task

    h = {"q": Hierarchy.suppression(["a", "b", "c"])}
    frame, codes = as_string_codes(pl.DataFrame({"q": ["a", "b", "c"], "count": [1, 2, 3]}), ["q"])
    assert codes is not None
    nulled = frame.select(pl.when(pl.col("count") != 2).then(pl.col("q")).alias("q"), pl.col("count").alias("size"))
    task = Task(frame.rename({"count": "size"}), ["q"], h, 1, codes=codes)
    with pytest.raises(RuntimeError, match="codes that do not decode to the aggregates' column 'q'"):
        dataclasses.replace(task, aggregates=nulled).leaf_ids("q")


def test_a_categorical_column_of_the_codes_labels_is_theirs() -> None:
    """review36: a Categorical column holding the codes' labels row for row was refused (its hashes are not a
    String's) where the first-and-last check passed it: compared by its labels (fails before: RuntimeError)."""
    import dataclasses

    from polars_anon import Hierarchy
    from polars_anon._passes import as_string_codes
    from polars_anon.algorithms import Task

    h = {"q": Hierarchy.suppression(["a", "b"])}
    frame, codes = as_string_codes(pl.DataFrame({"q": ["b", "a", "b"], "count": [1, 2, 3]}), ["q"])
    task = Task(frame.rename({"count": "size"}), ["q"], h, 1, codes=codes)
    categorical = task.aggregates.with_columns(pl.col("q").cast(pl.Categorical))
    assert dataclasses.replace(task, aggregates=categorical).leaf_ids("q").tolist() == [1, 2, 2]
