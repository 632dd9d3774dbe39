"""What was done to each published column, in words: the method's treatment (the report's ``columns``) after a
job's ``[[sdc.protect]]`` steps, which change input values before the method runs.

>>> cols = protected_columns([{"name": "x", "treatment": "published as is"}], [{"step": "noise", "columns": ["x"]}])
>>> treatment(cols[0])
'noise added ([[sdc.protect]]), then published as perturbed'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["protected_columns", "protected_treatment", "treatment"]

_PROTECTION = {"noise": "noise added", "pram": "PRAM (values recoded at random)", "rank_swap": "rank swapped"}
"""What each ``[[sdc.protect]]`` step (:mod:`polars_anon.sdc.job`) did to the input values of its columns."""
_AS_IS, _PERTURBED = "published as is", "published as perturbed"


def protected_treatment(treatment: str) -> str:
    """The treatment of a column a ``[[sdc.protect]]`` step changed: its values are not published as is, they are the
    step's (a qid's suppression or generalization words stay: the method worked on the step's values).

    >>> protected_treatment("published as is (not declared)"), protected_treatment("generalized")
    ('published as perturbed (not declared)', 'generalized')
    """
    return _PERTURBED + treatment.removeprefix(_AS_IS) if treatment.startswith(_AS_IS) else treatment


def protected_columns(columns: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`columns` with ``protection`` (what the ``[[sdc.protect]]`` `steps` did to each, in order) on those they changed.

    >>> protected_columns([{"name": "x", "treatment": "published as is"}], [{"step": "noise", "columns": ["x"]}])
    [{'name': 'x', 'treatment': 'published as perturbed', 'protection': ['noise added']}]
    """
    done: dict[str, list[str]] = {}
    for step in steps:
        for name in [step["column"]] if "column" in step else step.get("columns", []):
            done.setdefault(name, []).append(_PROTECTION.get(str(step["step"]), str(step["step"])))
    return [
        {**c, "treatment": protected_treatment(str(c["treatment"])), "protection": done[c["name"]]}
        if c["name"] in done
        else dict(c)
        for c in columns
    ]


def treatment(column: Mapping[str, Any]) -> str:
    """What was done to a report column, in words: its ``protection`` (``[[sdc.protect]]``, applied to the input),
    then its ``treatment``; what the page and the notebook show.

    >>> treatment({"treatment": "published as perturbed", "protection": ["noise added"]})
    'noise added ([[sdc.protect]]), then published as perturbed'
    """
    done = ", then ".join(column.get("protection") or [])
    base = str(column.get("treatment", column.get("type", "")))
    return f"{done} ([[sdc.protect]]), then {base}" if done else base
