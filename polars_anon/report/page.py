"""HTML building blocks shared by the report page and the explore page: one stylesheet, escaped values.

Everything a value turns into passes through :func:`esc`; numbers through
:func:`fmt` (thousands separators, four significant digits). The stylesheet is
inline and has print rules, so a page is one file that prints as it shows.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

import polars_anon

__all__ = [
    "cards",
    "count",
    "esc",
    "figure",
    "fmt",
    "fraction",
    "kv_table",
    "page",
    "section",
    "share",
    "table",
    "value_html",
]

_CSS = """
:root { --ink: #222; --muted: #5f6b76; --line: #d9dee3; --accent: #1f6f8b; --soft: #eef3f6; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink);
       max-width: 64rem; margin: 1.5rem auto; padding: 0 1rem; }
header h1 { font-size: 1.55rem; margin: 0 0 .2rem; }
h2 { font-size: 1.2rem; border-bottom: 2px solid var(--accent); padding-bottom: .2rem; margin: 2rem 0 .8rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.muted, figcaption { color: var(--muted); font-size: .88rem; }
code { background: var(--soft); padding: 0 .25rem; border-radius: 3px; word-break: break-all; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: .6rem; }
.card { border: 1px solid var(--line); border-left: 4px solid var(--accent); border-radius: 5px;
        padding: .45rem .7rem; }
.card span { display: block; color: var(--muted); font-size: .8rem; }
.card b { display: block; font-size: 1.35rem; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; font-size: .88rem; margin: .3rem 0 .6rem; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table table { margin: 0; font-size: .85rem; }
table.kv th { background: none; font-weight: 500; width: 14rem; }
figure { margin: 1rem 0; }
figure img { display: block; width: 100%; max-width: 52rem; height: auto; }
.bar { display: inline-block; width: 7rem; height: .7rem; background: var(--soft); vertical-align: middle; }
.bar span { display: block; height: 100%; background: var(--accent); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .8rem; }
@media print {
  body { max-width: none; margin: 0; font-size: 10.5pt; }
  section { break-inside: auto; } figure, .cards, tr { break-inside: avoid; } h2, h3 { break-after: avoid; }
  th { background: none; }
}
"""


def esc(value: Any) -> str:
    """HTML-escaped text of a value (None: empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def fmt(value: Any) -> str:
    """A number for reading: ``1,234``, ``0.3125``, ``1.2e-05``; None: ``-``.

    >>> fmt(1234567), fmt(0.3125), fmt(0.0000123), fmt(5823.46), fmt(None), fmt(True)
    ('1,234,567', '0.3125', '1.23e-05', '5,823', '-', 'yes')
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.3g}"
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    return esc(value)


def fraction(value: Any) -> str:
    """A figure in [0, 1] (a loss, a normalized metric) as :func:`fmt` writes it, save that a value strictly between
    0 and 1 never reads as 1: rounding a part up to the whole would say every cell was lost.

    >>> fraction(0.99996), fraction(0.25), fraction(1.0), fraction(None)
    ('>0.9999', '0.25', '1', '-')
    """
    text = fmt(value)
    return ">0.9999" if isinstance(value, float) and value < 1 and text == "1" else text


def count(n: Any, one: str, many: str) -> str:
    """A count and its noun: ``1 row``, ``2 rows``, ``- rows`` (None).

    >>> count(1, "row", "rows"), count(1234, "row", "rows"), count(None, "class", "classes")
    ('1 row', '1,234 rows', '- classes')
    """
    return f"{fmt(n)} {one if n == 1 else many}"


def share(part: Any, whole: Any) -> str:
    """``12.5%``; ``-`` when either is missing.

    >>> share(1, 8), share(None, 8), share(0, 0), share(4999, 5000), share(5000, 5000)
    ('12.5%', '-', '-', '>99.9%', '100.0%')
    """
    if not isinstance(part, (int, float)) or not isinstance(whole, (int, float)) or not whole:
        return "-"
    pct = 100.0 * part / whole
    text = f"{pct:.1f}%" if pct == 0 or pct >= 0.1 else f"{pct:.2g}%"
    return ">99.9%" if text == "100.0%" and part < whole else text  # a part is never rounded up to the whole


def table(head: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: bool = False) -> str:
    """A table of already-escaped cells; with `numeric`, cells that read as numbers are right-aligned."""
    num = [[numeric and _looks_numeric(cell) for cell in row] for row in rows]
    right = [bool(rows) and all(len(n) > j and n[j] for n in num) for j in range(len(head))]
    th = "".join(f"<th class=num>{esc(h)}</th>" if r else f"<th>{esc(h)}</th>" for h, r in zip(head, right))
    body = []
    for row, flags in zip(rows, num):
        cells = [f"<td class=num>{cell}</td>" if n else f"<td>{cell}</td>" for cell, n in zip(row, flags)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _looks_numeric(cell: str) -> bool:
    text = cell.replace(",", "").replace("%", "").replace(" s", "").strip()
    try:
        float(text)
    except ValueError:
        return text == "-"
    return True


def value_html(value: Any) -> str:
    """Any JSON value as HTML: flat mappings inline (``a: 1; b: 2``), nested ones as key/value tables,
    lists of mappings as tables, scalars formatted.

    >>> value_html({"zip": 3, "age": 1}), value_html([1, "a"]), value_html(0.5)
    ('zip: 3; age: 1', '1, a', '0.5')
    """
    if isinstance(value, Mapping):
        if all(not isinstance(v, (Mapping, list)) for v in value.values()):
            return "; ".join(f"{esc(key)}: {fmt(v)}" for key, v in value.items()) or "-"
        return kv_table(value)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        keys = list(dict.fromkeys(key for v in value for key in v))
        return table(keys, [[value_html(v.get(key)) for key in keys] for v in value], numeric=True)
    if isinstance(value, list):
        return (
            ", ".join(
                fmt(v) if isinstance(v, (int, float)) else esc(v if isinstance(v, str) else json.dumps(v))
                for v in value
            )
            or "-"
        )
    return fmt(value)


def kv_table(mapping: Mapping[str, Any]) -> str:
    """A two-column table without header: key, value (values rendered with :func:`value_html`)."""
    rows = "".join(f"<tr><th scope=row>{esc(key)}</th><td>{value_html(v)}</td></tr>" for key, v in mapping.items())
    return f"<table class=kv><tbody>{rows}</tbody></table>"


def cards(items: Sequence[tuple[str, str, str, str]]) -> str:
    """Headline figures: (JSON key, label, value, note); the key is kept as ``data-figure`` for checks."""
    out = [
        f'<div class=card data-figure="{esc(key)}"><span>{esc(label)}</span><b>{value}</b>'
        f"<span>{esc(note)}</span></div>"
        for key, label, value, note in items
    ]
    return f"<div class=cards>{''.join(out)}</div>"


def figure(svg: str, alt: str, caption: str) -> str:
    """An SVG plot as an inline data-URI image with its caption."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<figure><img alt="{esc(alt)}" src="data:image/svg+xml;base64,{data}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def section(ident: str, title: str, body: str) -> str:
    """A titled section with an id (the tests and the table of contents use it)."""
    return f'<section id="{esc(ident)}"><h2>{esc(title)}</h2>{body}</section>'


def page(title: str, body: str, *, wide: bool = False) -> str:
    """The whole document: one file, inline style, nothing fetched (`wide`: for wide tables)."""
    style = _CSS + ("body { max-width: 84rem; }" if wide else "")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
        f"<style>{style}</style></head><body>\n{body}\n"
        f"<footer>polars_anon {esc(polars_anon.__version__)}</footer></body></html>\n"
    )
