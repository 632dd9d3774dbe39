"""Give the memory an algorithm freed back to the operating system (glibc only; elsewhere nothing).

The algorithms allocate and free many NumPy arrays of a few MB (one value per class tuple:
5-11 MB at 15 million rows). glibc serves them from its heap once its dynamic mmap
threshold has risen, and keeps the freed pages resident, while Polars allocates
elsewhere: the full-domain demo's peak memory grew by that much (602 -> 534 MB at 1,000,000
rows when trimmed). Trimming once after the method costs about a millisecond. (Fixing the
threshold instead mapped every large array on its own: it saved more memory but cost greedy
1.7 s of system time at 1,000,000 rows, so it is not done.)
"""

from __future__ import annotations

import ctypes

__all__ = ["release_freed_memory"]


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
