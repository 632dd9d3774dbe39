"""MkDocs hook: the reference pages generated from the code, so they never drift from it.

- ``reference/cli.md`` from the argparse parser (:func:`polars_anon.cli.parser`): every command and flag;
- ``reference/job-keys.md`` from :class:`polars_anon.job.Job`, the methods' options dataclasses and the
  privacy models: every key, its type and default;
- ``reference/sql-macros.md`` from the comments that open each macro in ``sql/*.sql``;
- ``reference/report-schema.md`` from ``polars_anon/report/schema.json``;
- ``reference/errors.md`` from :mod:`polars_anon.errors` and the message templates of :mod:`polars_anon.messages`;
- on ``guides/notebook.md``, each ``<!-- output -->`` after a code block becomes the HTML display
  (``_repr_html_``) of that block's last expression: the page's code runs when the site is built;
- on ``papers.md``, the table of the papers the report cites, from :data:`polars_anon.report.html.PAPERS` (the
  installed package cannot read ``docs/``, so the code holds the one copy).

Each generator is a plain function returning Markdown; ``tests/interfaces/test_docs_site.py`` checks that
they cover the code (every command, flag, key, macro and schema property). Each generated page is committed as a
stub (:data:`STUB_MARKER`) that says where its content comes from, so links to it resolve in the repository too.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def this_checkout() -> None:
    """Import polars_anon from this checkout (the pages describe its code), whatever is installed or imported."""
    sys.path[:] = [str(REPO), *(p for p in sys.path if p != str(REPO))]
    module = sys.modules.get("polars_anon")
    if module is not None and not str(module.__file__).startswith(str(REPO)):
        for name in [n for n in sys.modules if n == "polars_anon" or n.startswith("polars_anon.")]:
            del sys.modules[name]


# The job file's keys: what each means (the type and default come from the Job dataclass).
JOB_KEYS = {
    "input": "the table to anonymize: Parquet (preferred) or CSV, relative to the job file",
    "output": "the published Parquet file; the report goes beside it (`<stem>.report.json`, `<stem>.report.html`)",
    "k": "minimum class size (>= 1, at most the row count)",
    "qids": "one `[qids.<column>]` table per quasi-identifier, with its `hierarchy` (see below)",
    "method": "`fulldomain`, `greedy`, `mondrian`, `datafly`, `topdown`, `mdav` or `local_suppression` (see Concepts > "
    "Methods and Statistical disclosure control)",
    "metric": "the cost the method optimizes, for the methods that take one",
    "separator": "CSV field separator (one character; CSV input only)",
    "has_header": "CSV input: whether the first line names the columns (false: `columns` names them)",
    "columns": "CSV input: the column names in file order (for a file without a header line, or renaming its header)",
    "schema": 'column types the input is cast to, Polars names (`schema = {age = "Int64"}`); a lossy cast is refused',
    "null_values": 'CSV input: strings read as missing (e.g. `["?"]`)',
    "drop": "identifying columns (direct identifiers): removed, never published",
    "insensitive": "columns published as is although nearly every value is distinct",
    "sensitive": "sensitive attribute(s): published as is, read by privacy models and some metrics",
    "seed": "seed of the randomized methods and encodings (same input, parameters and seed give the same bytes; "
    "it is written in the report); the `[[sdc.protect]]` steps take their secret key from `[sdc] seed` instead",
    "null": '`"error"` refuses nulls in a quasi-identifier; `"suppress"` publishes them as the root',
    "encode": "ML encodings written beside the output: "
    "`oneclass`, `fillparent`, `fillchild`, `proportional`, `setbinary`, `random`, `statistical`",
    "encode_layout": '`"wide"` (one Parquet file) or `"classes"` (a directory, one block per class)',
    "report": "the report JSON's path (default `<output stem>.report.json`)",
    "report_html": "also write the HTML page beside the report JSON",
    "privacy": "`[[privacy]]` tables, one per privacy model (see below); each is verified before writing",
    "engine": '`"polars"`, `"duckdb"` or `"spark"`',
    "spark": '`[spark]` table: `master` (string) and `[spark.config]` pairs; read only with `engine = "spark"`',
    "duckdb": '`[duckdb]` table: `memory_limit` (string, default 1GB); read only with `engine = "duckdb"`',
    "driver_tuples": "engines duckdb and spark: the most class aggregates brought to the driver (default 5,000,000)",
    "sdc": "statistical disclosure control: `keys`, `weight`, `household`, `method`, `missing`, `alpha`, `suda2`, "
    "`model`, `interactions` (risk figures of the input and the output in the report's `sdc` key), "
    "`[[sdc.protect]]` steps (`pram`, `noise`, `rank_swap`) and `seed`, their secret key (default: a fresh key "
    "from the operating system each run; never written in the report); see How-to > Statistical disclosure control",
}


def _type(hint: Any) -> str:
    text = hint if isinstance(hint, str) else getattr(hint, "__name__", None) or str(hint)
    return str(text).replace("typing.", "").replace("pathlib.", "").replace("|", "\\|")


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return f"`{f.default!r}`" if f.default is not None else "none"
    if f.default_factory is not dataclasses.MISSING:
        return f"`{f.default_factory()!r}`"
    return "**required**"


def _md(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def cli_page() -> str:
    """Every command and flag of ``polars-anon``, from its argparse parser."""
    from polars_anon.cli import parser

    p = parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    out = [
        "# Command line reference",
        "",
        (
            "Generated from the parser of `polars_anon/cli.py` when the site is built. Every command prints a refusal "
            "as one line naming the culprit and exits 2, writing nothing; `check` exits 1 when a table fails. "
            "`-q/--quiet` (every command) turns the progress bars off (and `anonymize`'s summary line beside its JSON)."
        ),
        "",
        "| command | what it does |",
        "| --- | --- |",
    ]
    out += [f"| [`{name}`](#{name}) | {_md(helps.get(name) or '')} |" for name in sub.choices]
    for name, cmd in sub.choices.items():
        usage = " ".join(cmd.format_usage().split()).removeprefix("usage: ")
        out += ["", f"## {name}", "", _md(helps.get(name) or ""), "", "```text", usage, "```", ""]
        out += ["| argument | default | meaning |", "| --- | --- | --- |"]
        for action in cmd._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.dest}`"
            if action.metavar and action.option_strings:
                names += f" `{action.metavar}`"
            if action.choices:
                names += " (" + ", ".join(f"`{c}`" for c in action.choices) + ")"
            default = action.default
            shown = (
                ""
                if default is None or default is False or default == [] or default == argparse.SUPPRESS
                else f"`{default}`"
            )
            if action.required and action.option_strings:
                shown = "**required**"
            out.append(f"| {names} | {shown} | {_md(action.help or '')} |")
    return "\n".join(out) + "\n"


def _dataclass_rows(cls: type) -> list[str]:
    hints = typing.get_type_hints(cls)
    return [
        f"| `{f.name}` | {_type(hints.get(f.name, f.type))} | {_default(f)} |"
        for f in dataclasses.fields(cls)
        if f.init
    ]


def job_keys_page() -> str:
    """Every key of the job file: the Job dataclass, the methods' options, the privacy models' parameters."""
    from polars_anon.algorithms import METHODS
    from polars_anon.hierarchy_spec import __doc__ as spec_doc
    from polars_anon.job import KEYS, Job
    from polars_anon.privacy import MODELS

    hints = typing.get_type_hints(Job)
    fields = [f for f in dataclasses.fields(Job) if f.name in KEYS]
    missing = [f.name for f in fields if f.name not in JOB_KEYS]
    if missing:
        raise RuntimeError(f"docs/hooks.py: job keys {missing} have no description in JOB_KEYS")
    out = [
        "# Job file keys",
        "",
        (
            "Generated from `polars_anon/job.py`, the methods' options dataclasses and the privacy models when the "
            "site is built. Every key is checked for its type before any data is read, and the message names the "
            "key. A top-level key that is not a job key is an option of the chosen method (typed; unknown keys are "
            "refused). "
            "How to write a job: [Publish a register with a job file](../guides/job-file.md)."
        ),
        "",
        "## Top-level keys",
        "",
        "| key | type | default | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for f in fields:
        kind = _type(hints[f.name]).replace("Path", "str (path)")
        if f.name == "qids":
            kind = "table of tables"
        elif f.name == "privacy":
            kind = "array of tables"
        out.append(f"| `{f.name}` | {kind} | {_default(f)} | {JOB_KEYS[f.name]} |")
    out += ["", "## `[qids.<column>]`: hierarchies", "", "```text", inspect.cleandoc(spec_doc or ""), "```", ""]
    out += ["## Method options (top-level keys)", ""]
    for name, method in sorted(METHODS.items()):
        out += [
            f"### {name}",
            "",
            f"Guarantee: {method.guarantee}. "
            + (
                f"Metrics: {', '.join(f'`{m}`' for m in method.metrics)} (default `{method.default_metric}`)."
                if method.metrics
                else "It takes no `metric`."
            ),
            "",
        ]
        rows = _dataclass_rows(method.options)
        out += ["| option | type | default |", "| --- | --- | --- |", *rows] if rows else ["No options."]
        out.append("")
    out += [
        "## `[[privacy]]`: privacy models",
        "",
        (
            "`model` names the model; the other keys are its parameters (typed, unknown refused). `hierarchy` "
            "(hierarchical t-closeness) is a hierarchy spec as in `[qids]`; `population` a Parquet or CSV path; both "
            "relative to the job file."
        ),
        "",
    ]
    for name, model in sorted(MODELS.items()):
        out += [f'### model = "{name}"', "", "| key | type | default |", "| --- | --- | --- |"]
        out += _dataclass_rows(model) + [""]
    return "\n".join(out) + "\n"


_MACRO = re.compile(r"CREATE OR REPLACE TEMP MACRO (anon_\w+)\s*\(", re.IGNORECASE)


def sql_macros() -> list[tuple[str, str, str]]:
    """``(file, macro, comment)`` of every public macro (files not starting with ``_``), in file order."""
    out = []
    for path in sorted((REPO / "sql").glob("*.sql")):
        if path.name.startswith("_"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            match = _MACRO.match(line)
            if not match:
                continue
            j, comment = i - 1, []
            while j >= 0 and lines[j].startswith("--"):
                comment.insert(0, lines[j].removeprefix("--").strip())
                j -= 1
            out.append((path.name, match.group(1), " ".join(comment)))
    return out


def sql_page() -> str:
    """Every public DuckDB macro with the comment that opens it."""
    out = [
        "# SQL macros",
        "",
        (
            "Generated from `sql/*.sql` when the site is built. `polars_anon.duckdb.register(con)` creates them on a "
            "DuckDB connection (TEMP: nothing is written into your database file). Tables come in by name; options are "
            "named parameters. How to use them: [DuckDB SQL](../guides/duckdb-sql.md)."
        ),
    ]
    current = None
    for file, name, comment in sql_macros():
        if file != current:
            out += ["", f"## {file}", "", "| macro | what it does |", "| --- | --- |"]
            current = file
        out.append(f"| `{name}` | {_md(comment) or '(see the file)'} |")
    return "\n".join(out) + "\n"


def _schema_type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        ref = node["$ref"].rsplit("/", 1)[-1]
        return f"[{ref}](#{ref})"
    kind = node.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    text = " or ".join(k for k in kinds if k) or ("one of" if "anyOf" in node or "oneOf" in node else "any")
    if "items" in node and isinstance(node["items"], dict):
        text += f" of {_schema_type(node['items'])}"
    if "enum" in node:
        text += " (" + ", ".join(f"`{v}`" for v in node["enum"]) + ")"
    return text


def _schema_table(props: dict[str, Any], required: list[str]) -> list[str]:
    rows = ["| key | type | required | meaning |", "| --- | --- | --- | --- |"]
    for key, node in props.items():
        req = "yes" if key in required else ""
        rows.append(f"| `{key}` | {_schema_type(node)} | {req} | {_md(node.get('description', ''))} |")
    return rows


def schema_page() -> str:
    """The report JSON schema, one table per object."""
    schema = json.loads((REPO / "polars_anon" / "report" / "schema.json").read_text(encoding="utf-8"))
    out = [
        "# Report JSON schema",
        "",
        (
            "Generated from `polars_anon/report/schema.json` (JSON Schema 2020-12) when the site is built. "
            f"{_md(schema.get('description', ''))} Load it with `polars_anon.report.schema()`; the tests validate "
            "every report written against it. The page drawn from a report: [The HTML report](../guides/report.md)."
        ),
        "",
        "## Report",
        "",
        *_schema_table(schema["properties"], schema.get("required", [])),
    ]
    for name, node in schema.get("$defs", {}).items():
        out += ["", f"## {name}", "", _md(node.get("description", ""))]
        if "properties" in node:
            out += ["", *_schema_table(node["properties"], node.get("required", []))]
        else:
            out += ["", f"Type: {_schema_type(node)}"]
    return "\n".join(out) + "\n"


def errors_page() -> str:
    """The error classes and the templates of the messages shared by Python and SQL."""
    from polars_anon import errors
    from polars_anon.messages import MESSAGES

    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.AnonError)]
    classes.sort(key=lambda c: (len(c.__mro__), c.__name__))
    out = [
        "# Errors",
        "",
        (
            "Generated from `polars_anon/errors.py` and `polars_anon/messages.py` when the site is built. Every "
            "refusal of bad input is an `AnonError` (importable as `polars_anon.<Name>`); the message names the "
            "column, value, parameter, key or file, what was given and what is allowed. The command line prints it "
            "as one line and exits 2, writing nothing."
        ),
        "",
        "| error | is a | raised when |",
        "| --- | --- | --- |",
    ]
    for c in classes:
        bases = ", ".join(f"`{b.__name__}`" for b in c.__bases__)
        out.append(f"| `{c.__name__}` | {bases} | {_md(inspect.getdoc(c) or '')} |")
    out += [
        "",
        "## Messages shared by Python and SQL",
        "",
        (
            "A refusal made by both a Python check and a DuckDB macro reads the same from both (the SQL twins "
            "`anon_msg_<name>` in `sql/_messages.sql` are generated from these templates)."
        ),
        "",
        "| name | template |",
        "| --- | --- |",
    ]
    out += [f"| `{name}` | `{_md(m.text)}` |" for name, m in MESSAGES.items()]
    return "\n".join(out) + "\n"


GENERATED = {
    "reference/cli.md": cli_page,
    "reference/job-keys.md": job_keys_page,
    "reference/sql-macros.md": sql_page,
    "reference/report-schema.md": schema_page,
    "reference/errors.md": errors_page,
}


EXECUTED = ("guides/notebook.md",)

PAPERS_MARKER = "<!-- papers: the table of polars_anon.report.html.PAPERS, written by docs/hooks.py -->"


def papers_table() -> str:
    """The papers the report cites, by number, from :data:`polars_anon.report.html.PAPERS`."""
    from polars_anon.report.html import PAPERS

    rows = [f"| {n} | {authors}, *{title}*, {venue} |" for n, (authors, title, venue) in sorted(PAPERS.items())]
    return "\n".join(["| number | paper |", "| --- | --- |", *rows])


FILLED = {"papers.md": (PAPERS_MARKER, papers_table)}
"""Pages with one marker each, replaced by what the function returns."""


def filled(markdown: str, uri: str) -> str:
    """Page `uri`'s `markdown` with its :data:`FILLED` marker replaced (refused unless it holds the marker once)."""
    marker, make = FILLED[uri]
    if markdown.count(marker) != 1:
        raise RuntimeError(f"docs/{uri} must hold {marker!r} once, where the generated text goes")
    return markdown.replace(marker, make())


def executed(markdown: str) -> str:
    """`markdown` with each ``<!-- output -->`` after a python block replaced by its last expression's display.

    The blocks run in order in one namespace, in a temporary folder, as the cells of a notebook.
    """
    import ast
    import contextlib
    import tempfile

    namespace: dict[str, Any] = {"__name__": "__docs__"}
    out, done = [], 0
    fences = list(re.finditer(r"^```python\n(.*?)^```\n", markdown, flags=re.MULTILINE | re.DOTALL))
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        for fence in fences:
            code = fence.group(1)
            tree = ast.parse(code)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "notebook", "exec"), namespace)  # noqa: S102 (the page's own examples)
            value = None if last is None else eval(compile(ast.Expression(last.value), "notebook", "eval"), namespace)
            rest = markdown[fence.end() :]
            marker = re.match(r"\s*<!-- output -->", rest)
            if marker is None:
                continue
            html = value._repr_html_() if hasattr(value, "_repr_html_") else f"<pre>{value!r}</pre>"
            html = " ".join(html.split())
            out.append(markdown[done : fence.end()])
            out.append(f'\n<div class="nb-output">{html}</div>\n')
            done = fence.end() + marker.end()
    out.append(markdown[done:])
    return "".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Run the pages of :data:`EXECUTED` and put their outputs in place; fill the markers of :data:`FILLED`."""
    this_checkout()
    if page.file.src_uri in FILLED:
        markdown = filled(markdown, page.file.src_uri)
    return executed(markdown) if page.file.src_uri in EXECUTED else markdown


STUB_MARKER = "<!-- generated: docs/hooks.py puts the page generated from the code here when the site is built -->"
"""The line of each committed page of :data:`GENERATED`: a stub, so a link to the page resolves in the repository
(GitHub) too, saying what the page holds and where its source is; the site shows the generated page instead."""


def on_files(files: Any, config: Any) -> Any:
    """Add the generated reference pages to the site, in place of their committed stubs."""
    from mkdocs.structure.files import File

    this_checkout()
    for uri, make in GENERATED.items():
        stub = files.get_file_from_path(uri)
        if stub is not None:
            files.remove(stub)
        files.append(File.generated(config, uri, content=make()))
    return files
