"""A float qid's -0.0 is the label '0.0' on every interface, not only on the road (polars_anon.labels; review8 F6:
the metrics, the generalize expression and the encoders refused '-0.0' as a value outside the hierarchy)."""

from __future__ import annotations

import polars as pl

import polars_anon as pa
from polars_anon.metrics import compute

H = {"f": pa.Hierarchy.from_dict({"*": {"zero": ["0.0"], "other": ["1.5"]}})}
ORIGINAL = pl.DataFrame({"f": [-0.0, 0.0, 1.5, 1.5]})


def test_the_generalize_expression_labels_negative_zero_0_0() -> None:
    out = ORIGINAL.select(pa.generalize_expr("f", H["f"], 0), pa.generalize_expr("f", H["f"], 1).alias("g"))
    assert out.rows() == [("0.0", "zero"), ("0.0", "zero"), ("1.5", "other"), ("1.5", "other")]


def test_metrics_read_negative_zero_as_the_leaf_0_0() -> None:
    published = pl.DataFrame({"f": ["zero", "zero", "other", "other"]})
    got = compute(ORIGINAL, published, ["f"], H, ["n_classes", "discernibility"]).row(0, named=True)
    assert got == {"n_classes": 2, "discernibility": 8}  # two classes of two rows: 2^2 + 2^2
