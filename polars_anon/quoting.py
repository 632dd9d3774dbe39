"""SQL quoting, one helper per dialect and kind: every identifier and literal the package writes into SQL.

User values reach SQL as macro arguments or ``?`` parameters wherever the API allows; these
helpers are for names (columns, views) and for the few literals that must be spelt in the text.

>>> print(duckdb_identifier('a"b'), duckdb_literal("O'Brien"), spark_identifier("a`b"))
"a""b" 'O''Brien' `a``b`
"""

from __future__ import annotations

__all__ = ["duckdb_identifier", "duckdb_literal", "spark_identifier"]


def duckdb_identifier(name: str) -> str:
    """`name` as a quoted DuckDB (standard SQL) identifier."""
    return '"' + name.replace('"', '""') + '"'


def duckdb_literal(text: str) -> str:
    """`text` as a DuckDB (standard SQL) string literal."""
    return "'" + text.replace("'", "''") + "'"


def spark_identifier(name: str) -> str:
    """`name` as a quoted Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"
