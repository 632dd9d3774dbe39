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
from polars_anon.classes import k_summary
from polars_anon.errors import AnonError
from polars_anon.io import scan_input
from polars_anon.job import Job, run_job

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs, write_voter_register

    out = Path(args.out)
    output, report = out / "anonymized.parquet", out / "report.json"
    for path in (output, report):
        if path.exists() and not args.overwrite:
            raise AnonError(f"output {str(path)!r} exists; pass --overwrite to replace it")
    start = time.perf_counter()
    voters = out / "voters.parquet"
    write_voter_register(voters, args.rows, args.seed, overwrite=True)
    generated = time.perf_counter() - start
    job = Job(
        input=voters,
        output=output,
        report=report,
        k=args.k,
        qids={q: demo_hierarchy_specs()[q] for q in DEMO_QIDS},
        method=args.method,
        drop=["name"],
        sensitive="party",
        seed=args.seed,
    )
    rep = run_job(job, overwrite=args.overwrite)
    total = time.perf_counter() - start
    print(f"generated {args.rows:,} voters in {generated:.1f} s -> {voters}")
    print(f"{rep['method']} k={rep['k']}: levels {rep.get('levels', '-')}, suppressed {rep['suppressed']:,} rows")
    print(
        f"published {rep['n_rows']:,} rows in {rep['n_classes']:,} classes, smallest class {rep['min_class_size']:,} "
        f"(checked independently) -> {output}"
    )
    loss = rep.get("loss")
    if loss is not None:
        print(f"average cell NCP {loss:.4f}; report -> {report}; total {total:.1f} s")
    return 0


def _anonymize(args: argparse.Namespace) -> int:
    rep = run_job(Job.load(args.job), overwrite=args.overwrite)
    print(json.dumps(rep, indent=2, default=str))
    return 0


def _check(args: argparse.Namespace) -> int:
    lf = scan_input(args.file, separator=args.separator)
    qids = [q for q in args.qids.split(",") if q]
    check_columns(lf, qids, "qids")
    check_k(args.k)
    summary = k_summary(lf, qids, args.k).collect().row(0, named=True)
    print(json.dumps(summary, indent=2))
    return 0 if summary["k_anonymous"] else 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="polars-anon", description="k-anonymize tables in Parquet with Polars and DuckDB.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="generate a synthetic voter register and anonymize it")
    d.add_argument("--rows", type=int, default=1_000_000, help="voters to generate (default 1,000,000)")
    d.add_argument("--k", type=int, default=10, help="k (default 10)")
    d.add_argument("--out", default="anon-demo", help="output folder (default ./anon-demo)")
    d.add_argument("--method", default="fulldomain", help="algorithm (default fulldomain)")
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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``polars-anon`` console script."""
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except AnonError as exc:
        print(f"polars-anon: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
