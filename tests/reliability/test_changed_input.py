"""The input is read again to publish: when that read is not what the method read (a file changed in between), the
published classes are checked against the planned ones and the table is refused; nothing is written."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa

H = {"a": pa.Hierarchy.suppression(["a1", "a2", "a3", "a4"]), "b": pa.Hierarchy.suppression(["b1", "b2", "b3"])}
ROWS = {
    "a": ["a1"] * 3 + ["a2"] * 3 + ["a3"] * 3 + ["a1", "a2", "a3"],
    "b": ["b1"] * 3 + ["b2"] * 3 + ["b3"] * 3 + ["b2", "b3", "b1"],
    "id": list(range(12)),
}


def _result(path: Path, engine: str, frame: dict, **kwargs: object) -> pa.Anonymized:
    pl.DataFrame(frame).write_parquet(path)
    source = pl.scan_parquet(path) if engine == "polars" else str(path)
    return pa.anonymize(source, hierarchies=H, insensitive="id", engine=engine, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_a_tuple_the_map_never_saw_is_refused(tmp_path: Path, engine: str) -> None:
    """Mondrian at k = 3, then row 9 becomes (a2, b1): values the map knows, a tuple it does not hold. The Polars road
    used to publish it under another tuple's labels, not its ancestors (a3, *), in a class still of 3 or more rows,
    verified; now with null labels, a class of its own. DuckDB's left the row out (refused: a row short)."""
    row = ("a2", "b1")
    path = tmp_path / "in.parquet"
    result = _result(path, engine, ROWS, k=3, method="mondrian")
    changed = {**ROWS, "a": [*ROWS["a"][:9], row[0], *ROWS["a"][10:]], "b": [*ROWS["b"][:9], row[1], *ROWS["b"][10:]]}
    pl.DataFrame(changed).write_parquet(path)
    out = tmp_path / "out.parquet"
    due = "the input read to publish is not the input the method read|has 11 rows, but 12 were due|fewer than k=3"
    with pytest.raises(pa.NotKAnonymousError, match=due):
        result.sink_parquet(out)
    assert not out.exists()


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
def test_classes_that_still_hold_k_but_are_not_the_planned_ones_are_refused(tmp_path: Path, engine: str) -> None:
    """a, a, b, b at k = 2 (the leaves) becomes a, a, a, a: one class of 4, k-anonymous, but the report would mix the
    new check's classes with the old plan's (two classes of 2)."""
    path = tmp_path / "in.parquet"
    hierarchies = {"q": pa.Hierarchy.suppression(["a", "b"])}
    pl.DataFrame({"q": ["a", "a", "b", "b"]}).write_parquet(path)
    source = pl.scan_parquet(path) if engine == "polars" else str(path)
    result = pa.anonymize(source, hierarchies=hierarchies, k=2, engine=engine)  # type: ignore[arg-type]
    pl.DataFrame({"q": ["a", "a", "a", "a"]}).write_parquet(path)
    with pytest.raises(pa.NotKAnonymousError, match=r"class \{'q': 'a'\} has 4 rows where the method planned 2"):
        result.collect()


def test_rows_in_another_order_publish_the_same_classes(tmp_path: Path) -> None:
    """A tuple map publishes by value: the same rows in another order are the planned classes (no false alarm)."""
    path = tmp_path / "in.parquet"
    result = _result(path, "polars", ROWS, k=3, method="mondrian")
    first = result.collect().sort("id")
    assert first.height == 12
    pl.DataFrame(ROWS).reverse().write_parquet(path)
    assert result.collect().sort("id").equals(first)


@pytest.mark.parametrize("publish", ["aggregate", "permute"])
def test_mdav_refuses_rows_read_in_another_order(tmp_path: Path, publish: str) -> None:
    """MDAV's map is by row number: the same rows read back reversed used to be published with other clusters' means,
    verified (a 62-year-old as 21.0; review28). Each row's qids are now hashed into the map and a row that does not
    match is published with null labels, which the check refuses; the file as the method read it publishes the
    means of its own cluster."""
    path = tmp_path / "in.parquet"
    rows = {"age": [20, 21, 22, 60, 61, 62], "id": list(range(6))}
    pl.DataFrame(rows).write_parquet(path)
    result = pa.anonymize(
        pl.scan_parquet(path), qids=["age"], hierarchies={}, k=3, method="mdav", publish=publish, insensitive="id"
    )
    kept = result.collect().sort("id")["age"].to_list()
    if publish == "aggregate":  # each cluster's mean
        assert kept == [21.0] * 3 + [61.0] * 3
    else:  # each cluster's values, permuted inside it
        assert sorted(kept[:3]) == ["20", "21", "22"] and sorted(kept[3:]) == ["60", "61", "62"]
    pl.DataFrame(rows).reverse().write_parquet(path)
    with pytest.raises(pa.NotKAnonymousError):
        result.collect()
    with pytest.raises(pa.NotKAnonymousError):
        result.sink_parquet(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()
