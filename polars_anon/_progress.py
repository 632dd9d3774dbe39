"""Progress bars for the long steps: one helper, one switch.

Every step that can take more than a few seconds (the aggregation pass, the
full-domain lattice search, the greedy and MDAV loops, writing and verifying,
encodings, the utility grid, explore) shows a tqdm bar through :func:`bar` or,
for a step without a count (one Polars query), :func:`stage` (its name and the
elapsed time). Bars go to stderr and are cleared when the step ends.

When bars show, decided in this order:

1. :func:`progress` (``polars_anon.progress(False)``), for the process; the CLI's
   ``--quiet`` calls it;
2. the environment variable ``POLARS_ANON_PROGRESS`` (``0``/``false``/``off`` or
   ``1``/``true``/``on``);
3. otherwise only when stderr is a terminal (tqdm's ``disable=None``): nothing is
   printed in CI, in logs or in pipes.

So algorithms take no progress parameter.

>>> progress(False); bar(range(3), desc="x").disable
True
>>> progress(None)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm.auto import tqdm

from polars_anon.errors import InvalidParameterError

__all__ = ["ENV", "bar", "progress", "stage"]

ENV = "POLARS_ANON_PROGRESS"
_WORDS = {"0": False, "false": False, "off": False, "no": False, "1": True, "true": True, "on": True, "yes": True}
_setting: bool | None = None


def progress(enabled: bool | None = True) -> None:
    """Show progress bars (True), never (False), or as by default (None: the environment, else on a terminal).

    >>> import polars_anon as pa
    >>> pa.progress(False)  # silence every bar of this process
    >>> pa.progress(None)   # back to the default
    """
    global _setting
    if enabled is not None and not isinstance(enabled, bool):
        raise InvalidParameterError(f"progress(enabled) must be True, False or None, got {enabled!r}")
    _setting = enabled


def _disable(enabled: bool | None = None) -> bool | None:
    """tqdm's ``disable``: True hides, False shows, None shows on a terminal only."""
    if enabled is not None:
        return not enabled
    if _setting is not None:
        return not _setting
    value = os.environ.get(ENV)
    if value is None or not value.strip():
        return None
    word = value.strip().lower()
    if word not in _WORDS:
        raise InvalidParameterError(f"environment variable {ENV}={value!r}: expected 0/false/off or 1/true/on")
    return not _WORDS[word]


def bar(
    iterable: Iterable[Any] | None = None,
    *,
    desc: str,
    total: float | None = None,
    unit: str = "it",
    enabled: bool | None = None,
    **kwargs: Any,
) -> tqdm:
    """A tqdm bar with the package's settings (cleared at the end, refreshed at most twice a second).

    `enabled` overrides the switch for this bar (None: :func:`progress`, the environment, the terminal).
    """
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, disable=_disable(enabled), **kwargs)


@contextmanager
def stage(desc: str, enabled: bool | None = None) -> Iterator[None]:
    """Show `desc` and the elapsed time while the block runs (a step without a count, e.g. one Polars query)."""
    shown = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False, disable=_disable(enabled))
    if shown.disable:
        yield
        return
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.5):
            shown.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        shown.close()
