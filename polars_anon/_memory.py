"""Give the memory an algorithm freed back to the operating system (glibc only; elsewhere nothing).

The algorithms allocate and free many NumPy arrays of a few MB (one value per class tuple:
5-11 MB at 15 million rows). glibc serves them from its heap once its dynamic mmap
threshold has risen, and keeps the freed pages resident, while Polars allocates
elsewhere: the full-domain demo's peak memory grew by that much (602 -> 534 MB at 1,000,000
rows when trimmed). Trimming once after the method costs about a millisecond. (Fixing the
threshold instead mapped every large array on its own: it saved more memory but cost greedy
1.7 s of system time at 1,000,000 rows, so it is not done.)

Several queries over the same rows are collected by :func:`collect_apart`, not by a bare
``pl.collect_all``: by default Polars shares their common input (comm_subplan_elim), and
caches it in memory, every row of it, which makes the peak grow with the rows (the 15M-row
demo's aggregation pass: 1.9 GB, 0.75 GB apart).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from polars._typing import EngineType

__all__ = ["collect_apart", "release_freed_memory"]


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system; False where there is no glibc (nothing done).

    >>> isinstance(release_freed_memory(), bool)
    True
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols: libc's on Linux
    except (OSError, AttributeError, TypeError):  # macOS, Windows, musl: no malloc_trim
        return False
    return bool(trim(0))


def collect_apart(queries: Iterable[pl.LazyFrame], engine: EngineType = "auto") -> list[pl.DataFrame]:
    """``pl.collect_all`` without sharing the queries' common input: each streams its own scan of it.

    Sharing caches the common input in memory (all its rows), so queries over the rows are
    collected apart: the peak stays that of the largest result, and each query reads the
    input once more (cheap next to holding it).

    >>> lf = pl.LazyFrame({"a": [1, 1, 2]})
    >>> [f.item() for f in collect_apart([lf.select(pl.len()), lf.select(pl.col("a").n_unique())])]
    [3, 2]
    """
    return pl.collect_all(queries, engine=engine, optimizations=pl.QueryOptFlags(comm_subplan_elim=False))
