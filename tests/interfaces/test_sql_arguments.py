"""Every SQL macro refuses an argument of another type in one line naming the macro, the argument and the type.

The cases are generated from the registration: each macro of the public SQL files (and anon_metric) must have its
arguments' kinds in polars_anon.duckdb.arguments.ARGUMENTS (or be a helper), and each argument of a checked kind is
given a value of another type. Before the checks, DuckDB answered with its own Binder or Conversion error quoting the
macro's text (anon_k_summary('t', 'q'): 'Invalid LIST argument during lambda function binding').
"""

from __future__ import annotations

import re

import duckdb
import pytest

import polars_anon as pa
from polars_anon.duckdb import load_hierarchies, metric_pairs, register, sql_files
from polars_anon.duckdb.arguments import ARGUMENTS, HELPERS, KINDS, signatures, sql_text, wrapped
from polars_anon.messages import ARGUMENT_TYPE

GOOD = {
    "table": "'t'",
    "table_or_null": "NULL",
    "columns": "['q']",
    "column": "'s'",
    "hierarchy": "'q'",
    "text": "NULL",
    "choice": "NULL",
    "metric": "'ncp'",
    "integer_or_null": "NULL",
    "integers": "[]",
    "checked": "1",
    "value": "'a'",
}
"""A value of each kind (a checked argument without a default: 1, as anon_generalize's level and anon_sdc_risk's
counts take)."""
WRONG = {
    "table": ["1", "['t']", "NULL"],
    "table_or_null": ["1"],
    "columns": ["'q'", "[1]", "NULL", "3"],
    "column": ["3", "['s']", "true"],
    "hierarchy": ["3"],
    "text": ["3"],
    "choice": ["3", "[1]"],
    "metric": ["3", "'nope'"],
    "integer_or_null": ["'x'", "1.5", "[1]"],
    "integers": ["['x']", "'x'", "3"],
}
"""Values of other types, as SQL literals, for each kind the wrappers check."""
SHOWN = {"1": 1, "['t']": ["t"], "NULL": None, "'q'": "q", "[1]": [1], "3": 3, "['s']": ["s"], "true": True}
SHOWN |= {"'x'": "x", "1.5": 1.5, "['x']": ["x"], "'nope'": "nope"}


def _public() -> set[str]:
    """The macros a user calls: those of the public SQL files, but their typed bodies, and anon_metric."""
    names = {"anon_metric"}
    for file, text in sql_files():
        if not file.startswith("_"):
            names |= set(re.findall(r"CREATE OR REPLACE TEMP MACRO (anon_\w+)\(", text))
    return {n.removesuffix("_typed") for n in names} - HELPERS


def _table_macros() -> dict[str, bool]:
    """Whether each registered macro is a table macro (from DuckDB's catalogue)."""
    with duckdb.connect() as c:
        register(c)
        rows = c.execute("SELECT function_name, function_type FROM duckdb_functions() WHERE function_name LIKE 'anon%'")
        return {name: kind == "table_macro" for name, kind in rows.fetchall()}


TABLE_MACROS = _table_macros()


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    names = register(c)
    assert _public() <= set(names)
    load_hierarchies(c, {"q": pa.Hierarchy.suppression(["a", "b"])})
    c.execute(  # every macro's table: qid q, sensitive s, weight w; Mondrian's tuples (t, size) and coordinates
        "CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'x', 1.0, 0, 1, 0, 0, 0.0), ('b', 'y', 2.0, 1, 1, 0, 1, 1.0))"
        " v(q, s, w, t, size, dim, x, v)"
    )
    metric_pairs(c, "t", "t", ["q"], name="pr")  # the pairs table of the anon_*_of macros, and its companions
    return c


def _call(macro: str, wrong: tuple[str, str] | None = None) -> str:
    """The SQL calling `macro` with a value of each argument's kind (a default where there is one), `wrong` =
    (argument, value) in its place."""
    sig, kinds, args = signatures().get(macro), ARGUMENTS[macro], []
    defaults = dict(sig.parameters) if sig else {}
    for name, kind in kinds.items():
        if wrong and wrong[0] == name:
            value = wrong[1]
        elif defaults.get(name) is None:
            value = "'pr'" if name == "pairs" else GOOD[kind]
        else:
            continue  # its default
        args.append(value if defaults.get(name) is None else f"{name} := {value}")
    call = f"{macro}({', '.join(args)})"
    return f"FROM {call}" if TABLE_MACROS[macro] else f"SELECT {call}"


def _cases() -> list[tuple[str, str, str, str]]:
    return [
        (m, arg, kind, value)
        for m in sorted(ARGUMENTS)
        for arg, kind in ARGUMENTS[m].items()
        for value in WRONG.get(kind, [])
    ]


def test_every_public_macro_has_its_arguments_kinds() -> None:
    """A new macro of a public file fails here until its arguments are in ARGUMENTS (or it is a helper)."""
    assert _public() == set(ARGUMENTS)
    for macro, kinds in ARGUMENTS.items():
        assert set(kinds.values()) <= set(KINDS), macro
        if wrapped(macro):
            assert [n for n, _ in signatures()[macro].parameters] == list(kinds), macro


def test_the_arguments_file_is_generated_from_the_table() -> None:
    """sql/_arguments.sql is polars_anon.duckdb.arguments.sql_text(); regenerate with arguments.write_sql()."""
    assert dict(sql_files())["_arguments.sql"] == sql_text()


@pytest.mark.parametrize(("macro", "argument", "kind", "value"), _cases(), ids=lambda x: str(x))
def test_an_argument_of_another_type_is_refused_naming_the_macro_and_the_argument(
    con: duckdb.DuckDBPyConnection, macro: str, argument: str, kind: str, value: str
) -> None:
    with pytest.raises(duckdb.InvalidInputException) as info:
        con.execute(_call(macro, (argument, value))).fetchall()
    said = str(info.value).removeprefix("Invalid Input Error: ").split("\n")[0]
    if "'" in value and "[" in value:  # a list of text shows as DuckDB writes it, [t]
        assert re.fullmatch(ARGUMENT_TYPE.pattern(macro=macro, argument=argument, expected=KINDS[kind].expected), said)
    else:
        assert said == ARGUMENT_TYPE(macro=macro, argument=argument, expected=KINDS[kind].expected, value=SHOWN[value])


@pytest.mark.parametrize(
    ("macro", "argument"), [(m, a) for m in sorted(ARGUMENTS) for a, k in ARGUMENTS[m].items() if k == "checked"]
)
def test_a_checked_argument_of_another_type_is_refused_by_the_macro(
    con: duckdb.DuckDBPyConnection, macro: str, argument: str
) -> None:
    """An argument the macro checks itself (k, l, t, a variant) is refused in its Python twin's words: a list is no
    number, no integer and no choice."""
    with pytest.raises(duckdb.InvalidInputException):
        con.execute(_call(macro, (argument, "[1]"))).fetchall()
