"""The SQL macros and polars_anon.duckdb refuse what Python refuses, with the same words.

Every case asserts the whole message against the pattern of its template in
:mod:`polars_anon.messages` with the culprit filled in (the column, value, parameter
or hierarchy), so a message that stops naming it fails. The property test at the end
runs random bad inputs through Polars and DuckDB and asks for the same refusal or the
same answer. Each case failed on the main branch before this change (the macro
answered: dropped the column, rounded k, returned NULL or a class smaller than k).
"""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.duckdb import generalize_sql, load_hierarchies, metric_pairs, register, sql_files
from polars_anon.messages import (
    CHOICE,
    COLUMNS_NOT_FOUND,
    EMPTY_TABLE,
    HIERARCHY_NOT_LOADED,
    K_ABOVE_ROWS,
    K_NOT_INTEGER,
    LEVEL_OUT_OF_RANGE,
    MESSAGES,
    NAMES_NOT_QIDS,
    NO_HIERARCHY,
    NOT_A_LEAF,
    QIDS_EMPTY,
    sql_text,
)
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

AGE = pa.Hierarchy.intervals(range(20, 40), [5, 10])  # levels 0..3, root '*'
ZIP = pa.Hierarchy.masking(["02139", "02141", "10001"])
T = pl.DataFrame({"x": [1, 1, 2], "y": ["a", "b", "b"], "age": [23, 35, 35], "zip": [2139, 2141, 10001]})
T_COLUMNS = T.columns


def _sql_message(exc: BaseException) -> str:
    """The message of a DuckDB error without its 'Invalid Input Error: ' kind."""
    return re.sub(r"^[A-Za-z ]+Error: ", "", str(exc))


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    load_hierarchies(c, {"age": AGE, "zip": ZIP, **ANIMAL_HIERARCHIES})
    for name, frame in {
        "t": T,
        "e": T.clear(),
        "o": TABLE_I,
        "a": TABLE_IB,
        "a_nogender": TABLE_IB.drop("gender"),
    }.items():
        c.register(f"{name}_frame", frame.to_arrow())
        c.execute(f"CREATE TABLE {name} AS FROM {name}_frame")
    c.execute("CREATE TABLE e_coords AS SELECT 0::BIGINT AS t, 0::BIGINT AS dim, 0::BIGINT AS x, 0.0::DOUBLE AS v")
    c.execute("CREATE TABLE e_tuples AS SELECT 0::BIGINT AS t, 3::BIGINT AS size")
    c.execute("CREATE TABLE z_tuples AS FROM e_tuples WHERE false")
    return c


def _missing(what: str, missing: list[str], table: str, columns: list[str]) -> str:
    return COLUMNS_NOT_FOUND.pattern(what=what, missing=missing, where=f"table {table!r}", columns=columns)


def _level(h: str, level: object, top: int, root: str = "*") -> str:
    return LEVEL_OUT_OF_RANGE.pattern(where=f"hierarchy {h!r}: ", level=level, top=top, root=root)


# (id, SQL, expected message pattern); every pattern names the culprit
MACRO_CASES = [
    (
        "class_sizes: a qid that is not a column",
        "FROM anon_class_sizes('t', ['x', 'zz'])",
        _missing("qids", ["zz"], "t", T_COLUMNS),
    ),
    (
        "class_sizes: no qid is a column",
        "FROM anon_class_sizes('t', ['zz', 'w'])",
        _missing("qids", ["zz", "w"], "t", T_COLUMNS),
    ),
    (
        "class_sizes: unknown qid, empty table",
        "FROM anon_class_sizes('e', ['zz'])",
        _missing("qids", ["zz"], "e", T_COLUMNS),
    ),
    ("class_sizes: empty qids", "FROM anon_class_sizes('t', [])", QIDS_EMPTY.pattern()),
    ("class_sizes: k = 0", "FROM anon_class_sizes('t', ['x'], k := 0)", K_NOT_INTEGER.pattern(k=0)),
    ("class_sizes: k = 1.5 (was rounded)", "FROM anon_class_sizes('t', ['x'], k := 1.5)", K_NOT_INTEGER.pattern(k=1.5)),
    ("class_sizes: k a string", "FROM anon_class_sizes('t', ['x'], k := '2')", K_NOT_INTEGER.pattern(k="2")),
    ("class_sizes: k NULL", "FROM anon_class_sizes('t', ['x'], k := NULL)", K_NOT_INTEGER.pattern(k=None)),
    ("class_sizes: k = 0 on an empty table", "FROM anon_class_sizes('e', ['x'], k := 0)", K_NOT_INTEGER.pattern(k=0)),
    (
        "k_summary: a qid that is not a column",
        "FROM anon_k_summary('t', ['y', 'zz'], k := 2)",
        _missing("qids", ["zz"], "t", T_COLUMNS),
    ),
    ("k_summary: empty qids", "FROM anon_k_summary('t', [], k := 2)", QIDS_EMPTY.pattern()),
    ("k_summary: k = -1", "FROM anon_k_summary('t', ['x'], k := -1)", K_NOT_INTEGER.pattern(k=-1)),
    (
        "k_summary: k = 2.0 (a DOUBLE)",
        "FROM anon_k_summary('t', ['x'], k := 2.0::DOUBLE)",
        K_NOT_INTEGER.pattern(k=2.0),
    ),
    ("k_summary: k = true", "FROM anon_k_summary('t', ['x'], k := true)", K_NOT_INTEGER.pattern(k=True)),
    ("generalize: hierarchy not loaded", "SELECT anon_generalize('height', 23, 1)", NO_HIERARCHY.pattern(qid="height")),
    ("generalize: level above the root", "SELECT anon_generalize('age', 23, 4)", _level("age", 4, 3)),
    ("generalize: negative level", "SELECT anon_generalize('age', 23, -1)", _level("age", -1, 3)),
    ("generalize: level 1.5", "SELECT anon_generalize('age', 23, 1.5)", _level("age", 1.5, 3)),
    ("generalize: a NULL value, level above the root", "SELECT anon_generalize('age', NULL, 4)", _level("age", 4, 3)),
    (
        "generalize: a column of NULLs, level above the root",
        "SELECT anon_generalize('age', NULL::INTEGER + x, 4) FROM t",
        _level("age", 4, 3),
    ),
    (
        "generalize: a NULL value, hierarchy not loaded",
        "SELECT anon_generalize('height', NULL, 1)",
        NO_HIERARCHY.pattern(qid="height"),
    ),
    (
        "generalize: a value outside the hierarchy",
        "SELECT anon_generalize('age', 19, 1)",
        NOT_A_LEAF.pattern(column="age", value="19"),
    ),
    (
        "generalize: an INTEGER zip loses its leading zero",
        "SELECT anon_generalize('zip', zip, 2) FROM t",
        NOT_A_LEAF.pattern(column="zip", value="2139"),
    ),
    ("level_map: hierarchy not loaded", "FROM anon_level_map('height', 1)", NO_HIERARCHY.pattern(qid="height")),
    ("level_map: level above the root", "FROM anon_level_map('age', 9)", _level("age", 9, 3)),
    (
        "mondrian: k above the rows (was a class of 3 < k)",
        "FROM anon_mondrian('e_coords', 'e_tuples', k := 4)",
        K_ABOVE_ROWS.pattern(k=4, n_rows=3),
    ),
    ("mondrian: k = 0", "FROM anon_mondrian('e_coords', 'e_tuples', k := 0)", K_NOT_INTEGER.pattern(k=0)),
    ("mondrian: k = 2.5", "FROM anon_mondrian('e_coords', 'e_tuples', k := 2.5)", K_NOT_INTEGER.pattern(k=2.5)),
    (
        "mondrian: split",
        "FROM anon_mondrian('e_coords', 'e_tuples', split := 'loose')",
        CHOICE.pattern(name="split", allowed=["strict", "relaxed"], value="loose"),
    ),
    (
        "mondrian: empty tuples table",
        "FROM anon_mondrian('e_coords', 'z_tuples', k := 2)",
        EMPTY_TABLE.pattern(table="z_tuples"),
    ),
    (
        "encode: representation",
        "FROM anon_encode_classes('a', ['gender'], representation := 'onehot')",
        CHOICE.pattern(name="representation", value="onehot"),
    ),
    (
        "encode: a qid that is not a column",
        "FROM anon_encode_classes('a', ['gender', 'zz'], representation := 'oneclass')",
        _missing("qids", ["zz"], "a", TABLE_IB.columns),
    ),
    ("encode: empty qids", "FROM anon_encode_classes('a', [], representation := 'oneclass')", QIDS_EMPTY.pattern()),
    (
        "metric: a qid missing from the anonymized table",
        "FROM anon_ncp('o', 'a_nogender', ['gender', 'race'])",
        _missing("qids", ["gender"], "a_nogender", ["id", "race"]),
    ),
    ("metric: empty qids", "FROM anon_ncp('o', 'a', [])", QIDS_EMPTY.pattern()),
    (
        "metric pairs in SQL: a qid missing from the anonymized table",
        "FROM anon_metric_pairs('o', 'a_nogender', ['race', 'gender'])",
        _missing("qids", ["gender"], "a_nogender", ["id", "race"]),
    ),
    (
        "t_closeness: distance",
        "FROM anon_t_closeness('t', ['x'], 'y', distance := 'tree')",
        CHOICE.pattern(name="t-closeness on 'y': distance", value="tree"),
    ),
    (
        "t_closeness: hierarchy not loaded, empty table",
        "FROM anon_t_closeness('e', ['x'], 'y', distance := 'hierarchical')",
        HIERARCHY_NOT_LOADED.pattern(where="t-closeness on 'y': ", name="y"),
    ),
    (
        "t_closeness: an INTEGER zip loses its leading zero",
        "FROM anon_t_closeness('t', ['x'], 'zip', distance := 'hierarchical')",
        NOT_A_LEAF.pattern(column="zip", value="2139"),
    ),
    ("metric by name: empty qids", "FROM anon_metric('discernibility', 'o', 'a', [])", QIDS_EMPTY.pattern()),
]


@pytest.mark.parametrize(("sql", "pattern"), [c[1:] for c in MACRO_CASES], ids=[c[0] for c in MACRO_CASES])
def test_macro_refuses_naming_the_culprit(con: duckdb.DuckDBPyConnection, sql: str, pattern: str) -> None:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    assert re.fullmatch(pattern, _sql_message(info.value)), (sql, _sql_message(info.value))


def test_generalize_sql_refuses_before_sql_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Python-side checks of generalize_sql: levels for a non-qid, non-integer and out-of-range levels."""
    H = {"age": AGE}
    with pytest.raises(
        pa.InvalidParameterError, match=NAMES_NOT_QIDS.pattern(what="levels", unknown=["agee"], qids=["age"])
    ):
        generalize_sql("t", H, {"agee": 1})
    with pytest.raises(pa.InvalidParameterError, match=_level("age", 1.5, 3)):
        generalize_sql("t", H, {"age": 1.5})  # type: ignore[dict-item]
    with pytest.raises(pa.InvalidParameterError, match=_level("age", 4, 3)):
        generalize_sql("t", H, {"age": 4})


def test_generalize_sql_says_what_it_expected_of_a_mistaken_call(con: duckdb.DuckDBPyConnection) -> None:
    """generalize_sql(con, "t", H) said "levels ['age'] are not qids; the qids are ['t']" (the table name read as
    the hierarchies, review7 F10): each argument is checked for what it must be."""
    H = {"age": AGE}
    with pytest.raises(
        pa.InvalidParameterError, match=r"relation must be SQL text .* got DuckDBPyConnection; it takes"
    ):
        generalize_sql(con, "t", H)  # type: ignore[arg-type]
    with pytest.raises(pa.InvalidParameterError, match=r"hierarchies must be a mapping column -> Hierarchy, got str"):
        generalize_sql("t", "age", H)  # type: ignore[arg-type]
    with pytest.raises(pa.InvalidParameterError, match=r"levels must be a mapping column -> level, got list"):
        generalize_sql("t", H, [1])  # type: ignore[arg-type]
    with pytest.raises(pa.InvalidParameterError, match=r"hierarchies\['age'\] must be a Hierarchy, got int"):
        generalize_sql("t", {"age": 1}, {"age": 0})  # type: ignore[dict-item]


def test_generalize_sql_refuses_an_unloaded_hierarchy_even_on_an_empty_table(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.Error) as info:
        con.sql(generalize_sql("e", {"y": pa.Hierarchy.suppression(["a", "b"])}, {"y": 1})).fetchall()
    assert re.fullmatch(NO_HIERARCHY.pattern(qid="y"), _sql_message(info.value))


def test_metric_pairs_refusals(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(pa.InvalidParameterError, match=QIDS_EMPTY.pattern()):
        metric_pairs(con, "o", "a", [])
    with pytest.raises(pa.ColumnNotFoundError, match=_missing("sensitive", ["habitat"], "o", TABLE_I.columns)):
        metric_pairs(con, "o", "a", ["gender"], sensitive="habitat")
    with pytest.raises(pa.ColumnNotFoundError, match=_missing("qids", ["gender"], "a_nogender", ["id", "race"])):
        metric_pairs(con, "o", "a_nogender", ["gender", "race"])


def test_load_hierarchies_refuses_what_is_not_a_hierarchy_and_loads_nothing() -> None:
    c = duckdb.connect()
    with pytest.raises(pa.InvalidParameterError, match=r"hierarchies\['race'\] must be a Hierarchy, got dict"):
        load_hierarchies(c, {"gender": ANIMAL_HIERARCHIES["gender"], "race": {"*": ["cat"]}})  # type: ignore[dict-item]
    register(c)
    assert c.execute("SELECT count(*) FROM anon_nodes").fetchall() == [(0,)]


# ------------------------------------------------------------------ the answers that used to be wrong
def test_empty_table_is_not_k_anonymous_in_both_engines(con: duckdb.DuckDBPyConnection) -> None:
    """An empty table used to be reported k-anonymous (no class smaller than k)."""
    assert con.execute("FROM anon_k_summary('e', ['x'], k := 2)").fetchall() == [(2, 0, 0, 0, 0, False)]
    assert pa.k_summary(T.clear().lazy(), ["x"], 2).collect().row(0) == (2, 0, 0, 0, 0, False)
    assert pa.is_k_anonymous(T.clear().lazy(), ["x"], 1) is False


@pytest.mark.parametrize("k", [0, -1, 1.5, 2.0, True, "2", None])
def test_python_class_functions_refuse_k(k: object) -> None:
    """is_k_anonymous(..., 0) used to be True; k = 1.5 was compared as a float."""
    for call in (lambda: pa.is_k_anonymous(T.lazy(), ["x"], k), lambda: pa.k_summary(T.lazy(), ["x"], k).collect()):  # type: ignore[arg-type]
        with pytest.raises(pa.InvalidParameterError, match=K_NOT_INTEGER.pattern(k=k)):
            call()


def test_generalize_matches_integer_columns_as_text(con: duckdb.DuckDBPyConnection) -> None:
    """An INTEGER column is matched against the string labels as its text, as Polars casts it to String."""
    via_sql = con.sql(generalize_sql("t", {"age": AGE}, {"age": 1})).pl()
    via_polars = pa.generalize(T.lazy(), {"age": AGE}, {"age": 1}).collect()
    assert via_sql.equals(via_polars) and via_sql["age"].to_list() == ["20-24", "35-39", "35-39"]
    assert con.execute("SELECT anon_generalize('age', NULL, 2)").fetchall() == [(None,)]  # NULL stays NULL


@pytest.mark.parametrize(
    "value", ["23", "20-24", "20-29", "*", "19"], ids=["leaf", "inner", "inner", "root", "outside"]
)
@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_generalize_takes_any_node_in_polars_and_sql_alike(con, value: str, level: int) -> None:
    """generalize_expr maps any node (its docstring; the road publishes a null qid's rows at the root and maps them
    on): anon_generalize refused an inner node ('20-24' at level 2, where generalize_expr gives '20-29'). Both map
    a node as level_map says, and refuse a value that is no node in the same words."""
    frame = pl.DataFrame({"age": [value]})
    if value == "19":
        with pytest.raises(pa.ValueNotInHierarchyError) as python:
            frame.select(pa.generalize_expr("age", AGE, level))
        with pytest.raises(duckdb.Error) as sql:
            con.execute("SELECT anon_generalize('age', ?, ?)", [value, level]).fetchall()
        assert _sql_message(sql.value) == NOT_A_LEAF(column="age", value=value)
        assert str(python.value).startswith(NOT_A_LEAF(column="age", value=value))
        return
    want = dict(AGE.level_map(level).iter_rows())[value]
    assert frame.select(pa.generalize_expr("age", AGE, level)).item() == want
    assert con.execute("SELECT anon_generalize('age', ?, ?)", [value, level]).fetchall() == [(want,)]


# ------------------------------------------------------------------ the messages are one text
def test_sql_messages_file_is_generated_from_the_templates() -> None:
    """sql/_messages.sql is polars_anon.messages.sql_text(); regenerate with messages.write_sql()."""
    assert dict(sql_files())["_messages.sql"] == sql_text()


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.text(
            st.characters(
                exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"), include_characters=" \n\t\\'\""
            )
        ),
        st.integers(-(10**6), 10**6),
        st.booleans(),
        st.none(),
        st.sampled_from([1.5, 2.0, -0.25]),
    ),
    names=st.lists(st.text("ab'\" _\\", max_size=4), max_size=3),
)
def test_sql_messages_equal_the_python_text(con: duckdb.DuckDBPyConnection, value: object, names: list[str]) -> None:
    """Each anon_msg_* macro gives the Python text for the same fields (repr of strings, lists, None, bools)."""
    assert con.execute("SELECT anon_msg_k_not_integer(?)", [value]).fetchone()[0] == K_NOT_INTEGER(k=value)
    got = con.execute(
        "SELECT anon_msg_columns_not_found('qids', ?::VARCHAR[], 'the frame', ?::VARCHAR[])", [names, ["x"]]
    ).fetchone()[0]
    assert got == COLUMNS_NOT_FOUND(what="qids", missing=names, where="the frame", columns=["x"])


def test_every_template_has_its_sql_twin(con: duckdb.DuckDBPyConnection) -> None:
    names = {
        r[0]
        for r in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE function_name LIKE 'anon_msg_%'"
        ).fetchall()
    }
    assert names == {f"anon_msg_{n}" for n in MESSAGES} | {"anon_msg_repr", "anon_msg_repr_list"}


def test_python_checks_use_the_templates() -> None:
    """The existing Python checks say exactly what the templates say (so SQL and Python agree word for word)."""
    from polars_anon._validate import check_choice, check_columns, check_k

    lf = T.lazy()
    with pytest.raises(pa.ColumnNotFoundError) as info:
        check_columns(lf, ["zz"])
    assert str(info.value) == COLUMNS_NOT_FOUND(what="qids", missing=["zz"], where="the frame", columns=T_COLUMNS)
    with pytest.raises(pa.InvalidParameterError) as info2:
        check_k(1.5)
    assert str(info2.value) == K_NOT_INTEGER(k=1.5)
    with pytest.raises(pa.InfeasibleError) as info3:
        check_k(5, 3)
    assert str(info3.value) == K_ABOVE_ROWS(k=5, n_rows=3)
    with pytest.raises(pa.InvalidParameterError) as info4:
        check_choice("split", "loose", ["strict", "relaxed"])
    assert str(info4.value) == CHOICE(name="split", allowed=["strict", "relaxed"], value="loose")
    with pytest.raises(pa.InvalidParameterError) as info5:
        AGE.level_map(4)
    assert str(info5.value) == LEVEL_OUT_OF_RANGE(where="", level=4, top=3, root="*")


# ------------------------------------------------------------------ Polars and SQL agree on random bad input
def _python(qids: list[str], k: object) -> tuple[str, object]:
    try:
        summary = pa.k_summary(T.lazy(), qids, k).collect().row(0)  # type: ignore[arg-type]
        sizes = pa.class_sizes(T.lazy(), qids).collect()
    except pa.AnonError as exc:
        return "refused", str(exc).replace(" not in the frame; ", " not in table 't'; ")
    return "answered", (summary, sorted(sizes.with_columns(pl.col("size").cast(pl.Int64)).rows()))


def _sql(con: duckdb.DuckDBPyConnection, qids: list[str], k: object) -> tuple[str, object]:
    try:
        summary = con.execute("FROM anon_k_summary('t', ?::VARCHAR[], k := ?)", [qids, k]).fetchone()
        rows = con.execute("FROM anon_class_sizes('t', ?::VARCHAR[], k := ?)", [qids, k]).fetchall()
    except duckdb.Error as exc:
        return "refused", _sql_message(exc)
    names = [d[0] for d in con.description]
    return "answered", (summary, sorted(tuple(r[names.index(c)] for c in [*qids, "size"]) for r in rows))


@settings(max_examples=60, deadline=None)
@given(
    known=st.lists(st.sampled_from(T_COLUMNS), unique=True, max_size=3),
    unknown=st.lists(
        st.text("zq_' -", min_size=1, max_size=4).filter(lambda s: s not in T_COLUMNS), unique=True, max_size=2
    ),
    k=st.one_of(st.integers(-2, 5), st.sampled_from([1.5, 2.0, True, False, "2", None])),
    data=st.data(),
)
def test_polars_and_sql_refuse_alike(
    con: duckdb.DuckDBPyConnection, known: list[str], unknown: list[str], k: object, data: st.DataObject
) -> None:
    """Same refusal (same words, the frame read as table 't'), or the same summary and classes."""
    qids = data.draw(st.permutations(known + unknown))
    assert _sql(con, qids, k) == _python(qids, k)
