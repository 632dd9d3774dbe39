"""The input is read again to publish: when that read is not what the method read (a file changed in between), the
published classes are checked against the planned ones and the table is refused; nothing is written."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.io import file_stamps, input_changes
from polars_anon.job import Job, encoding_path, run_job

H = {"a": pa.Hierarchy.suppression(["a1", "a2", "a3", "a4"]), "b": pa.Hierarchy.suppression(["b1", "b2", "b3"])}
ROWS = {
    "a": ["a1"] * 3 + ["a2"] * 3 + ["a3"] * 3 + ["a1", "a2", "a3"],
    "b": ["b1"] * 3 + ["b2"] * 3 + ["b3"] * 3 + ["b2", "b3", "b1"],
    "id": list(range(12)),
}


def _result(path: Path, engine: str, frame: dict, **kwargs: object) -> pa.Anonymized:
    pl.DataFrame(frame).write_parquet(path)
    source = pl.scan_parquet(path) if engine == "polars" else str(path)
    return pa.anonymize(source, hierarchies=H, insensitive="id", engine=engine, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_tuple_the_map_never_saw_is_refused(tmp_path: Path, engine: str) -> None:
    """Mondrian at k = 3, then row 9 becomes (a2, b1): values the map knows, a tuple it does not hold. The Polars road
    used to publish it under another tuple's labels, not its ancestors (a3, *), in a class still of 3 or more rows,
    verified; now with null labels, a class of its own. DuckDB's left the row out (refused: a row short)."""
    row = ("a2", "b1")
    path = tmp_path / "in.parquet"
    result = _result(path, engine, ROWS, k=3, method="mondrian")
    changed = {**ROWS, "a": [*ROWS["a"][:9], row[0], *ROWS["a"][10:]], "b": [*ROWS["b"][:9], row[1], *ROWS["b"][10:]]}
    pl.DataFrame(changed).write_parquet(path)
    out = tmp_path / "out.parquet"
    due = "the input read to publish is not the input the method read|has 11 rows, but 12 were due|fewer than k=3"
    with pytest.raises(pa.NotKAnonymousError, match=due):
        result.sink_parquet(out)
    assert not out.exists()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_classes_that_still_hold_k_but_are_not_the_planned_ones_are_refused(tmp_path: Path, engine: str) -> None:
    """a, a, b, b at k = 2 (the leaves) becomes a, a, a, a: one class of 4, k-anonymous, but the report would mix the
    new check's classes with the old plan's (two classes of 2)."""
    path = tmp_path / "in.parquet"
    hierarchies = {"q": pa.Hierarchy.suppression(["a", "b"])}
    pl.DataFrame({"q": ["a", "a", "b", "b"]}).write_parquet(path)
    source = pl.scan_parquet(path) if engine == "polars" else str(path)
    result = pa.anonymize(source, hierarchies=hierarchies, k=2, engine=engine)  # type: ignore[arg-type]
    pl.DataFrame({"q": ["a", "a", "a", "a"]}).write_parquet(path)
    with pytest.raises(pa.NotKAnonymousError, match=r"class \{'q': 'a'\} has 4 rows where the method planned 2"):
        result.collect()


def test_rows_in_another_order_publish_the_same_classes(tmp_path: Path) -> None:
    """A tuple map publishes by value: the same rows in another order are the planned classes (no false alarm)."""
    path = tmp_path / "in.parquet"
    result = _result(path, "polars", ROWS, k=3, method="mondrian")
    first = result.collect().sort("id")
    assert first.height == 12
    pl.DataFrame(ROWS).reverse().write_parquet(path)
    assert result.collect().sort("id").equals(first)


@pytest.mark.parametrize("publish", ["aggregate", "permute"])
def test_mdav_refuses_rows_read_in_another_order(tmp_path: Path, publish: str) -> None:
    """MDAV's map is by row number: the same rows read back reversed used to be published with other clusters' means,
    verified (a 62-year-old as 21.0; review28). Each row's qids are now hashed into the map and a row that does not
    match is published with null labels, which the check refuses; the file as the method read it publishes the
    means of its own cluster."""
    path = tmp_path / "in.parquet"
    rows = {"age": [20, 21, 22, 60, 61, 62], "id": list(range(6))}
    pl.DataFrame(rows).write_parquet(path)
    result = pa.anonymize(
        pl.scan_parquet(path), qids=["age"], hierarchies={}, k=3, method="mdav", publish=publish, insensitive="id"
    )
    kept = result.collect().sort("id")["age"].to_list()
    if publish == "aggregate":  # each cluster's mean
        assert kept == [21.0] * 3 + [61.0] * 3
    else:  # each cluster's values, permuted inside it
        assert sorted(kept[:3]) == ["20", "21", "22"] and sorted(kept[3:]) == ["60", "61", "62"]
    pl.DataFrame(rows).reverse().write_parquet(path)
    with pytest.raises(pa.NotKAnonymousError):
        result.collect()
    with pytest.raises(pa.NotKAnonymousError):
        result.sink_parquet(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


# The input changed between anonymize() and publishing (review30): each failure names the input and says it changed,
# or, for a CSV value, names the value and its column; on every road that publishes: collect(), sink_parquet() and
# the checked LazyFrame run by the user's own collect (it was Polars' own error there).

LEVELS = pa.Hierarchy.from_rows([["a1", "A", "*"], ["a2", "A", "*"], ["a3", "B", "*"], ["a4", "B", "*"]])
TWELVE = {"a": ["a1", "a1", "a2", "a3", "a3", "a4"] * 2, "n": list(range(12))}
"""k = 3 publishes the middle level, A and B (6 rows each; the leaves a2 and a4 have 2 rows): a column map."""


def test_a_value_the_map_does_not_hold_is_refused_naming_the_changed_input(tmp_path: Path) -> None:
    """A 13th row with 'zz', which the plan never saw: published with a null label (it was Polars' "conversion from
    str to enum failed"), so 13 rows where the plan's 12 are due, refused; the message names the file."""
    path = tmp_path / "in.csv"
    pl.DataFrame(TWELVE).write_csv(path)
    result = pa.anonymize(pl.scan_csv(path), hierarchies={"a": LEVELS}, k=3, insensitive="n")
    lazy = result.lazy()
    assert result.collect()["a"].to_list() == ["A", "A", "A", "B", "B", "B"] * 2
    pl.DataFrame({"a": [*TWELVE["a"], "zz"], "n": list(range(13))}).write_csv(path)
    said = rf"has 13 rows, but 12 were due .*; the input '{re.escape(str(path))}' changed after anonymize\(\) read it"
    _refused_every_way(result, lazy, pa.NotKAnonymousError, said, tmp_path / "out.parquet")


def _refused_every_way(result: pa.Anonymized, lazy: pl.LazyFrame, error: type, said: str, out: Path) -> None:
    """`result.collect()`, its checked lazy frame's `collect()` and `result.sink_parquet(out)` each raise `error`
    matching `said`, and no file is left at `out`."""
    for run in (result.collect, lazy.collect, lambda: result.sink_parquet(out)):
        with pytest.raises(error, match=said):
            run()
    assert not out.exists()


def test_a_parquet_file_rewritten_at_another_size_is_named(tmp_path: Path) -> None:
    """Polars reads the rewritten file by the layout it read first ("File out of specification", on every road):
    the file is named instead."""
    path = tmp_path / "in.parquet"
    pl.DataFrame(TWELVE).write_parquet(path)
    result = pa.anonymize(pl.scan_parquet(path), hierarchies={"a": LEVELS}, k=3, insensitive="n")
    lazy = result.lazy()
    pl.DataFrame({"a": TWELVE["a"] * 20, "n": list(range(240))}).write_parquet(path)
    said = rf"^the input '{re.escape(str(path))}' changed after anonymize\(\) read it .*run anonymize\(\) again"
    _refused_every_way(result, lazy, pa.InputError, said, tmp_path / "out.parquet")


def test_a_late_csv_value_is_named_with_its_column(tmp_path: Path) -> None:
    """A value that breaks the column's inferred type, added after anonymize(): one line naming the value and the
    column, the checked LazyFrame's included (Polars' own error was a dozen lines there)."""
    path = tmp_path / "in.csv"
    pl.DataFrame(TWELVE).write_csv(path)
    result = pa.anonymize(pl.scan_csv(path), hierarchies={"a": LEVELS}, k=3, insensitive="n")
    lazy = result.lazy()
    path.write_text(path.read_text() + "a1,x\n")
    said = r"could not parse `x` as dtype `i64` at column 'n' .*null_values=\[\"x\"\]"
    runs = (result.collect, lazy.collect, lazy.filter(pl.col("a") == "A").head(1).collect)
    for run in (*runs, lambda: lazy.sink_parquet(tmp_path / "out.parquet")):
        with pytest.raises(pa.InputError, match=rf"^cannot read '{re.escape(str(path))}' as CSV: {said}"):
            run()
    assert not (tmp_path / "out.parquet").exists()


def test_an_error_on_an_unchanged_input_passes_unchanged(tmp_path: Path) -> None:
    """Only a file whose stamp changed is named: the same failure on an unchanged file keeps its own words."""
    path = tmp_path / "in.csv"
    pl.DataFrame(TWELVE).write_csv(path)
    stamps = file_stamps([str(path)])
    with pytest.raises(pl.exceptions.ComputeError, match="^boom$"), input_changes(stamps):
        raise pl.exceptions.ComputeError("boom")
    copy = tmp_path / "copy.csv"
    copy.write_bytes(path.read_bytes())
    copy.replace(path)  # the same bytes in another file (another inode) under the name read
    changed = r"changed after anonymize\(\) read it .*\(ComputeError: boom\)$"
    with pytest.raises(pa.InputError, match=changed), input_changes(stamps):
        raise pl.exceptions.ComputeError("boom")


# A job reads its input more than once (the classes, the published rows, the originals an encoding reads): one that
# changed while the job ran was found by hunt48 committing a verified table of 30,162 rows beside an encoding of 7,
# each 'Sales', classes of 1-2 rows, listed as fine in the report.


def _job_rewriting_its_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encode: str) -> Job:
    """A CSV job encoding its table with `encode`, whose input another process rewrites (seven rows of one value)
    once the table is written and verified, as the job's encodings are staged."""
    from polars_anon import job as jobs

    path = tmp_path / "in.csv"
    pl.DataFrame(TWELVE).write_csv(path)
    staged = jobs.stage_encoded

    def rewritten_first(*args: object, **kwargs: object) -> object:
        pl.DataFrame({"a": ["a1"] * 7, "n": list(range(7))}).write_csv(path)
        return staged(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs, "stage_encoded", rewritten_first)
    raw = {"input": "in.csv", "output": "out/t.parquet", "k": 2, "qids": {"a": {"hierarchy": "suppress"}}}
    return Job.from_dict({**raw, "insensitive": ["n"], "encode": [encode]}, base=tmp_path)


@pytest.mark.parametrize("encode", ["fillparent", "proportional"])
def test_a_job_whose_input_changed_while_it_ran_commits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encode: str
) -> None:
    """The input rewritten between the table's check and its encodings: refused in one line naming it, and nothing
    committed (it committed the table, a 7-row encoding and the report)."""
    job = _job_rewriting_its_input(tmp_path, monkeypatch, encode)
    said = rf"^the input '{re.escape(str(tmp_path / 'in.csv'))}' changed while the job ran .*nothing was written"
    with pytest.raises(pa.InputError, match=said):
        run_job(job)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.parametrize("encode", ["fillparent", "oneclass", "setbinary", "proportional", "random", "statistical"])
def test_a_job_encodes_the_rows_it_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encode: str) -> None:
    """Each encoding is made from the table as written and verified, not from the input read again: with the input
    rewritten before the encodings and the change unseen (a file system whose times do not move), the encoding still
    has the table's 12 rows, in its order (it had the rewritten input's 7)."""
    from polars_anon import job as jobs

    job = _job_rewriting_its_input(tmp_path, monkeypatch, encode)
    monkeypatch.setattr(jobs, "check_unchanged", lambda stamps: None)
    run_job(job)
    table = pl.read_parquet(tmp_path / "out" / "t.parquet")
    encoded = pl.read_parquet(encoding_path(tmp_path / "out" / "t.parquet", encode))
    assert table.height == 12 and encoded["n"].to_list() == table["n"].to_list()
    if encode == "random":  # each row's leaf under its published node
        assert encoded["a"].to_list() == table["a"].to_list()  # k = 2 publishes the leaves
