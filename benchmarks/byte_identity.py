"""Same bytes: every method x engine on Adult and a 200,000-row register, hashed, to compare two commits.

    python benchmarks/byte_identity.py [--out benchmarks/results/byte_identity.json]
    python benchmarks/byte_identity.py --compare benchmarks/results/byte_identity_before.json

Each run is a job file (the CLI's road, in this process: :func:`polars_anon.job.run_job`) into a
fresh folder; recorded per run: the sha256 of every file it wrote (a Spark output folder: of each
part file, in name order with the random part names dropped), for Parquet also a hash of the rows
read back (so a difference in the bytes but not in the rows shows), and the report JSON with every
timing, memory figure and temporary path removed (``report``), or the refusal message.

Runs:

- ``adult`` (``../shared/data/adult``, the 8 usual qids with the ARX hierarchies, every column a
  String, written once to Parquet in a temporary folder), k = 5, and ``register`` (200,000 rows of
  :func:`polars_anon.demo.write_voter_register`, seed 0; the demo's built-in hierarchies, ``name``
  dropped, ``voter_id`` insensitive), k = 10;
- methods fulldomain, greedy, topdown, mondrian, datafly, mdav with ``publish = "aggregate"`` and
  with ``publish = "permute"``, on engines polars, duckdb and spark (one Spark session, ``local[2]``;
  a combination an engine refuses is recorded as its refusal);
- register fulldomain with ``[[privacy]] model = "l-diversity"`` (``party``, l = 2) on every engine;
- register fulldomain with ``encode = ["proportional"]`` (Polars only: encodings run there).
- register fulldomain with seeded ``[sdc]`` steps (:data:`SDC`: PRAM, noise, rank swap) and the risk figures
  (exact risk, SUDA2) on Polars and DuckDB (which refuses the steps: the refusal is recorded), and with the figures
  alone (``-figures``) on both.

``--compare FILE`` runs again and prints every difference from FILE (exit 1 when there is one); the new record goes
to ``--out`` or, by default, to the temporary folder (the tracked ``byte_identity_before/after.json`` are the records
of the issue that asked for them, rewritten only by name).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not the installed one

from polars_anon.demo import demo_hierarchy_specs, write_voter_register
from polars_anon.errors import AnonError
from polars_anon.job import Job, run_job

RESULTS = ROOT / "benchmarks" / "results"
SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
ADULT = SHARED / "data" / "adult"
ADULT_QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
METHODS = {
    "fulldomain": {"method": "fulldomain"},
    "greedy": {"method": "greedy"},
    "topdown": {"method": "topdown"},
    "mondrian": {"method": "mondrian"},
    "datafly": {"method": "datafly"},
    "mdav-aggregate": {"method": "mdav", "publish": "aggregate"},
    "mdav-permute": {"method": "mdav", "publish": "permute"},
}
ENGINES = ("polars", "duckdb", "spark")
SDC: dict[str, Any] = {
    "seed": 20240607,
    "method": "exact",
    "suda2": True,
    "protect": [
        {"step": "pram", "column": "party", "pd": 0.8, "alpha": 0.5},
        {"step": "pram", "column": "race", "matrix": {"White": {"White": 0.9, "Black": 0.1}}},
        {"step": "noise", "columns": ["voter_id"], "noise": 20.0, "method": "additive"},
        {"step": "rank_swap", "columns": ["voter_id"], "p": 5.0},
    ],
}
"""The register's seeded statistical disclosure control (``[sdc]``): PRAM (invariant, and by a matrix), noise and
rank swapping under one secret seed, then the risk figures of the input and of the written file."""
FLOAT_NOISE = 1e-12
TIMING = re.compile(r"seconds|time|elapsed|duration|wall|rss|memory|peak", re.IGNORECASE)


def _datasets(folder: Path) -> dict[str, dict[str, Any]]:
    """The two inputs (Parquet in `folder`) and their job keys."""
    adult = folder / "adult.parquet"
    pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False).write_parquet(adult)
    register = write_voter_register(folder / "register.parquet", 200_000, seed=0)
    return {
        "adult": {
            "input": str(adult),
            "k": 5,
            "qids": {q: {"hierarchy": str(ADULT / f"adult_hierarchy_{q}.csv")} for q in ADULT_QIDS},
        },
        "register": {
            "input": str(register),
            "k": 10,
            "drop": ["name"],
            "insensitive": ["voter_id"],
            "qids": {q: {"hierarchy": s} for q, s in demo_hierarchy_specs().items()},
        },
    }


def runs(data: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every run's name -> its job keys (without output)."""
    out = {}
    for name, keys in data.items():
        for method, options in METHODS.items():
            for engine in ENGINES:
                out[f"{name}/{method}/{engine}"] = {**keys, **options, "engine": engine}
    ldiv = {"privacy": [{"model": "l-diversity", "attribute": "party", "l": 2}]}
    for engine in ENGINES:
        out[f"register/fulldomain-ldiversity/{engine}"] = {**data["register"], "method": "fulldomain", "engine": engine}
        out[f"register/fulldomain-ldiversity/{engine}"] |= ldiv
    out["register/fulldomain-proportional/polars"] = {
        **data["register"],
        "method": "fulldomain",
        "encode": ["proportional"],
    }
    for engine in ("polars", "duckdb"):
        out[f"register/fulldomain-sdc/{engine}"] = {**data["register"], "method": "fulldomain", "engine": engine}
        out[f"register/fulldomain-sdc/{engine}"] |= {"sdc": SDC}
        out[f"register/fulldomain-sdc-figures/{engine}"] = {
            **data["register"],
            "method": "fulldomain",
            "engine": engine,
        }
        out[f"register/fulldomain-sdc-figures/{engine}"] |= {"sdc": {k: v for k, v in SDC.items() if k != "protect"}}
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows_hash(path: Path) -> str:
    """The rows read back (schema and values in order), whatever the Parquet writer's bytes."""
    df = pl.read_parquet(path)
    digest = hashlib.sha256(str(df.schema).encode())
    digest.update(df.hash_rows(seed=0).to_numpy().tobytes())
    return digest.hexdigest()


def _clean(value: Any, folder: str, name: str = "<run>") -> Any:
    """The report without timings, memory figures and the run's folder (and the inputs' folder)."""
    if isinstance(value, dict):
        return {k: _clean(v, folder, name) for k, v in value.items() if not TIMING.search(k)}
    if isinstance(value, list):
        return [_clean(v, folder, name) for v in value]
    if isinstance(value, str):
        return value.replace(folder, name)
    return value


def _files(folder: Path) -> dict[str, Any]:
    """Every file the run wrote: its sha256 and, for Parquet, the hash of its rows."""
    out: dict[str, Any] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = str(path.relative_to(folder))
        if path.name.startswith((".", "_")) or path.suffix == ".crc":
            continue  # Spark's _SUCCESS and checksums
        rel = re.sub(r"part-(\d+)-[0-9a-f-]+", r"part-\1", rel)  # Spark's random part names
        if path.name.endswith(".report.json"):
            continue  # holds timings: compared as the cleaned report
        entry: dict[str, Any] = {"sha256": _sha(path)}
        if path.suffix == ".parquet":
            entry["rows"] = _rows_hash(path)
        out[rel] = entry
    return out


def run_one(name: str, keys: dict[str, Any], folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True)
    keys = {**keys, "output": str(folder / "out.parquet"), "report_html": False}
    if keys.get("engine") == "spark":
        keys["spark"] = {"master": "local[2]", "config": {"spark.sql.shuffle.partitions": 4}}
    start = time.perf_counter()
    try:
        report = run_job(Job.from_dict(keys))
    except AnonError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}".replace(str(folder), "<run>"), "seconds": _since(start)}
    raw = json.loads(json.dumps(report, default=str))
    result = {"files": _files(folder), "report": _clean(_clean(raw, str(folder)), str(folder.parent.parent), "<data>")}
    result["seconds"] = _since(start)
    return result


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 2)


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "polars_anon"], cwd=ROOT, capture_output=True, text=True, check=False
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def record(only: str | None = None, commit: str | None = None) -> dict[str, Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="byte_identity_") as tmp:
        folder = Path(tmp)
        todo = runs(_datasets(folder))
        out: dict[str, Any] = {}
        for i, (name, keys) in enumerate(todo.items()):
            if only and not re.search(only, name):
                continue
            out[name] = run_one(name, keys, folder / "runs" / f"{i:03d}")
            what = "refused" if "refused" in out[name] else "ok"
            print(f"{name}: {what} ({out[name]['seconds']} s)", flush=True)
    return {"commit": commit or _commit(), "load": os.getloadavg()[0], "runs": out}


def differences(before: dict[str, Any], after: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Every difference between two records (timings aside), and apart the float report figures that differ
    in the last digits only (at most :data:`FLOAT_NOISE` relative: the order of a floating-point sum)."""
    out: list[str] = []
    noise: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if key in ("seconds", "phases"):  # timings (the report's phases: seconds per phase)
                    continue
                if key not in a:
                    out.append(f"{where}/{key}: new {json.dumps(b[key])[:200]}")
                elif key not in b:
                    out.append(f"{where}/{key}: gone (was {json.dumps(a[key])[:200]})")
                else:
                    walk(a[key], b[key], f"{where}/{key}")
        elif isinstance(a, str) and isinstance(b, str) and _tmp_path(a) == _tmp_path(b):
            return  # a path in another run's temporary folder (a record made before the folders were masked)
        elif isinstance(a, float) and isinstance(b, float) and abs(a - b) <= FLOAT_NOISE * max(abs(a), abs(b)):
            noise.append(f"{where}: {a!r} -> {b!r}")
        elif a != b:
            out.append(f"{where}: {json.dumps(a)[:200]} -> {json.dumps(b)[:200]}")

    walk(before["runs"], after["runs"], "")
    return out, noise


def _tmp_path(text: str) -> str:
    return re.sub(r"/tmp/byte_identity_[^/]+/", "<data>/", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        help="write the record here (default: results/byte_identity.json; with --compare, a file in the temporary "
        "folder: results/byte_identity_after.json is the issue's record, never overwritten by default)",
    )
    parser.add_argument("--compare", type=Path, help="a record to compare this run with; prints every difference")
    parser.add_argument("--commit", help="the commit to record (default: git rev-parse HEAD of this checkout)")
    parser.add_argument("--only", help="regex: only the runs whose name matches (e.g. 'register/.*/polars')")
    args = parser.parse_args()
    start = time.perf_counter()
    rec = record(args.only, args.commit)
    print(f"{len(rec['runs'])} runs in {_since(start)} s, load {os.getloadavg()}")
    default = (
        Path(tempfile.gettempdir()) / "byte_identity_compared.json" if args.compare else RESULTS / "byte_identity.json"
    )
    target = args.out or default
    target.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(f"wrote {target}")
    if args.compare:
        before = json.loads(args.compare.read_text())
        if args.only:
            before["runs"] = {k: v for k, v in before["runs"].items() if re.search(args.only, k)}
        diffs, noise = differences(before, rec)
        print(f"{len(noise)} float figures differ by at most {FLOAT_NOISE} relative (summation order):")
        for d in noise:
            print("  " + d)
        print(f"{len(diffs)} differences from {args.compare} (commit {before.get('commit')}) at {rec['commit']}")
        for d in diffs:
            print("  " + d)
        sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
