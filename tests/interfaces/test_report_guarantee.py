"""Every display of a report (repr, notebook, page, the command line's line) says what the check verified, in the
guarantee's own terms (hunt42): MDAV permute's clusters (not published classes), local suppression's wildcard
reading (not missing values as a category), and where the check ran. Expected values by hand or by a loop over
the rows."""

from __future__ import annotations

import base64
import re
from collections import Counter

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.report import notebook

AGES = pl.DataFrame({"age": [21, 22, 23, 24, 31, 32, 33, 34, 41, 42, 43, 44], "x": list(range(1, 13))})
ZIPS = pl.DataFrame(
    {
        "sex": list("ffmmffmmffmm"),
        "zip": ["a", "a", "130", "130", "140", "140", "150", "150", "160", "160", "170", "171"],
    }
)


@pytest.fixture(scope="module")
def permuted() -> tuple[pa.Anonymized, pl.DataFrame]:
    res = pa.anonymize(AGES, hierarchies={}, qids=["age", "x"], k=3, method="mdav", publish="permute")
    return res, res.collect()


def test_mdav_permute_is_shown_as_verified_clusters_with_its_exposure(permuted) -> None:
    res, out = permuted
    before = [tuple(map(str, r)) for r in AGES.rows()]
    after = out.rows()
    counts = Counter(after)
    own = [a for b, a in zip(before, after, strict=True) if a == b]  # rows the permutation left in place
    unique = [a for a in own if counts[a] == 1]
    text = repr(res)
    # 12 records, k = 3: MDAV takes clusters of exactly k until fewer than 2k are left, so 4 clusters of 3
    assert "12 rows published in 4 MDAV clusters of at least k = 3 rows" in text and "smallest cluster 3" in text
    assert "probabilistic k-anonymity verified" in text and "in 4 classes" not in text
    assert f"{len(own)} records published with their own exact tuple, {len(unique)} of them unique" in text
    assert f"smallest group {min(counts.values())}" in text
    shown = res._repr_html_()
    assert "probabilistic k-anonymity, k = 3; smallest cluster 3" in shown and "smallest class" not in shown
    assert "verified on the published rows" not in shown and "every cluster has k rows" in shown
    assert "own tuples" in shown and "groups of equal published tuples" in shown
    page = res.report_html()
    assert "<b>probabilistic k-anonymity, k = 3</b>" in page and "probabilistic k-anonymity k-anonymity" not in page
    assert "The guarantee is probabilistic, not" not in page and "not k-anonymity of the published tuples" in page
    assert f"<b>{len(own)}</b> records" in page


def test_mdav_treatments_say_what_was_published() -> None:
    permute = pa.anonymize(AGES, hierarchies={}, qids=["age", "x"], k=3, method="mdav", publish="permute")
    assert {c["treatment"] for c in permute.report["columns"]} == {"permuted within MDAV clusters of at least k rows"}
    people = AGES.with_columns(sex=pl.Series(list("ffmmffmmffmm")))
    hierarchies = {"age": pa.Hierarchy.intervals(people["age"], [5, 10]), "sex": pa.Hierarchy.suppression(["f", "m"])}
    res = pa.anonymize(people, hierarchies=hierarchies, qids=["age", "sex"], k=3, method="mdav", insensitive=["x"])
    out = res.collect()
    treatment = {c["name"]: c["treatment"] for c in res.report["columns"]}
    assert treatment == {
        "age": "replaced by its MDAV cluster's mean",
        "sex": "replaced by its MDAV cluster's most frequent value",
        "x": "published as is",
    }
    assert out["age"].dtype == pl.Float64 and not set(out["age"]) <= set(AGES["age"].cast(pl.Float64))


@pytest.fixture(scope="module")
def suppressed() -> pa.Anonymized:
    res = pa.anonymize(ZIPS, hierarchies={}, qids=["sex", "zip"], k=2, method="local_suppression")
    res.collect()
    return res


def test_local_suppression_reads_missing_cells_as_wildcards_everywhere(suppressed) -> None:
    """(m, 171) is blanked to (m, missing), which matches every m record: fk 6; (m, 130) and (m, 150) gain it: 3;
    (m, 170) gains it: 2; the f classes stay 2. So fk 2 for 7 records (4 patterns), 3 for 4 (2), 6 for 1 (1)."""
    r = suppressed.report
    published = r["class_sizes"]["published"]
    assert r["min_class_size"] == published["min"] == 2 and r["n_classes"] == published["n_classes"] == 7
    bins = [(b["low"], b["high"], b["classes"], b["rows"]) for b in published["bins"]]
    assert bins == [(1, 1, 0, 0), (2, 4, 6, 11), (5, None, 1, 1)]  # edges 1, 2, 5 (k = 2, largest fk 6)
    assert r["risk"]["output"]["prosecutor"]["average"] == pytest.approx((7 / 2 + 4 / 3 + 1 / 6) / 12)
    shown = suppressed._repr_html_()
    assert "k-anonymity with missing values as wildcards, k = 2; fewest records a record matches 2" in shown
    assert "2 classes, 2 rows" not in shown and "6 patterns, 11 rows" in shown
    page = suppressed.report_html()
    assert "wildcard-k-anonymity k-anonymity" not in page
    assert "<b>k-anonymity with missing values as wildcards, k = 2</b>" in page
    assert "average risk (mean of 1 / records matched)</td><td class=num>0.5833</td><td class=num>0.4167" in page
    line = cli.summary_line(dict(r))
    assert "published 12 rows in 7 distinct patterns, fewest records a record matches 2" in line


def test_every_display_counts_the_blanked_cells(suppressed) -> None:
    """Local suppression removes no row but blanks key cells: every summary said "0 suppressed" and only the page's
    method facts gave the cells (mend34). By hand (the fixture above): (m, 171)'s zip is blanked, 1 of 12 x 2 cells,
    which the published nulls count too."""
    blanked = sum(suppressed.collect()[q].null_count() for q in ("sex", "zip"))
    said = "1 of 24 key cells blanked (set missing; 4.2%): zip 1"
    assert blanked == 1 and suppressed.report["suppressed"] == 0
    text = repr(suppressed)
    assert "1 key cell blanked;" in text and "suppressed" not in text
    assert said in suppressed._repr_html_() and "0 rows (0.0% of the input)" not in suppressed._repr_html_()
    page = suppressed.report_html()
    assert re.search(r'data-figure="details.suppressed_total"><span>key cells blanked</span><b>1</b>', page)
    assert f"<b>{said}</b>; a blanked cell is published missing, its row kept." in page
    lines = cli.summary_lines(dict(suppressed.report))
    assert said in lines and not any(line.startswith("suppressed ") for line in lines)


def test_a_wildcard_risk_names_patterns_not_classes(suppressed) -> None:
    """`pa.risk(missing="wildcard")`'s notebook box counted "classes" (mend32). By hand (the fixture's docstring):
    7 patterns; fk 2 for 7 records (4 patterns), 3 for 4 (2 patterns), 6 for 1; no record matches only itself."""
    risk = pa.risk(suppressed.collect(), ["sex", "zip"], missing="wildcard")
    assert risk["missing"] == "wildcard"
    shown = " ".join(re.sub(r"<[^>]+>", " ", risk._repr_html_()).split())
    assert "12 rows in 7 distinct patterns" in shown
    assert "0.0% of the records match no record but themselves" in shown
    assert "4 patterns, 7 rows" in shown and "2 patterns, 4 rows" in shown and "1 pattern, 1 row" in shown
    assert "class" not in shown


def _axis_labels(page: str) -> list[str]:
    """The text of the page's plots (matplotlib writes each text, drawn as paths, in a comment)."""
    svgs = [base64.b64decode(m).decode() for m in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)]
    return [t for svg in svgs for t in re.findall(r"<!-- (.*?) -->", svg) if t.startswith("class size")]


def test_the_class_size_plot_says_what_a_published_size_counts(suppressed, permuted) -> None:
    """The plot's axis said "rows sharing one combination" for every guarantee (mend32): as published, a wildcard
    run's size is the records a record matches, MDAV permute's a group of equal tuples (not its clusters)."""
    plain = pa.anonymize(ZIPS, hierarchies={"zip": pa.Hierarchy.suppression(ZIPS["zip"])}, qids=["zip"], k=2)
    classic = "class size (rows sharing one combination of quasi-identifier values)"
    assert _axis_labels(plain.report_html()) == [classic]
    (wildcard,) = _axis_labels(suppressed.report_html())
    assert "as published, records a record matches, a missing value matching any value" in wildcard
    (mdav,) = _axis_labels(permuted[0].report_html())
    assert "as published, groups of equal tuples, not the clusters" in mdav


def test_the_page_says_where_the_check_ran(suppressed, tmp_path) -> None:
    collected = suppressed.report_html()
    assert "Checked independently on the published rows (nothing was written)" in collected
    assert "on the written file" not in collected and "write and verify" not in collected
    res = pa.anonymize(ZIPS, hierarchies={}, qids=["sex", "zip"], k=2, method="local_suppression")
    assert "Not yet checked" in res.report_html()
    res.sink_parquet(tmp_path / "o.parquet")
    written = (tmp_path / "o.report.html").read_text()
    assert "Checked independently on the written file" in written and "anonymize + write and verify" in written


def test_model_parameters_are_escaped_once() -> None:
    shown = notebook.check_html(
        {
            "k": 2,
            "k_anonymous": True,
            "models": [{"model": "l-diversity", "attribute": "a&b", "l": 2, "satisfied": True}],
        }
    )
    assert "attribute=a&amp;b, l=2" in shown and "&amp;amp;" not in shown


def test_a_missing_cell_is_no_published_value_and_one_row_is_a_row() -> None:
    """hunt42: local suppression's missing cell was listed with an empty label (" (1)") and counted in n_values; a
    run that suppressed one row said "1 rows"."""
    people = pl.DataFrame({"sex": ["f", "f", "m", "m", "f"], "age": ["30", "30", "40", "40", "50"]})
    res = pa.anonymize(people, hierarchies={}, qids=["sex", "age"], k=2, method="local_suppression")
    assert res.collect()["age"].to_list() == ["30", "30", "40", "40", None]  # (f, 50) alone: its age blanked
    age = res.report["generalization"]["age"]
    assert age["n_values"] == 2 and age["top"] == [["30", 2], ["40", 2], [None, 1]]
    assert "<i>missing</i> (1)" in res.report_html()
    ages = pl.DataFrame({"age": [21, 22, 23, 24, 31, 32, 33, 34, 41, 42, 43, 44, 60], "sex": list("ffmmffmmffmmf")})
    hierarchies = {"age": pa.Hierarchy.intervals(ages["age"], [5, 10, 20]), "sex": pa.Hierarchy.suppression(["f", "m"])}
    one = pa.anonymize(ages, hierarchies=hierarchies, k=2, max_suppressed=1)
    one.collect()
    assert one.report["suppressed"] == 1 and "1 row (7.7% of the input)" in one._repr_html_()
