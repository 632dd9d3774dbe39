"""Every SQL macro answers an argument of the wrong kind with one message naming it, never DuckDB's own error.

A table argument that is not text, a names list that is not a list of text, a column name of another type or naming
no column, and a choice of another type were DuckDB's Binder, Conversion or Catalog Errors, quoting the macros'
internals (``list_contains(T[], T)``, ``COLUMNS(list_filter(...))``, ``Cannot use NULL as function argument``).
Each case below failed on main before the fix (commit message of this file). One tiny table, one connection.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from polars_anon.duckdb import load_hierarchies, register
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_IB

T = pl.DataFrame({"x": [1, 1, 2], "y": ["a", "b", "b"], "w": [1.0, 2.0, 3.0]})

# macro -> (its arguments in order, valid, as SQL; the leading ones are positional until one is named)
MACROS: dict[str, list[tuple[str, str]]] = {
    "anon_class_sizes": [("tbl", "'t'"), ("qids", "['x']")],
    "anon_k_summary": [("tbl", "'t'"), ("qids", "['x']")],
    "anon_risk": [("tbl", "'t'"), ("qids", "['x']")],
    "anon_sensitive_counts": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'")],
    "anon_class_shares": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'"), ("sensitive_null", "'value'")],
    "anon_l_diversity": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'"), ("variant", "'distinct'")],
    "anon_t_closeness": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'"), ("distance", "'equal'")],
    "anon_delta_disclosure": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'"), ("sensitive_null", "'error'")],
    "anon_beta_likeness": [("tbl", "'t'"), ("qids", "['x']"), ("sensitive", "'y'"), ("variant", "'basic'")],
    "anon_frequencies": [("tbl", "'t'"), ("keys", "['x']"), ("weight", "'w'")],
    "anon_encode_classes": [("anon", "'a'"), ("qids", "['gender']"), ("representation", "'oneclass'")],
    "anon_metric_pairs": [
        ("orig", "'o'"),
        ("anon", "'a'"),
        ("qids", "['gender']"),
        ("key", "'id'"),
        ("sensitive", "'race'"),
    ],
    "anon_ncp": [("orig", "'o'"), ("anon", "'a'"), ("qids", "['gender']"), ("key", "'id'")],
}
POSITIONAL = {"tbl", "qids", "orig", "anon", "sensitive", "keys"}
TABLES = {"tbl", "anon", "orig"}
NAMES = {"qids", "keys"}
NAME = {"sensitive", "key", "weight"}
CHOICES = {
    "sensitive_null": "['error', 'value', 'ignore']",
    "variant": None,  # the model's own list, named in its message
    "distance": "['equal', 'ordered', 'hierarchical']",
    "representation": "['proportional', 'fillparent', 'fillchild', 'oneclass', 'setbinary']",
}


def _wrong(arg: str) -> list[tuple[str, str]]:
    """(wrong value as SQL, a piece of the message it must get) for argument `arg`."""
    if arg in TABLES:
        return [
            (v, f"{arg} must be the name of a table or view, got {shown}")
            for v, shown in (("3", "3"), ("NULL", "None"), ("['t']", "[t]"))
        ]
    if arg in NAMES:
        return [
            (v, f"{arg} must be a list of column names, got {shown}")
            for v, shown in (("'x'", "'x'"), ("3", "3"), ("[1]", "[1]"))
        ]
    if arg in NAME:
        return [
            ("3", f"{arg} must be a column name, got 3"),
            ("['y']", f"{arg} must be a column name, got [y]"),
            ("'zz'", "['zz'] not in table"),
        ]
    return [("3", f"{arg} must be one of {CHOICES[arg] or '['}")]


CASES = [
    pytest.param(macro, i, value, expected, id=f"{macro}-{arg}-{value}")
    for macro, args in MACROS.items()
    for i, (arg, _) in enumerate(args)
    for value, expected in _wrong(arg)
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    register(c)
    load_hierarchies(c, ANIMAL_HIERARCHIES)
    for name, frame in {"t": T, "o": TABLE_I, "a": TABLE_IB}.items():
        c.register(f"{name}_frame", frame.to_arrow())
        c.execute(f"CREATE TABLE {name} AS FROM {name}_frame")
    return c


def _call(macro: str, i: int, value: str) -> str:
    """``FROM macro(...)`` with argument i replaced by `value`."""
    parts, positional = [], True
    for j, (arg, valid) in enumerate(MACROS[macro]):
        positional = positional and arg in POSITIONAL
        v = value if j == i else valid
        parts.append(v if positional else f"{arg} := {v}")
    return f"FROM {macro}({', '.join(parts)})"


@pytest.mark.parametrize(("macro", "i", "value", "expected"), CASES)
def test_a_wrong_argument_is_named(
    con: duckdb.DuckDBPyConnection, macro: str, i: int, value: str, expected: str
) -> None:
    with pytest.raises(duckdb.InvalidInputException) as caught:
        con.execute(_call(macro, i, value)).fetchall()
    message = str(caught.value)
    assert expected in message, message
    assert "\n" not in message.strip(), message  # one line: no LINE 1 / caret of a binder error


@pytest.mark.parametrize("macro", list(MACROS))
def test_valid_arguments_still_answer(con: duckdb.DuckDBPyConnection, macro: str) -> None:
    con.execute(_call(macro, -1, "")).fetchall()


@pytest.mark.parametrize("case", ["lowercase", "uppercase"])
def test_macros_registered_under_any_identifier_case(case: str) -> None:
    """Registered under ``preserve_identifier_case = 'uppercase'``, every table macro failed with DuckDB's Binder
    Error (``Column "__ANON_NONE" in EXCLUDE list not found``): register reads the files under DuckDB's default and
    puts the connection's setting back."""
    c = duckdb.connect()
    c.execute(f"SET preserve_identifier_case = '{case}'")
    register(c)
    assert c.execute("SELECT current_setting('preserve_identifier_case')").fetchone() == (case,)
    c.execute('CREATE TABLE s AS SELECT * FROM (VALUES (1, 2), (1, 3)) v("Sex", "Id")')
    assert c.execute("FROM anon_class_sizes('s', ['Sex'])").fetchall() == [(1, 2, False)]
    assert c.execute("SELECT n_rows FROM anon_global_risk('s', ['Sex'])").fetchall() == [(2,)]
    assert c.execute("SELECT size FROM anon_l_diversity('s', ['Sex'], 'Id')").fetchall() == [(2,)]
