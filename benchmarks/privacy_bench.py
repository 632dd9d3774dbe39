"""Evidence for the privacy models (issue 13): what enforcing them costs, at Adult and voter-register scale.

    python benchmarks/privacy_bench.py adult    # Adult grid -> results/privacy_adult.csv, .md
                                                # (one process per method and attribute)
    python benchmarks/privacy_bench.py voters   # 15M register, fulldomain and greedy,
                                                # k=10 vs k=10 + recursive (3,2) on party
    python benchmarks/privacy_bench.py risk     # risk analysis of the 15M register, input and output

Every case runs in a fresh process (its peak memory is its own); each row records the
load average. The register is ``polars_anon.demo.write_rows(rows, seed=0)``, kept in
benchmarks/data/ (not committed).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

import polars_anon as pa

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult"
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT / "benchmarks" / "data"
QIDS8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
METHODS = ["fulldomain", "datafly", "greedy", "mondrian"]
KS = [2, 5, 10, 20]
VOTERS = int(os.environ.get("PRIVACY_BENCH_ROWS", "15000000"))  # a smaller register for a quick try


def peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def subcase(*args: str) -> Any:
    """Run ``privacy_bench.py _case ...`` in a fresh process; its last JSON line ({"error": ...} on failure)."""
    out = subprocess.run([sys.executable, __file__, "_case", *args], capture_output=True, text=True, check=False)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- Adult
def _models(spec: str, sensitive: str, hs: dict) -> list:
    if spec == "k-only":
        return []
    kind, value = spec.split("=")
    if kind in ("distinct", "entropy"):
        return [pa.LDiversity(sensitive, l=int(value), variant=kind)]
    distance = "equal" if kind == "t-equal" else "hierarchical"
    return [
        pa.TCloseness(
            sensitive,
            t=float(value),
            distance=distance,
            hierarchy=hs.get(sensitive) if distance == "hierarchical" else None,
        )
    ]


SPECS = [
    "k-only",
    "distinct=2",
    "distinct=3",
    "entropy=2",
    "entropy=3",
    "t-equal=0.1",
    "t-equal=0.2",
    "t-hierarchical=0.1",
    "t-hierarchical=0.2",
]


def case_adult(method: str, sensitive: str) -> list[dict]:
    """Every k and model of the grid for one method and sensitive attribute.

    One process; time = anonymize + collect.
    """
    qids = [q for q in QIDS8 if q != sensitive]
    df = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    hs = {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in [*qids, sensitive]}
    others = [c for c in df.columns if c not in qids and c != sensitive]
    rows = []
    for k in KS:
        for spec in SPECS:
            start = time.perf_counter()
            row = {"method": method, "k": k, "sensitive": sensitive, "models": spec}
            try:
                r = pa.anonymize(
                    df,
                    qids=qids,
                    hierarchies={q: hs[q] for q in qids},
                    k=k,
                    method=method,
                    sensitive=sensitive,
                    insensitive=others,
                    privacy=_models(spec, sensitive, hs),
                )
                out = r.collect()
            except pa.InfeasibleError as exc:
                rows.append(
                    row
                    | {
                        "seconds": None,
                        "ncp": None,
                        "homogeneity": None,
                        "n_classes": None,
                        "suppressed": None,
                        "note": str(exc)[:160],
                        "load": load(),
                    }
                )
                continue
            rows.append(
                row
                | {
                    "seconds": round(time.perf_counter() - start, 3),
                    "ncp": None if r.report["loss"] is None else round(r.report["loss"], 4),
                    "homogeneity": round(pa.privacy.homogeneity_rate(out, qids, sensitive), 4),
                    "n_classes": r.report["n_classes"],
                    "suppressed": r.report["suppressed"],
                    "note": "",
                    "load": load(),
                }
            )
    return rows


def adult() -> None:
    rows = []
    for sensitive in ("salary-class", "occupation"):
        for method in METHODS:
            part = subcase("adult", method, sensitive)
            if isinstance(part, dict):  # an error
                raise SystemExit(f"adult {method} {sensitive}: {part}")
            for row in part:
                print(json.dumps(row), flush=True)
            rows += part
    frame = pl.DataFrame(rows, infer_schema_length=None)
    frame.write_csv(RESULTS / "privacy_adult.csv")
    _adult_markdown(frame)


def _adult_markdown(frame: pl.DataFrame) -> None:
    lines = [
        "# Privacy models on Adult (benchmarks/privacy_bench.py adult)",
        "",
        "8 qids minus the sensitive attribute; time (s: anonymize and the verified collect) / "
        "average cell NCP / homogeneity rate",
        "(share of records in classes with one sensitive value). `-`: infeasible (refused upfront or "
        "no vector in budget);",
        "`salary-class` has 2 values and an entropy l of at most 1.75, so l = 3 and entropy l = 2 are refused there.",
        "",
    ]
    for sensitive in frame["sensitive"].unique(maintain_order=True):
        for method in METHODS:
            part = frame.filter((pl.col("sensitive") == sensitive) & (pl.col("method") == method))
            specs = part["models"].unique(maintain_order=True).to_list()
            lines += [
                f"## {method}, sensitive `{sensitive}`",
                "",
                "| k | " + " | ".join(specs) + " |",
                "|---" * (len(specs) + 1) + "|",
            ]
            for k in KS:
                cells = []
                for spec in specs:
                    r = part.filter((pl.col("k") == k) & (pl.col("models") == spec)).row(0, named=True)
                    cells.append(
                        "-" if r["seconds"] is None else f"{r['seconds']:.2f} / {r['ncp']} / {r['homogeneity']}"
                    )
                lines.append(f"| {k} | " + " | ".join(cells) + " |")
            lines.append("")
    loads = frame["load"].to_list()
    lines.append(f"Load average during the runs: from {loads[0]} to {loads[-1]} (2 shared cores).")
    (RESULTS / "privacy_adult.md").write_text("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- voter register
def _register() -> Path:
    from polars_anon.demo import write_rows

    path = DATA / f"voters_{VOTERS}.parquet"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        write_rows(path, VOTERS, seed=0)
    return path


def case_voters(method: str, models: str) -> dict:
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs
    from polars_anon.job import build_hierarchies

    path = _register()
    out = DATA / f"privacy_voters_{method}_{models}.parquet"
    start = time.perf_counter()
    lf = pl.scan_parquet(path)
    hs = build_hierarchies(lf, {q: demo_hierarchy_specs()[q] for q in DEMO_QIDS})
    privacy = [pa.LDiversity("party", l=2, variant="recursive", c=3.0)] if models == "recursive" else []
    r = pa.anonymize(
        lf,
        qids=DEMO_QIDS,
        hierarchies=hs,
        k=10,
        method=method,
        drop=["voter_id", "name"],
        sensitive="party",
        privacy=privacy,
    )
    rep = r.sink_parquet(out, overwrite=True, report=False)
    seconds = time.perf_counter() - start
    out.unlink()
    return {
        "method": method,
        "models": models,
        "rows": rep["n_input_rows"],
        "published_classes": rep["n_classes"],
        "suppressed": rep["suppressed"],
        "ncp": None if rep["loss"] is None else round(rep["loss"], 4),
        "end_to_end_s": round(seconds, 1),
        "peak_mb": peak_mb(),
        "load": load(),
    }


def voters() -> None:
    _register()
    rows = []
    for method in ("fulldomain", "greedy"):
        for models in ("k-only", "recursive"):
            row = subcase("voters", method, models)
            print(json.dumps(row), flush=True)
            rows.append(row)
    (RESULTS / "privacy_voters.json").write_text(json.dumps(rows, indent=2) + "\n")


def case_risk() -> dict:
    from polars_anon.demo import DEMO_QIDS, demo_hierarchy_specs
    from polars_anon.job import build_hierarchies

    path = _register()
    lf = pl.scan_parquet(path)
    start = time.perf_counter()
    before = pa.risk(lf, DEMO_QIDS, sampling_fraction=0.1)
    t_in = time.perf_counter() - start
    hs = build_hierarchies(lf, {q: demo_hierarchy_specs()[q] for q in DEMO_QIDS})
    published = lf.anon.generalize(hs, {"zip": 2, "gender": 0, "race": 1, "birth_year": 1})
    start = time.perf_counter()
    after = pa.risk(published, DEMO_QIDS, sampling_fraction=0.1)
    t_out = time.perf_counter() - start
    return {
        "rows": before["n_rows"],
        "input_seconds": round(t_in, 2),
        "output_seconds": round(t_out, 2),
        "input_classes": before["n_classes"],
        "output_classes": after["n_classes"],
        "input_prosecutor": before["prosecutor"],
        "output_prosecutor": after["prosecutor"],
        "input_uniqueness": before["population_uniqueness"],
        "output_uniqueness": after["population_uniqueness"],
        "peak_mb": peak_mb(),
        "load": load(),
    }


def risk() -> None:
    _register()
    row = subcase("risk")
    print(json.dumps(row, indent=2), flush=True)
    (RESULTS / "privacy_risk_voters.json").write_text(json.dumps(row, indent=2) + "\n")


if __name__ == "__main__":
    what, *args = sys.argv[1:] or ["adult"]
    if what == "_case":
        kind, *rest = args
        if kind == "adult":
            result = case_adult(rest[0], rest[1])
        elif kind == "voters":
            result = case_voters(rest[0], rest[1])
        else:
            result = case_risk()
        print(json.dumps(result))
    else:
        {"adult": adult, "voters": voters, "risk": risk}[what]()
