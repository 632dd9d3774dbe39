"""Sample and weighted population frequency counts of key patterns (sdcMicro's ``freqCalc``).

``fk`` is the number of sample records that share a record's key pattern; ``Fk`` is the sum of
their sampling weights, an estimate of the population count. Two readings of a missing key value:

* ``missing="category"``: a missing value is one more category (records match only records with
  the same missing cells). A plain group-by; it streams.
* ``missing="wildcard"``: sdcMicro's reading. A missing value matches any category, pair by pair:
  two records match when they agree on every key both of them observe. A record with missing
  values counts ``alpha`` (not 1) toward the count of another pattern it matches, so ``alpha=0``
  ignores such records and ``alpha=1`` counts them fully. Exactly as ``sdcMicro::freqCalc``:
  a record whose keys are all missing gets ``fk = n`` (every record), and, with two or more keys,
  it is not counted toward records that have no missing key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import polars as pl

from polars_anon._validate import as_lazy, check_choice, check_columns, check_keys, check_number, refuse_built_names
from polars_anon.errors import InvalidParameterError
from polars_anon.messages import BAD_WEIGHTS, NOT_NAMES, WEIGHT_IS_KEY, WEIGHT_NOT_NUMERIC

__all__ = [
    "Missing",
    "bad_weights",
    "check_alpha",
    "check_frequency_args",
    "check_weight_type",
    "check_weights",
    "exact_sum",
    "frequencies",
    "hidden_keys",
    "pattern_frequencies",
    "patterns",
    "wildcard_counts",
]

Missing = Literal["category", "wildcard"]
_W = "__anon_w"
PATTERN_COLUMNS = ("n_pattern", "fk", "Fk")
"""The columns :func:`pattern_frequencies` builds beside the keys (no key of its is named so)."""
FREQUENCY_COLUMNS = ("fk", "Fk")
"""The columns :func:`frequencies` adds to the table (no column of its input is named so)."""
_AN, _AW = "__anon_mn", "__anon_mw"  # the matched counts and weights of wildcard_counts


_HI, _LO = 2.0**40, 2.0**80  # exact_sum's fixed points: v = (hi + lo / 2^80) / 2^40, hi and lo integers
_EXACT_TOP = 2.0**85  # below this sum of |v|, neither Int128 sum can overflow (hi < 2^125; lo < 2^80 a row)


def exact_sum(value: pl.Expr) -> pl.Expr:
    """The sum of Float64 `value` with the same bits in any row order and with any number of threads (an aggregation,
    per group in a ``group_by(...).agg``; it streams).

    Polars adds a float column's partial sums in an order that changes between runs (a group-by's rows come in any
    order, threads split them), so a weighted count ``Fk``, and every risk figure from it, differed in its last bit
    between two runs of the same input. Here each value is split into two integers, ``hi = round(v 2^40)`` and
    ``lo = round((v 2^40 - hi) 2^80)`` (halves away from zero, as SQL's ``ROUND``: the same bits as
    :func:`~polars_anon.sdc.measures.exact_sum_sql`), summed exactly as Int128; the sum is
    ``hi_sum / 2^40 + lo_sum / 2^120``, a function of the values only (exact to 2^-120 a value: every value above
    1e-20 exactly). When the sum of ``|v|`` reaches 2^85 (about 4e25: an integer sum could overflow) it is Polars'
    own float sum.

    >>> df = pl.DataFrame({"g": [1, 1, 1, 2], "v": [0.1, 0.2, 0.3, 1e30]})
    >>> df.group_by("g", maintain_order=True).agg(exact_sum(pl.col("v"))).rows()
    [(1, 0.6), (2, 1e+30)]
    """
    v = value.cast(pl.Float64)
    scaled = v * _HI
    near = scaled.round(0, mode="half_away_from_zero")  # SQL's ROUND: scaled - near is exact, |.| <= 1/2
    hi = near.cast(pl.Int128, strict=False)
    lo = ((scaled - near) * _LO).round(0, mode="half_away_from_zero").cast(pl.Int128, strict=False)
    exact = hi.sum().cast(pl.Float64) / _HI + lo.sum().cast(pl.Float64) / (_HI * _LO)
    return pl.when(v.abs().sum() < _EXACT_TOP).then(exact).otherwise(v.sum())


def check_frequency_args(
    lf: pl.LazyFrame, keys: Sequence[str] | str, weight: str | None, missing: str, alpha: float
) -> list[str]:
    """The keys as a list, once the arguments of a frequency count are checked (the keys and the weight are columns
    of `lf`, the weights positive numbers, `missing` and `alpha` valid)."""
    keys = check_keys(lf, keys)
    if weight is not None:
        if not isinstance(weight, str):
            raise InvalidParameterError(NOT_NAMES(what="weight", takes="a column name", value=weight))
        check_columns(lf, [weight], "weight")
        if weight in keys:
            raise InvalidParameterError(WEIGHT_IS_KEY(weight=weight))
    check_choice("missing", missing, get_args(Missing))
    check_alpha(alpha)
    if weight is not None:
        check_weights(lf, weight)
    return keys


def check_alpha(alpha: object, name: str = "alpha") -> float:
    """`alpha` (the weight of a record with missing keys) when it is a number in [0, 1], else the error naming it as
    `name` (every reader of an alpha checks it here: the functions, ``[sdc]``, method local_suppression).

    >>> check_alpha(2, "local_suppression option alpha")
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: local_suppression option alpha must be a number in [0, 1], got 2
    """
    return check_number(name, alpha, 0.0, 1.0)


def check_weights(lf: pl.LazyFrame, weight: str) -> None:
    """Refuse a sampling-weight column that is not numeric, or holds a value that is missing, NaN, infinite or not
    above 0 (one aggregated query over the column): each weight counts people of the population.

    >>> check_weights(pl.LazyFrame({"w": [10.0, -1.0, None]}), "w")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: weight column 'w' has 2 values that are not positive numbers (first: ...
    """
    check_weight_type(weight, lf.collect_schema()[weight])
    w = pl.col(weight).cast(pl.Float64)
    bad = w.is_null() | w.is_nan() | w.is_infinite() | (w <= 0)
    found = lf.select(bad.sum().alias("n"), pl.col(weight).filter(bad).head(5).implode().alias("first")).collect()
    n, first = int(found["n"][0]), found["first"][0].to_list()  # materializes: one row
    if n:
        raise InvalidParameterError(bad_weights(weight, n, first))


def check_weight_type(weight: str, dtype: pl.DataType) -> None:
    """Refuse a sampling-weight column that is not numeric (every engine: its schema's Polars type).

    >>> check_weight_type("w", pl.String)
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: weight column 'w' must be numeric, got String
    """
    if not dtype.is_numeric():
        raise InvalidParameterError(WEIGHT_NOT_NUMERIC(weight=weight, dtype=dtype))


def bad_weights(weight: str, n: int, first: list[object]) -> str:
    """The refusal of `n` weights that are missing, NaN, infinite or not above 0 (`first`: up to 5 of them, in row
    order), as every engine words it (:func:`check_weights`; :func:`polars_anon.sdc.measures.measure_sql`).

    >>> bad_weights("w", 2, [-1.0, None])
    "weight column 'w' has 2 values that are not positive numbers (first: [-1.0, None]); a sampling weight is the \
number of people a record stands for"
    """
    return BAD_WEIGHTS(weight=weight, n=n, first=first)


def pattern_frequencies(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    weight: str | None = None,
    missing: Missing = "category",
    alpha: float = 1.0,
) -> pl.DataFrame:
    """One row per distinct key pattern with its ``fk`` and ``Fk`` (Float64) and its sample size ``n_pattern``.

    ``n_pattern`` is the number of records with exactly this pattern; ``fk``/``Fk`` follow the
    ``missing`` reading (see the module docstring). Materializes one row per distinct pattern.

    Examples
    --------
    >>> lf = pl.LazyFrame({"a": [1, 1, None], "b": ["x", "x", "x"]})
    >>> pattern_frequencies(lf, ["a", "b"], missing="wildcard").sort("n_pattern")["fk"].to_list()
    [3.0, 3.0]
    """
    lf = as_lazy(data)
    keys = check_frequency_args(lf, keys, weight, missing, alpha)
    refuse_built_names(
        keys, PATTERN_COLUMNS, "pattern_frequencies: key", "pattern_frequencies builds beside the keys", helpers=False
    )
    hidden = hidden_keys(keys)
    return patterns(lf, keys, weight, missing, alpha).rename(dict(zip(hidden, keys, strict=True)))


def hidden_keys(keys: Sequence[str]) -> list[str]:
    """The names :func:`patterns` gives the keys (``__anon_k0``, ``__anon_k1``, ...): out of the way of every name
    the computation uses, so that a key may be named like any of them (``n``, ``n_pattern``, ``fk``, ...).

    >>> hidden_keys(["fk", "age"])
    ['__anon_k0', '__anon_k1']
    """
    return [f"__anon_k{i}" for i in range(len(keys))]


def patterns(lf: pl.LazyFrame, keys: Sequence[str], weight: str | None, missing: str, alpha: float) -> pl.DataFrame:
    """:func:`pattern_frequencies` of checked arguments, the keys named by :func:`hidden_keys` (in `keys`' order)
    beside ``n_pattern``, ``fk`` and ``Fk``: each caller names what it keeps.

    >>> patterns(pl.LazyFrame({"fk": [1, 1, 2]}), ["fk"], None, "category", 1.0)["__anon_k0", "fk"].rows()
    [(1, 2.0), (2, 1.0)]
    """
    hidden = hidden_keys(keys)
    w = pl.col(weight).cast(pl.Float64) if weight is not None else pl.lit(1.0)
    agg = (
        lf.select(*(pl.col(k).alias(h) for k, h in zip(keys, hidden, strict=True)), w.alias(_W))
        .group_by(hidden)
        .agg(pl.len().cast(pl.Float64).alias("n_pattern"), exact_sum(pl.col(_W)).alias("__anon_W"))
        .sort(hidden, nulls_last=True)
        .collect()  # materializes: one row per distinct key pattern
    )
    agg = agg.with_columns(pl.col("n_pattern").alias("fk"), pl.col("__anon_W").alias("Fk"))
    if missing == "category" or agg.select(pl.any_horizontal(pl.col(hidden).is_null()).any()).item() is False:
        return agg.drop("__anon_W").with_columns(pl.col("n_pattern").cast(pl.UInt32))
    found = wildcard_counts(agg, hidden, float(alpha))
    return found.drop("__anon_W").with_columns(pl.col("n_pattern").cast(pl.UInt32))


def wildcard_counts(agg: pl.DataFrame, keys: list[str], alpha: float = 1.0) -> pl.DataFrame:
    """Add the wildcard matches to each pattern's own counts (sdcMicro's freqCalc, pair by pair).

    ``agg`` holds one row per distinct pattern of ``keys`` with its record count ``n_pattern``,
    weighted count ``__anon_W`` and columns ``fk`` and ``Fk`` equal to them; the same frame comes
    back with ``fk`` and ``Fk`` raised by the matches. Relational: a group-by and a join per pair of
    missing-value shapes present (at most ``2**len(keys)`` shapes).

    >>> agg = pl.DataFrame({"a": [1, None], "n_pattern": [1.0, 1.0], "__anon_W": [1.0, 1.0]})
    >>> wildcard_counts(agg.with_columns(fk=pl.col("n_pattern"), Fk=pl.col("__anon_W")), ["a"])["fk"].to_list()
    [2.0, 2.0]
    """
    m = len(keys)
    nulls = pl.sum_horizontal(pl.col(keys).is_null().cast(pl.Int32))
    agg = agg.with_row_index("__anon_p").with_columns(nulls.alias("__anon_nn"))
    total_n, total_w = agg.select(exact_sum(pl.col("n_pattern")), exact_sum(pl.col("__anon_W"))).row(0)
    complete = agg.filter(pl.col("__anon_nn") == 0)
    all_na = agg.filter(pl.col("__anon_nn") == m)
    partial = agg.filter((pl.col("__anon_nn") > 0) & (pl.col("__anon_nn") < m))
    pieces = _wildcard_pieces(complete, partial, all_na, keys, alpha)
    return _add_matches(agg, pieces, m, total_n, total_w)


def _wildcard_pieces(
    complete: pl.DataFrame, partial: pl.DataFrame, all_na: pl.DataFrame, keys: list[str], alpha: float
) -> list[pl.DataFrame]:
    """What each pattern gains from the patterns it matches: one frame of (``__anon_p``, counts, weights) per pair of
    missing-value shapes, and one taking off each partial pattern's match with itself."""
    by_shape = _by_shape(partial, keys)
    pieces: list[pl.DataFrame] = []
    for shape, part_s in by_shape.items():
        observed = [c for c, s in zip(keys, shape, strict=True) if not s]
        # complete records matching a partial pattern count 1 toward it; it counts alpha toward them
        pieces.append(_matched(part_s, complete, observed, 1.0))
        pieces.append(_matched(complete, part_s, observed, alpha))
        # other partial patterns (every shape, its own included) and all-missing records count alpha
        for other, part_t in by_shape.items():
            both = [c for c, s, t in zip(keys, shape, other, strict=True) if not s and not t]
            pieces.append(_matched(part_s, part_t, both, alpha))
        pieces.append(_matched(part_s, all_na, [], alpha))
        # a pattern matched itself above; its own records count 1, already in fk
        own = part_s.select(
            "__anon_p", (-alpha * pl.col("n_pattern")).alias(_AN), (-alpha * pl.col("__anon_W")).alias(_AW)
        )
        pieces.append(own)
    if len(keys) == 1:  # sdcMicro: with one key, complete patterns count the missing ones (alpha each)
        pieces.append(_matched(complete, all_na, [], alpha))
    return pieces


def _by_shape(partial: pl.DataFrame, keys: list[str]) -> dict[tuple[bool, ...], pl.DataFrame]:
    """The partial patterns by their missing-value shape (per key: missing), shapes in their first row's order."""
    shape_of = pl.concat_str([pl.col(c).is_null().cast(pl.Int8).cast(pl.String) for c in keys])
    return {
        tuple(ch == "1" for ch in str(name[0])): frame
        for name, frame in partial.with_columns(shape_of.alias("__anon_sh"))
        .partition_by("__anon_sh", as_dict=True, maintain_order=True)
        .items()
    }


def _matched(targets: pl.DataFrame, sources: pl.DataFrame, on: list[str], factor: float) -> pl.DataFrame:
    """Per target pattern, `factor` times the own counts of the source patterns agreeing on `on`."""
    if not on:
        n, w = sources.select(exact_sum(pl.col("n_pattern")), exact_sum(pl.col("__anon_W"))).row(0)
        piece = targets.select("__anon_p", pl.lit(factor * n).alias(_AN), pl.lit(factor * w).alias(_AW))
    else:
        sums = sources.group_by(on).agg(
            exact_sum(pl.col("n_pattern")).alias(_AN), exact_sum(pl.col("__anon_W")).alias(_AW)
        )
        piece = targets.select("__anon_p", *on).join(sums, on=on, how="inner")
        piece = piece.select("__anon_p", (factor * pl.col(_AN)).alias(_AN), (factor * pl.col(_AW)).alias(_AW))
    return piece.cast({_AN: pl.Float64, _AW: pl.Float64})


def _add_matches(agg: pl.DataFrame, pieces: list[pl.DataFrame], m: int, total_n: float, total_w: float) -> pl.DataFrame:
    """`agg` with each pattern's matches added to ``fk`` and ``Fk`` (a pattern missing every key: all the records)."""
    schema = pl.Schema({"__anon_p": pl.UInt32, _AN: pl.Float64, _AW: pl.Float64})
    extra = (
        pl.concat([pl.DataFrame(schema=schema), *[p.cast(schema) for p in pieces]])
        .group_by("__anon_p")
        .agg(exact_sum(pl.col(_AN)).alias("__anon_an"), exact_sum(pl.col(_AW)).alias("__anon_aw"))
    )
    all_missing = pl.col("__anon_nn") == m
    return (
        agg.join(extra, on="__anon_p", how="left", maintain_order="left")
        .with_columns(pl.col("__anon_an", "__anon_aw").fill_null(0.0))
        .with_columns(
            pl.when(all_missing).then(pl.lit(float(total_n))).otherwise(pl.col("fk") + pl.col("__anon_an")).alias("fk"),
            pl.when(all_missing).then(pl.lit(float(total_w))).otherwise(pl.col("Fk") + pl.col("__anon_aw")).alias("Fk"),
        )
        .drop("__anon_p", "__anon_nn", "__anon_an", "__anon_aw")
    )


def frequencies(
    data: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str] | str,
    weight: str | None = None,
    missing: Missing = "category",
    alpha: float = 1.0,
) -> pl.LazyFrame:
    """Append ``fk`` and ``Fk`` (Float64) to every record, rows in their order (sdcMicro's ``freqCalc``).

    Parameters
    ----------
    data
        The sample: a Polars LazyFrame or DataFrame.
    keys
        The categorical key variables (quasi-identifiers), by name.
    weight
        Column of sampling weights; without it ``Fk`` equals ``fk``.
    missing
        ``"category"`` (a missing value is a category of its own) or ``"wildcard"`` (sdcMicro:
        a missing value matches any category; see the module docstring).
    alpha
        In [0, 1]: how much a record with missing keys counts toward another pattern it matches
        (``missing="wildcard"`` only).

    Returns
    -------
    The input frame with two more columns, ``fk`` and ``Fk``.

    Examples
    --------
    sdcMicro's ``test_freqCalc.R`` ("numeric values with missing values (weighted)"):

    >>> lf = pl.LazyFrame({"A": [2, 3, 2, 2, 3, 3, 1, 2], "B": [3, 3, 3, 3, 3, 3, 4, 3],
    ...                    "C": [1, 3, None, 2, 1, 1, None, 1],
    ...                    "w": [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]})
    >>> out = frequencies(lf, ["A", "B", "C"], weight="w", missing="wildcard").collect()
    >>> out["fk"].to_list(), out["Fk"].to_list()
    ([3.0, 1.0, 4.0, 2.0, 2.0, 2.0, 1.0, 3.0], [108.0, 45.5, 125.0, 56.0, 100.0, 100.0, 123.5, 108.0])
    """
    lf = as_lazy(data)
    keys = check_frequency_args(lf, keys, weight, missing, alpha)
    refuse_built_names(
        lf.collect_schema().names(),
        FREQUENCY_COLUMNS,
        "frequencies: column",
        "frequencies adds to the table",
        helpers=False,
    )
    if missing == "category":
        fk = pl.len().cast(pl.Float64)
        big_fk = exact_sum(pl.col(weight)) if weight is not None else fk
        counts = lf.group_by(keys).agg(fk.alias("fk"), big_fk.alias("Fk"))
        return lf.join(counts, on=keys, how="left", nulls_equal=True, maintain_order="left")
    hidden = hidden_keys(keys)
    pats = patterns(lf, keys, weight, missing, alpha).select(*hidden, "fk", "Fk").lazy()
    return lf.join(pats, left_on=keys, right_on=hidden, how="left", nulls_equal=True, maintain_order="left")
