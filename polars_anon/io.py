"""Reading inputs: Parquet (preferred) or CSV, refused clearly when unreadable.

Writing is :mod:`polars_anon.outputs` (all-or-nothing output sets)."""

from __future__ import annotations

import codecs
from pathlib import Path

import polars as pl

from polars_anon.errors import InputError

__all__ = ["CSV_SUFFIXES", "check_utf8", "html_path", "parquet_parts", "report_path", "scan_input"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data")
"""Files read as CSV; every other file is read as Parquet."""


def parquet_parts(path: str | Path) -> list[Path]:
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
        raise InputError(f"input {str(path)!r} is not a folder")
    parts = sorted(p for p in path.glob("*.parquet") if p.is_file() and not p.name.startswith((".", "_")))
    if not parts:
        raise InputError(f"input folder {str(path)!r} holds no .parquet file")
    return parts


def scan_input(path: str | Path, *, separator: str = ",") -> pl.LazyFrame:
    """Scan a Parquet file (preferred), a folder of Parquet parts or a CSV file lazily; refuse anything else clearly.

    CSV is chosen by the extension ``.csv``, ``.tsv``, ``.txt`` or ``.data``; every
    other file must be Parquet. The schema is read once to fail early.
    """
    path = Path(path)
    if path.is_dir():
        return _scan_parquet(path, parquet_parts(path))
    if not path.is_file():
        raise InputError(f"input {str(path)!r} does not exist or is not a file")
    is_csv = path.suffix.lower() in CSV_SUFFIXES
    if is_csv:
        if not isinstance(separator, str) or len(separator.encode()) != 1:
            raise InputError(
                f"separator must be one single-byte character such as ';', got {separator!r} (reading {str(path)!r})"
            )
        check_utf8(path)
        try:
            lf = pl.scan_csv(path, separator=separator)
            lf.collect_schema()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"cannot read input {str(path)!r} as CSV: {_first_line(exc)}") from exc
        return lf
    return _scan_parquet(path, [path])


def _scan_parquet(path: Path, files: list[Path]) -> pl.LazyFrame:
    try:
        lf = pl.scan_parquet(files)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read input {str(path)!r} as Parquet: {_first_line(exc)}") from exc
    return lf


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def check_utf8(path: Path, chunk: int = 1 << 24) -> None:
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
                    f"input {str(path)!r} is not UTF-8 text: byte {block[exc.start]:#04x} at offset {at} (line "
                    f"{line}); "
                    "convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or write it as Parquet"
                ) from None
            line += block.count(b"\n")
            offset += len(block)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise InputError(f"input {str(path)!r} is not UTF-8 text: it ends inside a multi-byte character") from None


def report_path(output: str | Path) -> Path:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.report.json``."""
    output = Path(output)
    return output.with_name(output.stem + ".report.json")


def html_path(report: str | Path) -> Path:
    """The HTML page beside a report JSON: ``out/adult_k10.report.json`` -> ``out/adult_k10.report.html``.

    >>> html_path("out/adult_k10.report.json").name, html_path("out/report").name
    ('adult_k10.report.html', 'report.html')
    """
    report = Path(report)
    return report.with_suffix(".html") if report.suffix.lower() == ".json" else report.with_name(report.name + ".html")
