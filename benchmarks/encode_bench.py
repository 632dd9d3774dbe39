"""Speed of the encodings.

1. Adult (30,162 rows, 8 qids, 257 encoded columns): every representation of a
   greedy 10-anonymous table, best of 5 (target: proportional < 2 s).
2. Voter register (polars_anon.demo, 4 qids: zip mask 5, gender, race, birth year
   5/10/20 bands -> 1,978 encoded columns): a full-domain 10-anonymous table encoded
   to Parquet with :func:`polars_anon.write_encoded`, each run in a fresh
   subprocess that reports its wall time and peak RSS (target: 15M rows < 60 s and
   < 2.5 GB), in the ``wide`` layout (one column per node: rows x 1,978 cells) or
   the ``classes`` layout (encoded blocks once per class + a class id per row).
   The per-class table alone is timed too, and with ``--sql`` the DuckDB macro
   ``anon_encode_classes`` (one row per class and column) over the same two files.

Run:  python benchmarks/encode_bench.py [--rows 15000000] [--reps proportional,fillparent] \
          [--layouts classes,wide] [--sql]
Writes benchmarks/results/encode_bench.json (merged across runs, keyed by rows).
The register and the anonymized table go to benchmarks/data/ (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results"
ADULT = ROOT.parent / "shared" / "data" / "adult"
QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def adult_bench(repeats: int = 5) -> dict:
    import polars_anon as pa

    adult = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    H = {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in QIDS}
    method = "greedy" if "greedy" in pa.METHODS else "fulldomain"
    pub = pa.anonymize(
        adult, hierarchies=H, k=10, method=method, metric="nllm" if method == "greedy" else None
    ).collect()
    out = {"method": method, "k": 10, "rows": adult.height}
    for rep in ["proportional", "fillparent", "fillchild", "oneclass", "setbinary", "random", "statistical"]:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            df = pa.encode(pub, H, rep, original=adult if rep in ("proportional", "statistical") else None).collect()
            times.append(time.perf_counter() - start)
        out[rep] = {
            "best_s": round(min(times), 3),
            "median_s": round(sorted(times)[len(times) // 2], 3),
            "columns": df.width,
        }
        print(f"adult {rep}: best {min(times):.3f} s, {df.width} columns", flush=True)
    return out


def _child(args: argparse.Namespace) -> None:
    """Runs in a subprocess: one encoding of the register, prints JSON facts."""
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs
    from polars_anon.encode import EncodeOptions, plan_encoding
    from polars_anon.encoded_io import write_encoded
    from polars_anon.job import build_hierarchies

    voters = pl.scan_parquet(args.voters)
    H = build_hierarchies(voters, {q: demo_hierarchy_specs()[q] for q in DEMO_QIDS})
    published = pl.scan_parquet(args.published)
    original = voters if args.rep in ("proportional", "statistical") else None
    start = time.perf_counter()
    if args.stage == "sql":  # DuckDB: anon_encode_classes over views of the two Parquet files
        import duckdb

        from polars_anon.duckdb import load_hierarchies

        con = duckdb.connect()
        load_hierarchies(con, H)
        con.execute(f"CREATE VIEW pub AS FROM read_parquet('{args.published}')")
        con.execute(f"CREATE VIEW orig AS FROM read_parquet('{args.voters}')")
        start = time.perf_counter()
        sql = (
            "SELECT count(*), count(DISTINCT class) FROM anon_encode_classes('pub', ?, representation := "
            "?, orig := 'orig')"
        )
        cells, classes = con.execute(sql, [list(H), args.rep]).fetchall()[0]
        facts = {"long_rows": cells, "class_rows": classes}
    elif args.stage == "classes":  # the per-class table only (aggregate, closure join, pivot)
        plan = plan_encoding(published, H, EncodeOptions(args.rep, original=original, validate=False))
        rights = pl.collect_all([j.right for j in plan.joins])
        facts = {"class_rows": sum(r.height for r in rights)}
    else:
        out = Path(args.out)
        facts = write_encoded(published, H, out, args.rep, original=original, overwrite=True, layout=args.layout)
        files = list(out.iterdir()) if out.is_dir() else [out]
        facts["bytes"] = sum(f.stat().st_size for f in files)
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    facts["wall_s"] = round(time.perf_counter() - start, 2)
    facts["peak_rss_gb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 3)
    facts["nodes"] = {q: h.n_nodes for q, h in H.items()}
    print(json.dumps(facts))


def register_bench(rows: int, reps: list[str], layouts: list[str], sql: bool) -> dict:
    import polars_anon as pa
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs, write_voter_register
    from polars_anon.job import build_hierarchies

    DATA.mkdir(parents=True, exist_ok=True)
    voters = DATA / f"encode_voters_{rows}.parquet"
    if not voters.exists():
        write_voter_register(voters, rows, 0)
    published = DATA / f"encode_voters_{rows}_k10.parquet"
    if not published.exists():
        lf = pl.scan_parquet(voters)
        H = build_hierarchies(lf, {q: demo_hierarchy_specs()[q] for q in DEMO_QIDS})
        asked = {"k": 10, "method": "fulldomain", "drop": ["name"], "insensitive": ["voter_id"]}
        pa.anonymize(lf, hierarchies=H, **asked).sink_parquet(published, report=False)
    out: dict = {"rows": rows, "anonymized": "fulldomain k=10, name dropped, voter_id published (insensitive)"}
    runs = [(rep, "classes", "") for rep in reps] + [(rep, "write", layout) for layout in layouts for rep in reps]
    runs += [(rep, "sql", "") for rep in reps if sql]
    for rep, stage, layout in runs:
        target = DATA / (f"encoded_{rows}_{rep}" + (".parquet" if layout == "wide" else ""))
        cmd = [
            sys.executable,
            __file__,
            "--child",
            "--voters",
            str(voters),
            "--published",
            str(published),
            "--rep",
            rep,
            "--stage",
            stage,
            "--layout",
            layout or "wide",
            "--out",
            str(target),
        ]
        load = os.getloadavg()[0]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        facts = json.loads(res.stdout.strip().splitlines()[-1])
        facts["load_before"] = round(load, 2)
        name = f"{rep}/{stage}" + (f"/{layout}" if layout else "")
        out[name] = facts
        print(f"register {rows:,} {name}: {facts}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=15_000_000)
    ap.add_argument("--reps", default="proportional,fillparent")
    ap.add_argument(
        "--layouts", default="classes,wide", help="write layouts to time (wide takes minutes per million rows)"
    )
    ap.add_argument("--sql", action="store_true", help="also time the DuckDB macro anon_encode_classes")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--voters", help=argparse.SUPPRESS)
    ap.add_argument("--published", help=argparse.SUPPRESS)
    ap.add_argument("--rep", help=argparse.SUPPRESS)
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--layout", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "encode_bench.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results["command_last"] = "python benchmarks/encode_bench.py " + " ".join(sys.argv[1:])
    results["cores"] = os.cpu_count()
    if not args.skip_adult:
        results["adult"] = adult_bench()
    key = f"register_{args.rows}"
    results[key] = {
        **results.get(key, {}),
        **register_bench(args.rows, args.reps.split(","), args.layouts.split(","), args.sql),
    }
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
