"""The job file (TOML, format fixed in DESIGN.md) and running it end to end.

Every key is checked for its type before anything is read (the key is named in the
message); top-level keys that are not job keys are the method's options, checked
by the method's options dataclass. A job's outputs (the table, its encodings, the
report) are produced together and renamed into place only when all succeeded.

>>> job = Job.from_dict({"input": "in.parquet", "output": "out.parquet", "k": 5,
...                      "qids": {"sex": {"hierarchy": "suppress"}}})
>>> job.k, job.method, list(job.qids)
(5, 'fulldomain', ['sex'])
"""

from __future__ import annotations

import atexit
import dataclasses
import difflib
import json
import operator
import os
import re
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import polars as pl

from polars_anon._parquet_counts import parquet_counts
from polars_anon._passes import TupleCounts, collect_apart, count_tuples
from polars_anon._progress import stage
from polars_anon._types import Road
from polars_anon._validate import check_choice, check_columns, check_unique
from polars_anon.algorithms import METHODS
from polars_anon.encode import LAYOUTS, READS_ORIGINALS, REPRESENTATIONS, EncodeOptions, Layout, canonical
from polars_anon.encoded_io import is_layout_folder, stage_encoded
from polars_anon.engines import ENGINES
from polars_anon.engines.planners import check_driver_tuples
from polars_anon.engines.polars import POLARS
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.hierarchy_spec import build_spec, parse_spec, spec_files
from polars_anon.io import (
    BLANK,
    DTYPES,
    MAX_FIELD,
    NO_NULL,
    PARSES,
    cast_columns,
    check_fields,
    check_unchanged,
    file_stamps,
    html_path,
    is_csv,
    late_value,
    literal_path,
    parquet_parts,
    quoted_line_break,
    report_path,
    scan_input,
)
from polars_anon.locations import URI, as_location, is_uri
from polars_anon.options import describe, option_names, parse_options, type_matches
from polars_anon.outputs import PARQUET_SUFFIXES, Outputs, check_apart, check_parquet_target
from polars_anon.pipeline.capabilities import (
    consult_job,
    consult_names,
    consult_session,
    consult_source_dtypes,
    consult_zones,
    storage,
)
from polars_anon.pipeline.result import Anonymized, Written, write_report
from polars_anon.pipeline.road import run
from polars_anon.pipeline.state import counted_attributes
from polars_anon.privacy.counts import population_files
from polars_anon.quoting import duckdb_identifier, duckdb_literal, spark_identifier
from polars_anon.request import DEFERRED, check_request
from polars_anon.sdc.job import SdcSpec, apply_steps, check_steps, parse_sdc, unchanged_after_steps
from polars_anon.sdc.measures import check_measure_columns, measure, measure_sql

if TYPE_CHECKING:
    from polars_anon.request import Request

__all__ = [
    "KEYS",
    "Job",
    "PrivacySpec",
    "build_hierarchies",
    "build_models",
    "check_master",
    "encoding_path",
    "execute_job",
    "hierarchy_from_spec",
    "job_engine",
    "parse_privacy",
    "run_job",
]

_NAMES = str | list[str]
_KEYS: dict[str, Any] = {
    "input": str,
    "output": str,
    "k": int,
    "qids": dict[str, Any],
    "separator": str,
    "has_header": bool,
    "columns": list[str],
    "schema": dict[str, str],
    "null_values": _NAMES,
    "method": str,
    "metric": str,
    "drop": _NAMES,
    "insensitive": _NAMES,
    "sensitive": _NAMES,
    "seed": int,
    "null": str,
    "encode": _NAMES,
    "encode_layout": str,
    "report": str,
    "report_html": bool,
    "privacy": list[dict[str, Any]],
    "engine": str,
    "spark": dict[str, Any],
    "duckdb": dict[str, Any],
    "driver_tuples": int,
    "sdc": dict[str, Any],
}
"""Job keys and their types; any other top-level key is a method option."""
KEYS: tuple[str, ...] = tuple(_KEYS)
"""The job file's top-level keys: every field of :class:`Job` but ``options``, ``base`` and ``file`` (what loading
a file derives)."""
_REQUIRED = ("input", "output", "k", "qids")


def _check_keys(raw: Mapping[str, Any]) -> None:
    _check_unknown_keys(raw)
    for key in _REQUIRED:
        if key not in raw:
            raise InvalidParameterError(f"job file: missing required key {key!r} (required: {', '.join(_REQUIRED)})")
    for key, hint in _KEYS.items():
        if key in raw and not type_matches(raw[key], hint):
            raise InvalidParameterError(f"job file: key {key!r} must be {describe(hint)}, got {raw[key]!r}")
    if "separator" in raw and len(raw["separator"]) != 1:
        raise InvalidParameterError(f"job file: key 'separator' must be one character, got {raw['separator']!r}")
    if "driver_tuples" in raw:
        check_driver_tuples(raw["driver_tuples"], "job file: key 'driver_tuples'")
    if raw.get("has_header") is False and "columns" not in raw:
        raise InvalidParameterError(
            'job file: has_header = false needs the column names, e.g. columns = ["age", "sex", ...]'
        )
    if "columns" in raw:
        check_unique(raw["columns"], "job file: key 'columns'")
    for column, name in raw.get("schema", {}).items():
        check_choice(f"job file: schema type of column {column!r}", name, sorted(DTYPES))


def _data_file(path: Path, head: bytes | None = None) -> InvalidParameterError | None:
    """The refusal of a table given where a job file belongs (``polars-anon anonymize people.csv``), saying what a job
    file holds: a Parquet file by its extension or its first bytes (``PAR1``), a CSV file by its first line (no TOML
    there: no ``=``, no table or comment) and its extension or fields split by commas, semicolons or tabs; None for
    any other file that is not TOML. `head`: the file's first bytes (default: read).

    >>> print(_data_file(Path("people.csv"), b"name,age\\nAnn,31\\n"))
    'people.csv' is a CSV file, not a job file: a job file (TOML) names the input and what to publish, e.g. job.toml \
holding the lines input = "people.csv" / output = "out/people.parquet" / k = 5, then a [qids.<column>] table per \
quasi-identifier (docs/guides/job-file.md); give that file instead
    """
    if head is None:
        with open(path, "rb") as f:
            head = f.read(4096)
    first = head.split(b"\n", 1)[0].strip()
    toml = b"=" in first or first.startswith((b"[", b"#"))  # a TOML line: a job file with a mistake in it
    if path.suffix.lower() in PARQUET_SUFFIXES or head.startswith(b"PAR1"):
        kind = "Parquet"
    elif not toml and (is_csv(path) or re.search(rb"[,;\t]", first)):
        kind = "CSV"
    else:
        return None
    return InvalidParameterError(
        f"{str(path)!r} is a {kind} file, not a job file: a job file (TOML) names the input and what to publish, e.g. "
        f'job.toml holding the lines input = {json.dumps(path.as_posix())} / output = "out/{path.stem}.parquet" / '
        "k = 5, then a [qids.<column>] table per quasi-identifier (docs/guides/job-file.md); give that file instead"
    )


def _check_unknown_keys(raw: Mapping[str, Any]) -> None:
    """Refuse a top-level key that is neither a job key nor an option of any method (a misspelled key), naming the
    nearest valid one; an option of some method is left to the method's own check (explore runs several)."""
    options = sorted({name for spec in METHODS.values() for name in option_names(spec.options)})
    for key in raw:
        if key in _KEYS or key in options:
            continue
        near = difflib.get_close_matches(key, [*_KEYS, *options], n=1, cutoff=0.75)
        if near:
            raise InvalidParameterError(f"job file: unknown key {key!r}; did you mean {near[0]!r}?")
        raise InvalidParameterError(
            f"job file: unknown key {key!r}: not a job key {sorted(_KEYS)} nor an option of any method "
            "(docs/reference/cli-and-job.md)"
        )


_ENGINE_KEYS: dict[str, dict[str, Any]] = {
    "spark": {"master": str, "config": dict[str, Any]},
    "duckdb": {"memory_limit": str},
}
"""Each engine's settings table (``[spark]``, ``[duckdb]``) and its keys' types."""


def _engine_table(raw: Mapping[str, Any], engine: str, name: str) -> dict[str, Any]:
    """The ``[<name>]`` table of engine `name`'s settings, checked (empty when absent)."""
    table, keys = raw.get(name), _ENGINE_KEYS[name]
    if table is None:
        return {}
    if engine != name:
        raise InvalidParameterError(f'job file: [{name}] settings are for engine = "{name}", but engine is {engine!r}')
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise InvalidParameterError(f"job file: [{name}] has unknown keys {unknown}; keys: {sorted(keys)}")
    for key, hint in keys.items():
        if key in table and not type_matches(table[key], hint):
            raise InvalidParameterError(f"job file: key '{name}.{key}' must be {describe(hint)}, got {table[key]!r}")
    return dict(table)


_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(,[0-9]+)?\])?|local-cluster\[.+\]|yarn|(spark|k8s|mesos)://.+")


def check_master(master: str, where: str) -> str:
    """A Spark master as Spark accepts it (checked before a JVM is started, whose failure would flood the terminal).

    >>> check_master("local[2]", "--master")
    'local[2]'
    >>> check_master("bogus://x", "--master")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: --master 'bogus://x' is not a Spark master; give local, local[N], ...
    """
    if not isinstance(master, str) or not _MASTER.fullmatch(master):
        raise InvalidParameterError(
            f"{where} {master!r} is not a Spark master; give local, local[N], local[*], yarn, spark://HOST:PORT "
            "or k8s://HOST:PORT"
        )
    return master


def _spark(raw: Mapping[str, Any], engine: str) -> dict[str, Any]:
    """The ``[spark]`` table: ``master`` (e.g. ``"local[2]"``) and ``config`` pairs (``[spark.config]``)."""
    table = _engine_table(raw, engine, "spark")
    if "master" in table:
        check_master(table["master"], "job file: key 'spark.master'")
    for key, value in table.get("config", {}).items():
        if not isinstance(value, (str, int, float, bool)):
            raise InvalidParameterError(
                f"job file: key 'spark.config.{key}' must be a string, number or boolean, got {value!r}"
            )
    config = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in table.get("config", {}).items()}
    return {"master": table.get("master"), "config": config} if table else {}


def _duckdb(raw: Mapping[str, Any], engine: str) -> dict[str, Any]:
    """The ``[duckdb]`` table: ``memory_limit`` of the job's own DuckDB connection (default 1GB; the rest spills)."""
    table = _engine_table(raw, engine, "duckdb")
    if "memory_limit" in table:
        from polars_anon.engines.duckdb import memory_size  # DuckDB is loaded where it is first used

        memory_size("job file: key 'duckdb.memory_limit'", table["memory_limit"])
    return table


def _qid_specs(qids: Mapping[str, Any]) -> dict[str, object]:
    if not qids:
        raise InvalidParameterError(
            'job file: [qids] must name at least one column, e.g. [qids.age] hierarchy = "age.csv"'
        )
    specs = {}
    for name, table in qids.items():
        if not isinstance(table, Mapping):
            raise InvalidParameterError(
                f'job file: [qids.{name}] must be a table, e.g. [qids.{name}] hierarchy = "suppress"'
            )
        unknown = sorted(set(table) - {"hierarchy"})
        if unknown:
            raise InvalidParameterError(
                f"job file: [qids.{name}] has unknown keys {unknown}; the only key is 'hierarchy'"
            )
        specs[name] = table.get("hierarchy")  # None: no hierarchy (mondrian, mdav publish without one)
        if specs[name] is not None:
            parse_spec(name, specs[name])  # a bad spec is refused when the job file is read
    return specs


def parse_privacy(
    tables: Sequence[Mapping[str, Any]], base: Path = Path("."), *, where: Sequence[str] | None = None
) -> list[PrivacySpec]:
    """``[[privacy]]`` tables: ``model`` names the model, the other keys are its parameters (typed, unknown refused).

    ``hierarchy`` (hierarchical t-closeness) is a hierarchy spec as in ``[qids]``;
    ``population`` a Parquet or CSV path; both relative to the job file.
    """
    from polars_anon.privacy import MODELS

    out = []
    for i, table in enumerate(tables, 1):
        here = f"job file: [[privacy]] table {i}" if where is None else where[i - 1]
        name = table.get("model")
        if name is None:
            raise InvalidParameterError(f"{here} has no 'model' key; models: {sorted(MODELS)}")
        check_choice(f"{here}: model", name, sorted(MODELS))
        params = {k: v for k, v in table.items() if k not in ("model", "hierarchy")}
        if isinstance(params.get("population"), str):
            params["population"] = str(base / params["population"])
        model = parse_options(MODELS[name], params, f"{here} (model {name!r})")
        spec = table.get("hierarchy")
        if spec is not None:
            if getattr(model, "distance", None) != "hierarchical":
                raise InvalidParameterError(
                    f"{here} (model {name!r}): key 'hierarchy' is for t-closeness with distance = \"hierarchical\""
                )
            parse_spec(str(model.sensitive_attribute), spec)
        out.append(PrivacySpec(model, spec))
    return out


@dataclass(frozen=True)
class PrivacySpec:
    """A parsed ``[[privacy]]`` table: the model, and the spec of its hierarchy when it is built from the data."""

    model: Any
    hierarchy: object = None


def job_models(
    job: Job, lf: pl.LazyFrame, values_of: Callable[[list[str]], dict[str, pl.Series]] | None = None
) -> list[Any]:
    """The job's models, hierarchies built (from the column's values for built-in kinds), a population CSV read with
    the job's CSV options (:meth:`Job.scan_population`)."""
    return build_models(job.privacy, lf, job.base, values_of=values_of, population=job.scan_population)


def build_models(
    specs: Sequence[PrivacySpec],
    lf: pl.LazyFrame,
    base: Path = Path("."),
    *,
    values_of: Callable[[list[str]], dict[str, pl.Series]] | None = None,
    population: Callable[[str], pl.LazyFrame] | None = None,
) -> list[Any]:
    """Models of parsed ``[[privacy]]`` tables (or ``--model`` tables), each ``hierarchy`` built: from its file
    (relative to `base`) or, for built-in kinds, from the values of the model's attribute in `lf` (or from
    `values_of`, an engine's group-by). A ``population`` CSV path is read by `population` (the CSV options of the
    job or the command; one read a path, which the models then share); without it, as :func:`scan_input` reads."""
    out = []
    read: dict[str, pl.LazyFrame] = {}
    for p in specs:
        model = p.model
        path = getattr(model, "population", None)
        if population is not None and isinstance(path, str) and is_csv(path):
            if path not in read:
                read[path] = population(path)
            model = dataclasses.replace(model, population=read[path])
        if p.hierarchy is None:
            out.append(model)
            continue
        attribute = model.sensitive_attribute
        check_columns(lf, [attribute], f"[[privacy]] model {model.name!r}: attribute")
        h = build_hierarchies(lf, {attribute: p.hierarchy}, base, values_of=values_of)[attribute]
        out.append(dataclasses.replace(model, hierarchy=h))
    return out


def _names(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


@dataclass
class Job:
    """A parsed job file. Unknown top-level keys are method options (e.g. ``max_suppressed``)."""

    input: Path | URI
    """A local path, or a URI kept as written (``hdfs://...``: engine "spark"; ``file://`` on every engine)."""
    output: Path | URI
    k: int
    qids: dict[str, object]
    method: str = "fulldomain"
    metric: str | None = None
    separator: str = ","
    has_header: bool = True
    """CSV input: whether its first line names the columns (else `columns` does)."""
    columns: list[str] | None = None
    """CSV input: the column names (in file order), for a file without a header line, or renaming its header."""
    schema: dict[str, str] = field(default_factory=dict)
    """Column types (Polars' names, e.g. ``{age = "Int64"}``) the input is cast to; a value that does not convert
    exactly (``63.5`` to Int64) is refused."""
    null_values: list[str] = field(default_factory=list)
    """CSV input: strings read as missing (e.g. ``["?"]``)."""
    drop: list[str] = field(default_factory=list)
    insensitive: list[str] = field(default_factory=list)
    sensitive: str | list[str] | None = None
    seed: int = 0
    null: str = "error"
    encode: list[str] = field(default_factory=list)
    encode_layout: str = "wide"
    report: Path | URI | None = None
    report_html: bool = True
    """Also write the report as an HTML page beside the JSON (``<stem>.report.html``)."""
    privacy: list[PrivacySpec] = field(default_factory=list)
    engine: str = "polars"
    """Where the rows are processed: "polars", "duckdb" or "spark" (see :mod:`polars_anon.engines`)."""
    spark: dict[str, Any] = field(default_factory=dict)
    """The ``[spark]`` table: ``master`` and ``config`` pairs (a session spark-submit made needs neither)."""
    duckdb: dict[str, Any] = field(default_factory=dict)
    """The ``[duckdb]`` table: ``memory_limit`` of the job's own connection (default 1GB; beyond it DuckDB spills)."""
    driver_tuples: int | None = None
    """Engines "duckdb" and "spark": the most class aggregates brought to the driver (default 5,000,000); beyond it
    the methods with a planner on the engine go on there (mondrian; greedy on Spark), the others are refused
    (:mod:`polars_anon.engines.planners`)."""
    sdc: SdcSpec | None = None
    """The ``[sdc]`` table: risk measures (weights, household, SUDA2) for the report's ``sdc`` key and perturbation
    steps applied to the input (:mod:`polars_anon.sdc.job`)."""
    options: dict[str, Any] = field(default_factory=dict)
    base: Path = Path(".")
    file: Path | None = None
    """The job file this job was read from (:meth:`load`): read by the run, so never one of its targets."""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], base: str | Path = ".") -> Job:
        """Build from the parsed TOML; paths are relative to `base` (the job file's folder)."""
        base = Path(base)
        _check_keys(raw)
        encode = [canonical(e) for e in _names(raw.get("encode", []))]
        layout = check_choice("job file: encode_layout", raw.get("encode_layout", "wide"), LAYOUTS)
        engine = check_choice("job file: engine", raw.get("engine", "polars"), ENGINES)
        consult_job(engine, raw["input"], {**raw, "encode": encode or None})  # which engine and input take which keys
        return cls(
            input=_located(base, raw["input"], engine, "input"),
            output=_located(base, raw["output"], engine, "output"),
            k=raw["k"],
            qids=_qid_specs(raw["qids"]),
            method=raw.get("method", "fulldomain"),
            metric=raw.get("metric"),
            separator=raw.get("separator", ","),
            has_header=raw.get("has_header", True),
            columns=raw.get("columns"),
            schema=dict(raw.get("schema", {})),
            null_values=_names(raw.get("null_values", [])),
            drop=_names(raw.get("drop", [])),
            insensitive=_names(raw.get("insensitive", [])),
            sensitive=raw.get("sensitive"),
            seed=raw.get("seed", 0),
            null=raw.get("null", "error"),
            encode=encode,
            encode_layout=layout,
            report=_located(base, raw["report"], engine, "report") if "report" in raw else None,
            report_html=raw.get("report_html", True),
            privacy=parse_privacy(raw.get("privacy", []), base),
            engine=engine,
            spark=_spark(raw, engine),
            duckdb=_duckdb(raw, engine),
            driver_tuples=raw.get("driver_tuples"),
            sdc=parse_sdc(raw["sdc"], list(raw["qids"])) if "sdc" in raw else None,
            options={k: v for k, v in raw.items() if k not in _KEYS},
            base=base,
        )

    def scan(self, path: str | Path | None = None, what: str = "input") -> pl.LazyFrame:
        """The input, read as the job says (CSV options, column names, types); or `path`, a table laid out as the
        input (the original that ``metrics`` and ``encode`` compare with a release), read the same way."""
        return cast_columns(self.scan_raw(path, what), self.schema, "job file: schema")

    def scan_raw(self, path: str | Path | None = None, what: str = "input") -> pl.LazyFrame:
        """The input (or `path`), read with the job's CSV options and column names, before its ``schema`` casts."""
        return scan_input(
            self.input if path is None else path,
            separator=self.separator,
            has_header=self.has_header,
            columns=self.columns,
            null_values=self.null_values,
            text=self.text_columns,
            what=what,
        )

    def scan_population(
        self, path: str | Path, text: Sequence[str] = (), what: str = "population table"
    ) -> pl.LazyFrame:
        """A population table (k-map, δ-presence), or another table called `what` (a release ``metrics`` or
        ``encode`` reads, its qids in `text`), read as the input is: a CSV with the job's ``separator``,
        ``null_values`` and ``schema``'s String columns (and `text`: the qids of a release ``check`` measures) read
        as written; its own header names its columns (the input's ``has_header`` and ``columns`` are not
        applied)."""
        return scan_input(
            path,
            separator=self.separator,
            null_values=self.null_values,
            text=[*self.text_columns, *(c for c in text if c not in self.text_columns)],
            what=what,
        )

    @property
    def reads(self) -> list[Path | URI]:
        """Every file a run of the job reads: the job file, the input, each hierarchy file (a qid's, a hierarchical
        t-closeness model's) and each population table. None of them is ever a target, even with overwrite
        (:meth:`Outputs.protect <polars_anon.outputs.Outputs.protect>`)."""
        files: list[Any] = [self.file, self.input]
        files += [f for name, spec in self.qids.items() for f in spec_files(name, spec, self.base)]
        files += [f for p in self.privacy for f in spec_files(p.model.sensitive_attribute, p.hierarchy, self.base)]
        files += [f for p in self.privacy for f in population_files(p.model.population_frame)]
        return [as_location(f) for f in files if f is not None]

    @property
    def parquet_files(self) -> list[Path]:
        """The local Parquet files the input is (a file, or a folder's parts); none for a CSV file or a URI."""
        if not isinstance(self.input, Path):
            return []
        if self.input.is_dir():
            return parquet_parts(self.input)
        return [self.input] if self.input.is_file() and not is_csv(self.input) else []

    @property
    def text_columns(self) -> list[str]:
        """The columns ``schema`` types as String: a CSV input's are read as written, not inferred, then cast."""
        return [c for c, t in self.schema.items() if t == "String"]

    @classmethod
    def load(
        cls, path: str | Path, *, engine: str | None = None, master: str | None = None, driver_tuples: int | None = None
    ) -> Job:
        """Read a TOML job file; `engine`, `master` and `driver_tuples` (the CLI's flags) replace the file's ``engine``,
        ``[spark] master`` and ``driver_tuples``."""
        path = Path(path)
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InvalidParameterError(f"cannot read job file {str(path)!r}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise _data_file(path) or InvalidParameterError(
                f"job file {str(path)!r} is not UTF-8 text: {exc.reason} at byte {exc.start}"
            ) from exc
        except tomllib.TOMLDecodeError as exc:
            raise _data_file(path) or InvalidParameterError(f"job file {str(path)!r} is not valid TOML: {exc}") from exc
        _check_flags(raw, engine, master, driver_tuples)
        if engine is not None:
            raw["engine"] = engine
        if driver_tuples is not None:
            raw["driver_tuples"] = driver_tuples
        if master is not None:
            spark = raw.get("spark")
            raw["spark"] = {**(spark if isinstance(spark, dict) else {}), "master": master}
        return dataclasses.replace(cls.from_dict(raw, path.parent), file=path)


def _located(base: Path, value: object, engine: str, key: str) -> Path | URI:
    """A job file's path: relative to the job file's folder; a URI kept as written (refused in one line by an
    engine that cannot read or write it: :func:`~polars_anon.pipeline.capabilities.storage`)."""
    if not isinstance(value, str):
        return base / value  # type: ignore[operator]  (the key's type was checked: a string)
    if not value.strip():  # was: the job file's folder, then refused under another name (review20 items 11, 12)
        raise InvalidParameterError(f"job file: key {key!r} is empty; give a file path")
    if is_uri(value):
        return storage(engine, value, f"job file: {key}")
    return base / value


def _check_flags(raw: Mapping[str, Any], engine: str | None, master: str | None, driver_tuples: int | None) -> None:
    """The CLI's flags, named as flags (not as keys of the job file) when they are refused."""
    chosen = engine if engine is not None else raw.get("engine", "polars")
    if master is not None:
        check_master(master, "--master")
        if chosen != "spark":
            raise InvalidParameterError(
                f"--master {master!r} is for engine 'spark', but the engine is {chosen!r}; add --engine spark"
            )
    if driver_tuples is not None:
        check_driver_tuples(driver_tuples, "--driver-tuples")
        if chosen == "polars":
            raise InvalidParameterError(
                f"--driver-tuples {driver_tuples} caps the class aggregates engines 'duckdb' and 'spark' bring to "
                "their driver, but the engine is 'polars'; add --engine duckdb or --engine spark"
            )


def hierarchy_from_spec(
    name: str, spec: object, values: Sequence[object] | pl.Series | None = None, base: Path = Path(".")
) -> Hierarchy:
    """Build a hierarchy from a job-file spec (see :mod:`polars_anon.hierarchy_spec` for the forms).

    Specs: a CSV path (relative to `base`), ``"suppress"``, ``{mask = n, width = w}``,
    ``{intervals = [w1, ...], bottom = b, top = t}``, ``{dates = ["month", ...]}``,
    ``{ordered = [s1, ...], label = "...", order = [...]}`` or
    ``{path = "...", separator = ";"}``. Built-in kinds need the column's distinct
    `values` (a Series keeps the column's dtype: integers are masked zero-padded with a width,
    dates keep their String form). A bad spec is refused naming the qid and key.

    >>> hierarchy_from_spec("sex", "suppress", ["F", "M"]).leaf_labels
    ['F', 'M']
    """
    return build_spec(name, parse_spec(name, spec), values, base, "python")


def build_hierarchies(
    lf: pl.LazyFrame,
    specs: Mapping[str, object],
    base: Path = Path("."),
    *,
    values_of: Callable[[list[str]], dict[str, pl.Series]] | None = None,
    road: Road | Literal["cli"] = "job",
) -> dict[str, Hierarchy]:
    """Hierarchies for every qid that has one (spec None: none); refusals in the words of `road` (:func:`build_spec`).

    Every spec is checked before any data is read; built-in kinds then read the
    distinct values of their columns in one query (or from `values_of`, an engine's
    group-by: column names -> their distinct non-null values, sorted).
    """
    check_columns(lf, specs, "qids")
    parsed = {q: parse_spec(q, s) for q, s in specs.items() if s is not None}  # None: a qid without hierarchy
    builtin = [q for q, s in parsed.items() if s.needs_values]
    values: dict[str, pl.Series] = {}
    if builtin and values_of is not None:
        values = values_of(builtin)
    elif builtin:
        frames = collect_apart([lf.select(pl.col(q).drop_nulls().unique().sort()) for q in builtin])
        values = {q: f[q] for q, f in zip(builtin, frames)}
    if any(len(values[q]) == 0 for q in builtin) and lf.select(pl.len()).collect().item() == 0:
        raise InfeasibleError("the input has no rows; there is nothing to anonymize")  # not "the hierarchy is empty"
    return {q: build_spec(q, s, values.get(q), base, road) for q, s in parsed.items()}


def blanks_cells(job: Job | None) -> bool:
    """True when the job's method publishes each qid cell as it was or blanked (local suppression): its release is
    read (metrics, encodings) with a blank as the qid's root (:func:`blanks_as_roots`) and a qid declared without a
    hierarchy as suppression only."""
    method = METHODS.get(job.method) if job is not None else None
    return method is not None and method.blanks


def as_protected(job: Job, lf: pl.LazyFrame, command: str, reads: Collection[str]) -> pl.LazyFrame:
    """`lf` (the job's input, or an original read as it) with the job's ``[sdc]`` protect steps applied as the job
    applies them before it anonymizes, where a step changes a qid of `reads` (the qids whose values the caller reads,
    :func:`protected_reads`): the values the job built its hierarchies from and the originals its release's encodings
    read (``encode --job`` rebuilds them: read raw, its encodings had other columns than the job's ``encode`` key
    wrote). Without ``[sdc] seed`` the steps drew a key for that run alone, which nothing can draw again: refused,
    naming `command` and the way out; `lf` as it is when no step changes a qid of `reads`."""
    steps = job.sdc.steps if job.sdc is not None else ()
    changed = sorted({c for st in steps for c in st.columns if c in job.qids and c in reads})
    if not changed:
        return lf
    assert job.sdc is not None  # steps come from it
    if job.sdc.seed is None:
        raise InvalidParameterError(
            f"{command}: the job's [sdc] protect steps change qids {changed} with a key drawn for its run alone (no "
            "[sdc] seed), so the values its release was made from cannot be made again; set [sdc] seed in the job "
            "file and run it again, or use the encode key of the job file"
        )
    return apply_steps(lf, steps, job.sdc.seed)


def protected_reads(job: Job, specs: Mapping[str, object], rows: bool) -> list[str]:
    """The qids of `specs` whose protected values matter to a reader of the job's rows (:func:`as_protected`): every
    one when it reads them row by row (`rows`: an encoding that reads the originals), else those whose hierarchy is
    built from the column's distinct values and that a step changes the distinct values of (not a rank swap, which
    moves them between rows)."""
    if rows:
        return list(specs)
    steps = job.sdc.steps if job.sdc is not None else ()
    moved = {c for st in steps if not st.keeps_values for c in st.columns}
    return [q for q, s in specs.items() if q in moved and s is not None and parse_spec(q, s).needs_values]


def encoding_specs(job: Job) -> dict[str, object]:
    """The job's hierarchy specs as its release is encoded (the job's ``encode`` step and ``polars-anon encode
    --job``): as declared, but suppression only for a qid declared without a hierarchy when the method blanks cells
    (:func:`blanks_cells`: the release holds each value or a blank, the root)."""
    blanks = blanks_cells(job)
    return {q: "suppress" if s is None and blanks else s for q, s in job.qids.items()}


def blanks_as_roots(release: pl.LazyFrame, hierarchies: Mapping[str, Hierarchy]) -> pl.LazyFrame:
    """The release of a method that blanks cells (:func:`blanks_cells`) with each blank (null) cell of a qid read as
    its hierarchy's root: the cell was suppressed, and the root lies over every original value. ``metrics --job``,
    ``encode --job`` and the job's ``encode`` step read it so; the qids as labels (Strings).

    >>> h = {"sex": Hierarchy.suppression(["F", "M"])}
    >>> blanks_as_roots(pl.LazyFrame({"sex": ["F", None]}), h).collect()["sex"].to_list()
    ['F', '*']
    """
    return release.with_columns(pl.col(q).cast(pl.String).fill_null(pl.lit(h.root)) for q, h in hierarchies.items())


def _layout(job: Job, encoding: str) -> Layout:
    # encode_layout was checked against LAYOUTS when the job was loaded
    return (
        cast(Layout, job.encode_layout) if encoding in REPRESENTATIONS else "wide"
    )  # the mappings keep a column per qid: wide


def _encoding_paths(job: Job) -> dict[str, Path]:
    return {e: encoding_path(job.output, e, _layout(job, e)) for e in job.encode}


def _refuse_misaligned(job: Job, result: Anonymized) -> None:
    """Encodings computed from the original values need every published row lined up with one original leaf."""
    needs = [e for e in job.encode if e in READS_ORIGINALS]
    if not needs:
        return
    if result.report["suppressed"]:
        raise InvalidParameterError(
            f"job file: encode {needs} needs every published row lined up with its original row, but "
            f"{result.report['suppressed']} rows are suppressed; drop {needs} from encode or set max_suppressed = 0"
        )
    if result.report["null_rows"]:
        raise InvalidParameterError(
            f"job file: encode {needs} needs the original value of every row, but {result.report['null_rows']} rows "
            "hold "
            f'nulls in a qid (published as roots under null = "suppress"); drop {needs} from encode or fill the nulls'
        )


def execute_job(job: Job, out: Outputs, *, input_name: str | None = None) -> dict[str, Any]:
    """Run a job into the output set `out` (nothing is renamed into place: the caller commits).

    Returns the report. `input_name` is the input as the report names it (default the path). The job's DuckDB or Spark
    engine is closed when it ends, failed or not (:class:`_JobEngine`).
    """
    with job_engine(job) as engine_of:
        return _execute(job, out, engine_of, input_name)


def _execute(job: Job, out: Outputs, engine_of: _JobEngine, input_name: str | None) -> dict[str, Any]:
    engine, table = None, None
    if any(isinstance(p, URI) for p in (job.input, job.output, job.report)):
        engine = engine_of()  # a URI is checked, staged and renamed on the engine's file system
        job = _on_engine_files(job, engine)
    paths = _encoding_paths(job)
    target = job.report or report_path(job.output)
    html = html_path(target) if job.report_html else None
    _check_targets(job, out, paths, target, html)
    stamps = file_stamps(_data_files(job))  # before any read: the job reads its input more than once
    if isinstance(job.input, URI):  # read by the engine only: the schema here, the values from its group-bys
        assert engine is not None
        table = read_on_engine(engine, job)
        lf = pl.LazyFrame(schema=engine.schema(table))
    else:
        lf = job.scan()
    asked = _asked(job)
    request = _checked_request(job, lf, asked)
    if job.engine == "polars":
        hierarchies, result, sdc_input, unchanged = _on_polars(job, lf, asked, request)
    else:
        unchanged = None  # the engines refuse the protect steps
        with engine_faults(job):
            hierarchies, result, sdc_input = _on_engine(job, lf, asked, request, engine_of, table)
    _refuse_misaligned(job, result)
    measure_output = None if job.sdc is None else _output_measure(result, job.sdc)
    with engine_faults(job):
        written = result.stage(out, job.output, measure=measure_output)
    sdc = None
    if job.sdc is not None:
        sdc = {
            **job.sdc.measures.describe(),
            "steps": [st.describe() for st in job.sdc.steps],
            "seed": job.sdc.describe_seed(),
            "input": sdc_input,
            "output": written.measured,
        }
    encodings = _stage_encodings(job, out, result, written, hierarchies, paths)
    report = result.build(
        written,
        input=input_name or str(job.input),
        encodings=encodings if paths else None,
        sdc=sdc,
        unchanged=unchanged,
    )
    write_report(out, report, target, html=html)  # every fact gathered: the report is built once, then written
    check_unchanged(stamps)  # last, before the caller commits: outputs of one input, or none
    return report


def _data_files(job: Job) -> list[str]:
    """The local files the job's rows come from, each read more than once (the input, a folder's parts, the models'
    population tables); the job file and the hierarchy files are read once, when the job is loaded and planned."""
    files = [job.input, *job.parquet_files]
    files += [f for p in job.privacy for f in population_files(p.model.population_frame)]
    return [str(f) for f in files if f is not None and not isinstance(f, URI)]


def _on_engine_files(job: Job, engine: Any) -> Job:
    """The job with its output and report where the engine's file system has them (a URI engine's location)."""
    location = getattr(engine, "location", None)
    if location is None:
        return job
    return dataclasses.replace(
        job, output=location(job.output), report=None if job.report is None else location(job.report)
    )


def _check_targets(job: Job, out: Outputs, paths: dict[str, Any], target: Any, html: Any) -> None:
    """Every file the job would write checked before any data is read; every file it reads protected (never
    replaced: :attr:`Job.reads`)."""
    check_parquet_target(job.output, folder=job.engine == "spark")  # Spark writes a folder
    out.protect(*job.reads)  # never replaced, even with overwrite
    targets = [("output", job.output, job.engine != "spark"), ("report", target, True)]  # Spark writes a folder
    targets += [("report page", html, True)] if html else []
    targets += [(f"encoding {e!r}", p, not is_layout_folder(p)) for e, p in paths.items()]  # a user's folder
    check_apart((what, path) for what, path, _ in targets)
    for what, path, file in targets:
        out.check(path, file=file, what=what)


def _asked(job: Job) -> dict[str, Any]:
    """The job's request as the road's keyword arguments (hierarchies, privacy and options aside)."""
    return {
        "qids": list(job.qids),
        "k": job.k,
        "method": job.method,
        "metric": job.metric,
        "drop": job.drop,
        "insensitive": job.insensitive,
        "sensitive": job.sensitive,
        "seed": job.seed,
        "null": job.null,
    }


def _checked_request(job: Job, lf: pl.LazyFrame, asked: dict[str, Any]) -> Request:
    """The job checked before any data is read: the request (DEFERRED stands for each hierarchy built from the
    data; check_request accepts it, its type says Hierarchy) and the ``[sdc]`` section."""
    deferred = {q: DEFERRED for q, s in job.qids.items() if s is not None}
    deferred |= {p.model.sensitive_attribute: DEFERRED for p in job.privacy if p.hierarchy is not None}
    request = check_request(
        lf.collect_schema(),
        hierarchies=deferred,  # pyright: ignore[reportArgumentType]
        options=job.options,
        privacy=[p.model for p in job.privacy],
        road="job",
        **asked,
    )
    if job.sdc is not None:
        from polars_anon.pipeline.capabilities import consult_sdc

        check_measure_columns(lf.collect_schema().names(), job.sdc.measures, "job file: [sdc]")
        check_columns(lf, [c for st in job.sdc.steps for c in st.columns], "job file: [sdc] protect columns")
        check_steps(job.sdc.steps, lf.collect_schema())
        consult_sdc(job.sdc, request, job.engine)
    return request


def _on_polars(
    job: Job, lf: pl.LazyFrame, asked: dict[str, Any], request: Request
) -> tuple[dict[str, Any], Anonymized, dict[str, Any] | None, dict[str, float] | None]:
    """The job on Polars: the ``[sdc]`` steps applied to the lazy frame, the hierarchies built from the one tuple
    pass the road then reuses; the hierarchies, the result, the input's ``[sdc]`` figures and the shares of the qids
    the steps changed published as their input values (:func:`~polars_anon.sdc.job.unchanged_after_steps`)."""
    sdc_input, original = None, lf
    if job.sdc is not None:
        with stage("sdc risk of the input"):
            sdc_input = measure(lf, job.sdc.measures)
        lf = apply_steps(lf, job.sdc.steps, job.sdc.seed)
    start = time.perf_counter()  # the tuple pass that builds the hierarchies is the road's: timed as its own
    made: list[TupleCounts] = []  # the tuple pass, made when a built-in hierarchy needs the column's values
    files = job.parquet_files
    # the encodings' hierarchies too (a qid without one read as suppression only where the method blanks cells:
    # encoding_specs), from the same pass: the road gets the job's own
    specs = encoding_specs(job) if job.encode else job.qids
    built = build_hierarchies(lf, specs, job.base, values_of=tuple_values(lf, request, made, files))
    hierarchies = {q: h for q, h in built.items() if job.qids[q] is not None}
    if not made:  # else the road's group-by makes it
        made += [c for c in [dictionary_pass(lf, files, request)] if c is not None]
    counts = made[0] if made else None  # handed to the road: its aggregation pass reads no more
    result = run(
        POLARS,
        lf,
        hierarchies=hierarchies,
        privacy=job_models(job, lf),
        counts=counts,
        start=start,
        road="job",
        **asked,
        **job.options,
    )
    if job.sdc is None:
        return built, result, sdc_input, None  # the encodings read them all
    with stage("sdc: the qids' cells the steps kept"):
        unchanged = unchanged_after_steps(original, lf, result.tmap, list(job.qids), job.sdc.steps)
    return built, result, sdc_input, unchanged


def _stage_encodings(
    job: Job, out: Outputs, result: Anonymized, written: Written, hierarchies: dict[str, Any], paths: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each encoding the job asks for, planned from the result's map and staged in `out`; by name, its path and
    whether it reads the original values (``reads_originals``: outside the k-anonymity guarantee). A method that
    blanks cells is encoded from its published rows, a blank as its qid's root (:func:`blanks_as_roots`, as
    ``polars-anon encode --job`` reads the release): its map's blanks are no node.

    Every encoding reads the rows of the table as written and verified (:attr:`Written.staged`), never the input
    again: each encoded row is a function of its published row (its qid nodes; ``random`` and ``statistical`` also
    of its row number; ``proportional`` and ``statistical`` of the map's counts), so the encoding holds the verified
    classes, row for row."""
    encodings: dict[str, dict[str, Any]] = {}
    blanks = blanks_cells(job)
    for e, path in paths.items():
        original = result.prepared if e in READS_ORIGINALS else None
        with stage(f"encode {e}"):
            options = EncodeOptions(e, original, seed=job.seed, layout=_layout(job, e))
            assert written.staged is not None  # encodings run on engine "polars" only: a local file
            published = result.engine.read_parquet(written.staged)  # the verified rows
            if blanks:
                published = blanks_as_roots(published, hierarchies)
            stage_encoded(out, published, hierarchies, path, options, tmap=None if blanks else result.tmap)
        encodings[e] = {"path": str(path), "reads_originals": e in READS_ORIGINALS}
    return encodings


def _output_measure(result: Anonymized, spec: SdcSpec) -> Callable[[Any], dict[str, Any]]:
    """The ``[sdc]`` figures of a table of the result's engine: measured on the file as written, before it is renamed
    into place (:meth:`~polars_anon.pipeline.result.Anonymized.stage`)."""

    def measured(table: Any) -> dict[str, Any]:
        with stage("sdc risk of the output"):
            if result.engine.name == "polars":
                return measure(table, spec.measures)
            return measure_sql(result.engine, table, spec.measures)

    return measured


def tuple_values(
    lf: pl.LazyFrame, request: Request, made: list[TupleCounts], files: Sequence[Path] = ()
) -> Callable[[list[str]], dict[str, pl.Series]]:
    """The hierarchies' values from the Polars road's aggregation pass (:func:`~polars_anon._passes.count_tuples`,
    or :func:`~polars_anon._parquet_counts.parquet_counts` from the dictionaries of `files` when `lf` is their plain
    scan), made now and appended to `made`, which the job hands to the road: the job reads the rows once for both."""

    def values_of(columns: list[str]) -> dict[str, pl.Series]:
        qids = list(request.qids)
        made.append(dictionary_pass(lf, files, request) or count_tuples(lf, qids, counted_attributes(request)))
        schema = lf.collect_schema()  # the pass groups String keys as Categorical: their values read back as String
        values = {c: made[-1].distinct_values(c) for c in columns}
        return {c: (v.cast(pl.String) if schema[c] == pl.String else v).sort() for c, v in values.items()}

    return values_of


def dictionary_pass(lf: pl.LazyFrame, files: Sequence[Path], request: Request) -> TupleCounts | None:
    """The tuple pass from the Parquet dictionaries (:func:`~polars_anon._parquet_counts.parquet_counts`) for a method
    that reads the tuples' codes (fulldomain) and no privacy model counting an attribute; None otherwise (the
    group-by). Only for those: the pass leaves pages in pyarrow's and glibc's keeping that a later Polars phase does not
    reuse, and greedy's peak on the 15M register rose (904 and 921 MiB against 851 and 867, alternated) for 1.4-1.7
    CPU s less, where fulldomain's fell (742-746 against 774-827) for a quarter less CPU (results/floor.md)."""
    if not request.method.codes or counted_attributes(request):
        return None
    return parquet_counts(lf, files, list(request.qids), request.undeclared)


@contextmanager
def _jvm_log() -> Iterator[None]:
    """While a Spark session is made, standard error (file descriptor 2) is a log file: a JVM started then inherits
    it, so Spark's warnings at start-up, and its errors when a run is interrupted, go to the log, not the terminal
    (where a refusal or an interruption is one line). Python's own standard error is restored right after. The log
    (``polars_anon_spark_<pid>.log`` in the temporary folder) is removed when the process exits, whatever the
    outcome, or at once when no session was made (refused before a JVM started); none is made when a session is
    active already (its JVM runs: none starts)."""
    from polars_anon.engines.spark import session_active

    if session_active():
        yield
        return
    log = Path(tempfile.gettempdir()) / f"polars_anon_spark_{os.getpid()}.log"
    if log not in _LOGS:
        _LOGS.add(log)
        atexit.register(log.unlink, missing_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
        if not session_active():
            log.unlink(missing_ok=True)


_LOGS: set[Path] = set()
"""The Spark logs this process made (:func:`_jvm_log`), each removed at exit."""


class _JobEngine:
    """A job's DuckDB or Spark engine, made on the first call (:func:`_engine_of`: a job refused before it needs one
    starts none) and closed by :meth:`close` when the job ends, failed or not: DuckDB's connection of its own and its
    spill folder go (:meth:`~polars_anon.engines.duckdb.DuckDBEngine.close`); a Spark session stays, the process's."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.engine: Any = None

    def __call__(self) -> Any:
        if self.engine is None:
            self.engine = _engine_of(self.job)
        return self.engine

    def close(self) -> None:
        close = getattr(self.engine, "close", None)
        if close is not None:
            close()


@contextmanager
def job_engine(job: Job) -> Iterator[_JobEngine]:
    """The job's engine maker (:class:`_JobEngine`: call it for the engine), closed when the block ends, failed or
    not: the one place a job (:func:`execute_job`) or an exploration of it
    (:func:`~polars_anon.explore.explore_job`) lets its DuckDB connection and spill folder go.

    >>> with job_engine(Job.__new__(Job)) as engine_of:  # a job refused before it needs an engine starts none
    ...     pass
    >>> engine_of.engine is None
    True
    """
    engine_of = _JobEngine(job)
    try:
        yield engine_of
    finally:
        engine_of.close()


@contextmanager
def engine_faults(job: Job) -> Iterator[None]:
    """An engine's own failures that are the job's settings, as one message naming the setting.

    DuckDB out of memory within ``[duckdb] memory_limit``; DuckDB and Spark interrupted by
    SIGINT or SIGTERM become :class:`KeyboardInterrupt` (the command line's exit 130/143).
    """
    if job.engine == "polars":
        yield
        return
    try:
        yield
    except Exception as exc:
        name = type(exc).__name__
        if name == "OutOfMemoryException":
            from polars_anon.engines.duckdb import MEMORY_LIMIT

            limit = job.duckdb.get("memory_limit", MEMORY_LIMIT)
            raise InvalidParameterError(
                f"job file: DuckDB ran out of memory within [duckdb] memory_limit = {limit!r} "
                f"({_first_line(exc)}); raise memory_limit (e.g. '1GB')"
            ) from None
        raise


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


_SQL_TYPES = {"Int8": "TINYINT", "Int16": "SMALLINT", "Int32": "INTEGER", "Int64": "BIGINT", "UInt8": "UTINYINT",
              "UInt16": "USMALLINT", "UInt32": "UINTEGER", "UInt64": "UBIGINT", "Float32": "FLOAT", "Float64": "DOUBLE",
              "String": "VARCHAR", "Boolean": "BOOLEAN", "Date": "DATE"}  # a table of types  # fmt: skip
_SPARK_TYPES = {"Int8": "TINYINT", "Int16": "SMALLINT", "Int32": "INT", "Int64": "BIGINT", "UInt8": "SMALLINT",
                "UInt16": "INT", "UInt32": "BIGINT", "UInt64": "DECIMAL(20,0)", "Float32": "FLOAT", "Float64": "DOUBLE",
                "String": "STRING", "Boolean": "BOOLEAN", "Date": "DATE"}  # a table of types  # fmt: skip


def _refuse_untyped(engine: str, raw: pl.Schema, source: str) -> None:
    """Refuse a CSV column Polars reads as a type `engine` cannot type the column's text as (one with no name in
    :data:`~polars_anon.io.DTYPES`: an integer beyond Int64, which Polars reads as an Int128), naming it and the file.

    >>> _refuse_untyped("duckdb", pl.Schema({"id": pl.Int128}), "t.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: job file: column 'id' of 't.csv' holds integers beyond Int64, which ...
    """
    for column, dtype in raw.items():
        if dtype in DTYPES.values():
            continue
        held = "integers beyond Int64, which Polars reads" if dtype.is_integer() else "values Polars reads"
        raise InvalidParameterError(
            f"job file: column {column!r} of {source!r} holds {held} as {dtype}, a type engine {engine!r} cannot read "
            "CSV text as (and schema cannot name); use engine 'polars', or convert the file to Parquet with the "
            "column as a Decimal or a String"
        )


def _type_name(dtype: pl.DataType) -> str:
    name = next((n for n, d in DTYPES.items() if d == dtype), None)
    if name is None:
        raise InvalidParameterError(f"job file: the input's column type {dtype} has no engine twin; name it in schema")
    return name


def read_on_engine(engine: Any, job: Job) -> Any:
    """The job's input as the engine's table: Parquet with the engine's reader; CSV with the engine's CSV reader, each
    column typed as Polars reads it (then cast as ``schema`` says), so every engine sees the same values."""
    if not is_csv(job.input):
        if not isinstance(job.input, URI):  # the file's own zones, as the Polars road reads them
            consult_zones(engine.name, getattr(engine, "time_zone", None), job.scan(), list(job.qids))
            consult_source_dtypes(engine.name, [job.input])
        return engine.read_parquet(job.input)
    if isinstance(job.input, URI):
        raise InvalidParameterError(
            f"job file: input {str(job.input)!r} is CSV named by a URI; the engine reads Parquet by URI "
            "(Polars reads CSV to type its columns): convert it to Parquet, or give a local path"
        )
    raw = job.scan_raw().collect_schema()
    consult_names(engine.name, list(raw), f" of {str(job.input)!r}")
    _refuse_untyped(engine.name, raw, str(job.input))
    wanted = {c: DTYPES[job.schema[c]] if c in job.schema else t for c, t in raw.items()}
    # every engine reads by the rules of CSV_RULES: each column as text (a quoted empty field is the empty string, an
    # empty one null), the job's null strings null (quoted or not), then typed as Polars types it (an empty string
    # null in a column of another type; a value that does not parse refused in Polars' words), then as `schema` says;
    # a record of no value (a blank line) is skipped
    nulls = list(dict.fromkeys(job.null_values))
    empty = check_fields(job.input, job.separator, len(raw), null_values=nulls)  # done by scan_raw: its answer
    if engine.name == "duckdb":
        return _csv_on_duckdb(engine, job, _CsvTypes(raw, wanted, nulls, empty))
    return _csv_on_spark(engine, job, _CsvTypes(raw, wanted, nulls, empty))


@dataclass(frozen=True)
class _CsvTypes:
    """How a job's CSV input is typed on DuckDB and Spark: the types Polars reads (`raw`), those `schema` asks
    (`wanted`), the null strings, and whether a record may hold no value (`empty`: such records are skipped)."""

    raw: dict[str, pl.DataType]
    wanted: dict[str, pl.DataType]
    nulls: list[str]
    empty: bool

    def refusal(self, column: str) -> tuple[str, str]:
        """The words around a value of `column` that does not parse as Polars typed it (:func:`io.late_value`)."""
        return late_value(column, list(self.raw).index(column) + 1, self.raw[column])


def _csv_on_duckdb(engine: Any, job: Job, types: _CsvTypes) -> Any:
    """The job's CSV input as a DuckDB relation typed by `types` (see :func:`read_on_engine`)."""
    raw, wanted, nulls, empty = types.raw, types.wanted, types.nulls, types.empty
    q = duckdb_identifier
    text = engine.con.read_csv(
        literal_path(job.input, "duckdb"),
        header=job.has_header,
        sep=job.separator,
        auto_detect=False,
        columns={c: "VARCHAR" for c in raw},
        allow_quoted_nulls=False,
        max_line_size=MAX_FIELD,
    )

    def sql(c: str) -> str:
        value = q(c)
        if nulls:
            value = f"CASE WHEN {value} IN ({', '.join(duckdb_literal(n) for n in nulls)}) THEN NULL ELSE {value} END"
        if raw[c] == pl.String:
            return f"{value} AS {q(c)}"
        return f"NULLIF({value}, '') AS {q(c)}"

    def typed(c: str) -> str:
        if raw[c] == pl.String:
            value = q(c)
        else:  # the text Polars parses (PARSES: DuckDB's cast reads 1_000, 0x10, yes), then a cast in range
            name = _type_name(raw[c])
            kind, (before, after) = _SQL_TYPES[name], types.refusal(c)
            refused = f"error({duckdb_literal(before)} || {q(c)} || {duckdb_literal(after)})"
            cast = f"TRY_CAST({q(c)} AS {kind})"
            value = (
                f"CASE WHEN {q(c)} IS NULL THEN NULL WHEN regexp_full_match({q(c)}, {duckdb_literal(PARSES[name])}) "
            )
            value += f"THEN CASE WHEN {cast} IS NULL THEN {refused} ELSE {cast} END "
            if raw[c] != pl.Boolean:  # spaces only: null in a column of numbers
                value += f"WHEN regexp_full_match({q(c)}, {duckdb_literal(BLANK)}) THEN NULL "
            value += f"ELSE {refused} END"
        return f"CAST({value} AS {_SQL_TYPES[_type_name(wanted[c])]}) AS {q(c)}"

    out = text.project(", ".join(sql(c) for c in raw)).project(", ".join(typed(c) for c in raw))
    return out.filter(f"NOT ({' AND '.join(f'{q(c)} IS NULL' for c in raw)})") if empty else out


def _csv_on_spark(engine: Any, job: Job, types: _CsvTypes) -> Any:
    """The job's CSV input as a Spark DataFrame typed by `types` (see :func:`read_on_engine`)."""
    raw, wanted, nulls, empty = types.raw, types.wanted, types.nulls, types.empty
    from pyspark.sql import functions as F  # noqa: N812 (pyspark's own spelling)

    ddl = ", ".join(f"{spark_identifier(c)} STRING" for c in raw)
    options = {
        "header": str(job.has_header).lower(),
        "sep": job.separator,
        "mode": "FAILFAST",
        "nullValue": NO_NULL,  # see NO_NULL: an empty field is null, a quoted empty one ''
        "escape": '"',  # a quote inside a quoted field is written "" (Spark's default escape is a backslash)
        # a quoted field that holds a line break: multiLine, which parses each file in one task (else split in parts)
        "multiLine": str(quoted_line_break(str(job.input))).lower(),
    }
    frame = engine.spark.read.options(**options).schema(ddl).csv(literal_path(job.input, "spark"))

    def column(c: str) -> Any:
        value = F.col(spark_identifier(c))
        if nulls:
            value = F.when(value.isin(nulls), F.lit(None)).otherwise(value)
        if raw[c] != pl.String:  # the text Polars parses (PARSES: Spark's cast reads yes, T, 1, ' true'), then cast
            name = _type_name(raw[c])
            value = F.when(value == "", F.lit(None)).otherwise(value)
            cast = value.try_cast(_SPARK_TYPES[name])
            if raw[c] == pl.Float64:  # Spark reads '-nan' and '+nan' as null, Polars as NaN
                signed_nan = value.rlike(r"\A[ \t]*[+-](?i:nan)\z")
                cast = F.when(cast.isNull() & signed_nan, F.lit(float("nan"))).otherwise(cast)
            before, after = types.refusal(c)
            refused = F.raise_error(F.concat(F.lit(before), value, F.lit(after)))
            read = F.when(value.isNull(), F.lit(None))
            read = read.when(value.rlike(rf"\A(?:{PARSES[name]})\z"), F.when(cast.isNull(), refused).otherwise(cast))
            if raw[c] != pl.Boolean:  # spaces only: null in a column of numbers
                read = read.when(value.rlike(rf"\A{BLANK}\z"), F.lit(None))
            value = read.otherwise(refused)
        return value.cast(_SPARK_TYPES[_type_name(wanted[c])]).alias(c)

    typed = frame.select(*(column(c) for c in raw))
    if not empty:
        return typed
    return typed.filter(~reduce(operator.and_, [F.col(spark_identifier(c)).isNull() for c in raw]))


def _engine_of(job: Job) -> Any:
    """The job's engine (DuckDB or Spark; Spark's start-up messages go to a log file)."""
    from polars_anon.engines import get_engine
    from polars_anon.engines.duckdb import MEMORY_LIMIT

    with _jvm_log() if job.engine == "spark" else nullcontext():
        memory = job.duckdb.get("memory_limit", MEMORY_LIMIT) if job.engine == "duckdb" else None
        engine = get_engine(
            job.engine, master=job.spark.get("master"), config=job.spark.get("config"), memory_limit=memory
        )
    consult_session(engine)  # a Spark Connect session (SPARK_REMOTE): refused before the input is read
    return engine


ValuesOf = Callable[[list[str]], dict[str, pl.Series]]


def open_on_engine(
    job: Job, lf: pl.LazyFrame, limit: int, engine: Any = None, table: Any = None
) -> tuple[Any, Any, dict[str, Hierarchy], pl.DataFrame, ValuesOf]:
    """The job's engine (DuckDB or Spark; `engine` when made), its input as the engine's table (`table` when read),
    the hierarchies built from the engine's qid group-by (with a ``LIMIT limit + 1``: above `limit` rows the road
    takes the planner route), that group-by, and the values of columns read from the engine's group-bys.
    """
    from polars_anon.engines import SQLEngine

    sql_engine: SQLEngine = engine if engine is not None else _engine_of(job)
    if table is None:
        table = read_on_engine(sql_engine, job)
    counts = sql_engine.counts(
        table, list(job.qids), limit=limit
    )  # the road's own group-by (kept): the hierarchies' values come from it

    def values_of(columns: list[str]) -> dict[str, pl.Series]:
        if counts.height <= limit and all(c in counts.columns for c in columns):
            return {c: counts[c].drop_nulls().unique().sort() for c in columns}
        return {
            c: sql_engine.counts(table, [c])[c].drop_nulls().unique().sort() for c in columns
        }  # beyond the cap, or a column not a qid: per column

    hierarchies = build_hierarchies(lf, job.qids, job.base, values_of=values_of)
    return sql_engine, table, hierarchies, counts, values_of


def _on_engine(
    job: Job, lf: pl.LazyFrame, asked: dict[str, Any], request: Request, engine_of: _JobEngine, table: Any = None
) -> tuple[dict[str, Hierarchy], Anonymized, dict[str, Any] | None]:
    """The job on DuckDB or Spark: the engine reads the input, builds the hierarchies' values and runs the road
    (a method the engine cannot run is refused first, before anything is read, or an engine made; `table` when
    read)."""
    from polars_anon.pipeline.capabilities import consult
    from polars_anon.pipeline.road import prepare_engine, run

    limit = consult(request, job.engine, job.driver_tuples).driver_tuples  # refused now what the engine cannot run
    engine = engine_of()
    prepare_engine(engine, request)  # Spark: its executors can run the method's tasks (before any data is read)
    if table is None:
        table = read_on_engine(engine, job)
    sdc_input = None
    if job.sdc is not None:
        with stage("sdc risk of the input"):
            sdc_input = measure_sql(engine, table, job.sdc.measures)
    start = time.perf_counter()
    engine, table, hierarchies, _, values_of = open_on_engine(job, lf, limit, engine, table)
    models = job_models(job, lf, values_of if isinstance(job.input, URI) else None)
    result = run(
        engine,
        table,
        hierarchies=hierarchies,
        k=job.k,
        privacy=models,
        driver_tuples=limit,
        start=start,
        road="job",
        **{key: value for key, value in asked.items() if key != "k"},
        **job.options,
    )
    return hierarchies, result, sdc_input


def run_job(job: Job, *, overwrite: bool = False) -> dict[str, Any]:
    """Run a job: read, anonymize, verify, write the output, its encodings and its report, all or nothing.

    Returns the report.
    """
    with Outputs(overwrite=overwrite) as out:
        report = execute_job(job, out)
        out.commit()
    return report


def encoding_path(output: str | Path, encoding: str, layout: str = "wide") -> Path:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.proportional.parquet``.

    For layout "classes" the path is a directory, with no suffix.

    >>> encoding_path("out/adult_k10.parquet", "proportional").name
    'adult_k10.proportional.parquet'
    >>> encoding_path("out/adult_k10.parquet", "proportional", "classes").name
    'adult_k10.proportional'
    >>> encoding_path("published.csv", "fillparent").name   # written as Parquet: named so
    'published.fillparent.parquet'
    """
    output = Path(output)
    suffix = "" if layout == "classes" else (output.suffix if output.suffix.lower() in PARQUET_SUFFIXES else ".parquet")
    return output.with_name(f"{output.stem}.{encoding}{suffix}")
