"""The job file (TOML, format fixed in DESIGN.md) and running it end to end.

>>> job = Job.from_dict({"input": "in.parquet", "output": "out.parquet", "k": 5,
...                      "qids": {"sex": {"hierarchy": "suppress"}}})
>>> job.k, job.method, list(job.qids)
(5, 'fulldomain', ['sex'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import tomllib

from polars_anon._validate import check_choice, check_columns
from polars_anon.algorithms import refuse_missing_hierarchies
from polars_anon.anonymize import anonymize
from polars_anon.encode import REPRESENTATIONS, canonical
from polars_anon.encoded_io import LAYOUTS, write_encoded
from polars_anon.errors import InvalidParameterError, OutputExistsError
from polars_anon.hierarchy import Hierarchy
from polars_anon.hierarchy_spec import build_spec, parse_spec
from polars_anon.io import report_path, scan_input, write_json_atomic

__all__ = ["Job", "build_hierarchies", "encoding_path", "hierarchy_from_spec", "run_job"]

_KNOWN = {"input", "separator", "output", "k", "method", "metric", "drop", "sensitive", "seed", "encode", "encode_layout", "qids", "null", "report"}


@dataclass
class Job:
    """A parsed job file. Unknown top-level keys are method options (e.g. ``max_suppressed``)."""

    input: Path
    output: Path
    k: int
    qids: dict[str, object]
    method: str = "fulldomain"
    metric: str | None = None
    separator: str = ","
    drop: list[str] = field(default_factory=list)
    sensitive: str | None = None
    seed: int = 0
    null: str = "error"
    encode: list[str] = field(default_factory=list)
    encode_layout: str = "wide"
    report: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    base: Path = Path(".")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], base: str | Path = ".") -> Job:
        """Build from the parsed TOML; paths are relative to `base` (the job file's folder)."""
        base = Path(base)
        for key in ("input", "output", "k", "qids"):
            if key not in raw:
                raise InvalidParameterError(f"job file: missing required key {key!r} (required: input, output, k, qids)")
        qids = raw["qids"]
        if not isinstance(qids, Mapping) or not qids:
            raise InvalidParameterError("job file: [qids] must name at least one column, e.g. [qids.age] hierarchy = \"age.csv\"")
        specs = {}
        for name, table in qids.items():
            if not isinstance(table, Mapping):
                raise InvalidParameterError(f"job file: [qids.{name}] must be a table, e.g. [qids.{name}] hierarchy = \"suppress\"")
            unknown = sorted(set(table) - {"hierarchy"})
            if unknown:
                raise InvalidParameterError(f"job file: [qids.{name}] has unknown keys {unknown}; the only key is 'hierarchy'")
            specs[name] = table.get("hierarchy")  # None: no hierarchy (mondrian, mdav publish without one)
        missing = [q for q, s in specs.items() if s is None]
        refuse_missing_hierarchies(
            raw.get("method", "fulldomain"), missing, f"job file: qids {missing} have no 'hierarchy' key",
            f"add e.g. [qids.{missing[0] if missing else ''}] hierarchy = \"suppress\"",
        )  # fmt: skip
        return cls(
            input=base / str(raw["input"]),
            output=base / str(raw["output"]),
            k=raw["k"],
            qids=specs,
            method=raw.get("method", "fulldomain"),
            metric=raw.get("metric"),
            separator=raw.get("separator", ","),
            drop=list(raw.get("drop", [])),
            sensitive=raw.get("sensitive"),
            seed=int(raw.get("seed", 0)),
            null=raw.get("null", "error"),
            encode=list(raw.get("encode", [])),
            encode_layout=raw.get("encode_layout", "wide"),
            report=base / str(raw["report"]) if "report" in raw else None,
            options={k: v for k, v in raw.items() if k not in _KNOWN},
            base=base,
        )

    @classmethod
    def load(cls, path: str | Path) -> Job:
        """Read a TOML job file."""
        path = Path(path)
        try:
            raw = tomllib.loads(path.read_text())
        except OSError as exc:
            raise InvalidParameterError(f"cannot read job file {str(path)!r}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise InvalidParameterError(f"job file {str(path)!r} is not valid TOML: {exc}") from exc
        return cls.from_dict(raw, path.parent)


def hierarchy_from_spec(
    name: str, spec: object, values: Sequence[object] | pl.Series | None = None, base: Path = Path(".")
) -> Hierarchy:
    """Build a hierarchy from a job-file spec (see :mod:`polars_anon.hierarchy_spec` for the forms).

    Specs: a CSV path (relative to `base`), ``"suppress"``, ``{mask = n, width = w}``,
    ``{intervals = [w1, ...], bottom = b, top = t}``, ``{dates = ["month", ...]}``,
    ``{ordered = [s1, ...], label = "...", order = [...]}`` or
    ``{path = "...", separator = ";"}``. Built-in kinds need the column's distinct
    `values` (a Series keeps the column's dtype: integers are masked zero-padded,
    dates keep their String form). A bad spec is refused naming the qid and key.

    >>> hierarchy_from_spec("sex", "suppress", ["F", "M"]).leaf_labels
    ['F', 'M']
    """
    return build_spec(name, parse_spec(name, spec), values, base)


def build_hierarchies(lf: pl.LazyFrame, specs: Mapping[str, object], base: Path = Path(".")) -> dict[str, Hierarchy]:
    """Hierarchies for every qid that has one (spec None: none).

    Every spec is checked before any data is read; built-in kinds then read the
    distinct values of their columns in one query.
    """
    check_columns(lf, specs, "qids")
    parsed = {q: parse_spec(q, s) for q, s in specs.items() if s is not None}  # None: a qid without hierarchy
    builtin = [q for q, s in parsed.items() if s.needs_values]
    values: dict[str, pl.Series] = {}
    if builtin:
        frames = pl.collect_all([lf.select(pl.col(q).drop_nulls().unique().sort()) for q in builtin])
        values = {q: f[q] for q, f in zip(builtin, frames)}
    return {q: build_spec(q, s, values.get(q), base) for q, s in parsed.items()}


def run_job(job: Job, *, overwrite: bool = False) -> dict[str, Any]:
    """Run a job: read, anonymize, verify, write the output and its report. Returns the report."""
    encodings = [canonical(e) for e in job.encode]
    check_choice("job file: encode_layout", job.encode_layout, LAYOUTS)
    layouts = {e: job.encode_layout if e in REPRESENTATIONS else "wide" for e in encodings}  # mappings: a column per qid
    paths = {e: encoding_path(job.output, e, layouts[e]) for e in encodings}
    for path in paths.values():
        if path.exists() and not overwrite:
            raise OutputExistsError(f"output {str(path)!r} exists; pass overwrite=True (CLI: --overwrite) to replace it")
    lf = scan_input(job.input, separator=job.separator)
    hierarchies = build_hierarchies(lf, job.qids, job.base)
    result = anonymize(
        lf,
        qids=list(job.qids),
        hierarchies=hierarchies,
        k=job.k,
        method=job.method,  # type: ignore[arg-type]
        metric=job.metric,
        drop=job.drop,
        sensitive=job.sensitive,
        seed=job.seed,
        null=job.null,  # type: ignore[arg-type]
        **job.options,
    )
    result.report["input"] = str(job.input)
    if result.report.get("suppressed") and any(e in {"proportional", "statistical"} for e in encodings):
        raise InvalidParameterError(
            f"job file: encode {job.encode} needs the published rows aligned with the input, but "
            f"{result.report['suppressed']} rows were suppressed; drop 'proportional'/'statistical' or forbid suppression"
        )
    target = job.report or report_path(job.output)
    report = result.sink_parquet(job.output, overwrite=overwrite, report=target)
    if encodings:
        published = pl.scan_parquet(job.output)
        original = lf.drop(job.drop)
        written = {}
        for e in encodings:
            needs = e in {"proportional", "statistical"}
            write_encoded(published, hierarchies, paths[e], e, original=original if needs else None, seed=job.seed,
                          overwrite=overwrite, layout=layouts[e])  # fmt: skip
            written[e] = str(paths[e])
        report["encodings"] = written
        write_json_atomic(report, target, overwrite=True)
    return report


def encoding_path(output: str | Path, encoding: str, layout: str = "wide") -> Path:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.proportional.parquet`` (a directory, no suffix, for layout "classes").

    >>> encoding_path("out/adult_k10.parquet", "proportional").name
    'adult_k10.proportional.parquet'
    >>> encoding_path("out/adult_k10.parquet", "proportional", "classes").name
    'adult_k10.proportional'
    """
    output = Path(output)
    suffix = "" if layout == "classes" else output.suffix or ".parquet"
    return output.with_name(f"{output.stem}.{encoding}{suffix}")
