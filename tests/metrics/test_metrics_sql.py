"""Every metric macro of sql/metrics.sql agrees with its Polars twin to 1e-9, per attribute too.

Both forms: ``anon_<name>(orig, anon, ...)`` over the tables, and ``anon_<name>_of(pairs, ...)``
over the pairs materialized by :func:`polars_anon.duckdb.metric_pairs`.
"""

from __future__ import annotations

import math
import re

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings

import polars_anon as pa
from polars_anon._validate import check_k
from polars_anon.duckdb import load_hierarchy, metric_pairs, register, sql_files
from polars_anon.messages import NAMES_TWICE, PAIRS_QIDS, QIDS_EMPTY
from polars_anon.metrics import METRICS, label_tables, prepare
from tests.conftest import ADULT_QIDS
from tests.examples import ANIMAL_HIERARCHIES, FIG2, TABLE_I, TABLE_IB
from tests.metrics.test_metrics_properties import publications
from tests.sql_connection import frame, registered

HELPERS = {
    "anon_metric_pairs",
    "anon_metric_nodes",
    "anon_metric_cells_of",
    "anon_metric_classes_of",
    "anon_metric_levels_of",
    "anon_metric_pairwise_of",
    "anon_metric_joint_of",
    "anon_metric_refuse",
    "anon_metric_edge_cost_of",
    "anon_metric_k",
    "anon_metric_part",
    "anon_metric_check",
    "anon_metric_checked",
    "anon_metric_read",
}


def _macro_names() -> set[str]:
    text = dict(sql_files())["metrics.sql"]
    return set(re.findall(r"CREATE OR REPLACE TEMP MACRO (anon_\w+)", text))


def test_every_metric_has_a_macro_and_back() -> None:
    """Both forms of every metric, and nothing else."""
    assert _macro_names() - HELPERS == {m.sql for m in METRICS.values()} | {m.sql + "_of" for m in METRICS.values()}


def _sql(
    con: duckdb.DuckDBPyConnection, name: str, qids: list[str], *, key: str | None, sensitive: str | None, k: int | None
) -> pl.DataFrame:
    return frame(
        con, f"FROM {METRICS[name].sql}('o', 'a', ?, key := ?, sensitive := ?, k := ?)", [qids, key, sensitive, k]
    )


def _sql_of(
    con: duckdb.DuckDBPyConnection, name: str, qids: list[str], *, key: str | None, sensitive: str | None, k: int | None
) -> pl.DataFrame:
    """The fast form: pairs materialized once per (key, sensitive) by metric_pairs, then anon_<name>_of."""
    table = f"pr_{key or 'pos'}_{sensitive or 'nos'}".replace("-", "_")
    if table not in {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}:
        metric_pairs(con, "o", "a", qids, key=key, sensitive=sensitive, name=table)
    return frame(con, f"FROM {METRICS[name].sql}_of(?, ?, k := ?)", [table, qids, k])


def assert_agree(sql: pl.DataFrame, polars: pl.DataFrame, name: str) -> None:
    """Same rows (attribute, value), values within 1e-9 (relative for large sums), same declared type."""
    assert sql.columns == ["attribute", "value"]
    assert sql.schema["value"] == METRICS[name].dtype == polars.schema["value"], name
    got, want = dict(sql.iter_rows()), dict(polars.iter_rows())
    assert set(got) == set(want) and sql.height == polars.height, name
    for attribute, value in want.items():
        other = got[attribute]
        if value is None or other is None:
            assert value is None and other is None, (name, attribute, other, value)
        else:
            assert math.isclose(other, value, rel_tol=1e-9, abs_tol=1e-9), (name, attribute, other, value)


def _connect(
    original: pl.DataFrame, anonymized: pl.DataFrame, hierarchies: dict, con: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """`con` with the hierarchies loaded and the tables o and a. A test or hypothesis example passes the registered
    connection of tests/sql_connection.py (emptied); a module's fixture, kept across tests, gets a new connection."""
    if con is None:
        con = duckdb.connect()
        register(con)
    for q, h in hierarchies.items():
        load_hierarchy(con, q, h)
    con.register("o_frame", original.to_arrow())
    con.register("a_frame", anonymized.to_arrow())
    con.execute("CREATE TABLE o AS FROM o_frame")  # tables keep their row order for POSITIONAL JOIN
    con.execute("CREATE TABLE a AS FROM a_frame")
    return con


# ------------------------------------------------------------------ small hand tables
HABITAT = pl.Series("habitat", ["land", "land", "land", "sea", "sea", "land"])
FIG2_ORIGINAL = pl.DataFrame(
    {"Q": ["a", "b", "c", "d", "e", "f"], "G": ["M", "M", "F", "F", "M", "F"], "S": list("xxyxyy")}
)
FIG2_PUBLISHED = FIG2_ORIGINAL.with_columns(
    Q=pl.Series(["A", "A", "*", "*", "*", "*"]), G=pl.Series(["M", "M", "F", "F", "*", "*"])
)
AGES = pa.Hierarchy.intervals([30, 31, 35, 38, 52], [5, 10])
SMALL = {
    "table_i": (TABLE_I.with_columns(HABITAT), TABLE_IB.with_columns(HABITAT), ANIMAL_HIERARCHIES, "habitat", None, 3),
    "table_i_untouched": (
        TABLE_I.with_columns(HABITAT),
        TABLE_I.with_columns(HABITAT),
        ANIMAL_HIERARCHIES,
        "habitat",
        None,
        None,
    ),
    "table_i_suppressed": (
        TABLE_I.with_columns(HABITAT),
        TABLE_IB.with_columns(HABITAT).filter(pl.col("id") != "l6"),
        ANIMAL_HIERARCHIES,
        "habitat",
        "id",
        2,
    ),
    "figure_2": (FIG2_ORIGINAL, FIG2_PUBLISHED, {"Q": FIG2, "G": pa.Hierarchy.suppression(["M", "F"])}, "S", None, 2),
    "numeric": (
        pl.DataFrame({"age": [30, 31, 35, 38, 52], "g": list("FMFMF")}),
        pl.DataFrame({"age": ["30-34", "30-34", "35", "30-39", "*"], "g": ["*", "*", "F", "M", "F"]}),
        {"age": AGES, "g": pa.Hierarchy.suppression(["F", "M"])},
        None,
        None,
        1,
    ),
}


@pytest.fixture(scope="module", params=sorted(SMALL))
def small(request: pytest.FixtureRequest) -> tuple:
    original, anonymized, hierarchies, sensitive, key, k = SMALL[request.param]
    qids = list(hierarchies)
    data = prepare(original, anonymized, qids, hierarchies, key=key, sensitive=sensitive, k=k)
    return _connect(original, anonymized, hierarchies), data, qids, key, sensitive, k


@pytest.mark.parametrize("name", sorted(METRICS))
def test_macro_matches_polars_on_hand_tables(name: str, small: tuple) -> None:
    con, data, qids, key, sensitive, k = small
    if METRICS[name].needs_sensitive and sensitive is None:
        pytest.skip(f"{name} needs a sensitive attribute; this table has none")
    assert_agree(_sql(con, name, qids, key=key, sensitive=sensitive, k=k), METRICS[name](data).collect(), name)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_pairs_macro_matches_polars_on_hand_tables(name: str, small: tuple) -> None:
    con, data, qids, key, sensitive, k = small
    if METRICS[name].needs_sensitive and sensitive is None:
        pytest.skip(f"{name} needs a sensitive attribute; this table has none")
    use = sensitive if METRICS[name].needs_sensitive else None
    assert_agree(_sql_of(con, name, qids, key=key, sensitive=use, k=k), METRICS[name](data).collect(), name)


# ------------------------------------------------------------------ Adult at several k
ADULT_CASES = [(5, 0), (20, 300), (100, 0)]


@pytest.fixture(scope="module")
def adult_cases() -> dict[tuple[int, int], tuple]:
    """The cases made so far: the direct form's test asks for k = 20 apart (an indirect parameter), so pytest would
    make that case twice (it keeps one instance of a parametrized fixture at a time)."""
    return {}


@pytest.fixture(scope="module", params=ADULT_CASES, ids=[f"k{k}-supp{s}" for k, s in ADULT_CASES])
def adult_case(
    request: pytest.FixtureRequest, adult: pl.DataFrame, adult_hierarchies: dict, adult_cases: dict
) -> tuple:
    if request.param not in adult_cases:
        adult_cases[request.param] = _adult_case(*request.param, adult, adult_hierarchies)
    return adult_cases[request.param]


def _adult_case(k: int, max_suppressed: int, adult: pl.DataFrame, adult_hierarchies: dict) -> tuple:
    original = adult.with_row_index("row")
    anonymized = pa.anonymize(
        original, qids=ADULT_QIDS, hierarchies=adult_hierarchies, insensitive="row", k=k, max_suppressed=max_suppressed
    ).collect()
    if max_suppressed:
        assert anonymized.height < original.height  # rows were removed: lined up by key
    key = "row" if max_suppressed else None
    data = prepare(original, anonymized, ADULT_QIDS, adult_hierarchies, key=key, sensitive="salary-class", k=k)
    return _connect(original, anonymized, adult_hierarchies), data, key, k


@pytest.mark.slow
@pytest.mark.parametrize("adult_case", [(20, 300)], indirect=True, ids=["k20-supp300"])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_macro_matches_polars_on_adult(name: str, adult_case: tuple) -> None:
    """ARX Adult, 8 qids, full-domain at k = 20 with up to 300 rows suppressed (lined up by key). The direct form
    reads both tables per call, so (time budget) only this case runs it; the fast form below runs every case, the
    hand tables and random hierarchies cover the direct form lined up by position."""
    con, data, key, k = adult_case
    want = METRICS[name](data).collect()
    assert_agree(_sql(con, name, ADULT_QIDS, key=key, sensitive="salary-class", k=k), want, name)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_pairs_macro_matches_polars_on_adult(name: str, adult_case: tuple) -> None:
    """The fast form on Adult, pairs made with the sensitive attribute (the cm / mi_loss case) for every metric."""
    con, data, key, k = adult_case
    want = METRICS[name](data).collect()
    assert_agree(_sql_of(con, name, ADULT_QIDS, key=key, sensitive="salary-class", k=k), want, name)


# ------------------------------------------------------------------ refusals
@pytest.fixture(scope="module")
def animals_connection() -> duckdb.DuckDBPyConnection:
    return _connect(TABLE_I.with_columns(HABITAT), TABLE_IB.head(5).with_columns(HABITAT.head(5)), ANIMAL_HIERARCHIES)


@pytest.fixture()
def animals(animals_connection: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """One connection (macros registered once); each test gets the tables as _connect made them."""
    animals_connection.execute("CREATE OR REPLACE TABLE o AS FROM o_frame")
    animals_connection.execute("CREATE OR REPLACE TABLE a AS FROM a_frame")
    return animals_connection


def test_sql_refuses_different_row_counts_without_key(animals: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.Error, match="different row counts.*pass key"):
        _sql(animals, "ncp", ["gender", "race"], key=None, sensitive=None, k=None)


def test_sql_refuses_values_outside_the_hierarchy(animals: duckdb.DuckDBPyConnection) -> None:
    animals.execute("UPDATE a SET race = 'unicorn' WHERE id = 'l1'")
    with pytest.raises(duckdb.Error, match="column 'race' in the anonymized table: value 'unicorn' is not a node"):
        _sql(animals, "ncp", ["gender", "race"], key="id", sensitive=None, k=None)


def test_sql_refuses_a_missing_hierarchy(animals: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.Error, match="qid 'habitat' has no hierarchy loaded"):
        _sql(animals, "ncp", ["gender", "habitat"], key="id", sensitive=None, k=None)


def test_sql_cm_needs_the_sensitive_attribute(animals: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.Error, match="anon_cm needs the sensitive attribute"):
        _sql(animals, "cm", ["gender", "race"], key="id", sensitive=None, k=None)


def test_sql_mi_loss_needs_the_sensitive_attribute(animals: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.Error, match="anon_mi_loss needs the sensitive attribute"):
        _sql(animals, "mi_loss", ["gender", "race"], key="id", sensitive=None, k=None)


BAD_K = {"0": 0, "-1": -1, "2.5": 2.5, "2.0": 2.0, "'3'": "3", "[2]": [2]}  # SQL literal: the Python value


def test_every_metric_refuses_a_k_python_refuses(animals: duckdb.DuckDBPyConnection) -> None:
    """pa.metrics.compute checks k whatever the metric (check_k); the anon_<metric>_of macros ignored it but two
    (k := 2.5, '3' or 0 gave a value; anon_k_of refused 0 in words of its own, anon_c_avg_of [2] with DuckDB's
    Binder Error). Every metric, both forms (the direct one passes k to the same _of macro: one bad k each)."""
    qids = ["gender", "race"]
    metric_pairs(animals, "o", "a", qids, key="id", sensitive="habitat", name="prk")
    for literal, value in BAD_K.items():
        with pytest.raises(pa.errors.InvalidParameterError) as python:
            check_k(value)
        for name in METRICS:
            for query in [f"FROM {METRICS[name].sql}_of('prk', {qids}, k := {literal})"] + (
                [f"FROM {METRICS[name].sql}('o', 'a', {qids}, key := 'id', sensitive := 'habitat', k := {literal})"]
                if literal == "0"
                else []
            ):
                with pytest.raises(duckdb.Error) as sql:
                    animals.execute(query).fetchall()
                assert str(sql.value).removeprefix("Invalid Input Error: ") == str(python.value), query


# a wrong pairs or qids argument of anon_<metric>_of (SQL literal) -> the one line it is refused with
BAD_PAIRS_ARGUMENTS = {  # over pairs 'prq' made with ['gender']
    "3, ['gender']": "pairs must be the name of a pairs table, got 3",
    "NULL, ['gender']": "pairs must be the name of a pairs table, got None",
    "['prq'], ['gender']": "pairs must be the name of a pairs table, got [prq]",
    "'prq', 'gender'": "qids must be a list of column names, got 'gender'",
    "'prq', 3": "qids must be a list of column names, got 3",
    "'prq', [1]": "qids must be a list of column names, got [1]",
    "'prq', [NULL]": "qids must be a list of column names, got [NULL]",
    "'prq', []": QIDS_EMPTY(),
    "'prq', ['gender', 'gender']": NAMES_TWICE(what="qids", dup=["gender"], noun="quasi-identifier"),
    "'prq', ['gender', 'race']": PAIRS_QIDS(pairs="prq", made=1, qids=["gender", "race"], given=2),
}


def test_every_metric_refuses_wrong_pairs_or_qids_in_one_line(animals: duckdb.DuckDBPyConnection) -> None:
    """anon_<metric>_of checked k alone: a pairs argument that is not text was DuckDB's Catalog or Binder Error
    ('Table with name 3_cells does not exist!', 'Cannot use NULL as function argument'), qids of another kind,
    empty, with a name twice or not as many as the pairs were made with gave a value (or a Binder Error: len(3)).
    Each is one line naming the argument, before any k (refused by the test above, in one line too)."""
    metric_pairs(animals, "o", "a", ["gender"], key="id", sensitive="habitat", name="prq")
    for arguments, message in BAD_PAIRS_ARGUMENTS.items():
        for name in METRICS:
            query = f"FROM {METRICS[name].sql}_of({arguments}, k := 0)"
            with pytest.raises(duckdb.InvalidInputException) as sql:
                animals.execute(query).fetchall()
            assert str(sql.value) == "Invalid Input Error: " + message, query


def test_a_wrong_call_is_refused_in_the_same_words_every_time(animals: duckdb.DuckDBPyConnection) -> None:
    """anon_metric_levels_of, anon_ambiguity_of and anon_squared_distance_error_of (and the distances over the levels)
    read the qids' hierarchy nodes apart from the checked rows: with qids of another number than the pairs' and one
    with no hierarchy loaded, the nodes' refusal raced the check's (ambiguity: 14 of 15 runs the one, 1 the other)."""
    metric_pairs(animals, "o", "a", ["gender"], key="id", sensitive="habitat", name="prw")
    want = "Invalid Input Error: " + PAIRS_QIDS(pairs="prw", made=1, qids=["gender", "no_hierarchy"], given=2)
    racing = {"absolute_distance", "relative_distance", "ambiguity", "squared_distance_error"}  # read the nodes
    for name in METRICS:
        query = f"FROM {METRICS[name].sql}_of('prw', ['gender', 'no_hierarchy'], k := 2)"
        for _ in range(20 if name in racing else 1):
            with pytest.raises(duckdb.InvalidInputException) as sql:
                animals.execute(query).fetchall()
            assert str(sql.value) == want, query


@pytest.mark.slow
@settings(max_examples=5, deadline=None)
@given(p=publications())
def test_every_macro_matches_polars_on_random_hierarchies(p: tuple) -> None:
    """Random trees (unbalanced, chains), a random truthful publication, lined up by position."""
    original, published, hs = p
    original = original.with_columns(s=pl.col("q0"))
    con = _connect(original, published, hs, registered())
    prepared = prepare(original, published, list(hs), hs, sensitive="s", k=2)
    for name in METRICS:
        want = METRICS[name](prepared).collect()
        assert_agree(_sql(con, name, list(hs), key=None, sensitive="s", k=2), want, name)
        assert_agree(_sql_of(con, name, list(hs), key=None, sensitive="s", k=2), want, name)


@pytest.mark.parametrize("name", sorted(set(METRICS) - {"k"}))
def test_sql_refuses_values_outside_the_hierarchy_in_every_path(name: str, animals: duckdb.DuckDBPyConnection) -> None:
    """Every macro that reads the tables checks the labels, whatever columns it uses (k reads none)."""
    animals.execute("UPDATE a SET race = 'unicorn' WHERE id = 'l1'")
    with pytest.raises(duckdb.Error, match="column 'race' in the anonymized table: value 'unicorn' is not a node"):
        _sql(animals, name, ["gender", "race"], key="id", sensitive="habitat", k=None)


def test_pairs_with_many_sensitive_values_match_polars() -> None:
    """64 or more sensitive values: the pairs are grouped by (o, p, s) instead of one count per value."""
    original = pl.concat([TABLE_I] * 15).with_row_index("n").with_columns(s=(pl.col("n") % 70).cast(pl.String))
    published = pl.concat([TABLE_IB] * 15).with_row_index("n").with_columns(s=(pl.col("n") % 70).cast(pl.String))
    con = _connect(original, published, ANIMAL_HIERARCHIES, registered())
    data = prepare(original, published, ["gender", "race"], ANIMAL_HIERARCHIES, sensitive="s", k=3)
    for name in ("cm", "mi_loss", "ncp", "discernibility", "cramers_v"):
        assert_agree(
            _sql_of(con, name, ["gender", "race"], key=None, sensitive="s", k=3), METRICS[name](data).collect(), name
        )


def test_pairs_with_too_many_codes_for_a_bigint_match_polars() -> None:
    """16 qids of 17 codes each: 17**16 > 2**62, so metric_pairs packs the tuples as HUGEINT."""
    leaves = [chr(ord("a") + j) for j in range(15)]
    hs = {f"q{i}": pa.Hierarchy.suppression(leaves) for i in range(16)}
    original = pl.DataFrame(
        {q: [leaves[(r * (i + 3)) % 15] for r in range(40)] for i, q in enumerate(hs)}
    ).with_columns(s=pl.Series([str(r % 3) for r in range(40)]))
    published = original.with_columns(
        pl.when(pl.int_range(pl.len()) % 2 == 0).then(pl.lit("*")).otherwise(pl.col(q)).alias(q) for q in ["q0", "q5"]
    )
    con = _connect(original, published, hs, registered())
    data = prepare(original, published, list(hs), hs, sensitive="s", k=2)
    for name in ("ncp", "modified", "discernibility", "cm", "mi_loss", "squared_distance_error"):
        assert_agree(_sql_of(con, name, list(hs), key=None, sensitive="s", k=2), METRICS[name](data).collect(), name)


def test_pairs_tables_made_in_sql_alone_match_polars() -> None:
    """The route of the sql/metrics.sql header: anon_metric_pairs and its companions as TEMP tables."""
    original, anonymized, hierarchies, sensitive, key, k = SMALL["table_i_suppressed"]
    con = _connect(original, anonymized, hierarchies, registered())
    qids = list(hierarchies)
    con.execute(
        "CREATE TEMP TABLE pr AS FROM anon_metric_pairs('o', 'a', ?, key := ?, sensitive := ?)", [qids, key, sensitive]
    )
    for part in ("cells", "classes", "joint"):
        con.execute(f"CREATE TEMP TABLE pr_{part} AS FROM anon_metric_{part}_of('pr', ?)", [qids])
    data = prepare(original, anonymized, qids, hierarchies, key=key, sensitive=sensitive, k=k)
    for name in METRICS:
        got = frame(con, f"FROM {METRICS[name].sql}_of('pr', ?, k := ?)", [qids, k])
        assert_agree(got, METRICS[name](data).collect(), name)


def test_suppressed_rows_count_as_deleted_and_modified_in_a_one_node_hierarchy() -> None:
    """hunt36: a one-node hierarchy's leaf is its root, so a suppressed row's cell (removed) was neither modified nor
    deleted. Row 4 of 4 removed: c (one node) 1 of 4 cells, g (F/M kept as they are) 1 of 4, the table 2 of 8."""
    from polars_anon.duckdb import load_hierarchies
    from polars_anon.metrics.registry import evaluate_both

    hs = {"c": pa.Hierarchy.from_dict({"x": None}), "g": pa.Hierarchy.suppression(["F", "M"])}
    orig = pl.DataFrame({"id": [1, 2, 3, 4], "c": ["x"] * 4, "g": ["F", "M", "F", "M"]})
    anon = orig.filter(pl.col("id") < 4)
    names = ["modified", "deleted", "deleted_of_modified"]
    want = {"modified": 25.0, "deleted": 25.0, "deleted_of_modified": 100.0}
    per_qid = pa.metrics.compute(orig, anon, ["c", "g"], hs, names, key="id", by_attribute=True)
    assert per_qid.rows() == [("c", 25.0, 25.0, 100.0), ("g", 25.0, 25.0, 100.0)]
    assert pa.metrics.compute(orig, anon, ["c", "g"], hs, names, key="id").row(0, named=True) == want
    assert evaluate_both(prepare(orig, anon, ["c", "g"], hs, key="id"), names)[0] == want  # the report's arrays
    con = registered()
    load_hierarchies(con, hs)
    con.register("o", orig)
    con.register("a", anon)
    metric_pairs(con, "o", "a", ["c", "g"], key="id", name="one_node")
    for name in names:
        rows = [(None, want[name]), ("c", want[name]), ("g", want[name])]
        assert con.execute(f"FROM {METRICS[name].sql}_of('one_node', ['c', 'g'])").fetchall() == rows
        assert con.execute(f"FROM {METRICS[name].sql}('o', 'a', ['c', 'g'], key := 'id')").fetchall() == rows


# ------------------------------------------------------------------ qids published without a hierarchy
CLASSES = sorted(n for n, m in METRICS.items() if m.family == "classes")
RANGES = TABLE_IB.with_columns(HABITAT, pl.col("race").replace({"mammals": "1-3", "cetaceans": "4-6"}))
UNBUILT = {  # original, anonymized, the hierarchies loaded, key, k: Mondrian's ranges, MDAV's means, rows suppressed
    "ranges": (TABLE_I.with_columns(HABITAT), RANGES, {"gender": ANIMAL_HIERARCHIES["gender"]}, None, 3),
    "suppressed_none_built": (TABLE_I.with_columns(HABITAT), RANGES.filter(pl.col("id") != "l6"), {}, "id", 2),
    "means": (
        pl.DataFrame({"age": [30, 31, 35, 38, 52], "g": list("FMFMF")}),
        pl.DataFrame({"age": [30.5, 30.5, 125 / 3, 125 / 3, 125 / 3], "g": list("FMFMF")}),
        {},
        None,
        2,
    ),
    "empty_string": (  # '' a value like any other (mend51: compute refused it where the macros measure it)
        pl.DataFrame({"a": ["", "", "''", "''", "y", "y", "y"]}),
        pl.DataFrame({"a": ["", "", "''", "''", "*", "*", "y"]}),
        {},
        None,
        1,
    ),
    "signed_zeros": (  # -0.0 and 0.0 one published value, as a Polars group-by and the labels hold them
        pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}),
        pl.DataFrame({"x": [0.0, -0.0, 0.5, 0.5]}),
        {},
        None,
        2,
    ),
}


@pytest.mark.parametrize("case", sorted(UNBUILT))
def test_classes_macros_need_no_hierarchy(case: str) -> None:
    """mend50: the classes metrics measure a qid with no hierarchy loaded, as pa.metrics.compute(..., names='classes')
    does (a flat hierarchy of both tables' labels, metrics.label_hierarchies), in the direct form and over pairs made
    by anon_metric_pairs (fails before: 'has no hierarchy loaded'); mend52: and over pairs made by
    polars_anon.duckdb.metric_pairs, the fast road (it refused such a qid before)."""
    original, anonymized, hierarchies, key, k = UNBUILT[case]
    qids = [c for c in original.columns if c not in ("id", "habitat")]
    sensitive = "habitat" if "habitat" in original.columns else None
    con = _connect(original, anonymized, hierarchies, registered())
    con.execute(
        "CREATE TABLE pr AS FROM anon_metric_pairs('o', 'a', ?, key := ?, sensitive := ?)", [qids, key, sensitive]
    )
    con.execute("CREATE TABLE pr_classes AS FROM anon_metric_classes_of('pr', ?)", [qids])
    metric_pairs(con, "o", "a", qids, key=key, sensitive=sensitive, name="fast")  # mend52: before, 'no hierarchy'
    relabelled, published, flat = label_tables(original, anonymized, [q for q in qids if q not in hierarchies])
    data = prepare(relabelled, published, qids, {**hierarchies, **flat}, key=key, sensitive=sensitive, k=k)
    for name in CLASSES:
        if METRICS[name].needs_sensitive and sensitive is None:
            continue
        want = METRICS[name](data).collect()
        assert_agree(_sql(con, name, qids, key=key, sensitive=sensitive, k=k), want, name)
        assert_agree(frame(con, f"FROM {METRICS[name].sql}_of('pr', ?, k := ?)", [qids, k]), want, name)
        assert_agree(frame(con, f"FROM {METRICS[name].sql}_of('fast', ?, k := ?)", [qids, k]), want, name)
    whole = pa.metrics.compute(original, anonymized, qids, hierarchies, "classes", key=key, sensitive=sensitive, k=k)
    assert whole["min_class_size"].item() == _sql(con, "min_class_size", qids, key=key, sensitive=None, k=k)[0, 1]


@pytest.fixture(scope="module")
def ranges_connection() -> duckdb.DuckDBPyConnection:
    """UNBUILT["ranges"] on a connection of its own, with its pairs made once by metric_pairs ('fast'): every metric's
    refusal reads the same tables (each test made them again, 0.2 s of CPU apiece, most of it in metric_pairs)."""
    original, anonymized, hierarchies, key, _ = UNBUILT["ranges"]
    con = _connect(original, anonymized, hierarchies)
    metric_pairs(con, "o", "a", ["gender", "race"], key=key, sensitive="habitat", name="fast")
    return con


@pytest.mark.parametrize("name", sorted(set(METRICS) - set(CLASSES)))
def test_other_macros_refuse_a_qid_without_hierarchy(name: str, ranges_connection: duckdb.DuckDBPyConnection) -> None:
    """mend50: every metric that reads a cell's distance through a hierarchy refuses a qid with none in one line
    naming it and the metrics that apply, as compute does (cramers_v and mi_loss read the pairs' codes alone: before,
    they measured the labels as if they were nodes); mend52: over pairs made by metric_pairs too."""
    _, _, _, key, k = UNBUILT["ranges"]
    con = ranges_connection
    with pytest.raises(duckdb.Error, match=r"qid 'race' has no hierarchy loaded, .*only the classes metrics") as err:
        _sql(con, name, ["gender", "race"], key=key, sensitive="habitat", k=k)
    with pytest.raises(duckdb.Error, match=r"qid 'race' has no hierarchy loaded, .*only the classes metrics") as fast:
        frame(con, f"FROM {METRICS[name].sql}_of('fast', ?, k := ?)", [["gender", "race"], k])
    assert str(fast.value).split(": ", 1)[1] == str(err.value).split(": ", 1)[1]  # mend52: the same message
    assert "\n" not in str(err.value)
    for metric in CLASSES:  # the message names every classes metric, and no other
        assert METRICS[metric].sql in str(err.value)
    assert str(err.value).count("anon_") == len(CLASSES)
