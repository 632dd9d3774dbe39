"""Speed of the SDC toolkit (`pa.sdc`) on a synthetic register with sampling weights.

The register: `--rows` records, five categorical keys (region 40, sex 2, age band 18, education 8,
household size 6 categories, drawn with skewed frequencies), a sampling weight in [50, 150], and 2% of
the education cells missing. Measured, one after the other in one process: frequency counts (missing as
a category and as wildcards), exact individual risk and global risk, local suppression at k = 3 and 5
(cells suppressed, and a re-check that every wildcard fk >= k), SUDA2 on the five keys, invariant PRAM
of one key. Wall seconds per step; the process's peak RSS after all steps (`ru_maxrss`, Linux: KiB).
Writes `benchmarks/results/sdc.md` (or `--out`). Say the load (`/proc/loadavg`, printed) with the figures.

    python benchmarks/sdc_bench.py --rows 100000 --rows 1000000
    python benchmarks/sdc_bench.py --quick          # 20,000 rows, the smoke test's run
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import polars as pl

from polars_anon import sdc

KEYS = ["region", "sex", "age", "edu", "hhsize"]
QUICK_ROWS = 20_000
RESULTS = Path(__file__).resolve().parent / "results"


def register(rows: int, seed: int = 0) -> pl.DataFrame:
    """The synthetic register (skewed categories, weights, 2% of `edu` missing)."""
    rng = np.random.default_rng(seed)

    def skewed(n_cat: int) -> np.ndarray:
        p = 1.0 / np.arange(1, n_cat + 1)
        return rng.choice(n_cat, size=rows, p=p / p.sum())

    edu = skewed(8).astype(np.float64)
    edu[rng.random(rows) < 0.02] = np.nan
    return pl.DataFrame(
        {"region": skewed(40), "sex": rng.integers(0, 2, rows), "age": skewed(18), "edu": edu,
         "hhsize": skewed(6), "w": rng.uniform(50, 150, rows)}
    ).with_columns(pl.col("edu").fill_nan(None).cast(pl.Int64))  # fmt: skip


def run(rows: int) -> dict[str, float | int]:
    """Time each step on a register of `rows` records."""
    df = register(rows)
    fig: dict[str, float | int] = {"rows": rows}

    def timed(name: str, fn):
        t = time.perf_counter()
        out = fn()
        fig[name] = round(time.perf_counter() - t, 3)
        return out

    timed("freq_category_s", lambda: sdc.frequencies(df, KEYS, "w").collect())
    timed("freq_wildcard_s", lambda: sdc.frequencies(df, KEYS, "w", missing="wildcard").collect())
    risk = timed("risk_exact_s", lambda: sdc.global_risk(df, KEYS, "w", method="exact"))
    fig["global_risk"] = round(risk.risk, 6)
    for k in (3, 5):
        res = timed(f"supp_k{k}_s", lambda k=k: sdc.local_suppression(df, KEYS, k))
        out = res.frame.collect()
        fig[f"supp_k{k}_cells"] = res.total
        min_fk = sdc.frequencies(out, KEYS, missing="wildcard").collect()["fk"].min()
        fig[f"supp_k{k}_min_fk"] = float(min_fk)  # type: ignore[arg-type]
    timed("suda2_s", lambda: sdc.suda2(df, KEYS).frame.collect())
    timed("pram_s", lambda: sdc.invariant_pram(df, "region", seed=1).collect())
    fig["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return fig


def table(figs: list[dict[str, float | int]], load: str) -> str:
    """The Markdown results page."""
    cols = ["rows", "freq_category_s", "freq_wildcard_s", "risk_exact_s", "supp_k3_s", "supp_k3_cells",
            "supp_k5_s", "supp_k5_cells", "suda2_s", "pram_s", "peak_rss_mib"]  # fmt: skip
    lines = ["# SDC toolkit speed (benchmarks/sdc_bench.py)", "",
             f"Load (`/proc/loadavg`) at the start: {load}. Five keys, sampling weights, 2% missing.", "",
             "| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]  # fmt: skip
    lines += ["| " + " | ".join(f"{f[c]:,}" if isinstance(f[c], int) else str(f[c]) for c in cols) + " |" for f in figs]
    checks = ", ".join(f"{f['supp_k3_min_fk']:g} (k=3) / {f['supp_k5_min_fk']:g} (k=5)" for f in figs)
    lines += ["", f"Every local-suppression output was re-checked: minimum wildcard fk {checks}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> list[dict[str, float | int]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="register size (repeatable)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS:,} rows")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for sdc.md")
    args = parser.parse_args(argv)
    sizes = [QUICK_ROWS] if args.quick or not args.rows else args.rows
    load = Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "unknown"
    print(f"load: {load}")
    figs = []
    for rows in sizes:
        figs.append(run(rows))
        print(figs[-1])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sdc.md").write_text(table(figs, load))
    return figs


if __name__ == "__main__":
    main()
