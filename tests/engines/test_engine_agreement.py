"""The three engines publish the same rows and the same report (issue 18).

Each method (topdown on Adult only, to keep the Spark tests short) runs on Polars
(collected), on DuckDB and on Spark (written with the engine's own writer, re-read and
verified by the engine's group-by, then read back here). Every engine's rows are compared as
written, in order: each publishes them in input order (design rule 3; Spark's were sorted by a
row id here before, which hid the order); reports key by key,
everything but timings, paths and the engine's name. The generated register runs on DuckDB at a size that
matters to DuckDB (two row groups), on Spark at a twelfth of it with the size limits of the driver lowered alike."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa
import polars_anon.advice as advice
import polars_anon.algorithms.greedy as greedy
from polars_anon.demo import demo_hierarchy_specs, voter_register
from polars_anon.job import build_hierarchies
from tests.engines import equal

METHODS = ["fulldomain", "greedy", "mondrian", "datafly"]
ADULT_METHODS = [*METHODS, "topdown"]
VARYING = {"seconds", "write_seconds", "output", "engine", "phases"}


def _register(n_rows: int) -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    """A generated voter register of `n_rows` rows with a row id, and the demo's hierarchies."""
    df = voter_register(n_rows, seed=3).with_row_index("rid").with_columns(pl.col("rid").cast(pl.Int64))
    return df, build_hierarchies(df.lazy(), demo_hierarchy_specs())


@pytest.fixture(scope="module")
def register() -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    """A generated 125,000-row register: Polars against DuckDB.

    The size proves what 200,000 rows did, at less CPU: more rows than a DuckDB row group (122,880: DuckDB reads the
    table in two, in parallel), and 83,752 distinct qid tuples, above greedy's exact-loop limit (30,000: the blocked
    rounds run) and the method advice's class limit (5,000: no other method reruns), as with 200,000 (120,665)."""
    return _register(125_000)


@pytest.fixture(scope="module")
def small_register() -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    """A generated 10,000-row register: Polars against Spark, with the limits lowered (:func:`limits`). Its 9,265
    distinct qid tuples take the routes the large register's 83,752 take, at a twelfth of the rows Spark reads,
    shuffles, writes and reads back (Spark has no limit of its own that 125,000 rows reach)."""
    return _register(10_000)


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Greedy's exact-loop limit and the method advice's class limits lowered below the small register's 9,265
    tuples (:func:`_routes` checks that they are above), as the large register's tuples are above the real ones."""
    monkeypatch.setattr(greedy, "AUTO_EXACT", 2_000)
    monkeypatch.setattr(advice, "MAX_CLASSES", 500)
    monkeypatch.setattr(advice, "MAX_CLASSES_TOPDOWN", 2_000)


@pytest.fixture(scope="module")
def register_sdf(small_register: tuple, spark: Any) -> Any:
    return spark.createDataFrame(small_register[0].to_arrow()).cache()


def _routes(report: dict[str, Any], method: str) -> None:
    """The register's run took the routes its size is for: greedy's blocked rounds, and no other method reran for
    advice (too many classes)."""
    assert advice.candidates(report["n_input_classes"]) == ()
    assert report["n_input_classes"] > greedy.AUTO_EXACT
    if method == "greedy":
        assert report["details"]["block"] is not None


def _same(runs: dict[str, tuple[pl.DataFrame, dict[str, Any]]]) -> None:
    """The same rows, in the same order (every engine publishes the input order), and the same reports."""
    (_, (rows, report)), *others = runs.items()
    assert report["n_rows"] == rows.height > 0
    for engine, (other_rows, other_report) in others:
        assert other_report["engine"] == engine
        assert other_rows.equals(rows), engine
        for key in sorted(set(report) | set(other_report) - VARYING):
            if key not in VARYING:
                equal(other_report.get(key), report.get(key), (engine, key))


def _run(
    data: pl.DataFrame, engines: dict[str, Any], tmp: Path, **kw: Any
) -> dict[str, tuple[pl.DataFrame, dict[str, Any]]]:
    polars = pa.anonymize(data, **kw)
    runs = {"polars": (polars.collect(), polars.report)}
    for name, source in engines.items():
        out = tmp / f"{name}.parquet"
        report = pa.anonymize(source, engine=name, **kw).sink_parquet(out, report_html=False)
        runs[name] = (pl.read_parquet(out), report)
    return runs


def _register_runs(
    register: tuple, small_register: tuple, register_sdf: Any, tmp_path: Path, **kw: Any
) -> list[dict[str, tuple[pl.DataFrame, dict[str, Any]]]]:
    """The job `kw` on the large register (Polars, DuckDB) and on the small one (Polars, Spark): the same rows and
    reports on each, by the routes their sizes are for."""
    out = []
    for (df, hierarchies), sources in [(register, {"duckdb": register[0]}), (small_register, {"spark": register_sdf})]:
        runs = _run(df, sources, tmp_path, hierarchies=hierarchies, **kw)
        _same(runs)
        _routes(runs["polars"][1], kw["method"])
        out.append(runs)
    return out


@pytest.mark.parametrize("method", METHODS)
def test_register_same_rows_and_report(
    method: str, register: tuple, small_register: tuple, register_sdf: Any, limits: None, tmp_path: Path
) -> None:
    kw = {"k": 10, "method": method, "drop": ["voter_id", "name"], "insensitive": "rid"}
    for runs in _register_runs(register, small_register, register_sdf, tmp_path, **kw):
        assert runs["polars"][1]["suppressed"] < runs["polars"][0].height


@pytest.mark.parametrize("method", ADULT_METHODS)
def test_adult_same_rows_and_report(
    method: str, adult_rows: pl.DataFrame, adult_hierarchies: dict, adult_sdf: Any, tmp_path: Path
) -> None:
    sources = {"duckdb": adult_rows, "spark": adult_sdf}
    _same(
        _run(
            adult_rows,
            sources,
            tmp_path,
            hierarchies=adult_hierarchies,
            k=5,
            method=method,
            sensitive="salary-class",
            insensitive="rid",
        )
    )


def test_privacy_models_agree(
    register: tuple, small_register: tuple, register_sdf: Any, limits: None, tmp_path: Path
) -> None:
    """l-diversity of the party: every engine counts (class, party) pairs and publishes the same rows."""
    kw = {"k": 5, "method": "greedy", "drop": ["voter_id", "name"], "insensitive": "rid"}
    for runs in _register_runs(
        register, small_register, register_sdf, tmp_path, privacy=[pa.LDiversity("party", l=3)], **kw
    ):
        assert all(report["privacy"][0]["satisfied"] for _, report in runs.values())


def test_nulls_at_the_roots_agree(tmp_path: Path, spark: Any) -> None:
    """null="suppress": nulls published as the root, alike on every engine (null-safe joins)."""
    df = pl.DataFrame(
        {
            "rid": list(range(8)),
            "age": [31, 33, None, 36, 38, None, 31, 36],
            "sex": ["F", "M", "F", None, "F", "M", "M", "F"],
        }
    )
    H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
    sources = {"duckdb": df, "spark": spark.createDataFrame(df.to_arrow())}
    runs = _run(df, sources, tmp_path, hierarchies=H, k=2, null="suppress", insensitive="rid")
    _same(runs)
    assert runs["duckdb"][1]["null_rows"] == 3


def test_negative_zero_is_the_label_0_0_on_every_engine(tmp_path: Path, spark: Any) -> None:
    """A float qid's -0.0 (a rounded small negative number) is one value with 0.0 in every group-by and join, and
    labelled '0.0' everywhere (review7: DuckDB published its rows under the other tuple's label, Polars published a
    class the aggregates never saw, or failed on the hierarchy lookup)."""
    values = [0.0] * 3 + [-0.0] * 3 + [1.5] * 6
    df = pl.DataFrame({"rid": list(range(12)), "f": values})
    H = {"f": pa.Hierarchy.from_dict({"*": {"zero": ["0.0"], "other": ["1.5", "2.5"]}})}  # no '-0.0' leaf
    sources = {"duckdb": df, "spark": spark.createDataFrame(df.to_arrow())}
    runs = _run(df, sources, tmp_path, hierarchies=H, k=6, insensitive="rid")
    _same(runs)
    published = runs["duckdb"][0]
    assert published["f"].to_list() == ["0.0"] * 6 + ["1.5"] * 6  # level 0: each row's own leaf, in input order
    assert runs["duckdb"][1]["n_input_classes"] == 2
    assert pa.Hierarchy.suppression([-0.0, 1.5]).leaf_labels == ["0.0", "1.5"]  # built from values: the same label


def test_differential_privacy_agrees(tmp_path: Path, spark: Any) -> None:
    """One seed, every engine: the same rows sampled (the keyed hash of the row number), the same transformation
    searched on the sample's aggregates, the same rows published and the same report."""
    from tests.privacy.test_differential import H, table

    df = table(800)
    model = pa.DifferentialPrivacy(1.0, 0.1, seed=3, steps=5)
    sources = {"duckdb": df, "spark": spark.createDataFrame(df.to_arrow())}
    runs = _run(df, sources, tmp_path, hierarchies=H, k=1, privacy=[model])  # every column a qid: no row id
    _same(runs)  # every engine sorts the published rows by their columns (input order must not show)
    assert runs["polars"][0].equals(runs["polars"][0].sort(df.columns))
    dp = runs["spark"][1]["details"]["differential_privacy"]
    assert 0 < dp["published_rows"] <= dp["sampled_rows"] < df.height


def test_report_dtype_is_the_published_columns_on_every_engine(tmp_path: Path) -> None:
    """A Categorical or Enum qid is published as String labels; the report said 'Categorical'/'Enum(...)' on Polars
    (the input's dtype) and 'String' on DuckDB (review7 F7): it gives the dtype of each column as written."""
    df = pl.DataFrame(
        {
            "rid": list(range(8)),
            "c": pl.Series(["a", "b", "c", "d"] * 2, dtype=pl.Categorical),
            "e": pl.Series(["x", "y"] * 4, dtype=pl.Enum(["y", "x"])),
        }
    )
    H = {"c": pa.Hierarchy.suppression(["a", "b", "c", "d"]), "e": pa.Hierarchy.suppression(["x", "y"])}
    runs = _run(df, {"duckdb": df}, tmp_path, hierarchies=H, k=2, insensitive="rid")
    for rows, report in runs.values():
        assert [(c["name"], c["dtype"]) for c in report["columns"]] == [
            ("rid", "Int64"),
            ("c", "String"),
            ("e", "String"),
        ]
        assert rows.schema == pl.Schema({"rid": pl.Int64, "c": pl.String, "e": pl.String})


def test_float_timestamp_and_time_labels_agree(tmp_path: Path) -> None:
    """Polars and DuckDB publish the same labels for a float qid with -0.0, a timestamp qid and a time qid with
    fractions of a second (hand-built hierarchies over the labels of the rule, polars_anon.labels). A float's NaN,
    published here as the leaf 'NaN' before, is refused on every engine (tests/methods/test_not_finite.py)."""
    day = dt.datetime(2020, 1, 2, 3, 4, 5)
    df = pl.DataFrame(
        {
            "rid": list(range(8)),
            "f": [-0.0, 0.0, 2.5, 2.5, 1e-7, 1e-7, -0.0, 1.5],
            "ts": [day, day, day.replace(microsecond=120000)] * 2 + [day, day],
            "t": [dt.time(9), dt.time(9, 0, 0, 500000)] * 4,
        }
    )
    H = {
        "f": pa.Hierarchy.from_dict({"*": {"low": ["0.0", "1e-7"], "high": ["1.5", "2.5"]}}),
        "ts": pa.Hierarchy.from_dict({"*": ["2020-01-02 03:04:05.000000", "2020-01-02 03:04:05.120000"]}),
        "t": pa.Hierarchy.from_dict({"*": ["09:00:00", "09:00:00.500"]}),
    }
    runs = _run(df, {"duckdb": df}, tmp_path, hierarchies=H, k=1, insensitive="rid", method="fulldomain")
    _same(runs)
    rows = runs["duckdb"][0]
    assert rows["f"].to_list() == ["0.0", "0.0", "2.5", "2.5", "1e-7", "1e-7", "0.0", "1.5"]  # level 0: k=1
    assert rows["ts"].to_list()[:3] == ["2020-01-02 03:04:05.000000"] * 2 + ["2020-01-02 03:04:05.120000"]
    assert rows["t"].to_list()[:2] == ["09:00:00", "09:00:00.500"]
