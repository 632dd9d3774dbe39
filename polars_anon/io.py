"""Reading inputs: Parquet (preferred) or CSV, refused clearly when unreadable.

Writing is :mod:`polars_anon.outputs` (all-or-nothing output sets)."""

from __future__ import annotations

import codecs
import glob
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._scans import missing_sources, serialized_scans
from polars_anon._validate import check_unique
from polars_anon.errors import AnonError, InputError, NotKAnonymousError, preview
from polars_anon.labels import iso_dates
from polars_anon.locations import URI, as_location, is_uri
from polars_anon.outputs import PARQUET_SUFFIXES

__all__ = [
    "BLANK",
    "CSV_RULES",
    "CSV_SUFFIXES",
    "DTYPES",
    "FileStamp",
    "LEADING_ZERO",
    "MAX_FIELD",
    "NO_NULL",
    "PARSES",
    "RAGGED",
    "cast_columns",
    "check_fields",
    "check_source",
    "changed_files",
    "check_unchanged",
    "check_text",
    "csv_errors",
    "file_stamps",
    "html_path",
    "input_changes",
    "is_csv",
    "late_value",
    "late_value_hint",
    "late_value_words",
    "literal_path",
    "named_path",
    "names_parquet",
    "names_path",
    "parquet_footer",
    "parquet_parts",
    "quoted_line_break",
    "reads_detail",
    "report_path",
    "scan_input",
    "scanned_files",
]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data")
"""Files read as CSV; every other file is read as Parquet."""


def is_csv(path: str | Path) -> bool:
    """Whether `path` names a CSV file (its extension is one of :data:`CSV_SUFFIXES`, any case); every other file is
    read as Parquet.

    >>> is_csv("adult.CSV"), is_csv("voters.parquet")
    (True, False)
    """
    suffix = path.suffix if isinstance(path, Path) else getattr(path, "suffix", None)  # a URI names its own
    return (Path(path).suffix if suffix is None else suffix).lower() in CSV_SUFFIXES


MAX_FIELD = 1 << 30
"""DuckDB's ``max_line_size`` for a CSV input (its default, 2 MB, refused a long field Polars and Spark read)."""

NO_NULL = "\x00polars_anon: no null string\x00"
"""Spark's ``nullValue`` for a CSV input: a string no field holds, so Spark tells a quoted empty field (``""``, the
empty string) from an empty one (null); its default, the empty string, made both null."""

_DTYPE_WORDS = {"Int64": "i64", "Float64": "f64", "Boolean": "bool"}
"""The dtype as Polars' CSV reader names it in its error (the types it infers besides String)."""


PARSES = {
    "Int64": r"[ \t]*[+-]?[0-9]+",
    "Float64": r"[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))",
    "Boolean": r"(?i:true|false)",
}
"""The text Polars' CSV reader parses as each type it infers (a whole field; tried on Polars 2.1): a decimal integer
with a sign or not after spaces or tabs (not ``1_000``, ``0x10``, ``1e2``, ``7 ``), a float as well (``1e2``, ``.5``,
``5.``, ``inf``, ``Infinity``, ``-nan``, any case; not ``1_0.5``), ``true`` or ``false`` in any case (not ``yes``,
``T``, ``1``, `` true``). DuckDB (RE2) and Spark (Java) match a value against it before casting, as their casts read
more; an integer out of range is then refused by the cast.

>>> [bool(re.fullmatch(PARSES["Float64"], v)) for v in ("1e2", " -.5", "NaN", "1_0.5", "1.5 ")]
[True, True, True, False, False]
"""

BLANK = r"[ \t]*"
"""A field Polars reads as null in a column of numbers: empty, or spaces and tabs only."""


def late_value(column: str, number: int, dtype: pl.DataType) -> tuple[str, str]:
    """The words before and after a value that does not parse as `dtype`, the type Polars inferred for the CSV
    column `column` (number `number`, from 1) from its first rows: Polars' own words, so DuckDB and Spark, which
    read the column as text and cast it, refuse the value as Polars does.

    >>> before, after = late_value("age", 2, pl.Int64())
    >>> before + "x" + after
    "could not parse `x` as dtype `i64` at column 'age' (column number 2)"
    """
    word = _DTYPE_WORDS.get(str(dtype), str(dtype))
    return "could not parse `", f"` as dtype `{word}` at column '{column}' (column number {number})"


_LATE_WORDS = (
    r"could not parse `(?P<value>.*?)` as dtype `\w+` at column '(?P<column>.*?)' \(column number \d+\)",
    r"converting column \"(?P<column>.*?)\"\. Could not convert string \"(?P<value>.*?)\"",
)
"""Polars' words on a CSV value that breaks its column's inferred type (DuckDB and Spark raise them too:
:func:`late_value`), and DuckDB's own reader's."""


def late_value_words(text: str) -> tuple[str, str, str] | None:
    """In an engine's error `text`, the words on a CSV value that breaks its column's type (Polars': the match; DuckDB's
    reader: its line), the column and the value; None when it is no such error.

    >>> late_value_words("could not parse `x` as dtype `i64` at column 'age' (column number 2)\\n\\nmore")[1:]
    ('age', 'x')
    """
    for pattern in _LATE_WORDS:
        found = re.search(pattern, text)
        if found is not None:
            said = found[0] if pattern is _LATE_WORDS[0] else text[: found.end()].splitlines()[-1].strip()
            return said, found["column"], found["value"]
    return None


def late_value_hint(column: str, value: str, missing: str) -> str:
    """What follows the words on a late CSV value, on every interface (`missing`: how to read it as missing there).

    >>> late_value_hint("age", "x", 'null_values=["x"]').endswith('(null_values=["x"]) or convert the file to Parquet')
    True
    """
    return (
        f"; the type of column {column!r} was inferred from the first rows and a later value breaks it: fix the "
        f"value, read it as missing ({missing}) or convert the file to Parquet"
    )


@contextmanager
def csv_errors(
    reads: Callable[[], Sequence[str]] | Sequence[str], missing: Callable[[str], str] | None = None
) -> Iterator[None]:
    """Turn an engine's failure on a CSV value that breaks its column's inferred type (Polars infers the types from
    the first rows; the value comes later) into one line naming the CSV files read, the column and the value, as the
    command line words it (:func:`late_value_words`, :func:`late_value_hint`; Polars' own error is a dozen lines).
    `reads`: the files the input is read from (or a function giving them, called only on such a failure); the
    error passes unchanged when none is a CSV file. `missing`: how to read the value as missing where the table was
    read (default Polars' ``null_values=["x"]``; a DuckDB relation's reader: ``nullstr``).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("age\\n" + "31\\n" * 100 + "x\\n")
    >>> with csv_errors([str(path)]):  # doctest: +ELLIPSIS
    ...     pl.scan_csv(path).collect()
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: cannot read '...t.csv' as CSV: could not parse `x` as dtype `i64` at column 'age' ...
    """
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        found = late_value_words(str(exc))
        if found is None:
            raise
        files = [str(f) for f in (reads() if callable(reads) else reads) if is_csv(f)]
        if not files:
            raise
        said, column, value = found
        hint = late_value_hint(column, value, missing(value) if missing else f"null_values=[{json.dumps(value)}]")
        raise InputError(f"cannot read {', '.join(repr(f) for f in files)} as CSV: {said}{hint}") from exc


FileStamp = tuple[int, int, int, int]
"""A file's (or folder's) inode, size, modification and change times in ns: another stamp is another file, or other
bytes (a file replaced with its mtime kept, ``cp -p``, has another inode or ctime)."""


def file_stamps(paths: Iterable[str]) -> dict[str, FileStamp]:
    """The stamp of each of `paths` that is a local file or folder now (a URI, or a path that does not exist: none).

    >>> import tempfile
    >>> path = str(Path(tempfile.mkdtemp()) / "t.csv")
    >>> _ = Path(path).write_text("a\\n1\\n")
    >>> list(file_stamps([path, "s3://bucket/t.csv", path + ".gone"])) == [path]
    True
    """
    out = {}
    for path in dict.fromkeys(paths):
        try:
            st = os.stat(path)
        except (OSError, ValueError):  # not a local path (a URI), or gone
            continue
        out[path] = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


def changed_files(stamps: Mapping[str, FileStamp]) -> list[str]:
    """The files of `stamps` (:func:`file_stamps`) that are not the ones stamped: rewritten, replaced or removed.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a\\n1\\n")
    >>> stamps = file_stamps([str(path)])
    >>> changed_files(stamps)
    []
    >>> _ = path.write_text("a\\n1\\n2\\n")
    >>> changed_files(stamps) == [str(path)]
    True
    """
    now = file_stamps(stamps)
    return [path for path, stamp in stamps.items() if now.get(path) != stamp]


def check_unchanged(stamps: Mapping[str, FileStamp]) -> None:
    """Refuse, in one line (:class:`~polars_anon.errors.InputError`), a job's outputs when a file of `stamps` (stamped
    before the job read it: :func:`file_stamps`) changed while it ran: the job reads its input more than once (the
    classes, the published rows, the originals an encoding reads), so its outputs could mix two inputs. Called last,
    before the outputs are renamed into place; nothing is written.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a\\n1\\n")
    >>> stamps = file_stamps([str(path)])
    >>> check_unchanged(stamps)
    >>> _ = path.write_text("a\\n1\\n2\\n")
    >>> check_unchanged(stamps)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: the input '...t.csv' changed while the job ran ...; nothing was written; ...
    """
    changed = changed_files(stamps)
    if changed:
        named = ", ".join(repr(f) for f in changed)
        raise InputError(
            f"the input {named} changed while the job ran (another size, modification time or file): its outputs "
            "could mix rows of both; nothing was written; run the job again once the input is complete"
        )


@contextmanager
def input_changes(stamps: Mapping[str, FileStamp]) -> Iterator[None]:
    """Name the input files that changed since they were stamped (:func:`file_stamps`, as ``anonymize()`` began) when
    reading or checking the published table fails: a plan that reads its input again cannot publish another input.
    The check's refusal (:class:`~polars_anon.errors.NotKAnonymousError`) keeps its words, the files named after them;
    an engine's own failure on the changed file (Polars reading a rewritten Parquet file by the layout it read first:
    "File out of specification", a ``ComputeError`` or a ``PanicException``) becomes one
    :class:`~polars_anon.errors.InputError` naming them. Any failure passes unchanged when no file changed, and the
    project's other errors always (a late CSV value: :func:`csv_errors` names it).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("a\\n1\\n")
    >>> stamps = file_stamps([str(path)])
    >>> _ = path.write_text("a\\n1\\n2\\n")
    >>> with input_changes(stamps):  # doctest: +ELLIPSIS
    ...     raise pl.exceptions.ComputeError("parquet: File out of specification\\n\\nmore")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: the input '...t.csv' changed after anonymize() read it ... (ComputeError: ...)
    """
    try:
        yield
    except NotKAnonymousError as exc:
        changed = changed_files(stamps)
        if not changed:
            raise
        raise type(exc)(f"{exc}; {_changed_words(changed)}") from exc
    except AnonError:  # its own words (a late CSV value, an output that exists)
        raise
    except (Exception, pl.exceptions.PanicException) as exc:
        changed = changed_files(stamps)
        if not changed:
            raise
        said = (str(exc).strip().splitlines() or [""])[0]  # a panic's first line nests every thread's: cut
        said = said if len(said) <= _SAID else said[: _SAID - 1] + "…"
        raise InputError(f"{_changed_words(changed)} ({type(exc).__name__}: {said})") from exc


_SAID = 160
"""The most characters of the engine's own first line :func:`input_changes` quotes."""


def _changed_words(files: Sequence[str]) -> str:
    """What :func:`input_changes` says of the changed `files`."""
    named = ", ".join(repr(f) for f in files)
    return (
        f"the input {named} changed after anonymize() read it (another size, modification time or file): the "
        "published table is planned from the input as it was; run anonymize() again on the input as it is now"
    )


def literal_path(path: str | Path, engine: str) -> str:
    """`path` as DuckDB (``"duckdb"``) or Spark (``"spark"``) reads one file of that exact name: both read a path as a
    glob pattern, so ``a[1].csv`` read ``a1.csv`` (Polars reads it with ``glob=False``).

    >>> print(literal_path("in/a[1]*.csv", "duckdb"), literal_path("in/a[1]*.csv", "spark"))
    in/a[[]1][*].csv in/a\\[1\\]\\*.csv
    """
    if engine == "duckdb":
        return re.sub(r"([\[*?])", r"[\1]", str(path))
    return re.sub(r"([\\\[\]*?{}])", r"\\\1", str(path))


def named_path(path: str | Path, engine: str) -> str:
    """The path to hand DuckDB (``"duckdb"``) or Spark (``"spark"``): a file that exists by its name
    (:func:`literal_path`: ``p[1].parquet`` is no pattern), else as given, as the engine reads it (a pattern such as
    ``parts/*.parquet``). Polars: ``glob=not Path(path).exists()``.

    >>> named_path("no/such/p[1].parquet", "duckdb")
    'no/such/p[1].parquet'
    """
    return literal_path(path, engine) if Path(path).exists() else str(path)


def parquet_footer(name: str | Path) -> pl.Schema:
    """The schema a local Parquet source stores, as Polars reads it: a file that exists by that name is that file
    (``t[1].parquet``, as every engine reads it), else the name is a folder or a pattern (its first file's)."""
    return pl.scan_parquet(name, glob=not Path(name).exists()).collect_schema()


def names_parquet(name: str) -> bool:
    """Whether a string an engine is given as its table names Parquet outright, read by the engine's Parquet reader
    and never looked up as a table: a URI, or a name ending ``.parquet`` or ``.pq`` (a file or a pattern).

    >>> [names_parquet(n) for n in ("people.PARQUET", "hdfs://nn/people", "people")]
    [True, True, False]
    """
    return is_uri(name) or name.lower().endswith(PARQUET_SUFFIXES)


def names_path(name: str) -> bool:
    """Whether a string an engine is given as its table, and that names no table or view of the engine's, is a
    Parquet path all the same (a job's input, a folder of parts, :func:`check_source`): a folder that exists, or a
    name holding a path separator; else it is refused as a table that does not exist.

    >>> [names_path(n) for n in ("out/people", "./people", "people")]
    [True, True, False]
    """
    return Path(name).is_dir() or "/" in name or os.sep in name


def check_source(path: str | Path, what: str = "input") -> None:
    """Refuse in one line a local Parquet source an engine would read itself, in the words a job's input is refused
    in: a folder without parts, or with parts in subfolders (:func:`parquet_parts`), a pattern (``d/*.parquet``)
    that matches no file, or a path that is neither a file nor a folder.

    >>> check_source("no/such.parquet")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: input 'no/such.parquet' does not exist or is not a file
    """
    name = str(path)
    if is_uri(name):  # read where the engine reads it: it says what is wrong there
        return
    if Path(name).is_dir():
        parquet_parts(name, what)
    elif not Path(name).is_file():
        if not re.search(r"[*?\[]", name):
            raise InputError(_no_file(name, what))
        if not glob.glob(name, recursive=True):
            raise InputError(f"{what} {name!r} names no file (a pattern that matches none)")


def _no_file(path: str | Path, what: str) -> str:
    """What is said of an input path that is neither a file nor a folder."""
    return f"{what} {str(path)!r} does not exist or is not a file"


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
    nested = next(_nested_parts(path), None)
    if nested is not None:
        raise InputError(
            f"{what} folder {str(path)!r} holds .parquet files in a subfolder ({nested.relative_to(path).as_posix()!r})"
            ": a folder's parts are read from the folder itself, not from nested folders (a Hive layout's key=value "
            "folders); pass a folder with its parts directly in it, or one file: "
            f"pl.scan_parquet({str(path)!r}, hive_partitioning=True).sink_parquet('table.parquet') writes one with the "
            "partition columns"
        )
    if not parts:
        raise InputError(f"{what} folder {str(path)!r} holds no .parquet file")
    return parts


def _nested_parts(path: Path) -> Iterator[Path]:
    """The .parquet files in the subfolders of `path`, at any depth, but for hidden ones (``.x``, ``_temporary``)."""
    for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for part in sorted(sub.rglob("*.parquet")):
            if part.is_file() and not any(n.startswith((".", "_")) for n in part.relative_to(path).parts):
                yield part


def parquet_dtypes(path: str | Path) -> dict[str, str]:
    """Each column's dtype as Polars names it from a local Parquet file's footer, or a folder of parts' (the first
    part's: Spark writes each alike); {} for a folder without parts. The report names a written column's dtype so.

    >>> import tempfile, polars as pl
    >>> f = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> pl.DataFrame({"a": [1]}).write_parquet(f)
    >>> parquet_dtypes(f)
    {'a': 'Int64'}
    """
    path = Path(path)
    try:
        first = parquet_parts(path)[0] if path.is_dir() else path
    except InputError:  # a folder without parts
        return {}
    return {c: str(t) for c, t in pl.scan_parquet(first, glob=False).collect_schema().items()}  # p[1].parquet


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
    ``02139``: inferred as a number, then cast, it would be ``2139``), and so is every column of numbers
    where a field has a leading zero (:data:`LEADING_ZERO`). Messages call the file `what`.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("zip,age\\n94154,76\\n02190,56\\n")
    >>> scan_input(path).collect().rows()
    [('94154', 76), ('02190', 56)]
    """
    path = Path(path)
    if path.is_dir():
        return _scan_parquet(path, parquet_parts(path, what), what)
    if not path.is_file():
        raise InputError(_no_file(path, what))
    if is_csv(path):
        if not isinstance(separator, str) or len(separator.encode()) != 1:
            raise InputError(
                f"separator must be one single-byte character such as ';', got {separator!r} "
                f"(reading {what} {str(path)!r})"
            )
        check_text(path, what=what)
        options: dict[str, Any] = {"separator": separator, "has_header": has_header, "glob": False}
        nulls = list(null_values or [])
        try:  # the types: an empty field, quoted or not, is no evidence of a String (see CSV_RULES)
            inferred = pl.scan_csv(path, **options, null_values=[*dict.fromkeys([*nulls, ""])]).collect_schema()
            names = inferred.names()
            finals = dict(zip(names, columns or names))
            coded = _leading_zeros(path, options, inferred, nulls, what)
            types = {n: pl.String() if finals.get(n) in text or n in coded else t for n, t in inferred.items()}
            lf = pl.scan_csv(path, **options, null_values=nulls or None, schema_overrides=types)
            lf.collect_schema()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot read {what} {str(path)!r} as CSV: {_first_line(exc)}") from exc
        if has_header and columns is None and "" in names:  # Polars names it '', Spark column_N, DuckDB fails
            number = names.index("") + 1
            why = f"a header line ending with the separator {separator!r}" if number == len(names) else "an empty name"
            named = "".join(f"{json.dumps(n)}, " for n in names[:2] if n)
            raise InputError(
                f"cannot read {what} {str(path)!r} as CSV: the header names no column {number} ({why}); name it in "
                f"the header, or name every column in columns (job file: columns = [{named}...])"
            )
        if has_header and columns is None:
            _check_header_unique(path, separator, names, what)
            lf = _header_unescaped(path, separator, names, lf)
        empty = check_fields(path, separator, len(names), null_values=nulls, what=what)
        if columns is not None:
            check_unique(list(columns), "columns")
            if len(columns) != len(names):
                raise InputError(
                    f"columns names {len(columns)} columns but {str(path)!r} has {len(names)} (first line: {names[:5]}"
                    f"{' ...' if len(names) > 5 else ''}); give one name per column"
                )
            lf = lf.rename(dict(zip(names, columns)))
        return lf.filter(~pl.all_horizontal(pl.all().is_null())) if empty else lf  # CSV_RULES: no value, skipped
    return _scan_parquet(path, [path], what)


LEADING_ZERO = r"[ \t]*[+-]?0[0-9]"
"""A CSV field that starts so (a ``0`` followed by a digit, after the spaces, tabs and sign a number may have:
``02190``, ``007``, `` -01.5``; not ``0``, ``0.5``) makes its column String, read as written on every engine: a
number would drop the zero (``02190`` published as ``2190``), changing the text of a column published as it is.
A job's ``schema`` may still type it as a number (``{ zip = "Int64" }``: ``02190`` -> ``2190``)."""


def _leading_zeros(
    path: Path, options: Mapping[str, Any], inferred: pl.Schema, nulls: Sequence[str], what: str
) -> set[str]:
    """The columns Polars `inferred` as numbers reading the CSV `path` with `options` where a field, null strings
    aside, starts with a leading zero (:data:`LEADING_ZERO`): one pass over those columns read as text, once the
    file passed :func:`check_fields` (a file the engines would read apart is refused first, by its record)."""
    numeric = [n for n, t in inferred.items() if t.is_numeric()]
    if not numeric:
        return set()
    check_fields(path, options["separator"], len(inferred), null_values=nulls, what=what)
    key = (_file_version(path, options["separator"], len(inferred)), options["has_header"], tuple(nulls), *numeric)
    if key not in _ZEROS:  # a job reads its input on two roads: the pass over the columns once per file version
        starts = f"^(?:{LEADING_ZERO})"
        read = pl.scan_csv(path, **options, null_values=list(nulls) or None, infer_schema=False)
        found = read.select(pl.col(c).str.contains(starts).any() for c in numeric).collect().row(0)
        _ZEROS[key] = {c for c, hit in zip(numeric, found) if hit}
    return set(_ZEROS[key])


_ZEROS: dict[tuple[object, ...], set[str]] = {}
"""The columns :func:`_leading_zeros` found, per version of a file (:func:`_file_version`), header, null strings and
numeric columns."""


_DUPLICATED = re.compile(r"_duplicated_\d+\Z")
"""How Polars renames a header's second use of a name (``race`` -> ``race_duplicated_0``)."""


def _check_header_unique(path: Path, separator: str, names: Sequence[str], what: str) -> None:
    """Refuse a CSV header that names a column twice: Polars renames the copy (``race_duplicated_0``), DuckDB and
    Spark take Polars' names, and the copy would pass through unprotected. The header is read as written only when
    a name looks renamed.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("race,s,race\\nW,a,B\\n")
    >>> scan_input(path)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: cannot read input '.../t.csv' as CSV: the header names column 'race' more than ...
    """
    if not any(_DUPLICATED.search(n) for n in names):
        return
    header = pl.read_csv(path, separator=separator, has_header=False, n_rows=1, infer_schema=False, glob=False)
    written = [str(v) for v in header.row(0)]
    written[0] = written[0].removeprefix("\ufeff")  # a byte-order mark before the header
    first = next((n for i, n in enumerate(written) if n in written[:i]), None)
    if first is not None:
        numbers = [i + 1 for i, n in enumerate(written) if n == first]
        raise InputError(
            f"cannot read {what} {str(path)!r} as CSV: the header names column {first!r} more than once (columns "
            f"{', '.join(map(str, numbers))}); give each column its own name in the header, or name every column "
            "in columns (job file: columns = [...])"
        )


def _header_unescaped(path: Path, separator: str, names: Sequence[str], lf: pl.LazyFrame) -> pl.LazyFrame:
    """`lf` with its columns named as the header writes them where a name holds a quote: Polars keeps a quoted name's
    doubled quotes (``"d""q"`` read as ``d""q``, where DuckDB, Spark and Python's csv read ``d"q``, and Polars' own
    ``write_csv`` writes it so). The header line is read again, by Python's csv, only then.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text('"d""q",s\\n1,a\\n')
    >>> scan_input(path).collect_schema().names()
    ['d"q', 's']
    """
    if not any('"' in n for n in names):
        return lf
    import csv

    with path.open(newline="", encoding="utf-8-sig", errors="replace") as f:
        written = next(csv.reader(f, delimiter=separator), [])
    if len(written) != len(names) or written == list(names):
        return lf
    return lf.rename({n: w for n, w in zip(names, written) if n != w})


DTYPES: dict[str, pl.DataType] = {
    "Int8": pl.Int8(), "Int16": pl.Int16(), "Int32": pl.Int32(), "Int64": pl.Int64(), "UInt8": pl.UInt8(),
    "UInt16": pl.UInt16(), "UInt32": pl.UInt32(), "UInt64": pl.UInt64(), "Float32": pl.Float32(),
    "Float64": pl.Float64(), "String": pl.String(), "Boolean": pl.Boolean(), "Date": pl.Date(),
}  # a table: type name -> Polars type, several a line  # fmt: skip
"""Column types a job's ``schema`` may give (Polars' names)."""


def cast_columns(lf: pl.LazyFrame, schema: Mapping[str, str], where: str = "schema") -> pl.LazyFrame:
    """`lf` with the columns of `schema` cast to the named types, refusing (with the column and its first values) a
    value that does not convert exactly (``63.5`` to ``Int64``; text that parses as an integer, ``02190``, converts
    exactly; text to ``Boolean`` is ``true`` or ``false`` in any case; a float type takes the nearest value it holds,
    ``0.1`` as ``Float32``, refusing overflow and underflow: :func:`_nearest_float`); one aggregated pass reads the
    data to check.

    >>> lf = pl.LazyFrame({"age": [63.0, 41.0, None]})
    >>> cast_columns(lf, {"age": "Int64"}).collect()["age"].to_list()
    [63, 41, None]
    >>> cast_columns(pl.LazyFrame({"d": ["2020-01-31", None]}), {"d": "Date"}).collect()["d"].to_list()
    [datetime.date(2020, 1, 31), None]
    >>> cast_columns(pl.LazyFrame({"f": ["TRUE", "false"]}), {"f": "Boolean"}).collect()["f"].to_list()
    [True, False]
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
    types = lf.collect_schema()
    cast = {c: _converted(c, types[c], DTYPES[t]) for c, t in schema.items()}
    exact = {c: _exact(pl.col(c), cast[c], types[c], DTYPES[t]) for c, t in schema.items()}
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


def _exact(value: pl.Expr, cast: pl.Expr, source: pl.DataType, target: pl.DataType) -> pl.Expr:
    """Whether `value` converted to `cast` exactly (or not at all: null, refused as lost): it reads back as itself,
    or it is text that parsed as an integer (``02190``, a leading zero: LEADING_ZERO; ``+5``) or a Boolean, which is
    exact, or it became a float (:func:`_nearest_float`)."""
    if source == pl.String and (target.is_integer() or target == pl.Boolean):
        return pl.lit(True)
    if target.is_float() and (source == pl.String or source.is_numeric()):
        return _nearest_float(value, cast, source)
    return (cast.cast(source, strict=False) == value) | cast.is_null()


def _nearest_float(value: pl.Expr, cast: pl.Expr, source: pl.DataType) -> pl.Expr:
    """Whether `cast`, `value` (a number, or text) as a float type, is kept: a float type holds the nearest value of
    its own, so any rounding within its range is (``0.1`` as ``Float32`` is 0.100000001..., 16777217 as
    16777216.0; text that parses, ``1.50``, ``1e2``); a finite value that overflows to infinity (``1e400``; ``1e39``
    as ``Float32``) or a nonzero one that underflows to zero (``1e-400``; ``1e-50`` as ``Float32``) is refused, and
    so is a NaN written with a sign (``-nan``: Spark reads it as null).

    >>> x = pl.col("x")
    >>> lf = pl.LazyFrame({"x": [0.1, 1e39, 1e-50, float("inf"), 0.0]})
    >>> lf.select(_nearest_float(x, x.cast(pl.Float32), pl.Float64())).collect()["x"].to_list()
    [True, False, False, True, True]
    """
    if source == pl.String:
        infinite = value.str.contains(r"^[+-]?(?i:inf|infinity)$")
        zero = ~value.str.contains(r"^[^eE]*[1-9]")  # no nonzero digit before the exponent
        nan = value.str.contains(r"^(?i:nan)$")
    else:
        number = value.cast(pl.Float64)
        infinite, zero, nan = number.is_infinite(), number == 0, number.is_nan()
    return (cast.is_finite() & ((cast != 0) | zero)) | (cast.is_infinite() & infinite) | (cast.is_nan() & nan)


def _converted(column: str, source: pl.DataType, target: pl.DataType) -> pl.Expr:
    """`column` converted to `target`, null where it does not convert: text to a date is parsed as ISO 8601
    (``2020-01-31``; Polars no longer casts text to dates), text to a Boolean as the CSV reader reads it
    (:data:`PARSES`: ``true`` or ``false`` in any case; Polars casts no text to Boolean), everything else cast."""
    if source == pl.String and target == pl.Date:
        return iso_dates(pl.col(column))
    if source == pl.String and target == pl.Boolean:
        text = pl.col(column)
        return pl.when(text.str.contains(f"^(?:{PARSES['Boolean']})$")).then(text.str.to_lowercase() == "true")
    return pl.col(column).cast(target, strict=False)


def scanned_files(lf: pl.LazyFrame | pl.DataFrame) -> list[str]:
    """Every location a LazyFrame's plan reads (Parquet, CSV, IPC, ... anywhere in the query, joins included), in plan
    order; none for a DataFrame or a plan over rows in memory only. A writer protects them from its outputs
    (:meth:`polars_anon.outputs.Outputs.protect`): a table written onto a file it is read from would replace its data,
    and a new file inside a folder (or matching a pattern) that is read would join its data at the next read.

    These are every file the scans read (those a folder or a pattern expands to, however many, from the plan as
    given, which Polars' plan visitor resolves unoptimized: a filter prunes no hive folder; a linked file stays
    protected where it points) PLUS the sources as given (the folder, the pattern),
    read from the serialized plan. The plan is serialized only when it is light (no literal list that Polars prints
    elided, no more than :data:`_LIGHT_ROWS` bytes of rows in memory: the serialized plan holds them, 44 CPU s for 3M
    rows); otherwise the folders of the files of a scan that Polars expanded (several files, or one that a folder or
    a pattern listed), and their common folder, stand for the source as given (a writer refuses every target inside).

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
    with missing_sources(lf):
        printed = lf.explain(optimized=False)
    scans, in_memory = _resolved_scans(lf, printed)
    visited = bool(scans)
    found = [file for files, _ in scans for file in files]
    for listed, more in re.findall(r"SCAN \[(.*?)(, \.\.\. \d+ other sources?)?\]$", printed, re.M):
        if not listed:  # a Python source (pl.defer, an IO plugin: "PYTHON SCAN []") names no file
            continue
        files = listed.split(", ") if not more else [listed]
        # the files printed too; without the visitor's exact names, a name holding ", " split there and whole
        found += files if visited or len(files) == 1 else [*files, listed]
        if more or len(files) > 1:  # expanded: without the sources as given, its folders stand for them
            scans.append((files, True))
    for listed in re.findall(rf"^\s*INFO: {_READS}(\[.*\])$", printed, re.M):  # a checked frame of ours
        found += json.loads(listed)
    if not found:
        return []
    light = "…" not in printed and in_memory <= _LIGHT_ROWS and "PYTHON[" not in printed  # a Python source: pickled
    serialized = serialized_scans(lf) if light else None
    if serialized is not None:
        found += serialized
    else:  # the folders of the files of each scan Polars expanded stand for the folder or the pattern as given
        for files, expanded in scans:
            if expanded:
                found += [f.rpartition("/")[0] or "." for f in files] + [os.path.commonpath(files) or "."]
    return list(dict.fromkeys(found))


def reads_detail(files: Sequence[str]) -> str:
    """What a Python source of ours (the checked frame of :meth:`polars_anon.Anonymized.lazy`) shows in its plan:
    the files it reads, which :func:`scanned_files` reads back (a writer then protects them as a scan's).

    >>> from polars.io.plugins import register_io_source
    >>> source = register_io_source(lambda *_: iter([]), schema={}, explain_detail=reads_detail(["in/a b.csv"]))
    >>> scanned_files(source)
    ['in/a b.csv']
    """
    return _READS + json.dumps(list(files))


_READS = "polars_anon reads "
"""The words before the JSON list of :func:`reads_detail` (``INFO:`` before them in the printed plan)."""


_LIGHT_ROWS = 1 << 18
"""The bytes of rows in memory (:meth:`polars.DataFrame.estimated_size`) above which :func:`scanned_files` does not
serialize a plan (its JSON form costs about 15 CPU µs a value)."""


def _resolved_scans(lf: pl.LazyFrame, printed: str) -> tuple[list[tuple[list[str], bool]], int]:
    """The files of every scan of the plan as Polars resolves it (each folder and pattern expanded: all its files),
    with whether Polars expanded it (a folder, a pattern or several files), and the bytes of rows in memory. Read by
    Polars' plan visitor (the interface GPU engines read plans by); where it is unavailable (a node it cannot show,
    such as ``map_batches``), no files, and rows in memory only when the `printed` plan holds a frame (``DF [``): a
    plan without rows may then still be serialized for its sources as given."""
    scans: list[tuple[list[str], bool]] = []
    in_memory = 0
    try:
        # the plan as given (no optimization: a predicate prunes no hive folder, no scan is dropped)
        visitor = lf._ldf.with_optimizations(pl.QueryOptFlags.none()._pyoptflags).visit()
        todo = [visitor.get_node()]
        while todo:
            visitor.set_node(todo.pop())
            node = visitor.view_current_node()
            kind = type(node).__name__
            if kind == "Scan" and node.paths:
                files = [str(p) for p in node.paths]
                scans.append((files, len(files) > 1 or node.source_sizes is not None))
            elif kind == "DataFrameScan":
                in_memory += node.df.estimated_size()
            todo += reversed(visitor.get_inputs())
    except Exception:  # noqa: BLE001 - a Polars without the visitor, or a node it cannot show: the printed plan only
        return [], (1 << 62) if "DF [" in printed else 0
    return scans, in_memory


RAGGED = "a row has another number of fields than the header: quote the fields that hold the separator"
"""The hint of every refusal of a CSV row with more or fewer fields than its header (Polars, DuckDB, Spark)."""


def check_fields(
    path: Path, separator: str, n_fields: int, *, null_values: Sequence[str] = (), what: str = "input"
) -> bool:
    """Refuse a CSV file that the engines would read apart (see :data:`CSV_RULES`), naming the first record at fault:
    one of more or fewer fields than `n_fields` (its header's; a separator ending a row makes one more field), a quote
    inside a field (``a"b``, ``, "x"``: a field is quoted from its first character), or any other error of DuckDB's
    strict reader (an unterminated quote). Returns whether a record of the file may hold no value (a blank line, or
    a first field that is empty or one of `null_values`): every engine then skips such records.

    Polars reads a short row as nulls, and a long one fails only when every column is read: a command that reads
    some columns (``risk``, ``check``) would answer where another refuses, and DuckDB refuses both. A few streaming
    passes over the file (:func:`_scan_fields`), once per version of the file in a process (a job reads its input on
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
    key = _file_version(path, separator, n_fields)
    nulls = tuple(dict.fromkeys(null_values))
    if (key, nulls) in _CHECKED:
        return _CHECKED[key, nulls]
    problem, empty = _scan_fields(path, separator, n_fields, nulls)
    if problem is not None:
        raise InputError(f"cannot read {what} {str(path)!r} as CSV: {problem}")
    _CHECKED[key, nulls] = empty
    return empty


def _file_version(path: Path, separator: str, n_fields: int) -> tuple[str, int, int, int, int, str, int]:
    """One version of a CSV file read with `separator` into `n_fields` fields: its path, inode, mtime, ctime and size
    (a file replaced with its mtime kept, ``cp -p``, has another inode or ctime), the separator and the fields."""
    stat = path.stat()
    return (str(path.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, separator, n_fields)


_CHECKED: dict[tuple[tuple[str, int, int, int, int, str, int], tuple[str, ...]], bool] = {}
"""The CSV files :func:`check_fields` passed (path, inode, mtime, ctime, size, separator, fields; null strings), and
whether a record may hold no value: a file replaced with its mtime kept (``cp -p``, ``rsync -t``) has another inode
or ctime."""

CSV_RULES = """\
A CSV input is read alike on every engine: a quoted empty field ("") is the empty string in a String column and
null in a column of another type; an empty field is null; the null strings are null, quoted or not; a blank line,
and a record whose every field is null, is skipped; a record of more or fewer fields than the header (a separator
ending a row makes one more field), a quote inside a field or ending one that does not start with one, a header with
an empty name or a name used twice (unless ``columns`` names every column), lines ending with a carriage return alone,
or a value that breaks the type inferred from the first rows (the text each type reads: PARSES; spaces only are null in
a column of numbers) is refused; a column of numbers where a field has a leading zero (LEADING_ZERO: 02190) is String,
read as written."""
"""The rules every engine reads a CSV input by (Polars' reader; DuckDB and Spark read every column as text and type it
as Polars does)."""


_BOM = b"\xef\xbb\xbf"
"""UTF-8's byte-order mark, which spreadsheet exports put before the header (pandas' ``utf-8-sig``)."""


def _byte_facts(path: Path, separator: str, chunk: int = 1 << 24) -> tuple[bool, bool, int | None]:
    """One pass over the bytes: whether a line is blank, whether a line ends with the separator, and the line number
    of the first quote inside a field, or None: a quote with a character on each side that is neither a separator, a
    line break nor a quote is never a field's opening or closing quote nor one of a doubled pair, so it stands inside
    an unquoted field (``a"b``, `` "x"``), which DuckDB reads otherwise than Polars and Spark. NumPy finds them
    (``bytes.__contains__`` for ``",\\n"`` and three more patterns cost 0.5 CPU s on the 3M-row register, 135 MB; a
    regular expression for the quotes 2.2 s on the register quoted throughout; NumPy 0.15 and 0.37 s)."""
    import numpy as np

    sep = separator.encode()[0]
    blank = trailing = False
    tail, offset = b"", 0
    with path.open("rb") as f:
        while block := f.read(chunk):
            data = tail + block
            a = np.frombuffer(data, np.uint8)
            if b'"' in data:  # a quote with neither neighbour a separator, a line break or a quote
                quote = a == 34
                edge = quote | (a == sep) | (a == 10) | (a == 13)
                if offset == 0 and data.startswith(_BOM):  # the file's first field starts after its byte-order mark
                    edge[len(_BOM) - 1] = True
                lone = np.flatnonzero(quote[1:-1] & ~edge[:-2] & ~edge[2:])
                if len(lone):
                    return blank, trailing, _line_of(path, offset - len(tail) + int(lone[0]) + 1)
            ends = np.flatnonzero(a == 10)
            ends = ends[ends >= 2] if len(tail) == 2 else ends[ends >= 1]
            last = a[ends - 1]
            crlf = last == 13
            last = np.where(crlf & (ends >= 2), a[np.maximum(ends - 2, 0)], last)  # the byte before "\r\n"
            blank = blank or bool((last == 10).any())
            trailing = trailing or bool((last == sep).any())
            offset += len(block)
            tail = data[-2:]
    return blank, trailing or tail.endswith(bytes([sep])), None


def quoted_line_break(path: str | Path, chunk: int = 1 << 24) -> bool:
    """Whether a quoted field of the CSV file `path` holds a line break (a line feed or a carriage return): a line
    ends after an odd number of quotes (a file :func:`check_fields` passed quotes a field from its first character
    and doubles a quote inside it). Spark reads such a file with ``multiLine``, which parses each file in one task;
    without one, it splits a file in parts. One NumPy pass over the bytes (none when the file holds no quote).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text('id,note\\n1,"a, b"\\n2,"c\\nd"\\n')
    >>> quoted_line_break(path)
    True
    """
    import numpy as np

    odd = False
    with Path(path).open("rb") as f:
        while block := f.read(chunk):
            if b'"' not in block:
                if odd and (b"\n" in block or b"\r" in block):
                    return True
                continue
            a = np.frombuffer(block, np.uint8)
            parity = (np.cumsum(a == 34, dtype=np.uint8) + odd) & 1  # the quotes so far, odd or even
            if parity[(a == 10) | (a == 13)].any():  # a line feed or a lone carriage return (Hadoop ends lines at both)
                return True
            odd = bool(parity[-1])
    return False


def _line_of(path: Path, offset: int, chunk: int = 1 << 24) -> int:
    """The line number (from 1) of the byte at `offset`."""
    lines = 1
    with path.open("rb") as f:
        while offset > 0 and (block := f.read(min(chunk, offset))):
            lines += block.count(b"\n")
            offset -= len(block)
    return lines


def _scan_fields(path: Path, separator: str, n_fields: int, nulls: tuple[str, ...]) -> tuple[str | None, bool]:
    """The first fault of the file (words after "cannot read ... as CSV: "; None: none), and whether a record may
    hold no value. DuckDB's strict reader counts the fields (quotes and line breaks in quoted fields understood;
    blank lines skipped; its record number, the header 1), not a Polars pass over the lines: a pass that understood
    quotes cost 2.8 CPU s on 3M quoted register rows, DuckDB 0.7. DuckDB takes a separator ending a row for no field:
    when a line ends with one, a second read, one column wider, finds a record that has it."""
    import duckdb

    from polars_anon.quoting import duckdb_literal

    blank, trailing, quote = _byte_facts(path, separator)
    if quote is not None:
        return (
            f"line {quote} has a quote inside a field (a field is quoted from its first character: no space before "
            'the quote); quote the whole field and double each quote in it ("a ""b"""), or remove the quote',
            False,
        )
    source = literal_path(path, "duckdb")
    con = duckdb.connect()
    try:
        columns = {f"c{i}": "VARCHAR" for i in range(n_fields)}
        read = con.read_csv(
            source, header=False, sep=separator, auto_detect=False, columns=columns, max_line_size=MAX_FIELD
        )
        null = " OR ".join(["c0 IS NULL", *(f"c0 = {duckdb_literal(n)}" for n in nulls)])
        empty, records = read.aggregate(f"count_if({null}) > 0, count(*)").fetchall()[0]
        empty = bool(empty)
        if blank and n_fields > 1:  # DuckDB skips a blank line that Polars counts: one column, a blank line a record
            lines = {"strict_mode": False, "max_line_size": MAX_FIELD}
            one = con.read_csv(
                source, header=False, sep=separator, auto_detect=False, columns={"c0": "VARCHAR"}, **lines
            )
            records = one.aggregate("count(*)").fetchall()[0][0]
        problem = _records_apart(path, separator, records)
        if problem is not None:
            return problem, False
        if trailing:
            found = _first_wide_record(con, source, separator, n_fields)
            if found is not None:
                return _ragged(found, n_fields + 1, n_fields), empty
    except duckdb.Error as exc:
        text = str(exc)
        counted = re.search(r"CSV Error on Line: (\d+).*?Expected Number of Columns: \d+ Found: (\d+)", text, re.S)
        if counted is not None:
            return _ragged(int(counted[1]), int(counted[2]), n_fields), False
        lines = [line.strip() for line in text.split("Possible fixes:")[0].splitlines() if line.strip()]
        said = lines[-1] if len(lines) > 2 and lines[1].startswith("Original Line") else ""  # the last: DuckDB's why
        return f"{lines[0] if lines else type(exc).__name__}{': ' + said if said else ''}", False
    finally:
        con.close()
    return None, empty or blank


def _records_apart(path: Path, separator: str, records: int) -> str | None:
    """Why Polars reads another number of records than DuckDB's `records` (a quote ending an unquoted field, such
    as 5'11": Polars pairs it with the next quote), or Polars' own error; None when they agree."""
    try:
        counted = pl.scan_csv(path, separator=separator, has_header=False, glob=False).select(pl.len()).collect()
    except pl.exceptions.PolarsError as exc:
        return _first_line(exc)
    polars = counted.item()
    if polars == records:
        return None
    line = _quote_ending_line(path, separator)  # one more pass, the file refused already
    where = "a quote ends a field" if line is None else f"line {line} has a quote ending a field"
    return (
        f'{where} that does not start with one (5\'11", ab"): Polars reads {polars} records where DuckDB reads '
        f"{records} (the header included); "
        """quote the whole field and double each quote in it ("5'11\"\"", "ab\"\""), or remove the quote"""
    )


def _quote_ending_line(path: Path, separator: str, chunk: int = 1 << 24) -> int | None:
    """The line of the first quote that ends a field not opened by a quote (``5'11"``), or None: the first quote with
    an even number of quotes before it (outside any quoted field) that follows a character other than a separator,
    a line break or a quote (it opens no field, and is no doubled quote's second). One NumPy pass."""
    import numpy as np

    sep = separator.encode()[0]
    odd, before, offset = False, 10, 0  # `before`: the byte before the block (a line start at the file's start)
    with path.open("rb") as f:
        while block := f.read(chunk):
            if b'"' in block:
                a = np.frombuffer(block, np.uint8)
                quote = a == 34
                parity = (np.cumsum(quote, dtype=np.uint8) - quote + odd) & 1  # the quotes before each byte
                prev = np.concatenate([np.array([before], np.uint8), a[:-1]])
                edge = (prev == sep) | (prev == 10) | (prev == 13) | (prev == 34)
                if offset == 0 and block.startswith(_BOM):
                    edge[len(_BOM)] = True
                found = np.flatnonzero(quote & (parity == 0) & ~edge)
                if len(found):
                    return _line_of(path, offset + int(found[0]))
                odd = bool((int(quote.sum()) + odd) & 1)
            before, offset = block[-1], offset + len(block)
    return None


def _first_wide_record(con: Any, source: str, separator: str, n_fields: int) -> int | None:
    """The first record (the header 1) with one field more than `n_fields`: DuckDB takes a separator ending a row
    for no field, so a read one column wider (the missing padded with nulls, an empty field '' as no string is null)
    finds it; None when there is none."""
    wide = {f"c{i}": "VARCHAR" for i in range(n_fields + 1)}
    options: dict[str, Any] = {"null_padding": True, "parallel": False, "allow_quoted_nulls": False}
    options |= {"na_values": [NO_NULL], "max_line_size": MAX_FIELD}
    read = con.read_csv(source, header=False, sep=separator, auto_detect=False, columns=wide, **options)
    numbered = read.project(f"row_number() OVER () AS n, c{n_fields} IS NOT NULL AS wide")
    found = numbered.filter("wide").aggregate("min(n)").fetchall()[0][0]
    return None if found is None else int(found)


def _ragged(record: int, fields: int, n_fields: int) -> str:
    return f"record {record} (the header is record 1) has {fields} fields, the header {n_fields}; {RAGGED}"


def _scan_parquet(path: Path, files: list[Path], what: str = "input") -> pl.LazyFrame:
    try:
        lf = pl.scan_parquet(files, glob=False)  # each file by its name: p[1].parquet is no pattern
        lf.collect_schema()
        if len(files) > 1:
            _check_parts_alike(path, files, what)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read {what} {str(path)!r} as Parquet: {_first_line(exc)}") from exc
    return lf


def _check_parts_alike(folder: Path, parts: list[Path], what: str) -> None:
    """Refuse a folder whose Parquet parts differ in their columns or types (in any order they are alike), naming the
    first part and column that differ from the first part: Polars failed on them in a traceback (a later part's
    Int32 where the first has Int64, a missing column) and DuckDB read an Int32 part into an Int64 column; every
    engine reads a local folder through here first, so all refuse it alike. Each part's footer only is read.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"a": [1]}, schema={"a": pl.Int64}).write_parquet(d / "part-0.parquet")
    >>> pl.DataFrame({"a": [2]}, schema={"a": pl.Int32}).write_parquet(d / "part-1.parquet")
    >>> scan_input(d)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: input folder '...' has parts that differ: column 'a' is Int32 in 'part-1.parquet' ...
    """
    first = pl.read_parquet_schema(parts[0])
    for part in parts[1:]:
        schema = pl.read_parquet_schema(part)
        missing = [c for c in first if c not in schema]
        more = [c for c in schema if c not in first]
        typed = next((c for c in first if c in schema and schema[c] != first[c]), None)
        if missing or more:
            lacks = [f"{part.name!r} lacks columns {missing} of {parts[0].name!r}"] if missing else []
            has = [f"{part.name!r} has columns {more} that {parts[0].name!r} has not"] if more else []
            said = "; ".join(lacks + has)
        elif typed is not None:
            said = f"column {typed!r} is {schema[typed]} in {part.name!r} but {first[typed]} in {parts[0].name!r}"
        else:
            continue
        raise InputError(
            f"{what} folder {str(folder)!r} has parts that differ: {said}; write every part with the same columns "
            "and types"
        )


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def check_text(path: Path, chunk: int = 1 << 24, *, what: str = "input") -> None:
    """Refuse a CSV file that is not UTF-8, naming the line of the first bad byte, or where a line ends with a carriage
    return alone (``\\r`` followed by anything but ``\\n``, outside a quoted field: Polars reads it as no line break,
    so every line of a file of such lines is one header of every field and no row, and one such line among ``\\n``
    lines makes a record of too many fields; DuckDB and Spark alike), naming its line, in one streaming pass.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "mac.csv"
    >>> _ = path.write_bytes(b"id,sex\\r1,F\\r")
    >>> check_text(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: cannot read input '.../mac.csv' as CSV: its lines end with a carriage return...
    >>> _ = path.write_bytes(b'id,sex\\r\\n1,"F\\rx"\\r\\n2,M\\r2,F\\r\\n')
    >>> check_text(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: cannot read input '.../mac.csv' as CSV: line 3 ends with a carriage return alone...
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, offset = 1, 0
    newline = suspect = held = False
    with path.open("rb") as f:
        while block := f.read(chunk):
            newline = newline or b"\n" in block
            suspect = suspect or (held and not block.startswith(b"\n"))
            if b"\r" in block:  # one before anything but a line feed? (counted: a CRLF file costs two counts a block)
                held = block.endswith(b"\r")  # judged by the next block's first byte
                suspect = suspect or block.count(b"\r") - held != block.count(b"\r\n")
            else:
                held = False
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
    lone = _lone_return_line(path, chunk) if suspect or held else None  # a quoted field may hold one: read again
    if lone is not None:
        where, which = (f"line {lone} ends", "every line") if newline else ("its lines end", "them")
        raise InputError(
            f"cannot read {what} {str(path)!r} as CSV: {where} with a carriage return alone (\\r, as old Mac "
            f"files), which no engine reads as a line break; end {which} with \\n or \\r\\n (e.g. tr '\\r' '\\n' < "
            f"{path.name} > fixed.csv) or write the table as Parquet"
        )


def _lone_return_line(path: Path, chunk: int) -> int | None:
    """The line (from 1, counting line feeds) of the first carriage return of `path` that ends a line alone: followed
    by a byte other than a line feed, or by none, outside a quoted field (:func:`_lone_return`); None if there is
    none."""
    odd, line, held = False, 1, b""
    with path.open("rb") as f:
        while block := f.read(chunk):
            data = held + block  # a carriage return that ended the last block, judged by the byte after it
            at = _lone_return(data, odd)
            if at is not None:
                return line + data[:at].count(b"\n")
            odd ^= bool(block.count(b'"') & 1)
            line += block.count(b"\n")
            held = b"\r" if data.endswith(b"\r") else b""
    return line if held and not odd else None


def _lone_return(data: bytes, odd: bool) -> int | None:
    """The index in `data` of its first carriage return followed by a byte other than a line feed and outside a
    quoted field (`odd`: `data` starts inside one; a quoted field may hold one), or None. Its last byte is not judged:
    the byte after it is not known."""
    import numpy as np

    a = np.frombuffer(data, np.uint8)
    lone = np.flatnonzero((a[:-1] == 13) & (a[1:] != 10))
    if len(lone) and b'"' in data:  # the quotes before each, odd or even (uint8 wraps at 256, an even number)
        parity = (np.cumsum(a == 34, dtype=np.uint8) + odd) & 1
        lone = lone[parity[lone] == 0]
    elif odd:
        return None
    return int(lone[0]) if len(lone) else None


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
