"""polars_anon.duckdb.metric_pairs refuses bad input as polars_anon.metrics.prepare does."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies, metric_pairs
from polars_anon.messages import COLUMNS_NOT_FOUND, KEY_NOT_UNIQUE
from polars_anon.metrics.registry import compute
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB
from tests.sql_connection import registered

Q = ["gender", "race"]


def _con(original: pl.DataFrame, anonymized: pl.DataFrame) -> duckdb.DuckDBPyConnection:
    """The registered connection (tests/sql_connection.py), emptied, with the animal hierarchies and tables o, a."""
    con = registered()
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
    """mend52: a qid without a hierarchy is measured by the classes metrics alone, as compute measures it (it was
    refused: NO_HIERARCHY); the others refuse it when read, naming it; a later call of the same name with every
    hierarchy loaded replaces the refusing views by tables; a null in that qid is refused as in any other."""
    con = _con(TABLE_I, TABLE_IB)
    metric_pairs(con, "o", "a", ["gender", "id"])
    want = compute(TABLE_I, TABLE_IB, ["gender", "id"], {"gender": ANIMAL_HIERARCHIES["gender"]}, "n_classes")
    assert con.execute("FROM anon_n_classes_of('anon_pairs', ?)", [["gender", "id"]]).fetchall()[0][1] == want.item()
    for metric in ("ncp", "cramers_v"):  # reading <name>_cells, <name>_joint
        with pytest.raises(duckdb.Error, match=r"qid 'id' has no hierarchy loaded, and this metric reads through one"):
            con.execute(f"FROM anon_{metric}_of('anon_pairs', ?)", [["gender", "id"]]).fetchall()
    metric_pairs(con, "o", "a", Q)
    assert con.execute("FROM anon_cramers_v_of('anon_pairs', ?)", [Q]).fetchall()[0][1] is not None
    assert con.execute("FROM anon_ncp_of('anon_pairs', ?)", [Q]).fetchall()[0][1] > 0
    con = _con(TABLE_I.with_columns(id=pl.when(pl.col("id") == "l2").then(None).otherwise("id")), TABLE_IB)
    with pytest.raises(pa.NullValueError, match="column 'id' in the original table has null values"):
        metric_pairs(con, "o", "a", ["gender", "id"])
    with pytest.raises(pa.InvalidParameterError, match="name must be letters, digits and underscores.*got 'my pairs'"):
        metric_pairs(con, "o", "a", Q, name="my pairs")


def test_tables_then_refusing_views() -> None:
    """review35 #1: a call with every hierarchy loaded (tables <name>_cells, <name>_joint), then the same name with a
    qid without one: CREATE TEMP VIEW failed with a CatalogException "already exists"; the tables now give way."""
    con = _con(TABLE_I, TABLE_IB)
    metric_pairs(con, "o", "a", Q)
    metric_pairs(con, "o", "a", ["gender", "id"])
    with pytest.raises(duckdb.Error, match=r"qid 'id' has no hierarchy loaded, and this metric reads through one"):
        con.execute("FROM anon_ncp_of('anon_pairs', ?)", [["gender", "id"]]).fetchall()
    metric_pairs(con, "o", "a", Q, pairwise=False)
    assert con.execute("FROM anon_ncp_of('anon_pairs', ?)", [Q]).fetchall()[0][1] > 0


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
        con.execute("FROM anon_cm_of('anon_pairs', ?)", [Q]).fetchall()
    with pytest.raises(duckdb.Error, match="anon_mi_loss needs the sensitive attribute"):
        con.execute("FROM anon_mi_loss_of('anon_pairs', ?)", [Q]).fetchall()


def test_pairs_without_the_contingency_tables() -> None:
    """pairwise=False leaves no <name>_joint behind, not even one from an earlier call."""
    con = _con(TABLE_I, TABLE_IB)
    metric_pairs(con, "o", "a", Q)
    assert con.execute("FROM anon_cramers_v_of('anon_pairs', ?)", [Q]).fetchall()[0][1] is not None
    metric_pairs(con, "o", "a", Q, pairwise=False)
    assert con.execute("FROM anon_ncp_of('anon_pairs', ?)", [Q]).fetchall()[0][1] > 0
    with pytest.raises(duckdb.Error, match="anon_pairs_joint"):
        con.execute("FROM anon_cramers_v_of('anon_pairs', ?)", [Q]).fetchall()


@pytest.mark.parametrize("key", [None, "id"])
def test_empty_tables_are_refused_by_both_engines(key) -> None:
    con = _con(TABLE_I.head(0), TABLE_IB.head(0))
    with pytest.raises(pa.InputError, match="has no rows: there is nothing to measure"):
        metric_pairs(con, "o", "a", Q, key=key)
    with pytest.raises(pa.InputError, match="has no rows: there is nothing to measure"):
        pa.metrics.compute(TABLE_I.head(0), TABLE_IB.head(0), Q, ANIMAL_HIERARCHIES, "ncp", key=key)


def _macro_con(original: pl.DataFrame, anonymized: pl.DataFrame, hierarchies: dict) -> duckdb.DuckDBPyConnection:
    """The registered connection (tests/sql_connection.py), emptied, with `hierarchies` and tables o, a."""
    con = registered()
    load_hierarchies(con, hierarchies)
    con.register("o_frame", original.to_arrow())
    con.register("a_frame", anonymized.to_arrow())
    con.execute("CREATE TABLE o AS FROM o_frame; CREATE TABLE a AS FROM a_frame")
    return con


SEX = {"sex": pa.Hierarchy.suppression(["F", "M"])}


@pytest.mark.parametrize("metric", ["discernibility", "n_classes", "ncp"])
def test_the_direct_macros_refuse_a_repeated_key_as_compute(metric: str) -> None:
    """review17 #5: id 1 twice in the anonymized table; anon_discernibility said 8 and anon_n_classes 2."""
    o = pl.DataFrame({"id": [1, 2, 3], "sex": ["F", "M", "F"]})
    a = pl.DataFrame({"id": [1, 1, 2, 3], "sex": ["*", "F", "*", "F"]})
    with pytest.raises(duckdb.Error) as refused:
        _macro_con(o, a, SEX).execute(f"FROM anon_{metric}('o', 'a', ['sex'], key := 'id')").fetchall()
    with pytest.raises(pa.InvalidParameterError) as caught:
        compute(o, a, ["sex"], SEX, metric, key="id")
    said = str(refused.value).removeprefix("Invalid Input Error: ").splitlines()[0]
    assert said == str(caught.value) == KEY_NOT_UNIQUE(key="id", total=4, n_orig=3)


@pytest.mark.parametrize(
    ("qids", "key", "refused"),
    [
        (["__anon_s", "sex"], None, "qid column '__anon_s'"),
        (["__anon_size", "sex"], None, "qid column '__anon_size'"),
        (["sex", "__ANON_in"], None, "qid column '__ANON_in'"),
        (["sex", "g"], "__anon_key", "column '__anon_key'"),  # any other column with the prefix (anon_check_columns)
    ],
)
def test_the_direct_macros_refuse_columns_named_like_their_own(qids: list[str], key: str | None, refused: str) -> None:
    """review17 #6: a qid '__anon_s' was read as the sensitive code (cm 0.2 where it is 0.4); '__anon_size',
    '__anon_key' raised unrelated binder errors. Now one refusal names the column."""
    o = pl.DataFrame({qids[0]: ["F", "M", "F", "M"], qids[1]: ["F", "M", "F", "M"], "y": list("xyxy")})
    o = o.with_columns(pl.Series(key or "id", [1, 2, 3, 4]))
    con = _macro_con(o, o, {q: SEX["sex"] for q in qids})
    k = f", key := '{key}'" if key else ""
    tail = " is a name the SQL macros use for their helper columns" if key else " is a name the anonymizer reserves"
    with pytest.raises(duckdb.Error, match=re.escape(refused) + tail):
        con.execute(f"FROM anon_cm('o', 'a', {qids!r}, sensitive := 'y'{k})").fetchall()


def test_cm_and_mi_loss_with_qids_named_like_the_pairs_columns_agree_with_compute() -> None:
    """Qids named 's', 'size', 'o', 'p' (the pairs' own column names) are read as qids, as Polars reads them."""
    qids = ["s", "size", "o", "p"]
    o = pl.DataFrame({q: ["F", "M", "F", "M", "F"] for q in qids} | {"y": list("xyxyy")})
    a = pl.DataFrame({q: ["*", "*", "F", "M", "F"] for q in qids} | {"y": list("xyxyy")})
    h = {q: SEX["sex"] for q in qids}
    con = _macro_con(o, a, h)
    for metric in ("cm", "mi_loss", "ncp"):
        got = dict(con.execute(f"FROM anon_{metric}('o', 'a', {qids!r}, sensitive := 'y')").fetchall())
        want = compute(o, a, qids, h, metric, sensitive="y").item(0, 0)
        assert got[None] == pytest.approx(want, rel=1e-12), metric


@pytest.mark.parametrize("zero", [[0.0, -0.0], [float("nan"), -float("nan")]], ids=["signed zero", "signed nan"])
def test_the_direct_macros_hold_a_floats_signed_zero_or_nan_as_one_sensitive_value(zero: list[float]) -> None:
    """-0.0 and 0.0 (-nan and nan) are one sensitive value, as a Polars group-by holds them: DuckDB's text
    '-0.0' / '-nan' made them two, and anon_cm said 2/3 where compute says 1/3."""
    a, b = zero
    o = pl.DataFrame({"sex": ["F", "F", "F", "M", "M", "M"], "y": [a, b, a, b, 1.0, 1.0]})
    pub = o.with_columns(pl.lit("*").alias("sex"))
    con = _macro_con(o, pub, SEX)
    # one class of 6 rows; its majority value (0.0 or nan) holds 4 rows: cm = (6 - 4) / 6
    cm = dict(con.execute("FROM anon_cm('o', 'a', ['sex'], sensitive := 'y')").fetchall())[None]
    assert cm == pytest.approx(1 / 3) == compute(o, pub, ["sex"], SEX, "cm", sensitive="y").item(0, 0)
    mi = dict(con.execute("FROM anon_mi_loss('o', 'a', ['sex'], sensitive := 'y')").fetchall())[None]
    assert mi == pytest.approx(compute(o, pub, ["sex"], SEX, "mi_loss", sensitive="y").item(0, 0), rel=1e-12)
    # a String column keeps '-0.0' and '0.0' apart, on both sides: cm = (6 - 2) / 6 with 2+2+2
    text = o.with_columns(pl.Series("y", ["0.0", "-0.0", "0.0", "-0.0", "1.0", "1.0"]))
    text_pub = text.with_columns(pl.lit("*").alias("sex"))
    con = _macro_con(text, text_pub, SEX)
    cm = dict(con.execute("FROM anon_cm('o', 'a', ['sex'], sensitive := 'y')").fetchall())[None]
    assert cm == pytest.approx(2 / 3) == compute(text, text_pub, ["sex"], SEX, "cm", sensitive="y").item(0, 0)


@pytest.mark.parametrize(
    ("original", "anonymized"),
    [
        ({"row": [0, 0, 1], "g": ["a", "b", "b"]}, {"row": [0, 1], "g": ["*", "b"]}),
        ({"row": [0, None], "g": ["a", "b"]}, {"row": [0], "g": ["*"]}),
        ({"row": [0, 1], "g": ["a", "b"]}, {"row": [0, 1, 7], "g": ["*", "b", "b"]}),
    ],
    ids=["repeated", "null", "stray"],
)
def test_sql_refuses_a_key_that_cannot_line_up_the_rows_as_python(original: dict, anonymized: dict) -> None:
    """hunt34: Python's prepare, the DuckDB helper metric_pairs and the macro anon_metric_pairs said nothing of a key
    repeated or null in the original, or of anonymized keys the original lacks; now each says the same words."""
    h = {"g": pa.Hierarchy.suppression(["a", "b"])}
    o, a = pl.DataFrame(original), pl.DataFrame(anonymized)
    with pytest.raises(pa.InvalidParameterError) as python:
        compute(o, a, ["g"], h, ["ncp"], key="row")
    con = registered()
    load_hierarchies(con, h)
    con.register("o", o.to_arrow())
    con.register("a", a.to_arrow())
    with pytest.raises(pa.InvalidParameterError) as helper:
        metric_pairs(con, "o", "a", ["g"], key="row")
    with pytest.raises(duckdb.Error) as macro:
        con.execute("FROM anon_metric_pairs('o', 'a', ['g'], key := 'row')").fetchall()
    said = str(python.value)
    assert str(helper.value) == said
    assert str(macro.value).removeprefix("Invalid Input Error: ").splitlines()[0] == said


def test_tables_given_as_file_paths_of_any_kind(tmp_path) -> None:
    """mend45: a Parquet file's path given as a str was read (DuckDB reads a file named as a table), a
    ``pathlib.Path`` was Python's raw "Path.replace() takes 2 positional arguments"; a path object is read as its
    text, and what is neither a name nor a path is refused naming the parameter."""
    con = _con(TABLE_I, TABLE_IB)
    TABLE_I.write_parquet(tmp_path / "o.parquet")
    TABLE_IB.write_parquet(tmp_path / "a.parquet")
    metric_pairs(con, "o", "a", Q, key="id")
    want = con.sql("FROM anon_pairs ORDER BY ALL").fetchall()
    o, a = tmp_path / "o.parquet", tmp_path / "a.parquet"
    for given in ((str(o), str(a)), (o, a)):
        metric_pairs(con, *given, Q, key="id")
        assert con.sql("FROM anon_pairs ORDER BY ALL").fetchall() == want
    with pytest.raises(
        pa.InvalidParameterError,
        match=r"metric_pairs: anonymized must be a table or view name or a file path \(a str or pathlib.Path\), "
        r"got DataFrame",
    ):
        metric_pairs(con, "o", TABLE_IB, Q)  # type: ignore[arg-type]
