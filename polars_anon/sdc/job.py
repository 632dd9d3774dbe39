"""The job file's ``[sdc]`` table: risk measures for the report, and perturbation steps.

```toml
[sdc]
keys = ["sex", "age", "region"]   # default: the job's qids
weight = "w"                      # sampling weights (optional)
household = "hh"                  # household ids: household risk (optional)
method = "approx"                 # individual risk: approx | exact
missing = "category"              # category | wildcard (a missing key matches any category)
alpha = 1.0
suda2 = true                      # also SUDA2 (default false)
model = "default"                 # also log-linear model risk: default | CE | PML | weightedLLM | IPF (needs weight)
interactions = [["sex", "age"]]   # its two-way interactions (optional)
# seed = 12345                    # the protect steps' secret key (default: a fresh key from the OS, not reproducible)

[[sdc.protect]]                   # perturbation steps, in order, on the input before anonymization
step = "pram"                     # pram | noise | rank_swap
column = "region"
pd = 0.8                          # invariant PRAM (sdcMicro's pd and alpha) ...
# matrix = { a = { a = 0.9, b = 0.1 } }   # ... or a given transition matrix
[[sdc.protect]]
step = "noise"
columns = ["income"]
noise = 50                        # percent of the standard deviation (sdcMicro's addNoise)
method = "correlated_rescaled"    # additive | correlated | correlated_rescaled
```

The protect steps' draws are keyed by ``seed``: a secret, since whoever knows it recomputes the draws and undoes the
perturbation. Without it each run draws a fresh key from the operating system (:func:`~polars_anon.sdc.perturbation.
resolve_seed`); the job's top-level ``seed`` does not key them. The report says whether a seed was given, never its
value.

The report's ``sdc`` key then holds the settings, the steps, and the figures of the input and of the published file
(:func:`polars_anon.sdc.measures.measure`). Local suppression, the cell-level protection, is a method of the road
(``method = "local_suppression"``), so its result is verified like any other method's.

>>> spec = parse_sdc({"keys": ["a"], "suda2": True, "protect": [{"step": "noise", "columns": ["x"]}]}, ["a"])
>>> spec.measures.keys, spec.measures.suda2, spec.steps[0].step
(('a',), True, 'noise')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

import polars as pl

from polars_anon._validate import check_seed
from polars_anon.errors import InvalidParameterError
from polars_anon.labels import label_exprs
from polars_anon.options import describe, type_matches
from polars_anon.sdc.perturbation import (
    NoiseMethod,
    add_noise,
    check_noise,
    check_pd,
    check_percent,
    check_pram_alpha,
    invariant_pram,
    pram,
    rank_swap,
    resolve_seed,
)
from polars_anon.sdc.spec import Measures
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = [
    "DEFAULTS",
    "STEPS",
    "SdcSpec",
    "Step",
    "apply_steps",
    "check_steps",
    "parse_sdc",
    "typed_matrix",
    "unchanged_after_steps",
]

_KEYS: dict[str, Any] = {
    "keys": list[str],
    "weight": str,
    "household": str,
    "method": str,
    "missing": str,
    "alpha": float,
    "suda2": bool,
    "dis_fraction": float,
    "model": str,
    "interactions": list[list[str]],
    "protect": list[dict[str, Any]],
    "seed": int,
}
STEPS: dict[str, dict[str, Any]] = {
    "pram": {"column": str, "pd": float, "alpha": float, "matrix": dict[str, dict[str, float]]},
    "noise": {"columns": list[str], "noise": float, "method": str},
    "rank_swap": {"columns": list[str], "p": float},
}
"""Each protection step and its keys' types (``step`` names it; the ``[sdc]`` table's ``seed`` keys them all)."""
_NUMBERS: dict[str, dict[str, Callable[[object, str], float]]] = {
    "pram": {"pd": check_pd, "alpha": check_pram_alpha},
    "noise": {"noise": check_noise},
    "rank_swap": {"p": check_percent},
}
"""Each step's number keys and their check (the step's own, refused when the job file is read, before any work)."""
_REQUIRED = {"pram": ("column",), "noise": ("columns",), "rank_swap": ("columns",)}
_FUNCTIONS: dict[str, Callable[..., Any]] = {"pram": invariant_pram, "noise": add_noise, "rank_swap": rank_swap}


def _defaults(step: str) -> dict[str, Any]:
    params = inspect.signature(_FUNCTIONS[step]).parameters
    return {
        k: params[k].default for k in STEPS[step] if k in params and params[k].default is not inspect.Parameter.empty
    }


DEFAULTS: dict[str, dict[str, Any]] = {step: _defaults(step) for step in STEPS}
"""Each step's parameters when the job file leaves them out (a PRAM step with a matrix has none): its function's
defaults (read from its signature: one place), applied and reported (:meth:`Step.describe`).

>>> DEFAULTS
{'pram': {'pd': 0.8, 'alpha': 0.5}, 'noise': {'noise': 150.0, 'method': 'additive'}, 'rank_swap': {'p': 5.0}}
"""


@dataclass(frozen=True)
class Step:
    """One protection step: its name and parameters (checked)."""

    step: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """The columns it changes."""
        return [self.params["column"]] if "column" in self.params else list(self.params["columns"])

    @property
    def keeps_values(self) -> bool:
        """True when it only moves a column's values between rows (rank swapping): each column keeps its distinct
        values, which a hierarchy built from them reads, and only row-aligned reads see the step."""
        return self.step == "rank_swap"

    @property
    def resolved(self) -> dict[str, Any]:
        """Its parameters with the defaults it left out (:data:`DEFAULTS`; none for a PRAM step with a matrix)."""
        defaults = {} if "matrix" in self.params else DEFAULTS[self.step]
        return {**self.params, **{k: v for k, v in defaults.items() if k not in self.params}}

    def describe(self) -> dict[str, Any]:
        """The step as the report records it: its name and every parameter it ran with, defaults included.

        >>> Step("pram", {"column": "c"}).describe()
        {'step': 'pram', 'column': 'c', 'pd': 0.8, 'alpha': 0.5}
        """
        return {"step": self.step, **self.resolved}


@dataclass(frozen=True)
class SdcSpec:
    """A parsed ``[sdc]`` table."""

    measures: Measures
    steps: tuple[Step, ...] = ()
    seed: int | None = None
    """The steps' secret key (None: a fresh key from the operating system per run)."""

    @property
    def columns(self) -> list[str]:
        """Every column the table names."""
        return [*self.measures.columns, *(c for s in self.steps for c in s.columns)]

    def describe_seed(self) -> str:
        """What the report says of the steps' key: whether one was given, never its value (it undoes the steps)."""
        if self.seed is None:
            return "not given: a fresh key from the operating system (not reproducible)"
        return "given (secret, not shown)"


def _step(raw: Mapping[str, Any], where: str) -> Step:
    if "step" not in raw:
        raise InvalidParameterError(f"{where}: missing key 'step' (one of {sorted(STEPS)})")
    name = raw["step"]
    if name not in STEPS:
        raise InvalidParameterError(f"{where}: step must be one of {sorted(STEPS)}, got {name!r}")
    keys = STEPS[name]
    unknown = [k for k in raw if k != "step" and k not in keys]
    if unknown:
        raise InvalidParameterError(f"{where}: step {name!r} takes no key {unknown[0]!r}; its keys: {sorted(keys)}")
    for key, hint in keys.items():
        if key in raw and not type_matches(raw[key], hint):
            raise InvalidParameterError(f"{where}: key {key!r} must be {describe(hint)}, got {raw[key]!r}")
    for key in _REQUIRED[name]:
        if key not in raw:
            raise InvalidParameterError(f"{where}: step {name!r} needs key {key!r}")
    if name == "pram" and "matrix" in raw and ("pd" in raw or "alpha" in raw):
        raise InvalidParameterError(f"{where}: step 'pram' takes a matrix or pd/alpha (invariant PRAM), not both")
    for key, check in _NUMBERS[name].items():
        if key in raw:
            check(raw[key], f"{where}: key {key!r}")
    if name == "noise" and "method" in raw and raw["method"] not in get_args(NoiseMethod):
        raise InvalidParameterError(
            f"{where}: key 'method' must be one of {list(get_args(NoiseMethod))}, got {raw['method']!r}"
        )
    return Step(name, {k: v for k, v in raw.items() if k != "step"})


def _pair(pair: list[str], where: str) -> tuple[str, str]:
    if len(pair) != 2:
        raise InvalidParameterError(f"{where}: each interaction names two keys, got {pair!r}")
    return (pair[0], pair[1])


def parse_sdc(raw: Mapping[str, Any], qids: Sequence[str], where: str = "job file: [sdc]") -> SdcSpec:
    """Check and parse an ``[sdc]`` table (every key named when refused); `qids` are the default keys."""
    unknown = [k for k in raw if k not in _KEYS]
    if unknown:
        raise InvalidParameterError(f"{where}: unknown key {unknown[0]!r}; keys: {sorted(_KEYS)}")
    for key, hint in _KEYS.items():
        if key in raw and not type_matches(raw[key], hint):
            raise InvalidParameterError(f"{where}: key {key!r} must be {describe(hint)}, got {raw[key]!r}")
    keys = tuple(raw.get("keys", qids))
    interactions = tuple(_pair(p, where) for p in raw.get("interactions", []))  # prefixed once: outside the try
    try:
        measures = Measures(
            keys=keys,
            weight=raw.get("weight"),
            household=raw.get("household"),
            method=raw.get("method", "approx"),
            missing=raw.get("missing", "category"),
            alpha=raw.get("alpha", 1.0),
            suda2=raw.get("suda2", False),
            dis_fraction=raw.get("dis_fraction", 0.01),
            model=raw.get("model"),
            interactions=interactions,
        )
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{where}: {str(exc).removeprefix('sdc: ')}") from None
    steps = tuple(_step(s, f"{where} protect[{i}]") for i, s in enumerate(raw.get("protect", [])))
    seed = raw.get("seed")
    if seed is not None:
        check_seed(seed, where=f"{where}: ")
    return SdcSpec(measures, steps, seed)


def _as_value(key: object, column: str, dtype: pl.DataType, where: str) -> object:
    """A matrix key of the job file (TOML keys are strings) as a value of `column`'s `dtype`; a non-string key (a
    Python call's) is left as it is for :func:`pram` to check."""
    if not isinstance(key, str) or dtype == pl.String:
        return key
    keys = pl.Series([key], dtype=pl.String)
    try:
        if dtype == pl.Boolean:
            parsed = keys.replace_strict({"true": True, "false": False}, default=None, return_dtype=pl.Boolean)
        elif dtype.is_temporal():
            parsed = keys.str.strptime(dtype, strict=True)  # pyright: ignore[reportArgumentType]
        else:
            parsed = keys.cast(dtype, strict=True)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        parsed = pl.Series([None])
    if parsed.null_count():
        raise InvalidParameterError(
            f"{where}: matrix key {key!r} is not a value of column {column!r} ({dtype}); write the column's values "
            'as strings (1 as "1", a date as "2020-01-31", true as "true")'
        )
    return parsed[0]


def typed_matrix(step: Step, schema: pl.Schema, where: str) -> dict[object, dict[object, float]]:
    """A PRAM step's matrix with its keys read as values of its column (the job's one reading: checked before any
    data is read and applied by :func:`apply_steps`); two keys naming one value are refused.

    >>> step = Step("pram", {"column": "hh", "matrix": {"1": {"2": 1.0}}})
    >>> typed_matrix(step, pl.Schema({"hh": pl.Int64}), "[sdc] protect[0]")
    {1: {2: 1.0}}
    """
    column = step.params["column"]
    dtype = schema[column]

    def read(keys: Mapping[object, Any], what: str) -> dict[object, Any]:
        out: dict[object, Any] = {}
        for key, value in keys.items():
            typed = _as_value(key, column, dtype, where)
            if typed in out:
                raise InvalidParameterError(
                    f"{where}: matrix {what} keys name the value {typed!r} of column {column!r} twice (last {key!r})"
                )
            out[typed] = value
        return out

    rows = read(step.params["matrix"], "row")
    return {src: read(dests, f"row {src!r}") for src, dests in rows.items()}


def check_steps(steps: Sequence[Step], schema: pl.Schema, where: str = "job file: [sdc]") -> None:
    """Refuse, before any data is read, a step whose parameters do not fit its column (a PRAM matrix key)."""
    for i, s in enumerate(steps):
        if s.step == "pram" and "matrix" in s.params:
            typed_matrix(s, schema, f"{where} protect[{i}]")


def apply_steps(lf: pl.LazyFrame, steps: Sequence[Step], seed: int | None = None) -> pl.LazyFrame:
    """Apply the protection steps in order, each keyed with `seed` plus its position (`seed` a secret; None: one fresh
    key from the operating system for the run, :func:`~polars_anon.sdc.perturbation.resolve_seed`).

    >>> lf = pl.LazyFrame({"g": ["a", "b"] * 4, "x": [1.0, 2.0, 3.0, 4.0] * 2})
    >>> apply_steps(lf, [Step("rank_swap", {"columns": ["x"], "p": 10.0})]).collect().height
    8
    """
    key = resolve_seed(seed)  # the steps' keys key + i are as secret as key: knowing one means knowing them all
    for i, s in enumerate(steps):
        where = f"job file: [sdc] protect[{i}]"
        matrix = typed_matrix(s, lf.collect_schema(), where) if s.step == "pram" and "matrix" in s.params else None
        try:
            lf = _apply_step(lf, s, matrix, key + i)
        except InvalidParameterError as exc:  # the step's own refusal, named by its place in the job file
            raise InvalidParameterError(f"{where}: {exc}") from None
    return lf


def _apply_step(lf: pl.LazyFrame, s: Step, matrix: dict[object, dict[object, float]] | None, seed: int) -> pl.LazyFrame:
    """One protection step applied with its parameters' defaults (:data:`DEFAULTS`) and its key `seed`; `matrix`: a
    PRAM step's, read by :func:`typed_matrix`."""
    p = s.resolved
    if matrix is not None:
        return pram(lf, p["column"], matrix, seed=seed)
    if s.step == "pram":
        return invariant_pram(lf, p["column"], pd=p["pd"], alpha=p["alpha"], seed=seed)
    if s.step == "noise":
        return add_noise(lf, p["columns"], noise=p["noise"], method=p["method"], seed=seed)
    return rank_swap(lf, p["columns"], p=p["p"], seed=seed).lazy()


def unchanged_after_steps(
    pre: pl.LazyFrame, stepped: pl.LazyFrame, tmap: TupleMap | None, qids: Sequence[str], steps: Sequence[Step]
) -> dict[str, float]:
    """The share of rows each qid a protect step changed was published with its input value (before the steps): a
    cell the step changed counts as changed, as a cell the method blanked or generalized does (the map alone counts
    only the method's, from the stepped values). `pre` is the job's input, `stepped` :func:`apply_steps`'s frame of it
    (row-aligned: every step keeps the rows in order), `tmap` the method's map from `stepped`'s qid labels. Empty when
    no step touched a qid or the map keeps no original tuple (a row or partition map: no share either way).

    One group-by of both frames side by side, by the stepped qid labels, counting the rows each touched qid kept
    through the steps; then the map says which of those patterns the method published unchanged.

    >>> lf = pl.LazyFrame({"g": ["a", "a", "b", "b"]})
    >>> stepped = pram(lf, "g", {"a": {"b": 1.0}, "b": {"b": 1.0}}, seed=1)  # every a becomes b: 2 of 4 rows changed
    >>> m = TupleMap.from_labels(pl.DataFrame({"g": ["b"], "size": [4]}), ["g"], {"g": pl.Series(["b"])})
    >>> unchanged_after_steps(lf, stepped, m, ["g"], [Step("pram", {"column": "g", "matrix": {}})])
    {'g': 0.5}
    """
    touched = [q for q in qids if any(q in s.columns for s in steps)]
    if not touched or tmap is None or tmap.by_row or tmap.by_partition or not tmap.n_rows:
        return {}
    qids = list(qids)
    post = [f"__anon_post{i}" for i in range(len(touched))]
    pre_cols = [f"__anon_pre{i}" for i in range(len(touched))]
    labelled = (
        stepped.select([*(pl.col(q) for q in qids), *(pl.col(q).alias(p) for q, p in zip(touched, post))]).with_columns(
            label_exprs(stepped.collect_schema(), qids)
        )  # the map's labels, as the road made them
    )
    side = pre.select([pl.col(q).alias(p) for q, p in zip(touched, pre_cols)])
    same = [f"__anon_same{i}" for i in range(len(touched))]
    kept = (
        pl.concat([labelled, side], how="horizontal")
        .group_by(qids)
        .agg([pl.col(a).eq_missing(pl.col(b)).sum().alias(c) for a, b, c in zip(pre_cols, post, same)])
    )
    patterns = tmap.frame.lazy().select([*qids, *(out_col(q) for q in touched), SUPPRESSED, SIZE])
    joined = kept.join(patterns, on=qids, how="inner", nulls_equal=True)
    published = [
        pl.col(c).filter(~pl.col(SUPPRESSED) & (pl.col(q) == pl.col(out_col(q))).fill_null(False)).sum().alias(q)
        for q, c in zip(touched, same)
    ]
    row = joined.select(published).collect().row(0, named=True)  # materializes: one row
    return {q: float(row[q] or 0) / tmap.n_rows for q in touched}
