"""The report as one self-contained HTML page, rendered from the report JSON alone.

:func:`render_html` turns a report (the dict written as ``<stem>.report.json``)
into a page a person reads on a laptop or prints: what was published, privacy
(the guarantee, the smallest class, re-identification risk before and after, the
class-size histogram), utility (loss per attribute, normalized metrics, how far
each attribute was generalized, suppressed rows), the full-domain lattice
neighbours, and the parameters and timings. Plots are inline SVG images
(:mod:`polars_anon.report.plots`); the page fetches nothing. Keys the page does not
know (added by later versions) are shown under "Other facts", so nothing in the
JSON is hidden. The JSON itself is embedded (``<script id="report-json">``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polars_anon.locations import URI, as_location
from polars_anon.outputs import Outputs, staged_write
from polars_anon.report import plots
from polars_anon.report.columns import treatment
from polars_anon.report.guarantee import PROBABILISTIC, WILDCARD, guarantee_name, terms
from polars_anon.report.page import (
    cards,
    count,
    esc,
    figure,
    fmt,
    fraction,
    kv_table,
    page,
    section,
    share,
    table,
    value_html,
)
from polars_anon.report.phrases import (
    cells_phrase,
    counted_rows,
    k_meaning,
    key_cells,
    of_counted_rows,
    sampled_from,
    undeclared_phrase,
)

__all__ = ["render_html", "write_html"]

_SHOWN = {
    "schema_version", "k", "method", "metric", "options", "qids", "sensitive", "seed", "null", "guarantee", "columns",
    "n_input_rows", "n_input_classes", "suppressed", "loss", "loss_by_qid", "metrics", "metrics_normalized",
    "class_sizes", "metric_units", "generalization", "details", "seconds", "n_rows", "n_classes", "min_class_size",
    "write_seconds", "output", "input", "encodings", "null_rows", "risk", "privacy", "attribute_disclosure",
    "own_tuple_records", "own_tuple_unique", "method_advice", "sdc", "phases",
}  # a table of report keys, several a line  # fmt: skip


def write_html(out: Outputs, report: Mapping[str, Any], path: Path | URI) -> None:
    """Stage the HTML page of `report` in the output set `out` (a URI: on its file system)."""
    text = render_html(report)
    staged_write(out, as_location(path), lambda tmp: tmp.write_text(text, encoding="utf-8"), what="report page")


def render_html(report: Mapping[str, Any]) -> str:
    """The HTML page of a report (see the module docstring).

    >>> html = render_html({"k": 2, "method": "fulldomain", "n_input_rows": 4, "n_rows": 4, "suppressed": 0})
    >>> html.startswith("<!DOCTYPE html>") and 'id="privacy"' in html
    True
    """
    title = f"Anonymization report: {Path(str(report.get('output') or 'table')).name}"
    body = [
        f"<header><h1>{esc(title)}</h1><p class=muted>{esc(_subtitle(report))}</p></header>",
        _summary(report),
        _published(report),
        _privacy(report),
        _sdc(report),
        _utility(report),
        _lattice(report),
        _parameters(report),
        _others(report),
    ]
    body.append(_papers("\n".join(b for b in body if b)))
    embedded = json.dumps(report, indent=1, default=str).replace("</", "<\\/")
    body.append(f'<script type="application/json" id="report-json">\n{embedded}\n</script>')
    return page(title, "\n".join(b for b in body if b))


PAPERS = {
    "000": (
        "Viton et al.",
        "Proportional representation to increase data utility in k-anonymous tables",
        "IEEE ISCC 2021",
    ),
    "001": ("Mauger et al.", "Modeling and Evaluation of k-anonymization Metrics", "AAAI PPAI 2020"),
    "002": ("Davies and Shao", "Utility of Anonymised Data in Decision Tree Derivation", "ICISSP 2022"),
    "003": (
        "de Spoelberch",
        "The Limits of Information Loss Metrics as Measures for Utility",
        "Imperial College London",
    ),
    "004": ("Senavirathne and Torra", "Systematic Evaluation of Probabilistic k-Anonymity", "2021"),
}
"""The papers the report's definitions cite as ``paper 001 §4``: number -> (authors, title, venue). The one copy:
the table of ``docs/papers.md`` is written from it when the site is built (``docs/hooks.py``)."""


def _papers(html: str) -> str:
    """A last section naming each paper `html` cites by number (none: no section).

    >>> "Mauger et al." in _papers("NCP [paper 001 §4]") and "Viton" not in _papers("NCP [paper 001 §4]")
    True
    >>> _papers("a column named paper 004")
    ''
    """
    cited = sorted(set(re.findall(r"paper (\d{3}) §", html)) & PAPERS.keys())  # a citation, not any text
    if not cited:
        return ""
    items = "".join(f"<li>paper {n}: {esc(', '.join(PAPERS[n]))}</li>" for n in cited)
    return f'<section id="papers"><h2>Papers cited</h2><ul>{items}</ul></section>'


def _subtitle(r: Mapping[str, Any]) -> str:
    where = f"{r['input']} -> {r['output']}" if r.get("input") and r.get("output") else (r.get("output") or "")
    return f"{r.get('method', '?')} with k = {r.get('k', '?')}" + (f"; {where}" if where else "")


def _summary(r: Mapping[str, Any]) -> str:
    seconds = (r.get("seconds") or 0) + (r.get("write_seconds") or 0)
    said, written = terms(r), r.get("write_seconds") is not None
    items = [
        ("n_rows", "rows published", fmt(r.get("n_rows")), f"of {fmt(r.get('n_input_rows'))} {counted_rows(r)}"),
        (
            "n_classes",
            said.unit,
            fmt(r.get("n_classes")),
            f"from {fmt(r.get('n_input_classes'))} in {of_counted_rows(r)}",
        ),
        ("min_class_size", said.smallest, fmt(r.get("min_class_size")), f"k = {fmt(r.get('k'))} {k_meaning(r)}"),
        (
            "suppressed",
            "rows suppressed",
            fmt(r.get("suppressed")),
            share(r.get("suppressed"), r.get("n_input_rows")) + f" of {of_counted_rows(r)}",
        ),
        *_cells_card(r),
        ("loss", "average cell loss", fraction(r.get("loss")), "0 = as is, 1 = all at the root"),
        ("seconds", "time", f"{seconds:.1f} s", "anonymize + write and verify" if written else "anonymize"),
    ]
    advice = r.get("method_advice")
    notes = [advice.get("text", "") if isinstance(advice, Mapping) else None, undeclared_phrase(r)]
    return section("summary", "Summary", cards(items) + "".join(f"<p><b>{esc(n)}</b></p>" for n in notes if n))


def _cells_card(r: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """The headline card of the key cells a method blanked (:func:`~polars_anon.report.phrases.key_cells`), none
    for a method that blanks no cell."""
    counted = key_cells(r)
    if counted is None:
        return []
    blanked, n_cells = counted
    note = f"{share(blanked, n_cells)} of the {fmt(n_cells)} key cells, set missing"
    return [("details.suppressed_total", "key cells blanked", fmt(blanked), note)]


def _published(r: Mapping[str, Any]) -> str:
    cols = r.get("columns") or []
    dropped = [c["name"] for c in cols if c.get("type") == "identifying"]
    intro = (
        f"<p>{fmt(r.get('n_rows'))} of {fmt(r.get('n_input_rows'))} {counted_rows(r)} were published"
        + (f" to <code>{esc(r['output'])}</code>" if r.get("output") else "")
        + (f"; dropped as identifying: {esc(', '.join(dropped))}" if dropped else "; no column was dropped")
        + ". Every column and what was done to it:</p>"
    )
    rows = [[esc(c["name"]), esc(c.get("type")), esc(c.get("dtype")), esc(treatment(c))] for c in cols]
    return section("published", "What was published", intro + table(["column", "type", "dtype", "treatment"], rows))


def _own_tuples(r: Mapping[str, Any]) -> str:
    """The probabilistic guarantee's exposure: records published with their own exact tuple."""
    if r.get("own_tuple_records") is None:
        return ""
    own, unique = r["own_tuple_records"], r.get("own_tuple_unique")
    return (
        '<p style="border-left:4px solid #c05621;padding-left:8px"><b>Probabilistic k-anonymity is not k-anonymity '
        "of the published tuples</b>: each record was permuted inside a cluster of at least k, but "
        f"<b>{fmt(own)}</b> records ({share(own, r.get('n_rows'))}) were published with their own exact "
        f"quasi-identifier tuple, and <b>{fmt(unique)}</b> of them are unique in the release (someone who knows "
        "their quasi-identifiers finds their row); equal published tuples form groups of "
        f"{fmt(r.get('classic_min_class_size'))} or more rows. For k-anonymity of every row use "
        'publish="aggregate".</p>'
    )


def _checked(r: Mapping[str, Any], fact: str) -> str:
    """The check's `fact` and where the check ran: on the written file (``sink_parquet``, a job), or on the published
    rows (``collect()``, ``table()``: nothing written); or that it has not run yet.

    >>> _checked({"min_class_size": 2}, "the smallest class has 2 rows")
    'Checked independently on the published rows (nothing was written): the smallest class has 2 rows.'
    """
    if "min_class_size" not in r:
        return "Not yet checked: <code>collect()</code> or <code>sink_parquet()</code> checks every guarantee."
    where = "on the written file" if r.get("output") else "on the published rows (nothing was written)"
    return f"Checked independently {where}: {fact}."


def _disclosure(r: Mapping[str, Any]) -> str:
    """Attribute disclosure of each sensitive attribute (polars_anon.report.disclosure)."""
    found = r.get("attribute_disclosure") or {}
    if not found:
        return ""
    rows = [
        [
            esc(a),
            fmt(d.get("records_single_value")),
            share(d.get("share_single_value"), 1),
            fmt(d.get("classes_single_value")),
            share(d.get("largest_value_share"), 1),
        ]
        for a, d in found.items()
    ]
    head = [
        "attribute",
        "records in single-value classes",
        "share of records",
        "such classes",
        "largest share of one value in a class",
    ]
    return (
        "<h3>Attribute disclosure</h3><p>k-anonymity hides which row is a person's, not what it says: in a class "
        "where every record has the same sensitive value, knowing someone is in the class reveals the value. Per "
        "sensitive attribute (whether or not a privacy model was asked for):</p>" + table(head, rows)
    )


def _privacy(r: Mapping[str, Any]) -> str:
    k, guarantee = r.get("k"), r.get("guarantee") or "k-anonymity"
    qids, smallest = esc(", ".join(r.get("qids") or [])), f"<b>{fmt(r.get('min_class_size'))}</b>"
    rows = "row" if r.get("min_class_size") == 1 else "rows"
    head = f"<p><b>{esc(guarantee_name(r))}, k = {fmt(k)}</b>: "
    if guarantee == PROBABILISTIC:
        fact = (
            f"every cluster has at least k rows and publishes its own input values; the smallest has {smallest} {rows}"
        )
        text = (
            f"{head}every record was published inside an MDAV cluster of at least k rows whose values of {qids} "
            f"were permuted among them. {_checked(r, fact)}</p>" + _own_tuples(r)
        )
    elif guarantee == WILDCARD:
        fact = f"the fewest records a record matches is {smallest}"
        text = (
            f"{head}every published record agrees, on the quasi-identifiers ({qids}) both observe, with at least k "
            f"records (itself included): a missing value matches any value (sdcMicro's reading). {_checked(r, fact)}"
            "</p>"
        )
    else:
        fact = f"the smallest class has {smallest} {rows}"
        text = (
            f"{head}every published combination of quasi-identifier values ({qids}) is shared by at least k rows. "
            f"{_checked(r, fact)}</p>"
        )
    parts = [text, _disclosure(r)]
    if r.get("privacy"):
        parts.append("<h3>Privacy models requested</h3>" + value_html(r["privacy"]))
    parts.append("<h3>Re-identification risk before and after</h3>" + _size_risk(r))
    if r.get("risk"):
        risk = dict(r["risk"])
        if sampled_from(r) is not None and "input" in risk:  # a differentially private release's sample
            risk = {"input (the sampled rows)": risk.pop("input"), **risk}
        parts.append("<h3>Risk figures</h3>" + _risk(risk))
    sizes = r.get("class_sizes") or {}
    if (sizes.get("published") or {}).get("bins"):
        after = {
            "k-anonymity": "none may remain after publication",
            WILDCARD: "none may remain after publication; as published, a record's size is the records it matches, "
            "a missing value matching any value",
        }.get(guarantee, "equal published tuples may form smaller groups: the guarantee counts clusters")
        parts.append(
            figure(
                plots.class_size_plot(sizes, int(k or 1), terms(r).axis),
                "Class-size histogram",
                "Share of the records in classes of each size, in the input and as published; the shaded "
                "bins "
                f"hold classes smaller than k ({after}).",
            )
        )
    return section("privacy", "Privacy", "".join(parts))


_SDC_ROWS = (
    ("global risk (mean individual risk)", "global_risk"),
    ("expected re-identifications", "expected_reidentifications"),
    ("highest individual risk", "max_individual_risk"),
    ("sample uniques (fk = 1)", "n_unique"),
    ("records with fk = 2", "n_pairs"),
    ("household risk", "household_risk"),
    ("household expected re-identifications", "household_expected_reidentifications"),
)
_SUDA_ROWS = (
    ("records with a minimal sample unique (SUDA2)", "records_with_msu"),
    ("highest DIS-SUDA score", "max_dis_suda_score"),
    ("mean DIS-SUDA score", "mean_dis_suda_score"),
)


def _sdc(r: Mapping[str, Any]) -> str:
    """The ``sdc`` key: individual and global risk with weights, household risk, SUDA2, before and after.

    >>> fig = {"global_risk": 0.5, "n_unique": 2, "violating": {"2": 2}, "n_rows": 4}
    >>> "global risk" in _sdc({"sdc": {"keys": ["a"], "weight": "w", "input": fig, "output": fig, "steps": []}})
    True
    """
    sdc = r.get("sdc")
    if not isinstance(sdc, Mapping):
        return ""
    before, after = sdc.get("input") or {}, sdc.get("output") or {}
    rows = [
        [esc(label), value_html(before.get(key)), value_html(after.get(key))]
        for label, key in _SDC_ROWS
        if key in before or key in after
    ]
    for k in sorted({*(before.get("violating") or {}), *(after.get("violating") or {})}, key=int):
        rows.append(
            [
                f"records violating {esc(k)}-anonymity (fk &lt; {esc(k)})",
                value_html((before.get("violating") or {}).get(k)),
                value_html((after.get("violating") or {}).get(k)),
            ]
        )
    mb, ma = before.get("model_risk") or {}, after.get("model_risk") or {}
    if mb or ma:
        method = esc(ma.get("method") or mb.get("method"))
        rows.append(
            [
                f"sample uniques that are population uniques (log-linear, {method})",
                value_html(mb.get("risk1")),
                value_html(ma.get("risk1")),
            ]
        )
        rows.append(
            [
                f"correct matches of sample uniques (log-linear, {method})",
                value_html(mb.get("risk2")),
                value_html(ma.get("risk2")),
            ]
        )
    sb, sa = before.get("suda2") or {}, after.get("suda2") or {}
    rows += [
        [esc(label), value_html(sb.get(key)), value_html(sa.get(key))]
        for label, key in _SUDA_ROWS
        if key in sb or key in sa
    ]
    weight = sdc.get("weight")
    text = (
        f"<p>Keys {esc(', '.join(sdc.get('keys') or []))}; "
        f"{'sampling weights ' + esc(weight) if weight else 'no sampling weights (risk 1/fk)'}; individual risk "
        f"{esc(sdc.get('method'))} (Benedetti-Franconi, as sdcMicro); a missing key is "
        f"{'a wildcard' if sdc.get('missing') == 'wildcard' else 'a category of its own'}.</p>"
    )
    parts = [text, table(["", "input (before)", "published (after)"], rows, numeric=True)]
    if sa.get("contributions") or sb.get("contributions"):
        which = "published table" if sa.get("contributions") else "input"
        parts.append(
            f"<h3>SUDA2 key contributions, {which} (percent of the total score)</h3>"
            + kv_table(sa.get("contributions") or sb.get("contributions") or {})
        )
    if sdc.get("steps"):
        parts.append("<h3>Protection steps (applied to the input, in order)</h3>" + value_html(sdc["steps"]))
    return section("sdc", "Statistical disclosure control", "".join(parts))


def _size_risk(r: Mapping[str, Any]) -> str:
    """Prosecutor risk from the class-size histograms (an attacker who knows the person is in the table)."""
    sizes, k = r.get("class_sizes") or {}, r.get("k") or 1
    after = "published (after)"
    if r.get("guarantee") not in (None, "k-anonymity"):
        after = f"published (after: {terms(r).risk})"
    before = "input (before)" if sampled_from(r) is None else "sampled rows (before)"
    cols = [(name, sizes.get(key) or {}) for name, key in ((before, "input"), (after, "published"))]
    if not any(h.get("bins") for _, h in cols):
        return "<p class=muted>No class sizes in this report.</p>"

    def below(h: Mapping[str, Any], limit: int) -> str:
        return share(sum(b["rows"] for b in h.get("bins", []) if b["low"] < limit), h.get("n_rows"))

    def ratio(a: Any, b: Any) -> str:
        return fmt(a / b) if a and b else "-"

    rows = [
        ["classes", *(fmt(h.get("n_classes")) for _, h in cols)],
        ["smallest class (rows)", *(fmt(h.get("min")) for _, h in cols)],
        ["records unique on the quasi-identifiers", *(below(h, 2) for _, h in cols)],
        [f"records in classes smaller than k = {k}", *(below(h, int(k)) for _, h in cols)],
        ["highest risk (1 / smallest class)", *(ratio(1, h.get("min")) for _, h in cols)],
        ["average risk (classes / records)", *(ratio(h.get("n_classes"), h.get("n_rows")) for _, h in cols)],
    ]
    if r.get("guarantee") == WILDCARD:  # patterns are no partition: the check's mean of 1 / fk over the records
        output = ((r.get("risk") or {}).get("output") or {}).get("prosecutor") or {}
        rows[-1] = ["average risk (mean of 1 / records matched)", rows[-1][1], fmt(output.get("average"))]
    note = (
        "<p class=muted>Prosecutor model: an attacker who knows a person is in the table and knows their "
        "quasi-identifiers picks one of the rows of their class, so a record in a class of s rows is re-identified "
        "with probability 1/s.</p>"
    )
    return table(["", *(name for name, _ in cols)], rows, numeric=True) + note


def _risk(risk: Any) -> str:
    """The report's ``risk`` section: before/after pairs as two columns, anything else as it comes."""
    if isinstance(risk, Mapping) and isinstance(risk.get("before"), Mapping) and isinstance(risk.get("after"), Mapping):
        keys = list(dict.fromkeys([*risk["before"], *risk["after"]]))
        rows = [[esc(key), value_html(risk["before"].get(key)), value_html(risk["after"].get(key))] for key in keys]
        rest = {key: v for key, v in risk.items() if key not in ("before", "after")}
        return table(["", "before", "after"], rows, numeric=True) + (kv_table(rest) if rest else "")
    return value_html(risk)


def _utility(r: Mapping[str, Any]) -> str:
    parts = []
    by_qid = r.get("loss_by_qid") or {}
    if by_qid:
        parts.append(
            figure(
                plots.loss_plot(by_qid, r.get("loss")),
                "Information loss per quasi-identifier",
                f"Average over the {counted_rows(r)} of each cell's loss: 0 when published as is, 1 at the "
                "hierarchy's root "
                "or suppressed, in between the share of the attribute's leaves the published value "
                "covers.",
            )
        )
    else:
        parts.append(
            "<p class=muted>The average cell loss is not defined for this method's published values "
            "(ranges, sets or means are not hierarchy nodes); see the metrics below.</p>"
        )
    parts.append(
        f"<p>Rows suppressed (removed): <b>{fmt(r.get('suppressed'))}</b> "
        f"({share(r.get('suppressed'), r.get('n_input_rows'))} of {of_counted_rows(r)}).</p>"
    )
    cells = cells_phrase(r)
    if cells:
        parts.append(f"<p><b>{esc(cells)}</b>; a blanked cell is published missing, its row kept.</p>")
    parts.append(_generalization(r))
    parts.append(_normalized(r))
    parts.append(_raw_metrics(r))
    return section("utility", "Utility", "".join(p for p in parts if p))


def _generalization(r: Mapping[str, Any]) -> str:
    gen = r.get("generalization") or {}
    if not gen:
        return ""
    rows = []
    for q, g in gen.items():
        top = ", ".join(f"{'<i>missing</i>' if v is None else esc(v)} ({fmt(n)})" for v, n in g.get("top", []))
        rows.append(
            [
                esc(q),
                fmt(g.get("level")),
                share(g.get("unchanged"), 1),
                share(g.get("root"), 1),
                fmt(g.get("n_values")),
                top,
            ]
        )
    head = [
        "quasi-identifier",
        "level",
        "rows as is",
        "rows at the root",
        "published values",
        "most frequent published values (rows)",
    ]
    return "<h3>How far each quasi-identifier was generalized</h3>" + table(head, rows, numeric=True)


def _explain(name: str) -> tuple[str, str]:
    """One line on a metric and its unit, from the metric registry (empty when unknown)."""
    from polars_anon.metrics.registry import METRICS

    m = METRICS.get(name)
    if m is None:
        return "", ""
    first = (m.doc.strip().splitlines() or [""])[0]
    plain = re.sub(r":\w+:`~?([^`]+)`", r"\1", first).replace("``", "")
    better = getattr(m, "better", "lower")
    plain += " Higher is better." if better == "higher" else (" A fact, not a loss." if better is None else "")
    return plain, str(getattr(m, "unit", "") or "")


def _normalized(r: Mapping[str, Any]) -> str:
    """Figures in [0, 1].

    The registry's normalized companions when the report has them, else the metrics already in [0, 1].
    """
    from polars_anon.metrics.registry import METRICS

    given = r.get("metrics_normalized")
    items: list[tuple[str, Any, str]] = []
    if r.get("loss") is not None:
        items.append(
            ("loss", r["loss"], "average cell loss: 0 = every cell as is, 1 = every cell at the root or suppressed")
        )
    if r.get("n_input_rows"):
        items.append(
            (
                "suppressed share",
                (r.get("suppressed") or 0) / r["n_input_rows"],
                f"share of the {counted_rows(r)} removed",
            )
        )
    if isinstance(given, Mapping):
        items += [(n, v, _explain(n)[0]) for n, v in given.items() if n != "loss"]  # the loss is listed first
    else:
        for name, value in (r.get("metrics") or {}).items():
            m = METRICS.get(name)
            if m is None or value is None or getattr(m, "alias_of", None):
                continue
            if m.range.startswith("[0, 1]"):
                items.append((name, value, _explain(name)[0]))
            elif m.range == "[0, 100]":
                items.append((name, value / 100, _explain(name)[0] + " (shown / 100)"))
    rows = [[esc(n), fraction(v), _bar(v), esc(text)] for n, v, text in items]
    note = (
        "<p class=muted>Each metric over its value on the fully suppressed table, or over its own range.</p>"
        if isinstance(given, Mapping)
        else "<p class=muted>Metrics whose range is [0, 1] (percentages divided by 100); "
        "the others are raw sums, listed below.</p>"
    )
    return (
        "<h3>Normalized figures (0 = no loss)</h3>"
        + table(["figure", "value", "", "meaning"], rows, numeric=True)
        + note
    )


def _bar(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    width = max(0.0, min(1.0, float(value))) * 100
    return f'<span class=bar><span style="width:{width:.1f}%"></span></span>'


def _raw_metrics(r: Mapping[str, Any]) -> str:
    metrics = r.get("metrics") or {}
    if not metrics:
        return "<p class=muted>No information-loss metrics for this method's published values.</p>"
    units = r.get("metric_units") or {}
    rows = []
    for name, value in metrics.items():
        text, unit = _explain(name)
        rows.append([esc(name), fmt(value), esc(units.get(name, unit)), esc(text)])
    return "<h3>Every metric (raw values)</h3>" + table(["metric", "value", "unit", "definition"], rows, numeric=True)


def _lattice(r: Mapping[str, Any]) -> str:
    details = r.get("details") or {}
    neighbours = details.get("neighbours")
    if not neighbours or r.get("loss") is None:
        return ""
    chosen = ", ".join(f"{q} {lv}" for q, lv in (details.get("levels") or {}).items())
    intro = (
        f"<p>Full-domain generalization chose the level vector <b>{esc(chosen)}</b> (loss {fraction(r['loss'])}, "
        f"{count(r.get('suppressed'), 'row', 'rows')} suppressed) as the feasible vector of least loss. Its neighbours "
        "differ by one "
        "level of one quasi-identifier:</p>"
    )
    fig = figure(
        plots.neighbours_plot(neighbours, r["loss"], int(r.get("suppressed") or 0)),
        "Lattice neighbours",
        "Loss of each neighbour; a cross marks a neighbour that would leave more rows in classes smaller "
        "than k "
        "than the suppression budget allows.",
    )
    rows = [
        [
            esc(f"{n['qid']} {'+1' if n['step'] > 0 else '-1'}"),
            esc(", ".join(f"{q} {v}" for q, v in n["levels"].items())),
            fraction(n["loss"]),
            fmt(n["suppressed"]),
            "yes" if n["feasible"] else "no",
        ]
        for n in neighbours
    ]
    return section(
        "lattice",
        "The chosen lattice node",
        intro + fig + table(["neighbour", "levels", "loss", "suppressed", "feasible"], rows, numeric=True),
    )


def _parameters(r: Mapping[str, Any]) -> str:
    shown = (
        "method",
        "k",
        "metric",
        "options",
        "qids",
        "sensitive",
        "seed",
        "null",
        "input",
        "output",
        "encodings",
        "null_rows",
    )
    asked = {key: r.get(key) for key in shown if key in r}
    derived = _derived(r, asked)
    steps = (
        ("seconds", "anonymize: read, aggregate, run the method, build the report"),
        ("write_seconds", "write the table and verify it from the written file"),
    )
    times = [[esc(text), f"{r[key]:.3f} s"] for key, text in steps if isinstance(r.get(key), (int, float))]
    phases = r.get("phases") or {}
    times += [[esc(f"phase: {name}"), f"{value:.3f} s"] for name, value in phases.items()]
    details = {key: v for key, v in (r.get("details") or {}).items() if key != "neighbours"}
    body = "<h3>Asked for</h3>" + kv_table(asked) + derived
    body += "<h3>Timings</h3>" + table(["step", "time"], times, numeric=True)
    if details:
        body += "<h3>Method facts</h3>" + kv_table(details)
    return section("parameters", "Parameters and timings", body)


def _derived(r: Mapping[str, Any], asked: dict[str, Any]) -> str:
    """A differentially private release: `asked`'s k set to the k asked (the report's ``k`` is the one enforced), and
    what the mechanism derived, in a table of its own; nothing otherwise."""
    dp = (r.get("details") or {}).get("differential_privacy") or {}
    if not dp:
        return ""
    asked["k"] = dp.get("k_asked", "not recorded (an older report)")
    sampled = f"{fmt(dp.get('sampled_rows'))} of {fmt(dp.get('n_rows'))} (beta {fmt(dp.get('beta'))})"
    derived = {
        "k enforced (the larger of the k asked and k_derived)": dp.get("k"),
        "k_derived (the smallest k the budget allows)": dp.get("k_derived"),
        "suppression": f"every class of the sample below k = {fmt(dp.get('k'))} rows "
        f"({count(dp.get('suppressed_rows'), 'row', 'rows')}); max_suppressed does not apply",
        "rows sampled": sampled,
    }
    return "<h3>Derived by the differential-privacy step</h3>" + kv_table(derived)


def _others(r: Mapping[str, Any]) -> str:
    rest = {key: v for key, v in r.items() if key not in _SHOWN}
    return section("other", "Other facts", kv_table(rest)) if rest else ""
