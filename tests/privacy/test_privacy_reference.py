"""One reference distribution: the report, pa.check and the CLI agree when told the same one.

Enforcement and the report compare classes with the input's distribution (``reference:
"input"``); a checker holding only the published file uses that file's own
(``"published"``) unless given the input. Suppression makes the two differ.
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.cli import main

H = {"g": pa.Hierarchy.suppression(["a", "b", "c", "d"])}
T = pl.DataFrame({
    "g": ["a"] * 4 + ["b"] * 4 + ["c"] * 4 + ["d"],
    "s": ["x", "x", "y", "y", "x", "y", "x", "y", "x", "y", "y", "x", "y"],
})  # fmt: skip
"""Input shares: x 6/13, y 7/13. Class d (one row) is suppressed; the published rows hold x 6/12, y 6/12."""


def test_report_and_check_agree_on_the_input_reference(tmp_path) -> None:
    res = pa.anonymize(T, hierarchies=H, k=2, max_suppressed=1, privacy=[pa.TCloseness("s", t=0.1)])
    out = res.collect()
    status = res.report["privacy"][0]
    assert res.report["suppressed"] == 1 and status["reference"] == "input"
    # every published class is half x, half y: |1/2 - 6/13| = 1/26 against the input
    assert status["max_measure"] == pytest.approx(1 / 26)
    got = pa.check(out, ["g"], [pa.TCloseness("s", t=0.1)], reference=T)["models"][0]
    assert got["reference"] == "input" and got["max_measure"] == pytest.approx(1 / 26)
    own = pa.check(out, ["g"], [pa.TCloseness("s", t=0.1)])["models"][0]
    assert own["reference"] == "published" and own["max_measure"] == pytest.approx(0.0)
    out.write_parquet(tmp_path / "out.parquet")
    T.write_parquet(tmp_path / "in.parquet")
    model = '{model = "t-closeness", attribute = "s", t = 0.1}'
    code = main(["check", str(tmp_path / "out.parquet"), "--qids", "g", "--k", "2", "--model", model,
                 "--reference", str(tmp_path / "in.parquet")])  # fmt: skip
    assert code == 0


def test_reference_must_hold_the_published_values() -> None:
    with pytest.raises(pa.errors.InputError, match=r"reference: column 's' of the checked table holds 1 values"):
        pa.check(T, ["g"], [pa.TCloseness("s", t=0.5)], reference=T.filter(pl.col("s") == "x"))


def test_models_without_a_distribution_name_no_reference() -> None:
    got = pa.check(T, ["g"], [pa.LDiversity("s", l=2)])["models"][0]
    assert "reference" not in got


def test_ordered_closeness_on_a_string_column_of_numbers_warns() -> None:
    """'5' sorts after '10' as text: a warning names the column and the fix; order= or a numeric column is quiet."""
    t = pl.DataFrame({"g": ["a", "a", "b", "b"], "n": ["5", "10", "5", "20"]})
    with pytest.warns(UserWarning, match=r"t-closeness on 'n': ordered distance on a String column of numbers"):
        pa.check(t, ["g"], [pa.TCloseness("n", t=0.5, distance="ordered")])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pa.check(t, ["g"], [pa.TCloseness("n", t=0.5, distance="ordered", order=("5", "10", "20"))])
        pa.check(t.with_columns(pl.col("n").cast(pl.Int64)), ["g"], [pa.TCloseness("n", t=0.5, distance="ordered")])
