"""The SDC macros (sql/sdc.sql) on the inputs review17 found them answering wrongly: a user column standing in for a
built one, and weights the Python twins refuse (the refusals word for word as Python's, where the wording can be)."""

from __future__ import annotations

import re

import duckdb
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.errors import ColumnNotFoundError
from polars_anon.messages import BUILT_NAME, WEIGHT_NOT_NUMERIC, WEIGHTS_BELOW_COUNT
from tests.sql_connection import registered


def _con(**tables: pl.DataFrame) -> duckdb.DuckDBPyConnection:
    """The registered connection (tests/sql_connection.py), emptied, holding `tables` under their names."""
    con = registered()
    for name, df in tables.items():
        con.register(name, df.to_arrow())
    return con


def _sql_error(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    with pytest.raises(duckdb.Error) as info:
        con.sql(sql).fetchall()
    return str(info.value).removeprefix("Invalid Input Error: ").splitlines()[0]


def _python_error(call) -> str:
    with pytest.raises(pa.InvalidParameterError) as info:
        call()
    return str(info.value)


def test_a_column_named_like_a_helper_is_not_read_as_the_weight() -> None:
    """The macro's weight list was a column 'ws': a user's VARCHAR 'ws' gave Fk 15 and 9; by hand 10 + 30 and 5."""
    con = _con(s=pl.DataFrame({"k": ["x", "x", "y"], "w": [10.0, 30.0, 5.0], "ws": ["7", "8", "9"]}))
    assert con.sql("FROM anon_frequencies('s', ['k'], weight := 'w')").fetchall() == [("x", 2.0, 40.0), ("y", 1.0, 5.0)]


@pytest.mark.parametrize("values", [[1, 1, 2], ["a", "a", "b"]], ids=["integer", "text"])
@pytest.mark.parametrize("key", ["risk", "fk", "big_fk", "Fk", "__anon_k0"])
@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk", "anon_global_risk"])
def test_a_key_named_like_a_built_column_is_refused_by_name(key: str, macro: str, values: list) -> None:
    """A key 'risk' gave a global risk of 1.333 (above 1; Python 0.16368), keys 'fk' / 'big_fk' were read as fk / Fk;
    a text key 'fk' was DuckDB's Binder Error ('Cannot compare values of type DOUBLE and type VARCHAR': guides31). The
    hint is SQL's, not Python's ``lf.rename``."""
    con = _con(t=pl.DataFrame({key: values, "w": [10.0, 30.0, 5.0]}))
    said = _sql_error(con, f"FROM {macro}('t', ['{key}'], weight := 'w')")
    what = "column" if key.startswith("__anon_") else "key column"  # the helper prefix: refused as any column is
    assert re.fullmatch(BUILT_NAME.pattern(what=what, name=key), said), said
    assert said.endswith(f'e.g. SELECT * RENAME ("{key}" AS "{key[2:] if key.startswith("__") else key + "_"}")')


WEIGHTS = {  # the weight column and whether Python's check_weights refuses it by value (else by type)
    "negative": (pl.Series("w", [10.0, -3.0, 5.0]), True),
    "nan": (pl.Series("w", [10.0, float("nan"), 5.0]), True),
    "null": (pl.Series("w", [10.0, None, 5.0]), True),
    "zero-int": (pl.Series("w", [10, 0, 5]), True),
    "infinite": (pl.Series("w", [10.0, float("inf"), 5.0]), True),
    "text": (pl.Series("w", ["10", "30", "5"]), False),
    "boolean": (pl.Series("w", [True, False, True]), False),
}


@pytest.mark.parametrize("case", list(WEIGHTS), ids=list(WEIGHTS))
@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk", "anon_global_risk"])
def test_bad_weights_are_refused_as_python_refuses_them(case: str, macro: str) -> None:
    """NULL, NaN, negative weights, VARCHAR '10' and BOOLEAN false passed (false: Fk 0, risk 1.0)."""
    weights, by_value = WEIGHTS[case]
    df = pl.DataFrame({"k": [1, 1, 2]}).with_columns(weights)
    said = _sql_error(_con(t=df), f"FROM {macro}('t', ['k'], weight := 'w')")
    python = _python_error(lambda: pa.sdc.global_risk(df, ["k"], weight="w"))
    if by_value:
        assert said == python
    else:  # the type named as each engine names it
        assert re.fullmatch(WEIGHT_NOT_NUMERIC.pattern(weight="w"), said) and python.startswith(said.split(" got ")[0])


def test_weights_summing_below_the_record_count_are_refused() -> None:
    """Weights of 0.5 in a pattern of 2: Fk = 1 < fk = 2, refused by Python's risk_patterns (with the first pattern)."""
    df = pl.DataFrame({"k": [1, 1, 2], "w": [0.5, 0.5, 3.0]})
    said = _sql_error(_con(t=df), "FROM anon_global_risk('t', ['k'], weight := 'w')")
    assert re.fullmatch(WEIGHTS_BELOW_COUNT.pattern(where="", weight="w", n=1, first=""), said), said
    python = _python_error(lambda: pa.sdc.global_risk(df, ["k"], weight="w"))
    assert python == WEIGHTS_BELOW_COUNT(where="", weight="w", n=1, first="; first: (1,)")
    assert _con(t=df).sql("FROM anon_frequencies('t', ['k'])").fetchall() == [(1, 2.0, 2.0), (2, 1.0, 1.0)]


@pytest.mark.parametrize("weight", [None, "w"])
def test_the_global_risk_of_an_empty_table_is_refused_as_python(weight: str | None) -> None:
    """anon_global_risk returned (NULL, NULL, NULL, 0, 0); Python refuses: the risk of no rows is undefined."""
    df = pl.DataFrame({"k": [1], "w": [2.0]}).head(0)
    w = f", weight := '{weight}'" if weight else ""
    said = _sql_error(_con(t=df), f"FROM anon_global_risk('t', ['k']{w})")
    assert said == _python_error(lambda: pa.sdc.global_risk(df, ["k"], weight=weight))
    assert _con(t=df).sql(f"FROM anon_frequencies('t', ['k']{w})").fetchall() == []  # Python: no patterns either


@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk"])
def test_the_key_columns_come_in_the_order_of_keys_as_python_gives_them(macro: str) -> None:
    """Keys ['b', 'a'] of a table (a, b, w): the macros gave a, b (the table's order), sorted on a first; Python's
    pattern_frequencies gives b, a, sorted on b, then a, a missing value last. By hand: x/1 (Fk 3), x/2 (4),
    x/NULL (5), y/1 (2), each one record."""
    df = pl.DataFrame({"a": [1, 1, 2, None], "b": ["y", "x", "x", "x"], "w": [2.0, 3.0, 4.0, 5.0]})
    got = _con(t=df).sql(f"FROM {macro}('t', ['b', 'a'], weight := 'w')")
    assert got.columns[:4] == ["b", "a", "fk", "big_fk"]
    rows = [r[:4] for r in got.fetchall()]
    assert rows == [("x", 1, 1.0, 3.0), ("x", 2, 1.0, 4.0), ("x", None, 1.0, 5.0), ("y", 1, 1.0, 2.0)]
    python = pa.sdc.pattern_frequencies(df, ["b", "a"], weight="w")
    assert python.columns[:2] == ["b", "a"] and python.select("b", "a", "fk", "Fk").rows() == rows


@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk", "anon_global_risk"])
@pytest.mark.parametrize(
    ("keys", "python"),
    [
        ("[]", []),
        ("['k', 'k']", ["k", "k"]),
    ],
    ids=["empty", "twice"],
)
def test_keys_are_refused_in_pythons_words(macro: str, keys: str, python: list[str]) -> None:
    """Key variables are 'keys' in the SDC macros, as in Python's SDC functions (tidy31: they said 'qids ... name each
    quasi-identifier once' and 'qids is empty')."""
    df = pl.DataFrame({"k": ["x", "y"]})
    said = _sql_error(_con(t=df), f"FROM {macro}('t', {keys})")
    assert said == _python_error(lambda: pa.sdc.pattern_frequencies(df, python))


def test_a_missing_key_is_named_as_a_key() -> None:
    """A key that is no column: 'keys [...] not in table 't'', as Python says 'keys [...] not in the frame'."""
    df = pl.DataFrame({"k": ["x", "y"]})
    said = _sql_error(_con(t=df), "FROM anon_frequencies('t', ['nope'])")
    assert said == "keys ['nope'] not in table 't'; its columns are ['k']"
    with pytest.raises(ColumnNotFoundError, match=re.escape("keys ['nope'] not in the frame; its columns are ['k']")):
        pa.sdc.pattern_frequencies(df, ["nope"])


@pytest.mark.parametrize(
    ("fk", "big_fk", "at"),
    [(0, 5, "got fk = 0, Fk = 5"), (-1, 5, "got fk = -1, Fk = 5"), (3, 2, "got fk = 3, Fk = 2")],
    ids=["fk 0", "fk negative", "Fk below fk"],
)
def test_the_scalar_risk_refuses_the_counts_python_refuses(fk: int, big_fk: int, at: str) -> None:
    """hunt42: anon_sdc_risk(0, 5) gave -0.0, (-1, 5) 0.0909 and (3, 2) 0.333; benedetti_franconi refuses them (its
    message names the first pair, at its index)."""
    said = _sql_error(_con(), f"SELECT anon_sdc_risk({fk}, {big_fk})")
    words = "every fk must be > 0 and every Fk >= fk (weights below 1 are not allowed), "
    assert said == words + at
    python = _python_error(lambda: pa.sdc.benedetti_franconi([1, fk], [1, big_fk]))
    assert python == words + f"got fk[1] = {float(fk)!r}, Fk[1] = {float(big_fk)!r}"


def test_the_scalar_risk_refuses_what_is_not_a_finite_number_and_passes_null() -> None:
    """NaN and text are refused in benedetti_franconi's words; a NULL gives NULL (SQL's rule); a good pair keeps its
    value: fk = 3, Fk = 4: p = 0.75, p / (fk - 1 + p) = 0.75 / 2.75 = 3 / 11 (by hand)."""
    con = _con()
    assert _sql_error(con, "SELECT anon_sdc_risk(1, 'nan'::DOUBLE)") == "every Fk must be a finite number, got Fk = nan"
    assert _sql_error(con, "SELECT anon_sdc_risk('a', 2)") == "every fk must be a finite number, got fk = 'a'"
    got = con.sql("SELECT anon_sdc_risk(NULL, 2), anon_sdc_risk(fk, big) FROM (VALUES (3, 4.0)) v(fk, big)").fetchall()
    assert got == [(None, pytest.approx(3 / 11, rel=1e-15))]
    python = _python_error(lambda: pa.sdc.benedetti_franconi([1], [float("nan")]))
    assert python == "every Fk must be a finite number, got Fk[0] = nan"


@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk", "anon_global_risk"])
def test_a_weight_that_is_also_a_key_is_refused_as_python(macro: str) -> None:
    """hunt42: keys ['w'] with weight := 'w' gave a global risk of 0.503 (each weight its own pattern); Python
    refuses."""
    df = pl.DataFrame({"k": ["x", "x", "y"], "w": [10.0, 30.0, 5.0]})
    said = _sql_error(_con(t=df), f"FROM {macro}('t', ['k', 'w'], weight := 'w')")
    assert said == "weight column 'w' is also a key; pass it once"
    assert _python_error(lambda: pa.sdc.global_risk(df, ["k", "w"], weight="w")) == said


@pytest.mark.parametrize("macro", ["anon_frequencies", "anon_individual_risk", "anon_global_risk"])
@pytest.mark.parametrize(
    ("args", "said"),
    [
        ("'k'", "keys must be a list of column names, got 'k'"),
        ("[1]", "keys must be a list of column names, got [1]"),
        ("NULL", "keys must be a list of column names, got None"),
        ("['k'], weight := 3", "weight must be a column name, got 3"),
        ("['k'], weight := true", "weight must be a column name, got True"),
    ],
    ids=["keys text", "keys numbers", "keys null", "weight number", "weight boolean"],
)
def test_arguments_of_another_type_are_refused_naming_the_argument(macro: str, args: str, said: str) -> None:
    """hunt42: DuckDB's own errors ('Type VARCHAR with value 'k' can't be cast to the destination type "NULL"[]',
    'No function matches ... replace(INTEGER, ...)', 'Could not convert string 'k' to INT32'). Python takes a text as
    one key; SQL takes lists (the macros' one form); a weight given as a number is refused by Python in these words."""
    df = pl.DataFrame({"k": ["x", "x", "y"], "w": [10.0, 30.0, 5.0]})
    assert _sql_error(_con(t=df), f"FROM {macro}('t', {args})") == said
    if "weight" in args:
        weight = 3 if "3" in args else True
        assert _python_error(lambda: pa.sdc.global_risk(df, ["k"], weight=weight)) == said  # type: ignore[arg-type]
