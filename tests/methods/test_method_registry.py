"""One list of methods: the ``Method`` Literal, the CLI's --method choices and the registry agree."""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Callable
from typing import Any, get_args

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon._types import Method
from polars_anon.algorithms import METHODS
from polars_anon.request import DEFERRED, check_request


def _choices(command: str, option: str) -> list[str]:
    parser = cli.parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if option in a.option_strings)
    return list(action.choices)


def test_literal_cli_and_registry_agree() -> None:
    assert sorted(get_args(Method)) == sorted(METHODS)
    assert sorted(_choices("demo", "--method")) == sorted(METHODS)


def test_requests_dispatch_through_the_registry() -> None:
    """The API, the namespace and the job file all name a method through check_request."""
    for name, spec in METHODS.items():
        request = check_request(["a"], hierarchies={"a": DEFERRED}, k=2, method=name)
        assert request.method is spec and spec.name == name


AGES = [str(20 + i % 12) for i in range(48)]
TABLE = pl.DataFrame({"age": AGES, "sex": ["F", "M", "M"] * 16})
HIERARCHIES = {
    "age": pa.Hierarchy.intervals(range(20, 32), [2, 4]),
    "sex": pa.Hierarchy.suppression(["F", "M"]),
}
INTEGER_OPTIONS: dict[tuple[str, str], object] = {
    ("datafly", "max_suppressed"): 3,
    ("fulldomain", "max_suppressed"): 3,
    ("topdown", "max_suppressed"): 3,
    ("greedy", "candidates"): 2,
    ("mdav", "block_size"): 8,
    ("local_suppression", "importance"): {"age": 1, "sex": 2},
}
"""A valid value of every integer option of every method (a mapping: its values are the integers)."""


def _holds_int(hint: object) -> bool:
    return hint is int or any(_holds_int(a) for a in get_args(hint))


def test_the_integer_options_are_every_one_the_methods_take() -> None:
    found = {
        (name, f.name)
        for name, spec in METHODS.items()
        for f in dataclasses.fields(spec.options)
        if f.init and _holds_int(typing.get_type_hints(spec.options)[f.name])
    }
    assert found == set(INTEGER_OPTIONS)


def _numpy(value: object, kind: Callable[[Any], object]) -> object:
    return {q: kind(v) for q, v in value.items()} if isinstance(value, dict) else kind(value)


@pytest.mark.parametrize(("method", "option"), sorted(INTEGER_OPTIONS))
def test_every_integer_option_takes_a_numpy_integer_not_a_bool_or_a_float(method: str, option: str) -> None:
    """max_suppressed=np.int64(3) was refused (an integer from an array, a notebook's arithmetic) while
    seed=np.int64(3) and k were taken, and greedy's candidates and MDAV's block_size took one through their own
    tests: every integer option takes a NumPy integer through the one test (_validate.is_integer), and publishes
    the same rows and report options as the Python int; a bool and a float, even a whole one, stay refused."""
    value = INTEGER_OPTIONS[(method, option)]

    def run(given: object) -> pa.Anonymized:
        return pa.anonymize(TABLE, hierarchies=HIERARCHIES, k=4, method=method, **{option: given})  # type: ignore[arg-type]

    want = run(value)
    for kind in (np.int64, np.int32, np.uint8):
        got = run(_numpy(value, kind))
        assert got.collect().equals(want.collect()) and got.report["options"] == want.report["options"]
    for bad in (True, np.bool_(True), 3.0, np.float64(3.0)):
        with pytest.raises(pa.InvalidParameterError, match=option):
            run({q: bad for q in value} if isinstance(value, dict) else bad).collect()
