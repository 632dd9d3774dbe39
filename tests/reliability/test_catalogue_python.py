"""Bad-input catalogue of the Python API and the Polars namespaces (issue 12).

Every case is data: a call on a bad input, the error class it must raise (an
:class:`~polars_anon.AnonError`) and the words of the message that name the culprit
(column, value, parameter or path). Each runs against an output folder that already
holds a file, and the folder must be byte-for-byte as before. Cases that would
write end in ``sink_parquet`` (or write themselves), so a refusal that came too
late, or not at all, changes the folder and fails the case.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import sdc
from polars_anon.algorithms import METHODS
from polars_anon.io import scan_input
from polars_anon.metrics import compute
from tests.reliability.snapshot import unchanged

T = pl.DataFrame(
    {
        "id": [f"p{i:02d}" for i in range(12)],
        "age": [31, 33, 38, 36] * 3,
        "sex": ["F", "M"] * 6,
        "party": ["a", "b", "c"] * 4,
    }
)
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
PUB = pa.generalize(T.lazy(), H, {"age": 1}).collect()  # a published table (age at 30-34 / 35-39)
EXISTING = "existing.parquet"


def _anonymize(data: Any = None, **over: Any) -> pa.Anonymized:
    args: dict[str, Any] = {"hierarchies": H, "k": 2, "insensitive": "id"} | over
    return pa.anonymize(T if data is None else data, **args)


def anon(data: Any = None, **over: Any) -> Callable[[Path], object]:
    """A case body: anonymize `T` (or `data`) with the overrides, then write the result into the folder."""
    return lambda out: _anonymize(data, **over).sink_parquet(out / "anon.parquet")


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Path], object]
    """Receives the output folder (it holds ``existing.parquet``)."""
    error: type[Exception]
    culprit: tuple[str, ...]
    """Substrings the message must contain: the column, value, parameter, key or path at fault."""


def _c(id: str, call: Callable[[Path], object], error: type[Exception], *culprit: str) -> Case:
    return Case(id, call, error, culprit)


IPE, CNF, VNH = pa.InvalidParameterError, pa.ColumnNotFoundError, pa.ValueNotInHierarchyError
EMU = T.with_columns(age=pl.when(pl.col("id") == "p03").then(99).otherwise(pl.col("age")))
NULLS = T.with_columns(age=pl.when(pl.col("id").is_in(["p00", "p05"])).then(None).otherwise(pl.col("age")))
NAN = T.with_columns(age=pl.when(pl.col("id").is_in(["p00", "p05"])).then(float("nan")).otherwise(pl.col("age")))

ANONYMIZE = [
    _c("data-not-a-frame", anon(data={"age": [31]}), IPE, "got dict"),
    _c(
        "data-a-path",
        anon(data="people.csv"),
        IPE,
        "got str 'people.csv', a path: read the file first, pl.scan_csv('people.csv') (a CSV) or "
        "pl.scan_parquet('people.csv') (Parquet), or name it as a job file's input (polars_anon.job.run_job)",
    ),
    _c("qid-not-a-column", anon(qids=["zip"]), CNF, "qids ['zip']"),
    _c("qids-empty", anon(qids=[], hierarchies={}), IPE, "qids is empty"),
    _c("qids-twice", anon(qids=["age", "sex", "age"]), IPE, "['age'] more than once"),
    _c(
        "hierarchies-not-a-mapping",
        anon(qids=["age"], hierarchies=[H["age"]]),
        IPE,
        "hierarchies must be a mapping",
        "list",
    ),
    _c("hierarchies-a-list-no-qids", anon(hierarchies=[H["age"]]), IPE, "hierarchies must be a mapping", "list"),
    *(
        _c(
            f"qid-of-dtype-{name}-{method}",
            anon(data=T.with_columns(sex=col), method=method, qids=["age", "sex"], hierarchies=hs),
            IPE,
            "qid 'sex'",
            f"dtype {col.dtype}",
            "cannot be generalized",
        )
        for name, col in [
            ("list", pl.Series("sex", [["F"], ["M"]] * 6)),
            ("array", pl.Series("sex", [[1, 2]] * 12, dtype=pl.Array(pl.Int64, 2))),
            ("struct", pl.Series("sex", [{"s": "F"}, {"s": "M"}] * 6)),
            ("binary", pl.Series("sex", [b"F", b"M"] * 6)),
        ]
        for method, hs in [("fulldomain", H), ("mondrian", {})]
    ),
    *(
        _c(
            f"qid-of-dtype-duration-{engine}",
            anon(
                data=T.with_columns(sex=pl.duration(hours=pl.col("age"))),
                engine=engine,
                qids=["age", "sex"],
                hierarchies={},
                method="mondrian",
            ),
            IPE,
            "qid 'sex'",
            "dtype Duration",
            "cast it to a number",
        )
        for engine in ("polars", "duckdb")
    ),
    _c(
        "hierarchy-not-a-Hierarchy",
        anon(hierarchies={**H, "sex": {"*": ["F", "M"]}}),
        IPE,
        "hierarchies['sex']",
        "dict",
    ),
    _c("hierarchy-for-a-non-qid", anon(qids=["age"]), IPE, "hierarchies given for ['sex']", "not in qids"),
    _c(
        "qid-without-hierarchy",
        anon(qids=["age", "sex"], hierarchies={"age": H["age"]}),
        IPE,
        "qids ['sex'] have no hierarchy",
    ),
    _c("k-zero", anon(k=0), IPE, "k must be an integer >= 1, got 0"),
    _c("k-float", anon(k=2.5), IPE, "got 2.5"),
    _c("k-string", anon(k="2"), IPE, "got '2'"),
    _c("k-bool", anon(k=True), IPE, "got True"),
    _c("k-above-rows", anon(k=13), pa.InfeasibleError, "k=13", "12 rows"),
    _c("method-unknown", anon(method="magic"), IPE, "method must be one of", "'magic'"),
    # a misspelt keyword named the method's options ("method 'fulldomain' does not take option 'mehtod'"): as a job
    # names its key, the close keyword first, then the method's close option
    _c("keyword-misspelt", anon(mehtod="topdown"), IPE, "unknown keyword 'mehtod'; did you mean 'method'?"),
    _c(
        "keyword-misspelt-sensitive",
        anon(sensitve="party"),
        IPE,
        "unknown keyword 'sensitve'; did you mean 'sensitive'?",
    ),
    _c(
        "option-misspelt",
        anon(method="topdown", max_supressed=1),
        IPE,
        "method 'topdown' does not take option 'max_supressed'; did you mean 'max_suppressed'? It takes [",
    ),
    _c("metric-unknown-for-fulldomain", anon(metric="nllm"), IPE, "metric of method 'fulldomain'", "'nllm'"),
    _c("metric-unknown-for-greedy", anon(method="greedy", metric="entropy"), IPE, "method 'greedy'", "'entropy'"),
    _c("drop-not-a-column", anon(drop=["ssn"]), CNF, "drop ['ssn']"),
    _c("drop-not-names", anon(drop=5), IPE, "drop must be", "got 5"),
    _c("qid-in-drop", anon(drop=["age"]), IPE, "qids ['age'] are also in drop"),
    _c("sensitive-in-drop", anon(sensitive="party", drop=["party"]), IPE, "sensitive 'party' is also in drop"),
    _c("sensitive-is-a-qid", anon(sensitive="age"), IPE, "sensitive 'age' is also a quasi-identifier"),
    _c("sensitive-not-a-column", anon(sensitive="income"), CNF, "sensitive ['income']"),
    _c(
        "sensitive-not-names",
        anon(sensitive=["party", 3]),
        IPE,
        "sensitive must be a column name or a list",
        "['party', 3]",
    ),
    _c("insensitive-is-a-qid", anon(insensitive=["id", "sex"]), IPE, "insensitive ['sex']"),
    _c("insensitive-not-a-column", anon(insensitive=["id", "ssn"]), CNF, "insensitive ['ssn']"),
    _c("null-policy-unknown", anon(null="drop"), IPE, "null must be one of", "'drop'"),
    _c("seed-float", anon(seed=1.5), IPE, "seed must be an integer >= 0, got 1.5"),
    _c("seed-string", anon(seed="x"), IPE, "seed must be an integer >= 0, got 'x'"),
    # hunt36: MDAV passed a negative seed to NumPy, which raised a bare "expected non-negative integer"
    _c("seed-negative-mdav", anon(method="mdav", seed=-1), IPE, "seed must be an integer >= 0, got -1"),
    _c(
        "undeclared-identifier",
        anon(insensitive=()),
        IPE,
        "column 'id' is not declared",
        "drop=['id']",
        "insensitive=['id']",
    ),
    _c("value-not-a-leaf", anon(data=EMU), VNH, "column 'age'", "'99'"),
    _c("nulls-refused", anon(data=NULLS), pa.NullValueError, "column 'age' has 2 null values", "null='suppress'"),
    _c(
        "nan-in-a-float-qid",
        anon(data=NAN, qids=["age", "sex"], hierarchies={"sex": H["sex"]}, method="mdav", null="suppress"),
        pa.NotFiniteError,
        "column 'age' holds NaN in 2 rows",
        "null='suppress' does not publish it",
    ),
    _c("empty-table", anon(data=T.head(0), k=1), pa.InfeasibleError, "no rows"),
    _c("max-suppressed-negative", anon(max_suppressed=-1), IPE, "max_suppressed", "-1"),
    _c(
        "mondrian-null-without-hierarchy",
        anon(data=NULLS, qids=["age", "sex"], hierarchies={"sex": H["sex"]}, method="mondrian", null="suppress"),
        pa.NullValueError,
        "column 'age' has 2 null values",
    ),
    _c("mondrian-order-not-a-qid", anon(method="mondrian", order={"zip": "numeric"}), IPE, "order names ['zip']"),
    _c("mondrian-publish-unknown", anon(method="mondrian", publish="weird"), IPE, "publish", "'weird'"),
    _c("greedy-weights-not-qids", anon(method="greedy", weights={"zip": [1.0]}), IPE, "weights", "unknown ['zip']"),
    _c("greedy-candidates-one", anon(method="greedy", candidates=1), IPE, "candidates", "got 1"),
    _c("mdav-numeric-not-a-qid", anon(method="mdav", numeric=["id"]), IPE, "numeric names ['id']"),
    _c("mdav-numeric-not-numbers", anon(method="mdav", numeric=["sex"]), IPE, "numeric qid 'sex'", "'F'"),
    _c("mdav-block-size-below-2k", anon(method="mdav", block_size=3), IPE, "block_size", "got 3"),
    _c("mdav-blocks-miss-a-qid", anon(method="mdav", blocks=[["age"]]), IPE, "blocks must name every qid", "[['age']]"),
    # newuser4: a scan of a file that does not exist raised Polars' FileNotFoundError from the plan's printing
    *(
        _c(
            f"scan-of-a-missing-file-{engine}",
            lambda out, engine=engine: _anonymize(pl.scan_csv(out / "missing.csv"), engine=engine).sink_parquet(
                out / "anon.parquet"
            ),
            pa.InputError,
            "missing.csv' does not exist or is not a file",
        )
        for engine in ("polars", "duckdb")
    ),
    _c(
        "scan-of-a-pattern-matching-no-file",
        lambda out: _anonymize(pl.scan_parquet(out / "none-*.parquet")).sink_parquet(out / "anon.parquet"),
        pa.InputError,
        "none-*.parquet' names no file",
    ),
    _c(
        "namespace-scan-of-a-missing-file",
        lambda out: pl.scan_csv(out / "missing.csv").anon.k_anonymize(hierarchies=H, k=2, insensitive="id"),
        pa.InputError,
        "missing.csv' does not exist or is not a file",
    ),
    # mend28: the check, the risk figures and explore read the scan's columns first (Polars' FileNotFoundError)
    *(
        _c(f"{name}-scan-of-a-missing-file", call, pa.InputError, "missing.csv' does not exist or is not a file")
        for name, call in (
            ("check", lambda out: pa.check(pl.scan_csv(out / "missing.csv"), qids=["age"], k=2)),
            ("risk", lambda out: pa.risk(pl.scan_csv(out / "missing.csv"), ["age"])),
            ("explore", lambda out: pa.explore(pl.scan_csv(out / "missing.csv"), hierarchies=H, k=[2])),
        )
    ),
]


def _model(make: Callable[[], object], **over: Any) -> Callable[[Path], object]:
    """A case body that builds a privacy model (refused at construction or by the pipeline) and anonymizes with it."""
    return lambda out: anon(privacy=[make()], **over)(out)


PRIVACY = [
    _c(
        "privacy-unknown-attribute",
        _model(lambda: pa.LDiversity("income", l=2)),
        CNF,
        "l-diversity: attribute ['income']",
    ),
    _c(
        "privacy-attribute-is-a-qid",
        _model(lambda: pa.LDiversity("age", l=2)),
        IPE,
        "l-diversity on 'age': attribute 'age' is a quasi-identifier",
    ),
    _c(
        "privacy-l-below-1",
        _model(lambda: pa.LDiversity("party", l=0)),
        IPE,
        "l-diversity on 'party'",
        "l must be",
        "got 0",
    ),
    _c(
        "privacy-l-above-values",
        _model(lambda: pa.LDiversity("party", l=4)),
        pa.InfeasibleError,
        "l-diversity on 'party'",
        "largest l that can be met is 3",
    ),
    _c("privacy-t-above-1", _model(lambda: pa.TCloseness("party", t=1.5)), IPE, "t-closeness on 'party'", "got 1.5"),
    _c(
        "privacy-t-below-0",
        _model(lambda: pa.TCloseness("party", t=-0.1)),
        IPE,
        "t must be a number in [0, 1]",
        "got -0.1",
    ),
    _c(
        "privacy-population-lacks-sample",
        _model(lambda: pa.DeltaPresence(T.head(6))),
        pa.InfeasibleError,
        "delta-presence",
        "does not contain the sample",
    ),
    _c(
        "privacy-sampling-fraction-0",
        _model(lambda: pa.PopulationUniqueness(0.1, sampling_fraction=0.0)),
        IPE,
        "population-uniqueness",
        "sampling_fraction",
        "got 0.0",
    ),
    _c(
        "privacy-sampling-fraction-above-1",
        _model(lambda: pa.KMap(3, sampling_fraction=1.5)),
        IPE,
        "k-map",
        "sampling_fraction",
        "got 1.5",
    ),
    _c("privacy-not-a-model", anon(privacy=["l-diversity"]), IPE, "privacy[0] must be a privacy model", "got str"),
    _c(
        "privacy-population-with-greedy",
        _model(lambda: pa.KMap(2, population=T), method="greedy"),
        IPE,
        "k-map",
        "got method 'greedy'",
    ),
]


def _sink(path: str, **kw: Any) -> Callable[[Path], object]:
    return lambda out: _anonymize().sink_parquet(out / path, **kw)


def _onto_input(engine: str, relation: bool = False, udf: bool = False) -> Callable[[Path], object]:
    """Anonymize the folder's existing file as scanned (Polars) or read by DuckDB, and write onto it (`udf`: through
    a Python function Polars cannot pickle, so its plan cannot be serialized)."""

    def call(out: Path) -> object:
        source = str(out / EXISTING)
        data = duckdb.read_parquet(source) if relation else pl.scan_parquet(source).filter(pl.col("age") > 0)
        if udf:
            lock = threading.Lock()
            data = data.with_columns(pl.col("party").map_batches(lambda s: (lock, s)[1], return_dtype=pl.String))
        return _anonymize(data, engine=engine).sink_parquet(source, overwrite=True)

    return call


def _onto_view(out: Path) -> object:
    """Anonymize a DuckDB view given by its name, a view over a view that reads the folder's file, and write onto it."""
    import polars_anon.duckdb as pad

    source = str(out / EXISTING)
    con = duckdb.connect()
    literal = source.replace("'", "''")
    con.execute(f"CREATE VIEW people AS SELECT * FROM read_parquet('{literal}')")
    con.execute("CREATE VIEW adults AS SELECT * FROM people WHERE age > 0")
    return pad.anonymize("adults", connection=con, hierarchies=H, k=2, insensitive="id").sink_parquet(
        source, overwrite=True
    )


def _onto_population(out: Path) -> object:
    """Write onto the population table a model reads (review14: a Python population path was not protected)."""
    model = pa.KMap(k=2, population=str(out / EXISTING))
    return _anonymize(privacy=[model]).sink_parquet(out / EXISTING, overwrite=True)


def _report_exists(out: Path) -> object:
    (out / EXISTING).rename(out / "anon.report.json")  # the report target exists (the table does not)
    try:
        return _anonymize().sink_parquet(out / "anon.parquet")
    finally:
        (out / "anon.report.json").rename(out / EXISTING)


SINK = [
    _c("sink-output-exists", _sink(EXISTING), pa.OutputExistsError, EXISTING, "overwrite=True"),
    _c("sink-report-exists", _report_exists, pa.OutputExistsError, "anon.report.json"),
    _c("sink-csv-name", _sink("anon.csv"), IPE, "anon.csv", ".parquet"),
    _c("sink-dot-csv", _sink(".csv"), IPE, ".csv'", ".parquet"),
    _c("sink-to-a-folder", lambda out: _anonymize().sink_parquet(out / "sub.parquet"), IPE, "sub.parquet", "folder"),
    _c("sink-under-a-file", _sink(f"{EXISTING}/anon.parquet"), pa.OutputError, EXISTING, "is a file"),
    _c(
        "sink-report-is-the-table",
        lambda out: _anonymize().sink_parquet(out / "anon.parquet", report=out / "anon.parquet"),
        IPE,
        "anon.parquet",
        "named twice",
    ),
    _c("sink-onto-its-input", _onto_input("polars"), IPE, EXISTING, "is an input of this run"),
    _c("sink-onto-its-input-duckdb", _onto_input("duckdb"), IPE, EXISTING, "is an input of this run"),
    _c("sink-onto-its-input-unpicklable", _onto_input("polars", udf=True), IPE, EXISTING, "is an input of this run"),
    _c("sink-onto-its-relation", _onto_input("duckdb", relation=True), IPE, EXISTING, "is an input of this run"),
    _c("sink-onto-a-view-by-name", _onto_view, IPE, EXISTING, "is an input of this run"),
    _c("sink-onto-its-population", _onto_population, IPE, EXISTING, "is an input of this run"),
    _c("sink-overwrite-not-bool", _sink("anon.parquet", overwrite="no"), IPE, "overwrite", "'no'"),
    _c(
        "sink-not-k-anonymous",
        lambda out: pa.Anonymized(T.lazy(), {}, lambda lf: pa.verify_k(lf, ["age", "sex"], 4), T.lazy()).sink_parquet(
            out / "anon.parquet"
        ),
        pa.NotKAnonymousError,
        "smallest class has 3 rows",
        "k=4",
    ),
    # two targets of one path, or one inside the other: refused before the table is written and checked (the check
    # of this table would refuse it: it came first, hunt48)
    _c(
        "sink-report-is-the-table-before-the-check",
        lambda out: _unverifiable().sink_parquet(out / "anon.parquet", report=out / "anon.parquet"),
        IPE,
        "report '",
        "anon.parquet' is named twice among the outputs (the output has that path too)",
    ),
    _c(
        "sink-report-inside-the-table-before-the-check",
        lambda out: _unverifiable().sink_parquet(out / "anon.parquet", report=out / "anon.parquet" / "r.json"),
        IPE,
        "anon.parquet/r.json' is inside the output '",
    ),
]


def _unverifiable() -> pa.Anonymized:
    """A result whose check refuses it (k = 4 over classes of 3)."""
    return pa.Anonymized(T.lazy(), {}, lambda lf: pa.verify_k(lf, ["age", "sex"], 4), T.lazy())


LF = T.lazy()
GENERALIZE = [
    _c(
        "generalize-level-without-hierarchy",
        lambda out: pa.generalize(LF, H, {"party": 1}),
        IPE,
        "levels names ['party']",
    ),
    _c(
        "generalize-level-above-top",
        lambda out: pa.generalize(LF, H, {"age": 4}),
        IPE,
        "levels['age']",
        "level 4",
        "0..3",
    ),
    _c("generalize-level-negative", lambda out: pa.generalize(LF, H, {"age": -1}), IPE, "levels['age']", "level -1"),
    _c("generalize-level-float", lambda out: pa.generalize(LF, H, {"age": 1.5}), IPE, "levels['age']", "got 1.5"),
    _c("generalize-level-string", lambda out: pa.generalize(LF, H, {"age": "1"}), IPE, "levels['age']", "got '1'"),
    _c(
        "generalize-column-missing",
        lambda out: pa.generalize(LF.drop("age"), H, {"age": 1}),
        CNF,
        "hierarchies ['age']",
    ),
    _c(
        "generalize-not-a-Hierarchy",
        lambda out: pa.generalize(LF, {"sex": "suppress"}, {"sex": 1}),
        IPE,
        "hierarchies['sex']",
    ),
]

CLASSES = [
    _c("class-sizes-column-missing", lambda out: pa.class_sizes(LF, ["zip"]), CNF, "qids ['zip']"),
    _c("class-sizes-qids-empty", lambda out: pa.class_sizes(LF, []), IPE, "qids is empty"),
    _c("class-sizes-qid-twice", lambda out: pa.class_sizes(LF, ["age", "age"]), IPE, "['age'] more than once"),
    _c("k-summary-k-zero", lambda out: pa.k_summary(LF, ["age"], 0), IPE, "k must be an integer >= 1, got 0"),
    _c("k-summary-k-float", lambda out: pa.k_summary(LF, ["age"], 2.5), IPE, "got 2.5"),
    _c("is-k-anonymous-k-zero", lambda out: pa.is_k_anonymous(LF, ["age"], 0), IPE, "got 0"),
    _c("is-k-anonymous-column-missing", lambda out: pa.is_k_anonymous(LF, ["zip"], 2), CNF, "qids ['zip']"),
    _c("min-class-size-column-missing", lambda out: pa.min_class_size(LF, ["zip"]), CNF, "qids ['zip']"),
    _c("histogram-column-missing", lambda out: pa.class_size_histogram(LF, ["zip"]), CNF, "qids ['zip']"),
]

ENCODE = [
    _c("encode-unknown", lambda out: pa.encode(PUB, H, "magic"), IPE, "encoding must be one of", "'magic'"),
    _c("encode-no-hierarchies", lambda out: pa.encode(PUB, {}, "fillparent"), IPE, "hierarchies is empty"),
    _c("encode-qid-missing", lambda out: pa.encode(PUB.drop("sex"), H, "fillparent"), CNF, "qids ['sex']"),
    _c(
        "encode-proportional-without-original",
        lambda out: pa.encode(PUB, H, "proportional"),
        IPE,
        "'proportional'",
        "original",
    ),
    _c(
        "encode-value-not-a-node",
        lambda out: pa.encode(PUB.with_columns(sex=pl.lit("X")), H, "oneclass"),
        VNH,
        "column 'sex'",
        "'X'",
    ),
    _c(
        "encode-original-not-a-leaf",
        lambda out: pa.encode(PUB, H, "proportional", original=PUB),
        VNH,
        "column 'age'",
        "original",
        "'30-34'",
    ),
    _c(
        "encode-class-col-is-a-qid",
        lambda out: pa.encode(PUB, H, "fillparent", class_col="sex"),
        IPE,
        "class_col 'sex'",
    ),
    _c(
        "encode-dtype-not-numeric", lambda out: pa.encode(PUB, H, "fillparent", dtype=pl.String), IPE, "dtype", "String"
    ),
    _c("encode-seed-string", lambda out: pa.encode(PUB, H, "random", seed="x"), IPE, "seed", "'x'"),
    _c(
        "write-encoded-exists",
        lambda out: pa.write_encoded(PUB, H, out / EXISTING, "fillparent"),
        pa.OutputExistsError,
        EXISTING,
    ),
    _c(
        "write-encoded-onto-its-input",
        lambda out: pa.write_encoded(pl.scan_parquet(out / EXISTING), H, out / EXISTING, "fillparent", overwrite=True),
        IPE,
        EXISTING,
        "is an input of this run",
    ),
    _c(
        "write-encoded-csv-name",
        lambda out: pa.write_encoded(PUB, H, out / "e.csv", "fillparent"),
        IPE,
        "e.csv",
        ".parquet",
    ),
    _c(
        "write-encoded-layout",
        lambda out: pa.write_encoded(PUB, H, out / "e.parquet", "fillparent", layout="tall"),
        IPE,
        "layout",
        "'tall'",
    ),
    _c(
        "write-encoded-classes-mapping",
        lambda out: pa.write_encoded(PUB, H, out / "e", "random", layout="classes"),
        IPE,
        "layout='classes'",
        "'random'",
    ),
    _c(
        "write-encoded-chunk-rows",
        lambda out: pa.write_encoded(PUB, H, out / "e.parquet", "fillparent", chunk_rows=0),
        IPE,
        "chunk_rows",
        "got 0",
    ),
]

METRICS = [
    _c("metrics-unknown", lambda out: compute(T, PUB, ["age", "sex"], H, ["nlm"]), IPE, "unknown metric 'nlm'"),
    _c(
        "metrics-needs-sensitive", lambda out: compute(T, PUB, ["age", "sex"], H, "cm"), IPE, "metric 'cm'", "sensitive"
    ),
    _c("metrics-k-zero", lambda out: compute(T, PUB, ["age", "sex"], H, k=0), IPE, "k must be an integer >= 1, got 0"),
    _c("metrics-key-missing", lambda out: compute(T, PUB, ["age", "sex"], H, key="row"), CNF, "key ['row']"),
    _c("metrics-rows-removed", lambda out: compute(T, PUB.head(5), ["age", "sex"], H), pa.InputError, "5 rows", "key="),
    _c(
        "metrics-qid-without-hierarchy",
        lambda out: compute(T, PUB, ["age", "party"], H),
        IPE,
        "qids ['party'] have no hierarchy",
    ),
]

NAMESPACE = [
    _c(
        "lf-anon-generalize-no-hierarchy",
        lambda out: LF.anon.generalize(H, {"party": 1}),
        IPE,
        "levels names ['party']",
    ),
    _c(
        "df-anon-generalize-level",
        lambda out: T.anon.generalize(H, {"sex": 2}),
        IPE,
        "levels['sex']",
        "level 2",
        "0..1",
    ),
    _c("lf-anon-classes-column", lambda out: LF.anon.classes(["zip"]), CNF, "qids ['zip']"),
    _c("df-anon-check-k-zero", lambda out: T.anon.check(["age"], 0), IPE, "got 0"),
    _c(
        "lf-anon-k-anonymize-hierarchy-for-non-qid",
        lambda out: LF.anon.k_anonymize(qids=["age"], hierarchies=H, k=2, insensitive="id"),
        IPE,
        "['sex']",
    ),
    _c(
        "df-anon-k-anonymize-metric",
        lambda out: T.anon.k_anonymize(hierarchies=H, k=2, insensitive="id", method="datafly", metric="ncp"),
        IPE,
        "method 'datafly' takes no metric",
    ),
    _c(
        "df-anon-k-anonymize-undeclared",
        lambda out: T.anon.k_anonymize(hierarchies=H, k=2),
        IPE,
        "column 'id'",
        "insensitive=",
    ),
    _c("df-anon-encode-unknown", lambda out: PUB.anon.encode(H, "onehot"), IPE, "'onehot'"),
    _c("lf-anon-metrics-unknown", lambda out: LF.anon.metrics(PUB, ["age", "sex"], H, ["nlm"]), IPE, "'nlm'"),
    _c("expr-anon-generalize-level", lambda out: pl.col("age").anon.generalize(H["age"], 4), IPE, "level 4", "0..3"),
    _c(
        "expr-anon-generalize-level-string",
        lambda out: pl.col("age").anon.generalize(H["age"], "1"),
        IPE,
        "level",
        "'1'",
    ),
    _c(
        "expr-anon-generalize-value-not-a-node",
        lambda out: EMU.select(pl.col("age").anon.generalize(H["age"], 1)),
        VNH,
        "column 'age'",
        "'99' is not a leaf of its hierarchy",
    ),
    _c(
        "expr-anon-generalize-level-0-value-not-a-node",
        lambda out: EMU.lazy().select(pl.col("age").anon.generalize(H["age"], 0)).collect(engine="streaming"),
        VNH,
        "column 'age'",
        "'99' is not a leaf of its hierarchy",
    ),
    _c(
        "expr-anon-generalize-not-a-Hierarchy",
        lambda out: pl.col("age").anon.generalize("age.csv", 1),
        IPE,
        "Hierarchy",
        "str",
    ),
]


def _option_cases() -> list[Case]:
    """From the registry: every method refuses an unknown option, and every option of the wrong type, naming the key."""
    out = []
    for name, method in sorted(METHODS.items()):
        out.append(
            _c(f"{name}-unknown-option", anon(method=name, bogus_option=1), IPE, f"method {name!r}", "'bogus_option'")
        )
        for f in dataclasses.fields(method.options):
            out.append(
                _c(
                    f"{name}-option-{f.name}-wrong-type",
                    anon(method=name, **{f.name: [[1]]}),
                    IPE,
                    f"method {name!r}",
                    f"option {f.name!r}",
                    "[[1]]",
                )
            )
        if not method.metrics:
            out.append(
                _c(f"{name}-metric-refused", anon(method=name, metric="ncp"), IPE, f"method {name!r} takes no metric")
            )
    return out


def _write_plain(out: Path) -> Path:
    """A plain Parquet file beside the folder (scan_encoded must refuse it; the folder stays as it was)."""
    path = out.parent / "plain.parquet"
    T.write_parquet(path)
    return path


ISSUE_27 = [
    _c("check-model-on-a-qid", lambda out: pa.check(T, ["age", "sex"], [pa.LDiversity("sex", l=2)]), IPE,
       "l-diversity on 'sex'", "is a quasi-identifier"),
    _c("anonymize-model-on-an-insensitive-column",
       anon(insensitive=["id", "party"], privacy=[pa.LDiversity("party", l=2)]),
       IPE, "l-diversity on 'party'", "declared insensitive"),
    _c("scan-encoded-plain-parquet", lambda out: pa.scan_encoded(_write_plain(out)), pa.InputError,
       "plain.parquet", "write_encoded did not write"),
    _c("encode-proportional-other-length",
       lambda out: pa.encode(T.head(10), {"sex": H["sex"]}, "proportional", original=T).collect(), IPE,
       "'proportional'", "original has 12 rows", "published table has 10"),
    _c("risk-empty-table", lambda out: pa.risk(T.head(0), ["age"]), pa.InfeasibleError,
       "risk: the table has no rows"),
    _c("risk-population-missing", lambda out: pa.risk(T, ["age"], population=out / "nope.parquet"),
       pa.InputError, "population table", "nope.parquet"),
    _c("explore-risk-threshold-zero", lambda out: pa.explore(T, hierarchies=H, k=[2], insensitive="id",
                                                             risk_threshold=0), IPE, "risk_threshold", "got 0"),
    _c("explore-model-parameter", lambda out: pa.explore(T, hierarchies=H, k=[2], insensitive="id",
                                                         privacy=[pa.LDiversity("age", l=2)]), IPE,
       "l-diversity on 'age'", "is a quasi-identifier"),
    _c("mdav-permute-option", anon(method="mdav", publish="swap"), IPE, "option 'publish'", "['aggregate', 'permute']"),
]  # a table: one case an entry  # fmt: skip

SDC_T = pl.DataFrame(
    {
        "a": ["x", "x", "y", "y", "z", "x"],
        "b": ["1", "2", "1", "1", "2", "2"],
        "w": [1.0, 2.0, 3.0, -1.0, 2.0, 1.0],
        "ws": ["1", "2", "3", "4", "5", "6"],
        "n": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        "h": [1, 1, 2, 2, 3, 3],
    }
)
"""The sdcMicro toolkit's bad inputs (pa.sdc): a negative weight in `w`, strings in `ws`."""


def _with(**columns: object) -> pl.DataFrame:
    return SDC_T.with_columns(**{k: pl.lit(v, dtype=SDC_T.schema[k]) for k, v in columns.items()})


def _sdc(call: Callable[[], object]) -> Callable[[Path], object]:
    """A case body: the sdc call, collected when it returns a LazyFrame."""

    def run(out: Path) -> object:
        got = call()
        return got.collect() if isinstance(got, pl.LazyFrame) else got

    return run


SDC = [
    _c("sdc-weight-strings", _sdc(lambda: sdc.frequencies(SDC_T, "a", weight="ws")), IPE, "weight column 'ws'",
       "numeric", "String"),
    _c("sdc-weight-negative", _sdc(lambda: sdc.frequencies(SDC_T, "a", weight="w")), IPE, "weight column 'w'",
       "1 values", "[-1.0]"),
    _c("sdc-weight-null", _sdc(lambda: sdc.individual_risk(_with(w=None), "a", weight="w")), IPE,
       "weight column 'w'", "6 values", "None"),
    _c("sdc-weight-zero", _sdc(lambda: sdc.global_risk(_with(w=0.0), "a", weight="w")), IPE, "weight column 'w'",
       "[0.0,"),
    _c("sdc-weight-nan", _sdc(lambda: sdc.frequencies(_with(w=float("nan")), "a", weight="w")), IPE,
       "weight column 'w'", "nan"),
    _c("sdc-keys-twice", _sdc(lambda: sdc.frequencies(SDC_T, ["a", "a"])), IPE, "keys lists ['a'] more than once"),
    _c("sdc-key-missing", _sdc(lambda: sdc.suda2(SDC_T, ["a", "zz"])), CNF, "keys ['zz']"),
    _c("sdc-local-suppression-k-zero", _sdc(lambda: sdc.local_suppression(SDC_T, ["a", "b"], k=0)), IPE,
       "k must be an integer >= 1, got 0"),
    _c("sdc-local-suppression-max-candidates", _sdc(lambda: sdc.local_suppression(SDC_T, "a", max_candidates=0)),
       IPE, "max_candidates", "got 0"),
    _c("sdc-pram-row-sum", _sdc(lambda: sdc.pram(SDC_T, "a", {"x": {"x": 0.5, "y": 0.2}})), IPE,
       "PRAM matrix row 'x'", "summing to 1", "0.7"),
    _c("sdc-pram-nan", _sdc(lambda: sdc.pram(SDC_T, "a", {"x": {"x": float("nan"), "y": 1.0}})), IPE,
       "PRAM matrix['x']['x']", "nan"),
    _c("sdc-pram-not-a-mapping", _sdc(lambda: sdc.pram(SDC_T, "a", [[0.5, 0.5]])), IPE,  # type: ignore[arg-type]
       "PRAM matrix must be", "[[0.5, 0.5]]"),
    _c("sdc-pram-row-not-a-mapping", _sdc(lambda: sdc.pram(SDC_T, "a", {"x": 1.0})), IPE,  # type: ignore[dict-item]
       "PRAM matrix row 'x'", "got 1.0"),
    _c("sdc-pram-empty", _sdc(lambda: sdc.pram(SDC_T, "a", {})), IPE, "PRAM matrix must be a non-empty"),
    _c("sdc-pram-value-of-another-type", _sdc(lambda: sdc.pram(SDC_T, "h", {"x": {"y": 1.0}})), IPE,
       "PRAM matrix row 'x'", "column 'h'", "Int64"),
    _c("sdc-invariant-pram-pd-string", _sdc(lambda: sdc.invariant_pram(SDC_T, "a", pd="high")), IPE,  # type: ignore[arg-type]
       "pd", "'high'"),
    _c("sdc-noise-strings", _sdc(lambda: sdc.add_noise(SDC_T, "a")), IPE, "columns ['a'] must be numeric"),
    _c("sdc-noise-one-row", _sdc(lambda: sdc.add_noise(SDC_T.head(1), "n")), IPE, "columns ['n']",
       "fewer than 2 values"),
    _c("sdc-il1s-other-length", _sdc(lambda: sdc.il1s(SDC_T, SDC_T.head(3), "n")), IPE, "perturbed has 3 rows",
       "original has 6"),
    _c("sdc-eigen-other-length", _sdc(lambda: sdc.eigen_utility(SDC_T, SDC_T.head(2), ["n", "h"])), IPE,
       "perturbed has 2 rows"),
    _c("sdc-correlations-constant", _sdc(lambda: sdc.correlations(_with(n=1.0), ["n", "h"])), IPE,
       "columns ['n']", "constant"),
    _c("sdc-correlations-strings", _sdc(lambda: sdc.correlations(SDC_T, ["a", "n"])), IPE,
       "columns ['a'] must be numeric"),
    _c("sdc-suda-empty-table", _sdc(lambda: sdc.suda2(SDC_T.head(0), ["a", "b"])), IPE, "no rows", "SUDA"),
    _c("sdc-suda-max-keys-zero", _sdc(lambda: sdc.suda2(SDC_T, ["a"], max_keys=0)), IPE, "max_keys", "got 0"),
    _c("sdc-wildcard-fk-counts", _sdc(lambda: sdc.wildcard_fk(np.array([[0, 1]]), np.array([1, 2]))), IPE,
       "counts must hold one count per row of codes (1)"),
    _c("sdc-wildcard-fk-alpha", _sdc(lambda: sdc.wildcard_fk(np.array([[0, 1]]), alpha=5)), IPE, "alpha", "got 5"),
    _c("check-reference-unread", lambda out: pa.check(T, ["age", "sex"], [pa.LDiversity("party", l=2)],
                                                      reference=T), IPE, "reference is read by", "t-closeness"),
    _c("check-levels-without-hierarchies", lambda out: pa.check(T, ["age", "sex"], k=2, levels={"age": 1}), IPE,
       "check: levels {'age': 1}", "hierarchies"),
    _c("check-reference-missing", lambda out: pa.check(T, ["age", "sex"], [pa.TCloseness("party", t=0.5)],
                                                       reference=out / "nope.parquet"), pa.InputError,
       "reference", "nope.parquet"),
    _c("scan-input-columns-twice", lambda out: scan_input(_write_csv(out), columns=["a", "a", "b", "c"]), IPE,
       "columns lists ['a'] more than once"),
]  # a table: one case an entry  # fmt: skip


def _write_csv(out: Path) -> Path:
    """A CSV file beside the folder (the folder stays as it was)."""
    path = out.parent / "t.csv"
    T.write_csv(path)
    return path


CASES = {
    "issue27": ISSUE_27,
    "sdc": SDC,
    "anonymize": ANONYMIZE,
    "privacy": PRIVACY,
    "sink_parquet": SINK,
    "generalize": GENERALIZE,
    "classes": CLASSES,
    "encode": ENCODE,
    "metrics": METRICS,
    "namespace": NAMESPACE,
    "options": _option_cases(),
}
ALL = [case for cases in CASES.values() for case in cases]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An output folder that already holds a file and a folder (which must stay exactly as they are)."""
    folder = tmp_path / "out"
    folder.mkdir()
    T.write_parquet(folder / EXISTING)
    (folder / "sub.parquet").mkdir()
    return folder


@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_refused_naming_the_culprit(case: Case, out: Path) -> None:
    with unchanged(out), pytest.raises(case.error) as info:
        case.call(out)
    assert isinstance(info.value, pa.AnonError), f"{type(info.value).__name__} is not an AnonError"
    message = str(info.value)
    missing = [c for c in case.culprit if c not in message]
    assert not missing, f"message {message!r} does not name {missing}"


def test_the_catalogue_is_large_and_ids_are_unique() -> None:
    assert len(ALL) >= 50 and len({c.id for c in ALL}) == len(ALL)
    assert all(CASES.values())


# ---------------------------------------------------------------- issue 12 regressions (behaviour, not refusals)


def test_null_suppress_keeps_the_class_sizes() -> None:
    """Level 0 is 2-anonymous with the nulls at the root: fulldomain must keep it (it generalized to the roots)."""
    df = pl.DataFrame({"age": [31, 31, 33, 33, None, None], "sex": ["F"] * 6})
    res = pa.anonymize(df, hierarchies=H, k=2, null="suppress")
    assert res.report["details"]["levels"] == {"age": 0, "sex": 0}
    assert res.collect()["age"].to_list() == ["31", "31", "33", "33", "*", "*"]
    assert (
        res.report["n_input_classes"] == 3
        and res.report["null_rows"] == 2
        and res.report["loss"] == pytest.approx(1 / 6)
    )


@pytest.mark.parametrize("suppress", ["remove", "root"])
def test_datafly_never_publishes_an_empty_table(suppress: str) -> None:
    """Every row sits in a class of 3 < k = 4 and the budget covers all 12: Datafly generalizes instead."""
    res = _anonymize(k=4, method="datafly", max_suppressed=12, suppress=suppress)
    out = res.collect()
    assert out.height > 0 and res.report["suppressed"] < 12 and res.report["n_rows"] == out.height
    assert out.group_by(["age", "sex"]).len()["len"].min() >= 4


def test_empty_table_is_not_k_anonymous() -> None:
    empty = T.head(0).lazy()
    assert pa.is_k_anonymous(empty, ["age"], 1) is False
    assert pa.k_summary(empty, ["age"], 2).collect().row(0, named=True)["k_anonymous"] is False
    with pytest.raises(pa.NotKAnonymousError, match="published table is empty"):
        pa.verify_k(empty, ["age"], 1)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_report_metric_is_the_one_used(name: str) -> None:
    """A method without a metric reports ``metric: null``; the others their default."""
    res = _anonymize(k=3, method=name)
    assert res.report["metric"] == METHODS[name].default_metric
    assert (res.report["metric"] is None) == (not METHODS[name].metrics)


def test_drop_string_is_one_column() -> None:
    out = pa.anonymize(T, hierarchies=H, k=2, drop="id").collect()
    assert out.columns == ["age", "sex", "party"] and out.height == 12


@pytest.mark.parametrize("engine", ["polars", "duckdb"])
@pytest.mark.parametrize("method", ["greedy", "mondrian"])
def test_an_empty_qid_name_is_refused_by_name(engine: str, method: str) -> None:
    """mend49 (hunt47 t4, t4d): a qid named '' (a column Polars and a CSV header allow) was Polars' raw
    ColumnNotFoundError ('unable to find column ""') or DuckDB's "qids [''] not in the frame" though it is there; the
    request check now refuses the empty name, saying so and how to rename it."""
    df = pl.DataFrame({"": ["x", "y", "z"] * 2, "b": ["F", "M"] * 3})
    hs = {"": pa.Hierarchy.suppression(["x", "y", "z"]), "b": pa.Hierarchy.suppression(["F", "M"])}
    with pytest.raises(pa.AnonError, match=r"qids hold an empty column name ''.*rename it first, e.g. lf.rename"):
        pa.anonymize(df, hierarchies=hs, k=2, method=method, engine=engine).collect()
