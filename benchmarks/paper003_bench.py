"""Paper 003 §3-§4.1: can an information-loss metric tell which of two k-anonymous tables is more useful?

For each dataset (BIRTH = cmc, ADULT, HEART = framingham, a generated RING) and each
algorithm, many anonymized versions of the training part (2/3 of the rows, seeded):

- ``datafly``: Datafly over a random *ordered* hierarchy per qid (§3.3.2);
- ``datafly_shuffled``: Datafly over a random *shuffled* hierarchy;
- ``mondrian``: strict Mondrian over a random order of each qid's values (§3.3.1),
  publishing hierarchy nodes: the cut order is the leaf order of a random ordered
  hierarchy built over a random permutation of the values, and a class publishes
  the lowest common ancestor of its values (the paper's Mondrian publishes the
  values' range; ours must publish hierarchy nodes for the metrics to be defined).

Unordered qids get a random order whatever the algorithm; continuous ones are in
20 equal-width buckets; k = 2 + Poisson(1) per version (§3.3.3). Each version is
encoded set-to-binary (§3.4.1; one column per leaf) and trains logistic regression,
random forest after PCA (0.95 variance) and k-nearest neighbours after PCA, tested on
the original held-out third: accuracy and AUROC (one-vs-rest macro for BIRTH's 3
classes). The §2.2 metrics (precision left out, as §3.5 does) are computed with
``pa.metrics.compute(..., normalized=True)``: each divided by its value on the fully
suppressed table (§3.5), or its own range where already in [0, 1].

1v1 (§4.1.3): within an algorithm, over *every* pair of versions (the paper draws
1000), the share where the version with the better metric is the more useful one
(ties 1/2), averaged over the 3 algorithms and 6 utility measures -> Table 4.1.
Left out: the auto-sklearn Meta-Metrics of §4.2 (a day of AutoML per model) and
the linear-regression effect sizes of §4.1.2.

Run:  python benchmarks/paper003_bench.py [--versions 200] [--datasets birth,adult,heart,ring] [--quick]
Writes benchmarks/results/paper003_versions.csv (one row per version), paper003_table41.md,
paper003.json (Table 4.1, run time, load) and the PNGs paper003_table41.png,
paper003_fig41.png, paper003_fig42.png, paper003_fig43_44.png, paper003_fig45.png,
paper003_fig46.png, paper003_fig47.png. The versions CSV is appended as versions finish,
so an interrupted run resumes. --quick: 3 versions per algorithm on 300-row samples
(results to benchmarks/data/quick/).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from sklearn.decomposition import PCA
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # this checkout first
import papers_common as pc

import polars_anon as pa
from polars_anon.metrics import METRICS
from polars_anon.utility import make_model, split_rows

ALGORITHMS = ["datafly", "datafly_shuffled", "mondrian"]
UTILITIES = ["lr_acc", "lr_auroc", "rf_pca_acc", "rf_pca_auroc", "knn_pca_acc", "knn_pca_auroc"]
# Table 4.1's columns and our metric for each
PAPER_METRICS = {
    "entropy": "entropy",
    "cm": "cm",
    "dm": "diameter",
    "discern": "discernibility",
    "ilm": "information_loss",
    "hellinger": "hellinger",
    "bivariate_corr": "cramers_v",
    "avg_eq_size": "c_avg",
    "ambiguity": "ambiguity",
    "granularity": "granularity",
    "dse": "squared_distance_error",
}
EXTRA_METRICS = ["loss", "nllm", "precision", "mi_loss"]  # ours, beside the paper's
PAPER_TABLE_41 = {
    "birth": [0.572, 0.604, 0.716, 0.561, 0.579, 0.622, 0.613, 0.559, 0.573, 0.572, 0.556],
    "ring": [0.593, 0.644, 0.591, 0.587, 0.604, 0.621, 0.573, 0.562, 0.599, 0.605, 0.554],
    "adult": [0.676, 0.572, 0.592, 0.661, 0.589, 0.607, 0.579, 0.621, 0.609, 0.604, 0.552],
    "heart": [0.752, 0.774, 0.768, 0.747, 0.748, 0.872, 0.728, 0.748, 0.748, 0.75, 0.742],
}
LOADERS = {"birth": pc.cmc, "adult": pc.adult_uci, "heart": pc.framingham, "ring": pc.ring}
COLORS = {"birth": "tab:blue", "ring": "tab:red", "adult": "goldenrod", "heart": "tab:green"}
ALGO_STYLE = {"datafly": "-", "datafly_shuffled": "--", "mondrian": ":"}


# ------------------------------------------------------------------ one version
def value_order(ds: pc.Dataset, q: str, rng: np.random.Generator) -> list[str]:
    """A qid's values in their natural order (numbers by value), or a random order for an unordered qid."""
    values = ds.df[q].unique().to_list()
    if q in ds.unordered:
        return [values[i] for i in rng.permutation(len(values))]
    return sorted(values, key=float) if q in ds.numeric else sorted(values)


def hierarchies(ds: pc.Dataset, algorithm: str, rng: np.random.Generator) -> dict[str, pa.Hierarchy]:
    """The version's random hierarchies (paper 003 §3.3.2); for Mondrian over a random permutation."""
    out = {}
    for q in ds.qids:
        values = value_order(ds, q, rng)
        seed = int(rng.integers(2**31))
        if algorithm == "datafly":
            out[q] = pa.Hierarchy.random_ordered(values, seed=seed)
        elif algorithm == "datafly_shuffled":
            out[q] = pa.Hierarchy.random_shuffled(values, seed=seed)
        else:
            out[q] = pa.Hierarchy.random_ordered([values[i] for i in rng.permutation(len(values))], seed=seed)
    return out


def _proba(model, X: np.ndarray, labels: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """predict_proba with a column per label (0 for a class absent from the training rows)."""
    p = model.predict_proba(X)
    full = np.zeros((len(X), len(labels)))
    for j, c in enumerate(model.classes_):
        full[:, labels.index(c)] = p[:, j]
    return full


def utilities(X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray, labels: list[str]) -> dict[str, float]:
    """Accuracy and AUROC of the three classifiers of §3.4.2, trained on (X, y), tested on (Xt, yt)."""
    models = {
        "lr": make_model("logistic"),
        "rf_pca": make_pipeline(PCA(0.95, random_state=0), make_model("forest")),
        "knn_pca": make_pipeline(PCA(0.95, random_state=0), KNeighborsClassifier()),
    }
    out = {}
    constant = len(np.unique(y)) < 2 or float(X.var(axis=0).sum()) == 0.0
    for name, model in models.items():
        if constant:  # nothing to learn: the majority class, a flat score
            majority = max(set(y.tolist()), key=y.tolist().count)
            pred, proba = np.full(len(yt), majority), np.full((len(yt), len(labels)), 1 / len(labels))
        else:
            model.fit(X, y)
            pred, proba = model.predict(Xt), _proba(model, Xt, labels)
        out[f"{name}_acc"] = float(accuracy_score(yt, pred))
        if len(labels) == 2:
            out[f"{name}_auroc"] = float(roc_auc_score(yt == labels[1], proba[:, 1]))
        else:
            out[f"{name}_auroc"] = float(roc_auc_score(yt, proba, multi_class="ovr", labels=labels))
    return out


def version(ds: pc.Dataset, train: pl.DataFrame, test: pl.DataFrame, algorithm: str, v: int) -> dict:
    """Anonymize the training rows once, measure the metrics and the six utilities."""
    rng = np.random.default_rng([sum(map(ord, ds.name)), ALGORITHMS.index(algorithm), v])
    k = 2 + int(rng.poisson(1))
    hs = hierarchies(ds, algorithm, rng)
    t0 = time.perf_counter()
    if algorithm == "mondrian":
        result = pa.anonymize(
            train, qids=ds.qids, hierarchies=hs, k=k, method="mondrian", order="hierarchy", insensitive=["__row"]
        )
    else:
        result = pa.anonymize(train, qids=ds.qids, hierarchies=hs, k=k, method="datafly", insensitive=["__row"])
    published = result.collect()  # verified k-anonymous
    t1 = time.perf_counter()
    names = [*PAPER_METRICS.values(), *EXTRA_METRICS]
    args = {"sensitive": ds.target, "k": k, "key": "__row"}
    norm = pa.metrics.compute(train, published, ds.qids, hs, names, normalized=True, **args).row(0, named=True)
    raw = pa.metrics.compute(
        train, published, ds.qids, hs, ["granularity", "discernibility", "n_classes", "suppressed"], **args
    ).row(0, named=True)
    t2 = time.perf_counter()
    labels = sorted(ds.df[ds.target].unique().to_list())
    enc = pa.encode(published.select(*ds.qids, ds.target), hs, "setbinary").collect()
    enc_test = pa.encode(test.select(*ds.qids, ds.target), hs, "setbinary").collect()
    X, y = enc.drop(ds.target).to_numpy().astype(np.float32), enc[ds.target].to_numpy()
    Xt, yt = enc_test.drop(ds.target).to_numpy().astype(np.float32), enc_test[ds.target].to_numpy()
    util = utilities(X, y, Xt, yt, labels) if len(y) else dict.fromkeys(UTILITIES, float("nan"))
    t3 = time.perf_counter()
    return {
        "dataset": ds.name,
        "algorithm": algorithm,
        "version": v,
        "k": k,
        "rows_published": published.height,
        **{f"raw_{n}": raw[n] for n in raw},
        **norm,
        **util,
        "anonymize_s": round(t1 - t0, 3),
        "metrics_s": round(t2 - t1, 3),
        "models_s": round(t3 - t2, 3),
    }


# ------------------------------------------------------------------ the run
def prepared(name: str, rows: int | None) -> tuple[pc.Dataset, pl.DataFrame, pl.DataFrame] | None:
    ds = LOADERS[name]()
    if ds is None:
        print(f"{name}: data not found under {pc.DATA}; left out", flush=True)
        return None
    ds.df = pc.sample(ds.df, rows)
    df = ds.df.with_row_index("__row")
    tr, te = split_rows(df.height, 1 / 3, seed=0)
    return ds, df[tr], df[te]


def _versions(spec: str, names: list[str]) -> dict[str, int]:
    """ "200" -> 200 for every dataset; "birth=200,adult=100" -> per dataset (others 200)."""
    if "=" not in spec:
        return dict.fromkeys(names, int(spec))
    given = {k: int(v) for k, v in (part.split("=") for part in spec.split(","))}
    return {n: given.get(n, 200) for n in names}


def run(names: list[str], versions: dict[str, int], rows: int | None, out: Path) -> pl.DataFrame:
    path = out / "paper003_versions.csv"
    done = pl.read_csv(path) if path.exists() else None
    have = set() if done is None else set(zip(done["dataset"], done["algorithm"], done["version"]))
    for name in names:
        prep = prepared(name, rows)
        if prep is None:
            continue
        ds, train, test = prep
        for v in range(versions[name]):
            for algorithm in ALGORITHMS:
                if (ds.name, algorithm, v) in have:
                    continue
                row = version(ds, train, test, algorithm, v)
                frame = pl.DataFrame([row])
                with path.open("a") as f:
                    frame.write_csv(f, include_header=f.tell() == 0)
                print(
                    f"{ds.name} {algorithm} v{v} k={row['k']}: lr_acc {row['lr_acc']:.3f} granularity "
                    f"{row['granularity']:.3f} ({row['anonymize_s'] + row['metrics_s'] + row['models_s']:.1f} s)",
                    flush=True,
                )
    limit = pl.col("dataset").replace_strict(versions, default=0, return_dtype=pl.Int64)
    return pl.read_csv(path).filter(pl.col("version") < limit)


def table41(df: pl.DataFrame) -> pl.DataFrame:
    """Rate per (dataset, metric): mean over algorithms and utility measures of the pairwise agreement.

    ``rate`` counts a tied pair 1/2; ``rate_ties_excluded`` leaves tied pairs out;
    ``rate_ties_success`` counts them as successes; ``tied`` is the share of tied pairs.
    """
    rows = []
    for (dataset,), part in df.group_by("dataset", maintain_order=True):
        for label, metric in [*PAPER_METRICS.items(), *((m, m) for m in EXTRA_METRICS)]:
            higher = METRICS[metric].better == "higher"
            rates: dict[str, list[float]] = {"half": [], "excluded": [], "success": [], "tied": []}
            for (_algo,), g in part.group_by("algorithm", maintain_order=True):
                m = g[metric].cast(pl.Float64).fill_null(float("nan")).to_numpy()
                for u in UTILITIES:
                    y = g[u].to_numpy().astype(float)
                    rates["half"].append(pc.pairwise_agreement(m, y, higher))
                    rates["excluded"].append(pc.pairwise_agreement(m, y, higher, ties=None))
                    rates["success"].append(pc.pairwise_agreement(m, y, higher, ties=1.0))
                    rates["tied"].append(pc.tie_share(m, y))
            ok = {key: np.array(v, dtype=float)[~np.isnan(np.array(v, dtype=float))] for key, v in rates.items()}
            half = ok["half"]
            paper = PAPER_TABLE_41.get(dataset)
            idx = list(PAPER_METRICS).index(label) if label in PAPER_METRICS else None
            mean = lambda a: float(a.mean()) if len(a) else None
            rows.append(
                {
                    "dataset": dataset,
                    "metric": label,
                    "ours_metric": metric,
                    "rate": mean(half),
                    "rate_std": float(half.std()) if len(half) else None,
                    "rate_min": float(half.min()) if len(half) else None,
                    "rate_max": float(half.max()) if len(half) else None,
                    "rate_ties_excluded": mean(ok["excluded"]),
                    "rate_ties_success": mean(ok["success"]),
                    "tied": mean(ok["tied"]),
                    "n_combinations": len(half),
                    "paper": None if paper is None or idx is None else paper[idx],
                    "n_versions": part.group_by("algorithm").len()["len"].min(),
                }
            )
    return pl.DataFrame(rows)


def run_note(facts: dict) -> str:
    """The wall time and load of the process that wrote the files (a redraw says so)."""
    if facts.get("redrawn_from_csv"):
        return f"redrawn from the versions CSV on {facts['date']} (no version computed)."
    return (
        f"the last (resumed) process ran {facts['wall_seconds']:.0f} s wall, load average "
        f"{facts['load_average_start'][0]} at its start, {facts['load_average_end'][0]} at its end (2 shared cores)."
    )


def render_table(t: pl.DataFrame, versions: dict, facts: dict) -> list[str]:
    lines = [
        "# Paper 003 Table 4.1: how often the better metric picks the more useful of two versions",
        "",
        "Rate = share of pairs of versions (same dataset, same algorithm) where the version with the better",
        "normalized metric has the better utility, averaged over 3 algorithms x 6 utility measures; random",
        "choice gives 0.5. A pair tied in the metric or the utility counts 1/2; in brackets the same rate with",
        "tied pairs left out / counted as successes (the paper does not say which it does). Cell: ours [ties",
        "left out / ties successes] | paper.",
        "",
        f"Versions per (dataset, algorithm): {versions}. Command: `{facts['command']}`; the versions took",
        f"{facts.get('version_seconds_total', 0) / 3600:.1f} h of compute in all (anonymize + metrics "
        "+ classifiers, summed over",
        f"versions); {run_note(facts)}",
        "",
        "| metric | " + " | ".join(t["dataset"].unique(maintain_order=True).to_list()) + " |",
        "|---" * (1 + t["dataset"].n_unique()) + "|",
    ]
    for (metric,), g in t.group_by("metric", maintain_order=True):
        cells = []
        for r in g.iter_rows(named=True):
            ours = (
                "-"
                if r["rate"] is None
                else (f"{r['rate']:.3f} [{r['rate_ties_excluded']:.3f} / {r['rate_ties_success']:.3f}]")
            )
            cells.append(f"{ours} \\| {r['paper'] if r['paper'] is not None else '-'}")
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return lines


def test_class_shares(names: list[str], rows: int | None) -> dict[str, list[float]]:
    """The share of each class among each dataset's test rows (the split every version is tested on)."""
    shares = {}
    for name in names:
        prep = prepared(name, rows)
        if prep is not None:
            ds, _, test = prep
            shares[ds.name] = test[ds.target].value_counts(normalize=True)["proportion"].to_list()
    return shares


def render_details(df: pl.DataFrame, shares: dict[str, list[float]]) -> list[str]:
    """The medians behind Figs. 4.3-4.4 and what makes pairs tie: classifiers that predict one class."""
    metrics = list(PAPER_METRICS.items())
    lines = [
        "",
        "## Medians of the normalized metrics per algorithm (Figs. 4.3-4.4)",
        "",
        "| dataset | algorithm | " + " | ".join(label for label, _ in metrics) + " |",
        "|---" * (2 + len(metrics)) + "|",
    ]
    med = df.group_by("dataset", "algorithm", maintain_order=True).agg(pl.col(m).median() for _, m in metrics)
    for r in med.sort("dataset", "algorithm").iter_rows(named=True):
        cells = ["-" if r[m] is None else f"{r[m]:.3f}" for _, m in metrics]
        lines.append(f"| {r['dataset']} | {r['algorithm']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            "## Ties: versions whose classifier predicts a single class (its accuracy is the share of one class "
            "among the test rows) and pairs of versions tied in each utility (mean over the 3 algorithms)"
        ),
        "",
        "| dataset | utility | single-class versions | tied pairs |",
        "|---|---|---|---|",
    ]
    for (dataset,), g in df.group_by("dataset", maintain_order=True):
        for u in UTILITIES:
            single = "-"
            if u.endswith("_acc") and dataset in shares:
                acc = g[u].to_numpy()
                hit = np.isclose(acc[:, None], np.array(shares[dataset])[None, :], rtol=0, atol=1e-9).any(axis=1)
                single = f"{100 * hit.mean():.1f} % of {len(acc)}"
            tied = []
            for (_algo,), h in g.group_by("algorithm", maintain_order=True):
                y = h[u].to_numpy().astype(float)
                i, j = np.triu_indices(len(y), 1)
                if len(i):
                    tied.append(float((y[i] == y[j]).mean()))
            lines.append(
                f"| {dataset} | {u} | {single} | {100 * np.mean(tied):.1f} % |"
                if tied
                else f"| {dataset} | {u} | {single} | - |"
            )
    return lines


# ------------------------------------------------------------------ plots
def plot_table41(t: pl.DataFrame, out: Path) -> None:
    plt = pc.pyplot()
    datasets = t["dataset"].unique(maintain_order=True).to_list()
    metrics = list(PAPER_METRICS) + EXTRA_METRICS
    fig, axes = plt.subplots(len(datasets), 1, figsize=(11, 2.6 * len(datasets)), sharex=True, squeeze=False)
    x = np.arange(len(metrics))
    for ax, d in zip(axes[:, 0], datasets):
        g = {r["metric"]: r for r in t.filter(pl.col("dataset") == d).iter_rows(named=True)}
        ours = np.array([np.nan if g[m]["rate"] is None else g[m]["rate"] for m in metrics])
        ax.bar(x, ours, 0.6, color=COLORS.get(d, "grey"), alpha=0.8, label="ours: mean over 3 algorithms x 6 utilities")
        sd = np.array([np.nan if g[m]["rate_std"] is None else g[m]["rate_std"] for m in metrics])
        ax.errorbar(
            x,
            ours,
            yerr=sd,
            fmt="none",
            ecolor="black",
            capsize=2,
            label="ours: ± 1 s.d. over the 18 (algorithm, utility) rates",
        )
        paper = [g[m]["paper"] for m in metrics]
        ax.scatter(
            x,
            [np.nan if p is None else p for p in paper],
            marker="D",
            color="black",
            zorder=3,
            label="paper 003 Table 4.1",
        )
        succ = [np.nan if g[m]["rate_ties_success"] is None else g[m]["rate_ties_success"] for m in metrics]
        ax.scatter(x, succ, marker="x", color="dimgrey", zorder=3, label="ours, counting a tied pair as a success")
        ax.axhline(0.5, color="grey", ls="--", lw=1, label="random choice (0.5)")
        ax.set_ylim(0, 1)
        n = t.filter(pl.col("dataset") == d)["n_versions"][0]
        ax.set_ylabel(f"{d} ({n} versions\nper algorithm)\nshare correct", fontsize=8)
    axes[0, 0].legend(loc="lower right", ncol=2)
    axes[-1, 0].set_xticks(x, metrics, rotation=35, ha="right")
    fig.suptitle("Paper 003 Table 4.1: the better metric picks the more useful version (1v1, same algorithm)")
    fig.tight_layout()
    fig.savefig(out / "paper003_table41.png")
    plt.close(fig)


def _fit_line(ax, x: np.ndarray, y: np.ndarray, **kw) -> None:  # type: ignore[no-untyped-def]
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() >= 2 and np.ptp(x[ok]) > 0:
        a, b = np.polyfit(x[ok], y[ok], 1)
        xs = np.linspace(x[ok].min(), x[ok].max(), 2)
        ax.plot(xs, a * xs + b, **kw)


def _scatter_panel(ax, df: pl.DataFrame, metric: str, u: str, per_algorithm: bool) -> None:  # type: ignore[no-untyped-def]
    for (d,), g in df.group_by("dataset", maintain_order=True):
        x, y = g[metric].cast(pl.Float64).fill_null(float("nan")).to_numpy(), g[u].to_numpy().astype(float)
        ax.scatter(x, y, s=4, alpha=0.35, color=COLORS.get(d, "grey"), label=f"{d} versions")
        if not per_algorithm:
            _fit_line(ax, x, y, color=COLORS.get(d, "grey"), ls=":", lw=1.5, label=f"{d}: least-squares line")
            continue
        for (a,), ga in g.group_by("algorithm", maintain_order=True):
            _fit_line(
                ax,
                ga[metric].cast(pl.Float64).fill_null(float("nan")).to_numpy(),
                ga[u].to_numpy().astype(float),
                color=COLORS.get(d, "grey"),
                ls=ALGO_STYLE[a],
                lw=1.5,
                label=f"{d}, {a}: least-squares line",
            )
    ax.set_xlabel(f"{metric} (normalized)", fontsize=8)
    ax.set_ylabel(u, fontsize=8)


def plot_scatter(df: pl.DataFrame, metrics: list[str], name: str, title: str, out: Path) -> None:
    """Figs. 4.1-4.2: a row per metric, a column per utility measure, one colour and least-squares line per dataset."""
    plt = pc.pyplot()
    fig, axes = plt.subplots(
        len(metrics), len(UTILITIES), figsize=(3 * len(UTILITIES), 2.4 * len(metrics)), squeeze=False
    )
    for i, metric in enumerate(metrics):
        for j, u in enumerate(UTILITIES):
            _scatter_panel(axes[i, j], df, metric, u, per_algorithm=False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    h = fig.get_figheight()
    fig.suptitle(title, y=1 - 0.08 / h)
    fig.legend(
        handles, labels, loc="upper center", ncol=4, markerscale=3, fontsize=7, bbox_to_anchor=(0.5, 1 - 0.3 / h)
    )
    # tight_layout on 66 panels takes seconds: fixed margins instead
    fig.subplots_adjust(left=0.05, right=0.99, bottom=0.6 / h, top=1 - 0.85 / h, wspace=0.3, hspace=0.45)
    fig.savefig(out / name)
    plt.close(fig)


def plot_per_algorithm(df: pl.DataFrame, metric: str, name: str, title: str, out: Path) -> None:
    """Figs. 4.6-4.7: one metric against each utility measure, a least-squares line per (dataset, algorithm)."""
    plt = pc.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(15, 9), squeeze=False)
    for ax, u in zip(axes.ravel(), UTILITIES):
        _scatter_panel(ax, df, metric, u, per_algorithm=True)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(title, y=0.99)
    fig.legend(handles, labels, loc="upper center", ncol=4, markerscale=3, fontsize=7, bbox_to_anchor=(0.5, 0.965))
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.07, top=0.85, wspace=0.25, hspace=0.3)
    fig.savefig(out / name)
    plt.close(fig)


def plot_histograms(df: pl.DataFrame, columns: list[str], name: str, title: str, out: Path) -> None:
    plt = pc.pyplot()
    datasets = df["dataset"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(
        len(columns), len(datasets), figsize=(3.2 * len(datasets), 1.9 * len(columns)), squeeze=False
    )
    colors = {"datafly": "tab:blue", "datafly_shuffled": "tab:orange", "mondrian": "tab:green"}
    for i, c in enumerate(columns):
        for j, d in enumerate(datasets):
            ax = axes[i, j]
            g = df.filter(pl.col("dataset") == d)
            values = g[c].cast(pl.Float64).drop_nulls().drop_nans()
            bins = np.linspace(float(values.min()), float(values.max()) + 1e-9, 21) if len(values) else 10
            for a in ALGORITHMS:
                x = g.filter(pl.col("algorithm") == a)[c].cast(pl.Float64).drop_nulls().drop_nans().to_numpy()
                ax.hist(x, bins=bins, alpha=0.5, color=colors[a], label=a)
            if i == 0:
                ax.set_title(
                    f"{d} ({g.filter(pl.col('algorithm') == ALGORITHMS[0]).height} versions per algorithm)", fontsize=9
                )
            if j == 0:
                ax.set_ylabel(f"{c}\nversions", fontsize=8)
    axes[0, 0].legend()
    h = fig.get_figheight()
    fig.suptitle(
        f"{title}\n(x: the value, 20 equal-width bins per panel; y: number of versions in the bin)", y=1 - 0.1 / h
    )
    fig.subplots_adjust(left=0.08, right=0.99, bottom=0.03, top=1 - 0.95 / h, wspace=0.25, hspace=0.35)
    fig.savefig(out / name)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = pc.parser(__doc__)
    ap.add_argument("--versions", default=None, help="N for every dataset, or name=N,... (default 200; --quick 3)")
    ap.add_argument("--datasets", default="birth,adult,heart,ring")
    args = ap.parse_args(argv)
    names = args.datasets.split(",")
    versions = _versions(args.versions or ("3" if args.quick else "200"), names)
    rows = args.rows or (300 if args.quick else None)
    run_facts = pc.Run("paper003_bench.py", args.quick, argv)
    out = pc.out_dir(args.quick, args.out)
    if args.quick and not args.plots_only and (out / "paper003_versions.csv").exists():
        (out / "paper003_versions.csv").unlink()
    df = pl.read_csv(out / "paper003_versions.csv") if args.plots_only else run(names, versions, rows, out)
    t = table41(df)
    counts = {
        f"{d}/{a}": n for d, a, n in df.group_by("dataset", "algorithm").len().sort("dataset", "algorithm").rows()
    }
    total = round(float(df.select(pl.sum_horizontal("anonymize_s", "metrics_s", "models_s").sum()).item()), 1)
    facts = run_facts.facts(versions=counts, version_seconds_total=total, redrawn_from_csv=args.plots_only)
    t.write_csv(out / "paper003_table41.csv", float_precision=4)
    details = render_details(df, test_class_shares(sorted(df["dataset"].unique()), rows))
    (out / "paper003_table41.md").write_text("\n".join(render_table(t, counts, facts) + details) + "\n")
    summary = {
        "run": facts,
        "table41": t.to_dicts(),
        "seconds_per_version": {
            a: round(float(v), 2)
            for a, v in df.group_by("algorithm")
            .agg((pl.col("anonymize_s") + pl.col("metrics_s") + pl.col("models_s")).mean())
            .rows()
        },
        "mean_utility": df.group_by("dataset", "algorithm")
        .agg(pl.col(UTILITIES).mean())
        .sort("dataset", "algorithm")
        .to_dicts(),
        "left_out": [
            "§4.2 Meta-Metrics (auto-sklearn, 24 h of AutoML per model)",
            "§4.1.2 linear-regression effect sizes",
        ],
    }
    pc.write_json(out / "paper003.json", summary)
    plot_table41(t, out)
    first, second = list(PAPER_METRICS.values())[:6], list(PAPER_METRICS.values())[6:]
    plot_scatter(
        df,
        first,
        "paper003_fig41.png",
        "Paper 003 Fig. 4.1: metrics (normalized) against utility; dotted: least squares per dataset, all algorithms",
        out,
    )
    plot_scatter(
        df,
        second,
        "paper003_fig42.png",
        "Paper 003 Fig. 4.2: metrics (normalized) against utility; dotted: least squares per dataset, all algorithms",
        out,
    )
    plot_histograms(
        df,
        list(PAPER_METRICS.values()),
        "paper003_fig43_44.png",
        "Paper 003 Figs. 4.3-4.4: distribution of each normalized metric per algorithm",
        out,
    )
    plot_histograms(
        df, UTILITIES, "paper003_fig45.png", "Paper 003 Fig. 4.5: distribution of the utility measures", out
    )
    plot_per_algorithm(
        df,
        "granularity",
        "paper003_fig46.png",
        "Paper 003 Fig. 4.6: granularity against utility, one least-squares line per (dataset, algorithm)",
        out,
    )
    plot_per_algorithm(
        df,
        "hellinger",
        "paper003_fig47.png",
        "Paper 003 Fig. 4.7: Hellinger against utility, one least-squares line per (dataset, algorithm)",
        out,
    )
    print("\n".join(render_table(t, counts, facts)))


if __name__ == "__main__":
    main()
