"""Time the demo end to end (generate, aggregate, search, write, independent check).

Runs ``polars-anon demo --rows N`` under ``/usr/bin/time -v`` for each size and
writes wall time and peak resident memory to benchmarks/results/demo.md.

    python benchmarks/demo_bench.py [--rows 1000000 15000000] [--method fulldomain]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def run(rows: int, method: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["/usr/bin/time", "-v", "polars-anon", "demo", "--rows", str(rows), "--out", tmp, "--method", method]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
        h, m, s = (float(g) if g else 0.0 for g in wall.groups())  # type: ignore[union-attr]
        peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
        report = json.loads((Path(tmp) / "report.json").read_text())
    return {
        "rows": rows,
        "method": method,
        "wall_s": round(h * 3600 + m * 60 + s, 2),
        "peak_mb": peak // 1024,
        "classes": report["n_classes"],
        "min_class": report["min_class_size"],
        "levels": report["details"].get("levels"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 15_000_000])
    ap.add_argument("--method", default="fulldomain")
    args = ap.parse_args()
    lines = [
        "| rows | method | wall (s) | peak RSS (MB) | classes | min class | levels |",
        "|---|---|---|---|---|---|---|",
    ]
    for rows in args.rows:
        r = run(rows, args.method)
        print(r)
        lines.append(
            f"| {r['rows']:,} | {r['method']} | {r['wall_s']} | {r['peak_mb']} | {r['classes']} | "
            f"{r['min_class']} | {r['levels']} |"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"demo_{args.method}.md"
    out.write_text("# polars-anon demo, end to end (`python benchmarks/demo_bench.py`)\n\n" + "\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
