"""The full-domain search finds, for every objective and option, the optimum of an exhaustive walk.

The reference (:mod:`tests.lattice_reference`) evaluates every vector of the lattice
on its classes, from the definitions, and takes the minimum; the search prunes with
bounds. They must agree on the vector, its suppressed rows and its value.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.algorithms import Task
from polars_anon.algorithms.fulldomain import search
from polars_anon.algorithms.objectives import AGGREGATES, OBJECTIVES, Settings
from polars_anon.errors import InfeasibleError
from tests.lattice_reference import optimum, tabulate
from tests.strategies import tables


@st.composite
def objectives(draw: st.DrawFn, qids: list[str]) -> dict[str, object]:
    """A metric and options it takes (None: its default)."""
    metric = draw(st.sampled_from(sorted(OBJECTIVES)))
    cls = OBJECTIVES[metric]
    out: dict[str, object] = {"metric": metric}
    if cls.default_aggregate is not None:
        out["aggregate"] = draw(st.sampled_from([None, *AGGREGATES]))
    if cls.gs:
        out["gs_factor"] = draw(st.sampled_from([None, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0]))
    if cls.monotonic_option:
        out["monotonic"] = draw(st.booleans())
    if cls.weighted and draw(st.booleans()):
        weights = {q: draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])) for q in qids if draw(st.booleans())}
        if any(weights.get(q, 1.0) > 0 for q in qids):
            out["weights"] = weights
    return out


def check(df: pl.DataFrame, hs: dict[str, pa.Hierarchy], k: int, budget: int, config: dict[str, object]) -> None:
    qids = list(hs)
    agg = df.group_by(qids).len("size").with_columns(pl.col("size").cast(pl.UInt32)).sort(qids)
    options = {key: v for key, v in config.items() if key != "metric" and v is not None}
    ref_config = dict(options, metric=config["metric"])
    if "weights" in options:
        ref_config["weights"] = [float(options["weights"].get(q, 1.0)) for q in qids]  # type: ignore[attr-defined]
    want = optimum(
        tabulate(agg, qids, hs, [k], {"c": ref_config})[(k, "c")], budget, str(config["metric"]), rows=df.height
    )
    chosen = Settings(str(config["metric"]), max_suppressed=budget, **options)  # type: ignore[arg-type]
    if want is None:
        with pytest.raises(InfeasibleError):
            search(Task(agg, qids, hs, k), budget, chosen)
        return
    got = search(Task(agg, qids, hs, k), budget, chosen)
    assert (tuple(got.levels.values()), got.suppressed) == (want[0], want[2]), (got.score.key.tolist(), want[1])
    assert got.score.key.tolist() == pytest.approx(list(want[1]), rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), t=tables(max_rows=30), k=st.integers(1, 5))
def test_search_finds_the_exhaustive_optimum(
    data: st.DataObject, t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int
) -> None:
    df, hs = t
    assume(k <= df.height)
    budget = data.draw(st.integers(0, df.height), label="budget")
    check(df, hs, k, budget, data.draw(objectives(list(hs)), label="objective"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), t=tables(n_qids=3, max_rows=40), k=st.integers(2, 4))
def test_three_qids(data: st.DataObject, t: tuple[pl.DataFrame, dict[str, pa.Hierarchy]], k: int) -> None:
    df, hs = t
    assume(k <= df.height)
    budget = data.draw(st.sampled_from([0, df.height // 10, df.height // 3, df.height]), label="budget")
    check(df, hs, k, budget, data.draw(objectives(list(hs)), label="objective"))
