"""Where the floor job's CPU and wall time go, phase by phase: timers wrapped around the road's functions (no profiler).

    python benchmarks/floor_phases.py [--rows 3000000] [--code /tmp/base]

Runs :mod:`floor_bench`'s fulldomain job once in this process on ``<tmp>/floor_register_<rows>.parquet``
(made by ``floor_bench.py``) and prints the CPU seconds (``time.process_time``: every thread of the process) and
the wall seconds spent in each wrapped function, outermost first, with the process's minor page faults in it (first
touches of fresh memory: most of the job's system time, which the floor spends on its write alone), then the total and
the 1-min load. ``--code``:
import the package from another checkout (the base of a comparison). Nested phases are indented; a function that
is not called (a phase the checkout does not have) prints nothing.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PHASES = [  # (module, attribute path, label)
    ("polars_anon.job", "parquet_counts", "tuple pass from the Parquet dictionaries (parquet_counts: sorted, coded)"),
    ("polars_anon.job", "count_tuples", "tuple pass (count_tuples: hierarchies' values and class aggregates)"),
    ("polars_anon.job", "build_spec", "hierarchies from the values (build_spec)"),
    ("polars_anon.anonymize", "as_string_counts", "tuple counts as sorted String labels (as_string_counts)"),
    ("polars_anon.anonymize", "as_string_codes", "tuple counts as sorted String labels and codes (as_string_codes)"),
    ("polars_anon.anonymize", "distinct_counts", "distinct values of the undeclared column (distinct_counts)"),
    ("polars_anon.pipeline.road", "check_data", "check_data"),
    ("polars_anon.pipeline.road", "run_method", "the method (lattice, search, map, neighbours, map check)"),
    ("polars_anon.algorithms.fulldomain", "Lattice.__init__", "  the lattice's tables (Lattice)"),
    ("polars_anon.algorithms.fulldomain", "search", "  the search, the Lattice's tables included (search)"),
    ("polars_anon.tuplemap", "TupleMap.from_levels", "  the map (from_levels)"),
    ("polars_anon.algorithms.fulldomain", "neighbours", "  the optimum's neighbours (neighbours)"),
    ("polars_anon.pipeline.road", "check_map", "  the map check (check_map)"),
    ("polars_anon.pipeline.road", "risk_summary", "input risk (every class)"),
    ("polars_anon.pipeline.road", "risk_summary_of_sizes", "input risk (distinct class sizes)"),
    ("polars_anon.pipeline.road", "method_advice", "method advice"),
    ("polars_anon.pipeline.road", "plan_facts", "the report's facts before the write (plan_facts)"),
    ("polars_anon.report", "map_loss", "  loss"),
    ("polars_anon.report", "map_data", "  metric data of the map"),
    ("polars_anon.report", "report_metrics", "  every metric, raw and normalized"),
    ("polars_anon.report", "_class_sizes", "  class-size histograms"),
    ("polars_anon.report", "generalization", "  generalization shares"),
    ("polars_anon.engines.polars", "PolarsEngine.publish", "publish (a lazy frame)"),
    ("polars_anon.engines.polars", "PolarsEngine.write", "publish + write (sink_parquet)"),
    ("polars_anon.pipeline.result", "Check.__call__", "independent check of the written file"),
    ("polars_anon.pipeline.result", "build_report", "build_report"),
    ("polars_anon.pipeline.result", "write_report", "write the report"),
]


def wrap(totals: dict[str, tuple[float, float, int]]) -> list[tuple[Any, str, Any]]:
    """Replace each phase's function by one that adds its CPU seconds, wall seconds and the process's minor page faults
    to `totals[label]`; returns what was replaced, for :func:`unwrap`."""
    saved, active = [], []  # the top-level phases running: one called inside another is counted there only
    for module, path, label in PHASES:
        owner: Any = sys.modules[module] if module in sys.modules else __import__(module, fromlist=["_"])
        *parents, name = path.split(".")
        for part in parents:
            owner = getattr(owner, part)
        func = getattr(owner, name, None)
        if func is None:
            continue

        def timed(*args: Any, _f: Any = func, _label: str = label, **kwargs: Any) -> Any:
            top = not _label.startswith(" ")
            if top and active:  # e.g. the method advice's reruns of run_method: inside "method advice"
                return _f(*args, **kwargs)
            start, wall, faults = time.process_time(), time.perf_counter(), _faults()
            if top:
                active.append(_label)
            try:
                return _f(*args, **kwargs)
            finally:
                if top:
                    active.pop()
                cpu, seconds, touched = totals.get(_label, (0.0, 0.0, 0))
                totals[_label] = (
                    cpu + time.process_time() - start,
                    seconds + time.perf_counter() - wall,
                    touched + _faults() - faults,
                )

        saved.append((owner, name, func))
        setattr(owner, name, functools.wraps(func)(timed))
    return saved


def _faults() -> int:
    """The process's minor page faults so far (every thread)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def unwrap(saved: list[tuple[Any, str, Any]]) -> None:
    """Put back what :func:`wrap` replaced."""
    for owner, name, func in reversed(saved):
        setattr(owner, name, func)


def time_job(data: Path, out: Path, totals: dict[str, tuple[float, float, int]]) -> tuple[float, float, int]:
    """Run the floor job on `data` (writing `out`) with the phases timed into `totals`; its CPU and wall seconds and
    minor page faults."""
    import floor_bench  # the job's keys (benchmarks/ on the path)

    import polars_anon.job

    keys = floor_bench._job_keys(data, out)
    saved = wrap(totals)
    try:
        start, cpu, faults = time.perf_counter(), time.process_time(), _faults()
        polars_anon.job.run_job(polars_anon.job.Job.from_dict(keys))
        return time.process_time() - cpu, time.perf_counter() - start, _faults() - faults
    finally:
        unwrap(saved)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()), help="folder of the inputs")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose package to time")
    args = parser.parse_args()
    os.environ["FLOOR_BENCH_CODE"] = str(args.code)  # floor_bench puts that checkout first on the path
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import floor_bench  # noqa: F401  (puts the checkout on the path)

    import polars_anon.job

    if not Path(polars_anon.job.__file__).is_relative_to(args.code.resolve()):
        raise SystemExit(f"imported {polars_anon.job.__file__}, not the package of {args.code}")
    totals: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory(prefix="floor_phases_") as tmp:
        data = args.data / f"floor_register_{args.rows}.parquet"
        cpu, wall, faults = time_job(data, Path(tmp) / "job.parquet", totals)
    print("    CPU    wall  faults  phase")
    for _, _, label in PHASES:
        if label in totals:
            print(f"{totals[label][0]:7.3f} {totals[label][1]:7.3f} {totals[label][2]:7d}  {label}")
    print(f"{cpu:7.3f} {wall:7.3f} {faults:7d}  total, {args.code}, 1-min load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
