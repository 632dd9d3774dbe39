"""The anonymization pipeline: validate, aggregate, run an algorithm, verify, write.

scan -> validate schema and hierarchies -> class aggregates -> algorithm -> published
LazyFrame -> independent k-anonymity check (fail closed) -> Parquet through a
temporary file -> report JSON beside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._types import Method, NullPolicy
from polars_anon._validate import as_lazy, check_choice, check_columns, check_k, check_values
from polars_anon.algorithms import METHODS, Task, refuse_missing_hierarchies
from polars_anon.classes import class_sizes, k_summary
from polars_anon.errors import InvalidParameterError, NotKAnonymousError, OutputExistsError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import report_path, write_json_atomic, write_parquet_atomic
from polars_anon.metrics.report import report_metrics

__all__ = ["Anonymized", "anonymize", "verify_k"]


def verify_k(lf: pl.LazyFrame, qids: Sequence[str], k: int) -> dict[str, int]:
    """Independent check: group the published table by its quasi-identifiers.

    Raises :class:`NotKAnonymousError` when a class is smaller than k; returns
    ``min_class_size``, ``n_classes`` and ``n_rows`` of the published table.
    """
    summary = k_summary(lf, qids, k).collect().row(0, named=True)  # materializes: one row
    if summary["n_rows"] and not summary["k_anonymous"]:
        raise NotKAnonymousError(
            f"independent check failed: the smallest class has {summary['min_class_size']} rows, "
            f"fewer than k={k} ({summary['violating_rows']} rows in such classes); nothing was written"
        )
    return {key: int(summary[key]) for key in ("min_class_size", "n_classes", "n_rows")}


@dataclass
class Anonymized:
    """An anonymization: the published LazyFrame and its report.

    Nothing is verified until :meth:`collect` or :meth:`sink_parquet`, which run
    the independent k-anonymity check and refuse to return or write a table that
    fails it.
    """

    lf: pl.LazyFrame
    qids: list[str]
    k: int
    report: dict[str, Any] = field(default_factory=dict)
    verify: Callable[[pl.LazyFrame], dict[str, Any]] | None = None
    """The method's own check when it declares a guarantee other than classic
    k-anonymity (``Plan.verify``, e.g. mdav with publish="permute"); None means
    :func:`verify_k` (group the published table by its quasi-identifiers)."""

    def _verify(self, lf: pl.LazyFrame) -> dict[str, Any]:
        return self.verify(lf) if self.verify is not None else verify_k(lf, self.qids, self.k)

    def lazy(self) -> pl.LazyFrame:
        """The published table as a LazyFrame (not yet verified: collect or sink to verify)."""
        return self.lf

    def collect(self) -> pl.DataFrame:
        """Collect the published table after checking it is k-anonymous."""
        df = self.lf.collect()
        self.report.update(self._verify(df.lazy()))
        return df

    def sink_parquet(self, path: str | Path, *, overwrite: bool = False, report: bool | str | Path = True) -> dict[str, Any]:
        """Write the published table to Parquet, verified, and its report JSON beside it.

        The table is streamed to a temporary file in the target directory, the
        written file is re-read and checked for k-anonymity, and only then renamed
        to `path`. An existing `path` is refused unless `overwrite`. The report goes
        to ``<stem>.report.json`` (or the path given as `report`; False skips it).
        Returns the report.
        """
        path = Path(path)
        target = report_path(path) if report is True else (Path(report) if report else None)
        if target is not None and target.exists() and not overwrite:
            raise OutputExistsError(f"report {str(target)!r} exists; pass overwrite=True (CLI: --overwrite) to replace it")
        start = time.perf_counter()
        facts = write_parquet_atomic(
            self.lf, path, overwrite=overwrite, verify=lambda tmp: self._verify(pl.scan_parquet(tmp))
        )
        self.report.update(facts)
        self.report["write_seconds"] = round(time.perf_counter() - start, 3)
        self.report["output"] = str(path)
        if target is not None:
            write_json_atomic(self.report, target, overwrite=overwrite)
        return self.report


def anonymize(
    data: pl.LazyFrame | pl.DataFrame,
    *,
    qids: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    method: Method = "fulldomain",
    metric: str | None = None,
    drop: Sequence[str] = (),
    sensitive: str | None = None,
    seed: int = 0,
    null: NullPolicy = "error",
    **options: Any,
) -> Anonymized:
    """k-anonymize a table.

    Parameters
    ----------
    data
        Polars LazyFrame or DataFrame (for example ``pl.scan_parquet(...)``).
    qids
        Quasi-identifier columns; defaults to the keys of `hierarchies`.
    hierarchies
        Quasi-identifier -> :class:`~polars_anon.Hierarchy`.
    k
        Minimum class size, >= 1 and at most the row count.
    method
        Algorithm name from :data:`polars_anon.algorithms.METHODS`.
    metric
        The cost that guides the algorithm, where it takes one.
    drop
        Direct identifiers to remove before publishing.
    sensitive
        The sensitive attribute (kept as is; some algorithms and reports use it).
    seed
        Seed for randomized steps; same input, parameters and seed give the same bytes.
    null
        ``"error"`` refuses nulls in a quasi-identifier with their count;
        ``"suppress"`` publishes them as the hierarchy root.
    **options
        Method-specific options (for ``fulldomain``: ``max_suppressed``).

    Returns
    -------
    Anonymized
        ``.collect()`` or ``.sink_parquet(path)`` verify and return or write the table;
        ``.report`` holds the facts.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> df = pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"]})
    >>> H = {"age": Hierarchy.intervals(range(30, 40), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}
    >>> anonymize(df, hierarchies=H, k=2).collect().rows()
    [('30-39', 'F'), ('30-39', 'M'), ('30-39', 'F'), ('30-39', 'M')]
    """
    start = time.perf_counter()
    lf = as_lazy(data)
    qids = list(hierarchies) if qids is None else list(qids)
    if not qids:
        raise InvalidParameterError("qids is empty; name at least one quasi-identifier column")
    check_columns(lf, qids, "qids")
    no_hierarchy = [q for q in qids if q not in hierarchies]
    refuse_missing_hierarchies(
        method, no_hierarchy, f"qids {no_hierarchy} have no hierarchy (given for {list(hierarchies)})", "pass one in hierarchies="
    )
    for q in qids:
        if q in hierarchies and not isinstance(hierarchies[q], Hierarchy):
            raise InvalidParameterError(f"hierarchies[{q!r}] must be a Hierarchy, got {type(hierarchies[q]).__name__}")
    hierarchies = {q: hierarchies[q] for q in qids if q in hierarchies}
    check_columns(lf, drop, "drop")
    if sensitive is not None:
        check_columns(lf, [sensitive], "sensitive")
        if sensitive in qids:
            raise InvalidParameterError(f"sensitive {sensitive!r} is also a quasi-identifier; it must be one or the other")
    check_choice("method", method, sorted(METHODS))
    check_choice("null", null, ["error", "suppress"])
    check_k(k)
    lf = lf.drop(list(drop)).with_columns(pl.col(q).cast(pl.String) for q in qids)
    aggregates = class_sizes(lf, qids).collect()  # materializes: one row per class
    check_values(aggregates, hierarchies, allow_null=null == "suppress")
    n_rows = int(aggregates["size"].sum())
    check_k(k, n_rows)
    if null == "suppress" and any(aggregates[q].null_count() for q in qids):
        roots = [pl.col(q).fill_null(h.root) for q, h in hierarchies.items()]
        lf = lf.with_columns(roots)
        aggregates = class_sizes(aggregates.lazy().with_columns(roots), qids).collect()
    task = Task(
        lf=lf,
        aggregates=aggregates,
        qids=qids,
        hierarchies=hierarchies,
        k=k,
        seed=seed,
        metric=metric,
        sensitive=sensitive,
        options=options,
    )
    plan = METHODS[method](task)
    report: dict[str, Any] = {
        "k": k,
        "method": method,
        "metric": metric,
        "qids": qids,
        "sensitive": sensitive,
        "seed": seed,
        "n_input_rows": n_rows,
        "n_input_classes": aggregates.height,
        "suppressed": plan.suppressed,
        "guarantee": plan.guarantee,
        **plan.details,
        "metrics": report_metrics(aggregates, qids, hierarchies, plan.details.get("levels"), k, plan.mapping),
        "seconds": round(time.perf_counter() - start, 3),
    }
    return Anonymized(plan.lf, qids, k, report, plan.verify)
