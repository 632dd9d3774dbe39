"""Where topdown refuses and fulldomain publishes: a random search over small tables, same models and budget.

    python benchmarks/topdown_misses.py [FIRST_SEED COUNT]      # default 0 1000 -> results/topdown_misses.md

Each seed draws a table (20-150 rows; 2-3 qids, each with 2-8 leaves under a random hierarchy of height 1-3;
a sensitive column of 2-4 values), one or two privacy models (distinct, entropy or recursive l-diversity,
t-closeness with equal distance, a prosecutor risk threshold, an average risk), k in {2, 3, 5} and a budget
(``max_suppressed``) of 0, a tenth, a half or every row. Both methods run on it; where fulldomain publishes and
topdown refuses, topdown runs again with ``global_start=True``. Seeded NumPy draws, no hypothesis: the same
seeds give the same cases. The result says what topdown's search misses (docs/methods/topdown.md, "What it
guarantees").
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl

import polars_anon as pa

OUT = Path(__file__).resolve().parent / "results" / "topdown_misses.md"


def _hierarchy(rng: np.random.Generator, q: str, n_leaves: int, height: int) -> pa.Hierarchy:
    """Leaves q0, q1, ... grouped level by level into runs of 1-3 consecutive labels, then the root."""
    leaves = [f"{q}{i}" for i in range(n_leaves)]
    levels, below = [leaves], leaves
    for level in range(1, height):
        distinct, parent, i, g = list(dict.fromkeys(below)), {}, 0, 0
        while i < len(distinct):
            width = int(rng.integers(1, 4))
            parent |= {u: f"{q}_L{level}_{g}" for u in distinct[i : i + width]}
            g, i = g + 1, i + width
        below = [parent[u] for u in below]
        levels.append(below)
    levels.append(["*"] * n_leaves)
    return pa.Hierarchy.from_rows([[col[i] for col in levels] for i in range(n_leaves)])


def case(seed: int) -> tuple[pl.DataFrame, dict[str, pa.Hierarchy], list, int, int]:
    """The table, hierarchies, models, k and budget of one seed."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(20, 151)), int(rng.integers(2, 4))
    hierarchies, cols = {}, {}
    for j in range(m):
        q = "q" + "abc"[j]
        n_leaves = int(rng.integers(2, 9))
        hierarchies[q] = _hierarchy(rng, q, n_leaves, int(rng.integers(1, 4)))
        p = rng.dirichlet(np.ones(n_leaves) * 0.7)
        cols[q] = [f"{q}{i}" for i in rng.choice(n_leaves, size=n, p=p)]
    n_values = int(rng.integers(2, 5))
    cols["s"] = [f"s{i}" for i in rng.choice(n_values, size=n, p=rng.dirichlet(np.ones(n_values)))]
    pool = [
        lambda: pa.LDiversity("s", l=2),
        lambda: pa.LDiversity("s", l=float(rng.choice([1.5, 2.0])), variant="entropy"),
        lambda: pa.LDiversity("s", l=2, variant="recursive", c=float(rng.choice([2.0, 3.0]))),
        lambda: pa.TCloseness("s", t=float(rng.choice([0.2, 0.35]))),
        lambda: pa.Risk("prosecutor", threshold=float(rng.choice([0.34, 0.5])), share=float(rng.choice([0.05, 0.2]))),
        lambda: pa.AverageRisk(float(rng.choice([0.2, 0.3]))),
    ]
    picks = sorted(int(i) for i in rng.choice(len(pool), size=int(rng.integers(1, 3)), replace=False))
    models = [pool[i]() for i in picks]
    return pl.DataFrame(cols), hierarchies, models, int(rng.choice([2, 3, 5])), int(rng.choice([0, n // 10, n // 2, n]))


def publish(seed: int, method: str, **options: object) -> tuple[int, float] | None:
    """(rows published, loss) of one method on the seed's case; None when it refuses (no publication)."""
    df, hierarchies, models, k, budget = case(seed)
    try:  # refused at once (fulldomain's search) or when collected (a method's publication checked by the road)
        result = pa.anonymize(
            df,
            hierarchies=hierarchies,
            k=k,
            method=method,
            sensitive="s",
            privacy=models,
            max_suppressed=budget,
            **options,
        )
        return result.collect().height, float(result.report["loss"])
    except pa.InfeasibleError:
        return None


def main(first: int, count: int) -> None:
    tally: Counter[str] = Counter()
    lines = []
    start = time.perf_counter()
    for seed in range(first, first + count):
        fd, td = publish(seed, "fulldomain"), publish(seed, "topdown")
        tally[f"fulldomain {'publishes' if fd else 'refuses'}, topdown {'publishes' if td else 'refuses'}"] += 1
        if fd and not td:
            _, _, models, k, budget = case(seed)
            gs = publish(seed, "topdown", global_start=True)
            shown = "refuses" if gs is None else f"{gs[0]} rows, loss {gs[1]:.4f}"
            lines.append(
                f"| {seed} | {k} | {budget} | {'; '.join(m.describe() for m in models)} | {fd[0]} rows, loss "
                f"{fd[1]:.4f} | {shown} |"
            )
    seconds = time.perf_counter() - start
    text = [
        "# Topdown against fulldomain: where topdown finds no publication",
        "",
        f"`python benchmarks/topdown_misses.py {first} {count}`: {count} seeds, {seconds:.0f} s wall. Counts:",
        "",
        *(f"- {key}: {n}" for key, n in sorted(tally.items())),
        "",
        "Seeds where fulldomain publishes and topdown refuses, and topdown with `global_start=True`:",
        "",
        "| seed | k | max_suppressed | models | fulldomain | topdown, global_start=True |",
        "| --- | --- | --- | --- | --- | --- |",
        *lines,
    ]
    OUT.write_text("\n".join(text) + "\n", encoding="utf-8")
    print("\n".join(text))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3])) if len(sys.argv) > 2 else main(0, 1000)
