"""SUDA2: minimal sample uniques and the SUDA and DIS-SUDA scores (Elliot et al. 2002; Manning, Haglin and
Keane 2008; sdcMicro's ``suda2``).

A *minimal sample unique* (MSU) of a record is a set of key variables on which the record is unique in
the sample while it is unique on no proper subset. Only records unique on all keys can have one. With
``M`` keys, each MSU of size ``k`` adds ``(M - k)!`` to the record's SUDA score (sdcMicro's
``original_scores=TRUE``, Elliot's weights); a key's contribution to a record is the share of the score
from MSUs that contain it. The DIS-SUDA score calibrates scores to a probability of a correct match
(sdcMicro's formula, with ``dis_fraction`` the sampling fraction):
``U`` records unique on all keys and ``P`` records in pairs, ``Dis = U f / (U f + P (1 - f))``,
``Q = 1 + (8 - M) / 20``, ``DIS_i = 1 / (1 + (U / Dis - U) / (score_i^Q * sum_j score_j^-Q))``.

Computation: each key is coded as a small integer (its value minus its minimum for an integer key of a small range,
its dense rank otherwise; 0 for a missing value) and the codes are packed into one integer per record. One pass reads
the keys' ranges, one group-by counts the records per packed code (the distinct key patterns), numpy counts the
records of each pattern on every subset of keys (``2^M - 1`` of them, a ``bincount`` of the patterns' packed subset
codes each) and finds the MSUs, and one gather through a lookup array (a join on the code when the code space is
large) puts the scores back on the rows, in their order (a key coded by its dense rank is ranked in memory, one
column at a time; integer keys of a small range stream). The bound is on ``M``: at most ``max_keys`` (16 by default;
2^16 subset counts over the distinct patterns). A missing value is never part of an MSU (sdcMicro codes it as -999
and its SUDA2 skips that item): a record's MSUs use the keys it observes, and other records compare with it as with a
category of its own (``missing="category"`` makes it a category in MSUs too). Unlike sdcMicro we add no dummy keys
when ``M <= 2``, so scores for one or two keys use ``M`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_keys, check_number, is_integer, refuse_built_names
from polars_anon.errors import InvalidParameterError
from polars_anon.metrics.sums import sorted_sum

__all__ = ["SudaMissing", "Suda2Result", "suda2", "suda2_patterns"]

SudaMissing = Literal["ignore", "category"]

_N = "__anon_n"
_C = "__anon_suda_code"
_MAX_RANGE = 1 << 16  # an integer key of a wider range is coded by dense ranks
_MAX_LOOKUP = 1 << 22  # packed codes up to this many index a lookup array (4 bytes each); beyond, a join
_MAX_BINCOUNT = 1 << 22  # subsets whose code space is smaller are counted by bincount, others by np.unique


@dataclass(frozen=True)
class _Scores:
    score: np.ndarray
    dis: np.ndarray
    share: np.ndarray
    contributions: dict[str, float]
    msu_counts: dict[int, int]


@dataclass(frozen=True)
class Suda2Result:
    """SUDA2 per record and per key.

    Attributes
    ----------
    frame
        The input with ``suda_score``, ``dis_suda_score`` and ``{key}_contribution`` (the share of the
        record's score from MSUs containing the key; 0 for a score of 0), rows in their order.
    contributions
        Per key, its contribution to the total score in percent (sdcMicro's ``attribute_contributions``).
    msu_counts
        Number of MSUs of each size 1..M over the records (each record counted).
    """

    frame: pl.LazyFrame
    contributions: dict[str, float]
    msu_counts: dict[int, int]


def suda2(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    dis_fraction: float = 0.01,
    max_keys: int = 16,
    missing: SudaMissing = "ignore",
) -> Suda2Result:
    """Minimal sample uniques per record, SUDA and DIS-SUDA scores, and key contributions.

    Parameters
    ----------
    keys
        The key variables (at most ``max_keys``).
    dis_fraction
        The sampling fraction used by the DIS score (sdcMicro's ``DisFraction``), in (0, 1].
    max_keys
        Bound on the number of keys (the method counts the patterns on each of the ``2^M - 1`` subsets).
    missing
        ``"ignore"`` (sdcMicro): a missing value is never part of an MSU (a record's MSUs use only the keys it
        observes; others compare with it as with a category of its own); ``"category"``: a missing value is one more
        category, in MSUs too.

    Examples
    --------
    sdcMicro's suda2 contribution example: a = (2, 1, 1), b = (0, 3, 0), c = (0, 6, 0).

    >>> res = suda2(pl.LazyFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]}), ["a", "b", "c"])
    >>> res.frame.collect()["suda_score"].to_list(), res.contributions
    ([2.0, 4.0, 2.0], {'a': 50.0, 'b': 37.5, 'c': 37.5})
    """
    lf = as_lazy(data)
    keys = check_keys(lf, keys)
    _check(keys, dis_fraction, max_keys)
    added = ["suda_score", "dis_suda_score", *(f"{v}_contribution" for v in keys)]
    refuse_built_names(lf.collect_schema().names(), added, "suda2: column", "suda2 adds to the table", helpers=False)
    check_choice("missing", missing, get_args(SudaMissing))
    fast = _suda2_coded(lf, keys, dis_fraction, missing)
    if fast is not None:
        return fast
    pats = (
        lf.group_by(keys).agg(pl.len().alias(_N)).sort(keys, nulls_last=True).collect()
    )  # materializes: one row per distinct key pattern
    res, per_pattern = suda2_patterns(pats, keys, _N, dis_fraction, max_keys, missing)
    frame = lf.join(per_pattern.drop(_N).lazy(), on=keys, how="left", nulls_equal=True, maintain_order="left")
    return Suda2Result(frame, res.contributions, res.msu_counts)


def _suda2_coded(lf: pl.LazyFrame, keys: list[str], dis_fraction: float, missing: SudaMissing) -> Suda2Result | None:
    """SUDA2 on one packed integer code per record: one pass for each key's range, one group-by on the code, numpy
    on the distinct patterns, and one gather of the scores back to the rows. ``None`` (the caller falls back to the
    group-by on the keys) when a key is neither an integer of a small range nor orderable, or the codes overflow."""
    coded = _packed_code(lf, keys)
    if coded is None:
        return None
    code_expr, cards, space = coded
    pats = lf.select(code_expr.alias(_C)).group_by(_C).agg(pl.len().alias(_N)).collect()
    packed = pats[_C].to_numpy()
    out = _scores(_unpack(packed, cards), cards, pats[_N].to_numpy(), dis_fraction, missing, keys)
    frame = _scores_on_rows(lf, code_expr, packed, space, out, keys)
    return Suda2Result(frame, out.contributions, out.msu_counts)


def _packed_code(lf: pl.LazyFrame, keys: list[str]) -> tuple[pl.Expr, list[int], int] | None:
    """Each record's keys as one Int64 (the expression, each key's number of codes and their product), from one pass
    over the keys' ranges; ``None`` when a key cannot be ranked or the codes overflow."""
    schema = lf.collect_schema()
    ranked = [v for v in keys if not (schema[v].is_integer())]
    stats = _range_stats(keys, ranked)
    try:
        row = lf.select(stats).collect().row(0, named=True)
    except pl.exceptions.PolarsError:  # a key that cannot be ranked (no order on its type)
        return None
    if row[_N] == 0:
        raise InvalidParameterError("the table has no rows; SUDA scores are undefined")
    parts: list[pl.Expr] = []
    cards: list[int] = []
    space = 1
    for v in keys:
        code, card = _key_code(lf, v, row, v in ranked)
        parts.append(code * space)
        cards.append(card)
        space *= card
        if space >= 1 << 62:
            return None
    return pl.sum_horizontal(parts), cards, space


def _range_stats(keys: list[str], ranked: list[str]) -> list[pl.Expr]:
    """The range pass's columns: the row count, each ranked key's number of ranks, each integer key's min and max."""
    stats: list[pl.Expr] = [pl.len().alias(_N)]
    for v in keys:
        if v in ranked:
            stats.append(pl.col(v).rank("dense").max().cast(pl.Int64).alias(f"{v}\0hi"))
        else:
            stats += [
                pl.col(v).min().cast(pl.Int64).alias(f"{v}\0lo"),
                pl.col(v).max().cast(pl.Int64).alias(f"{v}\0hi"),
            ]
    return stats


def _key_code(lf: pl.LazyFrame, v: str, row: dict[str, Any], ranked: bool) -> tuple[pl.Expr, int]:
    """Key `v`'s code (0 for a missing value) and its number of codes, from its range in `row`: the value minus its
    minimum for an integer of a small range, else its dense rank."""
    hi = row[f"{v}\0hi"]
    if hi is None:  # no observed value: every record is missing here
        return pl.col(v).is_null().cast(pl.Int64) - 1, 1  # 0 on every row (a column, not a literal)
    if ranked:
        return pl.col(v).rank("dense").cast(pl.Int64).fill_null(0), hi + 1
    lo = row[f"{v}\0lo"]
    if hi - lo >= _MAX_RANGE:  # a wide range: dense ranks instead (one more pass for their number)
        code = pl.col(v).rank("dense").cast(pl.Int64).fill_null(0)
        return code, int(lf.select(pl.col(v).rank("dense").max()).collect().item()) + 1
    return (pl.col(v).cast(pl.Int64) - (lo - 1)).fill_null(0), hi - lo + 2


def _unpack(packed: np.ndarray, cards: list[int]) -> np.ndarray:
    """The packed codes back as one column of codes per key (patterns x keys)."""
    codes = np.empty((packed.size, len(cards)), dtype=np.int64)
    rest = packed
    for j, card in enumerate(cards):
        rest, codes[:, j] = np.divmod(rest, card)
    return codes


def _scores_on_rows(
    lf: pl.LazyFrame, code_expr: pl.Expr, packed: np.ndarray, space: int, out: _Scores, keys: list[str]
) -> pl.LazyFrame:
    """The patterns' scores gathered back onto the rows, in their order: through a lookup array indexed by the code,
    or a join on it when the code space is large."""
    # the rows scoring above 0 (only full-unique patterns can) index a small table; row 0 holds the zeros
    hit = np.flatnonzero(out.score > 0)
    columns = {"suda_score": out.score, "dis_suda_score": out.dis}
    columns |= {f"{v}_contribution": out.share[:, j] for j, v in enumerate(keys)}
    small = {name: pl.Series(name, np.concatenate([[0.0], col[hit]])) for name, col in columns.items()}
    if space <= _MAX_LOOKUP:
        lookup = np.zeros(space, dtype=np.int32)
        lookup[packed[hit]] = np.arange(1, hit.size + 1, dtype=np.int32)
        index = pl.lit(pl.Series(lookup)).gather(pl.col(_C))
        frame = lf.with_columns(code_expr.alias(_C)).with_columns(index.alias(_C))
    else:
        table = pl.LazyFrame({_N: packed[hit], _C: np.arange(1, hit.size + 1, dtype=np.int32)})
        frame = lf.with_columns(code_expr.alias(_N)).join(table, on=_N, how="left", maintain_order="left")
        frame = frame.drop(_N).with_columns(pl.col(_C).fill_null(0))
    return frame.with_columns(pl.lit(col).gather(pl.col(_C)).alias(name) for name, col in small.items()).drop(_C)


def _check(keys: list[str], dis_fraction: float, max_keys: int) -> None:
    if not is_integer(max_keys) or max_keys < 1:
        raise InvalidParameterError(f"max_keys must be an integer >= 1, got {max_keys!r}")
    if len(keys) > max_keys:
        raise InvalidParameterError(
            f"suda2 takes at most max_keys={max_keys} keys (it counts on each of the 2^M - 1 subsets), "
            f"got {len(keys)}: {keys}"
        )
    check_dis_fraction(dis_fraction)


def check_dis_fraction(dis_fraction: object, name: str = "dis_fraction") -> float:
    """SUDA2's sampling fraction for the DIS score: a number in (0, 1]."""
    return check_number(name, dis_fraction, 0.0, 1.0, low_open=True)


def suda2_patterns(
    patterns: pl.DataFrame,
    keys: Sequence[str],
    count: str,
    dis_fraction: float = 0.01,
    max_keys: int = 16,
    missing: SudaMissing = "ignore",
) -> tuple[Suda2Result, pl.DataFrame]:
    """SUDA2 on distinct key patterns: `patterns` holds the keys and `count` (records per pattern), one row per
    distinct pattern (from any engine's group-by). Returns the result (its ``frame`` one row per pattern) and the
    patterns, in their order, with ``suda_score``, ``dis_suda_score`` and ``{key}_contribution``.

    >>> pats = pl.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0], "n": [1, 1, 1]})
    >>> res, scores = suda2_patterns(pats, ["a", "b", "c"], "n")
    >>> scores["suda_score"].to_list(), res.contributions
    ([2.0, 4.0, 2.0], {'a': 50.0, 'b': 37.5, 'c': 37.5})
    """
    keys = list(keys)
    _check(keys, dis_fraction, max_keys)
    check_choice("missing", missing, get_args(SudaMissing))
    pats = patterns.select(*keys, pl.col(count).alias(_N))
    if pats.height == 0:
        raise InvalidParameterError("the table has no rows; SUDA scores are undefined")
    codes = np.empty((pats.height, len(keys)), dtype=np.int64)
    cards = []
    for j, v in enumerate(keys):  # dense codes 1..c of each key's values, 0 for missing
        codes[:, j] = _dense_codes(pats[v])
        cards.append(int(codes[:, j].max()) + 1)
    out = _scores(codes, cards, pats[_N].to_numpy(), dis_fraction, missing, keys)
    per_pattern = pats.with_columns(
        pl.Series("suda_score", out.score),
        pl.Series("dis_suda_score", out.dis),
        *[pl.Series(f"{v}_contribution", out.share[:, j]) for j, v in enumerate(keys)],
    )
    per_pattern = per_pattern.rename({_N: count})
    return Suda2Result(per_pattern.lazy(), out.contributions, out.msu_counts), per_pattern


def _dense_codes(values: pl.Series) -> np.ndarray:
    """Codes 1..c of the distinct values (in their order where they have one), 0 for a missing value."""
    try:
        ranks = values.rank("dense")
    except pl.exceptions.PolarsError:  # no order on the type: codes by first appearance
        firsts = values.to_frame("v").with_row_index("i").group_by("v", maintain_order=True).agg(pl.col("i").first())
        ranks = values.to_frame("v").join(
            firsts.with_row_index("r", offset=1).select("v", "r"),
            on="v",
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )["r"]
    return ranks.cast(pl.Int64).set(values.is_null(), 0).to_numpy()


def _scores(
    codes: np.ndarray,
    cards: list[int],
    n: np.ndarray,
    dis_fraction: float,
    missing: SudaMissing,
    keys: list[str],
) -> _Scores:
    """SUDA2 on distinct patterns: `codes` (patterns x keys) holds each key's code in ``0..cards[j] - 1`` (0 for a
    missing value), `n` the records per pattern. Per pattern: score, DIS score and each key's share of the score."""
    m = len(keys)
    uniq_rows = np.flatnonzero(n == 1)
    unique = _unique_on_subsets(codes, cards, n, uniq_rows)
    if missing == "ignore":  # sdcMicro's SUDA2 skips a missing value's item: no MSU holds a key the record lacks
        _drop_unobserved(unique, codes, uniq_rows)
    score, contrib, msu_counts = _msu_scores(unique, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(score[:, None] > 0, contrib / score[:, None], 0.0)
    contributions = _contributions(score, share, keys)
    dis = _dis_scores(score, n, m, dis_fraction)
    full_score = np.zeros(n.size)
    full_dis = np.zeros(n.size)
    full_share = np.zeros((n.size, m))
    full_score[uniq_rows], full_dis[uniq_rows], full_share[uniq_rows] = score, dis, share
    return _Scores(full_score, full_dis, full_share, contributions, dict(msu_counts))


def _members(mask: int, m: int) -> list[int]:
    """The keys (column numbers) in the subset `mask` of `m` keys."""
    return [j for j in range(m) if mask >> j & 1]


def _unique_on_subsets(codes: np.ndarray, cards: list[int], n: np.ndarray, uniq_rows: np.ndarray) -> np.ndarray:
    """unique[S] per full-unique pattern (`uniq_rows`), for every non-empty subset S of keys (bitmask): whether the
    records sharing its S-values number 1."""
    m = codes.shape[1]
    weights_n = n.astype(np.float64)
    unique = np.zeros((1 << m, uniq_rows.size), dtype=bool)
    for mask in range(1, 1 << m):
        sub = np.zeros(codes.shape[0], dtype=np.int64)
        space = 1
        for j in _members(mask, m):
            sub += codes[:, j] * space
            space *= cards[j]
        if space <= _MAX_BINCOUNT:
            counts = np.bincount(sub, weights=weights_n, minlength=space)[sub[uniq_rows]]
        else:
            _, inverse = np.unique(sub, return_inverse=True)
            counts = np.bincount(inverse, weights=weights_n)[inverse[uniq_rows]]
        unique[mask] = counts == 1
    return unique


def _drop_unobserved(unique: np.ndarray, codes: np.ndarray, uniq_rows: np.ndarray) -> None:
    """Clear (in place) every subset holding a key a full-unique pattern lacks (code 0): it is no MSU of it."""
    m = codes.shape[1]
    observed = np.zeros(uniq_rows.size, dtype=np.int64)
    for j in range(m):
        observed |= np.where(codes[uniq_rows, j] == 0, 0, 1 << j)
    for mask in range(1, 1 << m):
        unique[mask] &= (mask & ~observed) == 0


def _msu_scores(unique: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """Per full-unique pattern, its SUDA score and each key's part of it (an MSU of size k, a unique subset none of
    whose subsets one key smaller is unique, adds (m - k)!), and the number of MSUs of each size."""
    weights = [float(math.factorial(m - k)) for k in range(m + 1)]
    score = np.zeros(unique.shape[1])
    contrib = np.zeros((unique.shape[1], m))
    msu_counts = dict.fromkeys(range(1, m + 1), 0)
    for mask in range(1, 1 << m):
        members = _members(mask, m)
        is_msu = unique[mask].copy()
        for j in members:
            sub = mask & ~(1 << j)
            if sub:
                is_msu &= ~unique[sub]
        if not is_msu.any():
            continue
        k = len(members)
        msu_counts[k] += int(is_msu.sum())
        score[is_msu] += weights[k]
        for j in members:
            contrib[is_msu, j] += weights[k]
    return score, contrib, msu_counts


def _contributions(score: np.ndarray, share: np.ndarray, keys: list[str]) -> dict[str, float]:
    """Each key's contribution to the total score, in percent."""
    # sums of the values sorted (sorted_sum): the patterns come in a group-by's order, which varies between runs, and
    # a float sum in another order differed in its last digits (the report's bytes with them); math.fsum over Python
    # floats cost 0.74 CPU s for 1.7M patterns of 5 keys
    total = sorted_sum(score)
    return {v: (100.0 * sorted_sum(share[:, j] * score) / total if total else 0.0) for j, v in enumerate(keys)}


def _dis_scores(score: np.ndarray, n: np.ndarray, m: int, dis_fraction: float) -> np.ndarray:
    """The DIS-SUDA score of each full-unique pattern (sdcMicro's formula; the module docstring gives it)."""
    n_unique = int((n == 1).sum())
    n_pair_records = 2 * int((n == 2).sum())
    q = 1.0 + (8.0 - m) / 20.0
    dis = np.zeros_like(score)
    pos = score > 0
    if pos.any():
        big_dis = n_unique * dis_fraction / (n_unique * dis_fraction + n_pair_records * (1.0 - dis_fraction))
        adj = sorted_sum(score[pos] ** -q)
        dis[pos] = 1.0 / (1.0 + (n_unique / big_dis - n_unique) / (score[pos] ** q * adj))
    return dis
