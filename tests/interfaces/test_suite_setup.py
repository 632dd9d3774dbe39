"""The test suite's own set-up (tests/conftest.py): what every pytest process of CI does before the first test."""

from __future__ import annotations

import gc
import weakref

import pytest


class _Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    other: _Node | None = None


def test_collection_froze_what_it_loaded_and_left_the_collector_on() -> None:
    """The modules and test items loaded by the collection are frozen (no full collection scans them again), and the
    cyclic garbage collector runs again for the tests."""
    assert gc.isenabled()
    assert gc.get_freeze_count() > 10_000  # conftest's imports alone (polars, numpy, the package): ~80,000


def test_a_cycle_made_by_a_test_is_still_collected() -> None:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    watch = weakref.ref(a)
    del a, b
    gc.collect()
    assert watch() is None


def test_pytest_benchmark_is_not_loaded(request: pytest.FixtureRequest) -> None:
    """pyproject's addopts block pytest-benchmark, which no test uses (it warned once per xdist worker)."""
    assert request.config.pluginmanager.get_plugin("benchmark") is None
