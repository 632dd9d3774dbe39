"""DuckDB front door: register the ``anon_*`` SQL macros and load hierarchies as tables.

>>> import duckdb, polars_anon as pa
>>> from polars_anon.duckdb import register, load_hierarchies
>>> con = duckdb.connect()
>>> "anon_class_sizes" in register(con)
True
>>> load_hierarchies(con, {"sex": pa.Hierarchy.suppression(["F", "M"])})
>>> con.sql("SELECT anon_generalize('sex', 'F', 1)").fetchall()
[('*',)]

The macros refuse bad input with the messages of :mod:`polars_anon.messages`, as
the Python functions do; from Python they arrive as ``duckdb.Error``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from polars_anon.duckdb.macros import generalize_sql, load_hierarchies, load_hierarchy, register, sql_files
from polars_anon.duckdb.pairs import metric_pairs

if TYPE_CHECKING:
    from polars_anon.hierarchy import Hierarchy
    from polars_anon.pipeline.result import Anonymized

__all__ = [
    "anonymize",
    "sdc_risk",
    "generalize_sql",
    "load_hierarchies",
    "load_hierarchy",
    "metric_pairs",
    "register",
    "sql_files",
]


def anonymize(
    data: Any,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k: int,
    connection: Any = None,
    driver_tuples: int | None = None,
    **parameters: Any,
) -> Anonymized:
    """Anonymize a DuckDB relation, a table or view name, or a Parquet path (a str or ``pathlib.Path``), on
    `connection` (default DuckDB's default connection).

    Parameters are those of :func:`polars_anon.anonymize`; the rows stay in DuckDB (group-bys, the
    publishing join, DuckDB's Parquet writer). `driver_tuples` (default 5,000,000) caps the class
    aggregates brought to Python; beyond it ``method="mondrian"`` runs as DuckDB queries, other
    methods are refused (:mod:`polars_anon.engines.planners`). ``.table()`` returns the published relation after a
    DuckDB group-by checked every guarantee; ``.sink_parquet(path)`` writes, re-reads, checks, renames.

    >>> import duckdb, polars_anon as pa
    >>> con = duckdb.connect()
    >>> _ = con.sql("CREATE TABLE people AS SELECT * FROM (VALUES ('F', 1), ('M', 2), ('F', 3), ('M', 4)) t(sex, id)")
    >>> sex = pa.Hierarchy.suppression(["F", "M"])
    >>> r = anonymize("people", connection=con, hierarchies={"sex": sex}, k=2, insensitive="id")
    >>> r.table().order("id").fetchall()
    [('F', 1), ('M', 2), ('F', 3), ('M', 4)]
    """
    from polars_anon.engines.duckdb import DuckDBEngine
    from polars_anon.pipeline.road import run

    # k by name, as pa.anonymize takes it: a call without it is refused naming anonymize(), not run()
    return run(DuckDBEngine(connection), data, hierarchies=hierarchies, k=k, driver_tuples=driver_tuples, **parameters)


def sdc_risk(data: Any, keys: Any, *, connection: Any = None, **measures: Any) -> dict[str, Any]:
    """The SDC risk figures of a DuckDB relation, table or view name, or Parquet path (a str or ``pathlib.Path``), the
    report's ``sdc`` figures: fk/Fk and the individual risk as SQL, household risk one more group-by, SUDA2 and the
    log-linear model fitted in Python on the distinct patterns; `measures` are the fields of
    :class:`polars_anon.sdc.measures.Measures`. A missing key value is a category here (``missing="wildcard"`` is
    refused: use the Polars frame).

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> _ = con.sql("CREATE TABLE s AS SELECT * FROM (VALUES ('F', 10.0), ('F', 30.0), ('M', 5.0)) t(sex, w)")
    >>> fig = sdc_risk("s", ["sex"], connection=con, weight="w")
    >>> fig["n_unique"], round(fig["max_individual_risk"], 4)   # M: fk 1, Fk 5: p/(1-p) ln(1/p) with p = 1/5
    (1, 0.4024)
    """
    from polars_anon.engines.duckdb import DuckDBEngine
    from polars_anon.pipeline.capabilities import consult_sdc_measures
    from polars_anon.sdc.measures import Measures, measure_sql

    spec = Measures(keys=(keys,) if isinstance(keys, str) else tuple(keys), **measures)
    consult_sdc_measures(spec, DuckDBEngine.name)  # the capability table: before any data is read
    engine = DuckDBEngine(connection)
    return measure_sql(engine, engine.table(data), spec)
