"""The tuple pass from Parquet dictionaries (:mod:`polars_anon._parquet_counts`): the Polars road's group-by pass
and sort, row for row and code for code, where it applies; None (the group-by runs) everywhere else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from polars_anon import _parquet_counts
from polars_anon._parquet_counts import parquet_counts
from polars_anon._passes import as_string_codes, tuple_counts

TYPES = {"s": pl.String, "i": pl.Int64, "u": pl.UInt8, "t": pl.String}
STRINGS = st.sampled_from(["b", "a", "ab", "", "é", "B", "10", "9", None])
BIG = st.sampled_from([None, 0, -1, 9, 10, 2**53 + 1, 2**53, -(2**62), 2**62 + 7])


def _write(tmp: Path, rows: list[tuple], parts: int, group: int, dictionary: bool) -> list[Path]:
    """The rows in `parts` files (row groups of `group` rows; String columns dictionary-encoded or plain)."""
    frame = pl.DataFrame(rows, schema=TYPES, orient="row")
    files, share = [], max(1, -(-frame.height // parts))
    for p in range(parts):
        path = tmp / f"part-{p}.parquet"
        pq.write_table(frame.slice(p * share, share).to_arrow(), path, row_group_size=group, use_dictionary=dictionary)
        files.append(path)
    return files


def sorted_tuple_codes(lf: pl.LazyFrame, files: list[Path], qids: list[str]) -> tuple[pl.DataFrame, object] | None:
    """The pass's sorted tuple counts and codes, or None where it does not apply."""
    made = parquet_counts(lf, files, qids)
    return None if made is None else made.sorted


def _reference(lf: pl.LazyFrame, qids: list[str]) -> tuple[pl.DataFrame, object]:
    return as_string_codes(tuple_counts(lf, qids)[0], qids)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(STRINGS, BIG, st.sampled_from([None, 0, 3, 255]), STRINGS), max_size=60),
    parts=st.integers(1, 3),
    group=st.integers(1, 7),
    dictionary=st.booleans(),
    batch=st.sampled_from([1, 5, 1 << 19]),
    qids=st.sampled_from([["s", "i"], ["i", "s", "u"], ["u"], ["t", "s"], ["i"]]),
    wide=st.booleans(),
)
def test_sorted_like_the_group_by(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple],
    parts: int,
    group: int,
    dictionary: bool,
    batch: int,
    qids: list[str],
    wide: bool,
) -> None:
    """Against the group-by and sort (itself checked against a brute-force group-by in test_passes.py) and a brute
    force here: the rows' String labels counted with a dict and sorted (null last, bytes order); ints beyond 2**53,
    empty strings, nulls, several files, row groups and batches; the keys packed as Int32 or (`wide`) Int64."""
    files = _write(tmp_path_factory.mktemp("pq"), rows, parts, group, dictionary)
    lf = pl.scan_parquet(files, glob=False)
    saved = _parquet_counts.BATCH_ROWS, _parquet_counts.NARROW_KEYS
    _parquet_counts.BATCH_ROWS, _parquet_counts.NARROW_KEYS = batch, 1 if wide else saved[1]
    try:
        got = sorted_tuple_codes(lf, files, qids)
    finally:
        _parquet_counts.BATCH_ROWS, _parquet_counts.NARROW_KEYS = saved
    assert got is not None
    frame, codes = got
    want_frame, want_codes = _reference(lf, qids)
    assert_frame_equal(frame, want_frame)
    assert {c.n_chunks() for c in frame.get_columns()} == {1}  # in chunks, the road's first select copied them all
    for q in qids:
        assert_series_equal(codes.labels[q], want_codes.labels[q])  # type: ignore[attr-defined]
        assert codes.codes[q].dtype == want_codes.codes[q].dtype  # type: ignore[attr-defined]
        assert np.array_equal(codes.codes[q], want_codes.codes[q])  # type: ignore[attr-defined]
    counted: dict[tuple, int] = {}
    for row in rows:
        key = tuple(None if row[list(TYPES).index(q)] is None else str(row[list(TYPES).index(q)]) for q in qids)
        counted[key] = counted.get(key, 0) + 1
    order = sorted(counted, key=lambda k: [(v is None, (v or "").encode()) for v in k])
    assert frame.rows() == [(*k, counted[k]) for k in order]


def test_values_are_the_columns_own(tmp_path: Path) -> None:
    """The job's hierarchy values: each qid's distinct values in its own type, nulls left out."""
    files = _write(tmp_path, [("b", 7, 1, "x"), (None, None, 1, "x"), ("a", 7, 2, None)], 1, 2, True)
    made = parquet_counts(pl.scan_parquet(files, glob=False), files, ["s", "i", "u", "t"])
    assert made is not None and made.values is not None
    assert {q: sorted(v.to_list()) for q, v in made.values.items()} == {
        "s": ["a", "b"],
        "i": [7],
        "u": [1, 2],
        "t": ["x"],
    }
    assert made.values["u"].dtype == pl.UInt8


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.tuples(STRINGS, BIG, st.sampled_from([None, 0, 3, 255]), STRINGS), max_size=40),
    group=st.integers(1, 7),
    cap=st.sampled_from([2, 4, 1 << 16]),
)
def test_undeclared_distinct_counts(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple], group: int, cap: int
) -> None:
    """The undeclared columns' distinct values (null counted as one: Polars' n_unique, brute force on the rows); a
    column with more than the cap, or integers over a range wider than 2**24 (``i`` here, when it holds two of its
    far-apart values), is left to the road."""
    files = _write(tmp_path_factory.mktemp("pq"), rows, 1, group, True)
    lf = pl.scan_parquet(files, glob=False)
    saved, _parquet_counts.DISTINCT_CAP = _parquet_counts.DISTINCT_CAP, cap
    try:
        made = parquet_counts(lf, files, ["u"], ["s", "i", "t"])
    finally:
        _parquet_counts.DISTINCT_CAP = saved
    assert made is not None
    truth = {c: len({r[list(TYPES).index(c)] for r in rows}) for c in ("s", "i", "t")}
    values = [r[1] for r in rows if r[1] is not None]
    wide = bool(values) and max(values) - min(values) >= 1 << 24
    want = {c: n for c, n in truth.items() if n - (None in {r[list(TYPES).index(c)] for r in rows}) <= cap}
    want = {c: n for c, n in want.items() if not (c == "i" and wide)}
    assert made.distinct == want


def test_none_where_it_does_not_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cast, a filter, an added column or another file list than the scan's (the rows the road sees are not the
    files' as stored), a qid neither String nor integer, more rows than one pass: None, the group-by runs."""
    files = _write(tmp_path, [("b", 7, 1, "x"), ("a", 8, 2, "y")], 2, 1, True)
    lf = pl.scan_parquet(files, glob=False)
    assert sorted_tuple_codes(lf, files, ["s"]) is not None
    for changed in (
        lf.with_columns(pl.col("i").cast(pl.Int32)),
        lf.filter(pl.col("i") > 7),
        lf.with_columns(pl.lit(1).alias("extra")),
        lf.with_columns(pl.col("s").str.to_uppercase()),
    ):
        assert sorted_tuple_codes(changed, files, ["s"]) is None
    assert sorted_tuple_codes(lf, files[:1], ["s"]) is None
    assert sorted_tuple_codes(lf, [], ["s"]) is None
    dates = tmp_path / "d.parquet"
    pl.DataFrame({"d": [1.5, 2.5]}).write_parquet(dates)
    assert sorted_tuple_codes(pl.scan_parquet([dates], glob=False), [dates], ["d"]) is None
    monkeypatch.setattr(_parquet_counts, "PASS_ROWS", 1)
    assert sorted_tuple_codes(lf, files, ["s"]) is None


@pytest.mark.parametrize("method", ["fulldomain", "greedy"])
def test_a_job_gives_the_group_bys_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """The same job on a Parquet input with the pass and without it (forced off): the same published bytes and
    report figures; the pass is made for a method that reads the codes (fulldomain), not for the others."""
    from polars_anon.job import Job, run_job

    rows = [(f"z{i % 7}", i % 5, i % 3, f"p{i % 2}") for i in range(400)]
    data = tmp_path / "in.parquet"
    pl.DataFrame(
        rows, schema={"zip": pl.String, "age": pl.Int64, "g": pl.Int64, "party": pl.String}, orient="row"
    ).write_parquet(data)
    qids = {
        "zip": {"hierarchy": "suppress"},
        "age": {"hierarchy": {"intervals": [2, 4]}},
        "g": {"hierarchy": "suppress"},
    }
    keys = {"input": str(data), "k": 3, "report_html": False, "qids": qids, "method": method}
    made = []
    real = _parquet_counts.parquet_counts

    def counted(*args: object, **keywords: object) -> object:
        made.append(real(*args, **keywords))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr("polars_anon.job.parquet_counts", counted)
    fast = run_job(Job.from_dict({**keys, "output": str(tmp_path / "fast.parquet")}))
    if method == "fulldomain":  # a method that reads the codes: the pass, with them
        assert len(made) == 1 and made[0] is not None and made[0].sorted is not None and made[0].sorted[1] is not None
    else:  # the others keep the group-by (the pass's pages raised greedy's later peak)
        assert made == []
    monkeypatch.setattr("polars_anon.job.parquet_counts", lambda *a, **k: None)
    slow = run_job(Job.from_dict({**keys, "output": str(tmp_path / "slow.parquet")}))
    assert (tmp_path / "fast.parquet").read_bytes() == (tmp_path / "slow.parquet").read_bytes()
    timed = {"seconds", "phases", "write_seconds", "output"}
    assert {k: v for k, v in fast.items() if k not in timed} == {k: v for k, v in slow.items() if k not in timed}
    assert fast["n_input_classes"] == 105  # i % 7, i % 5, i % 3 over 400 rows: every one of the 7 * 5 * 3 tuples


def test_pyarrow_pool_and_modules(tmp_path: Path) -> None:
    """The pass leaves pyarrow's pool with nothing held, and imports neither pandas nor pyarrow.compute (``to_numpy``
    and compute functions would: 0.3 s and 25 ms inside a job)."""
    import subprocess
    import sys

    files = _write(tmp_path, [("b", 7, 1, "x"), (None, None, 1, "x")], 1, 1, True)
    code = (
        "import sys, polars as pl; from pathlib import Path\n"
        "from polars_anon._parquet_counts import parquet_counts\n"
        f"f = [Path({str(files[0])!r})]; parquet_counts(pl.scan_parquet(f, glob=False), f, ['s', 'i'])\n"
        "import pyarrow as pa\n"
        "print(pa.total_allocated_bytes(), 'pandas' in sys.modules, 'pyarrow.compute' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "False", "False"]


def test_an_identifying_column_is_refused_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An undeclared column that identifies people: the job refuses it with the same message whether the pass
    counted its values or the road did."""
    from polars_anon.errors import InvalidParameterError
    from polars_anon.job import Job, run_job

    data = tmp_path / "in.parquet"
    pl.DataFrame({"zip": [f"z{i % 3}" for i in range(60)], "id": [f"p{i}" for i in range(60)]}).write_parquet(data)
    keys = {"input": str(data), "k": 2, "report_html": False, "qids": {"zip": {"hierarchy": "suppress"}}}
    messages = []
    for counts in (_parquet_counts.parquet_counts, lambda *a, **k: None):
        monkeypatch.setattr("polars_anon.job.parquet_counts", counts)
        with pytest.raises(InvalidParameterError, match="column 'id' is not declared and has 60 distinct") as err:
            run_job(Job.from_dict({**keys, "output": str(tmp_path / "out.parquet")}))
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_wide_integers(tmp_path: Path) -> None:
    """UInt64 values beyond 2**63 (within a narrow range: the table's path) as the group-by gives them, their distinct
    count too; a file with an Int128 column, which pyarrow cannot open: None, the group-by runs."""
    path = tmp_path / "u.parquet"
    top = 2**64 - 1
    frame = pl.DataFrame({"u": pl.Series([top, top - 3, None, top], dtype=pl.UInt64), "s": ["a", "b", "a", "a"]})
    frame.write_parquet(path)
    lf = pl.scan_parquet([path], glob=False)
    made = parquet_counts(lf, [path], ["u", "s"], ["u"])
    assert made is not None and made.sorted is not None
    assert_frame_equal(made.sorted[0], _reference(lf, ["u", "s"])[0])
    assert made.sorted[0].rows() == [(str(top - 3), "b", 1), (str(top), "a", 2), (None, "a", 1)]  # by label
    assert made.values is not None and sorted(made.values["u"].to_list()) == [top - 3, top]
    assert made.distinct == {"u": 3}  # two values and the null
    wide = tmp_path / "w.parquet"
    pl.DataFrame({"x": pl.Series([1, 2], dtype=pl.Int128), "s": ["a", "b"]}).write_parquet(wide)
    assert sorted_tuple_codes(pl.scan_parquet([wide], glob=False), [wide], ["s"]) is None


@pytest.mark.parametrize(("dtype", "values"), [(pl.Int8, [-119, -17, 33, None]), (pl.Int16, [-20000, 20000, 5, None])])
def test_narrow_integers_of_both_signs(tmp_path: Path, dtype: pl.DataType, values: list[int | None]) -> None:
    """Int8 and Int16 values whose span passes the type's maximum (33 - -119 = 152 > 127): each keeps its own slot
    (review26: in the column's own type they wrapped, and 33 was published under -160--1); their distinct count too."""
    path = tmp_path / "n.parquet"
    pl.DataFrame({"n": pl.Series(values * 3, dtype=dtype), "s": ["a", "b", "c", "d"] * 3}).write_parquet(path)
    lf = pl.scan_parquet([path], glob=False)
    made = parquet_counts(lf, [path], ["n"], ["n"])
    assert made is not None and made.sorted is not None and made.values is not None
    assert_frame_equal(made.sorted[0], _reference(lf, ["n"])[0])
    assert sorted(made.values["n"].to_list()) == sorted(v for v in values if v is not None)
    assert made.distinct == {"n": 4}  # three values and the null


def test_dictionary_entries_no_row_uses(tmp_path: Path) -> None:
    """A dictionary that keeps values no row uses (an Arrow dictionary written without its schema: Polars reads a
    String column): neither tuples, hierarchy values, codes' labels nor distinct counts hold them (review26: a job was
    refused for 'X-unused' not in its hierarchy, and an undeclared column of 2 values counted 62)."""
    path = tmp_path / "d.parquet"
    used = pa.array([0, 1, 1, 0, None], type=pa.int32())
    column = pa.DictionaryArray.from_arrays(used, pa.array(["F", "M", "X-unused", "G-unused"]))  # G: between
    pq.write_table(pa.table({"sex": column, "party": column}), path, store_schema=False)
    lf = pl.scan_parquet([path], glob=False)
    assert lf.collect_schema()["sex"] == pl.String
    made = parquet_counts(lf, [path], ["sex"], ["party"])
    assert made is not None and made.sorted is not None and made.sorted[1] is not None and made.values is not None
    assert_frame_equal(made.sorted[0], _reference(lf, ["sex"])[0])
    assert made.sorted[1].labels["sex"].to_list() == ["F", "M"]
    assert sorted(made.values["sex"].to_list()) == ["F", "M"]
    assert made.distinct == {"party": 3}  # F, M and the null


def test_unused_dictionary_entries_of_two_qids(tmp_path: Path) -> None:
    """Entries no row uses between and around the used ones, in two qids and two row groups: the tuples, their codes
    and the hierarchies' values are those of the rows (the entries are dropped after counting, on the codes)."""
    path = tmp_path / "u.parquet"
    a = pa.DictionaryArray.from_arrays(pa.array([3, 1, 3, None, 1, 3], pa.int32()), pa.array(["b", "d", "a", "f", "c"]))
    b = pa.DictionaryArray.from_arrays(pa.array([0, 0, 2, 2, None, 4], pa.int32()), pa.array(["y", "q", "x", "p", "z"]))
    pq.write_table(pa.table({"a": a, "b": b}), path, store_schema=False, row_group_size=4)
    lf = pl.scan_parquet([path], glob=False)
    made = parquet_counts(lf, [path], ["a", "b"])
    assert made is not None and made.sorted is not None and made.sorted[1] is not None and made.values is not None
    frame, codes = made.sorted
    assert frame.rows() == [("d", "y", 1), ("d", None, 1), ("f", "x", 1), ("f", "y", 1), ("f", "z", 1), (None, "x", 1)]
    assert codes.labels["a"].to_list() == ["d", "f"] and codes.labels["b"].to_list() == ["x", "y", "z"]
    assert codes.codes["a"].tolist() == [0, 0, 1, 1, 1, 2] and codes.codes["b"].tolist() == [1, 3, 0, 1, 2, 0]
    assert sorted(made.values["a"].to_list()) == ["d", "f"] and sorted(made.values["b"].to_list()) == ["x", "y", "z"]


def test_many_qid_values_other_files_or_bad_text_take_the_group_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A qid with more than QID_VALUES distinct values; a file list of the same length and first file as the scan's
    but another second file, or the files reversed (the printed plan names the first only); a String column that is
    not UTF-8 (the group-by refuses it as before): None."""
    files = _write(tmp_path, [("b", 7, 1, "x"), ("a", 8, 2, "y"), ("c", 9, 3, "z")], 2, 1, True)
    other = tmp_path / "other.parquet"
    pl.read_parquet(files[1]).write_parquet(other)
    lf = pl.scan_parquet(files, glob=False)
    assert sorted_tuple_codes(lf, [files[0], other], ["s"]) is None
    assert sorted_tuple_codes(lf, files[::-1], ["s"]) is None
    monkeypatch.setattr(_parquet_counts, "QID_VALUES", 3)
    assert sorted_tuple_codes(lf, files, ["s"]) is not None  # a, b, c: three
    monkeypatch.setattr(_parquet_counts, "QID_VALUES", 2)
    assert sorted_tuple_codes(lf, files, ["s"]) is None
    bad = pa.array([b"a", b"\xff\xfe"] * 3, pa.binary())
    text = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"q": pa.Array.from_buffers(pa.string(), len(bad), bad.buffers())}), text)
    assert sorted_tuple_codes(pl.scan_parquet([text], glob=False), [text], ["q"]) is None


def test_batches_packed_as_they_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that adds no qid value is packed as it is read (while the next is read, not after the read), with the
    ranks of the values seen so far; a later batch that adds a value voids them (those batches are packed again at the
    end), and packing starts again at most PACKINGS times: the tuples and codes are the group-by's all the same."""
    values = [["b", "a"], ["a", "b"], ["b", "a"], ["c", "a"], ["a", "c"], ["0", "a"], ["c", "b"], ["b", "0"]]
    rows = [(s, i, 1, "x") for i, pair in enumerate(values) for s in pair]
    files = _write(tmp_path, rows, 1, 2, True)  # a row group a batch: 1-2 quiet, 3 adds c, 4 quiet, 5 adds 0, 6-7 quiet
    lf = pl.scan_parquet(files, glob=False)
    read: list[int] = []
    packed = _parquet_counts._Packing.add
    monkeypatch.setattr(_parquet_counts, "BATCH_ROWS", 2)
    monkeypatch.setattr(_parquet_counts._Packing, "add", lambda self, i, *a: (read.append(i), packed(self, i, *a)))
    got = sorted_tuple_codes(lf, files, ["s", "u"])
    assert read == [1, 2, 4]  # 1-2 voided by 3, 4 by 5; 6-7 not packed: two starts made
    assert got is not None
    want_frame, want_codes = _reference(lf, ["s", "u"])
    assert_frame_equal(got[0], want_frame)
    assert np.array_equal(got[1].codes["s"], want_codes.codes["s"])  # type: ignore[attr-defined]
    monkeypatch.setattr(_parquet_counts, "PACKINGS", 3)
    read.clear()
    got = sorted_tuple_codes(lf, files, ["s", "u"])
    assert read == [1, 2, 4, 6, 7] and got is not None  # the third start holds to the end: 6-7 kept
    assert_frame_equal(got[0], want_frame)


def test_labels_gathered_beside_the_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """perf7: over many tuples each qid's String labels are gathered on a second thread as soon as its codes are known
    (the first qid's last, on the caller's thread): the same frame, each column one chunk, as gathered in turn."""
    import threading

    rows = [(s, i % 5, i % 3, t) for i, (s, t) in enumerate(zip("abcab" * 4, "xyz" * 7))]
    files = _write(tmp_path, rows, 1, 4, True)
    lf = pl.scan_parquet(files, glob=False)
    where: dict[str, set[str]] = {}
    gathered = _parquet_counts.decoded

    def recorded(name: str, *args: object) -> pl.Series:
        thread = threading.current_thread().name  # a pool's: polars_anon_<what>_<n>
        where.setdefault(name, set()).add("main" if thread == "MainThread" else thread.split("_")[2])
        return gathered(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_parquet_counts, "decoded", recorded)
    frames = []
    for many in (1 << 62, 1):
        monkeypatch.setattr(_parquet_counts, "LABELS_BESIDE", many)
        got = sorted_tuple_codes(lf, files, ["s", "i", "u", "t"])
        assert got is not None and {c.n_chunks() for c in got[0].get_columns()} == {1}
        frames.append(got[0])
    assert_frame_equal(frames[0], frames[1])
    assert_frame_equal(frames[1], _reference(lf, ["s", "i", "u", "t"])[0])
    assert where == {"s": {"main"}, "i": {"main", "labels"}, "u": {"main", "labels"}, "t": {"main", "labels"}}


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([np.int32, np.int64]),
    st.lists(st.integers(0, 2**31 - 1), min_size=0, max_size=40),
    st.integers(1, 2**31 - 1),
)
def test_codes_divided_off_the_keys_as_divmod(dtype: type[np.integer], keys: list[int], size: int) -> None:
    """perf9: the tuples' codes are divided off their packed keys by a floor division and a subtraction (np.divmod
    took twice as long): the same quotients and remainders, in the keys' type, for any non-negative key and size."""
    packed = np.array(keys, dtype=dtype)
    quotient, rest = _parquet_counts._divmod(packed, size)
    want_quotient, want_rest = np.divmod(packed, size)
    assert quotient.dtype == want_quotient.dtype == rest.dtype == want_rest.dtype == dtype
    assert np.array_equal(quotient, want_quotient) and np.array_equal(rest, want_rest)
