"""DuckDB front door: register the ``anon_*`` SQL macros and load hierarchies as tables.

>>> import duckdb, polars_anon as pa
>>> from polars_anon.duckdb import register, load_hierarchy
>>> con = duckdb.connect()
>>> "anon_class_sizes" in register(con)
True
>>> load_hierarchy(con, "sex", pa.Hierarchy.suppression(["F", "M"]))
>>> con.sql("SELECT anon_generalize('sex', 'F', 1)").fetchall()
[('*',)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from polars_anon.errors import (
    ColumnNotFoundError,
    InputError,
    InvalidParameterError,
    NullValueError,
    ValueNotInHierarchyError,
    preview,
)
from polars_anon.hierarchy import Hierarchy

__all__ = ["generalize_sql", "load_hierarchy", "metric_pairs", "register", "sql_files"]


def sql_files() -> list[tuple[str, str]]:
    """The shipped ``sql/*.sql`` files as (name, text), sorted by name."""
    try:
        root = resources.files("polars_anon") / "sql"
        files = [(f.name, f.read_text()) for f in root.iterdir() if f.name.endswith(".sql")]
    except (FileNotFoundError, NotADirectoryError):
        files = []
    if not files:  # editable install: sql/ sits beside the package
        here = Path(__file__).resolve().parent.parent / "sql"
        files = [(f.name, f.read_text()) for f in here.glob("*.sql")]
    return sorted(files)


def register(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create the hierarchy tables and every ``anon_*`` macro on `con` (TEMP; harmless to repeat).

    Returns the ``anon_*`` function names now defined.
    """
    for _, text in sql_files():
        con.execute(text)
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_name LIKE 'anon\\_%' ESCAPE '\\' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def load_hierarchy(con: duckdb.DuckDBPyConnection, name: str, hierarchy: Hierarchy) -> None:
    """Load `hierarchy` into the ``anon_nodes``, ``anon_closure`` and ``anon_levels`` tables as `name`.

    Replaces an earlier hierarchy of the same name; calls :func:`register` first if needed.
    """
    register(con)
    nodes = hierarchy.nodes.with_columns(pl.lit(name).alias("hierarchy"))
    closure = hierarchy.closure.with_columns(pl.lit(name).alias("hierarchy"))
    levels = pl.concat(
        [hierarchy.level_map(lv).with_columns(pl.lit(lv, dtype=pl.Int64).alias("level")) for lv in range(hierarchy.height)]
    ).with_columns(pl.lit(name).alias("hierarchy"))
    con.execute("BEGIN")
    try:
        for table, frame in (("anon_nodes", nodes), ("anon_closure", closure), ("anon_levels", levels)):
            con.execute(f"DELETE FROM {table} WHERE hierarchy = ?", [name])
            con.register("__anon_frame", frame.to_arrow())
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM __anon_frame")
            con.unregister("__anon_frame")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def generalize_sql(relation: str, hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int]) -> str:
    """SQL text that publishes `relation` (a table, view or ``read_parquet(...)``) at fixed levels.

    The hierarchies must have been loaded under their column names with
    :func:`load_hierarchy`. Column names are quoted as identifiers; levels are
    integers; no user value is formatted into the text. Rows keep their input
    order (a row number is carried through the lookups and sorted on).
    """
    parts = []
    for q in hierarchies:
        lv = int(levels.get(q, 0))
        ident = '"' + q.replace('"', '""') + '"'
        literal = "'" + q.replace("'", "''") + "'"
        parts.append(f"anon_generalize({literal}, {ident}, {lv}) AS {ident}")
    return (
        f"SELECT * EXCLUDE (__anon_row) REPLACE ({', '.join(parts)}) "
        f"FROM (SELECT *, row_number() OVER () AS __anon_row FROM {relation}) ORDER BY __anon_row"
    )


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def metric_pairs(
    con: duckdb.DuckDBPyConnection,
    original: str,
    anonymized: str,
    qids: Sequence[str],
    *,
    key: str | None = None,
    sensitive: str | None = None,
    name: str = "anon_pairs",
    pairwise: bool = True,
) -> str:
    """Materialize the pairs of a publication once, for the fast ``anon_<metric>_of`` macros.

    One pass over both tables: every quasi-identifier value becomes its hierarchy
    node id (a cast to a TEMP ENUM of the hierarchy's labels, in node order), each
    row one packed integer, and the rows are counted per (original tuple,
    published tuple, sensitive value, suppressed). Creates four TEMP tables
    (replacing earlier ones): `name` (the pairs: ``o``, ``p`` node-id lists, ``s``,
    ``suppressed``, ``size``; see ``anon_metric_pairs`` in ``sql/metrics.sql``),
    ``<name>_cells``, ``<name>_classes`` and ``<name>_joint`` (their cells, classes
    and pairwise contingency tables). Every metric then aggregates those:
    ``FROM anon_ncp_of('anon_pairs', qids)``.

    Parameters
    ----------
    con
        A connection with the hierarchies loaded under the qids' names
        (:func:`load_hierarchy`).
    original, anonymized
        Names of the tables or views holding the rows (e.g. a view over
        ``read_parquet(...)``).
    qids
        Quasi-identifier columns.
    key
        A unique row id column in both tables; without it rows are lined up by
        position and the anonymized table must keep every row. Original rows
        whose key is absent from the anonymized table are the suppressed rows.
    sensitive
        The sensitive column, for ``anon_cm_of`` and ``anon_mi_loss_of``; leave it
        out otherwise (the pairs are then fewer).
    name
        Name of the pairs table (letters, digits, underscores).
    pairwise
        Make ``<name>_joint`` (read by ``anon_cramers_v_of`` and ``anon_mi_loss_of``);
        False saves its time when neither is wanted.

    Returns
    -------
    str
        `name`, to pass to the ``anon_<metric>_of`` macros.

    Raises
    ------
    InvalidParameterError, ColumnNotFoundError, InputError, NullValueError, ValueNotInHierarchyError
        As :func:`polars_anon.metrics.prepare`.

    Examples
    --------
    >>> import duckdb, polars_anon as pa
    >>> con = duckdb.connect()
    >>> load_hierarchy(con, "g", pa.Hierarchy.suppression(["F", "M"]))
    >>> _ = con.execute("CREATE TABLE o AS SELECT * FROM (VALUES ('F'), ('M'), ('F')) t(g)")
    >>> _ = con.execute("CREATE TABLE a AS SELECT * FROM (VALUES ('*'), ('*'), ('F')) t(g)")
    >>> metric_pairs(con, "o", "a", ["g"])
    'anon_pairs'
    >>> con.sql("FROM anon_modified_of('anon_pairs', ['g'])").fetchall()
    [(None, 66.66666666666667), ('g', 66.66666666666667)]
    """
    qids = list(qids)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise InvalidParameterError(f"name must be letters, digits and underscores (a table name), got {name!r}")
    if not qids:
        raise InvalidParameterError("qids is empty; name at least one quasi-identifier column")
    if key is not None and key in qids:
        raise InvalidParameterError(f"key {key!r} is also a quasi-identifier; the key must be a row id column")
    if sensitive is not None and sensitive in qids:
        raise InvalidParameterError(f"sensitive {sensitive!r} is also a quasi-identifier; it must be one or the other")
    register(con)
    for table, needed in ((original, [*qids, *([key] if key else []), *([sensitive] if sensitive else [])]),
                          (anonymized, [*qids, *([key] if key else [])])):  # fmt: skip
        columns = [d[0] for d in con.execute(f"SELECT * FROM {_ident(table)} LIMIT 0").description]
        missing = [c for c in needed if c not in columns]
        if missing:
            raise ColumnNotFoundError(f"columns {missing} not in table {table!r}; its columns are {columns}")
    sizes = dict(
        con.execute("SELECT hierarchy, count(*) FROM anon_nodes WHERE list_contains(?, hierarchy) GROUP BY ALL", [qids]).fetchall()
    )
    missing = [q for q in qids if q not in sizes]
    if missing:
        raise InvalidParameterError(
            f"qids {missing} have no hierarchy loaded; call polars_anon.duckdb.load_hierarchy(con, qid, h) for each"
        )
    radix = [int(sizes[q]) + 1 for q in qids]  # code n_nodes: a value that is no node (or NULL)
    r_all = math.prod(radix)
    if r_all >= 2**125:
        raise InvalidParameterError(f"{len(qids)} qids with these hierarchies are too many to pack; metric_pairs takes fewer")
    big = r_all >= 2**62  # then the codes are HUGEINT
    enum = [_ident(f"{name}__e{i}") for i in range(len(qids))]
    for q, e in zip(qids, enum):
        con.execute(f"CREATE OR REPLACE TEMP TYPE {e} AS ENUM (SELECT label FROM anon_nodes WHERE hierarchy = {_literal(q)} ORDER BY node)")

    n_s = 0
    s_code = "NULL::BIGINT"
    if sensitive is not None:
        s_type = _ident(f"{name}__s")
        s_col = _ident(sensitive)
        con.execute(
            f"CREATE OR REPLACE TEMP TYPE {s_type} AS ENUM "
            f"(SELECT DISTINCT {s_col}::VARCHAR FROM {_ident(original)} WHERE {s_col} IS NOT NULL ORDER BY 1)"
        )
        n_s = con.execute(f"SELECT len(enum_range(NULL::{s_type}))").fetchall()[0][0]
        s_code = f"coalesce(enum_code(TRY_CAST({s_col}::VARCHAR AS {s_type})), {n_s})::BIGINT"
    def decode(column: str, suppressed: str | None) -> str:
        """Node-id list of a packed code; the roots (node 0) where `suppressed` holds."""
        parts, stride = [], 1
        for r in radix:
            part = f"({column} // {stride}) % {r}"
            parts.append(f"CASE WHEN {suppressed} THEN 0 ELSE {part} END" if suppressed else part)
            stride *= r
        return "[" + ", ".join(f"({p})::BIGINT" for p in parts) + "]"

    one_key = r_all * (r_all + 1) < 2**62
    codes = [f"coalesce(enum_code(TRY_CAST({_ident(q)}::VARCHAR AS {e})), {r - 1})::{'HUGEINT' if big else 'BIGINT'}"
             for q, e, r in zip(qids, enum, radix)]  # fmt: skip
    strides = [math.prod(radix[:i]) for i in range(len(qids))]
    k_col = f", {_ident(key)} AS k" if key else ""
    o_side = f"SELECT {', '.join(f'{c} AS o{i}' for i, c in enumerate(codes))}, {s_code} AS sc{k_col} FROM {_ident(original)}"
    a_side = f"SELECT {' + '.join(f'{c} * {st}' for c, st in zip(codes, strides))} AS pc{k_col} FROM {_ident(anonymized)}"
    o_cols = [f"o.o{i}" for i in range(len(qids))]
    oc = " + ".join(f"o.o{i} * {st}" for i, st in zip(range(len(qids)), strides))
    if key is None:
        n_orig, n_anon = (con.execute(f"SELECT count(*) FROM {_ident(t)}").fetchall()[0][0] for t in (original, anonymized))
        if n_orig != n_anon:
            raise InputError(
                f"the anonymized table has {n_anon} rows and the original {n_orig}; without a key they are lined up "
                "by position, so suppressed rows must be kept (published as the hierarchy roots). "
                "Pass key='<row id column>' when rows were removed"
            )
        how = "POSITIONAL JOIN"
    else:
        how = "LEFT JOIN"
    pcs = f"coalesce(a.pc, {r_all})"  # R: the row is suppressed (absent from the anonymized table)
    main = [f"{oc} + {pcs} * {r_all} AS key"] if one_key else [f"{oc} AS oc", f"{pcs} AS pcs"]
    joined = (
        f"SELECT {', '.join(main)}, {pcs} AS pc, {', '.join(o_cols)}, o.sc "
        f"FROM ({o_side}) AS o {how} ({a_side}) AS a{' ON a.k = o.k' if key else ''}"
    )
    group = "key" if one_key else "oc, pcs"
    o_code, p_code = (f"(key % {r_all})", f"(key // {r_all})") if one_key else ("oc", "pcs")
    raw = _ident(f"{name}__raw")
    if sensitive is None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT {group}, count(*) AS n FROM ({joined}) GROUP BY {group}")
        pairs = raw
    else:
        # one group per (o, p, s); the pairs keep (o, p) (fewer rows, lists built once per pair), the
        # classes and the contingency tables with s are summed from the codes (see below)
        if one_key and r_all * (r_all + 1) * (n_s + 1) < 2**62:  # s packed into the key: one integer to group on
            w = n_s + 1
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT ks // {w} AS key, ks % {w} AS sc, n "
                f"FROM (SELECT key * {w} + sc AS ks, count(*) AS n FROM ({joined}) GROUP BY ks)"
            )
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT {group}, sc, count(*) AS n FROM ({joined}) GROUP BY {group}, sc")
        pairs = f"(SELECT {group}, sum(n) AS n FROM {raw} GROUP BY {group})"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {_ident(name)} AS "
        f"SELECT {decode(o_code, None)} AS o, {decode(p_code, f'{p_code} = {r_all}')} AS p, NULL::BIGINT AS s, "
        f"{p_code} = {r_all} AS suppressed, n::BIGINT AS size FROM {pairs}"
    )
    (n_pairs,) = con.execute(f"SELECT count(*) FROM {_ident(name)}").fetchall()[0]
    if n_pairs == 0:
        raise InputError(f"table {original!r} has no rows: there is nothing to measure")
    if key is not None:
        total, = con.execute(f"SELECT coalesce(sum(size), 0) FROM {_ident(name)}").fetchall()[0]
        n_orig, = con.execute(f"SELECT count(*) FROM {_ident(original)}").fetchall()[0]
        if total != n_orig:
            raise InvalidParameterError(
                f"key {key!r} is not unique in the anonymized table: the join gave {total} rows for {n_orig} original rows; "
                "use a row id column"
            )
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_ident(name + '_cells')} AS FROM anon_metric_cells_of(?, ?)", [name, qids])
    bad = con.execute(
        f"SELECT i, bool_or(l_level IS NULL OR l_level > 0), bool_or(p_level IS NULL) FROM {_ident(name + '_cells')} "
        "WHERE l_level IS NULL OR l_level > 0 OR p_level IS NULL GROUP BY i ORDER BY i"
    ).fetchall()
    if bad:
        i, bad_o, _ = bad[0]
        _refuse(con, qids[i], original if bad_o else anonymized, "original" if bad_o else "anonymized", enum[i])
    if sensitive is None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_ident(name + '_classes')} AS FROM anon_metric_classes_of(?, ?)", [name, qids])
        if pairwise:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {_ident(name + '_joint')} AS FROM anon_metric_joint_of(?, ?)", [name, qids])
    else:  # the classes from (published tuple, s); the contingency tables with s from (original value, s) per qid
        ps = f"{name}__ps"
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_ident(ps)} AS SELECT NULL::BIGINT[] AS o, {decode('pc', f'pc = {r_all}')} AS p, "
            f"sc::BIGINT AS s, pc = {r_all} AS suppressed, n::BIGINT AS size "
            f"FROM (SELECT {p_code} AS pc, sc, sum(n) AS n FROM {raw} GROUP BY ALL)"
        )
        con.execute(f"CREATE OR REPLACE TEMP TABLE {_ident(name + '_classes')} AS FROM anon_metric_classes_of(?, ?)", [ps, qids])
        if pairwise:
            m = len(qids)
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_ident(name + '_joint')} AS "
                f"SELECT * FROM anon_metric_joint_of(?, ?) UNION ALL "
                f"SELECT r.i AS x, {m}::BIGINT AS y, 'o' AS side, (({o_code} // ?[r.i + 1]) % ?[r.i + 1])::BIGINT AS va, "
                f"sc::BIGINT AS vb, sum(n)::BIGINT AS nab FROM {raw} CROSS JOIN range({m}) AS r(i) GROUP BY ALL UNION ALL "
                f"SELECT r.i AS x, {m}::BIGINT AS y, 'p' AS side, ps.p[r.i + 1] AS va, ps.s AS vb, sum(ps.size)::BIGINT AS nab "
                f"FROM {_ident(ps)} AS ps CROSS JOIN range({m}) AS r(i) GROUP BY ALL",
                [name, qids, strides, radix],
            )
        con.execute(f"DROP TABLE {_ident(ps)}")
    if not pairwise:  # no stale contingency tables from an earlier call
        con.execute(f"DROP TABLE IF EXISTS {_ident(name + '_joint')}")
    con.execute(f"DROP TABLE {raw}")
    return name


def _refuse(con: duckdb.DuckDBPyConnection, q: str, table: str, where: str, enum: str) -> None:
    """Name the nulls or the values of column `q` that are not nodes (or, originally, not leaves)."""
    col = _ident(q)
    if con.execute(f"SELECT count(*) FROM {_ident(table)} WHERE {col} IS NULL").fetchall()[0][0]:
        raise NullValueError(f"column {q!r} in the {where} table has null values; metrics need every value, fill or drop them")
    if where == "original":
        rows = con.execute(
            f"SELECT DISTINCT t.{col}::VARCHAR AS v FROM {_ident(table)} AS t LEFT JOIN anon_nodes AS n "
            f"ON n.hierarchy = ? AND n.label = t.{col}::VARCHAR WHERE n.node IS NULL OR n.level > 0 ORDER BY v LIMIT 6",
            [q],
        ).fetchall()
        kind = "leaves"
    else:
        rows = con.execute(
            f"SELECT DISTINCT {col}::VARCHAR AS v FROM {_ident(table)} WHERE TRY_CAST({col}::VARCHAR AS {enum}) IS NULL ORDER BY v LIMIT 6"
        ).fetchall()
        kind = "nodes"
    raise ValueNotInHierarchyError(
        f"column {q!r} in the {where} table: values {preview([r[0] for r in rows])} are not {kind} of its hierarchy; "
        "check the hierarchy or the columns compared"
    )
