"""Give the memory an algorithm freed back to the operating system (glibc only; elsewhere nothing).

The algorithms allocate and free many NumPy arrays of a few MB (one value per class tuple:
5-11 MB at 15 million rows). glibc serves them from its heap once its dynamic mmap
threshold has risen, and keeps the freed pages resident, while Polars allocates
elsewhere: the full-domain demo's peak memory grew by that much (602 -> 534 MB at 1,000,000
rows when trimmed). Trimming once after the method costs about a millisecond. (Fixing the
threshold instead mapped every large array on its own: it saved more memory but cost greedy
1.7 s of system time at 1,000,000 rows, so it is not done.)

glibc's dynamic threshold starts at 128 KiB and rises only as mapped blocks are freed: until then every array
above it is mapped, page-faulted in fresh and unmapped again. A process's first run paid that: on Adult
(30,162 rows) topdown's first call took 0.58-0.72 CPU s against 0.44-0.46 for the next ones (0.14-0.16 s of system
time, 75,000-78,000 page faults against about 19,000), fars_int's 1.27-1.38 against 1.12-1.15.
:func:`raise_mmap_threshold` frees one mapped block of :data:`THRESHOLD_BYTES` at the road's start, which moves the
threshold where the later frees would have moved it (the trim threshold to twice that): 0.42-0.48 CPU s on Adult's
first call (11,000 faults), 1.03-1.16 on fars_int's. Arrays above it are mapped as before; at a million rows and more
the threshold rises above it on its own (the arrays of a few MB above).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

__all__ = ["THRESHOLD_BYTES", "raise_mmap_threshold", "release_freed_memory"]

THRESHOLD_BYTES = 8 << 20
"""The mmap threshold :func:`raise_mmap_threshold` sets (8 MiB; glibc's dynamic limit is 32 MiB). On Adult's first
call 2 MiB left 26,000 page faults, 4 MiB 13,000, 8 and 16 MiB 11,000; on fars_int 69,000, 52,000, 36,000, 34,000."""


def release_freed_memory() -> bool:
    """Return the heap's free pages to the operating system; False where there is no glibc (nothing done).

    >>> isinstance(release_freed_memory(), bool)
    True
    """
    trim = _malloc_trim()
    return False if trim is None else bool(trim(0))


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once (a ``CDLL`` made per call left a reference cycle for the collector each
    time), or None where there is none."""
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own symbols: libc's on Linux
    except (OSError, AttributeError, TypeError):  # macOS, Windows, musl: no malloc_trim
        return None


@functools.cache
def raise_mmap_threshold() -> bool:
    """Free one mapped block of :data:`THRESHOLD_BYTES` (never touched), once per process, so that glibc serves the
    arrays below that size from its heap from the first run on (see the module docstring); False where there is no
    glibc (nothing done).

    >>> isinstance(raise_mmap_threshold(), bool)
    True
    """
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim  # noqa: B018  (glibc's own symbol: the dynamic threshold below is glibc's)
        malloc, free = libc.malloc, libc.free
    except (OSError, AttributeError, TypeError):  # macOS, Windows, musl
        return False
    malloc.restype, malloc.argtypes, free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    block = malloc(THRESHOLD_BYTES)  # above the threshold: mapped; freeing it raises the threshold to its size
    free(block)
    return block is not None
