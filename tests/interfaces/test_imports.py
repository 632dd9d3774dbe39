"""``import polars_anon`` loads none of the optional heavy libraries: each is imported where it is first used."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("duckdb", "pyspark", "sklearn", "matplotlib")


@functools.cache
def _probe() -> list[str]:
    """One fresh interpreter (this process has long loaded them all): the heavy libraries in sys.modules after
    ``import polars_anon``, then again after ``import duckdb`` (one process serves both tests below)."""
    listing = f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    probe = f"import sys, polars_anon\n{listing}\nimport duckdb\n{listing}"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split("\n")[:2]


def test_import_polars_anon_loads_no_optional_engine_or_library() -> None:
    loaded = _probe()[0]
    assert loaded == "", f"import polars_anon loaded {loaded}"


def test_the_probe_sees_a_loaded_library() -> None:
    """The same listing reports duckdb once something imports it, so an empty answer above means something."""
    assert "duckdb" in _probe()[1].split(",")


PACKAGE = ROOT / "polars_anon"


@functools.cache
def _trees() -> dict[Path, ast.Module]:
    """Every module of the package, parsed once for the tests below."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in it (functions and TYPE_CHECKING blocks included). A
    module importing a package that contains it is left out: importing the module runs that package's ``__init__``
    first anyway. Walked once for the tests below (they only read it)."""
    modules = {_module_of(p): p for p in _trees()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(_trees()[path]):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolved against this module's package
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_circle() -> None:
    assert _circles(_imports()) == []


def test_the_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert "polars_anon.pipeline.road" in _imports()["polars_anon.job"]  # the graph is read


DOCUMENTED = {"os._exit"}
"""Names of the standard library's documented API that start with an underscore (os._exit: end the process at once,
what a signal at start-up does, interrupts._exit_while_starting)."""


def test_no_module_imports_a_private_name() -> None:
    """``from m import _name`` and ``m._name`` of an imported module (a private module, ``_validate``, may be
    imported: its names are its package's own helpers)."""
    found = []
    for path, tree in _trees().items():
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.name}: from {node.module} import {alias.name}")
                    modules.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                modules.update((a.asname or a.name).split(".")[0] for a in node.names)
        for node in ast.walk(tree):
            private = isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
            if private and isinstance(node.value, ast.Name) and node.value.id in modules:  # type: ignore[union-attr]
                name = f"{node.value.id}.{node.attr}"  # type: ignore[union-attr]
                if name not in DOCUMENTED:
                    found.append(f"{path.name}: {name}")
        found += [f"{path.name}: {m}" for m in ("polars._typing",) if m in path.read_text(encoding="utf-8")]
    assert found == []


def _unexplained_skips(path: Path) -> list[str]:
    """The ``# fmt: skip`` lines of `path` that give no reason: neither a comment before the marker on the same
    line nor a comment line right above the statement the marker ends."""
    text = path.read_text(encoding="utf-8")
    if "# fmt: skip" not in text:
        return []  # parsed only when it has a marker (most files have none: parsing all cost 2 s of CI)
    lines = text.split("\n")
    starts = {n.end_lineno: n.lineno for n in ast.walk(ast.parse(text)) if isinstance(n, ast.stmt)}
    found = []
    for number, line in enumerate(lines, 1):
        if not line.rstrip().endswith("# fmt: skip"):
            continue
        before = line.rstrip().removesuffix("# fmt: skip").rstrip()
        above = lines[starts.get(number, number) - 2].strip() if starts.get(number, number) > 1 else ""
        if "#" not in before and not above.startswith("#"):
            found.append(f"{path}:{number}")
    return found


def test_every_fmt_skip_says_why(tmp_path: Path) -> None:
    """The formatter is skipped only where a table reads better, and the line says so (issue 31)."""
    files = [p for d in ("polars_anon", "tests", "benchmarks", "docs") for p in (ROOT / d).rglob("*.py")]
    assert [s for p in files for s in _unexplained_skips(p)] == []
    bare = tmp_path / "bare.py"
    bare.write_text(
        "x = 1\ny = [1,  2]  # fmt: skip\n# R's values\nz = [1,  2]  # fmt: skip\nw = [1]  # a row  # fmt: skip\n"
    )
    assert [s.rsplit(":", 1)[1] for s in _unexplained_skips(bare)] == ["2"]
