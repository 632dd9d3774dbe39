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

Computation: one group-by over the distinct key patterns per subset of keys (``2^M - 1`` of them), so the
bound is on ``M``: at most ``max_keys`` (16 by default; 2^16 group-bys over the distinct patterns). A missing
value is never part of an MSU (sdcMicro codes it as -999 and its SUDA2 skips that item): a record's MSUs use the keys
it observes, and other records compare with it as with a category of its own (``missing="category"`` makes it a
category in MSUs too). Unlike sdcMicro we add no dummy keys when
``M <= 2``, so scores for one or two keys use ``M`` itself.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_keys, is_integer
from polars_anon.errors import InvalidParameterError

__all__ = ["SudaMissing", "Suda2Result", "suda2", "suda2_patterns"]

SudaMissing = Literal["ignore", "category"]

_N = "__anon_n"


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
        Bound on the number of keys (the method runs ``2^M - 1`` group-bys).
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
    pats = (
        lf.group_by(keys).agg(pl.len().alias(_N)).sort(keys, nulls_last=True).collect()
    )  # materializes: one row per distinct key pattern
    res, per_pattern = suda2_patterns(pats, keys, _N, dis_fraction, max_keys, missing)
    frame = lf.join(per_pattern.drop(_N).lazy(), on=keys, how="left", nulls_equal=True, maintain_order="left")
    return Suda2Result(frame, res.contributions, res.msu_counts)


def _check(keys: list[str], dis_fraction: float, max_keys: int) -> None:
    if not is_integer(max_keys) or max_keys < 1:
        raise InvalidParameterError(f"max_keys must be an integer >= 1, got {max_keys!r}")
    if len(keys) > max_keys:
        raise InvalidParameterError(
            f"suda2 takes at most max_keys={max_keys} keys (it runs 2^M - 1 group-bys), got {len(keys)}: {keys}"
        )
    if isinstance(dis_fraction, bool) or not isinstance(dis_fraction, (int, float)) or not 0 < dis_fraction <= 1:
        raise InvalidParameterError(f"dis_fraction must lie in (0, 1], got {dis_fraction!r}")


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
    m = len(keys)
    pats = patterns.select(*keys, pl.col(count).alias(_N))
    if pats.height == 0:
        raise InvalidParameterError("the table has no rows; SUDA scores are undefined")
    n_unique = int((pats[_N] == 1).sum())
    n_pair_records = 2 * int((pats[_N] == 2).sum())
    uniq_rows = np.flatnonzero(pats[_N].to_numpy() == 1)
    # unique[S] per full-unique pattern, for every non-empty subset S (bitmask)
    unique = np.zeros((1 << m, uniq_rows.size), dtype=bool)
    for size in range(1, m + 1):
        for subset in itertools.combinations(range(m), size):
            cols = [keys[j] for j in subset]
            mask = sum(1 << j for j in subset)
            counts = pats.select(pl.col(_N).sum().over(cols, mapping_strategy="group_to_rows"))[_N].to_numpy()
            unique[mask] = counts[uniq_rows] == 1
    if missing == "ignore":  # sdcMicro's SUDA2 skips a missing value's item: no MSU holds a key the record lacks
        observed = np.zeros(uniq_rows.size, dtype=np.int64)
        for j, v in enumerate(keys):
            observed |= np.where(pats[v].is_null().to_numpy()[uniq_rows], 0, 1 << j)
        for mask in range(1, 1 << m):
            unique[mask] &= (mask & ~observed) == 0
    weights = [float(math.factorial(m - k)) for k in range(m + 1)]
    score = np.zeros(uniq_rows.size)
    contrib = np.zeros((uniq_rows.size, m))
    msu_counts = dict.fromkeys(range(1, m + 1), 0)
    for mask in range(1, 1 << m):
        members = [j for j in range(m) if mask >> j & 1]
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
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(score[:, None] > 0, contrib / score[:, None], 0.0)
    total = score.sum()
    contributions = {
        v: (100.0 * float((share[:, j] * score).sum() / total) if total else 0.0) for j, v in enumerate(keys)
    }
    q = 1.0 + (8.0 - m) / 20.0
    dis = np.zeros_like(score)
    pos = score > 0
    if pos.any():
        big_dis = n_unique * dis_fraction / (n_unique * dis_fraction + n_pair_records * (1.0 - dis_fraction))
        adj = float(np.sum(score[pos] ** -q))
        dis[pos] = 1.0 / (1.0 + (n_unique / big_dis - n_unique) / (score[pos] ** q * adj))
    full_score = np.zeros(pats.height)
    full_dis = np.zeros(pats.height)
    full_share = np.zeros((pats.height, m))
    full_score[uniq_rows], full_dis[uniq_rows], full_share[uniq_rows] = score, dis, share
    per_pattern = pats.with_columns(
        pl.Series("suda_score", full_score),
        pl.Series("dis_suda_score", full_dis),
        *[pl.Series(f"{v}_contribution", full_share[:, j]) for j, v in enumerate(keys)],
    )
    per_pattern = per_pattern.rename({_N: count})
    return Suda2Result(per_pattern.lazy(), contributions, dict(msu_counts)), per_pattern
