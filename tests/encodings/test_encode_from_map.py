"""Encodings planned from the tuple map (what a job writes) agree with the encoder that reads the rows.

:func:`polars_anon.encode.plan_from_map` computes the per-class tables from the map's row counts and
re-checks nothing; these tests hold it to paper 000's Table III and to :func:`polars_anon.encode.encode`
(original rows given, every check on) on Adult, for every encoding.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_anon as pa
from polars_anon.encode import ENCODINGS, EncodeOptions, apply_plan, encode, plan_from_map
from polars_anon.encoded_io import stage_encoded
from polars_anon.outputs import Outputs
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col
from tests.encodings.test_encode_table_iii import TABLE_III
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB, TABLE_III_COLUMNS

QIDS = ["gender", "race"]


def _map_of(original: pl.DataFrame, published: pl.DataFrame, qids: list[str]) -> TupleMap:
    """The map of two row-aligned tables: (original tuple, published tuple) -> rows."""
    both = pl.concat(
        [original.select(qids), published.select(pl.col(q).alias(out_col(q)) for q in qids)], how="horizontal"
    )
    frame = both.group_by(both.columns).agg(pl.len().cast(pl.Int64).alias(SIZE)).sort(both.columns)
    return TupleMap(tuple(qids), frame.with_columns(pl.lit(False).alias(SUPPRESSED)))


def _from_map(published: pl.DataFrame, tmap: TupleMap, hierarchies: dict, representation: str) -> pl.DataFrame:
    plan = plan_from_map(published.lazy(), tmap, hierarchies, EncodeOptions(representation))
    return apply_plan(plan.rows, plan.joins, plan.out_names).collect()


def test_table_iii_from_the_map() -> None:
    """Paper 000 Table III from the map of Table Ia -> Table Ib alone (the original rows are not read)."""
    out = _from_map(TABLE_IB, _map_of(TABLE_I, TABLE_IB, QIDS), ANIMAL_HIERARCHIES, "proportional")
    assert out.columns == ["id", *TABLE_III_COLUMNS]
    assert out["id"].to_list() == ["l1", "l2", "l3", "l4", "l5", "l6"]
    for got, want in zip(out.select(TABLE_III_COLUMNS).rows(), TABLE_III, strict=True):
        assert list(got) == pytest.approx(want, abs=1e-7)


@pytest.mark.parametrize("representation", ENCODINGS)
def test_every_encoding_agrees_on_table_i(representation: str) -> None:
    tmap = _map_of(TABLE_I, TABLE_IB, QIDS)
    want = encode(TABLE_IB, ANIMAL_HIERARCHIES, representation, original=TABLE_I, seed=3).collect()
    plan = plan_from_map(TABLE_IB.lazy(), tmap, ANIMAL_HIERARCHIES, EncodeOptions(representation, seed=3))
    assert_frame_equal(apply_plan(plan.rows, plan.joins, plan.out_names).collect(), want)


@pytest.fixture(scope="module")
def adult_result(adult: pl.DataFrame, adult_hierarchies: dict) -> pa.Anonymized:
    return pa.anonymize(adult, hierarchies=adult_hierarchies, k=5, method="fulldomain", max_suppressed=0)  # type: ignore[return-value]


@pytest.mark.parametrize("representation", ENCODINGS)
def test_every_encoding_agrees_on_adult(
    adult_result: pa.Anonymized, adult_hierarchies: dict, representation: str
) -> None:
    """The job's encodings (planned from the map) equal the encoder's, which reads and checks the rows."""
    assert adult_result.tmap is not None and adult_result.report["suppressed"] == 0
    published = adult_result.collect()
    want = encode(published, adult_hierarchies, representation, original=adult_result.prepared, seed=1).collect()
    plan = plan_from_map(published.lazy(), adult_result.tmap, adult_hierarchies, EncodeOptions(representation, seed=1))
    assert_frame_equal(apply_plan(plan.rows, plan.joins, plan.out_names).collect(), want)


@pytest.mark.parametrize("layout", ["wide", "classes"])
def test_written_from_the_map_are_the_same_bytes(
    adult_result: pa.Anonymized, adult_hierarchies: dict, tmp_path: Path, layout: str
) -> None:
    """The wide file written in slices from one pass (and the classes layout): the bytes the old way wrote."""
    files = []
    for tmap in (None, adult_result.tmap):
        path = tmp_path / f"{'map' if tmap else 'rows'}.parquet"
        with Outputs() as out:
            chunk = 7_000 if layout == "wide" else None  # 5 slices of the 30,162 rows
            options = EncodeOptions("proportional", adult_result.prepared, layout=layout, chunk_rows=chunk)
            stage_encoded(out, adult_result.lazy(verify=False), adult_hierarchies, path, options, tmap=tmap)
            out.commit()
        parts = [path] if path.is_file() else sorted(path.iterdir())
        files.append([(p.name if path.is_dir() else "table", p.read_bytes()) for p in parts])
    assert files[0] == files[1]
