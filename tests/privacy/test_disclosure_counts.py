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


def _by_loop(rows: list[dict], qids: list[str], attribute: str) -> dict:
    """Attribute disclosure of `attribute` by a loop over the published rows (a Counter per class)."""
    classes: dict[tuple, Counter] = {}
    for r in rows:
        classes.setdefault(tuple(r[q] for q in qids), Counter())[r[attribute]] += 1
    single = [sum(c.values()) for c in classes.values() if len(c) == 1]
    return {
        "records_single_value": sum(single),
        "share_single_value": sum(single) / len(rows),
        "classes_single_value": len(single),
        "largest_value_share": max(max(c.values()) / sum(c.values()) for c in classes.values()),
    }


def test_disclosure_from_the_checks_class_counts_matches_a_loop_over_the_published_rows() -> None:
    """A model's attribute is read from the check's counts of the published classes (a column per value for few
    values, a (class, value) group-by beyond WIDE values), another sensitive attribute from its own group-by: the
    same figures as a loop over the published rows, for each."""
    import numpy as np

    import polars_anon as pa
    from polars_anon.privacy.counts import WIDE

    rng = np.random.default_rng(7)
    n = 400
    df = pl.DataFrame(
        {
            "zip": rng.choice(["a", "b", "c", "d"], n),
            "age": rng.choice([f"{x}" for x in range(20, 30)], n),
            "party": rng.choice(["DEM", "REP", "IND"], n, p=[0.6, 0.3, 0.1]),
            "code": rng.integers(0, 2 * WIDE, n).astype(str),
            "score": rng.choice(["1", "2", None], n, p=[0.6, 0.3, 0.1]),
        }
    )
    H = {
        "zip": pa.Hierarchy.suppression(["a", "b", "c", "d"]),
        "age": pa.Hierarchy.intervals(range(20, 30), [5, 10]),
    }
    models = [pa.TCloseness("party", t=0.9), pa.LDiversity("code", l=2)]  # 0.9: classes of one party remain
    singles = []
    for method in ("fulldomain", "topdown"):
        result = pa.anonymize(df, hierarchies=H, k=5, method=method, sensitive=["score"], privacy=models)
        rows = result.collect().to_dicts()
        found = result.report["attribute_disclosure"]
        assert set(found) == {"party", "code", "score"}
        for attribute in ("party", "code", "score"):
            assert found[attribute] == _by_loop(rows, ["zip", "age"], attribute), (method, attribute)
        singles.append(found["party"]["records_single_value"])
    assert max(singles) > 0
