"""Job-file and CLI hierarchy specs: every form, every refusal naming qid, key and what is allowed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from polars_anon import Hierarchy, HierarchyError, InvalidParameterError, cli
from polars_anon.errors import AnonError
from polars_anon.hierarchy_spec import HierarchySpec, build_spec, parse_spec
from polars_anon.job import build_hierarchies, hierarchy_from_spec


def test_forms_build_the_same_hierarchies_as_python() -> None:
    ages = pl.Series([12, 18, 37, 95])
    days = pl.Series([dt.date(2020, 2, 29), dt.date(1999, 12, 31)])
    assert hierarchy_from_spec("age", {"intervals": [5, 10], "bottom": 18, "top": 90}, ages) == Hierarchy.intervals(
        ages, [5, 10], bottom=18, top=90
    )
    assert hierarchy_from_spec("birth", {"dates": ["month", "year"]}, days) == Hierarchy.dates(days, ["month", "year"])
    assert hierarchy_from_spec("age", {"ordered": [2, 2]}, ages) == Hierarchy.ordered(ages, [2, 2])
    assert hierarchy_from_spec(
        "edu", {"ordered": [2], "order": ["lo", "mid", "hi"], "label": "{first}+"}, ["hi", "lo", "mid"]
    ).leaf_labels == ["lo", "mid", "hi"]
    zips = hierarchy_from_spec("zip", {"mask": 5, "width": 5}, pl.Series([501]))
    assert zips.labels == ["*****", "0****", "00***", "005**", "0050*", "501"]


def test_build_hierarchies_reads_values_with_their_dtype() -> None:
    lf = pl.LazyFrame(
        {"zip": [2134, 33101, None], "birth": [dt.date(2020, 2, 29), None, dt.date(1999, 12, 31)], "x": [1, 2, 3]}
    )
    hs = build_hierarchies(lf, {"zip": {"mask": 5, "width": 5}, "birth": {"dates": ["year"]}, "x": None})
    assert list(hs) == ["zip", "birth"]  # x: a qid without hierarchy
    assert hs["zip"].label_of(hs["zip"].parent[hs["zip"].id_of("2134")]) == "0213*"
    assert hs["birth"].leaf_labels == ["1999-12-31", "2020-02-29"]


BAD_SPECS = [  # spec, what the message must say (besides the qid)
    (
        {"mask": "five"},
        r"hierarchy key 'mask' must be an integer >= 1 \(characters masked from the right\), got 'five'",
    ),
    ({"mask": 0}, r"hierarchy key 'mask' must be an integer >= 1"),
    ({"mask": True}, r"hierarchy key 'mask' must be an integer >= 1 .*got True"),
    ({"mask": 5, "width": "5"}, r"hierarchy key 'width' must be an integer >= 1"),
    ({"mask": 5, "digits": 3}, r"hierarchy key 'digits' is not allowed with 'mask'; allowed keys: \['mask', 'width'\]"),
    ({"intervals": "5,10"}, r"hierarchy key 'intervals' is invalid: .*widths must be a list of positive integers"),
    ({"intervals": [5, 7]}, r"hierarchy key 'intervals' is invalid: .*each width must divide the next"),
    ({"intervals": [5], "bottom": "18"}, r"hierarchy key 'bottom' must be an integer"),
    ({"intervals": [5], "top": 9.5}, r"hierarchy key 'top' must be an integer"),
    (
        {"intervals": [5], "bottom": 90, "top": 18},
        r"hierarchy key 'bottom' is invalid: .*bottom must be smaller than top",
    ),
    (
        {"intervals": [5], "step": 2},
        r"hierarchy key 'step' is not allowed with 'intervals'; allowed keys: \['intervals', 'bottom', 'top'\]",
    ),
    (
        {"dates": "year"},
        r"hierarchy key 'dates' is invalid: .*non-empty list of names from \['day', 'month', "
        r"'quarter', 'year', '5years', 'decade'\]",
    ),
    ({"dates": []}, r"hierarchy key 'dates' is invalid: .*non-empty list"),
    (
        {"dates": ["week"]},
        r"hierarchy key 'dates' is invalid: .*unknown levels \['week'\]; the levels are \['day', 'month'",
    ),
    ({"dates": ["year", "month"]}, r"hierarchy key 'dates' is invalid: .*must go up without repeats, in the order"),
    ({"dates": ["year"], "root": "x"}, r"hierarchy key 'root' is not allowed with 'dates'; allowed keys: \['dates'\]"),
    ({"ordered": [1]}, r"hierarchy key 'ordered' is invalid: .*integers >= 2"),
    ({"ordered": 5}, r"hierarchy key 'ordered' is invalid: .*non-empty list"),
    (
        {"ordered": [5], "label": "{firs}"},
        r"hierarchy key 'label' is invalid: .*placeholders are \{first\}, \{last\}, \{count\}, \{members\}",
    ),
    ({"ordered": [5], "label": 3}, r"hierarchy key 'label' is invalid: .*format string"),
    ({"ordered": [5], "order": "abc"}, r"hierarchy key 'order' must be a list of the column's values"),
    ({"ordered": [5], "order": ["a", "a"]}, r"hierarchy key 'order' is invalid: .*more than once \(first: \['a'\]\)"),
    ({"path": 5}, r"hierarchy key 'path' must be a file name, got 5"),
    ({"path": "a.csv", "separator": ";;"}, r"hierarchy key 'separator' must be one character"),
    (
        {},
        r"unknown hierarchy spec \{\}; a table names exactly one kind of \['path', 'mask', "
        r"'intervals', 'dates', 'ordered'\]",
    ),
    (
        {"mask": 5, "intervals": [5]},
        r"hierarchy spec \{'mask': 5, 'intervals': \[5\]\} gives 2 kinds; a table names exactly one "
        r"kind of \['path', 'mask'",
    ),
    (5, r"hierarchy must be \"file.csv\", \"suppress\", or a table with one of path, mask, intervals, dates, ordered"),
    ("", r"hierarchy must be"),
    (["suppress"], r"hierarchy must be"),
]


@pytest.mark.parametrize(("spec", "message"), BAD_SPECS)
def test_bad_specs_are_refused_before_any_data_is_read(spec: object, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=r"^qid 'q': " + message):
        parse_spec("q", spec)


@pytest.mark.parametrize(
    ("spec", "values", "error", "message"),
    [
        (
            {"dates": ["day", "month"]},
            pl.Series([dt.date(2020, 1, 1)]),
            InvalidParameterError,
            "'day' is the leaf itself for Date",
        ),
        (
            {"dates": ["year"]},
            pl.Series([1, 2]),
            InvalidParameterError,
            "values must be Date, Datetime or ISO date String, got dtype Int64",
        ),
        ({"mask": 5, "width": 4}, pl.Series([33101]), InvalidParameterError, r"width=4 but 1 values have more digits"),
        (
            {"ordered": [2], "order": ["a"]},
            pl.Series(["a", "b"]),
            InvalidParameterError,
            r"1 values are not in order \(first: \['b'\]\)",
        ),
        ({"intervals": [5]}, pl.Series(["x"]), InvalidParameterError, "value 'x' is not an integer"),
        (  # a whole float: labelled '20.0', never the leaf '20' (nan31): the way out named, in the job file's words
            {"intervals": [5]},  # (build_spec is a job's: mend34, it named the Python cast, which a job cannot make)
            pl.Series([20.0, 31.0]),
            InvalidParameterError,
            r"value 20.0 is not an integer; .* whole numbers; set schema = \{ q = \"Int64\" \} in the job file$",
        ),
        ("missing.csv", None, HierarchyError, "cannot read hierarchy file"),
    ],
)
def test_data_dependent_refusals_name_the_qid(
    spec: object, values: pl.Series | None, error: type, message: str
) -> None:
    with pytest.raises(error, match=r"^qid 'q': .*" + message):
        build_spec("q", parse_spec("q", spec), values)


def test_cli_hierarchy_forms() -> None:
    parse = cli._hierarchy_spec
    assert parse("birth=dates:month,year") == ("birth", {"dates": ["month", "year"]})
    assert parse("age=ordered:5,2") == ("age", {"ordered": [5, 2]})
    assert parse("age={ intervals = [5, 10], bottom = 18, top = 90 }") == (
        "age",
        {"intervals": [5, 10], "bottom": 18, "top": 90},
    )
    assert parse("zip=mask:5") == ("zip", {"mask": 5}) and parse("sex=suppress") == ("sex", "suppress")
    assert parse_spec("birth", parse("birth=dates:month,year")[1]) == HierarchySpec(
        "dates", {"levels": ["month", "year"]}
    )
    with pytest.raises(AnonError, match="not a TOML inline table"):
        parse("age={ intervals = [5, 10 }")
    with pytest.raises(AnonError, match="ordered needs integers"):
        parse("age=ordered:5,x")


def _job(tmp_path: Path, df: pl.DataFrame, qids: str, k: int = 2, method: str = "fulldomain") -> Path:
    df.write_parquet(tmp_path / "in.parquet")
    job = tmp_path / "job.toml"
    job.write_text(f'input = "in.parquet"\noutput = "out.parquet"\nk = {k}\nmethod = "{method}"\n{qids}\n')
    return job


def test_job_file_integer_zip_codes_merge_on_their_padded_prefix(tmp_path: Path) -> None:
    """Issue 12: an Int64 zip column with { mask = 5, width = 5 }: 2134 and 2139 meet at 0213*, not at an extra root
    (mend36: without the width, refused: see below)."""
    df = pl.DataFrame({"zip": [2134, 2139, 33101, 33109]})
    assert cli.main(["anonymize", str(_job(tmp_path, df, "[qids.zip]\nhierarchy = { mask = 5, width = 5 }"))]) == 0
    assert pl.read_parquet(tmp_path / "out.parquet")["zip"].to_list() == ["0213*", "0213*", "3310*", "3310*"]


@pytest.mark.parametrize("spec", ["{ mask = 5 }", "{ mask = 5, width = 5 }"])
def test_a_mask_spec_checks_its_codes_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    """mend40: a job's { mask = ... } ran masks.check_codes twice on the same values (once to word its refusal for
    the job file, once in the builder): it runs once, in the builder, and the job re-words its refusal (below)."""
    from polars_anon.builders import masks

    calls: list[object] = []
    check = masks.check_codes

    def counting(values: object, width: int | None, **words: object) -> None:
        calls.append(width)
        check(values, width, **words)  # type: ignore[arg-type]

    monkeypatch.setattr(masks, "check_codes", counting)
    df = pl.DataFrame({"zip": [12134, 12139, 33101, 33109]})
    assert cli.main(["anonymize", str(_job(tmp_path, df, f"[qids.zip]\nhierarchy = {spec}"))]) == 0
    assert pl.read_parquet(tmp_path / "out.parquet")["zip"].to_list() == ["1213*", "1213*", "3310*", "3310*"]
    assert len(calls) == 1


def test_job_file_integer_zip_codes_of_fewer_digits_are_refused_in_the_job_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend36: { mask = 5 } on an Int64 zip column (8628 was 08628) published '8628' beside '08***' with topdown.
    Fails before: exit 0. The way out is the job file's: a schema entry, or the hierarchy's width."""
    df = pl.DataFrame({"zip": [8628, 8628, 33101, 33109]})
    job = _job(tmp_path, df, "[qids.zip]\nhierarchy = { mask = 5 }", method="topdown")
    assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("polars-anon: error: masking: column 'zip' holds 1 integers with fewer digits")
        and "\n" not in err
    )
    assert 'read the column as text: set schema = { zip = "String" } in the job file' in err
    assert "else give { width = 5 } in its hierarchy table" in err and "schema_overrides" not in err
    assert not (tmp_path / "out.parquet").exists()
    job.write_text(job.read_text().replace("method", 'schema = { zip = "String" }\nmethod'))
    assert cli.main(["anonymize", str(job)]) == 0  # the way out works: masked on their own length
    assert pl.read_parquet(tmp_path / "out.parquet")["zip"].to_list() == ["8628", "8628", "3310*", "3310*"]


def test_job_file_builder_name_as_a_string_shows_the_table_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mend36: hierarchy = "dates" was read as a file path: "cannot read hierarchy file 'dates'". Fails before."""
    df = pl.DataFrame({"birth": [dt.date(2020, 2, 29), dt.date(2020, 3, 1)]})
    job = _job(tmp_path, df, '[qids.birth]\nhierarchy = "dates"')
    assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("""polars-anon: error: qid 'birth': hierarchy = "dates" is read as a hierarchy file and""")
    assert err.endswith("""'dates' is a builder: write it as a table, hierarchy = { dates = ["month", "year"] }""")
    assert "there is no file 'dates'" in err and "\n" not in err
    (tmp_path / "dates").write_text("2020-02-29;2020;*\n2020-03-01;2020;*\n")  # a file of that name: read
    assert cli.main(["anonymize", str(job)]) == 0


def test_job_file_dates_and_coded_intervals(tmp_path: Path) -> None:
    df = pl.DataFrame(
        {
            "birth": [dt.date(2020, 2, 29), dt.date(2020, 3, 1), dt.date(1999, 12, 31), dt.date(1999, 11, 30)],
            "age": [4, 3, 95, 91],
        }
    )
    qids = (
        '[qids.birth]\nhierarchy = { dates = ["month", "year", "decade"] }\n[qids.age]\nhierarchy = '
        "{ intervals = [5, 10], bottom = 18, top = 90 }"
    )
    assert cli.main(["anonymize", str(_job(tmp_path, df, qids))]) == 0
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert out.rows() == [("2020", "<18"), ("2020", "<18"), ("1999", ">=90"), ("1999", ">=90")]


def test_job_file_bad_spec_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    df = pl.DataFrame({"birth": [dt.date(2020, 2, 29)] * 2})
    job = _job(tmp_path, df, '[qids.birth]\nhierarchy = { dates = ["month", "yr"] }')
    assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err.strip()
    assert "qid 'birth': hierarchy key 'dates' is invalid" in err and "unknown levels ['yr']" in err and "\n" not in err
    assert not (tmp_path / "out.parquet").exists()
