"""``polars-anon``: batch jobs over Parquet. Thin wrapper over the modules.

Bad input prints one message naming the culprit (no traceback) and exits 2;
``check`` exits 1 when the table is not k-anonymous.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from polars_anon._validate import check_columns, check_k
from polars_anon.algorithms import METHODS
from polars_anon.classes import k_summary
from polars_anon.errors import AnonError
from polars_anon.io import scan_input
from polars_anon.job import Job, execute_job, run_job
from polars_anon.outputs import Interrupted, Outputs, staged_write

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs, write_rows

    out_dir = Path(args.out)
    voters, output, report = out_dir / "voters.parquet", out_dir / "anonymized.parquet", out_dir / "report.json"
    start = time.perf_counter()
    with Outputs(overwrite=args.overwrite) as out:
        for path in (voters, output, report):
            out.check(path)
        staged = staged_write(out, voters, lambda tmp: write_rows(tmp, args.rows, args.seed))
        generated = time.perf_counter() - start
        job = Job(
            input=staged, output=output, report=report, k=args.k, qids={q: demo_hierarchy_specs()[q] for q in DEMO_QIDS},
            method=args.method, drop=["voter_id", "name"], sensitive="party", seed=args.seed,
        )  # fmt: skip
        rep = execute_job(job, out, input_name=str(voters))
        out.commit()
    total = time.perf_counter() - start
    print(f"generated {args.rows:,} voters in {generated:.1f} s -> {voters}")
    print(f"{rep['method']} k={rep['k']}: levels {rep['details'].get('levels', '-')}, suppressed {rep['suppressed']:,} rows")
    print(
        f"published {rep['n_rows']:,} rows in {rep['n_classes']:,} classes, smallest class {rep['min_class_size']:,} "
        f"(checked independently) -> {output}; voter_id and name were dropped (identifying)"
    )
    if rep.get("guarantee") == "probabilistic":  # mdav publish="permute": classes are permuted clusters
        print(
            f"probabilistic k-anonymity: the classes are MDAV clusters whose values were permuted; "
            f"equal published tuples form groups of {rep['classic_min_class_size']:,}+ rows"
        )
    if rep.get("loss") is not None:
        print(f"average cell loss {rep['loss']:.4f} (0 = untouched, 1 = every cell at its root); report -> {report}; total {total:.1f} s")
    return 0


def _anonymize(args: argparse.Namespace) -> int:
    rep = run_job(Job.load(args.job), overwrite=args.overwrite)
    print(json.dumps(rep, indent=2, default=str))
    return 0


def _check(args: argparse.Namespace) -> int:
    lf = scan_input(args.file, separator=args.separator)
    qids = [q for q in args.qids.split(",") if q]
    if not qids:
        raise AnonError("check: --qids names no column; give comma-separated quasi-identifiers")
    check_columns(lf, qids, "qids")
    check_k(args.k)
    summary = k_summary(lf, qids, args.k).collect().row(0, named=True)
    print(json.dumps(summary, indent=2))
    if not summary["n_rows"]:
        print(f"polars-anon: {args.file} is empty: an empty table is not a k-anonymous release", file=sys.stderr)
        return 1
    return 0 if summary["k_anonymous"] else 1


def _hierarchy_spec(text: str) -> tuple[str, object]:
    """``age=age.csv``, ``sex=suppress``, ``zip=mask:5``, ``year=intervals:5,10,20``, ``birth=dates:month,year``,
    ``age=ordered:5,2``, or a job file's TOML inline table: ``age={ intervals = [5, 10], bottom = 18 }``."""
    import tomllib

    name, sep, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        raise AnonError(f"--hierarchy {text!r}: expected NAME=SPEC (a CSV path, suppress, mask:N, intervals:W1,W2,..., "
                        "dates:LEVEL,..., ordered:S1,S2,... or a TOML table such as { mask = 5 })")  # fmt: skip
    if spec.startswith("{"):
        try:
            return name, tomllib.loads(f"spec = {spec}")["spec"]
        except tomllib.TOMLDecodeError as exc:
            raise AnonError(f"--hierarchy {text!r}: not a TOML inline table ({exc}); e.g. {{ intervals = [5, 10], bottom = 18 }}") from None
    kind, colon, arg = spec.partition(":")
    if colon and kind == "dates":
        return name, {"dates": [v.strip() for v in arg.split(",")]}
    try:
        if colon and kind == "mask":
            return name, {"mask": int(arg)}
        if colon and kind in ("intervals", "ordered"):
            return name, {kind: [int(w) for w in arg.split(",")]}
    except ValueError:
        raise AnonError(f"--hierarchy {text!r}: {kind} needs integers, e.g. mask:5, intervals:5,10,20 or ordered:5,2") from None
    return name, spec


def _encode(args: argparse.Namespace) -> int:
    from polars_anon.encode import canonical
    from polars_anon.encoded_io import write_encoded
    from polars_anon.job import build_hierarchies, encoding_path

    encoding = canonical(args.encoding)
    published = scan_input(args.published, separator=args.separator)
    original = scan_input(args.original, separator=args.separator) if args.original else None
    if args.job:
        job = Job.load(args.job)
        specs, base = dict(job.qids), job.base
    else:
        specs, base = dict(_hierarchy_spec(h) for h in args.hierarchy), Path(".")
    if not specs:
        raise AnonError("encode: name the hierarchies with --hierarchy NAME=SPEC (repeatable) or --job JOB.toml")
    hierarchies = build_hierarchies(original if original is not None else published, specs, base)
    output = Path(args.output) if args.output else encoding_path(args.published, encoding, args.layout)
    facts = write_encoded(published, hierarchies, output, encoding, original=original, class_col=args.class_col,
                          seed=args.seed, overwrite=args.overwrite, layout=args.layout)  # fmt: skip
    print(json.dumps({"encoding": encoding, "output": str(output), **facts}, indent=2))
    return 0


def _metrics(args: argparse.Namespace) -> int:
    from polars_anon.job import build_hierarchies
    from polars_anon.metrics import METRICS, evaluate, metric_names, prepare

    original = scan_input(args.original, separator=args.separator)
    anonymized = scan_input(args.anonymized, separator=args.separator)
    job = Job.load(args.job) if args.job else None
    specs = dict(job.qids) if job else {}
    specs.update(_hierarchy_spec(h) for h in args.hierarchy)
    qids = [q for q in args.qids.split(",") if q] if args.qids else list(specs)
    if not qids:
        raise AnonError("metrics: name the quasi-identifiers with --qids and their hierarchies with --hierarchy NAME=SPEC or --job")
    missing = [q for q in qids if specs.get(q) is None]  # a job file may list a qid without one
    if missing:
        raise AnonError(f"metrics: qids {missing} have no hierarchy; give --hierarchy NAME=SPEC or --job JOB.toml")
    hierarchies = build_hierarchies(original, {q: specs[q] for q in qids}, job.base if job else Path("."))
    sensitive = args.sensitive if args.sensitive is not None else (job.sensitive if job else None)
    k = args.k if args.k is not None else (job.k if job else None)
    names = metric_names([n for n in args.names.split(",") if n] if args.names else None, sensitive is not None)
    needed = sensitive if any(METRICS[n].needs_sensitive for n in names) else None
    data = prepare(original, anonymized, qids, hierarchies, key=args.key, sensitive=needed, k=k)
    table = evaluate(data, names).row(0, named=True)
    per = evaluate(data, names, by_attribute=True) if args.by_attribute else None
    header = ["metric", "table", *(qids if per is not None else [])]
    rows = [[name, _fmt(value), *([_fmt(v) for v in per[name]] if per is not None else [])] for name, value in table.items()]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    if args.json:
        from polars_anon.report import jsonable

        doc = {"original": str(args.original), "anonymized": str(args.anonymized), "qids": qids, "sensitive": sensitive,
               "k": k, "key": args.key, "metrics": table}
        if per is not None:
            doc["by_attribute"] = {q: {n: per[n][i] for n in table} for i, q in enumerate(qids)}
        with Outputs(overwrite=args.overwrite) as out:
            staged_write(out, Path(args.json), lambda tmp: tmp.write_text(json.dumps(jsonable(doc), indent=2) + "\n"))
            out.commit()
    return 0


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="polars-anon", description="k-anonymize tables in Parquet with Polars and DuckDB.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="generate a synthetic voter register and anonymize it")
    d.add_argument("--rows", type=int, default=1_000_000, help="voters to generate (default 1,000,000)")
    d.add_argument("--k", type=int, default=10, help="k (default 10)")
    d.add_argument("--out", default="anon-demo", help="output folder (default ./anon-demo)")
    d.add_argument("--method", default="fulldomain", choices=sorted(METHODS), help="algorithm (default fulldomain)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    d.set_defaults(run=_demo)
    a = sub.add_parser("anonymize", help="run a job file (TOML)")
    a.add_argument("job", help="path to the job file")
    a.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    a.set_defaults(run=_anonymize)
    c = sub.add_parser("check", help="report the smallest class size; exit 1 when below k")
    c.add_argument("file", help="Parquet or CSV file")
    c.add_argument("--qids", required=True, help="comma-separated quasi-identifiers")
    c.add_argument("--k", type=int, required=True)
    c.add_argument("--separator", default=",", help="CSV separator (default ',')")
    c.set_defaults(run=_check)
    e = sub.add_parser("encode", help="encode a published table for machine learning (one column per hierarchy node)")
    e.add_argument("published", help="the published (anonymized) Parquet or CSV file")
    e.add_argument("--encoding", default="proportional",
                   help="proportional (default), fillparent, fillchild, oneclass, setbinary, random, statistical")
    e.add_argument("--original", help="the original rows (row-aligned, or sharing --class-col); proportional/statistical")
    e.add_argument("--hierarchy", action="append", default=[], metavar="NAME=SPEC",
                   help="qid and hierarchy: a CSV path, suppress, mask:N or intervals:W1,W2 (repeatable)")
    e.add_argument("--job", help="take the qids and hierarchies from this job file instead of --hierarchy")
    e.add_argument("--class-col", help="class id column present in both files")
    e.add_argument("--layout", choices=["wide", "classes"], default="wide",
                   help="wide: one Parquet file, a column per node (default); classes: a directory with the "
                        "encoded blocks once per class and the class id per row (read with polars_anon.scan_encoded)")
    e.add_argument("--output", help="output Parquet or, with --layout classes, directory "
                                    "(default <published stem>.<encoding>[.parquet])")
    e.add_argument("--seed", type=int, default=0, help="seed of the random/statistical mappings")
    e.add_argument("--separator", default=",", help="CSV separator (default ',')")
    e.add_argument("--overwrite", action="store_true", help="replace an existing output")
    e.set_defaults(run=_encode)
    m = sub.add_parser("metrics", help="information-loss metrics of an anonymized table against its original")
    m.add_argument("original", help="the original Parquet or CSV file")
    m.add_argument("anonymized", help="the anonymized Parquet or CSV file")
    m.add_argument("--qids", help="comma-separated quasi-identifiers (default: those with a hierarchy)")
    m.add_argument("--hierarchy", action="append", default=[], metavar="NAME=SPEC",
                   help="qid and hierarchy: a CSV path, suppress, mask:N or intervals:W1,W2 (repeatable)")
    m.add_argument("--job", help="take the qids, hierarchies, sensitive attribute and k from this job file")
    m.add_argument("--sensitive", help="sensitive (class) column, for cm and mi_loss")
    m.add_argument("--k", type=int, help="the requested k")
    m.add_argument("--key", help="unique row id column in both files (needed when rows were suppressed)")
    m.add_argument("--names", help="comma-separated metric or family names (default: all)")
    m.add_argument("--by-attribute", action="store_true", help="also show each metric per quasi-identifier")
    m.add_argument("--json", help="also write the metrics to this JSON file")
    m.add_argument("--separator", default=",", help="CSV separator (default ',')")
    m.add_argument("--overwrite", action="store_true", help="replace an existing JSON file")
    m.set_defaults(run=_metrics)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polars-anon`` console script.

    Bad input: one line naming the culprit, exit 2. SIGINT or SIGTERM: one line, exit
    130 or 143; nothing was written in either case.
    """
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except AnonError as exc:
        print(f"polars-anon: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        sigterm = isinstance(exc, Interrupted) and "SIGTERM" in str(exc)
        print("polars-anon: interrupted; nothing was written", file=sys.stderr)
        return 143 if sigterm else 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
