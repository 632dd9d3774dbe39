"""Progress bars: one switch (pa.progress, POLARS_ANON_PROGRESS, the CLI's --quiet), silent off a terminal."""

from __future__ import annotations

import io

import pytest

import polars_anon as pa
from polars_anon import _progress, cli


@pytest.fixture(autouse=True)
def _default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_progress.ENV, raising=False)
    yield
    pa.progress(None)


def test_the_switch_decides_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _progress._disable() is None  # default: tqdm shows the bar on a terminal only
    monkeypatch.setenv(_progress.ENV, "0")
    assert _progress._disable() is True
    monkeypatch.setenv(_progress.ENV, "on")
    assert _progress._disable() is False
    pa.progress(False)  # the process setting wins over the environment
    assert _progress._disable() is True and _progress.bar(range(2), desc="x").disable
    assert _progress._disable(enabled=True) is False  # greedy_partition(progress=True) still forces its bar
    pa.progress(None)
    assert _progress._disable() is False


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_progress.ENV, "maybe")
    with pytest.raises(
        pa.InvalidParameterError, match="POLARS_ANON_PROGRESS='maybe': expected 0/false/off or 1/true/on"
    ):
        _progress._disable()
    with pytest.raises(pa.InvalidParameterError, match=r"progress\(enabled\) must be True, False or None, got 'no'"):
        pa.progress("no")  # type: ignore[arg-type]


def test_bars_and_stages_print_only_when_shown(capsys: pytest.CaptureFixture[str]) -> None:
    stream = io.StringIO()
    with _progress.stage("aggregate", enabled=True):
        pass
    for _ in _progress.bar(range(3), desc="loop", enabled=True, file=stream):
        pass
    assert "loop" in stream.getvalue() and "aggregate" in capsys.readouterr().err
    with _progress.stage("quiet", enabled=False):
        pass
    assert capsys.readouterr().err == ""


def test_cli_quiet_restores_the_default(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--rows", "2000", "--k", "5", "--out", str(tmp_path / "d"), "--quiet"]) == 0
    assert _progress._setting is None and capsys.readouterr().err == ""
