"""ARX's JUnit privacy-model suite on Adult: how many configurations reach ARX's expected information loss.

    python benchmarks/arx_privacy_suite.py --arx /path/to/arx [--only DPresence,KMap] [--limit N]
        [--arx-cp CLASSPATH]

Reads the test classes of an ARX checkout (``src/test/org/deidentifier/arx/test/
TestAnonymization{LDiversity,EntropyLDiversity,TCloseness,OrderedDistanceTCloseness,
BLikeness,DPresence,KMap,RiskBased,Combinations,Subset}.java``; the checkout from the
``ARX`` environment variable or ``--arx``, its ``data/adult_subset.csv`` being the research
subset), keeps every case on ``./data/adult.csv``, and runs it with ``method="fulldomain"``
on ../shared/data/adult (TestAnonymizationTCloseness adds hierarchical 0.2-closeness to a
case without t-closeness, as its ``test()`` does): the qids are every column with a hierarchy but the sensitive one
the case names (all nine when it names none), ``max_suppressed`` is
``floor(limit * rows)`` of the published rows (the subset's when there is one, as
``ARXConfiguration.initialize``), and ARX's metrics map to ours (``createAECSMetric`` ->
``aecs``; ``createPrecomputedEntropyMetric(_, monotonic)`` -> ``entropy`` with
``monotonic``; ``createPrecomputedLossMetric`` -> ``loss``; the first argument is ARX's
precomputation threshold, not a factor). A case is *reproduced* when our value equals
ARX's (relative 1e-6) or is lower (a valid table: every guarantee is re-checked on the
published rows), or when both find no solution. Writes
benchmarks/results/arx_privacy_suite.{csv,md} with the load average.

With ``--arx-cp`` (a classpath holding ARX, its JUnit test classes and ``ArxSuiteCase``,
``benchmarks/peers/ArxSuiteCase.java``, which runs one configuration of a test class as the test
builds it and prints one JSON line: ``loss``, ``expected``, ``limit``, ``matches_junit``, ``seconds``,
``cpu_seconds``; ``benchmarks/peers/build_arx.sh`` builds all of it), ARX runs each configuration right
after ours, in the same process stream (one after the other, never at once), from ``--arx-cwd``
(default the ARX checkout; its ``data/`` must hold every file the test classes read while listing
their cases, as the build's ``OUT_DIR/suite`` does); its seconds go in columns beside ours,
``arx_matches_junit`` checks that ARX's loss is the test's expected one, and a driver line whose
expected value or suppression limit is not the case's is an ``arx_error`` (another case ran).
``--no-write`` prints the rows only.
Ours and ARX's seconds are the wall of the anonymization alone (data and hierarchies loaded
before), and CPU seconds of the process over the same span (every thread).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars_anon as pa
from polars_anon.errors import InfeasibleError

ADULT = ROOT.parent / "shared" / "data" / "adult"
RESULTS = ROOT / "benchmarks" / "results"
CLASSES = [
    "LDiversity",
    "EntropyLDiversity",
    "TCloseness",
    "OrderedDistanceTCloseness",
    "BLikeness",
    "DPresence",
    "KMap",
    "RiskBased",
    "Combinations",
    "Subset",
]
ALL9 = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
USA = 317238626  # ARXPopulationModel.Region.USA
CASE = re.compile(
    r"new ARXAnonymizationTestCase\(ARXConfiguration\.create\(([\d.]+)d?, (Metric\.\w+\([^)]*\))\)"
    r"(?P<models>(?:\.addPrivacyModel\(.*?\)\))+?)\s*,\s*(?:\"(?P<sens>[^\"]+)\"\s*,\s*)?\"\./data/adult\.csv\"\s*,\s*"
    r"\"?(?P<value>[-\d.E]+)d?\"?\s*,\s*(?P<vector>new int\[\]\s*\{[^}]*\}|null)"
)


@dataclass
class Case:
    name: str
    limit: float
    metric: str
    monotonic: bool | None
    models: list[tuple[str, list[str]]]
    sensitive: str | None
    expected: float | None
    vector: list[int] | None = None
    """ARX's optimal level vector (one per qid in the data's column order), as its test states it."""


def _split_models(text: str) -> list[tuple[str, list[str]]]:
    """``.addPrivacyModel(new X(args))`` ... -> [(X, top-level args)]."""
    out = []
    for part in text.split(".addPrivacyModel(")[1:]:
        part = part.strip()
        m = re.match(r"(?:new\s+)?(\w+)\((.*)\)\s*\)\s*$", part, re.DOTALL)
        if m is None:
            raise ValueError(part)
        args, depth, cur = [], 0, ""
        for ch in m.group(2):
            if ch == "," and depth == 0:
                args.append(cur.strip())
                cur = ""
                continue
            depth += 1 if ch == "(" else -1 if ch == ")" else 0
            cur += ch
        if cur.strip():
            args.append(cur.strip())
        out.append((m.group(1), args))
    return out


def read_cases(arx: Path, only: list[str] | None) -> list[Case]:
    cases = []
    for cls in CLASSES:
        if only and cls not in only:
            continue
        text = (arx / "src/test/org/deidentifier/arx/test" / f"TestAnonymization{cls}.java").read_text()
        for i, m in enumerate(CASE.finditer(text)):
            metric_text = m.group(2)
            if "AECS" in metric_text:
                metric, monotonic = "aecs", None
            elif "Entropy" in metric_text:
                metric, monotonic = "entropy", "true" in metric_text.split(",")[-1]
            elif "Loss" in metric_text:
                metric, monotonic = "loss", None
            elif "Discernability" in metric_text:
                metric, monotonic = "discernibility", "true" in metric_text
            else:
                metric, monotonic = metric_text, None
            value = float(m.group("value"))
            expected = None if m.group("vector") == "null" else value
            models = _split_models(m.group("models"))
            vector = None if m.group("vector") == "null" else [int(x) for x in re.findall(r"-?\d+", m.group("vector"))]
            cases.append(
                Case(f"{cls}[{i}]", float(m.group(1)), metric, monotonic, models, m.group("sens"), expected, vector)
            )
    return cases


def java_subset(size: int) -> set[int]:
    """``TestAnonymizationSubset.getSubset(size)``: ``size`` draws of ``new Random(0xDEADBEEF).nextInt(size)``."""
    mask = (1 << 48) - 1
    seed = ((0xDEADBEEF - (1 << 32)) ^ 0x5DEECE66D) & mask  # Java's int literal 0xDEADBEEF is negative

    def next31() -> int:
        nonlocal seed
        seed = (seed * 0x5DEECE66D + 0xB) & mask
        return seed >> 17

    out = set()
    for _ in range(size):
        if size & (size - 1) == 0:
            out.add((size * next31()) >> 31)
            continue
        while True:
            bits = next31()
            value = bits % size
            if bits - value + (size - 1) < 1 << 31:
                break
        out.add(value)
    return out


def _number(text: str) -> float:
    return float(text.rstrip("dDlL"))


def build(case: Case, subset: pl.DataFrame, population: pl.DataFrame, hs: dict[str, pa.Hierarchy]) -> dict[str, Any]:
    """The anonymize arguments of a case (raises NotImplementedError for a model we do not have)."""
    k, models, uses_subset = 1, [], False
    for name, args in case.models:
        if any("DataSubset" in a for a in args):
            uses_subset = True
        drawn = re.match(r"getSubset\((\d+)\)", args[0]) if args else None
        if drawn:  # TestAnonymizationSubset: rows drawn by Java's Random
            rows = sorted(java_subset(int(drawn.group(1))))
            subset = population.with_row_index("__row").filter(pl.col("__row").is_in(rows)).drop("__row")
            uses_subset = True
        if name == "KAnonymity":
            k = int(args[0])
        elif name == "DistinctLDiversity":
            models.append(pa.LDiversity(args[0].strip('"'), l=int(args[1])))
        elif name == "EntropyLDiversity":
            if len(args) > 2 and "GRASSBERGER" in args[2]:
                models.append(
                    pa.LDiversity(args[0].strip('"'), l=_number(args[1]), variant="entropy", estimator="grassberger")
                )
            else:
                models.append(pa.LDiversity(args[0].strip('"'), l=_number(args[1]), variant="entropy"))
        elif name == "RecursiveCLDiversity":
            models.append(pa.LDiversity(args[0].strip('"'), l=int(args[2]), c=_number(args[1]), variant="recursive"))
        elif name == "EqualDistanceTCloseness":
            models.append(pa.TCloseness(args[0].strip('"'), t=_number(args[1])))
        elif name == "OrderedDistanceTCloseness":
            models.append(pa.TCloseness(args[0].strip('"'), t=_number(args[1]), distance="ordered"))
        elif name == "HierarchicalDistanceTCloseness":
            attribute = args[0].strip('"')
            models.append(
                pa.TCloseness(attribute, t=_number(args[1]), distance="hierarchical", hierarchy=hs[attribute])
            )
        elif name == "BasicBLikeness":
            models.append(pa.BetaLikeness(args[0].strip('"'), beta=_number(args[1])))
        elif name == "EnhancedBLikeness":
            models.append(pa.BetaLikeness(args[0].strip('"'), beta=_number(args[1]), variant="enhanced"))
        elif name == "DDisclosurePrivacy":
            models.append(pa.DeltaDisclosure(args[0].strip('"'), delta=_number(args[1])))
        elif name == "DPresence":
            models.append(pa.DeltaPresence(population, _number(args[0]), _number(args[1])))
        elif name == "Inclusion":
            models.append(pa.DeltaPresence(population, 0.0, 1.0))
        elif name == "KMap":
            if uses_subset:
                models.append(pa.KMap(int(args[0]), population=population))
            else:
                estimator = "zero-truncated-poisson" if len(args) > 3 and "ZERO" in args[3] else "poisson"
                models.append(
                    pa.KMap(int(args[0]), population_size=USA, significance=_number(args[1]), estimator=estimator)
                )
        elif name == "AverageReidentificationRisk":
            models.append(pa.AverageRisk(_number(args[0])))
        elif name == "SampleUniqueness":
            models.append(pa.Risk("prosecutor", threshold=0.5, share=_number(args[0])))
        elif name == "getPopulationUniqueness":
            estimator = args[1].split(".")[-1].lower()
            models.append(pa.PopulationUniqueness(_number(args[0]), estimator=estimator, population_size=USA))
        else:
            raise NotImplementedError(name)
    if case.name.startswith("TCloseness[") and not any(isinstance(m, pa.TCloseness) for m in models):
        # TestAnonymizationTCloseness.test(): hierarchical 0.2-closeness on the sensitive attribute when none is given
        models.append(pa.TCloseness(case.sensitive, t=0.2, distance="hierarchical", hierarchy=hs[case.sensitive]))
    data = subset if uses_subset else population
    qids = [q for q in ALL9 if q != case.sensitive]
    sensitive = [case.sensitive] if case.sensitive and any(m.sensitive_attribute for m in models) else []
    options: dict[str, Any] = {"max_suppressed": math.floor(case.limit * data.height)}
    if case.monotonic is not None:
        options["monotonic"] = case.monotonic
    return {
        "data": data.select(*qids, *sensitive),
        "hierarchies": {q: hs[q] for q in qids},
        "k": k,
        "metric": case.metric,
        "privacy": models,
        **options,
    }


def run_case(case: Case, subset: pl.DataFrame, population: pl.DataFrame, hs: dict[str, pa.Hierarchy]) -> dict:
    row: dict[str, Any] = {
        "case": case.name,
        "metric": case.metric,
        "limit": case.limit,
        "expected": case.expected,
        "models": "; ".join(f"{n}({', '.join(a[:2])})" for n, a in case.models),
    }
    start, cpu = time.perf_counter(), time.process_time()
    try:
        args = build(case, subset, population, hs)
        data = args.pop("data")
        res = pa.anonymize(data, method="fulldomain", **args)
        res.collect()
        row["value"] = float(res.report["details"]["objective"]["value"])
        row["levels"] = str(list(res.report["details"]["levels"].values()))
        row["suppressed"] = res.report["suppressed"]
    except InfeasibleError as exc:
        row["value"], row["error"] = None, f"infeasible: {str(exc)[:80]}"
    except (NotImplementedError, TypeError) as exc:
        row["value"], row["error"] = None, f"not supported: {type(exc).__name__} {str(exc)[:80]}"
    row["seconds"] = round(time.perf_counter() - start, 2)
    row["cpu_seconds"] = round(time.process_time() - cpu, 2)
    if case.expected is None:
        row["outcome"] = "reproduced" if row["value"] is None and "infeasible" in row.get("error", "") else "differs"
    elif row["value"] is None:
        row["outcome"] = "missed"
    elif math.isclose(row["value"], case.expected, rel_tol=1e-6, abs_tol=1e-9):
        row["outcome"] = "reproduced"
    elif row["value"] < case.expected:
        row["outcome"] = "lower"
    else:
        row["outcome"] = "higher"
    row["load"] = os.getloadavg()[0]
    return row


def run_arx(case: Case, cwd: Path, classpath: str) -> dict[str, Any]:
    """ARX's run of the same configuration (``ArxSuiteCase``, from `cwd`, whose ``data/`` the test classes read),
    its seconds and whether its loss is the test's."""
    cls, index = case.name.rstrip("]").split("[")
    load = os.getloadavg()[0]
    out = subprocess.run(
        ["java", "-cp", classpath, "ArxSuiteCase", cls, index], cwd=cwd, capture_output=True, text=True, check=False
    )
    try:
        found = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"arx_error": (out.stderr.strip().splitlines() or ["no output"])[-1][:200], "arx_load": load}
    if not same_case(case, found):
        shown = {k: found.get(k) for k in ("expected", "limit")}
        return {"arx_error": f"ArxSuiteCase ran another case: {shown}", "arx_load": load}
    return {
        "arx_loss": found["loss"],
        "arx_matches_junit": found["matches_junit"],
        "arx_seconds": round(found["seconds"], 2),
        "arx_cpu_seconds": round(found["cpu_seconds"], 2),
        "arx_load": load,
    }


def same_case(case: Case, found: dict[str, Any]) -> bool:
    """Whether the driver's line is `case`: the same expected value (None where no solution is expected) and
    suppression limit, both as the test's source states them."""
    expected = found.get("expected")
    if (expected is None) != (case.expected is None) or found.get("limit") != case.limit:
        return False
    return expected is None or math.isclose(float(expected), case.expected or 0.0, rel_tol=1e-12)


def _cell(value: Any, digits: int = 2) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{round(value, digits)}"


def _ratio(row: dict[str, Any]) -> float | None:
    """Our CPU seconds over ARX's for one configuration (None without both)."""
    ours, theirs = row.get("cpu_seconds"), row.get("arx_cpu_seconds")
    return None if ours is None or not theirs else ours / theirs


def timing_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Per family (test class): the configurations timed beside ARX, the median and highest ratio of CPU seconds
    (ours / ARX's) and the sums; and whether ARX's loss was the JUnit test's expected one on every run."""
    timed = [r for r in rows if _ratio(r) is not None]
    if not timed:
        return []
    out = [
        "Times: ours is `pa.anonymize(...).collect()` in a fresh process after the data and hierarchies are read "
        "(wall and the process's CPU seconds, every thread); ARX's is `ARXAnonymizer.anonymize` in a fresh JVM "
        "after `Data` and hierarchies are built (`ArxSuiteCase`, wall and the JVM's process CPU seconds, JIT and GC "
        "included, no warm-up, as the JUnit test runs it). Ours ran first, then ARX, one after the other, niced, "
        "on a 2-core machine shared with other work: the 1-minute load is in each row, and CPU seconds are the "
        "fairer comparison. ARX's loss equals the JUnit expected value on "
        f"{sum(bool(r.get('arx_matches_junit')) for r in timed)} of the {len(timed)} ARX runs.",
        "",
        "| family | timed | median CPU ratio (ours / ARX) | highest (case) | ours CPU s | ARX CPU s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for family in CLASSES:
        group = [r for r in timed if r["case"].startswith(family + "[")]
        if not group:
            continue
        ratios = sorted(_ratio(r) or 0.0 for r in group)
        worst = max(group, key=lambda r: _ratio(r) or 0.0)
        out.append(
            f"| {family} | {len(group)} | {ratios[len(ratios) // 2]:.1f} | {_ratio(worst):.1f} ({worst['case']}) | "
            f"{sum(r['cpu_seconds'] for r in group):.1f} | {sum(r['arx_cpu_seconds'] for r in group):.1f} |"
        )
    return [*out, ""]


HIGHER: dict[str, str] = {}
"""Why a case is above ARX's value, shown while its row is."""
UNWALKED: dict[str, str] = {}
"""Why a lower case is not proven optimal by benchmarks/arx_lattice_walk.py, shown while it is not."""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--arx", default=os.environ.get("ARX", "/work/peers/arx"), help="an ARX checkout")
    parser.add_argument("--only", help="comma-separated test classes (e.g. DPresence,KMap)")
    parser.add_argument("--limit", type=int, help="at most this many cases")
    parser.add_argument("--case", help="run one case in this process and print its row (internal)")
    parser.add_argument("--rows", help="write the results from the printed rows of earlier runs instead of running")
    parser.add_argument("--arx-cp", help="classpath of ARX with its test classes and ArxSuiteCase: run ARX beside ours")
    parser.add_argument(
        "--arx-cwd",
        help="working directory of the ARX runs: its data/ must hold every data file the test classes load while "
        "listing their cases (default: the ARX checkout; build_arx.sh writes one, OUT_DIR/suite)",
    )
    parser.add_argument("--no-write", action="store_true", help="print the rows only, leave benchmarks/results")
    args = parser.parse_args()
    arx = Path(args.arx)
    cases = read_cases(arx, args.only.split(",") if args.only else None)
    population = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    subset = pl.read_csv(arx / "data" / "adult_subset.csv", separator=";", infer_schema=False)
    hs = {q: pa.Hierarchy.from_csv(ADULT / f"adult_hierarchy_{q}.csv") for q in ALL9}
    if args.case:
        case = next(c for c in cases if c.name == args.case)
        print(json.dumps(run_case(case, subset, population, hs)))
        return
    rows = []
    if args.rows:  # the rows of an earlier run (one dict per line, as printed), later lines replacing a case's earlier
        import ast

        found = {}
        for line in Path(args.rows).read_text().splitlines():
            if line.startswith("{"):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    row = ast.literal_eval(line)
                found[row["case"]] = row
        rows = [found[c.name] for c in cases if c.name in found]
    for case in cases[: args.limit] if not args.rows else []:
        out = subprocess.run(
            [sys.executable, __file__, "--arx", str(arx), "--case", case.name],
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            row = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"case": case.name, "outcome": "crashed", "error": out.stderr.strip().splitlines()[-1:]}
        if args.arx_cp:
            row.update(run_arx(case, Path(args.arx_cwd or arx), args.arx_cp))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if not args.no_write:
        write(rows)


def write(rows: list[dict[str, Any]]) -> None:
    """benchmarks/results/arx_privacy_suite.{csv,md} from `rows`."""
    table = pl.DataFrame(rows, infer_schema_length=None)
    walked = RESULTS / "arx_lattice_walk.csv"  # benchmarks/arx_lattice_walk.py: valid and lattice-optimal
    proven: set[str] = set()
    if walked.exists():
        proof = pl.read_csv(walked)
        proven = set(proof.filter(pl.col("valid") & pl.col("optimal"))["case"].to_list())
    table = table.with_columns(pl.col("case").is_in(sorted(proven)).alias("proven_optimal"))
    RESULTS.mkdir(exist_ok=True)
    table.write_csv(RESULTS / "arx_privacy_suite.csv")
    counts = table.group_by("outcome").len().sort("outcome")
    good = int(table.filter(pl.col("outcome") == "reproduced").height)
    lower = int(table.filter(pl.col("outcome") == "lower").height)
    lower_proven = int(table.filter((pl.col("outcome") == "lower") & pl.col("proven_optimal")).height)
    load = table["load"].drop_nulls() if "load" in table.columns else pl.Series([os.getloadavg()[0]])
    loads = f"{load.min():.1f} to {load.max():.1f}"
    lines = [
        "# ARX's privacy-model suite on Adult (fulldomain)",
        "",
        (
            f"{good + lower_proven} of {table.height} configurations reach ARX's expected information loss "
            f"({good}) or a lower one that is valid on the written file and proven optimal by an exhaustive walk "
            f"of the lattice ({lower_proven} of the {lower} lower; `benchmarks/results/arx_lattice_walk.md`) "
            "(`nice -n 10 python benchmarks/arx_privacy_suite.py --arx-cp CLASSPATH --arx-cwd DIR`, a class or two "
            f"at a time with `--only`, the rows merged with `--rows`; 1-minute load {loads} during the runs, per row "
            "in the CSV: the seconds are those of a machine shared by many processes)."
        ),
        "",
        *(f"- {o}: {n}" for o, n in counts.rows()),
        "",
        *(
            f"- {r['case']} (higher): {HIGHER[r['case']]}"
            for r in rows
            if r["outcome"] == "higher" and r["case"] in HIGHER
        ),
        *(
            f"- {r['case']} (lower, not walked): {UNWALKED[r['case']]}"
            for r in rows
            if r["outcome"] == "lower" and r["case"] not in proven and r["case"] in UNWALKED
        ),
        "",
        *timing_lines(rows),
        "| case | models | metric | limit | ARX | ours | outcome | proven optimal | s | CPU s | load | ARX s | "
        "ARX CPU s | ARX load | CPU ratio |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {r['case']} | {r.get('models', '')} | {r.get('metric', '')} | {r.get('limit', '')} | "
            f"{r.get('expected')} | "
            f"{r.get('value')} | {r['outcome']} | {'yes' if r['case'] in proven else ''} | {r.get('seconds', '')} | "
            f"{_cell(r.get('cpu_seconds'))} | {_cell(r.get('load'), 1)} | {_cell(r.get('arx_seconds'))} | "
            f"{_cell(r.get('arx_cpu_seconds'))} | {_cell(r.get('arx_load'), 1)} | {_cell(_ratio(r), 1)} |"
            for r in rows
        ),
    ]
    (RESULTS / "arx_privacy_suite.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
