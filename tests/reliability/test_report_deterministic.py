"""Same input, parameters and seed give the same bytes: the report JSON too, whatever the threads.

One full-domain job on a 500-row generated register runs in two fresh processes, with
``POLARS_MAX_THREADS=1`` and ``=4``. The published Parquet must be byte-identical, and so must
the report JSON written beside it once its three timing fields (``seconds``, ``write_seconds``,
``phases``) are dropped and the run's folder masked. Before the metrics summed floats in an order-free way
(``polars_anon.metrics.sums``) this failed: distortion, hellinger, precision, wllm and others
differed in the last digits (Polars adds partial float sums in an order that depends on the
threads and on a group-by's row order).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CHILD = """
import sys
from pathlib import Path
from polars_anon.demo import demo_hierarchy_specs, write_voter_register
from polars_anon.job import Job, run_job
folder = Path(sys.argv[1])
register = write_voter_register(folder / "register.parquet", 500, seed=0)
qids = {q: {"hierarchy": spec} for q, spec in demo_hierarchy_specs().items()}
keys = {"input": str(register), "output": str(folder / "out.parquet"), "method": "fulldomain", "k": 5,
        "drop": ["name"], "insensitive": ["voter_id"], "report_html": False, "qids": qids}
run_job(Job.from_dict(keys))
"""
TIMINGS = ("seconds", "write_seconds", "phases")


def _run(folder: Path, threads: int) -> tuple[str, str]:
    """The output's sha256 and the report's JSON text without its timings, of one job under `threads`."""
    folder.mkdir()
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads), "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", CHILD, str(folder)], env=env, cwd=REPO, check=True, timeout=120)
    report = json.loads((folder / "out.report.json").read_text())
    assert set(TIMINGS) <= set(report), sorted(report)
    for key in TIMINGS:
        report.pop(key)
    text = json.dumps(report, sort_keys=True).replace(str(folder), "<run>")
    return hashlib.sha256((folder / "out.parquet").read_bytes()).hexdigest(), text


def test_report_same_bytes_with_one_or_four_threads(tmp_path: Path) -> None:
    parquet_1, report_1 = _run(tmp_path / "one", 1)
    parquet_4, report_4 = _run(tmp_path / "four", 4)
    assert parquet_1 == parquet_4
    assert '"entropy": ' in report_1 and '"hellinger": ' in report_1  # the float metrics are there to compare
    if report_1 != report_4:  # name the first differing figure
        a, b = json.loads(report_1), json.loads(report_4)
        diff = {
            k: (a["metrics"][k], b["metrics"].get(k)) for k in a["metrics"] if a["metrics"][k] != b["metrics"].get(k)
        }
        raise AssertionError(f"the report differs between 1 and 4 threads: metrics {diff}")
