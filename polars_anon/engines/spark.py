"""The Apache Spark engine: distributed group-bys, a broadcast (or shuffle) join, Spark's Parquet writer.

The class aggregates come to the driver as Arrow (``DataFrame.toArrow``); the map goes
back as a small DataFrame, broadcast to every executor when it has at most
:data:`BROADCAST_ROWS` rows, shuffled otherwise. The output is a folder of Parquet
parts (Spark's layout), written under a temporary name, re-read and checked by a
Spark group-by, then renamed into place (a local or mounted file system: the rename
is the commit).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import reduce
from pathlib import Path, PurePosixPath
from typing import Any, TypeGuard
from urllib.parse import unquote, urlsplit

import polars as pl

from polars_anon._dtypes import map_nested
from polars_anon._passes import TupleCounts
from polars_anon._validate import is_path
from polars_anon.engines import (
    GroupBys,
    TimeUnit,
    engine_map,
    enum_columns,
    grouped_aggregates,
    grouped_classes,
    grouping_set_counts,
    in_enums,
    in_source_units,
    key_col,
    labelled_marginals,
    source_types,
)
from polars_anon.errors import AnonError, InvalidParameterError, OutputError
from polars_anon.io import check_source, is_csv, named_path, names_parquet, names_path, scanned_files
from polars_anon.locations import URI, is_uri, local_path
from polars_anon.pipeline.sessions import refuse_session
from polars_anon.pipeline.state import FIRST_ROW, Aggregated, EngineAggregates
from polars_anon.privacy.differential import HASH, ROW, sample_sql_steps
from polars_anon.quoting import spark_identifier
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = [
    "BROADCAST_ROWS",
    "DEFAULTS",
    "EXECUTOR_MODULES",
    "LOCAL_DEFAULTS",
    "HadoopFileSystem",
    "SparkEngine",
    "check_config",
    "check_executors",
    "executor_failure",
    "lazy_source",
    "session",
    "session_active",
    "session_kind",
    "spark_columns",
]

BROADCAST_ROWS = 2_000_000
"""Largest map (one row per original tuple) sent to every executor; a larger one is shuffle-joined."""

DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
}
"""Settings of a session this module builds (a given ``config`` pair wins): no progress bars, and an output
folder of Parquet parts only (no ``_SUCCESS`` marker, no ``.crc`` files), so Polars and DuckDB read it as is."""
LOCAL_DEFAULTS = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "8"}
"""Also set for a ``local[...]`` master: no web UI, few shuffle partitions (one machine)."""


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError as exc:
        raise InvalidParameterError(
            'engine "spark" needs pyspark: pip install "polars_anon[spark]" (and a Java 17+ runtime)'
        ) from exc
    return pyspark.sql


def session(master: str | None = None, config: Mapping[str, str] | None = None) -> Any:
    """The active Spark session, or a new one on `master` with `config` pairs.

    Under ``spark-submit`` leave `master` out: spark-submit's ``--master`` and ``--conf`` settings apply.
    The executors' Python is ``spark.pyspark.python`` when `config` gives it; on a ``local`` master otherwise
    ``PYSPARK_PYTHON`` or this interpreter (not whatever ``python3`` comes first on the PATH). pyspark reads it
    from the environment variable ``PYSPARK_PYTHON``, which is set to it.
    """
    sql = _pyspark()
    active = sql.SparkSession.getActiveSession()
    if active is not None and master is None and not config:
        return active
    if _connect_asked(config or {}):  # before pyspark builds one: its own errors (a missing client, a master) were raw
        refuse_session("spark", "connect")
    builder = sql.SparkSession.builder.appName("polars_anon")
    settings = dict(DEFAULTS)
    if master is not None:  # none given: spark-submit's --master (or pyspark's local[*])
        builder = builder.master(master)
        settings |= LOCAL_DEFAULTS if master.startswith("local") else {}
    settings = {**settings, **{key: str(value) for key, value in dict(config or {}).items()}}
    python = settings.get("spark.pyspark.python")
    if python is None and master is not None and master.startswith("local"):
        python = os.environ.get("PYSPARK_PYTHON") or sys.executable  # this machine's workers: not PATH's python3
    if python is not None:  # pyspark sends its tasks' interpreter from the environment, not from the setting
        os.environ["PYSPARK_PYTHON"] = settings["spark.pyspark.python"] = python
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = _started(builder)
    if session_kind(spark) == "classic":  # a Connect session (SPARK_REMOTE) has no SparkContext: the road refuses it
        spark.sparkContext.setLogLevel("ERROR")
    if config:
        check_config(spark)
    return spark


def _started(builder: Any) -> Any:
    """``builder.getOrCreate()``; pyspark's failure to start Java (no ``java`` on the PATH nor in ``JAVA_HOME``: a
    Py4J gateway that exited at once) said in one line with what to install.

    A new SparkContext installs its own SIGINT handler (cancel the jobs, raise KeyboardInterrupt) over the one in
    place: over an output set's (:class:`polars_anon.outputs.Outputs`), whose run then never learned of the Ctrl-C,
    and the Java error of the cancelled job (raised in pyspark's clean-up of an Arrow stream) became a 170-line
    traceback and exit 1. The handler in place before is put back."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        return builder.getOrCreate()
    except Exception as exc:
        condition = getattr(exc, "getCondition", None)  # pyspark 4's name of its error class
        if condition is None or condition() != "JAVA_GATEWAY_EXITED":
            raise
        raise InvalidParameterError(
            "engine 'spark' could not start Spark: its Java process exited at once (pyspark's JAVA_GATEWAY_EXITED); "
            "install Java 17 or 21 and put it on the PATH or in JAVA_HOME (`java -version` names it), or use engine "
            "'polars' or 'duckdb'"
        ) from None
    finally:
        if before is not None and signal.getsignal(signal.SIGINT) is not before:
            signal.signal(signal.SIGINT, before)


def session_active() -> bool:
    """Whether this thread has an active Spark session (its JVM runs: a session made now starts none); False without
    pyspark.

    >>> isinstance(session_active(), bool)
    True
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return False
    return SparkSession.getActiveSession() is not None


def _connect_asked(settings: Mapping[str, str]) -> bool:
    """Whether pyspark would start a Spark Connect session with `settings`, by its own tests: ``SPARK_REMOTE``,
    ``SPARK_CONNECT_MODE_ENABLED`` or ``spark.remote`` set, or the API mode ``connect`` (``spark.api.mode``, else
    ``SPARK_API_MODE``, else pyspark's default: ``SPARK_CONNECT_MODE=1`` or a Connect-only pyspark)."""
    from pyspark.util import default_api_mode, is_remote_only

    mode = settings.get("spark.api.mode", os.environ.get("SPARK_API_MODE", "")).lower()
    if mode not in ("classic", "connect"):
        mode = default_api_mode()
    asked = "SPARK_REMOTE" in os.environ or "SPARK_CONNECT_MODE_ENABLED" in os.environ or is_remote_only()
    return asked or "spark.remote" in settings or mode == "connect"


def check_config(spark: Any) -> None:
    """Use the session's SQL settings now (Spark checks them on their first use: a bad value was a JVM stack trace at
    the first query) and refuse a value Spark rejects in one line naming the setting (the session is left as it is).
    """
    try:
        spark.conf.get("spark.app.name")
    except Exception as exc:
        found = next((line for line in str(exc).splitlines() if "INVALID_CONF_VALUE" in line), None)
        if found is None:
            raise
        raise InvalidParameterError(f"Spark config: {found[found.index('[') :].split(' SQLSTATE')[0]}") from None


_GROUPING = "__anon_grouping"
_ORDER = "__anon_order"
"""A row's number (:meth:`SparkEngine.row_numbers`) carried through a shuffle join, which loses the rows' order."""


def session_kind(spark: Any) -> str:
    """``"connect"`` for a Spark Connect session (``sc://...``, ``SPARK_REMOTE``), else ``"classic"`` (a session with
    a JVM behind Py4J: what this engine's Hadoop file system, executor check and tasks use).

    >>> session_kind(object())
    'classic'
    """
    return "connect" if type(spark).__module__.startswith("pyspark.sql.connect") else "classic"


class HadoopFileSystem:
    """Spark's Hadoop FileSystem API through the JVM gateway: what the all-or-nothing outputs ask of a URI
    (``hdfs://``, ``s3a://``, ``file://``, any scheme the session's Hadoop configuration knows)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self._jvm = spark.sparkContext._jvm  # the Py4J gateway (a classic session; Spark Connect has none)
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs(self, uri: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(str(uri))
        return path.getFileSystem(self._conf), path

    def exists(self, uri: str) -> bool:
        with _reaching(uri):
            fs, path = self._fs(uri)
            return bool(fs.exists(path))

    def is_dir(self, uri: str) -> bool:
        with _reaching(uri):
            fs, path = self._fs(uri)
            return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def mkdirs(self, uri: str) -> None:
        with _reaching(uri):
            fs, path = self._fs(uri)
            made = fs.mkdirs(path)
        if not made:
            raise OutputError(f"Spark's file system refused to create the folder {str(uri)!r}")

    def rename(self, source: str, target: str) -> None:
        with _reaching(source):
            fs, path = self._fs(source)
            done = fs.rename(path, self._fs(target)[1])
        if not done:
            raise OutputError(f"Spark's file system refused to rename {str(source)!r} to {str(target)!r}")

    def delete(self, uri: str, recursive: bool = True) -> None:
        with _reaching(uri):
            fs, path = self._fs(uri)
            if fs.exists(path):
                fs.delete(path, recursive)

    def names(self, uri: str) -> list[str]:
        with _reaching(uri):
            fs, path = self._fs(uri)
            return [str(status.getPath().getName()) for status in fs.listStatus(path)]

    def write_bytes(self, uri: str, data: bytes) -> None:
        with _reaching(uri):
            fs, path = self._fs(uri)
            stream = fs.create(path, False)
            try:
                stream.write(bytearray(data))
            finally:
                stream.close()


@contextmanager
def _reaching(uri: str) -> Iterator[None]:
    """A Java error of the file system (Py4J's, many lines) as one line naming `uri`."""
    try:
        yield
    except AnonError:
        raise
    except Exception as exc:
        if type(exc).__name__ != "Py4JJavaError":
            raise
        raise OutputError(f"Spark's file system cannot use {str(uri)!r}: {_java_reason(exc)}") from None


def _java_reason(exc: BaseException) -> str:
    """The first line of a Java exception raised through Py4J, without the class name's package.

    >>> _java_reason(Exception('An error occurred while calling o1.x.\\n: org.apache.hadoop.fs.'
    ...                        'UnsupportedFileSystemException: No FileSystem for scheme "nosuch"\\n\\tat ...'))
    'UnsupportedFileSystemException: No FileSystem for scheme "nosuch"'
    """
    java = getattr(exc, "java_exception", None)
    text = str(java) if java is not None else str(exc)
    lines = [line.strip().lstrip(": ") for line in text.splitlines() if line.strip()]
    cause = next((line for line in lines if re.match(r"[\w.$]+(Exception|Error)\b", line)), lines[-1] if lines else "")
    name, _, rest = cause.partition(":")
    return f"{name.rsplit('.', 1)[-1]}:{rest}" if rest else name.rsplit(".", 1)[-1]


EXECUTOR_MODULES = ("polars_anon", "polars", "numpy", "pyarrow", "tqdm", "pyspark")
"""What a Spark task of polars_anon imports (greedy's blocks and MDAV run the package's NumPy loops there)."""

_PROBE = """
def probe(_):
    import importlib, sys
    missing, version = [], None
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            missing.append(name + " (" + type(exc).__name__ + ": " + str(exc).splitlines()[0] + ")")
        else:
            if name == "polars_anon":
                version = getattr(module, "__version__", None)
    yield (sys.executable, "%d.%d" % sys.version_info[:2], version, missing)
"""


def _probe(modules: Sequence[str]) -> Any:
    """The task run on an executor, defined in a namespace of its own so Spark ships its code (it cannot import
    polars_anon there to find it: that is what it checks)."""
    namespace: dict[str, Any] = {"__name__": "polars_anon_executor_probe", "MODULES": list(modules)}
    exec(compile(_PROBE, "<polars_anon executor check>", "exec"), namespace)
    return namespace["probe"]


_CAUSES = (
    r"(ModuleNotFoundError: No module named '[^']+')",
    r"(Cannot run program \"[^\"]+\"[^\n]*)",
    r"(\[PYTHON_VERSION_MISMATCH\][^\n]*)",
    r"(Python in worker has different version[^\n]*)",
)


def executor_failure(error: str) -> str:
    """The one line that says why a Spark task could not start Python or import what it needs.

    >>> executor_failure("py4j...\\n  File x\\nModuleNotFoundError: No module named 'polars'\\n at ...")
    "ModuleNotFoundError: No module named 'polars'"
    """
    for pattern in _CAUSES:
        found = re.search(pattern, error)
        if found:
            return found.group(1).strip()
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    return lines[0] if lines else "unknown error"


_CHECKED: set[str] = set()


def check_executors(spark: Any, modules: Sequence[str] = EXECUTOR_MODULES) -> None:
    """Run one tiny task on an executor that imports `modules` (polars_anon and its dependencies; checked once per
    Spark application) and compares its Python and polars_anon versions with the driver's.

    Raises :class:`~polars_anon.errors.InvalidParameterError`, one line naming what is missing there, before any
    data is read; the recipe that gives executors the package is in the Spark guide (``polars-anon spark-pack``).
    """

    import polars_anon

    app = spark.sparkContext.applicationId
    if app in _CHECKED and tuple(modules) == EXECUTOR_MODULES:
        return
    hint = "; give executors the package (docs: Run on Spark, `polars-anon spark-pack`)"
    try:
        rows = spark.sparkContext.parallelize([0], 1).mapPartitions(_probe(modules)).collect()
    except Exception as exc:
        raise InvalidParameterError(
            f"Spark executors cannot run polars_anon's tasks: {executor_failure(str(exc))}{hint}"
        ) from None
    executable, version, package, missing = rows[0]
    if missing:
        raise InvalidParameterError(f"Spark executors (Python {executable}) cannot import {', '.join(missing)}{hint}")
    mine = "{}.{}".format(*sys.version_info[:2])
    if version != mine or "polars_anon" in modules and package != polars_anon.__version__:
        raise InvalidParameterError(
            f"Spark executors run Python {version} with polars_anon {package}, the driver Python {mine} with "
            f"polars_anon {polars_anon.__version__}{hint}"
        )
    if tuple(modules) == EXECUTOR_MODULES:
        _CHECKED.add(app)


def lazy_source(lf: pl.LazyFrame) -> list[str] | None:
    """The Parquet files a LazyFrame scans when it is nothing but ``pl.scan_parquet(...)`` (Spark then reads them
    itself: the rows never pass through the driver); None when it reads no file (its rows are already in this
    process); else an error saying what to give instead (a query over a file would be run by the driver)."""
    import warnings

    refusal = (
        "engine 'spark' reads a LazyFrame from its Parquet source, and this one is {what}; give "
        "pl.scan_parquet(path) itself, a Parquet path or URI, or a Spark DataFrame (or collect it: a DataFrame goes "
        "as Arrow){csv}"
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plan = json.loads(lf.serialize(format="json"))
    except Exception:
        raise InvalidParameterError(refusal.format(what="not readable as a plan", csv="")) from None
    while isinstance(plan, dict) and len(plan) == 1 and isinstance(plan.get("IR"), dict) and "dsl" in plan["IR"]:
        plan = plan["IR"]["dsl"]  # a LazyFrame Polars has already run keeps its plan as it was given, wrapped
    if not _reads_files(plan):
        return None
    scan = plan.get("Scan") if isinstance(plan, dict) and len(plan) == 1 else None
    if not isinstance(scan, dict):
        kind = next(iter(plan), "a query") if isinstance(plan, dict) else "a query"
        raise InvalidParameterError(refusal.format(what=f"a query ({kind}) over a file, not a plain scan", csv=""))
    if "Parquet" not in (scan.get("scan_type") or {}):
        kinds = ", ".join(scan.get("scan_type") or {}) or "no file"
        csv = "; a job file reads a CSV file on Spark" if "Csv" in (scan.get("scan_type") or {}) else ""
        raise InvalidParameterError(refusal.format(what=f"a scan of {kinds}, not of Parquet", csv=csv))
    paths = (scan.get("sources") or {}).get("Paths") or []
    return [p["inner"] if isinstance(p, dict) else str(p) for p in paths]


def refuse_unreadable(data: object) -> None:
    """Refuse, before a Spark session is started for it, a table engine 'spark' does not read: a LazyFrame that is
    more than a scan of Parquet (:func:`lazy_source`) and a CSV file's path or URI (a job reads a CSV on Spark by the
    rules every engine shares; given as a table, Spark would take it for Parquet, or a file's name for a table's)."""
    if isinstance(data, pl.LazyFrame):
        lazy_source(data)
    elif (
        is_path(data) and is_csv(os.fspath(data)) and (not isinstance(data, str) or is_uri(data) or Path(data).exists())
    ):
        path = os.fspath(data)
        raise InvalidParameterError(
            f"engine 'spark' reads a Parquet path or URI, a table name or a Spark DataFrame, and {path!r} names "
            f'a CSV file; read it with a job file (input = {json.dumps(path)}, engine = "spark"), or give '
            "spark.read.csv(...) with your options"
        )


def _reads_files(node: object) -> bool:
    """Whether a serialized plan holds a file scan (``Scan``) anywhere."""
    if isinstance(node, dict):
        return "Scan" in node or any(_reads_files(v) for v in node.values())
    if isinstance(node, list):
        return any(_reads_files(v) for v in node)
    return False


def _root_paths(frame: Any) -> list[str]:
    """The locations a Spark DataFrame's file scans were given (a folder read, not only the files in it, which is
    all ``inputFiles()`` tells: a new part written inside that folder would join the data): each file relation's
    path as given (one path read: a folder, a file or a pattern) and its ``rootPaths``, through Spark's JVM plan.
    None where the plan has no such relation (rows in memory)."""
    found: list[str] = []
    try:
        leaves = frame._jdf.queryExecution().analyzed().collectLeaves()
        count = leaves.size()
    except Exception:  # noqa: BLE001  (no JVM plan here, e.g. Spark Connect: inputFiles() still answers)
        return found
    for i in range(count):
        leaf = leaves.apply(i)
        try:  # a file relation's index (HadoopFsRelation); another relation (JDBC, ...) has no location
            relation = leaf.relation()
            given = relation.options().get("path")  # one path read: as given (a pattern stays a pattern)
            if given.isDefined():
                found.append(str(given.get()))
            roots = relation.location().rootPaths()  # the folders read, or the files a pattern expanded to
            found += [str(roots.apply(j)) for j in range(roots.size())]
        except Exception:  # noqa: BLE001
            continue
    return found


_IN_FILE_ORDER = {"Relation", "LogicalRelation", "Project", "Filter", "SubqueryAlias"}
"""Logical plan nodes that keep a file scan's rows in the files' order (a filter drops rows, a projection adds
columns)."""


def _rows_in_file_order(frame: Any) -> bool:
    """Whether a Spark DataFrame is a file scan, at most filtered and projected: then its rows are in the files' order,
    as Polars reads them (a sort, a limit, a union or a join: the frame's own order, its partitions').

    >>> _rows_in_file_order(None)
    False
    """
    try:
        plan = str(frame._jdf.queryExecution().analyzed().toString())
    except Exception:  # noqa: BLE001  (no JVM plan here, e.g. Spark Connect)
        return False
    nodes = {m.group(1) for line in plan.splitlines() if (m := re.match(r"[\s:+|-]*(\w+)", line))}
    return bool(nodes) and nodes <= _IN_FILE_ORDER


def _file_places(frame: Any) -> tuple[Any, Any] | None:
    """Each row's file and place in it (``_metadata.file_path``, ``row_index``) when the frame is a file scan at most
    filtered and projected (:func:`_rows_in_file_order`) whose source has them; else None."""
    if not _rows_in_file_order(frame):
        return None
    try:
        meta = frame.metadataColumn("_metadata")
        frame.select(meta.getField("row_index")).schema  # noqa: B018  (resolves it: a file scan's, or raises)
    except Exception:  # noqa: BLE001  (rows in memory, or a source without row indexes)
        return None
    return meta.getField("file_path"), meta.getField("row_index")


def _several_files(frame: Any) -> bool:
    """Whether `frame` is a scan of more than one file whose rows :meth:`SparkEngine.row_numbers` numbers in the
    files' order (:func:`_file_places`): Spark's partitions hold such rows in another order."""
    return _file_places(frame) is not None and len(frame.inputFiles()) > 1


def _file_order(files: list[str], roots: list[str]) -> list[str]:
    """`files` (Spark's ``_metadata.file_path``, percent-encoded URIs) in the order Polars and DuckDB read them: by
    the first of the paths given to the reader (`roots`) that is the file or a folder holding it, then by the path's
    parts (a folder's files by name, :func:`polars_anon.io.parquet_parts`).

    >>> _file_order(["file:/d/part-1.parquet", "file:/d/part%200.parquet"], ["file:/d"])
    ['file:/d/part%200.parquet', 'file:/d/part-1.parquet']
    """

    def path(uri: str) -> PurePosixPath:
        parts = urlsplit(uri)
        return PurePosixPath(unquote(parts.path) if parts.scheme else uri)

    given = [path(r) for r in roots]

    def key(uri: str) -> tuple[int, tuple[str, ...]]:
        p = path(uri)
        rank = next((i for i, r in enumerate(given) if p == r or r in p.parents), len(given))
        return rank, p.parts

    return sorted(files, key=key)


_WIDER: dict[type[pl.DataType], pl.DataType] = {
    pl.UInt8: pl.Int16(),
    pl.UInt16: pl.Int32(),
    pl.UInt32: pl.Int64(),
    pl.UInt64: pl.Int64(),
}


def _signed(frame: pl.DataFrame) -> pl.DataFrame:
    """Spark has no unsigned integers: such columns, and such items of List, Array and Struct columns (Spark's Arrow
    conversion refused them as a raw error), become the signed type that holds them. A UInt64 value above
    2**63 - 1 becomes null: it is in a column the job does not read (one it reads holding one is refused before,
    :func:`~polars_anon.pipeline.capabilities.consult_values`), and sent only because the whole frame is.

    >>> _signed(pl.DataFrame({"u": pl.Series([1, 2**64 - 1], dtype=pl.UInt64)}))["u"].to_list()
    [1, None]
    >>> _signed(pl.DataFrame({"l": pl.Series([[1, 2**64 - 1]], dtype=pl.List(pl.UInt64))}))["l"].to_list()
    [[1, None]]
    """
    wider = {c: map_nested(t, lambda d: _WIDER.get(type(d), d)) for c, t in frame.schema.items()}
    changed = {c: t for c, t in wider.items() if t != frame.schema[c]}
    return frame.cast(changed, strict=False) if changed else frame  # type: ignore[arg-type]


def _nested_in_microseconds(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with the nanosecond times inside its List, Array and Struct columns cast to microseconds, Spark's unit
    (Arrow's conversion refused a part below it as a raw error, or Struct fields were cut silently): cut as Spark cuts
    a nanosecond column's. A column the job reads holding such a part is refused before
    (:func:`~polars_anon.pipeline.capabilities.consult_values`); a dropped one is never read.

    >>> t = pl.Series("t", [[1_001]], dtype=pl.List(pl.Datetime("ns")))
    >>> _nested_in_microseconds(t.to_frame()).schema["t"]
    List(Datetime(time_unit='us', time_zone=None))
    """
    nested = {c: map_nested(t, _in_microseconds) for c, t in frame.schema.items() if t.is_nested()}
    changed = {c: t for c, t in nested.items() if t != frame.schema[c]}
    return frame.cast(changed) if changed else frame  # type: ignore[arg-type]


def _in_microseconds(dtype: pl.DataType) -> pl.DataType:
    """A nanosecond Datetime or Duration in microseconds; any other `dtype` as it is (nested ones are walked by
    :func:`~polars_anon._dtypes.map_nested`)."""
    if isinstance(dtype, pl.Datetime) and dtype.time_unit == "ns":
        return pl.Datetime("us", dtype.time_zone)
    if isinstance(dtype, pl.Duration) and dtype.time_unit == "ns":
        return pl.Duration("us")
    return dtype


_UNIT = "polars_anon.time_unit"
"""Key of a Spark column's metadata: the time unit Polars reads the Parquet file the column comes from in, where it is
not Spark's microseconds (:meth:`SparkEngine.read_parquet`). Spark keeps a column's metadata through projections,
joins, group-bys (grouping sets too), checkpoints and temporary views, so every frame derived from the file's rows
carries the unit of its own file (an aggregate such as ``min`` does not: it is a new column)."""


_ENUM = "polars_anon.enum"
"""Key of a Spark column's metadata: the values (a JSON list, in order) of the Polars Enum the column is in the frame
sent to Spark or in the Parquet file Polars wrote (:meth:`SparkEngine.table`); Spark has no such type and reads text.
Carried as :data:`_UNIT` is, through every frame derived from the rows, so they reach Polars as that Enum again
(:meth:`SparkEngine.to_polars`): the order of an ordered sensitive attribute travels with its column."""


def _with_types(frame: Any, units: Mapping[str, TimeUnit], enums: Mapping[str, pl.Enum]) -> Any:
    """`frame` with each column's metadata naming the Polars type Spark does not hold: a timestamp column's time unit
    in `units` (:data:`_UNIT`, where not ``us``), a column's Enum in `enums` (:data:`_ENUM`, its values); the keys
    removed from the other columns. One projection, none when nothing changes."""
    T = _pyspark().types
    metadata = {}
    for field in frame.schema.fields:
        meta = {key: value for key, value in field.metadata.items() if key not in (_UNIT, _ENUM)}
        timestamp = isinstance(field.dataType, (T.TimestampType, T.TimestampNTZType))
        if timestamp and units.get(field.name, "us") != "us":
            meta[_UNIT] = units[field.name]
        if field.name in enums:
            meta[_ENUM] = json.dumps(enums[field.name].categories.to_list())
        if meta != field.metadata:
            metadata[field.name] = meta
    return _with_metadata(frame, metadata)


def _arrow_schema(frame: Any) -> Any:
    """The Arrow schema ``DataFrame.toArrow`` gives `frame`'s rows (pyspark casts its batches to it: an empty result
    is an empty table of it), from the Spark schema alone."""
    from pyspark.sql.pandas.types import to_arrow_schema

    large = str(frame.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes")).lower() == "true"
    return to_arrow_schema(
        frame.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC", prefers_large_types=large
    )


def _enums(frame: Any) -> dict[str, pl.Enum]:
    """The Enums a Spark frame's columns carry (:data:`_ENUM`)."""
    return {f.name: pl.Enum(json.loads(f.metadata[_ENUM])) for f in frame.schema.fields if _ENUM in f.metadata}


def _with_metadata(frame: Any, metadata: Mapping[str, Mapping[str, Any]]) -> Any:
    """`frame` with the columns named in `metadata` given that metadata (the same frame when none is named)."""
    if not metadata:
        return frame
    return frame.select(
        *(
            col.alias(c, metadata=metadata[c]) if c in metadata else col
            for c, col in zip(frame.columns, spark_columns(frame.columns))
        )
    )


def _units(frame: Any) -> dict[str, TimeUnit]:
    """The time units a Spark frame's columns carry (:data:`_UNIT`)."""
    return {field.name: field.metadata[_UNIT] for field in frame.schema.fields if _UNIT in field.metadata}


def _names_parquet(data: object) -> TypeGuard[str | os.PathLike[str]]:
    """Whether `data` given as a table names Parquet that Spark reads: a path object (any ``os.PathLike``: a file,
    never a table), a URI, or a ``.parquet`` file name (:func:`polars_anon.io.names_parquet`)."""
    return is_path(data) and (not isinstance(data, str) or names_parquet(data))


def _once(step: str, column: str) -> str:
    """The SQL expression `step` with `column` read once: a step that reads it twice (``h ^ div(h, 65536)``) is
    applied to it through a one-element ``transform``. Spark's optimizer collapses the steps' projections into one
    expression and copies a column's expression into each place that reads it: the sample's nine shifts made one of
    36 KB, planned and compiled again for every key (~1 s each). The same arithmetic, the same values.

    >>> _once("((h) ^ (div(h, 65536)))", "h")
    'transform(array(h), x -> ((x) ^ (div(x, 65536))))[0]'
    >>> _once("((h) ^ (7))", "h")
    '((h) ^ (7))'
    """
    name = re.compile(rf"\b{re.escape(column)}\b")
    if len(name.findall(step)) < 2:
        return step
    return f"transform(array({column}), x -> {name.sub('x', step)})[0]"


def spark_columns(names: Sequence[str]) -> list[Any]:
    """The columns `names`, each by its quoted name (:func:`spark_identifier`): a bare name is parsed (``x.y`` a struct
    field, a backtick quoting), so a column named so would not be found. Unbound (``F.col``), as a bare name is: a
    column taken from a DataFrame (``frame[name]``) is bound to that frame's plan, which Spark calls ambiguous on a
    table joined from the same input (the published table's check). Every column the Spark road names by a user's
    name (or a name made from one: :func:`~polars_anon.engines.key_col`, :func:`~polars_anon.tuplemap.out_col`) is
    named through it, or through ``frame[spark_identifier(name)]`` where a join needs the column bound."""
    F = _pyspark().functions
    return [F.col(spark_identifier(n)) for n in names]


class SparkEngine:
    """Spark, on `spark` (a SparkSession)."""

    name = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.session_kind = session_kind(spark)
        self.counts = GroupBys(self._counts, self._count_sets)

    @property
    def time_zone(self) -> str:
        """The session's time zone (``spark.sql.session.timeZone``), in which Spark hands back a timestamp."""
        return str(self.spark.conf.get("spark.sql.session.timeZone"))

    def table(self, data: object) -> Any:
        """A Spark DataFrame; a Parquet path or URI (``hdfs://...``, read by Spark as written); a table name in the
        session's catalog; a LazyFrame that scans Parquet (Spark reads its files); or a DataFrame (sent as Arrow)."""
        sql = _pyspark()
        if isinstance(data, sql.DataFrame):
            return data
        if _names_parquet(data):
            return self._read_named(os.fspath(data))
        if isinstance(data, str):
            if self._has_table(data):
                return self.spark.table(data)
            if names_path(data):  # no table of that name: a path (a folder of parts), as on DuckDB
                return self._read_named(data)
            raise InvalidParameterError(f"Spark has no table or view {data!r} in this session's catalog")
        if isinstance(data, pl.LazyFrame):
            paths = lazy_source(data)
            if paths:
                return self.read_parquet(*paths)
            data = data.collect()  # materializes: the rows of an in-memory LazyFrame, already in this process
        if isinstance(data, pl.DataFrame):  # already on the driver: handed to Spark as Arrow
            return self._from_polars(data)
        raise InvalidParameterError(
            f"engine 'spark' takes a Spark DataFrame, a table name, a Parquet path or a Polars frame, got "
            f"{type(data).__name__}"
        )

    def _has_table(self, name: str) -> bool:
        """Whether the session's catalog has a table or view `name`; a string Spark cannot parse as one (a path,
        ``data/people``) names none (Spark's own ParseException is not the user's answer)."""
        from pyspark.errors import ParseException

        try:
            return bool(self.spark.catalog.tableExists(name))
        except ParseException:
            return False

    def _read_named(self, path: str | Path) -> Any:
        """A Parquet path the user named as the table, refused first in the words a job's input is refused in (a
        folder without parts or with parts in subfolders, a path that names no file: :func:`check_source`)."""
        check_source(path)
        return self.read_parquet(path)

    def _from_polars(self, frame: pl.DataFrame) -> Any:
        """A frame on the driver as a Spark DataFrame, sent as Arrow: unsigned integers widened (:func:`_signed`), each
        Datetime carrying its unit
        (:data:`_UNIT`: labelled in it, as on the Polars engine) and one without time zone as a ``TIMESTAMP_NTZ``, its
        wall-clock time as given (a nanosecond time below the microsecond, which Spark would cut, is refused before:
        :func:`~polars_anon.pipeline.capabilities.consult_values`). (Spark's own reading of
        Arrow took it for a time in the session's zone: published shifted by the zone's offset, and labelled as an
        instant, ``'...+00:00'``, where Polars labels the wall-clock time; a Parquet file's is read as NTZ already.)"""
        from pyspark.sql.pandas.types import from_arrow_schema

        table = _nested_in_microseconds(_signed(frame)).to_arrow()
        spark = self.spark.createDataFrame(table, schema=from_arrow_schema(table.schema, prefer_timestamp_ntz=True))
        units: dict[str, TimeUnit] = {
            name: dtype.time_unit for name, dtype in frame.schema.items() if isinstance(dtype, pl.Datetime)
        }
        return _with_types(spark, units, enum_columns(frame.schema))

    def sources(self, data: object) -> list[str]:
        """A Parquet path or URI given as the table, the files of a scanned LazyFrame, or what a Spark DataFrame
        or a table or view named in the session's catalog reads: the folders or files its scans were given and its
        ``inputFiles()`` (a local ``file://`` one as its path)."""
        if _names_parquet(data):
            return [os.fspath(data)]
        if isinstance(data, pl.LazyFrame):
            return scanned_files(data)
        frame: Any = self.table(data) if isinstance(data, str) else data  # a name: the catalog's table or view
        if isinstance(frame, _pyspark().DataFrame):
            files = [*_root_paths(frame), *(str(f) for f in frame.inputFiles())]
            return list(dict.fromkeys(str(local_path(f)) if f.lower().startswith("file:") else f for f in files))
        return []

    def read_parquet(self, path: str | Path, *more: str | Path) -> Any:
        """Spark's Parquet reader on `paths`: a URI as written, a local path made absolute (Spark resolves a
        relative one from its own working folder, not this process's); a local path that exists is read by its name
        (Spark reads a path as a pattern: ``p[1].parquet`` read ``p1.parquet``). Its rows reach Polars with the
        Datetime units Polars reads the files with (:func:`in_source_units`: Spark reads milliseconds as
        microseconds), so they are labelled as on the Polars engine: each column carries its unit in its metadata
        (:data:`_UNIT`), and so does every frame derived from it, whatever else the engine reads."""
        paths = [str(p) for p in (path, *more)]
        local = [p if is_uri(p) else str(Path(p).resolve()) for p in paths]
        exact = [p if is_uri(p) else named_path(p, "spark") for p in local]
        units, enums = source_types(path)
        return _with_types(self.spark.read.parquet(*exact), units, enums)

    def filesystem(self) -> HadoopFileSystem:
        """The session's Hadoop FileSystem API (the outputs' checks, staging and renames on URIs)."""
        return HadoopFileSystem(self.spark)

    def location(self, path: str | Path) -> Path | URI:
        """`path` as this engine writes it: a URI bound to Spark's file system, a local path as is."""
        return URI(path).on(self.filesystem()) if is_uri(path) else Path(path)

    def check_executors(self) -> None:
        """One tiny task on an executor importing polars_anon and its dependencies (:func:`check_executors`)."""
        check_executors(self.spark)

    def schema(self, table: Any) -> pl.Schema:
        """The Polars schema of `table`'s rows (:meth:`to_polars`'s), from its Spark schema: no query runs (an empty
        ``limit(0)`` collected was a Spark job of its own, planned, at the start of every run)."""
        return self._as_polars(_arrow_schema(table).empty_table(), table).schema

    def _counts(self, table: Any, keys: Sequence[str], limit: int | None = None) -> pl.DataFrame:
        grouped = table.groupBy(*spark_columns(keys)).count()
        frame = self.to_polars(grouped if limit is None else grouped.limit(int(limit)))
        return frame.with_columns(pl.col("count").cast(pl.Int64))

    def _count_sets(self, table: Any, key_sets: list[list[str]]) -> list[pl.DataFrame]:
        """``GROUP BY`` each of `key_sets`, in one Spark job: a key set contained in another is summed on the driver
        from the larger one's counts (the classes from the (class, sensitive value) counts); the largest ones are one
        ``GROUPING SETS`` query (one plain group-by when there is one), split on the driver by ``grouping_id``."""
        F = _pyspark().functions
        largest = [keys for keys in key_sets if not any(set(keys) < set(other) for other in key_sets)]
        columns = list(dict.fromkeys(c for keys in largest for c in keys))
        if len(largest) == 1:
            frames = {tuple(largest[0]): self._counts(table, largest[0])}
        else:
            grouped = table.groupingSets([spark_columns(keys) for keys in largest], *spark_columns(columns))
            both = self.to_polars(grouped.agg(F.grouping_id().alias(_GROUPING), F.count(F.lit(1)).alias("count")))
            frames = {}
            for keys in largest:  # grouping_id: bit (n - 1 - i) set when column i is not grouped
                gid = sum(1 << (len(columns) - 1 - i) for i, c in enumerate(columns) if c not in keys)
                one = both.filter(pl.col(_GROUPING) == gid).select(*keys, pl.col("count").cast(pl.Int64))
                frames[tuple(keys)] = one
        out = []
        for keys in key_sets:
            if tuple(keys) not in frames:
                whole = next(f for k, f in frames.items() if set(keys) < set(k))
                frames[tuple(keys)] = whole.group_by(keys).agg(pl.col("count").sum())
            out.append(frames[tuple(keys)])
        return out

    def first_rows(self, table: Any, keys: Sequence[str]) -> pl.DataFrame:
        """The position is :meth:`row_numbers` (the order Polars and DuckDB read the rows in; only compared)."""
        F = _pyspark().functions
        numbered = table.select(*spark_columns(keys), self.row_numbers(table, dense=False).alias(FIRST_ROW))
        return self.to_polars(numbered.groupBy(*spark_columns(keys)).agg(F.min(FIRST_ROW).alias(FIRST_ROW)))

    def distinct(self, table: Any, columns: Sequence[str]) -> dict[str, int]:
        F = _pyspark().functions
        exprs = [
            (F.count_distinct(col) + F.coalesce(F.max(col.isNull().cast("int")), F.lit(0))).alias(c)
            for c, col in zip(columns, spark_columns(columns))
        ]
        row = table.agg(*exprs).collect()[0]
        return {c: int(row[c]) for c in columns}

    def marginals(self, table: Any, qids: Sequence[str]) -> dict[str, pl.DataFrame]:
        return labelled_marginals(grouping_set_counts(self, table, qids))

    def sample(self, table: Any, key: tuple[int, int, int], threshold: int) -> Any:
        """The rows the keyed hash of their row number (:meth:`row_numbers`) keeps
        (:func:`polars_anon.privacy.differential.sample_sql_steps`)."""
        F = _pyspark().functions
        numbered = table.withColumn(ROW, self.row_numbers(table))
        for step in sample_sql_steps(key, "spark"):
            numbered = numbered.withColumn(HASH, F.expr(_once(step, HASH)))
        return numbered.filter(F.col(HASH) < F.lit(int(threshold))).drop(ROW, HASH)

    def row_numbers(self, table: Any, dense: bool = True) -> Any:
        """Each row's number in the order Polars and DuckDB read the same input, as a column: for a scan of Parquet
        files, at most filtered and projected (:func:`_rows_in_file_order`), the files in the order they were given,
        a folder's by name (:func:`_file_order`), then each file's rows (``_metadata.row_index``); Spark's own
        partitions put the largest file first (hunt35 F1). For rows not read from files (a frame sent as Arrow) or
        a frame that sorts, limits, unions or joins, the partitions' order, which is the frame's own. Each file or
        partition starts after the rows of those before it (one small group-by, all in the JVM): 0, 1, ... as Polars
        numbers them; a filtered scan's rows (places with gaps) are ranked by their place in their file (a window).
        Not `dense`: where no file is read, ``monotonically_increasing_id`` itself (in the same order, with gaps;
        no group-by, whose partitions a second evaluation of an input with a shuffle might not repeat)."""
        F = _pyspark().functions
        found = _file_places(table)
        if found is not None:
            group, place = found
        else:  # the partitions' order: each row's partition and place in it
            mid = F.monotonically_increasing_id()
            if not dense:
                return mid
            group, place = F.shiftright(mid, 33), mid.bitwiseAND(F.lit((1 << 33) - 1))
        spans = table.groupBy(group.alias("g")).agg(F.count(F.lit(1)).alias("n"), (F.max(place) + 1).alias("top"))
        spans = spans.collect()
        gaps = any(int(row["top"]) != int(row["n"]) for row in spans)  # a filtered scan: places with gaps
        if dense and gaps:  # ranked: 0, 1, ... over the rows kept, as Polars numbers them
            place = F.row_number().over(_pyspark().Window.partitionBy(group).orderBy(place)) - 1
        sizes = {row["g"]: int(row["n"] if dense or not gaps else row["top"]) for row in spans}  # never overlapping
        order = _file_order(list(sizes), _root_paths(table)) if isinstance(next(iter(sizes), 0), str) else sorted(sizes)
        offsets, total = [], 0
        for g in order:
            offsets += [F.lit(g), F.lit(total)]
            total += sizes[g]
        start = F.create_map(*offsets)[group] if offsets else F.lit(0)
        return (start + place).cast("long")

    def aggregate(self, table: Any, request: Request, counts: TupleCounts | None = None) -> EngineAggregates:
        return grouped_aggregates(self, table, request)  # its own group-by, kept (GroupBys): counts are not read

    def classes(
        self, table: Any, qids: Sequence[str], attributes: Sequence[str], labels: Mapping[str, pl.Series]
    ) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
        return grouped_classes(self, table, qids, attributes)

    def publish(self, table: Any, data: Aggregated, tmap: TupleMap, request: Request) -> Any:
        assert data.native is not None  # the engine's aggregation pass keeps its own group-by
        return self.join_map(table, engine_map(tmap, data.native, request), request)

    def expand(self, classes: pl.DataFrame, columns: Sequence[str]) -> Any:
        """The rows of `classes` sorted (see :meth:`polars_anon.engines.Engine.expand`): each class exploded over
        ``array_repeat(size)``, then ``orderBy`` (Spark compares Strings by their UTF-8 bytes); its writer then
        writes the part files in that order."""
        F = _pyspark().functions
        cols = [F.col(spark_identifier(c)) for c in columns]
        rows = self.spark.createDataFrame(classes.select(*columns, SIZE).to_arrow())
        rows = rows.select(*cols, F.explode(F.array_repeat(F.lit(0), F.col(SIZE).cast("int"))).alias("__anon_i"))
        return rows.select(*cols).orderBy(*(c.asc_nulls_last() for c in cols))

    def join_map(self, table: Any, mapping: pl.DataFrame | Any, request: Request, row_key: str | None = None) -> Any:
        """Join `mapping` (on the driver: broadcast when small; or a Spark DataFrame: shuffle-joined) to the rows:
        on the original qid values, or on the row id `row_key` of a row map (which `table` then carries). The rows
        keep the input's order: a broadcast join streams them in its partitions' order, which is the input's but
        for a scan of several files (Spark's partitions take them largest first, then as listed: a folder of parts
        was published out of name order); a shuffle join hands them back in its own order (a planner's map:
        Mondrian's rows came out of the rounds shuffled). In those two cases they are numbered first
        (:meth:`row_numbers`) and sorted on it after, as a row map is sorted on its row id."""
        F = _pyspark().functions
        qids, columns = list(request.qids), request.published_columns
        broadcast = isinstance(mapping, pl.DataFrame) and mapping.height <= BROADCAST_ROWS
        if isinstance(mapping, pl.DataFrame):
            # The suppressed tuples leave on the driver: the inner join drops their rows. A filter (or a projection)
            # over the map, a local relation, would be evaluated row by row, interpreted, by Spark's optimizer each
            # time it plans the query (ConvertToLocalRelation): 2-4 CPU-seconds for a 367,279-tuple map.
            kept = mapping.filter(~pl.col(SUPPRESSED)).drop(SUPPRESSED)
            nulls = {c for c in kept.columns if kept[c].null_count()}
            m = F.broadcast(self._from_polars(kept)) if broadcast else self._from_polars(kept)
        else:
            nulls = None
            m = mapping.filter(~F.col(SUPPRESSED))

        def equal(left: Any, key: str) -> Any:  # null-safe only where the map holds a null key (null="suppress")
            right = m[spark_identifier(key)]
            return left.eqNullSafe(right) if nulls is None or key in nulls else left == right

        order = row_key
        if row_key is None and (not broadcast or _several_files(table)):
            order, table = _ORDER, table.withColumn(_ORDER, self.row_numbers(table, dense=False))
        if row_key is not None:  # a row map
            on = table[row_key] == m[row_key]
        else:
            on = reduce(lambda a, b: a & b, [equal(table[spark_identifier(q)], key_col(q)) for q in qids])
        joined = table.join(m, on=on, how="inner")
        if order is not None:
            joined = joined.orderBy(table[order])
        return joined.select(
            *(m[spark_identifier(out_col(c))].alias(c) if c in qids else table[spark_identifier(c)] for c in columns)
        )

    # ------------------------------------------------------------ SQL rounds (polars_anon.engines.planners.mondrian)
    quote = staticmethod(spark_identifier)

    def sql(self, query: str) -> Any:
        """The DataFrame of a query over the names this engine made (lazy)."""
        return self.spark.sql(query)

    def view(self, table: Any) -> str:
        """A temporary view of `table`, for the SQL that follows."""
        return self._name(table, "view")

    def register(self, frame: pl.DataFrame) -> str:
        """A temporary view of a frame on the driver (sent as Arrow)."""
        return self._name(self._from_polars(frame), "reg")

    def keep(self, table: Any) -> str:
        """Materialize `table` (a local checkpoint: computed now, its lineage cut, as rounds pile up); its view."""
        return self._name(table.localCheckpoint(eager=True), "tmp")

    def _name(self, table: Any, kind: str) -> str:
        name = f"__anon_{kind}_{uuid.uuid4().hex[:12]}"
        table.createOrReplaceTempView(name)
        return name

    def drop(self, name: str) -> None:
        """Forget a view made by :meth:`keep` or :meth:`register`."""
        self.spark.catalog.dropTempView(name)

    @staticmethod
    def sorted_set(expr: str) -> str:
        """SQL aggregate: the distinct values of `expr` in a group, sorted, as an array."""
        return f"sort_array(collect_set({expr}))"

    def write(self, table: Any, path: str | Path) -> None:
        target = str(path) if is_uri(path) else str(Path(path).resolve())
        table = _with_types(table, {}, {})  # this engine's own: not written into the file's Spark schema
        table.write.mode("errorifexists").option("compression", "zstd").parquet(target)  # as Polars writes

    def to_polars(self, table: Any) -> pl.DataFrame:
        """A Spark DataFrame's rows on the driver. Spark hands a timestamp (an instant) to Arrow in UTC; it is
        converted to the session's zone (:attr:`time_zone`), the zone Spark shows it in and the column's own (a
        zoned qid in another zone is refused: :func:`~polars_anon.pipeline.capabilities.consult_zones`), so it is
        labelled as Polars labels the column; a column read from a Parquet file in its time unit (:data:`_UNIT`)."""
        return self._as_polars(table.toArrow(), table)

    def _as_polars(self, arrow: Any, table: Any) -> pl.DataFrame:
        """The Arrow rows of `table` as :meth:`to_polars` hands them: in their time units, Enums and zone."""
        frame = in_source_units(pl.from_arrow(arrow), _units(table))  # type: ignore[arg-type]
        frame = in_enums(frame, _enums(table))
        zoned = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Datetime) and dtype.time_zone]
        if not zoned:
            return frame
        try:
            return frame.with_columns(pl.col(zoned).dt.convert_time_zone(self.time_zone))
        except pl.exceptions.PolarsError:  # a zone Spark takes and Polars does not ('Z'): as Arrow gave it, in UTC
            return frame

    def __repr__(self) -> str:
        return f"SparkEngine({self.spark.sparkContext.master})"
