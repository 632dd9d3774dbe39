"""polars_anon.duckdb.metric_pairs refuses bad input as polars_anon.metrics.prepare does."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies, metric_pairs
from polars_anon.messages import COLUMNS_NOT_FOUND, NO_HIERARCHY
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

Q = ["gender", "race"]


def _con(original: pl.DataFrame, anonymized: pl.DataFrame) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    load_hierarchies(con, ANIMAL_HIERARCHIES)
    con.register("o_frame", original.to_arrow())
    con.register("a_frame", anonymized.to_arrow())
    con.execute("CREATE TABLE o AS FROM o_frame")
    con.execute("CREATE TABLE a AS FROM a_frame")
    return con


def test_rows_removed_without_a_key() -> None:
    con = _con(TABLE_I, TABLE_IB.head(5))
    with pytest.raises(pa.InputError, match="anonymized table has 5 rows and the original 6.*key="):
        metric_pairs(con, "o", "a", Q)


def test_key_not_unique() -> None:
    con = _con(TABLE_I, pl.concat([TABLE_IB, TABLE_IB.head(1)]))
    with pytest.raises(
        pa.InvalidParameterError, match="key 'id' is not unique in the anonymized table: the join gave 7 rows"
    ):
        metric_pairs(con, "o", "a", Q, key="id")


def test_missing_column_key_and_sensitive_as_qid() -> None:
    con = _con(TABLE_I, TABLE_IB)
    with pytest.raises(
        pa.ColumnNotFoundError, match=COLUMNS_NOT_FOUND.pattern(what="key", missing=["row"], where="table 'o'")
    ):
        metric_pairs(con, "o", "a", Q, key="row")
    with pytest.raises(pa.InvalidParameterError, match="key 'race' is also a quasi-identifier"):
        metric_pairs(con, "o", "a", Q, key="race")
    with pytest.raises(pa.InvalidParameterError, match="sensitive 'race' is also a quasi-identifier"):
        metric_pairs(con, "o", "a", Q, sensitive="race")


def test_missing_hierarchy_and_bad_name() -> None:
    con = _con(TABLE_I, TABLE_IB)
    with pytest.raises(pa.InvalidParameterError, match=NO_HIERARCHY.pattern(qid="id")):
        metric_pairs(con, "o", "a", ["gender", "id"])
    with pytest.raises(pa.InvalidParameterError, match="name must be letters, digits and underscores.*got 'my pairs'"):
        metric_pairs(con, "o", "a", Q, name="my pairs")


def test_published_value_not_a_node() -> None:
    con = _con(
        TABLE_I, TABLE_IB.with_columns(race=pl.when(pl.col("id") == "l1").then(pl.lit("unicorn")).otherwise("race"))
    )
    with pytest.raises(
        pa.ValueNotInHierarchyError, match="column 'race' in the anonymized table: values \\['unicorn'\\] are not nodes"
    ):
        metric_pairs(con, "o", "a", Q)


def test_original_value_not_a_leaf_or_null() -> None:
    con = _con(
        TABLE_I.with_columns(race=pl.when(pl.col("id") == "l1").then(pl.lit("felidae")).otherwise("race")), TABLE_IB
    )
    with pytest.raises(
        pa.ValueNotInHierarchyError, match="column 'race' in the original table: values \\['felidae'\\] are not leaves"
    ):
        metric_pairs(con, "o", "a", Q)
    con = _con(TABLE_I.with_columns(gender=pl.when(pl.col("id") == "l2").then(None).otherwise("gender")), TABLE_IB)
    with pytest.raises(pa.NullValueError, match="column 'gender' in the original table has null values"):
        metric_pairs(con, "o", "a", Q)


def test_sensitive_metrics_need_pairs_with_the_sensitive_attribute() -> None:
    con = _con(TABLE_I, TABLE_IB)
    metric_pairs(con, "o", "a", Q)
    with pytest.raises(duckdb.Error, match="anon_cm needs the sensitive attribute"):
        con.sql("FROM anon_cm_of('anon_pairs', ?)", params=[Q]).fetchall()
    with pytest.raises(duckdb.Error, match="anon_mi_loss needs the sensitive attribute"):
        con.sql("FROM anon_mi_loss_of('anon_pairs', ?)", params=[Q]).fetchall()


def test_pairs_without_the_contingency_tables() -> None:
    """pairwise=False leaves no <name>_joint behind, not even one from an earlier call."""
    con = _con(TABLE_I, TABLE_IB)
    metric_pairs(con, "o", "a", Q)
    assert con.sql("FROM anon_cramers_v_of('anon_pairs', ?)", params=[Q]).fetchall()[0][1] is not None
    metric_pairs(con, "o", "a", Q, pairwise=False)
    assert con.sql("FROM anon_ncp_of('anon_pairs', ?)", params=[Q]).fetchall()[0][1] > 0
    with pytest.raises(duckdb.Error, match="anon_pairs_joint"):
        con.sql("FROM anon_cramers_v_of('anon_pairs', ?)", params=[Q]).fetchall()


@pytest.mark.parametrize("key", [None, "id"])
def test_empty_tables_are_refused_by_both_engines(key) -> None:
    con = _con(TABLE_I.head(0), TABLE_IB.head(0))
    with pytest.raises(pa.InputError, match="has no rows: there is nothing to measure"):
        metric_pairs(con, "o", "a", Q, key=key)
    with pytest.raises(pa.InputError, match="has no rows: there is nothing to measure"):
        pa.metrics.compute(TABLE_I.head(0), TABLE_IB.head(0), Q, ANIMAL_HIERARCHIES, "ncp", key=key)
