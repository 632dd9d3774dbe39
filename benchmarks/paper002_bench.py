"""Paper 002 §5: metric correlations (Figs 5-7), Figures 1, 2 and 4, the paper's own Mondrian set-up, scenario 4.

Two set-ups, each Mondrian strict and relaxed, k in {2, 5, 10, 25, 50, 100}, entropy
decision trees, 6-fold cross-validation, random and statistical mapping back to
leaves (paper 002 §3.3), the four scenarios of §4.1:

- ``ours``: ARX Adult (30,162 rows), quasi-identifiers the first 4, 6 or 8 of
  sex, age, race, marital-status, education, native-country, workclass, occupation,
  the ARX hierarchies, Mondrian over the hierarchy's leaf order publishing the lowest
  common ancestor (what ``benchmarks/utility_bench.py`` runs);
- ``paper``: the paper's data and Mondrian: UCI adult.data + adult.test without '?'
  (45,222 rows), 12 attributes (fnlwgt and education-num left out), quasi-identifiers
  the first 4, 8 or 12 of the list above + relationship, hours-per-week,
  capital-gain, capital-loss; categorical values in alphabetical order published as
  value sets ``{a,b}``, numbers in ascending order published as ranges ``[lo-hi]``.

Metrics per anonymized table: discernibility (over the published classes, and over
Mondrian's partitions as the paper measures it), ILoss and CM. ``ours`` takes them
from ``pa.metrics.compute``; the ``paper`` set-up publishes value sets, which are not
hierarchy nodes, so its ILoss (sum over cells of (|set| - 1) / |domain|) and CM
(minority rows per published class / N) are counted here from the sets. Pearson r of
each metric against accuracy, per scenario, over every (qid count, mode, k, mapping),
beside the paper's r (Figs 5-7).

Scenario 4 (train on the original, test on the anonymized table): the paper finds it
the most stable, we find it the worst. The investigation: on one 2/3-1/3 split, the
tree trained on original rows classifies each anonymized test row (a) from one
random leaf per generalized value (what ``scenarios`` does), (b) from the average
class probabilities over 10 random leaf draws (``--draws``), approaching the paper's ID3 which
weighs every value of a generalized set 1/r (§3.3), (c) the same with statistical
draws.

Run:  python benchmarks/paper002_bench.py [--quick]
Writes benchmarks/results/paper002_runs.csv (accuracy per scenario and metrics per
table), paper002_correlations.csv, paper002_scenario4.csv, paper002.json, paper002.md and
paper002_fig1_2.png, paper002_fig4.png, paper002_fig5_7.png, paper002_scenario4.png.
--quick: 1,500-row samples, k in {2, 10}, one qid count, 2 draws.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]  # this checkout first
import papers_common as pc

import polars_anon as pa
from polars_anon.algorithms import mondrian as mondrian_parts
from polars_anon.encode import leaf_frequencies, map_to_leaves
from polars_anon.utility import Scenarios, make_model, split_rows, utility_grid

KS = [2, 5, 10, 25, 50, 100]
MODES = ["strict", "relaxed"]
MAPPINGS = ["random", "statistical"]
OURS_QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
PAPER_QIDS = [*OURS_QIDS, "relationship", "hours-per-week", "capital-gain", "capital-loss"]
PAPER_NUMERIC = ["age", "hours-per-week", "capital-gain", "capital-loss"]
PAPER_R = {  # Figures 5-7: r per scenario
    "discernibility": {2: -0.81, 3: -0.83, 4: -0.58},
    "iloss": {2: -0.98, 3: -0.98, 4: -0.82},
    "cm": {2: -0.98, 3: -0.99, 4: -0.95},
}
PAPER_BASELINE = 0.8182  # Scenario 1 accuracy (§5)
PAPER_FALL = {"2-3": (0.0215, 0.1915), "4": (0.0551, 0.0801)}  # falls from the baseline (§5.1)
TARGET_OURS, TARGET_PAPER = "salary-class", "income"


# ------------------------------------------------------------------ data
def ours_data(rows: int | None) -> tuple[pl.DataFrame, dict[str, pa.Hierarchy]]:
    d = pc.DATA / "adult"
    df = pc.sample(
        pl.read_csv(d / "adult.csv", separator=";", infer_schema=False).select(*OURS_QIDS, TARGET_OURS), rows
    )
    return df, {q: pa.Hierarchy.from_csv(d / f"adult_hierarchy_{q}.csv") for q in OURS_QIDS}


def paper_data(rows: int | None) -> pl.DataFrame:
    d = pc.DATA / "adult_uci"
    frames = []
    for name, skip in (("adult.data", 0), ("adult.test", 1)):
        f = pl.read_csv(d / name, has_header=False, new_columns=pc.ADULT_UCI_COLS, infer_schema=False, skip_rows=skip)
        frames.append(f.with_columns(pl.all().str.strip_chars()).with_columns(pl.col("income").str.strip_chars(".")))
    df = pl.concat(frames).filter(~pl.any_horizontal(pl.all() == "?")).select(*PAPER_QIDS, "income")
    return pc.sample(df, rows)


def flat(df: pl.DataFrame, qids: list[str]) -> dict[str, pa.Hierarchy]:
    """Leaves under one root: the one-hot encoding and the frequencies of the paper set-up's leaves."""
    return {q: pa.Hierarchy.suppression(sorted(df[q].unique().to_list())) for q in qids}


# ------------------------------------------------------------------ value sets (the paper's publishing)
def set_members(label: str, domain: list[str]) -> list[str]:
    """The leaves a published label stands for: ``{a,b}``, ``[lo-hi]`` (numbers of the domain within) or a value."""
    if label.startswith("{") and label.endswith("}"):
        return label[1:-1].split(",")
    if label.startswith("[") and label.endswith("]") and "-" in label[1:]:
        lo, hi = (float(x) for x in label[1:-1].split("-", 1))
        return [v for v in domain if lo <= float(v) <= hi]
    return [label]


def map_sets(published: pl.DataFrame, original: pl.DataFrame, qids: list[str], how: str, seed: int) -> pl.DataFrame:
    """Each published value set replaced by one of its values: uniform, or weighted by the original counts."""
    rng = np.random.default_rng(seed)
    out = {}
    for q in qids:
        counts = dict(original[q].value_counts().sort(q).iter_rows())  # in value order: the same draws every run
        domain = list(counts)
        uniq, inverse = np.unique(published[q].to_numpy().astype(str), return_inverse=True)  # sorted: seeded draws
        rows_of = np.split(
            np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse, minlength=len(uniq)))[:-1]
        )
        values = np.empty(published.height, dtype=object)
        for label, at in zip(uniq.tolist(), rows_of):
            members = set_members(label, domain)
            w = (
                np.array([counts.get(v, 0) for v in members], dtype=float)
                if how == "statistical"
                else np.ones(len(members))
            )
            values[at] = np.asarray(members, dtype=object)[rng.choice(len(members), size=len(at), p=w / w.sum())]
        out[q] = values.tolist()
    return published.with_columns(pl.Series(q, v, dtype=pl.String) for q, v in out.items())


def set_metrics(original: pl.DataFrame, published: pl.DataFrame, qids: list[str], target: str) -> dict[str, float]:
    """Discernibility, ILoss and CM of a table published as value sets (rows aligned with the original)."""
    classes = published.group_by(qids).agg(pl.len().alias("n"))
    dm = int((classes["n"].cast(pl.Int64) ** 2).sum())
    iloss = 0.0
    for q in qids:
        domain = original[q].unique().to_list()
        sizes = {lab: len(set_members(lab, domain)) for lab in published[q].unique().to_list()}
        iloss += float((published[q].replace_strict(sizes, return_dtype=pl.Float64) - 1).sum()) / len(domain)
    majority = (
        published.with_columns(original[target])
        .group_by(*qids, target)
        .len()
        .group_by(qids)
        .agg(pl.col("len").sum().alias("n"), pl.col("len").max().alias("top"))
    )
    cm = float((majority["n"] - majority["top"]).sum()) / published.height
    return {"discernibility": dm, "iloss": iloss, "cm": cm}


# ------------------------------------------------------------------ one anonymized table
def anonymized(setup: str, df: pl.DataFrame, hs: dict, qids: list[str], k: int, mode: str) -> pl.DataFrame:
    """The table Mondrian publishes: ``ours`` over the hierarchies, ``paper`` as value sets and ranges."""
    if setup == "ours":
        return pa.anonymize(
            df, qids=qids, hierarchies={q: hs[q] for q in qids}, k=k, method="mondrian", mode=mode
        ).collect()
    order = {q: "numeric" if q in PAPER_NUMERIC else "alphabetical" for q in qids}
    publish = {q: "range" if q in PAPER_NUMERIC else "set" for q in qids}
    return pa.anonymize(
        df, qids=qids, hierarchies={}, k=k, method="mondrian", mode=mode, order=order, publish=publish
    ).collect()


def partition_dm(df: pl.DataFrame, qids: list[str], hs: dict, k: int, mode: str, order: object, sets: list[int]) -> int:
    """Discernibility over Mondrian's partitions (the paper's DM): sum of squared partition sizes."""
    agg = pa.class_sizes(df.lazy().with_columns(pl.col(q).cast(pl.String) for q in qids), qids).collect()
    axes = mondrian_parts.axes({q: agg[q].unique().to_list() for q in qids}, hs, order, 0)
    segments, _ = mondrian_parts.partition(mondrian_parts.coordinates(agg, qids, axes), k, mode, sets)
    sizes = segments.group_by("__anon_pid").agg(pl.col("__anon_size").sum())["__anon_size"]
    return int((sizes.cast(pl.Int64) ** 2).sum())


def one_table(
    setup: str,
    df: pl.DataFrame,
    hs: dict,
    qids: list[str],
    k: int,
    mode: str,
    seeds: list[int],
    pub: pl.DataFrame,
    ours: Scenarios | None = None,
) -> list[dict]:
    """Measure the published table `pub` (:func:`anonymized`) and run the four scenarios for both mappings (set-up
    ``ours``: with `ours`, the run's :func:`scenarios_of` `df`, made here when not given)."""
    target = TARGET_OURS if setup == "ours" else TARGET_PAPER
    if setup == "ours":
        m = pa.metrics.compute(df, pub, qids, hs, ["discernibility", "iloss", "cm", "n_classes"], sensitive=target)
        metrics = m.row(0, named=True)
        dm_parts = partition_dm(df, qids, hs, k, mode, None, [])
    else:
        order = {q: "numeric" if q in PAPER_NUMERIC else "alphabetical" for q in qids}
        metrics = {**set_metrics(df, pub, qids, target), "n_classes": pub.select(qids).n_unique()}
        sets = [j for j, q in enumerate(qids) if q not in PAPER_NUMERIC]
        dm_parts = partition_dm(df, qids, {}, k, mode, order, sets)
    rows = []
    for mapping in MAPPINGS:
        if setup == "ours":
            # every attribute is a feature: the qids mapped back, the others are leaves already
            s = (ours or scenarios_of(df, hs, seeds))(pub, mapping)
        else:
            s = paper_scenarios(df, pub, qids, target, mapping, seeds)
        for r in s.iter_rows(named=True):
            rows.append(
                {
                    "setup": setup,
                    "n_qids": len(qids),
                    "mode": mode,
                    "k": k,
                    "mapping": mapping,
                    "scenario": r["scenario"],
                    "accuracy": r["mean"],
                    "accuracy_std": r["std"],
                    "discernibility_partitions": dm_parts,
                    **metrics,
                }
            )
    return rows


def scenarios_of(df: pl.DataFrame, hs: dict, seeds: list[int]) -> Scenarios:
    """The four scenarios of the ``ours`` set-up for every table published from `df`: 6-fold cross-validation, a
    decision tree, accuracy; the models trained on `df` are trained once, for all of them."""
    return Scenarios(df, TARGET_OURS, hs, model="tree", seeds=seeds, scores=["accuracy"], folds=6)


def paper_scenarios(
    df: pl.DataFrame, pub: pl.DataFrame, qids: list[str], target: str, mapping: str, seeds: list[int]
) -> pl.DataFrame:
    """The four scenarios for a table published as value sets: mapped back, one-hot over the leaves."""
    hs = flat(df, PAPER_QIDS)  # every attribute is a feature; only the qids were generalized
    mapped = map_sets(pub, df, qids, mapping, seed=0)
    orig_enc, anon_enc = (pa.encode(t.select(*PAPER_QIDS, target), hs, "setbinary").collect() for t in (df, mapped))
    pairs = [
        ("original", "original"),
        ("anonymized", "anonymized"),
        ("anonymized", "original"),
        ("original", "anonymized"),
    ]
    out = utility_grid(
        {"original": orig_enc, "anonymized": anon_enc},
        pairs,
        target,
        model="tree",
        seeds=seeds,
        scores=["accuracy"],
        folds=6,
    )
    number = pl.DataFrame({"train": [p[0] for p in pairs], "test": [p[1] for p in pairs], "scenario": [1, 2, 3, 4]})
    return out.join(number, on=["train", "test"]).sort("scenario")


# ------------------------------------------------------------------ scenario 4
class Original(NamedTuple):
    """What scenario 4 reads of a set-up's original table alone, the same for every table published from it: the
    features (every attribute, one-hot over its leaves), the split, and the tree trained on the original."""

    h: dict
    frequencies: dict | None
    x: np.ndarray
    y: np.ndarray
    train_idx: np.ndarray
    test_idx: np.ndarray
    tree: Any


def original_of(setup: str, df: pl.DataFrame, hs: dict) -> Original:
    """The set-up's :class:`Original` (one 2/3-1/3 split): made once per run, for every (mode, k)."""
    target = TARGET_OURS if setup == "ours" else TARGET_PAPER
    h = hs if setup == "ours" else flat(df, PAPER_QIDS)  # every attribute is a feature; the non-qids are leaves
    train_idx, test_idx = split_rows(df.height, 1 / 3, seed=0)
    x, y = features(df, h), df[target].to_numpy()
    frequencies = leaf_frequencies(df.lazy(), h) if setup == "ours" else None
    tree = make_model("tree").fit(x[train_idx], y[train_idx])
    return Original(h, frequencies, x, y, train_idx, test_idx, tree)


def features(t: pl.DataFrame, h: dict) -> np.ndarray:
    """`t`'s attributes one-hot over the leaves of `h` (set-to-binary), as scenario 4's trees read them."""
    return pa.encode(t.select(list(h)), h, "setbinary").collect().to_numpy().astype(np.float32)


def scenario4(
    setup: str,
    df: pl.DataFrame,
    hs: dict,
    qids: list[str],
    k: int,
    mode: str,
    pub: pl.DataFrame,
    draws: int = 10,
    original: Original | None = None,
) -> dict:
    """Scenario 4 on one split of the published table `pub` (:func:`anonymized`): one random leaf per value, or
    class probabilities averaged over `draws` draws. `original`: the set-up's :func:`original_of` (made here when
    not given)."""
    o = original or original_of(setup, df, hs)
    y, train_idx, test_idx, tree = o.y, o.train_idx, o.test_idx, o.tree

    def mapped(how: str, seed: int) -> pl.DataFrame:
        if setup == "ours":
            return map_to_leaves(pub, o.h, how, frequencies=o.frequencies, seed=seed).collect()
        return map_sets(pub, df, qids, how, seed)

    out = {
        "setup": setup,
        "n_qids": len(qids),
        "mode": mode,
        "k": k,
        "draws": draws,
        "scenario1": float((tree.predict(o.x[test_idx]) == y[test_idx]).mean()),
    }
    anon = features(mapped("random", 0), o.h)  # the first random draw: scenario 4's one draw, and scenarios 2-3's
    for how in MAPPINGS:
        probs = []
        for seed in range(draws):
            x = anon if (how, seed) == ("random", 0) else features(mapped(how, seed), o.h)
            probs.append(tree.predict_proba(x[test_idx]))
        one = tree.classes_[probs[0].argmax(axis=1)]
        mean = tree.classes_[np.mean(probs, axis=0).argmax(axis=1)]
        out[f"s4_one_draw_{how}"] = float((one == y[test_idx]).mean())
        out[f"s4_mean_draws_{how}"] = float((mean == y[test_idx]).mean())
    tree_anon = make_model("tree").fit(anon[train_idx], y[train_idx])
    out["scenario2_random"] = float((tree_anon.predict(anon[test_idx]) == y[test_idx]).mean())
    out["scenario3_random"] = float((tree_anon.predict(o.x[test_idx]) == y[test_idx]).mean())
    return out


# ------------------------------------------------------------------ summaries and plots
def _pearson(df: pl.DataFrame, metric: str) -> float:
    return float(np.corrcoef(df["accuracy"].to_numpy(), df[metric].cast(pl.Float64).to_numpy())[0, 1])


def correlations(runs: pl.DataFrame) -> pl.DataFrame:
    """Pearson r of each metric with the accuracy per set-up and scenario.

    ``r``: over every anonymized table (qid counts x modes x k x mappings);
    ``r_k_means``: over the means per k (each the mean over qid counts, modes and
    mappings, the averaging the paper states for its accuracy falls, §5).
    """
    rows = []
    for (setup,), g in runs.group_by("setup", maintain_order=True):
        for metric in ["discernibility", "discernibility_partitions", "iloss", "cm"]:
            for sc in (2, 3, 4):
                s = g.filter(pl.col("scenario") == sc)
                means = s.group_by("k").agg(pl.col("accuracy").mean(), pl.col(metric).cast(pl.Float64).mean())
                paper = PAPER_R.get(metric.replace("_partitions", ""), {}).get(sc)
                rows.append(
                    {
                        "setup": setup,
                        "metric": metric,
                        "scenario": sc,
                        "r": _pearson(s, metric),
                        "r_k_means": _pearson(means, metric),
                        "paper_r": paper,
                        "points": s.height,
                    }
                )
    return pl.DataFrame(rows)


def fig1_2_means(runs: pl.DataFrame) -> pl.DataFrame:
    """Figs. 1-2's curves: mean accuracy per (set-up, k) by mapping in scenario 2 (over qid counts and modes) and by
    mode in scenarios 2-4 (over qid counts and mappings), the paper's averaging (§5.1)."""
    by_mapping = (
        runs.filter(pl.col("scenario") == 2)
        .group_by("setup", "k", "mapping")
        .agg(pl.col("accuracy").mean())
        .pivot(on="mapping", index=["setup", "k"], values="accuracy")
        .rename({"random": "s2_random", "statistical": "s2_statistical"})
    )
    by_mode = (
        runs.filter(pl.col("scenario") > 1)
        .group_by("setup", "k", "scenario", "mode")
        .agg(pl.col("accuracy").mean())
        .with_columns(pl.format("s{}_{}", "scenario", "mode").alias("cell"))
        .pivot(on="cell", index=["setup", "k"], values="accuracy")
    )
    base = runs.filter(pl.col("scenario") == 1).group_by("setup").agg(pl.col("accuracy").mean().alias("s1"))
    order = ["s2_random", "s2_statistical", *[f"s{sc}_{m}" for sc in (2, 3, 4) for m in MODES]]
    return (
        by_mapping.join(by_mode, on=["setup", "k"])
        .join(base, on="setup")
        .select("setup", "k", "s1", *order)
        .sort("setup", "k", maintain_order=True)
    )


def render(runs: pl.DataFrame, corr: pl.DataFrame, s4: pl.DataFrame, facts: dict) -> list[str]:
    """paper002.md: the correlations beside the paper's, the accuracy per scenario, the scenario 4 runs."""
    lines = [
        "# Paper 002: metric correlations, the paper's Mondrian set-up, scenario 4",
        "",
        (
            f"Command: `{facts['command']}` ({facts['wall_seconds']:.0f} s wall, load average "
            f"{facts['load_average_start'][0]} -> {facts['load_average_end'][0]})."
        ),
        "",
        (
            "## Pearson r of each metric with the accuracy: over every table (qid counts x modes x k x mappings) / "
            "over the means per k"
        ),
        "",
        "| set-up | metric | scenario 2 | scenario 3 | scenario 4 |",
        "|---|---|---|---|---|",
    ]
    for (setup, metric), g in corr.group_by("setup", "metric", maintain_order=True):
        cells = []
        for sc in (2, 3, 4):
            r = g.filter(pl.col("scenario") == sc).row(0, named=True)
            cells.append(
                f"{r['r']:.2f} / {r['r_k_means']:.2f}"
                + (f" (paper {r['paper_r']:.2f})" if r["paper_r"] is not None else "")
            )
        lines.append(f"| {setup} | {metric} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Accuracy per scenario (mean over qid counts, modes, k, mappings; paper: scenario 1 81.82 %)",
        "",
        "| set-up | scenario 1 | scenario 2 | scenario 3 | scenario 4 |",
        "|---|---|---|---|---|",
    ]
    for (setup,), g in runs.group_by("setup", maintain_order=True):
        acc = (
            g.group_by("scenario").agg(pl.col("accuracy").mean(), pl.col("accuracy").min().alias("lo")).sort("scenario")
        )
        lines.append(
            f"| {setup} | "
            + " | ".join(f"{100 * a:.1f} % (min {100 * lo:.1f})" for a, lo in zip(acc["accuracy"], acc["lo"]))
            + " |"
        )
    ks = sorted(runs["k"].unique().to_list())
    lines += [
        "",
        (
            "## Falls from scenario 1, relative, of the mean accuracy per k (over qid counts, modes and "
            "mappings; paper §5.1: scenarios 2-3 2.15-19.15 %, 11.72 % on average for k 2-10; scenario 4 "
            "5.51-8.01 %)"
        ),
        "",
        "| set-up | scenario | " + " | ".join(f"k = {k}" for k in ks) + " | k 2-10 |",
        "|---" * (3 + len(ks)) + "|",
    ]
    for (setup,), g in runs.group_by("setup", maintain_order=True):
        s1 = g.filter(pl.col("scenario") == 1)["accuracy"].mean()
        for scs in ([2], [3], [4], [2, 3]):
            h = g.filter(pl.col("scenario").is_in(scs))
            per_k = h.group_by("k").agg(pl.col("accuracy").mean()).sort("k")
            small = h.filter(pl.col("k") <= 10)["accuracy"].mean()
            cells = [f"{100 * (1 - a / s1):.2f} %" for a in per_k["accuracy"]]
            cells.append("-" if small is None else f"{100 * (1 - small / s1):.2f} %")
            lines.append(f"| {setup} | {' and '.join(map(str, scs))} | " + " | ".join(cells) + " |")
    metrics = ["accuracy", "discernibility", "discernibility_partitions", "iloss", "cm"]
    ranges = (
        runs.filter(pl.col("scenario") > 1)
        .group_by("setup", "n_qids")
        .agg(*[pl.col(m).min().alias(f"{m}_lo") for m in metrics], *[pl.col(m).max().alias(f"{m}_hi") for m in metrics])
        .sort("setup", "n_qids")
    )
    fmt = {"accuracy": lambda x: f"{100 * x:.1f}", "iloss": lambda x: f"{x:,.0f}", "cm": lambda x: f"{x:.3f}"}
    lines += [
        "",
        "## Per qid count, scenarios 2-4 (every k, mode and mapping): range of the accuracy and the metrics",
        "",
        "| set-up | qids | accuracy % | DM over classes | DM over partitions | ILoss | CM |",
        "|---" * 7 + "|",
    ]
    for r in ranges.iter_rows(named=True):
        cells = [" - ".join(fmt.get(m, lambda x: f"{x:,}")(r[f"{m}_{e}"]) for e in ("lo", "hi")) for m in metrics]
        lines.append(f"| {r['setup']} | {r['n_qids']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            "## Figs. 1-2: accuracy % per k by mapping (scenario 2, mean over qid counts and modes) and by mode "
            "(mean over qid counts and mappings); the paper: statistical at most 1.4 % above random, strict a "
            "little above relaxed in scenario 3, negligible differences in scenarios 2 and 4"
        ),
        "",
        (
            "| set-up | k | s2 random | s2 statistical | statistical - random (points) | s3 strict | s3 relaxed | "
            "strict - relaxed (points): s2 / s3 / s4 |"
        ),
        "|---" * 8 + "|",
    ]
    for r in fig1_2_means(runs).iter_rows(named=True):
        gap = " / ".join(f"{100 * (r[f's{sc}_strict'] - r[f's{sc}_relaxed']):+.2f}" for sc in (2, 3, 4))
        lines.append(
            f"| {r['setup']} | {r['k']} | {100 * r['s2_random']:.2f} | {100 * r['s2_statistical']:.2f} | "
            f"{100 * (r['s2_statistical'] - r['s2_random']):+.2f} | {100 * r['s3_strict']:.2f} | "
            f"{100 * r['s3_relaxed']:.2f} | {gap} |"
        )
    d = s4["draws"].max() if "draws" in s4.columns else 10
    lines += [
        "",
        f"## Scenario 4 on one 2/3-1/3 split: one random leaf per value against the mean of {d} draws",
        "",
        (
            f"| set-up | mode | k | scenario 1 | scenario 2 | scenario 3 | s4, one draw | s4, mean of {d} draws | "
            f"s4 statistical, one draw | s4 statistical, mean of {d} |"
        ),
        "|---" * 10 + "|",
    ]
    for r in s4.iter_rows(named=True):
        lines.append(
            f"| {r['setup']} | {r['mode']} | {r['k']} | {r['scenario1']:.3f} | {r['scenario2_random']:.3f} | "
            f"{r['scenario3_random']:.3f} | {r['s4_one_draw_random']:.3f} | "
            f"{r['s4_mean_draws_random']:.3f} | "
            f"{r['s4_one_draw_statistical']:.3f} | {r['s4_mean_draws_statistical']:.3f} |"
        )
    return lines


def plot_fig5_7(runs: pl.DataFrame, corr: pl.DataFrame, out: Path) -> None:
    plt = pc.pyplot()
    metrics = [
        ("discernibility_partitions", "Fig. 5: DM (partitions)"),
        ("iloss", "Fig. 6: ILoss"),
        ("cm", "Fig. 7: CM"),
    ]
    colors = {"ours": "tab:blue", "paper": "tab:orange"}
    label = {"ours": "ours (ARX Adult, hierarchy nodes)", "paper": "ours, the paper's set-up (UCI Adult, value sets)"}
    fig, axes = plt.subplots(3, 3, figsize=(13, 12), squeeze=False)
    for i, (metric, title) in enumerate(metrics):
        for j, sc in enumerate((2, 3, 4)):
            ax, text = axes[i, j], []
            for (setup,), g in runs.filter(pl.col("scenario") == sc).group_by("setup", maintain_order=True):
                c = corr.filter((pl.col("setup") == setup) & (pl.col("metric") == metric) & (pl.col("scenario") == sc))
                text.append(
                    f"{'ARX set-up' if setup == 'ours' else 'paper set-up'}: r = {c['r'].item():.2f} (tables), "
                    f"{c['r_k_means'].item():.2f} (means per k)"
                )
                ax.scatter(
                    100 * g["accuracy"],
                    g[metric],
                    s=12,
                    alpha=0.5,
                    color=colors[setup],
                    label=f"{label[setup]}: every table",
                )
                means = g.group_by("k").agg(pl.col("accuracy").mean(), pl.col(metric).cast(pl.Float64).mean()).sort("k")
                ax.plot(
                    100 * means["accuracy"],
                    means[metric],
                    marker="D",
                    ms=4,
                    color=colors[setup],
                    ls="-",
                    lw=1,
                    label=f"{label[setup]}: mean per k (k = 2 ... 100)",
                )
            ax.text(
                0.02,
                0.02,
                "\n".join(text),
                transform=ax.transAxes,
                fontsize=6.5,
                va="bottom",
                bbox={"facecolor": "white", "alpha": 0.8, "lw": 0},
            )
            paper_r = PAPER_R[metric.replace("_partitions", "")][sc]
            ax.set_title(f"{title}, scenario {sc} (paper: r = {paper_r:.2f})", fontsize=8)
            ax.set_xlabel("classification accuracy %")
            ax.set_ylabel(metric)
            if metric.startswith("discernibility"):
                ax.set_yscale("log")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=8, bbox_to_anchor=(0.5, 0.955))
    fig.suptitle(
        "Paper 002 Figs. 5-7: metric against decision-tree accuracy per scenario "
        "(a table: one qid count, mode, k and mapping)",
        y=0.99,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.91))
    fig.savefig(out / "paper002_fig5_7.png")
    plt.close(fig)


def plot_fig1_2(runs: pl.DataFrame, out: Path) -> None:
    """Fig. 1 (mapping, scenario 2) and Fig. 2 (mode, scenario 3) per set-up, with the paper's scenario 1."""
    plt = pc.pyplot()
    means = fig1_2_means(runs)
    setups = means["setup"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(len(setups), 2, figsize=(12, 4.5 * len(setups)), squeeze=False)
    names = {"ours": "ARX set-up", "paper": "the paper's set-up"}
    curves = [
        (
            "Fig. 1: scenario 2 by mapping",
            [("s2_random", "random", "tab:blue"), ("s2_statistical", "statistical", "tab:orange")],
        ),
        ("Fig. 2: scenario 3 by mode", [("s3_relaxed", "relaxed", "tab:blue"), ("s3_strict", "strict", "tab:red")]),
    ]
    for row, setup in zip(axes, setups):
        g = means.filter(pl.col("setup") == setup)
        for ax, (title, lines) in zip(row, curves):
            for col, label, color in lines:
                ax.plot(g["k"], 100 * g[col], marker="o", color=color, label=f"ours: {label}")
            ax.axhline(100 * g["s1"][0], color="black", ls="-", lw=1, label="ours: non-anonymised (scenario 1)")
            ax.axhline(100 * PAPER_BASELINE, color="black", ls="--", lw=1, label="paper: non-anonymised, 81.82 %")
            ax.set_xscale("log")
            ax.set_xticks(KS, [str(k) for k in KS])
            ax.minorticks_off()
            ax.set_ylim(60, 85)
            ax.set_xlabel("k")
            ax.set_ylabel("classification accuracy % (mean)")
            ax.set_title(f"{title}, {names.get(setup, setup)}", fontsize=9)
            ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        "Paper 002 Figs. 1-2 (paper: statistical at most 1.4 % above random; strict a little above relaxed "
        "in scenario 3; y axes as the paper's, 60-85 %)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out / "paper002_fig1_2.png")
    plt.close(fig)


def plot_fig4(runs: pl.DataFrame, out: Path) -> None:
    plt = pc.pyplot()
    one = runs.filter((pl.col("scenario") == 2) & (pl.col("mapping") == "random"))
    setups = one["setup"].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(1, len(setups), figsize=(6 * len(setups), 4.2), squeeze=False)
    colors = {"strict": "tab:red", "relaxed": "tab:blue"}
    for ax, setup in zip(axes[0], setups):
        g = one.filter(
            (pl.col("setup") == setup) & (pl.col("n_qids") == one.filter(pl.col("setup") == setup)["n_qids"].max())
        )
        for mode in MODES:
            s = g.filter(pl.col("mode") == mode).sort("k")
            ax.plot(
                s["k"],
                s["discernibility_partitions"],
                marker="o",
                color=colors[mode],
                label=f"{mode}: over partitions (paper's DM)",
            )
            ax.plot(
                s["k"],
                s["discernibility"],
                marker="x",
                ls="--",
                color=colors[mode],
                label=f"{mode}: over published classes",
            )
        ax.set_xscale("log")
        ax.set_xticks(KS, [str(k) for k in KS])
        ax.set_xlabel("k")
        ax.set_ylabel("discernibility penalty")
        n = g["n_qids"].max()
        ax.set_title(
            f"{'ours: ARX Adult' if setup == 'ours' else 'paper set-up: UCI Adult, value sets'}, {n} qids", fontsize=9
        )
        ax.legend(fontsize=7)
    fig.suptitle(
        "Paper 002 Fig. 4: discernibility, strict against relaxed Mondrian "
        "(paper: strict above relaxed at every k, up to about 2.5e7 on 45,222 rows)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out / "paper002_fig4.png")
    plt.close(fig)


def plot_scenario4(runs: pl.DataFrame, s4: pl.DataFrame, out: Path) -> None:
    plt = pc.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(18, 6.5), squeeze=False)
    ax = axes[0, 0]
    names = {"ours": "ours, ARX Adult set-up", "paper": "ours, the paper's set-up (UCI Adult, value sets)"}
    means = (
        runs.group_by("setup", "scenario")
        .agg(pl.col("accuracy").mean(), pl.col("accuracy").std().alias("sd"))
        .sort("setup", "scenario")
    )
    for i, (setup,) in enumerate(means.select("setup").unique(maintain_order=True).iter_rows()):
        g = means.filter(pl.col("setup") == setup)
        ax.bar(
            g["scenario"] + (i - 0.5) * 0.35,
            100 * g["accuracy"],
            0.35,
            yerr=100 * g["sd"].fill_null(0),
            capsize=3,
            label=f"{names[setup]}: mean over qid counts, modes, k, mappings (± 1 s.d.)",
        )
    ax.axhline(100 * PAPER_BASELINE, color="black", ls="--", lw=1, label="paper scenario 1 (81.82 %)")
    lo, hi = PAPER_FALL["4"]
    ax.axhspan(
        100 * PAPER_BASELINE * (1 - hi),
        100 * PAPER_BASELINE * (1 - lo),
        color="grey",
        alpha=0.2,
        label="paper scenario 4 range (falls of 5.51-8.01 %)",
    )
    ax.set_xticks([1, 2, 3, 4])
    ax.set_ylim(50, 90)
    ax.set_xlabel("scenario")
    ax.set_ylabel("accuracy %")
    ax.set_title(
        "Accuracy per scenario (1: original -> original, 2: anonymized -> anonymized,\n"
        "3: anonymized -> original, 4: original -> anonymized; train -> test)",
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    for ax, setup in zip(axes[0, 1:], ["ours", "paper"]):
        for (mode,), g in s4.filter(pl.col("setup") == setup).group_by("mode", maintain_order=True):
            g = g.sort("k")
            ls = "-" if mode == "strict" else "--"
            ax.plot(
                g["k"],
                100 * g["scenario1"],
                color="black",
                ls=ls,
                label=f"{mode}: scenario 1 (train and test original)",
            )
            ax.plot(
                g["k"],
                100 * g["scenario2_random"],
                color="tab:blue",
                ls=ls,
                marker="^",
                ms=3,
                label=f"{mode}: scenario 2, one random leaf per value",
            )
            ax.plot(
                g["k"],
                100 * g["s4_one_draw_random"],
                color="tab:red",
                ls=ls,
                marker="o",
                ms=3,
                label=f"{mode}: scenario 4, one random leaf per value",
            )
            ax.plot(
                g["k"],
                100 * g["s4_mean_draws_random"],
                color="tab:green",
                ls=ls,
                marker="s",
                ms=3,
                label=f"{mode}: scenario 4, class probabilities averaged over {g['draws'][0]} draws",
            )
        ax.set_xscale("log")
        ks = sorted(s4["k"].unique().to_list())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("k")
        ax.set_ylabel("accuracy % (one 2/3-1/3 split)")
        which = "ours (hierarchy nodes)" if setup == "ours" else "paper set-up (value sets)"
        ax.set_title(f"Scenario 4 investigation, {which}", fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "paper002_scenario4.png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = pc.parser(__doc__)
    ap.add_argument("--ks", default=None, help="comma-separated (default: 2,5,10,25,50,100; --quick: 2,10)")
    ap.add_argument(
        "--paper-rows",
        type=int,
        default=None,
        help="sample this many rows for the paper set-up only (default: --rows; all 45,222 without)",
    )
    ap.add_argument("--draws", type=int, default=None, help="scenario 4's leaf draws (default 10; --quick: 2)")
    args = ap.parse_args(argv)
    run = pc.Run("paper002_bench.py", args.quick, argv)
    out = pc.out_dir(args.quick, args.out)
    rows = args.rows or (1500 if args.quick else None)
    paper_rows = args.paper_rows or rows
    ks = [int(k) for k in args.ks.split(",")] if args.ks else [2, 10] if args.quick else KS
    draws = args.draws or (2 if args.quick else 10)
    seeds = [0]
    if not args.plots_only:
        ours_df, hs = ours_data(rows)
        paper_df = paper_data(paper_rows)
        setups = [
            ("ours", ours_df, hs, [4] if args.quick else [4, 6, 8]),
            ("paper", paper_df, {}, [4] if args.quick else [4, 8, 12]),
        ]
        results, s4 = [], []
        for setup, df, h, counts in setups:
            names = OURS_QIDS if setup == "ours" else PAPER_QIDS
            ours = scenarios_of(df, h, seeds) if setup == "ours" else None
            last = {}  # the tables of the most qids, which scenario 4 reads again: anonymized once
            for n in counts:
                for mode in MODES:
                    for k in ks:
                        pub = anonymized(setup, df, h, names[:n], k, mode)
                        if n == counts[-1]:
                            last[mode, k] = pub
                        results += one_table(setup, df, h, names[:n], k, mode, seeds, pub, ours)
                        print(
                            f"{setup} {n} qids {mode} k={k}: "
                            + ", ".join(
                                f"s{r['scenario']} {r['accuracy']:.3f}"
                                for r in results[-8:]
                                if r["mapping"] == "random"
                            ),
                            flush=True,
                        )
            original = original_of(setup, df, h)  # the original's side of scenario 4, for every (mode, k)
            for mode in MODES:
                for k in ks:
                    s4.append(scenario4(setup, df, h, names[: counts[-1]], k, mode, last[mode, k], draws, original))
        pl.DataFrame(results).write_csv(out / "paper002_runs.csv", float_precision=5)
        pl.DataFrame(s4).write_csv(out / "paper002_scenario4.csv", float_precision=4)
    runs = pl.read_csv(out / "paper002_runs.csv")
    s4f = pl.read_csv(out / "paper002_scenario4.csv")
    corr = correlations(runs)
    corr.write_csv(out / "paper002_correlations.csv", float_precision=3)
    facts = run.facts()
    if args.plots_only and (out / "paper002.json").exists():
        import json

        facts = {**json.loads((out / "paper002.json").read_text())["run"], "redrawn": facts["date"]}
    summary = {
        "run": facts,
        "correlations": corr.to_dicts(),
        "mean_accuracy_by_setup_scenario": runs.group_by("setup", "scenario")
        .agg(pl.col("accuracy").mean())
        .sort("setup", "scenario")
        .to_dicts(),
        "scenario4": s4f.to_dicts(),
    }
    pc.write_json(out / "paper002.json", summary)
    (out / "paper002.md").write_text("\n".join(render(runs, corr, s4f, facts)) + "\n")
    plot_fig5_7(runs, corr, out)
    plot_fig1_2(runs, out)
    plot_fig4(runs, out)
    plot_scenario4(runs, s4f, out)
    print(corr)
    print(s4f)


if __name__ == "__main__":
    main()
