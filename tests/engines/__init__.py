"""Engine tests; `equal` compares two engines' report values."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest


def equal(a: Any, b: Any, where: tuple = (), ignore: Collection[str] = ()) -> None:
    """Equal values, the keys in `ignore` aside at every depth; floats to 1e-12 (a metric's float sum may run in
    another order), a method's own timings (keys ending in "seconds", the report's "phases") not compared."""
    if isinstance(a, dict) and isinstance(b, dict):
        skip = {*ignore, "phases"}
        assert a.keys() - skip == b.keys() - skip, where
        for key in (k for k in a if not str(k).endswith("seconds") and k not in skip):
            equal(a[key], b[key], (*where, key), ignore)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            equal(x, y, (*where, i), ignore)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), where
    else:
        assert a == b, where
