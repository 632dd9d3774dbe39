"""Where the road's CPU goes on a local-recoding run of ``local_recoding_bench.py``: the method against the rest.

    python benchmarks/road_phases.py [--runs cup:50 fars_int:2 adult:2:ldiv] [--code /tmp/base]

Runs, for each ``dataset:k`` (or ``dataset:k:model``, a privacy model of ``local_recoding_bench.py``: ``ldiv``,
``tclose-equal``, ``tclose-hier``, on its sensitive attribute and the other qids), the call that
``local_recoding_bench.run_ours`` times (``pa.anonymize(..., method="topdown", max_suppressed=99 % of the rows)`` on
the dataset's qids with a row id, then ``.collect()``) once,
with :mod:`floor_phases`' CPU timers around the road's functions, and prints the CPU seconds (``time.process_time``:
every thread) of each phase, the whole call, and the road outside the method (the call minus the method). Every second
of the road counts against the target of a local recoding ten times faster than ARX's. ``--code``: import the package
from another checkout (the base of a comparison).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHOD = "the method (lattice, search, map, neighbours, map check)"
EXTRA = [  # the road's phases floor_phases does not split, timed here too: (module, attribute path, label)
    ("polars_anon.pipeline.road", "check_request", "check_request"),
    ("polars_anon.engines.polars", "PolarsEngine.aggregate", "aggregation pass (PolarsEngine.aggregate)"),
    ("polars_anon.pipeline.road", "task_constraints", "task_constraints"),
    ("polars_anon.pipeline.road", "check_map", "  map check (check_map)"),
    ("polars_anon.tuplemap", "TupleMap.published_sizes", "published class sizes (published_sizes, once a map)"),
    ("polars_anon.engines.polars", "PolarsEngine.to_polars", "collect the published rows (to_polars)"),
    ("polars_anon.engines.polars", "PolarsEngine.classes", "  the check's group-by (PolarsEngine.classes)"),
    ("polars_anon.pipeline.result", "Check.disclosure", "  the check's attribute disclosure"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", nargs="+", default=["cup:50", "fars_int:2"], help="dataset:k pairs")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose package to time")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code))  # that checkout's package, not the installed one
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import datasets
    import floor_phases
    import local_recoding_bench as lrb

    import polars_anon as pa

    if not Path(pa.__file__).is_relative_to(args.code.resolve()):
        raise SystemExit(f"imported {pa.__file__}, not the package of {args.code}")
    for run in args.runs:
        name, k, model = (*run.split(":"), "none")[:3]
        df, qids, hs = datasets.load(name)
        sensitive = [lrb.SENSITIVE] if model != "none" else []
        qids = [q for q in qids if q not in sensitive]
        data = df.select(*qids, *sensitive).with_row_index("__bench_row")
        totals: dict[str, tuple[float, float, int]] = {}
        phases = floor_phases.PHASES
        floor_phases.PHASES = [*phases, *EXTRA]
        try:
            saved = floor_phases.wrap(totals)
        finally:
            floor_phases.PHASES = phases
        try:
            cpu = time.process_time()
            pa.anonymize(
                data,
                hierarchies={q: hs[q] for q in qids},
                k=int(k),
                method="topdown",
                insensitive="__bench_row",
                sensitive=sensitive or None,
                privacy=lrb.our_model(model, hs),
                max_suppressed=int(0.99 * df.height),
            ).collect()
            cpu = time.process_time() - cpu
        finally:
            floor_phases.unwrap(saved)
        print(f"{name} k={k} {model} ({df.height} rows, {len(qids)} qids), {args.code}")
        for _, _, label in [*floor_phases.PHASES, *EXTRA]:
            if label in totals:
                print(f"{totals[label][0]:7.3f}  {label}")
        road = cpu - totals.get(METHOD, (0.0, 0.0, 0))[0]
        print(f"{cpu:7.3f}  total CPU s; the road outside the method {road:.3f}; 1-min load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
