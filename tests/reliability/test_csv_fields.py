"""A CSV row with another number of fields than its header is refused, naming the line (io.check_fields)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_anon import io
from polars_anon.errors import InputError


def test_quoted_fields_and_line_breaks_in_them_are_understood(tmp_path: Path) -> None:
    """Separators and line breaks inside quotes are no field boundaries; a short row after them is still found, named
    by its record (the third; the line pass before counted quoted lines by a regex, 2.8 CPU s on 3M quoted rows, and
    skipped files with line breaks in quotes)."""
    good = tmp_path / "good.csv"
    good.write_text('a,b,c\n"1","x, ""y""","3"\n2,"two\nlines",4\n')
    io.check_fields(good, ",", 3)
    short = tmp_path / "short.csv"
    short.write_text('a,b,c\n2,"two\nlines",4\n5,6\n')
    with pytest.raises(InputError, match=r"record 3 \(the header is record 1\) has 2 fields, the header 3"):
        io.check_fields(short, ",", 3)


def test_a_file_is_checked_once_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job reads its input on two roads (the Polars scan and the engine's reader): the file is read for its fields
    once, and again only when it changed."""
    calls = []
    real = io._scan_fields  # noqa: SLF001 (counting the calls of the module's own pass)
    monkeypatch.setattr(io, "_scan_fields", lambda *a: calls.append(a) or real(*a))
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    io.check_fields(path, ",", 2)
    io.check_fields(path, ",", 2)
    assert len(calls) == 1
    path.write_text("a,b\n1,2\n3,4\n")
    io.check_fields(path, ",", 2)
    assert len(calls) == 2
