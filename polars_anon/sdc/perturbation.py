"""Perturbative protection (PRAM, noise addition, rank swapping) and the utility measures that judge it.

Randomness is keyed and row-addressed: each record's draws are a hash of its row number and a key
(Polars' ``Expr.hash``), so PRAM and noise stay lazy and stream. The key is secret: whoever knows it
recomputes every draw and undoes the perturbation (subtracts the noise, inverts the swap, narrows each
PRAM value to its original). With ``seed=None`` (the default) each call draws a fresh key from the
operating system's random source (:func:`resolve_seed`), and the output cannot be reproduced; a given
``seed`` is that key: the same input, seed and Polars version give the same output, whatever the
chunking, so keep it as secret as the original data. Rank swapping sorts one column at a time in memory
(NumPy's generator, keyed the same way).

* **PRAM** [Gouweleeuw et al. 1998; sdcMicro's ``pram``]: each value ``i`` of a categorical column
  becomes ``j`` with probability ``P[i, j]`` (one uniform draw per record, a join on the category and
  a range filter). **Invariant PRAM** builds ``R = P Q`` with ``Q[k, j] = P[j, k] p_j / sum_i p_i P[i, k]``
  (``p`` the category frequencies), so ``p R = p``: frequencies are kept in expectation; sdcMicro's
  ``pd`` draws each diagonal of ``P`` uniformly in ``[pd, 1]`` and ``alpha`` mixes ``R`` with the identity.
* **Noise** [sdcMicro's ``addNoise``]: ``"additive"`` adds ``N(0, (noise/100) sd_j)`` to each column;
  ``"correlated"`` adds ``N(0, (noise/100) Sigma)`` (covariance becomes ``(1 + noise/100) Sigma``,
  correlations kept); ``"correlated_rescaled"`` then shrinks toward the mean by ``sqrt(1 + noise/100)``
  so means and the covariance matrix are kept in expectation [Kim 1986].
* **Rank swapping** [Moore 1996; sdcMicro's ``rankSwap``]: per column, in rank order, each value not yet
  swapped is swapped with a random not-yet-swapped value at most ``p`` percent of the records above it.
* **Utility**: ``il1s`` (sdcMicro's ``dUtility(method="IL1s")``: ``sum |x - y| / (sqrt(2) sd_j)`` over
  all cells), ``eigen`` (``sum |e_x - e_y| / e_x`` over the eigenvalues of the two correlation
  matrices), and the correlation matrices before and after.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

import numpy as np
import polars as pl

from polars_anon._validate import (
    as_lazy,
    check_choice,
    check_columns,
    check_number,
    check_numeric,
    check_seed,
    check_unique,
    names_list,
    refuse_built_names,
)
from polars_anon.errors import InvalidParameterError
from polars_anon.sdc.frequencies import exact_sum

__all__ = [
    "NoiseMethod",
    "add_noise",
    "correlations",
    "eigen_utility",
    "il1s",
    "invariant_matrix",
    "invariant_pram",
    "pram",
    "rank_swap",
    "resolve_seed",
]

NoiseMethod = Literal["additive", "correlated", "correlated_rescaled"]
_ROW = "__anon_row"
_TWO53 = float(2**53)


def _uniform(seed: int, stream: int) -> pl.Expr:
    """A uniform draw in (0, 1) per row, from the row number, the seed and a stream number."""
    h = pl.col(_ROW).hash(seed=(seed * 1_000_003 + stream) % 2**63)
    return ((h // 2048).cast(pl.Float64) + 0.5) / _TWO53


def _normal(seed: int, stream: int) -> pl.Expr:
    """A standard normal draw per row (Box-Muller on two uniform streams)."""
    u1, u2 = _uniform(seed, 2 * stream), _uniform(seed, 2 * stream + 1)
    return (-2.0 * u1.log()).sqrt() * (2.0 * np.pi * u2).cos()


def resolve_seed(seed: object) -> int:
    """The key of a perturbation's draws: `seed` when given (an integer >= 0), else a fresh 63-bit key from the
    operating system's cryptographically strong source (:mod:`secrets`), never written anywhere.

    The key is a secret: whoever knows it recomputes every draw and undoes the perturbation.

    >>> resolve_seed(7)
    7
    >>> 0 <= resolve_seed(None) < 2**63
    True
    """
    checked = check_seed(seed, optional=True)
    return secrets.randbits(63) if checked is None else checked


def _numeric(lf: pl.LazyFrame, columns: Sequence[str] | str) -> list[str]:
    """Numeric columns by name: each once, each in the frame, each of a numeric type (no data read)."""
    cols = names_list(columns, "columns")
    if not cols:
        raise InvalidParameterError("columns must name at least one numeric column, got []")
    check_unique(cols, "columns")
    check_columns(lf, cols, "columns")
    check_numeric(lf, cols, "columns")
    return cols


def _refuse_helpers(lf: pl.LazyFrame, who: str) -> None:
    """Refuse a column of `lf` named like the helper columns `who` adds to the rows and drops (a row index, a uniform
    draw, a transition table): it would be replaced, or collide (raw DuplicateError)."""
    refuse_built_names(lf.collect_schema().names(), (), f"{who}: column", f"{who} uses for its helper columns")


def _same_rows(original: pl.LazyFrame, perturbed: pl.LazyFrame) -> None:
    """Refuse a perturbed table whose row count differs from the original's (a perturbation keeps every row)."""
    n = [int(f.select(pl.len()).collect().item()) for f in (original, perturbed)]  # materializes: two counts
    if n[0] != n[1]:
        raise InvalidParameterError(
            f"perturbed has {n[1]} rows but original has {n[0]}; a perturbation keeps every row, in order"
        )


def _refuse_undefined_spread(lf: pl.LazyFrame, cols: list[str], spread: np.ndarray, what: str) -> None:
    """Refuse the columns whose spread (variance or standard deviation, from :func:`_moments`) is not a finite number,
    saying why: a NaN or infinite value, fewer than 2 values, or a spread too large for a float (a NaN was reported as
    "fewer than 2 values"). `what` says what the spread is used for."""
    bad = [c for c, v in zip(cols, spread) if not np.isfinite(v)]
    if not bad:
        return
    x = [pl.col(c).cast(pl.Float64) for c in bad]
    found = (
        lf.select(
            [(~e.is_finite()).any().alias(f"f{j}") for j, e in enumerate(x)]
            + [e.count().alias(f"n{j}") for j, e in enumerate(x)]
        )
        .collect()
        .row(0)
    )  # materializes: one row
    nonfinite = [c for j, c in enumerate(bad) if found[j]]
    few = [c for j, c in enumerate(bad) if not found[j] and found[len(bad) + j] < 2]
    if nonfinite:
        raise InvalidParameterError(
            f"columns {nonfinite} hold NaN or infinite values: their spread, {what}, is undefined; make those values "
            "null first (nulls are left out)"
        )
    if few:
        raise InvalidParameterError(f"columns {few} have fewer than 2 values: their spread, {what}, is undefined")
    raise InvalidParameterError(f"columns {bad} spread beyond a float's range: their spread, {what}, is infinite")


def _probability(src: object, dest: object, value: object) -> float:
    return check_number(f"PRAM matrix[{src!r}][{dest!r}] (a probability)", value, 0.0, 1.0)


def check_noise(noise: object, name: str = "noise") -> float:
    """The noise of :func:`add_noise`: a finite number of percent >= 0 (NaN or inf made the column NaN or inf)."""
    return check_number(f"{name} (percent of the standard deviation)", noise, 0.0)


def check_percent(p: object, name: str = "p") -> float:
    """The rank distance of :func:`rank_swap`: a percentage in [0, 100]."""
    return check_number(f"{name} (a percentage)", p, 0.0, 100.0)


def check_pd(pd: object, name: str = "pd") -> float:
    """The least diagonal of :func:`invariant_pram`'s base matrix: a number in (0, 1]."""
    return check_number(name, pd, 0.0, 1.0, low_open=True)


def check_pram_alpha(alpha: object, name: str = "alpha") -> float:
    """The weight of invariant PRAM's matrix against the identity: a number in [0, 1]."""
    return check_number(name, alpha, 0.0, 1.0)


def _fits(value: object, dtype: pl.DataType) -> bool:
    try:
        pl.Series([value], dtype=dtype, strict=True)
    except (TypeError, pl.exceptions.PolarsError, OverflowError):
        return False
    return True


def invariant_matrix(matrix: np.ndarray, freqs: Sequence[float] | np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The invariant PRAM matrix ``alpha * P Q + (1 - alpha) I`` for category frequencies ``freqs``.

    Examples
    --------
    >>> p = np.array([0.3, 0.7])
    >>> r = invariant_matrix(np.array([[0.8, 0.2], [0.1, 0.9]]), p)
    >>> np.allclose(p @ r, p), np.allclose(r.sum(axis=1), 1)
    (True, True)
    """
    alpha = check_pram_alpha(alpha)
    big_p = np.asarray(matrix, dtype=np.float64)
    p = np.asarray(freqs, dtype=np.float64)
    p = p / p.sum()
    q = (big_p * p[:, None]).T / (p @ big_p)[:, None]  # Q[k, j] = P[j, k] p_j / sum_i p_i P[i, k]
    return alpha * (big_p @ q) + (1.0 - alpha) * np.eye(len(p))


def pram(
    data: pl.LazyFrame | pl.DataFrame,
    column: str,
    matrix: Mapping[object, Mapping[object, float]],
    seed: int | None = None,
) -> pl.LazyFrame:
    """Replace each value ``i`` of ``column`` by ``j`` with probability ``matrix[i][j]`` (missing values stay).

    Parameters
    ----------
    matrix
        Transition probabilities: ``{from: {to: probability}}``, each row summing to 1. Values of the
        column that are not rows of the matrix are kept unchanged. A row or a target the column does not hold
        is refused (read once: the column's distinct values).
    seed
        The secret key of the per-record draws (None: a fresh key from the operating system, not reproducible).

    Examples
    --------
    >>> lf = pl.LazyFrame({"sex": ["f", "m", "f", None]})
    >>> pram(lf, "sex", {"f": {"m": 1.0}, "m": {"f": 1.0}}).collect()["sex"].to_list()
    ['m', 'f', 'm', None]
    """
    lf = as_lazy(data)
    check_columns(lf, [column], "column")
    _refuse_helpers(lf, "pram")
    seed = resolve_seed(seed)
    rows = _matrix_rows(matrix)
    dtype = lf.collect_schema()[column]
    for side, values in (("row", [r[0] for r in rows]), ("target", [r[1] for r in rows])):
        try:
            pl.Series(values, dtype=dtype, strict=True)
        except (TypeError, pl.exceptions.PolarsError, OverflowError):
            bad = next(v for v in values if not _fits(v, dtype))
            raise InvalidParameterError(
                f"PRAM matrix {side} {bad!r} is not a value of column {column!r} ({dtype}); name its values as they are"
            ) from None
    _refuse_unheld(lf, column, rows)
    return _apply_matrix(lf, column, rows, seed)


_FEW_VALUES = 20
"""A column with at most this many values has them all listed when a PRAM matrix names one it does not hold."""


def _matrix_rows(matrix: object) -> list[tuple[object, object, float, float]]:
    """A PRAM matrix checked (a non-empty mapping of rows of probabilities summing to 1) as ``(from, to, lo, hi)``
    rows: the draw ``u`` in ``[lo, hi)`` turns `from` into `to`."""
    if not isinstance(matrix, Mapping) or not matrix:
        raise InvalidParameterError(
            f"PRAM matrix must be a non-empty mapping {{from: {{to: probability}}}}, got {matrix!r}"
        )
    rows: list[tuple[object, object, float, float]] = []
    for src, dests in matrix.items():
        if not isinstance(dests, Mapping) or not dests:
            raise InvalidParameterError(
                f"PRAM matrix row {src!r} must be a non-empty mapping {{to: probability}}, got {dests!r}"
            )
        probs = {d: _probability(src, d, v) for d, v in dests.items()}
        total = sum(probs.values())
        if abs(total - 1.0) > 1e-9:
            raise InvalidParameterError(
                f"PRAM matrix row {src!r} must hold probabilities >= 0 summing to 1, got sum {total!r}"
            )
        lo = 0.0
        items = [(d, v) for d, v in probs.items() if v > 0]
        for i, (dest, prob) in enumerate(items):
            hi = 1.0 + 1e-12 if i == len(items) - 1 else lo + prob
            rows.append((src, dest, lo, hi))
            lo = hi
    return rows


def _refuse_unheld(lf: pl.LazyFrame, column: str, rows: list[tuple[object, object, float, float]]) -> None:
    """Refuse a PRAM matrix naming, as a row or a target, a value `column` does not hold (read once: the column's
    distinct values). A row the data lacks perturbed nothing, silently; a target it lacks published a new category."""
    held = set(
        lf.select(pl.col(column).unique().drop_nulls()).collect().to_series().to_list()
    )  # materializes: one row per value
    named = dict.fromkeys([r[0] for r in rows] + [r[1] for r in rows])
    bad = [v for v in named if v not in held]
    if not bad:
        return
    values = f"its values: {sorted(held, key=repr)}" if len(held) <= _FEW_VALUES else f"it holds {len(held)} values"
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    raise InvalidParameterError(
        f"PRAM matrix names {len(bad)} values column {column!r} does not hold: {bad[:5]}{more}; {values}; a row it "
        "lacks would perturb nothing and a target it lacks would publish a new category"
    )


def _apply_matrix(
    lf: pl.LazyFrame, column: str, rows: list[tuple[object, object, float, float]], seed: int
) -> pl.LazyFrame:
    """`column` PRAM'd with the checked matrix `rows` (:func:`_matrix_rows`): one uniform draw per record, a join on
    the value and a range filter (values that are no row of the matrix, and nulls, stay)."""
    dtype = lf.collect_schema()[column]
    table = pl.LazyFrame(
        {
            "__anon_from": [r[0] for r in rows],
            "__anon_to": [r[1] for r in rows],
            "__anon_lo": [r[2] for r in rows],
            "__anon_hi": [r[3] for r in rows],
        },
        schema={"__anon_from": dtype, "__anon_to": dtype, "__anon_lo": pl.Float64, "__anon_hi": pl.Float64},
    )
    u = "__anon_u"
    out = (
        lf.with_row_index(_ROW)
        .with_columns(_uniform(seed, 0).alias(u))
        .join(table, left_on=column, right_on="__anon_from", how="left", maintain_order="left")
        .filter(
            pl.col("__anon_lo").is_null() | ((pl.col(u) >= pl.col("__anon_lo")) & (pl.col(u) < pl.col("__anon_hi")))
        )
        .with_columns(pl.coalesce("__anon_to", column).alias(column))
    )
    return out.drop(_ROW, u, "__anon_to", "__anon_lo", "__anon_hi")


def invariant_pram(
    data: pl.LazyFrame | pl.DataFrame,
    column: str,
    pd: float = 0.8,
    alpha: float = 0.5,
    seed: int | None = None,
) -> pl.LazyFrame:
    """Invariant PRAM as sdcMicro's ``pram(pd=, alpha=)``: category frequencies kept in expectation.

    The diagonal of the base matrix is drawn uniformly in ``[pd, 1]`` (keyed by `seed`, as the records' draws;
    None: a fresh key from the operating system), the rest of each row
    spread evenly; the frequencies come from one group-by over the column.

    Examples
    --------
    >>> lf = pl.LazyFrame({"g": ["a", "b"] * 50})
    >>> invariant_pram(lf, "g", seed=1).collect().height
    100
    """
    lf = as_lazy(data)
    check_columns(lf, [column], "column")
    _refuse_helpers(lf, "invariant_pram")
    seed = resolve_seed(seed)
    pd, alpha = check_pd(pd), check_pram_alpha(alpha)
    counts = (
        lf.group_by(column).len().drop_nulls(column).sort(column).collect()  # materializes: one row per category
    )
    cats, freqs = counts[column].to_list(), counts["len"].to_numpy().astype(np.float64)
    n_cat = len(cats)
    if n_cat < 2:
        return lf
    diag = np.random.default_rng(seed).uniform(pd, 1.0, n_cat)
    base = np.repeat(((1.0 - diag) / (n_cat - 1))[:, None], n_cat, axis=1)
    np.fill_diagonal(base, diag)
    r = invariant_matrix(base, freqs, alpha)
    r = r / r.sum(axis=1, keepdims=True)
    matrix = {c: {d: float(r[i, j]) for j, d in enumerate(cats)} for i, c in enumerate(cats)}
    return _apply_matrix(lf, column, _matrix_rows(matrix), seed)  # its values are the column's: no second read


def _bounded_sum(value: pl.Expr, bound: float, n: int) -> pl.Expr:
    """The sum of Float64 `value` (at most `n` values, none NaN, each ``|v| <= bound``) with the same bits in any row
    order and with any number of threads: one Int128 sum of ``trunc(v 2^s)``, ``s`` the largest with ``n bound 2^s <=
    2^124`` (half the cost of :func:`~polars_anon.sdc.frequencies.exact_sum`'s two; each value exact to ``2^-s``, that
    is ``n bound 2^-124``: a sum of squares, at least ``bound``, to ``n 2^-124`` relative). A bound that is not a
    positive finite number: :func:`~polars_anon.sdc.frequencies.exact_sum`.

    The centred products of :func:`_moments` are bounded by their columns' least and greatest values (a float
    subtraction and product are monotonic in each operand, so the rounded products are bounded too).

    >>> pl.select(_bounded_sum(pl.lit(pl.Series([0.1, 0.2, 0.3])), 0.3, 3)).item()
    0.6
    """
    if not (math.isfinite(bound) and bound > 0 and n > 0):
        return exact_sum(value)
    s = min(max(math.floor(124 - math.log2(n * bound)) - 1, -1000), 1000)  # -1: log2's rounding
    scale = math.ldexp(1.0, s)
    return (value * scale).cast(pl.Int128, strict=False).sum().cast(pl.Float64) * math.ldexp(1.0, -s)


def _moments(lf: pl.LazyFrame, cols: list[str], diagonal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Means and the sample covariance matrix of `cols` (as Polars' ``mean`` and ``pl.cov``: each mean over the
    column's values, each covariance over the rows where both columns have a value) from exact sums
    (:func:`~polars_anon.sdc.frequencies.exact_sum`): the same bits in every run and with any number of threads
    (Polars' float sums add in thread order, so noise drawn from them differed in its last bits between runs).
    `diagonal`: only the variances (the other entries are 0).

    Two aggregation passes: the column sums and counts, then the centred products (k exact sums, then k(k+1)/2, or k
    for `diagonal`). A pair is centred on its columns' means unless it drops values of either column (a null in the
    other), when a third pass, before the second, sums its columns over its rows."""
    k = len(cols)
    x = [pl.col(c).cast(pl.Float64) for c in cols]
    pairs = [(i, i) for i in range(k)] if diagonal else [(i, j) for i in range(k) for j in range(i, k)]
    both = {(i, j): x[i].is_not_null() & x[j].is_not_null() for i, j in pairs if i != j}
    first = [exact_sum(x[i]).alias(f"m{i}") for i in range(k)] + [x[i].count().alias(f"n{i}") for i in range(k)]
    first += [b.sum().alias(f"n{i}_{j}") for (i, j), b in both.items()]
    first += [x[i].min().alias(f"lo{i}") for i in range(k)] + [x[i].max().alias(f"hi{i}") for i in range(k)]
    first += [x[i].is_nan().any().alias(f"nan{i}") for i in range(k)]
    row = lf.select(first).collect().row(0, named=True)  # materializes: one row
    for i in range(k):
        row[f"n{i}_{i}"], row[f"a{i}_{i}"], row[f"b{i}_{i}"] = row[f"n{i}"], row[f"m{i}"], row[f"m{i}"]
    masked = []  # the pairs whose rows differ from a column's (exactly the same rows: the same sums, the same bits)
    for (i, j), b in both.items():
        if row[f"n{i}_{j}"] == row[f"n{i}"] == row[f"n{j}"]:
            row[f"a{i}_{j}"], row[f"b{i}_{j}"] = row[f"m{i}"], row[f"m{j}"]
        else:
            masked += [
                exact_sum(pl.when(b).then(x[i])).alias(f"a{i}_{j}"),
                exact_sum(pl.when(b).then(x[j])).alias(f"b{i}_{j}"),
            ]
    if masked:
        row |= lf.select(masked).collect().row(0, named=True)  # materializes: one row
    nan = float("nan")
    mean = np.array([row[f"m{i}"] / row[f"n{i}"] if row[f"n{i}"] else nan for i in range(k)])
    centred = []
    for i, j in pairs:
        n = row[f"n{i}_{j}"]
        ma, mb = (row[f"a{i}_{j}"] / n, row[f"b{i}_{j}"] / n) if n else (nan, nan)
        gap = x[i] - ma
        product = gap * gap if i == j else gap * (x[j] - mb)
        if row[f"nan{i}"] or row[f"nan{j}"]:
            centred.append(exact_sum(product).alias(f"c{i}_{j}"))
            continue
        reach = [max(abs(row[f"hi{c}"] - m), abs(row[f"lo{c}"] - m)) if n else nan for c, m in ((i, ma), (j, mb))]
        bound = reach[0] * reach[1]  # |product| <= bound: the greatest distances from the centres
        centred.append(_bounded_sum(product, bound, n).alias(f"c{i}_{j}"))
    sums = lf.select(centred).collect().row(0, named=True)  # materializes: one row
    cov = np.zeros((k, k))
    for i, j in pairs:
        n = row[f"n{i}_{j}"]
        cov[i, j] = cov[j, i] = sums[f"c{i}_{j}"] / (n - 1) if n >= 2 else nan
    return mean, cov


def add_noise(
    data: pl.LazyFrame | pl.DataFrame,
    columns: Sequence[str] | str,
    noise: float = 150.0,
    method: NoiseMethod = "additive",
    seed: int | None = None,
) -> pl.LazyFrame:
    """Add Gaussian noise to numeric columns (sdcMicro's ``addNoise``; ``noise`` in percent), keyed by `seed` (a
    secret; None: a fresh key from the operating system).

    Examples
    --------
    >>> lf = pl.LazyFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    >>> out = add_noise(lf, "x", noise=10, seed=3).collect()
    >>> out.height, bool((out["x"] - pl.Series([1.0, 2.0, 3.0, 4.0])).abs().max() < 1)
    (4, True)
    """
    lf = as_lazy(data)
    cols = _numeric(lf, columns)
    _refuse_helpers(lf, "add_noise")
    check_choice("method", method, get_args(NoiseMethod))
    seed = resolve_seed(seed)
    noise = check_noise(noise)
    if method != "additive" and len(cols) < 2:
        raise InvalidParameterError(f"method {method!r} needs at least 2 columns, got {cols}")
    d = noise / 100.0
    mean, cov = _moments(lf, cols, diagonal=method == "additive")
    _refuse_undefined_spread(lf, cols, np.diag(cov), "the noise's scale")
    lf = lf.with_row_index(_ROW)
    if method == "additive":
        sd = np.sqrt(np.diag(cov))
        new = [(pl.col(c) + _normal(seed, j) * float(d * sd[j])).alias(c) for j, c in enumerate(cols)]
    else:
        try:
            chol = np.linalg.cholesky(d * cov)
        except np.linalg.LinAlgError as exc:
            raise InvalidParameterError(f"the covariance matrix of {cols} is not positive definite") from exc
        z = [_normal(seed, j) for j in range(len(cols))]
        new = []
        for i, c in enumerate(cols):
            e = pl.sum_horizontal([z[j] * float(chol[i, j]) for j in range(i + 1)])
            y = pl.col(c).cast(pl.Float64) + e
            if method == "correlated_rescaled":
                y = float(mean[i]) + (y - float(mean[i])) / float(np.sqrt(1.0 + d))
            new.append(y.alias(c))
    return lf.with_columns(new).drop(_ROW)


def rank_swap(
    data: pl.LazyFrame | pl.DataFrame, columns: Sequence[str] | str, p: float = 5.0, seed: int | None = None
) -> pl.DataFrame:
    """Rank swapping: each value swapped with one at most ``p`` percent of the ranks away (each column apart).

    The columns are numeric, as sdcMicro's ``rankSwap`` (a String column has no ranks worth the name: its
    lexicographic order puts "10" before "9"). Sorts each column in memory. Missing values are left in place.
    `seed` keys the swaps (a secret; None: a fresh key from the operating system).

    Examples
    --------
    >>> out = rank_swap(pl.DataFrame({"x": list(range(10))}), "x", p=20, seed=1)
    >>> sorted(out["x"].to_list()) == list(range(10))
    True
    """
    lf = as_lazy(data)
    cols = _numeric(lf, columns)  # a String column was swapped in lexicographic order (sdcMicro: numeric only)
    df = lf.collect()  # materializes: rank swapping sorts the table's columns
    seed = resolve_seed(seed)
    p = check_percent(p)
    rng = np.random.default_rng(seed)
    out = []
    for c in cols:
        s = df[c]
        idx = np.flatnonzero(s.is_not_null().to_numpy())
        vals = s.to_numpy()[idx]
        order = idx[np.argsort(vals, kind="stable")]
        n = order.size
        window = int(np.floor(p / 100.0 * n))
        perm = np.arange(n)
        swapped = np.zeros(n, dtype=bool)
        for i in range(n):
            if swapped[i]:
                continue
            cand = np.flatnonzero(~swapped[i + 1 : min(n, i + window + 1)]) + i + 1
            if cand.size:
                j = int(rng.choice(cand))
                perm[i], perm[j] = perm[j], perm[i]
                swapped[j] = True
            swapped[i] = True
        result = s.to_list()
        ranked = [result[i] for i in order]
        for i, pos in enumerate(order):
            result[pos] = ranked[perm[i]]
        out.append(pl.Series(c, result, dtype=s.dtype))
    return df.with_columns(out)


def il1s(
    original: pl.LazyFrame | pl.DataFrame, perturbed: pl.LazyFrame | pl.DataFrame, columns: Sequence[str] | str
) -> float:
    """sdcMicro's IL1s: ``sum |x - y| / (sqrt(2) sd(x))`` over every cell (rows aligned by position).

    A constant column (``sd(x) = 0``) adds 0 when none of its cells changed and makes IL1s infinite when one did (a
    change has no spread to be measured against; 0 / 0 was a silent NaN). A column with fewer than 2 values, or a NaN or
    infinite value, is refused: its spread is undefined.

    Examples
    --------
    >>> a = pl.DataFrame({"x": [1.0, 2.0, 3.0]})
    >>> round(il1s(a, a.with_columns(pl.col("x") + 1), "x"), 6)  # 3 / sqrt(2)
    2.12132
    """
    x, y = as_lazy(original), as_lazy(perturbed)
    cols = _numeric(x, columns)
    _numeric(y, cols)
    refuse_built_names(cols, (), "il1s: column", "il1s uses for its helper columns")
    _same_rows(x, y)
    both = pl.concat(
        [x.select(cols), y.select([pl.col(c).alias(f"__anon_y{j}") for j, c in enumerate(cols)])], how="horizontal"
    )
    gaps = [exact_sum((pl.col(c).cast(pl.Float64) - pl.col(f"__anon_y{j}")).abs()) for j, c in enumerate(cols)]
    total = both.select(pl.concat_list(gaps)).collect().item().to_list()  # materializes: one value per column
    sd = np.sqrt(np.diag(_moments(x, cols, diagonal=True)[1]))
    _refuse_undefined_spread(x, cols, sd, "IL1s's scale")
    gap = np.array(total, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant column: 0 unchanged, inf changed (no scale)
        loss = np.where(sd > 0, gap / (sd * np.sqrt(2)), np.where(gap == 0, 0.0, np.inf))
    return float(np.sum(loss))  # exact sums: the same bits


def correlations(data: pl.LazyFrame | pl.DataFrame, columns: Sequence[str] | str) -> np.ndarray:
    """The Pearson correlation matrix of ``columns`` (two aggregation passes of exact sums, three when a column holds
    nulls: the same bits in every run).

    >>> correlations(pl.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 2.0, 1.0]}), ["a", "b"]).round(6).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    lf = as_lazy(data)
    cols = _numeric(lf, columns)
    _, cov = _moments(lf, cols)
    sd = np.sqrt(np.diag(cov))
    flat = [c for c, s in zip(cols, sd) if not np.isfinite(s) or s == 0]
    if flat:
        raise InvalidParameterError(
            f"columns {flat} are constant or have fewer than 2 values: their correlations are undefined"
        )
    return cov / np.outer(sd, sd)


def eigen_utility(
    original: pl.LazyFrame | pl.DataFrame, perturbed: pl.LazyFrame | pl.DataFrame, columns: Sequence[str] | str
) -> float:
    """sdcMicro's eigenvalue measure: ``sum |e_x - e_y| / e_x`` over the sorted eigenvalues of the
    correlation matrices of the original and the perturbed columns (0 when they agree).

    >>> a = pl.DataFrame({"x": [1.0, 2.0, 4.0], "y": [2.0, 1.0, 5.0]})
    >>> eigen_utility(a, a, ["x", "y"])
    0.0
    """
    _same_rows(as_lazy(original), as_lazy(perturbed))
    e1 = np.sort(np.linalg.eigvalsh(correlations(original, columns)))[::-1]
    e2 = np.sort(np.linalg.eigvalsh(correlations(perturbed, columns)))[::-1]
    return float(np.sum(np.abs(e1 - e2) / e1))
