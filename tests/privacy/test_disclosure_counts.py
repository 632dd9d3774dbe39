"""The report's attribute disclosure counts against a loop over the rows (String, integer and null keys)."""

from __future__ import annotations

from collections import Counter

import polars as pl

from polars_anon.report.disclosure import disclosure_counts, disclosure_of


def test_counts_and_disclosure_match_a_loop_over_rows() -> None:
    frame = pl.DataFrame(
        {
            "zip": ["331**", "331**", None, None, "332**", "332**", "332**", "331**"],
            "year": [1950, 1950, 1960, 1960, None, None, None, 1950],
            "party": ["DEM", "REP", "DEM", "DEM", None, None, "REP", "DEM"],
            "score": [1, 1, 2, 2, 3, 3, 3, 1],
        }
    )
    qids = ["zip", "year"]
    counts = disclosure_counts(frame.lazy(), qids, ["party", "score"])
    for attribute in ("party", "score"):
        expected = Counter((r["zip"], r["year"], r[attribute]) for r in frame.iter_rows(named=True))
        got = {(z, y, v): n for z, y, v, n in counts[attribute].rows()}
        assert got == dict(expected)
        assert counts[attribute].schema == pl.Schema(
            {"zip": pl.String, "year": pl.Int64, attribute: frame.schema[attribute], "count": pl.Int64}
        )
    found = disclosure_of(counts, qids)
    # classes: (331**, 1950) 3 rows DEM/REP/DEM; (None, 1960) 2 rows DEM; (332**, None) 3 rows None/None/REP
    assert found["party"] == {
        "records_single_value": 2,
        "share_single_value": 2 / 8,
        "classes_single_value": 1,
        "largest_value_share": 1.0,
    }
    assert found["score"]["records_single_value"] == 8 and found["score"]["classes_single_value"] == 3


def test_qids_named_like_the_summary_columns_are_counted() -> None:
    """review8 F9: a qid named 'top' or 'values' (names of the summary's own columns) failed on collect with a raw
    DuplicateError. By hand: the four (top, values) classes hold 5 rows each, every one a single value of s."""
    import polars_anon as pa

    df = pl.DataFrame({"top": ["a", "b"] * 10, "values": ["x", "y", "z", "w"] * 5, "s": ["p", "q"] * 10})
    H = {"top": pa.Hierarchy.suppression(["a", "b"]), "values": pa.Hierarchy.suppression(["x", "y", "z", "w"])}
    result = pa.anonymize(df, hierarchies=H, k=2, sensitive="s")
    assert result.collect().height == 20
    assert result.report["attribute_disclosure"]["s"] == {
        "records_single_value": 20,
        "share_single_value": 1.0,
        "classes_single_value": 4,
        "largest_value_share": 1.0,
    }
