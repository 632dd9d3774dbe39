"""``polars-anon``: batch jobs over Parquet. Thin wrapper over the modules.

Bad input prints one message naming the culprit (no traceback) and exits 2;
``check`` exits 1 when the table is not k-anonymous or fails a privacy model given.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import select
import shlex
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

import polars as pl

from polars_anon._progress import progress
from polars_anon._validate import check_columns, check_k
from polars_anon.algorithms import METHODS
from polars_anon.classes import k_summary
from polars_anon.engines import ENGINES
from polars_anon.errors import AnonError, OutputExistsError
from polars_anon.interrupts import NOTHING_WRITTEN, install_handler, raises_on_signal, restore_handlers
from polars_anon.io import (
    CSV_SUFFIXES,
    RAGGED,
    html_path,
    is_csv,
    late_value_hint,
    late_value_words,
    report_path,
    scan_input,
)
from polars_anon.job import Job, PrivacySpec, blanks_as_roots, blanks_cells, encoding_specs, execute_job, run_job
from polars_anon.locations import URI, local_path, scheme_of
from polars_anon.messages import output_exists
from polars_anon.outputs import PARQUET_SUFFIXES, Interrupted, Outputs, recording, staged_write

if TYPE_CHECKING:
    from polars_anon.hierarchy import Hierarchy
    from polars_anon.privacy.base import Model

__all__ = ["main", "parser"]


def _demo(args: argparse.Namespace) -> int:
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs, write_rows

    out_dir = Path(args.out)
    voters, output, report = out_dir / "voters.parquet", out_dir / "anonymized.parquet", out_dir / "report.json"
    start = time.perf_counter()
    with Outputs(overwrite=args.overwrite) as out:
        for path in (voters, output, report, html_path(report)):
            out.check(path)
        staged = staged_write(out, voters, lambda tmp: write_rows(tmp, args.rows, args.seed))
        generated = time.perf_counter() - start
        job = Job(
            input=staged,
            output=output,
            report=report,
            k=args.k,
            qids={q: demo_hierarchy_specs()[q] for q in DEMO_QIDS},
            method=args.method,
            drop=["voter_id", "name"],
            sensitive="party",
            seed=args.seed,
        )
        rep = execute_job(job, out, input_name=str(voters))
        out.commit()
    print(f"generated {args.rows:,} voters in {generated:.1f} s -> {voters}")
    print("\n".join(summary_lines(rep)))  # anonymize's summary on a terminal
    levels = rep["details"].get("levels")
    print(
        (f"levels {levels}; " if levels else "")
        + "voter_id and name were dropped (identifying); the published file was checked independently of the method"
    )
    _explain(rep)
    print(
        f"report: open {html_path(report)} in a browser (plots, risk before and after, every metric); JSON -> {report}"
    )
    print(f"total {time.perf_counter() - start:.1f} s")
    return 0


def _explain(rep: dict) -> None:
    """What the demo's headline figures mean, in sentences wrapped for a terminal."""
    from polars_anon.report.guarantee import WILDCARD
    from polars_anon.report.phrases import cells_phrase

    qids, k = ", ".join(rep["qids"]), rep["k"]
    lines = []
    if rep.get("guarantee") == "probabilistic":  # mdav publish="permute": classes are permuted clusters
        lines.append(
            f"probabilistic k-anonymity: the classes are MDAV clusters of at least {k} voters whose values of {qids} "
            f"were permuted; equal published tuples form groups of {rep['classic_min_class_size']:,}+ rows"
        )
    elif rep.get("guarantee") == WILDCARD:  # local suppression: a missing cell matches any value
        smallest = rep["min_class_size"]
        lines.append(
            f"k={k}: every published record matches at least {k} voters on {qids}, a missing value matching any "
            f"value; the fewest a record matches is {smallest:,}, so someone who knows a voter's {qids} picks the "
            f"right row with probability at most 1/{smallest:,} = {1 / smallest:.2%}"
        )
    else:
        smallest = rep["min_class_size"]
        lines.append(
            f"k={k}: every published combination of {qids} is shared by at least {k} voters; the smallest class "
            f"has {smallest:,}, so someone who knows a voter's {qids} picks the right row with probability "
            "at most "
            f"1/{smallest:,} = {1 / smallest:.2%}"
        )
    if rep.get("loss") is not None:
        per = ", ".join(f"{q} {v:.2f}" for q, v in rep["loss_by_qid"].items())
        lines.append(
            f"average cell loss {rep['loss']:.4f}: 0 = every value published as is, 1 = every value generalized "
            f"to '*' (per attribute: {per})"
        )
    cells = cells_phrase(rep)
    lines.append(
        f"suppressed {rep['suppressed']:,} rows: removed because they could not join a class of {k}"
        if cells is None
        else f"{cells}: a blanked cell is published missing and matches any value"
    )
    print("what the figures mean:")
    for line in lines:
        print(textwrap.fill(line, width=110, initial_indent="  ", subsequent_indent="    "))


def _anonymize(args: argparse.Namespace) -> int:
    job = _job(args)
    assert job is not None  # a positional argument
    rep = run_job(job, overwrite=args.overwrite)
    if args.json or not sys.stdout.isatty():  # a pipe or a file: a script reads the whole report
        print(json.dumps(rep, indent=2, default=str))
        if not args.quiet:  # spark-submit merges standard error into standard output: -q keeps the JSON alone
            print(summary_line(rep), file=sys.stderr)
    else:
        report = job.report or report_path(job.output)
        print(terminal_summary(rep, str(report), str(html_path(report)) if job.report_html else None))
    warning = originals_warning(rep)
    if warning:
        print(warning, file=sys.stderr)
    return 0


def originals_warning(rep: dict) -> str | None:
    """The one line warning of the encodings written beside the table that read the original values (the report's
    ``reads_originals``), naming their files; None when there are none.

    >>> originals_warning({"encodings": {"proportional": {"path": "o.proportional.parquet", "reads_originals": True},
    ...                                  "fillparent": {"path": "o.fillparent.parquet", "reads_originals": False}}})
    'polars-anon: warning: o.proportional.parquet (proportional) read the original values and show what the published \
nodes hide: they are outside the k-anonymity guarantee; do not publish them with the table'
    """
    reading = {name: e["path"] for name, e in (rep.get("encodings") or {}).items() if e.get("reads_originals")}
    if not reading:
        return None
    files = ", ".join(f"{path} ({name})" for name, path in reading.items())
    return (
        f"polars-anon: warning: {files} read the original values and show what the published nodes hide: they are "
        "outside the k-anonymity guarantee; do not publish them with the table"
    )


def terminal_summary(rep: dict, report: str, html: str | None) -> str:
    """What ``anonymize`` prints on a terminal instead of the report JSON: :func:`summary_lines`, and where the report
    was written.

    >>> print(terminal_summary({"method": "mdav", "k": 5, "n_rows": 10, "n_classes": 2, "min_class_size": 5,
    ...                         "output": "o.parquet", "n_input_rows": 12, "suppressed": 2, "loss": 0.25,
    ...                         "risk": {"output": {"threshold": 0.2, "prosecutor": {"highest": 0.2,
    ...                                                                              "records_at_risk": 0.0}}}},
    ...                        "o.report.json", None))
    polars-anon: mdav k=5: published 10 rows in 2 classes, smallest 5 -> o.parquet
    suppressed 2 of 12 input rows
    average cell loss 0.25 (0 = every value published as is, 1 = every value generalized to the root)
    re-identification risk left: at most 20.00% a record (1 in 5), 0.0% of the records above 20%
    report: o.report.json (the whole report on standard output: --json, or a pipe)
    """
    where = report if html is None else f"{report}, {html}"
    return "\n".join([*summary_lines(rep), f"report: {where} (the whole report on standard output: --json, or a pipe)"])


def summary_lines(rep: dict) -> list[str]:
    """The summary of a run a person reads on a terminal (``anonymize``'s and the demo's): :func:`summary_line`, the
    rows suppressed (or the key cells blanked), what the anonymization cost, what risk is left and whether each
    privacy model held (:mod:`polars_anon.report.phrases`), a line each."""
    from polars_anon.report.phrases import loss_phrase, privacy_phrase, risk_phrase, suppression_phrase

    phrases = (
        suppression_phrase(rep),
        loss_phrase(rep.get("loss")),
        risk_phrase(rep.get("risk")),
        privacy_phrase(rep.get("privacy")),
    )
    return [summary_line(rep), *(p for p in phrases if p)]


def _spark_pack(args: argparse.Namespace) -> int:
    from polars_anon.spark_pack import pack

    facts = pack(args.archive, overwrite=args.overwrite)
    print(json.dumps(facts, indent=2))
    print(
        f"polars-anon: packed {len(facts['distributions']) + 1} distributions ({facts['bytes'] / 1e6:.0f} MB) -> "
        f"{facts['archive']}; executors need Python {facts['python']}: spark-submit --archives "
        f"{facts['archive']}#anon_env --conf spark.executorEnv.PYTHONPATH=anon_env",
        file=sys.stderr,
    )
    return 0


def summary_line(rep: dict) -> str:
    """The one line the command line prints (on standard error; the report JSON is on standard output) after a run.

    >>> line = summary_line({"method": "mdav", "k": 5, "n_rows": 10, "n_classes": 2, "min_class_size": 5,
    ...                      "output": "o.parquet", "guarantee": "probabilistic", "own_tuple_records": 3,
    ...                      "own_tuple_unique": 1})
    >>> line.split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ['polars-anon: mdav k=5: published 10 rows in 2 MDAV clusters of at least k = 5 rows (values permuted within
    each), smallest cluster 5 -> o.parquet', 'probabilistic k-anonymity verified', '3 records published with their
    own exact tuple, 1 of them unique in the release']
    """
    from polars_anon.report.disclosure import disclosure_summary
    from polars_anon.report.guarantee import exposure_phrase, guarantee_name, verified_shape
    from polars_anon.report.phrases import undeclared_phrase

    parts = [
        f"polars-anon: {rep['method']} k={rep['k']}: published {rep['n_rows']:,} rows {verified_shape(rep)}"
        + (f" -> {rep['output']}" if rep.get("output") else "")
    ]
    if rep.get("guarantee", "k-anonymity") != "k-anonymity":
        parts.append(f"{guarantee_name(rep)} verified")
    exposed = exposure_phrase(rep)
    if exposed:
        parts.append(exposed)
    disclosure = disclosure_summary(rep.get("attribute_disclosure"))
    if disclosure:
        parts.append(disclosure)
    if rep.get("method_advice"):
        parts.append(rep["method_advice"]["text"])
    undeclared = undeclared_phrase(rep)
    if undeclared:
        parts.append(undeclared)
    return "; ".join(parts)


def _check(args: argparse.Namespace) -> int:
    lf, qids = _scan_with_qids(args, "check")
    check_columns(lf, qids, "qids")
    check_k(args.k)
    summary = k_summary(lf, qids, args.k).collect().row(0, named=True)
    models = _cli_models(args.model, _job(args), lf, _population_reader(args.separator, qids), qids)
    reference = None
    if args.reference is not None:
        from polars_anon.privacy.evaluate import REFERENCE_UNREAD

        reference = scan_input(args.reference, separator=args.separator, text=qids, what="reference")
        if not any(m.uses_distribution for m in models):
            raise AnonError(f"check: --reference {args.reference!r}: {REFERENCE_UNREAD}")
    if models:
        from polars_anon.privacy.evaluate import check
        from polars_anon.report import jsonable

        hierarchies = _job_hierarchies(_job(args)) if any(m.needs_population_table for m in models) else None
        found = check(lf, qids, models, k=args.k, hierarchies=hierarchies, reference=reference)  # refuses no rows
        summary["models"] = jsonable(found["models"])
        if args.reference is None:
            for line in _reference_notes(Path(args.file), summary["models"]):
                print(line, file=sys.stderr)
    else:
        from polars_anon.privacy.evaluate import refuse_empty

        refuse_empty(summary["n_rows"])  # pa.check's refusal, as with models: one line, exit 2
    print(json.dumps(summary, indent=2))
    return 0 if summary["k_anonymous"] and all(m["satisfied"] for m in summary.get("models", [])) else 1


def _reference_notes(path: Path, statuses: list[dict]) -> list[str]:
    """Where a model was measured against the checked file's own distribution and the report written beside the
    file (``<stem>.report.json``) measured it against the input's: one line each, naming both figures, and the
    entry's ``report_beside`` (the report's figures). The check never disagrees with the report silently."""

    beside = report_path(path)
    if not isinstance(beside, Path):  # a URI: the check reads local files only
        return []
    try:
        report = json.loads(beside.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    lines = []
    for entry in statuses:
        if entry.get("reference") != "published":
            continue
        for theirs in report.get("privacy") or []:
            same = all(theirs.get(key) == entry.get(key) for key in ("model", "attribute", "t", "beta", "delta"))
            if not same or theirs.get("reference") != "input":
                continue
            entry["report_beside"] = {key: theirs.get(key) for key in ("reference", "satisfied", "max_measure")}
            lines.append(
                f"polars-anon check: {entry['model']} on {entry['attribute']!r}: measured against this file's own "
                f"distribution (largest finite measure {entry['max_measure']}, "
                f"{'satisfied' if entry['satisfied'] else 'violated'}); "
                f"{beside.name} measured it against the input's (largest finite measure {theirs.get('max_measure')}, "
                f"{'satisfied' if theirs.get('satisfied') else 'violated'}): give --reference <input> to re-check that"
            )
            break
    return lines


def _job_hierarchies(job: Job | None) -> dict[str, Hierarchy] | None:
    """The qid hierarchies of a job file, built on its input (a population is matched to the classes through them)."""
    if job is None:
        return None
    from polars_anon.job import build_hierarchies

    return build_hierarchies(job.scan(), job.qids, job.base)  # the road's reader: every CSV option of the job's


def _cli_models(
    texts: Sequence[str],
    job: Job | None,
    lf: pl.LazyFrame,
    population: Callable[[str], pl.LazyFrame],
    qids: Sequence[str],
) -> list[Model]:
    """Privacy models from ``--model '{model = "l-diversity", attribute = "s", l = 2}'`` (TOML inline tables) and a job
    file, each ``hierarchy`` (hierarchical t-closeness) built as the job file builds it, from the checked table; a
    ``--model``'s population CSV read by `population` (:func:`_population_reader`), a job's with the job's CSV
    options; either's `qids` as the CSV writes them, as the checked release's."""
    from polars_anon.job import build_models

    models = build_models(_model_specs(texts), lf, population=population)
    if job is not None:
        models += build_models(job.privacy, lf, job.base, population=lambda path: job.scan_population(path, qids))
    return models


def _model_specs(texts: Sequence[str]) -> list[PrivacySpec]:
    """The ``--model`` TOML inline tables, parsed (nothing read yet)."""
    import tomllib

    from polars_anon.job import parse_privacy

    tables = []
    for text in texts:
        try:
            table = tomllib.loads(f"m = {text}")["m"]
        except tomllib.TOMLDecodeError as exc:
            table = exc
        if not isinstance(table, dict):
            example = '{model = "l-diversity", attribute = "s", l = 2}'
            raise AnonError(f"--model {text!r} is not a TOML inline table ({table}); e.g. '{example}'")
        tables.append(table)
    return parse_privacy(tables, where=[f"--model {t!r}" for t in texts])


def _population_reader(separator: str, qids: Sequence[str]) -> Callable[[str], pl.LazyFrame]:
    """How a command reads a population table (``--population``, a ``--model``'s ``population``): with its
    ``--separator`` and a CSV's `qids` read as written, as it reads its table."""
    return lambda path: scan_input(path, separator=separator, text=qids, what="population table")


def _given_qids(args: argparse.Namespace, command: str) -> list[str]:
    """The names ``--qids`` (split at its commas) and ``--qid`` (each whole) give, before the table is read; none is
    refused naming both flags."""
    given = [q for q in (args.qids or "").split(",") if q] + list(args.qid)
    if not given:
        raise AnonError(
            f"{command}: no quasi-identifier named; give --qids A,B,... (comma-separated) or --qid NAME (repeatable)"
        )
    return given


def _scan_with_qids(args: argparse.Namespace, command: str) -> tuple[pl.LazyFrame, list[str]]:
    """The table ``check`` and ``risk`` measure (``file``) and the qids their command line names in it
    (:func:`_named_qids`), a CSV's qids read as written, as the adversary reads them."""
    given = _given_qids(args, command)
    lf = scan_input(args.file, separator=args.separator, text=given)
    qids = _named_qids(args.qids, args.qid, lf.collect_schema().names())
    if set(qids) != set(given):  # a column whose name holds a comma: read again, that column as written
        lf = scan_input(args.file, separator=args.separator, text=qids)
    return lf, qids


def _named_qids(text: str | None, whole: Sequence[str], columns: Sequence[str]) -> list[str]:
    """The quasi-identifiers a command line names: ``--qids`` `text` split at its commas into names of `columns` (a
    comma inside a column's name kept, where that is the one reading), then each ``--qid`` in `whole` as given.
    `text` reading two ways is refused naming both and the ``--qid`` flags that say each; reading none, it is split
    at every comma (the missing names are then refused by ``check_columns``).

    >>> _named_qids("a,b", [], ["a,b", "x"]), _named_qids("a,b", ["c,d"], ["a", "b"]), _named_qids("a,z", [], ["a"])
    (['a,b'], ['a', 'b', 'c,d'], ['a', 'z'])
    >>> _named_qids("a,b", [], ["a,b", "a", "b"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.AnonError: --qids 'a,b' names columns two ways: ['a', 'b'] or ['a,b']; name each column with \
its own --qid NAME (repeatable): --qid a --qid b or --qid a,b
    """
    if text is None:
        return list(whole)
    readings = _comma_readings(text.split(","), frozenset(columns))
    if len(readings) > 1:
        said = " or ".join(" ".join(f"--qid {shlex.quote(c)}" for c in reading) for reading in readings)
        raise AnonError(
            f"--qids {text!r} names columns two ways: {readings[0]} or {readings[1]}; name each column with its own "
            f"--qid NAME (repeatable): {said}"
        )
    return [*(readings[0] if readings else [q for q in text.split(",") if q]), *whole]


def _comma_readings(pieces: Sequence[str], columns: frozenset[str]) -> list[list[str]]:
    """The first two distinct ways `pieces` (a text split at its commas) join back, consecutive pieces at a time, into
    names of `columns`; an empty piece names nothing (``a,,b``, a trailing comma).

    >>> _comma_readings(["a", "b", "c"], frozenset({"a,b", "c", "b,c"}))
    [['a,b', 'c']]
    """

    n = len(pieces)

    def names(i: int, j: int) -> bool:  # pieces i..j-1 joined name a column (or are one empty piece)
        name = ",".join(pieces[i:j])
        return name in columns or (name == "" and j == i + 1)

    ends = [False] * n + [True]  # ends[i]: pieces i.. join into names; a dead end is never entered (no backtracking)
    for i in range(n - 1, -1, -1):
        ends[i] = any(ends[j] and names(i, j) for j in range(i + 1, n + 1))

    def tails(i: int) -> Iterator[list[str]]:
        if i == n:
            yield []
        for j in range(i + 1, n + 1):
            if ends[j] and names(i, j):
                name = ",".join(pieces[i:j])
                yield from ([name, *rest] if name else rest for rest in tails(j))

    found: list[list[str]] = []
    for reading in tails(0):
        if reading not in found:
            found.append(reading)
        if len(found) == 2:
            break
    return found


def _risk(args: argparse.Namespace) -> int:
    def make() -> tuple[str, dict[str, Any]]:
        doc = _risk_doc(args)
        return json.dumps(doc, indent=2), doc

    return _json_then_print(args, _inputs(args), make)


def _local(value: str, flag: str) -> Path:
    """A local file the command writes: a path, or a ``file://`` URI (was: written to a folder named ``file:``);
    another URI is refused naming the flag (these files are written by Python, not by an engine)."""
    scheme = scheme_of(value)
    if scheme is None:
        return Path(value)
    if scheme != "file":
        raise AnonError(f"{flag} takes a local path or a file:// URI, got {value!r}")
    return local_path(value)


_READS = ("file", "published", "original", "anonymized", "population", "reference", "report", "job")
"""The command-line arguments that name a file a command reads."""


def _inputs(args: argparse.Namespace) -> list[Any]:
    """Every file the command reads: named on its command line, a ``--hierarchy`` file, a ``--model``'s population,
    and every file its job reads (:attr:`Job.reads`): never one of its targets (:meth:`Outputs.protect`, even with
    ``--overwrite``). The one list of what a command reads."""
    from polars_anon.privacy.counts import population_files

    paths: list[Any] = [getattr(args, name, None) for name in _READS]
    paths += [f for text in getattr(args, "hierarchy", None) or [] for f in _hierarchy_files(text)]
    paths += [
        f for p in _model_specs(getattr(args, "model", None) or []) for f in population_files(p.model.population_frame)
    ]
    job = _job(args)
    if job is not None:
        paths += job.reads
    return [p for p in paths if p]


def _hierarchy_files(text: str) -> list[Path]:
    """The files a ``--hierarchy`` `text` may read, before the table's columns are known: its spec's split at the first
    ``=`` (refused here when it is not a spec), and at every later ``=`` that splits it into a spec (a column whose name
    holds a ``=``: :func:`_hierarchy_name`)."""
    from polars_anon.hierarchy_spec import spec_files

    found = list(spec_files(*_hierarchy_spec(text)))
    for i in [i for i, c in enumerate(text) if c == "="][1:]:
        try:
            found += spec_files(*_hierarchy_spec(text, [text[:i].strip()]))
        except AnonError:  # not a spec at this split: not the reading of a column
            continue
    return found


_FLAGS = ("engine", "master", "driver_tuples")
"""The command-line flags that replace a job file's keys (:meth:`Job.load`), on the commands that have them."""


def _job(args: argparse.Namespace) -> Job | None:
    """The command's job file (``--job``, or the job of ``anonymize`` and ``explore``), read and parsed once: every
    step of the command (its inputs, hierarchies, models) uses this one (the engine flags applied where the command
    takes them). None without a job file."""
    path = getattr(args, "job", None)
    if not path:
        return None
    loaded = vars(args).get("loaded_job")
    if loaded is None:
        loaded = Job.load(path, **{flag: getattr(args, flag) for flag in _FLAGS if hasattr(args, flag)})
        args.loaded_job = loaded
    return loaded


def _json_then_print(args: argparse.Namespace, reads: list[str], make: Callable[[], tuple[str, Any]]) -> int:
    """``--json`` staged before any data is read (refused when it is an input, a folder, or exists without
    ``--overwrite``), then ``make()`` (the text to print, the JSON document), the JSON written, and only then the text
    printed: a refused command prints nothing on standard output."""
    with Outputs(overwrite=args.overwrite, reads=reads) as out:
        json_tmp = out.stage(_local(args.json, "--json"), what="--json") if args.json else None
        text, doc = make()
        if json_tmp is not None:
            with out.writing(args.json):
                json_tmp.write_text(json.dumps(doc, indent=2) + "\n")
            out.commit()
    print(text)
    return 0


def _risk_doc(args: argparse.Namespace) -> dict[str, Any]:
    from polars_anon.privacy.risk import check_alpha_reading, risk
    from polars_anon.report import jsonable
    from polars_anon.sdc.spec import check_model_weight

    _given_qids(args, "risk")
    check_alpha_reading(args.missing, args.alpha, command_line=True)  # in the command's flags, before any data is read
    check_model_weight(args.model_risk, args.weights, command_line=True)
    lf, qids = _scan_with_qids(args, "risk")
    check_columns(lf, qids, "qids")  # before --population is read, as check's before --reference
    population = _population_reader(args.separator, qids)
    start = time.perf_counter()
    doc = jsonable(
        risk(
            lf,
            qids,
            threshold=args.threshold,
            sampling_fraction=args.sampling_fraction,
            population_size=args.population_size,
            population=None if args.population is None else population(args.population),
            models=_cli_models(args.model, _job(args), lf, population, qids),
            missing=args.missing,
            alpha=args.alpha,
        )
    )
    if args.individual or args.weights or args.household or args.suda2 or args.model_risk:
        from polars_anon.sdc.measures import Measures, check_measure_columns, measure

        spec = Measures(
            keys=tuple(qids),
            weight=args.weights,
            household=args.household,
            method=args.risk_method,
            missing=args.missing,
            alpha=1.0 if args.alpha is None else args.alpha,
            suda2=args.suda2,
            model=args.model_risk,
        )
        check_measure_columns(lf.collect_schema().names(), spec, "risk")
        doc["sdc"] = jsonable({**spec.describe(), "figures": measure(lf, spec)})
    doc["seconds"] = round(time.perf_counter() - start, 3)
    return doc


def _report(args: argparse.Namespace) -> int:
    from polars_anon.report.html import write_html

    source = Path(args.report)
    if source.is_dir():  # before the target's checks: a page inside it would be refused as "an input of this run"
        raise AnonError(f"report {str(source)!r} is a folder; give the report's JSON file")
    target = _local(args.output, "--output") if args.output else html_path(source)
    Outputs(overwrite=args.overwrite, reads=_inputs(args)).check(target, what="report page")  # before reading
    _refuse_data_name(target)
    try:
        report = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AnonError(f"cannot read report {str(source)!r}: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnonError(f"report {str(source)!r} is not a JSON report: {exc}") from None
    if not isinstance(report, dict) or "k" not in report or "method" not in report:
        raise AnonError(f"report {str(source)!r} is not a polars-anon report (no 'k' and 'method' keys)")
    from polars_anon.report import schema

    wrong = _schema_error(report, schema(), "")
    if wrong:
        raise AnonError(f"report {str(source)!r} is not a polars-anon report: {wrong}")
    with Outputs(overwrite=args.overwrite) as out:
        out.check(target)
        try:
            write_html(out, report, target)
        except (
            TypeError,
            AttributeError,
            KeyError,
            ValueError,
        ) as exc:  # a value of the right type the page cannot show
            raise AnonError(f"report {str(source)!r}: cannot render it ({type(exc).__name__}: {exc})") from None
        out.commit()
    print(f"report -> {target}")
    return 0


_DATA_SUFFIXES = (*PARQUET_SUFFIXES, *CSV_SUFFIXES, ".json")
"""The names of tables and reports: never the name of an HTML page ``report`` writes."""


def _refuse_data_name(target: Path | URI) -> None:
    """Refuse a page target named as a table or a report (before anything is read): ``--output out.parquet
    --overwrite`` replaced the very table the report describes (a job's output is always a .parquet or .pq path)
    with an HTML page (hunt48)."""
    if target.suffix.lower() in _DATA_SUFFIXES:
        raise AnonError(
            f"--output {str(target)!r} names a table or a report ({target.suffix}), not a page: report writes the "
            "HTML page there (with --overwrite it would replace that file); give a path ending in .html"
        )


_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
    "number": (int, float),
    "integer": int,
}


def _schema_error(value: object, rule: dict, where: str) -> str | None:
    """The first place where `value` breaks the report schema's types (``type``, ``enum``, ``properties``, ``items``).

    >>> _schema_error({"k": "2"}, {"properties": {"k": {"type": "integer"}}}, "")
    "key 'k' must be integer, got '2'"
    """
    kinds = rule.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        ok = any(
            isinstance(value, _JSON_TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
            for t in kinds
            if t in _JSON_TYPES
        )
        if not ok:
            return f"key {where.lstrip('.')!r} must be {' or '.join(kinds)}, got {value!r}"[:300]
    if "enum" in rule and value not in rule["enum"]:
        return f"key {where.lstrip('.')!r} must be one of {rule['enum']}, got {value!r}"[:300]
    if isinstance(value, dict):
        for key, sub in rule.get("properties", {}).items():
            if key in value and isinstance(sub, dict):
                found = _schema_error(value[key], sub, f"{where}.{key}")
                if found:
                    return found
    if isinstance(value, list) and isinstance(rule.get("items"), dict):
        for i, item in enumerate(value):
            found = _schema_error(item, rule["items"], f"{where}[{i}]")
            if found:
                return found
    return None


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise AnonError(f"{what} {text!r}: expected comma-separated integers, e.g. 2,5,10") from None


def _risk_threshold_line(threshold: int, given: bool) -> str:
    """The line above explore's printed table naming the threshold its ``records_at_risk`` is judged at (the table
    leaves out the ``risk_threshold`` column the written table has).

    >>> _risk_threshold_line(100, False)
    'records_at_risk: the share of published rows in classes smaller than 100 rows (the largest k of the grid; \
--risk-threshold N sets it)'
    """
    why = "--risk-threshold" if given else "the largest k of the grid; --risk-threshold N sets it"
    return f"records_at_risk: the share of published rows in classes smaller than {threshold} rows ({why})"


def _explore(args: argparse.Namespace) -> int:
    from polars_anon.explore import explore_job, explore_targets, write_explore
    from polars_anon.report.guarantee import WILDCARD, terms

    job = _job(args)
    assert job is not None  # a positional argument
    output = _local(args.output, "--output") if args.output else job.output.with_name(f"{job.output.stem}.explore.csv")
    outputs = Outputs(overwrite=args.overwrite, reads=_inputs(args))
    for target in explore_targets(output, html=not args.no_html):  # refused before any data is read
        outputs.check(target)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    table, facts = explore_job(job, k=_ints(args.k, "--k"), methods=methods, risk_threshold=args.risk_threshold)
    written = write_explore(
        table, output, meta={"job": str(args.job), **facts}, html=not args.no_html, overwrite=args.overwrite
    )
    shown = table.select(
        "method",
        "k",
        "feasible",
        "guarantee",
        "loss",
        "suppressed",
        "min_class_size",
        "highest_risk",
        "records_at_risk",
        "front_highest_risk",
        "seconds",
    )
    print(_risk_threshold_line(facts["risk_threshold"], args.risk_threshold is not None))
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_hide_dataframe_shape=True, float_precision=4, tbl_width_chars=160):
        print(shown)
    print(
        f"{table.height} configurations on {facts['n_input_rows']:,} rows ({facts['n_input_classes']:,} classes, "
        f"aggregated once{' on ' + facts['engine'] if facts.get('engine') else ''} "
        f"in {facts['aggregate_seconds']:.1f} s) in {facts['seconds']:.1f} s -> {', '.join(written.values())}"
    )
    if job.privacy:
        print(f"every configuration enforces {'; '.join(p.model.describe() for p in job.privacy)}, as anonymize would")
    if (table["guarantee"] == "probabilistic").any():
        print(
            "rows with guarantee 'probabilistic' (mdav publish = \"permute\"): min_class_size is the smallest cluster; "
            "equal published tuples may form smaller groups and records may keep their own exact tuple"
        )
    if (table["guarantee"] == WILDCARD).any():
        t = terms({"guarantee": WILDCARD})
        print(
            f"rows with guarantee {WILDCARD!r} (local_suppression): n_classes counts {t.groups}, min_class_size is "
            f"the {t.smallest} and the risk figures read {t.risk}, as its report does"
        )
    return 0


def _hierarchy_name(text: str, columns: Sequence[str]) -> tuple[str, str, str]:
    """``--hierarchy`` `text` split as ``str.partition`` splits it, at the ``=`` after which the name is one of
    `columns` (a ``=`` inside a column's name kept, as :func:`_named_qids` keeps a comma), at the first ``=`` where no
    split names a column (the missing name is then refused by the command's column check). Two splits naming columns
    are refused naming both.

    >>> _hierarchy_name("a=b=suppress", ["a=b", "x"]), _hierarchy_name("a=b=c", ["z"])
    (('a=b', '=', 'suppress'), ('a', '=', 'b=c'))
    >>> _hierarchy_name("a=b=suppress", ["a=b", "a"])
    Traceback (most recent call last):
    ...
    polars_anon.errors.AnonError: --hierarchy 'a=b=suppress' names a column two ways: 'a' (spec 'b=suppress') or \
'a=b' (spec 'suppress'); give that column's hierarchy in a job file (--job JOB.toml, its [qids] table quotes a name)
    """
    cuts = [i for i, c in enumerate(text) if c == "=" and text[:i].strip() in columns and text[i + 1 :].strip()]
    if len(cuts) > 1:
        a, b = ((text[:i].strip(), text[i + 1 :].strip()) for i in cuts[:2])
        raise AnonError(
            f"--hierarchy {text!r} names a column two ways: {a[0]!r} (spec {a[1]!r}) or {b[0]!r} (spec {b[1]!r}); "
            "give that column's hierarchy in a job file (--job JOB.toml, its [qids] table quotes a name)"
        )
    if not cuts:
        return text.partition("=")
    return text[: cuts[0]], "=", text[cuts[0] + 1 :]


def _hierarchy_spec(text: str, columns: Sequence[str] = ()) -> tuple[str, object]:
    """``age=age.csv``, ``sex=suppress``, ``zip=mask:5``, ``year=intervals:5,10,20``, ``birth=dates:month,year``,
    ``age=ordered:5,2``, or a job file's TOML inline table: ``age={ intervals = [5, 10], bottom = 18 }``; the name one
    of the table's `columns` where a ``=`` in it would split it elsewhere (:func:`_hierarchy_name`)."""
    import tomllib

    name, sep, spec = _hierarchy_name(text, columns)
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        raise AnonError(
            f"--hierarchy {text!r}: expected NAME=SPEC (a CSV path, suppress, mask:N, intervals:W1,W2,..., "
            "dates:LEVEL,..., ordered:S1,S2,... or a TOML table such as { mask = 5 })"
        )
    if spec.startswith("{"):
        try:
            return name, tomllib.loads(f"spec = {spec}")["spec"]
        except tomllib.TOMLDecodeError as exc:
            raise AnonError(
                f"--hierarchy {text!r}: not a TOML inline table ({exc}); e.g. {{ intervals = [5, 10], bottom = 18 }}"
            ) from None
    kind, colon, arg = spec.partition(":")
    if colon and kind == "dates":
        return name, {"dates": [v.strip() for v in arg.split(",")]}
    try:
        if colon and kind == "mask":
            return name, {"mask": int(arg)}
        if colon and kind in ("intervals", "ordered"):
            return name, {kind: [int(w) for w in arg.split(",")]}
    except ValueError:
        raise AnonError(
            f"--hierarchy {text!r}: {kind} needs integers, e.g. mask:5, intervals:5,10,20 or ordered:5,2"
        ) from None
    return name, spec


def _encode(args: argparse.Namespace) -> int:
    from polars_anon.encode import READS_ORIGINALS, canonical, check_published_columns
    from polars_anon.encoded_io import is_layout_folder, write_encoded
    from polars_anon.job import as_protected, build_hierarchies, encoding_path, protected_reads

    encoding = canonical(args.encoding)
    output = _local(args.output, "--output") if args.output else encoding_path(args.published, encoding, args.layout)
    outputs = Outputs(overwrite=args.overwrite, reads=_inputs(args))  # refused before any data is read
    outputs.check(output, file=not is_layout_folder(output), what="encoding")  # only a folder encode wrote is replaced
    job = _job(args)
    published = _release(args, job, args.published)
    blanks = blanks_cells(job)
    if job is not None:  # a blanking method's qid without a hierarchy: suppression only, as metrics read it
        specs, base = encoding_specs(job), job.base
    else:
        names = published.collect_schema().names()
        specs, base = dict(_hierarchy_spec(h, names) for h in args.hierarchy), Path(".")
    if not specs:
        raise AnonError("encode: name the hierarchies with --hierarchy NAME=SPEC (repeatable) or --job JOB.toml")
    check_published_columns(published, list(specs), args.class_col)  # the table's columns first, as every command
    if encoding in READS_ORIGINALS and args.original is None and args.class_col is None:  # the CLI's words
        raise AnonError(
            f"encoding {encoding!r} needs the original values: pass --original FILE (row-aligned with the published "
            "rows, or sharing --class-col), or a partition file with --class-col"
        )
    original = _original(args, job, args.original)
    if job is not None and original is not None:  # the originals the job's encodings read: its protected rows
        original = as_protected(
            job, original, "encode --job", protected_reads(job, specs, rows=encoding in READS_ORIGINALS)
        )
    values = original if original is not None else published  # what built-in hierarchies read their leaves from
    if job is not None and original is None:  # the job's input, as anonymize built them (published: generalized)
        values = as_protected(job, job.scan(), "encode --job", protected_reads(job, specs, rows=False))
    if job is None and original is None and args.class_col is None:
        _refuse_generalized_leaves(published, args.published, specs, args.hierarchy)
    hierarchies = build_hierarchies(values, specs, base, road="job" if job is not None else "cli")
    if blanks:  # a blanked cell is its qid's root (elsewhere a null stays refused by the encoding)
        published = blanks_as_roots(published, hierarchies)
    facts = write_encoded(
        published,
        hierarchies,
        output,
        encoding,
        original=original,
        class_col=args.class_col,
        seed=args.seed,
        overwrite=args.overwrite,
        layout=args.layout,
    )
    print(json.dumps({"encoding": encoding, "output": str(output), **facts}, indent=2))
    return 0


def _refuse_generalized_leaves(
    published: pl.LazyFrame, path: str, specs: Mapping[str, object], given: Sequence[str]
) -> None:
    """Refuse a hierarchy built from a published column's values (every kind but a CSV file) where that column holds
    generalized labels, not original values: they would be its leaves (hunt33: ``zip=mask:5`` made ``021**`` a leaf;
    hunt45: ``age=suppress`` on ``50-54`` bands gave 15 ``age_*`` columns). Generalized: the release's report beside
    it (``<stem>.report.json``) says some of the column's cells were not published as they were
    (``generalization.<qid>.unchanged`` below 1), or a cell holds a built-in hierarchy's inner label (a ``*``, an
    ordered group ``[a..b]``). A column of leaves alone (nothing generalized) builds as it did."""
    from polars_anon.hierarchy_spec import parse_spec

    names = published.collect_schema().names()
    built = [q for q, spec in specs.items() if q in names and spec is not None and parse_spec(q, spec).needs_values]
    changed = _generalized_in_report(path)
    labels = pl.col("*").cast(pl.String)
    inner = labels.str.contains("*", literal=True) | labels.str.contains(r"^\[.*\.\..*\]$")
    found = [q for q in built if q in changed]
    if not found and built:
        hits = published.select(built).select(inner.any()).collect().row(0, named=True)  # materializes: one row
        found = [q for q in built if hits[q]]
    if found:
        asked = next((h for h in given if _hierarchy_name(h, names)[0].strip() == found[0]), found[0])  # as typed
        raise AnonError(
            f"encode: --hierarchy {asked} is built from the column's values, and the published column "
            f"{found[0]!r} holds generalized labels, not original values (they would be its leaves); pass --original "
            "FILE (the input), --job JOB.toml, or a hierarchy CSV file"
        )


def _generalized_in_report(path: str) -> set[str]:
    """The qids the report beside the release `path` says were generalized (some cell not published unchanged);
    none when there is no readable report there."""
    beside = report_path(path)
    try:
        report = json.loads(beside.read_text(encoding="utf-8")) if isinstance(beside, Path) else {}
    except (OSError, ValueError):
        return set()
    shares = report.get("generalization") if isinstance(report, dict) else None
    if not isinstance(shares, dict):
        return set()
    return {q for q, v in shares.items() if isinstance(v, dict) and (v.get("unchanged") or 0) < 1}


def _release(args: argparse.Namespace, job: Job | None, release: str) -> pl.LazyFrame:
    """A release as ``metrics`` and ``encode`` read it: with a job file, a CSV release with the job's CSV options,
    its qids as written (labels); without one, as :func:`scan_input` reads it."""
    if job is None:
        return scan_input(release, separator=args.separator)
    return job.scan_population(release, list(job.qids), what="release")


def _original(args: argparse.Namespace, job: Job | None, original: str | None) -> pl.LazyFrame | None:
    """A release's original as ``metrics`` and ``encode`` read it (None when not given): with a job file, as the
    job reads its input (CSV options, ``schema``: a zip column it names String keeps ``02134``); without one, as
    :func:`scan_input` reads it."""
    if original is None:
        return None
    return scan_input(original, separator=args.separator) if job is None else job.scan(original, what="original")


def _metrics(args: argparse.Namespace) -> int:
    from polars_anon.report import jsonable

    def make() -> tuple[str, Any]:
        lines, doc = _metrics_doc(args)
        return "\n".join(lines), jsonable(doc)

    return _json_then_print(args, _inputs(args), make)


def _metrics_doc(args: argparse.Namespace) -> tuple[list[str], dict[str, Any]]:
    """The lines of the metrics table and the JSON document of ``polars-anon metrics``."""
    from polars_anon.job import build_hierarchies
    from polars_anon.metrics import METRICS, evaluate, label_tables, metric_names, prepare

    job = _job(args)
    anonymized, original = _release(args, job, args.anonymized), _original(args, job, args.original)
    assert original is not None  # metrics' original is a required argument
    specs, columns = (dict(job.qids) if job else {}), original.collect_schema().names()
    specs.update(_hierarchy_spec(h, columns) for h in args.hierarchy)
    given = args.qids is not None or args.qid
    qids = _named_qids(args.qids, args.qid, columns) if given else list(specs)
    if not qids:
        raise AnonError(
            "metrics: name the quasi-identifiers with --qids and their hierarchies with --hierarchy NAME=SPEC or --job"
        )
    blanks = blanks_cells(job)
    specs.update(_unbuilt_specs(args, job, blanks, [q for q in qids if specs.get(q) is None]))  # a job may leave one
    road = "job" if job is not None else "cli"
    hierarchies = build_hierarchies(
        original, {q: specs[q] for q in qids if q in specs}, job.base if job else Path("."), road=road
    )
    if blanks:  # elsewhere a null stays refused by prepare
        anonymized = blanks_as_roots(anonymized, hierarchies)
    job_sensitive = (
        (job.sensitive[0] if isinstance(job.sensitive, list) and job.sensitive else job.sensitive) if job else None
    )
    sensitive = args.sensitive if args.sensitive is not None else job_sensitive  # metrics read one (the first)
    k = args.k if args.k is not None else (job.k if job else None)
    names = metric_names([n for n in args.names.split(",") if n] if args.names else None, sensitive is not None)
    unbuilt = [q for q in qids if q not in hierarchies]  # published without one: ranges, sets, means
    if job is not None:
        names = _release_names(names, job, args, unbuilt)
    if unbuilt:  # only the classes metrics are left: they read which published cells are equal
        original, anonymized, flat = label_tables(original, anonymized, unbuilt)
        hierarchies = {**hierarchies, **flat}
    needed = sensitive if any(METRICS[n].needs_sensitive for n in names) else None
    # sensitive=: a job's `sensitive = []` reaches prepare as an empty list (a list the type does not admit), as before
    data = prepare(original, anonymized, qids, hierarchies, key=args.key, sensitive=needed, k=k)  # pyright: ignore[reportArgumentType]
    table = evaluate(data, names).row(0, named=True)
    per = evaluate(data, names, by_attribute=True) if args.by_attribute else None
    header = ["metric", "table", *(qids if per is not None else [])]
    rows = [
        [name, _fmt(value), *([_fmt(v) for v in per[name]] if per is not None else [])] for name, value in table.items()
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in [header, *rows]
    ]
    doc = {
        "original": str(args.original),
        "anonymized": str(args.anonymized),
        "qids": qids,
        "sensitive": sensitive,
        "k": k,
        "key": args.key,
        "metrics": table,
    }
    if per is not None:
        doc["by_attribute"] = {q: {n: per[n][i] for n in table} for i, q in enumerate(qids)}
    return lines, doc


def _unbuilt_specs(args: argparse.Namespace, job: Job | None, blanks: bool, missing: list[str]) -> dict[str, str]:
    """The hierarchy specs of the `missing` qids (none given by the job or ``--hierarchy``): suppression only where
    the job's method blanks cells (its release holds each value or a blank, the root); none for another job's (its
    ranges, sets or means are measured by the classes metrics alone: :func:`_release_names`); without a job, refused
    naming what to give."""
    if not missing or blanks:
        return {q: "suppress" for q in missing}
    if job is None:
        raise AnonError(f"metrics: qids {missing} have no hierarchy; give --hierarchy NAME=SPEC or --job JOB.toml")
    return {}


def _release_names(names: list[str], job: Job, args: argparse.Namespace, unbuilt: list[str]) -> list[str]:
    """The metrics of `names` that describe the job's release: the ``classes`` family only where it is k-anonymous in
    classes of equal published tuples (:attr:`~polars_anon.algorithms.Method.tuple_classes`: not local suppression's
    wildcards nor MDAV's permuted clusters), and that family alone when `unbuilt` qids were published without a
    hierarchy (ranges, sets, means), as the run's report measures them. What does not apply is left out of the
    default and refused when named (``--names``) or when nothing is left, saying which apply and why."""
    from polars_anon.metrics import METRICS
    from polars_anon.options import parse_options

    method = METHODS[job.method]
    if unbuilt and method.needs_hierarchies:  # no release of this job publishes them: anonymize refuses it
        raise AnonError(
            f"metrics: qids {unbuilt} have no hierarchy in job {args.job}, and method {job.method!r} needs one for "
            "every qid (anonymize refuses the job); give one in the job or --hierarchy NAME=SPEC"
        )
    classes = [n for n in names if METRICS[n].family == "classes"]
    if method.tuple_classes(parse_options(method.options, job.options, f"method {job.method!r}")):
        wrong = [n for n in names if n not in classes] if unbuilt else []
        why = (
            f"{wrong} read each cell's distance from its original through a hierarchy, and qids {unbuilt} have none "
            f"in job {args.job} (method {job.method!r} publishes them as ranges, sets or means, not hierarchy nodes); "
            "the classes metrics apply (as the run's report gives them); give --hierarchy NAME=SPEC for a release "
            "whose cells are its nodes, or leave those qids out with --qids"
        )
    else:
        wrong = names if unbuilt else classes
        why = f"{classes} measure classes of equal published tuples, but method {job.method!r} {_GROUPS[method.blanks]}"
        why += (
            f", so they do not describe its release, and qids {unbuilt} have no hierarchy in job {args.job}: no metric "
            "applies; give --hierarchy NAME=SPEC"
            if unbuilt
            else ", so they do not describe its release; the cost, cells and distribution metrics apply"
            + (" (a blank read as its qid's root)" if method.blanks else "")
        )
    if wrong and (args.names or len(wrong) == len(names)):
        raise AnonError(f"metrics: {why}")
    return [n for n in names if n not in wrong]


_GROUPS = {
    True: "publishes blanks that match any value (k-anonymity with missing values as wildcards)",
    False: "is k-anonymous in groups its release does not show (MDAV's clusters, their values permuted within each)",
}
"""Why a method's release is not k-anonymous in classes of equal published tuples, by whether it blanks cells."""


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other refusal (``--help`` still shows the usage)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("polars-anon").strip()
        self.exit(2, f"polars-anon: error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


class Commands(Protocol):
    """What a command's builder uses of ``ArgumentParser.add_subparsers()`` (argparse names its type privately)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


def _common_parser() -> argparse.ArgumentParser:
    """The arguments every command takes (``--quiet``), lent through ``parents=[common]``."""
    common = _Parser(add_help=False)  # only lends its arguments (parents=[common]); a _Parser as the subparsers are
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars (also: POLARS_ANON_PROGRESS=0), and no summary line beside a report printed as JSON",
    )
    return common


def _engines_parser() -> argparse.ArgumentParser:
    """The engine arguments ``anonymize`` and ``explore`` take, lent through ``parents=[common, engines]``."""
    engines = _Parser(add_help=False)
    engines.add_argument(
        "--engine", choices=ENGINES, help="where the rows are processed (default: the job's engine, else polars)"
    )
    engines.add_argument("--master", help="Spark master, e.g. local[2] (replaces the job's [spark] master)")
    engines.add_argument(
        "--driver-tuples",
        type=int,
        metavar="N",
        help="engines duckdb and spark: the most class aggregates (distinct qid tuples) brought to the driver; "
        "beyond it mondrian runs as engine queries, other methods (and explore) are refused (replaces the job's "
        "driver_tuples; "
        "default 5,000,000)",
    )
    return engines


def _demo_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``demo``: a synthetic register, anonymized."""
    d = sub.add_parser("demo", parents=[common], help="generate a synthetic voter register and anonymize it")
    d.add_argument("--rows", type=int, default=1_000_000, help="voters to generate (default 1,000,000)")
    d.add_argument("--k", type=int, default=10, help="k (default 10)")
    d.add_argument("--out", default="anon-demo", help="output folder (default ./anon-demo)")
    d.add_argument("--method", default="fulldomain", choices=sorted(METHODS), help="algorithm (default fulldomain)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    d.set_defaults(run=_demo)


def _anonymize_parser(sub: Commands, common: argparse.ArgumentParser, engines: argparse.ArgumentParser) -> None:
    """``anonymize``: run a job file."""
    a = sub.add_parser("anonymize", parents=[common, engines], help="run a job file (TOML)")
    a.add_argument("job", help="path to the job file")
    a.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    a.add_argument(
        "--json",
        action="store_true",
        help="print the whole report JSON on standard output on a terminal too (a pipe or a file always gets it)",
    )
    a.set_defaults(run=_anonymize)


def _spark_pack_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``spark-pack``: the archive Spark executors unpack."""
    sp = sub.add_parser(
        "spark-pack",
        parents=[common],
        help="write polars_anon and its dependencies as one archive for Spark executors (spark-submit --archives)",
    )
    sp.add_argument("archive", help="the archive to write, ending in .tar.gz")
    sp.add_argument("--overwrite", action="store_true", help="replace an existing archive")
    sp.set_defaults(run=_spark_pack)


def _explore_parser(sub: Commands, common: argparse.ArgumentParser, engines: argparse.ArgumentParser) -> None:
    """``explore``: a job over a grid of k and methods, as a table and a page."""
    x = sub.add_parser(
        "explore",
        parents=[common, engines],
        help="run a job over a grid of k and methods: loss against risk, Pareto front",
    )
    x.add_argument("job", help="path to the job file (its k and method are replaced by the grid)")
    x.add_argument("--k", default="2,5,10,20,50,100", help="comma-separated k values (default 2,5,10,20,50,100)")
    x.add_argument(
        "--methods",
        default="fulldomain,greedy,mondrian",
        help="comma-separated methods (default fulldomain,greedy,mondrian)",
    )
    x.add_argument(
        "--risk-threshold",
        type=int,
        help="records at risk: those in classes smaller than this (default: the largest k)",
    )
    x.add_argument(
        "--output",
        help="the table, .csv or .parquet (default <job output stem>.explore.csv); the page goes beside it (.html)",
    )
    x.add_argument("--no-html", action="store_true", help="write the table only")
    x.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    x.set_defaults(run=_explore)


def _report_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``report``: the page of an existing report JSON."""
    r = sub.add_parser("report", parents=[common], help="render the HTML page of an existing report JSON")
    r.add_argument("report", help="the report JSON (<output stem>.report.json)")
    r.add_argument("--output", help="the HTML file (default: beside the JSON, <stem>.report.html)")
    r.add_argument("--overwrite", action="store_true", help="replace an existing HTML file")
    r.set_defaults(run=_report)


def _check_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``check``: the smallest class size and the privacy models of a table."""
    c = sub.add_parser("check", parents=[common], help="report the smallest class size; exit 1 when below k")
    c.add_argument("file", help="Parquet or CSV file")
    _qids_arguments(c, None)
    c.add_argument("--k", type=int, required=True)
    c.add_argument("--separator", default=",", help="CSV separator (default ',')")
    c.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="TOML",
        help="a privacy model to check as a TOML inline table, e.g. "
        '\'{model = "l-diversity", attribute = "salary", l = 2}\' (repeatable); exit 1 when one fails',
    )
    c.add_argument("--job", help="also check the [[privacy]] models of this job file")
    c.add_argument(
        "--reference",
        help="the input of the release (Parquet or CSV): t-closeness, beta-likeness and delta-disclosure compare "
        "classes with its distributions, as the release's report does (default: the checked file's own; then a "
        "report beside the file that measured against the input is named on standard error with its figures)",
    )
    c.set_defaults(run=_check)


def _risk_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``risk``: the re-identification figures of a table (the SDC ones added by :func:`_sdc_risk_arguments`)."""
    r = sub.add_parser(
        "risk", parents=[common], help="re-identification risk of a table: prosecutor, journalist, marketer, uniqueness"
    )
    r.add_argument("file", help="Parquet or CSV file")
    _qids_arguments(r, None)
    r.add_argument("--threshold", type=float, default=0.2, help="a record is at risk above this risk (default 0.2)")
    r.add_argument(
        "--sampling-fraction", type=float, help="the table is this fraction of its population (uniqueness estimates)"
    )
    r.add_argument("--population-size", type=int, help="the size of the population the table was drawn from")
    r.add_argument(
        "--population", help="a population table (Parquet or CSV) holding the qids: journalist and marketer risk"
    )
    r.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="TOML",
        help="a privacy model whose status to report (repeatable)",
    )
    r.add_argument("--job", help="also report the [[privacy]] models of this job file")
    _sdc_risk_arguments(r)
    r.add_argument("--json", help="also write the figures to this JSON file")
    r.add_argument("--separator", default=",", help="CSV separator (default ',')")
    r.add_argument("--overwrite", action="store_true", help="replace an existing JSON file")
    r.set_defaults(run=_risk)


def _sdc_risk_arguments(r: argparse.ArgumentParser) -> None:
    """``risk``'s sdcMicro figures: individual, household, SUDA2 and model risk, and the reading of a missing value."""
    r.add_argument(
        "--individual",
        action="store_true",
        help="SDC figures (sdcMicro): individual and global risk, expected re-identifications (under key 'sdc')",
    )
    r.add_argument("--weights", help="column of sampling weights for the individual risk (implies --individual)")
    r.add_argument("--household", help="column of household ids: household risk (implies --individual)")
    r.add_argument("--suda2", action="store_true", help="also SUDA2 on the qids (implies --individual)")
    r.add_argument(
        "--risk-method", choices=["approx", "exact"], default="approx", help="individual risk (default approx)"
    )
    r.add_argument(
        "--model-risk",
        choices=["default", "CE", "PML", "weightedLLM", "IPF"],
        help="also the log-linear model risk (sdcMicro's modRisk) with this fit; needs --weights",
    )
    r.add_argument(
        "--missing",
        choices=["category", "wildcard"],
        default="category",
        help="a missing qid value: a category of its own (default) or matching any category (sdcMicro's reading, and "
        "local_suppression's report), in every figure",
    )
    r.add_argument(
        "--alpha",
        type=float,
        help="with --missing wildcard: how much a record with missing values counts toward another pattern it "
        "matches, in [0, 1] (default 1; local_suppression's option alpha)",
    )


def _qids_arguments(p: argparse.ArgumentParser, default: str | None) -> None:
    """``--qids A,B,...`` and ``--qid NAME`` (repeatable), the quasi-identifiers of ``check``, ``risk`` and
    ``metrics`` (read by :func:`_named_qids`); one of them is needed where there is no `default`."""
    needed = f"default: {default}" if default else "this or --qid is needed"
    p.add_argument(
        "--qids",
        help="comma-separated quasi-identifiers; a column whose name holds a comma is taken whole, and a list that "
        f"reads two ways (a column 'a,b' and columns a and b) is refused: name such columns with --qid ({needed})",
    )
    p.add_argument(
        "--qid",
        action="append",
        default=[],
        metavar="NAME",
        help="one quasi-identifier, its name taken whole (commas kept); repeatable, after the --qids columns",
    )


def _hierarchy_argument(p: argparse.ArgumentParser) -> None:
    """``--hierarchy NAME=SPEC``, as ``encode`` and ``metrics`` take it (read by :func:`_hierarchy_spec`)."""
    p.add_argument(
        "--hierarchy",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="qid and hierarchy: a CSV path, suppress, mask:N or intervals:W1,W2 (repeatable); split at the = after "
        "which NAME is a column of the table (a column 'a=b': a=b=suppress), refused when two splits name columns",
    )


def _encode_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``encode``: a published table as one column per hierarchy node."""
    e = sub.add_parser(
        "encode", parents=[common], help="encode a published table for machine learning (one column per hierarchy node)"
    )
    e.add_argument("published", help="the published (anonymized) Parquet or CSV file")
    e.add_argument(
        "--encoding",
        default="proportional",
        help="proportional (default), fillparent, fillchild, oneclass, setbinary, random, statistical",
    )
    e.add_argument(
        "--original", help="the original rows (row-aligned, or sharing --class-col); proportional/statistical"
    )
    _hierarchy_argument(e)
    e.add_argument(
        "--job",
        help="take the qids and hierarchies from this job file instead of --hierarchy (method local_suppression: a "
        "blanked cell is encoded as its qid's root, a qid without a hierarchy as suppression only)",
    )
    e.add_argument("--class-col", help="class id column present in both files")
    e.add_argument(
        "--layout",
        choices=["wide", "classes"],
        default="wide",
        help="wide: one Parquet file, a column per node (default); classes: a directory with the "
        "encoded blocks once per class and the class id per row (read with polars_anon.scan_encoded)",
    )
    e.add_argument(
        "--output",
        help="output Parquet or, with --layout classes, directory (default <published stem>.<encoding>[.parquet])",
    )
    e.add_argument("--seed", type=int, default=0, help="seed of the random/statistical mappings")
    e.add_argument("--separator", default=",", help="CSV separator (default ',')")
    e.add_argument("--overwrite", action="store_true", help="replace an existing output")
    e.set_defaults(run=_encode)


def _metrics_parser(sub: Commands, common: argparse.ArgumentParser) -> None:
    """``metrics``: the information loss of an anonymized table against its original."""
    m = sub.add_parser(
        "metrics", parents=[common], help="information-loss metrics of an anonymized table against its original"
    )
    m.add_argument("original", help="the original Parquet or CSV file")
    m.add_argument("anonymized", help="the anonymized Parquet or CSV file")
    _qids_arguments(m, "those with a hierarchy")
    _hierarchy_argument(m)
    m.add_argument(
        "--job",
        help="take the qids, hierarchies, sensitive attribute and k from this job file (method local_suppression: "
        "a qid without a hierarchy is measured as suppression only, a blanked cell as its root; mondrian and mdav: "
        "a qid without one by the classes metrics alone)",
    )
    m.add_argument("--sensitive", help="sensitive (class) column, for cm and mi_loss")
    m.add_argument("--k", type=int, help="the requested k")
    m.add_argument("--key", help="unique row id column in both files (needed when rows were suppressed)")
    m.add_argument("--names", help="comma-separated metric or family names (default: all)")
    m.add_argument("--by-attribute", action="store_true", help="also show each metric per quasi-identifier")
    m.add_argument("--json", help="also write the metrics to this JSON file")
    m.add_argument("--separator", default=",", help="CSV separator (default ',')")
    m.add_argument("--overwrite", action="store_true", help="replace an existing JSON file")
    m.set_defaults(run=_metrics)


def parser() -> argparse.ArgumentParser:
    """The ``polars-anon`` argument parser (the CLI reference page of the docs is generated from it)."""
    p = _Parser(prog="polars-anon", description="k-anonymize tables in Parquet with Polars and DuckDB.")
    p.add_argument("--version", action="version", version=f"%(prog)s {version('polars_anon')}")
    common, engines = _common_parser(), _engines_parser()
    sub = p.add_subparsers(dest="command", required=True)  # the commands in the order --help lists them
    _demo_parser(sub, common)
    _anonymize_parser(sub, common, engines)
    _spark_pack_parser(sub, common)
    _explore_parser(sub, common, engines)
    _report_parser(sub, common)
    _check_parser(sub, common)
    _risk_parser(sub, common)
    _encode_parser(sub, common)
    _metrics_parser(sub, common)
    return p


_CSV_PARSE = ("during CSV parsing", "more fields than defined", "could not parse", "CSV Error on Line")
"""Words of Polars' and DuckDB's errors reading a CSV file mid-way (Polars infers the schema from its first rows)."""
_SPARK_CSV = ("CAST_INVALID_INPUT", "MALFORMED_RECORD_IN_PARSING")
"""Spark's (a value that does not cast to the type Polars read, a row with another number of fields)."""


def csv_read_error(args: argparse.Namespace, exc: Exception) -> str | None:
    """A Polars, DuckDB or Spark failure reading a CSV input after its first rows (a later value that breaks the type
    inferred from them, a row with more fields than the header) as one line naming the CSV inputs; None for any other
    error."""
    text = str(exc).strip()
    spark = next((line for line in text.splitlines() if any(words in line for words in _SPARK_CSV)), None)
    polars = re.search(r"could not parse `.*?` as dtype `\w+` at column '.*?' \(column number \d+\)", text)
    if polars is not None:  # Polars' words, which DuckDB and Spark raise too (io.late_value): the same on every engine
        text = _jobs_name(args, polars[0])
    elif spark is not None:  # one line of Spark's: the marker and what it found, without SQLSTATE and the stack
        text = spark[spark.index("[") :].split(" SQLSTATE")[0].split(". Correct the value")[0]
    elif not any(words in text for words in _CSV_PARSE):
        return None
    try:
        given = _inputs(args)
    except AnonError:  # the job file cannot be read: the files named on the command line
        given = [getattr(args, name, None) for name in _READS]
    csv = [str(p) for p in given if isinstance(p, (str, Path)) and is_csv(p)]
    if not csv:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    detail = "; ".join(lines[:3]) if "CSV Error on Line" in lines[0] else lines[0]  # DuckDB: the line and what
    late = late_value_words(detail)
    if late:
        _, column, value = late
        hint = late_value_hint(column, value, f"job file: null_values = [{json.dumps(value)}]")
    elif "CAST_INVALID_INPUT" in detail:
        hint = (
            "; a later value breaks the type inferred from the first rows: fix it, read it as missing (job file: "
            "null_values) or convert the file to Parquet"
        )
    elif any(words in detail for words in ("more fields", "Expected Number of Columns", "MALFORMED_RECORD")):
        hint = f"; {RAGGED}"
    else:
        hint = ""
    return f"cannot read {', '.join(repr(c) for c in csv)} as CSV: {detail}{hint}"


def _jobs_name(args: argparse.Namespace, said: str) -> str:
    """Polars' words on a late value with the column named as the job names it (``columns``): Polars names a column
    of a headerless file by its own generated name, one off (``'column_1' (column number 2)``), and a renamed one by
    its header's name; DuckDB and Spark by the job's. The column number is right. Only when the job's input is the
    one CSV the command reads."""
    try:
        job = _job(args)
    except AnonError:
        return said
    found = re.search(r"at column '.*?' \(column number (\d+)\)$", said)
    if job is None or not job.columns or found is None or not 0 < int(found[1]) <= len(job.columns):
        return said
    others = [getattr(args, name, None) for name in _READS]  # a CSV of the command line: it may be that one
    if any(isinstance(p, (str, Path)) and is_csv(p) for p in others):
        return said
    return said[: found.start()] + f"at column '{job.columns[int(found[1]) - 1]}' (column number {found[1]})"


class _Signals:
    """SIGINT and SIGTERM for the whole command (an :class:`Outputs` set installs its own while it runs): the first
    raises :class:`Interrupted` naming it, a later one is ignored (one line, never a second traceback); the Python
    handlers are put back by :meth:`restore` (``main`` may run inside a program). A signal the process was started
    ignoring stays ignored (a shell's background job ignores SIGINT: a Ctrl-C meant for the foreground)."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.previous = install_handler(self.on_signal)

    @raises_on_signal  # an engine's long call (DuckDB) is interrupted for it: polars_anon.interrupts
    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.name is None:
            self.name = signal.Signals(signum).name
            raise Interrupted(f"interrupted by {self.name}")

    def ignore(self) -> None:
        """From now on a signal does nothing (the command is ending with its one line)."""
        for sig in self.previous:
            signal.signal(sig, signal.SIG_IGN)  # kept through the interpreter's finalization, unlike a function

    def restore(self) -> None:
        restore_handlers(self.previous)


def _interrupted(signals: _Signals, exc: BaseException, written: list[str]) -> int:
    """The one line of an interrupted command and its exit code (130 SIGINT, 143 SIGTERM): what it had written."""
    signals.ignore()
    name = "SIGTERM" if "SIGTERM" in str(exc) else signals.name or "SIGINT"
    if written:
        print(f"polars-anon: interrupted after the outputs were written: {', '.join(written)}", file=sys.stderr)
    else:
        print(NOTHING_WRITTEN, file=sys.stderr)
    return 143 if name == "SIGTERM" else 130


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (``polars-anon ... | head -1``)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor (a captured stream)
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polars-anon`` console script.

    Bad input: one line naming the culprit, exit 2 (nothing written). SIGINT or SIGTERM: one line, exit 130 or 143,
    naming the outputs when they were written before the signal, else saying nothing was. Standard output closed by
    its reader (``| head -1``): no message, exit 141 (128 + SIGPIPE, as a Unix tool killed by SIGPIPE). With `argv`
    given (a program calling it) the signal handlers it found are put back at the end; without (the console script)
    a signal after the command ended is ignored.
    """
    # first: a signal while the command is parsed or imports an engine is one line too (one while Python imports
    # the package, before main runs: interrupts.exit_on_signal_while_starting)
    signals = _Signals()
    try:
        with recording() as written:
            try:
                return _run(argv)
            except KeyboardInterrupt as exc:
                return _interrupted(signals, exc, written)
            except BrokenPipeError:
                if not _stdout_closed():
                    raise
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
                return 141
            except Exception as exc:  # an engine's own error for the signal (its handler's exception swallowed)
                if signals.name is None:
                    raise
                return _interrupted(signals, exc, written)
    finally:
        if argv is None:  # the console script: the process ends with the command, whose exit code stands
            signals.ignore()
        else:
            signals.restore()


def _run(argv: Sequence[str] | None) -> int:
    """The command, its bad input as one line and exit 2."""
    args = parser().parse_args(argv)
    logging.getLogger().addHandler(logging.NullHandler())  # a library's log line (py4j on Ctrl-C) is not a message
    if args.quiet:
        progress(False)
    try:
        return int(args.run(args))
    except AnonError as exc:
        cause = exc.__cause__  # a late CSV value the road named (io.csv_errors): worded as the command line names it
        late = isinstance(cause, Exception) and late_value_words(str(cause)) is not None
        message = csv_read_error(args, cause) if late and isinstance(cause, Exception) else None
        if isinstance(exc, OutputExistsError) and exc.target:  # the way out: the command's flag, not a keyword
            message = output_exists(exc.what, exc.target, command_line=True)
        print(f"polars-anon: error: {message or ' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except Exception as exc:  # an engine's failure reading a CSV input mid-way is bad input; anything else is raised
        message = csv_read_error(args, exc)
        if message is None:
            raise
        print(f"polars-anon: error: {message}", file=sys.stderr)
        return 2
    finally:
        if args.quiet:
            progress(None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
