"""Bad input through the SQL macros and through Python: the same refusal, word for word (issue 27).

Each case is one bad input, written once as a Python call (the model built, then ``pa.check`` /
``k_summary``) and once as a macro call; both must refuse, with the same message (Python says
"the frame" where SQL says "table 't'"), and a good input must be accepted by both. The rules
live in one place per refusal: the templates of ``polars_anon/messages.py`` (generated into
``sql/_messages.sql``) and the checks of ``polars_anon/privacy/base.py`` and
``polars_anon/_validate.py`` with their SQL twins in ``sql/_validate.sql``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.classes import k_summary
from polars_anon.duckdb import register
from polars_anon.errors import AnonError
from polars_anon.privacy import BetaLikeness, DeltaDisclosure, LDiversity, TCloseness
from tests.sql_connection import registered

T = pl.DataFrame({"q": ["a", "a", "b", "b"], "s": ["x", "y", "x", "x"]})


def _check(model: Callable[[], Any], qids: list[Any]) -> Callable[[], Any]:
    return lambda: pa.check(T, qids, [model()])


CASES: list[tuple[str, Callable[[], Any], str]] = [
    # (id, the Python call, the macro call on table t)
    ("l-zero", _check(lambda: LDiversity("s", l=0), ["q"]), "FROM anon_l_diversity('t', ['q'], 's', l := 0)"),
    ("l-fraction", _check(lambda: LDiversity("s", l=1.5), ["q"]), "FROM anon_l_diversity('t', ['q'], 's', l := 1.5)"),
    (
        "l-variant",
        _check(lambda: LDiversity("s", l=2, variant="x"), ["q"]),  # type: ignore[arg-type]
        "FROM anon_l_diversity('t', ['q'], 's', variant := 'x')",
    ),
    (
        "l-recursive-without-c",
        _check(lambda: LDiversity("s", l=2, variant="recursive"), ["q"]),
        "FROM anon_l_diversity('t', ['q'], 's', l := 2, variant := 'recursive')",
    ),
    (
        "l-c-without-recursive",
        _check(lambda: LDiversity("s", l=2, c=0.5), ["q"]),
        "FROM anon_l_diversity('t', ['q'], 's', l := 2, c := 0.5)",
    ),
    (
        "l-c-with-entropy",
        _check(lambda: LDiversity("s", l=2, variant="entropy", c=3), ["q"]),
        "FROM anon_l_diversity('t', ['q'], 's', l := 2, variant := 'entropy', c := 3)",
    ),
    (
        "l-recursive-c-zero",
        _check(lambda: LDiversity("s", l=2, variant="recursive", c=0), ["q"]),
        "FROM anon_l_diversity('t', ['q'], 's', l := 2, variant := 'recursive', c := 0)",
    ),
    ("l-on-a-qid", _check(lambda: LDiversity("q", l=2), ["q"]), "FROM anon_l_diversity('t', ['q'], 'q', l := 2)"),
    ("l-not-a-column", _check(lambda: LDiversity("z", l=2), ["q"]), "FROM anon_l_diversity('t', ['q'], 'z', l := 2)"),
    ("t-above-one", _check(lambda: TCloseness("s", t=2), ["q"]), "FROM anon_t_closeness('t', ['q'], 's', t := 2)"),
    ("t-negative", _check(lambda: TCloseness("s", t=-0.5), ["q"]), "FROM anon_t_closeness('t', ['q'], 's', t := -0.5)"),
    ("t-on-a-qid", _check(lambda: TCloseness("q", t=0.5), ["q"]), "FROM anon_t_closeness('t', ['q'], 'q', t := 0.5)"),
    (
        "delta-zero",
        _check(lambda: DeltaDisclosure("s", delta=0), ["q"]),
        "FROM anon_delta_disclosure('t', ['q'], 's', delta := 0)",
    ),
    (
        "beta-zero",
        _check(lambda: BetaLikeness("s", beta=0), ["q"]),
        "FROM anon_beta_likeness('t', ['q'], 's', beta := 0)",
    ),
    (
        "beta-variant",
        _check(lambda: BetaLikeness("s", beta=1, variant="x"), ["q"]),  # type: ignore[arg-type]
        "FROM anon_beta_likeness('t', ['q'], 's', variant := 'x')",
    ),
    (
        "model-qids-twice",
        _check(lambda: LDiversity("s", l=2), ["q", "q"]),
        "FROM anon_l_diversity('t', ['q', 'q'], 's')",
    ),
    ("k-summary-qids-twice", lambda: k_summary(T.lazy(), ["q", "q"]).collect(), "FROM anon_k_summary('t', ['q', 'q'])"),
    ("k-summary-null-qid", lambda: k_summary(T.lazy(), [None]).collect(), "FROM anon_k_summary('t', [NULL])"),  # type: ignore[list-item]
    ("k-summary-no-qids", lambda: k_summary(T.lazy(), []).collect(), "FROM anon_k_summary('t', []::VARCHAR[])"),
    ("risk-threshold-above-one", lambda: pa.risk(T, ["q"], threshold=2), "FROM anon_risk('t', ['q'], threshold := 2)"),
    ("risk-empty-table", lambda: pa.risk(T.head(0), ["q"]), "FROM anon_risk('empty', ['q'])"),
    ("risk-qids-twice", lambda: pa.risk(T, ["q", "q"]), "FROM anon_risk('t', ['q', 'q'])"),
    ("k-summary-k-zero", lambda: k_summary(T.lazy(), ["q"], 0).collect(), "FROM anon_k_summary('t', ['q'], k := 0)"),
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    register(c)
    c.register("t", T.to_arrow())
    c.register("empty", T.head(0).to_arrow())
    return c


@pytest.mark.parametrize(("python", "sql"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_sql_refuses_what_python_refuses_in_the_same_words(
    python: Callable[[], Any], sql: str, con: duckdb.DuckDBPyConnection
) -> None:
    with pytest.raises(AnonError) as caught:
        python()
    with pytest.raises(duckdb.Error) as refused:
        con.execute(sql).fetchall()
    said = str(refused.value).removeprefix("Invalid Input Error: ").splitlines()[0]
    assert said == str(caught.value).replace("the frame", "table 't'")


@pytest.mark.parametrize(
    ("python", "sql"),
    [
        (_check(lambda: LDiversity("s", l=2.0), ["q"]), "FROM anon_l_diversity('t', ['q'], 's', l := 2.0)"),
        (_check(lambda: TCloseness("s", t=1), ["q"]), "FROM anon_t_closeness('t', ['q'], 's', t := 1)"),
        (
            _check(lambda: LDiversity("s", l=1.5, variant="entropy"), ["q"]),
            "FROM anon_l_diversity('t', ['q'], 's', l := 1.5, variant := 'entropy')",
        ),
        (
            _check(lambda: LDiversity("s", l=2, variant="recursive", c=3), ["q"]),
            "FROM anon_l_diversity('t', ['q'], 's', l := 2, variant := 'recursive', c := 3)",
        ),
    ],
    ids=["l-whole-float", "t-one", "entropy-l-fraction", "recursive-with-c"],
)
def test_both_accept_the_edges(python: Callable[[], Any], sql: str, con: duckdb.DuckDBPyConnection) -> None:
    python()
    assert con.execute(sql).fetchall()


NAMED = pl.DataFrame({"size": ["a", "a", "b"], "__anon_none": ["a", "a", "b"], "count": list("xyx"), "s": list("xyx")})


@pytest.mark.parametrize(
    ("qids", "sensitive", "macro"),
    [
        (["size"], "s", "anon_l_diversity"),
        (["__anon_none"], "s", "anon_t_closeness"),
        (["s"], "count", "anon_delta_disclosure"),
        (["size"], "s", "anon_beta_likeness"),
    ],
)
def test_a_privacy_macro_refuses_a_reserved_name_as_pa_check(qids: list[str], sensitive: str, macro: str) -> None:
    """review17 #1/#11: the class struct holds an '__anon_none' field beside the qids; a qid of that name, or one named
    like the counts' columns, is refused in pa.check's words (it was read: a struct with the name twice)."""
    con = registered()
    named = NAMED if "__anon_none" in qids else NAMED.drop("__anon_none")  # any other such column: refused first
    con.register("named", named.to_arrow())
    with pytest.raises(AnonError) as caught:
        pa.check(named, qids, [LDiversity(sensitive, l=1)])
    with pytest.raises(duckdb.Error) as refused:
        con.execute(f"FROM {macro}('named', {qids!r}, '{sensitive}')").fetchall()
    said = str(refused.value).removeprefix("Invalid Input Error: ").splitlines()[0]
    if "__anon_none" in qids:  # the helper prefix: refused as any column of the table is, before the qids' roles
        assert said.startswith("column '__anon_none' is a name the SQL macros use for their helper columns")
    else:  # the same words, the hint each language's own (SQL: SELECT * RENAME, Python: lf.rename)
        name = said.split("'")[1]
        assert said.split(" e.g. ") == [
            str(caught.value).split(" e.g. ")[0],
            f'SELECT * RENAME ("{name}" AS "{name}_")',
        ]
        assert str(caught.value).endswith(f"e.g. lf.rename({{{name!r}: '{name}_'}})")


@pytest.mark.parametrize("name", ["size", "count"])
@pytest.mark.parametrize("values", [["a", "a", "b"], [1, 1, 2]], ids=["text", "integer"])
def test_anon_k_summary_refuses_a_reserved_qid_name_as_pa_k_summary(name: str, values: list[Any]) -> None:
    """mend49 (hunt47 t24): a text qid named 'size' gave anon_k_summary a raw BinderException (COALESCE of VARCHAR
    and INTEGER: the user's column and the macro's count shared the name) where anon_class_sizes and pa.k_summary
    refuse the name; now the same refusal, in pa.k_summary's words (the hint each language's own)."""
    con = registered()
    con.register("named", pl.DataFrame({name: values, "o": [1, 2, 3]}).to_arrow())
    with pytest.raises(AnonError) as caught:
        k_summary(pl.LazyFrame({name: values}), [name], 2).collect()
    with pytest.raises(duckdb.Error) as refused:
        con.sql(f"FROM anon_k_summary('named', ['{name}'], k := 2)").fetchall()
    said = str(refused.value).removeprefix("Invalid Input Error: ").splitlines()[0]
    assert said.split(" (")[0] == str(caught.value).split(" (")[0]  # the lists differ: SQL adds its helper prefix


HELPER_NAMED = [  # (macro call on table h, whose extra column is named like a macro's helper column)
    "FROM anon_frequencies('h', ['k'], weight := 'w')",  # review18: '__anon_w' was read as the weights (Fk 200)
    "FROM anon_global_risk('h', ['k'], weight := 'w')",
    "FROM anon_class_sizes('h', ['k'])",  # '__anon_none' split the classes ('a' twice, size 1)
    "FROM anon_k_summary('h', ['k'], k := 2)",
    "FROM anon_l_diversity('h', ['k'], 's', l := 2)",
    "FROM anon_risk('h', ['k'])",
]


@pytest.mark.parametrize("helper", ["__anon_w", "__anon_none", "__ANON_x"])
@pytest.mark.parametrize("call", HELPER_NAMED)
def test_a_column_named_like_a_helper_column_is_refused_by_name(helper: str, call: str) -> None:
    """Any column of the table (not only a qid or key) named with the macros' helper prefix: one message naming it,
    where a '__anon_w' was silently read as the weights and a '__anon_none' split the classes."""
    con = registered()
    rows = "('a', 'x', 5.0, 'u'), ('a', 'y', 5.0, 'v'), ('b', 'x', 50.0, 'u'), ('b', 'y', 50.0, 'v')"
    con.execute(f'CREATE TABLE h AS SELECT * FROM (VALUES {rows}) t(k, s, w, "{helper}")')
    with pytest.raises(duckdb.Error) as info:
        con.execute(call).fetchall()
    assert f"column '{helper}' is a name the SQL macros use for their helper columns" in str(info.value)
    con.execute(f'ALTER TABLE h RENAME COLUMN "{helper}" TO extra')
    assert con.execute(call).fetchall()  # the same table with the column renamed is read
