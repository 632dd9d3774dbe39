"""What a LazyFrame's plan says about the files it scans: the paths of its serialized scans, and Polars' failure on
a file that does not exist said in one line naming it. Apart from :mod:`polars_anon.io` so that the first checks of
every entry (:mod:`polars_anon._validate`) name a missing file too."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import polars as pl

from polars_anon.errors import InputError

__all__ = ["missing_sources", "serialized_scans"]


@contextmanager
def missing_sources(lf: pl.LazyFrame | None = None) -> Iterator[None]:
    """Turn Polars' failure on a scan of a frame (`lf`) whose file does not exist (a ``FileNotFoundError`` naming
    it; a folder or a pattern that expands to no file, a ``ComputeError``) into one
    :class:`~polars_anon.errors.InputError` naming it, as a job's missing input is named; any other failure passes
    unchanged.

    >>> with missing_sources():
    ...     pl.scan_csv("no/such.csv").collect_schema()
    Traceback (most recent call last):
    ...
    polars_anon.errors.InputError: input 'no/such.csv' does not exist or is not a file (a scan of the frame reads it)
    """
    try:
        yield
    except FileNotFoundError as exc:
        path = _missing_path(str(exc), lf)
        raise InputError(f"input {path!r} does not exist or is not a file (a scan of the frame reads it)") from None
    except pl.exceptions.ComputeError as exc:
        empty = re.search(r'expanded paths were empty \(path expansion input: .*?inner: "(.*?)"', str(exc))
        if empty is None:
            raise
        raise InputError(
            f"input {empty[1]!r} names no file (an empty folder, or a pattern that matches none; a scan of the frame "
            "reads it)"
        ) from None


_CUT = " (set POLARS_VERBOSE=1 to see full path)"
"""What Polars writes after a long path it cut at the start (``...end/of/the/path.csv``)."""


def _missing_path(said: str, lf: pl.LazyFrame | None) -> str:
    """The path Polars' ``FileNotFoundError`` names (``No such file or directory (os error 2): <path>``); a long one,
    which Polars cuts at the start, whole from the sources of `lf`'s serialized plan (read only then)."""
    path = said.split("): ", 1)[1] if "): " in said else said
    if not path.endswith(_CUT) or lf is None:
        return path
    tail = path.removesuffix(_CUT).removeprefix("...")
    whole = [p for p in serialized_scans(lf) or [] if p.endswith(tail)]
    return whole[0] if whole else path.removesuffix(_CUT)


def serialized_scans(lf: pl.LazyFrame) -> list[str] | None:
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
