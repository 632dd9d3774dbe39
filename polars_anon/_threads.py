"""Work started on a second thread beside the caller's, or done on the spot: one helper for the road's uses (the
tuple pass's String labels, the report's metrics; fulldomain's neighbours, on a thread of their own)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["beside", "on_own_thread"]

T = TypeVar("T")


def beside(pool: ThreadPoolExecutor, start: bool, fn: Callable[..., T], *args: object) -> Future[T]:
    """``fn(*args)`` started on `pool`'s thread where `start`, else computed now (a future already done): the caller
    reads ``.result()`` either way.

    >>> with ThreadPoolExecutor(1) as pool:
    ...     [beside(pool, s, sum, [1, 2]).result() for s in (True, False)]
    [3, 3]
    """
    if start:
        return pool.submit(fn, *args)
    done: Future[T] = Future()
    done.set_result(fn(*args))
    return done


def on_own_thread(fn: Callable[..., T], *args: object) -> Future[T]:
    """``fn(*args)`` started on a thread of its own, which outlives the caller's block (its pool is shut down at once,
    not waited for: its one thread ends with ``fn``), for work read later by another function than the one that
    starts it.

    >>> on_own_thread(sum, [1, 2]).result()
    3
    """
    pool = ThreadPoolExecutor(1, thread_name_prefix="polars_anon_later")
    try:
        return pool.submit(fn, *args)
    finally:
        pool.shutdown(wait=False)
