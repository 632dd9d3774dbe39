"""The polars-anon command line: demo, anonymize (job file), check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.demo import voter_register
from polars_anon.job import Job
from tests.conftest import ADULT_QIDS

QIDS4 = ADULT_QIDS[:4]


def test_demo_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert cli.main(["demo", "--rows", "20000", "--k", "5", "--out", str(out)]) == 0
    published = pl.read_parquet(out / "anonymized.parquet")
    report = json.loads((out / "report.json").read_text())
    assert "name" not in published.columns and "voter_id" not in published.columns and published.height == 20000
    assert published.group_by(["zip", "gender", "race", "birth_year"]).len()["len"].min() >= 5
    assert report["min_class_size"] >= 5 and report["k"] == 5 and report["n_rows"] == 20000
    assert {"k", "min_class_size", "n_classes", "n_rows", "suppressed", "method", "qids", "seconds"} <= set(report)
    voters = pl.read_parquet(out / "voters.parquet")
    assert published["party"].equals(voters["party"])  # rows line up by position; the ids were dropped
    assert [c["type"] for c in report["columns"] if c["name"] in ("voter_id", "name")] == ["identifying", "identifying"]
    said = capsys.readouterr().out
    assert "checked independently" in said and f"open {out / 'report.html'} in a browser" in said
    # anonymize's summary (newuser4: the demo left out the method advice anonymize printed): the report's advice,
    # by its words (fulldomain generalizes race and birth_year to the root here; topdown keeps most of them)
    advice = report["method_advice"]["text"]
    assert (
        advice.startswith("method advice: topdown would lose ") and f"-> {out / 'anonymized.parquet'}; {advice}" in said
    )
    assert "\nre-identification risk left: at most " in said
    assert "what the figures mean" in said and (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    before = (out / "anonymized.parquet").read_bytes()
    assert cli.main(["demo", "--rows", "20000", "--out", str(out)]) == 2  # exists, no --overwrite
    assert (out / "anonymized.parquet").read_bytes() == before


def test_demo_local_suppression_says_the_cells_it_blanked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's summary and explanation said "suppressed 0 rows" and "every published combination is shared by at
    least k voters" for local suppression, which keeps every row and blanks key cells (mend34): the cells blanked, as
    the published file's missing cells count them, and the wildcard reading."""
    out = tmp_path / "demo"
    assert cli.main(["demo", "--rows", "5000", "--out", str(out), "--method", "local_suppression", "-q"]) == 0
    published = pl.read_parquet(out / "anonymized.parquet")
    blanked = sum(published[q].null_count() for q in ("zip", "gender", "race", "birth_year"))
    said = capsys.readouterr().out
    assert blanked > 0 and f"\n{blanked:,} of {5000 * 4:,} key cells blanked (set missing; " in said
    assert "suppressed 0" not in said and "every published combination" not in said
    assert "every published record matches at least 10 voters on zip, gender, race, birth_year" in said


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"polars-anon {version('polars_anon')}\n"


def test_voter_register_is_seeded() -> None:
    assert voter_register(1000, seed=3).equals(voter_register(1000, seed=3))
    assert not voter_register(1000, seed=3).equals(voter_register(1000, seed=4))


def test_anonymize_job_on_adult(tmp_path: Path, adult_dir: Path) -> None:
    qids = "\n".join(f'[qids.{q}]\nhierarchy = "{adult_dir}/adult_hierarchy_{q}.csv"' for q in QIDS4)
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "{adult_dir}/adult.csv"\nseparator = ";"\noutput = "out/adult_k10.parquet"\n'
        f'k = 10\nmethod = "fulldomain"\nsensitive = "salary-class"\nmax_suppressed = 100\n{qids}\n'
    )
    assert cli.main(["anonymize", str(job)]) == 0
    report = json.loads((tmp_path / "out" / "adult_k10.report.json").read_text())
    published = pl.read_parquet(tmp_path / "out" / "adult_k10.parquet")
    assert report["suppressed"] <= 100 and published.height == 30162 - report["suppressed"]
    assert published.group_by(QIDS4).len()["len"].min() >= 10
    assert cli.main(["check", str(tmp_path / "out" / "adult_k10.parquet"), "--qids", ",".join(QIDS4), "--k", "10"]) == 0


def test_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"a": [1, 1, 2]}).write_parquet(path)
    assert cli.main(["check", str(path), "--qids", "a", "--k", "2"]) == 1
    assert json.loads(capsys.readouterr().out)["min_class_size"] == 1
    assert cli.main(["check", str(path), "--qids", "b", "--k", "2"]) == 2
    assert "qids ['b'] not in the frame" in capsys.readouterr().err


def test_encode_with_a_job_builds_the_hierarchies_from_the_jobs_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``encode --job`` without ``--original``: the job's built-in hierarchies are built from the job's input (the
    published ages are generalized: '*' is no integer), so the encoding equals the API's on hand-built hierarchies."""
    ages = [23, 27, 31, 35, 52, 58, 23, 27]
    pl.DataFrame(
        {"age": ages, "city": ["Oslo", "Oslo", "Bergen", "Bergen", "Oslo", "Bergen", "Oslo", "Oslo"]}
    ).write_parquet(tmp_path / "in.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\n'
        '[qids.age]\nhierarchy = { intervals = [10, 20] }\n[qids.city]\nhierarchy = "suppress"\n'
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    args = ["encode", str(tmp_path / "out.parquet"), "--encoding", "fillparent", "--job", str(tmp_path / "job.toml")]
    assert cli.main(args) == 0, capsys.readouterr().err
    hand = {"age": pa.Hierarchy.intervals(ages, [10, 20]), "city": pa.Hierarchy.suppression(["Bergen", "Oslo"])}
    expected = pa.encode(pl.scan_parquet(tmp_path / "out.parquet"), hand, "fillparent").collect()
    assert pl.read_parquet(tmp_path / "out.fillparent.parquet").equals(expected)


def test_each_command_reads_its_job_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job file is read and parsed once per command (``encode --job`` read it twice: once for the files it
    reads, once for its hierarchies; so did ``metrics``, ``risk`` and ``check`` with ``--job``, and ``explore``)."""
    pl.DataFrame({"age": [23, 27, 31, 35] * 2, "city": ["Oslo", "Bergen"] * 4}).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\n'
        '[qids.age]\nhierarchy = { intervals = [10, 20] }\n[qids.city]\nhierarchy = "suppress"\n'
    )
    out = str(tmp_path / "out.parquet")
    pl.read_parquet(tmp_path / "in.parquet").cast(pl.String).write_parquet(out)  # published at level 0
    loads: list[str] = []
    load = Job.load.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Job], path: str | Path, **flags: object) -> Job:
        loads.append(str(path))
        return load(cls, path, **flags)

    monkeypatch.setattr(Job, "load", classmethod(counted))
    commands = [
        ["encode", out, "--encoding", "fillparent", "--job", str(job)],
        ["metrics", str(tmp_path / "in.parquet"), out, "--job", str(job)],
        ["risk", out, "--qids", "age,city", "--job", str(job)],
        ["check", out, "--qids", "age,city", "--k", "2", "--job", str(job)],
    ]
    for argv in commands:
        loads.clear()
        assert cli.main(argv) == 0, capsys.readouterr().err
        assert loads == [str(job)], argv[0]


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (  # Spark's failure, as py4j hands it over (the CSV read FAILFAST; the cast to the type Polars read)
            "An error occurred while calling o139.parquet.\n: org.apache.spark.SparkException: [FAILED_READ_FILE] ..."
            "\nCaused by: org.apache.spark.SparkException: [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed "
            "records are detected in record parsing: [27,Oslo].  SQLSTATE: 22023\n\tat org.apache.spark...",
            ("'t.csv' as CSV: [MALFORMED_RECORD_IN_PARSING", "[27,Oslo]", "number of fields than the header"),
        ),
        (
            '[CAST_INVALID_INPUT] The value \'abc\' of the type "STRING" cannot be cast to "BIGINT" because it is '
            "malformed. Correct the value as per the syntax, or change its target type. SQLSTATE: 22018\n== DataFrame",
            ("'t.csv' as CSV: [CAST_INVALID_INPUT] The value 'abc'", "null_values"),
        ),
    ],
)
def test_a_spark_csv_read_failure_is_one_line(error: str, words: tuple[str, ...]) -> None:
    """Spark's CSV failures (a Spark session per case would cost seconds: the message is what is tested)."""
    import argparse

    message = cli.csv_read_error(argparse.Namespace(file="t.csv"), RuntimeError(error))
    assert message is not None and "\n" not in message and "SQLSTATE" not in message
    assert all(w in message for w in words), message
    assert cli.csv_read_error(argparse.Namespace(file="t.parquet"), RuntimeError(error)) is None  # not a CSV input


def test_a_terminal_summary_says_whether_each_privacy_model_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with [[privacy]] models did not say whether each held (newuser4). Ages 31-38 at one band (30-39): the
    classes (30-39, F) and (30-39, M) hold parties {a, b} and {b, a}: 2 distinct values each (l=2 holds); each class's
    distribution equals the table's (t = 0 <= 0.5 holds)."""
    pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"], "party": ["a", "b", "b", "a"]}).write_parquet(
        tmp_path / "t.parquet"
    )
    (tmp_path / "job.toml").write_text(
        'input = "t.parquet"\noutput = "o.parquet"\nk = 2\nreport_html = false\n'
        "[qids.age]\nhierarchy = { intervals = [5, 10], bottom = 30, top = 40 }\n"
        '[qids.sex]\nhierarchy = "suppress"\n'
        '[[privacy]]\nmodel = "l-diversity"\nattribute = "party"\nl = 2\n'
        '[[privacy]]\nmodel = "t-closeness"\nattribute = "party"\nt = 0.5\n'
    )
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 0
    assert (
        "privacy models on the published table: l-diversity (attribute=party, l=2, variant=distinct) held; "
        "t-closeness (attribute=party, t=0.5) held"
    ) in capsys.readouterr().out.splitlines()


def test_anonymize_on_a_terminal_prints_a_summary_and_the_json_with_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """anonymize printed the whole report JSON (hundreds of lines) on a terminal too: now a few lines there, the JSON
    with --json (and to a pipe or a file: what every other test of the command reads)."""
    ages = [30, 30, 30, 31, 31, 31, 32]
    (tmp_path / "t.csv").write_text("id,age\n" + "".join(f"{i},{a}\n" for i, a in enumerate(ages)))
    job = 'input = "t.csv"\noutput = "o.parquet"\nk = 3\nmax_suppressed = 1\ninsensitive = "id"\nreport_html = false\n'
    (tmp_path / "job.toml").write_text(job + '[qids.age]\nhierarchy = "suppress"\n')
    argv = ["anonymize", str(tmp_path / "job.toml"), "-q", "--overwrite"]
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(argv) == 0
    said = capsys.readouterr()
    assert said.err == "" and said.out.splitlines() == [
        f"polars-anon: fulldomain k=3: published 6 rows in 2 classes, smallest 3 -> {tmp_path / 'o.parquet'}",
        "suppressed 1 of 7 input rows",
        # the one 32 suppressed (1 a cell), 30 and 31 kept: 1/7; (the loss was labelled with the method's metric)
        "average cell loss 0.1429 (0 = every value published as is, 1 = every value generalized to the root)",
        # classes of 3 and 3: each record 1/3, all above the report's threshold 0.2
        "re-identification risk left: at most 33.33% a record (1 in 3), 100.0% of the records above 20%",
        f"report: {tmp_path / 'o.report.json'} (the whole report on standard output: --json, or a pipe)",
    ]
    assert cli.main([*argv, "--json"]) == 0
    said = capsys.readouterr()
    rep = json.loads(said.out)
    assert (rep["n_rows"], rep["suppressed"], rep["loss"]) == (6, 1, pytest.approx(1 / 7))
    assert said.err == ""  # -q: the JSON alone (spark-submit merges standard error into standard output)
    assert cli.main([a for a in argv if a != "-q"] + ["--json"]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out)["n_rows"] == 6 and said.err.startswith("polars-anon: fulldomain k=3: published 6 rows")


def _local_suppression_job(tmp_path: Path, method: str) -> Path:
    """A job of `method` on city and sex declared without hierarchies (``{}``), its input written beside it."""
    rows = {"city": ["Oslo"] * 4 + ["Bergen"] * 3 + ["Molde"], "sex": ["F", "M"] * 4, "n": list(range(8))}
    pl.DataFrame(rows).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(
        f'input = "in.parquet"\noutput = "out.parquet"\nk = 2\nmethod = "{method}"\ninsensitive = ["n"]\n'
        "qids = { city = {}, sex = {} }\n"
    )
    return job


def test_metrics_of_a_local_suppression_release_read_blanks_as_roots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser6: ``metrics --job`` on a local-suppression job whose qids have no hierarchy said "give ... --job
    JOB.toml" with --job given, and with ``--hierarchy q=suppress`` refused the released nulls. Its qids are now
    measured as suppression hierarchies, a blanked cell as the root (fails before the fix: exit 2)."""
    job = _local_suppression_job(tmp_path, "local_suppression")
    assert cli.main(["anonymize", str(job), "--quiet"]) == 0
    out = tmp_path / "out.parquet"
    blanked = pl.read_parquet(out).select(pl.col("city", "sex").null_count()).row(0)
    assert sum(blanked) > 0  # the release blanks cells
    argv = ["metrics", str(tmp_path / "in.parquet"), str(out), "--job", str(job), "--json", str(tmp_path / "m.json")]
    assert cli.main(argv) == 0, capsys.readouterr().err
    metrics = json.loads((tmp_path / "m.json").read_text())["metrics"]
    cells = 2 * 8  # every blank is a cell generalized to its root; every other cell is published as it was
    assert metrics["loss"] == pytest.approx(sum(blanked) / cells)
    # the classes family counts a blank as a value of its own, where the guarantee reads it as a wildcard: left out
    # of the default (its min_class_size was 1 below k = 2), refused when named
    assert not {"k", "min_class_size", "n_classes", "discernibility"} & set(metrics)
    assert cli.main([*argv[:-2], "--names", "cells,min_class_size"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "['min_class_size'] measure classes of equal published tuples" in err


def test_metrics_refuses_nulls_and_unbuilt_qids_of_other_methods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a local-suppression release reads a null as the root: elsewhere a null stays refused; a job of another
    method without hierarchies is refused naming the job, never asking for the --job that was given."""
    job = _local_suppression_job(tmp_path, "mondrian")
    pl.read_parquet(tmp_path / "in.parquet").with_columns(pl.lit(None, pl.String).alias("city")).write_parquet(
        tmp_path / "blank.parquet"
    )
    argv = ["metrics", str(tmp_path / "in.parquet"), str(tmp_path / "blank.parquet"), "--job", str(job)]
    assert cli.main(argv) == 2  # mend46: measured by the classes metrics now, and a null stays refused there too
    assert "column 'city' in the anonymized table has null values" in capsys.readouterr().err
    assert cli.main([*argv, "--hierarchy", "city=suppress", "--hierarchy", "sex=suppress"]) == 2
    assert "column 'city' in the anonymized table has null values" in capsys.readouterr().err
    assert cli.main([*argv, "--names", "cost"]) == 2  # what does not apply without a hierarchy: refused, naming the job
    err = capsys.readouterr().err
    assert f"have none in job {job} (method 'mondrian' publishes" in err and err.count("\n") == 1
    job.write_text(job.read_text().replace('"mondrian"', '"fulldomain"'))  # a job anonymize refuses
    assert cli.main(argv) == 2
    assert f"have no hierarchy in job {job}, and method 'fulldomain' needs one" in capsys.readouterr().err


def _mdav_mondrian_job(tmp_path: Path, method: str, options: str = "") -> Path:
    """A job of `method` on age (numbers) and sex declared without hierarchies, its input written beside it."""
    ages = [23, 25, 31, 34, 35, 41, 44, 47, 52, 58, 61, 66]
    rows = {"age": ages * 2, "sex": ["F", "M", "M"] * 8, "n": list(range(24))}
    pl.DataFrame(rows).write_parquet(tmp_path / "in.parquet")
    job = tmp_path / f"{method}.toml"
    job.write_text(
        f'input = "in.parquet"\noutput = "{method}.parquet"\nk = 3\nmethod = "{method}"\ninsensitive = ["n"]\n'
        f"{options}qids = {{ age = {{}}, sex = {{}} }}\n"
    )
    return job


@pytest.mark.parametrize("method", ["mondrian", "mdav"])
def test_metrics_of_a_release_without_hierarchies_equal_its_report(
    tmp_path: Path, method: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend46: ``metrics --job`` refused a Mondrian or MDAV release whose qids have no hierarchy (ranges, sets,
    means), though the run's report gives its class figures. It now measures the classes metrics on the published
    tuples, the same figures as the report (fails before: exit 2)."""
    job = _mdav_mondrian_job(tmp_path, method)
    assert cli.main(["anonymize", str(job), "--quiet"]) == 0
    report = json.loads((tmp_path / f"{method}.report.json").read_text())
    argv = ["metrics", str(tmp_path / "in.parquet"), str(tmp_path / f"{method}.parquet"), "--job", str(job)]
    assert cli.main([*argv, "--json", str(tmp_path / "m.json")]) == 0, capsys.readouterr().err
    metrics = json.loads((tmp_path / "m.json").read_text())["metrics"]
    assert set(metrics) == {n for n, m in pa.metrics.METRICS.items() if m.family == "classes" and not m.needs_sensitive}
    assert {n: metrics[n] for n in ("k", "min_class_size", "n_classes", "suppressed")} == {
        n: report[n] for n in ("k", "min_class_size", "n_classes", "suppressed")
    }
    published = pl.read_parquet(tmp_path / f"{method}.parquet").group_by("age", "sex").len()["len"]
    assert metrics["discernibility"] == int((published**2).sum())


def test_metrics_refuse_a_permuted_mdav_release_without_hierarchies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MDAV with publish = "permute" is k-anonymous in its clusters, which the release does not show: its equal
    published tuples may form smaller groups (its report's min_class_size is the smallest cluster). Without
    hierarchies no metric describes it: refused in one line saying why (the classes metrics measured 1 < k)."""
    job = _mdav_mondrian_job(tmp_path, "mdav", 'publish = "permute"\n')
    assert cli.main(["anonymize", str(job), "--quiet"]) == 0
    argv = ["metrics", str(tmp_path / "in.parquet"), str(tmp_path / "mdav.parquet"), "--job", str(job)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "groups its release does not show (MDAV's clusters" in err
    assert "no metric applies" in err
    # with hierarchies, the cells are measured and the classes family is left out (named: refused)
    given = [*argv, "--hierarchy", "sex=suppress", "--hierarchy", "age=intervals:10"]
    assert cli.main([*given, "--json", str(tmp_path / "m.json")]) == 0, capsys.readouterr().err
    assert "min_class_size" not in json.loads((tmp_path / "m.json").read_text())["metrics"]
    assert cli.main([*given, "--names", "min_class_size"]) == 2
    assert "the cost, cells and distribution metrics apply" in capsys.readouterr().err
