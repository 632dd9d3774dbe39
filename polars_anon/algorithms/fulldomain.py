"""Optimal full-domain generalization: one level per quasi-identifier.

The lattice of level vectors is searched for the k-anonymous vector that
minimizes the chosen objective (``metric``), allowing at most ``max_suppressed``
rows in classes smaller than k (those rows are then removed and counted). Each
vector is evaluated by one count over the class aggregates (one row per distinct
tuple), never over the rows. The objectives, their definitions and their bounds
are in :mod:`polars_anon.algorithms.objectives`; the default, ``ncp``, is the
average cell NCP (a suppressed row counting 1 per cell).

Search: vectors are visited by increasing static lower bound of the objective
(then level sum, then lexicographically). Monotonicity prunes: every
generalization of a k-anonymous vector is k-anonymous, every specialization of a
failing one fails (rows in classes smaller than k can only decrease when classes
merge), so a failing vector is climbed to a maximal failing one whose whole
down-set is skipped. When a model is not monotone (δ-presence with dmin > 0 ...),
a failing vector still prunes so when k and the monotone class models alone fail it
(:meth:`~polars_anon.privacy.constraints.Constraints.monotone_part`). A vector is
also skipped when the objective proves it cannot win: its static bound, or the bound an evaluated vector below it gives
for its up-set, is above the best found, or it would suppress more rows than any
vector that beats the best may. The search stops once the next static bound is
above the best value, so the result is optimal; objectives without a useful
static bound are thereby checked on every vector these rules leave (the lattice
is limited to ``MAX_LATTICE`` vectors). At equal value the vector that
suppresses fewer rows wins (so a table is never suppressed whole when
generalizing everything costs the same), then the smaller level sum, then the
lexicographically smaller vector.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from polars_anon._progress import bar as progress_bar
from polars_anon._threads import on_own_thread
from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.algorithms.objectives import (
    OBJECTIVES,
    Evaluation,
    Objective,
    Score,
    Settings,
    check_settings,
    compare,
    make_objective,
)
from polars_anon.errors import InfeasibleError, InvalidParameterError
from polars_anon.metrics.arrays import many_pairs
from polars_anon.options import check_max_suppressed
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import TupleMap

__all__ = ["FulldomainOptions", "Lattice", "SearchResult", "neighbours", "search"]

MAX_LATTICE = 5_000_000
_CHUNK = 4096
"""Vectors screened at once, in search order, against what is already known of them."""
CACHED_VECTORS = 256
"""At most this many evaluated vectors keep their classes, to roll later vectors up from."""
CACHE_BYTES = 32 << 20
"""And at most about this much memory for them (:meth:`Classes.kept`, each array once; the class ids of 15M voter
rows, 1.36M tuples, take 5.4 MB a vector, so 64 vectors would hold 350 MB or more)."""


@dataclass(frozen=True)
class FulldomainOptions:
    """Options of ``method="fulldomain"`` (the objective's options: see :mod:`polars_anon.algorithms.objectives`)."""

    max_suppressed: int = 0
    """Rows that may be suppressed (removed) when they sit in classes smaller than k."""
    aggregate: Literal["arithmetic", "geometric", "rank", "max", "sum"] | None = field(
        default=None, metadata={"expects": "one of ['arithmetic', 'geometric', 'rank', 'max', 'sum']"}
    )
    """How per-attribute parts combine (metrics loss, entropy, height, precision); None: the metric's default."""
    gs_factor: float | None = field(default=None, metadata={"expects": "a number in [0, 1]"})
    """Generalization against suppression in [0, 1] as ARX (loss, entropy, precision); None: 0.5."""
    monotonic: bool | None = field(default=None, metadata={"expects": "true or false"})
    """entropy: ARX's monotonic variant; discernibility: DM* instead of DM. None: False."""
    weights: dict[str, float] | None = field(
        default=None, metadata={"expects": "a mapping from quasi-identifiers to numbers"}
    )
    """Attribute weights (loss, entropy, height, precision, ncp); unlisted qids weigh 1."""

    def __post_init__(self) -> None:
        check_max_suppressed(self.max_suppressed)
        if self.gs_factor is not None and not 0.0 <= self.gs_factor <= 1.0:
            raise InvalidParameterError(f"gs_factor must be a number in [0, 1], got {self.gs_factor!r}")

    def settings(self, metric: str) -> Settings:
        """The objective these options ask for, with `metric`."""
        return Settings(
            metric,
            self.aggregate,
            0.5 if self.gs_factor is None else float(self.gs_factor),
            bool(self.monotonic),
            self.weights,
            self.max_suppressed,
        )


def check_options(options: FulldomainOptions, metric: str | None, qids: Sequence[str]) -> None:
    """Refuse objective options the metric does not take (before any data is read)."""
    check_settings(
        metric or "ncp",
        qids,
        aggregate=options.aggregate,
        gs_factor=options.gs_factor,
        monotonic=options.monotonic,
        weights=options.weights,
        where="method 'fulldomain'",
    )


@dataclass(frozen=True)
class SearchResult:
    """The optimal vector: ``levels``, suppressed rows and which tuples they are, its score."""

    levels: dict[str, int]
    suppressed: int
    small: np.ndarray
    """Boolean per aggregate row: the tuple sits in a class smaller than k (suppressed)."""
    score: Score
    objective: dict[str, object]
    """The objective and its settings (see :meth:`Objective.describe`)."""
    evaluated: int
    lattice: Lattice = field(repr=False, compare=False)
    """The lattice searched, with its tables and cached classes (the report's neighbours reuse it)."""
    scorer: Objective = field(repr=False, compare=False)
    """The objective the search minimized."""


class Lattice:
    """The level vectors of a task, evaluated on its class aggregates.

    Per attribute and level it keeps each tuple's published node and its dense
    code among the published nodes. A vector's classes are found from one combined
    code of a tuple of each class of a cached vector below it (:class:`Classes`),
    made dense by a count or a radix sort (linear passes; a comparison sort cost
    several times more on cup), so they come with their rows and a tuple each and
    most objectives never touch the tuples.
    """

    def __init__(self, task: Task) -> None:
        agg = task.aggregates
        self.qids = list(task.qids)
        self.hs = [task.hierarchies[q] for q in self.qids]
        self.k = task.k
        self.constraints = task.constraints
        self.max_suppressed = 0
        """Set by the search: pruning on failing vectors needs monotonicity with suppression when it is above 0."""
        self.size = agg["size"].to_numpy().astype(np.int64)
        self.size_weights = self.size.astype(np.float64)
        """The rows per tuple as floats (whole numbers), the weights of the class counts: a bincount converts Int64
        weights on every call (684,166 tuples: 6.8 ms a count with Int64 weights, 2.1 with these)."""
        self.n_rows, self.m = int(self.size.sum()), len(self.qids)
        self.heights = [h.height for h in self.hs]
        n_vectors = int(np.prod(self.heights, dtype=np.float64))
        if n_vectors > MAX_LATTICE:
            raise InfeasibleError(
                f"the full-domain lattice has {n_vectors} level vectors (heights "
                f"{dict(zip(self.qids, self.heights))}), "
                f"more than {MAX_LATTICE}; use method='greedy', 'mondrian' or 'datafly', or fewer quasi-identifiers"
            )
        self.nodes: list[LevelNodes] = []
        """Per attribute: each tuple's published node id per level (gathered when read)."""
        self.codes: list[LevelCodes] = []
        """Per attribute: each tuple's published node as a dense code per level (gathered when read)."""
        self.n_codes: list[list[int]] = []
        leaves_kept = True
        for q, h in zip(self.qids, self.hs):
            # each tuple's leaf is ids[index]: with the road's codes, the index is the code of its label (no gather of
            # node ids over the tuples: 4 x 684,166 Int64 on the 3M register, 18 ms of the job); else its leaf's id
            index, ids = task.leaf_index(q)
            held = np.zeros(h.n_nodes if ids is None else len(ids), dtype=bool)
            held[index] = True  # marks, not counts (a bincount of 684,166 ids: 1.5 ms, these 0.55)
            present = np.flatnonzero(held)  # the indices the tuples hold
            tables, codes, n_codes = [], [], []
            for lv in range(h.height):  # per level, tables over the indices (the tuples' gathers: later)
                node_of = h.generalize_ids(lv).astype(np.int32)
                node_of = node_of if ids is None else node_of[ids]
                published = np.zeros(h.n_nodes, dtype=bool)
                published[node_of[present]] = True
                code_of = (np.cumsum(published) - 1).astype(np.int32)  # dense codes in node-id order, as _densify
                tables.append(node_of)
                codes.append(code_of[node_of])
                n_codes.append(int(np.count_nonzero(published)))
            leaves_kept = leaves_kept and np.array_equal(tables[0][present], present if ids is None else ids[present])
            self.nodes.append(LevelNodes(tables, index, present))
            self.codes.append(LevelCodes(codes, index))
            self.n_codes.append(n_codes)
        self._leaves_kept = leaves_kept
        """Every tuple's leaves are published as themselves at level 0: the bottom's classes are the tuples (distinct
        by the aggregates' contract, :attr:`Task.aggregates`)."""
        self._cache = _Cache(self.m)

    @property
    def leaves(self) -> dict[str, np.ndarray]:
        """Per attribute: each tuple's leaf id (its node at level 0, int32)."""
        return {q: nodes[0] for q, nodes in zip(self.qids, self.nodes)}

    def grid(self) -> np.ndarray:
        """Every level vector, ``(N, m)``, in C order of the heights."""
        return np.stack(np.meshgrid(*[np.arange(hh) for hh in self.heights], indexing="ij"), -1).reshape(-1, self.m)

    def _dense_classes(self, vector: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """Dense class ids 0..n-1 of the tuples `rows` (default: all) at `vector`, and n (ids in the key's order)."""
        count = len(self.size) if rows is None else len(rows)
        used = [(j, n_j) for j, n_j in enumerate(self.n_codes[j][int(lv)] for j, lv in enumerate(vector)) if n_j > 1]
        # one published value: no attribute to tell classes apart. The key in 32 bits when the codes' product fits
        # (half the memory to write and read: the 3M register's bottom vector, 3.8M values), else in 64. No
        # temporaries (fewer page faults)
        dtype = np.int32 if math.prod(n_j for _, n_j in used) < 1 << 31 else np.int64
        key, part = np.zeros(count, dtype=dtype), np.empty(count, dtype=dtype)
        stride = 1
        for j, n_j in used:
            if stride * n_j > 1 << 62:  # keep the combined key in 63 bits: re-densify
                dense, stride = self._densify(key, stride)
                key = dense.astype(dtype)
            codes = self.codes[j][vector[j]] if rows is None else self.codes[j].take(vector[j], rows)
            if stride == 1:  # the first attribute: its codes are the key
                np.copyto(key, codes)
            else:
                np.multiply(codes, stride, out=part, dtype=dtype)
                key += part
            stride *= n_j
        return self._densify(key, stride)

    @staticmethod
    def _densify(key: np.ndarray, stride: int) -> tuple[np.ndarray, int]:
        """Dense ids 0..n-1 of `key` (values in [0, `stride`), ids in their order; int32 below 2**31 keys) and n.

        Each present value marked when the values are few (at most 8 per key), else a least-significant-digit radix
        sort by 16-bit digits (NumPy's stable sort of 16-bit integers is a counting sort): linear passes, much cheaper
        than a comparison sort of the key.
        """
        dtype = np.int32 if len(key) < 1 << 31 else np.int64  # ids below the count of keys
        if len(key) == 0:
            return key.astype(dtype), 0
        if stride <= max(8 * len(key), 1 << 16):
            # marks, not counts, then the marked values' positions numbered in order (`flatnonzero` and one scatter,
            # not a running sum over the stride: NumPy's cumsum is a scalar loop, 13-19 ms over the 3.8M values of
            # the 3M register's bottom vector, the whole densify 22 -> 14 ms). Up to 8 values per key the marks cost
            # less than the radix sort (684,166 keys, the 3M register's bottom vector, in 3.8M values)
            present = np.zeros(stride, dtype=bool)
            present[key] = True
            found = np.flatnonzero(present)
            ids = np.empty(stride, dtype=dtype)  # only the marked values' ids are written, and only they are read
            ids[found] = np.arange(len(found), dtype=dtype)
            return np.take(ids, key, mode="clip"), len(found)
        order, ordered = None, np.empty_like(key)
        bits = (stride - 1).bit_length()
        for shift in range(0, bits, 16):
            np.right_shift(key if order is None else np.take(key, order, out=ordered, mode="clip"), shift, out=ordered)
            digit = ordered.astype(np.uint8 if bits - shift <= 8 else np.uint16)  # the low 8 or 16 bits
            step = np.argsort(digit, kind="stable")
            order = step if order is None else np.take(order, step, mode="clip")
        assert order is not None
        np.take(key, order, out=ordered, mode="clip")
        new = np.empty(len(key), dtype=bool)
        new[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        ids = np.cumsum(new, dtype=dtype)
        ids -= 1
        out = np.empty(len(key), dtype=dtype)
        out[order] = ids
        return out, int(ids[-1]) + 1

    def classes(self, vector: np.ndarray) -> np.ndarray:
        """A dense class id per tuple: equal ids are equal published tuples at `vector`."""
        return self._classes(vector).ids()

    def class_rows(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per class of `vector`, in the order of their dense ids: one of its tuples and its rows (whole numbers)."""
        found = self._classes(vector)
        return found.rep, found.rows

    def _classes(self, vector: np.ndarray) -> Classes:
        """The classes of `vector`, rolled up from the cached classes of a vector below when there is one
        (its classes are unions of theirs): the work is then on their classes, not the tuples."""
        at = tuple(int(x) for x in vector)
        found = self._cache.get(at)
        if found is not None:
            return found
        base = self._cache.finest_below(vector)
        if base is not None and base.n == len(self.size):
            base = None  # its classes are the tuples: rolled up from the tuples, whose codes are read in order
        if base is None:
            dense, n = self._dense_classes(vector)
            rep_base, rows_base = None, self.size_weights
        else:
            rep_base, rows_base = base.rep, base.rows
            dense, n = self._dense_classes(vector, rep_base)
        if n == len(dense):  # each class one tuple (or base class): where each lands, no sums (the same floats)
            order = np.empty(n, dtype=np.int32)
            order[dense] = np.arange(n, dtype=np.int32)
            rep = order if rep_base is None else np.take(rep_base, order, mode="clip")
            rows = np.take(rows_base, order, mode="clip")
        else:
            rep = np.empty(n, dtype=np.int32)
            rep[dense] = np.arange(len(dense), dtype=np.int32) if rep_base is None else rep_base  # a tuple of each
            rows = np.bincount(dense, weights=rows_base, minlength=n)
        out = Classes(rep, rows, dense, base)
        self._cache.put(at, out)
        return out

    def evaluate(self, vector: np.ndarray) -> Evaluation:
        """Classes of `vector` and the tuples it suppresses (in classes that violate k or a model).

        At the bottom under k alone the classes are the tuples (distinct, each at its leaves): the rows suppressed are
        those of the tuples below k, and the classes are made only if the objective reads them (:class:`Evaluation`).
        """

        def make() -> tuple[Classes, np.ndarray]:
            found = self._classes(vector)
            return found, self._violating_classes(vector, found)

        if self.constraints.k_only and self._leaves_kept and not vector.any():
            return Evaluation(self, vector, make, self.size < self.k)
        return Evaluation(self, vector, make)

    def _violating_classes(self, vector: np.ndarray, found: Classes) -> np.ndarray:
        """Per class of `found`: it violates k or a privacy model."""
        if self.constraints.k_only:
            return found.rows < self.k
        levels = {q: int(lv) for q, lv in zip(self.qids, vector)} if self.constraints.needs_levels else None
        return self.constraints.violating(found.ids(), levels)

    def suppressed_by(self, vector: np.ndarray, part: Constraints) -> int:
        """The rows `vector` suppresses for `part` alone (a :meth:`Constraints.monotone_part`)."""
        found = self._classes(vector)
        if part.k_only:
            bad = found.rows < part.k
        else:
            levels = {q: int(lv) for q, lv in zip(self.qids, vector)} if part.needs_levels else None
            bad = part.violating(found.ids(), levels)
        return int(found.rows[bad].sum()) if bad.any() else 0

    @property
    def prunable(self) -> bool:
        """Whether a failing vector's specializations fail too.

        That is the models' monotonicity, with or without suppression.
        """
        return self.constraints.monotone_suppression or (self.constraints.monotone and self.max_suppressed == 0)

    @property
    def monotone_suppression(self) -> bool:
        """Whether a vector suppresses every row that a vector above it suppresses (k-anonymity and monotone models)."""
        return self.constraints.monotone_suppression


class LevelNodes:
    """Each tuple's published node id (int32) at every level of one attribute's hierarchy, gathered from a table
    over the tuples' indices (their leaves' node ids, or their labels' codes) when read, not kept (an array per
    attribute and level was 41 MiB of the search's memory at 3M rows, 81 MiB at 15M).

    >>> from polars_anon import Hierarchy
    >>> h = Hierarchy.from_dict({"*": {"A": ["a", "b"], "c": None}})
    >>> per = LevelNodes([h.generalize_ids(lv).astype(np.int32) for lv in range(h.height)], h.ids_of(["a", "c"]))
    >>> [h.label_of(i) for i in per[1]], per.gather(np.array(h.labels), 2).tolist()
    (['A', 'c'], ['*', '*'])
    >>> per.extremes(np.arange(h.n_nodes, dtype=np.float64), 1) == (float(per[1].min()), float(per[1].max()))
    True
    """

    def __init__(self, tables: list[np.ndarray], index: np.ndarray, present: np.ndarray | None = None) -> None:
        self.tables = tables
        """Per level: the node each index's leaf is published as (int32)."""
        self.index = index
        """Per tuple: its index in the tables (its leaf's node id, or its label's code)."""
        self.present = np.unique(index) if present is None else present
        """The indices the tuples hold, each once."""

    def __len__(self) -> int:
        return len(self.tables)

    def __getitem__(self, level: int) -> np.ndarray:
        return np.take(self.tables[level], self.index, mode="clip")  # valid indices; int32 ones not converted

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[lv] for lv in range(len(self)))

    def gather(self, values: np.ndarray, level: int, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``values[self[level][rows]]`` (`values` per node), the same array, with one gather over the tuples: the
        values taken per index first."""
        return np.take(values[self.tables[level]], self.index[rows], mode="clip")

    def extremes(self, values: np.ndarray, level: int) -> tuple[float, float]:
        """The smallest and largest of ``values[self[level]]`` (`values` per node), from the indices present: no
        gather over the tuples."""
        found = values[self.tables[level][self.present]]
        return float(found.min()), float(found.max())


class LevelCodes:
    """Each tuple's published node at every level of one attribute as a dense code (int32), from a table over the
    tuples' indices (as :class:`LevelNodes`): gathered over every tuple when first read whole (then kept), or over
    the rows asked only.

    Most of the search rolls a vector's classes up from a few tuples of a vector below it, so most levels are never
    read whole: on the 3M register 4 of 16 were, and building every table up front took most of the lattice's 0.04 s.

    >>> per = LevelCodes([np.array([0, 1, 2], dtype=np.int32), np.array([0, 0, 1], dtype=np.int32)], np.array([2, 0]))
    >>> per[1].tolist(), per.take(0, np.array([1])).tolist(), len(per)
    ([1, 0], [0], 2)
    """

    def __init__(self, tables: list[np.ndarray], index: np.ndarray) -> None:
        self.tables = tables
        """Per level: the dense code of each index's published node (int32)."""
        self.index = index
        """Per tuple: its index in the tables (its leaf's node id, or its label's code)."""
        self._whole: list[np.ndarray | None] = [None] * len(tables)

    def __len__(self) -> int:
        return len(self.tables)

    def __getitem__(self, level: int) -> np.ndarray:
        whole = self._whole[level]
        if whole is None:
            whole = self._whole[level] = np.take(self.tables[level], self.index, mode="clip")
        return whole

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[lv] for lv in range(len(self)))

    def take(self, level: int, rows: np.ndarray) -> np.ndarray:
        """``self[level][rows]`` (valid row indices): from the whole table when it is kept or the rows are many,
        else through the rows' indices (two gathers over the rows, none over every tuple)."""
        whole = self._whole[level]
        if whole is None and 4 * len(rows) >= len(self.index):
            whole = self[level]
        if whole is not None:
            return np.take(whole, rows, mode="clip")  # clip: no bounds check (every index is valid)
        return np.take(self.tables[level], np.take(self.index, rows, mode="clip"), mode="clip")


class Classes:
    """The classes of one level vector: a tuple and the rows of each; the class id of each tuple on demand.

    The ids are composed from those of the vector rolled up from (`base`) only when
    asked for (most objectives need none). Until then the classes hold their base
    (or its ids), and a chain of such links is cut every ``CHAIN`` links.
    """

    CHAIN = 8

    def __init__(self, rep: np.ndarray, rows: np.ndarray, dense: np.ndarray, base: Classes | None) -> None:
        self.rep = rep
        """Per class: one of its tuples (int32)."""
        self.rows = rows
        """Per class: its rows (float64, whole numbers)."""
        self.n = len(rep)
        n_tuples = len(dense) if base is None else base.n_tuples
        self.n_tuples = n_tuples
        self._ids: np.ndarray | None = dense.astype(np.int32, copy=False) if base is None else None
        self._dense: np.ndarray | None = None if base is None else dense.astype(np.int32, copy=False)
        """Per class of `base`: its class here (until the ids are composed)."""
        chained = base is not None and base._ids is None
        self._from: Classes | np.ndarray | None = base if chained or base is None else base._ids
        """The base (ids not composed yet) or the base's ids."""
        self.depth = base.depth + 1 if chained else 0  # type: ignore[union-attr]
        self.composed: Callable[[], None] | None = None
        """Told when the ids are composed (by the cache holding these classes: what they keep alive changed)."""
        if self.depth >= self.CHAIN:
            self.ids()

    def kept(self) -> list[np.ndarray]:
        """The arrays these classes keep alive, each once: their own, their chain's links' and the ids at its root
        (shared by every vector rolled up from the same classes)."""
        out, node = [], self
        while True:
            out += [node.rep, node.rows]
            if node._ids is not None:
                return [*out, node._ids]
            assert node._dense is not None and node._from is not None
            out.append(node._dense)
            if isinstance(node._from, np.ndarray):
                return [*out, node._from]
            node = node._from

    def ids(self) -> np.ndarray:
        """The class id of every tuple (int32)."""
        if self._ids is None:
            assert self._dense is not None and self._from is not None
            base_ids = self._from if isinstance(self._from, np.ndarray) else self._from.ids()
            self._ids = np.take(self._dense, base_ids, mode="clip")  # valid indices (clip: no slow checks)
            self._dense = self._from = None
            if self.composed is not None:
                self.composed()
        return self._ids


class _Cache:
    """The classes of the last vectors used, found by vector: at most :data:`CACHED_VECTORS` of them and about
    :data:`CACHE_BYTES` (the least recently used evicted first; the newest is always kept). The bytes are those of
    the distinct arrays the entries keep alive (:meth:`Classes.kept`), each counted once: every vector rolled up
    from the same classes shares their ids, one per tuple (counted per entry, 2.7 MB a vector on the 3M register,
    they filled the cache with 15 vectors of a few hundred classes and evicted the bases later vectors roll up from).
    An entry whose ids are composed is counted again; others chained through it keep their count until evicted (the
    cache then counts more than is alive, never less than its entries' own arrays)."""

    def __init__(self, m: int) -> None:
        self.slots: dict[tuple[int, ...], int] = {}
        self.entries: list[Classes | None] = [None] * CACHED_VECTORS
        self.vectors = np.full((CACHED_VECTORS, m), np.iinfo(np.int64).max, dtype=np.int64)
        """Each slot's vector (an empty slot's is above every vector)."""
        self.counts = np.zeros(CACHED_VECTORS, dtype=np.int64)
        self.used = np.zeros(CACHED_VECTORS, dtype=np.int64)
        """When each slot was last used (0: empty)."""
        self.kept: list[list[np.ndarray]] = [[] for _ in range(CACHED_VECTORS)]
        """The arrays each slot's entry was counted for (held here, so their ids stay theirs while counted)."""
        self.counted: dict[int, int] = {}
        """Each array counted, by ``id``: how many slots count it."""
        self.tick = self.bytes = 0

    def get(self, at: tuple[int, ...]) -> Classes | None:
        slot = self.slots.get(at)
        if slot is None:
            return None
        self.tick += 1
        self.used[slot] = self.tick
        return self.entries[slot]

    def finest_below(self, vector: np.ndarray) -> Classes | None:
        """The entry of the cached vector at or below `vector` with the fewest classes, or None."""
        below = np.flatnonzero((self.vectors <= vector).all(axis=1))
        return self.entries[below[np.argmin(self.counts[below])]] if len(below) else None

    def put(self, at: tuple[int, ...], entry: Classes) -> None:
        kept = entry.kept()
        while self.slots and (len(self.slots) == CACHED_VECTORS or self.bytes + self._adds(kept) > CACHE_BYTES):
            self._evict(int(np.argmin(np.where(self.used > 0, self.used, np.iinfo(np.int64).max))))
        slot = int(np.argmin(self.used))  # an empty one
        self.slots[at] = slot
        self.entries[slot], self.vectors[slot], self.counts[slot] = entry, at, entry.n
        self.tick += 1
        self.used[slot] = self.tick
        self._count(slot, kept)
        # held weakly: no cycle (entry -> cache -> entry), so the classes are freed with the lattice
        cache: weakref.ref[_Cache] = weakref.ref(self)
        entry.composed = lambda: _recount(cache, slot)

    def _adds(self, kept: list[np.ndarray]) -> int:
        """The bytes `kept` would add: its arrays not counted yet."""
        return sum(a.nbytes for a in kept if id(a) not in self.counted)

    def _count(self, slot: int, kept: list[np.ndarray]) -> None:
        for a in kept:
            n = self.counted.get(id(a), 0)
            self.bytes += 0 if n else a.nbytes
            self.counted[id(a)] = n + 1
        self.kept[slot] = kept

    def _uncount(self, slot: int) -> None:
        for a in self.kept[slot]:
            n = self.counted.pop(id(a))
            if n > 1:
                self.counted[id(a)] = n - 1
            else:
                self.bytes -= a.nbytes
        self.kept[slot] = []

    def _recount(self, slot: int) -> None:
        entry = self.entries[slot]
        assert entry is not None
        self._uncount(slot)
        self._count(slot, entry.kept())

    def _evict(self, slot: int) -> None:
        del self.slots[tuple(self.vectors[slot].tolist())]
        self._uncount(slot)
        entry = self.entries[slot]
        assert entry is not None
        entry.composed = None
        self.entries[slot] = None
        self.vectors[slot] = np.iinfo(np.int64).max
        self.used[slot] = 0


def _recount(cache: weakref.ref[_Cache], slot: int) -> None:
    """Recount `slot` of the cache, if it is still alive (a composed entry's callback)."""
    found = cache()
    if found is not None:
        found._recount(slot)


def _maximal_failing(lattice: Lattice, v: np.ndarray, fails: Callable[[np.ndarray], bool]) -> np.ndarray:
    """Climb from a failing vector to a maximal failing one: its whole down-set fails too.

    Each attribute in turn, those with fewer levels first (measured on Adult, FARS
    and cup: fewer evaluations over a search), is raised one level at a time while
    the vector still fails (near the frontier one step usually settles an attribute).
    """
    u = v.copy()
    top = np.asarray(lattice.heights) - 1
    for j in np.argsort(top, kind="stable").tolist():
        while u[j] < top[j]:
            u[j] += 1
            if not fails(u):
                u[j] -= 1
                break
    return u


def _up(v: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(int(x), None) for x in v)


def _down(v: np.ndarray) -> tuple[slice, ...]:
    return tuple(slice(0, int(x) + 1) for x in v)


class _Search:
    """The state of one search: what is known of every vector (see the module docstring)."""

    def __init__(self, lattice: Lattice, objective: Objective, budget: int) -> None:
        self.lat, self.obj, self.budget = lattice, objective, budget
        shape = tuple(lattice.heights)
        self.suppressed = np.full(shape, -1, dtype=np.int64)
        """Rows each evaluated vector suppresses (-1: not evaluated)."""
        self.at_most = np.full(shape, np.iinfo(np.int64).max, dtype=np.int64)
        """The fewest rows an evaluated vector below suppresses: a vector suppresses at most that."""
        self.at_least = np.zeros(shape, dtype=np.int64)
        """The most rows an evaluated vector above suppresses: a vector suppresses at least that."""
        self.failing = np.zeros(shape, dtype=bool)
        """In the down-set of a vector suppressing more rows than any winner may."""
        self.above = np.full(shape, -np.inf)
        """The largest bound that evaluated vectors below give (width-1 objectives)."""
        self.below = np.full(shape, -np.inf)
        """The largest bound that evaluated vectors above give (width-1 objectives)."""
        self.below_parts: np.ndarray | None = None
        """Per part, the largest rise over the slope floor that evaluated vectors above give."""
        self.beaten = np.zeros(shape, dtype=bool)
        """Strict objectives: at or above a feasible vector."""
        self.best: tuple[np.ndarray, int, int, tuple[int, ...], Evaluation, Score] | None = None
        self.cap = budget
        self.count = 0
        self.part = None if lattice.prunable else lattice.constraints.monotone_part(suppression=budget > 0)
        """When the models are not monotone: k and those that are (:meth:`Constraints.monotone_part`)."""
        self.part_rows = np.full(shape, -1, dtype=np.int64) if self.part is not None else None
        """Rows each vector that fails the whole suppresses for :attr:`part` alone (-1: not computed)."""

    def record(self, v: np.ndarray) -> int:
        """Evaluate `v` once: update the best and what it proves; its suppressed rows."""
        at = tuple(int(x) for x in v)
        if self.suppressed[at] >= 0:
            return int(self.suppressed[at])
        ev = self.lat.evaluate(v.copy())
        self.count += 1
        self.suppressed[at] = ev.suppressed
        if ev.suppressed <= self.budget and ev.suppressed < self.lat.n_rows:  # suppressing every row publishes nothing
            if self.obj.strict:
                self.beaten[_up(v)] = True
            if ev.suppressed <= self.cap:
                self._offer(at, ev, self.obj.value(ev))
        bound = self.obj.above(ev)
        if bound is not None:
            region = self.above[_up(v)]
            np.maximum(region, bound, out=region)
        if self.lat.prunable:
            region = self.at_most[_up(v)]
            np.minimum(region, ev.suppressed, out=region)
        if not self.lat.monotone_suppression:
            return ev.suppressed  # what follows needs: below a vector, every row it suppresses is suppressed
        region = self.at_least[_down(v)]
        np.maximum(region, ev.suppressed, out=region)
        bound = self.obj.below(ev)
        if bound is not None:
            region = self.below[_down(v)]
            np.maximum(region, bound, out=region)
        parts = self.obj.below_parts(ev)
        if parts is not None:
            if self.below_parts is None:
                self.below_parts = np.zeros((*self.suppressed.shape, len(parts)))
            region = self.below_parts[_down(v)]
            np.maximum(region, parts, out=region)
        return ev.suppressed

    def _offer(self, at: tuple[int, ...], ev: Evaluation, score: Score) -> None:
        if self.best is not None:
            c = compare(score.key, self.best[0], self.obj.atol, self.obj.rtol)
            if c > 0 or (c == 0 and (ev.suppressed, sum(at), at) >= self.best[1:4]):
                return
        self.best = (score.key, ev.suppressed, sum(at), at, ev, score)
        self.cap = self._cap(score.key)

    def _cap(self, best: np.ndarray) -> int:
        """The most rows a vector may suppress and still tie `best` (:meth:`Objective.floor_at`)."""

        def fits(s: int) -> bool:
            floor = self.obj.floor_at(s)
            assert floor is not None  # called only when floor_at(0) is not None: the objective has floors
            return compare(floor, best, self.obj.atol, self.obj.rtol) <= 0

        if self.obj.floor_at(0) is None or fits(self.budget):
            return self.budget
        lo, hi = 0, self.budget  # fits(lo), not fits(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    def cannot_win(self, i: int, v: np.ndarray) -> bool:
        """Whether the bounds known for `v` (row `i` of the grid) exclude it.

        Ties are lost to a best that suppresses nothing.
        """
        assert self.best is not None
        key, suppressed, lsum, at = self.best[:4]
        atol, rtol = self.obj.atol, self.obj.rtol
        at_v = tuple(v.tolist())
        c = compare(self.bound[i], key, atol, rtol)
        if c <= 0 and self.slopes is not None:
            floor, rise = self.slopes
            extra = self.at_least[at_v] * rise[i]
            if self.below_parts is not None:
                extra = np.maximum(extra, self.below_parts[at_v])
            if np.any(extra > 0):
                mixed = self.obj.combine(floor[i] + extra)
                c = max(
                    c, compare(mixed * (1.0 - 1e-12), key, atol, rtol)
                )  # a hair below: float noise must not exclude the optimum
        for known in (self.below[at_v],):
            if c <= 0 and np.isfinite(known):
                c = max(c, compare(np.array([known * (1.0 - 1e-12)]), key, atol, rtol))
        above = self.above[at_v]
        if c <= 0 and np.isfinite(above):
            c = max(c, compare(np.array([above]), key, atol, rtol))
            if c == 0 and self.obj.strict:
                return True
        return c > 0 or (c == 0 and suppressed == 0 and (int(v.sum()), at_v) > (lsum, at))

    def run(self) -> None:
        grid = self.lat.grid()
        self.bound = bound = self.obj.bound(grid)
        self.slopes = self.obj.slope(grid)
        self.floor_min = None if self.slopes is None else self.slopes[0].min(axis=0)
        self.below_bounds = (
            type(self.obj).below is not Objective.below or type(self.obj).below_parts is not Objective.below_parts
        )
        order = np.lexsort((*grid[:, ::-1].T, grid.sum(axis=1), *bound[:, ::-1].T))
        flat = np.asarray(np.ravel_multi_index(tuple(grid.T), self.suppressed.shape))  # an array: the stubs say intp
        with progress_bar(total=len(order), desc="full-domain lattice", unit="vector") as bar:
            for start in range(0, len(order), _CHUNK):
                chunk = order[start : start + _CHUNK]
                if self._visit(chunk[self._unknown(flat[chunk])], grid, bound):
                    bar.update(len(order) - start)
                    return  # every later vector has a higher static bound
                bar.update(len(chunk))

    def _unknown(self, flat: np.ndarray) -> np.ndarray:
        """Which of these vectors (flat lattice indices) are neither evaluated, failing nor beaten yet:
        the others are skipped (what is known of a vector only grows during the search)."""
        return (self.suppressed.ravel()[flat] < 0) & ~self.failing.ravel()[flat] & ~self.beaten.ravel()[flat]

    def _visit(self, rows: np.ndarray, grid: np.ndarray, bound: np.ndarray) -> bool:
        """Visit the grid rows `rows` in order; True when the static bound stops the search."""
        for i in rows.tolist():
            v, at = grid[i], tuple(grid[i].tolist())
            if self.best is not None:
                key = self.best[0]
                if bound[i, 0] > key[0] + self.obj.atol + self.obj.rtol * abs(key[0]):
                    return True  # every later vector has a higher static bound
            if self.suppressed[at] >= 0 or self.failing[at] or self.beaten[at]:
                continue
            if self.best is not None and self.cannot_win(i, v):
                continue
            self.record(v)
            if self.hopeless(at):
                self.failing[_down(_maximal_failing(self.lat, v, self.fails))] = True
        return False

    def hopeless(self, at: tuple[int, ...]) -> bool:
        """Whether nothing at or below the evaluated vector `at` can win: it suppresses more rows than
        a winner may, or the bounds it gives its down-set are above the best (False when the privacy
        models do not let a failing vector's specializations fail)."""
        if not self.lat.prunable:
            return self._part_fails(at)
        if self.suppressed[at] > (self.cap if self.lat.monotone_suppression else self.budget):
            return True
        if self.best is None:
            return False
        floor = self.below[at]
        if self.below_parts is not None:
            floor = max(floor, float(self.obj.combine(self.floor_min + self.below_parts[at])[0]))
        return (
            bool(np.isfinite(floor))
            and compare(np.array([floor * (1.0 - 1e-12)]), self.best[0][:1], self.obj.atol, self.obj.rtol) > 0
        )

    def _part_fails(self, at: tuple[int, ...]) -> bool:
        """Whether the monotone part alone (:attr:`part`) rules out the evaluated vector `at` and its down-set.

        With suppression the part suppresses at least as many rows below `at` (monotone with suppression) and the
        whole at least as many as the part, so more than :attr:`cap` there rules them all out; without, any row the
        part suppresses at `at` it suppresses somewhere in each vector below. Computed only when the whole fails
        (the part suppresses no more rows than the whole)."""
        if self.part is None or self.part_rows is None:
            return False
        limit = self.cap if self.budget > 0 else 0
        if self.suppressed[at] <= limit:
            return False
        if self.part_rows[at] < 0:
            self.part_rows[at] = self.lat.suppressed_by(np.array(at, dtype=np.int64), self.part)
        return bool(self.part_rows[at] > limit)

    def fails(self, u: np.ndarray) -> bool:
        """:meth:`hopeless` for `u`, known without evaluating it when it can be."""
        at = tuple(u.tolist())
        if self.failing[at]:
            return True
        if self.suppressed[at] < 0:
            if (
                self.at_most[at] <= (self.cap if self.lat.monotone_suppression else self.budget)
                and not self.below_bounds
            ):
                return False
            self.record(u)
        return self.hopeless(at)


def search(task: Task, max_suppressed: int = 0, settings: Settings | None = None) -> SearchResult:
    """Find the optimal level vector for the objective of `settings` (default ``ncp``; see the module docstring)."""
    lattice = Lattice(task)
    lattice.max_suppressed = max_suppressed
    objective = make_objective(lattice, settings or Settings(max_suppressed=max_suppressed))
    state = _Search(lattice, objective, max_suppressed)
    state.run()
    if state.best is None:
        raise task.constraints.no_publication("fulldomain", max_suppressed)
    _, suppressed, _, at, ev, score = state.best
    levels = {q: lv for q, lv in zip(lattice.qids, at)}
    return SearchResult(levels, suppressed, ev.small, score, objective.describe(), state.count, lattice, objective)


def objective_details(found: SearchResult) -> dict[str, object]:
    """The report's ``details["objective"]``: the objective, its settings, value and per-qid parts."""
    out: dict[str, object] = dict(found.objective) | {"value": found.score.value}
    if found.score.parts is not None:
        out["by_qid"] = found.score.parts
    return out


@register_method(
    "fulldomain", FulldomainOptions, metrics=tuple(OBJECTIVES), default_metric="ncp", check=check_options, codes=True
)
def run(task: Task, options: FulldomainOptions) -> Plan:
    """Full-domain generalization that minimizes the chosen objective (see the module docstring)."""
    settings = options.settings(task.metric or "ncp")
    found = search(task, options.max_suppressed, settings)
    lattice = found.lattice
    vector = np.array([found.levels[q] for q in lattice.qids], dtype=np.int64)
    classes = None if found.suppressed else lattice.class_rows(vector)  # the search's: the map counts none
    # the report's neighbours, on a thread from here (the lattice is no longer read on this one) to the report's facts
    later = _neighbours_later(found, options.max_suppressed)
    tmap = TupleMap.from_levels(
        task.aggregates,
        task.hierarchies,
        found.levels,
        found.small if found.suppressed else None,
        leaves=lattice.leaves,
        classes=classes,
    )
    details: dict[str, Any] = {
        "levels": found.levels,
        "evaluated_vectors": found.evaluated,
        "objective": objective_details(found),
    }
    plan = Plan(tmap, details)
    plan.later["neighbours"] = later
    return plan


def _neighbours_later(found: SearchResult, max_suppressed: int) -> Callable[[], list[dict[str, Any]]]:
    """The report's :func:`neighbours`, read later (:attr:`~polars_anon.algorithms.Plan.later`): over many tuples begun
    now on a thread of their own (the caller's thread no longer reads the lattice), else computed only when read (a
    plan never reported, such as explore's, does not compute them)."""
    if many_pairs(len(found.lattice.size)):
        return on_own_thread(neighbours, found, max_suppressed).result
    return lambda: neighbours(found, max_suppressed)


def neighbours(found: SearchResult, max_suppressed: int) -> list[dict[str, Any]]:
    """The lattice neighbours of the optimum `found` (one qid one level up or down), evaluated on its lattice.

    For the report: each neighbour's ``qid``, ``step`` (-1 or +1), ``levels``, ``loss``
    (the average cell NCP, as the report's ``loss``), ``value`` (the searched objective's),
    ``suppressed`` rows and whether it is ``feasible`` (at most `max_suppressed` rows in
    classes smaller than k or violating a model). Neighbours below a feasible optimum
    that are feasible have a higher value or suppress more rows; those above have a
    value at least as high.
    """
    lattice, objective = found.lattice, found.scorer
    chosen = np.array([int(found.levels[q]) for q in lattice.qids], dtype=np.int64)
    plain = Settings(max_suppressed=max_suppressed)  # the report's loss: unweighted NCP
    ncp = objective if objective.settings == plain else make_objective(lattice, plain)
    out = []
    for j, q in enumerate(lattice.qids):
        for step in (-1, 1):
            if not 0 <= chosen[j] + step < lattice.heights[j]:
                continue
            vector = chosen.copy()
            vector[j] += step
            ev = lattice.evaluate(vector)
            value = objective.value(ev).value
            loss = value if ncp is objective else ncp.value(ev).value  # the report's NCP is the objective: once
            out.append(
                {
                    "qid": q,
                    "step": step,
                    "levels": {p: int(v) for p, v in zip(lattice.qids, vector)},
                    "loss": float(loss),  # type: ignore[arg-type]
                    "value": value,
                    "suppressed": ev.suppressed,
                    "feasible": ev.suppressed <= max_suppressed,
                }
            )
    return out
