"""Run the Python peers (anonypy's Mondrian, anjana's k-anonymity) on ARX Adult.

Runs inside the benchmark's own throwaway environment, never the project's:

    python -m venv /tmp/peers && /tmp/peers/bin/pip install anonypy anjana pandas pyarrow
    /tmp/peers/bin/python benchmarks/mondrian_peers.py --adult ../shared/data/adult --out benchmarks/data/peers

Writes one Parquet per (tool, k) with one row per published record (anonypy's
aggregated rows are expanded by their count) and ``timings.json``. The NCP of
each output is computed by benchmarks/mondrian_bench.py with polars_anon.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
SENSITIVE = "salary-class"


def run_anonypy(df: pd.DataFrame, k: int) -> tuple[pd.DataFrame, float]:
    from anonypy import Preserver

    data = df.copy()
    data["age"] = data["age"].astype(int)
    for c in QIDS + [SENSITIVE]:
        if c != "age":
            data[c] = data[c].astype("category")
    start = time.perf_counter()
    rows = Preserver(data, QIDS, SENSITIVE).anonymize_k_anonymity(k)
    seconds = time.perf_counter() - start
    out = pd.DataFrame(rows)
    out = out.loc[out.index.repeat(out["count"])].drop(columns="count").reset_index(drop=True)
    return out.astype(str), seconds


def run_anjana(df: pd.DataFrame, k: int, adult: Path) -> tuple[pd.DataFrame, float]:
    from anjana.anonymity import k_anonymity

    hierarchies = {
        q: dict(pd.read_csv(adult / f"adult_hierarchy_{q}.csv", sep=";", header=None, dtype=str)) for q in QIDS
    }
    start = time.perf_counter()
    out = k_anonymity(df.copy(), [], QIDS, k, 0, hierarchies)
    seconds = time.perf_counter() - start
    return out.astype(str), seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adult", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--k", type=int, nargs="+", default=[2, 10, 100])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    df = pd.read_csv(args.adult / "adult.csv", sep=";", dtype=str)
    timings = []
    for k in args.k:
        for tool in ("anonypy", "anjana"):
            load = os.getloadavg()[0]  # the machine is shared: recorded with each timing
            out, seconds = run_anonypy(df, k) if tool == "anonypy" else run_anjana(df, k, args.adult)
            out.to_parquet(args.out / f"{tool}_k{k}.parquet")
            timings.append(
                {"tool": tool, "k": k, "seconds": round(seconds, 3), "rows": len(out), "load": round(load, 1)}
            )
            print(timings[-1], flush=True)
    (args.out / "timings.json").write_text(json.dumps(timings, indent=1))


if __name__ == "__main__":
    main()
