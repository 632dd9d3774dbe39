"""A CSV input reads alike on Polars, DuckDB and Spark (io.CSV_RULES): quoted empty fields, empty fields, null
strings, blank lines and records of no value; a value that breaks the inferred type is refused in the same words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.job import Job

JOB = """input = "people.csv"
output = "out.parquet"
k = 2
insensitive = "id"
null_values = ["NA"]
engine = "{engine}"
[qids.sex]
hierarchy = "suppress"
"""

# "" in the String column sex is '', an empty field null, "NA" null quoted or not; "" in the numeric column age is
# null (and no evidence of a String: age is Int64); the blank lines and the record ,, (no value) are skipped
CSV = 'id,sex,age\n0,"",31\n1,,""\n\n2,"NA",33\n,,\n3,NA,\n4,F,"35"\n\n\n'
ROWS = [(0, "", 31), (1, None, None), (2, None, 33), (3, None, None), (4, "F", 35)]


def _read(engine: str, job: Job) -> pl.DataFrame:
    """The job's input as the engine reads it, on the driver."""
    from polars_anon.engines import get_engine
    from polars_anon.job import read_on_engine

    if engine == "polars":
        return job.scan().collect()
    on = get_engine(engine)
    return on.to_polars(read_on_engine(on, job))  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_every_engine_reads_empty_fields_and_blank_lines_alike(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Polars read "" as '' where DuckDB and Spark read null, and a blank line as a row of nulls that they skip."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "people.csv").write_text(CSV)
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    got = _read(engine, Job.load(tmp_path / "job.toml")).sort("id")
    assert got.schema == pl.Schema({"id": pl.Int64, "sex": pl.String, "age": pl.Int64})
    assert got.rows() == ROWS


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_byte_order_mark_before_a_quoted_header_is_read(engine: str, tmp_path: Path) -> None:
    """A spreadsheet export (pandas' utf-8-sig, every field quoted) was refused as 'a quote inside a field': the
    header's first quote follows the byte-order mark, not a line start (review13 5)."""
    text = '"id","sex","age"\n"0","F","31"\n"1","M","32"\n'
    (tmp_path / "people.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    got = _read(engine, Job.load(tmp_path / "job.toml")).sort("id")
    assert got.columns == ["id", "sex", "age"] and got.rows() == [(0, "F", 31), (1, "M", 32)]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_quoted_header_with_an_escaped_quote_is_read_as_written(engine: str, tmp_path: Path) -> None:
    """A header field ``"s""x"`` (Polars' own write_csv writes a quote so) names the column s"x as DuckDB, Spark and
    Python's csv read it; Polars kept the doubled quote (s""x), so --qids 's"x' was refused (hunt38)."""
    (tmp_path / "people.csv").write_text('id,"s""x"\n0,F\n1,M\n')
    (tmp_path / "job.toml").write_text(JOB.replace("[qids.sex]", '[qids."s\\"x"]').format(engine=engine))
    got = _read(engine, Job.load(tmp_path / "job.toml")).sort("id")
    assert got.columns == ["id", 's"x'] and got.rows() == [(0, "F"), (1, "M")]
    assert cli.main(["check", str(tmp_path / "people.csv"), "--qids", 's"x', "--k", "1"]) == 0


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_value_that_breaks_the_inferred_type_is_refused_alike(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """age is Int64 by its first 100 rows; row 121 holds 'x': Polars refused in its words, DuckDB and Spark (which
    cast the column) in theirs; now the command line's one line is the same on each."""
    if engine == "spark":
        request.getfixturevalue("spark")
    rows = "".join(f"{i},{'FM'[i % 2]},{30 + i % 10}\n" for i in range(120))
    (tmp_path / "people.csv").write_text(f"id,sex,age\n{rows}120,F,x\n")
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    with pytest.raises(Exception) as caught:  # the engine's own exception type
        _read(engine, Job.load(tmp_path / "job.toml"))
    args = cli.parser().parse_args(["anonymize", str(tmp_path / "job.toml")])
    assert cli.csv_read_error(args, caught.value) == (
        f"cannot read '{tmp_path / 'people.csv'}' as CSV: could not parse `x` as dtype `i64` at column 'age' (column "
        "number 3); the type of column 'age' was inferred from the first rows and a later value breaks it: fix the "
        'value, read it as missing (job file: null_values = ["x"]) or convert the file to Parquet'
    )


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
def test_a_header_naming_a_column_twice_is_refused_on_every_engine(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    """review20 #2: Polars renamed the second 'sex' to sex_duplicated_0 and every engine published it raw beside the
    suppressed qid (exit 0); now one line names the column, its places and the file, and nothing is written."""
    said = _refused_job(engine, tmp_path, request, capsys, "id,sex,age,sex\n0,F,31,F\n1,M,32,M\n2,F,33,F\n3,M,34,M\n")
    assert said == (
        f"polars-anon: error: cannot read input '{tmp_path / 'people.csv'}' as CSV: the header names column 'sex' "
        "more than once (columns 2, 4); give each column its own name in the header, or name every column in columns "
        "(job file: columns = [...])\n"
    )


# review11: values Polars' CSV reader refuses for the type it inferred (DuckDB's and Spark's casts read them:
# `1_000` 1000, `0x10` 16, `yes`/`T`/`1`/` true` true) and values it reads (`+3`, ` 7`, `1e2`, `.5`, `5.`, `-nan`,
# `TRUE`); an integer out of range matches io.PARSES and is refused by the cast (the engine test)
LATE = {
    "i64": ("5", ["1.5", "1e2", "1_000", "0x10", "7 "], ["+3", " 7", "-0", " "]),  # 007: String (LEADING_ZERO)
    "f64": ("1.5", ["1_0.5", "0x10", "e2", "1.5 ", "infin", "."], ["1e2", ".5", "5.", "-inf", "Infinity", "-nan"]),
    "bool": ("true", ["yes", "T", "1", " true", " "], ["TRUE", "False"]),
}


def test_the_text_each_engine_checks_is_what_polars_parses() -> None:
    """io.PARSES (matched by DuckDB and Spark before their casts) against Polars' reader, value by value; the empty
    and blank values are nulls (io.BLANK) in a column of numbers."""
    import re

    import duckdb

    from polars_anon.io import BLANK, PARSES

    kinds = {"i64": pl.Int64(), "f64": pl.Float64(), "bool": pl.Boolean()}
    for word, (_, refused, read) in LATE.items():
        name = str(kinds[word])
        for value in refused + read:
            try:
                got = pl.read_csv(f"a,b\n{value},1\n".encode(), schema_overrides={"a": kinds[word]})["a"][0]
            except pl.exceptions.ComputeError:
                got = "refused"
            blank = word != "bool" and re.fullmatch(BLANK, value) is not None
            expect = "refused" if value in refused else ("null" if blank else "value")
            assert ("refused" if got == "refused" else "null" if got is None else "value") == expect, (word, value)
            duck = duckdb.execute("SELECT regexp_full_match($1, $2)", [value, PARSES[name]]).fetchall()[0][0]
            assert duck == (re.fullmatch(PARSES[name], value) is not None) == (expect == "value"), (word, value)


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_late_values_are_read_or_refused_as_polars_does(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """After 100 rows that make the columns Int64, Float64 and Boolean, the values Polars reads are read to the same
    values; a value it refuses (the reviewer's) is refused on the engine in Polars' words."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine).replace('"id"', '["id", "i", "f", "b"]'))
    job = Job.load(tmp_path / "job.toml")
    firsts = [first for first, _, _ in LATE.values()]
    longest = max(len(read) for _, _, read in LATE.values())
    reads = [[*read, *[first] * (longest - len(read))] for first, _, read in LATE.values()]
    rows = [f"{i},{'FM'[i % 2]},{','.join(firsts)}" for i in range(100)]
    rows += [f"{100 + j},F,{','.join(values)}" for j, values in enumerate(zip(*reads))]
    (tmp_path / "people.csv").write_text("id,sex,i,f,b\n" + "\n".join(rows) + "\n")
    want = job.scan().collect()
    assert [str(t) for t in want.schema.values()] == ["Int64", "String", "Int64", "Float64", "Boolean"]
    assert _read(engine, job).sort("id").equals(want, null_equal=True)
    refused = [
        ("bool", " true", 5),
        ("bool", "yes", 5),
        ("i64", "1_000", 3),
        ("f64", "0x10", 4),
        ("i64", str(1 << 63), 3),
    ]
    for word, value, number in refused[: 1 if engine == "spark" else None]:  # a Spark job that fails: 0.5 s each
        late = [f"100,F,{','.join(v if n != number else value for n, v in enumerate(firsts, 3))}"]
        (tmp_path / "people.csv").write_text("id,sex,i,f,b\n" + "\n".join(rows[:100] + late) + "\n")
        with pytest.raises(Exception) as caught:
            _read(engine, job)
        column = "ifb"[number - 3]
        assert f"could not parse `{value}` as dtype `{word}` at column '{column}' (column number {number})" in str(
            caught.value
        )


def test_spark_splits_a_csv_without_line_breaks_in_quotes(spark: Any, tmp_path: Path) -> None:
    """multiLine made Spark parse each CSV file in one task (review11: 135 MB, 2 partitions -> 1 on local[2]); it is
    on only when a quoted field holds a line break (io.quoted_line_break)."""
    from polars_anon.engines import get_engine
    from polars_anon.io import quoted_line_break
    from polars_anon.job import read_on_engine

    texts = {'a,"x,y"\n': False, 'a,"x\ny"\n': True, 'a,"x ""q""\r\ny"\n': True, 'a,""\n"""",b\n': False}
    texts['1,"F\rG"\n'] = True  # a lone carriage return in quotes: Hadoop ends a line there too (review13)
    for text, breaks in texts.items():
        (tmp_path / "t.csv").write_bytes(text.encode())
        assert quoted_line_break(tmp_path / "t.csv") == breaks, text
    (tmp_path / "job.toml").write_text(JOB.format(engine="spark"))
    rows = "".join(f"{i},{'FM'[i % 2]},{30 + i % 10}\n" for i in range(400))
    small = {"spark.sql.files.maxPartitionBytes": "2048", "spark.sql.files.openCostInBytes": "0"}
    try:
        for key, value in small.items():  # a 5 kB file in parts of 2 kB
            spark.conf.set(key, value)
        for text, split in [(rows, True), (f'{rows}400,"F\nM",31\n', False)]:
            (tmp_path / "people.csv").write_text(f"id,sex,age\n{text}")
            frame = read_on_engine(get_engine("spark"), Job.load(tmp_path / "job.toml"))
            assert (frame.rdd.getNumPartitions() > 1) == split
    finally:
        for key in small:
            spark.conf.unset(key)


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_a_csv_column_of_integers_beyond_int64_is_refused_by_name(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    """hunt41 c2: Polars reads such a column as Int128; DuckDB refused "the input's column type Int128 has no engine
    twin; name it in schema", naming no column, and schema cannot name an Int128. One line names the column and the
    file and says what works."""
    said = _refused_job(
        engine, tmp_path, request, capsys, "id,sex,big\n0,F,18446744073709551610\n1,F,5\n2,M,7\n3,M,8\n"
    )
    assert said == (
        f"polars-anon: error: job file: column 'big' of '{tmp_path / 'people.csv'}' holds integers beyond Int64, "
        f"which Polars reads as Int128, a type engine '{engine}' cannot read CSV text as (and schema cannot name); use "
        "engine 'polars', or convert the file to Parquet with the column as a Decimal or a String\n"
    )


def _refused_job(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], csv: str
) -> str:
    """The job (JOB) on `engine` over people.csv holding `csv`: exit 2, nothing on standard output, nothing written;
    what it said on standard error."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "people.csv").write_text(csv)
    (tmp_path / "job.toml").write_text(JOB.format(engine=engine))
    assert cli.main(["anonymize", str(tmp_path / "job.toml")]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.toml", "people.csv"]
    return said.err


# 150 zip codes, the one with a leading zero last (after the rows Polars infers the types from), and a column of
# numbers whose zeros lead no digit (0, 0.5, -0.25): a number
ZIPS = [str(94100 + i) for i in range(150)] + ["00501"]
SCORES = ["0", "0.5", "-0.25"]
ZIP_CSV = "id,zip,score\n" + "".join(f"{i},{z},{SCORES[i % 3]}\n" for i, z in enumerate(ZIPS))


@pytest.mark.parametrize("engine", ["polars", "duckdb", "spark"])
@pytest.mark.parametrize("schema", ["", 'schema = { zip = "Int64" }\n'])
def test_a_column_of_numbers_with_a_leading_zero_is_read_as_written(
    engine: str, schema: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """newuser4: a zip column that is no qid was inferred Int64 and published 2190 for 02190 (the input's text changed
    silently). A column of numbers where a field has a leading zero is String on every engine, read as written, even
    when the zero comes late; a zero that leads no digit (0, 0.5) keeps a number; schema may still ask a number
    (00501 -> 501)."""
    if engine == "spark":
        request.getfixturevalue("spark")
    (tmp_path / "people.csv").write_text(ZIP_CSV)
    (tmp_path / "job.toml").write_text(schema + JOB.replace("sex", "score").format(engine=engine))
    got = _read(engine, Job.load(tmp_path / "job.toml")).sort("id")
    zip_type, zips = (pl.Int64, [94100 + i for i in range(150)] + [501]) if schema else (pl.String, ZIPS)
    assert got.schema == pl.Schema({"id": pl.Int64, "zip": zip_type, "score": pl.Float64})
    assert got["zip"].to_list() == zips
    assert got["score"].to_list() == [[0.0, 0.5, -0.25][i % 3] for i in range(151)]


def test_a_published_column_keeps_its_leading_zeros(tmp_path: Path) -> None:
    """The newcomer's job end to end: zip, no qid, is published as the file writes it (02190, not 2190)."""
    (tmp_path / "people.csv").write_text("id,zip,sex\n" + "".join(f"{i},0219{i % 2},{'FM'[i % 2]}\n" for i in range(6)))
    (tmp_path / "job.toml").write_text(
        JOB.replace('insensitive = "id"', 'insensitive = ["id", "zip"]').format(engine="polars")
    )
    assert cli.main(["anonymize", str(tmp_path / "job.toml"), "--json"]) == 0
    got = pl.read_parquet(tmp_path / "out.parquet")
    assert got["zip"].to_list() == ["02190", "02191"] * 3
