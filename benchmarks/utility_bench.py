"""Utility of the encodings on Adult: paper 000 Figures 3 and 4, and paper 002's scenario grid.

Paper 000 (§IV): greedy k-anonymization guided by NLLM (``method="greedy"``,
``first="smallest"``, ``partners="all"`` as in paper 000 Algorithm 1), k in
{3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000, 5000, 10000, 15000}; the MLP of
§IV-C; 2/3 train, 1/3 test (one fixed split); seeds vary the initialisation;
AUC-ROC on salary-class.
  Figure 3: models trained on the original table (fillParent = proportional at k=1),
            tested on every k-anonymous table in each representation.
  Figure 4: models trained on the 100-anonymous table in each representation,
            tested on every k-anonymous table in each representation.
Paper 002 (§4): Mondrian strict / relaxed, k in {2, 5, 10, 25, 50, 100}, random vs
statistical mapping back to leaves, one-hot leaves, entropy decision tree, the four
scenarios, 6-fold cross-validation, accuracy.

Run:  python benchmarks/utility_bench.py [--seeds 10] [--part 000|002|all]
Writes benchmarks/results/utility_paper000.csv, utility_paper000_fig3.png,
utility_paper000_fig4.png, utility_paper002.csv, utility_paper002.png and
utility_bench.json (claim check, timings, the command). Anonymized tables are cached
under benchmarks/data/ (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import polars as pl

import polars_anon as pa
from polars_anon.utility import scenarios, utility_grid

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult"
QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
TARGET = "salary-class"
K_000 = [3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000, 5000, 10000, 15000]
K_002 = [2, 5, 10, 25, 50, 100]
REPS = ["proportional", "fillparent", "oneclass", "fillchild"]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / "data"
COLORS = {"proportional": "tab:blue", "fillparent": "tab:orange", "oneclass": "tab:green", "fillchild": "tab:red"}


def load() -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    adult = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    return adult, {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in QIDS}


def published(adult: pl.DataFrame, H: dict, k: int, method: str, **options: object) -> tuple[pl.DataFrame, float]:
    tag = "_".join(f"{a}-{b}" for a, b in sorted(options.items()))
    path = CACHE / f"adult_{method}_{tag}_k{k}.parquet"
    if path.exists():
        return pl.read_parquet(path), float("nan")
    start = time.perf_counter()
    out = pa.anonymize(
        adult, hierarchies=H, k=k, method=method, metric="nllm" if method == "greedy" else None, **options
    )
    df = out.collect()  # verified k-anonymous
    seconds = time.perf_counter() - start
    CACHE.mkdir(parents=True, exist_ok=True)
    df.write_parquet(path)
    return df, seconds


def paper_000(adult: pl.DataFrame, H: dict, seeds: list[int], ks: list[int], log: dict) -> pl.DataFrame:
    tables = {"original": pa.encode(adult, H, "fillparent").collect()}
    anon_seconds = {}
    for k in ks:
        pub, secs = published(adult, H, k, "greedy", first="smallest", partners="all")
        anon_seconds[k] = secs
        print(f"greedy k={k}: {pub.select(QIDS).n_unique()} classes ({secs:.1f} s)", flush=True)
        for rep in REPS:
            tables[f"{k}/{rep}"] = pa.encode(pub, H, rep, original=adult if rep == "proportional" else None).collect()
    pairs = [("original", f"{k}/{r}") for k in ks for r in REPS]
    pairs += [(f"100/{rt}", f"{k}/{r}") for rt in REPS for k in ks for r in REPS]
    start = time.perf_counter()
    grid = utility_grid(tables, pairs, TARGET, model="mlp", seeds=seeds, scores=["auc"])
    log["paper000_mlp_seconds"] = round(time.perf_counter() - start, 1)
    log["paper000_greedy_seconds"] = {str(k): round(v, 1) for k, v in anon_seconds.items()}
    tidy = grid.with_columns(
        pl.col("train").str.split("/").list.last().alias("train_representation"),
        pl.col("test").str.split("/").list.first().cast(pl.Int64).alias("k"),
        pl.col("test").str.split("/").list.last().alias("test_representation"),
    ).with_columns(
        pl.when(pl.col("train") == "original")
        .then(pl.lit("original"))
        .otherwise(pl.lit("100-anonymous"))
        .alias("trained_on"),
        pl.when(pl.col("train") == "original")
        .then(pl.lit("fillparent"))
        .otherwise(pl.col("train_representation"))
        .alias("train_representation"),
    )
    return tidy.select(
        "trained_on", "train_representation", "test_representation", "k", "model", "score", "mean", "std", "n"
    ).sort("trained_on", "train_representation", "k", "test_representation")


def claim_check(tidy: pl.DataFrame) -> dict:
    """Paper 000's claim: proportional is best at every k, fillParent second."""
    out = {}
    for (trained_on, train_rep), g in tidy.group_by("trained_on", "train_representation", maintain_order=True):
        per_k = {}
        for (k,), gk in g.group_by("k", maintain_order=True):
            ranked = gk.sort("mean", descending=True)
            order = ranked["test_representation"].to_list()
            means = dict(zip(gk["test_representation"], gk["mean"]))
            others = [means[r] for r in REPS if r != "proportional"]
            per_k[int(k)] = {
                "ranking": order,
                "proportional_minus_best_other": round(means["proportional"] - max(others), 4),
                "fillparent_minus_best_of_rest": round(
                    means["fillparent"] - max(means["oneclass"], means["fillchild"]), 4
                ),
            }
        name = "trained on original" if trained_on == "original" else f"trained on 100-anonymous {train_rep}"
        out[name] = {
            "proportional_first_at_k": sum(v["ranking"][0] == "proportional" for v in per_k.values()),
            "fillparent_second_at_k": sum(v["ranking"][1:2] == ["fillparent"] for v in per_k.values()),
            "n_k": len(per_k),
            "per_k": per_k,
        }
    return out


def plot_000(tidy: pl.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    g = tidy.filter(pl.col("trained_on") == "original")
    for rep in REPS:
        r = g.filter(pl.col("test_representation") == rep).sort("k")
        ax.plot(r["k"], r["mean"], marker="o", ms=3, label=rep, color=COLORS[rep])
        if rep == "proportional":
            ax.fill_between(r["k"], r["mean"] - r["std"], r["mean"] + r["std"], alpha=0.2, color=COLORS[rep])
    ax.set_xscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("AUC-ROC (mean over seeds)")
    ax.set_title("Adult, MLP trained on the original table (paper 000 Fig. 3)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "utility_paper000_fig3.png", dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True, sharey=True)
    for ax, train_rep in zip(axes.ravel(), REPS):
        g = tidy.filter((pl.col("trained_on") == "100-anonymous") & (pl.col("train_representation") == train_rep))
        for rep in REPS:
            r = g.filter(pl.col("test_representation") == rep).sort("k")
            ax.plot(r["k"], r["mean"], marker="o", ms=3, label=f"tested {rep}", color=COLORS[rep])
            if rep == "proportional":
                ax.fill_between(r["k"], r["mean"] - r["std"], r["mean"] + r["std"], alpha=0.2, color=COLORS[rep])
        ax.set_xscale("log")
        ax.set_title(f"trained on 100-anonymous, {train_rep}")
        ax.set_xlabel("k")
        ax.set_ylabel("AUC-ROC")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Adult, MLP trained on a 100-anonymous table (paper 000 Fig. 4)")
    fig.tight_layout()
    fig.savefig(RESULTS / "utility_paper000_fig4.png", dpi=110)
    plt.close(fig)


def paper_002(adult: pl.DataFrame, H: dict, seeds: list[int], log: dict) -> pl.DataFrame:
    frames = []
    start = time.perf_counter()
    for mode in ["strict", "relaxed"]:
        for k in K_002:
            pub, _ = published(adult, H, k, "mondrian", mode=mode)
            for mapping in ["random", "statistical"]:
                s = scenarios(
                    adult, pub, TARGET, H, mapping=mapping, model="tree", seeds=seeds, scores=["accuracy"], folds=6
                )
                frames.append(s.with_columns(pl.lit(mode).alias("mode"), pl.lit(k).alias("k")))
            print(f"mondrian {mode} k={k} done", flush=True)
    log["paper002_seconds"] = round(time.perf_counter() - start, 1)
    return pl.concat(frames).select(
        "mode", "k", "mapping", "scenario", "train", "test", "model", "score", "mean", "std", "n"
    )


def plot_002(tidy: pl.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True, sharey=True)
    for ax, (mode, mapping) in zip(
        axes.ravel(), [(m, p) for m in ["strict", "relaxed"] for p in ["random", "statistical"]]
    ):
        g = tidy.filter((pl.col("mode") == mode) & (pl.col("mapping") == mapping))
        for sc in [1, 2, 3, 4]:
            r = g.filter(pl.col("scenario") == sc).sort("k")
            ax.errorbar(r["k"], r["mean"], yerr=r["std"], marker="o", ms=3, capsize=2, label=f"scenario {sc}")
        ax.set_xscale("log")
        ax.set_title(f"Mondrian {mode}, {mapping} mapping")
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy (6-fold CV)")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("Adult, entropy decision tree, paper 002 scenarios")
    fig.tight_layout()
    fig.savefig(RESULTS / "utility_paper002.png", dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seeds-002", type=int, default=3)
    ap.add_argument("--part", choices=["000", "002", "all"], default="all")
    ap.add_argument("--ks", default=",".join(map(str, K_000)))
    args = ap.parse_args()
    if "greedy" not in pa.METHODS:
        sys.exit("method 'greedy' is not registered yet; paper 000's evidence needs it")
    RESULTS.mkdir(parents=True, exist_ok=True)
    adult, H = load()
    log: dict = {
        "command": "python benchmarks/utility_bench.py " + " ".join(sys.argv[1:]),
        "python": platform.python_version(),
        "polars": pl.__version__,
    }
    summary_path = RESULTS / "utility_bench.json"
    if summary_path.exists():
        old = json.loads(summary_path.read_text())
        log = {**old, **log}
    if args.part in ("000", "all"):
        seeds = list(range(args.seeds))
        ks = sorted({int(k) for k in args.ks.split(",")} | {100})  # Figure 4 trains on k=100
        tidy = paper_000(adult, H, seeds, ks, log)
        tidy.write_csv(RESULTS / "utility_paper000.csv", float_precision=5)
        plot_000(tidy)
        log["paper000_seeds"] = seeds
        log["paper000_k"] = ks
        log["paper000_claim"] = claim_check(tidy)
        for name, c in log["paper000_claim"].items():
            print(
                f"{name}: proportional first at {c['proportional_first_at_k']}/{c['n_k']} k, "
                f"fillParent second at {c['fillparent_second_at_k']}/{c['n_k']} k"
            )
    if args.part in ("002", "all"):
        seeds = list(range(args.seeds_002))
        tidy2 = paper_002(adult, H, seeds, log)
        tidy2.write_csv(RESULTS / "utility_paper002.csv", float_precision=5)
        plot_002(tidy2)
        log["paper002_seeds"] = seeds
        base = tidy2.filter(pl.col("scenario") == 1)["mean"].mean()
        log["paper002_scenario1_accuracy"] = round(float(base), 4)
        log["paper002_mean_by_mapping"] = {
            f"{m}/{p}/scenario{s}": round(v, 4)
            for m, p, s, v in tidy2.group_by("mode", "mapping", "scenario")
            .agg(pl.col("mean").mean())
            .sort("mode", "mapping", "scenario")
            .rows()
        }
    summary_path.write_text(json.dumps(log, indent=1) + "\n")
    print(f"wrote {summary_path}")


if __name__ == "__main__":
    main()
