"""``import polars_anon`` loads none of the optional heavy libraries: each is imported where it is first used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("duckdb", "pyspark", "sklearn", "matplotlib")


def test_import_polars_anon_loads_no_optional_engine_or_library() -> None:
    """A fresh interpreter (this process has long loaded them all) imports the package, then lists sys.modules."""
    probe = f"import sys, polars_anon\nprint(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "", f"import polars_anon loaded {done.stdout.strip()}"


def test_the_probe_sees_a_loaded_library() -> None:
    """The same probe reports duckdb once something imports it, so an empty answer above means something."""
    probe = "import sys, polars_anon, duckdb\nprint('duckdb' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
