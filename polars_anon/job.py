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

import dataclasses
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_anon._passes import collect_apart
from polars_anon._progress import stage
from polars_anon._validate import check_choice, check_columns
from polars_anon.anonymize import Anonymized, anonymize, write_report
from polars_anon.encode import REPRESENTATIONS, canonical
from polars_anon.encoded_io import LAYOUTS, stage_encoded
from polars_anon.engines import ENGINES
from polars_anon.engines.distributed import check_driver_tuples
from polars_anon.engines.duckdb import MEMORY_LIMIT, memory_size
from polars_anon.errors import InvalidParameterError
from polars_anon.hierarchy import Hierarchy
from polars_anon.hierarchy_spec import build_spec, parse_spec
from polars_anon.io import CSV_SUFFIXES, html_path, report_path, scan_input
from polars_anon.options import describe, parse_options, type_matches
from polars_anon.outputs import PARQUET_SUFFIXES, Outputs, check_parquet_target
from polars_anon.request import DEFERRED, check_request

if TYPE_CHECKING:
    from polars_anon.algorithms import Method
    from polars_anon.engines.pipeline import EngineAnonymized

__all__ = [
    "Job",
    "PrivacySpec",
    "build_hierarchies",
    "build_models",
    "encoding_path",
    "execute_job",
    "hierarchy_from_spec",
    "privacy_specs",
    "run_job",
]

_NAMES = str | list[str]
_KEYS: dict[str, Any] = {
    "input": str,
    "output": str,
    "k": int,
    "qids": dict[str, Any],
    "separator": str,
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
}
"""Job keys and their types; any other top-level key is a method option."""
_REQUIRED = ("input", "output", "k", "qids")
NEEDS_ORIGINAL = ("proportional", "statistical")
"""Encodings computed from the original values of each class (rows must line up)."""


def _check_keys(raw: Mapping[str, Any]) -> None:
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


def _spark(raw: Mapping[str, Any], engine: str) -> dict[str, Any]:
    """The ``[spark]`` table: ``master`` (e.g. ``"local[2]"``) and ``config`` pairs (``[spark.config]``)."""
    table = _engine_table(raw, engine, "spark")
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
        memory_size("job file: key 'duckdb.memory_limit'", table["memory_limit"])
    return table


def _engine_rules(job: Job) -> Job:
    """What runs on engine 'polars' only: CSV input (each engine would infer its own types) and encodings."""
    if job.engine != "polars" and job.input.suffix.lower() in CSV_SUFFIXES:
        raise InvalidParameterError(
            f"job file: engine {job.engine!r} reads Parquet input; convert {str(job.input)!r} to Parquet or use engine 'polars'"
        )
    if job.engine == "polars" and job.driver_tuples is not None:
        raise InvalidParameterError(
            f'job file: driver_tuples = {job.driver_tuples} caps the class aggregates engines "duckdb" and "spark" bring to their '
            'driver; drop it or set engine = "duckdb" or "spark"'
        )
    if job.engine != "polars" and job.encode:
        raise InvalidParameterError(
            f'job file: encode {job.encode} runs on engine "polars" only; drop encode or set engine = "polars"'
        )
    return job


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


def _privacy(tables: list[dict[str, Any]], base: Path) -> list[PrivacySpec]:
    """``[[privacy]]`` tables: ``model`` names the model, the other keys are its parameters (typed, unknown refused).

    ``hierarchy`` (hierarchical t-closeness) is a hierarchy spec as in ``[qids]``;
    ``population`` a Parquet or CSV path; both relative to the job file.
    """
    from polars_anon.privacy import MODELS

    out = []
    for i, table in enumerate(tables, 1):
        where = f"job file: [[privacy]] table {i}"
        name = table.get("model")
        if name is None:
            raise InvalidParameterError(f"{where} has no 'model' key; models: {sorted(MODELS)}")
        check_choice(f"{where}: model", name, sorted(MODELS))
        params = {k: v for k, v in table.items() if k not in ("model", "hierarchy")}
        if isinstance(params.get("population"), str):
            params["population"] = str(base / params["population"])
        model = parse_options(MODELS[name], params, f"{where} (model {name!r})")
        spec = table.get("hierarchy")
        if spec is not None:
            if getattr(model, "distance", None) != "hierarchical":
                raise InvalidParameterError(
                    f"{where} (model {name!r}): key 'hierarchy' is for t-closeness with distance = \"hierarchical\""
                )
            parse_spec(str(model.sensitive_attribute), spec)
        out.append(PrivacySpec(model, spec))
    return out


@dataclass(frozen=True)
class PrivacySpec:
    """A parsed ``[[privacy]]`` table: the model, and the spec of its hierarchy when it is built from the data."""

    model: Any
    hierarchy: object = None


def _models(job: Job, lf: pl.LazyFrame) -> list[Any]:
    """The job's models, hierarchies built (from the column's values for built-in kinds)."""
    return build_models(job.privacy, lf, job.base)


def build_models(specs: Sequence[PrivacySpec], lf: pl.LazyFrame, base: Path = Path(".")) -> list[Any]:
    """Models of parsed ``[[privacy]]`` tables (or ``--model`` tables), each ``hierarchy`` built: from its file
    (relative to `base`) or, for built-in kinds, from the values of the model's attribute in `lf`."""
    out = []
    for p in specs:
        if p.hierarchy is None:
            out.append(p.model)
            continue
        attribute = p.model.sensitive_attribute
        check_columns(lf, [attribute], f"[[privacy]] model {p.model.name!r}: attribute")
        h = build_hierarchies(lf, {attribute: p.hierarchy}, base)[attribute]
        out.append(dataclasses.replace(p.model, hierarchy=h))
    return out


def privacy_specs(tables: list[dict[str, Any]], base: Path) -> list[PrivacySpec]:
    """Parse ``[[privacy]]``-style tables (the job file's, or the CLI's ``--model``); see :func:`_privacy`."""
    return _privacy(tables, base)


def _names(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


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
    insensitive: list[str] = field(default_factory=list)
    sensitive: str | list[str] | None = None
    seed: int = 0
    null: str = "error"
    encode: list[str] = field(default_factory=list)
    encode_layout: str = "wide"
    report: Path | None = None
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
    (:mod:`polars_anon.engines.distributed`)."""
    options: dict[str, Any] = field(default_factory=dict)
    base: Path = Path(".")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], base: str | Path = ".") -> Job:
        """Build from the parsed TOML; paths are relative to `base` (the job file's folder)."""
        base = Path(base)
        _check_keys(raw)
        encode = [canonical(e) for e in _names(raw.get("encode", []))]
        layout = check_choice("job file: encode_layout", raw.get("encode_layout", "wide"), LAYOUTS)
        engine = check_choice("job file: engine", raw.get("engine", "polars"), ENGINES)
        return _engine_rules(
            cls(
                input=base / raw["input"],
                output=base / raw["output"],
                k=raw["k"],
                qids=_qid_specs(raw["qids"]),
                method=raw.get("method", "fulldomain"),
                metric=raw.get("metric"),
                separator=raw.get("separator", ","),
                drop=_names(raw.get("drop", [])),
                insensitive=_names(raw.get("insensitive", [])),
                sensitive=raw.get("sensitive"),
                seed=raw.get("seed", 0),
                null=raw.get("null", "error"),
                encode=encode,
                encode_layout=layout,
                report=base / raw["report"] if "report" in raw else None,
                report_html=raw.get("report_html", True),
                privacy=_privacy(raw.get("privacy", []), base),
                engine=engine,
                spark=_spark(raw, engine),
                duckdb=_duckdb(raw, engine),
                driver_tuples=raw.get("driver_tuples"),
                options={k: v for k, v in raw.items() if k not in _KEYS},
                base=base,
            )
        )

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
            raise InvalidParameterError(
                f"job file {str(path)!r} is not UTF-8 text: {exc.reason} at byte {exc.start}"
            ) from exc
        except tomllib.TOMLDecodeError as exc:
            raise InvalidParameterError(f"job file {str(path)!r} is not valid TOML: {exc}") from exc
        if engine is not None:
            raw["engine"] = engine
        if driver_tuples is not None:
            raw["driver_tuples"] = driver_tuples
        if master is not None:
            raw["spark"] = {**(raw.get("spark") if isinstance(raw.get("spark"), dict) else {}), "master": master}
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


def build_hierarchies(
    lf: pl.LazyFrame,
    specs: Mapping[str, object],
    base: Path = Path("."),
    *,
    values_of: Callable[[list[str]], dict[str, pl.Series]] | None = None,
) -> dict[str, Hierarchy]:
    """Hierarchies for every qid that has one (spec None: none).

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
    return {q: build_spec(q, s, values.get(q), base) for q, s in parsed.items()}


def _layout(job: Job, encoding: str) -> str:
    return job.encode_layout if encoding in REPRESENTATIONS else "wide"  # the mappings keep a column per qid: wide


def _encoding_paths(job: Job) -> dict[str, Path]:
    return {e: encoding_path(job.output, e, _layout(job, e)) for e in job.encode}


def _refuse_misaligned(job: Job, result: Anonymized | EngineAnonymized) -> None:
    """Encodings computed from the original values need every published row lined up with one original leaf."""
    needs = [e for e in job.encode if e in NEEDS_ORIGINAL]
    if not needs:
        return
    if result.report["suppressed"]:
        raise InvalidParameterError(
            f"job file: encode {needs} needs every published row lined up with its original row, but "
            f"{result.report['suppressed']} rows are suppressed; drop {needs} from encode or set max_suppressed = 0"
        )
    if result.report["null_rows"]:
        raise InvalidParameterError(
            f"job file: encode {needs} needs the original value of every row, but {result.report['null_rows']} rows hold "
            f'nulls in a qid (published as roots under null = "suppress"); drop {needs} from encode or fill the nulls'
        )


def execute_job(job: Job, out: Outputs, *, input_name: str | None = None) -> dict[str, Any]:
    """Run a job into the output set `out` (nothing is renamed into place: the caller commits).

    Returns the report. `input_name` is the input as the report names it (default the path).
    """
    paths = _encoding_paths(job)
    target = job.report or report_path(job.output)
    html = html_path(target) if job.report_html else None
    check_parquet_target(job.output, folder=job.engine == "spark")  # before any data is read (Spark writes a folder)
    for path in (job.output, target, *([html] if html else []), *paths.values()):
        out.check(path)
    lf = scan_input(job.input, separator=job.separator)
    asked: dict[str, Any] = {
        "qids": list(job.qids), "k": job.k, "method": job.method, "metric": job.metric, "drop": job.drop,
        "insensitive": job.insensitive, "sensitive": job.sensitive, "seed": job.seed, "null": job.null,
    }  # fmt: skip
    deferred = {q: DEFERRED for q, s in job.qids.items() if s is not None}
    deferred |= {p.model.sensitive_attribute: DEFERRED for p in job.privacy if p.hierarchy is not None}
    request = check_request(
        lf.collect_schema(), hierarchies=deferred, options=job.options, privacy=[p.model for p in job.privacy], **asked
    )  # type: ignore[arg-type]  (before any data is read)
    if job.engine == "polars":
        hierarchies = build_hierarchies(lf, job.qids, job.base)
        result: Anonymized | EngineAnonymized = anonymize(
            lf, hierarchies=hierarchies, privacy=_models(job, lf), **asked, **job.options
        )  # type: ignore[arg-type]
    else:
        hierarchies, result = _on_engine(job, lf, asked, request.method)
    _refuse_misaligned(job, result)
    result.report["input"] = input_name or str(job.input)
    result.stage(out, job.output)
    if paths:
        result.report["encodings"] = {}
        for e, path in paths.items():
            original = result.prepared if e in NEEDS_ORIGINAL else None
            with stage(f"encode {e}"):
                stage_encoded(
                    out, result.lf, hierarchies, path, e, original=original, seed=job.seed, layout=_layout(job, e)
                )
            result.report["encodings"][e] = str(path)
    write_report(out, result.report, target, html=html)
    return result.report


def _on_engine(
    job: Job, lf: pl.LazyFrame, asked: dict[str, Any], method: Method
) -> tuple[dict[str, Hierarchy], EngineAnonymized]:
    """The job on DuckDB or Spark: the engine reads the Parquet input, builds the hierarchies' values and runs the road
    (a method the engine cannot run is refused first, before anything is read)."""
    from polars_anon.engines import get_engine
    from polars_anon.engines.distributed import DRIVER_TUPLES
    from polars_anon.engines.pipeline import engine_anonymize, refuse_unsupported

    refuse_unsupported(method, job.engine)

    engine = get_engine(job.engine, master=job.spark.get("master"), config=job.spark.get("config"),
                        memory_limit=job.duckdb.get("memory_limit", MEMORY_LIMIT) if job.engine == "duckdb" else None)  # fmt: skip
    table = engine.read_parquet(job.input)

    limit = DRIVER_TUPLES if job.driver_tuples is None else job.driver_tuples
    counts = engine.counts(
        table, list(job.qids), limit=limit
    )  # the road's own group-by (kept): the hierarchies' values come from it

    def values_of(columns: list[str]) -> dict[str, pl.Series]:
        if counts.height <= limit:
            return {c: counts[c].drop_nulls().unique().sort() for c in columns}
        return {
            c: engine.counts(table, [c])[c].drop_nulls().unique().sort() for c in columns
        }  # beyond the cap: per column

    hierarchies = build_hierarchies(lf, job.qids, job.base, values_of=values_of)
    result = engine_anonymize(engine, table, hierarchies=hierarchies, k=job.k, privacy=_models(job, lf), driver_tuples=limit,
                              **{key: value for key, value in asked.items() if key != "k"}, **job.options)  # fmt: skip
    return hierarchies, result


def run_job(job: Job, *, overwrite: bool = False) -> dict[str, Any]:
    """Run a job: read, anonymize, verify, write the output, its encodings and its report, all or nothing.

    Returns the report.
    """
    with Outputs(overwrite=overwrite) as out:
        report = execute_job(job, out)
        out.commit()
    return report


def encoding_path(output: str | Path, encoding: str, layout: str = "wide") -> Path:
    """``out/adult_k10.parquet`` -> ``out/adult_k10.proportional.parquet`` (a directory, no suffix, for layout "classes").

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
