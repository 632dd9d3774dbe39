"""Top-down local recoding: against our other methods on every ARX dataset, and at 15M rows.

    python benchmarks/topdown_bench.py evidence [--datasets ...] [--k 2 5 10 20 50 100]
    python benchmarks/topdown_bench.py scale [--rows 15000000] [--repeat 2]   # polars-anon demo under /usr/bin/time -v

Results: benchmarks/results/topdown.md (one section per command) and topdown_evidence.csv.
Every figure carries the 1-minute load average when its run started (2 cores, shared).
Against ARX's local recoding (both outputs scored by one scorer): ``benchmarks/local_recoding_bench.py``.

Measures (per run, over the input rows; a suppressed row counts 1 per cell):

- ``avg_cell_ncp``: the average cell NCP, the report's ``loss``: the mean over
  quasi-identifier cells of ``(nl(v) - 1) / (nl(root) - 1)`` for the published node v
  (nl: leaves under a node). For Mondrian published as ranges and sets, the same count
  of leaves for what the label covers: a range ``[lo-hi]`` covers the hierarchy leaves
  from lo to hi in leaf order, a set its members.
- ``class_span_ncp``: the spread of the original values of each class, whatever is
  published: per class and qid, ``(r_max - r_min) / (nl(root) - 1)`` where r is the rank
  of the original value among the hierarchy's leaves in depth-first order, averaged
  over cells. It is what the class would cost published as the range of its values in
  leaf order; at most ``avg_cell_ncp`` for hierarchy nodes (a node covers every leaf
  between its class's extremes) and equal to it for ranges.
- ``seconds``: ``pa.anonymize(...).collect()`` in this process (aggregates, method,
  report, publishing and the independent check).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

import polars_anon as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets
from every_method import rangeset, time_v
from sections import replace_section

RESULTS = Path(__file__).resolve().parent / "results"
VARIANTS = {
    "topdown": ("topdown", {}),
    "greedy-nllm": ("greedy", {"metric": "nllm"}),
    "greedy-ncp": ("greedy", {"metric": "ncp"}),
    "mondrian-hierarchy": ("mondrian", {"publish": "hierarchy"}),
    "mondrian-rangeset": ("mondrian", {"publish": "rangeset"}),
    "fulldomain": ("fulldomain", {}),
}
ROW = "__bench_row"


def load() -> float:
    return os.getloadavg()[0]


def _ranks(hs: dict[str, pa.Hierarchy]) -> dict[str, pl.DataFrame]:
    """Per qid: label -> rank among the hierarchy's leaves (depth-first order)."""
    return {q: pl.DataFrame({q: h.leaf_labels, f"{q}__rank": range(h.n_leaves)}) for q, h in hs.items()}


def spans(
    df: pl.DataFrame, out: pl.DataFrame, qids: list[str], hs: dict[str, pa.Hierarchy], publish: dict | None
) -> tuple[float, float | None]:
    """``(class_span_ncp, leaf-count NCP of ranges and sets)`` of a published table (module docstring).

    `df` and `out` carry the row id ``ROW``; `publish` maps qid -> "range" / "set" for
    Mondrian published as ranges and sets (None otherwise: the second value is None).
    """
    pub = out.select(ROW, *[pl.col(q).alias(f"{q}__pub") for q in qids])
    orig = df.select(ROW, *qids)
    for q, table in _ranks(hs).items():
        orig = orig.join(table, on=q, how="left")
    rows = pub.join(orig, on=ROW, how="inner")
    keys = [f"{q}__pub" for q in qids]
    aggs = []
    for q in qids:
        rank = pl.col(f"{q}__rank")
        aggs += [(rank.max() - rank.min()).alias(f"{q}__span"), (rank.n_unique() - 1).alias(f"{q}__distinct")]
    classes = rows.group_by(keys).agg(pl.len().alias("n"), *aggs)
    n_cells = df.height * len(qids)
    suppressed = (df.height - out.height) * len(qids)
    span_total = sum(float((classes["n"] * classes[f"{q}__span"]).sum()) / max(hs[q].n_leaves - 1, 1) for q in qids)
    rangeset_ncp = None
    if publish is not None:
        total = 0.0
        for q in qids:
            col = f"{q}__span" if publish[q] == "range" else f"{q}__distinct"
            total += float((classes["n"] * classes[col]).sum()) / max(hs[q].n_leaves - 1, 1)
        rangeset_ncp = (total + suppressed) / n_cells
    return (span_total + suppressed) / n_cells, rangeset_ncp


def run_variant(df: pl.DataFrame, qids: list[str], hs: dict[str, pa.Hierarchy], variant: str, k: int) -> dict:
    method, opts = VARIANTS[variant]
    publish = None
    if opts.get("publish") == "rangeset":
        publish = rangeset(df, qids, hs)
        opts = {"publish": publish}
    data = df.select(qids).with_row_index(ROW)
    before = load()
    start = time.perf_counter()
    try:
        result = pa.anonymize(data, hierarchies=hs, k=k, method=method, insensitive=ROW, **opts)
        out = result.collect()
    except pa.errors.AnonError as exc:
        return {"variant": variant, "k": k, "load": round(before, 1), "note": f"{type(exc).__name__}: {exc}"[:120]}
    seconds = time.perf_counter() - start
    span, rs = spans(data, out, qids, hs, publish)
    ncp = result.report["loss"] if publish is None else rs
    return {
        "variant": variant,
        "k": k,
        "seconds": round(seconds, 2),
        "load": round(before, 1),
        "avg_cell_ncp": None if ncp is None else round(ncp, 4),
        "class_span_ncp": round(span, 4),
        "suppressed": result.report["suppressed"],
        "classes": result.report.get("n_classes"),
        "note": "",
    }


def md_table(rows: list[dict], cols: list[str]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join("" if r.get(c) is None else str(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def section(name: str, body: str) -> None:
    """Replace one section of benchmarks/results/topdown.md."""
    order = ["scale", *[f"evidence: {n}" for n in datasets.NAMES]]
    replace_section(RESULTS / "topdown.md", 'Top-down local recoding (method="topdown")', name, body, order)


def cmd_evidence(args: argparse.Namespace) -> None:
    all_rows = []
    for name in args.datasets:
        df, qids, hs = datasets.load(name)
        rows = []
        for k in args.k:
            for variant in args.variants:
                row = {"dataset": name, **run_variant(df, qids, hs, variant, k)}
                rows.append(row)
                print(row, flush=True)
        all_rows += rows
        cols = ["k", "variant", "seconds", "load", "avg_cell_ncp", "class_span_ncp", "suppressed", "classes", "note"]
        section(
            f"evidence: {name}",
            f"`python benchmarks/topdown_bench.py evidence --datasets {name}` ({df.height} rows, qids {qids}; "
            "avg_cell_ncp and class_span_ncp as in the module docstring; mondrian strict)\n\n" + md_table(rows, cols),
        )
    with (RESULTS / "topdown_evidence.csv").open("w", newline="") as f:
        fields = [
            "dataset",
            "k",
            "variant",
            "seconds",
            "load",
            "avg_cell_ncp",
            "class_span_ncp",
            "suppressed",
            "classes",
            "note",
        ]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows({c: r.get(c) for c in fields} for r in all_rows)


def cmd_scale(args: argparse.Namespace) -> None:
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            before = load()
            cmd = [  # this checkout's code (time_v runs with PYTHONPATH set to it), not the installed entry point
                sys.executable,
                "-m",
                "polars_anon.cli",
                "demo",
                "--rows",
                str(args.rows),
                "--k",
                str(args.k),
                "--method",
                "topdown",
                "--out",
                tmp,
            ]
            out, wall, peak, err = time_v(cmd, 1800)
            if err or wall is None:
                raise RuntimeError(f"the demo failed: {err}")
            rep = json.loads((Path(tmp) / "report.json").read_text())
            generated = re.search(r"generated .* in ([\d.]+) s", out)
        runs.append(
            {
                "rows": args.rows,
                "k": args.k,
                "wall_s": wall,
                "peak_mb": peak,
                "load_before": round(before, 1),
                "generate_s": float(generated.group(1)) if generated else None,
                "anonymize_s": rep["seconds"],
                "method_s": rep["phases"]["method"],
                "write_verify_s": rep.get("write_seconds"),
                "classes": rep["n_classes"],
                "min_class": rep["min_class_size"],
                "loss": round(rep["loss"], 4),
            }
        )
        print(runs[-1], flush=True)
    section(
        "scale",
        f"`python benchmarks/topdown_bench.py scale --rows {args.rows} --k {args.k} --repeat {args.repeat}` "
        f"(each run: `/usr/bin/time -v polars-anon demo --rows {args.rows} --k {args.k} --method "
        "topdown`: generate the "
        "register to Parquet, aggregate, anonymize, write, verify from the written file; `wall_s` and `peak_mb` for "
        "the whole process)\n\n" + md_table(runs, list(runs[0])),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    e = sub.add_parser("evidence")
    e.add_argument("--datasets", nargs="+", default=datasets.available())
    e.add_argument("--k", type=int, nargs="+", default=[2, 5, 10, 20, 50, 100])
    e.add_argument("--variants", nargs="+", default=list(VARIANTS))
    s = sub.add_parser("scale")
    s.add_argument("--rows", type=int, default=15_000_000)
    s.add_argument("--k", type=int, default=10)
    s.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    {"evidence": cmd_evidence, "scale": cmd_scale}[args.command](args)


if __name__ == "__main__":
    main()
