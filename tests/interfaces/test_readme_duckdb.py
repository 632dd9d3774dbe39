"""Every DuckDB example of the README runs as written.

A ```python block that imports duckdb runs alone in a fresh namespace from the repository
root (the README's paths are relative to it), as in a notebook: a bare expression that
gives a DuckDB relation is run, as a notebook would when it shows it. A ```sql block runs
on the connection `con` of the python block before it in the same section, one statement at
a time; a statement commented ``-- refused: <message>`` must be refused with that message
(its text up to a trailing ``...``), the others must run.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ADULT_DIR, REPO, readme_and_docs

README = readme_and_docs()


def _sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """(heading, [(language, code), ...]) of the sections with a DuckDB example."""
    out = []
    for part in re.split(r"^## ", README, flags=re.MULTILINE)[1:]:
        heading = part.splitlines()[0]
        blocks = re.findall(r"^```(python|sql)\n(.*?)^```", part, flags=re.MULTILINE | re.DOTALL)
        if any(lang == "python" and "import duckdb" in code for lang, code in blocks):
            out.append((heading, [(lang, code) for lang, code in blocks if lang == "sql" or "import duckdb" in code]))
    return out


def _show(value: object) -> object:
    if isinstance(value, duckdb.DuckDBPyRelation):
        value.fetchall()
    return value


def _run_python(code: str) -> dict:
    tree = ast.parse(code)
    for i, node in enumerate(tree.body):  # show every bare expression, as a notebook does
        if isinstance(node, ast.Expr):
            call = ast.Call(func=ast.Name("_show", ast.Load()), args=[node.value], keywords=[])
            tree.body[i] = ast.copy_location(ast.Expr(call), node)
    namespace: dict = {"_show": _show, "__name__": "__readme__"}
    exec(compile(ast.fix_missing_locations(tree), "README.md", "exec"), namespace)  # noqa: S102 (the README's own examples)
    return namespace


def _run_sql(con: duckdb.DuckDBPyConnection, code: str) -> None:
    for line in code.strip().splitlines():
        statement, _, comment = line.partition("--")
        statement, comment = statement.strip().rstrip(";"), comment.strip()
        if not comment.startswith("refused: "):
            con.sql(statement).fetchall()
            continue
        with pytest.raises(duckdb.Error) as info:
            con.sql(statement).fetchall()
        message = re.sub(r"^[A-Za-z ]+Error: ", "", str(info.value))
        expected = comment.removeprefix("refused: ").removesuffix("...").rstrip(" ;")
        assert message.startswith(expected), (statement, message)


SECTIONS = _sections()


def test_the_duckdb_sections_are_found() -> None:
    assert {h for h, _ in SECTIONS} >= {"DuckDB SQL", "Mondrian and Datafly", "Information-loss metrics"}


@pytest.mark.parametrize(("heading", "blocks"), SECTIONS, ids=[h for h, _ in SECTIONS])
def test_readme_duckdb_examples_run(
    heading: str, blocks: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "../shared/data" in "".join(code for _, code in blocks) and not ADULT_DIR.exists():
        pytest.skip(f"needs {ADULT_DIR} (the ../shared/data folder beside the repository); not present here")
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    for lang, code in blocks:
        if lang == "python":
            namespace = _run_python(code)
        else:
            _run_sql(namespace["con"], code)
    assert Path(os.getcwd()) == REPO
