"""Topdown's own CPU per bench cell, and a hash of what it returns (to show a speed-up keeps the outputs).

    python benchmarks/topdown_profile.py record [--cells adult-none-2 ...] [--save DIR] [--out F.jsonl]
    python benchmarks/topdown_profile.py replay --save DIR [--cells ...] [--profile N]
    python benchmarks/topdown_profile.py ab --code BASE_DIR [--cells ...] [--repeat 5]

``record`` runs ``pa.anonymize(...).collect()`` per cell as ``local_recoding_bench.py`` does (the
same data, qids, privacy models and suppression budget, 99 % of the rows) with
``topdown_partition`` wrapped: it prints, per cell, the CPU seconds of the algorithm
(``time.process_time``, every thread) and of the whole call, and the SHA-256 of the
result (class id per aggregate row and the suppressed flags). ``--save DIR`` also
pickles the algorithm's arguments per cell (outside the repository), and ``replay``
runs the algorithm alone on them (``--profile N``: cProfile, the N costliest functions).
``ab`` runs the whole call per cell in two long-lived processes, one importing the package of ``--code``
(a base checkout, e.g. a ``git archive`` copy) and one this checkout's, fed the same cell alternately
(``--repeat`` times each, the order swapped every time), so both meet the same load; it prints per cell the
least and the median CPU seconds of the algorithm and of the whole call, base / this (ratio), and the hashes.
Every line carries the 1-minute load average (2 cores, shared).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pickle
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# this checkout's package, not the installed one (``ab``'s base worker: the package of its --code, by this variable)
sys.path.insert(0, os.environ.get("TOPDOWN_PROFILE_CODE") or str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets
import local_recoding_bench as lrb

import polars_anon as pa
from polars_anon.algorithms import topdown

CELLS = (
    "adult-none-2", "adult-none-5", "adult-none-20", "adult-none-100",
    "adult-ldiv-2", "adult-ldiv-20", "adult-ldiv-100",
    "adult-tclose-equal-5", "adult-tclose-hier-5",
    "fars-none-5", "cup-none-2", "cup-none-50", "fars_int-none-2", "mach2019_int-none-2",
)  # a table: the cells by dataset and model  # fmt: skip


def _parse(cell: str) -> tuple[str, str, int]:
    name, rest = cell.split("-", 1)
    model, k = rest.rsplit("-", 1)
    return name, model, int(k)


def digest(res: topdown.TopdownResult) -> str:
    """SHA-256 of the class id per aggregate row and the suppressed flags."""
    h = hashlib.sha256(res.class_id.astype("<i8").tobytes())
    h.update(res.suppressed.astype("u1").tobytes())
    return h.hexdigest()[:16]


def record(cells: list[str], save: Path | None) -> list[dict]:
    original = topdown.topdown_partition
    seen: dict = {}

    def wrapped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        cpu = time.process_time()
        res = original(*args, **kwargs)
        seen["cpu"], seen["hash"] = time.process_time() - cpu, digest(res)
        seen["args"] = (args, kwargs)
        return res

    topdown.topdown_partition = wrapped
    out = []
    try:
        for cell in cells:
            name, model, k = _parse(cell)
            df, qids, hs = datasets.load(name)
            load = os.getloadavg()[0]
            total = _run_cell(df, qids, hs, model, k)
            row = {"cell": cell, "algo_cpu": round(seen["cpu"], 3), "total_cpu": round(total, 3)}
            row |= {"hash": seen["hash"], "load": round(load, 1)}
            print(json.dumps(row), flush=True)
            out.append(row)
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{cell}.pkl").write_bytes(pickle.dumps(seen["args"]))
    finally:
        topdown.topdown_partition = original
    return out


def _run_cell(df: Any, qids: list[str], hs: dict, model: str, k: int) -> float:
    """One cell's whole ``pa.anonymize(...).collect()`` as the local-recoding bench runs it; its CPU seconds."""
    q = [c for c in qids if c != lrb.SENSITIVE] if model != "none" else qids
    sensitive = [lrb.SENSITIVE] if model != "none" else []
    data = df.select(*q, *sensitive).with_row_index(lrb.ROW)
    cpu = time.process_time()
    pa.anonymize(
        data,
        hierarchies={c: hs[c] for c in q},
        k=k,
        method="topdown",
        insensitive=lrb.ROW,
        sensitive=sensitive or None,
        privacy=lrb.our_model(model, hs),
        max_suppressed=int(lrb.ARX_SUPPRESSION * df.height),
    ).collect()
    return time.process_time() - cpu


def replay(cells: list[str], save: Path, profile: int, repeat: int = 1) -> None:
    for cell in cells:
        args, kwargs = pickle.loads((save / f"{cell}.pkl").read_bytes())
        load = os.getloadavg()[0]
        prof = cProfile.Profile() if profile else None
        times, hashes = [], set()
        for _ in range(repeat):
            cpu = time.process_time()
            if prof is not None:
                prof.enable()
            res = topdown.topdown_partition(*args, **kwargs)
            if prof is not None:
                prof.disable()
            times.append(time.process_time() - cpu)
            hashes.add(digest(res))
        row = {"cell": cell, "algo_cpu": round(min(times), 3), "hash": ",".join(sorted(hashes))}
        if repeat > 1:
            row["algo_cpu_runs"] = [round(t, 3) for t in times]
        print(json.dumps(row | {"load": round(load, 1)}), flush=True)
        if prof is not None:
            pstats.Stats(prof).sort_stats("tottime").print_stats(profile)


def serve() -> None:
    """For ``ab``: read a cell per line from stdin, run it as ``record`` does, print its CPU seconds and hash.

    The package imported is ``TOPDOWN_PROFILE_CODE``'s (a checkout's root) when set."""
    original, seen = topdown.topdown_partition, {}

    def wrapped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        cpu = time.process_time()
        res = original(*args, **kwargs)
        seen["cpu"], seen["hash"] = time.process_time() - cpu, digest(res)
        return res

    topdown.topdown_partition = wrapped
    loaded: dict = {}
    for line in sys.stdin:
        name, model, k = _parse(line.strip())
        if name not in loaded:
            loaded[name] = datasets.load(name)
        df, qids, hs = loaded[name]
        total = _run_cell(df, qids, hs, model, k)
        print(f"{seen['cpu']:.4f} {total:.4f} {seen['hash']}", flush=True)


def ab(cells: list[str], code: Path, repeat: int) -> None:
    """Base (`code`) and this checkout alternately, cell by cell, in one long-lived process each."""
    here = Path(__file__).resolve()
    workers = [
        subprocess.Popen(
            [sys.executable, str(here), "serve"],
            env=os.environ | {"TOPDOWN_PROFILE_CODE": str(root)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for root in (code.resolve(), here.parent.parent)
    ]

    def run(w: subprocess.Popen, cell: str) -> list[str]:
        assert w.stdin is not None and w.stdout is not None
        w.stdin.write(cell + "\n")
        w.stdin.flush()
        return w.stdout.readline().split()

    for w in workers:  # a first call each: imports and first-call costs out of the figures
        run(w, "fars-none-100")
    for cell in cells:
        algo: list[list[float]] = [[], []]
        whole: list[list[float]] = [[], []]
        hashes: list[set] = [set(), set()]
        loads = []
        for i in range(repeat):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                a, t, h = run(workers[side], cell)
                algo[side].append(float(a))
                whole[side].append(float(t))
                hashes[side].add(h)
            loads.append(os.getloadavg()[0])

        def fig(x: list[list[float]], how) -> str:  # noqa: ANN001
            return f"{how(x[0]):.3f} / {how(x[1]):.3f} ({how(x[1]) / how(x[0]):.2f})"

        row = {"cell": cell, "algo least": fig(algo, min), "algo median": fig(algo, statistics.median)}
        row |= {"whole least": fig(whole, min), "whole median": fig(whole, statistics.median)}
        row |= {"hash": [",".join(sorted(h)) for h in hashes], "load": f"{min(loads):.1f}-{max(loads):.1f}"}
        print(json.dumps(row), flush=True)
    for w in workers:
        assert w.stdin is not None
        w.stdin.close()
        w.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("command", choices=("record", "replay", "ab", "serve"))
    p.add_argument("--cells", nargs="+", default=list(CELLS))
    p.add_argument("--save", type=Path, default=None, help="directory for the pickled arguments (outside the repo)")
    p.add_argument("--profile", type=int, default=0, help="replay: print the N costliest functions")
    p.add_argument("--repeat", type=int, default=1, help="replay: runs per cell (the least CPU printed); ab: per side")
    p.add_argument("--code", type=Path, default=None, help="ab: the base checkout (its benchmarks/ and package)")
    args = p.parse_args()
    if args.command == "record":
        record(args.cells, args.save)
    elif args.command == "serve":
        serve()
    elif args.command == "ab":
        if args.code is None:
            p.error("ab needs --code BASE_DIR")
        ab(args.cells, args.code, max(args.repeat, 1))
    else:
        if args.save is None:
            p.error("replay needs --save DIR")
        replay(args.cells, args.save, args.profile, args.repeat)


if __name__ == "__main__":
    main()
