"""The documentation site: its generated reference pages cover the code, and its nav holds every page.

``mkdocs build --strict`` itself runs in ``.ci/run`` (it needs the ``docs`` extra); these checks need only
the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from polars_anon import errors
from polars_anon.cli import parser
from polars_anon.job import KEYS, Job

REPO = Path(__file__).resolve().parents[2]


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKS = _hooks()


def test_cli_page_has_every_command_and_flag() -> None:
    page = HOOKS.cli_page()
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert "| `--seed` | `0` |" in page  # a default of 0 is shown
    assert set(sub.choices) == {
        "demo",
        "anonymize",
        "spark-pack",
        "explore",
        "report",
        "check",
        "risk",
        "encode",
        "metrics",
    }
    for name, cmd in sub.choices.items():
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in cmd._actions:
            for flag in [] if isinstance(action, argparse._HelpAction) else action.option_strings:
                assert f"`{flag}`" in section, (name, flag)


def test_job_keys_page_has_every_key_type_and_default() -> None:
    page = HOOKS.job_keys_page()
    assert set(KEYS) == {f.name for f in dataclasses.fields(Job)} - {"options", "base", "file"}  # what loading derives
    for key in KEYS:
        assert re.search(rf"^\| `{key}` \|", page, flags=re.MULTILINE), key
    assert "| `method` | str | `'fulldomain'` |" in page and "| `k` | int | **required** |" in page
    assert "### greedy" in page and "| `max_suppressed` |" in page and 'model = "l-diversity"' in page


def test_sql_page_has_every_public_macro() -> None:
    page = HOOKS.sql_page()
    names = set()
    for path in (REPO / "sql").glob("[!_]*.sql"):
        names |= set(re.findall(r"CREATE OR REPLACE TEMP MACRO (anon_\w+)", path.read_text()))
    assert len(names) > 50
    assert all(f"| `{n}` |" in page for n in names)
    assert "one row per equivalence class" in page  # anon_class_sizes' comment


def test_schema_page_has_every_property() -> None:
    page = HOOKS.schema_page()
    schema = json.loads((REPO / "polars_anon" / "report" / "schema.json").read_text())
    assert all(f"| `{key}` |" in page for key in schema["properties"])
    assert all(f"\n## {name}\n" in page for name in schema["$defs"])


def test_errors_page_has_every_error() -> None:
    page = HOOKS.errors_page()
    names = [n for n, c in vars(errors).items() if isinstance(c, type) and issubclass(c, errors.AnonError)]
    assert len(names) >= 10 and all(f"| `{n}` |" in page for n in names)


def test_nav_lists_every_page() -> None:
    config = (REPO / "mkdocs.yml").read_text()
    nav = re.findall(r"^\s+- (?:[^:\n]+: )?(\S+\.md)$", config.split("\nnav:\n", 1)[1], flags=re.MULTILINE)
    pages = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md")}
    assert pages | set(HOOKS.GENERATED) == set(nav) and len(nav) == len(set(nav))
    assert re.search(r"^  font: false\b", config, flags=re.MULTILINE)  # no font download: the build is offline


def test_the_papers_page_shows_the_papers_the_report_cites() -> None:
    """docs/papers.md holds no copy of the titles: the hook writes the table from PAPERS (the report's), in place of
    the page's marker, one row per paper; each title is its paper's (read from ../shared/papers when present)."""
    from polars_anon.report.html import PAPERS

    source = (REPO / "docs" / "papers.md").read_text()
    assert source.count(HOOKS.PAPERS_MARKER) == 1 and "Mauger" not in source
    table = HOOKS.papers_table()
    assert HOOKS.filled(source, "papers.md") == source.replace(HOOKS.PAPERS_MARKER, table)
    rows = re.findall(r"^\| (\d{3}) \| (.+) \|$", table, re.MULTILINE)
    assert [n for n, _ in rows] == ["000", "001", "002", "003", "004"] == sorted(PAPERS)
    assert dict(rows)["001"] == "Mauger et al., *Modeling and Evaluation of k-anonymization Metrics*, AAAI PPAI 2020"
    papers = REPO.parent / "shared" / "papers"
    for number, (authors, title, _) in PAPERS.items() if papers.is_dir() else ():
        (text,) = [" ".join(f.read_text().split()) for f in papers.glob(f"{number}_*.txt")]
        assert title in text and authors.removesuffix(" et al.").split(" and ")[0] in text, number


def _markdown_files() -> list[Path]:
    """The repository's Markdown (without hidden folders, the built site or a virtual environment)."""
    parts = [p.relative_to(REPO).parts for p in REPO.rglob("*.md")]
    return [REPO.joinpath(*x) for x in sorted(parts) if not any(n.startswith(".") or n in ("site", "venv") for n in x)]


def test_every_relative_link_of_the_markdown_resolves_in_the_repository() -> None:
    """job-file.md and read-the-report.md linked reference/job-keys.md and reference/report-schema.md, which only the
    built site held: on GitHub both were dead links (newuser4). Each generated page is now a committed stub, and
    every relative link of the repository's Markdown (code blocks aside) names a file or folder that exists."""
    dead = []
    for page in _markdown_files():
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#", 1)[0]
            if path and not re.match(r"[a-z][a-z0-9+.-]*:", path) and not (page.parent / path).exists():
                dead.append(f"{page.relative_to(REPO)} -> {target}")
    assert not dead, dead


def test_the_site_shows_each_generated_page_in_place_of_its_stub() -> None:
    """The committed stubs carry the marker; the hook's on_files replaces each with the generated page."""
    pytest.importorskip("mkdocs")
    from mkdocs.config import load_config
    from mkdocs.structure.files import File, Files

    config = load_config(str(REPO / "mkdocs.yml"))  # the site's own (its plugins name the generated files)
    stubs = [File(uri, config.docs_dir, config.site_dir, True) for uri in HOOKS.GENERATED]
    for stub in stubs:
        assert HOOKS.STUB_MARKER in Path(stub.abs_src_path or "").read_text(), stub.src_uri
    files = config.plugins.on_files(Files(stubs), config=config)  # as mkdocs build calls the hook
    assert len(files) == len(HOOKS.GENERATED)
    for uri, make in HOOKS.GENERATED.items():
        page = files.get_file_from_path(uri)
        assert page is not None and page.generated_by is not None and page.content_string == make(), uri
