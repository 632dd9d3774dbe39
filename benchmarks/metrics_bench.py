"""Time every information-loss metric in Polars and in DuckDB, with peak memory.

    python benchmarks/metrics_bench.py [--rows 15000000] [--skip-duckdb] [--memory-limit 700MB]

1. Generates a voter register of ``--rows`` rows into ``benchmarks/data/`` (git-ignored;
   reused when present) and anonymizes it with ``fulldomain`` at k = 10, once keeping
   every row (lined up by position) and once with up to 1,000 rows suppressed (lined up
   by ``voter_id``).
2. Runs each metric, and each family, in a fresh process under ``/usr/bin/time -v``:
   the Parquet files are scanned, the metric computed, the process's wall time,
   the metric's own time and its peak resident memory recorded. Polars reads with
   ``pa.metrics.compute``; DuckDB makes the pairs once with
   ``polars_anon.duckdb.metric_pairs`` over ``read_parquet`` views (with the
   sensitive column, and the pairwise contingency tables, only when a metric of
   the run needs them) and runs
   ``FROM anon_<name>_of('anon_pairs', ...)`` per metric (memory_limit from
   ``--memory-limit``, default 700MB so the whole process stays under 1 GB; DuckDB
   spills beyond it). The direct form ``FROM anon_ncp('o', 'a', ...)`` (pairs made
   inside the query) is timed once for comparison.
3. Times all metrics on Adult (30,162 rows, 8 qids) in Polars, best of 3.

Writes ``benchmarks/results/metrics_bench.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = HERE / "data"
RESULTS = HERE / "results"
QIDS = ["zip", "gender", "race", "birth_year"]
K = 10


def _paths(rows: int) -> dict[str, Path]:
    tag = f"{rows // 1_000_000}m" if rows % 1_000_000 == 0 else str(rows)
    return {
        "original": DATA / f"voters_{tag}.parquet",
        "full": DATA / f"voters_{tag}_k{K}_full.parquet",
        "suppressed": DATA / f"voters_{tag}_k{K}_supp.parquet",
    }


def _hierarchies(original: Path) -> dict:
    import polars as pl

    from polars_anon.demo import demo_hierarchy_specs
    from polars_anon.job import build_hierarchies

    return build_hierarchies(pl.scan_parquet(original), {q: demo_hierarchy_specs()[q] for q in QIDS})


def prepare_data(rows: int) -> dict[str, object]:
    """Generate the register and its two anonymizations unless present; return their facts."""
    import polars as pl

    import polars_anon as pa
    from polars_anon.demo import write_voter_register

    paths = _paths(rows)
    if not paths["original"].exists():
        write_voter_register(paths["original"], rows, 0)
    hierarchies = _hierarchies(paths["original"])
    facts = {}
    for variant, max_suppressed in (("full", 0), ("suppressed", 1000)):
        report = paths[variant].with_suffix(".report.json")
        if not paths[variant].exists() or not report.exists():
            lf = pl.scan_parquet(paths["original"])
            result = pa.anonymize(
                lf,
                qids=QIDS,
                hierarchies=hierarchies,
                k=K,
                drop=["name"],
                insensitive=["voter_id"],  # published: the suppressed variant lines rows up by it
                sensitive="party",
                max_suppressed=max_suppressed,
            )
            result.sink_parquet(paths[variant], overwrite=True, report=report)
        rep = json.loads(report.read_text())
        facts[variant] = {k: rep.get(k) for k in ("levels", "suppressed", "n_classes", "min_class_size", "seconds")}
    return facts


def run_one(engine: str, names: list[str], variant: str, rows: int, memory_limit: str) -> dict[str, object]:
    """In this process: compute `names` from the Parquet files and return the seconds."""
    paths = _paths(rows)
    key = "voter_id" if variant == "suppressed" else None
    start = time.perf_counter()
    if engine == "polars":
        import polars as pl

        import polars_anon as pa

        hierarchies = _hierarchies(paths["original"])
        t0 = time.perf_counter()
        out = pa.metrics.compute(
            pl.scan_parquet(paths["original"]),
            pl.scan_parquet(paths[variant]),
            QIDS,
            hierarchies,
            names,
            sensitive="party",
            k=K,
            key=key,
        )
        values = out.row(0, named=True)
    else:
        import duckdb

        from polars_anon.duckdb import load_hierarchies, metric_pairs
        from polars_anon.metrics import METRICS

        hierarchies = _hierarchies(paths["original"])
        con = duckdb.connect()
        con.execute(f"SET memory_limit = '{memory_limit}'")
        load_hierarchies(con, hierarchies)
        con.execute(f"CREATE VIEW o AS FROM read_parquet('{paths['original']}')")
        con.execute(f"CREATE VIEW a AS FROM read_parquet('{paths[variant]}')")
        t0 = time.perf_counter()
        values = {}
        if engine == "duckdb-direct":  # the original form: every macro reads both files again
            for name in names:
                rows_ = con.sql(
                    f"FROM anon_{name}('o', 'a', ?, key := ?, sensitive := 'party', k := ?)", params=[QIDS, key, K]
                ).fetchall()
                values[name] = next(v for a, v in rows_ if a is None)
        else:
            # the fast form: the pairs once (with the sensitive column only when a metric needs it), then anon_<name>_of
            sensitive = "party" if any(METRICS[n].needs_sensitive for n in names) else None
            pairwise = any(n in ("cramers_v", "mi_loss") for n in names)  # <name>_joint only when read
            metric_pairs(con, "o", "a", QIDS, key=key, sensitive=sensitive, pairwise=pairwise)
            pairs_seconds = time.perf_counter() - t0
            for name in names:
                rows_ = con.sql(f"FROM anon_{name}_of('anon_pairs', ?, k := ?)", params=[QIDS, K]).fetchall()
                values[name] = next(v for a, v in rows_ if a is None)
    seconds = time.perf_counter() - t0
    out = {"seconds": round(seconds, 3), "setup_seconds": round(t0 - start, 3), "values": values}
    if engine == "duckdb":
        out["pairs_seconds"] = round(pairs_seconds, 3)
    return out


def _timed(engine: str, names: list[str], variant: str, rows: int, memory_limit: str) -> dict[str, object]:
    load = round(os.getloadavg()[0], 2)
    cmd = [
        "/usr/bin/time",
        "-v",
        sys.executable,
        str(Path(__file__).resolve()),
        "one",
        "--engine",
        engine,
        "--names",
        ",".join(names),
        "--variant",
        variant,
        "--rows",
        str(rows),
        "--memory-limit",
        memory_limit,
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, check=False, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    result["peak_mb"] = round(int(peak.group(1)) / 1024, 1) if peak else None
    result["load_before"] = load
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        result["process_seconds"] = round(sum(p * 60**i for i, p in enumerate(reversed(parts))), 2)
    return result


def adult_all_metrics() -> dict[str, object]:
    import polars as pl

    import polars_anon as pa

    adult_dir = REPO.parent / "shared" / "data" / "adult"
    if not adult_dir.exists():
        return {"skipped": f"{adult_dir} not present"}
    qids = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
    adult = pl.read_csv(adult_dir / "adult.csv", separator=";", infer_schema=False)
    hierarchies = {q: pa.Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in qids}
    out = {}
    for k in (5, 100):
        published = pa.anonymize(adult, qids=qids, hierarchies=hierarchies, k=k).collect()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            pa.metrics.compute(adult, published, qids, hierarchies, sensitive="salary-class", k=k)
            times.append(time.perf_counter() - start)
        out[f"k{k}"] = {"best_seconds": round(min(times), 3), "all_seconds": [round(t, 3) for t in times]}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", nargs="?", default="all", choices=["all", "one"])
    p.add_argument("--rows", type=int, default=15_000_000)
    p.add_argument("--engine", default="polars", choices=["polars", "duckdb", "duckdb-direct"])
    p.add_argument("--names", default="")
    p.add_argument("--variant", default="full", choices=["full", "suppressed"])
    p.add_argument(
        "--memory-limit", default="700MB", help="DuckDB memory_limit (default 700MB: the process stays under 1 GB)"
    )
    p.add_argument("--skip-duckdb", action="store_true")
    args = p.parse_args(argv)
    if args.mode == "one":
        print(
            json.dumps(
                run_one(args.engine, args.names.split(","), args.variant, args.rows, args.memory_limit), default=str
            )
        )
        return 0

    sys.path.insert(0, str(REPO))
    from polars_anon.metrics import FAMILIES, METRICS

    started = time.time()
    facts = prepare_data(args.rows)
    engines = ["polars"] if args.skip_duckdb else ["polars", "duckdb"]
    results: dict[str, object] = {
        "rows": args.rows,
        "k": K,
        "qids": QIDS,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_at_start": os.getloadavg(),
        },
        "anonymizations": facts,
        "duckdb_memory_limit": args.memory_limit,
        "per_metric": {},
        "per_family": {},
        "keyed": {},
    }
    if not args.skip_duckdb:
        r = _timed("duckdb-direct", ["ncp"], "full", args.rows, args.memory_limit)
        results["duckdb_direct_ncp"] = r
        print("duckdb direct form, ncp", {k: v for k, v in r.items() if k != "values"}, flush=True)
    for engine in engines:
        for name in METRICS:
            r = _timed(engine, [name], "full", args.rows, args.memory_limit)
            results["per_metric"].setdefault(engine, {})[name] = r  # type: ignore[union-attr]
            print(engine, name, {k: v for k, v in r.items() if k != "values"}, flush=True)
        for family in FAMILIES:
            names = [n for n, m in METRICS.items() if m.family == family]
            r = _timed(engine, names, "full", args.rows, args.memory_limit)
            results["per_family"].setdefault(engine, {})[family] = r  # type: ignore[union-attr]
            print(engine, family, {k: v for k, v in r.items() if k != "values"}, flush=True)
        r = _timed(
            engine, [n for n, m in METRICS.items() if m.family == "cost"], "suppressed", args.rows, args.memory_limit
        )
        results["keyed"][engine] = r  # type: ignore[index]
        print(engine, "cost family, lined up by key", {k: v for k, v in r.items() if k != "values"}, flush=True)
    results["adult_all_metrics_polars"] = adult_all_metrics()
    print("adult", results["adult_all_metrics_polars"], flush=True)
    results["load_average_at_end"] = os.getloadavg()
    results["total_seconds"] = round(time.time() - started, 1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "metrics_bench.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (RESULTS / "metrics_bench.md").write_text(_markdown(results))
    return 0


def _markdown(results: dict) -> str:
    from polars_anon.metrics import METRICS

    lines = [
        f"# Information-loss metrics on a {results['rows']:,}-row voter register (k = {results['k']})",
        "",
        (
            f"`python benchmarks/metrics_bench.py`; {results['machine']['cpus']} CPUs; load average at start "
            f"{', '.join(f'{x:.1f}' for x in results['machine']['load_average_at_start'])} (the machine is shared)."
        ),
        "Seconds = the metric's own time from Parquet (scan, one pass, aggregates) after imports and "
        "hierarchy loading;",
        "peak = maximum resident memory of the whole process (`/usr/bin/time -v`). Rows lined up by position.",
        "DuckDB: `metric_pairs(con, 'o', 'a', qids)` once (seconds in brackets), then `FROM "
        "anon_<name>_of('anon_pairs', qids)`",
        "per metric; the pairs carry the sensitive column only when a metric of the run needs it (cm, mi_loss).",
        "",
        "| metric | family | Polars s | Polars peak MB | DuckDB s (pairs) | DuckDB peak MB |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    per = results["per_metric"]
    for name, m in METRICS.items():
        cells = []
        for engine in ("polars", "duckdb"):
            r = per.get(engine, {}).get(name, {})
            value = str(r.get("seconds", r.get("error", "-"))) + (
                f" ({r['pairs_seconds']})" if "pairs_seconds" in r else ""
            )
            cells += [value, str(r.get("peak_mb", "-"))]
        lines.append(f"| `{name}` | {m.family} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| family (all its metrics in one run) | Polars s | Polars peak MB | DuckDB s (pairs) | "
        "DuckDB peak MB | load before (Polars, DuckDB) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for family, r in results["per_family"].get("polars", {}).items():
        d = results["per_family"].get("duckdb", {}).get(family, {})
        dd = str(d.get("seconds", d.get("error", "-"))) + (f" ({d['pairs_seconds']})" if "pairs_seconds" in d else "")
        lines.append(
            f"| {family} | {r.get('seconds', r.get('error'))} | {r.get('peak_mb')} | {dd} | {d.get('peak_mb', '-')} | "
            f"{r.get('load_before')}, {d.get('load_before', '-')} |"
        )
    direct = results.get("duckdb_direct_ncp")
    if direct:
        seconds = direct.get("seconds", direct.get("error"))
        text = (
            "DuckDB direct form `FROM anon_ncp('o', 'a', qids)` (pairs made inside the query, every call reads "
            f"both files): {seconds} s, peak {direct.get('peak_mb')} MB."
        )
        lines += ["", text]
    lines += ["", "Cost family with up to 1,000 rows suppressed, lined up by `voter_id` (a join on the key):", ""]
    for engine, r in results["keyed"].items():
        lines.append(f"- {engine}: {r.get('seconds', r.get('error'))} s, peak {r.get('peak_mb')} MB")
    lines += ["", f"Adult, every metric in Polars (best of 3): {results['adult_all_metrics_polars']}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
