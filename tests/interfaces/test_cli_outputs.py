"""Every command line subcommand that writes a file checks its output path before it reads any data (review4 #9).

The input is not Parquet, so a command that read it first would say so: the refusal names the output instead,
nothing is printed on standard output, one line on standard error, exit 2, and the folder is left as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from polars_anon import cli

ENCODE = ["encode", "{w}/bad.parquet", "--hierarchy", "sex=suppress", "--encoding", "oneclass"]

CASES = [
    # (id, arguments ({w} is the working folder), the output the message names, what is wrong with it)
    ("risk-json-exists", ["risk", "{w}/bad.parquet", "--qids", "sex", "--json", "{w}/old.json"], "old.json", "exists"),
    (
        "risk-json-under-a-file",
        ["risk", "{w}/bad.parquet", "--qids", "sex", "--json", "{w}/old.json/r.json"],
        "old.json",
        "is a file, not a folder",
    ),
    (
        "metrics-json-exists",
        ["metrics", "{w}/bad.parquet", "{w}/bad.parquet", "--hierarchy", "sex=suppress", "--json", "{w}/old.json"],
        "old.json",
        "exists",
    ),
    (
        "metrics-json-under-a-file",
        ["metrics", "{w}/bad.parquet", "{w}/bad.parquet", "--hierarchy", "sex=suppress", "--json", "{w}/old.json/m"],
        "old.json",
        "is a file, not a folder",
    ),
    ("explore-table-exists", ["explore", "{w}/job.toml"], "out.explore.csv", "exists"),
    ("explore-page-exists", ["explore", "{w}/job.toml", "--output", "{w}/grid.csv"], "grid.html", "exists"),
    (
        "encode-exists",
        ["encode", "{w}/bad.parquet", "--hierarchy", "sex=suppress", "--encoding", "oneclass"],
        "bad.oneclass.parquet",
        "exists",
    ),
    ("report-page-exists", ["report", "{w}/bad.report.json"], "bad.report.html", "exists"),
    # the page is never written under a table's or a report's name, even with --overwrite (hunt48: the table the
    # report describes was replaced with its HTML page)
    *(
        (
            f"report-page-named-{suffix}",
            ["report", "{w}/bad.report.json", "--output", f"{{w}}/{name}", "--overwrite"],
            name,
            "names a table or a report",
        )
        for suffix, name in (("parquet", "t.parquet"), ("csv", "x.CSV"), ("json", "old.json"))
    ),
    # an input of the command is never a target, even with --overwrite (review5 #1: each was replaced)
    *(
        (f"{name}-is-input", [*args, "--overwrite"], target, "is an input of this run")
        for name, args, target in [
            ("risk", ["risk", "{w}/bad.parquet", "--qids", "sex", "--json", "{w}/bad.parquet"], "bad.parquet"),
            (
                "metrics",
                [
                    "metrics",
                    "{w}/bad.parquet",
                    "{w}/t.parquet",
                    "--hierarchy",
                    "sex=suppress",
                    "--json",
                    "{w}/t.parquet",
                ],
                "t.parquet",
            ),
            ("report", ["report", "{w}/bad.report.json", "--output", "{w}/bad.report.json"], "bad.report.json"),
            (
                "encode",
                [*ENCODE, "--output", "{w}/bad.parquet"],
                "bad.parquet",
            ),
            ("explore", ["explore", "{w}/job.toml", "--output", "{w}/bad.parquet", "--no-html"], "bad.parquet"),
            ("anonymize", ["anonymize", "{w}/job_in.toml"], "bad.parquet"),
            # review6 #2: a population table, a job file, a job's input read by encode
            (
                "risk-population",
                [
                    "risk",
                    "{w}/bad.parquet",
                    "--qids",
                    "sex",
                    "--population",
                    "{w}/t.parquet",
                    "--json",
                    "{w}/t.parquet",
                ],
                "t.parquet",
            ),
            (
                "metrics-job",
                ["metrics", "{w}/bad.parquet", "{w}/bad.parquet", "--job", "{w}/job.toml", "--json", "{w}/job.toml"],
                "job.toml",
            ),
            (
                "encode-job-input",
                [
                    "encode",
                    "{w}/t.parquet",
                    "--job",
                    "{w}/job.toml",
                    "--encoding",
                    "oneclass",
                    "--output",
                    "{w}/bad.parquet",
                ],
                "bad.parquet",
            ),
            # review20 #3: every file a run reads, the job file and a hierarchy file among them (each was replaced)
            ("anonymize-report-is-the-job", ["anonymize", "{w}/job_self.toml"], "job_self.toml"),
            ("anonymize-report-is-a-hierarchy", ["anonymize", "{w}/job_h.toml"], "h.csv"),
            (
                "explore-output-is-a-hierarchy",
                ["explore", "{w}/job_h.toml", "--output", "{w}/h.csv", "--no-html"],
                "h.csv",
            ),
            (
                "encode-output-is-a-hierarchy",
                [
                    "encode",
                    "{w}/bad.parquet",
                    "--hierarchy",
                    "sex={w}/h.csv",
                    "--encoding",
                    "oneclass",
                    "--output",
                    "{w}/h.csv",
                ],
                "h.csv",
            ),
            (
                "metrics-json-is-a-hierarchy",
                [
                    "metrics",
                    "{w}/bad.parquet",
                    "{w}/bad.parquet",
                    "--hierarchy",
                    "sex={w}/h.csv",
                    "--json",
                    "{w}/h.csv",
                ],
                "h.csv",
            ),
            (
                "risk-json-is-a-model-population",
                [
                    "risk",
                    "{w}/bad.parquet",
                    "--qids",
                    "sex",
                    "--model",
                    '{model = "k-map", k = 2, population = "{w}/t.parquet"}',
                    "--json",
                    "{w}/t.parquet",
                ],
                "t.parquet",
            ),
        ]
    ),
    # a folder where a file is due, even with --overwrite (review5 #2: refused only after the work; review6 #1: demo)
    (
        "demo-report-folder",
        ["demo", "--out", "{w}/demo", "--rows", "20", "--overwrite"],
        "report.json",
        "is an existing folder",
    ),
    (
        "anonymize-report-folder",
        ["anonymize", "{w}/job.toml", "--overwrite"],
        "out.report.json",
        "is an existing folder",
    ),
    (
        "explore-table-folder",
        ["explore", "{w}/job.toml", "--output", "{w}/folder.csv", "--overwrite"],
        "folder.csv",
        "is an existing folder",
    ),
    (
        "encode-folder",
        [*ENCODE, "--output", "{w}/dir", "--overwrite"],
        "dir",
        "is an existing folder",
    ),
]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not a Parquet file")
    (tmp_path / "bad.report.json").write_text("not a report")
    for name in ("old.json", "out.explore.csv", "grid.html", "bad.oneclass.parquet", "bad.report.html"):
        (tmp_path / name).write_text("kept")
    (tmp_path / "t.parquet").write_bytes(b"PAR1 not a Parquet file either")
    for name in ("dir", "folder.csv", "out.report.json", "demo/report.json"):  # folders where a file is due
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "kept.txt").write_text("kept")
    qids = 'k = 2\n[qids.sex]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(f'input = "bad.parquet"\noutput = "out.parquet"\n{qids}')
    (tmp_path / "job_in.toml").write_text(f'input = "bad.parquet"\noutput = "bad.parquet"\n{qids}')
    (tmp_path / "h.csv").write_text("F;*\nM;*\n")
    (tmp_path / "job_self.toml").write_text(
        f'input = "bad.parquet"\noutput = "o.parquet"\nreport = "job_self.toml"\n{qids}'
    )
    hier = 'k = 2\n[qids.sex]\nhierarchy = "h.csv"\n'
    (tmp_path / "job_h.toml").write_text(f'input = "bad.parquet"\noutput = "o.parquet"\nreport = "h.csv"\n{hier}')
    return tmp_path


def _snapshot(folder: Path) -> dict[str, object]:
    """Every file's bytes, every folder's snapshot, by name."""
    return {p.name: _snapshot(p) if p.is_dir() else p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize(("args", "output", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_output_refused_before_any_data_is_read(
    work: Path, capsys: pytest.CaptureFixture[str], args: list[str], output: str, words: str
) -> None:
    before = _snapshot(work)
    assert cli.main([a.replace("{w}", str(work)) for a in args]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.startswith("polars-anon: error: ") and said.err.count("\n") == 1
    assert output in said.err and words in said.err and "Parquet" not in said.err  # the input was never read
    if words == "exists":  # mend36: the way out in the command line's words ("pass overwrite=True (CLI: ...)")
        assert said.err.endswith("exists; add --overwrite to the command to replace it\n"), said.err
        assert "overwrite=True" not in said.err
    assert _snapshot(work) == before


def test_risk_json_exists_prints_nothing_on_a_readable_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the review's case: the figures were printed on standard output, then the command failed
    pl.DataFrame({"sex": ["f", "m", "f"]}).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "r.json").write_text("kept")
    args = ["risk", str(tmp_path / "t.parquet"), "--qids", "sex", "--json", str(tmp_path / "r.json")]
    assert cli.main(args) == 2
    said = capsys.readouterr()
    assert said.out == "" and "r.json" in said.err and "exists" in said.err
    assert (tmp_path / "r.json").read_text() == "kept"
    # a missing folder is made, and the figures are printed once written
    args[-1] = str(tmp_path / "new" / "r.json")
    assert cli.main(args) == 0
    assert capsys.readouterr().out == (tmp_path / "new" / "r.json").read_text()


@pytest.mark.parametrize("command", ["risk", "metrics"])
def test_json_onto_a_folder_is_refused_even_with_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # was: --overwrite replaced the folder, everything in it, by the JSON file
    pl.DataFrame({"sex": ["f", "m", "f", "m"]}).write_parquet(tmp_path / "t.parquet")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "kept.txt").write_text("kept")
    table = str(tmp_path / "t.parquet")
    given = ["--qids", "sex"] if command == "risk" else [table, "--hierarchy", "sex=suppress"]
    assert cli.main([command, table, *given, "--json", str(tmp_path / "dir"), "--overwrite"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and "'" + str(tmp_path / "dir") + "' is an existing folder; give another path" in said.err
    assert [p.name for p in (tmp_path / "dir").iterdir()] == ["kept.txt"]


def test_a_file_due_never_replaces_a_folder(tmp_path: Path) -> None:
    from polars_anon.errors import OutputError
    from polars_anon.outputs import Outputs

    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "kept.txt").write_text("kept")
    with pytest.raises(OutputError, match="is an existing folder; give another path"), Outputs(overwrite=True) as out:
        out.stage(tmp_path / "other.txt").write_text("new")  # another output of the same set
        out.stage(tmp_path / "dir")  # a file is due unless the caller says it writes a folder (file=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]  # all or nothing: no other.txt either
    assert [p.name for p in (tmp_path / "dir").iterdir()] == ["kept.txt"]


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("t.parquet", r"report '.*t.parquet' is named twice among the outputs \(the output has that path too\)"),
        ("t.parquet/r.json", r"report '.*t.parquet/r.json' is inside the output '.*t.parquet', which the run writes"),
    ],
)
def test_a_target_staged_at_or_inside_another_is_refused_naming_both(tmp_path: Path, second: str, message: str) -> None:
    """mend57: Outputs.stage refused a second target of one path with its own words (naming neither what), and staged
    a report inside the table's path (a folder made where the table's file was due, the commit then failing on it);
    one check now with check_apart's, before any data is read: the same words for both."""
    from polars_anon.errors import InvalidParameterError
    from polars_anon.outputs import Outputs

    with pytest.raises(InvalidParameterError, match=message), Outputs() as out:
        out.stage(tmp_path / "t.parquet").write_text("table")
        out.stage(tmp_path / second, what="report")
    assert list(tmp_path.iterdir()) == []


def test_json_as_a_file_uri_is_that_local_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # was: --json file:///... wrote into a folder named 'file:' under the working folder
    pl.DataFrame({"sex": ["f", "m", "f", "m"]}).write_parquet(tmp_path / "t.parquet")
    target = tmp_path / "r.json"
    assert cli.main(["risk", str(tmp_path / "t.parquet"), "--qids", "sex", "--json", target.as_uri()]) == 0
    assert capsys.readouterr().out == target.read_text()
    assert cli.main(["risk", str(tmp_path / "t.parquet"), "--qids", "sex", "--json", "hdfs://nn/r.json"]) == 2
    assert "--json takes a local path or a file:// URI, got 'hdfs://nn/r.json'" in capsys.readouterr().err


def test_the_files_a_plan_scans_are_named_without_serializing_rows_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan with rows in memory or a literal list Polars prints elided is never serialized to find its files (3M
    rows took 44 s CPU, a 3M-item is_in 3.6 s: review12 9); every file of its scans is listed (review12 5: Polars
    prints only the first of three or more), with the folders of a scan Polars expanded. Without them, the sources
    as given are listed too, from the serialized plan (review9 H1, mend7)."""
    from polars_anon.io import scanned_files

    files = []
    for i in range(3):
        (tmp_path / f"d{i}").mkdir()
        files.append(str(tmp_path / f"d{i}" / "p.parquet"))
        pl.DataFrame({"a": [i]}).write_parquet(files[-1])
    assert scanned_files(pl.scan_parquet(files)) == files
    two = files[:2]
    assert scanned_files(pl.scan_parquet(two)) == two
    pattern = str(tmp_path / "*" / "p.parquet")
    assert scanned_files(pl.scan_parquet(pattern)) == [*files, pattern]  # the pattern as given too
    serialized = pl.LazyFrame.serialize
    monkeypatch.setattr(pl.LazyFrame, "serialize", lambda *a, **k: pytest.fail("a plan was serialized"))
    in_memory = pl.DataFrame({"a": range(40_000), "b": "x"}).lazy()  # 40 000 rows: too many to serialize
    assert scanned_files(in_memory) == []
    assert scanned_files(pl.scan_parquet(files[0]).join(in_memory, on="a")) == files[:1]  # a file as given: no folder
    elided = pl.col("a").is_in(list(range(10)))
    assert scanned_files(pl.scan_parquet(files[0]).filter(elided)) == files[:1]
    folders = [str(tmp_path / f"d{i}") for i in range(3)]  # an expanded scan beside rows in memory: its folders too
    assert scanned_files(pl.scan_parquet(two).join(in_memory, on="a")) == [*two, *folders[:2], str(tmp_path)]
    assert scanned_files(pl.scan_parquet(pattern).filter(elided)) == [*files, *folders, str(tmp_path)]
    one = pl.scan_parquet(str(tmp_path / "d0"))  # review12 1: a folder of one file, listed by Polars: its folder
    assert scanned_files(one.join(in_memory, on="a")) == [files[0], folders[0]]
    monkeypatch.setattr(pl.LazyFrame, "serialize", serialized)


def test_a_folder_of_one_file_is_named_when_the_plan_visitor_cannot_show_a_node(tmp_path: Path) -> None:
    """A plan the visitor cannot read (map_batches) fell back to 'rows in memory' and never read the sources as
    given: a one-file folder protected its file only, and an output inside it was written (review13 3)."""
    from polars_anon.io import scanned_files

    (tmp_path / "one").mkdir()
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "one" / "p.parquet")
    mapped = pl.scan_parquet(str(tmp_path / "one")).map_batches(lambda df: df)
    assert str(tmp_path / "one") in [s.rstrip("/") for s in scanned_files(mapped)]


def test_a_python_source_names_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame from a Python function (pl.defer, an IO plugin) prints ``PYTHON SCAN []``: it was read as the file
    '', which protected the working folder, and every output there was refused as "an input of this run"."""
    import polars_anon as pa
    from polars_anon.io import scanned_files

    deferred = pl.defer(lambda: pl.DataFrame({"g": ["F", "M"] * 2}), schema={"g": pl.String})
    assert scanned_files(deferred) == []
    monkeypatch.chdir(tmp_path)
    result = pa.anonymize(deferred, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2)
    assert result.sink_parquet("out.parquet", report=False)["n_rows"] == 4
    assert pl.read_parquet(tmp_path / "out.parquet")["g"].to_list() == ["F", "M"] * 2


def test_the_checked_lazy_frame_names_the_files_it_reads(tmp_path: Path) -> None:
    """Anonymized.lazy() is a Python source of ours (it reads the input inside the library, where a changed input is
    named): its plan names the files the published table reads, so a writer still refuses them, anonymizing the
    frame again included."""
    import polars_anon as pa
    from polars_anon.encoded_io import write_encoded
    from polars_anon.errors import InvalidParameterError
    from polars_anon.io import scanned_files

    path = tmp_path / "in.parquet"
    pl.DataFrame({"g": ["F", "M"] * 2, "i": [0, 1, 2, 3]}).write_parquet(path)
    hierarchies = {"g": pa.Hierarchy.suppression(["F", "M"])}
    lazy = pl.scan_parquet(path).anon.k_anonymize(hierarchies=hierarchies, k=2, insensitive="i")
    assert "PYTHON[polars_anon checked] SCAN" in lazy.explain()
    assert scanned_files(lazy.filter(pl.col("i") > 0)) == [str(path)]
    again = pa.anonymize(lazy, hierarchies=hierarchies, k=2, insensitive="i")
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        again.sink_parquet(path, overwrite=True)
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        write_encoded(lazy, hierarchies, str(path), "fillparent", overwrite=True)
    assert pl.read_parquet(path)["i"].to_list() == [0, 1, 2, 3]  # untouched


def test_the_files_of_a_hive_folder_are_named_whatever_a_filter_prunes(tmp_path: Path) -> None:
    """The plan is read as given, not optimized: a filter on a hive partition prunes the other folder from the plan
    Polars runs, not from the files a writer protects (a filter may change; both folders are the input)."""
    from polars_anon.io import scanned_files

    files = [str(tmp_path / f"p={i}" / "x.parquet") for i in (1, 2)]
    for i, file in enumerate(files):
        Path(file).parent.mkdir()
        pl.DataFrame({"a": [i]}).write_parquet(file)
    lf = pl.scan_parquet(f"{tmp_path}/")
    assert scanned_files(lf.filter(pl.col("p") == 2)) == [*files, f"{tmp_path}/"]
    folders = [str(Path(f).parent) for f in files]  # an elided literal list: not serialized, the folders stand in
    assert scanned_files(lf.filter(pl.col("p").is_in(list(range(10))))) == [*files, *folders, str(tmp_path)]


@pytest.mark.parametrize("given", ["folder", "*.parquet", "**/*.parquet"])
@pytest.mark.parametrize("beside", ["nothing", "rows in memory"])
def test_a_folder_or_pattern_of_one_file_protects_a_new_part(tmp_path: Path, given: str, beside: str) -> None:
    """review12 1: a folder or a pattern holding ONE file was not protected (Polars prints the one file it expands
    to): a new part written inside it would be read by the next scan of it."""
    import polars_anon as pa
    from polars_anon.errors import InvalidParameterError

    parts = tmp_path / "d"
    parts.mkdir()
    pl.DataFrame({"g": ["F", "M"] * 2, "i": [0, 1, 2, 3]}).write_parquet(parts / "p0.parquet")
    lf = pl.scan_parquet(f"{parts}/" if given == "folder" else f"{parts}/{given}")
    if beside == "rows in memory":
        lf = pl.concat([lf, pl.LazyFrame({"g": ["F", "M"], "i": [4, 5]})])
    result = pa.anonymize(lf, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    target = parts / ("sub" if given.startswith("**") else "") / "part-new.parquet"
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        result.sink_parquet(target, report=False)
    assert not target.exists()


@pytest.mark.parametrize("given", ["folder", "*.parquet", "list"])
def test_a_linked_file_inside_a_read_folder_stays_protected(tmp_path: Path, given: str) -> None:
    """review12 2: real/ holds p0.parquet and p2.parquet, a link to else/ext.parquet; a scan of real/ then wrote
    else/ext.parquet (the sources as given replaced the expanded files instead of adding to them)."""
    import polars_anon as pa
    from polars_anon.errors import InvalidParameterError

    (tmp_path / "real").mkdir()
    (tmp_path / "else").mkdir()
    frame = pl.DataFrame({"g": ["F", "M"] * 2, "i": [0, 1, 2, 3]})
    frame.write_parquet(tmp_path / "real" / "p0.parquet")
    frame.write_parquet(tmp_path / "else" / "ext.parquet")
    (tmp_path / "real" / "p2.parquet").symlink_to(tmp_path / "else" / "ext.parquet")
    real = tmp_path / "real"
    source = {
        "folder": f"{real}/",
        "*.parquet": f"{real}/*.parquet",
        "list": [real / "p0.parquet", real / "p2.parquet"],
    }
    result = pa.anonymize(
        pl.scan_parquet(source[given]), hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i"
    )
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        result.sink_parquet(tmp_path / "else" / "ext.parquet", report=False, overwrite=True)
    assert pl.read_parquet(tmp_path / "else" / "ext.parquet")["i"].to_list() == [0, 1, 2, 3]


def test_rows_in_memory_beside_a_scan_of_three_folders_protect_every_file(tmp_path: Path) -> None:
    """review12 5: rows in memory beside a ** scan of 3 files protected only the first printed file (and its folder):
    an output onto the third replaced an input."""
    import polars_anon as pa
    from polars_anon.errors import InvalidParameterError

    for s in "abc":
        (tmp_path / s).mkdir()
        pl.DataFrame({"g": ["F", "M"], "i": [1, 2]}).write_parquet(tmp_path / s / "p.parquet")
    mem = pl.LazyFrame({"g": ["F", "M"] * 20_000, "i": pl.Series([7] * 40_000)})  # too many rows to serialize the plan
    lf = pl.concat([pl.scan_parquet(f"{tmp_path}/**/*.parquet"), mem])
    result = pa.anonymize(lf, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    for target in (tmp_path / "c" / "p.parquet", tmp_path / "new.parquet"):
        with pytest.raises(InvalidParameterError, match="is an input of this run"):
            result.sink_parquet(target, report=False, overwrite=True)
    assert pl.read_parquet(tmp_path / "c" / "p.parquet")["i"].to_list() == [1, 2]


@pytest.mark.parametrize(("given", "n_parts"), [("*.parquet", 3), (".", 3), ("folder", 3), ("link", 3), ("folder", 2)])
def test_a_table_is_never_written_into_the_files_or_folder_it_reads(tmp_path: Path, given: str, n_parts: int) -> None:
    """review8 F3: a glob or a folder of parts scanned, an output onto one of its parts (or a new part beside them)
    was written, even over an input part with overwrite=True (mend7: a new part in a folder of two parts still was).
    """
    import polars_anon as pa
    from polars_anon.errors import InvalidParameterError

    parts = tmp_path / "d"
    parts.mkdir()
    for i in range(n_parts):
        pl.DataFrame({"g": ["F", "M"] * 2, "i": [i] * 4}).write_parquet(parts / f"part-{i}.parquet")
    source = parts / "*.parquet" if given == "*.parquet" else parts
    if given == "link":  # review9 H3: a folder read through a link protected nothing
        source = tmp_path / "lnk"
        source.symlink_to(parts)
    lf = pl.scan_parquet(source)
    result = pa.anonymize(lf, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    for target in (parts / "part-1.parquet", parts / "new.parquet"):
        with pytest.raises(InvalidParameterError, match="is an input of this run"):
            result.sink_parquet(target, overwrite=True, report_html=False)
    assert pl.read_parquet(parts / "part-1.parquet")["i"].to_list() == [1] * 4


def test_a_read_pattern_protects_the_files_it_matches_as_the_engines_glob(tmp_path: Path) -> None:
    """mend7: the pattern test was fnmatch, where '*' crosses '/': a read of d/*.parquet refused d/sub/x.parquet,
    which Polars', DuckDB's and Spark's globs never read (checked by hand: each reads top.parquet only)."""
    from polars_anon.errors import InvalidParameterError
    from polars_anon.outputs import Outputs

    d = tmp_path / "d"
    one_level, any_depth = Outputs(reads=[str(d / "*.parquet")]), Outputs(reads=[str(d / "**" / "*.parquet")])
    assert one_level.check(d / "sub" / "x.parquet") == d / "sub" / "x.parquet"
    assert one_level.check(tmp_path / "x.parquet") == tmp_path / "x.parquet"
    for outputs, target in ((one_level, d / "x.parquet"), (any_depth, d / "x.parquet"), (any_depth, d / "a" / "b.pq")):
        if target.suffix == ".pq":
            assert outputs.check(target) == target  # '*.parquet' does not match 'b.pq'
            continue
        with pytest.raises(InvalidParameterError, match="is an input of this run"):
            outputs.check(target)
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        any_depth.check(d / "a" / "b" / "x.parquet")


def test_encode_classes_never_replaces_a_folder_holding_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review20 #4: the input inside the ``classes`` folder that --overwrite replaces was deleted (rc 0)."""
    pl.DataFrame({"sex": ["F", "M"] * 3}).write_parquet(tmp_path / "pub.parquet")
    common = ["--hierarchy", "sex=suppress", "--encoding", "fillparent", "--layout", "classes", "--output"]
    assert cli.main(["encode", str(tmp_path / "pub.parquet"), *common, str(tmp_path / "enc")]) == 0
    mine = tmp_path / "enc" / "mine.parquet"
    (tmp_path / "pub.parquet").rename(mine)
    capsys.readouterr()
    before = _snapshot(tmp_path)
    assert cli.main(["encode", str(mine), *common, str(tmp_path / "enc"), "--overwrite"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert "'" + str(tmp_path / "enc") + "' is a folder that holds" in said.err and "mine.parquet" in said.err
    assert _snapshot(tmp_path) == before


def test_an_existing_file_named_with_brackets_is_that_file_not_a_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review20 item 12: the docs say an existing ``p[1].parquet`` is read as that file; the output ``p1.parquet``
    (which the pattern would match) was refused as "an input of this run". The file is published from; p1 is new."""
    pl.DataFrame({"id": list(range(6)), "sex": ["F", "M"] * 3}).write_parquet(tmp_path / "p[1].parquet")
    (tmp_path / "job.toml").write_text(
        'input = "p[1].parquet"\noutput = "p1.parquet"\nk = 2\ninsensitive = "id"\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--json"]) == 0, capsys.readouterr().err
    assert pl.read_parquet(tmp_path / "p1.parquet")["id"].sort().to_list() == list(range(6))


def _lock(folder: Path) -> Callable[[], None]:
    """Make `folder` refuse new files: ``chattr +i`` as root (root ignores permissions), mode 0o555 otherwise;
    returns the undo. Skips where neither holds."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], check=False).returncode:
            pytest.skip("root without chattr +i on this file system: no folder refuses root's new files")
        return lambda: subprocess.run(["chattr", "-i", str(folder)], check=True) and None
    folder.chmod(0o555)
    return lambda: folder.chmod(0o755)


UNWRITABLE = [
    ("anonymize", ["anonymize", "{w}/job_ro.toml"], "output"),
    ("risk-json", ["risk", "{w}/t.parquet", "--qids", "sex", "--json", "{w}/ro/r.json"], "--json"),
    ("metrics-json", ["metrics", "{w}/t.parquet", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--json",
                      "{w}/ro/m.json"], "--json"),
    ("demo", ["demo", "--rows", "100", "--out", "{w}/ro"], "output"),
    ("encode", ["encode", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--encoding", "fillparent", "--output",
                "{w}/ro/e.parquet"], "encoding"),
    ("encode-classes", ["encode", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--encoding", "fillparent",
                        "--layout", "classes", "--output", "{w}/ro/new/enc"], "encoding"),
    ("report", ["report", "{w}/ro/t.report.json"], "report page"),
    ("explore", ["explore", "{w}/job_ro.toml"], "output"),
]  # a table: one case a line  # fmt: skip


@pytest.mark.parametrize(("args", "what"), [c[1:] for c in UNWRITABLE], ids=[c[0] for c in UNWRITABLE])
def test_an_output_folder_that_takes_no_new_file_is_one_line_before_any_work(
    args: list[str], what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review20 item 7: an existing output folder that does not take new files was a PermissionError traceback after
    the whole computation; now one line naming the folder, exit 2, nothing on standard output, the folder as it
    was."""
    w = tmp_path / "w"
    (w / "ro").mkdir(parents=True)
    pl.DataFrame({"id": list(range(6)), "sex": ["F", "M"] * 3}).write_parquet(w / "t.parquet")
    (w / "job_ro.toml").write_text(
        'input = "t.parquet"\noutput = "ro/o.parquet"\nk = 2\ninsensitive = "id"\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    (w / "ro" / "t.report.json").write_text('{"k": 2, "method": "fulldomain"}')
    undo = _lock(w / "ro")
    try:
        code = cli.main([a.replace("{w}", str(w)) for a in args])
        assert sorted(p.name for p in (w / "ro").iterdir()) == ["t.report.json"]
    finally:
        undo()
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"polars-anon: error: cannot write {what} '{w / 'ro'}/"), line
    assert f"the folder '{w / 'ro'}' does not take new files" in line


def test_a_write_the_file_system_refuses_inside_an_engine_is_one_line(tmp_path: Path) -> None:
    """review20 item 7, a URI output on Spark: the folder is not asked beforehand (its file system answers when
    written), and the refusal came as screens of Java trace. Spark's words (Hadoop's ``Mkdirs failed``, as a
    ``file://`` output into a chattr +i folder gave, checked by hand: exit 2 and this one line) become one line."""
    from polars_anon.errors import OutputError
    from polars_anon.outputs import Outputs, staged_write

    trace = "An error occurred\n: org.apache.spark.SparkException: Job aborted\njava.io.IOException: Mkdirs failed to "
    trace += "create file:/x/.o.parquet.1.tmp/_temporary\n\tat org.apache.hadoop.fs.ChecksumFileSystem.create"

    def spark_write(tmp: object) -> None:
        raise RuntimeError(trace)

    with Outputs() as out, pytest.raises(OutputError) as caught:
        staged_write(out, tmp_path / "o.parquet", spark_write)
    assert str(caught.value) == (
        f"cannot write '{tmp_path / 'o.parquet'}': the file system refused it (Mkdirs failed to create); nothing "
        "was written"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_folder_written_whole_replaces_only_a_spark_output_or_its_own(tmp_path: Path) -> None:
    """hunt48 #2: a folder target (Spark's table, an encoding's layout) replaced any folder with overwrite. Only a
    Spark output or a folder marked by encode's ``encoding.json`` may be; a user's folder (or an empty one) never."""
    from polars_anon.errors import OutputError
    from polars_anon.outputs import Outputs

    user, spark, mine, empty = (tmp_path / f"{n}.parquet" for n in ("user", "spark", "mine", "empty"))
    for folder in (user, spark, mine, empty):
        folder.mkdir()
    (user / "thesis.docx").write_text("mine")
    (user / "_SUCCESS").write_text("")
    for name in ("part-00000-x.snappy.parquet", ".part-00000-x.snappy.parquet.crc", "_SUCCESS", "._SUCCESS.crc"):
        (spark / name).write_text("")
    (mine / "encoding.json").write_text("{}")
    out = Outputs(overwrite=True)
    for folder, entry in ((user, "'thesis.docx'"), (empty, "nothing")):
        with pytest.raises(OutputError, match=f"is a folder that is not a Spark output.*holds {entry}"):
            out.check(folder, file=False)
    assert [out.check(f, file=False) for f in (spark, mine)] == [spark, mine]


@pytest.mark.parametrize("reader", ["polars", "duckdb"])
@pytest.mark.parametrize("target_as_uri", [False, True])
def test_an_input_scanned_by_a_file_uri_is_never_replaced(tmp_path: Path, reader: str, target_as_uri: bool) -> None:
    """hunt48 #3: a file scanned as ``file://...`` (Polars, DuckDB's read_parquet) and written as a plain path (or
    the other way) was replaced with overwrite=True: the URI and the path were taken for two locations."""
    import duckdb

    import polars_anon as pa
    from polars_anon.errors import InvalidParameterError

    source = tmp_path / "in.parquet"
    pl.DataFrame({"g": ["F", "M"] * 2, "i": [1] * 4}).write_parquet(source)
    uri = f"file://{source}"
    data = pl.scan_parquet(uri) if reader == "polars" else duckdb.sql(f"FROM read_parquet('{uri}')")
    engine = "polars" if reader == "polars" else "duckdb"
    h = {"g": pa.Hierarchy.suppression(["F", "M"])}
    result = pa.anonymize(data, hierarchies=h, k=2, insensitive="i", engine=engine)
    with pytest.raises(InvalidParameterError, match="is an input of this run"):
        result.sink_parquet(uri if target_as_uri else source, overwrite=True, report=False)
    assert pl.read_parquet(source)["g"].to_list() == ["F", "M"] * 2


@pytest.mark.parametrize("linked", ["table", "report"])
def test_a_dangling_link_at_an_output_path_is_an_existing_output(tmp_path: Path, linked: str) -> None:
    """hunt48 #9: a symlink to nothing at the table's (or the report's) path was replaced without overwrite (it
    does not `exist()`); it is an existing output: refused, left as it is, replaced only with overwrite."""
    import polars_anon as pa
    from polars_anon.errors import OutputExistsError

    frame = pl.DataFrame({"g": ["F", "M"] * 2, "i": [1] * 4})
    result = pa.anonymize(frame, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    link = tmp_path / ("t.parquet" if linked == "table" else "t.report.json")
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputExistsError, match="exists"):
        result.sink_parquet(tmp_path / "t.parquet", report_html=False)
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [link.name]
    result.sink_parquet(tmp_path / "t.parquet", report_html=False, overwrite=True)
    assert not link.is_symlink() and link.is_file()


@pytest.mark.parametrize("name", ["L" * 247 + ".parquet", "é" * 123 + ".parquet"], ids=["ascii", "two-byte"])
def test_a_long_legal_file_name_is_written(tmp_path: Path, name: str) -> None:
    """hunt48 #10: a legal name of 248 (or 254) bytes was refused as "does not take new files (File name too
    long)": the probe and temporary names added 18-20 bytes past 255. They are cut to fit, still unique."""
    import polars_anon as pa

    frame = pl.DataFrame({"g": ["F", "M"] * 2, "i": [1] * 4})
    result = pa.anonymize(frame, hierarchies={"g": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    assert len(name.encode()) > 255 - 20
    result.sink_parquet(tmp_path / name, report=False)
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert pl.read_parquet(tmp_path / name).height == 4


def test_a_file_named_after_a_long_output_past_255_bytes_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend58: a legal output name of 254 bytes gave a report name of 258 ('<stem>.report.json'), and an encoding's
    ('<stem>.oneclass.parquet') likewise: the file system's raw OSError 'File name too long' (failing before). Refused
    before any work, naming the file and the way out; nothing written."""
    import polars_anon as pa

    frame = pl.DataFrame({"sex": ["F", "M"] * 2, "i": [1] * 4})
    result = pa.anonymize(frame, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=2, insensitive="i")
    name = "L" * 246 + ".parquet"
    with pytest.raises(pa.InvalidParameterError, match=r"^report '.*L\.report\.json': its file name is 258 bytes, "):
        result.sink_parquet(tmp_path / name)
    assert list(tmp_path.iterdir()) == []
    published = tmp_path / name
    frame.write_parquet(published)
    assert cli.main(["encode", str(published), "--hierarchy", "sex=suppress", "--encoding", "oneclass"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("polars-anon: error: encoding '") and err.count("\n") == 1
    assert "L.oneclass.parquet': its file name is 263 bytes, more than file systems take (255)" in err
    assert [p.name for p in tmp_path.iterdir()] == [name]
