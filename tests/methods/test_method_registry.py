"""One list of methods: the ``Method`` Literal, the CLI's --method choices and the registry agree."""

from __future__ import annotations

import argparse
from typing import get_args

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
