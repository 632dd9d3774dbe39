"""The wording of the refusals both engines make: one template per refusal.

Each :class:`Message` is a ``str.format`` template; a ``{field!r}`` shows the
value as Python's ``repr`` does (``'zip'``, ``['a', 'b']``, ``1.5``, ``None``).
The Python checks format them (``K_NOT_INTEGER(k=1.5)``); the SQL macros call
their generated twins ``anon_msg_<name>(...)`` in ``sql/_messages.sql``, written
from these templates by :func:`write_sql` (a test keeps the file current). So a refusal reads the same
from Python and from DuckDB, and tests match both against :meth:`Message.pattern`.

>>> K_NOT_INTEGER(k=1.5)
'k must be an integer >= 1, got 1.5'
>>> COLUMNS_NOT_FOUND(what="qids", missing=["zz"], where="the frame", columns=["a"])
"qids ['zz'] not in the frame; its columns are ['a']"
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from polars_anon._types import Road
from polars_anon.quoting import duckdb_literal

__all__ = [
    "ATTRIBUTE_ROLE",
    "BAD_WEIGHTS",
    "BUILT_NAME",
    "CHOICE",
    "COLUMNS_NOT_FOUND",
    "DISTANCE_PARAMETER",
    "DUCKDB_SETTING",
    "EMPTY_TABLE",
    "ENCODE_NOT_IN_HIERARCHY",
    "HIERARCHY_NOT_LOADED",
    "K_ABOVE_ROWS",
    "KEYS_EMPTY",
    "KEY_NOT_UNIQUE",
    "KEY_NULL",
    "KEY_SHARED",
    "KEY_STRAY",
    "K_NOT_INTEGER",
    "LEVEL_OUT_OF_RANGE",
    "MESSAGES",
    "NAMES_NOT_QIDS",
    "NAMES_TWICE",
    "NOT_A_LEAF",
    "NOT_FRACTION",
    "NOT_NAMES",
    "NOT_POSITIVE",
    "NOT_UNDER_PUBLISHED",
    "NO_HIERARCHY",
    "NO_HIERARCHY_METRIC",
    "NO_ROWS",
    "PAIRS_QIDS",
    "QIDS_EMPTY",
    "RISK_COUNTS",
    "RISK_NOT_FINITE",
    "SENSITIVE_NULL",
    "SQL_SETTING",
    "VARIANT_PARAMETER",
    "WEIGHTS_BELOW_COUNT",
    "WEIGHT_IS_KEY",
    "WEIGHT_NOT_NUMERIC",
    "Message",
    "alpha_needs_wildcard",
    "model_needs_weight",
    "output_exists",
    "assignment",
    "setting",
    "short_codes",
    "sql_text",
    "typed",
    "write_sql",
]


@dataclass(frozen=True)
class Message:
    """One refusal's template.

    `lists` names the fields that hold lists (of strings); SQL shows them as
    Python shows a list, ``['a', 'b']``.
    """

    name: str
    text: str
    lists: tuple[str, ...] = ()

    def __call__(self, **fields: object) -> str:
        """The message with `fields` filled in."""
        return self.text.format(**fields)

    @property
    def fields(self) -> list[str]:
        """Field names in order of first appearance."""
        out: list[str] = []
        for _, field, _, _ in string.Formatter().parse(self.text):
            if field is not None and field not in out:
                out.append(field)
        return out

    def pattern(self, **fields: object) -> str:
        """Regular expression of the message: the given fields filled in, the others any text.

        >>> import re
        >>> bool(re.fullmatch(K_ABOVE_ROWS.pattern(k=5), "k=5 is larger than the table (3 rows); choose k <= 3"))
        True
        """
        out = []
        for literal, field, _, conversion in string.Formatter().parse(self.text):
            out.append(re.escape(literal))
            if field is not None:
                out.append(
                    re.escape(repr(fields[field]) if conversion == "r" else str(fields[field]))
                    if field in fields
                    else ".*"
                )
        return "".join(out)


COLUMNS_NOT_FOUND = Message(
    "columns_not_found", "{what} {missing!r} not in {where}; its columns are {columns!r}", lists=("missing", "columns")
)
"""Names that are not columns of a table (Python: ``where='the frame'``; SQL: ``where="table 't'"``)."""
QIDS_EMPTY = Message("qids_empty", "qids is empty; name at least one quasi-identifier column")
KEYS_EMPTY = Message("keys_empty", "{what} must name at least one key variable, got []")
"""No key variable given to an SDC function (``what='keys'``)."""
K_NOT_INTEGER = Message("k_not_integer", "k must be an integer >= 1, got {k!r}")
K_ABOVE_ROWS = Message("k_above_rows", "k={k} is larger than the table ({n_rows} rows); choose k <= {n_rows}")
EMPTY_TABLE = Message("empty_table", "table {table!r} has no rows: there is nothing to {task}")
CHOICE = Message("choice", "{name} must be one of {allowed!r}, got {value!r}", lists=("allowed",))
NAMES_NOT_QIDS = Message(
    "names_not_qids", "{what} names {unknown!r}, which are not qids; the qids are {qids!r}", lists=("unknown", "qids")
)
"""An option keyed by qid (levels, order, publish) names columns that are not qids."""
NO_HIERARCHY = Message(
    "no_hierarchy", "qid {qid!r} has no hierarchy loaded; call polars_anon.duckdb.load_hierarchy(con, {qid!r}, h)"
)
NO_HIERARCHY_METRIC = Message(
    "no_hierarchy_metric",
    "qid {qid!r} has no hierarchy loaded, and this metric reads through one how far each cell is from its original; "
    "call polars_anon.duckdb.load_hierarchy(con, {qid!r}, h) (without one, only the classes metrics measure a qid: "
    "anon_k, anon_min_class_size, anon_n_classes, anon_suppressed, anon_discernibility, anon_c_avg, anon_cm, "
    "anon_diameter)",
)
"""A metric macro other than the classes family's over a qid without a hierarchy (twin of the refusal of
:func:`polars_anon.metrics.compute`)."""
LEVEL_OUT_OF_RANGE = Message(
    "level_out_of_range", "{where}level {level} is outside this hierarchy's levels 0..{top} (root {root!r})"
)
"""Python (``Hierarchy``): ``where=''``; SQL names the hierarchy: ``where="hierarchy 'age': "``."""
NOT_A_LEAF = Message(
    "not_a_leaf",
    "column {column!r}: {value!r} is not a leaf of its hierarchy; add it to the hierarchy or drop those rows",
)
"""One value (SQL's ``anon_generalize`` sees one row at a time): the words of
:func:`polars_anon._validate.not_leaves` for one value; ``check_values`` counts them all."""
ENCODE_NOT_IN_HIERARCHY = Message(
    "encode_not_in_hierarchy",
    "column {column!r} of the {what} table: {value!r} is not {kind} of its hierarchy; encode with the hierarchies the "
    "table was anonymized with",
)
"""An encoding's one value outside its hierarchy (``what`` 'published' / 'original', ``kind`` 'a node' / 'a leaf'):
SQL refuses the first it meets; Python names several as :func:`polars_anon._validate.not_in_hierarchy` does."""
NOT_UNDER_PUBLISHED = Message(
    "not_under_published",
    "column {column!r}: original values are not under their published value (first: [{pairs}]); the original and "
    "published rows must be row-aligned, or share a class id column",
)
"""Encoding with the original rows: ``pairs`` the first 5 offending ``'leaf' -> 'published'`` by published value, then
leaf (string order), of the first qid that has any."""
HIERARCHY_NOT_LOADED = Message(
    "hierarchy_not_loaded",
    "{where}no hierarchy is loaded as {name!r}; call polars_anon.duckdb.load_hierarchy(con, {name!r}, h)",
)
"""SQL only (Python is given its hierarchies): ``where="t-closeness on 'disease': "``."""
DISTANCE_PARAMETER = Message(
    "distance_parameter", "{where}{parameter} is a parameter of distance {needs!r} only, got distance {distance!r}"
)
"""t-closeness's ``order`` and ``hierarchy`` given with another distance: ``where="t-closeness on 'disease': "``."""

VARIANT_PARAMETER = Message(
    "variant_parameter",
    "{where}: {key} is a parameter of variant {needs!r} only, got {key}={value!r} with variant {variant!r}",
)
"""A model's parameter given with a variant that does not read it (l-diversity's ``c`` without 'recursive')."""

NAMES_TWICE = Message("names_twice", "{what} lists {dup!r} more than once; name each {noun} once", lists=("dup",))
"""A column named twice (``what='qids'``, ``noun='quasi-identifier'``)."""
NOT_POSITIVE = Message("not_positive", "{where}: {key} must be {kind} {bound}, got {value!r}")
"""A model's parameter below its bound: ``kind`` 'a number' or 'an integer', ``bound`` '> 0' or '>= 1'."""
NOT_FRACTION = Message("not_fraction", "{where}: {key} must be a number in {interval}, got {value!r}")
"""A model's parameter outside [0, 1] (``interval`` '[0, 1]', '(0, 1]', ...)."""
ATTRIBUTE_ROLE = Message(
    "attribute_role",
    "{where}: attribute {attribute!r} is {role}; a privacy model reads a sensitive column (not a qid, an insensitive "
    "or a dropped one)",
)
"""A model's attribute is also a qid (``role='a quasi-identifier'``), declared insensitive or dropped."""

NO_ROWS = Message("no_rows", "{what}: the table has no rows; {why}")
"""A measure of an empty table (``what='risk'``), which has nothing to measure."""

SENSITIVE_NULL = Message(
    "sensitive_null",
    "{where}: column {attribute!r} holds {n} null values; say how the model reads them: {ignore} "
    "(left out of every class's distribution and of the table's) or {value} (null is one more value)",
)
"""A sensitive attribute with nulls under ``sensitive_null="error"`` (the default): ``where="l-diversity on 's'"``;
``ignore`` and ``value``: the way out spelled for the caller's road (:func:`setting`: a Python keyword, a job file's
key, a macro's named parameter: the macros pass ``anon_msg_sql_setting('sensitive_null', 'ignore')``)."""

SQL_SETTING = Message("sql_setting", "pass {key} := {value!r}")
"""A refusal's way out that sets a macro's named parameter, in SQL's syntax (:func:`setting` on road ``"sql"``):
``pass sensitive_null := 'ignore'``."""

DUCKDB_SETTING = Message(
    "duckdb_setting",
    "DuckDB's {setting} is {value!r} on this connection; {who} compare text byte-wise, as Python does, and "
    "would {effect}: run SET {setting} = {default!r} first",
)
"""A DuckDB session setting under which a road's SQL would not mean what Python means: the macros under a
``default_collation`` such as ``'nocase'`` (``who="the SQL macros"``, ``effect="read 'F' and 'f' as one value"``).
"""

BUILT_NAME = Message(
    "built_name",
    "{what} {name!r} is a name {who} ({named}); rename the column first, e.g. {rename}",
)
"""A column named like one a function builds beside it (``named``: the built names and/or the helper prefix;
``rename``: how, in the caller's language: ``lf.rename({'fk': 'fk_'})`` in Python, ``SELECT * RENAME ("fk" AS
"fk_")`` in SQL)."""

WEIGHT_NOT_NUMERIC = Message("weight_not_numeric", "weight column {weight!r} must be numeric, got {dtype}")
"""A sampling-weight column of a non-numeric type (Python names the Polars type, SQL the DuckDB one)."""
BAD_WEIGHTS = Message(
    "bad_weights",
    "weight column {weight!r} has {n} values that are not positive numbers (first: {first!r}); "
    "a sampling weight is the number of people a record stands for",
    lists=("first",),
)
"""Weights missing, NaN, infinite or not above 0 (``first``: up to 5 of them)."""
WEIGHTS_BELOW_COUNT = Message(
    "weights_below_count",
    "{where}weight column {weight!r}: {n} key patterns have weights summing below their record count "
    "(Fk < fk{first}); sampling weights must be >= 1",
)
"""Key patterns whose weights sum below their record count (``first``: ``'; first: (1, 'a')'`` or ``''``)."""
WEIGHT_IS_KEY = Message("weight_is_key", "weight column {weight!r} is also a key; pass it once")
"""The sampling-weight column named among the keys (its values would split the patterns it weighs)."""
NOT_NAMES = Message("not_names", "{what} must be {takes}, got {value!r}")
"""An argument that names columns given another type (``takes``: 'a column name', 'a list of column names', ...)."""
RISK_NOT_FINITE = Message("risk_not_finite", "every {name} must be a finite number, got {name}{at} = {value!r}")
"""A pattern count given to the risk formula that is NaN or infinite (``at``: Python's ``'[3]'``, SQL's ``''``)."""
RISK_COUNTS = Message(
    "risk_counts",
    "every fk must be > 0 and every Fk >= fk (weights below 1 are not allowed), "
    "got fk{at} = {fk!r}, Fk{at} = {big_fk!r}",
)
"""A pattern's sample count fk not above 0, or its weighted count Fk below fk (the risk formula gave -0.0 for fk = 0
and 0.333 for fk = 3 and Fk = 2): the first such pair (``at`` as in :data:`RISK_NOT_FINITE`)."""

PAIRS_QIDS = Message(
    "pairs_qids",
    "pairs table {pairs!r} was made with {made} qids, and qids {qids!r} names {given}; pass the qids it was made with, "
    "in their order",
    lists=("qids",),
)
"""The qids given to a metric over a pairs table (SQL's ``anon_<metric>_of``) that are not as many as the pairs were
made with (each row of the pairs holds one node per qid, in their order)."""

KEY_NOT_UNIQUE = Message(
    "key_not_unique",
    "key {key!r} is not unique in the anonymized table: the join gave {total} rows for {n_orig} original rows; "
    "use a row id column",
)
"""A metric's row id repeated in the anonymized table (the pairs outnumber the original rows)."""
KEY_SHARED = Message(
    "key_shared", "key {key!r} is not unique in the original table: {rows} rows share a value; use a row id column"
)
"""A metric's row id repeated in the original table (a published row would be paired twice)."""
KEY_NULL = Message("key_null", "key {key!r} has {rows} null values in the original table; every row needs one")
"""A metric's row id missing in the original table (its row would read as suppressed)."""
KEY_STRAY = Message(
    "key_stray",
    "{rows} rows of the anonymized table have a key {key!r} the original table does not hold; the anonymized rows "
    "must come from the original's",
)
"""Anonymized rows whose row id the original lacks (they would be left out of every metric)."""

_ALL = (
    COLUMNS_NOT_FOUND,
    QIDS_EMPTY,
    KEYS_EMPTY,
    K_NOT_INTEGER,
    K_ABOVE_ROWS,
    EMPTY_TABLE,
    CHOICE,
    NAMES_NOT_QIDS,
    NO_HIERARCHY,
    LEVEL_OUT_OF_RANGE,
    NOT_A_LEAF,
    ENCODE_NOT_IN_HIERARCHY,
    NOT_UNDER_PUBLISHED,
    HIERARCHY_NOT_LOADED,
    DISTANCE_PARAMETER,
    VARIANT_PARAMETER,
    NAMES_TWICE,
    NOT_POSITIVE,
    NOT_FRACTION,
    ATTRIBUTE_ROLE,
    NO_ROWS,
    SENSITIVE_NULL,
    SQL_SETTING,
    BUILT_NAME,
    WEIGHT_NOT_NUMERIC,
    BAD_WEIGHTS,
    WEIGHTS_BELOW_COUNT,
    WEIGHT_IS_KEY,
    NOT_NAMES,
    RISK_NOT_FINITE,
    RISK_COUNTS,
    PAIRS_QIDS,
    KEY_NOT_UNIQUE,
    KEY_SHARED,
    KEY_NULL,
    KEY_STRAY,
    DUCKDB_SETTING,
    NO_HIERARCHY_METRIC,
)
MESSAGES: dict[str, Message] = {m.name: m for m in _ALL}
"""Every template by name (its SQL twin is ``anon_msg_<name>``)."""

_CONSTANTS = {m.name: c for c, m in globals().items() if isinstance(m, Message)}

_HEADER = """\
-- Refusal messages, generated from polars_anon/messages.py by
--   python -c 'import polars_anon.messages as m; m.write_sql()'
-- (do not edit by hand; tests/interfaces/test_sql_errors.py checks the file is current).
-- anon_msg_<name>(fields...) returns the message of polars_anon.messages.<NAME> with the
-- fields filled in, for error(...): a field shown with !r is quoted as Python's repr.

-- anon_msg_repr(x): a scalar as Python's repr shows it: 'text' (backslash, newline and tab
-- escaped; "it's" in double quotes), None, True / False, numbers as DuckDB prints them.
-- The text is escaped once and quoted by a lambda over it, and the pieces joined by one concat: every check binds
-- its messages whatever the rows, and nested || and replace chains cost more to bind the deeper they go.
-- Twin: builtins.repr
CREATE OR REPLACE TEMP MACRO anon_msg_repr(x) AS
  CASE WHEN x IS NULL THEN 'None'
       WHEN typeof(x) = 'BOOLEAN' THEN CASE WHEN x::VARCHAR = 'true' THEN 'True' ELSE 'False' END
       WHEN typeof(x) <> 'VARCHAR' THEN x::VARCHAR
       ELSE list_transform([replace(replace(replace(replace(x::VARCHAR, '\\', '\\\\'), E'\\n', '\\n'), E'\\r', '\\r'),
                                    E'\\t', '\\t')],
                           lambda e: CASE WHEN contains(e, '''') AND NOT contains(e, '"') THEN concat('"', e, '"')
                                          ELSE concat('''', replace(e, '''', '\\'''), '''') END)[1]
  END;

-- anon_msg_repr_list(xs): a list as Python's repr shows it: ['a', 'b'].
-- Twin: builtins.repr
CREATE OR REPLACE TEMP MACRO anon_msg_repr_list(xs) AS
  CASE WHEN xs IS NULL THEN 'None'
       ELSE concat('[', array_to_string(list_transform(xs, lambda x: anon_msg_repr(x)), ', '), ']') END;
"""


def setting(key: str, value: object, road: Road | Literal["sql"]) -> str:
    """A refusal's way out that sets `key` to `value`, spelled for the user's `road`: a keyword of the Python call, a
    key of the job file (a job or command-line user has no call to pass it to), or a named parameter of an SQL macro
    (:data:`SQL_SETTING`, whose twin ``anon_msg_sql_setting`` the macros call).

    >>> setting("null", "suppress", "python")
    "pass null='suppress'"
    >>> setting("null", "suppress", "job")
    'set null = "suppress" in the job file'
    >>> setting("sensitive_null", "ignore", "sql")
    "pass sensitive_null := 'ignore'"
    """
    if road == "sql":
        return SQL_SETTING(key=key, value=value)
    if road == "job":
        return f"set {assignment(key, value, road)} in the job file"
    return f"pass {key}={value!r}"


def output_exists(what: str, target: str, command_line: bool) -> str:
    """The refusal of an output that exists, its way out spelled for the caller: the keyword of the Python call
    (a job run from Python too: ``run_job(job, overwrite=True)``), or the command's flag (a job file has no key for
    it: the command line's ``--overwrite`` replaces).

    >>> output_exists("output", "out/a.parquet", False)
    "output 'out/a.parquet' exists; pass overwrite=True to replace it"
    >>> output_exists("report", "out/a.report.json", True)
    "report 'out/a.report.json' exists; add --overwrite to the command to replace it"
    """
    way = "add --overwrite to the command" if command_line else "pass overwrite=True"
    return f"{what} {target!r} exists; {way} to replace it"


def alpha_needs_wildcard(alpha: object, command_line: bool) -> str:
    """The refusal of a risk's `alpha` with missing values read as categories, its way out spelled for the caller: the
    keywords of the Python call, or the command's flags (a command-line user has no ``missing=`` to pass).

    >>> alpha_needs_wildcard(0.5, False)
    "risk: alpha=0.5 weighs records with missing values in the wildcard reading; missing='category' takes none \
(pass missing='wildcard', or drop alpha)"
    >>> alpha_needs_wildcard(0.5, True)
    'risk: --alpha 0.5 weighs records with missing values in the wildcard reading; --missing category takes none \
(add --missing wildcard, or drop --alpha)'
    """
    if command_line:
        given, category, way = f"--alpha {alpha}", "--missing category", "add --missing wildcard, or drop --alpha"
    else:
        given, category, way = f"alpha={alpha!r}", "missing='category'", "pass missing='wildcard', or drop alpha"
    return f"risk: {given} weighs records with missing values in the wildcard reading; {category} takes none ({way})"


def model_needs_weight(command_line: bool) -> str:
    """The refusal of the log-linear model risk without sampling weights, naming the caller's parameter: ``weight``
    (a Python call's keyword, a job file's ``[sdc]`` key) or the command's flags.

    >>> model_needs_weight(False)
    'sdc: model (log-linear model risk) needs a weight column: give weight'
    >>> model_needs_weight(True)
    'risk: --model-risk (log-linear model risk) needs a weight column: add --weights COLUMN'
    """
    if command_line:
        return "risk: --model-risk (log-linear model risk) needs a weight column: add --weights COLUMN"
    return "sdc: model (log-linear model risk) needs a weight column: give weight"


def _toml_key(name: str) -> str:
    """`name` as a TOML key: bare when it can be, else quoted."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def short_codes(column: str, n: int, first: list[int], widest: int, road: Road | Literal["cli"]) -> str:
    """The masking refusal of `n` integers with fewer digits than the widest value's `widest` (`first`: up to 5 of
    them; `column` ``''`` for values not from a named column), its ways out spelled for the user's `road`: read the
    column as text (codes, such as zip codes, that lost their leading zeros when read as numbers), or give the width
    (a CLI command without a job file: in its ``--hierarchy`` spec).

    >>> python, job, cli = (short_codes("zip", 1, [8628], 5, road) for road in ("python", "job", "cli"))
    >>> python.startswith("masking: column 'zip' holds 1 integers with fewer digits than its widest value (5)")
    True
    >>> "schema_overrides={'zip': pl.String}); else pass width=5" in python
    True
    >>> 'set schema = { zip = "String" } in the job file; else give { width = 5 } in its hierarchy table' in job
    True
    >>> "store the column as String in the file the command reads" in cli and "--hierarchy 'zip={ mask = N, " in cli
    True
    """
    name = column or "column"
    if road == "job":
        text = typed(name, "String", "job")
        width = f"give {{ width = {widest} }} in its hierarchy table"
    elif road == "cli":
        text = typed(name, "String", "cli")
        width = f"give the width in its spec (--hierarchy '{name}={{ mask = N, width = {widest} }}')"
    else:
        text = f"pl.scan_csv(path, schema_overrides={{{name!r}: pl.String}})"
        width = f"pass width={widest}"
    example = str(first[0])
    above = example.zfill(widest)[:-1] + "*"
    shown = "[" + ", ".join(str(v) for v in first[:5]) + "]"
    where = f"column {column!r} holds" if column else "the values are"
    return (
        f"masking: {where} {n} integers with fewer digits than its widest value ({widest}) (first: {shown}): "
        f"zero-padded above their leaves they would publish both {example!r} and {above!r}; if they are codes that "
        f"lost their leading zeros when read as numbers, read the column as text: {text}; else {width} to mask them "
        "zero-padded (the leaves keep their digits)"
    )


def empty_label(column: str | None, road: Road | Literal["cli"]) -> str:
    """The way out of a value that is the empty string '' where a hierarchy is built from a column's values (no label
    is empty: a hierarchy file could not tell it from a missing value), spelled for the user's `road`: a relabelling
    in the Python call, the job file's keys (a job reads its input itself: it has no frame to relabel; a CSV input
    reads '' as missing with ``null_values``, and the null policy then takes it), or the file a CLI command reads
    (it has neither).

    >>> empty_label("zip", "python")
    "relabel it (pl.col('zip').replace('', '(empty)')) or make it null (the null policy handles it)"
    >>> empty_label(None, "python")
    "relabel it (pl.col(...).replace('', '(empty)')) or make it null (the null policy handles it)"
    >>> empty_label("zip", "job")
    'relabel it in the input file, or read it as missing (a CSV input: set null_values = [""] in the job file) and \
set null = "suppress" in the job file to publish it as the hierarchy root'
    >>> empty_label("zip", "cli")
    "relabel it in the file the command reads (e.g. '(empty)')"
    """
    if road == "cli":
        return "relabel it in the file the command reads (e.g. '(empty)')"
    if road == "job":
        return (
            'relabel it in the input file, or read it as missing (a CSV input: set null_values = [""] in the job '
            f"file) and {setting('null', 'suppress', 'job')} to publish it as the hierarchy root"
        )
    target = "..." if column is None else repr(column)
    return f"relabel it (pl.col({target}).replace('', '(empty)')) or make it null (the null policy handles it)"


def assignment(key: str, value: object, road: Road) -> str:
    """`key` given `value` in the syntax of the user's `road`: a keyword argument of the Python call, or a key of the
    job file (TOML). For a way out a display suggests in its own words (:func:`setting` says where it goes).

    >>> assignment("method", "topdown", "python"), assignment("method", "topdown", "job")
    ('method="topdown"', 'method = "topdown"')
    >>> assignment("k", 5, "python"), assignment("null", None, "python")
    ('k=5', 'null=None')
    """
    if road == "job":
        return f"{key} = {json.dumps(value)}"
    return f"{key}={json.dumps(value) if isinstance(value, str) else repr(value)}"


def typed(column: str | None, dtype: str, road: Road | Literal["cli"]) -> str:
    """A refusal's way out that types `column` as `dtype` (a name of :data:`polars_anon.io.DTYPES`), spelled for the
    user's `road`: a cast in the Python call (``pl.col(...)`` when the column is not known: a builder called on
    values), the job file's ``schema`` (a job reads its input itself: there is no frame to cast), or, for a CLI command
    without a job file (its flags type no column), the file it reads or a job file (a CSV file's columns are typed by
    how their values are written).

    >>> typed("age", "Int64", "python"), typed(None, "Int64", "python")
    ("cast the column: pl.col('age').cast(pl.Int64)", 'cast the column: pl.col(...).cast(pl.Int64)')
    >>> typed("age", "Int64", "job"), typed("zip code", "Int64", "job")
    ('set schema = { age = "Int64" } in the job file', 'set schema = { "zip code" = "Int64" } in the job file')
    >>> typed("age", "Int64", "cli")
    'store the column as Int64 in the file the command reads, or type it in a job file (--job: schema = { age = \
"Int64" })'
    """
    if road == "job":
        return f"set schema = {{ {_toml_key(str(column))} = {json.dumps(dtype)} }} in the job file"
    if road == "cli":
        key = f"{_toml_key(str(column))} = {json.dumps(dtype)}"
        return (
            f"store the column as {dtype} in the file the command reads, or type it in a job file "
            f"(--job: schema = {{ {key} }})"
        )
    return f"cast the column: pl.col({'...' if column is None else repr(column)}).cast(pl.{dtype})"


def _sql_macro(message: Message) -> str:
    parts = []
    for literal, field, _, conversion in string.Formatter().parse(message.text):
        if literal:
            parts.append(duckdb_literal(literal))
        if field is None:
            continue
        if conversion == "r":
            parts.append(f'anon_msg_repr_list("{field}")' if field in message.lists else f'anon_msg_repr("{field}")')
        else:
            parts.append(f"coalesce(\"{field}\"::VARCHAR, 'None')")
    constant = _CONSTANTS[message.name]
    params = ", ".join(f'"{f}"' for f in message.fields)  # quoted: `where`, `column` are SQL keywords
    return (
        f"-- anon_msg_{message.name}({', '.join(message.fields)}): {message.text}\n"
        f"-- Twin: polars_anon.messages.{constant}\n"
        f"CREATE OR REPLACE TEMP MACRO anon_msg_{message.name}({params}) AS\n"
        f"  {_joined(parts)};\n"
    )


def _joined(parts: list[str]) -> str:
    """SQL that joins the non-NULL text `parts`: one ``concat(...)`` (a chain of ``||`` costs more to bind, the longer
    it is: every refusal's message is bound by each query of a macro that may raise it)."""
    return parts[0] if len(parts) == 1 else f"concat({', '.join(parts)})"


def sql_text() -> str:
    """The text of ``sql/_messages.sql``: the repr helpers and one ``anon_msg_<name>`` macro per message."""
    return _HEADER + "".join("\n" + _sql_macro(m) for m in MESSAGES.values())


SQL_PATH = Path(__file__).resolve().parent.parent / "sql" / "_messages.sql"
"""Where :func:`write_sql` writes in a checkout of the repository."""


def write_sql(path: str | Path = SQL_PATH) -> None:
    """Write :func:`sql_text` to `path` (the repository's ``sql/_messages.sql`` by default)."""
    Path(path).write_text(sql_text())
