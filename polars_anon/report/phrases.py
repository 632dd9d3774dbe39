"""The report's two headline figures in words, the same in every short summary (the command line's terminal
summary, ``repr`` of a result, its notebook display, the HTML page): what the anonymization cost, what risk
remains, and what that risk leaves out (the columns published as is without being declared).

>>> loss_phrase(0.25)
'average cell loss 0.25 (0 = every value published as is, 1 = every value generalized to the root)'
>>> loss_phrase(0.99996).split(" (")[0]  # a part is never rounded up to the whole
'average cell loss >0.9999'
>>> risk_phrase({"output": {"threshold": 0.2, "prosecutor": {"highest": 0.5, "records_at_risk": 0.25}}})
're-identification risk left: at most 50.00% a record (1 in 2), 25.0% of the records above 20%'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from polars_anon.report import UNDECLARED
from polars_anon.report.columns import protected_treatment
from polars_anon.report.page import count, fmt, fraction
from polars_anon.report.page import share as percent

__all__ = [
    "blanked_cells",
    "cells_phrase",
    "key_cells",
    "counted_rows",
    "k_asked_phrase",
    "k_meaning",
    "loss_phrase",
    "MODEL_PARAMETERS",
    "of_counted_rows",
    "privacy_phrase",
    "risk_phrase",
    "sampled_from",
    "suppression_brief",
    "suppression_phrase",
    "undeclared_phrase",
]


def sampled_from(report: Mapping[str, Any]) -> int | None:
    """The input's row count when a differentially private release sampled it (``n_input_rows`` and ``suppressed``
    then count the sampled rows, and ``k`` is the k the release enforces), else None.

    >>> sampled_from({"details": {"differential_privacy": {"n_rows": 330}}}), sampled_from({})
    (330, None)
    """
    dp = (report.get("details") or {}).get("differential_privacy")
    return dp.get("n_rows") if isinstance(dp, Mapping) else None


def counted_rows(report: Mapping[str, Any]) -> str:
    """What ``n_input_rows`` counts: 'input rows', or 'sampled rows' (:func:`sampled_from`)."""
    return "input rows" if sampled_from(report) is None else "sampled rows"


def of_counted_rows(report: Mapping[str, Any]) -> str:
    """What a share of ``n_input_rows`` is a share of: 'the input', or 'the sampled rows' (:func:`sampled_from`)."""
    return "the input" if sampled_from(report) is None else "the sampled rows"


def k_meaning(report: Mapping[str, Any]) -> str:
    """What the report's ``k`` is: 'requested', or 'enforced' (differential privacy's k when above the one asked)."""
    return "requested" if sampled_from(report) is None else "enforced"


def k_asked_phrase(report: Mapping[str, Any]) -> str:
    """What follows the report's ``k`` when the k asked differs (a differentially private release enforces its own):
    ``" (the release's; 5 asked)"``, else ``""``.

    >>> k_asked_phrase({"k": 60, "details": {"differential_privacy": {"k_asked": 5}}}), k_asked_phrase({"k": 5})
    (" (the release's; 5 asked)", '')
    """
    asked = ((report.get("details") or {}).get("differential_privacy") or {}).get("k_asked")
    return "" if asked is None or asked == report.get("k") else f" (the release's; {fmt(asked)} asked)"


def blanked_cells(report: Mapping[str, Any]) -> dict[str, int] | None:
    """The key cells a method blanked (set missing, the row kept), per qid: local suppression's
    ``details.suppressed_cells``; None for a method that removes whole rows (the report's ``suppressed``) or nothing.

    >>> blanked_cells({"details": {"suppressed_cells": {"sex": 0, "age": 3}}}), blanked_cells({"suppressed": 2})
    ({'sex': 0, 'age': 3}, None)
    """
    cells = (report.get("details") or {}).get("suppressed_cells")
    return {str(q): int(n) for q, n in cells.items()} if isinstance(cells, Mapping) else None


def key_cells(report: Mapping[str, Any]) -> tuple[int, int] | None:
    """The key cells a method blanked and the key cells of the input (rows times qids), or None for a method that
    blanks no cell (:func:`blanked_cells`): the two counts every display of blanked cells shows.

    >>> key_cells({"n_input_rows": 6, "details": {"suppressed_cells": {"sex": 0, "age": 3}}})
    (3, 12)
    """
    cells = blanked_cells(report)
    if cells is None:
        return None
    return sum(cells.values()), int(report.get("n_input_rows") or 0) * len(cells)


def cells_phrase(report: Mapping[str, Any]) -> str | None:
    """The key cells blanked, of every key cell of the input, and per qid (the rows suppressed too, when any); None
    for a method that blanks no cell (:func:`blanked_cells`). Every display of a result says this in these words.

    >>> cells_phrase({"n_input_rows": 6, "suppressed": 0, "details": {"suppressed_cells": {"sex": 0, "age": 3}}})
    '3 of 12 key cells blanked (set missing; 25.0%): age 3'
    >>> cells_phrase({"n_input_rows": 6, "suppressed": 1, "details": {"suppressed_cells": {"sex": 0, "age": 0}}})
    '0 of 12 key cells blanked (set missing; 0.0%); suppressed 1 of 6 input rows'
    """
    cells, counted = blanked_cells(report), key_cells(report)
    if cells is None or counted is None:
        return None
    blanked, n_cells = counted
    per_qid = ", ".join(f"{q} {n:,}" for q, n in cells.items() if n)
    text = f"{blanked:,} of {n_cells:,} key cells blanked (set missing; {percent(blanked, n_cells)})"
    text += f": {per_qid}" if per_qid else ""
    return text + (f"; {_rows_phrase(report)}" if report.get("suppressed") else "")


def suppression_phrase(report: Mapping[str, Any]) -> str | None:
    """What was suppressed, in the summaries a person reads (the command line's, the page's): the rows removed
    (``"suppressed 2 of 12 input rows"``), or, for a method that blanks cells, :func:`cells_phrase`; None when the
    report has no count yet.

    >>> suppression_phrase({"suppressed": 2, "n_input_rows": 12})
    'suppressed 2 of 12 input rows'
    """
    if blanked_cells(report) is not None:
        return cells_phrase(report)
    return None if report.get("suppressed") is None else _rows_phrase(report)


def suppression_brief(report: Mapping[str, Any]) -> str:
    """:func:`suppression_phrase` in a few words (a result's one-line ``repr``): ``"2 suppressed"`` (rows), or
    ``"3 key cells blanked"`` (and the rows suppressed, when any).

    >>> suppression_brief({"suppressed": 2}), suppression_brief({"details": {"suppressed_cells": {"a": 3, "b": 0}}})
    ('2 suppressed', '3 key cells blanked')
    """
    rows, counted = report.get("suppressed") or 0, key_cells(report)
    if counted is None:
        return f"{rows:,} suppressed"
    blanked = f"{count(counted[0], 'key cell', 'key cells')} blanked"
    return blanked + (f", {count(rows, 'row', 'rows')} suppressed" if rows else "")


def _rows_phrase(report: Mapping[str, Any]) -> str:
    """``"suppressed 2 of 12 input rows"`` (a differentially private release's: of its sample, and of the input)."""
    n_input = sampled_from(report)
    of = f" (a sample of {n_input:,} input rows)" if n_input is not None else ""
    rows = report.get("suppressed") or 0
    return f"suppressed {rows:,} of {report.get('n_input_rows') or 0:,} {counted_rows(report)}{of}"


def loss_phrase(loss: float | None) -> str | None:
    """The report's ``loss`` (the mean over every quasi-identifier cell; a removed row counts 1 a cell) in words;
    None without one (a published value that is not a hierarchy node: Mondrian's ranges, MDAV)."""
    if loss is None:
        return None
    return (
        f"average cell loss {fraction(loss)} (0 = every value published as is, 1 = every value generalized to the root)"
    )


def risk_phrase(risk: Mapping[str, Any] | None) -> str | None:
    """The prosecutor risk of the published table (``risk["output"]``): the highest a record has (one over its
    class's size) and the share of records above the report's threshold; None when the report has no such figure.

    >>> risk_phrase({"output": {"threshold": 0.2, "prosecutor": {"highest": 0.1, "records_at_risk": 0.0}}})
    're-identification risk left: at most 10.00% a record (1 in 10), 0.0% of the records above 20%'
    >>> risk_phrase({"input": {}}) is None
    True
    """
    output = (risk or {}).get("output") or {}
    prosecutor = output.get("prosecutor") or {}
    highest, at_risk = prosecutor.get("highest"), prosecutor.get("records_at_risk")
    if highest is None or at_risk is None or "threshold" not in output:
        return None
    one_in = f" (1 in {round(1 / highest):,})" if highest > 0 else ""
    return (
        f"re-identification risk left: at most {highest:.2%} a record{one_in}, {_percent(at_risk)} of the records "
        f"above {output['threshold']:.0%}"
    )


MODEL_PARAMETERS = ("attribute", "l", "t", "variant", "epsilon", "delta", "beta", "k", "highest", "average")
"""The keys of a report's ``privacy`` entry that name a model's parameters in a summary."""


def privacy_phrase(models: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Whether each privacy model of the report (``privacy``: checked on the published table) held, with its
    parameters; None without one.

    >>> privacy_phrase([{"model": "l-diversity", "attribute": "party", "l": 2, "c": None, "satisfied": True},
    ...                 {"model": "t-closeness", "attribute": "party", "t": 0.1, "satisfied": False,
    ...                  "violating_classes": 3, "violating_rows": 12}])
    'privacy models on the published table: l-diversity (attribute=party, l=2) held; t-closeness (attribute=party, \
t=0.1) did not hold: 3 classes, 12 rows'
    """
    if not models:
        return None
    parts = []
    for m in models:
        params = ", ".join(f"{key}={m[key]}" for key in MODEL_PARAMETERS if m.get(key) is not None)
        verdict = "held" if m.get("satisfied") else "did not hold"
        if not m.get("satisfied") and m.get("violating_classes") is not None:
            verdict += f": {m['violating_classes']:,} classes, {m.get('violating_rows', 0):,} rows"
        parts.append(f"{m.get('model', '?')} ({params}) {verdict}" if params else f"{m.get('model', '?')} {verdict}")
    return "privacy models on the published table: " + "; ".join(parts)


def undeclared_phrase(report: Mapping[str, Any]) -> str | None:
    """The columns the report's ``columns`` show published as is without being declared (insensitive by default, so
    a forgotten quasi-identifier is among them), and that the risk figures count the declared qids only; None when
    every column was declared. One line, the same in every display of a result.

    >>> undeclared_phrase({"qids": ["age", "sex"], "columns": [{"name": "zip", "treatment": UNDECLARED},
    ...                                                         {"name": "age", "treatment": "generalized"}]})
    'not declared, published as is: zip; the risk figures count only the qids age, sex (declare each column: qids, \
sensitive, insensitive or drop)'
    >>> undeclared_phrase({"qids": ["age"], "columns": [{"name": "age", "treatment": "generalized"}]}) is None
    True

    A column a ``[[sdc.protect]]`` step changed is named apart (its values are the step's, not the input's):

    >>> undeclared_phrase({"qids": ["age"], "columns": [{"name": "zip", "treatment": UNDECLARED},
    ...                    {"name": "city", "treatment": "published as perturbed (not declared)"}]})[:78]
    'not declared, published as is: zip; not declared, published as perturbed: city'
    """
    groups = []
    for words in (UNDECLARED, protected_treatment(UNDECLARED)):  # a protect step's column is not declared by it
        names = [str(c.get("name")) for c in report.get("columns") or [] if c.get("treatment") == words]
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5:,} more" if len(names) > 5 else "")
            groups.append(f"not declared, {words.removesuffix(' (not declared)')}: {shown}")
    if not groups:
        return None
    qids = ", ".join(str(q) for q in report.get("qids") or [])
    return (
        f"{'; '.join(groups)}; the risk figures count only the qids {qids} (declare each column: qids, sensitive, "
        "insensitive or drop)"
    )


def _percent(share: float) -> str:
    """A share as a percentage that reads 0 or 100 only when it is (a record in 5,000 is not "0.0%").

    >>> _percent(0.0), _percent(1 / 5000), _percent(0.25), _percent(0.9996), _percent(1.0)
    ('0.0%', '0.02%', '25.0%', '>99.9%', '100.0%')
    """
    return percent(share, 1)  # the report page's rule: two significant digits below 0.1%, never 100% below 1
