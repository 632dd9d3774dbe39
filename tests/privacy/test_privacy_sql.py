"""The DuckDB privacy macros (sql/privacy.sql) against their Python twins, class by class."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon._validate import RESERVED_NAMES, refuse_reserved
from polars_anon.classes import k_summary
from polars_anon.duckdb import load_hierarchies
from polars_anon.messages import BUILT_NAME, CHOICE, DISTANCE_PARAMETER, HIERARCHY_NOT_LOADED, setting
from polars_anon.privacy import BetaLikeness, DeltaDisclosure, LDiversity, TCloseness
from polars_anon.privacy.evaluate import class_measures
from tests.sql_connection import frame, registered

ADULT = Path(__file__).resolve().parents[2] / "../shared/data/adult/adult.csv"

CASES = [
    (LDiversity("s", l=2), "anon_l_diversity(?, ?, 's', l := 2)"),
    (LDiversity("s", l=2, variant="entropy"), "anon_l_diversity(?, ?, 's', l := 2, variant := 'entropy')"),
    (
        LDiversity("s", l=2, variant="recursive", c=1.5),
        "anon_l_diversity(?, ?, 's', l := 2, variant := 'recursive', c := 1.5)",
    ),
    (TCloseness("s", t=0.2), "anon_t_closeness(?, ?, 's', t := 0.2)"),
    (TCloseness("s", t=0.2, distance="ordered"), "anon_t_closeness(?, ?, 's', t := 0.2, distance := 'ordered')"),
    (DeltaDisclosure("s", delta=1.0), "anon_delta_disclosure(?, ?, 's', delta := 1.0)"),
    (BetaLikeness("s", beta=1.0), "anon_beta_likeness(?, ?, 's', beta := 1.0)"),
    (
        BetaLikeness("s", beta=1.0, variant="enhanced"),
        "anon_beta_likeness(?, ?, 's', beta := 1.0, variant := 'enhanced')",
    ),
]


def _agree(df: pl.DataFrame, qids: list[str], model, macro: str, hierarchies: dict | None = None) -> None:
    """The macro's classes, sizes, measures and verdicts on `df` equal class_measures' (one registered connection,
    emptied at each call: tests/sql_connection.py)."""
    con = registered()
    if hierarchies:  # load_hierarchies checks the catalogue first (duckdb_functions, about 0.1 s): none to load here
        load_hierarchies(con, hierarchies)
    con.register("t", df.to_arrow())
    sql = macro.replace("?", "'t'", 1).replace("?", "[" + ", ".join(f"'{q}'" for q in qids) + "]", 1)
    got = frame(con, f"SELECT {', '.join(f'class.{q}' for q in qids)}, size, measure, satisfied FROM {sql}")
    want = class_measures(df, qids, model)
    got = got.sort(qids, nulls_last=True)
    want = want.sort(qids, nulls_last=True)
    assert got[qids].equals(want[qids])
    assert got["size"].to_list() == want["size"].to_list()
    for a, b in zip(got["measure"], want["measure"]):
        assert a == pytest.approx(b, abs=1e-9) or (a == b == float("inf"))
    assert got["satisfied"].to_list() == want["satisfied"].to_list()


@settings(max_examples=25, deadline=None)
@given(
    q=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=30),
    data=st.data(),
    case=st.sampled_from(CASES),
)
def test_macros_match_python_on_random_tables(q: list[str], data, case) -> None:
    s = data.draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=len(q), max_size=len(q)))
    model, macro = case
    _agree(pl.DataFrame({"q": q, "s": s}), ["q"], model, macro)


@pytest.mark.skipif(
    not ADULT.exists(),
    reason=f"needs {ADULT.resolve()} (the ../shared/data folder beside the repository); not present here",
)
@pytest.mark.parametrize(("model", "macro"), CASES)
def test_macros_match_python_on_adult(model, macro) -> None:
    df = pl.read_csv(ADULT, separator=";").select("sex", "race", "education", pl.col("salary-class").alias("s"))
    _agree(df, ["sex", "race", "education"], model, macro)


# ------------------------------------------------------------------ t-closeness, hierarchical distance
def _tree(data: st.DataObject, leaves: list[str], name: str) -> dict | list:
    """A random hierarchy below `name` over `leaves`: nested groups of uneven depth, some leaves hung higher."""
    if len(leaves) <= 2 or data.draw(st.booleans()):
        return leaves
    cuts = sorted(data.draw(st.sets(st.integers(1, len(leaves) - 1), min_size=1, max_size=2)))
    chunks = [leaves[a:b] for a, b in zip([0, *cuts], [*cuts, len(leaves)])]
    return {
        c[0] if len(c) == 1 else f"{name}{i}": None if len(c) == 1 else _tree(data, c, f"{name}{i}.")
        for i, c in enumerate(chunks)
    }


def _hierarchical(attribute: str, h: pa.Hierarchy, name: str | None = None, t: float = 0.2) -> tuple:
    named = f", hierarchy := '{name}'" if name else ""
    return TCloseness(attribute, t=t, distance="hierarchical", hierarchy=h), (
        f"anon_t_closeness(?, ?, '{attribute}', t := {t}, distance := 'hierarchical'{named})"
    )


@settings(max_examples=30, deadline=None)
@given(
    n_leaves=st.integers(1, 7),
    q=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=40),
    t=st.sampled_from([0.0, 0.1, 0.25, 0.5]),
    data=st.data(),
)
def test_hierarchical_closeness_matches_python_on_random_hierarchies(
    n_leaves: int, q: list[str], t: float, data
) -> None:
    """Random trees and tables using some of their leaves.

    The trees have uneven depths, leaves under inner nodes and under the root.
    """
    leaves = [f"v{i}" for i in range(n_leaves)]
    h = pa.Hierarchy.from_dict({"*": _tree(data, leaves, "g")})
    s = data.draw(st.lists(st.sampled_from(leaves), min_size=len(q), max_size=len(q)))
    q2 = data.draw(st.lists(st.sampled_from([1, 2]), min_size=len(q), max_size=len(q)))
    model, macro = _hierarchical("s", h, name="tree", t=t)
    _agree(pl.DataFrame({"q": q, "q2": q2, "s": s}), ["q", "q2"], model, macro, {"tree": h})


@pytest.mark.skipif(
    not ADULT.exists(),
    reason=f"needs {ADULT.resolve()} (the ../shared/data folder beside the repository); not present here",
)
@pytest.mark.parametrize("sensitive", ["salary-class", "occupation"])
def test_hierarchical_closeness_matches_python_on_adult(sensitive: str) -> None:
    """The ARX hierarchies of Adult; the hierarchy is loaded under the column's name (the default)."""
    h = pa.Hierarchy.from_csv(ADULT.parent / f"adult_hierarchy_{sensitive}.csv")
    df = pl.read_csv(ADULT, separator=";", infer_schema=False).select("sex", "race", "education", sensitive)
    model, macro = _hierarchical(sensitive, h)
    _agree(df, ["sex", "race", "education"], model, macro, {sensitive: h})


def test_hierarchical_closeness_hand_example() -> None:
    """The hand example of tests/privacy/test_privacy_papers.py: root (level 2) -> A {a1, a2}, B {b1, b2}.

    Class x = {a1, a1}: 5/8; class z = {b1, b2}: 1/2; class y = {a2, b1, b2, a2}: only the leaf
    edges carry flow, |a1| = |a2| = 1/4 at weight 1/4 each: 1/8.
    """
    h = pa.Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    t = pl.DataFrame(
        {"q": ["x", "x", "y", "y", "y", "y", "z", "z"], "s": ["a1", "a1", "a2", "b1", "b2", "a2", "b1", "b2"]}
    )
    con = registered()
    load_hierarchies(con, {"disease": h})
    con.register("t", t.to_arrow())
    rows = con.sql(
        "SELECT class.q, size, measure, satisfied "
        "FROM anon_t_closeness('t', ['q'], 's', t := 0.5, distance := 'hierarchical', hierarchy := 'disease')"
    ).fetchall()
    assert [r[:2] for r in rows] == [("x", 2), ("y", 4), ("z", 2)]
    assert [r[2] for r in rows] == pytest.approx([5 / 8, 1 / 8, 1 / 2])
    assert [r[3] for r in rows] == [False, True, True]


def test_anon_risk_matches_pa_risk() -> None:
    df = pl.DataFrame({"q": ["a", "a", "b", "c", "c", "c"], "r": ["1"] * 6})
    con = registered()
    con.register("t", df.to_arrow())
    row = con.sql("FROM anon_risk('t', ['q', 'r'], threshold := 0.4)").pl().row(0, named=True)
    want = pa.risk(df, ["q", "r"], threshold=0.4)
    assert row["n_rows"] == want["n_rows"] and row["n_classes"] == want["n_classes"]
    for key in ("highest", "lowest", "average", "records_at_risk"):
        assert row[key] == pytest.approx(want["prosecutor"][key])
    assert row["sample_uniques"] == pytest.approx(want["sample_uniques"])


@pytest.mark.parametrize(("model", "macro"), CASES, ids=[m for _, m in CASES])
def test_the_class_struct_holds_the_qids_alone_a_null_as_null(model, macro: str) -> None:
    """The class struct showed the macros' helper field beside the qids ({'q': None, '__anon_none': None}: the
    sentinel that keeps DuckDB's COLUMNS from matching nothing when it binds). It holds the qids alone, a null qid
    value as a NULL field, the classes pa.check and class_measures count (nulls included): four, by hand."""
    df = pl.DataFrame({"q": ["a", None, None, "a", "b"], "r": ["u", "v", "v", None, "u"], "s": list("xyxxy")})
    con = registered()
    con.register("t", df.to_arrow())
    got = con.sql("SELECT class FROM " + macro.replace("?", "'t'", 1).replace("?", "['q', 'r']", 1)).pl()
    assert got.schema["class"] == pl.Struct({"q": pl.String, "r": pl.String})
    classes = {(c["q"], c["r"]) for c in got["class"]}
    assert classes == {("a", "u"), (None, "v"), ("a", None), ("b", "u")}
    assert classes == set(class_measures(df, ["q", "r"], model).select("q", "r").rows())
    assert pa.check(df, ["q", "r"], [model])["n_classes"] == len(got) == 4


EMPTY = "check: the table has no rows; there is nothing to check"


@pytest.mark.parametrize(("model", "macro"), CASES, ids=[m for _, m in CASES])
def test_every_check_refuses_an_empty_table_in_the_same_words(model, macro: str) -> None:
    """An empty table has no class to vouch for: pa.check refused it, while the check macros returned no row (read
    as "no class violates") and class_measures raised NumPy's bare "zero-size array" ValueError. All refuse it
    now, in pa.check's words, as pa.risk and anon_risk refuse an empty table alike."""
    empty = pl.DataFrame({"q": ["a"], "s": ["x"]}).clear()
    for python in (lambda: pa.check(empty, ["q"], [model]), lambda: class_measures(empty, ["q"], model)):
        with pytest.raises(pa.InfeasibleError) as caught:
            python()
        assert str(caught.value) == EMPTY
    con = registered()
    con.register("t", empty.to_arrow())
    with pytest.raises(duckdb.Error) as refused:
        con.execute("FROM " + macro.replace("?", "'t'", 1).replace("?", "['q']", 1)).fetchall()
    assert str(refused.value).removeprefix("Invalid Input Error: ").splitlines()[0] == EMPTY
    con.register("t", pl.DataFrame({"q": ["a"], "s": ["x"]}).to_arrow())
    one_row = con.execute("FROM " + macro.replace("?", "'t'", 1).replace("?", "['q']", 1)).fetchall()
    assert [(c["q"], size) for c, size, *_ in one_row] == [("a", 1)]  # a table with a row is measured as before


def test_macros_refuse_like_python() -> None:
    con = registered()
    con.register("t", pl.DataFrame({"q": ["a"], "s": ["x"]}).to_arrow())
    with pytest.raises(duckdb.Error, match=r"privacy model attributes \['salary'\] not in table 't'"):
        con.execute("FROM anon_l_diversity('t', ['q'], 'salary')").fetchall()
    with pytest.raises(
        duckdb.Error, match=r"variant must be one of \['distinct', 'entropy', 'recursive'\], got 'mean'"
    ):
        con.execute("FROM anon_l_diversity('t', ['q'], 's', variant := 'mean')").fetchall()


def _sql_error(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    return str(info.value).removeprefix("Invalid Input Error: ")


def _python_error(df: pl.DataFrame, make) -> str:
    with pytest.raises(pa.AnonError) as info:
        class_measures(df, ["q"], make())
    return str(info.value)


H_AB = pa.Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})


@pytest.mark.parametrize(
    ("values", "make", "sql"),
    [
        (["a1", "b1"], lambda: TCloseness("s", t=0.2, distance="tree"), "distance := 'tree'"),  # type: ignore[arg-type]
        (["a1", "b1"], lambda: TCloseness("s", t=0.2, hierarchy=H_AB), "hierarchy := 'h'"),
        (
            ["a1", "b1"],
            lambda: TCloseness("s", t=0.2, distance="ordered", hierarchy=H_AB),
            "distance := 'ordered', hierarchy := 'h'",
        ),
        (
            ["a1", "A", "zz", "B"],
            lambda: TCloseness("s", t=0.2, distance="hierarchical", hierarchy=H_AB),
            "distance := 'hierarchical', hierarchy := 'h'",
        ),  # an inner node is no leaf; 'A' is the first in text order
        (
            ["a1", None],
            lambda: TCloseness("s", t=0.2, distance="hierarchical", hierarchy=H_AB),
            "distance := 'hierarchical', hierarchy := 'h'",
        ),
    ],
    ids=["unknown distance", "hierarchy with equal", "hierarchy with ordered", "not a leaf", "null"],
)
def test_t_closeness_refuses_with_pythons_words(values: list, make, sql: str) -> None:
    df = pl.DataFrame({"q": ["a"] * len(values), "s": values})
    con = registered()
    load_hierarchies(con, {"h": H_AB})
    con.register("t", df.to_arrow())
    expected = _python_error(df, make)
    for value in ("ignore", "value"):  # the null refusal's ways out: each road in its own syntax (messages.setting)
        expected = expected.replace(setting("sensitive_null", value, "python"), setting("sensitive_null", value, "sql"))
    assert _sql_error(con, f"FROM anon_t_closeness('t', ['q'], 's', {sql})") == expected


def test_t_closeness_refuses_a_hierarchy_not_loaded() -> None:
    """Also over an empty table, and by default under the sensitive column's name."""
    con = registered()
    load_hierarchies(con, {"h": H_AB})
    con.register("t", pl.DataFrame({"q": ["a"], "s": ["a1"]}).to_arrow())
    con.register("e", pl.DataFrame({"q": [], "s": []}, schema={"q": pl.String, "s": pl.String}).to_arrow())
    where = "t-closeness on 's': "
    assert _sql_error(
        con, "FROM anon_t_closeness('t', ['q'], 's', distance := 'hierarchical')"
    ) == HIERARCHY_NOT_LOADED(where=where, name="s")
    assert _sql_error(
        con, "FROM anon_t_closeness('e', ['q'], 's', distance := 'hierarchical', hierarchy := 'hh')"
    ) == HIERARCHY_NOT_LOADED(where=where, name="hh")
    assert CHOICE(name=f"{where}distance", allowed=["equal", "ordered", "hierarchical"], value="tree") == _sql_error(
        con, "FROM anon_t_closeness('t', ['q'], 's', distance := 'tree')"
    )
    assert _sql_error(con, "FROM anon_t_closeness('t', ['q'], 's', hierarchy := 'h')") == DISTANCE_PARAMETER(
        where=where, parameter="hierarchy", needs="hierarchical", distance="equal"
    )


def _sizes_con(df: pl.DataFrame) -> duckdb.DuckDBPyConnection:
    con = registered()
    con.register("t", df.to_arrow())
    return con


@pytest.mark.parametrize(
    ("macro", "qid"),
    [
        ("FROM anon_k_summary('t', ['size', 'g'], k := 2)", "size"),
        ("FROM anon_class_sizes('t', ['size', 'g'])", "size"),
        ("FROM anon_class_sizes('t', ['violates', 'g'])", "violates"),
        ("FROM anon_risk('t', ['size', 'g'])", "size"),
        ("FROM anon_risk('t', ['g', 'Count'])", "Count"),
        ("FROM anon_k_summary('t', ['g', '__anon_none'])", "__anon_none"),
    ],
)
def test_class_macros_refuse_a_qid_named_like_a_column_they_build(macro: str, qid: str) -> None:
    """review17 #1: a qid 'size' was read as the class size: a table with a unique row (classes 2 and 1) came out
    k-anonymous for k=2, (2, 5, 2, 12, 0, True); anon_risk's highest risk 0.2 for 1.0. Now one refusal names it."""
    df = pl.DataFrame(
        {"size": [5, 5, 7], "violates": [5, 5, 7], "Count": [1, 1, 2], "__anon_none": 1, "g": list("aab")}
    )
    df = df if qid == "__anon_none" else df.drop("__anon_none")  # another such column is refused first, by name
    said = _sql_error(_sizes_con(df), macro)
    assert re.fullmatch(BUILT_NAME.pattern(what="qid column", name=qid) + r"(\n.*)*", said, re.S), said
    assert f"({repr(list(RESERVED_NAMES))[:-1]}" in said  # the SQL list is Python's (and 'violates')
    if qid == "size":  # Python refuses it too (its names match with case: DuckDB's without)
        with pytest.raises(pa.InvalidParameterError, match="qid column 'size' is a name the anonymizer reserves"):
            pa.risk(df, ["g", qid]) if "risk" in macro else k_summary(df.lazy(), ["size", "g"], 2).collect()


def test_k_summary_takes_a_qid_named_violates_and_counts_by_hand() -> None:
    """Only anon_class_sizes builds 'violates': k_summary and risk read such a qid as any other (classes of 2 and 1)."""
    con = _sizes_con(pl.DataFrame({"violates": [5, 5, 7], "g": list("aab")}))
    assert con.execute("FROM anon_k_summary('t', ['violates', 'g'], k := 2)").fetchall() == [(2, 1, 2, 3, 1, False)]
    assert con.execute("SELECT highest, sample_uniques FROM anon_risk('t', ['violates', 'g'])").fetchall() == [
        (1.0, 1 / 3)
    ]


@pytest.mark.parametrize("qid", ["size", "count"])
def test_python_class_aggregates_refuse_a_reserved_qid_alike(qid: str) -> None:
    """class_size_histogram refused a qid 'size' with a Polars duplicate-column error where its siblings class_sizes
    and k_summary give refuse_reserved's message: all three now give that message, word for word."""
    lf = pl.LazyFrame({qid: [5, 5, 7], "g": list("aab")})
    with pytest.raises(pa.InvalidParameterError) as expected:
        refuse_reserved([qid, "g"], helpers=False)
    for aggregate in (pa.class_sizes, k_summary, pa.class_size_histogram):
        with pytest.raises(pa.InvalidParameterError) as got:
            aggregate(lf, [qid, "g"]).collect()
        assert str(got.value) == str(expected.value), aggregate.__name__


@pytest.mark.parametrize(
    ("sql", "make"),
    [
        ("anon_l_diversity('t', ['q'], 's', l := 'x')", lambda: LDiversity("s", l="x")),  # type: ignore[arg-type]
        (
            "anon_l_diversity('t', ['q'], 's', l := 'x', variant := 'entropy')",
            lambda: LDiversity("s", l="x", variant="entropy"),  # type: ignore[arg-type]
        ),
        ("anon_beta_likeness('t', ['q'], 's', beta := 'a')", lambda: BetaLikeness("s", beta="a")),  # type: ignore[arg-type]
        ("anon_t_closeness('t', ['q'], 's', t := [1])", lambda: TCloseness("s", t=[1])),  # type: ignore[arg-type]
        ("anon_delta_disclosure('t', ['q'], 's', delta := [1])", lambda: DeltaDisclosure("s", delta=[1])),  # type: ignore[arg-type]
    ],
    ids=["l text", "l text entropy", "beta text", "t list", "delta list"],
)
def test_a_parameter_of_another_type_is_refused_in_pythons_words(sql: str, make) -> None:
    """hunt42: l := 'x' and beta := 'a' were DuckDB's Binder Error ('Could not choose a best candidate function for
    the function call "*(STRING_LITERAL, DOUBLE)"'), t := [1] and delta := [1] too, while t := 'a' was refused."""
    df = pl.DataFrame({"q": ["a", "a"], "s": ["x", "y"]})
    con = registered()
    con.register("t", df.to_arrow())
    assert _sql_error(con, f"FROM {sql}") == _python_error(df, make)


def test_risk_refuses_a_threshold_list_as_python() -> None:
    """threshold := [1] was DuckDB's Binder Error; pa.risk's words (by hand: the interval [0, 1])."""
    con = registered()
    con.register("t", pl.DataFrame({"q": ["a"]}).to_arrow())
    said = _sql_error(con, "FROM anon_risk('t', ['q'], threshold := [1])")
    assert said == "risk: threshold must be a number in [0, 1], got [1]"
    with pytest.raises(pa.InvalidParameterError) as info:
        pa.risk(pl.DataFrame({"q": ["a"]}), ["q"], threshold=[1])  # type: ignore[arg-type]
    assert str(info.value) == said
