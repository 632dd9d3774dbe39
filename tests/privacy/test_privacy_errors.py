"""The bad-input catalogue for privacy models: every refusal names the model, key and value."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.cli import main
from polars_anon.errors import ColumnNotFoundError, InfeasibleError, InvalidParameterError, ValueNotInHierarchyError
from polars_anon.job import Job
from polars_anon.messages import NOT_A_LEAF
from polars_anon.privacy.base import Model
from polars_anon.report import jsonable

H = {"age": pa.Hierarchy.intervals(range(20, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
T = pl.DataFrame(
    {
        "age": [21, 22, 23, 24, 31, 32, 33, 34],
        "sex": ["F", "M"] * 4,
        "disease": ["flu", "flu", "cold", "cold", "flu", "cancer", "cold", "flu"],
    }
)


def run(**kw):
    return pa.anonymize(T, hierarchies=H, k=2, **kw)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: pa.LDiversity("disease", l=0),
            InvalidParameterError,
            r"l-diversity on 'disease': l must be an integer >= 1, got 0",
        ),
        (lambda: pa.LDiversity("disease", l=2.5), InvalidParameterError, r"l must be an integer >= 1, got 2.5"),
        (
            lambda: pa.LDiversity("disease", l=2, variant="recursive"),
            InvalidParameterError,
            r"c must be a number > 0, got None",
        ),
        (
            lambda: pa.LDiversity("disease", l=2, variant="mean"),
            InvalidParameterError,
            r"variant must be one of \['distinct', 'entropy', 'recursive'\], got 'mean'",
        ),
        (
            lambda: pa.TCloseness("disease", t=1.5),
            InvalidParameterError,
            r"t-closeness on 'disease': t must be a number in \[0, 1\], got 1.5",
        ),
        (lambda: pa.TCloseness("disease", t=-0.1), InvalidParameterError, r"t must be a number in \[0, 1\], got -0.1"),
        (
            lambda: pa.TCloseness("disease", t=0.2, distance="manhattan"),
            InvalidParameterError,
            r"distance must be one of",
        ),
        (lambda: pa.DeltaDisclosure("disease", delta=0), InvalidParameterError, r"delta must be a number > 0, got 0"),
        (lambda: pa.BetaLikeness("disease", beta=-1), InvalidParameterError, r"beta must be a number > 0, got -1"),
        (
            lambda: pa.KMap(5, sampling_fraction=0),
            InvalidParameterError,
            r"k-map: sampling_fraction must be a number in \(0, 1\], got 0",
        ),
        (
            lambda: pa.KMap(5, sampling_fraction=1.5),
            InvalidParameterError,
            r"sampling_fraction must be a number in \(0, 1\], got 1.5",
        ),
        (lambda: pa.KMap(5), InvalidParameterError, r"give exactly one of population"),
        (
            lambda: pa.PopulationUniqueness(0.01, sampling_fraction=2.0),
            InvalidParameterError,
            r"population-uniqueness: sampling_fraction must be a number in \(0, 1\], got 2.0",
        ),
        (lambda: pa.DeltaPresence(T, dmin=0.6, dmax=0.5), InvalidParameterError, r"dmin=0.6 is above dmax=0.5"),
        (lambda: pa.Risk("marketer", highest=0.2), InvalidParameterError, r"marketer risk is an average"),
        (
            lambda: pa.AverageRisk(0),
            InvalidParameterError,
            r"average-risk: threshold must be a number in \(0, 1\], got 0",
        ),
    ],
)
def test_model_parameters_are_refused(make, error, message) -> None:
    with pytest.raises(error, match=message):
        make()


def test_unknown_attribute_is_named() -> None:
    with pytest.raises(ColumnNotFoundError, match=r"l-diversity: attribute \['diagnosis'\] not in the frame"):
        run(privacy=[pa.LDiversity("diagnosis", l=2)])


def test_sensitive_attribute_that_is_a_qid() -> None:
    with pytest.raises(InvalidParameterError, match=r"l-diversity on 'sex': attribute 'sex' is a quasi-identifier"):
        run(privacy=[pa.LDiversity("sex", l=2)])


def test_not_a_model() -> None:
    with pytest.raises(InvalidParameterError, match=r"privacy\[0\] must be a privacy model .* got dict"):
        run(privacy=[{"model": "l-diversity"}])


def test_l_above_the_distinct_values_names_the_largest_l() -> None:
    with pytest.raises(
        InfeasibleError,
        match=r"l-diversity on 'disease' \(l=4.*cannot be met .* 3 distinct values .* largest l that can be met is 3",
    ):
        run(privacy=[pa.LDiversity("disease", l=4)])


def test_entropy_l_above_the_table_entropy() -> None:
    with pytest.raises(InfeasibleError, match=r"largest l that can be met is 2.64935"):
        run(privacy=[pa.LDiversity("disease", l=2.9, variant="entropy")])


def test_population_that_does_not_contain_the_sample() -> None:
    population = T.head(5)
    with pytest.raises(InfeasibleError, match=r"delta-presence: the population table does not contain the sample"):
        run(privacy=[pa.DeltaPresence(population, dmax=1.0)])


def test_population_model_needs_a_full_domain_method() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"needs a method that generalizes every population record .* got method 'greedy'"
    ):
        run(privacy=[pa.KMap(2, population=T)], method="greedy")


def test_relaxed_mondrian_refuses_sensitive_models() -> None:
    with pytest.raises(InvalidParameterError, match=r"mondrian mode 'relaxed' .* use mode='strict'"):
        run(privacy=[pa.LDiversity("disease", l=2)], method="mondrian", mode="relaxed")


def test_hierarchical_distance_without_hierarchy() -> None:
    with pytest.raises(InvalidParameterError, match=r"distance 'hierarchical' needs a hierarchy of 'disease'"):
        run(privacy=[pa.TCloseness("disease", t=0.5, distance="hierarchical")])


def test_hierarchical_distance_refuses_a_value_that_is_not_a_leaf() -> None:
    """'cold' is an inner node here: it used to weigh nothing (a silent wrong distance)."""
    h = pa.Hierarchy.from_dict({"*": {"cold": ["cold-a", "cold-b"], "flu": None, "cancer": None}})
    with pytest.raises(ValueNotInHierarchyError, match=NOT_A_LEAF.pattern(column="disease", value="cold")):
        run(privacy=[pa.TCloseness("disease", t=0.5, distance="hierarchical", hierarchy=h)])


def test_job_file_refusals_name_model_key_and_value() -> None:
    base = {"input": "a.parquet", "output": "o.parquet", "k": 2, "qids": {"sex": {"hierarchy": "suppress"}}}
    with pytest.raises(
        InvalidParameterError, match=r"\[\[privacy\]\] table 1 \(model 'l-diversity'\) does not take option 'lvalue'"
    ):
        Job.from_dict(base | {"privacy": [{"model": "l-diversity", "attribute": "s", "lvalue": 2}]})
    with pytest.raises(
        InvalidParameterError,
        match=r"\[\[privacy\]\] table 1 \(model 't-closeness'\): option 't' must be a number, got 'low'",
    ):
        Job.from_dict(base | {"privacy": [{"model": "t-closeness", "attribute": "s", "t": "low"}]})
    with pytest.raises(InvalidParameterError, match=r"\[\[privacy\]\] table 1 has no 'model' key"):
        Job.from_dict(base | {"privacy": [{"attribute": "s"}]})
    with pytest.raises(
        InvalidParameterError, match=r"\[\[privacy\]\] table 1: model must be one of .* got 'l-diversty'"
    ):
        Job.from_dict(base | {"privacy": [{"model": "l-diversty"}]})


def test_cli_refusal_is_one_line_exit_2(tmp_path, capsys) -> None:
    path = tmp_path / "t.parquet"
    T.write_parquet(path)
    assert main(["risk", str(path), "--qids", "age", "--sampling-fraction", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "sampling_fraction must be a number in (0, 1], got 0.0" in err
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
                "{model = 'l-diversity', attribute = 'disease', l = 0}",
            ]
        )
        == 2
    )
    assert "l must be an integer >= 1, got 0" in capsys.readouterr().err


HUGE = 2**1030  # an int no float holds: float(HUGE) raises OverflowError


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: pa.DifferentialPrivacy(HUGE, 0.1), r"differential-privacy: epsilon must be a number > 0 and at most"),
        (lambda: pa.DifferentialPrivacy(1.0, HUGE), r"differential-privacy: delta must be a number in \(0, 1\)"),
        (
            lambda: pa.DifferentialPrivacy(1.0, 0.1, budget_for_search=HUGE),
            r"differential-privacy: budget_for_search must be a number in \[0, 1\)",
        ),
        (lambda: pa.DifferentialPrivacy(1.0, 0.1, steps=HUGE), r"differential-privacy: steps must be an integer > 0"),
        (lambda: pa.LDiversity("disease", l=HUGE), r"l-diversity on 'disease': l must be an integer >= 1 and at"),
        (lambda: pa.TCloseness("disease", t=HUGE), r"t-closeness on 'disease': t must be a number in \[0, 1\]"),
        (lambda: pa.PopulationUniqueness(HUGE, population_size=10), r"population-uniqueness: threshold must be"),
        (lambda: pa.PopulationUniqueness(0.1, population_size=HUGE), r"population_size must be an integer > 0 and"),
        (lambda: pa.KMap(HUGE), r"k-map: k must be an integer >= 1 and at most 1.8e\+308, got 1150523"),
    ],
)
def test_an_int_too_large_for_a_float_is_refused_by_name(make, message) -> None:
    """hunt35 F4: DifferentialPrivacy(2**1030, 0.1) raised a bare OverflowError (int too large to convert to
    float) from the parameter checks; every model's number parameter refuses it naming the model and key."""
    with pytest.raises(InvalidParameterError, match=message):
        make()


MODEL_INTEGERS: dict[tuple[str, str], tuple[Callable[[Any], Model], int]] = {
    ("differential-privacy", "transformation"): (
        lambda v: pa.DifferentialPrivacy(1.0, 1e-3, transformation={"g": v}),
        1,
    ),
    ("differential-privacy", "steps"): (lambda v: pa.DifferentialPrivacy(1.0, 1e-3, steps=v), 50),
    ("differential-privacy", "seed"): (lambda v: pa.DifferentialPrivacy(1.0, 1e-3, seed=v), 7),
    ("k-map", "k"): (lambda v: pa.KMap(v, population_size=1000), 3),
    ("k-map", "population_size"): (lambda v: pa.KMap(3, population_size=v), 1000),
    ("population-uniqueness", "population_size"): (lambda v: pa.PopulationUniqueness(0.1, population_size=v), 1000),
    ("l-diversity", "l"): (lambda v: pa.LDiversity("s", l=v), 2),  # a float parameter, an integer for 'distinct'
}
"""Each integer parameter of every model: how to build the model with a value of it, and a valid value."""


def test_the_integer_parameters_are_every_one_the_models_take() -> None:
    from polars_anon.privacy import MODELS

    def holds_int(hint: object) -> bool:
        return hint is int or any(holds_int(a) for a in typing.get_args(hint))

    found = {
        (name, f.name)
        for name, model in MODELS.items()
        for f in dataclasses.fields(model)
        if f.init and holds_int(typing.get_type_hints(model)[f.name])
    }
    assert found == set(MODEL_INTEGERS) - {("l-diversity", "l")}


@pytest.mark.parametrize(("model", "key"), sorted(MODEL_INTEGERS))
def test_every_integer_parameter_takes_a_numpy_integer_not_a_bool(model: str, key: str) -> None:
    """KMap(np.int64(3), ...), LDiversity(l=np.int64(2)), DifferentialPrivacy(steps=...) and a transformation's
    NumPy levels were refused ("must be an integer >= 1, got np.int64(3)") while seed=np.int64(3) was taken: every
    integer parameter takes a NumPy integer (the numbers' check reads it through _validate.is_integer) and builds
    the model the Python int builds; a bool (Python's or NumPy's) stays refused."""
    make, value = MODEL_INTEGERS[(model, key)]
    want = make(value)
    for kind in (np.int64, np.int32, np.uint16):
        got = make(kind(value))
        assert got == want and jsonable(got.summary()) == jsonable(want.summary())
    for bad in (True, np.bool_(True)):
        with pytest.raises(InvalidParameterError, match=key):
            make(bad)
