"""Wrong-typed arguments of the public Python API (mend39): one clear refusal naming the parameter.

A None, a string where a list is due, a list where a string is due or a number where a mapping is due reached
Python's or Polars' own errors (``pa.k_summary(df, None)``: ``TypeError: 'NoneType' object is not iterable``),
which name nothing. The shared checks (:mod:`polars_anon._validate`, ``check_hierarchies``, ``check_models``)
refuse them with an :class:`~polars_anon.InvalidParameterError` naming the parameter and the value received.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon import sdc

T = pl.DataFrame(
    {
        "id": [f"p{i:02d}" for i in range(12)],
        "age": [31, 33, 38, 36] * 3,
        "sex": ["F", "M"] * 6,
        "party": ["a", "b", "c"] * 4,
        "w": [10.0, 20.0, 30.0] * 4,
    }
)
LF = T.lazy()
H = {"age": pa.Hierarchy.intervals(range(30, 40), [5, 10]), "sex": pa.Hierarchy.suppression(["F", "M"])}
Q = ["age", "sex"]
PUB = pa.generalize(LF, H, {"age": 1}).collect()
PART = T.with_columns(cls=pl.col("age") // 5)
IPE = pa.InvalidParameterError


def _run(result: object) -> object:
    """Run a lazy result, so a refusal that waits for the query is seen too."""
    if isinstance(result, pl.LazyFrame):
        return result.collect()
    if isinstance(result, pl.Expr):
        return T.select(result)
    return result


CASES: list[tuple[str, Callable[..., object], dict[str, Any], str]] = [
    ("k_summary-qids-None", pa.k_summary, {"lf": LF, "qids": None}, "qids must be a column name or a list of "),
    ("class_sizes-qids-int", pa.class_sizes, {"lf": LF, "qids": 3}, "qids must be a column name or a list of column"),
    (
        "class_sizes-lf-None",
        pa.class_sizes,
        {"lf": None, "qids": Q},
        "lf must be a Polars DataFrame or LazyFrame, got N",
    ),
    ("min_class_size-lf-str", pa.min_class_size, {"lf": "t.csv", "qids": Q}, "lf must be a Polars DataFrame or L"),
    ("verify_k-qids-float", pa.verify_k, {"lf": LF, "qids": 1.5, "k": 2}, "qids must be a column name or a list"),
    ("check-privacy-None", pa.check, {"data": T, "qids": Q, "privacy": None}, "privacy must be a list of privacy m"),
    ("check-privacy-str", pa.check, {"data": T, "qids": Q, "privacy": "l-diversity"}, "privacy must be a list of pr"),
    ("check-hierarchies-list", pa.check, {"data": T, "qids": Q, "hierarchies": ["age"]}, "hierarchies must be a map"),
    ("check-levels-list", pa.check, {"data": T, "qids": Q, "hierarchies": H, "levels": [1]}, "levels must be a mapp"),
    ("risk-models-str", pa.risk, {"data": T, "qids": Q, "models": "k-map"}, "models must be a list of privacy models"),
    ("generalize-hierarchies-None", pa.generalize, {"lf": LF, "hierarchies": None, "levels": {}}, "hierarchies must"),
    ("generalize-levels-list", pa.generalize, {"lf": LF, "hierarchies": H, "levels": ["age"]}, "levels must be a ma"),
    ("generalize-lf-None", pa.generalize, {"lf": None, "hierarchies": H, "levels": {}}, "lf must be a Polars DataFr"),
    ("generalize_expr-column-None", pa.generalize_expr, {"column": None, "hierarchy": H["age"], "level": 1}, "column"),
    (
        "generalize_partition-class_col-None",
        pa.generalize_partition,
        {"lf": PART.lazy(), "hierarchies": H, "class_col": None},
        "class_col must be a column name (a string), got None",
    ),
    (
        "generalize_partition-hierarchies-dict-of-int",
        pa.generalize_partition,
        {"lf": PART.lazy(), "hierarchies": {"age": 1}, "class_col": "cls"},
        "hierarchies['age'] must be a Hierarchy, got int",
    ),
    ("encode-hierarchies-list", pa.encode, {"published": PUB, "hierarchies": ["age"]}, "hierarchies must be a mapping"),
    ("encoded_columns-hierarchy-None", pa.encoded_columns, {"qid": "age", "hierarchy": None}, "hierarchy must be a H"),
    ("encoded_columns-qid-None", pa.encoded_columns, {"qid": None, "hierarchy": H["age"]}, "qid must be a column name"),
    ("map_to_leaves-seed-None", pa.map_to_leaves, {"published": PUB, "hierarchies": H, "seed": None}, "seed must be"),
    ("map_to_leaves-hierarchies-str", pa.map_to_leaves, {"published": PUB, "hierarchies": "age"}, "hierarchies must"),
    ("explore-k-None", pa.explore, {"data": T, "hierarchies": H, "k": None}, "explore: k must be an integer >= 1 or"),
    ("explore-methods-None", pa.explore, {"data": T, "hierarchies": H, "methods": None}, "explore: methods must be a"),
    ("scan_encoded-path-None", pa.scan_encoded, {"path": None}, "path must be a file path (a str or pathlib.Path), "),
    ("write_encoded-path-None", pa.write_encoded, {"published": PUB, "hierarchies": H, "path": None}, "path must be"),
    ("LDiversity-attribute-None", pa.LDiversity, {"attribute": None, "l": 2}, "l-diversity: attribute must be a colu"),
    ("TCloseness-attribute-list", pa.TCloseness, {"attribute": ["party"], "t": 0.5}, "t-closeness: attribute must be"),
    ("BetaLikeness-attribute-None", pa.BetaLikeness, {"attribute": None, "beta": 1.0}, "beta-likeness: attribute mus"),
    ("DeltaDisclosure-attribute-int", pa.DeltaDisclosure, {"attribute": 3, "delta": 1.0}, "delta-disclosure: attrib"),
    ("Hierarchy.from_csv-path-None", pa.Hierarchy.from_csv, {"path": None}, "path must be a file path"),
    ("Hierarchy.from_csv-separator", pa.Hierarchy.from_csv, {"path": "h.csv", "separator": ";;"}, "separator must be"),
    ("Hierarchy.from_dict-tree-None", pa.Hierarchy.from_dict, {"tree": None}, "from_dict: tree must be a mapping"),
    ("Hierarchy.from_parents-list", pa.Hierarchy.from_parents, {"parents": ["a"]}, "from_parents: parents must be a"),
    ("Hierarchy.from_rows-rows-None", pa.Hierarchy.from_rows, {"rows": None}, "rows: rows must be a list of rows"),
    ("Hierarchy.from_rows-rows-str", pa.Hierarchy.from_rows, {"rows": "a*"}, "rows: rows must be a list of rows"),
    ("Hierarchy.dates-root-list", pa.Hierarchy.dates, {"values": ["2020-01-01"], "root": ["*"]}, "dates: root must"),
    ("Hierarchy.suppression-root-int", pa.Hierarchy.suppression, {"values": ["a"], "root": 3}, "suppression: root mu"),
    ("Hierarchy.from_levels-root-list", pa.Hierarchy.from_levels, {"values": [1], "levels": [], "root": ["*"]}, "root"),
    ("Hierarchy.masking-char-None", pa.Hierarchy.masking, {"values": ["33101"], "char": None}, "masking: char must"),
    ("lca_matrix-max_nodes-None", H["age"].lca_matrix, {"max_nodes": None}, "lca_matrix: max_nodes must be an integ"),
    ("leaf_lca_matrix-max_leaves-x", H["age"].leaf_lca_matrix, {"max_leaves": "x"}, "leaf_lca_matrix: max_leaves"),
    (
        "metrics.compute-qids-None",
        pa.metrics.compute,
        {"original": T, "anonymized": PUB, "qids": None, "hierarchies": H},
        "qids must be",
    ),
    (
        "metrics.compute-hierarchies-None",
        pa.metrics.compute,
        {"original": T, "anonymized": PUB, "qids": Q, "hierarchies": None},
        "hierarchies must",
    ),
    (
        "metrics.compute-names-int",
        pa.metrics.compute,
        {"original": T, "anonymized": PUB, "qids": Q, "hierarchies": H, "names": 3},
        "names must be a metric name",
    ),
    (
        "metrics.compute-levels-list",
        pa.metrics.compute,
        {"original": T, "anonymized": PUB, "qids": Q, "hierarchies": H, "levels": [1]},
        "levels must be a mapping",
    ),
    ("metrics.wid-hierarchies-None", pa.metrics.wid, {"hierarchies": None}, "hierarchies must be a mapping qid -> Hi"),
    (
        "metrics.edge_weights-hierarchies-list",
        pa.metrics.edge_weights,
        {"metric": "ncp", "hierarchies": ["age"]},
        "hierarchies must",
    ),
    (
        "metrics.root_weights-metric-None",
        pa.metrics.root_weights,
        {"metric": None, "hierarchies": H},
        "metric must be one of",
    ),
    ("metrics.cost_matrix-h-None", pa.metrics.cost_matrix, {"h": None, "weights": np.ones(3)}, "h must be a Hierarchy"),
    ("lf.anon.sdc_risk-keys-None", LF.anon.sdc_risk, {"keys": None}, "keys must be a column name or a list of column "),
    ("df.anon.classes-qids-None", T.anon.classes, {"qids": None}, "qids must be a column name or a list of column na"),
    ("lf.anon.check_privacy-privacy", LF.anon.check_privacy, {"qids": Q, "privacy": None}, "privacy must be a list o"),
]


@pytest.mark.parametrize(("call", "kwargs", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_type_is_refused_naming_the_parameter(
    call: Callable[..., object], kwargs: dict[str, Any], words: str
) -> None:
    """Each case raised a bare TypeError, AttributeError, KeyError or a Polars error before."""
    with pytest.raises(IPE) as info:
        _run(call(**kwargs))
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_hierarchy_encoder_refuses_a_list_of_hierarchies() -> None:
    """scikit-learn's transformer reads hierarchies at fit (``dict(['age'])`` was a bare ValueError)."""
    from polars_anon.transformers import HierarchyEncoder

    with pytest.raises(IPE, match="hierarchies must be a mapping qid -> Hierarchy, got list"):
        HierarchyEncoder(["age"]).fit(T.select(Q))  # pyright: ignore[reportArgumentType]


BASES: list[tuple[str, Callable[..., object], dict[str, Any]]] = [
    ("class_sizes", pa.class_sizes, {"lf": LF, "qids": Q}),
    ("k_summary", pa.k_summary, {"lf": LF, "qids": Q, "k": 2}),
    ("min_class_size", pa.min_class_size, {"lf": LF, "qids": Q}),
    ("is_k_anonymous", pa.is_k_anonymous, {"lf": LF, "qids": Q, "k": 2}),
    ("class_size_histogram", pa.class_size_histogram, {"lf": LF, "qids": Q}),
    ("verify_k", pa.verify_k, {"lf": LF, "qids": Q, "k": 2}),
    ("check", pa.check, {"data": T, "qids": Q, "privacy": [pa.LDiversity("party", 2)], "k": 2, "hierarchies": H}),
    ("risk", pa.risk, {"data": T, "qids": Q, "threshold": 0.2, "models": [], "missing": "category"}),
    ("generalize", pa.generalize, {"lf": LF, "hierarchies": H, "levels": {"age": 1}}),
    ("generalize_expr", pa.generalize_expr, {"column": "age", "hierarchy": H["age"], "level": 1}),
    ("generalize_partition", pa.generalize_partition, {"lf": PART.lazy(), "hierarchies": H, "class_col": "cls"}),
    ("encode", pa.encode, {"published": PUB, "hierarchies": H, "representation": "fillparent", "seed": 0}),
    ("encoded_columns", pa.encoded_columns, {"qid": "age", "hierarchy": H["age"], "representation": "fillparent"}),
    ("map_to_leaves", pa.map_to_leaves, {"published": PUB, "hierarchies": H, "how": "random", "seed": 0}),
    ("LDiversity", pa.LDiversity, {"attribute": "party", "l": 2, "variant": "distinct"}),
    ("TCloseness", pa.TCloseness, {"attribute": "party", "t": 0.5, "distance": "equal"}),
    ("BetaLikeness", pa.BetaLikeness, {"attribute": "party", "beta": 1.0, "variant": "basic"}),
    ("DeltaDisclosure", pa.DeltaDisclosure, {"attribute": "party", "delta": 1.0}),
    ("KMap", pa.KMap, {"k": 2, "population_size": 100, "estimator": "poisson", "significance": 0.01}),
    ("from_dict", pa.Hierarchy.from_dict, {"tree": {"*": ["a", "b"]}}),
    ("from_parents", pa.Hierarchy.from_parents, {"parents": {"a": "*", "b": "*", "*": None}}),
    ("from_rows", pa.Hierarchy.from_rows, {"rows": [["a", "*"], ["b", "*"]], "source": "rows"}),
    ("intervals", pa.Hierarchy.intervals, {"values": range(30, 40), "widths": [5, 10]}),
    ("masking", pa.Hierarchy.masking, {"values": ["12345", "12399"], "digits": 2, "char": "*"}),
    ("ordered", pa.Hierarchy.ordered, {"values": ["a", "b", "c", "d"], "sizes": [2]}),
    ("suppression", pa.Hierarchy.suppression, {"values": ["a", "b"]}),
    ("random_ordered", pa.Hierarchy.random_ordered, {"values": ["a", "b", "c"], "seed": 0, "max_children": 2}),
    ("lca_matrix", H["age"].lca_matrix, {"max_nodes": 8192}),
    ("leaf_lca_matrix", H["age"].leaf_lca_matrix, {"max_leaves": 8192}),
    ("level_map", H["age"].level_map, {"level": 1}),
    ("compute", pa.metrics.compute, {"original": T, "anonymized": PUB, "qids": Q, "hierarchies": H, "names": "ncp"}),
    ("wid", pa.metrics.wid, {"hierarchies": H}),
    ("edge_weights", pa.metrics.edge_weights, {"metric": "ncp", "hierarchies": H}),
    ("root_weights", pa.metrics.root_weights, {"metric": "ncp", "hierarchies": H}),
    ("frequencies", sdc.frequencies, {"data": T, "keys": Q, "weight": "w", "alpha": 1.0}),
    ("individual_risk", sdc.individual_risk, {"data": T, "keys": Q, "weight": "w", "method": "approx"}),
    ("local_suppression", sdc.local_suppression, {"data": T, "keys": Q, "k": 2, "method": "heuristic"}),
    ("add_noise", sdc.add_noise, {"data": T, "columns": ["w"], "noise": 10.0, "seed": 1}),
    ("rank_swap", sdc.rank_swap, {"data": T, "columns": ["w"], "p": 5.0, "seed": 1}),
    ("pram", sdc.pram, {"data": T, "column": "sex", "matrix": {"F": {"F": 1.0}, "M": {"M": 1.0}}, "seed": 1}),
    ("lf.anon.sdc_risk", LF.anon.sdc_risk, {"keys": Q}),
    ("lf.anon.classes", LF.anon.classes, {"qids": Q}),
]


def test_none_in_any_parameter_is_refused_or_taken(tmp_path: Path) -> None:
    """None in each parameter of each public callable, one at a time: the call returns (None is that parameter's
    default or one of its values) or is refused with an AnonError; never Python's or Polars' own error."""
    raw = []
    for name, call, base in BASES:
        for param in base:
            try:
                _run(call(**{**base, param: None}))
            except pa.AnonError:
                continue
            except Exception as exc:  # noqa: BLE001  (the finding: any error that is not a refusal)
                raw.append(f"{name}({param}=None): {type(exc).__name__}: {exc}")
    assert not raw, "\n".join(raw)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"interactions": None}, "model risk: interactions must be a list of key pairs"),
        ({"interactions": "sex"}, "model risk: interactions must be a list of key pairs"),
        ({"max_cells": None}, "model risk: max_cells must be an integer >= 1, got None"),
    ],
)
def test_model_risk_refuses_wrong_types(kwargs: dict[str, Any], words: str) -> None:
    """A None or a string as interactions, None as max_cells, were bare TypeErrors of the fit."""
    with pytest.raises(IPE, match=words):
        sdc.model_risk(T, Q, "w", **kwargs)


def test_local_suppression_refuses_an_importance_that_is_no_list() -> None:
    """``importance=3`` was ``TypeError: 'int' object is not iterable``."""
    with pytest.raises(IPE, match="importance must be a list of one integer per key, got 3"):
        sdc.local_suppression(T, Q, 2, importance=3)  # pyright: ignore[reportArgumentType]
