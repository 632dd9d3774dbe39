"""Cross-check the privacy models against pycanon (an independent checker) on Adult and random tables.

    python benchmarks/pycanon_crosscheck.py      # -> results/pycanon_crosscheck.json, .md

pycanon pins old numpy, pandas and scipy, so it lives in its own virtual environment
(benchmarks/data/pycanon-venv, created on first run with ``pip install pycanon==1.3.6``);
it reads each table as CSV and prints its figures as JSON. Ours come from
:func:`polars_anon.privacy.evaluate.class_measures` (the table itself as reference).

Readings compared (pycanon's table-level figures):
- distinct l: the fewest distinct values in a class (equal);
- entropy l: pycanon reports ``int(min exp(entropy))`` (we compare our minimum, floored);
- t-closeness: the largest EMD, ordered distance for numeric attributes, equal for strings;
- basic β-likeness and δ-disclosure: the largest measure (natural log for δ).
Not compared, as pycanon 1.3.6 computes other figures: enhanced β-likeness (it reports
``max_s min(max gain, -ln p_s)``) and recursive (c, l)-diversity (it sorts a class's counts
ascending and divides the *smallest* by the sum of the largest ones, with l the table's own
distinct l, where Machanavajjhala et al.'s r_1 is the most frequent value; our reading is
tested against the paper's definition in tests/privacy/test_privacy_papers.py).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import polars as pl

import polars_anon as pa
from polars_anon.privacy.evaluate import class_measures

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult"
DATA = ROOT / "benchmarks" / "data" / "pycanon"
VENV = ROOT / "benchmarks" / "data" / "pycanon-venv"
RESULTS = ROOT / "benchmarks" / "results"

PYCANON = r"""
import json, sys
import pandas as pd
from pycanon import anonymity as a
df = pd.read_csv(sys.argv[1])
qi, sa = json.loads(sys.argv[2]), [sys.argv[3]]
print(json.dumps({
    "k": int(a.k_anonymity(df, qi)),
    "distinct": int(a.l_diversity(df, qi, sa)),
    "entropy": int(a.entropy_l_diversity(df, qi, sa)),
    "t": float(a.t_closeness(df, qi, sa)),
    "beta_basic": float(a.basic_beta_likeness(df, qi, sa)),
    "delta": float(a.delta_disclosure(df, qi, sa)),
}))
"""


def _venv_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        venv.create(VENV, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pycanon==1.3.6"], check=True)
    return python


def ours(df: pl.DataFrame, qids: list[str], sensitive: str) -> dict:
    numeric = df[sensitive].dtype.is_numeric()

    def measures(model) -> np.ndarray:
        return class_measures(df, qids, model)["measure"].to_numpy()

    return {
        "k": int(df.group_by(qids).len()["len"].min()),
        "distinct": int(measures(pa.LDiversity(sensitive, l=1)).min()),
        "entropy": math.floor(measures(pa.LDiversity(sensitive, l=1, variant="entropy")).min() + 1e-9),
        "t": float(measures(pa.TCloseness(sensitive, t=1.0, distance="ordered" if numeric else "equal")).max()),
        "beta_basic": float(measures(pa.BetaLikeness(sensitive, beta=1.0)).max()),
        "delta": float(measures(pa.DeltaDisclosure(sensitive, delta=1.0)).max()),
    }


def tables() -> list[tuple[str, pl.DataFrame, list[str], str]]:
    out = []
    adult = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    qids = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
    hs = {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in qids}
    for k, sensitive in ((5, "salary-class"), (10, "occupation")):
        others = [c for c in adult.columns if c not in qids and c != sensitive]
        published = pa.anonymize(
            adult, qids=qids, hierarchies=hs, k=k, sensitive=sensitive, insensitive=others, method="mondrian"
        ).collect()
        out.append((f"adult mondrian k={k}, {sensitive}", published.select(*qids, sensitive), qids, sensitive))
    rng = np.random.default_rng(0)
    for i in range(3):
        n = 300
        t = pl.DataFrame(
            {
                "a": rng.integers(0, 3, n).astype(str),
                "b": rng.integers(0, 4, n).astype(str),
                "s": rng.integers(1, 8, n) if i != 1 else rng.choice(["x", "y", "z", "w"], n),
            }
        )
        out.append((f"random {i} ({'strings' if i == 1 else 'integers'})", t, ["a", "b"], "s"))
    return out


def main() -> None:
    python = _venv_python()
    DATA.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, df, qids, sensitive in tables():
        path = DATA / (name.replace(" ", "_").replace(",", "").replace("=", "") + ".csv")
        df.write_csv(path)
        theirs = json.loads(
            subprocess.run(
                [str(python), "-c", PYCANON, str(path), json.dumps(qids), sensitive],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        mine = ours(df, qids, sensitive)
        agree = {
            key: theirs[key] == mine[key]
            if isinstance(mine[key], int) or mine[key] is None or theirs[key] is None
            else math.isclose(theirs[key], mine[key], abs_tol=1e-9)
            for key in mine
        }
        rows.append({"table": name, "rows": df.height, "ours": mine, "pycanon": theirs, "agree": agree})
        print(json.dumps(rows[-1]), flush=True)
    (RESULTS / "pycanon_crosscheck.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        "# polars_anon against pycanon 1.3.6 (benchmarks/pycanon_crosscheck.py)",
        "",
        "| table | figure | ours | pycanon | agree |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        for key in r["ours"]:
            lines.append(
                f"| {r['table']} | {key} | {r['ours'][key]} | {r['pycanon'][key]} | "
                f"{'yes' if r['agree'][key] else 'NO'} |"
            )
    (RESULTS / "pycanon_crosscheck.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
