"""Objectives and their options are refused, naming the culprit, before any data is read."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_anon as pa
from polars_anon import cli
from polars_anon.errors import InvalidParameterError

DF = pl.DataFrame({"g": ["a", "a", "b", "c"], "s": ["m", "m", "m", "f"]})
H = {"g": pa.Hierarchy.suppression(["a", "b", "c"]), "s": pa.Hierarchy.suppression(["m", "f"])}
METRICS = "['ncp', 'loss', 'entropy', 'discernibility', 'aecs', 'height', 'precision', 'kl_divergence', 'ambiguity']"


def refuse(match: str, **kwargs: object) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        pa.anonymize(DF.lazy(), hierarchies=H, k=2, **kwargs)  # type: ignore[arg-type]


def test_unknown_metric_lists_those_fulldomain_optimizes() -> None:
    refuse(
        r"metric of method 'fulldomain' must be one of "
        + METRICS.replace("[", r"\[").replace("]", r"\]")
        + r", got 'dm'",
        metric="dm",
    )


def test_datafly_takes_no_metric() -> None:
    """Datafly picks its attribute by distinct values (the paper); it optimizes no objective."""
    refuse(
        r"method 'datafly' takes no metric, got metric='loss'; methods that do: \['fulldomain', 'greedy'\]",
        method="datafly",
        metric="loss",
    )
    refuse(r"method 'datafly' does not take option 'aggregate'", method="datafly", aggregate="sum")


@pytest.mark.parametrize(
    ("option", "value", "metric", "takers"),
    [
        ("aggregate", "sum", "ncp", "['loss', 'entropy', 'height', 'precision']"),
        ("aggregate", "sum", None, "['loss', 'entropy', 'height', 'precision']"),  # the default metric, ncp
        ("gs_factor", 0.2, "height", "['loss', 'entropy', 'precision']"),
        ("monotonic", True, "loss", "['entropy', 'discernibility']"),
        ("weights", {"g": 2.0}, "aecs", "['ncp', 'loss', 'entropy', 'height', 'precision']"),
    ],
)
def test_option_the_metric_does_not_take(option: str, value: object, metric: str | None, takers: str) -> None:
    shown = metric or "ncp"
    esc = takers.replace("[", r"\[").replace("]", r"\]")
    refuse(
        rf"method 'fulldomain': option '{option}' applies to metrics {esc}, not to metric='{shown}'",
        metric=metric,
        **{option: value},
    )


def test_bad_option_values() -> None:
    refuse(r"gs_factor must be a number in \[0, 1\], got 1.5", metric="loss", gs_factor=1.5)
    refuse(
        r"option 'aggregate' must be one of \['arithmetic', 'geometric', 'rank', 'max', 'sum'\], got 'mean'",
        metric="loss",
        aggregate="mean",
    )
    refuse(r"option 'monotonic' must be true or false, got 1", metric="entropy", monotonic=1)
    refuse(
        r"option 'weights' must be a mapping from quasi-identifiers to numbers, got \['g'\]",
        metric="loss",
        weights=["g"],
    )
    refuse(
        r"weights name \['age'\], which are not quasi-identifiers; the qids are \['g', 's'\]",
        metric="loss",
        weights={"age": 1.0},
    )
    refuse(r"weights must be finite numbers >= 0, got \{'g': -1.0\}", metric="loss", weights={"g": -1.0})
    refuse(r"weights must be finite numbers >= 0, got \{'g': nan\}", metric="ncp", weights={"g": float("nan")})
    refuse(
        r"weights are all 0; give at least one quasi-identifier a weight > 0", metric="height", weights={"g": 0, "s": 0}
    )


def test_job_file_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job file with an option its metric does not take fails in one line (exit 2), nothing written."""
    DF.write_csv(tmp_path / "t.csv")
    H["g"].to_csv(tmp_path / "g.csv")
    job = tmp_path / "job.toml"
    job.write_text(
        'input = "t.csv"\noutput = "o.parquet"\nk = 2\nmetric = "aecs"\nweights = { g = 2 }\n'
        '[qids.g]\nhierarchy = "g.csv"\n'
    )
    assert cli.main(["anonymize", str(job)]) == 2
    err = capsys.readouterr().err
    assert (
        "option 'weights' applies to metrics ['ncp', 'loss', 'entropy', 'height', 'precision'], not to metric='aecs'"
        in err
    )
    assert err.count("\n") == 1 and not (tmp_path / "o.parquet").exists()
