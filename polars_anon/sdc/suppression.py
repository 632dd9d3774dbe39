"""Local suppression of single key cells until the sample is k-anonymous, a missing value matching any
category (sdcMicro's ``localSuppression``; the frequency counts of :mod:`polars_anon.sdc.frequencies`
with ``missing="wildcard"``).

* ``method="heuristic"``: rounds over the distinct key patterns (never over records). In each round
  every pattern with ``fk < k`` gets one more missing cell: among its observed keys, the one whose
  suppression alone lifts the pattern's count to ``k`` and that is the first to suppress by
  ``importance``; if none does, the one that gathers the most records (ties: importance). When
  several unsafe patterns would merge into one group that reaches ``k`` on its own, the largest of
  them keeps its value (the others then match it). Every record of a pattern is treated alike, so
  the result is a tuple map joined back to the rows. The counts are one group-by and one join per
  key per round. Then, for up to 1,000 distinct patterns, a restore pass gives back each blanked
  cell (the most important key first) whose return keeps every count at ``k`` or more.
* ``method="exact"``: the fewest suppressed cells, by iterative deepening over sets of cells (all
  sets of 0, 1, 2, ... cells are tried until one makes the table k-anonymous). Exponential: it is
  refused when more than ``max_candidates`` sets would have to be tried (the heuristic's count is
  the upper bound), which in practice means tables of a few dozen cells.

``importance`` is sdcMicro's: one integer per key, 1 = suppress last, ``len(keys)`` = suppress
first; by default keys with more categories are suppressed first (sdcMicro's default).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_k, check_keys, is_integer
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.sdc.frequencies import check_alpha, hidden_keys, wildcard_counts

__all__ = [
    "SuppressionMethod",
    "SuppressionResult",
    "key_priority",
    "local_suppression",
    "suppress_patterns",
    "wildcard_fk",
]

SuppressionMethod = Literal["heuristic", "exact"]
_ID, _N = "__anon_pid", "n_pattern"
_RESTORE_MAX_PATTERNS = 1000  # the heuristic's restore pass (an n x n count per cell) runs up to this many patterns


@dataclass(frozen=True)
class SuppressionResult:
    """The suppressed table and what it cost.

    Attributes
    ----------
    frame
        The input with suppressed key cells set to null, rows and other columns unchanged (lazy).
    suppressed
        Newly suppressed cells per key (cells already missing are not counted).
    rounds
        Heuristic rounds run (0 for the exact method).
    optimal
        True when the count is proven minimal (the exact method).
    """

    frame: pl.LazyFrame
    suppressed: dict[str, int] = field(default_factory=dict)
    rounds: int = 0
    optimal: bool = False

    @property
    def total(self) -> int:
        """All newly suppressed cells."""
        return sum(self.suppressed.values())


def key_priority(lf: pl.LazyFrame | pl.DataFrame, keys: list[str], importance: Sequence[int] | None) -> list[int]:
    """Per key, a rank where higher means suppress first (from sdcMicro's ``importance``, 1 = suppress last; by
    default the key with more categories first).

    >>> key_priority(pl.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]}), ["a", "b"], None)
    [1, 0]
    >>> key_priority(pl.DataFrame({"a": [1], "b": [1]}), ["a", "b"], [2, 1])
    [5, 2]
    """
    if importance is None:
        counts = as_lazy(lf).select(pl.col(keys).n_unique()).collect().row(0)  # materializes: one row
        order = sorted(range(len(keys)), key=lambda j: (counts[j], j))  # sdcMicro: most categories, then last key
        rank = [0] * len(keys)
        for r, j in enumerate(order):
            rank[j] = r
        return rank
    if not isinstance(importance, (list, tuple)):
        raise InvalidParameterError(f"importance must be a list of one integer per key, got {importance!r}")
    imp = list(importance)
    if len(imp) != len(keys) or not all(is_integer(i) for i in imp):
        raise InvalidParameterError(f"importance must hold one integer per key ({len(keys)} keys), got {imp!r}")
    if any(i < 1 or i > len(keys) for i in imp):
        raise InvalidParameterError(
            f"importance values must lie between 1 and {len(keys)} (the number of keys), got {imp!r}"
        )
    return [i * len(keys) + (len(keys) - 1 - j) for j, i in enumerate(imp)]  # ties: the earlier key first


def wildcard_fk(codes: np.ndarray, counts: np.ndarray | None = None, alpha: float = 1.0) -> np.ndarray:
    """Wildcard ``fk`` of each row of a small integer code matrix (-1 = missing), all pairs at once.

    The same counts as :func:`polars_anon.sdc.frequencies.frequencies` with ``missing="wildcard"``,
    for tables small enough for an ``n x n`` matrix (the exact method and tests).

    >>> wildcard_fk(np.array([[0, 1], [0, -1], [1, 1]]))
    array([2., 2., 1.])
    """
    x = np.asarray(codes)
    if x.ndim != 2:
        raise InvalidParameterError(
            f"codes must be a matrix (one row per record, one column per key), got {x.ndim} dimensions"
        )
    n, m = x.shape
    c = np.ones(n) if counts is None else np.asarray(counts, dtype=np.float64)
    if c.shape != (n,):
        raise InvalidParameterError(f"counts must hold one count per row of codes ({n}), got shape {c.shape}")
    alpha = check_alpha(alpha)
    ones, partial = _sums(_factors(x, x, alpha), c)
    return _fk(ones, partial, x, c, alpha)


def _sums(factor: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per record, the counts of the records that count 1 toward it and of those that count `alpha` (the factors of
    :func:`_factors`): sums of whole counts, so exact in any order."""
    ones = np.where(factor == 1.0, counts, 0.0).sum(axis=1)
    partial = np.where(_is_partial(factor), counts, 0.0).sum(axis=1)
    return ones, partial


def _fk(ones: np.ndarray, partial: np.ndarray, x: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """Wildcard ``fk`` from :func:`_sums` (one rounding: the same bits whatever the order the pairs were added in);
    a record missing every key matches all."""
    fk = ones + alpha * partial
    fk[(x < 0).all(axis=1)] = counts.sum()
    return fk


def _factors(a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """How much each record of code matrix `b` (-1 = missing) counts toward each record of `a` (rows: `a`, columns:
    `b`): 1 for the same pattern; 0 for an all-missing `b` record toward a complete `a` one (two or more keys);
    else 1 (`b` complete) or `alpha` where they agree on every key both observe, 0 where they do not. The one place
    :func:`wildcard_fk` and the restore pass read a pair's factor from."""
    miss_a, miss_b = np.asarray(a < 0), np.asarray(b < 0)
    compat = np.all((a[:, None, :] == b[None, :, :]) | miss_a[:, None, :] | miss_b[None, :, :], axis=2)
    same = np.all(a[:, None, :] == b[None, :, :], axis=2)
    complete_a, complete_b = ~np.asarray(miss_a.any(axis=1)), ~np.asarray(miss_b.any(axis=1))
    factor = np.where(complete_b[None, :], 1.0, alpha) * compat
    if a.shape[1] > 1:
        factor[np.ix_(complete_a, miss_b.all(axis=1))] = 0.0
    factor[same] = 1.0
    return factor


def _round(pats: pl.DataFrame, keys: list[str], k: int, prio: list[int], alpha: float) -> pl.DataFrame | None:
    """One heuristic round over the current distinct patterns; None when all are safe."""
    cur = pats.group_by(keys).agg(pl.col(_N).sum()).sort(keys, nulls_last=True)
    agg = cur.with_columns(pl.col(_N).alias("__anon_W"), pl.col(_N).alias("fk"), pl.col(_N).alias("Fk"))
    fk = wildcard_counts(agg, keys, alpha).select(*keys, _N, "fk")
    if fk["fk"].min() >= k:  # type: ignore[operator]
        return None
    unsafe = fk.filter(pl.col("fk") < k)
    scores = []
    for j, v in enumerate(keys):
        rest = [c for c in keys if c != v]
        if rest:
            sums = fk.group_by(rest).agg(pl.col(_N).sum().alias(f"__anon_c{j}"))
            unsafe = unsafe.join(sums, on=rest, how="left", nulls_equal=True, maintain_order="left")
        else:
            unsafe = unsafe.with_columns(pl.lit(fk[_N].sum()).alias(f"__anon_c{j}"))
        cnt = pl.col(f"__anon_c{j}")
        score = (
            pl.when(pl.col(v).is_null())
            .then(pl.lit(-1.0))
            .when(cnt >= k)
            .then(pl.lit(1e15 + prio[j]))
            .otherwise(cnt * (len(keys) ** 2 + 1) + prio[j])
        )
        scores.append(score.cast(pl.Float64))
    unsafe = unsafe.with_columns(pl.concat_list(scores).list.arg_max().alias("__anon_v"))
    unsafe = unsafe.with_columns(pl.lit(False).alias("__anon_keep"))
    parts = []
    for j, v in enumerate(keys):  # the largest unsafe pattern of a group that reaches k alone keeps its value
        chosen = unsafe.filter(pl.col("__anon_v") == j)
        rest = [c for c in keys if c != v]
        if chosen.height and rest:
            chosen = chosen.with_row_index("__anon_r").with_columns(
                pl.col(_N).sum().over(rest).alias("__anon_gs"),
                pl.len().over(rest).alias("__anon_gn"),
                pl.col("__anon_r")
                .sort_by([_N, "__anon_r"], descending=[True, False])
                .first()
                .over(rest)
                .alias("__anon_top"),
            )
            keep = (pl.col("__anon_gn") > 1) & (pl.col("__anon_gs") >= k) & (pl.col("__anon_r") == pl.col("__anon_top"))
            chosen = chosen.with_columns(keep.alias("__anon_keep")).select(unsafe.columns)
        parts.append(chosen)
    decided = pl.concat(parts).filter(~pl.col("__anon_keep")).select(*keys, "__anon_v")
    out = pats.join(decided, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return out.with_columns(
        [pl.when(pl.col("__anon_v") == j).then(None).otherwise(pl.col(v)).alias(v) for j, v in enumerate(keys)]
    ).drop("__anon_v")


def _exact_codes(x: np.ndarray, k: int, alpha: float, upper: int) -> np.ndarray | None:
    """Fewest cells (fewer than `upper`) to blank in code matrix x so that every wildcard fk >= k; None if none."""
    cells = [(i, j) for i in range(x.shape[0]) for j in range(x.shape[1]) if x[i, j] >= 0]
    for c in range(upper):
        for combo in itertools.combinations(cells, c):
            y = x.copy()
            for i, j in combo:
                y[i, j] = -1
            if wildcard_fk(y, alpha=alpha).min() >= k:
                return y
    return None


def local_suppression(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    k: int = 2,
    importance: Sequence[int] | None = None,
    method: SuppressionMethod = "heuristic",
    alpha: float = 1.0,
    max_candidates: int = 2_000_000,
) -> SuppressionResult:
    """Suppress single key cells (set them missing) until every record's wildcard ``fk`` is at least ``k``.

    Keys are counted as Polars groups them, and a kept cell is published as its pattern's value: values Polars takes
    as one (a float key's ``-0.0`` and ``0.0``) are published as one, ``0.0``, so that no record stands apart by the
    bits of its value.

    Parameters
    ----------
    data
        The sample (LazyFrame or DataFrame).
    keys
        The categorical key variables.
    k
        The k of k-anonymity, counted with missing values as wildcards.
    importance
        One integer per key in 1..len(keys): 1 = suppress last (sdcMicro's convention). Default:
        keys with more categories are suppressed first.
    method
        ``"heuristic"`` (any size) or ``"exact"`` (fewest cells; small tables only).
    alpha
        Weight of records with missing keys in the counts (sdcMicro's ``alpha``).
    max_candidates
        The exact method's bound on the number of cell sets it may try; beyond it the call is refused.

    Returns
    -------
    SuppressionResult
        The table and the suppressed cells per key.

    Raises
    ------
    InfeasibleError
        ``k`` exceeds the row count, or the exact search would exceed ``max_candidates``.

    Examples
    --------
    >>> lf = pl.LazyFrame({"sex": ["f", "f", "m", "m", "f"], "age": [30, 30, 40, 40, 50]})
    >>> res = local_suppression(lf, ["sex", "age"], k=2)
    >>> res.frame.collect()["age"].to_list(), res.suppressed
    ([30, 30, 40, 40, None], {'sex': 0, 'age': 1})
    """
    lf = as_lazy(data)
    keys = check_keys(lf, keys)
    check_choice("method", method, get_args(SuppressionMethod))
    check_alpha(alpha)
    if not is_integer(max_candidates) or max_candidates < 1:
        raise InvalidParameterError(f"max_candidates must be an integer >= 1, got {max_candidates!r}")
    prio = key_priority(lf, keys, importance)
    hidden = hidden_keys(keys)  # the patterns' keys out of the way of their own columns (a key named fk, n, ...)
    pats = (
        lf.select(pl.col(k).alias(h) for k, h in zip(keys, hidden, strict=True))
        .group_by(hidden)
        .agg(pl.len().cast(pl.Float64).alias(_N))
        .sort(hidden, nulls_last=True)
        .with_row_index(_ID)
        .collect()  # materializes: one row per distinct key pattern
    )
    check_k(k, int(pats[_N].sum()))
    current, rounds = suppress_patterns(pats, hidden, k, prio, float(alpha))
    frame, suppressed = _publish(lf, pats, current, keys)
    if method == "heuristic":
        return SuppressionResult(frame, suppressed, rounds, False)
    upper = sum(suppressed.values())
    rows = lf.collect()  # materializes: the (small) table, for the exact search
    codes = _codes(rows, keys)
    cells = int((codes >= 0).sum())
    if sum(math.comb(cells, c) for c in range(upper)) > max_candidates:
        raise InfeasibleError(
            f"exact local suppression would try more than max_candidates={max_candidates} cell sets "
            f"({cells} key cells, heuristic bound {upper} cells); use method='heuristic' or raise max_candidates"
        )
    best = _exact_codes(codes, k, float(alpha), upper)
    if best is None:  # nothing below the heuristic's count: it is optimal
        return SuppressionResult(frame, suppressed, rounds, True)
    blank = (best < 0) & (codes >= 0)
    out = rows.with_columns(
        [pl.when(pl.Series(blank[:, j])).then(None).otherwise(pl.col(v)).alias(v) for j, v in enumerate(keys)]
    )
    return SuppressionResult(out.lazy(), {v: int(blank[:, j].sum()) for j, v in enumerate(keys)}, 0, True)


def suppress_patterns(
    pats: pl.DataFrame, keys: list[str], k: int, priority: Sequence[int], alpha: float = 1.0
) -> tuple[pl.DataFrame, int]:
    """The heuristic on distinct key patterns: returns the patterns with their suppressed cells set to null (same
    rows, same order, other columns kept) and the number of rounds.

    `pats` holds the keys and ``n_pattern`` (records per pattern, Float64), one row per distinct pattern;
    `priority` is :func:`key_priority`'s. The caller checks ``k`` against the record count.

    >>> pats = pl.DataFrame({"sex": ["f", "m", "f"], "age": [30, 40, 50], "n_pattern": [2.0, 2.0, 1.0]})
    >>> out, rounds = suppress_patterns(pats, ["sex", "age"], 2, [0, 1])
    >>> out["age"].to_list(), rounds
    ([30, 40, None], 1)
    """
    rounds, current = 0, pats
    while (nxt := _round(current, keys, k, list(priority), float(alpha))) is not None:
        current, rounds = nxt, rounds + 1
        if rounds > len(keys) * pats.height + 1:  # each round blanks a cell of every unsafe pattern
            raise RuntimeError(f"local suppression did not converge after {rounds} rounds (a bug; please report)")
    if pats.height <= _RESTORE_MAX_PATTERNS:
        current = _restore(pats, current, keys, k, list(priority), float(alpha))
    return current, rounds


def _restore(
    pats: pl.DataFrame, current: pl.DataFrame, keys: list[str], k: int, prio: list[int], alpha: float
) -> pl.DataFrame:
    """Give back blanked cells one at a time (the key suppressed last first) while every fk stays >= k."""
    codes = _codes(pats, keys)
    blank = np.column_stack([current[v].is_null().to_numpy() for v in keys]) & (codes >= 0)
    counts = pats[_N].to_numpy()
    order = sorted(zip(*np.nonzero(blank), strict=True), key=lambda c: (prio[c[1]], -counts[c[0]]))
    shown = np.where(blank, -1, codes)
    factor = _factors(shown, shown, alpha)
    ones, partial = _sums(factor, counts)
    for i, j in order:
        before = shown[i, j], factor[i].copy(), factor[:, i].copy(), ones.copy(), partial.copy()
        shown[i, j] = codes[i, j]
        _refactor(factor, ones, partial, shown, counts, i, alpha)
        if _fk(ones, partial, shown, counts, alpha).min() < k:
            shown[i, j], factor[i], factor[:, i], ones, partial = before
            continue
        blank[i, j] = False
    return pats.with_columns(
        [pl.when(pl.Series(blank[:, j])).then(None).otherwise(pl.col(v)).alias(v) for j, v in enumerate(keys)]
    )


def _refactor(
    factor: np.ndarray,
    ones: np.ndarray,
    partial: np.ndarray,
    shown: np.ndarray,
    counts: np.ndarray,
    i: int,
    alpha: float,
) -> None:
    """After record `i` of `shown` changed, update in place row and column `i` of its pair factors (no other pair
    involves it) and the :func:`_sums` they give, so that both equal a recount from scratch (whole counts: exact)."""
    old = factor[:, i].copy()
    factor[i] = _factors(shown[i : i + 1], shown, alpha)[0]
    factor[:, i] = _factors(shown, shown[i : i + 1], alpha)[:, 0]
    new = factor[:, i]
    ones += ((new == 1.0).astype(np.float64) - (old == 1.0)) * counts[i]
    partial += (_is_partial(new).astype(np.float64) - _is_partial(old)) * counts[i]
    row_ones, row_partial = _sums(factor[i : i + 1], counts)
    ones[i], partial[i] = row_ones[0], row_partial[0]


def _is_partial(factor: np.ndarray) -> np.ndarray:
    """Where a pair factor is `alpha` (neither 1 nor 0)."""
    return (factor != 1.0) & (factor != 0.0)


def _publish(
    lf: pl.LazyFrame, pats: pl.DataFrame, current: pl.DataFrame, keys: list[str]
) -> tuple[pl.LazyFrame, dict[str, int]]:
    """Join the tuple map (original pattern -> suppressed pattern) back to the rows; count new blanks. `pats` and
    `current` name the keys by :func:`~polars_anon.sdc.frequencies.hidden_keys`."""
    hidden = hidden_keys(keys)
    new = {h: f"__anon_new{j}" for j, h in enumerate(hidden)}
    mapping = pats.select(_ID, _N, *hidden).join(
        current.select(_ID, *[pl.col(h).alias(new[h]) for h in hidden]), on=_ID
    )
    suppressed = {
        v: int(mapping.filter(pl.col(new[h]).is_null() & pl.col(h).is_not_null())[_N].sum())
        for v, h in zip(keys, hidden, strict=True)
    }
    out = lf.join(
        mapping.drop(_ID, _N).lazy(), left_on=keys, right_on=hidden, how="left", nulls_equal=True, maintain_order="left"
    )
    out = out.with_columns([pl.col(new[h]).alias(v) for v, h in zip(keys, hidden, strict=True)]).drop(new.values())
    return out, suppressed


def _codes(rows: pl.DataFrame, keys: list[str]) -> np.ndarray:
    """Integer codes per key (-1 = missing), for the exact search."""
    codes = np.full((rows.height, len(keys)), -1, dtype=np.int64)
    for j, v in enumerate(keys):
        values = rows[v].to_list()
        labels = {val: i for i, val in enumerate(dict.fromkeys(x for x in values if x is not None))}
        codes[:, j] = [-1 if x is None else labels[x] for x in values]
    return codes
