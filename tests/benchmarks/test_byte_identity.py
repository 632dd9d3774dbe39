"""benchmarks/byte_identity.py's comparison, on hand-made records (the runs themselves take minutes)."""

from __future__ import annotations

from tests.benchmarks import script


def test_differences_by_hand() -> None:
    bi = script("byte_identity")
    report = {"k": 5, "metrics": {"entropy": 0.1 + 0.2}, "input": "/tmp/byte_identity_ab/a.parquet"}
    run = {"files": {"out.parquet": {"sha256": "x", "rows": "r"}}, "seconds": 1.0, "report": report}
    before = {"runs": {"a/fulldomain/polars": run, "a/mdav/duckdb": {"refused": "InvalidParameterError: no"}}}
    report_after = {"k": 5, "metrics": {"entropy": 0.3}, "input": "/tmp/byte_identity_cd/a.parquet"}
    run_after = {"files": {"out.parquet": {"sha256": "y", "rows": "r"}}, "seconds": 9.0, "report": report_after}
    after = {"runs": {"a/fulldomain/polars": run_after, "a/greedy/polars": {"refused": "new"}}}
    diffs, noise = bi.differences(before, after)
    assert noise == ["/a/fulldomain/polars/report/metrics/entropy: 0.30000000000000004 -> 0.3"]
    assert diffs == [
        '/a/fulldomain/polars/files/out.parquet/sha256: "x" -> "y"',
        '/a/greedy/polars: new {"refused": "new"}',
        '/a/mdav/duckdb: gone (was {"refused": "InvalidParameterError: no"})',
    ]
    assert bi.differences(before, before) == ([], [])


def test_seeded_sdc_runs_are_recorded() -> None:
    """The record pins seeded [sdc] steps (PRAM, noise, rank swap under one seed) on Polars and DuckDB, and the
    job file takes them as written (no data is read)."""
    from polars_anon.sdc.job import parse_sdc

    bi = script("byte_identity")
    data = {
        name: {"input": f"{name}.parquet", "k": 2, "qids": {"zip": {"hierarchy": "suppress"}}}
        for name in ("adult", "register")
    }
    todo = bi.runs(data)
    for engine in ("polars", "duckdb"):
        sdc = todo[f"register/fulldomain-sdc/{engine}"]["sdc"]
        spec = parse_sdc(sdc, ["zip"])
        assert spec.seed is not None and {s.step for s in spec.steps} == {"pram", "noise", "rank_swap"}
        assert "protect" not in todo[f"register/fulldomain-sdc-figures/{engine}"]["sdc"]
