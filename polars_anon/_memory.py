"""Give freed NumPy buffers back to the operating system at once (glibc only; the CLI's process).

glibc serves allocations below a *dynamic* threshold from its heap, and raises that threshold
(up to 32 MB) each time a larger mapped block is freed. The algorithms allocate and free
many arrays of a few MB (one value per class tuple: 5-11 MB at 15 million rows), which then
land in the heap and stay resident after they are freed, while Polars allocates elsewhere:
the full-domain demo's peak memory was 585 MB instead of 458 MB at 1,000,000 rows. Fixing the
threshold at 1 MB maps every larger array on its own, so freeing it returns the memory.
The library leaves a host process's allocator alone; only ``polars-anon`` calls this.
"""

from __future__ import annotations

import ctypes

__all__ = ["map_large_buffers"]

_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number (malloc.h)
THRESHOLD = 1 << 20


def map_large_buffers() -> bool:
    """Fix glibc's mmap threshold at :data:`THRESHOLD`; False where there is no glibc (nothing done).

    >>> isinstance(map_large_buffers(), bool)
    True
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: libc's on Linux
    except (OSError, AttributeError, TypeError):  # macOS, Windows: no mallopt
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, THRESHOLD))
