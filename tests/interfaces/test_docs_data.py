"""The docs' data path for a newcomer: the command that fetches Adult names every file the examples read."""

from __future__ import annotations

import re

import pytest

from tests.interfaces.docs_examples import REPO, SHARED

START = REPO / "docs" / "start" / "index.md"


def _expanded(word: str) -> list[str]:
    """A word of a bash list with its one brace list expanded (``a_{x,y}.csv`` -> ``a_x.csv``, ``a_y.csv``)."""
    braces = re.fullmatch(r"(.*?)\{(.*)\}(.*)", word)
    return [word] if braces is None else [f"{braces[1]}{x}{braces[3]}" for x in braces[2].split(",")]


def test_the_fetch_loop_names_every_file_of_the_projects_adult() -> None:
    """newuser4: the README's first Python block failed on a fresh clone ("cannot read hierarchy file
    '../shared/data/adult/...'"), and nothing said where Adult comes from. The fetch loop of docs/start writes the
    project's ten files, each into ../shared/data/adult/."""
    adult = SHARED / "data" / "adult"
    if not adult.is_dir():
        pytest.skip(f"needs {adult} (the ../shared/data folder beside the repository); not present here")
    loop = re.search(r"^for f in (.+?); do\n  curl .*? -o \"\.\./shared/data/adult/\$f\"", START.read_text(), re.M)
    assert loop is not None, "docs/start/index.md has no fetch loop"
    fetched = [name for word in loop[1].split() for name in _expanded(word)]
    assert sorted(fetched) == sorted(p.name for p in adult.iterdir())
    assert len(fetched) == 10
