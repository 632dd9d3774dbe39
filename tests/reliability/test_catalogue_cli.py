"""Bad-input catalogue of the command line (issue 12).

Every refusal exits 2 with exactly one line on stderr, ``polars-anon: error: ...``,
naming the culprit, and leaves the working folder byte-for-byte as before. The
cases are data (an argument list and the words the message must contain); a few run
in a fresh process to show that no traceback reaches the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from tests.conftest import REPO
from tests.reliability.snapshot import unchanged

T = pl.DataFrame(
    {"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6, "party": ["a", "b", "c"] * 4}
)

CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    # (id, arguments ({w} is the working folder), words the message must contain)
    (
        "check-not-utf8",
        ["check", "{w}/bad.csv", "--qids", "age", "--k", "2"],
        ("bad.csv", "not UTF-8", "0xe9", "line 3"),
    ),
    (
        "check-missing-file",
        ["check", "{w}/nope.parquet", "--qids", "age", "--k", "2"],
        ("nope.parquet", "does not exist"),
    ),
    ("check-not-parquet", ["check", "{w}/notes.parquet", "--qids", "age", "--k", "2"], ("notes.parquet", "as Parquet")),
    ("check-unknown-qid", ["check", "{w}/t.parquet", "--qids", "age,zip", "--k", "2"], ("qids ['zip']",)),
    ("check-no-qids", ["check", "{w}/t.parquet", "--qids", "", "--k", "2"], ("--qids",)),
    ("check-qid-twice", ["check", "{w}/t.parquet", "--qids", "age,age", "--k", "2"], ("['age'] more than once",)),
    ("check-k-zero", ["check", "{w}/t.parquet", "--qids", "age", "--k", "0"], ("k must be an integer >= 1, got 0",)),
    ("check-k-not-int", ["check", "{w}/t.parquet", "--qids", "age", "--k", "x"], ("check", "--k", "'x'")),
    (
        "check-separator",
        ["check", "{w}/t.csv", "--qids", "age", "--k", "2", "--separator", ";;"],
        ("separator", "';;'"),
    ),
    ("demo-method", ["demo", "--rows", "100", "--out", "{w}/demo", "--method", "magic"], ("--method", "'magic'")),
    ("demo-rows-zero", ["demo", "--rows", "0", "--out", "{w}/demo"], ("rows must be an integer >= 1, got 0",)),
    ("demo-k-zero", ["demo", "--rows", "100", "--k", "0", "--out", "{w}/demo"], ("k must be an integer >= 1, got 0",)),
    ("demo-k-above-rows", ["demo", "--rows", "100", "--k", "200", "--out", "{w}/demo"], ("k=200", "100 rows")),
    ("demo-out-is-a-file", ["demo", "--rows", "100", "--out", "{w}/t.parquet"], ("t.parquet", "is a file")),
    ("demo-exists", ["demo", "--rows", "100", "--out", "{w}/old-demo"], ("voters.parquet", "exists", "--overwrite")),
    ("encode-unknown", ["encode", "{w}/t.parquet", "--encoding", "magic", "--hierarchy", "sex=suppress"], ("'magic'",)),
    ("encode-hierarchy-form", ["encode", "{w}/t.parquet", "--hierarchy", "sex"], ("--hierarchy 'sex'", "NAME=SPEC")),
    ("encode-hierarchy-mask", ["encode", "{w}/t.parquet", "--hierarchy", "sex=mask:x"], ("sex=mask:x", "integers")),
    ("encode-hierarchy-mask-huge", ["encode", "{w}/t.parquet", "--hierarchy", "age=mask:100000000"],
     ("'mask'", "at most 100", "got 100000000")),
    ("encode-hierarchy-toml", ["encode", "{w}/t.parquet", "--hierarchy", "age={ mask = "], ("age={ mask = ", "TOML")),
    (
        "encode-unknown-qid",
        ["encode", "{w}/t.parquet", "--encoding", "fillparent", "--hierarchy", "zip=suppress"],
        ("qids ['zip']",),
    ),
    ("encode-no-hierarchy", ["encode", "{w}/t.parquet", "--encoding", "fillparent"], ("--hierarchy",)),
    (
        "encode-csv-output",
        ["encode", "{w}/t.parquet", "--encoding", "fillparent", "--hierarchy", "sex=suppress", "--output", "{w}/e.csv"],
        ("e.csv", ".parquet"),
    ),
    (
        "encode-output-is-its-input",
        [
            "encode",
            "{w}/t.parquet",
            "--encoding",
            "fillparent",
            "--hierarchy",
            "sex=suppress",
            "--output",
            "{w}/t.parquet",
        ],
        ("t.parquet", "is an input of this run"),
    ),
    (
        "encode-layout",
        ["encode", "{w}/t.parquet", "--layout", "tall", "--hierarchy", "sex=suppress"],
        ("--layout", "'tall'"),
    ),
    (
        "metrics-no-hierarchy",
        ["metrics", "{w}/t.parquet", "{w}/t.parquet", "--qids", "sex"],
        ("qids ['sex'] have no hierarchy",),
    ),
    (
        "metrics-unknown-name",
        ["metrics", "{w}/t.parquet", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--names", "nope"],
        ("unknown metric 'nope'",),
    ),
    (
        "metrics-json-exists",
        ["metrics", "{w}/t.parquet", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--json", "{w}/t.csv"],
        ("t.csv", "exists"),
    ),
    ("anonymize-no-job-file", ["anonymize", "{w}/nojob.toml"], ("nojob.toml", "cannot read job file")),
    ("anonymize-not-toml", ["anonymize", "{w}/broken.toml"], ("broken.toml", "not valid TOML")),
    # newuser4 gave the table itself and read "job file 't.csv' is not valid TOML": say what a job file holds
    (
        "anonymize-a-csv",
        ["anonymize", "{w}/t.csv"],
        (
            "t.csv' is a CSV file, not a job file: a job file (TOML) names the input",
            '/t.csv" / output = "out/t.parquet"',
        ),
    ),
    ("anonymize-a-parquet", ["anonymize", "{w}/t.parquet"], ("t.parquet' is a Parquet file, not a job file",)),
    ("explore-a-csv-by-content", ["explore", "{w}/rows.dat"], ("rows.dat' is a CSV file, not a job file",)),
    ("anonymize-unknown-flag", ["anonymize", "{w}/job.toml", "--force"], ("--force",)),
    ("no-command", [], ("command",)),
    # issue 27
    ("anonymize-master-not-spark", ["anonymize", "{w}/job.toml", "--master", "bogus://x"],
     ("--master 'bogus://x'", "is not a Spark master")),
    ("anonymize-master-on-polars", ["anonymize", "{w}/job.toml", "--master", "local[2]"],
     ("--master 'local[2]'", "engine 'spark'", "--engine spark")),
    ("anonymize-driver-tuples-on-polars", ["anonymize", "{w}/job.toml", "--driver-tuples", "5"],
     ("--driver-tuples 5", "'polars'", "--engine duckdb")),
    ("anonymize-driver-tuples-zero", ["anonymize", "{w}/job.toml", "--engine", "duckdb", "--driver-tuples", "0"],
     ("--driver-tuples must be an integer >= 1, got 0",)),
    ("anonymize-privacy-missing-parameter", ["anonymize", "{w}/job_l.toml"],
     ("[[privacy]] table 1", "needs option 'l'")),
    ("anonymize-duckdb-memory-limit", ["anonymize", "{w}/job_mem.toml"], ("DuckDB ran out of memory", "'1KB'")),
    ("anonymize-empty-input-builtin-hierarchy", ["anonymize", "{w}/job_empty.toml"], ("the input has no rows",)),
    ("anonymize-nan-in-a-float-qid", ["anonymize", "{w}/job_nan.toml"],
     ("column 'age' holds NaN in 2 rows", "pl.col('age').fill_nan(None)")),
    ("check-model-on-a-qid", ["check", "{w}/t.parquet", "--qids", "age,sex", "--k", "2", "--model",
                             '{model = "l-diversity", attribute = "sex", l = 2}'],
     ("l-diversity on 'sex'", "is a quasi-identifier")),
    ("check-model-unknown", ["check", "{w}/t.parquet", "--qids", "age", "--k", "2", "--model", '{model = "nope"}'],
     ("--model", "'nope'", "model must be one of")),
    ("check-model-not-a-table", ["check", "{w}/t.parquet", "--qids", "age", "--k", "2", "--model", "5"],
     ("--model '5'", "not a TOML inline table")),
    ("check-model-missing-parameter", ["check", "{w}/t.parquet", "--qids", "age", "--k", "2", "--model",
                                       '{model = "t-closeness", attribute = "party"}'],
     ("--model", "'t-closeness'", "needs option 't'")),
    ("risk-empty-table", ["risk", "{w}/empty.parquet", "--qids", "age"], ("risk: the table has no rows",)),
    # mend41 item 4: the risk command's refusals spoke Python (missing='wildcard') or missed the flag (--weights)
    ("risk-alpha-without-wildcard", ["risk", "{w}/t.parquet", "--qids", "age", "--alpha", "0.5"],
     ("--alpha 0.5", "add --missing wildcard, or drop --alpha")),
    ("risk-model-risk-without-weights", ["risk", "{w}/t.parquet", "--qids", "age,sex", "--model-risk", "CE"],
     ("--model-risk", "add --weights COLUMN")),
    ("risk-population-missing", ["risk", "{w}/t.parquet", "--qids", "age", "--population", "{w}/nope.parquet"],
     ("population table", "nope.parquet", "does not exist")),
    ("encode-proportional-suppressed-rows",
     ["encode", "{w}/pub10.parquet", "--original", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--output",
      "{w}/e.parquet"],
     ("'proportional'", "original has 12 rows", "published table has 10")),
    ("report-wrong-types", ["report", "{w}/badrep.json"], ("badrep.json", "key 'qids' must be array", "got 5")),
    ("report-wrong-item-type", ["report", "{w}/badrep2.json"], ("badrep2.json", "key 'qids[0]' must be string")),
    ("explore-risk-threshold-zero", ["explore", "{w}/job.toml", "--risk-threshold", "0"],
     ("risk_threshold", "--risk-threshold", "got 0")),
    ("explore-mdav-on-duckdb", ["explore", "{w}/job_duck.toml", "--methods", "mdav"],
     ("method 'mdav'", "engine 'duckdb'")),
    ("explore-mdav-on-spark", ["explore", "{w}/job.toml", "--engine", "spark", "--methods", "greedy,mdav"],
     ("explore: method 'mdav' on engine 'spark'", "works on the rows inside the engine")),
    ("explore-beyond-driver-tuples", ["explore", "{w}/job_duck.toml", "--driver-tuples", "1", "--methods", "greedy",
                                      "--k", "2"], ("explore", "more than driver_tuples=1 distinct")),
    ("explore-engine-unknown", ["explore", "{w}/job.toml", "--engine", "oracle"], ("--engine", "'oracle'")),
    ("check-reference-missing", ["check", "{w}/t.parquet", "--qids", "age,sex", "--k", "2", "--reference",
                                 "{w}/nope.parquet", "--model",
                                 '{model = "t-closeness", attribute = "party", t = 0.5}'],
     ("reference", "nope.parquet", "does not exist")),
    *((f"{command}-csv-row-with-{kind}-fields", [command, "{w}/" + f"{kind}.csv", "--qids", "age,sex", *more],
       (f"{kind}.csv' as CSV", f"record 4 (the header is record 1) has {n} fields, the header 4",
        "number of fields than the header"))
      for kind, n in (("fewer", 2), ("more", 5))
      for command, more in (("risk", []), ("check", ["--k", "1"]))),
    ("check-reference-unread", ["check", "{w}/t.parquet", "--qids", "age,sex", "--k", "2", "--reference",
                                "{w}/t.csv"], ("--reference", "t.csv", "t-closeness")),
    # review20 items 11, 12: a Polars error, a traceback or another file named before
    ("check-k-beyond-int64", ["check", "{w}/t.parquet", "--qids", "age", "--k", "9223372036854775808"],
     ("k must be at most 9223372036854775807", "got 9223372036854775808")),
    ("metrics-k-beyond-int64", ["metrics", "{w}/t.parquet", "{w}/t.parquet", "--hierarchy", "sex=suppress", "--k",
                                "99999999999999999999"], ("k must be at most", "got 99999999999999999999")),
    ("anonymize-output-empty", ["anonymize", "{w}/job_out_empty.toml"], ("key 'output' is empty",)),
    ("anonymize-input-empty", ["anonymize", "{w}/job_in_empty.toml"], ("key 'input' is empty",)),
    ("report-a-folder", ["report", "{w}", "--output", "{w}/x.html"], ("report '", "is a folder", "JSON file")),
]  # a table: one case an entry, as the columns above  # fmt: skip


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The working folder: inputs, a broken job file and an earlier demo (all must stay as they are)."""
    w = tmp_path / "w"
    (w / "old-demo").mkdir(parents=True)
    T.write_parquet(w / "t.parquet")
    T.write_csv(w / "t.csv")
    (w / "bad.csv").write_bytes(b"age,sex\n31,F\n33,\xe9\n")
    (w / "notes.parquet").write_text("not parquet at all")
    (w / "fewer.csv").write_text('id,age,sex,party\n0,31,F,a\n1,33,"M,x",b\n2,38\n')  # last row short
    (w / "more.csv").write_text('id,age,sex,party\n0,31,F,a\n1,33,"M,x",b\n2,38,F,c,extra\n')
    (w / "broken.toml").write_text("k = \n")
    (w / "rows.dat").write_text("age;sex\n31;F\n")
    (w / "job.toml").write_text(
        'input = "t.parquet"\noutput = "out.parquet"\nk = 2\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    (w / "old-demo" / "voters.parquet").write_bytes(b"an earlier demo")
    T.head(0).write_parquet(w / "empty.parquet")
    T.head(10).write_parquet(w / "pub10.parquet")  # as if two rows were suppressed
    (w / "badrep.json").write_text('{"k": 2, "method": "fulldomain", "qids": 5}')
    (w / "badrep2.json").write_text('{"k": 2, "method": "fulldomain", "qids": [1]}')
    base = 'input = "t.parquet"\noutput = "out.parquet"\nk = 2\ninsensitive = "id"\n'
    qids = '[qids.sex]\nhierarchy = "suppress"\n'
    (w / "job_l.toml").write_text(base + qids + '[[privacy]]\nmodel = "l-diversity"\nattribute = "party"\n')
    (w / "job_mem.toml").write_text(base + 'engine = "duckdb"\n' + qids + '[duckdb]\nmemory_limit = "1KB"\n')
    (w / "job_empty.toml").write_text(
        base.replace("t.parquet", "empty.parquet") + "[qids.age]\nhierarchy = { mask = 1 }\n"
    )
    (w / "job_duck.toml").write_text(base + 'engine = "duckdb"\n' + qids)
    nan = pl.when(pl.col("id").is_in([0, 5])).then(float("nan")).otherwise(pl.col("age")).alias("age")
    T.with_columns(nan).write_parquet(w / "nan.parquet")
    (w / "job_nan.toml").write_text(base.replace("t.parquet", "nan.parquet") + 'method = "mdav"\n[qids.age]\n' + qids)
    (w / "job_out_empty.toml").write_text(base.replace('"out.parquet"', '""') + qids)
    (w / "job_in_empty.toml").write_text(base.replace('"t.parquet"', '""') + qids)
    return w


def one_line_error(err: str, culprit: tuple[str, ...]) -> str:
    """The single line a refusal prints (asserting its form and that it names the culprit)."""
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines}"
    assert lines[0].startswith("polars-anon: error: ") and "Traceback" not in err
    missing = [c for c in culprit if c not in lines[0]]
    assert not missing, f"{lines[0]!r} does not name {missing}"
    return lines[0]


@pytest.mark.parametrize(("args", "culprit"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cli_refusal(args: list[str], culprit: tuple[str, ...], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{w}", str(work)) for a in args]
    with unchanged(work):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse exits
            code = exc.code
    assert code == 2
    one_line_error(capsys.readouterr().err, culprit)


SUBPROCESS = [
    "check-not-utf8",
    "check-separator",
    "demo-out-is-a-file",
    "encode-csv-output",
    "check-k-not-int",
    "anonymize-duckdb-memory-limit",
    "report-wrong-types",
    "check-model-on-a-qid",
]


@pytest.mark.parametrize("case", SUBPROCESS)
def test_no_traceback_reaches_the_terminal(case: str, work: Path) -> None:
    _, args, culprit = next(c for c in CASES if c[0] == case)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with unchanged(work):
        proc = subprocess.run(
            [sys.executable, "-m", "polars_anon.cli", *(a.replace("{w}", str(work)) for a in args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 2 and proc.stdout == ""
    one_line_error(proc.stderr, culprit)


@pytest.mark.parametrize(
    "original", [["--original", "nope.parquet"], ["--original", "notes.parquet"], []], ids=["missing", "odd", "none"]
)
@pytest.mark.parametrize(
    ("columns", "named"),
    [
        (
            ["--hierarchy", "zip=suppress"],
            "qids ['zip'] not in the frame; its columns are ['id', 'age', 'sex', 'party']",
        ),
        (["--hierarchy", "sex=suppress", "--class-col", "cls"], "class_col ['cls'] not in the frame"),
    ],
    ids=["qid", "class-col"],
)
def test_encode_names_an_unknown_column_before_its_original(
    original: list[str], columns: list[str], named: str, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """encode read --original (refusing one that is missing or no Parquet file) or asked for one before it checked
    the published table's columns, so a command wrong in both named the --original first; it checks the columns
    first now, as check names an unknown qid before its --reference and pa.encode before its original."""
    given = [str(work / a) if a.endswith(".parquet") else a for a in original]
    argv = ["encode", str(work / "t.parquet"), *columns, *given, "--encoding", "proportional"]
    with unchanged(work):
        assert cli.main([*argv, "--output", str(work / "e.parquet")]) == 2
    assert named in one_line_error(capsys.readouterr().err, ())


@pytest.mark.parametrize(
    "second",
    [
        ["risk", "--population", "nope.parquet"],
        [
            "check",
            "--k",
            "2",
            "--reference",
            "nope.parquet",
            "--model",
            '{model = "t-closeness", attribute = "party", t = 0.5}',
        ],
    ],
    ids=["risk-population", "check-reference"],
)
def test_risk_and_check_name_an_unknown_qid_before_a_missing_second_file(
    second: list[str], work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """risk read --population (refusing it as missing) before it checked the qids; it checks them first now, as
    check does before its --reference and encode before its --original."""
    command, *rest = second
    argv = [
        command,
        str(work / "t.parquet"),
        "--qids",
        "zip",
        *(str(work / a) if a == "nope.parquet" else a for a in rest),
    ]
    with unchanged(work):
        assert cli.main(argv) == 2
    assert "qids ['zip'] not in the frame" in one_line_error(capsys.readouterr().err, ())


@pytest.mark.parametrize("model", [[], ["--model", '{model = "l-diversity", attribute = "party", l = 2}']])
def test_check_refuses_an_empty_table_as_pa_check_does(
    model: list[str], work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty table has no class to vouch for. Without --model the command printed a summary (0 classes) and
    exited 1 with its own words; with one, it gave pa.check's refusal. Both are now pa.check's: one line, exit 2,
    nothing on standard output."""
    with pytest.raises(pa.InfeasibleError) as python:
        pa.check(T.head(0), ["age"], k=2)
    assert str(python.value) == "check: the table has no rows; there is nothing to check"
    with unchanged(work):
        assert cli.main(["check", str(work / "empty.parquet"), "--qids", "age", "--k", "2", *model]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and one_line_error(captured.err, ()) == f"polars-anon: error: {python.value}"


def test_demo_drops_the_direct_identifiers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--rows", "2000", "--k", "5", "--out", str(tmp_path / "d")]) == 0
    published = pl.read_parquet(tmp_path / "d" / "anonymized.parquet")
    report = json.loads((tmp_path / "d" / "report.json").read_text())
    assert published.columns == ["zip", "gender", "race", "birth_year", "party"]
    assert {c["name"]: c["type"] for c in report["columns"]} == {
        "voter_id": "identifying",
        "name": "identifying",
        "zip": "quasi-identifier",
        "gender": "quasi-identifier",
        "race": "quasi-identifier",
        "birth_year": "quasi-identifier",
        "party": "sensitive",
    }
    assert "voter_id and name were dropped" in capsys.readouterr().out


def test_a_date_polars_cannot_write_as_text_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """hunt47 cli5: a Date qid holding DuckDB's 'infinity' (day 2147483647) ended a Mondrian job with a
    pyo3_runtime.PanicException traceback, exit 1; now one line naming the column and the value, exit 2."""
    days = pl.Series("d", [2147483647, 18262, 18262, 18262], dtype=pl.Int32).cast(pl.Date)
    pl.DataFrame({"d": days, "sex": ["F"] * 4}).write_parquet(tmp_path / "data.parquet")
    job = 'input = "data.parquet"\noutput = "out/o.parquet"\nk = 3\nmethod = "mondrian"\n[qids.d]\n'
    (tmp_path / "job.toml").write_text(job + '[qids.sex]\nhierarchy = "suppress"\n')
    with unchanged(tmp_path):
        assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "column 'd': 1 values are beyond the days Polars can write" in captured.err
    assert "[2147483647] as Date numbers" in captured.err
