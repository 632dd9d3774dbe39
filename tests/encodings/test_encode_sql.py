"""The encodings in DuckDB (anon_encode_classes, one row per class and column) agree with Polars."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies
from polars_anon.encode import REPRESENTATIONS, encode, encoded_columns
from polars_anon.messages import NO_HIERARCHY
from tests.encodings.test_encode_table_iii import TABLE_III
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB, TABLE_III_COLUMNS
from tests.sql_connection import frame, registered


def _connect(hierarchies, con: duckdb.DuckDBPyConnection | None = None, **tables) -> duckdb.DuckDBPyConnection:
    """`con` (default: the registered connection of tests/sql_connection.py, emptied) with `hierarchies` loaded and
    `tables` registered under their names."""
    con = registered() if con is None else con
    load_hierarchies(con, hierarchies)
    for name, table in tables.items():
        con.register(name, table.to_arrow())
    return con


def _sql_classes(con, qids, rep, orig: str | None = "orig") -> pl.DataFrame:
    """SQL result, wide: one row per class, the class tuple as the qid columns, sorted."""
    args = f"representation := '{rep}'" + (f", orig := '{orig}'" if orig else "")
    long = frame(con, f"FROM anon_encode_classes('pub', {qids!r}, {args})")
    wide = long.pivot("col", index="class", values="value", maintain_order=True)
    return wide.select(pl.col("class").list.to_struct(fields=qids).struct.unnest(), pl.exclude("class")).sort(qids)


def _polars_classes(pub, hierarchies, rep, original) -> pl.DataFrame:
    qids = list(hierarchies)
    enc = encode(pub, hierarchies, rep, original=original, dtype=pl.Float64).collect()
    cols = [c for q, h in hierarchies.items() for c in encoded_columns(q, h, rep)]
    return pl.concat([pub.select(qids), enc.select(cols)], how="horizontal").unique().sort(qids)


def test_table_iii_in_sql():
    """Paper 000 Table III computed by the macro: classes (*, mammals) and (*, cetaceans)."""
    con = _connect(ANIMAL_HIERARCHIES, pub=TABLE_IB, orig=TABLE_I)
    got = _sql_classes(con, ["gender", "race"], "proportional")
    assert got.columns == ["gender", "race", *TABLE_III_COLUMNS]
    assert got["race"].to_list() == ["cetaceans", "mammals"]
    assert list(got.row(1)[2:]) == pytest.approx(TABLE_III[0], abs=1e-12)
    assert list(got.row(0)[2:]) == pytest.approx(TABLE_III[3], abs=1e-12)
    sizes = con.execute(
        "SELECT DISTINCT class, size FROM anon_encode_classes('pub', ['gender', 'race'], orig := 'orig')"
    )
    assert sorted(r[1] for r in sizes.fetchall()) == [3, 3]
    # counts as BIGINT (a sum is HUGEINT in DuckDB, which Polars reads as Decimal(38, 0): guides31)
    long = con.sql("FROM anon_encode_classes('pub', ['gender', 'race'], orig := 'orig')").pl()
    assert long.schema["size"] == pl.Int64 and long.schema["col_index"] == pl.Int64


@pytest.mark.parametrize("rep", REPRESENTATIONS)
def test_every_representation_agrees_on_table_i(rep):
    con = _connect(ANIMAL_HIERARCHIES, pub=TABLE_IB, orig=TABLE_I)
    want = _polars_classes(TABLE_IB, ANIMAL_HIERARCHIES, rep, TABLE_I)
    got = _sql_classes(con, ["gender", "race"], rep, orig="orig" if rep == "proportional" else None)
    assert got.columns == want.columns
    assert got.equals(want)


@pytest.fixture(scope="module", params=[5, 50], ids=lambda k: f"k{k}")
def adult_connection(request, adult, adult_hierarchies):
    """Adult made k-anonymous (full-domain), with both tables and the hierarchies in DuckDB."""
    import polars_anon as pa

    pub = pa.anonymize(adult, hierarchies=adult_hierarchies, k=request.param).collect()
    return pub, _connect(adult_hierarchies, duckdb.connect(), pub=pub, orig=adult)  # its own: kept for the module


@pytest.mark.parametrize("rep", ["proportional", "fillparent", "setbinary"])
def test_adult_agrees(adult, adult_hierarchies, adult_connection, rep):
    qids = list(adult_hierarchies)
    pub, con = adult_connection
    want = _polars_classes(pub, adult_hierarchies, rep, adult)
    got = _sql_classes(con, qids, rep)
    assert got.columns == want.columns and got.height == want.height
    assert got.select(qids).equals(want.select(qids))
    diff = (got.drop(qids) - want.drop(qids)).select(pl.all().abs().max()).row(0)
    assert max(diff) < 1e-12


def test_sql_refusals():
    con = _connect(
        ANIMAL_HIERARCHIES,
        pub=TABLE_IB,
        orig=TABLE_I,
        short=TABLE_I.head(4),
        bad=TABLE_IB.with_columns(pl.lit("fish").alias("race")),
        inner=TABLE_IB,
    )
    q = "FROM anon_encode_classes('{t}', ['gender', 'race'], {a})"
    cases = [
        ("pub", "representation := 'onehot'", "representation must be one of"),
        ("pub", "representation := 'proportional'", "needs the original rows"),
        ("bad", "representation := 'oneclass'", "column 'race' of the published table: 'fish' is not a node"),
        ("pub", "orig := 'inner'", "column 'gender' of the original table: '\\*' is not a leaf"),
        ("pub", "orig := 'short'", "different row counts"),
    ]
    for table, args, message in cases:
        with pytest.raises(duckdb.Error, match=message):
            con.execute(q.format(t=table, a=args)).fetchall()
    con.execute("DELETE FROM anon_nodes WHERE hierarchy = 'race'")
    with pytest.raises(duckdb.Error, match=re.escape(NO_HIERARCHY(qid="race"))):
        con.execute(q.format(t="pub", a="representation := 'oneclass'")).fetchall()


G = {"g": pa.Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})}


@pytest.mark.parametrize(
    ("hierarchies", "pub", "orig"),
    [
        (ANIMAL_HIERARCHIES, TABLE_IB, TABLE_I.reverse()),  # race: 'cat' -> 'cetaceans' ...; gender stays under '*'
        (G, pl.DataFrame({"g": ["A", "A", "B", "B"]}), pl.DataFrame({"g": ["b1", "b2", "a1", "a2"]})),
        (G, pl.DataFrame({"g": ["A", "*", "B", "B"]}), pl.DataFrame({"g": ["a1", "b2", "b1", "a2"]})),  # one bad row
    ],
    ids=["animals reversed", "A over b1, b2", "B over a2"],
)
def test_original_rows_not_under_their_published_value_are_refused_as_in_polars(hierarchies, pub, orig):
    """The proportional shares of a class read its original rows: a row whose original value is not under its
    published one (tables not row-aligned) gave shares of another class's values (g_B = 1.0 in class A)."""
    with pytest.raises(pa.InvalidParameterError) as python:
        encode(pub, hierarchies, "proportional", original=orig)
    con = _connect(hierarchies, pub=pub, orig=orig)
    with pytest.raises(duckdb.Error) as sql:
        con.execute(f"FROM anon_encode_classes('pub', {list(hierarchies)!r}, orig := 'orig')").fetchall()
    assert re.sub(r"^[A-Za-z ]+Error: ", "", str(sql.value)) == str(python.value)


@pytest.mark.parametrize(
    ("pub", "orig", "rep"),
    [
        (TABLE_IB.with_columns(pl.lit("fish").alias("race")), TABLE_I, "oneclass"),  # 'fish': no node
        (TABLE_IB, TABLE_IB, "proportional"),  # an original '*': a node, not a leaf
    ],
    ids=["published value not a node", "original value not a leaf"],
)
def test_values_outside_the_hierarchy_are_refused_in_pythons_words(pub, orig, rep):
    """anon_encode_classes said "'fish' is not a node ..." where encode says "'fish' is not a node ...; encode
    with the hierarchies ...": both now fill one template (messages.ENCODE_NOT_IN_HIERARCHY), compared whole."""
    with pytest.raises(pa.ValueNotInHierarchyError) as python:
        encode(pub, ANIMAL_HIERARCHIES, rep, original=orig if rep == "proportional" else None)
    con = _connect(ANIMAL_HIERARCHIES, pub=pub, orig=orig)
    with pytest.raises(duckdb.Error) as sql:
        con.execute(
            f"FROM anon_encode_classes('pub', ['gender', 'race'], representation := '{rep}', orig := 'orig')"
        ).fetchall()
    assert re.sub(r"^[A-Za-z ]+Error: ", "", str(sql.value)) == str(python.value)
