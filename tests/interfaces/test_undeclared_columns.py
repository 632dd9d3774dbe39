"""A column left out of the call or the job is published as is (insensitive by default): every display of the result
names it and says the risk figures count the declared qids only (a forgotten qid was published raw under a reassuring
risk line). The expected line is written out by hand.
"""

from __future__ import annotations

import json
import re
import sys
from html import unescape
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli

# zip is not declared; city is declared insensitive; party is sensitive
T = pl.DataFrame(
    {
        "age": [31, 33, 38, 36],
        "zip": ["33101", "33101", "33102", "33102"],
        "city": ["Miami", "Miami", "Miami", "Tampa"],
        "sex": ["F", "M", "F", "M"],
        "party": ["A", "B", "B", "A"],
    }
)
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
SAID = (
    "not declared, published as is: zip; the risk figures count only the qids age, sex (declare each column: qids, "
    "sensitive, insensitive or drop)"
)


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\xa0", " ").split())


def test_python_result_names_the_undeclared_column_in_the_report_repr_and_displays() -> None:
    result = pa.anonymize(T, hierarchies=H, k=2, sensitive="party", insensitive="city")
    treatments = {c["name"]: c["treatment"] for c in result.report["columns"]}
    assert treatments["zip"] == "published as is (not declared)" and treatments["city"] == "published as is"
    assert repr(result).endswith(f"checks every guarantee; {SAID})")
    result.collect()
    assert repr(result).endswith(f"; verified; {SAID})") and "\n" not in repr(result)
    assert "not declared published as is: zip; the risk figures count only the qids age, sex" in _text(
        result._repr_html_()
    )
    assert SAID in _text(result.report_html())


def test_every_column_declared_says_nothing() -> None:
    result = pa.anonymize(T, hierarchies=H, k=2, sensitive="party", insensitive=["city", "zip"])
    result.collect()
    shown = repr(result) + _text(result._repr_html_()) + _text(result.report_html())
    assert "not declared" not in shown
    assert {c["treatment"] for c in result.report["columns"]} >= {"published as is"}


def test_the_command_line_names_it_on_a_terminal_and_beside_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    T.write_csv(tmp_path / "t.csv")
    (tmp_path / "job.toml").write_text(
        'input = "t.csv"\noutput = "o.parquet"\nk = 2\nsensitive = "party"\ninsensitive = ["city"]\n'
        'report_html = false\n[qids.age]\nhierarchy = { intervals = [5, 10] }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    argv = ["anonymize", str(tmp_path / "job.toml"), "--overwrite"]
    assert cli.main(argv) == 0  # to a pipe: the JSON on standard output, the summary line on standard error
    said = capsys.readouterr()
    assert json.loads(said.out)["columns"][1] == {
        "name": "zip",
        "type": "insensitive",
        "dtype": "Int64",  # the CSV's digits, read as integers
        "treatment": "published as is (not declared)",
    }
    assert said.err.rstrip("\n").endswith(f"; {SAID}")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(f"; {SAID}")
