"""Reading inputs: Parquet (preferred) or CSV, refused clearly when unreadable.

Writing is :mod:`polars_anon.outputs` (all-or-nothing output sets)."""

from __future__ import annotations

import codecs
from pathlib import Path

import polars as pl

from polars_anon.errors import InputError

__all__ = ["CSV_SUFFIXES", "check_utf8", "html_path", "report_path", "scan_input"]

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data")
"""Files read as CSV; every other file is read as Parquet."""


def scan_input(path: str | Path, *, separator: str = ",") -> pl.LazyFrame:
    """Scan a Parquet file (preferred) or a CSV file lazily; refuse anything else clearly.

    CSV is chosen by the extension ``.csv``, ``.tsv``, ``.txt`` or ``.data``; every
    other file must be Parquet. The schema is read once to fail early.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"input {str(path)!r} does not exist or is not a file")
    is_csv = path.suffix.lower() in CSV_SUFFIXES
    if is_csv:
        if not isinstance(separator, str) or len(separator.encode()) != 1:
            raise InputError(f"separator must be one single-byte character such as ';', got {separator!r} (reading {str(path)!r})")
        check_utf8(path)
    try:
        lf = pl.scan_csv(path, separator=separator) if is_csv else pl.scan_parquet(path)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        kind = "CSV" if is_csv else "Parquet"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read input {str(path)!r} as {kind}: {first}") from exc
    return lf


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
                    f"input {str(path)!r} is not UTF-8 text: byte {block[exc.start]:#04x} at offset {at} (line {line}); "
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
