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

from polars_anon.duckdb.macros import generalize_sql, load_hierarchies, load_hierarchy, register, sql_files
from polars_anon.duckdb.pairs import metric_pairs

__all__ = ["generalize_sql", "load_hierarchies", "load_hierarchy", "metric_pairs", "register", "sql_files"]
