"""benchmarks/local_recoding_bench.py: an ARX run that gave no result is kept in the cache and read back, not rerun."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tests.benchmarks import script

bench = script("local_recoding_bench")


def test_cached_timeout_is_read_back_without_running_arx(tmp_path: Path) -> None:
    note = {"note": "ARX: no result in 200 s", "arx_load": 21.8}
    (tmp_path / "fars_int_k5_none.json").write_text(json.dumps(note))
    df = pl.DataFrame({"a": ["1"]})
    # no classpath, no java: a cache miss would try to run ARX and fail differently
    out = bench.run_arx("", "fars_int", df, ["a"], {}, 5, "none", 1.0, tmp_path)
    assert out == note
