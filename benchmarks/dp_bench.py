"""Differentially private releases (SafePub): ours against ARX's on Adult, and ours on the 15M-row register.

Adult (8 quasi-identifiers, the hierarchies of ``../shared/data/adult``), ε in {0.1, 0.5, 1, 2}, δ = 1e-6, the
model's default share of ε for the search (ARX: ``setDPSearchBudget(s ε)`` for each s of ``--arx-shares``, default
0.1, its own default), utility ``loss`` (ARX: its loss metric, SafePub's
granularity; ARX walks 100 steps, ours draws once over Adult's 6,480-vector lattice), several seeds (ours:
``seed=s``; ARX draws from ``SecureRandom`` on each run). Each output is scored by ``benchmarks/scorer.py``,
one scorer for both, over *every input row* (a row not sampled or suppressed costs 1 per cell): ``loss
(leaves under node)``, the average cell loss (nl(v) - 1) / (nl(root) - 1), and SafePub's granularity
nl(v) / nl(root); plus the rows published and the time (ours: ``pa.anonymize`` + collect in this process;
ARX: its run inside the JVM from reading the CSV to the output, and the JVM's wall time).

ARX is a peer built outside the repository: pass its classpath (``cp.txt`` of ``benchmarks/peers/build_arx.sh``:
ARX's classes and jars and the compiled drivers) with ``--arx-cp`` or ``ARX_CP``; the driver
(EDDifferentialPrivacy(ε, δ), suppression limit 1, the loss metric, ``steps`` expansions of the search) is
``benchmarks/peers/ArxSafePub.java``; ``benchmarks/peers/README.md`` builds ARX and the driver. Without it only our
runs are made.

Register: ``--register 15000000`` writes the demo's voter register to ``--folder`` (deleted after), then
runs one DP job on it through the CLI in a child process: wall time, the child's CPU time (user + system: the
figure the machine's other work inflates least) and its peak RSS.

Results: ``benchmarks/results/dp.md`` (and ``dp_adult.csv``), each figure with the machine's load (``--no-write``:
printed only).

    python benchmarks/dp_bench.py --arx-cp "$(cat /work/peers/arx_build/cp.txt)" --seeds 3 --no-write
    python benchmarks/dp_bench.py --register 15000000 --folder /tmp --no-adult
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars_anon as pa  # noqa: E402
from benchmarks.scorer import GRANULARITY, LOSS, score  # noqa: E402

ADULT = ROOT.parent / "shared" / "data" / "adult"
if not ADULT.exists():
    ADULT = Path("/work/shared/data/adult")
QIDS = ["age", "education", "marital-status", "native-country", "occupation", "race", "sex", "workclass"]
EPSILONS = (0.1, 0.5, 1.0, 2.0)
DELTA = 1e-6
SHARE = pa.DifferentialPrivacy(1.0, DELTA).search_share
"""Ours: the model's default share of ε for the search."""
ARX_SHARES = (0.1,)
"""ARX: its default search budget, 0.1 ε (``--arx-shares`` for others)."""
STEPS = 100
RESULTS = ROOT / "benchmarks" / "results"


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def ours(
    df: pl.DataFrame, hierarchies: dict[str, pa.Hierarchy], epsilon: float, seed: int, share: float = SHARE
) -> dict[str, Any]:
    model = pa.DifferentialPrivacy(epsilon, DELTA, budget_for_search=share, steps=STEPS, seed=seed)
    start = time.perf_counter()
    result = pa.anonymize(df.lazy().select(QIDS), hierarchies=hierarchies, k=1, privacy=[model])
    out = result.collect()
    seconds = time.perf_counter() - start
    dp = result.report["details"]["differential_privacy"]
    scored = score(*aligned(df.height, out, hierarchies), QIDS, hierarchies)
    loss, granularity = scored[LOSS], scored[GRANULARITY]
    return {
        "tool": f"ours (search {share:g} ε)",
        "epsilon": epsilon,
        "seed": seed,
        "k": dp["k"],
        "beta": dp["beta"],
        "loss": loss,
        "granularity": granularity,
        "rows": out.height,
        "seconds": seconds,
        "wall": seconds,
        "levels": json.dumps(dp["transformation"]),
        "load": load(),
    }


def aligned(n: int, published: pl.DataFrame, hierarchies: dict[str, pa.Hierarchy]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A stand-in input and `published` padded to its `n` rows, for the scorer's row-by-row comparison.

    A differentially private release publishes its qids only, sorted (no row id to match rows on); the loss and the
    granularity of a cell depend on its published node alone, so each published label is paired with a leaf under
    it, and each of the ``n - published`` rows not published is a row published as its root (which costs what a
    suppressed row costs, 1 per cell, under both)."""
    pad = n - published.height
    original, out = {}, {}
    for q in QIDS:
        h = hierarchies[q]
        nodes = pl.DataFrame({"ancestor": range(h.n_nodes), q: h.labels})
        under = h.closure.join(nodes, on="ancestor").group_by(q).agg(pl.col("leaf").min())
        leaf = published.select(q).join(under, on=q, how="left", maintain_order="left")["leaf"].to_numpy()
        root = h.labels[0]
        original[q] = [h.labels[int(i)] for i in leaf] + [h.leaf_labels[0]] * pad
        out[q] = published[q].to_list() + [root] * pad
    return pl.DataFrame(original), pl.DataFrame(out)


def arx(
    cp: str, df: pl.DataFrame, hierarchies: dict[str, pa.Hierarchy], epsilon: float, seed: int, share: float
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.csv"
        args = [f"{q}={ADULT / f'adult_hierarchy_{q}.csv'}" for q in QIDS]
        cmd = ["java", "-Xmx2g", "-cp", cp, "ArxSafePub", str(ADULT / "adult.csv"), str(out), str(epsilon)]
        cmd += [str(DELTA), str(share * epsilon), str(STEPS), *args]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        facts = json.loads(done.stdout.strip().splitlines()[-1])
        published = pl.read_csv(out, separator=";", infer_schema=False)
    scored = score(df, published.select(QIDS), QIDS, hierarchies)
    loss, granularity = scored[LOSS], scored[GRANULARITY]
    return {
        "tool": f"arx (search {share:g} ε)",
        "epsilon": epsilon,
        "seed": seed,
        "k": facts["k"],
        "beta": facts["beta"],
        "loss": loss,
        "granularity": granularity,
        "rows": facts["rows"] - facts["outliers"],
        "seconds": facts["seconds"],
        "wall": wall,
        "levels": json.dumps(facts["levels"]),
        "load": load(),
    }


def adult(cp: str | None, seeds: int, arx_shares: tuple[float, ...] = ARX_SHARES) -> list[dict[str, Any]]:
    df = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    hierarchies = {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in QIDS}
    rows = []
    for epsilon in EPSILONS:
        for seed in range(seeds):
            rows.append(ours(df, hierarchies, epsilon, seed))
            print(rows[-1], flush=True)
            for share in arx_shares if cp else ():
                assert cp is not None
                rows.append(arx(cp, df, hierarchies, epsilon, seed, share))
                print(rows[-1], flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> list[str]:
    tools = list(dict.fromkeys(r["tool"] for r in rows))  # ours first, then ARX at each search share
    out = [
        "| ε | tool | k | loss: mean (min-max) | granularity: mean (min-max) | rows published: mean "
        "| seconds: mean (wall) | load (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    mean: dict[tuple[float, str, str], float] = {}
    for epsilon in EPSILONS:
        for tool in tools:
            runs = [r for r in rows if r["epsilon"] == epsilon and r["tool"] == tool]
            if not runs:
                continue
            cells = []
            for metric in ("loss", "granularity"):
                v = [r[metric] for r in runs]
                mean[(epsilon, tool, metric)] = statistics.mean(v)
                cells.append(f"{statistics.mean(v):.4f} ({min(v):.4f}-{max(v):.4f})")
            out.append(
                f"| {epsilon:g} | {tool} | {runs[0]['k']} | {cells[0]} | {cells[1]} | "
                f"{statistics.mean(r['rows'] for r in runs):,.0f} | "
                f"{statistics.mean(r['seconds'] for r in runs):.2f} ({statistics.mean(r['wall'] for r in runs):.2f}) "
                f"| {'/'.join(sorted({r['load'] for r in runs}))} |"
            )
    ours_tool = tools[0]
    out += ["", f"Lower is better. {ours_tool} at least as good as ARX (mean over the seeds):", ""]
    for epsilon in EPSILONS:
        verdict = [
            f"{metric} vs {tool}: "
            + ("yes" if mean[(epsilon, ours_tool, metric)] <= mean[(epsilon, tool, metric)] else "NO")
            for tool in tools[1:]
            for metric in ("loss", "granularity")
            if (epsilon, tool, metric) in mean and (epsilon, ours_tool, metric) in mean
        ]
        if verdict:
            out.append(f"- ε = {epsilon:g}: {', '.join(verdict)}")
    return out


def domain_hierarchies() -> dict[str, pa.Hierarchy]:
    """The register's hierarchies over the generator's whole domain, not built from the data (as a differentially
    private release needs): every zip code 32000-34999 masked, every gender and race suppressed, every birth year
    1915-2008 in 5-, 10- and 20-year bands (the demo job's kinds, whose leaves a job file takes from the data)."""
    from polars_anon.demo import GENDERS, RACES

    return {
        "zip": pa.Hierarchy.masking([f"{z:05d}" for z in range(32000, 35000)], 5),
        "gender": pa.Hierarchy.suppression(GENDERS[0]),
        "race": pa.Hierarchy.suppression(RACES[0]),
        "birth_year": pa.Hierarchy.intervals(range(1915, 2009), [5, 10, 20]),
    }


def register(rows: int, folder: Path, epsilon: float, delta: float) -> dict[str, Any]:
    """The demo register of `rows` voters, one DP job through the CLI in a child process: wall and peak RSS.

    Every published column is a qid (``party`` is dropped with the identifiers), each with a hierarchy file over the
    generator's domain (:func:`domain_hierarchies`)."""
    from polars_anon.demo import write_voter_register

    data = write_voter_register(folder / f"dp_voters_{rows}.parquet", rows, overwrite=True)
    job = folder / "dp_job.toml"
    files = {q: h.to_csv(folder / f"dp_hierarchy_{q}.csv", overwrite=True) for q, h in domain_hierarchies().items()}
    qids = "".join(f"[qids.{q}]\nhierarchy = {json.dumps(str(f))}\n" for q, f in files.items())
    job.write_text(
        f'input = "{data}"\noutput = "{folder / "dp_out.parquet"}"\nk = 1\ndrop = ["voter_id", "name", "party"]\n'
        f'[[privacy]]\nmodel = "differential-privacy"\nepsilon = {epsilon}\ndelta = {delta}\nseed = 1\n{qids}'
    )
    before = load()
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "polars_anon.cli", "anonymize", str(job), "-q", "--overwrite"]
    subprocess.run(cmd, check=True, cwd=ROOT)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    report = json.loads((folder / "dp_out.report.json").read_text())
    dp = report["details"]["differential_privacy"]
    data.unlink()
    for p in [*folder.glob("dp_out*"), *files.values(), job]:
        p.unlink()
    return {
        "rows": rows,
        "epsilon": epsilon,
        "delta": delta,
        "k": dp["k"],
        "beta": dp["beta"],
        "published": dp["published_rows"],
        "levels": dp["transformation"],
        "loss": dp["loss_whole_table"],
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "peak_rss_mb": round(peak_mb),
        "load_before": before,
        "load_after": load(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--arx-cp", default=os.environ.get("ARX_CP"), help="classpath of ARX and the ArxSafePub driver")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--arx-shares", default=",".join(map(str, ARX_SHARES)), help="ARX's search shares of ε, e.g. 0.1,0.05"
    )
    ap.add_argument("--no-adult", action="store_true")
    ap.add_argument("--register", type=int, default=0, help="rows of the register run (0: none)")
    ap.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()))
    ap.add_argument("--register-epsilon", type=float, default=1.0)
    ap.add_argument("--register-delta", type=float, default=1e-8)
    ap.add_argument("--no-write", action="store_true", help="print only, leave benchmarks/results as it is")
    a = ap.parse_args()
    shown = " ".join("CP" if prev == "--arx-cp" else arg for prev, arg in zip(["", *sys.argv[1:]], sys.argv[1:]))
    lines = [f"# Differentially private releases (`python benchmarks/dp_bench.py {shown}`)", ""]
    if not a.no_adult:
        rows = adult(a.arx_cp, a.seeds, tuple(float(x) for x in a.arx_shares.split(",")))
        if not a.no_write:
            RESULTS.mkdir(exist_ok=True)
            pl.DataFrame(rows).write_csv(RESULTS / "dp_adult.csv")
        title = f"## Adult, δ = {DELTA:g}, ours: default search share {SHARE:g}; ARX: {STEPS} steps; {a.seeds} seeds"
        lines += [title, "", *summary(rows)]
    if a.register:
        r = register(a.register, a.folder, a.register_epsilon, a.register_delta)
        print(r, flush=True)
        lines += ["", "## Register", "", "```", json.dumps(r), "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        (RESULTS / ("dp.md" if not a.no_adult else "dp_register.md")).write_text(text)


if __name__ == "__main__":
    main()
