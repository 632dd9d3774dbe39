"""Encodings of a generalized table for machine learning [paper 000 §II-C, §III-A].

Every quasi-identifier becomes a block of numeric columns, one per hierarchy node,
named ``<qid>_<node label>`` and ordered by level, then depth-first (leaves first,
the root last), so the output schema is known from the hierarchies before any data
is read (:func:`encoded_columns`).

``oneclass``
    1 at the published node only (Table IIa).
``fillparent``
    1 at the published node and every ancestor of it (Table IIb).
``fillchild``
    1 at the published node and every descendant of it (Table IIc).
``proportional``
    the share of the class's original values that are equal to or generalize into
    the node, M(l, Q_val) = |S(Q, val)| / |C| [paper 000 eq. 1, Table III]. Needs
    the original leaves: a row-aligned ``original`` frame, or a class id column.
``setbinary``
    one column per *leaf*: 1 when the leaf lies under the published node
    [paper 003 §3.4.1] (the leaf columns of ``fillchild``).

Two more encodings map a generalized value back to one leaf [paper 002 §3.3]
(the qid columns stay, holding leaf labels):

``random``
    a leaf under the published node, uniformly.
``statistical``
    a leaf under the published node, weighted by the leaf frequencies of the
    original table (the whole table, not the class: paper 002 releases "a frequency
    distribution of the QID values from the original data"; that is the reading
    taken). Leaves never seen get weight 0 unless a node covers only such leaves,
    then the draw is uniform.

The random draws come from a counter-based generator (SplitMix64 of the row
number, the seed and the column position) written as Polars expressions, so the
same input and seed give the same bytes and the plan streams.

Proportional entries are computed relationally: the (class, original leaf) counts
are joined to the hierarchy ``closure``, summed per (class, ancestor), divided by
the class size, pivoted wide over the known column list (``LazyFrame.pivot`` with
``on_columns``, which stays lazy) and joined back to the rows on the class key.
The indicator encodings join each qid to a small per-node lookup table (one row per
hierarchy node) built from the hierarchy's ``paths``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from polars_anon._passes import collect_apart
from polars_anon._validate import (
    as_lazy,
    check_columns,
    check_mapping,
    check_name,
    check_seed,
    is_integer,
    not_in_hierarchy,
)
from polars_anon.errors import (
    ColumnNotFoundError,
    InvalidParameterError,
    NullValueError,
    ValueNotInHierarchyError,
    preview,
)
from polars_anon.generalize import generalize_partition
from polars_anon.hierarchy import Hierarchy, check_hierarchies, check_hierarchy
from polars_anon.labels import label_expr, label_exprs, label_series, refuse_beyond_text_in
from polars_anon.messages import ENCODE_NOT_IN_HIERARCHY, NOT_UNDER_PUBLISHED
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = [
    "ENCODINGS",
    "LAYOUTS",
    "MAPPINGS",
    "READS_ORIGINALS",
    "REPRESENTATIONS",
    "EncodeOptions",
    "EncodingJoin",
    "EncodingPlan",
    "Layout",
    "apply_plan",
    "check_published_columns",
    "encode",
    "encoded_columns",
    "indicator_table",
    "leaf_frequencies",
    "map_to_leaves",
    "node_order",
    "output_columns",
    "plan_encoding",
    "plan_from_map",
]

Representation = Literal["proportional", "fillparent", "fillchild", "oneclass", "setbinary"]
MappingKind = Literal["random", "statistical"]
REPRESENTATIONS: tuple[str, ...] = ("proportional", "fillparent", "fillchild", "oneclass", "setbinary")
"""The wide encodings (one numeric column per node, or per leaf for setbinary)."""
MAPPINGS: tuple[str, ...] = ("random", "statistical")
"""The encodings that map a generalized value back to one leaf [paper 002 §3.3]."""
ENCODINGS: tuple[str, ...] = REPRESENTATIONS + MAPPINGS
"""Every name accepted by :func:`encode` (case-insensitive: ``fillParent`` works)."""

Layout = Literal["wide", "classes"]
LAYOUTS: tuple[str, ...] = ("wide", "classes")
"""How :func:`polars_anon.encoded_io.write_encoded` lays an encoding out on disk."""

READS_ORIGINALS: tuple[str, ...] = ("proportional", "statistical")
"""The encodings computed from each class's original values (``original=``), not from the published table alone:
they show what the published nodes hide (a class of three 23-year-olds published as "20-29" encodes as
``age_23 = 1.0`` under ``proportional`` and as ``'23'`` under ``statistical``), so they are outside the k-anonymity
guarantee. A job's report flags them (``encodings.<name>.reads_originals``) and the CLI warns."""
_MASK64 = (1 << 64) - 1


def canonical(encoding: object) -> str:
    """Normalize an encoding name (``"fillParent"`` -> ``"fillparent"``); refuse unknown ones.

    >>> canonical("oneClass")
    'oneclass'
    """
    name = str(encoding).lower().replace("_", "").replace("-", "")
    if name not in ENCODINGS:
        raise InvalidParameterError(
            f"encoding must be one of {list(ENCODINGS)}, got {encoding!r}; "
            "for example 'proportional' [paper 000 §III-A]"
        )
    return name


@dataclass(frozen=True)
class EncodeOptions:
    """How to encode, checked once: what :func:`encode`, :func:`~polars_anon.encoded_io.write_encoded`, the
    namespace, the job runner and the CLI take as keywords or keys, built once at that entry and handed on.

    Every value is checked here (the message names the parameter); the representation is normalized
    (``"fillParent"`` -> ``"fillparent"``), `original` becomes a LazyFrame and `dtype` a dtype instance.
    `layout` and `chunk_rows` concern writing (:func:`~polars_anon.encoded_io.write_encoded`). See :func:`encode`
    for the meaning of each.

    >>> EncodeOptions("fillParent", seed=3).representation
    'fillparent'
    >>> EncodeOptions(seed="1")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: seed must be an integer >= 0, got '1'
    """

    representation: str = "proportional"
    original: pl.LazyFrame | pl.DataFrame | None = field(default=None, compare=False)
    class_col: str | None = None
    dtype: pl.DataType | type[pl.DataType] = pl.Float32
    seed: int = 0
    validate: bool = True
    layout: Layout = "wide"
    chunk_rows: int | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__  # frozen: normalized once, here
        put(self, "representation", canonical(self.representation))
        if self.original is not None:
            put(self, "original", as_lazy(self.original))
        if self.class_col is not None and not isinstance(self.class_col, str):
            raise InvalidParameterError(f"class_col must be a column name (a string), got {self.class_col!r}")
        put(self, "dtype", _check_dtype(self.dtype, self.representation))
        put(self, "seed", check_seed(self.seed))  # a Python int: a NumPy one is taken, and reported as JSON
        if not isinstance(self.validate, bool):
            raise InvalidParameterError(f"validate must be True or False, got {self.validate!r}")
        if self.layout not in LAYOUTS:
            raise InvalidParameterError(f"layout must be one of {list(LAYOUTS)}, got {self.layout!r}")
        chunk = self.chunk_rows
        if chunk is not None and (not is_integer(chunk) or chunk < 1):
            raise InvalidParameterError(f"chunk_rows must be an integer >= 1, got {chunk!r}")
        if chunk is not None:
            put(self, "chunk_rows", int(chunk))

    @property
    def original_rows(self) -> pl.LazyFrame | None:
        """`original` as a LazyFrame (None when not given)."""
        return None if self.original is None else self.original.lazy()

    @property
    def output_dtype(self) -> pl.DataType:
        """`dtype` as a dtype instance (``pl.Float32()``)."""
        return self.dtype if isinstance(self.dtype, pl.DataType) else self.dtype()


def node_order(hierarchy: Hierarchy, representation: str = "proportional") -> np.ndarray:
    """Node ids in column order: by level, then depth-first (leaves only for setbinary).

    >>> from polars_anon import Hierarchy
    >>> h = Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})
    >>> [h.label_of(i) for i in node_order(h)]
    ['a', 'b', 'c', 'A', '*']
    """
    ids = np.arange(hierarchy.n_nodes)
    if canonical(representation) == "setbinary":
        return ids[hierarchy.is_leaf]
    return ids[np.lexsort((ids, hierarchy.level))]


def encoded_columns(qid: str, hierarchy: Hierarchy, representation: str = "proportional") -> list[str]:
    """The column names of one qid's block: ``<qid>_<node label>`` in :func:`node_order`.

    Mappings (``random``, ``statistical``) keep the qid column itself.

    >>> from polars_anon import Hierarchy
    >>> encoded_columns("g", Hierarchy.from_dict({"*": ["M", "F"]}))
    ['g_M', 'g_F', 'g_*']
    """
    check_name(qid, "qid")
    check_hierarchy(hierarchy)
    if canonical(representation) in MAPPINGS:
        return [qid]
    return [f"{qid}_{hierarchy.label_of(i)}" for i in node_order(hierarchy, representation)]


def output_columns(
    columns: Sequence[str], hierarchies: Mapping[str, Hierarchy], representation: str = "proportional"
) -> list[str]:
    """The output schema of :func:`encode`: each qid column replaced in place by its block.

    Raises :class:`InvalidParameterError` when an encoded name collides with another
    column or with another block.

    >>> from polars_anon import Hierarchy
    >>> output_columns(["id", "g", "y"], {"g": Hierarchy.from_dict({"*": ["M", "F"]})}, "oneclass")
    ['id', 'g_M', 'g_F', 'g_*', 'y']
    """
    out: list[str] = []
    for c in columns:
        out.extend(encoded_columns(c, hierarchies[c], representation) if c in hierarchies else [c])
    seen: set[str] = set()
    dup = [c for c in out if c in seen or seen.add(c)]  # type: ignore[func-returns-value]
    if dup:
        raise InvalidParameterError(
            f"encoded column names collide: {preview(sorted(set(dup)))} appear twice "
            "(a '<qid>_<node label>' name equals another column or another qid's name); "
            "rename the column before encoding"
        )
    return out


def indicator_table(
    qid: str, hierarchy: Hierarchy, representation: str, dtype: pl.DataType | type[pl.DataType] = pl.Float32
) -> pl.DataFrame:
    """Lookup table of an indicator encoding: one row per node (``__anon_label``) and its block.

    This is Table II of paper 000 for ``oneclass``, ``fillparent`` and ``fillchild``
    (and the paper 003 §3.4.1 tuple for ``setbinary``), built from the hierarchy's
    ``paths`` (node, ancestor) pairs.

    >>> from polars_anon import Hierarchy
    >>> t = indicator_table("g", Hierarchy.from_dict({"*": ["M", "F"]}), "fillparent")
    >>> t.row(0), t.row(2)
    (('*', 0.0, 0.0, 1.0), ('F', 0.0, 1.0, 1.0))
    """
    rep = canonical(representation)
    if rep not in {"oneclass", "fillparent", "fillchild", "setbinary"}:
        raise InvalidParameterError(f"indicator_table: {rep!r} is not an indicator encoding")
    order = node_order(hierarchy, rep)
    names = encoded_columns(qid, hierarchy, rep)
    if rep == "oneclass":  # a node -> itself
        row = column = np.arange(hierarchy.n_nodes)
    else:
        paths = hierarchy.paths
        node, ancestor = paths["node"].to_numpy(), paths["ancestor"].to_numpy()
        # fillparent: a published node -> its ancestors; fillchild / setbinary: -> its descendants (setbinary: leaves)
        row, column = (node, ancestor) if rep == "fillparent" else (ancestor, node)
    position = np.full(hierarchy.n_nodes, -1, dtype=np.int64)  # node id -> its column (-1: not a column)
    position[order] = np.arange(len(order))
    keep = position[column] >= 0
    marks = np.zeros((hierarchy.n_nodes, len(names)), dtype=np.uint8)  # row: node id
    marks[row[keep], position[column[keep]]] = 1
    # one frame from the matrix (not a pivot of the pairs: several queries, ~1 ms per call, and encode calls it per
    # qid at every call)
    wide = pl.from_numpy(marks, schema=names, orient="row").select(pl.all().cast(dtype))
    return wide.insert_column(0, pl.Series("__anon_label", hierarchy.labels, dtype=pl.String))


def _cast_qids(lf: pl.LazyFrame, qids: Sequence[str]) -> pl.LazyFrame:
    return lf.with_columns(label_exprs(lf.collect_schema(), qids))


def _check_nodes(published: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy], what: str, leaves_only: bool) -> None:
    """One query: nulls and values that are not nodes (or not leaves) of their hierarchy (their labels:
    :func:`~polars_anon.labels.label_series`)."""
    qids = list(hierarchies)
    frames = collect_apart([published.select(pl.col(q).unique()) for q in qids])  # materializes: distinct values
    for q, f in zip(qids, frames):
        h = hierarchies[q]
        values = label_series(f[q]).unique()
        if values.null_count():
            raise NullValueError(
                f"column {q!r} of the {what} table has null values; encodings need a hierarchy node in every row "
                "(anonymize with null='suppress' or drop those rows)"
            )
        allowed = h.leaf_labels if leaves_only else h.labels
        missing = values.filter(~values.is_in(allowed)).sort().to_list()
        if missing:
            raise _outside(q, what, missing, leaves_only)


def _check_class_ids(frame: pl.LazyFrame, class_col: str, what: str) -> None:
    """Refuse a null class id in `class_col` of the `what` table (its row would join no class, and its qids would
    be published as nulls: the refusal named the qid, not the class column)."""
    nulls = frame.select(pl.col(class_col).null_count()).collect().item()  # materializes: one row
    if nulls:
        raise NullValueError(
            f"class_col {class_col!r} of the {what} table has {nulls:,} null value{'s' if nulls != 1 else ''}; "
            "every row needs the id of its class (fill them or drop those rows)"
        )


def _outside(q: str, what: str, missing: Sequence[object], leaves_only: bool) -> ValueNotInHierarchyError:
    """The refusal of values of `q` outside its hierarchy: one in the words ``anon_encode_classes`` uses too."""
    if len(missing) == 1:
        kind = "a leaf" if leaves_only else "a node"
        return ValueNotInHierarchyError(ENCODE_NOT_IN_HIERARCHY(column=q, what=what, value=missing[0], kind=kind))
    kind = "leaves" if leaves_only else "nodes"
    return ValueNotInHierarchyError(
        f"column {q!r} of the {what} table: {not_in_hierarchy(missing, kind)}; encode with the hierarchies "
        "the table was anonymized with"
    )


def _check_aligned(published: pl.LazyFrame, original: pl.LazyFrame, rep: str) -> None:
    """Row-aligned frames have as many rows (a suppressed row breaks the alignment)."""
    n_pub, n_orig = (f.item() for f in pl.collect_all([published.select(pl.len()), original.select(pl.len())]))
    if n_pub != n_orig:
        raise InvalidParameterError(
            f"representation {rep!r}: original has {n_orig:,} rows but the published table has {n_pub:,}; "
            "original must be row-aligned with the published rows (rows suppressed on publishing break that: encode "
            "within the job "
            "with max_suppressed = 0, or give both frames a shared class_col)"
        )


def _check_truthful(pairs: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy], published_of: Mapping[str, str]) -> None:
    """Each original leaf must generalize into its row's published value (checked on distinct pairs)."""
    for i, (q, h) in enumerate(hierarchies.items()):
        leaf = f"__anon_leaf_{i}"
        pub = published_of[q]
        closure = pl.LazyFrame(
            {
                "__anon_l": [h.label_of(x) for x in h.closure["leaf"]],
                "__anon_a": [h.label_of(x) for x in h.closure["ancestor"]],
            }
        )
        bad = (
            pairs.select(pl.col(pub).alias("__anon_p"), pl.col(leaf).alias("__anon_l"))
            .unique()
            .join(closure, on="__anon_l", how="left")
            .group_by("__anon_p", "__anon_l")
            .agg((pl.col("__anon_a") == pl.col("__anon_p")).any().alias("__anon_ok"))
            .filter(~pl.col("__anon_ok"))
            .sort("__anon_p", "__anon_l")
            .head(5)
            .collect()  # materializes: at most 5 offending pairs
        )
        if bad.height:
            shown = [f"{l!r} -> {p!r}" for p, l in bad.select("__anon_p", "__anon_l").rows()]
            raise InvalidParameterError(NOT_UNDER_PUBLISHED(column=q, pairs=", ".join(shown)))


def encode(
    published: pl.LazyFrame | pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    representation: str = "proportional",
    *,
    original: pl.LazyFrame | pl.DataFrame | None = None,
    class_col: str | None = None,
    dtype: pl.DataType | type[pl.DataType] = pl.Float32,
    seed: int = 0,
    validate: bool = True,
) -> pl.LazyFrame:
    """Encode the quasi-identifiers of a generalized table for machine learning.

    Parameters
    ----------
    published
        The published (generalized) table; each qid column holds hierarchy node
        labels. Other columns pass through untouched and in place.
    hierarchies
        qid -> :class:`~polars_anon.Hierarchy` (the qids to encode).
    representation
        One of :data:`ENCODINGS`: ``proportional`` (default), ``fillparent``,
        ``fillchild``, ``oneclass``, ``setbinary``, ``random``, ``statistical``.
    original
        The original rows, needed by ``proportional`` and ``statistical``:
        row-aligned with `published` (same count and order: what
        :func:`polars_anon.anonymize` publishes when nothing is suppressed) when
        `class_col` is None; otherwise any order, carrying `class_col`.
    class_col
        The class id column. With `original`, both frames carry it and classes are
        defined by it. Without `original`, `published` is a *partition frame*: its qid
        columns hold the original leaves and `class_col` the class of each row; the
        published values are then each class's lowest common ancestors. When
        None, a class is a distinct published qid tuple [paper 000 §III-A].
    dtype
        Numeric dtype of the encoded columns (Float32 by default).
    seed
        Seed of the ``random`` and ``statistical`` draws.
    validate
        Check first, in one query each, that published values are hierarchy nodes,
        original values are leaves and lie under their published value.

    Returns
    -------
    pl.LazyFrame
        `published` with each qid column replaced by its block
        (:func:`output_columns`), or, for a mapping, by a leaf label.

    Raises
    ------
    InvalidParameterError, ColumnNotFoundError, ValueNotInHierarchyError, NullValueError

    References
    ----------
    [paper 000 §II-C, §III-A, Table II, Table III], [paper 002 §3.3], [paper 003 §3.4.1]

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> g = Hierarchy.from_dict({"*": ["M", "F"]})
    >>> pub = pl.DataFrame({"g": ["*", "*", "*"]})
    >>> orig = pl.DataFrame({"g": ["M", "F", "F"]})
    >>> [round(x, 4) for x in encode(pub, {"g": g}, "proportional", original=orig).collect().row(0)]
    [0.3333, 0.6667, 1.0]
    >>> encode(pub, {"g": g}, "fillchild").collect().row(0)
    (1.0, 1.0, 1.0)
    """
    options = EncodeOptions(representation, original, class_col, dtype, seed, validate)
    plan = plan_encoding(published, hierarchies, options)
    return apply_plan(plan.rows, plan.joins, plan.out_names)


def check_published_columns(published: pl.LazyFrame, qids: Sequence[str], class_col: str | None) -> list[str]:
    """The columns of the published table an encoding reads: every qid, and `class_col` (when given) beside them,
    not one of them; returns the qids. The first check of the data, in :func:`plan_encoding` and in the command
    line's ``encode`` before the original file is read (as every command checks its table's columns first).

    >>> check_published_columns(pl.LazyFrame({"age": ["1"], "id": [0]}), ["age"], "age")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: class_col 'age' is also a qid; it must be a separate column
    """
    names = check_columns(published, qids, "qids")
    if class_col is not None:
        check_columns(published, [class_col], "class_col")
        if class_col in names:
            raise InvalidParameterError(f"class_col {class_col!r} is also a qid; it must be a separate column")
    return names


def plan_encoding(
    published: pl.LazyFrame | pl.DataFrame, hierarchies: Mapping[str, Hierarchy], options: EncodeOptions
) -> EncodingPlan:
    """Check the inputs against `options` and return the rows and the joins that encode them."""
    rep, class_col, dtype, validate = options.representation, options.class_col, options.output_dtype, options.validate
    lf = as_lazy(published)
    hierarchies = check_hierarchies(hierarchies)
    if not hierarchies:
        raise InvalidParameterError("hierarchies is empty; give at least one qid -> Hierarchy")
    qids = check_published_columns(lf, list(hierarchies), class_col)
    names_in = lf.collect_schema().names()
    out_names = output_columns(names_in, hierarchies, rep)
    orig = options.original_rows
    if orig is not None:
        check_columns(orig, qids, "qids of original")
    if not validate:  # validate refuses them below; labelled lazily (_cast_qids), such a date panicked at collect
        for rows in (lf, orig) if orig is not None else (lf,):
            refuse_beyond_text_in(rows, qids)
    if orig is not None:
        if class_col is not None:
            check_columns(orig, [class_col], "class_col of original")
            if validate:
                _check_class_ids(lf, class_col, "published")
                _check_class_ids(orig, class_col, "original")
        elif validate:
            _check_aligned(lf, orig, rep)
    elif class_col is not None:  # a partition frame: original leaves + class ids
        if validate:
            _check_class_ids(lf, class_col, "partition")
            _check_nodes(lf, hierarchies, "partition", leaves_only=True)
        orig = lf
        lf = generalize_partition(_cast_qids(lf, qids), hierarchies, class_col)
    if rep in READS_ORIGINALS and orig is None:
        raise InvalidParameterError(
            f"representation {rep!r} needs the original values: pass original= (row-aligned with the published "
            "rows, or sharing class_col), or a partition frame with class_col="
        )
    if validate:  # on the values as given: _check_nodes labels them itself (a date beyond text refused, not cast)
        _check_nodes(lf, hierarchies, "published", leaves_only=False)
        if orig is not None:
            _check_nodes(orig, hierarchies, "original", leaves_only=True)
    lf = _cast_qids(lf, qids)
    if rep in MAPPINGS:
        freqs = None
        if rep == "statistical":
            assert orig is not None  # refused above: "statistical" is in READS_ORIGINALS
            freqs = _leaf_frequencies(orig, hierarchies)  # its dates refused or checked above
        return EncodingPlan(
            map_to_leaves(lf, hierarchies, rep, frequencies=freqs, seed=options.seed, validate=False), [], out_names
        )
    if rep == "proportional":
        assert orig is not None
        joins = _proportional(lf, _cast_qids(orig, qids), hierarchies, class_col, dtype, validate)
    else:
        joins = [
            EncodingJoin(indicator_table(q, h, rep, dtype).lazy(), [q], ["__anon_label"])
            for q, h in hierarchies.items()
        ]
    return EncodingPlan(lf, joins, out_names)


@dataclass
class EncodingPlan:
    """An encoding before it runs: the rows, the per-class (or per-node) joins back, the output columns.

    :func:`apply_plan` runs it lazily; :mod:`polars_anon.encoded_io` writes it in either layout.
    """

    rows: pl.LazyFrame
    joins: list[EncodingJoin]
    out_names: list[str]
    n_rows: int | None = None
    """The rows, when known without reading them (:func:`plan_from_map`)."""
    tuples: pl.DataFrame | None = None
    """The distinct published qid tuples, when known without reading the rows (:func:`plan_from_map`)."""


def _check_dtype(dtype: object, representation: str) -> pl.DataType:
    """`dtype` as an instance: numeric or Boolean for the 0/1 columns, a float for ``proportional``'s shares (an
    integer, Boolean or Decimal type cut 1/3 to 0: hunt33)."""
    try:
        dt = dtype() if isinstance(dtype, type) else dtype
        ok = isinstance(dt, pl.DataType) and (dt.is_numeric() or dt == pl.Boolean)
    except TypeError:
        ok = False
    if not ok:
        raise InvalidParameterError(f"dtype must be a numeric Polars dtype such as pl.Float32, got {dtype!r}")
    if representation == "proportional" and not dt.is_float():  # type: ignore[union-attr]
        raise InvalidParameterError(
            f"representation 'proportional' holds shares of a class (1/3, 2/3): dtype must be pl.Float32 or "
            f"pl.Float64, got {dt!r}"
        )
    return dt  # type: ignore[return-value]


@dataclass
class EncodingJoin:
    """One join back: `right` (one row per class or per node) on `left_on` = `right_on`."""

    right: pl.LazyFrame
    left_on: list[str]
    right_on: list[str]


def apply_plan(
    lf: pl.LazyFrame | pl.DataFrame, joins: Sequence[EncodingJoin], out_names: Sequence[str]
) -> pl.LazyFrame:
    """Join `lf` to every table of `joins` (row order kept) and select `out_names`."""
    out = lf.lazy()
    for j in joins:
        out = out.join(j.right.lazy(), left_on=j.left_on, right_on=j.right_on, how="left", maintain_order="left")
    return out.select(out_names)


def _proportional(
    lf: pl.LazyFrame,
    orig: pl.LazyFrame,
    hierarchies: Mapping[str, Hierarchy],
    class_col: str | None,
    dtype: pl.DataType,
    validate: bool,
) -> list[EncodingJoin]:
    """M(l, Q_val) = |S(Q, val)| / |C| per class, joined back on the class key [paper 000 eq. 1]."""
    qids = list(hierarchies)
    leaf_cols = [f"__anon_leaf_{i}" for i in range(len(qids))]
    published_of = {q: f"__anon_key_{i}" for i, q in enumerate(qids)}  # each row's published values, to check
    if class_col is None:  # row-aligned: the class is the published tuple
        key = list(published_of.values())
        pairs = pl.concat(
            [
                lf.select(pl.col(q).alias(k) for q, k in published_of.items()),
                orig.select(pl.col(q).alias(c) for q, c in zip(qids, leaf_cols)),
            ],
            how="horizontal",
        )
        join_left: list[str] = qids
        checked = pairs
    else:
        key = join_left = [class_col]
        pairs = orig.select(class_col, *(pl.col(q).alias(c) for q, c in zip(qids, leaf_cols)))
        checked = _classes_published(lf, pairs, class_col, published_of) if validate else pairs
    if validate:
        _check_truthful(checked, hierarchies, published_of)
    counts = pairs.group_by(*key, *leaf_cols).agg(pl.len().cast(pl.Int64).alias("__anon_n"))
    return [EncodingJoin(_proportional_table(counts, key, hierarchies, dtype), join_left, key)]


def _classes_published(
    lf: pl.LazyFrame, pairs: pl.LazyFrame, class_col: str, published_of: Mapping[str, str]
) -> pl.LazyFrame:
    """The original rows `pairs` (`class_col` and the leaves) beside their class's published values (named by
    `published_of`), after refusing published rows whose class has no original row (hunt33: they were encoded as
    nulls, where the classes layout refuses them)."""
    published = lf.select(class_col, *(pl.col(q).alias(k) for q, k in published_of.items())).unique()
    orphans = lf.join(pairs.select(class_col).unique(), on=class_col, how="anti").select(pl.len()).collect().item()
    if orphans:
        raise InvalidParameterError(
            f"{orphans:,} published rows have a class_col {class_col!r} value that no row of original has: "
            "original must hold every published class's rows"
        )
    return pairs.join(published, on=class_col, how="inner")


def _proportional_table(
    counts: pl.LazyFrame, key: list[str], hierarchies: Mapping[str, Hierarchy], dtype: pl.DataType
) -> pl.LazyFrame:
    """The per-class table of ``proportional`` from the rows per (class `key`, original leaves ``__anon_leaf_<i>``)
    (``__anon_n``): each node's share of the class's rows [paper 000 eq. 1]."""
    leaf_cols = [f"__anon_leaf_{i}" for i in range(len(hierarchies))]
    sizes = counts.group_by(key).agg(pl.col("__anon_n").sum().alias("__anon_size"))
    longs = []
    all_names: list[str] = []
    for i, (q, h) in enumerate(hierarchies.items()):
        names = encoded_columns(q, h, "proportional")
        all_names.extend(names)
        name_of = dict(zip(node_order(h).tolist(), names))
        closure = pl.LazyFrame(
            {
                leaf_cols[i]: [h.label_of(x) for x in h.closure["leaf"]],
                "__anon_col": [name_of[int(x)] for x in h.closure["ancestor"]],
            }
        )
        longs.append(
            counts.group_by(*key, leaf_cols[i])
            .agg(pl.col("__anon_n").sum())
            .join(closure, on=leaf_cols[i])
            .group_by(*key, "__anon_col")
            .agg(pl.col("__anon_n").sum())
        )
    wide = (
        pl.concat(longs)
        .join(sizes, on=key)
        .with_columns((pl.col("__anon_n") / pl.col("__anon_size")).alias("__anon_v"))
        .pivot("__anon_col", on_columns=all_names, index=key, values="__anon_v", aggregate_function="sum")
        .with_columns(pl.col(all_names).fill_null(0.0).cast(dtype))
    )
    return wide


def plan_from_map(
    published: pl.LazyFrame,
    tmap: TupleMap,
    hierarchies: Mapping[str, Hierarchy],
    options: EncodeOptions = EncodeOptions(),  # noqa: B008  (frozen: one shared default is safe)
) -> EncodingPlan:
    """The plan of an encoding of rows :func:`polars_anon.publish.publish` made from `tmap`, row-aligned with the
    original rows (nothing suppressed): what :func:`plan_encoding` plans with ``original=`` those rows, from the map.

    The per-class counts of ``proportional`` and the leaf frequencies of ``statistical`` are sums of the map's
    row counts (no pass over the rows); nothing is re-checked, so `published` must hold hierarchy nodes and no
    nulls: the methods that generalize publish nodes (each method's map, checked by the road; a null qid is
    published as its root under ``null="suppress"``), the originals are leaves (its data check) and lie under their
    published values (the map's contract; a job refuses ``proportional`` and ``statistical``, which read the
    originals, when a null was published as a root). A job refuses every encoding of a method that publishes
    something else (the capability table: ``local_suppression``'s missing cells are wildcards, ``mdav`` publishes
    cluster means) before any data is read. Writing the plan reads the published rows once.

    >>> from polars_anon import Hierarchy
    >>> g = Hierarchy.from_dict({"*": ["M", "F"]})
    >>> m = TupleMap.from_labels(pl.DataFrame({"g": ["F", "M"], "size": [2, 1]}), ["g"], {"g": pl.Series(["*", "*"])})
    >>> plan = plan_from_map(pl.LazyFrame({"g": ["*", "*", "*"]}), m, {"g": g})
    >>> [round(x, 4) for x in apply_plan(plan.rows, plan.joins, plan.out_names).collect().row(0)]
    [0.3333, 0.6667, 1.0]
    """
    rep, dtype, seed = options.representation, options.output_dtype, options.seed
    qids = list(hierarchies)
    if tmap.by_row:
        raise InvalidParameterError("plan_from_map: a row map (by_row) has no original tuples; use plan_encoding")
    out_names = output_columns(published.collect_schema().names(), hierarchies, rep)
    lf = _cast_qids(published, qids)
    frame = tmap.frame.filter(~pl.col(SUPPRESSED))
    published_tuples = frame.select(pl.col(out_col(q)).alias(q) for q in qids).unique()
    if rep in MAPPINGS:
        freqs = None
        if rep == "statistical":
            freqs = {}
            for q, h in hierarchies.items():
                n = tmap.frame.group_by(q).agg(pl.col(SIZE).sum())
                counts = dict(zip(n[q].to_list(), n[SIZE].to_list()))
                freqs[q] = np.array([counts.get(label, 0) for label in h.leaf_labels], dtype=np.int64)
        return EncodingPlan(
            map_to_leaves(lf, hierarchies, rep, frequencies=freqs, seed=seed, validate=False), [], out_names
        )
    if rep != "proportional":
        joins = [
            EncodingJoin(indicator_table(q, h, rep, dtype).lazy(), [q], ["__anon_label"])
            for q, h in hierarchies.items()
        ]
        return EncodingPlan(lf, joins, out_names, n_rows=int(frame[SIZE].sum()), tuples=published_tuples)
    key = [f"__anon_key_{i}" for i in range(len(qids))]
    leaf_cols = [f"__anon_leaf_{i}" for i in range(len(qids))]
    counts = (
        frame.lazy()
        .select(
            *(pl.col(out_col(q)).alias(k) for q, k in zip(qids, key)),
            *(pl.col(q).alias(c) for q, c in zip(qids, leaf_cols)),
            pl.col(SIZE).cast(pl.Int64).alias("__anon_n"),
        )
        .group_by(*key, *leaf_cols)
        .agg(pl.col("__anon_n").sum())
    )
    table = _proportional_table(counts, key, hierarchies, dtype)
    joins = [EncodingJoin(table, qids, key)]
    return EncodingPlan(lf, joins, out_names, n_rows=int(frame[SIZE].sum()), tuples=published_tuples)


def leaf_frequencies(orig: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy]) -> dict[str, np.ndarray]:
    """Count of each leaf (in depth-first leaf order) in the original table, per qid.

    >>> from polars_anon import Hierarchy
    >>> leaf_frequencies(pl.LazyFrame({"g": ["F", "F"]}), {"g": Hierarchy.from_dict({"*": ["M", "F"]})})["g"].tolist()
    [0, 2]
    """
    refuse_beyond_text_in(orig, list(hierarchies))  # labelled lazily below: such a date panicked
    return _leaf_frequencies(orig, hierarchies)


def _leaf_frequencies(orig: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy]) -> dict[str, np.ndarray]:
    """:func:`leaf_frequencies` of an `orig` whose dates are known to be ones Polars writes as text (checked by the
    caller: :func:`plan_encoding` refuses them before, or checks every value against the hierarchies)."""
    qids, schema = list(hierarchies), orig.collect_schema()
    frames = collect_apart(  # materializes: one row per distinct leaf
        [orig.group_by(label_expr(q, schema[q])).agg(pl.len().alias("n")) for q in qids]
    )
    out = {}
    for q, f in zip(qids, frames):
        h = hierarchies[q]
        counts = dict(zip(f[q].to_list(), f["n"].to_list()))
        out[q] = np.array([counts.get(label, 0) for label in h.leaf_labels], dtype=np.int64)
    return out


def _mix64(x: int) -> int:
    """The SplitMix64 finalizer on a Python int (decorrelates the per-seed, per-column offsets)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _uniform(row: pl.Expr, seed: int, stream: int) -> pl.Expr:
    """U[0, 1) per row: SplitMix64 of (row, seed, stream) as UInt64 expressions."""
    u64 = pl.UInt64
    offset = _mix64(_mix64(seed & _MASK64) ^ ((stream + 1) * 0xD1342543DE82EF95 & _MASK64))
    x = row.cast(u64) * pl.lit(0x9E3779B97F4A7C15, dtype=u64) + pl.lit(offset, dtype=u64)
    z = (x ^ (x // pl.lit(1 << 30, dtype=u64))) * pl.lit(0xBF58476D1CE4E5B9, dtype=u64)
    z = (z ^ (z // pl.lit(1 << 27, dtype=u64))) * pl.lit(0x94D049BB133111EB, dtype=u64)
    z = z ^ (z // pl.lit(1 << 31, dtype=u64))
    return (z // pl.lit(1 << 11, dtype=u64)).cast(pl.Float64) * (1.0 / (1 << 53))


def map_to_leaves(
    published: pl.LazyFrame | pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    how: str = "random",
    *,
    frequencies: Mapping[str, Sequence[int] | np.ndarray] | None = None,
    seed: int = 0,
    validate: bool = True,
) -> pl.LazyFrame:
    """Replace each generalized value by one leaf under it [paper 002 §3.3].

    Parameters
    ----------
    published
        Table whose qid columns hold hierarchy node labels.
    hierarchies
        qid -> hierarchy.
    how
        ``random``: uniform over the leaves under the node; ``statistical``: weighted
        by `frequencies`.
    frequencies
        qid -> count per leaf in :attr:`Hierarchy.leaf_labels` order (the original
        table's counts; :func:`encode` computes them from ``original``).
    seed
        Same table and seed give the same leaves.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> g = Hierarchy.from_dict({"*": ["M", "F"]})
    >>> out = map_to_leaves(pl.DataFrame({"g": ["*", "*", "F"]}), {"g": g}, "statistical",
    ...                     frequencies={"g": [0, 5]}).collect()
    >>> out["g"].to_list()
    ['F', 'F', 'F']
    """
    kind = canonical(how)
    if kind not in MAPPINGS:
        raise InvalidParameterError(f"how must be one of {list(MAPPINGS)}, got {how!r}")
    hierarchies = check_hierarchies(hierarchies)
    check_seed(seed)
    if frequencies is not None:
        check_mapping(frequencies, "frequencies", "qid -> counts per leaf")
    given = as_lazy(published)
    check_columns(given, list(hierarchies), "qids")
    if validate:  # on the values as given: labelled lazily below, a date Polars cannot write as text panicked
        _check_nodes(given, hierarchies, "published", leaves_only=False)
    else:
        refuse_beyond_text_in(given, list(hierarchies))
    lf = _cast_qids(given, list(hierarchies))
    if kind == "statistical" and frequencies is None:
        raise InvalidParameterError("how='statistical' needs frequencies= (or use encode(..., original=...))")
    names = lf.collect_schema().names()
    row = "__anon_row"
    while row in names:
        row = "_" + row
    lf = lf.with_row_index(row)
    exprs = []
    for i, (q, h) in enumerate(hierarchies.items()):
        lo = pl.col(q).replace_strict(h.labels, h.nodes["order_lo"], return_dtype=pl.Int64)
        n = pl.col(q).replace_strict(h.labels, h.nodes["leaves"], return_dtype=pl.Int64)
        u = _uniform(pl.col(row), seed, i)
        uniform_pick = lo + (u * n).floor().cast(pl.Int64).clip(upper_bound=n - 1)
        if kind == "random":
            pick = uniform_pick
        else:
            assert frequencies is not None
            if q not in frequencies:
                raise ColumnNotFoundError(f"frequencies has no entry for qid {q!r}; it has {list(frequencies)}")
            w = np.asarray(frequencies[q], dtype=np.int64)
            if w.shape != (h.n_leaves,) or (w < 0).any():
                raise InvalidParameterError(
                    f"frequencies[{q!r}] must hold {h.n_leaves} counts >= 0 (one per leaf), got shape {w.shape}"
                )
            cum = np.concatenate([[0], np.cumsum(w)])  # cum[i] = weight of leaves before leaf i
            hi = h.nodes["order_hi"].to_numpy()
            base_of = cum[h.nodes["order_lo"].to_numpy()]
            total_of = cum[hi + 1] - base_of
            base = pl.col(q).replace_strict(h.labels, base_of, return_dtype=pl.Int64)
            total = pl.col(q).replace_strict(h.labels, total_of, return_dtype=pl.Int64)
            t = base + (u * total).floor().cast(pl.Int64).clip(upper_bound=total - 1)
            weighted = pl.lit(pl.Series(cum[1:], dtype=pl.Int64)).search_sorted(t, side="right").cast(pl.Int64)
            pick = pl.when(total > 0).then(weighted).otherwise(uniform_pick)
        leaves = pl.Series(h.leaf_labels, dtype=pl.String)
        exprs.append(pick.replace_strict(np.arange(h.n_leaves), leaves, return_dtype=pl.String).alias(q))
    return lf.with_columns(exprs).select(names)
