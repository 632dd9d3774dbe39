"""Results that show themselves in a notebook: the compact HTML of each result's ``_repr_html_``.

Jupyter and VS Code display an object by calling its ``_repr_html_``. The results of
:func:`polars_anon.anonymize` (its ``Anonymized``), :func:`polars_anon.risk`,
:func:`polars_anon.check` and :func:`polars_anon.explore` delegate to the functions here,
which draw a compact summary from the result's facts alone (nothing is recomputed, no data
is read): what was published, k and the models met, suppressed rows, loss and the
class-size histogram. :func:`report_page` is the full page of a report, as written beside
an output (:func:`polars_anon.report.html.render_html`); ``result.report_html()`` returns it.

The HTML uses inline styles only (notebook front ends drop or scope ``<style>`` blocks),
escapes every value, and loads nothing.

>>> html = anonymized_html({"k": 2, "method": "greedy", "n_input_rows": 4, "suppressed": 0, "loss": 0.25})
>>> "k = 2" in html and "not yet verified" in html
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon.report.columns import treatment
from polars_anon.report.disclosure import disclosure_summary
from polars_anon.report.guarantee import counts, exposure_phrase, risk_terms, terms
from polars_anon.report.page import count, esc, fmt, fraction, share
from polars_anon.report.phrases import (
    MODEL_PARAMETERS,
    cells_phrase,
    counted_rows,
    k_asked_phrase,
    of_counted_rows,
    risk_phrase,
    undeclared_phrase,
)

__all__ = ["anonymized_html", "check_html", "explore_html", "report_page", "risk_html"]

_BOX = (
    "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:13px;"
    "line-height:1.4;border:1px solid #d9dee3;border-left:4px solid #1f6f8b;border-radius:5px;padding:8px 12px;"
    "max-width:46rem;color:#222;background:#fff"
)
_TH = "text-align:left;font-weight:500;color:#5f6b76;padding:1px 12px 1px 0;vertical-align:top;white-space:nowrap"
_TD = "text-align:left;padding:1px 8px 1px 0;vertical-align:top"
_OK, _BAD, _MUTED = "#1b7f3b", "#b3261e", "#5f6b76"


def _box(title: str, rows: Sequence[tuple[str, str]], *extra: str) -> str:
    body = "".join(f'<tr><th style="{_TH}">{esc(k)}</th><td style="{_TD}">{v}</td></tr>' for k, v in rows)
    return (
        f'<div style="{_BOX}"><div style="font-weight:600;font-size:14px;margin-bottom:4px">{title}</div>'
        f'<table style="border-collapse:collapse;margin:0">{body}</table>{"".join(extra)}</div>'
    )


def _mark(ok: bool | None) -> str:
    if ok is None:
        return f'<span style="color:{_MUTED}">?</span>'
    return f'<b style="color:{_OK}">&#10003;</b>' if ok else f'<b style="color:{_BAD}">&#10007;</b>'


def _bin_label(low: Any, high: Any) -> str:
    if high is None:
        return f"{fmt(low)}+"
    return fmt(low) if low == high else f"{fmt(low)}-{fmt(high)}"


def _histogram(
    bins: Sequence[Mapping[str, Any]], k: int | None, caption: str, unit: tuple[str, str] = ("class", "classes")
) -> str:
    """Rows per class-size bin as inline bars (bins below k in red; empty bins at either end left out)."""
    filled = [i for i, b in enumerate(bins) if b.get("rows")]
    bins = bins[filled[0] : filled[-1] + 1] if filled else bins
    total = sum(int(b.get("rows") or 0) for b in bins) or 1
    rows = []
    for b in bins:
        n = int(b.get("rows") or 0)
        low = b.get("low") if "low" in b else None
        label = _bin_label(low, b.get("high")) if "low" in b else str(b.get("size", ""))
        below = k is not None and low is not None and b.get("high") is not None and int(b["high"]) < k
        color = _BAD if below else "#1f6f8b"
        width = 0 if n == 0 else max(1, round(100 * n / total))
        rows.append(
            f'<tr><td style="{_TD};white-space:nowrap;text-align:right">{esc(label)}</td>'
            f'<td style="{_TD};width:12rem"><div style="background:#eef3f6;height:10px;width:12rem">'
            f'<div style="background:{color};height:10px;width:{width}%"></div></div></td>'
            f'<td style="{_TD};color:{_MUTED};white-space:nowrap">{count(b.get("classes"), *unit)}, '
            f"{count(n, 'row', 'rows')}</td></tr>"
        )
    return (
        f'<div style="margin-top:6px;color:{_MUTED}">{esc(caption)}</div>'
        f'<table style="border-collapse:collapse;margin:2px 0 0">{"".join(rows)}</table>'
    )


def _models(models: Sequence[Mapping[str, Any]] | None) -> str:
    if not models:
        return "none besides k"
    parts = []
    for m in models:
        params = ", ".join(f"{key}={fmt(v)}" for key, v in m.items() if key in MODEL_PARAMETERS and v is not None)
        parts.append(f"{_mark(m.get('satisfied'))} {esc(m.get('model', '?'))} ({params})")  # fmt() escapes each
    return "<br>".join(parts)


def anonymized_html(report: Mapping[str, Any]) -> str:
    """The summary of an anonymization from its report: what was published, k, models, suppressed, loss, histogram.

    Before ``collect()`` or ``sink_parquet()`` the published table has not been checked yet: the
    summary says so and shows the method's planned classes; after, the independently verified ones.
    """
    verified = "min_class_size" in report
    k = report.get("k")
    n_in = report.get("n_input_rows")
    suppressed = report.get("suppressed") or 0
    n_out = report.get("n_rows", None if n_in is None else n_in - suppressed)
    published = (report.get("class_sizes") or {}).get("published") or {}
    said, (n_classes, smallest) = terms(report), counts(report)
    check = (
        f"{_mark(smallest is not None and k is not None and smallest >= k)} {esc(said.checked)}"
        if verified
        else f'<span style="color:{_MUTED}">planned; not yet verified: <code>collect()</code> or '
        "<code>sink_parquet()</code> checks every guarantee</span>"
    )
    columns = report.get("columns") or []
    kinds: dict[str, list[str]] = {}
    for c in columns:
        kinds.setdefault(treatment(c), []).append(str(c.get("name")))
    classes = count(n_classes, esc(said.group), esc(said.groups))
    shape = f"{count(n_out, 'row', 'rows')} in {classes} ({counted_rows(report).split()[0]}: "
    shape += f"{count(n_in, 'row', 'rows')}, {count(report.get('n_input_classes'), 'class', 'classes')})"
    guarantee = f"{esc(said.name)}, k = {fmt(k)}{k_asked_phrase(report)}; {esc(said.smallest)} {fmt(smallest)}"
    later = f'<span style="color:{_MUTED}">checked on collect / sink</span>'
    loss = f"{fraction(report.get('loss'))} average cell loss (0 = as is, 1 = all to the root)"
    by_qid = report.get("loss_by_qid") or {}
    if by_qid:
        loss += "; " + ", ".join(f"{esc(q)} {fraction(v)}" for q, v in by_qid.items())
    cells, rows_share = cells_phrase(report), f"{share(suppressed, n_in)} of {of_counted_rows(report)}"
    rows = [
        ("published", shape),
        ("guarantee", f"{guarantee} &nbsp;{check}"),
        ("privacy models", _models(report.get("privacy")) if verified else later),
        ("suppressed", esc(cells) if cells else f"{count(suppressed, 'row', 'rows')} ({rows_share})"),
        ("loss", loss),
        *_after_rows(report, verified, later),
    ]
    levels = (report.get("details") or {}).get("levels")
    if levels:
        rows.append(("levels", ", ".join(f"{esc(q)} {fmt(v)}" for q, v in levels.items())))
    if kinds:
        rows.append(("columns", "<br>".join(f"{esc(t)}: {esc(', '.join(n))}" for t, n in kinds.items())))
    extra = [_histogram(published["bins"], k, said.sizes, said.bars)] if published.get("bins") else []
    title = f"polars_anon: {esc(report.get('method', '?'))}, k = {fmt(k)}"
    return _box(title, rows, *extra)


def _after_rows(report: Mapping[str, Any], verified: bool, later: str) -> list[tuple[str, str]]:
    """What risk is left, what a sensitive attribute gives away, and a method that loses less (when one does)."""
    risk = risk_phrase(report.get("risk")) if verified else None
    shown = esc(risk.removeprefix("re-identification risk left: ")) if risk else later
    if risk and report.get("guarantee") not in (None, "k-anonymity"):
        shown += f' <span style="color:{_MUTED}">({esc(terms(report).risk)})</span>'
    rows = [("risk left", shown)]
    exposed = exposure_phrase(report)
    if exposed:
        rows.append(("own tuples", esc(exposed)))
    undeclared = undeclared_phrase(report)
    if undeclared:
        rows.append(("not declared", esc(undeclared.removeprefix("not declared, "))))
    disclosure = disclosure_summary(report.get("attribute_disclosure"))
    if disclosure:
        rows.append(("attribute disclosure", esc(disclosure.removeprefix("attribute disclosure: "))))
    if report.get("method_advice"):
        rows.append(("advice", esc(report["method_advice"]["text"])))
    return rows


def _risk_rows(risk: Mapping[str, Any]) -> list[tuple[str, str]]:
    said = risk_terms(risk)
    classes = count(risk.get("n_classes"), esc(said.group), esc(said.groups))
    rows = [("table", f"{fmt(risk.get('n_rows'))} rows in {classes}")]
    for attacker in ("prosecutor", "journalist", "marketer"):
        r = risk.get(attacker)
        if not isinstance(r, Mapping):
            continue
        parts = [f"{name} {fmt(r[key])}" for key, name in (("highest", "highest"), ("average", "average")) if key in r]
        if "records_at_risk" in r:
            parts.append(f"records at risk {share(r['records_at_risk'], 1)}")
        rows.append((attacker, ", ".join(parts)))
    if risk.get("sample_uniques") is not None:
        rows.append(("sample uniques", f"{share(risk['sample_uniques'], 1)} of the records {esc(said.alone)}"))
    pop = risk.get("population_uniqueness")
    if isinstance(pop, Mapping):
        shown = ", ".join(f"{esc(key)} {fmt(v)}" for key, v in pop.items() if isinstance(v, (int, float)))
        rows.append(("population uniqueness", shown))
    return rows


def risk_html(risk: Mapping[str, Any]) -> str:
    """The summary of a risk analysis (:func:`polars_anon.risk`): risk per attacker, uniques, class sizes.

    >>> "prosecutor" in risk_html({"n_rows": 2, "n_classes": 2, "prosecutor": {"highest": 1.0, "average": 1.0}})
    True
    """
    rows = _risk_rows(risk)
    threshold = risk.get("threshold")
    if threshold is not None:
        rows.append(("threshold", f"a record is at risk above {fmt(threshold)}"))
    if risk.get("models"):
        rows.append(("privacy models", _models(risk["models"])))
    said = risk_terms(risk)
    extra = [_histogram(risk["class_sizes"], None, said.sizes, said.bars)] if risk.get("class_sizes") else []
    return _box("polars_anon: re-identification risk", rows, *extra)


def check_html(result: Mapping[str, Any]) -> str:
    """The summary of a check (:func:`polars_anon.check`): k and each model, satisfied or not.

    >>> "k-anonymous" in check_html({"k": 2, "k_anonymous": True, "min_class_size": 3, "n_classes": 1, "n_rows": 3})
    True
    """
    ok = result.get("k_anonymous")
    rows = [
        ("table", f"{fmt(result.get('n_rows'))} rows in {fmt(result.get('n_classes'))} classes"),
        ("k-anonymous", f"{_mark(ok)} k = {fmt(result.get('k'))}, smallest class {fmt(result.get('min_class_size'))}"),
        ("privacy models", _models(result.get("models"))),
    ]
    models_ok = all(m.get("satisfied") for m in result.get("models") or [])
    title = f"polars_anon: check {_mark(bool(ok) and models_ok)}"
    return _box(title, rows)


_GRID = (
    "method",
    "k",
    "feasible",
    "loss",
    "suppressed",
    "n_classes",
    "min_class_size",
    "highest_risk",
    "records_at_risk",
    "front_highest_risk",
)


def explore_html(grid: pl.DataFrame) -> str:
    """The summary of an explore grid (:func:`polars_anon.explore`): one row per (method, k), the front marked.

    A frame without the grid's columns (a selection of it) is shown as Polars shows any frame.
    """
    if not {"method", "k", "loss"} <= set(grid.columns):
        return pl.DataFrame._repr_html_(grid)
    shown = [c for c in _GRID if c in grid.columns]
    head = "".join(f'<th style="{_TH};border-bottom:1px solid #d9dee3">{esc(c)}</th>' for c in shown)
    body = []
    for row in grid.iter_rows(named=True):
        front = row.get("front_highest_risk")
        style = "background:#eef3f6;font-weight:600" if front else ""
        cells = "".join(
            f'<td style="{_TD}">{_mark(row[c]) if isinstance(row[c], bool) else esc(fmt(row[c]))}</td>' for c in shown
        )
        body.append(f'<tr style="{style}">{cells}</tr>')
    table = f'<table style="border-collapse:collapse;margin:0"><tr>{head}</tr>{"".join(body)}</tr></table>'
    note = (
        f'<div style="color:{_MUTED};margin-top:4px">shaded: on the Pareto front of loss against highest risk '
        "(no other configuration is better on both). <code>polars-anon explore</code> draws the curves.</div>"
    )
    title = f"polars_anon: explore, {grid.height} configurations"
    head_html = f'<div style="font-weight:600;font-size:14px;margin-bottom:4px">{title}</div>'
    return f'<div style="{_BOX}">{head_html}{table}{note}</div>'


def report_page(report: Mapping[str, Any]) -> str:
    """The full HTML page of a report (the page written beside an output as ``<stem>.report.html``)."""
    from polars_anon.report.html import render_html

    return render_html(report)
