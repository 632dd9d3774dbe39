"""Work started on a second thread beside the caller's, or done on the spot: one helper for the road's two uses
(the tuple pass's String labels, the report's metrics)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["beside"]

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
