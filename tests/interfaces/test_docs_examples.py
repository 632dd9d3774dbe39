"""Every code block of README.md and of each docs page runs (or, for shell and TOML, is checked), page by page.

How blocks run and how they are marked: ``tests/interfaces/docs_examples.py``. A failing
page names the page, the block's line and its language. Blocks marked ``<!-- spark -->``
run in ``test_spark_blocks`` (skipped without pyspark and Java), blocks marked
``<!-- slow -->`` in ``test_slow_blocks``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from polars_anon.report import plots
from tests.interfaces.docs_examples import SHARED, Block, blocks, pages, run_block

PAGES = {page: blocks(page) for page in pages()}


def _drawn_once(draw: Callable[..., str], drawn: dict[str, str]) -> Callable[..., str]:
    """`draw`, whose SVG for the same arguments is drawn once and then read from `drawn`."""

    @functools.wraps(draw)
    def once(*args: Any, **kwargs: Any) -> str:
        key = repr((draw.__name__, args, sorted(kwargs.items())))
        if key not in drawn:
            drawn[key] = draw(*args, **kwargs)
        return drawn[key]

    return once


@pytest.fixture(scope="module", autouse=True)
def plots_drawn_once() -> Iterator[dict[str, str]]:
    """The report's plots, each drawn once per set of values for the whole module.

    The pages' examples write many reports of the same few tables (the same k, the same losses), and a report's HTML
    draws its plots with matplotlib: a fifth of these tests' time. The plots are deterministic, the same values giving
    the same SVG bytes (polars_anon/report/plots.py), so a repeat reads the SVG drawn first and every report holds
    what it would have drawn. The plots themselves are tested in tests/interfaces/test_report_html.py.
    """
    drawn: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as mp:
        for name in plots.__all__:
            if name != "bin_label":
                mp.setattr(plots, name, _drawn_once(getattr(plots, name), drawn))
        yield drawn


def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    if "../shared/data" in code and not (SHARED / "data").is_dir():
        pytest.skip(f"needs {SHARED / 'data'} (the ../shared/data folder beside the repository); not present here")
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED.resolve())
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")


def _run(selected: list[Block], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workdir(tmp_path, monkeypatch, "".join(b.code for b in selected))
    namespace: dict = {"__name__": "__docs__"}
    for block in selected:
        run_block(block, namespace)


def test_blocks_are_found_and_marks_are_read() -> None:
    assert sum(len(b) for b in PAGES.values()) >= 30 and "README.md" in PAGES
    text = "x\n<!-- not-run -->\n```python\na = 1\n```\n<!-- spark -->\n```python\nb = 2\n```\n```toml\nk = 1\n```\n"
    assert [(b.line, b.lang, b.mark, b.code) for b in blocks("t.md", text)] == [
        (3, "python", "not-run", "a = 1\n"),
        (7, "python", "spark", "b = 2\n"),
        (10, "toml", None, "k = 1\n"),
    ]


def test_a_failing_block_names_its_page_and_line() -> None:
    with pytest.raises(AssertionError, match=r"p\.md block at line 3 \(python\) fails: ZeroDivisionError"):
        run_block(Block("p.md", 3, "python", "1 / 0\n", None), {})
    with pytest.raises(AssertionError, match="polars-anon anonymize has no flag --frobnicate"):
        run_block(Block("p.md", 1, "bash", "polars-anon anonymize job.toml --frobnicate\n", None), {})
    with pytest.raises(AssertionError, match=r"keys \['kk'\] are neither job keys nor method options"):
        run_block(Block("p.md", 1, "toml", "kk = 1\n", None), {})


APART = ("not-run", "spark", "slow")  # blocks the main test leaves out


@pytest.mark.parametrize("page", [p for p, b in PAGES.items() if any(x.mark not in APART for x in b)])
def test_page_examples(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run([b for b in PAGES[page] if b.mark not in APART], tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p, b in PAGES.items() if any(x.mark == "slow" for x in b)] or ["-"])
def test_slow_blocks(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if page == "-":
        pytest.skip("no page has a block marked slow")
    _run([b for b in PAGES[page] if b.mark not in ("not-run", "spark")], tmp_path, monkeypatch)


@pytest.mark.parametrize("page", [p for p, b in PAGES.items() if any(x.mark == "spark" for x in b)] or ["-"])
def test_spark_blocks(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spark: Any) -> None:
    """The blocks run in the engine tests' one Spark session (the ``spark`` fixture puts this test in their xdist
    group); a block's ``pas.session(...)`` settings are undone afterwards, so the other tests see the fixture's."""
    if page == "-":
        pytest.skip("no page has a block marked spark")
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        _run([b for b in PAGES[page] if b.mark not in ("not-run", "slow")], tmp_path, monkeypatch)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
