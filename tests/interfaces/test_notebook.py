"""The notebook displays (``_repr_html_``) of anonymize, risk, check and explore results, and ``report_html()``.

Expected figures are computed by hand on tables small enough to read.
"""

from __future__ import annotations

import json
import re
from html import unescape

import polars as pl

import polars_anon as pa
from polars_anon.explore import ExploreGrid
from polars_anon.report import notebook
from polars_anon.report.html import render_html

AGES = pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"], "party": ["A", "B", "B", "A"]})
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}


def text(html: str) -> str:
    """The visible text of an HTML fragment, tags removed, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("\xa0", " ").split())


def test_anonymized_says_what_was_published_before_and_after_the_check() -> None:
    # ages 31-38 share the band 30-39 (age level 2); sex is kept: classes (30-39, F) and (30-39, M), 2 rows each
    result = pa.anonymize(AGES, hierarchies=H, k=2, sensitive="party", privacy=[pa.LDiversity("party", l=2)])
    before = text(result._repr_html_())
    assert "fulldomain, k = 2" in before
    assert "4 rows in 2 classes (input: 4 rows, 4 classes)" in before
    assert "smallest class 2" in before and "not yet verified" in before
    assert "0 rows (0.0% of the input)" in before and "levels age 2, sex 0" in before
    assert "2 classes, 4 rows" in before  # the histogram: both classes in one bin
    result.collect()
    after = text(result._repr_html_())
    assert "verified on the published rows" in after and "not yet verified" not in after
    assert "l-diversity (attribute=party, l=2" in after  # each class holds A and B
    assert "&#10003;" in result._repr_html_() and "&#10007;" not in result._repr_html_()
    # two classes of 2: each record's risk 1/2, every record above the report's threshold 0.2
    assert "risk left at most 50.00% a record (1 in 2), 100.0% of the records above 20%" in after
    assert "risk left checked on collect / sink" in before
    assert "attribute disclosure" not in after  # each class holds both parties


def test_anonymized_says_what_a_sensitive_value_gives_away_and_what_loses_less() -> None:
    """The notebook summary had no remaining risk, attribute disclosure or method advice (the HTML page had)."""
    report = {
        "method": "fulldomain", "k": 2, "min_class_size": 2, "n_rows": 4, "loss": 0.5,
        "attribute_disclosure": {"party": {"records_single_value": 2, "share_single_value": 0.5}},
        "method_advice": {"text": "topdown would lose 0.25 (this run 0.5)"},
    }  # a report's fields, by hand  # fmt: skip
    shown = text(notebook.anonymized_html(report))
    assert "attribute disclosure 'party' is the same for every record of its class for 2 records (50.0%)" in shown
    assert "advice topdown would lose 0.25 (this run 0.5)" in shown


def test_anonymized_repr_is_one_line() -> None:
    """``print(result)`` in a terminal: one line, not the dataclass's dump of every frame and the whole report."""
    result = pa.anonymize(AGES, hierarchies=H, k=2, sensitive="party")  # the classes of the test above
    assert repr(result) == (
        "Anonymized(fulldomain, k=2, engine=polars: 4 input rows, 2 classes planned, smallest 2; not yet verified: "
        "collect() or sink_parquet() checks every guarantee)"
    )
    result.collect()
    # loss: the band 30-39 covers all 10 leaves of the age hierarchy (loss 1), sex is kept (0): 0.5 per cell
    assert str(result) == (
        "Anonymized(fulldomain, k=2, engine=polars: 4 rows published in 2 classes, smallest 2, 0 suppressed, "
        "average cell loss 0.5; verified)"
    )


def test_anonymized_repr_counts_one_row_in_the_singular() -> None:
    """mend31: the repr said '1 input rows' and '1 rows published'; and '1 classes' (report.guarantee's counts)."""
    result = pa.anonymize(pl.DataFrame({"sex": ["F"]}), hierarchies={"sex": H["sex"]}, k=1)
    assert "engine=polars: 1 input row, 1 class planned, smallest 1;" in repr(result)
    result.collect()
    assert "engine=polars: 1 row published in 1 class, smallest 1," in repr(result)
    assert "1 row in 1 class (" in result._repr_html_()


def test_anonymized_escapes_what_it_shows() -> None:
    df = AGES.rename({"party": "<b>party</b>"})
    html = pa.anonymize(df, hierarchies=H, k=2)._repr_html_()
    assert "<b>party</b>" not in html and "&lt;b&gt;party&lt;/b&gt;" in html


def test_report_html_is_the_full_page_of_the_report() -> None:
    result = pa.anonymize(AGES, hierarchies=H, k=2)
    result.collect()
    page = result.report_html()
    assert page == render_html(result.report) and page.startswith("<!DOCTYPE html>")
    embedded = re.search(r'<script type="application/json" id="report-json">\n(.*)\n</script>', page, re.DOTALL)
    assert embedded is not None and json.loads(embedded.group(1).replace("<\\/", "</"))["min_class_size"] == 2


def test_risk_shows_its_figures_and_stays_a_dict() -> None:
    # classes of sizes 1 and 2: prosecutor risk 1, 1/2, 1/2; average 2/3; one record of three unique
    risk = pa.risk(pl.DataFrame({"q": ["a", "b", "b"]}), ["q"])
    assert isinstance(risk, dict) and json.loads(json.dumps(risk))["n_rows"] == 3
    shown = text(risk._repr_html_())
    assert "3 rows in 2 classes" in shown
    assert "prosecutor highest 1, average 0.6667, records at risk 100.0%" in shown
    assert "33.3% of the records are alone in their class" in shown
    assert "1 class, 1 row" in shown and "1 class, 2 rows" in shown and "3-4" not in shown  # empty bins left out


def test_check_marks_each_model() -> None:
    # classes (F): parties A, B -> 2 values; (M): B, B -> 1 value; so 2-diversity fails, k=2 holds
    df = pl.DataFrame({"sex": ["F", "F", "M", "M"], "party": ["A", "B", "B", "B"]})
    result = pa.check(df, ["sex"], [pa.LDiversity("party", l=2)], k=2)
    assert isinstance(result, dict) and result["models"][0]["satisfied"] is False
    html = result._repr_html_()
    shown = text(html)
    assert "4 rows in 2 classes" in shown and "k = 2, smallest class 2" in shown
    assert html.count("&#10007;") == 2 and html.count("&#10003;") == 1  # the title and the model fail; k holds


def test_explore_grid_marks_the_front_and_a_selection_is_a_plain_frame() -> None:
    df = pl.DataFrame({"age": [31, 33, 38, 36, 41, 44], "sex": ["F", "M", "F", "M", "F", "M"]})
    h = {"age": pa.Hierarchy.intervals(range(30, 50), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
    grid = pa.explore(df, hierarchies=h, k=[2, 3], methods=["fulldomain", "greedy"])
    assert isinstance(grid, ExploreGrid) and isinstance(grid, pl.DataFrame)
    html = grid._repr_html_()
    assert "explore, 4 configurations" in html
    assert html.count("background:#eef3f6;font-weight:600") == grid["front_highest_risk"].sum()
    selected = grid.select("method", "k")
    assert type(selected) is pl.DataFrame and "explore," not in selected._repr_html_()


def test_an_engine_result_shows_the_same_summary() -> None:
    on_polars = pa.anonymize(AGES, hierarchies=H, k=2)
    on_duckdb = pa.anonymize(AGES, hierarchies=H, k=2, engine="duckdb")
    on_polars.collect()
    on_duckdb.collect()
    assert text(on_duckdb._repr_html_()) == text(on_polars._repr_html_())
    assert "4 rows in 2 classes" in text(on_duckdb._repr_html_())


def test_a_share_of_records_at_risk_reads_zero_or_all_only_when_it_is() -> None:
    """review22: one record in 5,000 above the threshold read "0.0% of the records" (0.9996 read "100.0%")."""
    from polars_anon.report.phrases import risk_phrase

    def said(at_risk: float) -> str | None:
        return risk_phrase({"output": {"threshold": 0.2, "prosecutor": {"highest": 1.0, "records_at_risk": at_risk}}})

    assert (
        said(1 / 5000)
        == "re-identification risk left: at most 100.00% a record (1 in 1), 0.02% of the records above 20%"
    )
    assert said(0.9996) is not None and ", >99.9% of the records" in said(0.9996)
