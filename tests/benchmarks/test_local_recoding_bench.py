"""benchmarks/local_recoding_bench.py: an ARX run that gave no result is kept in the cache and read back, not rerun;
the ARX driver of benchmarks/peers compiles and publishes a hand-checked table (when javac and ARX_CP are there)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from tests.benchmarks import BENCH, script

bench = script("local_recoding_bench")


def test_cached_timeout_is_read_back_without_running_arx(tmp_path: Path) -> None:
    note = {"note": "ARX: no result in 200 s", "arx_load": 21.8}
    (tmp_path / "fars_int_k5_none.json").write_text(json.dumps(note))
    df = pl.DataFrame({"a": ["1"]})
    # no classpath, no java: a cache miss would try to run ARX and fail differently
    out = bench.run_arx("", "fars_int", df, ["a"], {}, 5, "none", 1.0, tmp_path)
    assert out == note


def test_no_solution_note_is_kept_without_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver line with a "note" (ARX found no solution) gives that note and its load, cached; no table is read."""
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho \'{"seconds": 31.5, "heuristic": true, "note": "ARX: no solution (x)"}\'\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    df = pl.DataFrame({"a": ["1"]})
    hs = {"a": pa.Hierarchy.from_dict({"*": ["1"]})}
    out = bench.run_arx("", "mach", df, ["a"], hs, 10, "none", 60.0, tmp_path / "cache")
    assert out["note"] == "ARX: no solution (x)"
    assert set(out) == {"note", "arx_load"}
    assert json.loads((tmp_path / "cache" / "mach_k10_none.json").read_text()) == out


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac (Java 17) to compile the ARX driver")
@pytest.mark.skipif(not os.environ.get("ARX_CP"), reason="needs ARX_CP, the classpath of benchmarks/peers/build_arx.sh")
def test_arx_local_driver_compiles_and_runs(tmp_path: Path) -> None:
    """benchmarks/peers/ArxLocal.java compiles against ARX and publishes the one 2-anonymous table of least loss.

    By hand: rows (1,x) (2,x) (3,y) (4,y) (1,y) (2,y), hierarchies a: 1,2 -> 1-2; 3,4 -> 3-4 -> *, b: x,y -> *.
    Rows 3 and 4 must share a class: (3-4,y) costs 1/3 per row, anything coarser more. The four others pair
    as (1-2,x) and (1-2,y), 1/3 per row; pairing (1,x) with (1,y) costs b's whole range. So a goes to its
    first level on every row, b stays, nothing is suppressed (a suppressed row would cost 1 per cell).
    """
    source = BENCH / "peers" / "ArxLocal.java"
    cp = os.environ["ARX_CP"]
    subprocess.run(["javac", "-d", str(tmp_path), "-cp", cp, str(source)], check=True)
    (tmp_path / "d.csv").write_text("a;b\n1;x\n2;x\n3;y\n4;y\n1;y\n2;y\n")
    (tmp_path / "ha.csv").write_text("1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n")
    (tmp_path / "hb.csv").write_text("x;*\ny;*\n")
    args = ["d.csv", "o.csv", "2", "a=ha.csv", "b=hb.csv"]
    java = ["java", "-cp", f"{tmp_path}{os.pathsep}{cp}", "ArxLocal"]
    done = subprocess.run([*java, *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[-1])["suppressed"] == 0
    assert (tmp_path / "o.csv").read_text().split() == ["a;b", "1-2;x", "1-2;x", "3-4;y", "3-4;y", "1-2;y", "1-2;y"]
