"""(ε, δ)-differential privacy by random sampling, full-domain generalization and suppression (SafePub).

The release mechanism (Li, Qardaji and Su, ASIACCS 2012; Bild, Kuhn and Prasser, PETS 2018):

1. every input row is kept with probability β, independently of its values (a keyed hash of its row
   number, :func:`keep_threshold` and :func:`sample_frame`);
2. the sample is generalized to one full-domain transformation (a level per quasi-identifier) chosen
   without looking at the data (``transformation=``) or by a differentially private search
   (:mod:`polars_anon.algorithms.dpsearch`, spending ``budget_for_search`` of ε) on a second sample drawn
   the same way with an independent key (:attr:`Release.search_key`);
3. every class of fewer than k rows is suppressed.

Li, Qardaji and Su (Theorem 5) show that a *strongly safe* k-anonymization (one whose generalization does
not depend on the data) preceded by β-sampling satisfies (ε, δ)-differential privacy for every
ε >= -ln(1 - β) and

    δ = d(k, β, ε) = max over n >= n_m of  sum_{j > γ n}^{n} C(n, j) β^j (1 - β)^(n - j),
    γ = (e^ε - 1 + β) / e^ε,   n_m = ceil(k / γ - 1).

The search runs on its own β-sample, independent of the released one: by Li, Qardaji and Su's Theorem 1
(amplification by sampling), an ε1-differentially private algorithm run on a β-sample of the input is
ln(1 + β (e^ε1 - 1))-differentially private, so the search may spend ε1 = ln(1 + (e^ε_search - 1) / β)
on its sample (:func:`search_epsilon_on_sample`) and cost ε_search of the input's budget; the release
(the transformation, then the other sample generalized to it) composes the two: ε_search + ε_anon = ε.

So β = 1 - e^(-ε_anon) (:func:`sampling_probability`), and k is the smallest integer with
d(k, β, ε_anon) <= δ (:func:`minimal_k`). The maximum over an infinite range is found exactly: each term
a(n) is at most the Chernoff-Hoeffding bound c(n) = exp(-n D(γ‖β)), D the binomial's relative entropy
γ ln(γ/β) + (1 - γ) ln((1 - γ)/(1 - β)) (Hoeffding 1963, Thm. 1), which decreases in n, so the terms
beyond the first n where c(n) is below the running maximum cannot raise it (SafePub §3; ARX's
``ParameterCalculation`` uses the weaker exponent γ ln(γ/β) - (γ - β), D's lower bound by ln x >= 1 - 1/x:
the same k, found over a range up to 2,000 times longer at ε = 7).

**Working range.** k is computed up to ``MAX_K`` and the tail a(n) over at most ``TAIL_MAX`` rows (the
range ln(2/δ)/D, known before anything is allocated); beyond either, :func:`minimal_k` refuses the
parameters with an InvalidParameterError saying which to change. β rounds to 1 from ε_anon ≈ 22.2 (the 32-bit
hash), where no sampling is left to amplify: refused alike.

>>> round(sampling_probability(1.0), 6)
0.632121
>>> minimal_k(1.0, 1e-6, beta=0.5) <= minimal_k(0.5, 1e-6, beta=0.5)  # at a fixed β, more ε needs no larger k
True
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl

from polars_anon._validate import check_seed, is_integer
from polars_anon.errors import InvalidParameterError
from polars_anon.privacy.base import Check, ClassView, Context, Model, check_fraction, check_positive

__all__ = [
    "HASH_BITS",
    "SEARCH_SHARE",
    "SEED_GIVEN",
    "SEED_NOT_GIVEN",
    "DifferentialPrivacy",
    "Release",
    "delta_of",
    "gamma_of",
    "keep_mask",
    "keep_threshold",
    "minimal_k",
    "sample_frame",
    "sample_sql_steps",
    "sampling_probability",
    "search_epsilon_on_sample",
]

Utility = Literal["loss", "discernibility", "classes"]
UTILITIES: tuple[str, ...] = ("loss", "discernibility", "classes")
SEARCH_SHARE = 0.05
"""The default share of ε for the search: on Adult (δ = 1e-6, 2 seeds, the draw's expected loss) 0.05 was within
0.004 of the best of the shares 0.02, 0.03, 0.05, 0.1, 0.2 at ε = 0.1, 0.5 and 1, and below 0.1 at ε = 2
(``docs/concepts/differential-privacy.md``)."""
HASH_BITS = 32
"""The sampling hash is a 32-bit value: a row is kept when it falls below ``keep_threshold``."""
MAX_K = 1_000_000
"""The largest k the model computes (its working range)."""
TAIL_MAX = 1 << 21
"""The most rows n the binomial tail a(n) is computed over (2,097,152: 16 MiB per array): ε_anon about 11.4 at
δ = 1e-6 (where k is near ``MAX_K`` already), or ε_anon below about 2e-5 (β too small to sample any table)."""
SEED_GIVEN = "given (secret, not shown)"
SEED_NOT_GIVEN = "not given: fresh keys from the operating system (not reproducible)"
"""What the report says of the release's seed (never its value: whoever knows it knows which rows were sampled)."""


def sampling_probability(epsilon: float) -> float:
    """β = 1 - e^(-ε): the largest sampling probability with ε >= -ln(1 - β) (Li, Qardaji and Su, Thm. 5).

    >>> round(sampling_probability(2.0), 4)
    0.8647
    """
    return -math.expm1(-epsilon)


def search_epsilon_on_sample(epsilon_search: float, beta: float) -> float:
    """ε1 = ln(1 + (e^ε_search - 1) / β): what an algorithm run on a β-sample of the input may spend so that it is
    ε_search-differentially private for the input (Li, Qardaji and Su, ASIACCS 2012, Theorem 1:
    ε_search = ln(1 + β (e^ε1 - 1)), solved for ε1).

    >>> e1 = search_epsilon_on_sample(0.01, 0.0861)
    >>> round(e1, 4), round(math.log1p(0.0861 * math.expm1(e1)), 12)  # 11 times the budget, the same cost
    (0.1104, 0.01)
    """
    if epsilon_search <= 0:
        return 0.0
    return math.log1p(math.expm1(epsilon_search) / beta)


def gamma_of(epsilon: float, beta: float) -> float:
    """γ = (e^ε - 1 + β) / e^ε.

    >>> round(gamma_of(1.0, sampling_probability(1.0)), 6)
    0.864665
    """
    return 1.0 - (1.0 - beta) * math.exp(-epsilon)  # (e^ε - 1 + β) / e^ε without e^ε (it overflows from ε = 710)


def _rate(beta: float, gamma: float) -> float:
    """D(γ‖β), the exponent of the bound c(n) = exp(-n D) on a(n); 0 when β rounds to 1 (nothing to sample)."""
    if not 0.0 < beta < gamma < 1.0:
        return 0.0
    return gamma * math.log(gamma / beta) + (1.0 - gamma) * math.log((1.0 - gamma) / (1.0 - beta))


def _chernoff(n: np.ndarray, beta: float, gamma: float) -> np.ndarray:
    return np.exp(-n * _rate(beta, gamma))


def tail_range(epsilon: float, beta: float, delta: float) -> int:
    """N, the last n whose a(n) :func:`minimal_k` computes (beyond it c(n) < δ / 2): ceil(ln(2/δ) / D) + 1, known
    before any allocation; beyond ``TAIL_MAX`` the parameters are refused (:func:`out_of_range`).

    >>> tail_range(1.0, sampling_probability(1.0), 1e-6)
    109
    """
    rate = _rate(beta, gamma_of(epsilon, beta))
    need = math.log(2 / delta) / rate if rate > 0 else math.inf
    if need + 1 > TAIL_MAX:
        rows = "every n (beta rounds to 1: nothing is left to sample)" if rate <= 0 else f"{math.ceil(need):,} rows"
        raise InvalidParameterError(
            out_of_range(epsilon, beta, delta, f"the bound on delta needs a binomial tail over {rows}")
        )
    return int(math.ceil(need)) + 1


def out_of_range(epsilon: float, beta: float, delta: float, why: str) -> str:
    """The refusal of an ε (for the sampling) and δ whose minimal k lies beyond the working range, with the advice:
    k is least for ε_anon up to about 0.1 (60 at δ = 1e-6) and rises with ε_anon beyond (74 at 1, 2044 at 5)."""
    change = "lower epsilon (k rises with epsilon above about 0.1)" if epsilon > 1 else "raise epsilon"
    return (
        f"epsilon {epsilon:.6g} for the sampling (beta={beta:.6g}) and delta={delta!r} lie outside the working range "
        f"(k <= {MAX_K:,}, a binomial tail over at most {TAIL_MAX:,} rows: epsilon for the sampling between about "
        f"2e-05 and 11 at delta=1e-06): {why}; {change}, or raise delta"
    )


def _tail(n: np.ndarray, beta: float, gamma: float) -> np.ndarray:
    """a(n) = P(X > γ n) for X ~ Binomial(n, β); γ n rounded down a hair so that no term is ever left out."""
    from scipy.stats import binom

    j = np.floor(n * gamma * (1 - 1e-12)).astype(np.int64)
    return binom.sf(j, n, beta)


@lru_cache(maxsize=256)
def _suffix_max(epsilon: float, beta: float, delta: float) -> tuple[np.ndarray, float]:
    """a(n) for n = 0..N, its suffix maxima, and the bound on every a(n) beyond N (below delta / 2)."""
    gamma = gamma_of(epsilon, beta)
    last = tail_range(epsilon, beta, delta)  # c(n) < delta / 2 beyond; refused before allocating beyond TAIL_MAX
    n = np.arange(last + 1, dtype=np.int64)
    a = _tail(n, beta, gamma)
    suffix = np.maximum.accumulate(a[::-1])[::-1]
    return suffix, float(_chernoff(np.array([last + 1]), beta, gamma)[0])


def delta_of(k: int, epsilon: float, beta: float) -> float:
    """d(k, β, ε), the δ that β-sampling and suppressing classes below k give at ε (Li, Qardaji and Su, Thm. 5).

    >>> delta_of(10, 1.0, sampling_probability(1.0)) > delta_of(20, 1.0, sampling_probability(1.0))
    True
    """
    gamma = gamma_of(epsilon, beta)
    n_m = max(int(math.ceil(k / gamma - 1)), 0)
    rate = _rate(beta, gamma)
    best, n = 0.0, n_m
    while True:  # a(n) <= c(n), c decreasing: stop once the bound is below the maximum found
        chunk = np.arange(n, n + 4096, dtype=np.int64)
        a = _tail(chunk, beta, gamma)
        c = np.exp(-chunk * rate)
        best = max(best, float(np.maximum.accumulate(a)[-1]))
        below = np.nonzero(c <= np.maximum.accumulate(np.maximum(a, best)))[0]
        if len(below):
            return max(best, float(a[: below[0] + 1].max()))
        n += 4096


def minimal_k(epsilon: float, delta: float, beta: float | None = None) -> int:
    """The smallest k with d(k, β, ε) <= δ (β: default 1 - e^(-ε)).

    >>> [minimal_k(e, 1e-6) for e in (0.5, 1.0, 2.0)]
    [63, 74, 131]
    """
    beta = sampling_probability(epsilon) if beta is None else beta
    gamma = gamma_of(epsilon, beta)
    suffix, beyond = _suffix_max(epsilon, beta, delta)
    if beyond > delta:  # cannot happen (the range was chosen so), kept as a guard
        raise ValueError("the binomial tail range is too short")
    # d(k) = max(suffix[n_m(k)], terms beyond the range) and the latter are below delta: find the first k whose
    # n_m = ceil(k / gamma - 1) starts a suffix below delta
    ok = np.nonzero(suffix <= delta)[0]
    first_n = int(ok[0]) if len(ok) else len(suffix)
    k = max(int(math.floor((first_n + 1) * gamma)) - 1, 1)
    while int(math.ceil(k / gamma - 1)) < first_n:
        k += 1
    while k > 1 and int(math.ceil((k - 1) / gamma - 1)) >= first_n:
        k -= 1
    if k > MAX_K:
        raise InvalidParameterError(out_of_range(epsilon, beta, delta, f"they need k={k:,}"))
    return k


# ---------------------------------------------------------------------------------------------- sampling
_M32 = (1 << 32) - 1
_MULT = 0x045D9F3B
"""An odd 27-bit multiplier: products of 32-bit values stay below 2^59, so every engine computes the hash
exactly in signed 64-bit integers (DuckDB BIGINT, Spark LONG, Polars Int64)."""


def keep_threshold(beta: float) -> int:
    """Rows whose hash (uniform on 0 .. 2^32 - 1) is below this are kept: a probability of at most β.

    >>> keep_threshold(0.5)
    2147483648
    """
    return int(math.floor(beta * (1 << HASH_BITS)))


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> 16)
    x = (x * _MULT) & _M32
    x = x ^ (x >> 16)
    x = (x * _MULT) & _M32
    return x ^ (x >> 16)


def keep_mask(n_rows: int, key: tuple[int, int, int], threshold: int, start: int = 0) -> np.ndarray:
    """The reference sampler: for rows ``start .. start + n_rows - 1``, whether each is kept (NumPy).

    Per row number r (0-based, input order): h = mix(mix(mix(lo(r) xor k1) xor hi(r) xor k2) xor k3), where
    mix is a 32-bit xorshift-multiply bijection, lo and hi the low and high 32 bits of r. For a fixed key
    and high word the hash is a bijection of the low word, so over 2^32 consecutive rows exactly
    `threshold` are kept; the key (from the seed, or the operating system's random source) decides which.

    >>> int(keep_mask(1 << 16, (1, 2, 3), keep_threshold(0.25)).sum())
    16577
    """
    r = np.arange(start, start + n_rows, dtype=np.int64)
    k1, k2, k3 = key
    h = _mix((r & _M32) ^ k1)
    h = _mix(h ^ (r >> 32) ^ k2)
    h = _mix(h ^ k3)
    return h < threshold


ROW, HASH = "__anon_sample_row", "__anon_sample_hash"
"""The helper columns the engines compute the hash in (step by step: an inlined hash would repeat its
argument twice per step, a tree of 2^17 nodes)."""


def _steps(key: tuple[int, int, int]) -> list[tuple[str, int]]:
    """The hash as steps, each computing the new hash from the last one (and the row number): (op, constant)."""
    mix = [("shift", 0), ("mult", _MULT), ("shift", 0), ("mult", _MULT), ("shift", 0)]
    return [("low", key[0]), *mix, ("high", key[1]), *mix, ("key", key[2]), *mix]


def sample_frame(lf: pl.LazyFrame, key: tuple[int, int, int], threshold: int) -> pl.LazyFrame:
    """The rows of `lf` the sampler keeps, in order (Polars: :func:`keep_mask` as lazy column steps).

    >>> key, t = (1, 2, 3), keep_threshold(0.3)
    >>> sample_frame(pl.LazyFrame({"x": range(5000)}), key, t).collect().height == int(keep_mask(5000, key, t).sum())
    True
    """
    h, r = pl.col(HASH), pl.col(ROW)
    out = lf.with_row_index(ROW).with_columns(pl.col(ROW).cast(pl.Int64))
    for op, c in _steps(key):
        lit = pl.lit(c, dtype=pl.Int64)
        step = {
            "low": (r % (1 << 32)).xor(lit),
            "high": h.xor(r // (1 << 32)).xor(lit),
            "key": h.xor(lit),
            "shift": h.xor(h // 65536),
            "mult": (h * lit) % (1 << 32),
        }[op]
        out = out.with_columns(step.alias(HASH))
    return out.filter(h < threshold).drop(ROW, HASH)


def sample_sql_steps(key: tuple[int, int, int], dialect: Literal["duckdb", "spark"]) -> list[str]:
    """The hash as SQL expressions, each the new value of column ``__anon_sample_hash`` from the last one and the
    0-based row number ``__anon_sample_row`` (BIGINT); the row is kept when the last value is below the threshold.

    >>> sample_sql_steps((1, 2, 3), "duckdb")[0]
    'xor(__anon_sample_row % 4294967296, 1)'
    """

    def xor(a: str, b: str) -> str:
        return f"xor({a}, {b})" if dialect == "duckdb" else f"(({a}) ^ ({b}))"

    def div(a: str, by: int) -> str:
        return f"({a} // {by})" if dialect == "duckdb" else f"div({a}, {by})"

    h, r = HASH, ROW
    out = []
    for op, c in _steps(key):
        out.append(
            {
                "low": xor(f"{r} % 4294967296", str(c)),
                "high": xor(xor(h, div(r, 4294967296)), str(c)),
                "key": xor(h, str(c)),
                "shift": xor(h, div(h, 65536)),
                "mult": f"(({h} * {c}) % 4294967296)",
            }[op]
        )
    return out


# ---------------------------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Release:
    """What a run fixed for one release: the keys, β as sampled, k, the input's row count."""

    key: tuple[int, int, int]
    """The sampling hash's key (three 32-bit words)."""
    search_key: tuple[int, int, int]
    """The key of the search's own sample (drawn independently of `key`, same threshold)."""
    search_seed: int
    """Seeds the search's random generator (NumPy's PCG64)."""
    reproducible: bool
    """False when the keys came from the operating system's random source (no seed given)."""
    threshold: int
    beta: float
    """The sampling probability actually used: threshold / 2^32 (at most 1 - e^(-ε_anon))."""
    k: int
    n_rows: int
    """Rows of the whole input (before sampling)."""
    k_asked: int | None = None
    """The k the request asked for (`k` is the larger of it and the model's own)."""


def _keys(seed: int | None) -> tuple[tuple[int, int, int], tuple[int, int, int], int, bool]:
    """The release sample's key, the search sample's key, the search's seed, whether reproducible."""
    if seed is None:
        raw = secrets.token_bytes(32)  # the operating system's cryptographically strong source
        other = secrets.token_bytes(12)
    else:
        raw = hashlib.sha256(f"polars_anon differential-privacy seed {seed}".encode()).digest()
        other = hashlib.sha256(f"polars_anon differential-privacy search sample seed {seed}".encode()).digest()
    words = [int.from_bytes(raw[i : i + 4], "big") for i in range(0, 12, 4)]
    search = [int.from_bytes(other[i : i + 4], "big") for i in range(0, 12, 4)]
    key, search_key = (words[0], words[1], words[2]), (search[0], search[1], search[2])
    return key, search_key, int.from_bytes(raw[16:32], "big"), seed is not None


def _levels_ok(levels: object) -> bool:
    return isinstance(levels, dict) and all(isinstance(q, str) and is_integer(v) and v >= 0 for q, v in levels.items())


class _SizeCheck(Check):
    """Every published class holds at least k rows (the suppression step of the mechanism)."""

    def __init__(self, model: DifferentialPrivacy, k: int) -> None:
        super().__init__(model)
        self.k = k

    def measure(self, view: ClassView) -> np.ndarray:
        return view.size.astype(np.float64)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure >= self.k


@dataclass(frozen=True)
class DifferentialPrivacy(Model):
    """(ε, δ)-differential privacy for the whole published table (SafePub); with ``method="fulldomain"`` only.

    Every published column must be a quasi-identifier (a column published as it is is refused: the guarantee
    covers the whole row), generalized by a hierarchy that was not built from the data.

    Parameters
    ----------
    epsilon
        The privacy budget ε > 0 of the whole release.
    delta
        δ in (0, 1): the probability with which the ε bound may fail (choose well below 1 / rows).
    budget_for_search
        The share of ε spent choosing the transformation with the exponential mechanism, in [0, 1); the rest,
        ε_anon = ε (1 - share), fixes β and k. Default :data:`SEARCH_SHARE` (0.05; ARX's is 0.1); 0 (and only
        0) with a given `transformation`.
    transformation
        A level per quasi-identifier chosen without looking at the data: no search, no budget spent on one.
    utility
        The score the search maximizes (each with a bounded calibration, see
        :mod:`polars_anon.algorithms.dpsearch`): ``"loss"`` (granularity: average cell loss, SafePub §5.1, classes
        a little below k counted in part), ``"discernibility"`` (SafePub §5.2) or ``"classes"`` (the number of
        classes).
    steps
        Iterations of the walk over a lattice too large to draw from whole (more than
        :data:`polars_anon.algorithms.dpsearch.LATTICE_DRAW_MAX` vectors; each an exponential-mechanism draw).
    seed
        Seeds the sampling hash and the search (reproducible releases, tests); a secret, like the keys it makes:
        the report says only that one was given. None (default): keys drawn from the operating system's
        cryptographically strong random source; the report says "not reproducible".

    Examples
    --------
    >>> m = DifferentialPrivacy(epsilon=1.0, delta=1e-6, transformation={"age": 1})
    >>> m.epsilon_anonymization, m.k
    (1.0, 74)
    """

    epsilon: float
    delta: float
    budget_for_search: float | None = field(default=None, metadata={"expects": "a number in [0, 1)"})
    transformation: dict[str, int] | None = field(
        default=None, metadata={"expects": "a mapping from quasi-identifiers to levels"}
    )
    utility: Utility = field(default="loss", metadata={"expects": f"one of {list(UTILITIES)}"})
    steps: int = 100
    seed: int | None = field(default=None, metadata={"expects": "an integer or none"})
    release: Release | None = field(default=None, init=False, compare=False, repr=False)
    """Set by the road for one run (:meth:`prepared`)."""

    name: ClassVar[str] = "differential-privacy"
    quiet_defaults: ClassVar[tuple[str, ...]] = ("steps", "utility", "seed")

    def __post_init__(self) -> None:
        where = "differential-privacy"
        check_positive(where, "epsilon", self.epsilon)
        check_fraction(where, "delta", self.delta, low_open=True, high_open=True)
        if self.budget_for_search is not None:
            check_fraction(where, "budget_for_search", self.budget_for_search, high_open=True)
            if self.transformation is not None and self.budget_for_search != 0:
                raise InvalidParameterError(
                    f"{where}: budget_for_search={self.budget_for_search!r} with a given transformation, which is "
                    "chosen without the data and spends no budget; drop budget_for_search or the transformation"
                )
        if self.utility not in UTILITIES:
            raise InvalidParameterError(f"{where}: utility must be one of {list(UTILITIES)}, got {self.utility!r}")
        check_positive(where, "steps", self.steps, integer=True)
        check_seed(self.seed, optional=True, where=f"{where}: ")
        levels = self.transformation
        if levels is not None and not _levels_ok(levels):
            raise InvalidParameterError(
                f"{where}: transformation must map each quasi-identifier to a level >= 0, got {levels!r}"
            )
        if self.epsilon_anonymization <= 0:
            raise InvalidParameterError(f"{where}: nothing of epsilon={self.epsilon!r} is left for the sampling")
        self._check_range(where)

    def _check_range(self, where: str) -> None:
        """Refuse parameters whose k lies beyond the working range now (:func:`minimal_k`, before any allocation
        beyond ``TAIL_MAX``), naming what the user gave and what to change."""
        try:
            minimal_k(self.epsilon_anonymization, self.delta, self.beta)  # cached: the k property reads it again
        except InvalidParameterError as exc:
            eps, share = self.epsilon_anonymization, self.search_share
            given = f"epsilon={self.epsilon!r}, delta={self.delta!r}"
            if share:
                given += f", budget_for_search={share!r} (epsilon {eps:.6g} left for the sampling)"
                more = "larger" if eps > 1 else "smaller"
                raise InvalidParameterError(
                    f"{where}: {given}: {exc}, or give the search a {more} budget_for_search"
                ) from None
            raise InvalidParameterError(f"{where}: {given}: {exc}") from None

    # ------------------------------------------------------------------ the accounting
    @property
    def data_dependent(self) -> bool:
        """True when the transformation is searched for (not given)."""
        return self.transformation is None

    @property
    def search_share(self) -> float:
        if self.transformation is not None:
            return 0.0
        return SEARCH_SHARE if self.budget_for_search is None else float(self.budget_for_search)

    @property
    def epsilon_search(self) -> float:
        """ε spent by the search (sequential composition: ε_search + ε_anon = ε)."""
        return self.epsilon * self.search_share

    @property
    def epsilon_anonymization(self) -> float:
        """ε left for sampling and suppression: β and k come from it."""
        return self.epsilon - self.epsilon_search

    @property
    def beta(self) -> float:
        """The sampling probability as used: ``keep_threshold(1 - e^(-ε_anon)) / 2^32``."""
        return keep_threshold(sampling_probability(self.epsilon_anonymization)) / (1 << HASH_BITS)

    @property
    def k(self) -> int:
        """The smallest class size the mechanism keeps: minimal k with d(k, β, ε_anon) <= δ."""
        return minimal_k(self.epsilon_anonymization, self.delta, self.beta)

    def advice(self, k: int | None = None) -> str:
        """What lowers k or enlarges the sample, for the refusals of a table too small for the model: k comes from
        ε_anon and δ, not from the k asked, and rises with ε_anon above about 1 (74 at 1, 2044 at 5 at δ = 1e-6),
        while below it a larger ε_anon keeps more rows than it adds to k. When the k enforced, `k`, is the k asked,
        above the model's own, that k binds: lowering it helps, δ does not.

        >>> DifferentialPrivacy(5.0, 1e-6, transformation={"a": 0}).advice().split("here ")[1]
        '(k=2044 at epsilon 5 for the sampling): lower epsilon, raise delta, or use a table with more rows'
        >>> DifferentialPrivacy(1.0, 0.2, transformation={"a": 0}).advice(60).split(":")[0]
        "the k asked (k=60) binds, above the model's own k=4 (from epsilon and delta)"
        """
        if k is not None and k > self.k:
            return (
                f"the k asked (k={k}) binds, above the model's own k={self.k} (from epsilon and delta): lower k "
                f"(below {self.k} it changes nothing: the model enforces {self.k}), or use a table with more rows "
                f"(each row is kept with probability {self.beta:.4f})"
            )
        eps, search = self.epsilon_anonymization, self.data_dependent
        if eps > 1:
            budget = ", give the search a larger budget_for_search" if search else ""
            return (
                "k comes from epsilon and delta, not from the k asked, and rises with epsilon here "
                f"(k={self.k} at epsilon {eps:.4g} for the sampling): lower epsilon{budget}, raise delta, "
                "or use a table with more rows"
            )
        budget = ", give the search a smaller budget_for_search" if search and self.search_share else ""
        return (
            "k comes from epsilon and delta, not from the k asked: raise epsilon (each row is kept with probability "
            f"1 - e^-epsilon, here {self.beta:.4f}){budget}, raise delta, or use a table with more rows"
        )

    def prepared(self, n_rows: int, k: int, k_asked: int | None = None) -> DifferentialPrivacy:
        """A copy carrying one run's :class:`Release` (keys from the seed or the OS, `k` the class size enforced,
        `k_asked` the request's)."""
        key, search_key, search_seed, reproducible = _keys(self.seed)
        threshold = keep_threshold(sampling_probability(self.epsilon_anonymization))
        out = DifferentialPrivacy(**{f: getattr(self, f) for f in _INIT})
        beta = threshold / (1 << HASH_BITS)
        release = Release(key, search_key, search_seed, reproducible, threshold, beta, k, n_rows, k_asked)
        object.__setattr__(out, "release", release)
        return out

    def bind(self, context: Context) -> Check:
        k = self.release.k if self.release is not None else self.k
        return _SizeCheck(self, k)

    def describe(self) -> str:
        """A one-line name with its parameters (never the run's keys)."""
        shown = {f: getattr(self, f) for f in _INIT if getattr(self, f) is not None and f not in self.quiet_defaults}
        return f"{self.name} ({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def describe_seed(self) -> str:
        """What the report says of the seed: whether one was given, never its value (it fixes which rows were
        sampled, and the secrecy of the sample is part of the guarantee's amplification).

        >>> DifferentialPrivacy(1.0, 1e-6, seed=7).describe_seed()
        'given (secret, not shown)'
        """
        return SEED_NOT_GIVEN if self.seed is None else SEED_GIVEN

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.name}
        out |= {f: getattr(self, f) for f in _INIT}
        out |= {"budget_for_search": self.search_share, "beta": self.beta, "k": self.k, "seed": self.describe_seed()}
        return out


_INIT = ("epsilon", "delta", "budget_for_search", "transformation", "utility", "steps", "seed")
