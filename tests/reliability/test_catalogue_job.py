"""Bad-input catalogue of the job file (TOML), run through ``polars-anon anonymize`` (issue 12).

A case is a change to a valid job (top-level keys replaced, added or removed, or
other ``[qids]`` tables) and the words the one-line message must contain. Every
refusal exits 2 with one line on stderr and leaves the job's folder byte-for-byte
as before.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from polars_anon import cli
from polars_anon.algorithms import METHODS
from polars_anon.options import option_names
from polars_anon.pipeline.result import Anonymized
from tests.reliability.snapshot import unchanged
from tests.reliability.test_catalogue_cli import one_line_error

T = pl.DataFrame(
    {"id": list(range(12)), "age": [31, 33, 38, 36] * 3, "sex": ["F", "M"] * 6, "party": ["a", "b", "c"] * 4}
)
BASE = {"input": '"t.parquet"', "output": '"out/anon.parquet"', "k": "2", "insensitive": '"id"'}
ALL_OPTIONS = sorted({o for spec in METHODS.values() for o in option_names(spec.options)})
QIDS = '[qids.age]\nhierarchy = { intervals = [5, 10], bottom = 30, top = 40 }\n[qids.sex]\nhierarchy = "suppress"\n'


def render(keys: dict[str, str | None], qids: str = QIDS) -> str:
    """A job file: `keys` (TOML values as text; None removes a key of BASE) over BASE, then the qid tables."""
    merged = {k: v for k, v in (BASE | keys).items() if v is not None}
    return "".join(f"{k} = {v}\n" for k, v in merged.items()) + qids


CASES: list[tuple[str, dict[str, str | None], str, tuple[str, ...]]] = (
    [
        # (id, keys over BASE, [qids] tables, words the message must contain)
        ("seed-string", {"seed": '"x"'}, QIDS, ("key 'seed'", "'x'")),
        ("seed-negative-mdav", {"seed": "-1", "method": '"mdav"'}, QIDS, ("seed must be an integer >= 0, got -1",)),
        ("mask-string", {}, '[qids.age]\nhierarchy = { mask = "five" }\n', ("qid 'age'", "'mask'", "'five'")),
        ("separator-number", {"separator": "5"}, QIDS, ("key 'separator'", "got 5")),
        ("separator-two-chars", {"separator": '";;"'}, QIDS, ("'separator'", "';;'")),
        ("k-string", {"k": '"5"'}, QIDS, ("key 'k'", "'5'")),
        ("k-float", {"k": "2.5"}, QIDS, ("key 'k'", "2.5")),
        ("k-zero", {"k": "0"}, QIDS, ("k must be an integer >= 1, got 0",)),
        ("k-above-rows", {"k": "13"}, QIDS, ("k=13", "12 rows")),
        ("k-missing", {"k": None}, QIDS, ("missing required key 'k'",)),
        ("input-missing-key", {"input": None}, QIDS, ("missing required key 'input'",)),
        ("input-missing-file", {"input": '"missing.parquet"'}, QIDS, ("missing.parquet", "does not exist")),
        ("input-not-utf8", {"input": '"bad.csv"'}, QIDS, ("bad.csv", "not UTF-8", "0xe9")),
        ("qids-a-list", {"qids": '["age"]'}, "", ("key 'qids'", "['age']")),
        ("qids-empty", {}, "[qids]\n", ("[qids] must name at least one column",)),
        ("qid-not-a-column", {}, QIDS + '[qids.zip]\nhierarchy = "suppress"\n', ("qids ['zip']",)),
        ("qid-table-unknown-key", {}, '[qids.age]\nhierarchy = "suppress"\nlevels = 3\n', ("[qids.age]", "['levels']")),
        ("hierarchy-a-number", {}, "[qids.age]\nhierarchy = 5\n", ("qid 'age'", "got 5")),
        ("hierarchy-file-missing", {}, '[qids.age]\nhierarchy = "nope.csv"\n', ("qid 'age'", "nope.csv")),
        (
            "hierarchy-intervals-string",
            {},
            '[qids.age]\nhierarchy = { intervals = "5" }\n',
            ("qid 'age'", "'intervals'"),
        ),
        (
            "hierarchy-width-string",
            {},
            '[qids.age]\nhierarchy = { mask = 2, width = "x" }\n',
            ("qid 'age'", "'width'", "'x'"),
        ),
        ("hierarchy-unknown-kind", {}, "[qids.age]\nhierarchy = { digits = 3 }\n", ("qid 'age'", "digits")),
        # review20 item 6: these built a level per masked character (OOM-killed at 18 GB, a MemoryError traceback)
        (
            "mask-int64-max",
            {},
            "[qids.age]\nhierarchy = { mask = 9223372036854775807 }\n",
            ("qid 'age'", "'mask'", "at most 100", "got 9223372036854775807"),
        ),
        (
            "mask-hundred-million",
            {},
            "[qids.age]\nhierarchy = { mask = 100000000 }\n",
            ("qid 'age'", "'mask'", "at most 100", "got 100000000"),
        ),
        (
            "width-hundred-million",
            {},
            "[qids.age]\nhierarchy = { mask = 2, width = 100000000 }\n",
            ("qid 'age'", "'width'", "at most 39", "got 100000000"),
        ),
        (
            "no-hierarchy-for-fulldomain",
            {},
            "[qids.age]\n[qids.sex]\n",
            ("['age', 'sex'] have no hierarchy", "fulldomain"),
        ),
        ("method-unknown", {"method": '"magic"'}, QIDS, ("method", "'magic'")),
        ("metric-for-datafly", {"method": '"datafly"', "metric": '"ncp"'}, QIDS, ("method 'datafly' takes no metric",)),
        ("metric-unknown", {"metric": '"nllm"'}, QIDS, ("metric of method 'fulldomain'", "'nllm'")),
        ("null-unknown", {"null": '"drop"'}, QIDS, ("null must be one of", "'drop'")),
        # the way out is the job's key, not Python's keyword (newuser4 read "pass null='suppress'")
        (
            "nulls-refused",
            {"input": '"nulls.parquet"'},
            QIDS,
            ("column 'age' has 2 null values", 'or set null = "suppress" in the job file to publish them'),
        ),
        (
            "nulls-refused-duckdb",
            {"input": '"nulls.parquet"', "engine": '"duckdb"'},
            QIDS,
            ("column 'age' has 2 null values", 'or set null = "suppress" in the job file to publish them'),
        ),
        ("encode-unknown", {"encode": '["magic"]'}, QIDS, ("'magic'",)),
        ("encode-layout", {"encode_layout": '"tall"'}, QIDS, ("encode_layout", "'tall'")),
        (
            "report-is-an-encoding",
            {"encode": '["fillparent"]', "report": '"out/anon.fillparent.parquet"'},
            QIDS,
            ("anon.fillparent.parquet", "named twice"),
        ),
        ("report-number", {"report": "5"}, QIDS, ("key 'report'", "got 5")),
        ("report-is-the-output", {"report": '"out/anon.parquet"'}, QIDS, ("anon.parquet", "named twice")),
        # two targets of one path, or one inside another: refused before any data is read (hunt48: after the whole
        # run, or a FileNotFoundError traceback); the input's nulls would be refused once read, so they must not be
        *(
            (
                f"{name}-before-data{'-' + engine if engine else ''}",
                {**keys, "input": '"nulls.parquet"', **({"engine": f'"{engine}"'} if engine else {})},
                QIDS,
                words,
            )
            for name, keys, words in (
                (
                    "report-is-the-output",
                    {"report": '"out/anon.parquet"'},
                    ("report '", "out/anon.parquet'", "named twice", "the output has that path"),
                ),
                (
                    "report-is-an-encoding",
                    {"encode": '["fillparent"]', "report": '"out/anon.fillparent.parquet"'},
                    ("encoding 'fillparent' '", "anon.fillparent.parquet'", "named twice", "the report has that path"),
                ),
                (
                    "report-inside-the-output",
                    {"report": '"out/anon.parquet/r.json"'},
                    ("anon.parquet/r.json' is inside the output '", "out/anon.parquet', which the run writes whole"),
                ),
            )
            for engine in ("", "spark")
            if not (engine and "encode" in keys)  # Spark takes no encode (refused when the job is loaded)
        ),
        ("drop-number", {"drop": "5"}, QIDS, ("key 'drop'", "got 5")),
        ("qid-in-drop", {"drop": '["age"]'}, QIDS, ("qids ['age'] are also in drop",)),
        (
            "sensitive-in-drop",
            {"sensitive": '"party"', "drop": '"party"'},
            QIDS,
            ("sensitive 'party' is also in drop",),
        ),
        ("sensitive-is-a-qid", {"sensitive": '"age"'}, QIDS, ("sensitive 'age' is also a quasi-identifier",)),
        (
            "undeclared-identifier",
            {"insensitive": None},
            QIDS,
            (
                "column 'id' is not declared",
                'set drop = ["id"] in the job file to remove it',
                'or set insensitive = ["id"] in the job file to publish it as is',
            ),
        ),
        ("option-unknown", {"foo": "3"}, QIDS, ("unknown key 'foo'", "not a job key", "nor an option of any method")),
        ("key-misspelled", {"sensitve": '"party"'}, QIDS, ("unknown key 'sensitve'", "did you mean 'sensitive'?")),
        ("required-key-misspelled", {"inpt": '"t.parquet"'}, QIDS, ("unknown key 'inpt'", "did you mean 'input'?")),
        ("option-misspelled", {"max_supressed": "1"}, QIDS, ("'max_supressed'", "did you mean 'max_suppressed'?")),
        ("option-wrong-type", {"max_suppressed": '"3"'}, QIDS, ("option 'max_suppressed'", "'3'")),
        ("mondrian-mode", {"method": '"mondrian"', "mode": '"loose"'}, QIDS, ("option 'mode'", "'loose'")),
        ("output-a-folder", {"output": '"folder.parquet"'}, QIDS, ("folder.parquet", "folder")),
        ("output-dot-csv", {"output": '".csv"'}, QIDS, (".csv'", ".parquet")),
        ("output-csv", {"output": '"anon.csv"'}, QIDS, ("anon.csv", ".parquet")),
        ("output-exists", {"output": '"nulls.parquet"'}, QIDS, ("nulls.parquet", "exists", "--overwrite")),
        ("output-is-input", {"output": '"t.parquet"'}, QIDS, ("output", "t.parquet", "is an input of this run")),
        ("output-under-a-file", {"output": '"t.csv/anon.parquet"'}, QIDS, ("t.csv", "is a file")),
        # issue 27
        (
            "privacy-missing-parameter",
            {"sensitive": '"party"'},
            QIDS + '[[privacy]]\nmodel = "l-diversity"\nattribute = "party"\n',
            ("[[privacy]] table 1", "'l-diversity'", "needs option 'l'"),
        ),
        (
            "privacy-on-a-qid",
            {},
            QIDS + '[[privacy]]\nmodel = "l-diversity"\nattribute = "age"\nl = 2\n',
            ("l-diversity on 'age'", "is a quasi-identifier"),
        ),
        (
            "privacy-on-an-insensitive-column",
            {},
            QIDS + '[[privacy]]\nmodel = "l-diversity"\nattribute = "id"\nl = 2\n',
            ("l-diversity on 'id'", "is declared insensitive"),
        ),
        ("empty-input-builtin-hierarchy", {"input": '"empty.parquet"'}, QIDS, ("the input has no rows",)),
        (
            "duckdb-memory-limit-tiny",
            {"engine": '"duckdb"'},
            QIDS + '[duckdb]\nmemory_limit = "1KB"\n',
            ("DuckDB ran out of memory", "memory_limit = '1KB'"),
        ),
        (
            "spark-master-bogus",
            {"engine": '"spark"'},
            QIDS + '[spark]\nmaster = "bogus://x"\n',
            ("key 'spark.master'", "'bogus://x'", "is not a Spark master"),
        ),
        (
            "csv-key-on-parquet",
            {"has_header": "false", "columns": '["id", "age", "sex", "party"]'},
            QIDS,
            ("key 'has_header' is for CSV input", "t.parquet"),
        ),
        (
            "csv-no-header-no-columns",
            {"input": '"t.csv"', "has_header": "false"},
            QIDS,
            ("has_header = false", "columns"),
        ),
        (
            "csv-columns-count",
            {"input": '"t.csv"', "columns": '["a", "b"]'},
            QIDS,
            ("columns names 2 columns", "t.csv", "4"),
        ),
        ("schema-unknown-type", {"schema": '{ age = "Integer" }'}, QIDS, ("schema type of column 'age'", "'Integer'")),
        (
            "schema-lossy-cast",
            {"input": '"floats.csv"', "schema": '{ age = "Int64" }'},
            QIDS,
            ("schema: column 'age'", "not Int64", "36.5"),
        ),
        ("schema-not-a-column", {"schema": '{ zip = "Int64" }'}, QIDS, ("schema: columns ['zip']",)),
        *(
            (
                f"csv-later-value-breaks-the-type-on-{engine}",
                {"input": '"late.csv"', "engine": f'"{engine}"'},
                QIDS,
                ("late.csv' as CSV", "'age'", 'null_values = ["x"]'),
            )
            for engine in ("polars", "duckdb")
        ),
        *(
            (
                f"csv-row-with-more-fields-on-{engine}",
                {"input": '"ragged.csv"', "engine": f'"{engine}"'},
                QIDS,
                ("ragged.csv' as CSV", "number of fields than the header"),
            )
            for engine in ("polars", "duckdb")
        ),
        (
            "csv-columns-twice",
            {"input": '"t.csv"', "columns": '["id", "age", "sex", "sex"]'},
            QIDS,
            ("key 'columns'", "['sex'] more than once"),
        ),
        (
            "csv-columns-twice-on-duckdb",
            {"input": '"t.csv"', "columns": '["id", "age", "age", "party"]', "engine": '"duckdb"'},
            QIDS,
            ("key 'columns'", "['age'] more than once"),
        ),
        (
            "csv-schema-not-castable-on-duckdb",
            {"input": '"t.csv"', "schema": '{ sex = "Int64" }', "engine": '"duckdb"'},
            QIDS,
            ("schema: column 'sex'", "not Int64", "'F'"),
        ),
    ]
    + [  # an option of another method: the job file takes it, the method refuses it
        (f"{name}-unknown-option", {"method": f'"{name}"', other: "1"}, QIDS, (f"method {name!r}", repr(other)))
        for name in sorted(METHODS)
        for other in [next(o for o in ALL_OPTIONS if o not in option_names(METHODS[name].options))]
    ]
    + [
        (f"{name}-option-{f.name}-wrong-type", {"method": f'"{name}"', f.name: "[[1]]"}, QIDS, (f"option {f.name!r}",))
        for name in sorted(METHODS)
        for f in dataclasses.fields(METHODS[name].options)
    ]
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    w = tmp_path / "w"
    (w / "folder.parquet").mkdir(parents=True)
    T.write_parquet(w / "t.parquet")
    T.write_csv(w / "t.csv")
    T.with_columns(age=pl.when(pl.col("id").is_in([0, 5])).then(None).otherwise(pl.col("age"))).write_parquet(
        w / "nulls.parquet"
    )
    T.with_columns(party=pl.when(pl.col("id") == 4).then(None).otherwise(pl.col("party"))).write_parquet(
        w / "party_nulls.parquet"
    )
    (w / "bad.csv").write_bytes(b"id,age,sex\n1,31,F\n2,33,\xe9\n")
    rows = pl.concat([T] * 10).write_csv()  # 120 rows: past the rows Polars infers the types from
    (w / "late.csv").write_text(rows + "99,x,F,a\n")
    (w / "ragged.csv").write_text(rows + "99,31,F,a,extra\n")
    T.head(0).write_parquet(w / "empty.parquet")
    T.with_columns(age=pl.col("age").cast(pl.Float64) + pl.when(pl.col("id") == 3).then(0.5).otherwise(0.0)).write_csv(
        w / "floats.csv"
    )
    return w


def run(work: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    """Run ``work/job.toml``; returns the exit code and stderr."""
    code = cli.main(["anonymize", str(work / "job.toml"), *flags])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("keys", "qids", "culprit"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_job_refusal(
    keys: dict[str, str | None], qids: str, culprit: tuple[str, ...], work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "job.toml").write_text(render(keys, qids))
    with unchanged(work):
        code, err = run(work, capsys)
    assert code == 2
    one_line_error(err, culprit)


def test_the_base_job_runs(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cases above fail because of their change, not because the base job is broken."""
    (work / "job.toml").write_text(render({}))
    code, err = run(work, capsys)
    # T's 4 (age, sex) tuples each hold 3 rows: already 2-anonymous, published as is; party is not declared
    assert code == 0 and err.splitlines() == [
        f"polars-anon: fulldomain k=2: published 12 rows in 4 classes, smallest 3 -> {work / 'out' / 'anon.parquet'}; "
        "not declared, published as is: party; the risk figures count only the qids age, sex (declare each column: "
        "qids, sensitive, insensitive or drop)"
    ]
    assert pl.read_parquet(work / "out" / "anon.parquet").height == 12


def test_output_folder_refused_even_with_overwrite(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "job.toml").write_text(render({"output": '"folder.parquet"'}))
    with unchanged(work):
        code, err = run(work, capsys, "--overwrite")
    assert code == 2
    one_line_error(err, ("folder.parquet", "is a folder"))


def test_output_is_input_refused_even_with_overwrite(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--overwrite replaces an earlier output, never the data the job reads."""
    (work / "job.toml").write_text(render({"output": '"t.parquet"'}))
    with unchanged(work):
        code, err = run(work, capsys, "--overwrite")
    assert code == 2
    one_line_error(err, ("t.parquet", "is an input of this run"))


def test_drop_string_is_the_column(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``drop = "id"`` drops the column id (it was read as ['i', 'd'])."""
    (work / "job.toml").write_text(render({"insensitive": None, "drop": '"id"'}))
    code, _ = run(work, capsys)
    assert code == 0
    assert pl.read_parquet(work / "out" / "anon.parquet").columns == ["age", "sex", "party"]
    report = json.loads((work / "out" / "anon.report.json").read_text())
    assert [c["type"] for c in report["columns"] if c["name"] == "id"] == ["identifying"]


def test_missing_hierarchy_file_names_where_it_looked(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """newuser4 read "cannot read hierarchy file 'zip_hier.csv'" without the folder it was looked for in: a job's
    relative path is read from the job file's folder, not from where the command runs."""
    (work / "jobs").mkdir()
    (work / "jobs" / "job.toml").write_text(render({"input": '"../t.parquet"'}, '[qids.age]\nhierarchy = "ages.csv"\n'))
    monkeypatch.chdir(work.parent)
    with unchanged(work):
        code = cli.main(["anonymize", "w/jobs/job.toml"])
    assert code == 2
    one_line_error(
        capsys.readouterr().err,
        (
            "qid 'age': cannot read hierarchy file 'w/jobs/ages.csv' "
            f"(looked for {str(work / 'jobs' / 'ages.csv')!r}): No such file or directory",
        ),
    )


def test_explore_names_the_job_key_for_nulls(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "job.toml").write_text(render({"input": '"nulls.parquet"'}))
    with unchanged(work):
        code = cli.main(["explore", str(work / "job.toml"), "--k", "2"])
    assert code == 2
    line = one_line_error(capsys.readouterr().err, ('or set null = "suppress" in the job file',))
    assert "null='suppress'" not in line


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_sensitive_null_names_the_job_key(engine: str, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mend31: the null of a [[privacy]] attribute was refused with Python's "sensitive_null='ignore'"."""
    privacy = '[[privacy]]\nmodel = "l-diversity"\nattribute = "party"\nl = 2\n'
    keys: dict[str, str | None] = {"input": '"party_nulls.parquet"', "engine": f'"{engine}"'}
    (work / "job.toml").write_text(render(keys) + privacy)
    with unchanged(work):
        code, err = run(work, capsys)
    assert code == 2
    words = (
        "l-diversity on 'party': column 'party' holds 1 null values; say how the model reads them: "
        "set sensitive_null = \"ignore\" in the job file (left out of every class's distribution and of the table's) "
        'or set sensitive_null = "value" in the job file (null is one more value)',
    )
    line = one_line_error(err, words)
    assert "sensitive_null='" not in line


def test_null_suppress_with_proportional_refused_before_writing(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Encodings from the original values cannot line up with rows published at the root: refused before any write,
    with a message that does not suggest the option the job already has."""

    def no_write(*args: object, **kwargs: object) -> None:
        raise AssertionError("the table was staged before the refusal")

    monkeypatch.setattr(Anonymized, "stage", no_write)
    (work / "job.toml").write_text(
        render({"input": '"nulls.parquet"', "null": '"suppress"', "encode": '["proportional"]'})
    )
    with unchanged(work):
        code, err = run(work, capsys)
    assert code == 2
    line = one_line_error(err, ("encode ['proportional']", "2 rows hold nulls"))
    assert "null='suppress'" not in line and "pass null" not in line


def test_output_is_the_population_refused_even_with_overwrite(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A [[privacy]] population table was not protected: --overwrite replaced it with the output."""
    T.write_parquet(work / "pop.parquet")  # the sample is its population: k-map holds, the job would be written
    privacy = '[[privacy]]\nmodel = "k-map"\nk = 1\npopulation = "pop.parquet"\n'
    (work / "job.toml").write_text(render({"input": '"t.parquet"', "output": '"pop.parquet"'}) + privacy)
    with unchanged(work):
        code, err = run(work, capsys, "--overwrite")
    assert code == 2
    one_line_error(err, ("pop.parquet", "is an input of this run"))
