"""Byte-for-byte snapshots of an output folder: what "nothing was written" is checked against.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("x")
>>> with unchanged(folder):
...     pass
>>> snapshot(folder)
{'a.txt': b'x'}
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["snapshot", "unchanged"]


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under `folder` (hidden ones included): relative path -> bytes (None for a folder)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        out[path.relative_to(folder).as_posix()] = None if path.is_dir() else path.read_bytes()
    return out


@contextmanager
def unchanged(folder: Path) -> Iterator[dict[str, bytes | None]]:
    """Assert that the block leaves `folder` exactly as it was (no new, changed or removed entry).

    The block runs even when it raises; the check runs after it either way (the
    exception, the expected refusal, propagates after the folder was compared).
    """
    before = snapshot(folder)
    try:
        yield before
    finally:
        after = snapshot(folder)
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
        assert not (added or removed or changed), (
            f"{folder} changed: added {added}, removed {removed}, changed {changed}"
        )
