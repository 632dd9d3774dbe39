"""A CSV input read by one set of rules on every road: the job's CSV options wherever the job's input is read, the
ragged-row check's gaps (issue: csvfix)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from polars_anon import cli

HEADERLESS_JOB = """input = "people.data"
output = "out.parquet"
separator = ";"
has_header = false
columns = ["id", "age", "sex"]
k = 2
insensitive = "id"
[qids.age]
hierarchy = {intervals = [5, 10], bottom = 30, top = 40}
[qids.sex]
hierarchy = "suppress"
"""


def test_check_builds_a_jobs_hierarchies_with_the_jobs_csv_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check --job with a population model built the job's hierarchies from its input read with only the separator:
    a headerless input (has_header = false, columns) lost its first row to the header and its column names."""
    (tmp_path / "people.data").write_text("0;31;F\n1;33;M\n2;38;F\n3;36;M\n")
    (tmp_path / "pop.csv").write_text("age,sex\n31,F\n33,M\n38,F\n36,M\n31,F\n33,M\n")
    (tmp_path / "job.toml").write_text(HEADERLESS_JOB)
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 0
    model = f'{{model = "k-map", k = 1, population = "{tmp_path / "pop.csv"}"}}'
    capsys.readouterr()
    args = ["check", str(tmp_path / "out.parquet"), "--qids", "age,sex", "--k", "2"]
    assert cli.main([*args, "--job", str(tmp_path / "job.toml"), "--model", model]) == 0
    found = json.loads(capsys.readouterr().out)["models"][0]
    # the classes (30-39, F) and (30-39, M) each hold 3 of the 6 population rows
    assert (found["satisfied"], found["min_measure"], found["max_measure"]) == (True, 3.0, 3.0)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # DuckDB's strict reader takes a separator ending a row for no field: it passed where Polars refused
        ("id,sex,age\n0,F,31\n1,M,33,\n", "record 3 (the header is record 1) has 4 fields, the header 3; a row has"),
        # DuckDB reads a space before a quote as nothing ('x,y'), Polars and Spark as part of the field (4 fields)
        ('id,sex,age\n0,F,31\n1, "x,y",3\n', "line 3 has a quote inside a field (a field is quoted from its first"),
        ('id,sex,age\n0,a"b,31\n', "line 2 has a quote inside a field"),  # Polars failed, DuckDB and Spark read a"b
        # any other error of DuckDB's reader skipped the check silently
        ('id,sex,age\n0,"F,31\n1,M,33\n', "Invalid Input Error: CSV Error on Line: 2: Value with unterminated quote"),
        # review11: a quote ending an unquoted field: Polars paired it with the next quote, lines apart (risk counted
        # 2 rows of 3, anonymize failed with a traceback), DuckDB and Spark read 3 rows
        ("id,sex,age\n0,5'11\",31\n1,6'0\",33\n2,x,35\n", "line 2 has a quote ending a field that does not start"),
        ('id,sex,age\n0,ab",31\n\n1,x,33\n2,"y",35\n', "line 2 has a quote ending a field that does not start"),
        # the first line the readers part at, past a doubled quote and a line break inside quotes (both no fault)
        ('id,n,a\n0,"a ""b""",1\n1,"x\ny",2\n2,q",3\n3,z,4\n', "line 5 has a quote ending a field that does not"),
    ],
    ids=[
        "trailing-separator",
        "space-before-quote",
        "quote-inside",
        "unterminated-quote",
        "inch",
        "quote-ends",
        "quote-ends-later",
    ],
)
def test_a_csv_the_engines_would_read_apart_is_refused_naming_the_record(tmp_path: Path, text: str, words: str) -> None:
    from polars_anon.errors import InputError
    from polars_anon.io import scan_input

    path = tmp_path / "people.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        scan_input(path)
    assert str(caught.value).startswith(f"cannot read input {str(path)!r} as CSV: {words}")


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_path_with_glob_characters_and_a_long_field_read_as_written(engine: str, tmp_path: Path) -> None:
    """people[1].csv was read as the glob pattern it spells (people1.csv, beside it) by Polars and DuckDB; a field
    over 2 MB was refused by DuckDB's reader (its max_line_size), which also skipped the ragged-row check."""
    from polars_anon.engines import get_engine
    from polars_anon.job import Job, read_on_engine

    long = "x" * (2_100_000)
    (tmp_path / "people1.csv").write_text("id,sex\n0,F\n")
    (tmp_path / "people[1].csv").write_text(f"id,sex\n7,{long}\n8,M\n")
    text = 'input = "people[1].csv"\noutput = "out.parquet"\nk = 2\ninsensitive = "id"\n'
    (tmp_path / "job.toml").write_text(text + f'engine = "{engine}"\n[qids.sex]\nhierarchy = "suppress"\n')
    job = Job.load(tmp_path / "job.toml")
    if engine == "polars":
        got = job.scan().collect()
    else:
        on = get_engine(engine)
        got = on.to_polars(read_on_engine(on, job))  # type: ignore[attr-defined]
    assert got.rows() == [(7, long), (8, "M")]


def test_a_quote_ending_a_field_is_one_line_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """risk read column q only and reported 2 rows for 3 records (review11); blank lines, inside a quoted field too,
    are no fault."""
    path = tmp_path / "t.csv"
    path.write_text("q,a\n1,5'11\"\n2,6'0\"\n3,x\n")
    assert cli.main(["risk", str(path), "--qids", "q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"polars-anon: error: cannot read input {str(path)!r} as CSV: line 2 has a quote ending a field"
    )
    assert "\n" not in err
    path.write_text('q,a\n1,"x\n\ny"\n\n2,y\n\n')
    assert cli.main(["risk", str(path), "--qids", "q"]) == 0
    assert json.loads(capsys.readouterr().out)["n_rows"] == 2


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_parquet_path_with_glob_characters_names_that_file(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    """review11: p[1].parquet was read as the pattern it spells (p1.parquet beside it) on Polars and DuckDB,
    z[1].parquet alone refused ("expanded paths were empty"), and an output named o[1].parquet failed at the verify
    re-read."""
    import polars as pl

    if engine == "spark":
        request.getfixturevalue("spark")
    pl.DataFrame({"q": [9, 9], "a": ["decoy", "decoy"]}).write_parquet(tmp_path / "p1.parquet")
    pl.DataFrame({"q": [0, 0], "a": ["real", "real"]}).write_parquet(tmp_path / "p[1].parquet")
    text = 'input = "p[1].parquet"\noutput = "o[1].parquet"\nk = 2\ninsensitive = ["a"]\n'
    text += '[qids.q]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(text)
    if engine == "spark":  # the input, and the verify re-read of a folder (a whole job: 2.5 s more)
        from polars_anon.engines import get_engine

        on = get_engine("spark")
        table = on.read_parquet(tmp_path / "p[1].parquet")  # type: ignore[attr-defined]
        assert on.to_polars(table).rows() == [(0, "real"), (0, "real")]  # type: ignore[attr-defined]
        (tmp_path / "o[1].parquet").mkdir()  # a folder of parts, as Spark writes its output
        pl.DataFrame({"q": [0, 0], "a": ["real", "real"]}).write_parquet(tmp_path / "o[1].parquet" / "part-0.parquet")
        on.read_parquet(tmp_path / "o[1].parquet")  # type: ignore[attr-defined]  # was PATH_NOT_FOUND
        return
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 0
    got = pl.scan_parquet(tmp_path / "o[1].parquet", glob=False).collect()  # Spark's: a folder of parts
    assert got.rows() == [("0", "real"), ("0", "real")]  # q published as its label
    if engine == "polars":  # the commands that read a file (risk) read the same one
        capsys.readouterr()
        assert cli.main(["risk", str(tmp_path / "p[1].parquet"), "--qids", "q"]) == 0
        assert json.loads(capsys.readouterr().out)["n_rows"] == 2


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize(
    ("header", "columns", "name"),
    [(False, '["id", "age"]', "age"), (True, '["id", "age"]', "age")],
    ids=["headerless", "renamed"],
)
def test_a_late_value_names_the_jobs_column(
    engine: str, header: bool, columns: str | None, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review11: Polars named the second column of a headerless file 'column_1' (its generated name, one off) and a
    renamed one by its header name; DuckDB and Spark by the job's name. Now the job's name and number, alike."""
    rows = "".join(f"{i},{30 + i % 10}\n" for i in range(120)) + "120,x\n"
    (tmp_path / "t.csv").write_text(("id,years\n" if header else "") + rows)
    text = f'input = "t.csv"\noutput = "o.parquet"\nk = 1\nhas_header = {str(header).lower()}\n'
    text += (
        f"columns = {columns}\n" if columns else ""
    ) + f'insensitive = "{name}"\n[qids.id]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(text)
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 2
    err = capsys.readouterr().err
    assert (
        f"could not parse `x` as dtype `i64` at column '{name}' (column number 2); the type of column '{name}'" in err
    )


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_header_ending_with_the_separator_is_refused(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review11: a header q;a; (rows 1;x;) made Polars read a column named '', Spark one named column_2, and the DuckDB
    road fail with a raw BinderException. Refused in one line; with columns naming the three, read."""
    (tmp_path / "t.csv").write_text("q;a;\n1;x;\n2;y;\n")
    text = 'input = "t.csv"\noutput = "o.parquet"\nk = 1\nseparator = ";"\ninsensitive = ["a"]\n'
    text += '[qids.q]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(text)
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"polars-anon: error: cannot read input {str(tmp_path / 't.csv')!r} as CSV: the header names no column 3 (a "
        "header line ending with the separator ';'); name it in the header, or name every column in columns (job "
        'file: columns = ["q", "a", ...])\n'
    )
    (tmp_path / "job.toml").write_text(text.replace("k = 1\n", 'k = 1\ncolumns = ["q", "a", "b"]\n'))
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 0


CR_ROWS = ["id,sex", "1,F", "2,M", "3,F", "4,M"]


def _cr_job(tmp_path: Path, csv: bytes) -> str:
    """`csv` written as t.csv beside a k=2 job on it (sex suppressed); the job's text."""
    (tmp_path / "t.csv").write_bytes(csv)
    text = 'input = "t.csv"\noutput = "o.parquet"\nk = 2\ninsensitive = "id"\n[qids.sex]\nhierarchy = "suppress"\n'
    (tmp_path / "job.toml").write_text(text)
    return text


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])  # refused before any engine starts
def test_a_csv_with_carriage_return_line_ends_is_one_line(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CSV whose lines end with \\r alone was read as one header line of every field: refused as naming column 'F'
    twice, which it does not. One line naming the file, the line ends and what works; \\n and \\r\\n ends read."""
    _cr_job(tmp_path, "\r".join(CR_ROWS).encode() + b"\r")
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 2
    assert capsys.readouterr().err == (
        f"polars-anon: error: cannot read input {str(tmp_path / 't.csv')!r} as CSV: its lines end with a carriage "
        "return alone (\\r, as old Mac files), which no engine reads as a line break; end them with \\n or \\r\\n "
        "(e.g. tr '\\r' '\\n' < t.csv > fixed.csv) or write the table as Parquet\n"
    )
    assert not (tmp_path / "o.parquet").exists()
    if engine == "polars":  # what the message says works
        for end in ("\n", "\r\n"):
            (tmp_path / "t.csv").write_bytes(end.join(CR_ROWS).encode() + end.encode())
            assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q", "--overwrite"]) == 0
            assert pl.read_parquet(tmp_path / "o.parquet").rows() == [(1, "F"), (2, "M"), (3, "F"), (4, "M")]


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])  # refused before any engine starts
@pytest.mark.parametrize(
    ("ends", "line"),
    [(["\r"] * 4 + ["\n"], 1), (["\n"] * 2 + ["\r"] + ["\n"] * 2, 3), (["\r\n"] * 4 + ["\r"], 5)],
    ids=["cr-but-one-lf", "one-cr-among-lf", "last-cr-among-crlf"],
)
def test_a_csv_with_one_carriage_return_line_end_is_named(
    engine: str, ends: list[str], line: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend33: the check above missed a file with a single \\n: lines ending \\r but one (or one \\r line end
    among \\n or \\r\\n ones) were refused by a field count or DuckDB's parser state, not naming the cause. The
    first line ending with \\r alone is named; a \\r inside a quoted field is no line end (read)."""
    text = _cr_job(tmp_path, "".join(r + e for r, e in zip(CR_ROWS, ends)).encode())
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--engine", engine, "-q"]) == 2
    assert capsys.readouterr().err == (
        f"polars-anon: error: cannot read input {str(tmp_path / 't.csv')!r} as CSV: line {line} ends with a carriage "
        "return alone (\\r, as old Mac files), which no engine reads as a line break; end every line with \\n or "
        "\\r\\n (e.g. tr '\\r' '\\n' < t.csv > fixed.csv) or write the table as Parquet\n"
    )
    assert not (tmp_path / "o.parquet").exists()
    if engine == "polars":  # a carriage return in a quoted field stays a value's
        (tmp_path / "t.csv").write_bytes(b'id,sex,note\n1,F,"a\rb"\n2,M,c\n3,F,d\n4,M,e\n')
        (tmp_path / "job.toml").write_text(text.replace('"id"', '["id", "note"]'))
        assert cli.main(["anonymize", str(tmp_path / "job.toml"), "-q"]) == 0
        assert pl.read_parquet(tmp_path / "o.parquet")["note"][0] == "a\rb"


def test_a_population_csv_is_read_with_the_jobs_and_the_commands_separator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A population CSV was read with ',' whatever the job's separator or the command's --separator: its one column
    'age;sex' was refused as lacking the qids."""
    (tmp_path / "people.data").write_text("0;31;F\n1;33;M\n2;38;F\n3;36;M\n")
    (tmp_path / "pop.csv").write_text("age;sex\n31;F\n33;M\n38;F\n36;M\n31;F\n33;M\n")
    privacy = '[[privacy]]\nmodel = "k-map"\nk = 3\npopulation = "pop.csv"\n'
    (tmp_path / "job.toml").write_text(HEADERLESS_JOB + privacy)
    from polars_anon.job import Job, job_models

    job = Job.load(tmp_path / "job.toml")
    (model,) = job_models(job, job.scan())
    assert model.population.collect().rows() == [(31, "F"), (33, "M"), (38, "F"), (36, "M"), (31, "F"), (33, "M")]
    people = tmp_path / "people.csv"
    people.write_text("age;sex\n31;F\n33;M\n")
    args = ["risk", str(people), "--qids", "age,sex", "--separator", ";", "--population", str(tmp_path / "pop.csv")]
    assert cli.main(args) == 0
    # each sample tuple is 2 of the 6 population rows: journalist risk 1/2
    assert json.loads(capsys.readouterr().out)["journalist"]["highest"] == 0.5


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_late_value_in_python_is_the_command_lines_one_line(engine: str, tmp_path: Path) -> None:
    """pa.anonymize(pl.scan_csv(...)) raised Polars' dozen-line ComputeError (on write with Polars, on reading with
    DuckDB); the command line said one line naming the file and the column. Now the same line, Python's hint."""
    import polars as pl

    import polars_anon as pa
    from polars_anon.errors import InputError

    path = tmp_path / "t.csv"
    path.write_text("id,age\n" + "".join(f"{i},{30 + i % 10}\n" for i in range(120)) + "120,x\n")
    with pytest.raises(InputError) as caught:
        hierarchies = {"id": pa.Hierarchy.suppression(list(range(121)))}
        pa.anonymize(pl.scan_csv(path), hierarchies=hierarchies, k=1, insensitive="age", engine=engine).sink_parquet(
            tmp_path / "o.parquet"
        )
    assert str(caught.value) == (
        f"cannot read {str(path)!r} as CSV: could not parse `x` as dtype `i64` at column 'age' (column number 2); "
        "the type of column 'age' was inferred from the first rows and a later value breaks it: fix the value, read "
        'it as missing (null_values=["x"]) or convert the file to Parquet'
    )
    assert not (tmp_path / "o.parquet").exists()


def test_a_late_value_on_the_duckdb_entry_is_one_line_naming_the_readers_option(tmp_path: Path) -> None:
    """review14: polars_anon.duckdb.anonymize (a Polars scan or a DuckDB read_csv relation) still raised the engine's
    long error: the one line is now made where every entry goes through (the road's run); a relation's hint names
    DuckDB's reader option (nullstr), not Polars' null_values."""
    import duckdb
    import polars as pl

    import polars_anon as pa
    import polars_anon.duckdb as pad
    from polars_anon.errors import InputError

    path = tmp_path / "t.csv"
    path.write_text("g,age\n" + "a,31\nb,32\n" * 1050 + "a,x\n")  # DuckDB's sniffer reads 2,048 rows at least
    con = duckdb.connect()
    hierarchies = {"g": pa.Hierarchy.suppression(["a", "b"])}
    said = "the type of column 'age' was inferred from the first rows and a later value breaks it: fix the value, read"
    for data, missing in (
        (con.sql(f"SELECT * FROM read_csv('{path}', sample_size = 20)"), "(read_csv(..., nullstr = 'x'))"),
        (pl.scan_csv(path), '(null_values=["x"])'),
    ):
        with pytest.raises(InputError) as caught:
            pad.anonymize(data, connection=con, hierarchies=hierarchies, k=1, insensitive="age").collect()
        text = str(caught.value)
        assert text.startswith(f"cannot read {str(path)!r} as CSV: ") and "\n" not in text, text
        assert f"{said} it as missing {missing} or convert the file to Parquet" in text


def test_a_late_value_is_named_in_its_own_file_input_or_population(tmp_path: Path) -> None:
    """review16: a late value in a population CSV was blamed on the input ('cannot read in.csv ... column g'; with a
    Parquet input it was Polars' raw error), and one in the input, read at collect, named the population file too."""
    import polars as pl

    import polars_anon as pa
    from polars_anon.errors import InputError

    h = {"g": pa.Hierarchy.suppression(["1", "2"])}
    good_in, bad_in = tmp_path / "in.csv", tmp_path / "bad_in.csv"
    good_in.write_text("g,age\n" + "1,31\n2,32\n" * 10)
    bad_in.write_text("g,age\n" + "1,31\n2,32\n" * 60 + "1,x\n")
    good_pop, bad_pop = tmp_path / "pop.csv", tmp_path / "bad_pop.csv"
    good_pop.write_text("g\n" + "1\n2\n" * 100)
    bad_pop.write_text("g\n" + "1\n2\n" * 1100 + "x\n")
    for data, pop, named in ((pl.scan_csv(good_in), bad_pop, bad_pop), (pl.scan_csv(bad_in), good_pop, bad_in)):
        with pytest.raises(InputError) as caught:
            models = [pa.KMap(k=2, population=str(pop))]
            pa.anonymize(data, hierarchies=h, k=2, insensitive="age", privacy=models).collect()
        assert str(caught.value).startswith(f"cannot read {str(named)!r} as CSV: could not parse `x` as dtype `i64`")


@pytest.mark.parametrize(("column", "written"), [("zip", ["02134", "2134"]), ("height", ["1.0", "1"])])
def test_check_and_risk_read_a_csv_releases_qids_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, written: list[str]
) -> None:
    """review20 #1: a published CSV's qid was typed as a number, so 02134 and 2134 (1.0 and 1) were one class: check
    said k = 4 holds for a record unique in the file. By hand: the classes are 3 rows and 1 row, the population's
    4 and 2 (a Parquet file of the same text, read exactly, agrees)."""
    same, other = written
    (tmp_path / "a.csv").write_text(f"{column},s\n{same},a\n{same},b\n{same},c\n{other},d\n")
    (tmp_path / "pop.csv").write_text(f"{column}\n" + f"{same}\n" * 4 + f"{other}\n" * 2)
    assert cli.main(["check", str(tmp_path / "a.csv"), "--qids", column, "--k", "4"]) == 1
    checked = json.loads(capsys.readouterr().out)
    assert (checked["min_class_size"], checked["n_classes"], checked["k_anonymous"]) == (1, 2, False)
    pl.DataFrame({column: [same] * 3 + [other], "s": list("abcd")}).write_parquet(tmp_path / "a.parquet")
    assert cli.main(["check", str(tmp_path / "a.parquet"), "--qids", column, "--k", "4"]) == 1
    assert json.loads(capsys.readouterr().out) == checked
    args = ["risk", str(tmp_path / "a.csv"), "--qids", column, "--population", str(tmp_path / "pop.csv")]
    assert cli.main(args) == 0
    risk = json.loads(capsys.readouterr().out)
    assert risk["n_classes"] == 2
    assert (risk["prosecutor"]["highest"], risk["prosecutor"]["lowest"]) == (1.0, pytest.approx(1 / 3))
    assert (risk["journalist"]["highest"], risk["journalist"]["lowest"]) == (0.5, 0.25)


def test_a_jobs_population_csv_is_read_as_written_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review22: check --job read the job's population CSV typed, so '02134' and '2134' were one value there and
    k-map (k = 3) passed for the release's 2134, which one person of the file as written has; --model with the same
    file failed. Now the job's population reads the qids as written: '02134' is no value of the job's hierarchy
    (built from its input, where zip is 2134), and the check is refused instead of passed."""
    (tmp_path / "in.csv").write_text("zip,age\n2134,30\n2135,40\n2135,40\n2135,40\n")
    (tmp_path / "rel.csv").write_text("zip,age\n2134,30\n2135,40\n2135,40\n2135,40\n")
    (tmp_path / "pop.csv").write_text("zip,age\n2134,30\n02134,30\n02134,30\n2135,40\n2135,40\n2135,40\n")
    (tmp_path / "job.toml").write_text(
        'input = "in.csv"\noutput = "out.parquet"\nk = 2\n[qids.zip]\nhierarchy = "suppress"\n[qids.age]\n'
        'hierarchy = "suppress"\n[[privacy]]\nmodel = "k-map"\nk = 3\npopulation = "pop.csv"\n'
    )
    args = ["check", str(tmp_path / "rel.csv"), "--qids", "zip,age", "--k", "1", "--job", str(tmp_path / "job.toml")]
    assert cli.main(args) == 2
    assert "'02134' is not a node" in capsys.readouterr().err


def test_metrics_and_encode_read_the_original_as_the_job_reads_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """metrics and encode --job read the original CSV by their own types, not the job's: a zip the job's schema names
    String (02134) became 2134, and the job's own release was refused ("'02134' ... not nodes"). Now the original is
    read as the job reads its input, a CSV release with the job's options: the Parquet and the CSV release agree,
    and with the Python metrics on frames typed as the job says."""
    from polars_anon.job import Job, build_hierarchies
    from polars_anon.metrics import evaluate, prepare

    zips = ["02134", "02135", "02139", "02140"]
    (tmp_path / "in.csv").write_text("zip,age\n" + "".join(f"{zips[i % 4]},{20 + i % 37}\n" for i in range(120)))
    (tmp_path / "job.toml").write_text(
        'input = "in.csv"\noutput = "out.parquet"\nk = 5\n[schema]\nzip = "String"\n[qids.zip]\n'
        "hierarchy = { mask = 5 }\n[qids.age]\nhierarchy = { intervals = [5, 10, 20] }\n"
    )
    job = str(tmp_path / "job.toml")
    assert cli.main(["anonymize", job, "-q"]) == 0
    pl.read_parquet(tmp_path / "out.parquet").write_csv(tmp_path / "out.csv")
    capsys.readouterr()
    figures = []
    for release in ("out.parquet", "out.csv"):
        assert cli.main(["metrics", str(tmp_path / "in.csv"), str(tmp_path / release), "--job", job]) == 0
        figures.append(capsys.readouterr().out)
        assert (
            cli.main(
                [
                    "encode",
                    str(tmp_path / release),
                    "--job",
                    job,
                    "--original",
                    str(tmp_path / "in.csv"),
                    "--encoding",
                    "proportional",
                    "--output",
                    str(tmp_path / f"{release}.enc.parquet"),
                ]
            )
            == 0
        )
        assert json.loads(capsys.readouterr().out)["rows"] == 120
    assert figures[0] == figures[1]
    original = pl.read_csv(tmp_path / "in.csv", schema_overrides={"zip": pl.String})
    spec = Job.load(job)
    hierarchies = build_hierarchies(original.lazy(), spec.qids, spec.base)
    data = prepare(original, pl.read_parquet(tmp_path / "out.parquet"), ["zip", "age"], hierarchies)
    want = evaluate(data, ["ncp", "distortion"]).row(0, named=True)
    table = dict(line.split() for line in figures[0].splitlines()[1:])
    assert float(table["ncp"]) == pytest.approx(want["ncp"], abs=1e-3)
    assert float(table["distortion"]) == pytest.approx(want["distortion"], abs=1e-3)


def test_the_leading_zero_pass_runs_once_per_version_of_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A DuckDB job scanned its CSV input twice and read its numeric columns as text twice for the leading-zero rule
    (io._leading_zeros): once per version of the file now; a rewritten file is read again."""
    from polars_anon import io

    texts = []
    scan = pl.scan_csv

    def counted(*args: object, **kwargs: object) -> pl.LazyFrame:
        texts.extend([1] if kwargs.get("infer_schema") is False else [])
        return scan(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io.pl, "scan_csv", counted)
    path = tmp_path / "t.csv"
    path.write_text("zip,age\n94154,31\n2190,33\n")
    assert [io.scan_input(path).collect_schema()["zip"] for _ in range(2)] == [pl.Int64, pl.Int64]
    assert len(texts) == 1
    path.write_text("zip,age\n94154,31\n02190,33\n")
    assert io.scan_input(path).collect()["zip"].to_list() == ["94154", "02190"]
    assert len(texts) == 2
