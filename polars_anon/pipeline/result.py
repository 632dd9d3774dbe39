"""The result of the road, on every engine: the published table, its report, its independent check.

:class:`Anonymized` holds the engine's published table (a LazyFrame on Polars, a DuckDB relation,
a Spark DataFrame) and a :class:`Check`, which verifies every guarantee on a table of that engine
(the published rows, or the written file re-read) and fails closed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
from polars.io.plugins import register_io_source

from polars_anon._memory import release_freed_memory
from polars_anon._progress import stage
from polars_anon.engines import Engine
from polars_anon.engines.polars import POLARS, PolarsEngine, few_classes
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.io import (
    FileStamp,
    csv_errors,
    html_path,
    input_changes,
    parquet_dtypes,
    reads_detail,
    report_path,
)
from polars_anon.locations import URI
from polars_anon.outputs import Outputs, check_apart, check_parquet_target, staged_write
from polars_anon.pipeline.capabilities import storage
from polars_anon.pipeline.state import Planned
from polars_anon.privacy.counts import from_wide
from polars_anon.privacy.risk import risk_summary
from polars_anon.report import Report, build_report, jsonable, notebook
from polars_anon.report.disclosure import attribute_disclosure, class_disclosure, disclosure_counts, disclosure_of
from polars_anon.report.guarantee import exposure_phrase, guarantee_name, planned_shape, verified_shape
from polars_anon.report.page import count, fraction
from polars_anon.report.phrases import k_asked_phrase, suppression_brief, undeclared_phrase
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE, TupleMap
from polars_anon.verify import verify_classes_of

__all__ = ["Anonymized", "Check", "Written", "check_classes", "check_planned", "write_report"]


def write_report(out: Outputs, report: Mapping[str, Any], path: Path | URI, *, html: Path | URI | None = None) -> None:
    """Stage the report JSON in `out` and, when `html` is a path, its HTML page rendered from that JSON."""
    text = json.dumps(jsonable(report), indent=2) + "\n"
    staged_write(out, path, lambda tmp: tmp.write_text(text), what="report")
    if html is not None:
        from polars_anon.report.html import write_html  # imports the plotting library

        write_html(out, json.loads(text), html)


def check_classes(
    classes: pl.DataFrame, frames: Sequence[pl.DataFrame | None], request: Request, planned: Planned
) -> dict[str, Any]:
    """Every guarantee on the published classes (grouped by any engine), then the output's risk; fail closed."""
    qids = list(request.qids)
    facts, published = verify_classes_of(
        classes, frames, qids, request.k, planned.constraints, planned.plan.details.get("levels")
    )
    output = risk_summary(published, qids, population_size_=planned.population, aggregated=True)
    facts["risk"] = {"input": planned.input_risk, "output": output}
    return facts


def check_planned(classes: pl.DataFrame, tmap: TupleMap) -> None:
    """The published `classes` (the qids' published labels and ``size``, as an engine grouped them) are the ones
    `tmap` planned, each with its rows. The input is read again to publish: read otherwise (a file changed, a query
    whose rows come in another order) the old plan may publish other classes, still k-anonymous or not (a tuple the
    map does not hold is published with null labels); fail closed.

    >>> m = TupleMap.from_labels(pl.DataFrame({"q": ["a", "b"], "size": [2, 2]}), ["q"], {"q": pl.Series(["a", "b"])})
    >>> check_planned(pl.DataFrame({"q": ["a", "b"], "size": [2, 2]}), m)
    >>> try:
    ...     check_planned(pl.DataFrame({"q": ["a", "b"], "size": [3, 1]}), m)
    ... except NotKAnonymousError as e:
    ...     print(str(e)[:80])
    independent check failed: the published class {'q': 'a'} has 3 rows where the me
    """
    qids = list(tmap.qids)
    text = [pl.col(q).cast(pl.String) for q in qids]
    planned = tmap.published_sizes().select(*text, pl.col(SIZE).alias(_PLANNED))
    found = classes.select(*text, SIZE).join(planned, on=qids, how="full", nulls_equal=True, coalesce=True)
    wrong = found.filter(pl.col(SIZE).ne_missing(pl.col(_PLANNED)))
    if wrong.height:
        row = wrong.row(0, named=True)
        labels = {q: row[q] for q in qids}
        raise NotKAnonymousError(
            f"independent check failed: the published class {labels} has {row[SIZE] or 0:,} rows "
            f"where the method planned {row[_PLANNED] or 0:,}: the input read to publish is not the input the method "
            "read (rows, values or their order changed), or the table was changed once written; nothing was written"
        )


_PLANNED = "__anon_planned"


@dataclass(frozen=True)
class Check:
    """The independent check of a published table of `engine`: the method's own (MDAV's permutation, which
    checks the models on its clusters) or k-anonymity and every model on the classes the engine groups, and
    every input row accounted for (published or suppressed); then the output's risk. Fails closed."""

    request: Request
    planned: Planned
    prepared: pl.LazyFrame | None = None
    engine: Engine = POLARS

    def on(self, engine: Engine) -> Check:
        """The same check of a table of `engine` (a DuckDB or Spark result collected into Polars)."""
        return replace(self, engine=engine)

    def __call__(self, table: Any) -> dict[str, Any]:
        request, planned = self.request, self.planned
        qids, plan, constraints = list(request.qids), planned.plan, planned.constraints
        if plan.verify is not None:  # the method's own check (a Polars table: it runs on the driver's rows)
            assert self.prepared is not None
            facts = plan.verify(table, self.prepared)
            output = facts.pop("output_risk", None)  # a method whose records are no partition measures it itself
            if output is None:
                output = risk_summary(table, qids, population_size_=planned.population, aggregated=False)
            facts["risk"] = {"input": planned.input_risk, "output": output}
            return {**facts, "attribute_disclosure": self.disclosure(table)}
        expected = planned.facts["n_input_rows"] - planned.facts["suppressed"]
        attributes = list(constraints.sensitive)
        grouped: tuple[pl.DataFrame, list[pl.DataFrame | None]]
        if isinstance(self.engine, PolarsEngine):  # the map says how many classes are due: few, or many
            due = 0 if plan.map.by_partition else len(plan.map.class_sizes())
            few = few_classes(due, expected)
            grouped = self.engine.classes(table, qids, attributes, constraints.labels, few=few)
        else:  # every group-by of the check in one pass where the engine can (Spark: one job), served from there
            engine: Any = self.engine
            extra = dict.fromkeys([*attributes, *self.request.sensitives])
            engine.counts.prefetch(table, [qids, *([*qids, a] for a in extra)])
            grouped = engine.classes(table, qids, attributes, constraints.labels)
        n_rows = int(grouped[0][SIZE].sum())
        if n_rows != expected:
            raise NotKAnonymousError(
                f"independent check failed: the published table has {n_rows:,} rows, but {expected:,} "
                "were due (input rows minus suppressed ones); nothing was written"
            )
        facts = check_classes(*grouped, request, planned)  # k and every model first: their own message
        if not plan.map.by_partition:
            check_planned(grouped[0], plan.map)
        counted = self._counted(*grouped) if isinstance(self.engine, PolarsEngine) else {}
        return {**facts, "attribute_disclosure": self.disclosure(table, counted)}

    def _counted(self, classes: pl.DataFrame, frames: Sequence[pl.DataFrame | None]) -> dict[str, dict[str, Any]]:
        """The attribute disclosure of each sensitive attribute a model reads, from the check's counts of it in the
        published classes (checked: every value one the input holds), not from another group-by of the rows."""
        qids, sensitives = list(self.request.qids), set(self.request.sensitives)
        out = {}
        for (attribute, counts), frame in zip(self.planned.constraints.sensitive.items(), frames):
            if attribute not in sensitives:
                continue
            if frame is None:  # counted as a column per value in the class pass
                dense = from_wide(classes, attribute, counts.domain.labels).dense(classes.height)
                out[attribute] = class_disclosure(dense)
            else:
                out[attribute] = attribute_disclosure(frame, qids)
        return out

    def disclosure(self, table: Any, counted: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """Attribute disclosure of each sensitive attribute in the published `table`, model asked or not; `counted`:
        those already found (:meth:`_counted`, Polars)."""
        qids, sensitives = list(self.request.qids), list(self.request.sensitives)
        if self.engine.name == "polars":
            known = dict(counted or {})
            rest = [a for a in sensitives if a not in known]
            known |= disclosure_of(disclosure_counts(table, qids, rest), qids) if rest else {}
            return {a: known[a] for a in sensitives}
        engine: Any = self.engine  # DuckDB and Spark group by SQL (engines.SQLEngine.counts)
        return disclosure_of({a: engine.counts(table, [*qids, a]) for a in sensitives}, qids)


@dataclass(frozen=True)
class Written:
    """What :meth:`Anonymized.stage` learnt: the check's facts on the written table, where, and how long it took."""

    checked: dict[str, Any]
    output: str
    write_seconds: float
    measured: dict[str, Any] | None = None
    """What the caller's `measure` found on the written table (a job's ``[sdc]`` figures), if it gave one."""
    phases: dict[str, float] | None = None
    """Seconds of writing and of verifying the written table."""
    dtypes: dict[str, str] | None = None
    """Each written column's dtype as Polars reads the file (None: a remote output, not read back here)."""
    staged: Path | URI | None = None
    """Where the verified table lies until the output set commits (a temporary name beside :attr:`output`): what a
    job's encodings read (:func:`~polars_anon.job.execute_job`), the rows that were checked, not the input again."""


@dataclass(repr=False)
class Anonymized:
    """An anonymization on any engine: the published table, its report and its independent check.

    Nothing is verified until :meth:`collect`, :meth:`table` or :meth:`sink_parquet`, which run the
    check of every guarantee on the published rows and refuse to return or write a table that fails
    it; the LazyFrame of :meth:`lazy` (Polars) checks them each time it runs.

    :attr:`report` is built (:func:`~polars_anon.report.build_report`) from the facts known at each
    step, never edited: from the plan's facts until the table is verified, then from those and the
    check's (and, once written, the write's).
    """

    published: Any
    """The published table, the engine's own (a LazyFrame on Polars)."""
    facts: Mapping[str, Any]
    """The facts known before the table is verified (:func:`~polars_anon.report.plan_facts`)."""
    verifier: Callable[[Any], dict[str, Any]]
    """Verifies a table of `engine` (raises :class:`~polars_anon.errors.NotKAnonymousError`), returns facts."""
    prepared: pl.LazyFrame | None = None
    """Polars: the prepared input the map was computed from (identifying columns dropped, qids as String
    labels, nulls at the roots under ``null="suppress"``)."""
    engine: Engine = field(default=POLARS)
    tmap: TupleMap | None = None
    """The map the table publishes (encodings are planned from it); None on a planner's route."""
    reads: tuple[str, ...] = ()
    """The files the input rows were read from (:meth:`~polars_anon.engines.Engine.sources`): :meth:`sink_parquet`
    refuses to write onto them, even with ``overwrite``."""
    missing: Callable[[str], str] | None = None
    """How to read a late CSV value as missing where the input was read (:func:`~polars_anon.io.csv_errors`; None:
    Polars' ``null_values``)."""
    protects: tuple[str, ...] = ()
    """Other files the run read and :meth:`sink_parquet` never writes onto: the models' population tables (not the
    input's: a late CSV value is named as the input's only from :attr:`reads`)."""
    stamps: Mapping[str, FileStamp] | None = None
    """Each local file of :attr:`reads` as ``anonymize()`` began (:func:`~polars_anon.io.file_stamps`): when
    publishing fails on an input that changed since, the error names it (:func:`~polars_anon.io.input_changes`)."""
    report: Report = field(init=False)
    """The report (a read-only dict), built from every fact known so far."""

    def __post_init__(self) -> None:
        self.report = build_report(self.facts)

    def build(
        self,
        written: Written,
        *,
        input: str | None = None,
        encodings: Mapping[str, Mapping[str, Any]] | None = None,
        sdc: Mapping[str, Any] | None = None,
        unchanged: Mapping[str, float] | None = None,
    ) -> Report:
        """Build the report once from every fact: the plan's, the check's and the write's (`written`), a job's
        `input`, `encodings` and ``[sdc]`` figures, and `unchanged` (the shares of the qids its protect steps changed
        published as their input values); it becomes :attr:`report` and is returned."""
        self.report = build_report(
            self.facts,
            checked=written.checked,
            output=written.output,
            write_seconds=written.write_seconds,
            input=input,
            encodings=encodings,
            sdc=sdc,
            unchanged=unchanged,
            phases=written.phases,
            dtypes=written.dtypes,
        )
        return self.report

    def _repr_html_(self) -> str:
        return notebook.anonymized_html(self.report)

    def __repr__(self) -> str:
        """One line from the report (the dataclass's own repr printed every frame and the whole report)."""
        r = self.report
        head = f"Anonymized({r.get('method')}, k={r.get('k')}{k_asked_phrase(r)}, engine={self.engine.name}: "
        undeclared = undeclared_phrase(r)
        tail = f"; {undeclared})" if undeclared else ")"
        if "min_class_size" in r:
            loss = "" if r.get("loss") is None else f", average cell loss {fraction(r['loss'])}"
            exposed = exposure_phrase(r)
            return head + (
                f"{count(r.get('n_rows'), 'row', 'rows')} published {verified_shape(r)}, "
                f"{suppression_brief(r)}{loss}; "
                + (
                    "verified"
                    if r.get("guarantee", "k-anonymity") == "k-anonymity"
                    else f"{guarantee_name(r)} verified"
                )
                + (f"; {exposed}" if exposed else "")
                + tail
            )
        return head + (
            f"{count(r.get('n_input_rows'), 'input row', 'input rows')}, {planned_shape(r)}; not yet verified: "
            "collect() or sink_parquet() "
            f"checks every guarantee{tail}"
        )

    def report_html(self) -> str:
        """The full HTML page of the report (as written beside the output; verified facts after collect or sink)."""
        return notebook.report_page(self.report)

    @property
    def lf(self) -> pl.LazyFrame:
        """The published table as a LazyFrame that checks every guarantee when it runs (:meth:`lazy`)."""
        return self.lazy()

    def lazy(self, *, verify: bool = True) -> pl.LazyFrame:
        """The published table as a LazyFrame; Polars only.

        With `verify` (the default) the frame checks every guarantee on the whole published table each time it
        runs (``collect``, ``sink_parquet``), before any later step of the query sees a row, and raises as
        :meth:`collect` does (the report then holds the check's facts): the input may have changed since the
        method ran; Polars' own failure reading it (a late CSV value, a Parquet file rewritten under its scan) is
        named in one line as there (the frame is a source of ours that collects the published table). The published
        rows are then held in memory once; for a table larger than memory use :meth:`sink_parquet`, which streams
        and checks the written file.
        ``verify=False``: the publication's plan as it is, streamed and **unchecked**.

        >>> from polars_anon import Hierarchy, anonymize
        >>> H = {"sex": Hierarchy.suppression(["F", "M"])}
        >>> anonymize(pl.DataFrame({"sex": ["F", "M", "F"]}), hierarchies=H, k=2).lazy().collect()["sex"].to_list()
        ['*', '*', '*']
        """
        if self.engine.name != "polars":
            raise InvalidParameterError(
                f"the result of engine {self.engine.name!r} is the engine's table: use .table() or .collect()"
            )
        if not verify:
            return self.published
        # the frame is a source of ours: Polars reads the input inside collect() below, where its failures are
        # named (a late CSV value, a changed file); the plan names the files read (io.scanned_files)
        return register_io_source(
            self._checked_batches,
            schema=self.published.collect_schema(),
            explain_name="polars_anon checked",
            explain_detail=reads_detail(self.reads),
        )

    def _checked_batches(
        self, columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        """The source of :meth:`lazy`'s frame: the whole published table, collected and checked (:meth:`collect`),
        then the query's pushed-down slice, filter and projection, in that order, as a scan applies them (Polars
        passes ``head(3).filter(...)`` as both and re-applies neither; ``filter(...).head(3)`` passes no slice), so
        that a later step sees checked rows only. No column asked (``with_row_index().select("index")``): the rows
        kept, without columns. Not a generator: Polars calls this before a sink opens its file, so a refusal leaves
        none (a generator's left an empty file)."""
        rows = self.collect()
        if n_rows is not None:
            rows = rows.head(n_rows)
        if predicate is not None:
            rows = rows.filter(predicate)
        if columns is not None:
            rows = rows.select(columns) if columns else rows.drop(rows.columns)
        return iter([rows])

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Where the published table is read and checked: a CSV input's late value in one line naming it, and an
        input that changed since ``anonymize()`` named (:func:`~polars_anon.io.input_changes`). First the memory the
        planning freed goes back to the operating system (:func:`~polars_anon._memory.release_freed_memory`): glibc
        would keep it resident under the rows read and written, the run's peak (the 3M register's fulldomain job:
        443-452 MiB against 457-485 without; 15M: 682 against 729)."""
        release_freed_memory()
        with input_changes(self.stamps or {}), csv_errors(self.reads, self.missing):
            yield

    def verify(self, table: Any) -> dict[str, Any]:
        """Every guarantee on `table` (the published rows, or as written; a table of the engine); fail closed."""
        return self.verifier(table)

    def table(self) -> Any:
        """The published table (a LazyFrame, a DuckDB relation, a Spark DataFrame), after checking it."""
        with self._reading():
            checked = self.verify(self.published)
        self.report = build_report(self.facts, checked=checked)
        return self.published

    def collect(self) -> pl.DataFrame:
        """Collect the published table after checking every guarantee on it (with Polars, on the rows collected)."""
        with self._reading():
            df = self.engine.to_polars(self.published)
            if self.engine is POLARS:
                checked = self.verify(df.lazy())
            else:
                check = self.verifier
                assert isinstance(check, Check)  # built by the road
                checked = check.on(POLARS)(df.lazy())
        self.report = build_report(self.facts, checked=checked)
        return df

    def location(self, path: str | Path) -> Path | URI:
        """`path` as this result's engine writes it: a URI as written, on the engine's file system (Spark: Hadoop's),
        refused in one line on an engine that cannot write it (:func:`~polars_anon.pipeline.capabilities.storage`)."""
        located = storage(self.engine.name, path, "output")
        bind = getattr(self.engine, "location", None)  # an engine with its own file system (Spark) binds URIs to it
        return bind(located) if isinstance(located, URI) and bind is not None else located

    def check_target(self, path: str | Path) -> Path | URI:
        """Refuse an output path this result cannot write (before anything is read or written)."""
        return check_parquet_target(self.location(path), folder=self.engine.name == "spark")

    def stage(
        self, out: Outputs, path: str | Path, *, measure: Callable[[Any], dict[str, Any]] | None = None
    ) -> Written:
        """Write the table with the engine's writer into the output set `out`: to a temporary name, verified from
        the written data (and measured by `measure`, if given, on the same table). The caller builds the report
        (:meth:`build`) from the facts returned, and commits `out` (renaming every output into place) once all are
        written."""
        path = self.check_target(path)
        start = time.perf_counter()

        measured: dict[str, Any] = {}
        marks: dict[str, float] = {}

        def write(tmp: Path | URI) -> dict[str, Any]:
            measured["staged"] = tmp
            with stage(f"write {path.name}"):
                self.engine.write(self.published, tmp)
            marks["write"] = time.perf_counter()
            with stage(f"verify {path.name}"):
                table = self.engine.read_parquet(tmp)
                checked = self.verify(table)
            marks["verify"] = time.perf_counter()
            if measure is not None:
                measured["facts"] = measure(table)
            if isinstance(tmp, Path):  # the dtypes the file names (DuckDB's and Spark's zoned timestamps: 'UTC')
                measured["dtypes"] = parquet_dtypes(tmp)
            return checked

        with self._reading():
            checked = staged_write(out, path, write, file=self.engine.name != "spark")  # Spark writes a folder
        phases = {"write": round(marks["write"] - start, 3), "verify": round(marks["verify"] - marks["write"], 3)}
        seconds = round(time.perf_counter() - start, 3)
        facts, dtypes, staged = measured.get("facts"), measured.get("dtypes"), measured["staged"]
        return Written(checked, str(path), seconds, facts, phases, dtypes, staged)

    def sink_parquet(
        self, path: str | Path, *, overwrite: bool = False, report: bool | str | Path = True, report_html: bool = True
    ) -> Report:
        """Write the published table to Parquet, verified, and its report beside it; all or nothing.

        The table is written to a temporary name in the target folder, re-read and
        checked, and only then renamed to `path` together with the report (JSON to
        ``<stem>.report.json``, or the path given as `report`; False skips it) and,
        unless `report_html` is False, its HTML page (``<stem>.report.html``, beside
        the JSON). An existing output is refused unless `overwrite`; on any failure or
        interrupt nothing new remains and nothing that existed is touched; a file the input was read from is
        never replaced (refused, even with `overwrite`). Returns the report.
        """
        path = self.check_target(path)
        target = report_path(path) if report is True else (self.location(report) if report else None)
        html = html_path(target) if target is not None and report_html else None
        check_apart([("output", path), *[(w, p) for w, p in (("report", target), ("report page", html)) if p]])
        with Outputs(overwrite=overwrite, reads=(*self.reads, *self.protects)) as out:
            out.check(path, file=self.engine.name != "spark")  # the table first: named first when both exist
            for extra in (target, html):
                if extra is not None:
                    out.check(extra, what="report")
            self.build(self.stage(out, path))
            if target is not None:
                write_report(out, self.report, target, html=html)
            out.commit()
        return self.report
