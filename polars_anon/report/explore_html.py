"""The explore page: utility against risk for every configuration of a grid, with the Pareto front.

:func:`render_explore_html` takes the rows of :func:`polars_anon.explore.explore`
(as dicts) and facts about the run, and returns one self-contained HTML page: the
curves (a line per method, each point a k; the configurations on the Pareto front
circled), the table of every figure, and how to read them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from polars_anon.report import plots
from polars_anon.report.guarantee import terms
from polars_anon.report.page import esc, figure, fmt, kv_table, page, section, share, table

__all__ = ["render_explore_html"]

_PANELS = (
    ("highest_risk", "highest risk (1 / smallest class)"),
    ("records_at_risk", "records at risk (share in classes < threshold)"),
)


def render_explore_html(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> str:
    """The page of an explore table (see the module docstring).

    >>> rows = [{"method": "greedy", "k": 2, "feasible": True, "loss": 0.1, "highest_risk": 0.5, "records_at_risk": 0.2,
    ...          "average_risk": 0.3, "front_highest_risk": True, "front_records_at_risk": True}]
    >>> "Pareto" in render_explore_html(rows, {"input": "x.parquet"})
    True
    """
    threshold = next((r.get("risk_threshold") for r in rows if r.get("risk_threshold")), None)
    ok = [r for r in rows if r.get("feasible") and r.get("loss") is not None]
    front = {key: [i for i, r in enumerate(ok) if r.get(f"front_{key}")] for key, _ in _PANELS}
    intro = (
        f"<p>{len(rows)} configurations ({', '.join(dict.fromkeys(esc(r['method']) for r in rows))} at k = "
        f"{', '.join(dict.fromkeys(str(r['k']) for r in rows))}) were run on one aggregation of the input; no table "
        "was "
        "written. Each point is one configuration: lower is better on both axes. A configuration on the <b>Pareto "
        "front</b> "
        "(circled) is one that no other beats on both the loss and that risk figure; choose among those.</p>"
        "<p class=muted>Loss: the average cell loss of the quasi-identifiers (0 = published as is, 1 = every cell at "
        "the root "
        "or suppressed). Highest risk: 1 / the smallest class, the chance a prosecutor who knows the person is in the "
        f"table re-identifies the worst-placed record. Records at risk: the share of records in classes smaller than "
        f"{fmt(threshold)} rows.</p>"
    )
    parts = [intro]
    if ok:
        parts.append(
            figure(
                plots.tradeoff_plot(ok, _PANELS, front),
                "Utility against risk",
                "A line per method, a point per k; circles mark the Pareto front of each panel.",
            )
        )
    body = [
        section("tradeoff", "Utility against risk", "".join(parts)),
        section("grid", "Every configuration", _grid(rows)),
    ]
    if meta:
        body.append(section("run", "The run", kv_table(meta)))
    embedded = json.dumps({"meta": meta, "rows": list(rows)}, indent=1, default=str).replace("</", "<\\/")
    body.append(f'<script type="application/json" id="explore-json">\n{embedded}\n</script>')
    title = f"Choosing k: {meta.get('input', 'explore')}"
    return page(title, f"<header><h1>{esc(title)}</h1></header>" + "\n".join(body), wide=True)


def _grid(rows: Sequence[Mapping[str, Any]]) -> str:
    head = [
        "method",
        "k",
        "loss",
        "suppressed",
        "classes",
        "smallest class",
        "highest risk",
        "average risk",
        "records at risk",
        "front",
        "seconds",
        "note",
    ]
    out = []
    for r in rows:
        on = [
            label
            for key, label in (("front_highest_risk", "highest"), ("front_records_at_risk", "at risk"))
            if r.get(key)
        ]
        note = esc(r.get("error")) if not r.get("feasible") else esc(_note(r))
        out.append(
            [
                esc(r["method"]),
                fmt(r["k"]),
                fmt(r.get("loss")),
                fmt(r.get("suppressed")),
                fmt(r.get("n_classes")),
                fmt(r.get("min_class_size")),
                fmt(r.get("highest_risk")),
                fmt(r.get("average_risk")),
                share(r.get("records_at_risk"), 1),
                esc(", ".join(on)),
                fmt(r.get("seconds")),
                note,
            ]
        )
    return table(head, out, numeric=True)


def _note(row: Mapping[str, Any]) -> str:
    """A feasible row's note: its levels, and what its classes and smallest class count under a guarantee other than
    k-anonymity (the report's terms: :func:`polars_anon.report.guarantee.terms`).

    >>> _note({"guarantee": "wildcard-k-anonymity", "k": 3, "levels": None})
    'k-anonymity with missing values as wildcards: classes are distinct patterns, smallest class is the fewest \
records a record matches'
    """
    parts = [_levels(row.get("levels"))]
    if row.get("guarantee") not in (None, "k-anonymity"):
        t = terms(row)
        parts.append(f"{t.name}: classes are {t.groups}, smallest class is the {t.smallest}")
    return "; ".join(p for p in parts if p)


def _levels(levels: Any) -> str:
    if not levels:
        return ""
    parsed = json.loads(levels) if isinstance(levels, str) else levels
    return "levels " + " ".join(f"{q}={v}" for q, v in parsed.items())
