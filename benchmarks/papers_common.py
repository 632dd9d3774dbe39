"""What the paper-reproduction scripts share: the datasets of ../shared/data, run facts, plotting.

The loaders return the table with String columns (numbers written as numbers, so the
metrics treat them as numeric), the quasi-identifiers and the target. Data never
enter the repository: a missing file gives None and the scripts say so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"

CMC_COLS = [
    "wife_age",
    "wife_education",
    "husband_education",
    "children",
    "wife_religion",
    "wife_working",
    "husband_occupation",
    "living_standard",
    "media_exposure",
    "method",
]
ADULT_UCI_COLS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


@dataclass
class Dataset:
    """A classification table: every column String, `qids` the quasi-identifiers, `target` the class."""

    name: str
    df: pl.DataFrame
    qids: list[str]
    target: str
    unordered: list[str] = field(default_factory=list)
    """Qids without a natural order (their order is randomized, paper 003 §3.3.1)."""
    numeric: list[str] = field(default_factory=list)
    """Qids whose values are numbers (ordered by value)."""
    note: str = ""


def _strings(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(pl.all().cast(pl.String))


def bin20(values: pl.Series) -> pl.Series:
    """20 equal-width buckets over the column's range, as bucket numbers 0..19 [paper 003 §3.3.1]."""
    x = values.cast(pl.Float64)
    lo, hi = x.min(), x.max()
    if hi == lo:
        return pl.Series(values.name, ["0"] * len(values))
    b = ((x - lo) / (hi - lo) * 20).floor().clip(0, 19).cast(pl.Int64)
    return b.cast(pl.String).alias(values.name)


def _binned(df: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """Columns with more than 20 distinct values are binned into 20 buckets; others kept."""
    return df.with_columns(bin20(df[c]) for c in columns if df[c].n_unique() > 20)


def cmc() -> Dataset | None:
    """UCI Contraceptive Method Choice: paper 003's BIRTH (1,473 rows, 9 ordinal qids, 3 classes)."""
    path = DATA / "cmc" / "cmc.data"
    if not path.exists():
        return None
    df = pl.read_csv(path, has_header=False, new_columns=CMC_COLS, infer_schema=False)
    qids = CMC_COLS[:-1]
    return Dataset("birth", _binned(df, qids), qids, "method", numeric=qids, note="cmc.data; wife_age in 20 buckets")


def adult_uci() -> Dataset | None:
    """UCI adult.data without the rows holding '?' (30,162 rows), 12 qids [paper 003 §3.2 ADULT].

    The paper names 3 ordinal, 2 continuous and 7 unordered qids without listing them:
    we take every column but fnlwgt (a sampling weight) and education (education-num
    says the same), with the continuous ones in 20 buckets.
    """
    path = DATA / "adult_uci" / "adult.data"
    if not path.exists():
        return None
    df = pl.read_csv(path, has_header=False, new_columns=ADULT_UCI_COLS, infer_schema=False, separator=",")
    df = df.with_columns(pl.all().str.strip_chars()).filter(~pl.any_horizontal(pl.all() == "?"))
    unordered = ["workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
    numeric = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    qids = [c for c in ADULT_UCI_COLS if c not in ("fnlwgt", "education", "income")]
    return Dataset(
        "adult",
        _binned(df.select(*qids, "income"), numeric),
        qids,
        "income",
        unordered,
        numeric,
        "adult_uci/adult.data minus '?' rows; fnlwgt and education left out; continuous qids in 20 buckets",
    )


def framingham() -> Dataset | None:
    """Framingham extract: paper 003's HEART (the first 4,238 rows, 15 qids, TenYearCHD).

    Missing cells (645) are filled with the column median (the paper keeps all 4,238
    rows without saying how); columns with more than 20 values go in 20 buckets.
    """
    path = DATA / "framingham" / "framingham.csv"
    if not path.exists():
        return None
    df = pl.read_csv(path, null_values="NA").head(4238)
    qids = [c for c in df.columns if c != "CHD"]
    df = df.with_columns(pl.col(q).fill_null(pl.col(q).median()) for q in qids)
    df = df.with_columns(pl.col(q).cast(pl.Int64) for q in qids if df[q].dtype.is_float() and (df[q] % 1 == 0).all())
    return Dataset(
        "heart",
        _binned(_strings(df), qids),
        qids,
        "CHD",
        numeric=qids,
        note="framingham.csv first 4,238 rows; NA filled with the median; continuous qids in 20 buckets",
    )


def ring(n: int = 7400, seed: int = 0) -> Dataset:
    """Paper 003's RING, generated: two 20-dimensional Gaussians, N(0, 4 I) and N(a 1, I), a = 2 / sqrt(20).

    n / 2 rows each (balanced), every attribute in 20 buckets.
    """
    rng = np.random.default_rng(seed)
    half = n // 2
    a = 2 / np.sqrt(20)
    x = np.vstack([rng.normal(0.0, 2.0, (half, 20)), rng.normal(a, 1.0, (n - half, 20))])
    qids = [f"x{i:02d}" for i in range(20)]
    df = pl.DataFrame({q: x[:, i] for i, q in enumerate(qids)}).with_columns(
        pl.Series("cls", ["0"] * half + ["1"] * (n - half))
    )
    df = df.with_columns(bin20(df[q]) for q in qids)
    return Dataset("ring", df, qids, "cls", numeric=qids, note=f"generated, seed {seed}; 20 buckets per attribute")


def german() -> Dataset | None:
    """UCI German credit (1,000 rows), class 1 good / 2 bad."""
    path = DATA / "german_credit" / "german.data"
    if not path.exists():
        return None
    cols = [f"a{i:02d}" for i in range(1, 21)] + ["credit"]
    df = pl.read_csv(path, has_header=False, separator=" ", new_columns=cols, infer_schema=False)
    numeric = ["a02", "a05", "a08", "a11", "a13", "a16", "a18"]
    return Dataset("german", df, cols[:-1], "credit", [c for c in cols[:-1] if c not in numeric], numeric)


def heart_cleveland() -> Dataset | None:
    """UCI Heart Disease, Cleveland (303 rows; the 6 cells '?' filled with the mode), num > 0 as disease."""
    path = DATA / "heart_disease_cleveland" / "processed.cleveland.data"
    if not path.exists():
        return None
    cols = [
        "age",
        "sex",
        "cp",
        "trestbps",
        "chol",
        "fbs",
        "restecg",
        "thalach",
        "exang",
        "oldpeak",
        "slope",
        "ca",
        "thal",
        "num",
    ]
    df = pl.read_csv(path, has_header=False, new_columns=cols, infer_schema=False)
    df = df.with_columns(pl.when(pl.col(c) == "?").then(None).otherwise(pl.col(c)).alias(c) for c in cols)
    df = df.with_columns(pl.col(c).fill_null(pl.col(c).drop_nulls().mode().sort().first()) for c in cols)
    df = df.with_columns(pl.col(c).cast(pl.Float64).cast(pl.Int64).cast(pl.String) for c in cols if c != "oldpeak")
    df = df.with_columns((pl.col("num") != "0").cast(pl.Int64).cast(pl.String).alias("num"))
    numeric = ["age", "trestbps", "chol", "thalach", "oldpeak"]
    return Dataset("heart_disease", df, cols[:-1], "num", [c for c in cols[:-1] if c not in numeric], numeric)


def mammographic() -> Dataset | None:
    """UCI Mammographic masses (961 rows; '?' filled with the mode), severity."""
    path = DATA / "mammographic_masses" / "mammographic_masses.data"
    if not path.exists():
        return None
    cols = ["birads", "age", "shape", "margin", "density", "severity"]
    df = pl.read_csv(path, has_header=False, new_columns=cols, infer_schema=False)
    df = df.with_columns(pl.when(pl.col(c) == "?").then(None).otherwise(pl.col(c)).alias(c) for c in cols)
    df = df.with_columns(pl.col(c).fill_null(pl.col(c).drop_nulls().mode().sort().first()) for c in cols)
    return Dataset("mammographic", df, cols[:-1], "severity", ["shape", "margin"], ["birads", "age", "density"])


def cardiotocography() -> Dataset | None:
    """UCI Cardiotocography (2,126 rows), the 21 measured features, NSP class; None without an Excel reader."""
    path = DATA / "cardiotocography" / "CTG.xls"
    if not path.exists():
        return None
    try:
        raw = pl.read_excel(path, sheet_name="Raw Data", engine="calamine")
    except Exception:  # noqa: BLE001 - no Excel engine installed: the dataset is reported absent
        return None
    feats = [
        "LB",
        "AC",
        "FM",
        "UC",
        "ASTV",
        "MSTV",
        "ALTV",
        "MLTV",
        "DL",
        "DS",
        "DP",
        "Width",
        "Min",
        "Max",
        "Nmax",
        "Nzeros",
        "Mode",
        "Mean",
        "Median",
        "Variance",
        "Tendency",
    ]
    df = raw.select(*feats, "NSP").drop_nulls()
    df = df.with_columns(pl.col(c).cast(pl.Float64).round(3) for c in feats).with_columns(pl.col("NSP").cast(pl.Int64))
    return Dataset("cardiotocography", _strings(df), feats, "NSP", numeric=feats)


# ------------------------------------------------------------------ run facts
def parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every paper script takes: --quick, --rows, --out, --plots-only."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a small run (under 3 minutes) to benchmarks/data/quick/")
    ap.add_argument("--rows", type=int, default=None, help="sample this many rows of each dataset (with --quick)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results folder (default: benchmarks/results, --quick: benchmarks/data/quick)",
    )
    ap.add_argument("--plots-only", action="store_true", help="redraw from the CSV files already written")
    return ap


def sample(df: pl.DataFrame, rows: int | None) -> pl.DataFrame:
    """At most `rows` rows, a seeded sample (all of them when rows is None)."""
    return df if rows is None or rows >= df.height else df.sample(rows, seed=0)


class Run:
    """Wall time, CPU time and load averages of a run, for the results files."""

    def __init__(self, script: str, quick: bool, argv: list[str] | None = None) -> None:
        self.script, self.quick = script, quick
        self.argv = sys.argv[1:] if argv is None else argv
        self.start, self.cpu = time.perf_counter(), time.process_time()
        self.load_start = os.getloadavg()

    def facts(self, **extra: Any) -> dict[str, Any]:
        return {
            "command": f"python benchmarks/{self.script} " + " ".join(map(str, self.argv)),
            "quick": self.quick,
            "wall_seconds": round(time.perf_counter() - self.start, 1),
            "cpu_seconds": round(time.process_time() - self.cpu, 1),
            "load_average_start": [round(x, 2) for x in self.load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "polars": pl.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M"),
            **extra,
        }


def out_dir(quick: bool, out: Path | None = None) -> Path:
    """`out` if given, else benchmarks/results for a full run and a scratch folder (git-ignored) for --quick."""
    path = out if out is not None else RESULTS if not quick else ROOT / "benchmarks" / "data" / "quick"
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_json(path: Path, payload: dict) -> None:
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (pip install 'polars_anon[bench]')."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "legend.fontsize": 8})
    return plt


def pairwise_agreement(
    metric: np.ndarray, utility: np.ndarray, higher_is_better: bool, ties: float | None = 0.5
) -> float:
    """Share of pairs where the version with the better metric is the more useful one [paper 003 §4.1.3].

    Over every unordered pair (i, j): 1 when the metric and the utility order the
    two the same way, 0 when opposite. A pair where either ties counts `ties`
    (1/2: a coin toss; 1: a success, as ``>=`` comparisons count it; None: left
    out). Null metric or utility values are left out.
    """
    keep = ~(np.isnan(metric) | np.isnan(utility))
    m, u = metric[keep], utility[keep]
    if len(m) < 2:
        return float("nan")
    i, j = np.triu_indices(len(m), 1)
    dm = np.sign(m[i] - m[j]) * (1 if higher_is_better else -1)
    du = np.sign(u[i] - u[j])
    tie = (dm == 0) | (du == 0)
    if ties is None:
        return float((dm == du)[~tie].mean()) if (~tie).any() else float("nan")
    return float(np.where(tie, ties, (dm == du).astype(float)).mean())


def tie_share(metric: np.ndarray, utility: np.ndarray) -> float:
    """Share of the pairs of (metric, utility) points tied in the metric or in the utility."""
    keep = ~(np.isnan(metric) | np.isnan(utility))
    m, u = metric[keep], utility[keep]
    i, j = np.triu_indices(len(m), 1)
    return float(((m[i] == m[j]) | (u[i] == u[j])).mean()) if len(i) else float("nan")
