"""The pairs of a publication in DuckDB, made once for the fast ``anon_<metric>_of`` macros."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import duckdb

from polars_anon._validate import is_path
from polars_anon.duckdb.macros import ensure_registered
from polars_anon.errors import (
    ColumnNotFoundError,
    InputError,
    InvalidParameterError,
    NullValueError,
    ValueNotInHierarchyError,
    preview,
)
from polars_anon.messages import (
    COLUMNS_NOT_FOUND,
    EMPTY_TABLE,
    KEY_NOT_UNIQUE,
    KEY_NULL,
    KEY_SHARED,
    KEY_STRAY,
    QIDS_EMPTY,
)
from polars_anon.quoting import duckdb_identifier, duckdb_literal

__all__ = ["metric_pairs"]


def metric_pairs(
    con: duckdb.DuckDBPyConnection,
    original: str | os.PathLike[str],
    anonymized: str | os.PathLike[str],
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
        (:func:`polars_anon.duckdb.load_hierarchies`). A qid without one (published as
        ranges, sets or means: Mondrian, MDAV) is measured by the classes metrics alone, as
        :func:`polars_anon.metrics.compute` measures it: its labels are its nodes, and
        ``<name>_cells`` and ``<name>_joint`` are views that refuse it when a metric reads them.
    original, anonymized
        Names of the tables or views holding the rows (e.g. a view over
        ``read_parquet(...)``), or the paths of files DuckDB reads as tables (a str or
        ``pathlib.Path``: a Parquet file).
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
    >>> from polars_anon.duckdb import load_hierarchies
    >>> con = duckdb.connect()
    >>> load_hierarchies(con, {"g": pa.Hierarchy.suppression(["F", "M"])})
    >>> _ = con.execute("CREATE TABLE o AS SELECT * FROM (VALUES ('F'), ('M'), ('F')) t(g)")
    >>> _ = con.execute("CREATE TABLE a AS SELECT * FROM (VALUES ('*'), ('*'), ('F')) t(g)")
    >>> metric_pairs(con, "o", "a", ["g"])
    'anon_pairs'
    >>> con.sql("FROM anon_modified_of('anon_pairs', ['g'])").fetchall()
    [(None, 66.66666666666667), ('g', 66.66666666666667)]
    """
    qids = list(qids)
    original, anonymized = _table_name(original, "original"), _table_name(anonymized, "anonymized")
    built = _check_request(con, original, anonymized, qids, key, sensitive, name)
    unbuilt = frozenset(q for q in qids if q not in built)  # counted by with_types
    codes = _Codes(name, qids, {q: built.get(q, 0) for q in qids}, unbuilt).with_types(con, original, anonymized)
    _drop_earlier_parts(con, name)
    s_code, n_s = _sensitive_code(con, name, original, sensitive)
    joined, group, o_code, p_code = _joined(con, codes, original, anonymized, key, s_code)
    raw = duckdb_identifier(f"{name}__raw")
    pairs = _group(con, codes, raw, joined, group, sensitive is not None, n_s)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {duckdb_identifier(name)} AS "
        f"SELECT {codes.decode(o_code, None)} AS o, {codes.decode(p_code, f'{p_code} = {codes.r_all}')} AS p, "
        f"NULL::BIGINT AS s, {p_code} = {codes.r_all} AS suppressed, n::BIGINT AS size FROM {pairs}"
    )
    _check_rows(con, name, original, anonymized, key)
    _cells(con, codes, original, anonymized)
    if sensitive is None:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {duckdb_identifier(name + '_classes')} AS FROM anon_metric_classes_of(?, ?)",
            [name, qids],
        )
        if pairwise and codes.unbuilt:
            _refusing_view(con, codes, "joint")
        elif pairwise:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {duckdb_identifier(name + '_joint')} AS FROM anon_metric_joint_of(?, ?)",
                [name, qids],
            )
    else:
        _classes_and_joint_with_s(con, codes, raw, o_code, p_code, pairwise)
    con.execute(f"DROP TABLE {raw}")
    return name


def _table_name(table: object, what: str) -> str:
    """A table or view name, or a file DuckDB reads as a table: its path as a str or any ``os.PathLike`` (as its text),
    else the refusal naming the parameter `what`."""
    if not is_path(table):
        raise InvalidParameterError(
            f"metric_pairs: {what} must be a table or view name or a file path (a str or pathlib.Path), got "
            f"{type(table).__name__}"
        )
    return os.fspath(table)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [d[0] for d in con.execute(f"SELECT * FROM {duckdb_identifier(table)} LIMIT 0").description]


def _check_request(
    con: duckdb.DuckDBPyConnection,
    original: str,
    anonymized: str,
    qids: list[str],
    key: str | None,
    sensitive: str | None,
    name: str,
) -> dict[str, int]:
    """Refuse bad parameters and missing columns; the node count of each qid's hierarchy, for the qids with one."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise InvalidParameterError(f"name must be letters, digits and underscores (a table name), got {name!r}")
    if not qids:
        raise InvalidParameterError(QIDS_EMPTY())
    if key is not None and key in qids:
        raise InvalidParameterError(f"key {key!r} is also a quasi-identifier; the key must be a row id column")
    if sensitive is not None and sensitive in qids:
        raise InvalidParameterError(f"sensitive {sensitive!r} is also a quasi-identifier; it must be one or the other")
    ensure_registered(con)
    for table, what, names in (
        (original, "qids", qids),
        (anonymized, "qids", qids),
        (original, "key", [key]),
        (anonymized, "key", [key]),
        (original, "sensitive", [sensitive]),
    ):
        columns = _columns(con, table)
        missing = [c for c in names if c is not None and c not in columns]
        if missing:
            raise ColumnNotFoundError(
                COLUMNS_NOT_FOUND(what=what, missing=missing, where=f"table {table!r}", columns=columns)
            )
    sizes = dict(
        con.execute(
            "SELECT hierarchy, count(*) FROM anon_nodes WHERE list_contains(?, hierarchy) GROUP BY ALL", [qids]
        ).fetchall()
    )
    return {q: int(sizes[q]) for q in qids if q in sizes}


@dataclass(frozen=True)
class _Codes:
    """How the tuples are packed: each qid's value is a code in 0..n_nodes (n_nodes: no node, or NULL).

    A qid in `unbuilt` has no hierarchy loaded (published as ranges, sets or means): its nodes are the root (0) and
    its labels in both tables as leaves 1.. in label order, as ``anon_metric_pairs`` numbers them (twin:
    :func:`polars_anon.metrics.data.label_hierarchies`); only the classes metrics may read those codes."""

    name: str
    qids: list[str]
    n_nodes: dict[str, int]
    unbuilt: frozenset[str]

    def __post_init__(self) -> None:
        if self.r_all >= 2**125:
            raise InvalidParameterError(
                f"{len(self.qids)} qids with these hierarchies are too many to pack; metric_pairs takes fewer"
            )

    @property
    def radix(self) -> list[int]:
        return [self.n_nodes[q] + 1 for q in self.qids]

    @property
    def r_all(self) -> int:
        """Codes of a whole tuple; the code r_all marks a suppressed row."""
        return math.prod(self.radix)

    @property
    def big(self) -> bool:
        """The codes need HUGEINT."""
        return self.r_all >= 2**62

    @property
    def one_key(self) -> bool:
        """(original tuple, published tuple) fits one BIGINT."""
        return self.r_all * (self.r_all + 1) < 2**62

    @property
    def strides(self) -> list[int]:
        return [math.prod(self.radix[:i]) for i in range(len(self.qids))]

    @property
    def enums(self) -> list[str]:
        return [duckdb_identifier(f"{self.name}__e{i}") for i in range(len(self.qids))]

    def with_types(self, con: duckdb.DuckDBPyConnection, original: str, anonymized: str) -> _Codes:
        """Create one TEMP ENUM per qid: its hierarchy's labels in node order (enum code = node id), or for a qid
        without one the labels of both tables in label order (enum code + 1 = node id); these codes, counted."""
        n_nodes = dict(self.n_nodes)
        for q, e in zip(self.qids, self.enums):
            if q in self.unbuilt:
                labels = " UNION ".join(
                    f"SELECT {_label(q)} AS v FROM {duckdb_identifier(t)} WHERE {duckdb_identifier(q)} IS NOT NULL"
                    for t in (original, anonymized)
                )
                con.execute(f"CREATE OR REPLACE TEMP TYPE {e} AS ENUM (SELECT v FROM ({labels}) ORDER BY v ASC)")
                n_nodes[q] = 1 + con.execute(f"SELECT len(enum_range(NULL::{e}))").fetchall()[0][0]
            else:
                con.execute(
                    f"CREATE OR REPLACE TEMP TYPE {e} AS ENUM (SELECT label FROM anon_nodes WHERE hierarchy = "
                    f"{duckdb_literal(q)} ORDER BY node ASC)"
                )
        return replace(self, n_nodes=n_nodes)

    def code_exprs(self) -> list[str]:
        """Per qid, the SQL code of its value."""
        kind = "HUGEINT" if self.big else "BIGINT"
        return [
            f"coalesce(enum_code(TRY_CAST({_label(q)} AS {e})){' + 1' if q in self.unbuilt else ''}, {r - 1})::{kind}"
            for q, e, r in zip(self.qids, self.enums, self.radix)
        ]

    def decode(self, column: str, suppressed: str | None) -> str:
        """Node-id list of a packed code; the roots (node 0) where `suppressed` holds."""
        parts, stride = [], 1
        for r in self.radix:
            part = f"({column} // {stride}) % {r}"
            parts.append(f"CASE WHEN {suppressed} THEN 0 ELSE {part} END" if suppressed else part)
            stride *= r
        return "[" + ", ".join(f"({p})::BIGINT" for p in parts) + "]"


def _label(column: str) -> str:
    """SQL of `column`'s label (``anon_label``, the rule of :mod:`polars_anon.labels`)."""
    return f"anon_label({duckdb_identifier(column)}, what := {duckdb_literal(column)})"


def _sensitive_code(con: duckdb.DuckDBPyConnection, name: str, original: str, sensitive: str | None) -> tuple[str, int]:
    """SQL code of the sensitive value (a TEMP ENUM of its values; NULL its own code) and the number of values."""
    if sensitive is None:
        return "NULL::BIGINT", 0
    s_type = duckdb_identifier(f"{name}__s")
    s_col = duckdb_identifier(sensitive)
    con.execute(
        f"CREATE OR REPLACE TEMP TYPE {s_type} AS ENUM "
        f"(SELECT DISTINCT {_label(sensitive)} FROM {duckdb_identifier(original)} WHERE {s_col} IS NOT NULL "
        "ORDER BY 1 ASC)"
    )
    n_s = con.execute(f"SELECT len(enum_range(NULL::{s_type}))").fetchall()[0][0]
    return f"coalesce(enum_code(TRY_CAST({_label(sensitive)} AS {s_type})), {n_s})::BIGINT", n_s


def _joined(
    con: duckdb.DuckDBPyConnection, codes: _Codes, original: str, anonymized: str, key: str | None, s_code: str
) -> tuple[str, str, str, str]:
    """The rows lined up (query text), the group-by columns, and the SQL of the original and published codes."""
    r_all = codes.r_all
    k_col = f", {duckdb_identifier(key)} AS k" if key else ""
    exprs = codes.code_exprs()
    o_codes = ", ".join(f"{c} AS o{i}" for i, c in enumerate(exprs))
    o_side = f"SELECT {o_codes}, {s_code} AS sc{k_col} FROM {duckdb_identifier(original)}"
    a_code = " + ".join(f"{c} * {st}" for c, st in zip(exprs, codes.strides))
    a_side = f"SELECT {a_code} AS pc{k_col} FROM {duckdb_identifier(anonymized)}"
    o_cols = [f"o.o{i}" for i in range(len(exprs))]
    oc = " + ".join(f"{c} * {st}" for c, st in zip(o_cols, codes.strides))
    if key is None:
        n_orig, n_anon = (
            con.execute(f"SELECT count(*) FROM {duckdb_identifier(t)}").fetchall()[0][0] for t in (original, anonymized)
        )
        if n_orig != n_anon:
            raise InputError(
                f"the anonymized table has {n_anon} rows and the original {n_orig}; without a key they are lined up "
                "by position, so suppressed rows must be kept (published as the hierarchy roots). "
                "Pass key='<row id column>' when rows were removed"
            )
    how = "POSITIONAL JOIN" if key is None else "LEFT JOIN"
    pcs = f"coalesce(a.pc, {r_all})"  # R: the row is suppressed (absent from the anonymized table)
    main = [f"{oc} + {pcs} * {r_all} AS key"] if codes.one_key else [f"{oc} AS oc", f"{pcs} AS pcs"]
    joined = (
        f"SELECT {', '.join(main)}, {pcs} AS pc, {', '.join(o_cols)}, o.sc "
        f"FROM ({o_side}) AS o {how} ({a_side}) AS a{' ON a.k = o.k' if key else ''}"
    )
    if codes.one_key:
        return joined, "key", f"(key % {r_all})", f"(key // {r_all})"
    return joined, "oc, pcs", "oc", "pcs"


def _group(
    con: duckdb.DuckDBPyConnection, codes: _Codes, raw: str, joined: str, group: str, with_s: bool, n_s: int
) -> str:
    """Count the rows into TEMP table `raw`; the query text of the (original, published) pairs."""
    if not with_s:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT {group}, count(*) AS n FROM ({joined}) GROUP BY {group}"
        )
        return raw
    # one group per (o, p, s); the pairs keep (o, p) (fewer rows, lists built once per pair), the
    # classes and the contingency tables with s are summed from the codes (_classes_and_joint_with_s)
    if (
        codes.one_key and codes.r_all * (codes.r_all + 1) * (n_s + 1) < 2**62
    ):  # s packed into the key: one integer to group on
        w = n_s + 1
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT ks // {w} AS key, ks % {w} AS sc, n "
            f"FROM (SELECT key * {w} + sc AS ks, count(*) AS n FROM ({joined}) GROUP BY ks)"
        )
    else:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {raw} AS SELECT {group}, sc, count(*) AS n FROM ({joined}) "
            f"GROUP BY {group}, sc"
        )
    return f"(SELECT {group}, sum(n) AS n FROM {raw} GROUP BY {group})"


def _check_rows(con: duckdb.DuckDBPyConnection, name: str, original: str, anonymized: str, key: str | None) -> None:
    """Refuse an empty original table and, with a key, a key repeated in the anonymized table."""
    (n_pairs,) = con.execute(f"SELECT count(*) FROM {duckdb_identifier(name)}").fetchall()[0]
    if n_pairs == 0:
        raise InputError(EMPTY_TABLE(table=original, task="measure"))
    if key is not None:
        (total,) = con.execute(f"SELECT coalesce(sum(size), 0) FROM {duckdb_identifier(name)}").fetchall()[0]
        (n_orig,) = con.execute(f"SELECT count(*) FROM {duckdb_identifier(original)}").fetchall()[0]
        if total != n_orig:
            raise InvalidParameterError(KEY_NOT_UNIQUE(key=key, total=total, n_orig=n_orig))
        _check_keys(con, original, anonymized, key)


def _check_keys(con: duckdb.DuckDBPyConnection, original: str, anonymized: str, key: str) -> None:
    """Refuse a key repeated or null in the original table, and anonymized rows whose key the original lacks (as
    :func:`polars_anon.metrics.data.prepare` and ``anon_metric_pairs``)."""
    o, a, k = duckdb_identifier(original), duckdb_identifier(anonymized), duckdb_identifier(key)
    shared, nulls, strays = con.execute(
        f"SELECT (SELECT coalesce(sum(c), 0) FROM (SELECT count(*) AS c FROM {o} GROUP BY {k} HAVING count(*) > 1)), "
        f"(SELECT count(*) - count({k}) FROM {o}), "
        f"(SELECT count(*) FROM {a} AS x ANTI JOIN {o} AS y ON x.{k} = y.{k})"
    ).fetchall()[0]
    if shared:
        raise InvalidParameterError(KEY_SHARED(key=key, rows=int(shared)))
    if nulls:
        raise InvalidParameterError(KEY_NULL(key=key, rows=int(nulls)))
    if strays:
        raise InvalidParameterError(KEY_STRAY(key=key, rows=int(strays)))


def _cells(con: duckdb.DuckDBPyConnection, codes: _Codes, original: str, anonymized: str) -> None:
    """Make ``<name>_cells``; refuse a value that is null, not a leaf (original) or not a node (published).

    With a qid without a hierarchy, ``<name>_cells`` is a view that refuses it when read
    (:func:`_refusing_view`) and the values are checked on the pairs' codes (:func:`_unbuilt_levels`)."""
    cells = duckdb_identifier(codes.name + "_cells")
    if codes.unbuilt:
        _refusing_view(con, codes, "cells")
        levels = _unbuilt_levels(codes)
    else:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {cells} AS FROM anon_metric_cells_of(?, ?)", [codes.name, codes.qids]
        )
        levels = cells
    bad = con.execute(
        f"SELECT i, bool_or(l_level IS NULL OR l_level > 0), bool_or(p_level IS NULL) FROM {levels} "
        "WHERE l_level IS NULL OR l_level > 0 OR p_level IS NULL GROUP BY i ORDER BY i ASC"
    ).fetchall()
    if bad:
        i, bad_o, _ = bad[0]
        _refuse(
            con, codes.qids[i], original if bad_o else anonymized, "original" if bad_o else "anonymized", codes.enums[i]
        )


def _unbuilt_levels(codes: _Codes) -> str:
    """Query text of ``<name>_cells``' columns i, l_level and p_level without the hierarchy facts a qid without one
    lacks: the level of each cell's leaf and published node in its hierarchy, NULL where the code is no node; a qid
    without a hierarchy has its labels as leaves (level 0), so only a null is no node."""
    q_list = "[" + ", ".join(duckdb_literal(q) for q in codes.qids) + "]"
    missing = "[" + ", ".join(str(codes.n_nodes[q]) for q in codes.qids) + "]"
    unbuilt = "[" + ", ".join("true" if q in codes.unbuilt else "false" for q in codes.qids) + "]"
    return (
        "(SELECT u.i, CASE WHEN u.un THEN CASE WHEN u.leaf < u.miss THEN 0 END ELSE l.level END AS l_level, "
        "CASE WHEN u.un THEN CASE WHEN u.pub < u.miss THEN 0 END ELSE p.level END AS p_level "
        f"FROM (SELECT DISTINCT r.i, {q_list}[r.i + 1] AS q, {unbuilt}[r.i + 1] AS un, {missing}[r.i + 1] AS miss, "
        f"pr.o[r.i + 1] AS leaf, pr.p[r.i + 1] AS pub FROM {duckdb_identifier(codes.name)} AS pr "
        f"CROSS JOIN range({len(codes.qids)}) AS r(i)) AS u "
        "LEFT JOIN anon_nodes AS l ON NOT u.un AND l.hierarchy = u.q AND l.node = u.leaf "
        "LEFT JOIN anon_nodes AS p ON NOT u.un AND p.hierarchy = u.q AND p.node = u.pub)"
    )


def _refusing_view(con: duckdb.DuckDBPyConnection, codes: _Codes, part: str) -> None:
    """``<name>_<part>`` (cells or joint) as a TEMP VIEW over ``anon_metric_<part>_of``, for pairs with a qid without
    a hierarchy: the metrics that read it refuse that qid in one line naming it and the classes metrics
    (``anon_msg_no_hierarchy_metric``), as ``pa.metrics.compute`` refuses them; the classes metrics never read it."""
    q_list = "[" + ", ".join(duckdb_literal(q) for q in codes.qids) + "]"
    con.execute(
        f"CREATE TEMP VIEW {duckdb_identifier(f'{codes.name}_{part}')} AS "
        f"FROM anon_metric_{part}_of({duckdb_literal(codes.name)}, {q_list})"
    )


def _drop_earlier_parts(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop ``<name>_cells`` and ``<name>_joint`` left by an earlier call of the same `name`, tables or the views
    :func:`_refusing_view` made: DuckDB replaces neither kind of object by the other, and this call makes each
    part again (or none, for ``_joint`` without `pairwise`)."""
    for part in ("cells", "joint"):
        found = con.execute(
            "SELECT 'VIEW' FROM duckdb_views() WHERE temporary AND view_name = $1 "
            "UNION ALL SELECT 'TABLE' FROM duckdb_tables() WHERE temporary AND table_name = $1",
            [f"{name}_{part}"],
        ).fetchall()
        for (kind,) in found:
            con.execute(f"DROP {kind} {duckdb_identifier(f'{name}_{part}')}")


def _classes_and_joint_with_s(
    con: duckdb.DuckDBPyConnection, codes: _Codes, raw: str, o_code: str, p_code: str, pairwise: bool
) -> None:
    """The classes from (published tuple, s); the contingency tables with s from (original value, s) per qid."""
    name, qids, r_all = codes.name, codes.qids, codes.r_all
    ps = duckdb_identifier(f"{name}__ps")
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {ps} AS SELECT NULL::BIGINT[] AS o, {codes.decode('pc', f'pc = {r_all}')} AS p, "
        f"sc::BIGINT AS s, pc = {r_all} AS suppressed, n::BIGINT AS size "
        f"FROM (SELECT {p_code} AS pc, sc, sum(n) AS n FROM {raw} GROUP BY ALL)"
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {duckdb_identifier(name + '_classes')} AS FROM anon_metric_classes_of(?, ?)",
        [f"{name}__ps", qids],
    )
    if pairwise and codes.unbuilt:
        _refusing_view(con, codes, "joint")
    elif pairwise:
        m = len(qids)
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {duckdb_identifier(name + '_joint')} AS "
            f"SELECT * FROM anon_metric_joint_of(?, ?) UNION ALL "
            f"SELECT r.i AS x, {m}::BIGINT AS y, 'o' AS side, (({o_code} // ?[r.i + 1]) % ?[r.i + 1])::BIGINT AS va, "
            f"sc::BIGINT AS vb, sum(n)::BIGINT AS nab FROM {raw} CROSS JOIN range({m}) AS r(i) GROUP BY ALL UNION ALL "
            f"SELECT r.i AS x, {m}::BIGINT AS y, 'p' AS side, ps.p[r.i + 1] AS va, ps.s AS vb, "
            "sum(ps.size)::BIGINT AS nab "
            f"FROM {ps} AS ps CROSS JOIN range({m}) AS r(i) GROUP BY ALL",
            [name, qids, codes.strides, codes.radix],
        )
    con.execute(f"DROP TABLE {ps}")


def _refuse(con: duckdb.DuckDBPyConnection, q: str, table: str, where: str, enum: str) -> None:
    """Name the nulls or the values of column `q` that are not nodes (or, originally, not leaves)."""
    col = duckdb_identifier(q)
    if con.execute(f"SELECT count(*) FROM {duckdb_identifier(table)} WHERE {col} IS NULL").fetchall()[0][0]:
        raise NullValueError(
            f"column {q!r} in the {where} table has null values; metrics need every value, fill or drop them"
        )
    if where == "original":
        rows = con.execute(
            f"SELECT DISTINCT t.v FROM (SELECT {_label(q)} AS v FROM {duckdb_identifier(table)}) AS t "
            "LEFT JOIN anon_nodes AS n ON n.hierarchy = ? AND n.label = t.v WHERE n.node IS NULL OR n.level > 0 "
            "ORDER BY t.v ASC NULLS LAST LIMIT 6",
            [q],
        ).fetchall()
        kind = "leaves"
    else:
        rows = con.execute(
            f"SELECT DISTINCT {_label(q)} AS v FROM {duckdb_identifier(table)} WHERE TRY_CAST({_label(q)} AS "
            f"{enum}) IS NULL ORDER BY v ASC NULLS LAST LIMIT 6"
        ).fetchall()
        kind = "nodes"
    raise ValueNotInHierarchyError(
        f"column {q!r} in the {where} table: values {preview([r[0] for r in rows])} are not {kind} of its hierarchy; "
        "check the hierarchy or the columns compared"
    )
