"""Time the demo end to end (generate, aggregate, search, write, independent check).

Runs the demo (``python -m polars_anon.cli demo --rows N``, the code of the checkout this script is in) under
``/usr/bin/time -v`` for each size and writes wall time, CPU seconds (user + system), peak resident memory and the
1-minute load average before and after each run to benchmarks/results/demo_<method>.md.

    python benchmarks/demo_bench.py [--rows 1000000 15000000] [--method fulldomain]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def load() -> str:
    """The 1-minute load average now."""
    return Path("/proc/loadavg").read_text().split()[0]


def run(rows: int, method: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "polars_anon.cli", "demo", "--rows", str(rows)]
        cmd += ["--out", tmp, "--method", method, "--overwrite"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        before = load()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
        after = load()
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
        h, m, s = (float(g) if g else 0.0 for g in wall.groups())  # type: ignore[union-attr]
        cpu = sum(
            float(re.findall(rf"{kind} time \(seconds\): ([\d.]+)", proc.stderr)[0]) for kind in ("User", "System")
        )
        peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
        report = json.loads((Path(tmp) / "report.json").read_text())
    return {
        "rows": rows,
        "method": method,
        "wall_s": round(h * 3600 + m * 60 + s, 2),
        "cpu_s": round(cpu, 2),
        "load": f"{before} / {after}",
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
        "| rows | method | wall (s) | CPU (s) | peak RSS (MiB) | classes | min class | levels | load before / after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rows in args.rows:
        r = run(rows, args.method)
        print(r)
        lines.append(
            f"| {r['rows']:,} | {r['method']} | {r['wall_s']} | {r['cpu_s']} | {r['peak_mb']} | {r['classes']} | "
            f"{r['min_class']} | {r['levels']} | {r['load']} |"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"demo_{args.method}.md"
    head = f"# polars-anon demo, end to end (`python benchmarks/demo_bench.py --method {args.method}`)\n\n"
    note = (
        "Each run one process under `/usr/bin/time -v` (generate the register, aggregate, anonymize, write the"
        " output, the report and its HTML page, re-read and check the written file); CPU = user + system seconds;"
        " 2 cores shared with other work (1-minute load average before / after each run).\n\n"
    )
    out.write_text(head + note + "\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
