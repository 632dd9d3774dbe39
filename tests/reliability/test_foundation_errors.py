"""Every refusal names its culprit; nothing is written on failure."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import polars as pl
import pytest

import polars_anon as pa
import polars_anon.io
from polars_anon import cli
from tests.examples import ANIMAL_HIERARCHIES, GENDER, RACE, TABLE_I


def test_two_parents() -> None:
    with pytest.raises(pa.HierarchyError, match=r"row 2: node 'a' has two parents, 'A' and 'B'"):
        pa.Hierarchy.from_rows([["a", "A", "*"], ["a", "B", "*"]])


def test_two_roots() -> None:
    with pytest.raises(pa.HierarchyError, match=r"exactly one root, found 2 \(first: \['\*', '#'\]\)"):
        pa.Hierarchy.from_rows([["a", "*"], ["b", "#"]])


def test_cycle() -> None:
    with pytest.raises(pa.HierarchyError, match="cycle: 2 nodes never reach the root"):
        pa.Hierarchy.from_parents({"r": None, "x": "y", "y": "x"})


def test_empty_hierarchy(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(pa.HierarchyError, match="empty"):
        pa.Hierarchy.from_csv(tmp_path / "e.csv")


def test_hierarchy_file_with_another_separator(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("Oslo,Norway,*\nBergen,Norway,*\n")
    with pytest.raises(pa.HierarchyError, match=r"c\.csv': no row holds the separator ';' .* separator=','"):
        pa.Hierarchy.from_csv(tmp_path / "c.csv")
    assert pa.Hierarchy.from_csv(tmp_path / "c.csv", separator=",").path_of("Oslo") == ["Oslo", "Norway", "*"]
    (tmp_path / "t.csv").write_text("Oslo\tNorway\t*\nBergen\tNorway\t*\n")  # the job-file hint is valid TOML
    with pytest.raises(pa.HierarchyError) as caught:
        pa.Hierarchy.from_csv(tmp_path / "t.csv")
    hint = str(caught.value).split("separator = ")[1].split(" }")[0]
    assert tomllib.loads(f"s = {hint}")["s"] == "\t"
    (tmp_path / "one.csv").write_text('"1,5"\n')  # one row, one field: a one-node hierarchy, not a separator question
    assert pa.Hierarchy.from_csv(tmp_path / "one.csv").leaf_labels == ["1,5"]


def test_hierarchy_file_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "l.csv").write_bytes("Troms\u00f8;Norway;*\n".encode("latin-1"))
    with pytest.raises(pa.HierarchyError, match=r"l\.csv' is not UTF-8 text: invalid start byte at byte 5"):
        pa.Hierarchy.from_csv(tmp_path / "l.csv")


def test_ragged_rows(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("a;A;*\nb;*\n")
    with pytest.raises(pa.HierarchyError, match=r"r\.csv: row 2 has 2 fields but the first row has 3"):
        pa.Hierarchy.from_csv(tmp_path / "r.csv")


def test_missing_hierarchy_file(tmp_path: Path) -> None:
    with pytest.raises(pa.HierarchyError, match="cannot read hierarchy file .*nope.csv"):
        pa.Hierarchy.from_csv(tmp_path / "nope.csv")


def test_unknown_column() -> None:
    with pytest.raises(pa.ColumnNotFoundError, match=r"qids \['zipcode'\] not in the frame; its columns are"):
        pa.anonymize(TABLE_I, qids=["zipcode"], hierarchies={"zipcode": ANIMAL_HIERARCHIES["race"]}, k=2)


def test_value_not_in_hierarchy() -> None:
    t = TABLE_I.with_columns(pl.Series("race", ["cat", "lion", "dog", "emu", "yak", "yak"]))
    with pytest.raises(
        pa.ValueNotInHierarchyError, match=r"column 'race': 2 distinct values are not leaves .*\['emu', 'yak'\]"
    ):
        pa.anonymize(t, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=2)


def test_a_number_that_lost_its_leading_zeros_is_named_as_such() -> None:
    """A zip read as an integer (a CSV reader's guess) against a hierarchy of zero-padded zips: the refusal says the
    column was read as a number and how to read it as text (it said only that 2138 is no leaf)."""
    zips = pa.Hierarchy.from_dict({"*": {"021**": ["02138", "02139"], "941**": ["94107"]}})
    t = pl.DataFrame({"zip": [2138, 2139, 94107, 94107]})
    with pytest.raises(
        pa.ValueNotInHierarchyError, match=r"'2138' as '02138'.*schema_overrides=\{\"zip\": pl.String\}"
    ):
        pa.anonymize(t, qids=["zip"], hierarchies={"zip": zips}, k=2)
    with pytest.raises(pa.ValueNotInHierarchyError, match=r"'94108' is not a leaf of its hierarchy; add it to") as e:
        pa.anonymize(t.with_columns(zip=pl.lit("94108")), qids=["zip"], hierarchies={"zip": zips}, k=2)
    assert "leading zeros" not in str(e.value)


def test_a_csv_read_with_the_wrong_separator_is_named_as_such(tmp_path: Path) -> None:
    """One column named 'id;age;zip': the refusal of the qids says which separator would read the file."""
    (tmp_path / "t.csv").write_text("id;age;zip\n1;30;02138\n")
    with pytest.raises(pa.ColumnNotFoundError, match="read it with separator=';'"):
        pa.anonymize(pl.scan_csv(tmp_path / "t.csv"), qids=["age"], hierarchies={}, k=1, method="mondrian")


def test_nulls_refused_with_count_or_suppressed() -> None:
    t = TABLE_I.with_columns(pl.Series("race", ["cat", None, "dog", None, "whale", "whale"]))
    with pytest.raises(pa.NullValueError, match="column 'race' has 2 null values"):
        pa.anonymize(t, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=2)
    out = pa.anonymize(t, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=2, null="suppress").collect()
    assert out.height == 6 and out["race"].null_count() == 0


@pytest.mark.parametrize(
    "k, err, msg",
    [
        (0, pa.InvalidParameterError, "k must be an integer >= 1, got 0"),
        (2.5, pa.InvalidParameterError, "got 2.5"),
        (7, pa.InfeasibleError, r"k=7 is larger than the table \(6 rows\); choose k <= 6"),
    ],
)
def test_bad_k(k: object, err: type, msg: str) -> None:
    with pytest.raises(err, match=msg):
        pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, k=k)  # type: ignore[arg-type]


def test_bad_method_and_option() -> None:
    with pytest.raises(pa.InvalidParameterError, match="method must be one of .*got 'magic'"):
        pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, k=2, method="magic")  # type: ignore[arg-type]
    with pytest.raises(pa.InvalidParameterError, match=r"method 'fulldomain' does not take option 'mode'"):
        pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, k=2, mode="strict")


def test_output_exists_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    out.write_bytes(b"precious")
    res = pa.anonymize(TABLE_I, hierarchies=ANIMAL_HIERARCHIES, insensitive="id", k=3)
    with pytest.raises(pa.OutputExistsError, match="exists; pass overwrite=True to replace it$"):  # no CLI words
        res.sink_parquet(out)
    assert out.read_bytes() == b"precious" and not (tmp_path / "out.report.json").exists()
    res.sink_parquet(out, overwrite=True)
    assert pl.read_parquet(out).height == 6
    with pytest.raises(pa.OutputExistsError, match="^output '.*out.parquet' exists"):  # the table, not its report
        res.sink_parquet(out)


def test_failed_check_writes_nothing(tmp_path: Path) -> None:
    """A published frame that is not k-anonymous is refused before the rename."""
    bad = pa.Anonymized(TABLE_I.lazy(), {}, lambda lf: pa.verify_k(lf, ["gender", "race"], 2), TABLE_I.lazy())
    with pytest.raises(pa.NotKAnonymousError, match="smallest class has 1 rows, fewer than k=2"):
        bad.sink_parquet(tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(pa.NotKAnonymousError):
        bad.collect()


def test_unreadable_and_non_parquet_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.parquet").write_text("not parquet at all")
    with pytest.raises(pa.InputError, match=r"cannot read input .*x\.parquet' as Parquet"):
        pa.io.scan_input(tmp_path / "x.parquet")
    with pytest.raises(pa.InputError, match="does not exist"):
        pa.io.scan_input(tmp_path / "missing.parquet")
    job = tmp_path / "job.toml"
    job.write_text('input = "x.parquet"\noutput = "o.parquet"\nk = 2\n[qids.a]\nhierarchy = "suppress"\n')
    assert cli.main(["anonymize", str(job)]) == 2
    assert "cannot read input" in capsys.readouterr().err and not (tmp_path / "o.parquet").exists()


def test_bad_hierarchy_spec_and_missing_keys(tmp_path: Path) -> None:
    from polars_anon.job import Job, hierarchy_from_spec

    with pytest.raises(pa.InvalidParameterError, match=r"qid 'zip': unknown hierarchy spec \{'digits': 3\}"):
        hierarchy_from_spec("zip", {"digits": 3}, ["1"])
    with pytest.raises(pa.InvalidParameterError, match="missing required key 'k'"):
        Job.from_dict({"input": "a", "output": "b", "qids": {}})
    with pytest.raises(pa.InvalidParameterError, match="intervals: each width must divide the next"):
        pa.Hierarchy.intervals([1, 2], [5, 7])


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_qid_or_sensitive_named_like_an_internal_column(engine: Literal["polars", "duckdb"]) -> None:
    """A qid `count`/`size` or a sensitive `__anon_row` collided with the aggregates' own columns (raw Polars
    DuplicateError, DuckDB 'sum not supported for str'); they are refused by name, other columns may use them."""
    t = TABLE_I.with_columns(pl.col("race").alias("count"), pl.col("race").alias("size"))
    h = {"gender": GENDER, "count": RACE}
    with pytest.raises(pa.InvalidParameterError, match=r"qid column 'count' is a name .*\['count', 'size'\]"):
        pa.anonymize(t, hierarchies=h, k=2, insensitive=["id", "size", "race"], engine=engine)
    with pytest.raises(pa.InvalidParameterError, match=r"qid column 'size' is a name .* starting with '__anon_'"):
        pa.anonymize(t, hierarchies={"size": RACE}, k=2, insensitive=["id", "count", "race", "gender"], engine=engine)
    s = TABLE_I.rename({"id": "__anon_row"})
    with pytest.raises(pa.InvalidParameterError, match=r"sensitive column '__anon_row' is a name"):
        pa.anonymize(s, hierarchies=ANIMAL_HIERARCHIES, k=2, sensitive="__anon_row", engine=engine)
    got = pa.anonymize(t, hierarchies=ANIMAL_HIERARCHIES, k=3, insensitive=["id", "count", "size"], engine=engine)
    assert (
        got.collect().sort("id")["count"].to_list() == TABLE_I["race"].to_list()
    )  # published as is, under its own name


def test_reserved_column_name_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    TABLE_I.rename({"race": "count"}).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "in.parquet"\noutput = "o.parquet"\nk = 2\ninsensitive = ["id"]\n[qids.count]\n'
        'hierarchy = "suppress"\n[qids.gender]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "qid column 'count' is a name" in err and not (tmp_path / "o.parquet").exists()


def test_an_input_column_with_the_helper_prefix_is_refused_whatever_its_role() -> None:
    """review8 F9: an insensitive column '__anon_row' collided with MDAV's row index (raw DuplicateError); every
    '__anon_' name is the road's, whatever the column's role (a qid's 'count'/'size' only for qids and sensitive)."""
    t = pl.DataFrame({"__anon_row": range(6), "n": [1, 2, 3, 10, 11, 12]})
    with pytest.raises(pa.InvalidParameterError, match=r"input column '__anon_row' is a name the anonymizer reserves"):
        pa.anonymize(t, hierarchies={}, qids=["n"], k=3, method="mdav", insensitive="__anon_row")
