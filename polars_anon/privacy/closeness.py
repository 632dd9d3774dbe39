"""t-closeness: each class's sensitive distribution within t of the table's [Li et al. 2007].

The distance is the Earth Mover's distance (EMD) between the class's distribution
P and the input's Q, with one of three ground distances:

- ``"equal"``: every two values at distance 1, so ``EMD = 1/2 sum |p_i - q_i|``;
- ``"ordered"``: values in order (numbers, dates, strings sorted, an Enum's in its
  order on every engine, or the ``order`` given), at distance ``|i - j| / (m - 1)``,
  so ``EMD = 1/(m-1) sum_i |r_1 + ... + r_i|``
  with ``r_i = p_i - q_i`` (Li et al. §4.2; m counts the input's distinct values);
- ``"hierarchical"``: the sensitive attribute's hierarchy, two values at distance
  ``level(LCA) / level(root)`` (a node's level is its longest path down to a leaf).
  This is an ultrametric, so the EMD is the flow over the tree's edges:
  ``sum over nodes N below the root of (level(parent) - level(N)) / (2 H) |extra(N)|``
  with ``extra(N)`` the sum of ``p_i - q_i`` over N's leaves; equal to Li et al.'s
  ``sum_N level(N)/H min(pos_extra(N), neg_extra(N))`` (tested on their example).

Monotone under generalization (the EMD is convex in P), not with suppression (ARX's flags).

>>> import numpy as np
>>> from polars_anon.privacy.base import ClassView, Context, Domain
>>> salary = pl.Series([3, 4, 5, 6, 7, 8, 9, 10, 11])  # Li et al. 2007, Table 3: P1 = {3k, 4k, 5k}
>>> ctx = Context({"salary": Domain("salary", salary, np.full(9, 1 / 9))}, 9)
>>> view = ClassView(np.array([3]), {"salary": np.array([[1, 1, 1, 0, 0, 0, 0, 0, 0]])})
>>> TCloseness("salary", t=0.2, distance="ordered").bind(ctx).measure(view).round(3).tolist()
[0.375]
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import polars as pl

from polars_anon._validate import check_choice
from polars_anon.errors import InvalidParameterError, ValueNotInHierarchyError
from polars_anon.hierarchy import Hierarchy
from polars_anon.messages import DISTANCE_PARAMETER, NOT_A_LEAF
from polars_anon.privacy.base import (
    TOLERANCE,
    Check,
    ClassView,
    Context,
    Model,
    SensitiveNull,
    Values,
    check_attribute,
    check_fraction,
    check_null_policy,
)

__all__ = ["TCloseness", "hierarchy_weights"]

DISTANCES = ("equal", "ordered", "hierarchical")


@dataclass(frozen=True)
class TCloseness(Model):
    """t-closeness of `attribute` (see the module docstring).

    `hierarchy` (hierarchical distance) defaults to the attribute's hierarchy given
    in ``hierarchies``; `order` (ordered distance) lists every value in order
    (default: the values' natural order; an Enum's is its own, on every engine).
    """

    attribute: str
    t: float
    distance: Literal["equal", "ordered", "hierarchical"] = "equal"
    hierarchy: Hierarchy | None = field(default=None, compare=False, metadata={"expects": "a Hierarchy"})
    order: tuple[Any, ...] | None = field(default=None, metadata={"expects": "a list of every value, in order"})
    sensitive_null: SensitiveNull = "error"
    """Nulls in `attribute`: refused (``"error"``), one more value (``"value"``; not with a hierarchy) or left
    out of the classes and the table (``"ignore"``); see :class:`~polars_anon.privacy.base.Values`."""

    name: ClassVar[str] = "t-closeness"
    quiet_defaults: ClassVar[tuple[str, ...]] = ("sensitive_null",)
    uses_distribution: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_attribute(self.name, self.attribute)
        where = f"t-closeness on {self.attribute!r}"
        check_choice(f"{where}: distance", self.distance, DISTANCES)
        check_fraction(where, "t", self.t)
        check_null_policy(where, self.sensitive_null)
        if self.order is not None:
            if self.distance != "ordered":
                raise InvalidParameterError(
                    DISTANCE_PARAMETER(where=f"{where}: ", parameter="order", needs="ordered", distance=self.distance)
                )
            object.__setattr__(self, "order", tuple(self.order))
        if self.hierarchy is not None and self.distance != "hierarchical":
            raise InvalidParameterError(
                DISTANCE_PARAMETER(
                    where=f"{where}: ", parameter="hierarchy", needs="hierarchical", distance=self.distance
                )
            )
        if self.hierarchy is not None and not isinstance(self.hierarchy, Hierarchy):
            raise InvalidParameterError(f"{where}: hierarchy must be a Hierarchy, got {type(self.hierarchy).__name__}")

    def bind(self, context: Context) -> Check:
        return _ClosenessCheck(self, context)


def hierarchy_weights(h: Hierarchy, labels: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """For the leaves `labels` (code order): the leaf x node membership (m, nodes) and each node's edge weight.

    The weight of node N is ``(level(parent) - level(N)) / (2 level(root))`` (0 at the root).

    >>> h = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    >>> member, w = hierarchy_weights(h, pl.Series(["a1", "a2", "b1", "b2"]))
    >>> member.shape, w.tolist()
    ((4, 7), [0.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25])
    """
    nodes = h.nodes
    level = nodes["level"].to_numpy().astype(np.float64)
    parent = nodes["parent"].to_numpy()
    height = float(level[0]) if len(level) else 0.0
    w = np.zeros(len(level))
    has = ~np.isnan(parent.astype(np.float64))
    if height > 0:
        w[has] = (level[parent[has].astype(np.int64)] - level[has]) / (2 * height)
    leaf_ids = h.ids_of(labels)
    closure = h.closure
    member = np.zeros((len(labels), len(level)))
    pos = {int(v): i for i, v in enumerate(leaf_ids)}
    leaves, ancestors = closure["leaf"].to_numpy(), closure["ancestor"].to_numpy()
    keep = np.isin(leaves, leaf_ids)
    member[[pos[int(v)] for v in leaves[keep]], ancestors[keep]] = 1.0
    return member, w


class _NodeSums:
    """The hierarchical EMD of rows ``r`` (classes x leaves), each row's bits independent of the number of rows.

    A matrix product (BLAS) may sum a row differently when other rows are beside it, so one class could get one
    verdict alone and another among many. Here each node's extra is a `np.add.reduceat` over its leaves' columns
    (gathered node by node) and the measure a row-wise sum of ``|extra| * weight``: elementwise steps and per-row
    reductions over contiguous rows, whose order depends only on the row's length. Nodes of weight 0 (the root)
    or with no leaf among the labels add nothing and are left out.

    >>> h = Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    >>> sums = _NodeSums(*hierarchy_weights(h, pl.Series(["a1", "a2", "b1", "b2"])))
    >>> sums.emd(np.array([[0.25, 0.25, -0.25, -0.25], [0.5, -0.5, 0.0, 0.0]])).tolist()
    [0.5, 0.25]
    """

    def __init__(self, member: np.ndarray, weight: np.ndarray) -> None:
        counts = member.sum(axis=0).astype(np.int64)
        nodes = np.flatnonzero((counts > 0) & (weight > 0))
        self.leaves = np.concatenate([np.flatnonzero(member[:, n]) for n in nodes] + [np.zeros(0, np.intp)])
        self.starts = (np.cumsum(counts[nodes]) - counts[nodes]).astype(np.intp)
        self.weight = np.ascontiguousarray(weight[nodes], dtype=np.float64)

    def emd(self, r: np.ndarray) -> np.ndarray:
        """The measure of each row of `r` (each row ``p - q``, leaves in label order)."""
        if not len(self.weight):
            return np.zeros(len(r))
        extra = np.add.reduceat(np.ascontiguousarray(r[:, self.leaves], dtype=np.float64), self.starts, axis=1)
        return np.ascontiguousarray(np.abs(extra) * self.weight[None, :]).sum(axis=1)


def _check_leaves(attribute: str, h: Hierarchy, labels: pl.Series) -> None:
    """Refuse a value of `attribute` that is not a leaf of `h` (an inner node would weigh nothing), naming the first.

    The first in string order, null last: ``anon_t_closeness`` names the same one.
    """
    outside = labels.filter(~labels.is_in(h.leaf_labels) | labels.is_null())
    if len(outside):
        first = outside.drop_nulls().min() if outside.null_count() < len(outside) else None
        raise ValueNotInHierarchyError(NOT_A_LEAF(column=attribute, value=first))


class _ClosenessCheck(Check):
    model: TCloseness

    def __init__(self, model: TCloseness, context: Context) -> None:
        super().__init__(model)
        self.values = Values(model, context)
        labels = self.values.labels
        self.q = self.values.overall
        self.rank = np.arange(self.values.m)
        if model.distance == "ordered" and model.order is not None:
            where = {v: i for i, v in enumerate(model.order)}
            missing = [v for v in labels.to_list() if v not in where]
            if missing:
                raise InvalidParameterError(
                    f"t-closeness on {model.attribute!r}: order misses {len(missing)} values of the column "
                    f"(first: {missing[:5]}); list every value"
                )
            self.rank = np.argsort(np.argsort([where[v] for v in labels.to_list()], kind="stable"), kind="stable")
        elif model.distance == "ordered" and labels.dtype == pl.String:
            numbers = labels.drop_nulls().str.strip_chars().cast(pl.Float64, strict=False)
            if len(numbers) > 1 and numbers.null_count() == 0:
                warnings.warn(
                    f"t-closeness on {model.attribute!r}: ordered distance on a String column of numbers orders the "
                    f"values as text ({labels.drop_nulls().head(3).to_list()} ...: '10' < '5'); cast the column "
                    "to a number or give order=[...]",
                    UserWarning,
                    stacklevel=2,
                )
        if model.distance == "hierarchical":
            h = model.hierarchy if model.hierarchy is not None else (context.hierarchies or {}).get(model.attribute)
            if h is None:
                raise InvalidParameterError(
                    f"t-closeness on {model.attribute!r}: distance 'hierarchical' needs a hierarchy of "
                    f"{model.attribute!r}; "
                    "give it as TCloseness(..., hierarchy=h) or in hierarchies"
                )
            _check_leaves(model.attribute, h, labels.cast(pl.String))
            self.sums = _NodeSums(*hierarchy_weights(h, labels.cast(pl.String)))

    def measure(self, view: ClassView) -> np.ndarray:
        p, held = self.values.shares(view)
        return np.where(held, self._emd(p - self.q[None, :]), np.inf)  # no value read: nothing to judge, fails

    def ok_one(self, size: int, counts: Mapping[str, np.ndarray]) -> bool:
        # the steps of measure and ok on a one-row view, on the same (1, m) arrays: the same floats
        c = counts[self.model.attribute]
        if self.values.keep is not None:
            c = c[self.values.keep]
        total = int(c.sum())  # whole numbers: the float sum of measure, exactly
        if total <= 0:  # no value read: an infinite measure, fails
            return False
        p = c[None] / float(total)  # the same quotients as counts / total per class
        return bool(self._emd(p - self.q[None, :])[0] <= self.model.t + TOLERANCE)

    def _emd(self, r: np.ndarray) -> np.ndarray:
        if self.model.distance == "equal":
            return np.abs(r).sum(axis=1) / 2
        if self.model.distance == "ordered":
            m = r.shape[1]
            if m < 2:
                return np.zeros(len(r))
            ordered = np.empty_like(r)
            ordered[:, self.rank] = r
            return np.abs(np.cumsum(ordered, axis=1)).sum(axis=1) / (m - 1)
        return self.sums.emd(r)

    def ok(self, view: ClassView, measure: np.ndarray) -> np.ndarray:
        return measure <= self.model.t + TOLERANCE
