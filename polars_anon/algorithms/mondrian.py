"""Mondrian multidimensional partitioning, Strict and Relaxed, as breadth-first group-by rounds.

[paper 002 §3.2, Algorithm 1], [paper 003 Algorithm 3]. Every quasi-identifier is
given a total order (an *axis*): the depth-first leaf order of its hierarchy (a
subtree is then an interval, so a class publishes its lowest common ancestor), an
explicit list, numeric or alphabetical order, or a seeded random permutation
[paper 003 §3.3.1]. A value's coordinate is its rank on the axis.

The algorithm runs on the class aggregates (one row per distinct tuple and its
``size``), never on the rows. Each round handles every open partition at once:

1. per partition and attribute, the frequency set (a group-by on (partition,
   rank)), its cumulative counts, the median and the normalized range (below);
2. the cut: the attribute with the widest normalized range that has an allowable
   cut (ties: the earlier quasi-identifier);
3. the children: a join of the decisions back on the partition id.

A partition that cannot be cut is closed. Rounds repeat until no partition is
open (about log2(n / k) rounds).

Readings taken where the papers leave room:

- **Normalized range** ("the widest normalised range of values", paper 002): the
  width of what the class would publish, over the same for the whole table. For a
  qid published as a range or a hierarchy node, ``(max - min) / (table max - table
  min)`` of its coordinates (numbers for a numeric axis, ranks otherwise); for a qid
  published as a set (the default for a categorical qid without hierarchy),
  ``(distinct values - 1) / (distinct values in the table - 1)``: the rank span
  would count values the class does not hold, which its set does not publish.
- **Strict**: the pivot pv is the lower median (the value holding record
  ``ceil(n / 2)`` in the sorted order). Paper 003 Algorithm 3 and paper 002
  Algorithm 1 write ``lhs = {x <= pv}``, ``rhs = {x > pv}``; that cut is impossible
  whenever pv is the partition's largest value (a modal value holding more than
  half the rows, e.g. sex or race on Adult, would never be cut). Both papers ask
  only that no value lands on both sides (and paper 003 cuts "as equally as
  possible"), so when the papers' cut does not leave k rows on both sides we take
  the other cut next to the median, ``lhs = {x < pv}``, ``rhs = {x >= pv}``, if that
  one does. The papers' cut is kept whenever it is allowable, even where the other
  would be more balanced (on Adult without hierarchies that choice gives the lower
  NCP at k = 2, 10 and 100; benchmarks/results/mondrian.md). A closed strict
  partition then has no allowable cut at any threshold of any attribute (every
  threshold above pv leaves fewer rows on the right than ``x <= pv``, every one
  below fewer on the left than ``x < pv``).
- **Relaxed**: ``lhs = {x < pv}``, ``rhs = {x > pv}`` and the records equal to the
  pivot are dealt out so that ``lhs`` holds exactly ``floor(n / 2)`` rows (paper 002:
  "neither exceeds the median count"); the pivot is the value holding record
  ``floor(n / 2)``. Records of one tuple may then land in two classes: the first
  ones (in row order) go left. The cut is allowed when ``floor(n / 2) >= k`` and the
  attribute has at least two distinct values in the partition.

The DuckDB twin is the ``anon_mondrian`` macro in ``sql/mondrian.sql``; it takes
the same coordinates (:func:`coordinates`) and gives the same partition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.errors import InvalidParameterError, preview
from polars_anon.generalize import class_ancestors
from polars_anon.hierarchy import Hierarchy
from polars_anon.labels import iso_dates, set_labels
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import OFFSET, SIZE, SUPPRESSED, TupleMap, out_col

__all__ = [
    "Axis",
    "MondrianOptions",
    "axes",
    "bound_sets",
    "bounds_labels",
    "class_bounds",
    "class_labels",
    "coordinates",
    "partition",
    "publish_modes",
    "sql_inputs",
]

_MODES = ("strict", "relaxed")
_ORDERS = ("hierarchy", "numeric", "alphabetical", "random")
_PUBLISH = ("auto", "hierarchy", "range", "set")
_T, _OFF, _PID, _SIZE = "__anon_t", "__anon_off", "__anon_pid", "__anon_size"


@dataclass(frozen=True)
class Axis:
    """The total order of one quasi-identifier.

    ``labels[r]`` is the value of rank r; ``values[r]`` is its coordinate for the
    normalized range (the number for a numeric axis, r otherwise);
    ``hierarchy_order`` says the labels are the hierarchy's depth-first leaves;
    ``rooted`` holds the ranks of the labels the qid's nulls were published at
    (``null="suppress"``: the root; see :func:`axes`).
    """

    qid: str
    labels: list[str]
    values: np.ndarray
    numeric: bool
    hierarchy_order: bool
    rooted: tuple[int, ...] = ()


def _as_numbers(labels: Sequence[str]) -> np.ndarray | None:
    """The labels as numbers; or, when every one reads as a date, a date-time or a time of day (the text Polars
    and the engines give a Date, Datetime or Time qid, or an ISO date in a String column), as the instants they
    name: days for dates, microseconds for the others (a time zone's offset applied); None otherwise.

    >>> _as_numbers(["10", "9.5"]).tolist(), _as_numbers(["2020-01-02", "1970-01-01"]).tolist()
    ([10.0, 9.5], [18263.0, 0.0])
    >>> _as_numbers(["2020-01-01 00:30:00.000000+01:00", "2019-12-31 23:00:00.000000+00:00"]).tolist()
    [1577835000000000.0, 1577833200000000.0]
    >>> _as_numbers(["2020-01-02", "soon"]) is None
    True
    """
    try:
        return np.array([float(v) for v in labels], dtype=np.float64)
    except ValueError:
        pass
    text = pl.Series(list(labels), dtype=pl.String)
    for parse in _TEMPORAL:
        read = parse(text)
        if read.null_count() == 0:
            return read.to_numpy().astype(np.float64)
    return None


_TEMPORAL: tuple[Callable[[pl.Series], pl.Series], ...] = (
    lambda t: iso_dates(t).cast(pl.Int32),
    lambda t: t.str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False).dt.epoch("us"),
    lambda t: t.str.to_datetime("%Y-%m-%d %H:%M:%S%.f%z", time_unit="us", strict=False).dt.epoch("us"),
    lambda t: t.str.to_time("%H:%M:%S%.f", strict=False).cast(pl.Int64) // 1000,
)
"""How a Date, a Datetime (naive, or with its offset) and a Time are written as labels, read back as numbers."""


def axes(
    present: Mapping[str, Sequence[str]],
    hierarchies: Mapping[str, Hierarchy],
    order: str | Mapping[str, object] | None = None,
    seed: int = 0,
    declared: Mapping[str, Sequence[str]] | None = None,
) -> list[Axis]:
    """The axis of each quasi-identifier.

    Parameters
    ----------
    present
        Quasi-identifier -> its distinct values (String), in any order.
    hierarchies
        The hierarchies (a quasi-identifier may have none).
    order
        One of ``"hierarchy"`` (depth-first leaf order; the default with a
        hierarchy), ``"numeric"`` (the default without one when every value is a
        number), ``"alphabetical"`` (the default otherwise, as in paper 002, but
        for a qid whose column declares an order: `declared`),
        ``"random"`` (a permutation seeded by `seed` and the qid's position), or a
        dict qid -> one of those or an explicit list of values. Every order
        ranks the labels the qid's nulls were published at (``null="suppress"``:
        the root) last; a list need not name them, and places them where it does.
    seed
        Seed of the random orders.
    declared
        Qid -> the order its column declares (an Enum's categories, as labels:
        :attr:`~polars_anon.request.Request.orders`): the default order of such a
        qid without a hierarchy, as an explicit list (a category the column does
        not hold keeps its place).

    Examples
    --------
    >>> h = Hierarchy.from_dict({"*": {"A": ["b", "a"], "c": None}})
    >>> [a.labels for a in axes({"x": ["a", "b"], "y": ["10", "9"]}, {"x": h})]
    [['b', 'a', 'c'], ['9', '10']]
    >>> axes({"z": ["lo", "hi"]}, {}, declared={"z": ["lo", "mid", "hi"]})[0].labels
    ['lo', 'mid', 'hi']
    """
    per_qid = order if isinstance(order, Mapping) else {q: order for q in present}
    unknown = [q for q in per_qid if q not in present]
    if unknown:
        raise InvalidParameterError(f"order names {unknown}, which are not qids; the qids are {list(present)}")
    out = []
    for j, (q, values) in enumerate(present.items()):
        h = hierarchies.get(q)
        vals, rooted = _column_values(values, h)
        how = per_qid.get(q)
        if how is None:
            how = _default_order(q, h, vals, declared or {})
        ordered = _ordered(q, how, vals, h, [int(seed), j])
        labels = ordered + [v for v in rooted if v not in ordered]  # an explicit list may place the root
        if not isinstance(how, str):
            how = "explicit"
        numbers = _as_numbers(labels) if how in ("hierarchy", "numeric") else None
        numeric = numbers is not None and bool(np.all(np.diff(numbers) >= 0))
        coords = numbers if numeric and numbers is not None else np.arange(len(labels), dtype=np.float64)
        ranks = tuple(labels.index(v) for v in rooted)
        out.append(Axis(q, labels, coords, numeric, how == "hierarchy", ranks))
    return out


def _default_order(q: str, h: Hierarchy | None, vals: list[str], declared: Mapping[str, Sequence[str]]) -> object:
    """The order of qid `q` when none is given: its hierarchy's, else the order its column declares (an Enum's
    categories), else numeric when every value is a number, else alphabetical (see :func:`axes`)."""
    if h is not None:
        return "hierarchy"
    if q in declared:
        return list(declared[q])
    return "numeric" if _as_numbers(vals) is not None else "alphabetical"


def _column_values(values: Sequence[str], h: Hierarchy | None) -> tuple[list[str], list[str]]:
    """The distinct values an order ranks, sorted, and apart from them the labels the column's nulls were
    published at (``null="suppress"``: the root), which every order ranks last, in the hierarchy's id order.
    Only a qid with a hierarchy holds such labels (the road refuses nulls in a qid without one).

    >>> _column_values(["b", "*", "a"], Hierarchy.suppression(["a", "b"]))
    (['a', 'b'], ['*'])
    """
    vals = sorted({str(v) for v in values})
    if h is None:
        return vals, []
    leaves = set(h.leaf_labels)  # built once: per value it cost |values| x |leaves| (minutes for 5-digit zips)
    rooted = [h.label_of(i) for i in sorted(h.id_of(v) for v in vals if v not in leaves)]
    return [v for v in vals if v in leaves], rooted


def _ordered(q: str, how: object, vals: list[str], h: Hierarchy | None, seed: list[int]) -> list[str]:
    """The values of qid `q` in the order `how` names (the labels its nulls were published at left out; see
    :func:`axes`): a hierarchy's leaves in depth-first order, or permuted by `seed` for ``"random"``.

    >>> _ordered("x", "random", ["a", "b", "c"], None, [0, 0])
    ['c', 'a', 'b']
    """
    if isinstance(how, (list, tuple)):
        return _listed(q, how, vals)
    if not isinstance(how, str):
        raise InvalidParameterError(
            f"order for qid {q!r} must be a string or a list of values, got {type(how).__name__}"
        )
    if how not in _ORDERS:
        raise InvalidParameterError(
            f"order for qid {q!r} must be one of {list(_ORDERS)} or a list of its values, got {how!r}"
        )
    if how == "numeric":
        return _numeric(q, vals)
    if how == "alphabetical":
        return vals
    if how == "hierarchy" and h is None:
        raise InvalidParameterError(
            f"order 'hierarchy' for qid {q!r}, which has no hierarchy; use 'numeric' or 'alphabetical'"
        )
    base = h.leaf_labels if h is not None else vals
    if how == "hierarchy":
        return list(base)
    return [base[i] for i in np.random.default_rng(seed).permutation(len(base))]


def _numeric(q: str, vals: list[str]) -> list[str]:
    """`vals` in numeric order; refused, naming the first few, when some are not numbers."""
    numbers = _as_numbers(vals)
    if numbers is None:
        bad: list[object] = [v for v in vals if _as_numbers([v]) is None]
        raise InvalidParameterError(
            f"order 'numeric' for qid {q!r}: {len(bad)} values are not numbers (first: {preview(bad)}); "
            "use 'alphabetical' or a list"
        )
    return [vals[i] for i in np.argsort(numbers, kind="stable")]


def _listed(q: str, listed: Sequence[object], vals: list[str]) -> list[str]:
    """An explicit order: each value once, every value of the column listed (its nulls need no place: they rank
    last, at the root they were published at; a list that names the root places them there)."""
    labels = [str(v) for v in listed]
    if len(set(labels)) != len(labels):
        dup: list[object] = [v for v in dict.fromkeys(labels) if labels.count(v) > 1]
        raise InvalidParameterError(f"order for qid {q!r} lists values twice (first: {preview(dup)}); list each once")
    missing = sorted(set(vals) - set(labels))
    if missing:
        raise InvalidParameterError(
            f"order for qid {q!r} misses {len(missing)} values of the column "
            f"(first: {preview(list(missing))}); list every value"
        )
    return labels


def coordinates(aggregates: pl.DataFrame, qids: Sequence[str], axis_list: Sequence[Axis]) -> pl.DataFrame:
    """The aggregates as coordinates: ``__anon_t`` (tuple index), ``__anon_size``, and per
    attribute j ``__anon_x{j}`` (Int64 rank) and ``__anon_v{j}`` (Float64 coordinate).

    >>> ax = axes({"a": ["x", "y"]}, {})
    >>> coordinates(pl.DataFrame({"a": ["y", "x"], "size": [2, 1]}), ["a"], ax).row(0)
    (0, 2, 1, 1.0)
    """
    cols = [pl.int_range(pl.len(), dtype=pl.Int64).alias(_T), pl.col("size").cast(pl.Int64).alias(_SIZE)]
    for j, (q, ax) in enumerate(zip(qids, axis_list)):
        rank = pl.col(q).replace_strict(ax.labels, list(range(len(ax.labels))), return_dtype=pl.Int64)
        cols.append(rank.alias(f"__anon_x{j}"))
        cols.append(
            rank.replace_strict(list(range(len(ax.labels))), ax.values.tolist(), return_dtype=pl.Float64).alias(
                f"__anon_v{j}"
            )
        )
    return aggregates.select(cols)


def sql_inputs(coords: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The coordinates in the long form of the ``anon_mondrian`` macro: ``(coords, tuples)``.

    ``coords`` has ``t, dim, x, v`` (one row per tuple and attribute), ``tuples`` has ``t, size``.

    >>> ax = axes({"a": ["x", "y"]}, {})
    >>> long, tuples = sql_inputs(coordinates(pl.DataFrame({"a": ["y", "x"], "size": [2, 1]}), ["a"], ax))
    >>> long.rows(), tuples.rows()
    ([(0, 0, 1, 1.0), (1, 0, 0, 0.0)], [(0, 2), (1, 1)])
    """
    m = sum(1 for c in coords.columns if c.startswith("__anon_x"))
    long = pl.concat(
        [
            coords.select(
                pl.col(_T).alias("t"),
                pl.lit(j, dtype=pl.Int64).alias("dim"),
                pl.col(f"__anon_x{j}").alias("x"),
                pl.col(f"__anon_v{j}").alias("v"),
            )
            for j in range(m)
        ]
    ).sort("t", "dim")
    return long, coords.select(pl.col(_T).alias("t"), pl.col(_SIZE).alias("size"))


def _decider(
    bases: Sequence[int],
    k: int,
    mode: str,
    spans: Sequence[float],
    counted: Sequence[bool],
    values: np.ndarray,
    every: bool = False,
) -> Callable[[pl.LazyFrame], pl.LazyFrame]:
    """The query of one round's decisions, as a function of the open tuples ``work``:
    one row per partition that can be cut: ``pid``, ``dim``, ``pv``, ``take``.

    The frequency sets of all attributes come from one group-by on one integer key
    ``(pid * m + dim) * B + rank`` (sorted, so each (partition, attribute) group comes
    in axis order); ``values[offset(dim) + rank]`` is the coordinate. A strict cut puts
    ``x <= pv`` left. ``counted[j]``: the width of attribute j is its number of distinct
    values minus one (else its value range), over ``spans[j]``. The expressions are
    built once; each round only applies them to its ``work``.
    """
    m, big = len(bases), max(bases)
    offsets = np.concatenate([[0], np.cumsum(bases)[:-1]]).astype(np.int64)
    c, cum, grp = pl.col("c"), pl.col("cum"), pl.col("__anon_g")
    first, last = pl.col("__anon_first"), pl.col("__anon_last")
    keys = [((pl.col(_PID) * m + j) * big + pl.col(f"__anon_x{j}")).alias("__anon_key") for j in range(m)]
    dim = pl.col("dim")
    split_key = [
        (pl.col("__anon_key") // big).alias("__anon_g"),
        (pl.col("__anon_key") // big // m).alias(_PID),
        (pl.col("__anon_key") // big % m).alias("dim"),
        (pl.col("__anon_key") % big).alias("x"),
    ]
    coord = (
        pl.lit(pl.Series(values, dtype=pl.Float64))
        .gather(pl.lit(pl.Series(offsets)).gather(dim) + pl.col("x"))
        .alias("v")
    )
    # vectorized per-group scans over the sorted frequency sets (no per-group agg)
    scans = [
        [
            coord,
            c.cum_sum().alias("gc"),
            pl.int_range(pl.len(), dtype=pl.Int64).alias("i"),
            (grp != grp.shift(1)).fill_null(True).alias("__anon_first"),
            (grp != grp.shift(-1)).fill_null(True).alias("__anon_last"),
        ],
        [
            (pl.col("gc") - pl.when(first).then(pl.col("gc") - c).forward_fill()).alias("cum"),
            pl.when(first).then(pl.col("v")).forward_fill().alias("v0"),
            pl.when(first).then(pl.col("i")).forward_fill().alias("i0"),
        ],
        [
            pl.when(last).then(cum).backward_fill().alias("n"),
            pl.when(last).then(pl.col("v")).backward_fill().alias("v1"),
            pl.when(last).then(pl.col("i")).backward_fill().alias("i1"),
        ],
    ]
    target = (pl.col("n") + 1) // 2 if mode == "strict" else pl.col("n") // 2
    at_median = (cum - c < target) & (cum >= target)
    span = pl.lit(pl.Series([sp if sp > 0 else 1.0 for sp in spans], dtype=pl.Float64)).gather(dim)
    by_count = pl.lit(pl.Series(list(counted), dtype=pl.Boolean)).gather(dim)
    width = (
        pl.when(by_count).then((pl.col("i1") - pl.col("i0")).cast(pl.Float64)).otherwise(pl.col("v1") - pl.col("v0"))
        / span  # a column: Polars divides by a scalar as a product with its reciprocal, not
        # correctly rounded (ties such as 1/3 = 2/6 would break; the DuckDB twin divides exactly)
    )
    stat_cols = [
        _PID,
        "dim",
        "n",
        (pl.col("i1") - pl.col("i0") + 1).alias("distinct"),
        width.alias("width"),
        pl.col("x").alias("pv"),
        cum.alias("lhs"),
        (cum - c).alias("before"),
    ]
    n, lhs, before = pl.col("n"), pl.col("lhs"), pl.col("before")
    if mode == "strict":
        # two strict cuts next to the median: the papers' x <= pv (lhs rows) and, only when
        # that one is not allowable, x < pv (before rows) (module docstring)
        ok_le = (lhs >= k) & (n - lhs >= k)
        ok_lt = (before >= k) & (n - before >= k)
        use_lt = ok_lt & ~ok_le
        choose = [
            pl.when(use_lt).then(pl.col("pv") - 1).otherwise(pl.col("pv")).alias("pv"),
            pl.when(use_lt).then(before).otherwise(lhs).alias("lhs"),
            (ok_le | ok_lt).alias("__anon_ok"),
        ]
        allow, take = pl.col("__anon_ok"), lhs
    else:
        choose = []
        allow = (n // 2 >= k) & (pl.col("distinct") >= 2)
        take = n // 2 - before
    out_cols = [_PID, dim.cast(pl.Int64), "width", pl.col("pv").cast(pl.Int64), take.cast(pl.Int64).alias("take")]

    def decide(work: pl.LazyFrame) -> pl.LazyFrame:
        freq = pl.concat([work.select(key, _SIZE) for key in keys]).group_by("__anon_key").agg(c=pl.col(_SIZE).sum())
        freq = freq.sort("__anon_key").with_columns(split_key)
        for step in scans:
            freq = freq.with_columns(step)
        stats = freq.filter(at_median).select(stat_cols)
        if choose:
            stats = stats.with_columns(choose)
        ranked = stats.filter(allow).select(out_cols).sort(_PID, "width", "dim", descending=[False, True, False])
        return ranked if every else ranked.unique(_PID, keep="first", maintain_order=True)

    return decide


def _admissible(candidates: pl.DataFrame, work: pl.DataFrame, constraints: Constraints) -> pl.DataFrame:
    """Per partition, the first candidate cut (widest first) whose two sides both satisfy every model (strict cuts)."""
    if candidates.height == 0:
        return candidates
    m = sum(1 for c in work.columns if c.startswith("__anon_x"))
    cand = candidates.with_row_index("__anon_c").with_columns(pl.col("__anon_c").cast(pl.Int64))
    expanded = work.select(_T, _PID, *[f"__anon_x{j}" for j in range(m)]).join(cand, on=_PID, how="inner")
    x = np.stack([expanded[f"__anon_x{j}"].to_numpy() for j in range(m)], axis=1)
    dim = expanded["dim"].to_numpy()
    left = x[np.arange(len(dim)), dim] <= expanded["pv"].to_numpy()
    cls = 2 * expanded["__anon_c"].to_numpy() + (~left).astype(np.int64)
    view = constraints.view_rows(expanded[_T].to_numpy(), cls, 2 * cand.height)
    good = np.asarray((constraints.ok(view) & (view.size >= constraints.floor)).reshape(cand.height, 2).all(axis=1))
    return cand.filter(pl.Series(good)).drop("__anon_c").unique(_PID, keep="first", maintain_order=True)


_IN_MEMORY_TUPLES = 200_000


def partition(
    coords: pl.DataFrame,
    k: int,
    mode: str = "strict",
    count_dims: Sequence[int] = (),
    constraints: Constraints | None = None,
) -> tuple[pl.DataFrame, int]:
    """Partition the coordinates (from :func:`coordinates`) into Mondrian classes.

    `constraints` (privacy models besides k): a strict cut is allowable only when both
    sides satisfy every model (and hold at least the table models' floor); relaxed
    cuts deal a tuple's rows out by row order, which the class aggregates cannot
    follow for sensitive values, so relaxed mode takes only models of class sizes
    (as the smallest class size they allow).

    `count_dims`: the attributes whose normalized width is ``(distinct values - 1) /
    (distinct values in the table - 1)`` (those published as sets); the others use
    ``(max - min) / (table max - table min)`` of their coordinates.

    Returns ``(segments, rounds)``: segments has ``__anon_t``, ``__anon_off`` (first
    record of the tuple in the segment), ``__anon_size`` and ``__anon_pid`` (class id,
    numbered by the order in which partitions were made), sorted by tuple and offset;
    rounds counts the rounds that cut something.

    >>> ax = axes({"a": [str(i) for i in range(6)]}, {})
    >>> agg = pl.DataFrame({"a": [str(i) for i in range(6)], "size": [1] * 6})
    >>> seg, rounds = partition(coordinates(agg, ["a"], ax), k=2)
    >>> seg["__anon_pid"].to_list(), rounds
    ([0, 0, 0, 1, 1, 1], 1)
    """
    if mode not in _MODES:
        raise InvalidParameterError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    m = sum(1 for c in coords.columns if c.startswith("__anon_x"))
    counted = [j in set(count_dims) for j in range(m)]
    spans = [
        float(coords[f"__anon_x{j}"].n_unique() - 1)
        if counted[j]
        else float(coords[f"__anon_v{j}"].max() - coords[f"__anon_v{j}"].min())  # type: ignore[operator]
        for j in range(m)
    ]
    bases = [int(coords[f"__anon_x{j}"].max()) + 1 for j in range(m)]  # type: ignore[arg-type]
    work = coords.with_columns(pl.lit(0, dtype=pl.Int64).alias(_OFF), pl.lit(0, dtype=pl.Int64).alias(_PID))
    values = np.zeros(sum(bases), dtype=np.float64)  # the coordinate of each (dim, rank)
    for j, off in enumerate(np.concatenate([[0], np.cumsum(bases)[:-1]])):
        values[int(off) + coords[f"__anon_x{j}"].to_numpy()] = coords[f"__anon_v{j}"].to_numpy()
    models = constraints is not None and not constraints.k_only
    if models and mode == "relaxed":
        k = constraints.min_size()  # type: ignore[union-attr]
    elif models:
        k = constraints.floor  # type: ignore[union-attr]
    check_each = models and mode == "strict"
    decide = _decider(bases, k, mode, spans, counted, values, every=check_each)
    chosen = pl.lit(None, dtype=pl.Int64)  # the rank on the cut attribute
    for j in reversed(range(m)):
        chosen = pl.when(pl.col("__anon_dim") == j).then(pl.col(f"__anon_x{j}")).otherwise(chosen)
    done: list[pl.DataFrame] = []
    next_id, rounds = 1, 0
    while work.height:
        # `work` is in memory already: on few tuples the in-memory engine saves the streaming
        # engine's fixed cost per query (about 25 ms of a 35 ms round on Adult); on many
        # (1.4M tuples of a 15M-row register) streaming is faster (0.25 s against 0.4 s a round)
        engine: Literal["in-memory", "streaming"] = "in-memory" if work.height <= _IN_MEMORY_TUPLES else "streaming"
        decided = decide(work.lazy()).collect(engine=engine)  # materializes: one row per open partition
        if check_each:
            decided = _admissible(decided, work, constraints)  # type: ignore[arg-type]
        # per-partition lookups indexed by partition id (gathers, not joins)
        pids = decided[_PID].to_numpy()
        arrays = {}
        for name in ("dim", "pv", "take"):
            arr = np.full(next_id, -1, dtype=np.int64)
            arr[pids] = decided[name].to_numpy()
            arrays[name] = arr
        rhs = np.zeros(next_id, dtype=np.int64)
        rhs[np.sort(pids)] = next_id + np.arange(len(pids))
        arrays["rhs"] = rhs
        next_id += len(pids)
        rounds += bool(len(pids))
        looked = work.lazy().with_columns(
            pl.lit(pl.Series(arr)).gather(pl.col(_PID)).alias(f"__anon_{name}") for name, arr in arrays.items()
        )
        closed = looked.filter(pl.col("__anon_dim") < 0).select(_T, _OFF, _SIZE, _PID)
        cut = looked.filter(pl.col("__anon_dim") >= 0)
        sel, pv, size = chosen, pl.col("__anon_pv"), pl.col(_SIZE)
        if mode == "strict":
            cut = cut.with_columns(pl.when(sel <= pv).then(pl.col(_PID)).otherwise(pl.col("__anon_rhs")).alias(_PID))
        else:
            cut = cut.with_columns(sel.alias("__anon_sel")).sort(_PID, _T, _OFF)
            sel = pl.col("__anon_sel")
            eq_size = pl.when(sel == pv).then(size).otherwise(0)
            share = (pl.col("__anon_take") - (eq_size.cum_sum().over(_PID) - eq_size)).clip(0, None)
            left = pl.when(sel < pv).then(size).when(sel > pv).then(0).otherwise(pl.min_horizontal(share, size))
            cut = cut.with_columns(left.alias("__anon_left"))
            keep = [c for c in work.columns if c not in (_SIZE, _PID, _OFF)]
            lhs = cut.filter(pl.col("__anon_left") > 0).select(*keep, _OFF, pl.col("__anon_left").alias(_SIZE), _PID)
            rhs_part = cut.filter(pl.col("__anon_left") < size).select(
                *keep,
                (pl.col(_OFF) + pl.col("__anon_left")).alias(_OFF),
                (size - pl.col("__anon_left")).alias(_SIZE),
                pl.col("__anon_rhs").alias(_PID),
            )
            cut = pl.concat([lhs, rhs_part])
        closed_df, work = pl.collect_all([closed, cut.select(work.columns)], engine=engine)
        done.append(closed_df)
    segments = pl.concat(done).sort(_T, _OFF)
    return segments, rounds


def publish_modes(
    qids: Sequence[str],
    axis_list: Sequence[Axis],
    hierarchies: Mapping[str, Hierarchy],
    how: str | Mapping[str, str] = "auto",
) -> list[str]:
    """The publishing of each qid, ``"auto"`` resolved (see :func:`publish`).

    >>> publish_modes(["a", "b"], axes({"a": ["x"], "b": ["1", "2"]}, {}), {})
    ['set', 'range']
    """
    per_qid = dict(how) if isinstance(how, Mapping) else {q: how for q in qids}
    unknown = [q for q in per_qid if q not in qids]
    if unknown:
        raise InvalidParameterError(f"publish names {unknown}, which are not qids; the qids are {list(qids)}")
    modes = []
    for q, ax in zip(qids, axis_list):
        mode = per_qid.get(q, "auto")
        if mode not in _PUBLISH:
            raise InvalidParameterError(f"publish for qid {q!r} must be one of {list(_PUBLISH)}, got {mode!r}")
        h = hierarchies.get(q)
        if mode == "auto":
            mode = "hierarchy" if h is not None else ("range" if ax.numeric else "set")
        if mode == "hierarchy" and h is None:
            raise InvalidParameterError(
                f"publish 'hierarchy' for qid {q!r}, which has no hierarchy; use 'range' or 'set'"
            )
        modes.append(mode)
    return modes


def bound_sets(axis_list: Sequence[Axis], modes: Sequence[str]) -> list[int]:
    """The attributes whose labels need the class's values, not only its bounds: those published as sets, those
    published with a hierarchy whose axis is not the hierarchy's leaf order, and those published as ranges whose
    nulls' root an explicit order ranks between two values (a range may span it without the class holding it).

    >>> bound_sets(axes({"a": ["x"], "b": ["1", "2"]}, {}), ["set", "range"])
    [0]
    """
    return [
        j
        for j, (ax, mode) in enumerate(zip(axis_list, modes))
        if mode == "set"
        or (mode == "hierarchy" and not ax.hierarchy_order)
        or (mode == "range" and any(0 < r < len(ax.labels) - 1 for r in ax.rooted))
    ]


def class_bounds(segments: pl.DataFrame, coords: pl.DataFrame, sets: Sequence[int]) -> pl.DataFrame:
    """Per class ``__anon_pid`` (sorted): ``__anon_lo{j}``, ``__anon_hi{j}`` (its lowest and highest rank on
    each attribute j) and, for the attributes in `sets` (:func:`bound_sets`), ``__anon_set{j}`` (its ranks, sorted).

    >>> seg = pl.DataFrame({_T: [0, 1], _PID: [0, 0]})
    >>> class_bounds(seg, pl.DataFrame({_T: [0, 1], _SIZE: [1, 1], "__anon_x0": [2, 0]}), [0]).rows()
    [(0, 0, 2, [0, 2])]
    """
    m = sum(1 for c in coords.columns if c.startswith("__anon_x"))
    seg = segments.lazy().join(coords.lazy().drop(_SIZE), on=_T, how="left")
    aggs = []
    for j in range(m):
        x = pl.col(f"__anon_x{j}")
        aggs += [x.min().alias(f"__anon_lo{j}"), x.max().alias(f"__anon_hi{j}")]
        if j in sets:
            aggs.append(x.unique().sort().alias(f"__anon_set{j}"))
    return seg.group_by(_PID).agg(aggs).sort(_PID).collect()  # materializes: one row per class


def bounds_labels(
    bounds: pl.DataFrame,
    qids: Sequence[str],
    axis_list: Sequence[Axis],
    hierarchies: Mapping[str, Hierarchy],
    modes: Sequence[str],
) -> pl.DataFrame:
    """The published tuple of each class from its bounds (:func:`class_bounds`, however grouped: Polars or an
    engine's SQL rounds): one row per class ``__anon_pid``, one column per qid; see :func:`class_labels`."""
    out = [bounds[_PID]]
    for j, (q, ax, mode) in enumerate(zip(qids, axis_list, modes)):
        h = hierarchies.get(q)
        lo, hi = bounds[f"__anon_lo{j}"].to_numpy(), bounds[f"__anon_hi{j}"].to_numpy()
        if mode == "range" or (mode == "hierarchy" and ax.hierarchy_order):
            if mode == "hierarchy":  # leaves of a class lie in [lo, hi] of the depth-first order
                assert h is not None  # publish_modes checked it
                node_ids = h.ids_of(ax.labels)
                col = np.asarray(h.labels, dtype=object)[h.lca(node_ids[lo], node_ids[hi])].tolist()
            else:
                col = _range_labels(bounds, j, ax, h, lo, hi)
            out.append(pl.Series(q, col, dtype=pl.String))
            continue
        # flat, then joined per class: a replace_strict inside list.eval cost seconds per qid on 30,000 classes
        member = pl.col(f"__anon_set{j}")
        flat = bounds.select(_PID, member).explode(f"__anon_set{j}")
        named = flat.with_columns(member.replace_strict(list(range(len(ax.labels))), ax.labels, return_dtype=pl.String))
        if mode == "hierarchy":
            assert h is not None
            anc = class_ancestors(
                named.rename({f"__anon_set{j}": q}).lazy(), {q: h}, _PID
            ).collect()  # materializes: one row per class
            out.append(bounds.select(_PID).join(anc, on=_PID, how="left", maintain_order="left")[q].cast(pl.String))
            continue
        out.append(set_labels(named, _PID, f"__anon_set{j}").alias(q))
    return pl.DataFrame(out)


def _range_labels(
    bounds: pl.DataFrame, j: int, ax: Axis, h: Hierarchy | None, lo: np.ndarray, hi: np.ndarray
) -> list[str]:
    """The range labels of attribute `j`: ``[lo-hi]``, the value itself when the class holds one, and the root
    when the class holds a null published there (``null="suppress"``): a row of unknown value lies in no range.

    >>> ax = axes({"a": ["1", "2", "*"]}, {"a": Hierarchy.suppression(["1", "2"])})[0]
    >>> b = pl.DataFrame({_PID: [0, 1, 2]})
    >>> _range_labels(b, 0, ax, Hierarchy.suppression(["1", "2"]), np.array([0, 1, 0]), np.array([1, 2, 0]))
    ['[1-2]', '*', '1']
    """
    if not len(lo):
        return []
    labels = np.asarray(ax.labels, dtype=object)
    col = np.where(lo == hi, labels[lo], "[" + labels[lo].astype(str) + "-" + labels[hi].astype(str) + "]")
    if ax.rooted and h is not None:
        members = f"__anon_set{j}"
        if members in bounds.columns:  # bound_sets: an explicit order ranks the root between two values
            held = bounds[members].list.eval(pl.element().is_in(list(ax.rooted))).list.any().to_numpy()
        else:  # ranked first or last: a class holds it exactly when a bound is it
            held = np.isin(lo, ax.rooted) | np.isin(hi, ax.rooted)
        col = np.where(held, h.root, col)
    return col.tolist()


def class_labels(
    segments: pl.DataFrame,
    coords: pl.DataFrame,
    qids: Sequence[str],
    axis_list: Sequence[Axis],
    hierarchies: Mapping[str, Hierarchy],
    modes: Sequence[str],
) -> pl.DataFrame:
    """The published tuple of each class: one row per class ``__anon_pid``, one column per qid.

    `modes` (from :func:`publish_modes`), per qid: ``"hierarchy"`` the lowest common
    ancestor of the class's values; ``"range"`` ``[lo-hi]`` on the axis (the value
    itself when the class holds one, the root when it holds nulls ``null="suppress"``
    published there); ``"set"`` the class's values in axis order as
    ``{a,b}``. The option ``publish="auto"`` resolves to hierarchy when there is one,
    range for a numeric axis, set otherwise. Computed from the classes' bounds
    (:func:`class_bounds`, :func:`bounds_labels`), as the engines' SQL rounds do.
    """
    bounds = class_bounds(segments, coords, bound_sets(axis_list, modes))
    return bounds_labels(bounds, qids, axis_list, hierarchies, modes)


@dataclass(frozen=True)
class MondrianOptions:
    """Options of ``method="mondrian"`` (see the module docstring)."""

    mode: Literal["strict", "relaxed"] = "strict"
    order: str | Mapping[str, str | list[str]] | None = field(
        default=None, metadata={"expects": "a string or a dict qid -> order (a string or a list of the qid's values)"}
    )
    """See :func:`axes`."""
    publish: str | Mapping[str, str] = field(default="auto", metadata={"expects": "a string or a dict qid -> publish"})
    """See :func:`class_labels`."""


@register_method("mondrian", MondrianOptions, needs_hierarchies=False)
def run(task: Task, options: MondrianOptions) -> Plan:
    """Mondrian k-anonymization (see the module docstring)."""
    qids = list(task.qids)
    agg = task.aggregates  # a qid without a hierarchy holds no null (the road's check_data refuses them)
    present = {q: agg[q].unique().to_list() for q in qids}
    axis_list = axes(present, task.hierarchies, options.order, task.seed, task.orders)  # type: ignore[arg-type]
    coords = coordinates(agg, qids, axis_list)
    modes = publish_modes(qids, axis_list, task.hierarchies, options.publish)  # type: ignore[arg-type]
    count_dims = [j for j, p in enumerate(modes) if p == "set"]
    segments, rounds = partition(coords, task.k, options.mode, count_dims, task.constraints)
    labels = class_labels(segments, coords, qids, axis_list, task.hierarchies, modes)
    outs = [out_col(q) for q in qids]
    seg = segments.join(
        labels.select(_PID, *[pl.col(q).alias(o) for q, o in zip(qids, outs)]),
        on=_PID,
        how="left",
        maintain_order="left",
    )
    tuples = agg.select(qids).with_row_index(_T).with_columns(pl.col(_T).cast(pl.Int64))
    split = not seg[_T].is_unique().all()
    frame = tuples.join(seg, on=_T, maintain_order="left").select(
        *qids,
        *outs,
        pl.col(_SIZE).alias(SIZE),
        pl.lit(False).alias(SUPPRESSED),
        *([pl.col(_OFF).alias(OFFSET)] if split else []),
    )
    details = {"mode": options.mode, "rounds": rounds, "n_partitions": labels.height}
    return Plan(TupleMap(tuple(qids), frame), details)


PARTITION = _PID
"""The partition-id column (public for the engine planners, :mod:`polars_anon.engines.planners.mondrian`)."""
__all__ += ["PARTITION"]
