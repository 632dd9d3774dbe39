"""Apache Spark entry point: anonymize a Spark DataFrame, get a Spark DataFrame back.

The same parameters as :func:`polars_anon.anonymize`; the rows stay in Spark (group-bys,
a broadcast join, Spark's Parquet writer), the method runs on the driver over the class
aggregates. Needs ``pip install "polars_anon[spark]"`` and a Java 17+ runtime.

Examples
--------
>>> import polars_anon as pa
>>> from polars_anon import spark as pas          # doctest: +SKIP
>>> sdf = pas.session("local[2]").read.parquet("voters.parquet")   # doctest: +SKIP
>>> result = pas.anonymize(sdf, hierarchies=H, k=10, drop=["voter_id", "name"])   # doctest: +SKIP
>>> published = result.table()   # a Spark DataFrame, checked by a Spark group-by   # doctest: +SKIP
>>> result.sink_parquet("anonymized.parquet")   # a folder of parts, verified, then renamed   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polars_anon.engines import get_engine
from polars_anon.engines.spark import SparkEngine, session
from polars_anon.hierarchy import Hierarchy
from polars_anon.pipeline.result import Anonymized
from polars_anon.pipeline.road import run

__all__ = ["anonymize", "sdc_risk", "session"]


def anonymize(
    sdf: Any,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k: int,
    driver_tuples: int | None = None,
    **parameters: Any,
) -> Anonymized:
    """Anonymize the Spark DataFrame `sdf` (or a table name in the active session's catalog, or a Parquet path: a str
    or ``pathlib.Path``).

    Parameters are those of :func:`polars_anon.anonymize` (``hierarchies``, ``k``, ``method``, ...).
    `driver_tuples` (default 5,000,000) caps the class aggregates collected on the driver; beyond it
    ``method="mondrian"`` runs as Spark SQL rounds, other methods are refused
    (:mod:`polars_anon.engines.planners`).
    ``.table()`` returns the published Spark DataFrame after a Spark group-by checked every
    guarantee; ``.sink_parquet(path)`` writes, re-reads and checks it, then renames it into place.
    """
    # the engine as pa.anonymize(engine="spark") gets it: what Spark cannot read refused before a session starts
    # k by name, as pa.anonymize takes it: a call without it is refused naming anonymize(), not run()
    engine = get_engine("spark", data=sdf)
    return run(engine, sdf, hierarchies=hierarchies, k=k, driver_tuples=driver_tuples, **parameters)


def sdc_risk(sdf: Any, keys: Any, **measures: Any) -> dict[str, Any]:
    """The SDC risk figures of a Spark DataFrame (or what :func:`anonymize` reads: a table name in the session's
    catalog, a Parquet path as a str or ``pathlib.Path``, a Polars frame), the report's ``sdc`` figures: fk/Fk and the
    individual risk as Spark SQL, household risk one more group-by, SUDA2 and the log-linear model fitted on the
    driver; `measures` are the fields of :class:`polars_anon.sdc.measures.Measures` (``weight``, ``household``,
    ``method``, ``suda2``, ``model``, ...). A missing key value is a category here (``missing="wildcard"`` is
    refused; every refusal is a row of :data:`polars_anon.pipeline.capabilities.SDC_MEASURE_REFUSALS`)."""
    from polars_anon.pipeline.capabilities import consult_sdc_measures, consult_session, consult_values
    from polars_anon.sdc.measures import Measures, measure_sql

    spec = Measures(keys=(keys,) if isinstance(keys, str) else tuple(keys), **measures)
    consult_sdc_measures(spec, SparkEngine.name)  # the capability table: before any data is read
    engine: Any = get_engine("spark", data=sdf)  # the table's own session, as anonymize() takes it
    consult_session(engine)
    consult_values("spark", sdf, [*spec.keys, *(c for c in (spec.weight, spec.household) if c is not None)])
    return measure_sql(engine, engine.table(sdf), spec)
