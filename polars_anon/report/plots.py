"""The report's plots, drawn with matplotlib as self-contained SVG (text as paths, no fonts or network needed).

Each function takes plain values from the report JSON and returns SVG text. The
figures are made with :class:`matplotlib.figure.Figure` (no pyplot, no global
backend), with a fixed SVG hash salt and no date, so the same report gives the
same bytes. This module imports matplotlib: only the HTML renderers import it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["bin_label", "class_size_plot", "loss_plot", "neighbours_plot", "tradeoff_plot"]

_STYLE: dict[RcKeyType, Any] = {
    "svg.hashsalt": "polars_anon",
    "svg.fonttype": "path",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "legend.frameon": False,
}
BEFORE, AFTER, WARN, INK = "#9aa5b1", "#1f6f8b", "#c0392b", "#333333"
METHOD_COLORS = ("#1f6f8b", "#e07a1f", "#5a8f29", "#8e44ad", "#b03a48", "#7f8c8d")


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context(_STYLE):
        fig.savefig(buf, format="svg", metadata={"Date": None})  # constrained layout already fits the text
    return buf.getvalue()


def _legend(fig: Figure, ncols: int = 3) -> None:
    """One legend for the figure, below the axes (never over the data)."""
    with matplotlib.rc_context(_STYLE):
        fig.legend(loc="outside lower center", ncols=ncols)


def _figure(width: float, height: float, nrows: int = 1) -> tuple[Figure, Any]:
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
        return fig, fig.subplots(nrows, 1)


def bin_label(low: int, high: int | None) -> str:
    """``1``, ``3-4``, ``10+``: the label of a class-size bin.

    >>> bin_label(1, 1), bin_label(3, 4), bin_label(10, None)
    ('1', '3-4', '10+')
    """
    if high is None:
        return f"{low}+"
    return str(low) if high == low else f"{low}-{high}"


def class_size_plot(class_sizes: Mapping[str, Any], k: int, axis: str) -> str:
    """Share of the records per class-size bin, in the input and as published; bins below k shaded; `axis` says
    what a size counts (the guarantee's :attr:`~polars_anon.report.guarantee.Terms.axis`)."""
    published, original = class_sizes.get("published") or {}, class_sizes.get("input") or {}
    bins = published.get("bins") or original.get("bins") or []  # the report gives both the same bins
    lows = [b["low"] for b in bins]
    labels = [bin_label(b["low"], b["high"]) for b in bins]
    fig, ax = _figure(8.0, 3.6)
    x = range(len(lows))
    for offset, (series, name, color) in enumerate(
        ((original, "input (before)", BEFORE), (published, "published (after)", AFTER))
    ):
        by_low = {b["low"]: b["rows"] for b in series.get("bins", [])}
        total = float(series.get("n_rows") or 0) or 1.0
        ax.bar(
            [i + (offset - 0.5) * 0.4 for i in x],
            [by_low.get(lo, 0) / total for lo in lows],
            width=0.4,
            label=name,
            color=color,
        )
    below = [i for i, lo in enumerate(lows) if lo < k]
    if below and k > 1:
        ax.axvspan(-0.5, max(below) + 0.5, color=WARN, alpha=0.08, label=f"classes smaller than k={k}")
    ax.set_xticks(list(x), labels, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(lows) - 0.4)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(axis)
    ax.set_ylabel("share of the records")
    ax.set_title("Class sizes: how many records share their quasi-identifiers")
    _legend(fig)
    return _svg(fig)


def loss_plot(loss_by_qid: Mapping[str, float], loss: float | None) -> str:
    """Horizontal bars: the average cell loss of each quasi-identifier, and the mean over them."""
    names = list(loss_by_qid)
    fig, ax = _figure(8.0, 1.3 + 0.32 * len(names))
    ys = list(range(len(names)))[::-1]
    ax.barh(ys, [loss_by_qid[q] for q in names], color=AFTER, label="loss of the quasi-identifier")
    for y, q in zip(ys, names):
        ax.annotate(
            f"{loss_by_qid[q]:.3f}",
            (loss_by_qid[q], y),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    if loss is not None:
        ax.axvline(loss, color=INK, linestyle="--", linewidth=1, label=f"mean over the quasi-identifiers ({loss:.3f})")
    ax.set_yticks(ys, names)
    ax.set_xlim(0, 1.08)
    ax.set_xlabel("average cell loss (0 = published as is, 1 = generalized to the root or suppressed)")
    ax.set_title("Information loss per quasi-identifier")
    _legend(fig, 2)
    return _svg(fig)


def neighbours_plot(neighbours: Sequence[Mapping[str, Any]], loss: float, suppressed: int) -> str:
    """The chosen full-domain vector's loss against each neighbour's (feasible or not)."""
    labels = [f"{n['qid']} {'+1' if n['step'] > 0 else '-1'}" for n in neighbours]
    fig, ax = _figure(8.0, 3.6)
    xs = list(range(len(neighbours)))
    ok = [i for i, n in enumerate(neighbours) if n["feasible"]]
    bad = [i for i, n in enumerate(neighbours) if not n["feasible"]]
    ax.axhline(loss, color=AFTER, linewidth=2, label=f"chosen vector (loss {loss:.3f}, {suppressed:,} rows suppressed)")
    ax.scatter(
        [xs[i] for i in ok], [neighbours[i]["loss"] for i in ok], color=INK, zorder=3, label="neighbour, feasible"
    )
    ax.scatter(
        [xs[i] for i in bad],
        [neighbours[i]["loss"] for i in bad],
        color=WARN,
        marker="x",
        s=45,
        zorder=3,
        label="neighbour, infeasible (too many rows below k)",
    )
    for i, n in enumerate(neighbours):
        if n["suppressed"]:
            ax.annotate(
                f"{n['suppressed']:,} supp.",
                (i, n["loss"]),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                fontsize=7,
            )
    ax.set_xticks(xs, labels, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, max(len(xs), 1) - 0.4)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("neighbour: one quasi-identifier one level lower (-1) or higher (+1)")
    ax.set_ylabel("average cell loss")
    ax.set_title("The chosen generalization among its lattice neighbours")
    _legend(fig)
    return _svg(fig)


def tradeoff_plot(
    rows: Sequence[Mapping[str, Any]], risks: Sequence[tuple[str, str]], front: Mapping[str, Sequence[int]]
) -> str:
    """Loss against each risk figure (a panel each, stacked).

    A line per method with its k marked; the Pareto front circled.

    `rows` are explore rows (``method``, ``k``, ``loss`` and the risk keys); `risks` the
    (key, axis label) of each panel; `front[key]` the indices of the rows on its front.
    ``highest_risk`` is drawn on a log scale (it is 1/k or less), the others on a linear one.
    Configurations of one method that land on the same point share one label (``k=5,10``).
    """
    methods = list(dict.fromkeys(r["method"] for r in rows))
    colors = dict(zip(methods, METHOD_COLORS * (len(methods) // len(METHOD_COLORS) + 1)))
    fig, axes = _figure(8.0, 3.3 * len(risks), nrows=len(risks))
    axes = list(axes) if len(risks) > 1 else [axes]
    for ax, (key, label) in zip(axes, risks):
        for method in methods:
            points: dict[tuple[float, float], list[int]] = {}
            for r in rows:
                if r["method"] == method and r.get(key) is not None:
                    points.setdefault((r[key], r["loss"]), []).append(r["k"])
            xy = sorted(points)
            ax.plot(
                [p[0] for p in xy],
                [p[1] for p in xy],
                marker="o",
                markersize=4,
                color=colors[method],
                label=method if key == risks[0][0] else None,
            )
            for (x, y), ks in points.items():
                ax.annotate(
                    "k=" + ",".join(map(str, sorted(ks))),
                    (x, y),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=7,
                    color=colors[method],
                )
        on = [rows[i] for i in front.get(key, [])]
        ax.scatter(
            [r[key] for r in on],
            [r["loss"] for r in on],
            s=130,
            facecolors="none",
            edgecolors=INK,
            linewidths=1.2,
            zorder=4,
            label="Pareto front" if key == risks[0][0] else None,
        )
        if key == "highest_risk":
            ax.set_xscale("log")
        else:
            ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_xlabel(label)
        ax.set_ylabel("average cell loss")
        ax.set_title(f"Loss against {label.split(' (')[0]}")
    _legend(fig, len(methods) + 1)
    return _svg(fig)
