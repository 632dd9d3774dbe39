"""The full-domain lattice's cache of classes: the bytes it counts are the arrays its entries keep alive, each once.

Every vector rolled up from the same classes shares their per-tuple ids (the chain's root); counted once per entry,
they filled the cache with a few vectors of a handful of classes and evicted the bases later vectors roll up from.
The reference here walks the entries and adds each distinct array once, by hand.
"""

from __future__ import annotations

import gc
import itertools
import weakref

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.algorithms import Task, fulldomain
from polars_anon.algorithms.fulldomain import Lattice
from polars_anon.algorithms.objectives import Evaluation

QIDS = ["a", "b", "c"]
H = {
    q: pa.Hierarchy.from_dict(
        {"*": {f"{q}L": [f"{q}{i}" for i in range(4)], f"{q}H": [f"{q}{i}" for i in range(4, 8)]}}
    )
    for q in QIDS
}


def lattice() -> Lattice:
    """A lattice over every combination of three qids of eight values (512 tuples, 1 to 3 rows each)."""
    rows = list(itertools.product(*[[f"{q}{i}" for i in range(8)] for q in QIDS]))
    agg = pl.DataFrame(rows, schema=QIDS, orient="row").with_columns(
        pl.Series("size", [1 + i % 3 for i in range(len(rows))], dtype=pl.UInt32)
    )
    return Lattice(Task(agg.sort(QIDS), QIDS, H, 2))


def kept_bytes(lat: Lattice) -> int:
    """The bytes of the distinct arrays the cached entries keep alive (own arrays, the chain's links, the root)."""
    seen: dict[int, int] = {}
    for entry in lat._cache.entries:
        node = entry
        while node is not None:
            for array in (node.rep, node.rows, node._dense, node._ids):
                if array is not None:
                    seen[id(array)] = array.nbytes
            link = node._from
            if isinstance(link, np.ndarray):
                seen[id(link)] = link.nbytes
                break
            node = link
    return sum(seen.values())


def test_a_shared_root_is_counted_once() -> None:
    lat = lattice()
    lat.evaluate(np.array([1, 0, 0]))  # counted from the tuples: its ids every later vector's root here
    for vector in ([2, 0, 0], [1, 1, 0], [1, 0, 1], [2, 1, 0], [1, 1, 1]):
        lat.evaluate(np.array(vector))
    cache = lat._cache
    assert len(cache.slots) == 6
    assert cache.bytes == kept_bytes(lat)
    first = cache.get((1, 0, 0))
    assert first is not None and first._ids is not None
    roots = [e.kept()[-1] for e in cache.entries if e is not None]
    assert all(r is first._ids for r in roots)  # one root, 512 ids, counted once


def test_classes_that_are_the_tuples_are_no_root() -> None:
    """Above a vector whose classes are the tuples (here the bottom: 512 distinct tuples), classes are counted from
    the tuples' codes read in order, not rolled up through a tuple of each of its classes (the same classes; on the
    3M register three vectors above its bottom, 684,166 classes, took 20-28 ms so, 12-16 counted from the tuples)."""
    lat = lattice()
    lat.class_rows(np.array([0, 0, 0]))  # counted (its evaluation under k alone counts no class)
    lat.evaluate(np.array([1, 0, 0]))
    above = lat._cache.get((1, 0, 0))
    assert above is not None and above._ids is not None and above.depth == 0


def test_composed_ids_become_their_own_root() -> None:
    lat = lattice()
    lat.evaluate(np.array([1, 0, 0]))
    lat.evaluate(np.array([1, 1, 0]))
    lat.evaluate(np.array([2, 1, 0]))  # rolled up from (1, 1, 0), whose ids are not composed: a chain
    top = lat._cache.get((2, 1, 0))
    assert top is not None and top.depth == 1
    before = lat._cache.bytes
    top.ids()  # composed: it now holds its own ids, and no chain
    assert lat._cache.bytes == kept_bytes(lat) > before


def test_small_vectors_stay_cached_beside_a_large_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """With room for what the bottom and eight coarser vectors keep alive, all nine stay (the root counted per entry
    filled the cache again with each one and evicted the others); with room for none, only the newest stays."""
    coarse = [np.array(v) for v in itertools.product(range(1, 3), repeat=3)]
    lat = lattice()
    for vector in [np.array([0, 0, 0]), *coarse]:
        lat.class_rows(vector)  # counted (the bottom's evaluation under k alone counts no class)
    room = kept_bytes(lat)
    monkeypatch.setattr(fulldomain, "CACHE_BYTES", room)
    lat = lattice()
    for vector in [np.array([0, 0, 0]), *coarse]:
        lat.class_rows(vector)
    assert len(lat._cache.slots) == 1 + len(coarse)
    assert lat._cache.bytes == kept_bytes(lat) == room
    monkeypatch.setattr(fulldomain, "CACHE_BYTES", 1)  # every put evicts all but the newest
    lat.evaluate(np.array([0, 1, 2]))
    assert len(lat._cache.slots) == 1
    assert lat._cache.bytes == kept_bytes(lat)


def test_the_bottom_under_k_alone_counts_its_classes_only_when_read() -> None:
    """At the bottom under k alone the classes are the tuples (distinct, each at its leaves): the rows suppressed are
    those of the tuples below k, and the classes (684,166 on the 3M register, 45-95 ms of the job's CPU time) are
    counted only when an objective reads them; then they are the classes counted before, in the same order."""
    lat = lattice()
    bottom = np.array([0, 0, 0])
    ev = lat.evaluate(bottom)
    assert not lat._cache.slots  # no class counted yet
    below_k = lat.size < 2
    assert ev.suppressed == int(lat.size[below_k].sum()) > 0 and ev.n_classes == len(lat.size) == 512
    assert np.array_equal(ev.small, below_k)
    found = lat._classes(bottom)
    counted = Evaluation(lat, bottom, lambda: (found, found.rows < 2))  # as every other vector is evaluated
    assert (ev.suppressed, ev.n_classes) == (counted.suppressed, counted.n_classes)
    assert np.array_equal(ev.small, counted.small)
    for name in ("rep", "rows", "small_class", "key"):
        assert np.array_equal(getattr(ev, name), getattr(counted, name)), name
    assert ev.classes is found  # read now: the lattice's cached classes


def test_the_classes_are_freed_with_the_lattice() -> None:
    """No reference cycle keeps the cached classes alive once the lattice is dropped (the cache's callbacks hold it
    weakly): with the collector off, they go at once. A cycle kept the 3M register's cache (20-30 MB) resident through
    the write, the job's peak, until a collection happened to run."""
    gc.disable()
    try:
        lat = lattice()
        for vector in ([0, 0, 0], [1, 0, 0], [2, 0, 0], [1, 1, 1]):
            lat.class_rows(np.array(vector))  # counted (the bottom's evaluation under k alone counts no class)
        cached = [weakref.ref(e) for e in lat._cache.entries if e is not None]
        assert len(cached) == 4
        del lat
        assert [r() for r in cached] == [None] * 4
    finally:
        gc.enable()


def test_neighbours_of_few_tuples_are_computed_only_when_the_report_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """review36: the neighbours are a report-only detail, but fulldomain computed them inside every run over few
    tuples (explore's grid and the method advice run it without a report): now when the plan is settled
    (fails before: computed during the run)."""
    calls: list[int] = []
    real = fulldomain.neighbours
    monkeypatch.setattr(fulldomain, "neighbours", lambda *a: calls.append(1) or real(*a))
    h = pa.Hierarchy.suppression(["F", "M"])
    task = Task(pl.DataFrame({"g": ["F", "M"], "size": [3, 1]}), ["g"], {"g": h}, 2)
    plan = fulldomain.run(task, fulldomain.FulldomainOptions())
    assert calls == [] and "neighbours" not in plan.details
    assert plan.settle() and calls == [1] and plan.details["neighbours"] == real(fulldomain.search(task, 0), 0)
