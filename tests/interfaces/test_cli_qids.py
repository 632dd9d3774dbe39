"""The CLI's lists of columns (``--qids`` of check, risk and metrics; ``--qid`` whole): a column whose name holds a
comma is never silently replaced by other columns (hunt47)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli

NAMES = {"a,b": ["x", "x", "y"], "a": ["p", "p", "p"], "b": ["q", "q", "q"]}
"""A table where ``--qids a,b`` reads two ways: the column 'a,b' (classes of 2 and 1) or columns a and b (one of 3)."""


def _out(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", ["check", "risk"])
def test_a_comma_list_that_reads_two_ways_is_refused_naming_both(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check measured columns a and b for ``--qids 'a,b'`` (k_anonymous true, exit 0) where pa.check(df, ['a,b'])
    is False, and risk likewise (0.333 against 1.0): now refused in one line naming both readings and the flags
    that say each (failing before: exit 0)."""
    path = tmp_path / "names.parquet"
    pl.DataFrame(NAMES).write_parquet(path)
    extra = ["--k", "2"] if command == "check" else []
    assert cli.main([command, str(path), "--qids", "a,b", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--qids 'a,b' names columns two ways: ['a', 'b'] or ['a,b']" in err
    assert "--qid a --qid b or --qid a,b" in err


def test_qid_takes_a_name_whole_as_the_python_api_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--qid 'a,b'`` measures the column 'a,b', as pa.check and pa.risk do; ``--qids a --qid b`` columns a and b
    (failing before: no --qid flag)."""
    path = tmp_path / "names.parquet"
    df = pl.DataFrame(NAMES)
    df.write_parquet(path)
    assert cli.main(["check", str(path), "--qid", "a,b", "--k", "2"]) == 1
    assert _out(capsys)["min_class_size"] == pa.check(df, ["a,b"], k=2)["min_class_size"] == 1
    assert cli.main(["check", str(path), "--qids", "a", "--qid", "b", "--k", "2"]) == 0
    assert _out(capsys)["min_class_size"] == 3
    assert cli.main(["risk", str(path), "--qid", "a,b"]) == 0
    assert _out(capsys)["prosecutor"]["highest"] == pa.risk(df, ["a,b"])["prosecutor"]["highest"] == 1.0


def test_a_comma_inside_the_one_column_it_can_name_is_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without columns a and b, ``--qids a,b`` could not name the column 'a,b' at all (refused: qids ['a', 'b'] not
    in the frame): it is that column now, next to others (failing before). A CSV file reads it as written, as any
    qid of check (1.0 and 1.00 are two values), although the first read split it."""
    path = tmp_path / "t.csv"
    path.write_text('"a,b",c\n1.0,z\n1.00,z\n1.0,z\n')
    assert cli.main(["check", str(path), "--qids", "a,b,c", "--k", "2"]) == 1
    assert _out(capsys)["min_class_size"] == 1
    assert cli.main(["risk", str(path), "--qids", "c,a,b"]) == 0
    assert _out(capsys)["n_classes"] == 2


def test_metrics_reads_its_qids_by_the_same_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """metrics' --qids: a column 'a,b' it alone can name is taken, one that reads two ways refused (failing
    before: qids ['a', 'b'] not in the frame)."""
    path = tmp_path / "t.parquet"
    pl.DataFrame({"a,b": ["x", "y"], "c": [1, 1]}).write_parquet(path)
    argv = ["metrics", str(path), str(path), "--hierarchy", "a,b=suppress", "--names", "cost"]
    assert cli.main([*argv, "--qids", "a,b"]) == 0
    assert "ncp" in capsys.readouterr().out
    both = tmp_path / "both.parquet"
    pl.DataFrame(NAMES).write_parquet(both)
    assert cli.main(["metrics", str(both), str(both), "--hierarchy", "a,b=suppress", "--qids", "a,b"]) == 2
    assert "names columns two ways" in capsys.readouterr().err
    assert cli.main(["metrics", str(both), str(both), "--hierarchy", "a,b=suppress", "--qid", "a,b"]) == 0


def test_no_quasi_identifier_is_refused_naming_both_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Neither --qids nor --qid (or an empty --qids): one line naming both ways to give them."""
    path = tmp_path / "t.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(path)
    for argv in (["check", str(path), "--k", "1"], ["risk", str(path), "--qids", ""]):
        assert cli.main(argv) == 2
        assert "no quasi-identifier named; give --qids A,B,... (comma-separated) or --qid NAME" in (
            capsys.readouterr().err
        )


def test_hierarchy_names_a_column_whose_name_holds_an_equals_sign(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend50: ``--hierarchy NAME=SPEC`` split at the first ``=``, so a column 'a=b' could not be given (metrics:
    'a' with spec 'b=suppress', refused; encode likewise): it is read against the table's columns, as --qids is
    (failing before: exit 2). The figures equal pa.metrics.compute's with that column's hierarchy."""
    original = pl.DataFrame({"a=b": ["x", "y", "x", "y"], "c": ["1", "1", "2", "2"]})
    published = original.with_columns(pl.lit("*").alias("a=b"))
    o, p = tmp_path / "o.parquet", tmp_path / "p.parquet"
    original.write_parquet(o)
    published.write_parquet(p)
    doc = tmp_path / "m.json"
    argv = ["metrics", str(o), str(p), "--hierarchy", "a=b=suppress", "--hierarchy", "c=suppress", "--json", str(doc)]
    assert cli.main([*argv, "--names", "ncp,min_class_size"]) == 0, capsys.readouterr().err
    got = json.loads(doc.read_text())["metrics"]
    h = {q: pa.Hierarchy.suppression(original[q].unique().sort()) for q in ("a=b", "c")}
    want = pa.metrics.compute(original, published, ["a=b", "c"], h, ["ncp", "min_class_size"]).row(0, named=True)
    assert got == pytest.approx(want)
    out = tmp_path / "enc.parquet"
    enc = ["encode", str(p), "--original", str(o), "--hierarchy", "a=b=suppress", "--output", str(out)]
    assert cli.main([*enc, "--encoding", "proportional"]) == 0, capsys.readouterr().err
    assert any(c.startswith("a=b_") for c in pl.read_parquet(out).columns)
    csv = tmp_path / "h.csv"  # the CSV such a column's hierarchy reads is an input: never written over
    csv.write_text("x;*\ny;*\n")
    argv = ["encode", str(p), "--hierarchy", f"a=b={csv}", "--output", str(csv), "--overwrite"]
    assert cli.main([*argv, "--encoding", "oneclass"]) == 2
    assert "is an input of this run" in capsys.readouterr().err and csv.read_text() == "x;*\ny;*\n"


def test_hierarchy_that_names_columns_two_ways_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mend50: columns 'a=b' and 'a': ``--hierarchy a=b=suppress`` is 'a=b' suppressed or 'a' with spec
    'b=suppress': refused in one line naming both (failing before: 'a' taken with a CSV file 'b=suppress')."""
    path = tmp_path / "t.parquet"
    pl.DataFrame({"a=b": ["x", "y"], "a": ["p", "p"]}).write_parquet(path)
    assert cli.main(["metrics", str(path), str(path), "--hierarchy", "a=b=suppress", "--qid", "a=b"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--hierarchy 'a=b=suppress' names a column two ways: 'a' (spec 'b=suppress') or 'a=b' (spec" in err


def test_comma_readings_never_backtrack_exponentially() -> None:
    """review34: with columns 'a' and 'a,a', 60 pieces ending in a name no column has: every way of joining the 59
    'a's was tried before the last piece failed (Fibonacci many; 28 pieces took ~1 s, 60 would not finish). A
    split that cannot end in names is never entered: no reading, at once; one more column gives the readings."""
    pieces = ["a"] * 59 + ["b"]
    assert cli._comma_readings(pieces, frozenset({"a", "a,a"})) == []
    found = cli._comma_readings(pieces, frozenset({"a", "a,a", "b"}))
    assert found == [["a"] * 59 + ["b"], ["a"] * 57 + ["a,a", "b"]]
