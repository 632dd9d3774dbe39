"""Writing encoded tables to disk, and reading them back, in one of two layouts.

``layout="wide"`` (default)
    one Parquet file, one row per published row and one column per hierarchy
    node: what :func:`polars_anon.encode.encode` returns.
``layout="classes"``
    a directory holding the same table *normalized*: rows of one equivalence class
    are identical in every encoding (a class is a distinct published qid tuple, or
    a `class_col` value), so the encoded blocks are stored once per class:

    - ``classes.parquet``: the class key and the encoded columns, one row per class;
    - ``rows.parquet``: the published rows without their qid columns, plus the class
      key (``class_id``, or `class_col`), in the published row order;
    - ``encoding.json``: the representation, the key and the wide column order.

    :func:`scan_encoded` joins the two lazily into exactly the wide table. Its size
    is rows x (other columns + 1) plus classes x nodes, instead of rows x nodes:
    the layout to use when hierarchies are large (a 5-digit zip code alone has
    about 1,800 nodes) and the table is long.

Both are written beside the target under a temporary name and renamed at the end
(the ``classes`` layout is checked first: every row's class key must be in the
classes table); an existing target, file or directory, is replaced only with
``overwrite=True``.
"""

from __future__ import annotations

import errno
import itertools
import json
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._progress import bar as progress_bar
from polars_anon._validate import as_lazy, check_path
from polars_anon.classes import tuple_key
from polars_anon.encode import (
    LAYOUTS,
    EncodeOptions,
    EncodingJoin,
    EncodingPlan,
    Layout,
    apply_plan,
    encoded_columns,
    plan_encoding,
    plan_from_map,
)
from polars_anon.errors import InputError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import is_csv, scanned_files
from polars_anon.outputs import LAYOUT_MARKER, ROW_GROUP, Outputs, staged_write
from polars_anon.tuplemap import TupleMap

__all__ = [
    "CLASS_ID",
    "LAYOUTS",
    "MARK",
    "Layout",
    "is_layout_folder",
    "scan_encoded",
    "stage_encoded",
    "write_encoded",
]

CLASS_ID = "class_id"
"""Name of the class key column of the ``classes`` layout when classes are published tuples
(``class_id_1``, ``class_id_2``, ... when the table already has a column of that name)."""
_FORMAT = "polars_anon encoded classes 1"
MARK = {"polars_anon": "encoding 1"}
"""Key-value metadata of every wide encoded Parquet file (how :func:`scan_encoded` tells one from another file)."""
_WIDE_WARN_CELLS = 2_000_000_000


def write_encoded(
    published: pl.LazyFrame | pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    path: str | Path,
    representation: str = "proportional",
    *,
    original: pl.LazyFrame | pl.DataFrame | None = None,
    class_col: str | None = None,
    dtype: pl.DataType | type[pl.DataType] = pl.Float32,
    seed: int = 0,
    validate: bool = True,
    overwrite: bool = False,
    layout: Layout = "wide",
    chunk_rows: int | None = None,
) -> dict[str, Any]:
    """Encode and write to disk: aggregate per class once, then join back or store normalized.

    Same arguments as :func:`polars_anon.encode.encode`, plus:

    layout
        ``"wide"`` (one Parquet file at `path`) or ``"classes"`` (a directory at
        `path`: ``rows.parquet``, ``classes.parquet``, ``encoding.json``; read it
        with :func:`scan_encoded`). The mappings (``random``, ``statistical``) keep
        one column per qid and are always wide.
    overwrite
        Replace an existing `path`; refused otherwise.
    chunk_rows
        Wide layout only: rows per slice (default about 256 MB of encoded values).
        Polars' streaming engine is slow on frames thousands of columns wide, so the
        per-class (or per-node) tables are computed once and the published rows are
        joined to them slice by slice with the in-memory engine, appended to one
        zstd Parquet file. Memory is bounded by the slice; time grows with
        rows x nodes.

    Returns ``rows``, ``columns`` (of the wide table), ``classes`` (classes layout),
    ``chunk_rows`` (wide) and ``seconds``.

    >>> import tempfile, os
    >>> from polars_anon import Hierarchy
    >>> d = tempfile.mkdtemp()
    >>> g = Hierarchy.from_dict({"*": ["M", "F"]})
    >>> pub = pl.DataFrame({"id": [1, 2, 3], "g": ["M", "*", "M"]})
    >>> write_encoded(pub, {"g": g}, os.path.join(d, "e.parquet"), "fillparent")["columns"]
    4
    >>> pl.read_parquet(os.path.join(d, "e.parquet")).row(1)
    (2, 0.0, 0.0, 1.0)
    >>> write_encoded(pub, {"g": g}, os.path.join(d, "e"), "fillparent", layout="classes")["classes"]
    2
    >>> scan_encoded(os.path.join(d, "e")).collect().row(1)
    (2, 0.0, 0.0, 1.0)
    """
    options = EncodeOptions(representation, original, class_col, dtype, seed, validate, layout, chunk_rows)
    with Outputs(overwrite=overwrite, reads=scanned_files(published)) as out:  # never onto its own input
        facts = stage_encoded(out, published, hierarchies, path, options)
        out.commit()
    return facts


def stage_encoded(
    out: Outputs,
    published: pl.LazyFrame | pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    path: str | Path,
    options: EncodeOptions,
    *,
    tmap: TupleMap | None = None,
) -> dict[str, Any]:
    """Write an encoding into the output set `out` (a temporary file or folder; `out` commits).

    `options` as :func:`write_encoded`'s keywords (checked when built); used by the job runner so that
    the table, its encodings and the report are renamed into place together. With `tmap`, the map
    `published` was published from (row-aligned with the original rows), the encoding is
    planned from the map (:func:`~polars_anon.encode.plan_from_map`: `original` and
    `validate` are not read) and writing it reads the published rows once.
    """
    start = time.perf_counter()
    layout, representation, class_col = options.layout, options.representation, options.class_col
    path = Path(check_path(path))
    if layout == "wide" and is_csv(path):
        raise InvalidParameterError(
            f"output {str(path)!r} would hold Parquet under a CSV name; give a path ending in .parquet"
        )
    file = not is_layout_folder(path)  # a folder this module wrote may be replaced (overwrite); a user's never
    out.check(path, file=file, what="encoding")
    if tmap is not None and class_col is None and not tmap.by_row:
        plan = plan_from_map(as_lazy(published), tmap, hierarchies, options)
    else:
        plan = plan_encoding(published, hierarchies, options)
    if layout == "classes" and not plan.joins:
        raise InvalidParameterError(
            f"layout='classes' stores one row per class of a wide encoding; {representation!r} keeps one "
            "column per qid (a leaf per row): use layout='wide'"
        )
    if layout == "classes":
        facts = staged_write(
            out,
            path,
            lambda tmp: _write_classes(plan, hierarchies, class_col, representation, tmp),
            file=file,
            what="encoding",
        )
    else:
        facts = staged_write(
            out,
            path,
            lambda tmp: _write_wide(plan, class_col is not None and options.original is None, tmp, options.chunk_rows),
            file=file,
            what="encoding",
        )
    return {**facts, "seconds": round(time.perf_counter() - start, 3)}


def is_layout_folder(path: str | Path) -> bool:
    """Whether `path` is a folder :func:`write_encoded` wrote (the ``classes`` layout: it holds ``encoding.json``),
    which an encoding in either layout may replace with overwrite; any other folder is the user's.

    >>> import tempfile
    >>> is_layout_folder(tempfile.mkdtemp())
    False
    """
    path = Path(path)
    try:
        return path.is_dir() and (path / LAYOUT_MARKER).is_file()
    except OSError as exc:  # a name the system cannot look up (too long): no folder; the outputs' check names it
        if exc.errno != errno.ENAMETOOLONG:
            raise
        return False


def scan_encoded(path: str | Path) -> pl.LazyFrame:
    """Read what :func:`write_encoded` wrote, lazily, as the wide table in either layout.

    For the ``classes`` layout this is ``rows`` left-joined to ``classes`` on the
    class key (row order kept), with the wide column order restored.

    >>> import tempfile, os
    >>> from polars_anon import Hierarchy
    >>> d = os.path.join(tempfile.mkdtemp(), "enc")
    >>> _ = write_encoded(pl.DataFrame({"g": ["M", "F"]}), {"g": Hierarchy.from_dict({"*": ["M", "F"]})},
    ...                   d, "oneclass", layout="classes")
    >>> scan_encoded(d).collect().rows()
    [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
    """
    path = Path(check_path(path))
    if path.is_file():
        try:
            marked = pl.read_parquet_metadata(path).get(next(iter(MARK))) == MARK[next(iter(MARK))]
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot read {str(path)!r} as Parquet: {str(exc).strip().splitlines()[0]}") from None
        if not marked:
            raise InputError(
                f"{str(path)!r} is a Parquet file that write_encoded did not write (no encoding mark); read it with "
                "pl.scan_parquet, or encode the published table first (pa.write_encoded / polars-anon encode)"
            )
        return pl.scan_parquet(path)
    meta_path = path / LAYOUT_MARKER
    if not meta_path.is_file():
        raise InputError(
            f"{str(path)!r} is neither an encoded Parquet file nor a directory written with layout='classes'"
        )
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != _FORMAT:
        raise InputError(f"{str(meta_path)!r} has format {meta.get('format')!r}; expected {_FORMAT!r}")
    rows = pl.scan_parquet(path / "rows.parquet")
    classes = pl.scan_parquet(path / "classes.parquet")
    return rows.join(classes, on=meta["key"], how="left", maintain_order="left").select(meta["columns"])


def _write_wide(plan: EncodingPlan, streams: bool, tmp: Path, chunk_rows: int | None) -> dict[str, Any]:
    import pyarrow.parquet as pq

    width = len(plan.out_names)
    if not plan.joins or streams:  # mappings and partition frames stream through sink_parquet
        apply_plan(plan.rows, plan.joins, plan.out_names).sink_parquet(tmp, metadata=MARK, row_group_size=ROW_GROUP)
        rows = pl.scan_parquet(tmp).select(pl.len()).collect().item()
        return {"rows": rows, "columns": width, "chunk_rows": None}
    chunk = chunk_rows or max(1024, int(256e6 // (4 * width)))
    rights = pl.collect_all([j.right for j in plan.joins])  # materializes: one row per class or per node
    joins = [EncodingJoin(r.lazy(), j.left_on, j.right_on) for r, j in zip(rights, plan.joins)]
    n_rows = plan.n_rows
    if n_rows is None:
        n_rows = plan.rows.select(pl.len()).collect().item()  # materializes: one row
    if n_rows * width > _WIDE_WARN_CELLS:
        warnings.warn(
            f"layout='wide' writes {n_rows:,} rows x {width:,} columns ({n_rows * width:.1e} cells, one per row and "
            "node); this takes minutes per million rows. layout='classes' stores each class's block once "
            "(read it back with scan_encoded)",
            stacklevel=3,
        )
    writer = None
    try:
        with progress_bar(total=max(n_rows, 1), desc="encode (wide)", unit="row", unit_scale=True) as bar:
            for rows in _slices(plan.rows, chunk):
                part = apply_plan(rows, joins, plan.out_names)
                table = part.collect(engine="in-memory").to_arrow()
                if writer is None:
                    writer = pq.ParquetWriter(tmp, table.schema.with_metadata(MARK), compression="zstd")
                writer.write_table(table, row_group_size=chunk)
                bar.update(rows.height)
    finally:
        if writer is not None:
            writer.close()
    return {"rows": n_rows, "columns": width, "chunk_rows": chunk}


def _slices(rows: pl.LazyFrame, chunk: int) -> Iterator[pl.DataFrame]:
    """The rows in slices of `chunk` rows (the last shorter; one empty slice for no rows), from one streaming pass.

    >>> [f.height for f in _slices(pl.LazyFrame({"a": range(5)}), 2)]
    [2, 2, 1]
    """
    held: list[pl.DataFrame] = []
    n_held = 0
    sent = False
    for batch in rows.collect_batches(chunk_size=chunk):
        held.append(batch)
        n_held += batch.height
        while n_held >= chunk:
            frame = pl.concat(held, how="vertical", rechunk=False)
            yield frame.slice(0, chunk)
            sent = True
            held, n_held = [frame.slice(chunk)], n_held - chunk
    if n_held or not sent:
        yield pl.concat(held, how="vertical") if held else rows.head(0).collect()


def _write_classes(
    plan: EncodingPlan,
    hierarchies: Mapping[str, Hierarchy],
    class_col: str | None,
    representation: str,
    tmp: Path,
) -> dict[str, Any]:
    """The normalized layout, in the folder `tmp`: one encoded row per class, the class key per row."""
    qids = list(hierarchies)
    encoded = [c for q, h in hierarchies.items() for c in encoded_columns(q, h, representation)]
    rest = [c for c in plan.out_names if c not in set(encoded)]
    by_class_col = class_col is not None and plan.joins[0].left_on == [class_col]
    if by_class_col:  # proportional keyed by the user's class ids: the per-class table is the join's right side
        assert class_col is not None
        key = [class_col]
        classes = plan.joins[0].right.rename({plan.joins[0].right_on[0]: class_col}).select(class_col, *encoded)
        rows = plan.rows.select(rest)
    else:  # a class is a distinct published qid tuple; its id is a code computed row by row (no join)
        taken = {*plan.rows.collect_schema().names(), *plan.out_names}
        names = itertools.chain([CLASS_ID], (f"{CLASS_ID}_{i}" for i in itertools.count(1)))
        cid = next(n for n in names if n not in taken)
        key = [cid]
        known = plan.tuples.lazy() if plan.tuples is not None else plan.rows.select(qids)  # from the map: no read
        tuples = known.unique().sort(qids).collect()  # materializes: one row per class
        code = tuple_key(tuples, qids)
        if code is None:  # too many distinct values for one Int64 code: number the sorted tuples instead
            tuples = tuples.with_row_index(cid).with_columns(pl.col(cid).cast(pl.Int64))
            rows = plan.rows.join(tuples.lazy(), on=qids, how="left", maintain_order="left").select(*rest, cid)
        else:
            tuples = tuples.with_columns(code.alias(cid))
            rows = plan.rows.with_columns(code.alias(cid)).select(*rest, cid)
        classes = apply_plan(tuples, plan.joins, [cid, *encoded])
    classes_df = classes.sort(key).collect()  # materializes: one row per class
    meta = {"format": _FORMAT, "representation": representation, "key": key, "columns": plan.out_names}

    tmp.mkdir()
    classes_df.write_parquet(tmp / "classes.parquet", row_group_size=ROW_GROUP)
    rows.sink_parquet(tmp / "rows.parquet", row_group_size=ROW_GROUP)
    n_rows = _check_classes(tmp, key, classes_df)
    meta.update(rows=n_rows, classes=classes_df.height)
    (tmp / LAYOUT_MARKER).write_text(json.dumps(meta, indent=2) + "\n")
    return {"rows": n_rows, "columns": len(plan.out_names), "classes": classes_df.height, "chunk_rows": None}


def _check_classes(tmp: Path, key: list[str], classes: pl.DataFrame) -> int:
    """Re-read the written rows: every row's class key must be in the classes table (fail closed)."""
    if classes.select(pl.struct(key).is_duplicated().any()).item():
        raise InvalidParameterError(f"class key {key} is not unique in the per-class table")
    facts = (
        pl.scan_parquet(tmp / "rows.parquet")
        .select(key)
        .join(classes.lazy().select(key), on=key, how="anti", nulls_equal=True)
        .select(pl.len().alias("orphans"))
        .collect()
    )
    if facts.item():
        raise InvalidParameterError(
            f"{facts.item()} written rows have a class key {key} missing from the classes table"
        )
    return pl.scan_parquet(tmp / "rows.parquet").select(pl.len()).collect().item()
