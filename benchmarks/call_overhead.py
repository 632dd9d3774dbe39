"""The fixed CPU cost of one small ``pa.anonymize`` call, and where it goes (what thousands of tests pay).

    python benchmarks/call_overhead.py [--rows 40] [--calls 40] [--repo PATH] [--out results/call_overhead.md]

Paper 000's animals (gender, race: the hierarchies of ``tests/examples.py``) on ``--rows`` random rows (seed 1), k =
3, the default method (fulldomain) and its report; ``--calls`` calls after 3 warm-up calls. CPU seconds
(``time.process_time``: every thread of the process) per call, in total and in the parts of the road timed by
wrapping them: the report's metrics (``evaluate_both``), the method advice (the other candidates' runs), the
aggregation pass and the chosen method. ``--repo`` runs another checkout's package (e.g. a worktree of main) to
compare under the same load; the machine's load (``/proc/loadavg``) is printed with the figures.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def measure(rows: int, calls: int) -> dict[str, float]:
    """Milliseconds of CPU per call: ``total`` and each wrapped part."""
    import polars as pl

    import polars_anon as pa
    import polars_anon.pipeline.road as road
    import polars_anon.report.metrics as report_metrics

    race = pa.Hierarchy.from_dict(
        {"mammals": {"felidae": ["cat", "lion", "tiger"], "canine": ["dog", "wolf"], "cetaceans": ["dolphin", "whale"]}}
    )
    hierarchies = {"gender": pa.Hierarchy.from_dict({"*": ["M", "F"]}), "race": race}
    rng = random.Random(1)
    table = pl.DataFrame(
        {
            "id": [f"l{i}" for i in range(rows)],
            "gender": [rng.choice("MF") for _ in range(rows)],
            "race": [rng.choice(race.leaf_labels) for _ in range(rows)],
        }
    )
    spent: collections.Counter[str] = collections.Counter()
    wrapped: list[tuple[Any, str, Any]] = []

    def timed(module: Any, name: str, label: str) -> None:
        inner = getattr(module, name)
        wrapped.append((module, name, inner))

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += time.process_time() - start

        setattr(module, name, wrapper)

    timed(report_metrics, "evaluate_both", "report metrics (evaluate_both)")
    timed(road, "method_advice", "method advice (other candidates)")
    timed(road, "aggregate", "aggregation pass")

    def call() -> dict[str, Any]:
        return dict(pa.anonymize(table, qids=["gender", "race"], hierarchies=hierarchies, k=3, drop=["id"]).report)

    try:
        for _ in range(3):
            call()
        spent.clear()
        start = time.process_time()
        for _ in range(calls):
            call()
        total = time.process_time() - start
    finally:
        for module, name, inner in wrapped:  # the road as it was
            setattr(module, name, inner)
    out = {"total": total / calls * 1000}
    out.update({label: seconds / calls * 1000 for label, seconds in spent.most_common()})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="the checkout whose package runs")
    parser.add_argument("--out", type=Path, default=None, help="append the figures to this Markdown file")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.repo.resolve()))
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    figures = measure(args.rows, args.calls)
    lines = [f"{args.rows} rows, {args.calls} calls, repo {args.repo}, load {' / '.join(load)} (1/5/15 min)"]
    lines += [f"- {label}: {ms:.1f} ms CPU per call" for label, ms in figures.items()]
    print("\n".join(lines))
    if args.out is not None:
        with args.out.open("a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
