"""The types of the SQL macros' arguments, in one table, and the checks generated from it (``sql/_arguments.sql``).

A macro given an argument of another type (``anon_k_summary('t', 'q')``, a text where a list of column names is due)
failed with DuckDB's own Binder or Conversion error, quoting the macro's text. Each macro of :data:`ARGUMENTS` whose
arguments have a checked kind is now a generated wrapper: its body is ``<macro>_typed`` in ``sql/*.sql``, and the
wrapper refuses the first argument of another type in one line naming the macro, the argument and the type
(:data:`polars_anon.messages.ARGUMENT_TYPE`), then hands the body every argument cast to its type, so the body binds.

The refusal is made while DuckDB binds the query, so nothing is read first: the check is the text of a ``query()``
in a scalar subquery (``WHERE`` of a table macro, ``CASE WHEN`` of a scalar one), which DuckDB reads when it binds;
a table-name argument also carries its own check (DuckDB looks the table up when it binds the body, before the
``WHERE``). The body gets an argument of another type as NULL (a list as []), so that it binds. Planning cost per call
(CPU, 20 calls): anon_k_summary 15 -> 19 ms, anon_ncp 58 -> 73, anon_l_diversity 62 -> 83, anon_global_risk 45 -> 50,
anon_generalize unchanged (the check copied into every use of a table name, with the message's full repr: 2 to 6
times). Regenerate the file with
``python -c 'import polars_anon.duckdb.arguments as a; a.write_sql()'`` (a test keeps it current).

>>> ARGUMENTS["anon_k_summary"]
{'tbl': 'table', 'qids': 'columns', 'k': 'checked'}
>>> KINDS["columns"].expected
'a list of column names'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from polars_anon.messages import ARGUMENT_TYPE
from polars_anon.metrics.registry import METRICS
from polars_anon.quoting import duckdb_literal

__all__ = ["ARGUMENTS", "HELPERS", "KINDS", "Kind", "Signature", "signatures", "sql_text", "write_sql"]

_TEXT = "typeof({x}) IN ('VARCHAR', '\"NULL\"')"


@dataclass(frozen=True)
class Kind:
    """What an argument takes: `expected` (the message's words), `test` (SQL true when the argument ``{x}`` has the
    kind), `cast` (the SQL type the body reads it as; None: the body takes it as given and checks it itself) and
    `gate` (the body names a table function's input with it, which DuckDB reads when it binds the query: the check
    rides on it)."""

    expected: str
    test: str = "true"
    cast: str | None = None
    gate: bool = False


KINDS: dict[str, Kind] = {
    "table": Kind("a table or view name", "typeof({x}) = 'VARCHAR' AND {x} IS NOT NULL", "VARCHAR", gate=True),
    "table_or_null": Kind("a table or view name or NULL", _TEXT, "VARCHAR", gate=True),
    "metric": Kind(
        "the name of a metric of polars_anon.metrics.METRICS",
        "typeof({x}) = 'VARCHAR' AND coalesce(list_contains(["
        + ", ".join(f"'{m}'" for m in sorted(METRICS))
        + "], TRY_CAST({x} AS VARCHAR)), false)",
        "VARCHAR",
        gate=True,
    ),
    "columns": Kind(
        "a list of column names", "typeof({x}) IN ('VARCHAR[]', '\"NULL\"[]') AND {x} IS NOT NULL", "VARCHAR[]"
    ),
    "column": Kind("a column name or NULL", _TEXT, "VARCHAR"),
    "hierarchy": Kind("a hierarchy name", _TEXT, "VARCHAR"),
    "text": Kind("a text or NULL", _TEXT, "VARCHAR"),
    "choice": Kind("a text (one of its choices)", _TEXT, "VARCHAR"),
    "integer_or_null": Kind("an integer or NULL", "{x} IS NULL OR anon_is_integer({x})", "BIGINT"),
    "integers": Kind(
        "a list of integers",
        "regexp_full_match(typeof({x}), '(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|\"NULL\")\\[\\]')"
        " AND {x} IS NOT NULL",
        "BIGINT[]",
    ),
    "checked": Kind("(checked by the macro, in Python's words)"),
    "value": Kind("any value"),
}
"""Each kind of argument. ``checked``: the macro refuses a value of another type itself, in its Python twin's words
(k, l, t); ``choice``: a text the macro checks against its choices (a variant); ``value``: any type is a value
(``anon_generalize``'s v)."""

_TABLE_QIDS = {"tbl": "table", "qids": "columns"}
_MODEL = {**_TABLE_QIDS, "sensitive": "column"}
_PAIRS = {"pairs": "table", "qids": "columns"}
_DIRECT = {"orig": "table", "anon": "table", "qids": "columns", "key": "column", "sensitive": "column"}
_SDC = {"tbl": "table", "keys": "columns", "weight": "column"}

ARGUMENTS: dict[str, dict[str, str]] = {
    "anon_class_sizes": {**_TABLE_QIDS, "k": "checked"},
    "anon_k_summary": {**_TABLE_QIDS, "k": "checked"},
    "anon_encode_classes": {"anon": "table", "qids": "columns", "representation": "choice", "orig": "table_or_null"},
    "anon_generalize": {"h": "hierarchy", "v": "value", "lvl": "checked"},
    "anon_level_map": {"h": "hierarchy", "lvl": "checked"},
    "anon_mondrian": {
        "coords_tbl": "table",
        "tuples_tbl": "table",
        "k": "checked",
        "split": "choice",
        "count_dims": "integers",
    },
    "anon_sensitive_counts": _MODEL,
    "anon_class_shares": {**_MODEL, "sensitive_null": "choice", "model": "text"},
    "anon_l_diversity": {**_MODEL, "l": "checked", "variant": "choice", "c": "checked", "sensitive_null": "choice"},
    "anon_t_closeness": {
        **_MODEL,
        "t": "checked",
        "distance": "choice",
        "hierarchy": "hierarchy",
        "sensitive_null": "choice",
    },
    "anon_delta_disclosure": {**_MODEL, "delta": "checked", "sensitive_null": "choice"},
    "anon_beta_likeness": {**_MODEL, "beta": "checked", "variant": "choice", "sensitive_null": "choice"},
    "anon_risk": {**_TABLE_QIDS, "threshold": "checked"},
    "anon_sdc_risk": {"fk": "checked", "big_fk": "checked"},
    "anon_frequencies": _SDC,
    "anon_individual_risk": _SDC,
    "anon_global_risk": _SDC,
    "anon_metric_pairs": _DIRECT,
    "anon_metric_cells_of": _PAIRS,
    "anon_metric_classes_of": _PAIRS,
    "anon_metric_joint_of": _PAIRS,
    "anon_metric": {"metric": "metric", **_DIRECT, "k": "integer_or_null"},
    **{m.sql + "_of": {**_PAIRS, "k": "integer_or_null"} for m in METRICS.values()},
    **{m.sql: {**_DIRECT, "k": "integer_or_null"} for m in METRICS.values()},
}
"""Every macro a user calls: argument -> kind (:data:`KINDS`), in the macro's order. Both forms of every metric of
:data:`polars_anon.metrics.METRICS` are here by construction."""

HELPERS: frozenset[str] = frozenset(
    {
        "anon_check_level",  # generalize_sql's check, written with checked integers
        "anon_metric_nodes",  # the metric macros' node facts, over their own qids
        "anon_metric_refuse",
        "anon_metric_edge_cost_of",
        "anon_metric_levels_of",
        "anon_metric_pairwise_of",
        "anon_check_model_table",  # the privacy macros' checks
        "anon_check_closeness",
        "anon_sdc_risk_of",  # the SDC macros' formula and checks, over their own counts
        "anon_exact_sum",
        "anon_check_weight",
        "anon_check_keys",
        "anon_check_sdc_keys",
        "anon_weight_bad",
        "anon_keys_first",
        "anon_frequencies_of",
    }
)
"""The macros of the public files (``sql/[!_]*.sql``) that only other macros call, with arguments they checked."""


@dataclass(frozen=True)
class Signature:
    """A macro's parameters as its body declares them: (name, default text or None), and whether it is a table
    macro."""

    parameters: tuple[tuple[str, str | None], ...]
    table: bool


def _split(params: str) -> list[str]:
    """`params` split at the commas outside brackets and quotes."""
    out, depth, quote, start = [], 0, False, 0
    for i, ch in enumerate(params):
        if ch == "'":
            quote = not quote
        elif not quote and ch in "([":
            depth += 1
        elif not quote and ch in ")]":
            depth -= 1
        elif not quote and depth == 0 and ch == ",":
            out.append(params[start:i])
            start = i + 1
    return [*out, params[start:]]


@functools.cache
def signatures() -> dict[str, Signature]:
    """Each typed body's signature (``<macro>_typed`` in ``sql/*.sql``), keyed by the macro's name."""
    from polars_anon.duckdb.macros import sql_files

    text = "\n".join(t for _, t in sql_files())
    out = {}
    for name, params, table in re.findall(
        r"CREATE OR REPLACE TEMP MACRO (anon_\w+)_typed\((.*?)\) AS( TABLE)?", text, re.S
    ):
        parts = [p.split(":=") for p in _split(" ".join(params.split()))]
        out[name] = Signature(tuple((p[0].strip(), p[1].strip() if len(p) > 1 else None) for p in parts), bool(table))
    return out


def wrapped(macro: str) -> bool:
    """Whether `macro` is a generated wrapper: some argument's type is checked (its body is ``<macro>_typed``)."""
    return any(KINDS[kind].cast for kind in ARGUMENTS[macro].values())


def _message(macro: str, only: str | None = None) -> str:
    """The SQL of the first wrong argument's message (NULL when every argument has its type); `only`: of that
    argument alone. The words are :data:`~polars_anon.messages.ARGUMENT_TYPE`'s."""
    head, _ = ARGUMENT_TYPE.text.split("{value!r}")
    wrong = [
        f"CASE WHEN NOT ({KINDS[kind].test.format(x=arg)}) "
        f"THEN {duckdb_literal(head.format(macro=macro, argument=arg, expected=KINDS[kind].expected))}"
        f" || anon_arguments_repr({arg}) END"
        for arg, kind in ARGUMENTS[macro].items()
        if KINDS[kind].cast and only in (None, arg)
    ]
    return wrong[0] if len(wrong) == 1 else "coalesce(" + ", ".join(wrong) + ")"


def _wrapper(macro: str, twin: str) -> str:
    """The wrapper macro of `macro`: the argument check, then ``<macro>_typed`` over the cast arguments."""
    sig, kinds, message = signatures()[macro], ARGUMENTS[macro], _message(macro)
    gates = [n for n, _ in sig.parameters if KINDS[kinds[n]].gate] if sig.table else []
    args = []
    for name, default in sig.parameters:
        kind = KINDS[kinds[name]]
        # an argument of another type reaches the body so that it binds: a text as NULL (3 cast to '3' named no
        # column), a list as cast or [] (never NULL); the WHERE's check refuses it when DuckDB binds the query
        value = name
        if kind.cast and kind.cast.endswith("[]"):
            value = f"coalesce(TRY_CAST({name} AS {kind.cast}), [])"
        elif kind.cast:
            value = f"CASE WHEN {kind.test.format(x=name)} THEN TRY_CAST({name} AS {kind.cast}) END"
        if name in gates:  # its own check: the name is looked up when DuckDB binds the query, before the WHERE
            value = f"anon_arguments_gate({name}, {_message(macro, name)})"
        args.append(value if default is None else f"{name} := {value}")
    declared = ", ".join(n if d is None else f"{n} := {d}" for n, d in sig.parameters)
    call = f"{macro}_typed({', '.join(args)})"
    check = f"(FROM query(anon_arguments_gate('SELECT true', {message})))"
    scalar = f"CASE WHEN {check} THEN {call} END"
    body = f"FROM {call} WHERE {check}" if sig.table else scalar
    said = "; ".join(f"{n}: {KINDS[kinds[n]].expected}" for n, _ in sig.parameters if KINDS[kinds[n]].cast)
    return (
        f"-- {macro}({declared}): {macro}_typed once its arguments have their types ({said}).\n"
        f"-- Twin: {twin}\n"
        f"CREATE OR REPLACE TEMP MACRO {macro}({declared}) AS{' TABLE' if sig.table else ''}\n  {body};\n"
    )


_HEADER = """\
-- The SQL macros' argument checks, generated from polars_anon/duckdb/arguments.py by
--   python -c 'import polars_anon.duckdb.arguments as a; a.write_sql()'
-- (do not edit by hand; tests/interfaces/test_sql_arguments.py checks the file is current).
-- Each macro below is what a user calls: it refuses the first argument of another type, naming the macro, the
-- argument and the type, while DuckDB binds the query, then runs <macro>_typed (sql/*.sql) over the arguments
-- cast to their types.

-- anon_arguments_repr(x): x as Python's repr shows a scalar ('text', None, True, 3), in few steps (a table name
-- carries its check into each of its uses: the messages' full repr, anon_msg_repr, made every call plan several times
-- slower); a list shows as DuckDB writes it, [t].
-- Twin: builtins.repr
CREATE OR REPLACE TEMP MACRO anon_arguments_repr(x) AS
  CASE WHEN x IS NULL THEN 'None' WHEN typeof(x) = 'VARCHAR' THEN chr(39) || x::VARCHAR || chr(39)
       WHEN typeof(x) = 'BOOLEAN' THEN CASE WHEN x::VARCHAR = 'true' THEN 'True' ELSE 'False' END ELSE x::VARCHAR END;

-- anon_arguments_gate(x, msg): x as text, or the error msg (a macro's first wrong argument) when it is not NULL.
-- DuckDB evaluates it when it binds the query_table or query it names, before any other check.
-- Twin: polars_anon.duckdb.arguments.ARGUMENTS
CREATE OR REPLACE TEMP MACRO anon_arguments_gate(x, msg) AS
  CASE WHEN msg IS NULL THEN x::VARCHAR ELSE error(msg) END;
"""


def sql_text() -> str:
    """The text of ``sql/_arguments.sql``: the gate and one wrapper per macro of :data:`ARGUMENTS` with a checked
    argument (its comment names its body's twin)."""
    from polars_anon.duckdb.macros import sql_files

    text = "\n".join(t for _, t in sql_files())
    found = re.findall(r"Twin: ([^\n]+)\n(?:--[^\n]*\n)*CREATE OR REPLACE TEMP MACRO (anon_\w+)_typed\(", text)
    twins = {macro: twin for twin, macro in found}
    return _HEADER + "".join("\n" + _wrapper(m, twins[m]) for m in sorted(ARGUMENTS) if wrapped(m))


SQL_PATH = Path(__file__).resolve().parents[2] / "sql" / "_arguments.sql"
"""Where :func:`write_sql` writes in a checkout of the repository."""


def write_sql(path: str | Path = SQL_PATH) -> None:
    """Write :func:`sql_text` to `path` (the repository's ``sql/_arguments.sql`` by default)."""
    signatures.cache_clear()
    Path(path).write_text(sql_text())
