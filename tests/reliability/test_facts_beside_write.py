"""The report's facts are computed on a thread of their own while the table is written
(:class:`polars_anon.pipeline.state.Pending`): the write still fails closed when they fail, and the report is
the one computed in line."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa
import polars_anon.pipeline.road
from polars_anon.pipeline.state import Pending
from polars_anon.report import plan_facts
from tests.reliability.snapshot import unchanged

TABLE = pl.DataFrame({"sex": ["F", "M", "F", "M", "F", "M"], "age": [31, 33, 38, 36, 35, 39]})
H = {"sex": pa.Hierarchy.suppression(["F", "M"]), "age": pa.Hierarchy.intervals(range(30, 40), [5, 10])}


def test_a_failure_computing_the_facts_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error is raised to the write (which reads the facts for its independent check) and to the report; the
    folder is as it was; collect() refuses too."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("facts failed")

    monkeypatch.setattr(polars_anon.pipeline.road, "plan_facts", broken)
    result = pa.anonymize(TABLE, hierarchies=H, k=2)
    with unchanged(tmp_path), pytest.raises(RuntimeError, match="facts failed"):
        result.sink_parquet(tmp_path / "t.parquet")
    with pytest.raises(RuntimeError, match="facts failed"):
        result.collect()
    with pytest.raises(RuntimeError, match="facts failed"):
        _ = result.report


def test_the_facts_are_those_computed_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slow facts (a sleep before them) are waited for: the report written beside the table holds them, equal to
    a report whose facts were computed on the caller's thread before the write began."""
    threads: list[str] = []

    def slow(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        time.sleep(0.3)
        return plan_facts(*args, **kwargs)

    monkeypatch.setattr(polars_anon.pipeline.road, "plan_facts", slow)
    late = pa.anonymize(TABLE, hierarchies=H, k=2).sink_parquet(tmp_path / "late.parquet")
    monkeypatch.setattr(polars_anon.pipeline.road, "Pending", lambda make: make())  # in line, on this thread
    now = pa.anonymize(TABLE, hierarchies=H, k=2).sink_parquet(tmp_path / "now.parquet")
    assert threads == ["polars_anon_facts", "MainThread"]
    timings = ("seconds", "write_seconds", "phases", "output")
    assert {k: v for k, v in late.items() if k not in timings} == {k: v for k, v in now.items() if k not in timings}
    assert late["n_input_rows"] == 6 and late["min_class_size"] >= 2


def test_pending_raises_to_every_reader() -> None:
    """Each read waits for the mapping; an exception raised making it is raised to each reader."""

    def fail() -> dict[str, Any]:
        raise ValueError("no")

    pending = Pending(fail)
    for read in (lambda: pending["k"], lambda: len(pending), lambda: list(pending)):
        with pytest.raises(ValueError, match="no"):
            read()
    assert dict(Pending(lambda: {"a": 1, "b": 2})) == {"a": 1, "b": 2}
