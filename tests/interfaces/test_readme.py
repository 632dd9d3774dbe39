"""Every ```python block of the README runs as written, in order, as a reader would paste them.

The blocks run in one namespace (later blocks use the names earlier ones define) in
a temporary working folder ``<tmp>/work`` beside a ``<tmp>/shared`` link to the real
shared folder, so the README's ``../shared/data/...`` paths resolve and its outputs
(``out/...``) land in the temporary folder. A block preceded by the line
``<!-- not-run -->`` is a deliberate fragment and is skipped. The DuckDB blocks (those
that ``import duckdb``) are self-contained and run, with the SQL blocks after them, in
``tests/interfaces/test_readme_duckdb.py``; they are not run twice.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO, readme_and_docs

README = REPO / "README.md"
SHARED = REPO.parent / "shared"
NOT_RUN = "<!-- not-run -->"


def python_blocks(text: str) -> list[tuple[int, bool, str]]:
    """``(line of the fence, marked not-run, code)`` of every ```python block."""
    out = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append((line, before.strip() == NOT_RUN, match.group(1)))
    return out


BLOCKS = python_blocks(readme_and_docs())


def test_blocks_are_found_and_few_are_fragments() -> None:
    assert len(BLOCKS) >= 10
    assert sum(skip for _, skip, _ in BLOCKS) <= 2
    assert python_blocks("x\n<!-- not-run -->\n```python\na = 1\n```\n```python\nb = 2\n```\n") == [
        (3, True, "a = 1\n"),
        (6, False, "b = 2\n"),
    ]


def test_readme_python_blocks_run_in_order(tmp_path, monkeypatch) -> None:
    if not (SHARED / "data").is_dir():
        pytest.skip(f"needs {SHARED / 'data'} (the ../shared/data folder beside the repository); not present here")
    (tmp_path / "shared").symlink_to(SHARED.resolve())
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    namespace: dict = {"__name__": "__readme__"}
    for line, skip, code in BLOCKS:
        if skip or "import duckdb" in code:
            continue
        try:
            exec(compile(code, f"README.md:{line}", "exec"), namespace)  # noqa: S102 (the README's own examples)
        except Exception as exc:
            raise AssertionError(f"README.md block at line {line} fails: {type(exc).__name__}: {exc}") from exc
