"""The DuckDB macro anon_mondrian gives the same partition as the Polars rounds."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from polars_anon.algorithms.mondrian import axes, coordinates, partition, sql_inputs
from polars_anon.classes import class_sizes
from polars_anon.duckdb import register
from polars_anon.messages import CHOICE, K_NOT_INTEGER
from tests.conftest import ADULT_QIDS
from tests.sql_connection import frame
from tests.strategies import tables


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    register(c)
    return c


def _canonical(seg: pl.DataFrame, cls: str) -> pl.DataFrame:
    """Each segment labelled by the first (t, off) of its class: engine-independent."""
    key = pl.col("t") * (seg["size"].sum() + 1) + pl.col("off")
    first = seg.group_by(cls).agg(key.min().alias("first"))
    return seg.join(first, on=cls).select("t", "off", "size", "first").sort("t", "off")


def _both(
    con: duckdb.DuckDBPyConnection,
    agg: pl.DataFrame,
    qids: list[str],
    hs: dict,
    k: int,
    mode: str,
    order: object = None,
    count_dims: list[int] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    ax = axes({q: agg[q].unique().to_list() for q in qids}, hs, order, seed=5)
    coords = coordinates(agg, qids, ax)
    seg, _ = partition(coords, k, mode, count_dims or [])
    long, tuples = sql_inputs(coords)
    con.register("__long", long.to_arrow())
    con.register("__tuples", tuples.to_arrow())
    con.execute(
        "CREATE OR REPLACE TEMP TABLE mond_coords AS FROM __long; CREATE OR REPLACE TEMP TABLE "
        "mond_tuples AS FROM __tuples"
    )
    if count_dims is None:  # the macro's default
        sql = frame(con, "FROM anon_mondrian('mond_coords', 'mond_tuples', k := ?, split := ?)", [k, mode])
    else:
        sql = frame(
            con,
            "FROM anon_mondrian('mond_coords', 'mond_tuples', k := ?, split := ?, count_dims := ?::BIGINT[])",
            [k, mode, count_dims],
        )
    polars = seg.rename({"__anon_t": "t", "__anon_off": "off", "__anon_size": "size", "__anon_pid": "class"})
    return _canonical(polars, "class"), _canonical(sql, "class")


@pytest.mark.parametrize(("k", "mode"), [(5, "strict"), (5, "relaxed"), (50, "strict"), (50, "relaxed")])
def test_adult_same_partition(
    con: duckdb.DuckDBPyConnection, adult: pl.DataFrame, adult_hierarchies: dict, k: int, mode: str
) -> None:
    agg = class_sizes(adult.lazy(), ADULT_QIDS).collect()
    a, b = _both(con, agg, ADULT_QIDS, adult_hierarchies, k, mode)
    assert a.equals(b)
    assert a["first"].n_unique() > adult.height // (4 * k)  # a real partition, not one class


@pytest.mark.parametrize(("k", "mode"), [(2, "strict"), (10, "strict"), (10, "relaxed")])
def test_adult_without_hierarchies_same_partition(
    con: duckdb.DuckDBPyConnection, adult: pl.DataFrame, k: int, mode: str
) -> None:
    """As published without hierarchies: categorical widths count values (count_dims), age is a range."""
    agg = class_sizes(adult.lazy(), ADULT_QIDS).collect()
    counted = [j for j, q in enumerate(ADULT_QIDS) if q != "age"]
    a, b = _both(con, agg, ADULT_QIDS, {}, k, mode, None, counted)
    assert a.equals(b)
    assert a["first"].n_unique() > adult.height // (4 * k)


@settings(max_examples=30, deadline=None)
@given(
    t=tables(n_qids=2, max_rows=40),
    k=st.integers(1, 5),
    mode=st.sampled_from(["strict", "relaxed"]),
    random=st.booleans(),
    counted=st.sampled_from([None, [], [0], [1], [0, 1]]),
)
def test_random_tables_same_partition(
    con: duckdb.DuckDBPyConnection,
    t: tuple[pl.DataFrame, dict],
    k: int,
    mode: str,
    random: bool,
    counted: list[int] | None,
) -> None:
    df, hs = t
    assume(k <= df.height)
    agg = class_sizes(df.lazy(), ["q0", "q1"]).collect()
    a, b = _both(con, agg, ["q0", "q1"], hs, k, mode, "random" if random else None, counted)
    assert a.equals(b)


def test_sql_refuses_bad_arguments(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP TABLE e_coords AS SELECT 0::BIGINT AS t, 0::BIGINT AS dim, 0::BIGINT "
        "AS x, 0.0::DOUBLE AS v"
    )
    con.execute("CREATE OR REPLACE TEMP TABLE e_tuples AS SELECT 0::BIGINT AS t, 3::BIGINT AS size")
    with pytest.raises(duckdb.Error, match=K_NOT_INTEGER.pattern(k=0)):
        con.execute("FROM anon_mondrian('e_coords', 'e_tuples', k := 0)").fetchall()
    with pytest.raises(duckdb.Error, match=CHOICE.pattern(name="split", allowed=["strict", "relaxed"], value="loose")):
        con.execute("FROM anon_mondrian('e_coords', 'e_tuples', split := 'loose')").fetchall()
    assert con.execute("FROM anon_mondrian('e_coords', 'e_tuples', k := 2)").fetchall() == [(0, 0, 3, 0)]
