"""The 31 direct-form metric macros are thin wrappers over one macro, anon_metric (sql/_metrics_direct.sql).

Their results are checked against Polars in test_metrics_sql.py; here, that the wrappers and
the generic macro's table of names follow the metric registry.
"""

from __future__ import annotations

import re

from polars_anon.duckdb import sql_files
from polars_anon.metrics import METRICS

FILES = dict(sql_files())


def test_each_direct_macro_is_one_line_over_anon_metric() -> None:
    """anon_<name>(...) is FROM anon_metric('<name>', ...), passing sensitive exactly when the metric needs it."""
    bodies = dict(
        re.findall(
            r"CREATE OR REPLACE TEMP MACRO (anon_\w+)\(orig, anon, [^)]*\) AS TABLE\n  (FROM [^;]*);",
            FILES["metrics.sql"],
        )
    )
    assert set(bodies) == {m.sql for m in METRICS.values()}
    for name, m in METRICS.items():
        sens = ", sensitive := sensitive" if m.needs_sensitive else ""
        assert bodies[m.sql] == f"FROM anon_metric('{name}', orig, anon, qids, key := key{sens}, k := k)", name


def test_anon_metric_has_one_cte_per_metric_and_the_four_shared_ones_once() -> None:
    text = FILES["_metrics_direct.sql"]
    assert set(
        re.findall(r"__anon_m_(\w+) AS \(FROM anon_(\w+)_of\('__anon_pr', anon_names\(qids\), k := k\)\)", text)
    ) == {(n, n) for n in METRICS}
    for part in ("pairs", "cells_of", "classes_of", "joint_of"):
        assert text.count(f"FROM anon_metric_{part}(") == 1, part
    assert "__anon_pr_cells AS" not in FILES["metrics.sql"]  # the four CTEs are written once, in anon_metric
