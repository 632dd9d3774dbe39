"""The report is built once, from every fact, by one builder (polars_anon.report.build_report); nothing edits it."""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon.report import Report, build_report

PACKAGE = Path(pa.__file__).parent
EDITS = {"update", "setdefault", "pop", "popitem", "clear"}


def _edits_of_a_report(tree: ast.AST) -> list[int]:
    """Lines that assign into, delete from or call an editing method of something named ``*report*``."""

    def named_report(node: ast.AST) -> bool:
        return "report" in ast.unparse(node).lower()

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        else:
            targets = []
        if any(isinstance(t, ast.Subscript) and named_report(t.value) for t in targets):
            lines.append(targets[0].lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EDITS:
            lines.extend([node.lineno] if named_report(node.func.value) else [])
    return sorted(lines)


def test_no_module_edits_a_report_after_it_is_built() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _edits_of_a_report(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_structural_check_sees_an_edit() -> None:
    code = "r.report['input'] = 'x'\nresult.report.update(facts)\ndel report['k']\nreport_of(x)['a'] = 1\n"
    assert _edits_of_a_report(ast.parse(code)) == [1, 2, 3, 4]


def test_a_report_refuses_edits_before_and_after_the_check(tmp_path: Path) -> None:
    df = pl.DataFrame({"sex": ["F", "M", "F", "M"]})
    result = pa.anonymize(df, hierarchies={"sex": pa.Hierarchy.suppression(["F", "M"])}, k=2)
    before = result.report
    assert "n_rows" not in before and before["n_input_rows"] == 4
    with pytest.raises(TypeError, match="built once"):
        before["n_rows"] = 4
    result.collect()
    after = result.report
    assert after is not before and after["n_rows"] == 4 and after["min_class_size"] == 2  # hand: 2 F, 2 M
    for edit in (lambda r: r.update(k=3), lambda r: r.setdefault("x", 1), lambda r: r.pop("k"), lambda r: r.clear()):
        with pytest.raises(TypeError, match="built once"):
            edit(after)
    written = result.sink_parquet(tmp_path / "out.parquet", report_html=False)
    assert isinstance(written, Report) and written["output"] == str(tmp_path / "out.parquet")
    assert pickle.loads(pickle.dumps(written)) == written and copy.deepcopy(written) == written


def test_the_builder_orders_the_facts() -> None:
    planned = {"k": 2, "risk": {"input": 1.0}}
    report = build_report(
        planned,
        checked={"n_rows": 4, "risk": {"input": 1.0, "output": 0.5}},
        output="o.parquet",
        write_seconds=0.1,
        input="i.parquet",
        encodings={"proportional": "o.proportional.parquet"},
    )
    assert list(report) == ["k", "risk", "input", "n_rows", "write_seconds", "output", "encodings"]
    assert report["risk"] == {"input": 1.0, "output": 0.5}
