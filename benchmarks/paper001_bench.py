"""Paper 001 §5, Figures 9-13 over 21 requested k, and why its k = 1500 headline does not reproduce.

ARX Adult (30,162 rows), the paper's 9 quasi-identifiers (salary-class included), the
ARX hierarchies; the greedy algorithm of paper 001 (``method="greedy"``, the exact
loop ``candidates=None``, ``first="first"``, ``partners="below_k"``) once per
optimization (the seven edge-weight metrics) and requested k. Measured with
``pa.metrics.compute`` on the published table:

- Fig. 9: minimum class size (``min_class_size``) against requested k;
- Fig. 10: average percentage of alteration (``alteration``: the mean over the seven
  metrics of 100 m(T) / m(T*));
- Fig. 11: percentage of modified values (``modified``);
- Fig. 12: percentage of deleted values, cells at their root (``deleted``);
- Fig. 13: deleted among modified (``deleted_of_modified``).

The paper runs "21 values of k between 2 and 15000" without listing them; we take
the 21 below, which hold every k its text names. Its Figures 6-8 give the average
alteration at k = 2, 100, 1500 (drawn on Fig. 10); its text gives a few Fig. 9
points (drawn on Fig. 9).

The k = 1500 headline (NLLM ranked first on 5 of the 7 metrics, Figure 8) is checked
with variants at k = 1500: the paper's choices; hierarchies cut to the leaves present
in the data (the ARX age hierarchy has 100 leaves for 72 values, workclass 8 for 7:
nl(G) enters NCP, NLLM and WNLLM); five random orders of the children in every
hierarchy (the paper takes "the first element of C(T)", an order it does not define;
ours sorts the classes on their ancestors' depth-first ids, costliest distinctions
first, so shuffling siblings gives other orders of the same kind); paper 000's
choices (``first="smallest"``, ``partners="all"``).

Fig. 9 again with paper 000's choices (``--fig9-000``: ``first="smallest"``,
``partners="all"``, the minimum class size only), which gives the paper's shape where
paper 001's choices do not; drawn beside it on paper001_fig9.png.

Run:  python benchmarks/paper001_bench.py [--quick] [--fig9-000]
Writes benchmarks/results/paper001_figures.csv, paper001_k1500.csv, paper001.json,
paper001.md and paper001_fig9.png ... paper001_fig13.png. --quick: 2,000 rows, 4 k.
--fig9-000 runs only Fig. 9 with paper 000's choices (paper001_fig9_000.csv) and
redraws the rest from the CSV files.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # this checkout first
import papers_common as pc

import polars_anon as pa
from polars_anon.metrics.weights import EDGE_METRICS

QIDS9 = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
KS = [2, 3, 4, 5, 10, 20, 50, 100, 200, 250, 500, 750, 1000, 1500, 2000, 2500, 4000, 5000, 7500, 10000, 15000]
NAMES = {
    "distortion": "Distortion",
    "ncp": "NCP",
    "total": "Total",
    "llm": "LLM",
    "nllm": "NLLM",
    "wllm": "WLLM",
    "wnllm": "WNLLM",
}
PAPER_FIG10 = {  # the "Average" rows of Figures 6-8, per optimization
    2: [4, 4, 4, 5, 3, 4, 4],
    100: [35, 39, 38, 49, 36, 46, 38],
    1500: [70, 75, 68, 77, 66, 72, 73],
}
PAPER_FIG9 = [("LLM", 7500, 12307), ("Distortion", 10000, 30162), ("Total", 10000, 30162)] + [
    (NAMES[o], 15000, 30162) for o in EDGE_METRICS
]
FIGURES = {
    "fig10": ("alteration", "average % of alteration (mean over 7 metrics of 100 m(T)/m(T*))"),
    "fig11": ("modified", "% of modified values"),
    "fig12": ("deleted", "% of deleted values (cells at their root)"),
    "fig13": ("deleted_of_modified", "% deleted among modified"),
}
COLORS = dict(
    zip(EDGE_METRICS, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"])
)


def load(rows: int | None) -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    d = pc.DATA / "adult"
    df = pc.sample(pl.read_csv(d / "adult.csv", separator=";", infer_schema=False).select(QIDS9), rows)
    return df, {q: pa.Hierarchy.from_csv(d / f"adult_hierarchy_{q}.csv") for q in QIDS9}


def rows_of(h: pa.Hierarchy) -> list[list[str]]:
    """The hierarchy as ARX rows (leaf, parent, ..., root), one per leaf; a leaf under the root repeats."""
    out = []
    for leaf in np.flatnonzero(h.is_leaf):
        chain, node = [], int(leaf)
        while node >= 0:
            chain.append(h.label_of(node))
            node = int(h.parent[node])
        out.append(chain[:1] * (h.height - len(chain)) + chain)  # pad so every row has the same length
    return out


def pruned(df: pl.DataFrame, hs: dict[str, pa.Hierarchy]) -> dict[str, pa.Hierarchy]:
    """The hierarchies cut to the leaves present in the data (levels kept)."""
    return {q: pa.Hierarchy.from_rows([r for r in rows_of(h) if r[0] in set(df[q].to_list())]) for q, h in hs.items()}


def shuffled_siblings(hs: dict[str, pa.Hierarchy], seed: int) -> dict[str, pa.Hierarchy]:
    """The same trees with the children of every node in a random order (another depth-first order)."""
    rng = np.random.default_rng(seed)
    out = {}
    for q, h in hs.items():
        rows = rows_of(h)
        out[q] = pa.Hierarchy.from_rows([rows[i] for i in rng.permutation(len(rows))])
    return out


MEASURES = ["alteration", "modified", "deleted", "deleted_of_modified", "min_class_size"]


def one(df: pl.DataFrame, hs: dict, k: int, o: str, **options: object) -> dict:
    t = time.perf_counter()
    opts = {"first": "first", "partners": "below_k", **options}
    pub = pa.anonymize(
        df, qids=QIDS9, hierarchies=hs, k=k, method="greedy", metric=o, candidates=None, **opts
    ).collect()
    sec = time.perf_counter() - t
    # normalized: each edge metric over its value on T* (Figs. 6-8), the percentages over 100
    got = pa.metrics.compute(df, pub, QIDS9, hs, [*MEASURES[:4], *EDGE_METRICS], normalized=True).row(0, named=True)
    return {
        "k": k,
        "optimization": NAMES[o],
        **{m: 100 * got[m] for m in MEASURES[:4]},
        "min_class_size": pa.min_class_size(pub.lazy(), QIDS9),
        **{f"pct_{m}": 100 * got[m] for m in EDGE_METRICS},
        "seconds": round(sec, 2),
    }


def fig9_000(df: pl.DataFrame, hs: dict, k: int, o: str) -> dict:
    """Fig. 9's minimum class size with paper 000's choices (smallest class first, partners among all classes)."""
    t = time.perf_counter()
    pub = pa.anonymize(
        df,
        qids=QIDS9,
        hierarchies=hs,
        k=k,
        method="greedy",
        metric=o,
        candidates=None,
        first="smallest",
        partners="all",
    ).collect()
    return {
        "k": k,
        "optimization": NAMES[o],
        "min_class_size": pa.min_class_size(pub.lazy(), QIDS9),
        "seconds": round(time.perf_counter() - t, 2),
    }


def ranks(values: list[float]) -> list[int]:
    """Rank 1 = smallest; values equal when rounded to an integer share the lower rank (the paper's tables)."""
    r = [round(v) for v in values]
    return [1 + sum(x < v for x in r) for v in r]


def firsts(rows: list[dict]) -> dict[str, int]:
    """Per optimization: of the 7 metrics, how many rank it first (ties share the rank)."""
    table = {r["optimization"]: r for r in rows}
    out = dict.fromkeys(table, 0)
    for m in EDGE_METRICS:
        opts = list(table)
        for o, rk in zip(opts, ranks([table[o][f"pct_{m}"] for o in opts])):
            out[o] += rk == 1
    return out


PAPER_CHOICES = "paper 001 choices (first, below_k), ARX hierarchies"


def k1500(
    df: pl.DataFrame, hs: dict, k: int, orders: int, optimizations: list[str], paper_runs: list[dict] | None = None
) -> pl.DataFrame:
    """The variants at the headline k, each run once per optimization; `paper_runs`: the figures' runs at k (the
    paper's choices, one per optimization in that order), read instead of running them again."""
    variants: list[tuple[str, pl.DataFrame, dict, dict]] = [
        (PAPER_CHOICES, df, hs, {}),
        ("hierarchies cut to the data's leaves", df, pruned(df, hs), {}),
        ("paper 000 choices (smallest, all)", df, hs, {"first": "smallest", "partners": "all"}),
    ]
    for seed in range(orders):
        variants.append((f"random sibling order {seed}", df, shuffled_siblings(hs, seed), {}))
    rows = []
    for name, d, h, opts in variants:
        if name == PAPER_CHOICES and paper_runs is not None:
            runs = paper_runs
        else:
            runs = [one(d, h, k, o, **opts) for o in optimizations]
        f = firsts(runs)
        best_avg = min(runs, key=lambda r: r["alteration"])["optimization"]
        rows += [
            {"variant": name, **r, "ranked_first_on": f[r["optimization"]], "best_average": best_avg} for r in runs
        ]
        print(f"k={k} {name}: first on (of 7) {f}; best average {best_avg}", flush=True)
    return pl.DataFrame(rows)


def render(figs: pl.DataFrame, var: pl.DataFrame, facts: dict, fig9_000: pl.DataFrame | None = None) -> list[str]:
    """paper001.md: the best optimization per k for Figs. 10-13, Fig. 9's spread (and with paper 000's choices when
    run), the k = 1500 variants."""
    lines = [
        "# Paper 001 Figures 9-13 and the k = 1500 headline",
        "",
        (
            f"Command: `{facts['command']}` ({facts['wall_seconds']:.0f} s wall, load average "
            f"{facts['load_average_start'][0]} -> {facts['load_average_end'][0]}). ARX Adult, 9 qids, exact greedy "
            "loop, "
            "paper 001 choices. Values per (k, optimization) in paper001_figures.csv."
        ),
        "",
        (
            "| k | least alteration (Fig. 10) | least modified (Fig. 11) | least deleted (Fig. 12) | least "
            "deleted/modified "
            "(Fig. 13) | minimum k, min-max over the 7 (Fig. 9) |"
        ),
        "|---|---|---|---|---|---|",
    ]
    for (k,), g in figs.group_by("k", maintain_order=True):
        best = [
            ", ".join(g.filter(pl.col(c) <= g[c].min() + 1e-9)["optimization"].to_list()) + f" ({g[c].min():.1f})"
            for c in ("alteration", "modified", "deleted", "deleted_of_modified")
        ]
        lines.append(f"| {k} | " + " | ".join(best) + f" | {g['min_class_size'].min()}-{g['min_class_size'].max()} |")
    opts = var["optimization"].unique(maintain_order=True).to_list()
    lines += [
        "",
        "## The k = 1500 headline: of the 7 metrics, how many rank each optimization first",
        "",
        "| variant | " + " | ".join(opts) + " | least average alteration |",
        "|---" * (len(opts) + 2) + "|",
    ]
    for (v,), g in var.group_by("variant", maintain_order=True):
        firsts_of = dict(g.select("optimization", "ranked_first_on").iter_rows())
        best = g.sort("alteration")[0]
        lines.append(
            f"| {v} | "
            + " | ".join(str(firsts_of[o]) for o in opts)
            + f" | {best['optimization'][0]} ({best['alteration'][0]:.1f} %) |"
        )
    lines += ["", "Paper 001 Figure 8: NLLM first on 5 of 7 metrics, least average alteration (66 %)."]
    if fig9_000 is not None:
        opts = fig9_000["optimization"].unique(maintain_order=True).to_list()
        wide = fig9_000.pivot(on="optimization", index="k", values="min_class_size").sort("k")
        lines += [
            "",
            (
                '## Fig. 9 with paper 000\'s choices (`first="smallest"`, `partners="all"`): minimum class '
                "size per requested k (paper 001's text: LLM 12,307 at 7500; one class, 30,162 rows, for "
                "Distortion and Total at 10,000 and for all seven at 15,000)"
            ),
            "",
            "| k | " + " | ".join(opts) + " |",
            "|---" * (len(opts) + 1) + "|",
        ]
        for r in wide.iter_rows(named=True):
            lines.append(f"| {r['k']} | " + " | ".join(f"{r[o]:,}" for o in opts) + " |")
        stated = [(o, k, v) for o, k, v in PAPER_FIG9 if k in wide["k"].to_list() and o in wide.columns]
        hits = sum(wide.filter(pl.col("k") == k)[o].item() == v for o, k, v in stated)
        lines += ["", f"{hits} of the paper's {len(stated)} stated values reproduce with these choices."]
    return lines


def plot(df: pl.DataFrame, out: Path, fig9_000: pl.DataFrame | None = None) -> None:
    plt = pc.pyplot()
    present = set(df["optimization"].to_list())
    panels = [(df, "paper 001's choices (first, below_k)")]
    if fig9_000 is not None:
        panels.append((fig9_000, "paper 000's choices (smallest, all)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False, sharey=True)
    for ax, (data, choices) in zip(axes[0], panels):
        for o in [o for o in EDGE_METRICS if NAMES[o] in present]:
            g = data.filter(pl.col("optimization") == NAMES[o]).sort("k")
            ax.plot(g["k"], g["min_class_size"], marker="o", ms=3, color=COLORS[o], label=f"{NAMES[o]} (ours)")
        ks = np.array(sorted(data["k"].unique().to_list()))
        ax.plot(ks, ks, color="grey", ls="--", lw=1, label="minimum k = requested k")
        for i, (_o, k, v) in enumerate(PAPER_FIG9):
            ax.scatter(
                [k],
                [v],
                marker="D",
                s=40,
                facecolors="none",
                edgecolors="black",
                zorder=4,
                label="paper 001 text (LLM 7500 -> 12307; one class at 10000 for Distortion, Total; at 15000 for all)"
                if i == 0
                else None,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("requested k")
        ax.set_ylabel("minimum k (smallest class)")
        ax.set_title(f"Paper 001 Fig. 9: minimum k against requested k (Adult, 9 qids), {choices}", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "paper001_fig9.png")
    plt.close(fig)
    for name, (col, ylabel) in FIGURES.items():
        fig, ax = plt.subplots(figsize=(7, 5))
        for j, o in [(j, o) for j, o in enumerate(EDGE_METRICS) if NAMES[o] in present]:
            g = df.filter(pl.col("optimization") == NAMES[o]).sort("k")
            ax.plot(g["k"], g[col], marker="o", ms=3, color=COLORS[o], label=f"{NAMES[o]} (ours)")
            if name == "fig10":
                pk = [k for k in PAPER_FIG10 if k in g["k"].to_list()]
                ax.scatter(
                    pk,
                    [PAPER_FIG10[k][j] for k in pk],
                    marker="D",
                    s=30,
                    color=COLORS[o],
                    edgecolors="black",
                    zorder=4,
                    label=f"{NAMES[o]} (paper, Figs. 6-8 average row)",
                )
        ax.set_xscale("log")
        ax.set_xlabel("requested k")
        ax.set_ylabel(ylabel)
        note = "" if name == "fig10" else " (the paper gives this figure as a plot only)"
        ax.set_title(f"Paper 001 Fig. {name[3:]}: {ylabel} (Adult, 9 qids){note}", fontsize=8)
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(out / f"paper001_{name}.png")
        plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = pc.parser(__doc__)
    ap.add_argument("--ks", default=None, help="requested k, comma-separated (default: the 21; --quick: 2,10,100,500)")
    ap.add_argument("--optimizations", default=",".join(EDGE_METRICS), help="comma-separated (default: the seven)")
    ap.add_argument(
        "--fig9-000",
        action="store_true",
        help="only Fig. 9 with paper 000's choices (paper001_fig9_000.csv); redraw the rest",
    )
    args = ap.parse_args(argv)
    run = pc.Run("paper001_bench.py", args.quick, argv)
    out = pc.out_dir(args.quick, args.out)
    df, hs = load(args.rows or (2000 if args.quick else None))
    wanted = [int(k) for k in args.ks.split(",")] if args.ks else [2, 10, 100, 500] if args.quick else KS
    ks = [k for k in wanted if 2 * k <= df.height or k == 2]
    optimizations = args.optimizations.split(",")
    headline_k = 1500 if not args.quick else ks[-1]
    if args.fig9_000 and not args.plots_only:
        rows = []
        for k in ks:
            for o in optimizations:
                rows.append(fig9_000(df, hs, k, o))
                print(rows[-1], flush=True)
        pl.DataFrame(rows).write_csv(out / "paper001_fig9_000.csv")
    elif not args.plots_only:
        rows = []
        for k in ks:
            for o in optimizations:
                rows.append(one(df, hs, k, o))
                print({key: rows[-1][key] for key in ("k", "optimization", *MEASURES, "seconds")}, flush=True)
        pl.DataFrame(rows).write_csv(out / "paper001_figures.csv", float_precision=4)
        at_k = [r for r in rows if r["k"] == headline_k] or None  # the paper's choices at k ran for the figures
        k1500(df, hs, headline_k, 1 if args.quick else 5, optimizations, at_k).write_csv(
            out / "paper001_k1500.csv", float_precision=4
        )
    figs = pl.read_csv(out / "paper001_figures.csv")
    var = pl.read_csv(out / "paper001_k1500.csv")
    f9 = pl.read_csv(out / "paper001_fig9_000.csv") if (out / "paper001_fig9_000.csv").exists() else None
    facts = run.facts()
    redrawn = args.plots_only or args.fig9_000
    if redrawn and (out / "paper001.json").exists():
        import json

        old = json.loads((out / "paper001.json").read_text())["run"]
        facts = {**old, "redrawn": facts["date"], **({"fig9_000": facts} if args.fig9_000 else {})}
    summary = {
        "run": facts,
        "k": sorted(figs["k"].unique().to_list()),
        "k1500_ranked_first": {
            v: dict(g.select("optimization", "ranked_first_on").iter_rows())
            for (v,), g in var.group_by("variant", maintain_order=True)
        },
        "k1500_best_average": {v: g["best_average"][0] for (v,), g in var.group_by("variant", maintain_order=True)},
    }
    if f9 is not None:
        summary["fig9_000_min_class_size"] = f9.select("k", "optimization", "min_class_size").to_dicts()
    pc.write_json(out / "paper001.json", summary)
    (out / "paper001.md").write_text("\n".join(render(figs, var, facts, f9)) + "\n")
    plot(figs, out, f9)
    for v, f in summary["k1500_ranked_first"].items():
        print(v, f, summary["k1500_best_average"][v])


if __name__ == "__main__":
    main()
