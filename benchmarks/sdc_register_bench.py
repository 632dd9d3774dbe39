"""The SDC toolkit on the 15M-row voter register: frequency counts, individual risk and local suppression (k = 5).

The register is `polars_anon.demo`'s (seed 0; keys zip, gender, race, birth_year), with a sampling weight drawn
per voter from a hash of its id (uniform in [50, 150)), written once to `benchmarks/data/` (git-ignored). Each step
runs in its own process over the Parquet file (`--child`), which reports its wall seconds and its peak resident
set (`VmHWM`, MiB) and CPU seconds (user + system, the whole process: reading the file included): target under
60 s and 2 GB each.

* `frequencies`: fk and Fk per record, streamed to a Parquet file (`pa.sdc.frequencies`, missing as a category);
* `individual_risk`: the approximate individual risk per record, streamed to a Parquet file, and the global risk
  (`pa.sdc.individual_risk`);
* `local_suppression`: local suppression to k = 5 (`pa.sdc.local_suppression`), the table streamed to a Parquet
  file, the cells suppressed counted, then (not timed) the minimum wildcard fk of the written file.

    python benchmarks/sdc_register_bench.py [--rows 15000000]

Writes `benchmarks/results/sdc_register.md` (or `--out`); say the load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon import sdc
from polars_anon.demo import write_rows

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
RESULTS = ROOT / "benchmarks" / "results"
KEYS = ["zip", "gender", "race", "birth_year"]
STEPS = ["frequencies", "individual_risk", "local_suppression"]


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def register(rows: int) -> Path:
    """The register's Parquet file (written once)."""
    path = DATA / f"voters_{rows}.parquet"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        write_rows(path, rows, seed=0)
    return path


def _scan(path: Path) -> pl.LazyFrame:
    weight = (pl.col("voter_id").hash(seed=7) % 100_000).cast(pl.Float64) / 1000.0 + 50.0
    return pl.scan_parquet(path).select(*KEYS, weight.alias("w"))


def step(name: str, path: Path, out: Path) -> dict[str, Any]:
    """One step on the register at `path`; outputs go to the folder `out`."""
    lf = _scan(path)
    t = time.perf_counter()
    fig: dict[str, Any] = {}
    if name == "frequencies":
        sdc.frequencies(lf, KEYS, weight="w").select("fk", "Fk").sink_parquet(out / "freq.parquet")
    elif name == "individual_risk":
        risk = sdc.individual_risk(lf, KEYS, weight="w").select("risk")
        risk.sink_parquet(out / "risk.parquet")
        fig["global_risk"] = float(pl.scan_parquet(out / "risk.parquet").select(pl.col("risk").mean()).collect().item())
    else:
        res = sdc.local_suppression(lf, KEYS, k=5)
        res.frame.select(KEYS).sink_parquet(out / "suppressed.parquet")
        fig["cells"] = res.total
        fig["rounds"] = res.rounds
    fig["seconds"] = round(time.perf_counter() - t, 2)
    fig["peak_mib"] = _peak_mib()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    fig["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 2)  # the whole process: reading the data included
    if name == "local_suppression":  # not timed: the check of the written file
        counts = sdc.pattern_frequencies(pl.scan_parquet(out / "suppressed.parquet"), KEYS, missing="wildcard")
        fig["min_wildcard_fk"] = float(counts["fk"].min())  # type: ignore[arg-type]
    return fig


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=15_000_000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--child", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(step(args.child, args.data, args.work)))
        return {}
    path = register(args.rows)
    load = Path("/proc/loadavg").read_text().strip()
    print(f"load: {load}")
    figs: dict[str, Any] = {"rows": args.rows, "load": load}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="sdc_register_", dir=DATA) as work:
        for name in STEPS:
            cmd = [sys.executable, __file__, "--child", name, "--data", str(path), "--work", work]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
            figs[name] = json.loads(done.stdout.strip().splitlines()[-1])
            print(name, figs[name], flush=True)
    lines = [
        "# SDC toolkit on the voter register (benchmarks/sdc_register_bench.py)",
        "",
        f"{args.rows:,} rows, keys {', '.join(KEYS)}, hashed weights in [50, 150). Load (`/proc/loadavg`) at "
        f"the start: {load}. Each step in its own process; peak memory is its VmHWM.",
        "",
        "| step | seconds | CPU seconds (process) | peak MiB | result |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in STEPS:
        f = figs[name]
        extra = {k: v for k, v in f.items() if k not in ("seconds", "peak_mib", "cpu_seconds")}
        lines.append(
            f"| {name} | {f['seconds']} | {f['cpu_seconds']} | {f['peak_mib']:,} | "
            f"{json.dumps(extra) if extra else '-'} |"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sdc_register.md").write_text("\n".join(lines) + "\n")
    return figs


if __name__ == "__main__":
    main()
