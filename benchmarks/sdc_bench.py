"""The SDC toolkit (`pa.sdc`) side by side with sdcMicro on a synthetic register with sampling weights.

The register: `--rows` records, five categorical keys (region 40, sex 2, age band 18, education 8, household size
6 categories, drawn with skewed frequencies), a sampling weight in [50, 150], and 2% of the education cells missing.
Steps (missing key values read as wildcards, sdcMicro's reading, wherever it matters):

* `freq_risk`: frequency counts fk/Fk and the approximate individual risk (sdcMicro: `freqCalc` + `indivRisk`);
* `suda2`: SUDA2 scores on the five keys (sdcMicro: `suda2`);
* `supp_k3`, `supp_k5`: local suppression to k = 3 and 5, cells suppressed (sdcMicro: `localSuppression`);
  every output of ours is re-checked (minimum wildcard fk);
* `pram`: invariant PRAM of `region` (sdcMicro: `pram`, pd = 0.8, alpha = 0.5).

Each step runs in its own process (ours: this script with `--child`; sdcMicro: `Rscript` on a script written to a
temporary folder at run time), after the register was read from a file in that process (Parquet for ours, CSV
through data.table for sdcMicro; reading is not timed). Wall seconds of the step; peak memory is the process's
`VmHWM` (peak resident set, MiB) at the end, reading the data included. The numbers are compared: individual risks
and SUDA2 scores record by record (largest absolute difference), cells suppressed per k.

sdcMicro is used only when an `Rscript` is given (`--rscript` or `SDCMICRO_RSCRIPT`) with the library folder where
sdcMicro is installed (`--r-lib` or `SDCMICRO_LIB`); nothing here builds it. A step of sdcMicro that runs past
`--timeout` seconds is stopped and reported as such.

    python benchmarks/sdc_bench.py --rows 100000 --rows 1000000 --rscript Rscript --r-lib /path/to/rlib
    python benchmarks/sdc_bench.py --rows 1000000 --steps suda2 --rscript Rscript --r-lib /path/to/rlib --name NAME
    python benchmarks/sdc_bench.py --quick          # 20,000 rows, ours only, in this process (the smoke test)

Writes `benchmarks/results/sdc.md` and `sdc.json` (or under `--out`, named `--name`). Say the load (`/proc/loadavg`,
printed).
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

import numpy as np
import polars as pl

from polars_anon import sdc

KEYS = ["region", "sex", "age", "edu", "hhsize"]
QUICK_ROWS = 20_000
RESULTS = Path(__file__).resolve().parent / "results"
STEPS = ["freq_risk", "suda2", "supp_k3", "supp_k5", "pram"]

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
step <- args[1]; data <- args[2]; out <- args[3]; lib <- args[4]
.libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages({library(sdcMicro); library(data.table)})
dat <- as.data.frame(fread(data))
keys <- c("region", "sex", "age", "edu", "hhsize")
peak <- function() {
  s <- readLines("/proc/self/status"); as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[grepl("^VmHWM", s)])) / 1024
}
res <- list()
t0 <- Sys.time()
pt <- proc.time()
if (step == "freq_risk") {
  f <- freqCalc(dat, keyVars = keys, w = "w")
  r <- indivRisk(f)
  secs <- as.numeric(Sys.time() - t0, units = "secs")
  fwrite(data.table(rk = r$rk, fk = f$fk, Fk = f$Fk), file.path(out, "r_freq_risk.csv"))
} else if (step == "suda2") {
  s <- suda2(dat[, keys], variables = keys)
  secs <- as.numeric(Sys.time() - t0, units = "secs")
  fwrite(data.table(score = s$score, dis = s$disScore), file.path(out, "r_suda2.csv"))
} else if (step == "supp_k3" || step == "supp_k5") {
  k <- if (step == "supp_k3") 3 else 5
  ls <- localSuppression(dat, keyVars = keys, k = k)
  secs <- as.numeric(Sys.time() - t0, units = "secs")
  res$cells <- sum(unlist(ls$supps))
  x <- as.data.frame(ls$xAnon)[, keys]
  f2 <- freqCalc(x, keyVars = keys)
  res$min_fk <- min(f2$fk)
} else if (step == "pram") {
  dat$region <- as.factor(dat$region)
  set.seed(1)
  p <- pram(dat, variables = "region")
  secs <- as.numeric(Sys.time() - t0, units = "secs")
}
res$seconds <- secs
res$cpu_seconds <- sum((proc.time() - pt)[c(1, 2)])
res$peak_mib <- peak()
cat(paste0(names(res), "=", unlist(res), collapse = "\n"), "\n", file = file.path(out, paste0("r_", step, ".txt")))
"""


def register(rows: int, seed: int = 0) -> pl.DataFrame:
    """The synthetic register (skewed categories, weights, 2% of `edu` missing)."""
    rng = np.random.default_rng(seed)

    def skewed(n_cat: int) -> np.ndarray:
        p = 1.0 / np.arange(1, n_cat + 1)
        return rng.choice(n_cat, size=rows, p=p / p.sum())

    edu = skewed(8).astype(np.float64)
    edu[rng.random(rows) < 0.02] = np.nan
    return pl.DataFrame(
        {
            "region": skewed(40),
            "sex": rng.integers(0, 2, rows),
            "age": skewed(18),
            "edu": edu,
            "hhsize": skewed(6),
            "w": rng.uniform(50, 150, rows),
        }
    ).with_columns(pl.col("edu").fill_nan(None).cast(pl.Int64))


def _peak_mib() -> float:
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def ours(step: str, data: pl.LazyFrame, out: Path | None) -> dict[str, Any]:
    """One step of ours on `data`; writes per-record numbers to `out` for the comparison."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    fig: dict[str, Any] = {}
    if step == "freq_risk":
        risk = sdc.individual_risk(data, KEYS, weight="w", method="approx", missing="wildcard")
        frame = risk.select("risk", "fk", "Fk").collect()
        fig["seconds"] = time.perf_counter() - t
        if out is not None:
            frame.write_parquet(out / "py_freq_risk.parquet")
    elif step == "suda2":
        frame = sdc.suda2(data, KEYS).frame.select("suda_score", "dis_suda_score").collect()
        fig["seconds"] = time.perf_counter() - t
        if out is not None:
            frame.write_parquet(out / "py_suda2.parquet")
    elif step in ("supp_k3", "supp_k5"):
        k = int(step[-1])
        res = sdc.local_suppression(data, KEYS, k)
        table = res.frame.collect()
        fig["seconds"] = time.perf_counter() - t
        fig["cells"] = res.total
        fig["min_fk"] = float(sdc.frequencies(table, KEYS, missing="wildcard").collect()["fk"].min())  # type: ignore[arg-type]
    else:
        sdc.invariant_pram(data, "region", seed=1).collect()
        fig["seconds"] = time.perf_counter() - t
    fig["seconds"] = round(fig["seconds"], 3)
    fig["peak_mib"] = _peak_mib()
    usage = resource.getrusage(resource.RUSAGE_SELF)  # the step's CPU time (as R's proc.time around the step)
    fig["cpu_seconds"] = round(usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime, 2)
    return fig


def _child(step: str, data: Path, out: Path) -> None:
    fig = ours(step, pl.scan_parquet(data), out)
    (out / f"py_{step}.json").write_text(json.dumps(fig))


def _run_ours(step: str, folder: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", step, "--data", str(folder / "reg.parquet"), "--out", str(folder)]
    root = str(Path(__file__).resolve().parents[1])  # this checkout's package, not an installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    subprocess.run(cmd, check=True, env=env)
    return json.loads((folder / f"py_{step}.json").read_text())


def _run_r(step: str, folder: Path, rscript: str, lib: str, timeout: float) -> dict[str, Any]:
    script = folder / "bench.R"
    script.write_text(R_SCRIPT)
    try:
        subprocess.run(
            [rscript, str(script), step, str(folder / "reg.csv"), str(folder), lib],
            check=True,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    except subprocess.TimeoutExpired:
        return {"seconds": f"> {timeout:g} (stopped)", "peak_mib": None}
    fig: dict[str, Any] = {}
    for line in (folder / f"r_{step}.txt").read_text().split():
        name, _, value = line.partition("=")
        fig[name] = round(float(value), 3)
    return fig


def _compare(step: str, folder: Path) -> dict[str, float]:
    """Largest differences of the per-record numbers of both tools (empty when one is missing): individual risk
    (absolute), Fk (relative: sums of weights in another order), SUDA score (absolute), DIS-SUDA score (relative)."""
    files = {"freq_risk": ("py_freq_risk.parquet", "r_freq_risk.csv"), "suda2": ("py_suda2.parquet", "r_suda2.csv")}
    if step not in files or not all((folder / f).exists() for f in files[step]):
        return {}
    py = pl.read_parquet(folder / files[step][0])
    r = pl.read_csv(folder / files[step][1], infer_schema_length=None).cast(pl.Float64)

    def biggest(a: pl.Series, b: pl.Series, relative: bool = False) -> float:
        d = (a - b).abs()
        return float((d / b.abs().clip(1e-300) if relative else d).max())  # type: ignore[arg-type]

    if step == "freq_risk":
        return {
            "risk_max_abs_diff": biggest(py["risk"], r["rk"]),
            "fk_max_abs_diff": biggest(py["fk"], r["fk"]),
            "Fk_max_rel_diff": biggest(py["Fk"], r["Fk"], relative=True),
        }
    return {
        "score_max_abs_diff": biggest(py["suda_score"], r["score"]),
        "dis_max_rel_diff": biggest(py["dis_suda_score"], r["dis"], relative=True),
    }


def run(
    rows: int,
    rscript: str | None = None,
    lib: str = "",
    timeout: float = 1800.0,
    stopped: dict[str, int] | None = None,
    steps: list[str] | None = None,
) -> dict[str, Any]:
    """Every step (or those of `steps`) on a register of `rows` records: ours in child processes, then sdcMicro's
    when `rscript`. A step of sdcMicro stopped at a smaller size (`stopped`: step -> rows) is not run again."""
    stopped = {} if stopped is None else stopped
    fig: dict[str, Any] = {"rows": rows}
    with tempfile.TemporaryDirectory(prefix="sdc_bench_") as tmp:
        folder = Path(tmp)
        df = register(rows)
        df.write_parquet(folder / "reg.parquet")
        if rscript:
            df.write_csv(folder / "reg.csv", null_value="NA")
        del df
        for step in steps or STEPS:
            mine = _run_ours(step, folder)
            for key, value in mine.items():
                fig[f"{step}_{key}"] = value
            if rscript and step in stopped:
                why = f"stopped at {stopped[step]:,} rows" if stopped[step] else "skipped: --r-skip"
                fig[f"r_{step}_seconds"] = f"not run ({why})"
            elif rscript:
                theirs = _run_r(step, folder, rscript, lib, timeout)
                for key, value in theirs.items():
                    fig[f"r_{step}_{key}"] = value
                if isinstance(theirs["seconds"], str):
                    stopped[step] = rows
                for key, value in _compare(step, folder).items():
                    fig[f"{step}_{key}"] = value
            print(step, {k: v for k, v in fig.items() if k.startswith((step, f"r_{step}"))}, flush=True)
    return fig


def quick(rows: int) -> dict[str, Any]:
    """Ours only, in this process (the smoke test)."""
    data = register(rows).lazy()
    fig: dict[str, Any] = {"rows": rows}
    for step in STEPS:
        for key, value in ours(step, data, None).items():
            fig[f"{step}_{key}"] = value
    fig["supp_k3_cells"], fig["supp_k5_cells"] = fig.pop("supp_k3_cells"), fig.pop("supp_k5_cells")
    fig["supp_k3_min_fk"], fig["supp_k5_min_fk"] = fig["supp_k3_min_fk"], fig["supp_k5_min_fk"]
    return fig


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _diffs(f: dict[str, Any], step: str) -> str:
    names = {
        "risk_max_abs_diff": "risk abs",
        "fk_max_abs_diff": "fk abs",
        "Fk_max_rel_diff": "Fk rel",
        "score_max_abs_diff": "score abs",
        "dis_max_rel_diff": "DIS rel",
    }
    got = [f"{label} {f[f'{step}_{key}']:.2g}" for key, label in names.items() if f"{step}_{key}" in f]
    return ", ".join(got) or "-"


def table(figs: list[dict[str, Any]], load: str) -> str:
    """The Markdown results page."""
    lines = [
        "# SDC toolkit against sdcMicro (benchmarks/sdc_bench.py)",
        "",
        f"Load (`/proc/loadavg`) at the start: {load}. Five keys, sampling weights, 2% of one key missing "
        "(wildcards). Wall seconds of each step; CPU seconds (user + system, all threads) of the step; peak "
        "memory (VmHWM, MiB) of its process, reading the data included.",
        "",
    ]
    head = [
        "rows",
        "step",
        "ours s",
        "sdcMicro s",
        "speed-up",
        "ours CPU s",
        "sdcMicro CPU s",
        "ours MiB",
        "sdcMicro MiB",
        "cells (ours / sdcMicro)",
        "numbers compared (largest difference)",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for f in figs:
        for step in [step for step in STEPS if f"{step}_seconds" in f]:
            mine, theirs = f.get(f"{step}_seconds"), f.get(f"r_{step}_seconds")
            speed = f"{theirs / mine:,.1f}x" if isinstance(theirs, float) and mine else "-"
            cells = "-"
            if step.startswith("supp"):
                cells = f"{_cell(f.get(f'{step}_cells'))} / {_cell(f.get(f'r_{step}_cells'))}"
            row = [
                _cell(f["rows"]),
                step,
                _cell(mine),
                _cell(theirs),
                speed,
                _cell(f.get(f"{step}_cpu_seconds")),
                _cell(f.get(f"r_{step}_cpu_seconds")),
                _cell(f.get(f"{step}_peak_mib")),
                _cell(f.get(f"r_{step}_peak_mib")),
                cells,
                _diffs(f, step),
            ]
            lines.append("| " + " | ".join(row) + " |")
    checks = ", ".join(
        f"{f['rows']:,} rows: {f.get('supp_k3_min_fk', '-'):g} (k=3) / {f.get('supp_k5_min_fk', '-'):g} (k=5)"
        for f in figs
        if "supp_k3_min_fk" in f
    )
    if checks:
        lines += ["", f"Every local-suppression output of ours was re-checked: minimum wildcard fk {checks}."]
    r_checks = ", ".join(
        f"{f['rows']:,} rows: {f['r_supp_k3_min_fk']:g} (k=3) / {f.get('r_supp_k5_min_fk', '-')} (k=5)"
        for f in figs
        if "r_supp_k3_min_fk" in f
    )
    if r_checks:
        lines.append(f"sdcMicro's outputs, re-checked with its own freqCalc: minimum fk {r_checks}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="register size (repeatable)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows, ours only, in this process")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    parser.add_argument("--name", default="sdc", help="results file stem (default sdc: sdc.md and sdc.json)")
    parser.add_argument("--rscript", default=os.environ.get("SDCMICRO_RSCRIPT"), help="Rscript to run sdcMicro with")
    parser.add_argument("--r-lib", default=os.environ.get("SDCMICRO_LIB", ""), help="R library holding sdcMicro")
    parser.add_argument("--timeout", type=float, default=1800.0, help="stop a step of sdcMicro after these seconds")
    parser.add_argument(
        "--r-skip", default="", help="comma-separated steps sdcMicro does not run (e.g. supp_k3,supp_k5)"
    )
    parser.add_argument("--steps", default="", help=f"comma-separated steps to run (default all: {','.join(STEPS)})")
    parser.add_argument("--child", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.data, args.out)
        return []
    load = Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "unknown"
    print(f"load: {load}")
    if args.quick or not args.rows:
        figs = [quick(QUICK_ROWS)]
    else:
        stopped: dict[str, int] = {step: 0 for step in args.r_skip.split(",") if step}
        steps = [step for step in args.steps.split(",") if step]
        unknown = sorted(set(steps) - set(STEPS))
        if unknown:
            parser.error(f"--steps: unknown step(s) {', '.join(unknown)}; the steps are {', '.join(STEPS)}")
        figs = [run(rows, args.rscript, args.r_lib, args.timeout, stopped, steps) for rows in sorted(args.rows)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.md").write_text(table(figs, load))
    (args.out / f"{args.name}.json").write_text(json.dumps({"load": load, "figures": figs}, indent=1) + "\n")
    return figs


if __name__ == "__main__":
    main()
