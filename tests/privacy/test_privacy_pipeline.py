"""Privacy models through the pipeline: enforced, verified from the written file (fail closed), reported."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.algorithms import METHODS, Plan
from polars_anon.cli import main
from polars_anon.errors import PrivacyModelError
from polars_anon.job import run_job
from polars_anon.privacy.constraints import Constraints
from polars_anon.tuplemap import TupleMap

H = {"age": pa.Hierarchy.intervals(range(20, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
T = pl.DataFrame(
    {
        "age": [21, 22, 23, 24, 31, 32, 33, 34, 25, 26],
        "sex": ["F", "M"] * 5,
        "disease": ["flu", "flu", "flu", "cold", "flu", "cancer", "cold", "flu", "flu", "flu"],
        "zip": ["1", "2", "1", "2", "1", "2", "1", "2", "1", "2"],
    }
)


def _diverse(out: pl.DataFrame, l: int) -> bool:
    return bool(out.group_by("age", "sex").agg(pl.col("disease").n_unique())["disease"].min() >= l)


@pytest.mark.parametrize("method", ["fulldomain", "datafly", "greedy", "mondrian", "topdown"])
def test_every_method_publishes_l_diverse_classes(method: str) -> None:
    res = pa.anonymize(T, hierarchies=H, k=2, method=method, privacy=[pa.LDiversity("disease", l=2)], insensitive="zip")
    out = res.collect()
    assert _diverse(out, 2)
    assert res.report["privacy"][0]["satisfied"] and res.report["privacy"][0]["model"] == "l-diversity"


def test_several_models_and_several_sensitive_attributes() -> None:
    res = pa.anonymize(
        T,
        hierarchies=H,
        k=2,
        sensitive=["disease", "zip"],
        privacy=[pa.LDiversity("disease", l=2), pa.LDiversity("zip", l=2), pa.TCloseness("disease", t=0.5)],
    )
    out = res.collect()
    assert _diverse(out, 2)
    assert out.group_by("age", "sex").agg(pl.col("zip").n_unique())["zip"].min() >= 2
    assert [m["attribute"] for m in res.report["privacy"]] == ["disease", "zip", "disease"]
    assert res.report["sensitive"] == "disease"  # the first: what cm and mi_loss read


def test_a_single_sensitive_string_still_works() -> None:
    res = pa.anonymize(T, hierarchies=H, k=2, sensitive="disease", insensitive="zip")
    res.collect()
    assert res.report["sensitive"] == "disease" and "privacy" not in res.report


def test_constraints_always_present_k_only() -> None:
    from polars_anon.algorithms import Task

    agg = pl.DataFrame({"age": ["21", "22"], "size": [1, 1]}, schema_overrides={"size": pl.UInt32})
    task = Task(agg, ["age"], {"age": H["age"]}, 2)
    assert isinstance(task.constraints, Constraints) and task.constraints.k_only and task.constraints.monotone
    assert task.constraints.violating(np.array([0, 0])).tolist() == [False]
    assert task.constraints.violating(np.array([0, 1])).tolist() == [True, True]
    assert not task.constraints.satisfied(np.array([1])) and task.constraints.satisfied(np.array([0, 1]))


def test_verification_fails_closed_on_a_violating_map(tmp_path, monkeypatch) -> None:
    """A method that ignores the models: the check of the written file refuses it and writes nothing."""
    original = METHODS["fulldomain"]

    def careless(task, options):
        agg = task.aggregates
        return Plan(TupleMap.from_levels(agg, task.hierarchies, {"age": 2, "sex": 0}))

    monkeypatch.setitem(METHODS, "fulldomain", type(original)(**{**original.__dict__, "run": careless}))
    res = pa.anonymize(T, hierarchies=H, k=2, privacy=[pa.LDiversity("disease", l=3)], insensitive="zip")
    out = tmp_path / "out.parquet"
    with pytest.raises(
        PrivacyModelError, match=r"independent check failed: l-diversity on 'disease' \(l=3.*classes .* violate it"
    ):
        res.sink_parquet(out)
    assert list(tmp_path.iterdir()) == []


def test_report_risk_section_input_and_output(tmp_path) -> None:
    res = pa.anonymize(
        T, hierarchies=H, k=2, privacy=[pa.PopulationUniqueness(0.5, sampling_fraction=0.1)], insensitive="zip"
    )
    report = res.sink_parquet(tmp_path / "o.parquet")
    risk = report["risk"]
    assert set(risk) == {"input", "output"}
    for side in ("input", "output"):
        r = risk[side]
        assert {
            "prosecutor",
            "journalist",
            "marketer",
            "class_sizes",
            "record_risk",
            "sample_uniques",
            "population_uniqueness",
        } <= set(r)
        assert r["population_uniqueness"]["population_size"] == 100
    assert risk["input"]["prosecutor"]["highest"] == 1.0  # the input has unique rows
    assert risk["output"]["prosecutor"]["highest"] <= 0.5
    saved = json.loads((tmp_path / "o.report.json").read_text())
    assert saved["risk"]["output"]["n_rows"] == report["n_rows"]


def test_job_file_privacy_tables(tmp_path) -> None:
    T.write_parquet(tmp_path / "in.parquet")
    (tmp_path / "job.toml").write_text(
        'input = "in.parquet"\noutput = "out.parquet"\nk = 2\ninsensitive = "zip"\n'
        '[[privacy]]\nmodel = "l-diversity"\nattribute = "disease"\nl = 2\n'
        '[[privacy]]\nmodel = "t-closeness"\nattribute = "disease"\nt = 0.5\ndistance = "hierarchical"\n'
        'hierarchy = "disease.csv"\n'
        '[qids.age]\nhierarchy = { intervals = [5, 10], bottom = 20, top = 40 }\n[qids.sex]\nhierarchy = "suppress"\n'
    )
    (tmp_path / "disease.csv").write_text("flu;infection;*\ncold;infection;*\ncancer;tumour;*\n")
    report = run_job(pa.job.Job.load(tmp_path / "job.toml"))
    assert [m["model"] for m in report["privacy"]] == ["l-diversity", "t-closeness"]
    assert _diverse(pl.read_parquet(tmp_path / "out.parquet"), 2)


def test_check_any_table_and_cli(tmp_path, capsys) -> None:
    result = pa.check(T, ["sex"], [pa.LDiversity("disease", l=2), pa.AverageRisk(0.5)], k=2)
    assert result["k_anonymous"] and [m["satisfied"] for m in result["models"]] == [True, True]
    assert not pa.check(T, ["age"], [pa.LDiversity("disease", l=2)])["models"][0]["satisfied"]
    path = tmp_path / "t.parquet"
    T.write_parquet(path)
    assert (
        main(
            [
                "check",
                str(path),
                "--qids",
                "sex",
                "--k",
                "2",
                "--model",
                '{model = "l-diversity", attribute = "disease", l = 2}',
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "check",
                str(path),
                "--qids",
                "age",
                "--k",
                "1",
                "--model",
                '{model = "l-diversity", attribute = "disease", l = 2}',
            ]
        )
        == 1
    )
    capsys.readouterr()
    assert (
        main(["risk", str(path), "--qids", "age,sex", "--sampling-fraction", "0.5", "--json", str(tmp_path / "r.json")])
        == 0
    )
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["prosecutor"]["highest"] == 1.0 and doc["population_uniqueness"]["population_size"] == 20


def test_namespace_passes_models_through() -> None:
    out = T.anon.k_anonymize(hierarchies=H, k=2, privacy=[pa.LDiversity("disease", l=2)], insensitive="zip")
    assert _diverse(out, 2)
    assert T.anon.risk(["sex"])["n_classes"] == 2
    assert T.anon.check_privacy(["sex"], [pa.LDiversity("disease", l=2)])["models"][0]["satisfied"]


def test_delta_presence_and_k_map_with_a_population() -> None:
    population = pl.concat([T, T.with_columns(pl.col("disease").reverse()), T.head(4)])
    res = pa.anonymize(
        T,
        hierarchies=H,
        k=1,
        privacy=[pa.DeltaPresence(population, dmax=0.45), pa.KMap(3, population=population)],
        insensitive=["zip", "disease"],
    )
    out = res.collect()
    pub = population.lazy().anon.generalize(H, res.report["details"]["levels"]).collect()
    pop = pub.group_by("age", "sex").len("p")
    joined = (
        out.group_by("age", "sex").len("n").join(pop.with_columns(pl.col("age").cast(pl.String)), on=["age", "sex"])
    )
    assert joined.height == out.group_by("age", "sex").len().height
    assert (joined["n"] / joined["p"]).max() <= 0.45 and joined["p"].min() >= 3


def test_wide_and_long_counts_give_the_same_result(monkeypatch) -> None:
    """Few values are counted as columns of the class-size pass, many by a (tuple, value) group-by: same answer.

    Both runs in one test (not two parametrized ones sharing state: pytest-xdist may run those apart)."""
    import sys

    def run() -> tuple[list, list]:
        nulls = T.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise(pl.col("sex")).alias("sex"))
        res = pa.anonymize(
            nulls,
            hierarchies=H,
            k=2,
            method="greedy",
            null="suppress",
            insensitive="zip",
            privacy=[pa.LDiversity("disease", l=2), pa.TCloseness("disease", t=0.4)],
        )
        out = res.collect()
        assert _diverse(out, 2)
        assert res.report["privacy"][1]["max_measure"] == pytest.approx(0.4, abs=0.4)
        return out.rows(), res.report["privacy"]

    wide = run()
    monkeypatch.setattr(sys.modules["polars_anon.anonymize"], "WIDE", 1)  # every attribute counted long
    assert run() == wide


def test_verification_refuses_sensitive_values_the_input_lacks() -> None:
    from polars_anon.privacy.evaluate import build_constraints
    from polars_anon.verify import verify_published

    agg = T.group_by("sex").len("size").sort("sex")
    c = build_constraints(
        agg, ["sex"], 2, [pa.LDiversity("disease", l=2)], {"disease": T.group_by("sex", "disease").len("count")}
    )
    facts, _ = verify_published(T.lazy(), ["sex"], 2, c)
    assert facts["privacy"][0]["satisfied"]
    forged = T.with_columns(
        pl.when(pl.col("disease") == "cancer").then(pl.lit("plague")).otherwise("disease").alias("disease")
    )
    with pytest.raises(PrivacyModelError, match=r"the published column 'disease' holds values the input does not"):
        verify_published(forged.lazy(), ["sex"], 2, c)


def test_reports_with_models_match_the_schema(tmp_path) -> None:
    import jsonschema

    from polars_anon.report import schema

    validator = jsonschema.Draft202012Validator(schema())
    for method, kw in (("fulldomain", {}), ("mdav", {"qids": ["age", "sex"], "hierarchies": {}})):
        res = pa.anonymize(
            T,
            **({"hierarchies": H} | kw),
            k=2,
            method=method,
            insensitive="zip",
            privacy=[
                pa.LDiversity("disease", l=2),
                pa.AverageRisk(0.5),
                pa.PopulationUniqueness(0.5, sampling_fraction=0.5),
            ],
        )
        res.sink_parquet(tmp_path / f"{method}.parquet")
        validator.validate(json.loads((tmp_path / f"{method}.report.json").read_text()))


def test_the_check_groups_strings_either_way(tmp_path, monkeypatch) -> None:
    """The check groups the published Strings as Categorical, or as they are when the map's classes are few: the
    same facts (hand-counted here) and the same refusal of a violating map, either way."""
    import polars_anon.engines.polars as engine

    original = METHODS["fulldomain"]
    facts = []
    for few in (1, 10**9):  # 1: the classes always count as few; 10**9: never (nor on a small table: FEW_ROWS 0)
        monkeypatch.setattr(engine, "FEW", few)
        monkeypatch.setattr(engine, "FEW_ROWS", 0)
        res = pa.anonymize(T, hierarchies=H, k=2, privacy=[pa.LDiversity("disease", l=2)], insensitive="zip")
        out = res.collect()
        sizes = sorted(out.group_by("age", "sex").len()["len"].to_list())
        assert (res.report["n_classes"], res.report["min_class_size"]) == (len(sizes), sizes[0])
        facts.append((res.report["n_rows"], res.report["n_classes"], res.report["privacy"]))

        def careless(task, options):
            return Plan(TupleMap.from_levels(task.aggregates, task.hierarchies, {"age": 2, "sex": 0}))

        monkeypatch.setitem(METHODS, "fulldomain", type(original)(**{**original.__dict__, "run": careless}))
        bad = pa.anonymize(T, hierarchies=H, k=2, privacy=[pa.LDiversity("disease", l=3)], insensitive="zip")
        with pytest.raises(PrivacyModelError, match=r"independent check failed: l-diversity on 'disease' \(l=3"):
            bad.sink_parquet(tmp_path / f"out{few}.parquet")
        monkeypatch.setitem(METHODS, "fulldomain", original)
    assert facts[0] == facts[1]
    assert list(tmp_path.iterdir()) == []
