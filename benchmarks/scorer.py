"""One scorer for published tables of hierarchy nodes, ours and ARX's alike.

``score(original, published, qids, hierarchies)`` compares a published table with the
original, row by row, and returns two losses, each the mean over quasi-identifier
cells (rows x qids) of the input:

- ``LOSS`` (the project's own loss, the report's ``loss``): a cell published as node v
  costs ``(nl(v) - 1) / (nl(root) - 1)``, nl being the leaves under a node;
- ``GRANULARITY`` (SafePub's granularity, Bild, Kuhn and Prasser, PETS 2018, §5.1, as ARX's
  ``MetricMDNMLoss.getScore`` computes it with ``DomainShareReliable``): a cell published as node v
  costs ``nl(v) / nl(root)``, so an ungeneralized value costs ``1 / nl(root)``, not 0;
- ``NCP`` (cell NCP, numeric attributes as ranges over the data's span): a categorical
  cell costs as above; a numeric one ``(hi - lo) / (max - min)``, where lo and hi are
  the least and greatest leaf under v (clipped to the data's span) and min, max those
  of the attribute's original values.

Each mean is the rows' sum correctly rounded (``math.fsum``), so the same rows in any order score the
same float. A suppressed row costs 1 per cell under both: a row missing from `published` (matched
on the `row` column) or a cell published as ``*`` that is not an ancestor label of the
original value (ARX writes suppressed rows as ``*``). Any other published label must
name an ancestor of the original value (or the value itself), else :class:`ValueError`.

An attribute is numeric when every leaf label of its hierarchy parses as a number and
no inner node's label contains ``*`` (a masked code such as a ZIP ``331**`` is not a
range), unless the caller passes `numeric`.

>>> import polars_anon as pa
>>> age = pa.Hierarchy.from_dict({"*": {"20-29": ["21", "25"], "30-39": ["31", "35"]}})
>>> orig = pl.DataFrame({"age": ["21", "25", "31", "35"]})
>>> pub = pl.DataFrame({"age": ["20-29", "20-29", "31", "*"]})
>>> s = score(orig, pub, ["age"], {"age": age})
>>> round(s[LOSS], 6), round(s[NCP], 6)  # leaves: (1/3 + 1/3 + 0 + 1) / 4; range: (4/14 + 4/14 + 0 + 1) / 4
(0.416667, 0.392857)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

import polars_anon as pa

__all__ = ["GRANULARITY", "LOSS", "NCP", "SUPPRESSED", "is_numeric", "score"]

LOSS = "loss (leaves under node)"
GRANULARITY = "granularity (leaves under node / leaves)"
NCP = "cell NCP (numeric as range over data span)"
SUPPRESSED = "suppressed rows"


def _number(label: str) -> float | None:
    try:
        return float(label)
    except ValueError:
        return None


def is_numeric(h: pa.Hierarchy) -> bool:
    """Every leaf a number and no inner label a mask (module docstring).

    >>> is_numeric(pa.Hierarchy.from_dict({"*": {"1-2": ["1", "2"]}}))
    True
    >>> is_numeric(pa.Hierarchy.from_dict({"*": {"1*": ["10", "11"]}}))
    False
    """
    if any(_number(x) is None for x in h.leaf_labels):
        return False
    inner = [lab for lab, leaf in zip(h.labels, h.is_leaf) if not leaf]
    return not any("*" in lab for lab in inner[1:])


def _published_nodes(h: pa.Hierarchy, q: str, leaf: np.ndarray, label: pl.Series) -> np.ndarray:
    """The node each published label names among the ancestors of the row's leaf (-1: suppressed ``*``)."""
    labels = pl.DataFrame({"ancestor": np.arange(h.n_nodes), "label": h.labels})
    anc = h.closure.select("leaf", "ancestor").join(labels, on="ancestor")
    rows = pl.DataFrame({"i": np.arange(len(leaf)), "leaf": leaf, "label": label.cast(pl.String)})
    hit = rows.join(anc, on=["leaf", "label"], how="left").sort("i")
    node = hit["ancestor"].fill_null(-1).to_numpy()
    bad = (node < 0) & (hit["label"] != "*").to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"column {q!r}: published {hit['label'][i]!r} is not a generalization of {h.labels[int(leaf[i])]!r}"
        )
    return node


def score(
    original: pl.DataFrame,
    published: pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, pa.Hierarchy],
    *,
    row: str | None = None,
    numeric: Sequence[str] | None = None,
) -> dict[str, float]:
    """``{LOSS, GRANULARITY, NCP, SUPPRESSED}`` of `published` against `original` (module docstring).

    Without `row` the two frames are aligned by position (same height); with it, rows
    are matched on that column and rows of `original` absent from `published` are
    suppressed.
    """
    n = original.height
    if row is None:
        if published.height != n:
            raise ValueError(f"published has {published.height} rows, original {n}: pass row= to match them")
        pub = published.select(qids)
    else:
        pub = original.select(row).join(published.select(row, *qids), on=row, how="left", maintain_order="left")
    missing = pub[qids[0]].is_null().to_numpy()
    numeric = [q for q in qids if is_numeric(hierarchies[q])] if numeric is None else list(numeric)
    suppressed = missing.copy()
    loss = np.zeros(n)
    granularity = np.zeros(n)
    ncp = np.zeros(n)
    nodes = {}
    for q in qids:
        h = hierarchies[q]
        leaf = h.ids_of(original[q].cast(pl.String))
        node = np.full(n, -1, dtype=np.int64)
        kept = ~missing
        node[kept] = _published_nodes(h, q, leaf[kept], pub[q].filter(pl.Series(kept)))
        nodes[q] = (leaf, node)
        suppressed |= node < 0
    for q in qids:
        h = hierarchies[q]
        leaf, node = nodes[q]
        node = np.where(suppressed, 0, node)  # the root
        nl = h.leaves.astype(np.float64)
        cell = (nl[node] - 1) / max(nl[0] - 1, 1)
        loss += cell
        granularity += nl[node] / nl[0]
        if q in numeric:
            value = np.array([_number(x) for x in h.labels], dtype=np.float64)
            lo_of, hi_of = np.full(h.n_nodes, np.inf), np.full(h.n_nodes, -np.inf)
            c = h.closure
            np.minimum.at(lo_of, c["ancestor"].to_numpy(), value[c["leaf"].to_numpy()])
            np.maximum.at(hi_of, c["ancestor"].to_numpy(), value[c["leaf"].to_numpy()])
            data_lo, data_hi = value[leaf].min(), value[leaf].max()
            span = data_hi - data_lo
            width = np.minimum(hi_of[node], data_hi) - np.maximum(lo_of[node], data_lo)
            ncp += np.where(node == 0, 1.0, width / span) if span > 0 else (node == 0).astype(np.float64)
        else:
            ncp += cell
    cells = n * len(qids)
    return {
        LOSS: _mean(loss, cells),
        GRANULARITY: _mean(granularity, cells),
        NCP: _mean(ncp, cells),
        SUPPRESSED: int(suppressed.sum()),
    }


def _mean(per_row: np.ndarray, cells: int) -> float:
    """The rows' sum, correctly rounded (``math.fsum``), over `cells`: the same float in any row order.

    A row's own sum adds its qids in one order; ``numpy``'s pairwise sum over rows would round
    differently when the rows come in another order (ARX's output order varies by run).

    >>> _mean(np.array([0.1, 0.2, 0.3]), 3) == _mean(np.array([0.3, 0.1, 0.2]), 3)
    True
    """
    return math.fsum(per_row.tolist()) / cells
