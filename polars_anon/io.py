"""Reading inputs: Parquet (preferred) or CSV, refused clearly when unreadable.

Writing is :mod:`polars_anon.outputs` (all-or-nothing output sets)."""

from __future__ import annotations

import codecs
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._validate import check_unique
from polars_anon.errors import InputError, preview
from polars_anon.locations import URI, as_location

__all__ = [
    "CSV_SUFFIXES",
    "DTYPES",
    "cast_columns",
    "RAGGED",
    "check_fields",
    "check_utf8",
    "html_path",
    "parquet_parts",
    "report_path",
    "scan_input",
    "scanned_files",
]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data")
"""Files read as CSV; every other file is read as Parquet."""


def parquet_parts(path: str | Path, what: str = "input") -> list[Path]:
    """The Parquet files of a folder of parts (Spark's and Hive's layout: ``part-*.parquet``), sorted by name,
    so every engine reads the rows in the same order; markers such as ``_SUCCESS`` and ``.crc`` files are skipped.

    >>> import tempfile, polars as pl
    >>> d = Path(tempfile.mkdtemp())
    >>> for name in ("part-1.parquet", "part-0.parquet"):
    ...     pl.DataFrame({"a": [1]}).write_parquet(d / name)
    >>> (d / "_SUCCESS").touch()
    >>> [p.name for p in parquet_parts(d)]
    ['part-0.parquet', 'part-1.parquet']
    >>> parquet_parts(d / "nowhere")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: input '.../nowhere' is not a folder
    """
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{what} {str(path)!r} is not a folder")
    parts = sorted(p for p in path.glob("*.parquet") if p.is_file() and not p.name.startswith((".", "_")))
    if not parts:
        raise InputError(f"{what} folder {str(path)!r} holds no .parquet file")
    return parts


def scan_input(
    path: str | Path,
    *,
    separator: str = ",",
    has_header: bool = True,
    columns: Sequence[str] | None = None,
    null_values: Sequence[str] | None = None,
    text: Sequence[str] = (),
    what: str = "input",
) -> pl.LazyFrame:
    """Scan a Parquet file (preferred), a folder of Parquet parts or a CSV file lazily; refuse anything else clearly.

    CSV is chosen by the extension ``.csv``, ``.tsv``, ``.txt`` or ``.data``; every
    other file must be Parquet. The schema is read once to fail early. A CSV file
    without a header line takes `has_header` False and its column names in `columns`
    (with a header, `columns` renames the header's names); `null_values` are the
    strings read as missing (e.g. ``["?"]``); the CSV columns named in `text` (by their
    final names) are read as the file writes them, String (a zip code ``02139`` stays
    ``02139``: inferred as a number, then cast, it would be ``2139``). Messages call the file `what`.
    """
    path = Path(path)
    if path.is_dir():
        return _scan_parquet(path, parquet_parts(path, what), what)
    if not path.is_file():
        raise InputError(f"{what} {str(path)!r} does not exist or is not a file")
    is_csv = path.suffix.lower() in CSV_SUFFIXES
    if is_csv:
        if not isinstance(separator, str) or len(separator.encode()) != 1:
            raise InputError(
                f"separator must be one single-byte character such as ';', got {separator!r} "
                f"(reading {what} {str(path)!r})"
            )
        check_utf8(path, what=what)
        options: dict[str, Any] = {"separator": separator, "has_header": has_header}
        options["null_values"] = list(null_values or []) or None
        try:
            lf = pl.scan_csv(path, **options)
            names = lf.collect_schema().names()
            as_text = [n for n, final in zip(names, columns or names) if final in text]
            if as_text:  # the same file, those columns not inferred
                lf = pl.scan_csv(path, **options, schema_overrides={n: pl.String for n in as_text})
                lf.collect_schema()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot read {what} {str(path)!r} as CSV: {_first_line(exc)}") from exc
        check_fields(path, separator, len(names), what=what)
        if columns is not None:
            check_unique(list(columns), "columns")
            if len(columns) != len(names):
                raise InputError(
                    f"columns names {len(columns)} columns but {str(path)!r} has {len(names)} (first line: {names[:5]}"
                    f"{' ...' if len(names) > 5 else ''}); give one name per column"
                )
            lf = lf.rename(dict(zip(names, columns)))
        return lf
    return _scan_parquet(path, [path], what)


DTYPES: dict[str, pl.DataType] = {
    "Int8": pl.Int8(), "Int16": pl.Int16(), "Int32": pl.Int32(), "Int64": pl.Int64(), "UInt8": pl.UInt8(),
    "UInt16": pl.UInt16(), "UInt32": pl.UInt32(), "UInt64": pl.UInt64(), "Float32": pl.Float32(),
    "Float64": pl.Float64(), "String": pl.String(), "Boolean": pl.Boolean(), "Date": pl.Date(),
}  # a table: type name -> Polars type, several a line  # fmt: skip
"""Column types a job's ``schema`` may give (Polars' names)."""


def cast_columns(lf: pl.LazyFrame, schema: Mapping[str, str], where: str = "schema") -> pl.LazyFrame:
    """`lf` with the columns of `schema` cast to the named types, refusing (with the column and its first values) a
    value that does not convert exactly (``63.5`` to ``Int64``); one aggregated pass reads the data to check.

    >>> lf = pl.LazyFrame({"age": [63.0, 41.0, None]})
    >>> cast_columns(lf, {"age": "Int64"}).collect()["age"].to_list()
    [63, 41, None]
    >>> cast_columns(pl.LazyFrame({"age": [63.5]}), {"age": "Int64"})
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: schema: column 'age' has 1 values that are not Int64 (first: [63.5]); ...
    """
    if not schema:
        return lf
    names = lf.collect_schema().names()
    missing = [c for c in schema if c not in names]
    if missing:
        raise InputError(f"{where}: columns {missing} are not in the input; its columns are {names}")
    for column, name in schema.items():
        if name not in DTYPES:
            raise InputError(f"{where}: type {name!r} of column {column!r} is not one of {sorted(DTYPES)}")
    cast = {c: pl.col(c).cast(DTYPES[t], strict=False) for c, t in schema.items()}
    exact = {c: (cast[c].cast(lf.collect_schema()[c], strict=False) == pl.col(c)) | cast[c].is_null() for c in schema}
    lost = {c: pl.col(c).is_not_null() & (cast[c].is_null() | ~exact[c]) for c in schema}
    bad = (
        lf.select(  # materializes: one row, the count and first values of each column's lost values
            *[lost[c].sum().alias(f"n_{c}") for c in schema],
            *[pl.col(c).filter(lost[c]).head(5).implode().alias(f"v_{c}") for c in schema],
        )
        .collect()
        .row(0, named=True)
    )
    for column, name in schema.items():
        if bad[f"n_{column}"]:
            raise InputError(
                f"{where}: column {column!r} has {bad[f'n_{column}']} values that are not {name} "
                f"(first: {preview(list(bad[f'v_{column}']))}); fix them or choose another type"
            )
    return lf.with_columns(**cast)


def scanned_files(lf: pl.LazyFrame | pl.DataFrame) -> list[str]:
    """Every file a LazyFrame's plan scans (Parquet, CSV, IPC, ... anywhere in the query, joins included), in plan
    order; none for a DataFrame or a plan over rows in memory. A writer protects them from its outputs
    (:meth:`polars_anon.outputs.Outputs.protect`): a table written onto a file it is read from would replace its data.

    Read from the printed plan; where Polars prints several files (those a folder or a pattern expands to, only the
    first of three or more), from the serialized plan (the sources as given: the folder, the pattern), unless the
    plan holds rows in memory (the serialized plan holds them: 44 CPU s for 3M rows): then the printed files and
    their folders (a writer refuses every target inside them). A name holding ", " in a printed list is listed both
    split there and whole.

    >>> import tempfile
    >>> path = str(Path(tempfile.mkdtemp()) / "people.parquet")
    >>> pl.DataFrame({"age": [31, 33]}).write_parquet(path)
    >>> scanned_files(pl.scan_parquet(path).filter(pl.col("age") > 32)) == [path]
    True
    >>> scanned_files(pl.LazyFrame({"age": [31]}))
    []
    """
    if not isinstance(lf, pl.LazyFrame):
        return []
    printed = lf.explain(optimized=False)
    scans = re.findall(r"SCAN \[(.*?)(, \.\.\. \d+ other sources?)?\]$", printed, re.M)
    if any(more or ", " in listed for listed, more in scans) and "DF [" not in printed:
        # the sources as given (Polars prints the files a folder or a pattern expands to, only the first of three or
        # more): a folder or pattern of several files is then protected as such, a new part inside it refused
        serialized = _serialized_scans(lf)
        if serialized is not None:
            return serialized
    found: list[str] = []
    for listed, more in scans:
        files = listed.split(", ") if not more else [listed]
        found += [*files, listed] if len(files) > 1 else files
        if more or len(files) > 1:  # rows in memory beside a scan of several files: the folder of each one printed
            found += [f.rpartition("/")[0] or "." for f in files]
    return list(dict.fromkeys(found))


def _serialized_scans(lf: pl.LazyFrame) -> list[str] | None:
    """Every path the serialized plan's scans name (None: a plan Polars cannot serialize). Only for plans without
    rows in memory: the serialized plan holds them (44 CPU s for 3M rows)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Polars warns that the JSON form of a plan may change between versions
            plan = json.loads(lf.serialize(format="json"))
    except pl.exceptions.PolarsError:  # a Python function it cannot pickle
        return None
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            scan = node.get("Scan")
            if isinstance(scan, dict):
                paths = (scan.get("sources") or {}).get("Paths") or []
                found.extend(p["inner"] if isinstance(p, dict) else str(p) for p in paths)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(plan)
    return list(dict.fromkeys(found))


RAGGED = "a row has another number of fields than the header: quote the fields that hold the separator"
"""The hint of every refusal of a CSV row with more or fewer fields than its header (Polars, DuckDB, Spark)."""


def check_fields(path: Path, separator: str, n_fields: int, *, what: str = "input") -> None:
    """Refuse a CSV file with a record of more or fewer fields than `n_fields` (its header's), naming the first.

    Polars reads a short row as nulls, and a long one fails only when every column is read: a command that reads
    some columns (``risk``, ``check``) would answer where another refuses, and DuckDB refuses both. One streaming
    pass over the file (:func:`_first_ragged`), once per version of the file in a process (a job reads its input on
    two roads).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text('age,sex,zip\\n31,"F,x",02139\\n33,M\\n')
    >>> check_fields(path, ",", 3)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: cannot read input '.../t.csv' as CSV: record 3 (the header is record 1) has 2 fields,
    the header 3; a row has another number of fields than the header: quote the fields that hold the separator
    """
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, separator, n_fields)
    if key in _CHECKED:
        return
    found = _first_ragged(path, separator, n_fields)
    if found is None:
        _CHECKED.add(key)
        return
    number, fields = found
    raise InputError(
        f"cannot read {what} {str(path)!r} as CSV: record {number} (the header is record 1) has {fields} fields, the "
        f"header {n_fields}; {RAGGED}"
    )


_CHECKED: set[tuple[str, int, int, int, int, str, int]] = set()
"""The CSV files :func:`check_fields` passed (path, inode, mtime, ctime, size, separator, fields): a file replaced
with its mtime kept (``cp -p``, ``rsync -t``) has another inode or ctime."""


def _first_ragged(path: Path, separator: str, n_fields: int) -> tuple[int, int] | None:
    """The first record (DuckDB's number, the header 1; its fields) of another number of fields than `n_fields`, as
    DuckDB's strict CSV reader counts them (quotes and line breaks in quoted fields understood; blank lines
    skipped); None when there is none, or when the reader fails for another reason (left to the input's own
    reader). DuckDB, not a Polars pass over the lines: a pass that understood quotes cost 2.8 CPU s on 3M quoted
    register rows, DuckDB 0.7."""
    import duckdb

    columns = {f"c{i}": "VARCHAR" for i in range(n_fields)}
    con = duckdb.connect()
    try:
        con.read_csv(str(path), header=False, sep=separator, auto_detect=False, columns=columns).aggregate(
            "count(*)"
        ).fetchall()
    except duckdb.Error as exc:
        found = re.search(r"CSV Error on Line: (\d+).*?Expected Number of Columns: \d+ Found: (\d+)", str(exc), re.S)
        return None if found is None else (int(found[1]), int(found[2]))
    finally:
        con.close()
    return None


def _scan_parquet(path: Path, files: list[Path], what: str = "input") -> pl.LazyFrame:
    try:
        lf = pl.scan_parquet(files)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read {what} {str(path)!r} as Parquet: {_first_line(exc)}") from exc
    return lf


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def check_utf8(path: Path, chunk: int = 1 << 24, *, what: str = "input") -> None:
    """Refuse a text file that is not UTF-8, naming the line of the first bad byte (one streaming pass)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    with path.open("rb") as f:
        while block := f.read(chunk):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                at = offset + exc.start
                line += block[: exc.start].count(b"\n")
                raise InputError(
                    f"{what} {str(path)!r} is not UTF-8 text: byte {block[exc.start]:#04x} at offset {at} "
                    f"(line {line}); "
                    "convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or write it as Parquet"
                ) from None
            line += block.count(b"\n")
            offset += len(block)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise InputError(f"{what} {str(path)!r} is not UTF-8 text: it ends inside a multi-byte character") from None


def report_path(output: str | Path) -> Path | URI:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.report.json`` (a URI stays a URI, on its file system)."""
    output = as_location(output)
    return output.with_name(output.stem + ".report.json")


def html_path(report: str | Path) -> Path | URI:
    """The HTML page beside a report JSON: ``out/adult_k10.report.json`` -> ``out/adult_k10.report.html``.

    >>> html_path("out/adult_k10.report.json").name, html_path("out/report").name
    ('adult_k10.report.html', 'report.html')
    """
    report = as_location(report)
    return report.with_suffix(".html") if report.suffix.lower() == ".json" else report.with_name(report.name + ".html")
