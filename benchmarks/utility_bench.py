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

The plots draw the papers' own baselines beside ours. Paper 000 prints no number
(its Figures 3-5 are images), so its references are what its text states: AUC-ROC
0.5, no utility left, beyond k = 5000 (§IV-D1), and models trained on the
100-anonymous table "at the same level" as those trained on the original (§IV-D2,
drawn as our Figure 3 curve in every Figure 4 panel). Paper 002 (§5.1): scenario 1
at 81.82 %, falls of 2.15-19.15 % in scenarios 2-3 (11.72 % on average for k 2-10)
and of 5.51-8.01 % in scenario 4, read as falls relative to scenario 1.

Run:  python benchmarks/utility_bench.py [--seeds 10] [--part 000|002|all] [--quick] [--plots-only]
Writes benchmarks/results/utility_paper000.csv, utility_paper000_fig3.png,
utility_paper000_fig4.png, utility_paper002.csv, utility_paper002.png and
utility_bench.json (claim check, timings, the command). Anonymized tables of full
runs are cached under benchmarks/data/ (git-ignored). --quick: 1,000 sampled rows,
k in {3, 100} (000) and {2, 10} (002), 2 and 1 seeds, results to
benchmarks/data/quick/ (nothing cached); --plots-only redraws the PNGs from the CSVs.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import polars as pl

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # this checkout first
import papers_common as pc

import polars_anon as pa
from polars_anon.utility import Scenarios, utility_grid

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
PAPER000_NO_UTILITY_K = 5000  # §IV-D1: "When k-value exceeds 5000 ... the inability to keep any data utility"
PAPER002_BASELINE = 0.8182  # §5: scenario 1 accuracy
PAPER002_FALL = {"2-3": (0.0215, 0.1915), "2-3 mean k 2-10": 0.1172, "4": (0.0551, 0.0801)}  # §5.1, relative falls


def load(rows: int | None = None) -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    """ARX Adult (all 30,162 rows, or a seeded sample of `rows`) and its hierarchies."""
    adult = pc.sample(pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False), rows)
    return adult, {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in QIDS}


def published(
    adult: pl.DataFrame, H: dict, k: int, method: str, cache: Path | None = CACHE, **options: object
) -> tuple[pl.DataFrame, float]:
    """The k-anonymous table, read from `cache` when a full run already wrote it (None: no cache)."""
    tag = "_".join(f"{a}-{b}" for a, b in sorted(options.items()))
    path = None if cache is None else cache / f"adult_{method}_{tag}_k{k}.parquet"
    if path is not None and path.exists():
        return pl.read_parquet(path), float("nan")
    start = time.perf_counter()
    out = pa.anonymize(
        adult, hierarchies=H, k=k, method=method, metric="nllm" if method == "greedy" else None, **options
    )
    df = out.collect()  # verified k-anonymous
    seconds = time.perf_counter() - start
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        df.write_parquet(path)
    return df, seconds


def paper_000(
    adult: pl.DataFrame, H: dict, seeds: list[int], ks: list[int], log: dict, cache: Path | None = CACHE
) -> pl.DataFrame:
    tables = {"original": pa.encode(adult, H, "fillparent").collect()}
    anon_seconds = {}
    for k in ks:
        pub, secs = published(adult, H, k, "greedy", cache, first="smallest", partners="all")
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


def _paper000_references(ax: object, ks: list[int]) -> None:
    """What paper 000's text states (it prints no number): chance level beyond k = 5000."""
    ax.axhline(0.5, color="black", ls=":", lw=1, label="AUC-ROC 0.5: no utility left")
    ax.axvspan(
        PAPER000_NO_UTILITY_K,
        max(ks) * 1.3,
        color="grey",
        alpha=0.12,
        label="paper 000 §IV-D1: k > 5000, no representation keeps utility",
    )


def plot_000(tidy: pl.DataFrame, out: Path = RESULTS) -> None:
    """Paper 000 Figures 3 and 4, with the paper's stated references."""
    plt = pc.pyplot()
    fig, ax = plt.subplots(figsize=(8, 6.2))
    g = tidy.filter(pl.col("trained_on") == "original")
    ks = sorted(g["k"].unique().to_list())
    for rep in REPS:
        r = g.filter(pl.col("test_representation") == rep).sort("k")
        ax.plot(r["k"], r["mean"], marker="o", ms=3, label=f"ours, tested {rep}", color=COLORS[rep])
        if rep == "proportional":
            ax.fill_between(
                r["k"],
                r["mean"] - r["std"],
                r["mean"] + r["std"],
                alpha=0.2,
                color=COLORS[rep],
                label="ours, proportional ± 1 s.d. over seeds",
            )
    _paper000_references(ax, ks)
    ax.set_xscale("log")
    ax.set_xlabel("k of the tested table")
    ax.set_ylabel("AUC-ROC (mean over seeds)")
    ax.set_title(
        "Adult, MLP trained on the original table (paper 000 Fig. 3;\n"
        "the paper: proportional best at every k, then fillParent)",
        fontsize=10,
    )
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=7.5, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(out / "utility_paper000_fig3.png", dpi=110)
    plt.close(fig)
    fig3 = g.filter(pl.col("test_representation") == "proportional").sort("k")
    fig, axes = plt.subplots(2, 2, figsize=(11, 9), sharex=True, sharey=True)
    for ax, train_rep in zip(axes.ravel(), REPS):
        g = tidy.filter((pl.col("trained_on") == "100-anonymous") & (pl.col("train_representation") == train_rep))
        for rep in REPS:
            r = g.filter(pl.col("test_representation") == rep).sort("k")
            ax.plot(r["k"], r["mean"], marker="o", ms=3, label=f"ours, tested {rep}", color=COLORS[rep])
            if rep == "proportional":
                ax.fill_between(
                    r["k"],
                    r["mean"] - r["std"],
                    r["mean"] + r["std"],
                    alpha=0.2,
                    color=COLORS[rep],
                    label="ours, tested proportional ± 1 s.d. over seeds",
                )
        ax.plot(
            fig3["k"],
            fig3["mean"],
            color="black",
            ls="--",
            lw=1,
            label="reference: trained on the original, tested proportional (Fig. 3); paper 000 §IV-D2: "
            "trained on 100-anonymous tables, models perform at the same level",
        )
        ax.axvline(100, color="dimgrey", ls="-.", lw=0.8, label="k = 100: the training table")
        _paper000_references(ax, ks)
        ax.set_xscale("log")
        ax.set_title(f"trained on the 100-anonymous table, {train_rep}", fontsize=10)
        ax.set_xlabel("k of the tested table")
        ax.set_ylabel("AUC-ROC (mean over seeds)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7.5, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(
        "Adult, MLP trained on a 100-anonymous table (paper 000 Fig. 4; the paper: tested in proportional "
        "best whatever the training representation, fillParent second)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.13, 1, 0.97))
    fig.savefig(out / "utility_paper000_fig4.png", dpi=110)
    plt.close(fig)


def paper_002(
    adult: pl.DataFrame, H: dict, seeds: list[int], log: dict, ks: list[int] = K_002, cache: Path | None = CACHE
) -> pl.DataFrame:
    frames = []
    start = time.perf_counter()
    # every table's four scenarios; the trees trained on the original are trained once, for all of them
    each = Scenarios(adult, TARGET, H, model="tree", seeds=seeds, scores=["accuracy"], folds=6)
    for mode in ["strict", "relaxed"]:
        for k in ks:
            pub, _ = published(adult, H, k, "mondrian", cache, mode=mode)
            for mapping in ["random", "statistical"]:
                s = each(pub, mapping)
                frames.append(s.with_columns(pl.lit(mode).alias("mode"), pl.lit(k).alias("k")))
            print(f"mondrian {mode} k={k} done", flush=True)
    log["paper002_seconds"] = round(time.perf_counter() - start, 1)
    return pl.concat(frames).select(
        "mode", "k", "mapping", "scenario", "train", "test", "model", "score", "mean", "std", "n"
    )


def plot_002(tidy: pl.DataFrame, out: Path = RESULTS) -> None:
    """The paper 002 grid per mode and mapping, with the paper's §5 accuracy and falls as references."""
    plt = pc.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 9), sharex=True, sharey=True)
    colors = {1: "tab:blue", 2: "tab:orange", 3: "tab:green", 4: "tab:red"}
    names = {
        1: "original -> original",
        2: "anonymized -> anonymized",
        3: "anonymized -> original",
        4: "original -> anonymized",
    }
    base = PAPER002_BASELINE
    for ax, (mode, mapping) in zip(
        axes.ravel(), [(m, p) for m in ["strict", "relaxed"] for p in ["random", "statistical"]]
    ):
        g = tidy.filter((pl.col("mode") == mode) & (pl.col("mapping") == mapping))
        ks = sorted(g["k"].unique().to_list())
        for sc in [1, 2, 3, 4]:
            r = g.filter(pl.col("scenario") == sc).sort("k")
            ax.errorbar(
                r["k"],
                r["mean"],
                yerr=r["std"],
                marker="o",
                ms=3,
                capsize=2,
                color=colors[sc],
                label=f"ours, scenario {sc} ({names[sc]}; train -> test)",
            )
        ax.axhline(base, color=colors[1], ls="--", lw=1, label="paper 002 §5: scenario 1, 81.82 %")
        lo, hi = PAPER002_FALL["2-3"]
        ax.axhspan(
            base * (1 - hi),
            base * (1 - lo),
            color="tab:olive",
            alpha=0.1,
            label="paper: scenarios 2-3 fall 2.15-19.15 % from it",
        )
        small = [k for k in ks if k <= 10] or ks[:1]
        mean_fall = base * (1 - PAPER002_FALL["2-3 mean k 2-10"])
        ax.plot(
            [min(small), max(small)],
            [mean_fall] * 2,
            color="tab:olive",
            lw=2.5,
            label="paper: scenarios 2-3, mean fall for k 2-10 (11.72 %)",
        )
        lo, hi = PAPER002_FALL["4"]
        ax.axhspan(
            base * (1 - hi), base * (1 - lo), color=colors[4], alpha=0.15, label="paper: scenario 4 falls 5.51-8.01 %"
        )
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_title(f"Mondrian {mode}, {mapping} mapping", fontsize=10)
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy (6-fold CV, mean ± 1 s.d.)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7.5, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(
        "Adult (ARX, 8 qids), entropy decision tree, paper 002's four scenarios; the paper's numbers "
        "(UCI Adult, ID3) as references, falls read as relative to scenario 1",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.11, 1, 0.97))
    fig.savefig(out / "utility_paper002.png", dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = pc.parser(__doc__)
    ap.add_argument("--seeds", type=int, default=None, help="MLP seeds for paper 000 (default 10; --quick: 2)")
    ap.add_argument("--seeds-002", type=int, default=None, help="seeds for paper 002 (default 3; --quick: 1)")
    ap.add_argument("--part", choices=["000", "002", "all"], default="all")
    ap.add_argument("--ks", default=None, help="paper 000's k, comma-separated (default: its 14; --quick: 3,100)")
    args = ap.parse_args(argv)
    if "greedy" not in pa.METHODS:
        sys.exit("method 'greedy' is not registered yet; paper 000's evidence needs it")
    out = pc.out_dir(args.quick, args.out)
    do_000, do_002 = args.part in ("000", "all"), args.part in ("002", "all")
    if args.plots_only:
        for name, wanted, plot in [
            ("utility_paper000.csv", do_000, plot_000),
            ("utility_paper002.csv", do_002, plot_002),
        ]:
            if wanted:
                if not (out / name).exists():
                    sys.exit(f"--plots-only: {out / name} does not exist; run without --plots-only first")
                plot(pl.read_csv(out / name), out)
        print(f"redrew the plots in {out}")
        return
    rows = args.rows or (1000 if args.quick else None)
    cache = None if rows is not None else CACHE  # samples are never cached beside the full tables
    adult, H = load(rows)
    log: dict = {
        "command": "python benchmarks/utility_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "python": platform.python_version(),
        "polars": pl.__version__,
    }
    summary_path = out / "utility_bench.json"
    if summary_path.exists():
        old = json.loads(summary_path.read_text())
        log = {**old, **log}
    if do_000:
        seeds = list(range(args.seeds or (2 if args.quick else 10)))
        wanted = args.ks or ("3,100" if args.quick else ",".join(map(str, K_000)))
        ks = sorted({int(k) for k in wanted.split(",")} | {100})  # Figure 4 trains on k=100
        tidy = paper_000(adult, H, seeds, ks, log, cache)
        tidy.write_csv(out / "utility_paper000.csv", float_precision=5)
        plot_000(tidy, out)
        log["paper000_seeds"] = seeds
        log["paper000_k"] = ks
        log["paper000_claim"] = claim_check(tidy)
        for name, c in log["paper000_claim"].items():
            print(
                f"{name}: proportional first at {c['proportional_first_at_k']}/{c['n_k']} k, "
                f"fillParent second at {c['fillparent_second_at_k']}/{c['n_k']} k"
            )
    if do_002:
        seeds = list(range(args.seeds_002 or (1 if args.quick else 3)))
        tidy2 = paper_002(adult, H, seeds, log, [2, 10] if args.quick else K_002, cache)
        tidy2.write_csv(out / "utility_paper002.csv", float_precision=5)
        plot_002(tidy2, out)
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
