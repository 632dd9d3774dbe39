"""Read the code blocks of README.md and the docs pages, and run them as a reader would.

A page's blocks run in order in one namespace (later blocks use the names earlier ones
define), in a temporary working folder ``<tmp>/work`` beside a ``<tmp>/shared`` link to
the real shared folder, so the pages' ``../shared/data/...`` paths resolve and their
outputs (``out/...``) land in the temporary folder.

- ```python blocks run; a bare expression is shown as a notebook shows it (a DuckDB
  relation is fetched, so a query that fails at run time fails the block).
- ```sql blocks run on the connection ``con`` the page's Python made, one statement a line;
  a statement commented ``-- refused: <message>`` must be refused with that message (its
  text up to a trailing ``...``).
- ```toml blocks must parse; a whole job (``input``, ``output``, ``k``, ``qids``) must be
  accepted by :meth:`polars_anon.job.Job.from_dict`, and every top-level key of a fragment
  must be a job key, a settings table or a method option.
- ```bash blocks: every ``polars-anon <command>`` line must name a command and flags the
  CLI has; a block marked ``<!-- run -->`` also runs each such line (in process, through
  :func:`polars_anon.cli.main`, exit status 0) and each ``python -m polars_anon.cli`` line.

A block is marked by an HTML comment on the line before its fence: ``<!-- not-run -->``
(a fragment, skipped), ``<!-- spark -->`` (needs Spark: run by the separate Spark test),
``<!-- slow -->`` (long data: run by the separate slow test), ``<!-- run -->`` (a shell block
that runs) or ``<!-- file: job.toml -->`` (a TOML block saved under that name in the working
folder, as the reader is asked to, after it is checked).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
MARKS = ("not-run", "spark", "slow", "run")
_FENCE = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    code: str
    mark: str | None

    @property
    def where(self) -> str:
        return f"{self.page} block at line {self.line} ({self.lang})"


def pages() -> list[str]:
    """README.md and every Markdown page under docs/, as paths relative to the repository."""
    return ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]


def blocks(page: str, text: str | None = None) -> list[Block]:
    """The fenced blocks of `page` (its text read from the repository unless given)."""
    text = (REPO / page).read_text(encoding="utf-8") if text is None else text
    out = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        mark = next((m for m in MARKS if before == f"<!-- {m} -->"), None)
        if re.fullmatch(r"<!-- file: \S+ -->", before):
            mark = before.removeprefix("<!-- ").removesuffix(" -->")
        out.append(Block(page, line, match.group(1).lower(), match.group(2), mark))
    return out


def _show(value: object) -> object:
    import duckdb

    if isinstance(value, duckdb.DuckDBPyRelation):
        value.fetchall()
    return value


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    tree = ast.parse(block.code)
    for i, node in enumerate(tree.body):  # show every bare expression, as a notebook does
        if isinstance(node, ast.Expr):
            call = ast.Call(func=ast.Name("__show", ast.Load()), args=[node.value], keywords=[])
            tree.body[i] = ast.copy_location(ast.Expr(call), node)
    namespace.setdefault("__show", _show)
    exec(compile(ast.fix_missing_locations(tree), f"{block.page}:{block.line}", "exec"), namespace)  # noqa: S102


def run_sql(block: Block, namespace: dict[str, Any]) -> None:
    import duckdb

    con = namespace.get("con")
    if not isinstance(con, duckdb.DuckDBPyConnection):
        message = "a sql block needs a DuckDB connection `con` made by a python block before it"
        raise AssertionError(message)  # noqa: TRY004
    for line in block.code.strip().splitlines():
        statement, _, comment = line.partition("--")
        statement, comment = statement.strip().rstrip(";"), comment.strip()
        if not statement:
            continue
        if not comment.startswith("refused: "):
            con.sql(statement).fetchall()
            continue
        try:
            con.sql(statement).fetchall()
        except duckdb.Error as exc:
            message = re.sub(r"^[A-Za-z ]+Error: ", "", str(exc))
            expected = comment.removeprefix("refused: ").removesuffix("...").rstrip(" ;")
            if not message.startswith(expected):
                raise AssertionError(f"{statement!r} was refused with {message!r}, the page says {expected!r}") from exc
        else:
            raise AssertionError(f"{statement!r} ran; the page says it is refused")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from polars_anon.cli import parser

    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _commands(code: str) -> Iterator[list[str]]:
    """The ``polars-anon ...`` and ``python -m polars_anon.cli ...`` commands of a shell block, as argv lists."""
    text = re.sub(r"\\\n\s*", " ", code)
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        for start in ("polars-anon ", "python -m polars_anon.cli "):
            if line.startswith(start):
                yield shlex.split(line.removeprefix(start))


def check_bash(block: Block, run: bool) -> None:
    from polars_anon.cli import main

    commands = _subcommands()
    for argv in _commands(block.code):
        name = argv[0]
        if name not in commands:
            raise AssertionError(f"polars-anon has no command {name!r} (it has {sorted(commands)})")
        flags = {s for a in commands[name]._actions for s in a.option_strings}
        for arg in argv[1:]:
            flag = arg.strip("[]").split("=", 1)[0]
            if flag.startswith("--") and flag not in flags:
                raise AssertionError(f"polars-anon {name} has no flag {flag} (it has {sorted(flags)})")
        if run:
            status = main(argv)
            if status != 0:
                raise AssertionError(f"polars-anon {' '.join(argv)} exited with {status}")


def check_toml(block: Block) -> None:
    from polars_anon.algorithms import METHODS
    from polars_anon.job import KEYS, Job

    raw = tomllib.loads(block.code)
    if {"input", "output", "k", "qids"} <= raw.keys():
        Job.from_dict(raw)
        return
    job_keys = set(KEYS)
    options = {f.name for m in METHODS.values() for f in dataclasses.fields(m.options)}
    unknown = set(raw) - job_keys - options
    if unknown:
        raise AssertionError(f"keys {sorted(unknown)} are neither job keys nor method options")


def run_block(block: Block, namespace: dict[str, Any]) -> None:
    """Run or check one block; an error names the page, the line and the language."""
    try:
        if block.lang == "python":
            run_python(block, namespace)
        elif block.lang == "sql":
            run_sql(block, namespace)
        elif block.lang in ("bash", "sh", "console"):
            check_bash(block, run=block.mark == "run")
        elif block.lang == "toml":
            check_toml(block)
            if block.mark and block.mark.startswith("file: "):
                Path(block.mark.removeprefix("file: ")).write_text(block.code, encoding="utf-8")
    except Exception as exc:
        raise AssertionError(f"{block.where} fails: {type(exc).__name__}: {exc}") from exc
