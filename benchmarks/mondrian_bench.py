"""Mondrian (strict / relaxed) and Datafly: Adult evidence, peers, 15M-row scale.

    python benchmarks/mondrian_bench.py adult            # k in 2..100, strict vs relaxed (+ datafly)
    python benchmarks/mondrian_bench.py peers            # needs benchmarks/mondrian_peers.py outputs
    python benchmarks/mondrian_bench.py scale [--rows N] # /usr/bin/time -v on a generated register

Results go to benchmarks/results/mondrian_*.csv|json and are summarised in
benchmarks/results/mondrian.md. Each result records the machine load (``uptime``)
at the start, since the machine is shared.

Metrics: discernibility (sum of squared class sizes of the published table),
ILoss (sum over cells of (|v| - 1) / |D_A|, paper 002) and NCP come from
``polars_anon.metrics.compute``. Discernibility over Mondrian's own partitions
(before publishing merges partitions with equal labels) is computed here from the
partition sizes. For the peers, ``ncp_cell`` is the mean over cells of the
certainty penalty of the published label alone: (|set| - 1) / (|D| - 1) for a set
or hierarchy node (|set| = leaves under it), (hi - lo) / (max - min) for a
numeric range, 0 for a value; it needs no row alignment and applies equally to
anonypy's comma-joined sets and ranges and to hierarchy labels.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

import polars_anon as pa
from polars_anon.algorithms.mondrian import axes, coordinates, partition
from polars_anon.classes import class_sizes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sections import replace_section

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE / "data"
ADULT = HERE.parent.parent / "shared" / "data" / "adult"
QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def load() -> float:
    return os.getloadavg()[0]


def adult_data() -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    df = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    return df, {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in QIDS}


def write_csv(rows: list[dict], path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def md_table(rows: list[dict]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def cmd_adult(args: argparse.Namespace) -> None:
    df, hs = adult_data()
    agg = class_sizes(df.lazy(), QIDS).collect()
    ax = axes({q: agg[q].unique().to_list() for q in QIDS}, hs)
    coords = coordinates(agg, QIDS, ax)
    rows = []
    start_load = load()
    for k in args.k:
        for method, mode in (("mondrian", "strict"), ("mondrian", "relaxed"), ("datafly", None)):
            opts = {"mode": mode} if mode else {}
            best = None
            for _ in range(args.repeat):
                t = time.perf_counter()
                result = pa.anonymize(df, hierarchies=hs, k=k, method=method, **opts)
                out = result.collect()
                seconds = time.perf_counter() - t
                best = seconds if best is None else min(best, seconds)
            m = (
                pa.metrics.compute(df, out, QIDS, hs, ["discernibility", "iloss", "ncp"], key=None)
                if not result.report["suppressed"]
                else None
            )
            sizes = out.group_by(QIDS).len()["len"].cast(pl.Int64)
            row = {
                "k": k,
                "method": method if not mode else f"mondrian-{mode}",
                "seconds": round(best, 3),
                "partitions": result.report["details"].get("n_partitions", ""),
                "classes": out.group_by(QIDS).len().height,
                "suppressed": result.report["suppressed"],
                "discernibility": int((sizes * sizes).sum()),
                "iloss": round(float(m["iloss"][0]), 1) if m is not None else "",
                "iloss_per_cell": round(float(m["iloss"][0]) / (df.height * len(QIDS)), 4) if m is not None else "",
                "ncp_metrics": round(float(m["ncp"][0]), 1) if m is not None else "",
            }
            if mode:
                seg, _ = partition(coords, k, mode)
                psz = seg.group_by("__anon_pid").agg(pl.col("__anon_size").sum())["__anon_size"].cast(pl.Int64)
                row["discernibility_partitions"] = int((psz * psz).sum())
            else:
                row["discernibility_partitions"] = ""
            assert m is None or int(m["discernibility"][0]) == row["discernibility"]
            rows.append(row)
            print(row, flush=True)
    RESULTS.mkdir(exist_ok=True)
    write_csv(rows, RESULTS / "mondrian_adult.csv")
    section(
        "adult",
        f"`python benchmarks/mondrian_bench.py adult` (best of {args.repeat}; load average at start {start_load:.1f}, "
        f"at end {load():.1f}, 2 cores shared)\n\n{md_table(rows)}",
    )


def _label_ncp(col: pl.Series, domain: pl.Series, numeric: bool, h: pa.Hierarchy | None) -> float:
    """Mean certainty penalty of published labels (module docstring)."""
    values = domain.unique()
    n_dom = values.len()
    lo_d, hi_d = (values.cast(pl.Float64).min(), values.cast(pl.Float64).max()) if numeric else (0.0, 0.0)
    counts = col.value_counts()
    total = 0.0
    for label, count in counts.iter_rows():
        label = str(label)
        if label.startswith("['") and label.endswith("']"):  # anonypy wraps each label in a list
            label = label[2:-2]
        if h is not None and label in h._index:  # a hierarchy node
            pen = (h.leaves[h.id_of(label)] - 1) / max(h.n_leaves - 1, 1)
        elif numeric and re.fullmatch(r"\[?(-?[\d.]+)-(-?[\d.]+)\]?", label):
            a, b = re.fullmatch(r"\[?(-?[\d.]+)-(-?[\d.]+)\]?", label).groups()  # type: ignore[union-attr]
            pen = (float(b) - float(a)) / (hi_d - lo_d)
        elif "," in label:
            pen = (len(label.strip("{}").split(",")) - 1) / max(n_dom - 1, 1)
        else:
            pen = 0.0
        total += pen * count
    return total / col.len()


def ncp_cell(out: pl.DataFrame, df: pl.DataFrame, hs: dict[str, pa.Hierarchy] | None) -> float:
    return sum(_label_ncp(out[q], df[q], q == "age", hs[q] if hs else None) for q in QIDS) / len(QIDS)


def cmd_peers(args: argparse.Namespace) -> None:
    df, hs = adult_data()
    timings = json.loads((DATA / "peers" / "timings.json").read_text())
    rows = []
    start_load = load()
    for k in sorted({t["k"] for t in timings}):
        first = len(rows)
        for name, hier in (
            ("polars_anon mondrian strict, no hierarchies", None),
            ("polars_anon mondrian strict, hierarchies (LCA)", hs),
            ("polars_anon mondrian relaxed, no hierarchies", None),
        ):
            mode = "relaxed" if "relaxed" in name else "strict"
            seconds = float("inf")
            for _ in range(args.repeat):  # best of: the machine is shared
                t = time.perf_counter()
                out = pa.anonymize(df, qids=QIDS, hierarchies=hier or {}, k=k, method="mondrian", mode=mode).collect()
                seconds = min(seconds, time.perf_counter() - t)
            rows.append(
                {
                    "k": k,
                    "tool": name,
                    "seconds": round(seconds, 3),
                    "rows": out.height,
                    "min_class": out.group_by(QIDS).len()["len"].min(),
                    "ncp_cell": round(float(ncp_cell(out, df, hier)), 6),
                }
            )
            print(rows[-1], flush=True)
        for t in (t for t in timings if t["k"] == k):
            out = pl.read_parquet(DATA / "peers" / f"{t['tool']}_k{k}.parquet")
            hier = hs if t["tool"] == "anjana" else None
            rows.append(
                {
                    "k": k,
                    "tool": t["tool"],
                    "seconds": t["seconds"],
                    "rows": out.height,
                    "min_class": out.group_by(QIDS).len()["len"].min(),
                    "ncp_cell": round(float(ncp_cell(out, df, hier)), 6),
                }
            )
            print(rows[-1], flush=True)
        anonypy = next((r for r in rows[first:] if r["tool"] == "anonypy"), None)
        for r in rows[first:]:  # against anonypy at the same k
            r["x_faster_than_anonypy"] = round(anonypy["seconds"] / r["seconds"], 1) if anonypy else ""
            r["ncp_minus_anonypy"] = f"{r['ncp_cell'] - anonypy['ncp_cell']:+.6f}" if anonypy else ""
    write_csv(rows, RESULTS / "mondrian_peers.csv")
    loads = [t["load"] for t in timings if "load" in t]
    peer_load = (
        f"load average when each peer run started: {min(loads)}-{max(loads)}" if loads else "peer load not recorded"
    )
    note = f". {args.note}" if args.note else ""
    section(
        "peers",
        "`/tmp/peers/bin/python benchmarks/mondrian_peers.py --adult ../shared/data/adult --out benchmarks/data/peers` "
        "(peers in a throwaway venv: anonypy 0.2.1, anjana 1.2.3; one run each), then `python "
        "benchmarks/mondrian_bench.py peers` "
        f"(polars_anon: best of {args.repeat}; "
        f"load average at start {start_load:.1f}; {peer_load}){note}\n\n{md_table(rows)}",
    )


def cmd_scale_run(args: argparse.Namespace) -> None:
    """The measured process: scan Parquet, anonymize, stream the verified output to Parquet."""
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs
    from polars_anon.job import build_hierarchies

    lf = pl.scan_parquet(args.input)
    hs = build_hierarchies(lf, {q: demo_hierarchy_specs()[q] for q in DEMO_QIDS})
    result = pa.anonymize(
        lf,
        qids=DEMO_QIDS,
        hierarchies=hs,
        k=args.k,
        method="mondrian",
        mode=args.mode,
        drop=["name"],
        insensitive=["voter_id"],
        sensitive="party",
    )
    report = result.sink_parquet(args.output, overwrite=True)
    details = report["details"]  # Mondrian's own facts (rounds, partitions) sit there, the rest at the top
    keys = ("n_rows", "n_classes", "n_partitions", "min_class_size", "rounds", "seconds", "write_seconds")
    print(json.dumps({key: details[key] if key in details else report.get(key) for key in keys}))


def cmd_scale(args: argparse.Namespace) -> None:
    from polars_anon.demo import write_voter_register

    data = DATA / f"mondrian_voters_{args.rows // 1_000_000}m.parquet"
    if not data.exists():
        write_voter_register(data, args.rows, seed=0)
    out = DATA / f"mondrian_voters_{args.rows // 1_000_000}m_k{args.k}.parquet"
    runs = []
    for _ in range(args.repeat):
        before = load()
        cmd = [
            "/usr/bin/time",
            "-v",
            sys.executable,
            __file__,
            "scale-run",
            "--input",
            str(data),
            "--output",
            str(out),
            "--k",
            str(args.k),
            "--mode",
            args.mode,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
        h, m, s = (float(g) if g else 0.0 for g in wall.groups())  # type: ignore[union-attr]
        peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        runs.append(
            {
                "rows": args.rows,
                "k": args.k,
                "mode": args.mode,
                "wall_s": round(h * 3600 + m * 60 + s, 2),
                "peak_mb": peak // 1024,
                "load_before": round(before, 1),
                **report,
            }
        )
        print(runs[-1], flush=True)
    (RESULTS / "mondrian_scale.json").write_text(json.dumps(runs, indent=1))
    section(
        "scale",
        f"`python benchmarks/mondrian_bench.py scale --rows {args.rows} --k {args.k} --repeat {args.repeat}` "
        "(each run: `/usr/bin/time -v python benchmarks/mondrian_bench.py scale-run ...`; Parquet "
        f"in, verified Parquet out)\n\n{md_table(runs)}",
    )


def section(name: str, body: str) -> None:
    """Replace one section of benchmarks/results/mondrian.md."""
    replace_section(RESULTS / "mondrian.md", "Mondrian and Datafly benchmarks", name, body, ("adult", "peers", "scale"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("adult")
    a.add_argument("--k", type=int, nargs="+", default=[2, 5, 10, 25, 50, 100])
    a.add_argument("--repeat", type=int, default=2)
    p = sub.add_parser("peers")
    p.add_argument("--note", default="", help="a sentence added to the results section")
    p.add_argument("--repeat", type=int, default=3, help="polars_anon runs per setting (best of)")
    s = sub.add_parser("scale")
    s.add_argument("--rows", type=int, default=15_000_000)
    s.add_argument("--k", type=int, default=10)
    s.add_argument("--mode", default="strict")
    s.add_argument("--repeat", type=int, default=2)
    r = sub.add_parser("scale-run")
    r.add_argument("--input", required=True)
    r.add_argument("--output", required=True)
    r.add_argument("--k", type=int, default=10)
    r.add_argument("--mode", default="strict")
    args = parser.parse_args()
    {"adult": cmd_adult, "peers": cmd_peers, "scale": cmd_scale, "scale-run": cmd_scale_run}[args.command](args)


if __name__ == "__main__":
    main()
