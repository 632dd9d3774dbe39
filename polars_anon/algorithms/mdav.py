"""MDAV microaggregation and probabilistic k-anonymity [paper 004 §4, Algorithms 1 and 2].

1. Materialize the quasi-identifiers of every row (MDAV works on records; this is
   the one NumPy loop DESIGN.md allows besides the greedy merge) and code them
   (:mod:`polars_anon.distance`).
2. Tables larger than ``block_size`` rows are first cut into blocks by recursive
   median cuts (Mondrian style: the attribute of widest normalized range, cut at its
   median, categorical values in code order: :func:`code_orders`); MDAV then runs in each block.
3. MDAV [paper 004 Algorithm 1]: while 2k or more records remain, pick a random
   record q (seeded), the record p furthest from q, and form a cluster of p and its
   k - 1 nearest records. Then k to 2k - 1 remaining records form one cluster; fewer
   than k join the last cluster. Ties go to the earlier row. As the paper forms one
   cluster per round (classic MDAV forms two), a round starts with at least 2k
   records and the remainder is always k to 2k - 1, so every cluster has k to 2k - 1
   records; the "fewer than k" branch only serves a table smaller than k, which the
   pipeline refuses.
4. Publish, either
   - ``publish="permute"`` (probabilistic k-anonymity, Algorithm 2): the
     quasi-identifiers are grouped into QID blocks by mutual information with the
     sensitive attribute (sorted by MI, consecutive pairs; an odd last one joins the
     last pair), and inside each cluster the rows of a block are permuted together:
     ``pl.col(q).sort_by(key).over(cluster)`` with a seeded random key per block.
     The paper's "permute until different" is rejection sampling: clusters whose
     permuted block equals the original are redrawn (all at once, round after round).
     A cluster whose block values are all equal can never change; it is left as is
     and counted in ``constant_clusters``.
   - ``publish="aggregate"`` (classic microaggregation): numeric quasi-identifiers
     become the cluster mean (Float64), categorical ones the cluster mode (ties: the
     value first in code order: hierarchy leaf order, else an Enum's declared order, else text order).

Guarantees. ``aggregate`` gives every cluster one published tuple, so the table is
k-anonymous in the classic sense and passes the usual group-by check (values are
means and modes, not hierarchy ancestors: invariant 2 does not apply). ``permute``
keeps original values, so rows of a cluster generally differ and the table is *not*
classically k-anonymous; its plan declares ``guarantee="probabilistic"`` and its own
independent check (:func:`verify_permutation`) replaces the group-by check: every
cluster has at least k rows, each block's value-tuple multiset per cluster equals the
original's, and every non-quasi-identifier column is unchanged row by row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from polars_anon._progress import bar as progress_bar
from polars_anon._validate import refuse_not_finite
from polars_anon.algorithms import Plan, Task, register_method
from polars_anon.distance import AhmadDey, Gower, Records, encode_records, make_distance
from polars_anon.errors import InvalidParameterError, NotKAnonymousError, preview
from polars_anon.privacy.base import ClassView
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import value_codes
from polars_anon.privacy.evaluate import verify_models
from polars_anon.report.guarantee import PROBABILISTIC
from polars_anon.tuplemap import ROW, SIZE, SUPPRESSED, TupleMap, out_col, row_hash

if TYPE_CHECKING:
    from polars_anon.hierarchy import Hierarchy

__all__ = [
    "MdavOptions",
    "aggregate",
    "cluster",
    "cut_rule",
    "mdav",
    "merge_violating",
    "mutual_information",
    "permutation_keys",
    "permute",
    "qid_blocks",
    "split_blocks",
    "verify_permutation",
]

CLUSTER = "__anon_cluster"
MAX_ROUNDS = 200


def _k_smallest(d: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k smallest values, ties to the lower position."""
    kth = np.partition(d, k - 1)[k - 1]
    less = np.flatnonzero(d < kth)
    equal = np.flatnonzero(d == kth)[: k - len(less)]
    return np.concatenate([less, equal])


def mdav(num: np.ndarray, cat: np.ndarray, distance: Gower | AhmadDey, k: int, rng: np.random.Generator) -> np.ndarray:
    """Cluster ids (0, 1, ... in formation order) of n records [paper 004 Algorithm 1].

    `num` ``(p, n)`` and `cat` ``(c, n)`` are the records as transformed by
    ``distance.transform``. Every cluster has at least k records (when n >= k).

    >>> from polars_anon.distance import Gower, encode_records
    >>> r = encode_records(pl.DataFrame({"x": [0.0, 1, 2, 10, 11, 12, 13]}), ["x"], [])
    >>> g = Gower(r)
    >>> mdav(*g.transform(r), g, 3, np.random.default_rng(0)).tolist()
    [0, 0, 0, 1, 1, 1, 1]
    """
    n = num.shape[1]
    labels = np.zeros(n, dtype=np.int64)
    pos = np.arange(n)
    gone = np.zeros(n)  # +inf once a record is clustered: excluded by adding/subtracting it
    n_alive, cid = n, 0
    while n_alive >= 2 * k:
        if n_alive < 0.6 * len(pos):  # compact: later distances only over live records
            keep = np.flatnonzero(gone == 0)
            num, cat, pos, gone = num[:, keep], cat[:, keep], pos[keep], np.zeros(len(keep))
        q = int(rng.integers(len(pos)))
        while gone[q]:  # uniform over live records; at least 60% of positions are live
            q = int(rng.integers(len(pos)))
        p = int(np.argmax(distance.distances(num[:, q : q + 1], cat[:, q : q + 1], num, cat)[0] - gone))
        dp = distance.distances(num[:, p : p + 1], cat[:, p : p + 1], num, cat)[0] + gone
        dp[p] = -np.inf  # p itself is always in its cluster
        chosen = _k_smallest(dp, k)
        labels[pos[chosen]] = cid
        gone[chosen] = np.inf
        n_alive -= k
        cid += 1
    rest = pos[gone == 0]
    if n_alive >= k:
        labels[rest] = cid
    elif n_alive:
        labels[rest] = max(cid - 1, 0)
    return labels


def cut_rule(values: np.ndarray, counts: np.ndarray, k: int) -> tuple[Any, str]:
    """The median cut of a block, from its distinct values (ascending) and their counts: ``(median, rule)``.

    The median is the value at sorted position n // 2. The rule says which rows go left:
    ``"lt"`` those below the median, ``"le"`` those at most the median (the first of the
    two that leaves both sides at least max(k, n // 4) rows), else ``"half"``: the first
    n // 2 rows in (value, row order), i.e. those below the median and the earliest rows
    at the median. :func:`split_blocks` and Spark's blocks
    (:mod:`polars_anon.engines.planners.spark_mdav`) both cut by this rule.

    >>> cut_rule(np.array([1.0, 2.0, 3.0]), np.array([2, 2, 2]), 1)
    (np.float64(2.0), 'lt')
    >>> cut_rule(np.array([1.0, 2.0]), np.array([1, 9]), 2)
    (np.float64(2.0), 'half')
    """
    n = int(counts.sum())
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, n // 2, side="right"))
    median, le = values[i], int(cum[i])
    lt = le - int(counts[i])
    smallest = max(k, n // 4)
    for rule, size in (("lt", lt), ("le", le)):
        if smallest <= size <= n - smallest:
            return median, rule
    return median, "half"


def _median_cut(values: np.ndarray, k: int) -> np.ndarray:
    """Boolean left side of a cut at the median (:func:`cut_rule`); the "half" rule takes ties in row order."""
    distinct, counts = np.unique(values, return_counts=True)
    median, rule = cut_rule(distinct, counts, k)
    if rule == "le":
        return values <= median
    left = values < median
    if rule == "half":
        left[np.flatnonzero(values == median)[: len(values) // 2 - int(left.sum())]] = True
    return left


def widest(spread: np.ndarray) -> int:
    """The attribute a block is cut on: the widest normalized range, ties to the first."""
    return int(np.argmax(spread))


def split_blocks(num: np.ndarray, cat: np.ndarray, k: int, block_size: int) -> list[np.ndarray]:
    """Cut n records into blocks of at most `block_size` rows (each >= k when block_size >= 2k).

    `num` holds numeric attributes scaled to [0, 1], `cat` categorical codes (in an
    order where nearby codes are related, e.g. hierarchy leaf order). Each cut takes
    the attribute of widest normalized range in the block (numeric range, or code
    range over the attribute's code count) and cuts at its median.

    >>> [b.tolist() for b in split_blocks(np.array([[0.0, 0.9, 0.1, 1.0]]), np.zeros((0, 4), int), 1, 2)]
    [[0, 2], [1, 3]]
    """
    n = num.shape[1]
    cat_span = np.maximum(cat.max(axis=1) - cat.min(axis=1), 1) if cat.size else np.ones(0)
    stack, out = [np.arange(n)], []
    while stack:
        idx = stack.pop()
        if len(idx) <= block_size:
            out.append(idx)
            continue
        spread = np.concatenate([np.ptp(num[:, idx], axis=1), np.ptp(cat[:, idx], axis=1) / cat_span])
        j = widest(spread)
        values = num[j, idx] if j < num.shape[0] else cat[j - num.shape[0], idx]
        left = _median_cut(values, k)
        stack.extend([idx[~left], idx[left]])  # left first
    return out


def cluster(records: Records, distance: str, k: int, seed: int = 0, block_size: int = 10_000) -> tuple[np.ndarray, int]:
    """Cluster ids of every record, and the number of blocks MDAV ran in.

    >>> r = encode_records(pl.DataFrame({"x": [0.0, 1, 2, 10, 11, 12]}), ["x"], [])
    >>> labels, blocks = cluster(r, "gower", 3)
    >>> labels.tolist(), blocks
    ([0, 0, 0, 1, 1, 1], 1)
    """
    dist = make_distance(distance, records)
    num, cat = dist.transform(records)
    if records.n <= block_size:
        blocks = [np.arange(records.n)]
    else:
        blocks = split_blocks(*Gower(records).transform(records), k, block_size)
    labels = np.empty(records.n, dtype=np.int64)
    offset = 0
    for b, idx in enumerate(progress_bar(blocks, desc="mdav blocks", unit="block")):
        local = mdav(num[:, idx], cat[:, idx], dist, k, np.random.default_rng([seed, b]))
        labels[idx] = local + offset
        offset += int(local.max()) + 1
    return labels, len(blocks)


def mutual_information(lf: pl.LazyFrame, a: str, b: str) -> pl.LazyFrame:
    """One Float64 row ``mi``: the mutual information (nats) of columns a and b [paper 004 eq. 3].

    >>> mutual_information(pl.LazyFrame({"a": [0, 0, 1, 1], "b": [5, 5, 6, 6]}), "a", "b").collect().item()
    0.6931...
    """
    n = pl.col("__anon_n")
    joint = lf.group_by(a, b).agg(pl.len().cast(pl.Float64).alias("__anon_n"))
    return joint.select((n / n.sum() * (n * n.sum() / (n.sum().over(a) * n.sum().over(b))).log()).sum().alias("mi"))


def qid_blocks(qids: Sequence[str], mi: Mapping[str, float] | None = None) -> list[list[str]]:
    """QID blocks [paper 004 §4]: qids sorted by MI with the sensitive attribute, in pairs.

    Without `mi`, the given order. An odd last qid joins the last pair; a single qid
    is its own block.

    >>> qid_blocks(["a", "b", "c", "d", "e"], {"a": 0.1, "b": 0.5, "c": 0.3, "d": 0.0, "e": 0.2})
    [['b', 'c'], ['e', 'a', 'd']]
    """
    order = list(qids) if mi is None else sorted(qids, key=lambda q: (-mi[q], list(qids).index(q)))
    blocks = [order[i : i + 2] for i in range(0, len(order), 2)]
    if len(blocks) > 1 and len(blocks[-1]) == 1:
        blocks[-2].extend(blocks.pop())
    return blocks


def _work_frame(records: Records, labels: np.ndarray) -> pl.DataFrame:
    cols = {q: records.num[j] for j, q in enumerate(records.numeric)}
    cols |= {q: records.cat[j] for j, q in enumerate(records.categorical)}
    return pl.DataFrame({CLUSTER: labels, **cols})


def permutation_keys(
    records: Records, labels: np.ndarray, blocks: Sequence[Sequence[str]], seed: int = 0
) -> tuple[np.ndarray, list[int], int]:
    """Per block, a sort key per row whose within-cluster order permutes the block [Algorithm 2].

    Returns ``(keys (blocks x n), constant clusters per block, rounds)``. Clusters whose
    permuted block would equal the original are redrawn until it differs, except
    clusters where the block is constant (counted, left as is).

    >>> r = encode_records(pl.DataFrame({"a": ["x", "y", "z", "z", "z"]}), [], ["a"])
    >>> keys, constant, rounds = permutation_keys(r, np.array([0, 0, 0, 1, 1]), [["a"]])
    >>> constant
    [1]
    """
    n = len(labels)
    work = _work_frame(records, labels)
    rng = np.random.default_rng([seed, 104729])
    keys = np.empty((len(blocks), n), dtype=np.int64)
    constant, rounds = [], 0
    for b, block in enumerate(blocks):
        key = rng.permutation(n).astype(np.int64)
        same = pl.all_horizontal(pl.col(q).n_unique() == 1 for q in block)
        constant.append(int(work.group_by(CLUSTER).agg(same.alias("c"))["c"].sum()))
        todo = work.with_columns(pl.Series(ROW, np.arange(n)))
        for r in range(1, MAX_ROUNDS + 1):
            moved = todo.with_columns(pl.Series("__anon_key", key[todo[ROW].to_numpy()])).with_columns(
                pl.col(q).sort_by("__anon_key").over(CLUSTER).alias(f"__anon_p_{q}") for q in block
            )
            stuck = moved.group_by(CLUSTER).agg(
                (~pl.any_horizontal((pl.col(q) != pl.col(f"__anon_p_{q}")).any() for q in block) & ~same).alias("s")
            )
            stuck = stuck.filter("s")[CLUSTER]
            if stuck.is_empty():
                break
            rounds = max(rounds, r)
            todo = todo.filter(pl.col(CLUSTER).is_in(stuck.implode()))
            rows = todo[ROW].to_numpy()
            key[rows] = rng.permutation(len(rows)) + n * r  # unique within a cluster
        keys[b] = key
    return keys, constant, rounds


def _with_map(lf: pl.LazyFrame, mapping: pl.DataFrame) -> pl.LazyFrame:
    return (
        lf.with_row_index(ROW)
        .with_columns(pl.col(ROW).cast(pl.Int64))
        .join(mapping.lazy(), on=ROW, how="left", maintain_order="left")
    )


def _row_map(frame: dict[str, Any], n: int) -> TupleMap:
    qids = [q for q in frame]
    return TupleMap(
        tuple(qids),
        pl.DataFrame(
            {
                ROW: np.arange(n, dtype=np.int64),
                **{out_col(q): v for q, v in frame.items()},
                SIZE: np.ones(n, dtype=np.int64),
                SUPPRESSED: np.zeros(n, dtype=bool),
            }
        ),
        by_row=True,
    )


def _fingerprinted(tmap: TupleMap, frame: pl.DataFrame) -> TupleMap:
    """`tmap` with each row's :func:`~polars_anon.tuplemap.row_hash` of its qids in `frame` (the rows as the method
    read them): publish sends a row read again in another order, or with other values, to null labels (refused)."""
    return replace(tmap, stored=tmap.stored.with_columns(frame.select(row_hash(frame.columns)).to_series()))


def permute(records: pl.DataFrame, labels: np.ndarray, blocks: Sequence[Sequence[str]], keys: np.ndarray) -> TupleMap:
    """Row map publishing each block's values permuted inside each cluster (rows keep their order).

    Inside a cluster, the i-th row (row order) takes the block values of the row with
    the i-th smallest key, as ``pl.col(q).sort_by(key).over(cluster)`` would.

    >>> recs = pl.DataFrame({"a": ["x", "y", "z"], "b": ["1", "2", "3"]})
    >>> m = permute(recs, np.array([0, 0, 0]), [["a", "b"]], np.array([[2, 0, 1]]))
    >>> m.frame.select("__anon_out_a", "__anon_out_b").rows()
    [('y', '2'), ('z', '3'), ('x', '1')]
    """
    n = len(labels)
    dest = np.lexsort((np.arange(n), labels))  # rows of each cluster in row order
    out: dict[str, Any] = {}
    for b, block in enumerate(blocks):
        source = np.empty(n, dtype=np.int64)
        source[dest] = np.lexsort((keys[b], labels))  # ... paired with its rows in key order
        for q in block:
            out[q] = records[q].gather(source)
    return _row_map({q: out[q] for q in records.columns if q in out}, n)


def aggregate(records: Records, labels: np.ndarray) -> TupleMap:
    """Row map publishing cluster means (numeric, Float64) and modes (categorical; ties to the lower code).

    >>> r = encode_records(pl.DataFrame({"x": ["1", "2", "6"], "c": ["u", "v", "v"]}), ["x"], ["c"])
    >>> aggregate(r, np.array([0, 0, 0])).frame.select("__anon_out_x", "__anon_out_c").rows()
    [(3.0, 'v'), (3.0, 'v'), (3.0, 'v')]
    """
    n_clusters = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=n_clusters)
    out: dict[str, Any] = {}
    for j, q in enumerate(records.numeric):
        means = np.bincount(labels, weights=records.num[j], minlength=n_clusters) / sizes
        out[q] = means[labels]
    for j, q in enumerate(records.categorical):
        n_codes = len(records.labels[j])
        counts = np.bincount(labels * n_codes + records.cat[j], minlength=n_clusters * n_codes)
        mode = counts.reshape(n_clusters, n_codes).argmax(axis=1)
        out[q] = pl.Series(records.labels[j]).gather(mode[labels])
    return _row_map(out, len(labels))


def verify_permutation(
    published: pl.LazyFrame, original: pl.LazyFrame, labels: np.ndarray, blocks: Sequence[Sequence[str]], k: int
) -> dict[str, Any]:
    """Independent check of probabilistic k-anonymity by within-cluster permutation.

    Checks that the published table has the original's row count, that every
    cluster has at least k rows, that per cluster the multiset of each block's value
    tuples equals the original's, and that every other column is unchanged row by
    row. Raises :class:`NotKAnonymousError`; returns ``min_class_size`` (the smallest
    cluster), ``n_classes`` (clusters), ``n_rows`` and ``classic_min_class_size`` (the
    smallest group of equal published quasi-identifier tuples, for comparison).
    """
    qids = [q for block in blocks for q in block]
    names = original.collect_schema().names()
    others = [c for c in names if c not in qids]
    mapping = pl.DataFrame({ROW: np.arange(len(labels), dtype=np.int64), CLUSTER: labels})
    n_pub = published.select(pl.len()).collect().item()  # materializes: one row
    fail = "independent check failed: "
    if n_pub != len(labels):
        raise NotKAnonymousError(
            f"{fail}the published table has {n_pub} rows, the input {len(labels)}; nothing was written"
        )
    sizes = np.bincount(labels)
    if sizes.min() < k:
        raise NotKAnonymousError(f"{fail}a cluster has {int(sizes.min())} rows, fewer than k={k}; nothing was written")
    pub, orig = _with_map(published, mapping), _with_map(original, mapping)
    queries = []
    for block in blocks:
        keys = [CLUSTER, *block]
        a = orig.group_by(keys).agg(pl.len().alias("__anon_a"))
        b = pub.group_by(keys).agg(pl.len().alias("__anon_b"))
        diff = a.join(b, on=keys, how="full", coalesce=True, nulls_equal=True)
        queries.append(diff.select((pl.col("__anon_a").fill_null(0) != pl.col("__anon_b").fill_null(0)).sum()))
    if others:
        both = orig.select(ROW, *others).join(
            published.with_row_index(ROW).with_columns(pl.col(ROW).cast(pl.Int64)).select(ROW, *others),
            on=ROW,
            how="inner",
            suffix="__anon_pub",
        )
        same = pl.all_horizontal(pl.col(c).eq_missing(pl.col(f"{c}__anon_pub")) for c in others)
        queries.append(both.select((~same).sum()))
    queries.append(published.group_by(qids).agg(pl.len()).select(pl.col("len").min()))
    queries.append(_own_tuples(published, original, qids))
    *results, own = pl.collect_all(queries)  # materializes: one row each
    results = [f.item() for f in results]
    for block, bad in zip(blocks, results):
        if bad:
            raise NotKAnonymousError(
                f"{fail}block {list(block)}: {bad} (cluster, value) counts differ from the input, so values moved "
                "outside their cluster; nothing was written"
            )
    if others and results[len(blocks)]:
        raise NotKAnonymousError(
            f"{fail}{results[len(blocks)]} rows changed non-quasi-identifier columns; nothing was written"
        )
    return {
        "min_class_size": int(sizes.min()),
        "n_classes": len(sizes),
        "n_rows": int(n_pub),
        "classic_min_class_size": int(results[-1]),
        "own_tuple_records": int(own["own"].item() or 0),
        "own_tuple_unique": int(own["unique"].item() or 0),
    }


def _own_tuples(published: pl.LazyFrame, original: pl.LazyFrame, qids: Sequence[str]) -> pl.LazyFrame:
    """Rows published with their own exact qid tuple (the permutation left them in place), and how many of those are
    unique in the release (the tuple occurs once): the records a probabilistic guarantee leaves exposed.

    >>> pub = pl.LazyFrame({"a": [1, 2, 3, 3], "b": ["x", "y", "z", "z"]})
    >>> orig = pl.LazyFrame({"a": [1, 3, 3, 2], "b": ["x", "z", "z", "y"]})
    >>> _own_tuples(pub, orig, ["a", "b"]).collect().rows()
    [(2, 1)]
    """
    qids = list(qids)
    same = pl.all_horizontal(pl.col(q).eq_missing(pl.col(f"{q}__anon_orig")) for q in qids)
    once = pl.len().over(qids) == 1
    return pl.concat(
        [published, original.select(pl.col(q).alias(f"{q}__anon_orig") for q in qids)], how="horizontal"
    ).select(same.sum().alias("own"), (same & once).sum().alias("unique"))


def merge_violating(
    labels: np.ndarray, records: Records, distance: Gower | AhmadDey, constraints: Constraints, sensitive: pl.DataFrame
) -> tuple[np.ndarray, int]:
    """Merge each cluster that violates a model with its nearest cluster until every cluster satisfies them.

    A cluster is represented by the mean of its numeric attributes and the mode of
    its categorical ones (ties to the lower code); the nearest is by `distance`
    between representatives. Clusters are taken in id order; the merged cluster keeps
    the lower id. Returns the new labels (renumbered 0..) and the number of merges.

    >>> r = encode_records(pl.DataFrame({"x": [0.0, 1, 9, 10]}), ["x"], [])
    >>> from polars_anon.privacy.evaluate import build_constraints
    >>> from polars_anon.privacy import LDiversity
    >>> s = pl.DataFrame({"s": ["a", "a", "a", "b"]})
    >>> agg = pl.DataFrame({"q": ["0"], "size": [4]})
    >>> counts = {"s": pl.DataFrame({"q": ["0", "0"], "s": ["a", "b"], "count": [3, 1]})}
    >>> c = build_constraints(agg, ["q"], 2, [LDiversity("s", l=2)], counts)
    >>> merge_violating(np.array([0, 0, 1, 1]), r, Gower(r), c, s)
    (array([0, 0, 0, 0]), 1)
    """
    num, cat = distance.transform(records)
    n_cl = int(labels.max()) + 1
    size = np.bincount(labels, minlength=n_cl).astype(np.int64)
    counts = {}
    for a, sc in constraints.sensitive.items():
        codes = value_codes(sensitive[a], sc.domain.labels)
        counts[a] = np.bincount(labels * sc.domain.m + codes, minlength=n_cl * sc.domain.m).reshape(n_cl, sc.domain.m)
    sums = (
        np.stack([np.bincount(labels, weights=row, minlength=n_cl) for row in num]) if len(num) else np.zeros((0, n_cl))
    )
    width = [int(row.max()) + 1 for row in cat]
    cat_counts = [np.bincount(labels * w + row, minlength=n_cl * w).reshape(n_cl, w) for row, w in zip(cat, width)]

    def ok(ids: np.ndarray) -> np.ndarray:
        view = ClassView(size[ids], {a: c[ids] for a, c in counts.items()})
        return constraints.ok(view) & (view.size >= constraints.floor)

    alive = np.ones(n_cl, dtype=bool)
    good = ok(np.arange(n_cl))
    parent = np.arange(n_cl)
    merges = 0
    while alive.sum() > 1:
        bad = np.flatnonzero(alive & ~good)
        if not len(bad):
            break
        v = int(bad[0])
        rep_num = sums / np.maximum(size, 1)
        rep_cat = (
            np.stack([cc.argmax(axis=1) for cc in cat_counts]) if cat_counts else np.zeros((0, n_cl), dtype=np.int64)
        )
        d = distance.distances(rep_num[:, v : v + 1], rep_cat[:, v : v + 1], rep_num, rep_cat)[0]
        d[~alive] = np.inf
        d[v] = np.inf
        j = int(np.argmin(d))
        tgt, src = min(v, j), max(v, j)
        size[tgt] += size[src]
        sums[:, tgt] += sums[:, src]
        for c in (*counts.values(), *cat_counts):
            c[tgt] += c[src]
        alive[src] = False
        parent[src] = tgt
        good[tgt] = ok(np.array([tgt]))[0]
        merges += 1
    while True:  # resolve merge chains
        nxt = parent[parent]
        if np.array_equal(nxt, parent):
            break
        parent = nxt
    return np.unique(parent[labels], return_inverse=True)[1].ravel(), merges


@dataclass(frozen=True)
class MdavOptions:
    """Options of ``method="mdav"`` (see :func:`run`)."""

    publish: Literal["aggregate", "permute"] = "aggregate"
    distance: Literal["gower", "ahmad_dey"] = "gower"
    block_size: int = 10_000
    numeric: list[str] | None = field(default=None, metadata={"expects": "a list of qid names"})
    blocks: list[list[str]] | None = field(default=None, metadata={"expects": "a list of non-empty lists of qid names"})


def _numeric(task: Task, numeric: list[str] | None) -> list[str]:
    """The numeric qids: the given ones (checked) or those whose values all read as numbers, none NaN or infinite
    (a float column's are refused on the road; text such as a CSV's ``NaN`` read as a number is refused here), but
    for a qid whose column declares an order (an Enum, :attr:`~polars_anon.algorithms.Task.orders`): its
    categories are categories, coded in that order, as Mondrian orders them (``Enum(["10", "9"])`` is not
    averaged), unless `numeric` names it. Each candidate is cast to numbers once, for both checks."""
    qids = list(task.qids)
    wrong = [q for q in numeric or [] if q not in qids]
    if wrong:
        raise InvalidParameterError(f"numeric names {wrong}, which are not qids; qids are {qids}")
    candidates = [q for q in qids if q not in task.orders] if numeric is None else [q for q in qids if q in numeric]
    hs = task.hierarchies
    roots = {q: hs[q].null_root if q in hs else None for q in candidates}
    numbers = task.aggregates.select(_as_number(q, roots[q]) for q in candidates)
    if numeric is None:
        chosen = [q for q in candidates if not numbers[q].null_count()]
    else:
        chosen = candidates
        for q in numeric:
            _refuse_not_numbers(task.aggregates[q], numbers[q], roots[q])
    for q in chosen:
        refuse_not_finite(task.aggregates, q, numbers=numbers[q])
    return chosen


def _as_number(q: str, root: str | None) -> pl.Expr:
    """Qid `q` read as numbers (null: not one). The `root` that holds its nulls
    (:attr:`~polars_anon.hierarchy.Hierarchy.null_root`) is none even when its label reads as one (a root ``'0'``):
    MDAV must not average the nulls."""
    number = pl.col(q).cast(pl.Float64, strict=False)
    return number if root is None else pl.when(pl.col(q) == root).then(None).otherwise(number).alias(q)


def _refuse_not_numbers(values: pl.Series, numbers: pl.Series, root: str | None) -> None:
    """Refuse the `values` of a qid given in ``numeric`` that do not read as numbers (`numbers`: them, cast); `root`:
    where null='suppress' put its nulls (:attr:`~polars_anon.hierarchy.Hierarchy.null_root`; then named as such: not
    a value of the input)."""
    bad = values.filter(numbers.is_null()).unique().sort().to_list()
    if root is not None and root in bad:
        raise InvalidParameterError(
            f"numeric qid {values.name!r} holds nulls, published as its hierarchy's root {root!r} under "
            "null='suppress', which MDAV cannot average; fill the nulls or drop those rows, or leave the qid out of "
            "numeric to treat it as categorical"
        )
    if bad:
        raise InvalidParameterError(
            f"numeric qid {values.name!r} has {len(bad)} values that are not numbers (first: {preview(bad)}); "
            "leave it out of numeric to treat it as categorical"
        )


def _check(task: Task, options: MdavOptions) -> None:
    if options.block_size < 2 * task.k:
        raise InvalidParameterError(
            f"block_size must be an integer >= 2k = {2 * task.k}, got {options.block_size!r}; "
            "blocks are cut in halves of at least k rows"
        )
    if options.blocks is not None:
        flat = [q for b in options.blocks for q in b]
        if any(not b for b in options.blocks) or sorted(flat) != sorted(task.qids):
            raise InvalidParameterError(
                f"blocks must name every qid exactly once, in non-empty blocks; got {options.blocks}, qids are "
                f"{list(task.qids)}"
            )


def run_details(
    options: MdavOptions, numeric: list[str], n_blocks: int, n_clusters: int, smallest: int, largest: int
) -> dict[str, Any]:
    """The report's details of an MDAV run (whatever engine clustered it)."""
    return {
        "publish": options.publish,
        "distance": options.distance,
        "numeric": numeric,
        "block_size": options.block_size,
        "n_blocks": n_blocks,
        "n_clusters": n_clusters,
        "min_cluster_size": smallest,
        "max_cluster_size": largest,
    }


@register_method(
    "mdav",
    MdavOptions,
    needs_hierarchies=False,
    records=True,
    guarantee="probabilistic (permute) or k-anonymity (aggregate)",
    tuple_classes=lambda options: options.publish == "aggregate",  # permute: k counts clusters, not in the file
)
def run(task: Task, options: MdavOptions) -> Plan:
    """MDAV clustering, then within-cluster permutation or aggregation (module docstring).

    Options: ``publish`` ("aggregate" | "permute", default "aggregate": every row meets k deterministically),
    ``distance``
    ("gower" | "ahmad_dey", default "gower"), ``block_size`` (default 10,000),
    ``numeric`` (qids treated as numbers; default the qids, not Enums, whose values all read as
    numbers), ``blocks`` (QID blocks for permute; default by mutual information with
    `sensitive`, or pairs in qid order without it). Qids need no hierarchy here; a
    given one only orders categorical codes (for the block cuts and mode ties), as an Enum's declared order does
    without one (:func:`code_orders`).
    """
    _check(task, options)
    qids = list(task.qids)
    numeric = _numeric(task, options.numeric)
    categorical = [q for q in qids if q not in numeric]
    frame = task.records.select(qids)  # type: ignore[union-attr]  (records=True: the pipeline gives them)
    records = encode_records(frame, numeric, categorical, code_orders(categorical, task.hierarchies, task.orders))
    labels, n_blocks = cluster(records, options.distance, task.k, task.seed, options.block_size)
    model_merges = 0
    if not task.constraints.k_only:
        sensitive = task.records.select(list(task.constraints.sensitive))  # type: ignore[union-attr]
        dist = make_distance(options.distance, records)
        labels, model_merges = merge_violating(labels, records, dist, task.constraints, sensitive)
    sizes = np.bincount(labels)
    details = run_details(options, numeric, n_blocks, len(sizes), int(sizes.min()), int(sizes.max()))
    if not task.constraints.k_only:
        details["model_merges"] = model_merges
        details["privacy_scope"] = (
            "clusters: each MDAV cluster satisfies every model; with publish='permute' a cluster's records keep their "
            "sensitive values and exchange quasi-identifiers, so the models bound what an adversary who places a "
            "record "
            "in its cluster learns"
        )
    if options.publish == "aggregate":
        return Plan(_fingerprinted(aggregate(records, labels), frame), details)
    blocks, mi = options.blocks, None
    if blocks is None:
        if task.sensitive is not None:
            lf = task.records.lazy()  # type: ignore[union-attr]
            frames = pl.collect_all([mutual_information(lf, q, task.sensitive) for q in qids])  # one row each
            mi = {q: round(float(f.item()), 12) for q, f in zip(qids, frames)}
        blocks = qid_blocks(qids, mi)
    keys, constant, rounds = permutation_keys(records, labels, blocks, task.seed)
    details |= {
        "qid_blocks": blocks,
        "mutual_information": mi,
        "constant_clusters": dict(zip([",".join(b) for b in blocks], constant)),
        "permute_rounds": rounds,
    }
    return Plan(
        _fingerprinted(permute(frame, labels, blocks, keys), frame),
        details,
        guarantee=PROBABILISTIC,
        verify=lambda published, original: _verify_clusters(published, original, labels, blocks, task),
    )


def _verify_clusters(
    published: pl.LazyFrame, original: pl.LazyFrame, labels: np.ndarray, blocks: list[list[str]], task: Task
) -> dict[str, Any]:
    """The permutation check, then every model on the clusters (their sensitive values are the input's, row by row)."""
    facts = verify_permutation(published, original, labels, blocks, task.k)
    with_cluster = published.with_columns(pl.lit(pl.Series(CLUSTER, labels)))
    return facts | verify_models(with_cluster, [CLUSTER], task.constraints)


def code_orders(
    categorical: Sequence[str], hierarchies: Mapping[str, Hierarchy], declared: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """The order of each categorical qid's codes, which the block cuts and the mode ties (the lower code) follow:
    its hierarchy's leaf order, else the order its column declares (an Enum's categories:
    :attr:`~polars_anon.request.Request.orders`), else none (the labels sorted: :func:`~polars_anon.distance.
    encode_records`). The driver's run and the Spark planner both take it.

    >>> code_orders(["g", "s"], {}, {"g": ("low", "mid", "high")})
    {'g': ['low', 'mid', 'high']}
    """
    return {
        q: list(hierarchies[q].leaf_labels if q in hierarchies else declared[q])
        for q in categorical
        if q in hierarchies or q in declared
    }


check_task = _check
"""MDAV's checks of a task and its options.

Public for the Spark planner, :mod:`polars_anon.engines.planners.spark_mdav`.
"""
numeric_qids = _numeric
"""The numeric qids of a task (public for the Spark planner)."""
__all__ += ["check_task", "code_orders", "numeric_qids"]
