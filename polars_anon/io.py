"""Reading inputs and writing outputs safely (temporary file, check, then rename)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon.errors import InputError, OutputExistsError

__all__ = ["report_path", "scan_input", "write_json_atomic", "write_parquet_atomic"]


def scan_input(path: str | Path, *, separator: str = ",") -> pl.LazyFrame:
    """Scan a Parquet file (preferred) or a CSV file lazily; refuse anything else clearly.

    CSV is chosen by the extension ``.csv``, ``.tsv``, ``.txt`` or ``.data``; every
    other file must be Parquet. The schema is read once to fail early.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"input {str(path)!r} does not exist or is not a file")
    is_csv = path.suffix.lower() in {".csv", ".tsv", ".txt", ".data"}
    try:
        lf = pl.scan_csv(path, separator=separator) if is_csv else pl.scan_parquet(path)
        lf.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        kind = "CSV" if is_csv else "Parquet"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read input {str(path)!r} as {kind}: {first}") from exc
    return lf


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")


def _refuse_existing(path: Path, overwrite: bool) -> None:
    if path.exists() and not overwrite:
        raise OutputExistsError(f"output {str(path)!r} exists; pass overwrite=True (CLI: --overwrite) to replace it")


def write_parquet_atomic(
    lf: pl.LazyFrame, path: str | Path, *, overwrite: bool = False, verify: Callable[[Path], Any] | None = None
) -> Any:
    """Stream `lf` to a temporary Parquet file beside `path`, verify it, then rename.

    `verify(tmp_path)` runs on the written bytes; if it raises, the temporary
    file is removed and nothing at `path` changes. Returns what `verify` returned.
    """
    path = Path(path)
    _refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    try:
        lf.sink_parquet(tmp)
        result = verify(tmp) if verify is not None else None
        _refuse_existing(path, overwrite)
        os.replace(tmp, path)
        return result
    finally:
        tmp.unlink(missing_ok=True)


def write_json_atomic(data: dict[str, Any], path: str | Path, *, overwrite: bool = False) -> None:
    """Write a JSON document through a temporary file and rename."""
    path = Path(path)
    _refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=_jsonable) + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def report_path(output: str | Path) -> Path:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.report.json``."""
    output = Path(output)
    return output.with_name(output.stem + ".report.json")


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)
