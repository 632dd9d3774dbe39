"""The tuple map: what every algorithm hands to the one publish step.

An algorithm sees the class aggregates (one row per distinct quasi-identifier
tuple and its row count), never the rows, and returns a :class:`TupleMap`: for each
original tuple, the tuple it is published as and how many of its rows go there,
with suppressed rows marked. :func:`polars_anon.publish.publish` turns any map
into rows; the report's metrics and the verification read the same map.

The frame of a map (column names are the constants below):

- the original quasi-identifiers (String labels, as in the aggregates);
- ``__anon_out_<qid>``: the published label (String) of each quasi-identifier;
- ``size``: rows of the original tuple that go to this published tuple (Int64);
- ``__anon_suppressed``: True for rows that are removed (their published labels
  are the hierarchy roots, so metrics count them as fully generalized);
- ``__anon_offset`` (only when some original tuple is split over several
  published tuples, as Mondrian's relaxed cuts do): the rows of a split tuple go
  in row order, its first ``size`` rows to the row with offset 0, the next to the
  following offset, and so on.

A *row map* (``by_row=True``; MDAV works on records) has ``__anon_row`` (the
input row number) instead of the original tuple, and one row per input row; and may have
``__anon_row_hash`` (:func:`row_hash` of the row's qids as the method read them): a row read
again to publish that does not match it is published with null labels, which the check refuses.

A *partition map* (``by_partition=True``) is what a planner
(:mod:`polars_anon.engines.planners`) hands the driver when the input's tuples stay in the
engine: ``__anon_partition`` (the engine map's class id) instead of the original tuple, one
row per published class, its ``size`` the rows sent there; the engine's own map (original
tuple or row -> partition) stays in the engine and is joined there. A partition map of a
method on records is also ``by_row``. The original tuples of a tuple map are never null
(null qids are refused, or published as their roots under ``null="suppress"``).

>>> agg = pl.DataFrame({"sex": ["F", "M"], "size": [3, 1]})
>>> m = TupleMap.from_labels(agg, ["sex"], {"sex": pl.Series(["*", "*"])})
>>> m.frame.rows()
[('F', '*', 3, False), ('M', '*', 1, False)]
>>> m.published_sizes().rows()
[('*', 4)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import polars as pl

from polars_anon.hierarchy import Hierarchy

__all__ = [
    "OFFSET",
    "PARTITION",
    "ROW",
    "ROW_HASH",
    "SIZE",
    "SUPPRESSED",
    "KnownIds",
    "TupleMap",
    "out_col",
    "row_hash",
]

SIZE = "size"
SUPPRESSED = "__anon_suppressed"
OFFSET = "__anon_offset"
ROW = "__anon_row"
PARTITION = "__anon_partition"
ROW_HASH = "__anon_row_hash"


def row_hash(qids: Sequence[str]) -> pl.Expr:
    """A row's qids (by name, in any order) hashed into one UInt64 (the same values give the same hash in one Polars
    version): a row map keeps it per row to know, when it publishes, that the row read again at that number is the
    one the method read.

    >>> frame = pl.DataFrame({"a": ["x", "x", "y"], "b": [1, 1, 1]})
    >>> h = frame.select(row_hash(["a", "b"])).to_series().to_list()
    >>> h[0] == h[1] != h[2] and h == frame.select(row_hash(["b", "a"])).to_series().to_list()
    True
    """
    return pl.struct(sorted(qids)).hash(seed=_ROW_HASH_SEED).alias(ROW_HASH)  # in any order of the qids


_ROW_HASH_SEED = 0x616E6F6E


def out_col(qid: str) -> str:
    """Name of the published-label column of a quasi-identifier in a map."""
    return f"__anon_out_{qid}"


class KnownIds(NamedTuple):
    """The node ids of a qid in a map, per map row, as its builder knew them (:meth:`TupleMap.known`)."""

    hierarchy: Hierarchy
    leaves: np.ndarray | None
    """The original tuples' leaves (None: not known)."""
    nodes: np.ndarray
    """The published nodes (a suppressed row's: the root, 0; int32)."""


@dataclass(frozen=True)
class TupleMap:
    """Original tuple (or input row) -> published tuple, with row counts; see the module docstring."""

    qids: tuple[str, ...]
    stored: pl.DataFrame
    """The map's columns as its builder stored them: the whole :attr:`frame`, save the published labels of the qids
    in :attr:`ids` (a map built from node ids stores none): read the row counts and suppression marks here, not
    through :attr:`frame`, so that no label is gathered for them."""
    by_row: bool = False
    by_partition: bool = False
    ids: Mapping[str, KnownIds] = field(default_factory=dict, repr=False, compare=False)
    """The node ids of each qid its builder knew (:meth:`known`): the labels of a qid whose published-label column
    is not stored are these nodes' labels."""

    def __post_init__(self) -> None:
        key = [PARTITION] if self.by_partition else [ROW] if self.by_row else list(self.qids)
        need = [*key, *(out_col(q) for q in self.qids if q not in self.ids), SIZE, SUPPRESSED]
        missing = [c for c in need if c not in self.stored.columns]
        if missing:
            raise ValueError(f"a TupleMap frame needs columns {missing}")
        if not (self.by_row or self.by_partition):
            nulls = [q for q in self.qids if self.stored[q].null_count()]
            if nulls:
                raise ValueError(f"a tuple map's original tuples are never null; null in {nulls}")

    @property
    def frame(self) -> pl.DataFrame:
        """The map's frame (the module docstring's columns): :attr:`stored`, with the published labels a map built
        from node ids did not store gathered from the hierarchies' labels on the first read (the full-domain job
        reads none of them: publish, the checks and the report read the node ids).

        >>> h = Hierarchy.suppression(["F", "M"])
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F", "M"], "size": [2, 2]}), {"g": h}, {"g": 1})
        >>> m.stored.columns, m.frame.rows()
        (['g', 'size', '__anon_suppressed'], [('F', '*', 2, False), ('M', '*', 2, False)])
        """
        cached = self.__dict__.get("_frame")
        if cached is not None:
            return cached
        gathered = {q: self._labels(q) for q in self.qids if out_col(q) not in self.stored.columns}
        frame = self.stored
        if gathered:  # the key, the published labels, then the rest: the order from_labels gives
            key = [c for c in self.stored.columns if c in self.qids]
            rest = self.stored.select(pl.exclude(key))
            frame = pl.DataFrame([*self.stored.select(key), *gathered.values()]).hstack(rest)
        object.__setattr__(self, "_frame", frame)  # a frozen map: its labels never change
        return frame

    def _labels(self, qid: str) -> pl.Series:
        """The published labels of `qid` from its known nodes (a suppressed row's: the root's)."""
        known = self.ids[qid]
        return pl.Series(out_col(qid), known.hierarchy.labels, dtype=pl.String).gather(known.nodes)

    @property
    def schema(self) -> pl.Schema:
        """The schema of :attr:`frame`, read without gathering any label (a published label is a String).

        >>> h = Hierarchy.suppression(["F"])
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F"], "size": [2]}), {"g": h}, {"g": 1})
        >>> m.schema == m.frame.schema, list(m.schema)[:2]
        (True, ['g', '__anon_out_g'])
        """
        if all(out_col(q) in self.stored.columns for q in self.qids):
            return self.stored.schema
        key = [c for c in self.stored.columns if c in self.qids]
        stored = self.stored.schema
        labels = [(out_col(q), pl.String()) for q in self.qids if out_col(q) not in self.stored.columns]
        rest = [(c, t) for c, t in stored.items() if c not in key]
        return pl.Schema([*((c, stored[c]) for c in key), *labels, *rest])

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_labels(
        cls,
        aggregates: pl.DataFrame,
        qids: Sequence[str],
        published: Mapping[str, pl.Series],
        suppressed: np.ndarray | pl.Series | None = None,
    ) -> TupleMap:
        """One published tuple per aggregate row: `published[qid]` holds its labels, row-aligned."""
        qids = list(qids)
        frame = aggregates.select(
            *qids,
            *(pl.Series(out_col(q), published[q], dtype=pl.String) for q in qids),
            pl.col(SIZE).cast(pl.Int64),
            _suppressed(aggregates.height, suppressed),
        )
        return cls(tuple(qids), frame)

    @classmethod
    def from_nodes(
        cls,
        aggregates: pl.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        nodes: Mapping[str, np.ndarray],
        suppressed: np.ndarray | None = None,
        *,
        leaves: Mapping[str, np.ndarray] | None = None,
        gather: bool = True,
    ) -> TupleMap:
        """One published tuple per aggregate row, given as node ids per qid (row-aligned); `leaves`: each row's
        original leaf ids per qid, when the caller knows them.

        Suppressed rows are published as the roots. `gather`: the published labels gathered now (a map that is
        published tuple by tuple reads them: gathered while the method's memory is held, they do not add to the
        publish step's peak, 40-56 MiB for topdown at 3M rows); False: when :attr:`frame` is first read.
        """
        qids = list(nodes)
        known = {}
        for q in qids:
            ids = np.asarray(nodes[q])
            if not np.issubdtype(ids.dtype, np.integer):
                ids = ids.astype(np.int64)  # an empty list: no node to publish
            if suppressed is not None:
                ids = np.where(suppressed, 0, ids)
            leaf = None if leaves is None else leaves[q]
            # int32: half the memory kept (an int32 array, e.g. from_levels', kept as it is: no copy)
            known[q] = KnownIds(hierarchies[q], leaf, ids.astype(np.int32, copy=False))
        stored = aggregates.select(*qids, pl.col(SIZE).cast(pl.Int64), _suppressed(aggregates.height, suppressed))
        out = cls(tuple(qids), stored, ids=known)
        if gather:
            _ = out.frame  # the labels gathered and kept now
        return out

    @classmethod
    def from_levels(
        cls,
        aggregates: pl.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        levels: Mapping[str, int],
        suppressed: np.ndarray | None = None,
        *,
        leaves: Mapping[str, np.ndarray] | None = None,
        classes: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> TupleMap:
        """Full-domain generalization: every qid at its level (suppressed rows at the roots).

        `leaves`: the leaf id of each aggregate row per qid, when the caller has them (else looked up). Without a
        suppressed row the labels are gathered only when :attr:`frame` is read: the Polars publish step publishes
        each column from its own value (:func:`polars_anon.publish.column_maps`) and reads none. `classes`: the
        published classes at `levels` as the caller counted them (the full-domain lattice), per class one of its
        aggregate rows and its rows, in :meth:`published_nodes`' order; without a suppressed row they are that
        method's result (taken when their codes ascend strictly: distinct, in that order; else counted anew), no pass
        over the aggregate rows.
        """
        given = leaves or {}
        leaves = {q: given[q] if q in given else h.ids_of(aggregates[q]) for q, h in hierarchies.items()}
        # each qid's published node per node id, int32: the rows' nodes gathered as the map keeps them (no copy)
        tables = {q: h.generalize_ids(int(levels[q])).astype(np.int32) for q, h in hierarchies.items()}
        # np.take with mode="clip" (node ids are in range): half the time of an index with int32 ids, same values
        nodes = {q: np.take(tables[q], leaves[q], mode="clip") for q in hierarchies}
        gather = suppressed is not None and bool(np.asarray(suppressed).any())
        out = cls.from_nodes(aggregates, hierarchies, nodes, suppressed, leaves=leaves, gather=gather)
        if suppressed is None or not gather:  # each leaf published as its level's node: leaf_nodes from the tables
            by_leaf = {q: _leaf_table(tables[q], leaves[q]) for q in hierarchies}
            object.__setattr__(out, "_leaf_nodes", by_leaf)  # what leaf_nodes would find, without a pass to check
            taken = None if classes is None else out._given_classes(*classes)
            if taken is not None:  # the caller's classes are the map's: none counted over the rows
                object.__setattr__(out, "_published_nodes", taken)
        return out

    # ------------------------------------------------------------------ facts
    @property
    def split(self) -> bool:
        """True when some original tuple is published as several tuples (relaxed Mondrian)."""
        return OFFSET in self.stored.columns

    @property
    def n_rows(self) -> int:
        """Input rows the map covers."""
        return int(self.stored[SIZE].sum())

    @property
    def suppressed_rows(self) -> int:
        """Rows the map removes."""
        return int(self.stored.filter(pl.col(SUPPRESSED))[SIZE].sum())

    def known_ids(self, qid: str, hierarchy: Hierarchy) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The node ids of `qid` in `hierarchy` per map row, as the builder knew them: (original leaves, published
        nodes, a suppressed row's the root), each None when not known (then read them from the labels).

        >>> h = Hierarchy.suppression(["F", "M"])
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F", "M"], "size": [2, 2]}), {"g": h}, {"g": 1})
        >>> [ids.tolist() for ids in m.known_ids("g", h)]
        [[1, 2], [0, 0]]
        """
        known = self.known(qid)
        if known is None or known.hierarchy is not hierarchy:
            return None, None
        return known.leaves, known.nodes

    def known(self, qid: str) -> KnownIds | None:
        """The node ids of `qid` the map's builder knew, with their hierarchy (None: built from labels)."""
        return self.ids.get(qid)

    def leaf_nodes(self, qid: str) -> np.ndarray | None:
        """Per node id of `qid`'s hierarchy, the node that every map row holding it as its original leaf publishes
        (-1: no row holds it), when the map's builder knew the leaves and each leaf is published as one node (a
        full-domain map without suppression); else None. Computed once per qid: publish and the map check then
        read a few thousand leaves, not every row.

        >>> h = Hierarchy.suppression(["F", "M"])  # nodes *, F, M
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F", "M", "F"], "size": [2, 1, 1]}), {"g": h}, {"g": 1})
        >>> m.leaf_nodes("g").tolist()
        [-1, 0, 0]
        """
        found: dict[str, np.ndarray | None] = self.__dict__.setdefault("_leaf_nodes", {})  # frozen: set once
        if qid not in found:
            known = self.known(qid)
            table = None
            if known is not None and known.leaves is not None:
                table = np.full(known.hierarchy.n_nodes, -1, dtype=np.int64)
                table[known.leaves] = known.nodes
                if not np.array_equal(table[known.leaves], known.nodes):
                    table = None  # a leaf published as two nodes
            found[qid] = table
        return found[qid]

    def published_sizes(self) -> pl.DataFrame:
        """The published classes and their sizes (suppressed rows left out), sorted.

        This is what grouping the published table by its quasi-identifiers gives, so
        a guarantee can be checked on the map before any row is published. Computed
        once per map (explore and a release of classes read it; the map check and the report read the sizes alone:
        :meth:`class_sizes`).
        """
        cached = self.__dict__.get("_published_sizes")
        if cached is not None:
            return cached
        outs = [out_col(q) for q in self.qids]
        classes = self.published_nodes()
        if classes is not None:
            sizes = self._sizes_of_nodes(*classes)
        else:
            sizes = self.frame.filter(~pl.col(SUPPRESSED)).group_by(outs).agg(pl.col(SIZE).sum()).sort(outs)
        sizes = sizes.rename({o: q for o, q in zip(outs, self.qids)})
        object.__setattr__(self, "_published_sizes", sizes)  # a frozen map: its published classes never change
        return sizes

    def class_sizes(self) -> np.ndarray:
        """The rows of each published class (Int64, in no set order; suppressed rows left out): those of
        :meth:`published_nodes` when the builder knew the nodes, else :meth:`published_sizes`' column. What the map
        check and the report's histogram read: no label gathered, no sort (topdown at k = 2: 0.004 CPU s less on
        Adult's 18,109 map rows, 0.011 on fars_int's 60,806).

        >>> h = Hierarchy.suppression(["F", "M"])
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F", "M"], "size": [2, 3]}), {"g": h}, {"g": 0})
        >>> sorted(m.class_sizes().tolist()) == sorted(m.published_sizes()[SIZE].to_list())
        True
        """
        classes = self.published_nodes()
        return classes[1] if classes is not None else self.published_sizes()[SIZE].to_numpy()

    def published_nodes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The published classes as the node ids the builder knew: a matrix (a row per class, a column per qid,
        Int64; in no set order) and each class's rows (Int64), suppressed rows left out. None when some qid's nodes
        are not known, the map splits a tuple, or the classes' code would not fit 62 bits. Computed once: the
        published sizes and the report's metrics read it.

        The kept rows are grouped by one mixed-radix code of their dense node ids (NumPy), not by every row's String
        labels (labels are unique in a hierarchy, so equal codes are equal labels).

        >>> h = Hierarchy.suppression(["F", "M"])
        >>> m = TupleMap.from_levels(pl.DataFrame({"g": ["F", "M"], "size": [2, 3]}), {"g": h}, {"g": 1})
        >>> [a.tolist() for a in m.published_nodes()]
        [[[0]], [5]]
        """
        if "_published_nodes" in self.__dict__:
            return self.__dict__["_published_nodes"]
        known = [self.known(q) for q in self.qids]
        found = None
        if self.qids and not self.split and all(k is not None for k in known):
            found = self._group_nodes([k for k in known if k is not None])
        object.__setattr__(self, "_published_nodes", found)  # a frozen map: its published classes never change
        return found

    def _group_nodes(self, known: Sequence[KnownIds]) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`published_nodes` from the known ids (None: the code would not fit 62 bits). Without a suppressed
        row, the rows are read as they are and a qid's published nodes are those of its leaves (:meth:`leaf_nodes`)
        when it has them."""
        kept = ~self.stored[SUPPRESSED].to_numpy()
        every = bool(kept.all())
        size = self.stored[SIZE].to_numpy()
        size = size if every else size[kept]
        key, stride, parts = np.zeros(len(size), dtype=np.int64), 1, []
        for q, k in zip(self.qids, known):
            nodes = k.nodes if every else k.nodes[kept]
            by_leaf = self.leaf_nodes(q) if every else None
            if by_leaf is None:
                present = np.flatnonzero(np.bincount(nodes, minlength=k.hierarchy.n_nodes))
            else:  # the nodes of the leaves the rows hold, each once and ascending
                present = np.unique(by_leaf[by_leaf >= 0])
            if stride * max(len(present), 1) >= 1 << 62:  # no packed code: the caller groups the labels
                return None
            scaled = np.zeros(k.hierarchy.n_nodes, dtype=np.int64)  # each node's dense rank times the stride
            scaled[present] = np.arange(len(present)) * stride
            key += scaled[nodes]  # no product over the rows
            parts.append((present, stride, len(present)))
            stride *= max(len(present), 1)
        if stride <= max(4 * len(key), 1 << 16):  # few codes: a count over them
            counts = np.bincount(key, weights=size, minlength=stride)
            classes = np.flatnonzero(counts)  # a kept row has at least one row: its class counts
            rows = counts[classes].astype(np.int64)  # exact below 2**53 rows
        else:
            classes, inverse = np.unique(key, return_inverse=True)
            rows = np.bincount(inverse, weights=size, minlength=len(classes)).astype(np.int64)
        nodes = [present[(classes // step) % max(n, 1)] for present, step, n in parts]
        return np.stack(nodes, axis=1).astype(np.int64, copy=False), rows

    def _given_classes(self, rep: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`published_nodes` of a map without a suppressed row whose every qid publishes each leaf as one node,
        from its classes as counted elsewhere (`rep`: per class one of its rows; `rows`: its rows), when their codes
        (:meth:`_group_nodes`' mixed radix, per class, not per row) ascend strictly and they hold every row: the same
        classes in the same order. Else None (then they are counted from the rows)."""
        if not self.qids:
            return None
        key, stride, nodes = np.zeros(len(rep), dtype=np.int64), 1, []
        for q in self.qids:
            by_leaf = self.leaf_nodes(q)
            if by_leaf is None:
                return None
            present = np.unique(by_leaf[by_leaf >= 0])
            if stride * max(len(present), 1) >= 1 << 62:
                return None
            of = self.ids[q].nodes[rep].astype(np.int64)
            nodes.append(of)
            key += np.searchsorted(present, of) * stride
            stride *= max(len(present), 1)
        sizes = np.asarray(rows).astype(np.int64)
        if not bool((key[1:] > key[:-1]).all()) or int(sizes.sum()) != self.n_rows or bool((sizes < 1).any()):
            return None
        return np.stack(nodes, axis=1), sizes

    def _sizes_of_nodes(self, nodes: np.ndarray, rows: np.ndarray) -> pl.DataFrame:
        """The published classes (labels, sorted) and their rows from :meth:`published_nodes`. Sorted as Polars
        sorts the labels: by each label's rank among its hierarchy's labels (Polars' own order of the Strings;
        distinct labels, distinct ranks), the first qid first."""
        hierarchies = [self.ids[q].hierarchy for q in self.qids]
        ranks = []
        for j, h in enumerate(hierarchies):
            order = pl.Series(h.labels, dtype=pl.String).rank("ordinal").to_numpy()
            ranks.append(order[nodes[:, j]])
        order = np.lexsort(ranks[::-1])  # the last key is the primary one: the first qid's ranks
        columns = [
            pl.Series(out_col(q), h.labels, dtype=pl.String).gather(nodes[order, j])
            for j, (q, h) in enumerate(zip(self.qids, hierarchies))
        ]
        return pl.DataFrame([*columns, pl.Series(SIZE, rows[order], dtype=pl.Int64)])

    def check_truthful(self) -> None:
        """Raise when a published node is not its original value or an ancestor of it (an algorithm defect: a value
        the row never had), for every qid whose node ids the builder gave (:meth:`from_nodes`, :meth:`from_levels`).

        >>> h = Hierarchy.suppression(["a"])  # '*' -> 'a'
        >>> TupleMap.from_nodes(pl.DataFrame({"x": ["*"], "size": [2]}), {"x": h}, {"x": [1]}).check_truthful()
        Traceback (most recent call last):
        AssertionError: the tuple map publishes 'x' = 'a' for the original value '*', not one of its ancestors
        """
        for q, known in self.ids.items():
            h = known.hierarchy
            by_leaf = self.leaf_nodes(q)
            if by_leaf is not None:  # each leaf published as one node: each leaf checked once
                own = np.flatnonzero(by_leaf >= 0)
                nodes = by_leaf[own]
            else:
                own = known.leaves if known.leaves is not None else h.ids_of(self.stored[q])
                nodes = known.nodes.astype(np.int64)
            bad = np.flatnonzero(h.ancestors_by_depth[own, h.depth[nodes]] != nodes)
            if len(bad):
                i = int(bad[0])
                raise AssertionError(
                    f"the tuple map publishes {q!r} = {h.label_of(int(nodes[i]))!r} for the original value "
                    f"{h.label_of(int(own[i]))!r}, not one of its ancestors"
                )

    def check_covers(self, aggregates: pl.DataFrame) -> None:
        """Raise when the map does not send every input row exactly once (an algorithm defect).

        A map built from the road's own aggregates (:meth:`from_levels`, :meth:`from_nodes`: full-domain, datafly)
        covers them by construction, its tuples being their columns: it passes at the first comparison, no pass
        over the rows; a map of other tuples (left out, doubled, split) is compared through a join
        (tests/methods/test_tuplemap.py breaks one of each kind on purpose). Whether each published node is an
        ancestor of the map's leaf is :meth:`check_truthful`'s.
        """
        if self.by_partition:  # the original tuples stay in the engine: the rows are counted there
            if self.n_rows != int(aggregates[SIZE].sum()):
                raise AssertionError("a partition map must send every input row to one partition")
            return
        if self.by_row:
            if self.stored.height != self.n_rows or self.n_rows != int(aggregates[SIZE].sum()):
                raise AssertionError("a row map must have one row per input row")
            return
        qids = list(self.qids)
        # one entry per aggregate row, in order: the sizes compared as numbers (the aggregates' UInt32 not cast to a
        # new Int64 column: 1,340 page faults at 3M rows), then the tuples
        aligned = self.stored.height == aggregates.height and not self.split
        sizes = aligned and np.array_equal(self.stored[SIZE].to_numpy(), aggregates[SIZE].to_numpy())
        if sizes and all(_same_memory(self.stored[q], aggregates[q]) for q in qids):
            return  # the aggregates' own columns (a map built from them keeps them): equal, without a pass
        if sizes and self.stored.select(qids).equals(aggregates.select(qids)):
            return
        per = self.stored.group_by(qids).agg(pl.col(SIZE).sum().alias("__anon_mapped"))
        both = aggregates.select(*qids, pl.col(SIZE).cast(pl.Int64)).join(per, on=qids, how="full", nulls_equal=True)
        bad = both.filter(pl.col(SIZE).fill_null(0) != pl.col("__anon_mapped").fill_null(0))
        if bad.height:
            raise AssertionError(f"the tuple map does not cover the input rows exactly: {bad.head(3).rows()}")


def _same_memory(a: pl.Series, b: pl.Series) -> bool:
    """Whether two one-chunk Series are views of the same Arrow memory (the same dtype, length, offset and buffers):
    then every value is equal. False says nothing (compare the values).

    >>> s = pl.Series(["a", "b"])
    >>> _same_memory(s, pl.DataFrame({"x": s})["x"]), _same_memory(s, pl.Series(["a", "b"]))
    (True, False)
    """
    flat = not (a.dtype.is_nested() or isinstance(a.dtype, (pl.Categorical, pl.Enum, pl.Object)))  # no dictionary
    if not flat or a.dtype != b.dtype or a.len() != b.len() or a.n_chunks() != 1 or b.n_chunks() != 1:
        return False
    x, y = (s.to_arrow(compat_level=pl.CompatLevel.newest()) for s in (a, b))  # one chunk: no copy
    if x.type != y.type or x.offset != y.offset:
        return False
    return [(u.address, u.size) if u is not None else None for u in x.buffers()] == [
        (u.address, u.size) if u is not None else None for u in y.buffers()
    ]


def _leaf_table(table: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """:meth:`TupleMap.leaf_nodes` of a map whose rows holding leaf ``x`` all publish ``table[x]``: `table` at the
    leaves some row holds, -1 elsewhere (Int64).

    >>> _leaf_table(np.array([0, 0, 0, 3]), np.array([3, 1, 3])).tolist()
    [-1, 0, -1, 3]
    """
    held = np.zeros(len(table), dtype=bool)
    held[leaves] = True  # no array over the rows (a bincount converts int32 leaves to Int64 first)
    return np.where(held, table, -1).astype(np.int64, copy=False)


def _suppressed(height: int, suppressed: np.ndarray | pl.Series | None) -> pl.Series:
    """A map's suppression marks (none: every row kept)."""
    return pl.Series(SUPPRESSED, np.zeros(height, dtype=bool) if suppressed is None else suppressed, dtype=pl.Boolean)
