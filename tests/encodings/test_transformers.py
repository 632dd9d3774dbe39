"""HierarchyEncoder: the scikit-learn transformer over polars_anon.encode."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from polars_anon.errors import ColumnNotFoundError, InvalidParameterError
from polars_anon.transformers import HierarchyEncoder
from tests.examples import ANIMAL_HIERARCHIES, TABLE_I, TABLE_I_PARTITION, TABLE_III_COLUMNS

X = TABLE_I.drop("id")


def test_feature_names_round_trip_and_polars_output():
    enc = HierarchyEncoder(ANIMAL_HIERARCHIES, "fillparent").fit(X)
    assert enc.get_feature_names_out().tolist() == TABLE_III_COLUMNS
    assert enc.feature_names_in_.tolist() == ["gender", "race"]
    out = enc.set_output(transform="polars").transform(X)
    assert isinstance(out, pl.DataFrame) and out.columns == TABLE_III_COLUMNS
    assert out.row(0) == (1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1)


def test_pipeline_with_pandas_input():
    pytest.importorskip("pandas")
    y = np.array([0, 0, 0, 1, 1, 1])
    pipe = Pipeline([("enc", HierarchyEncoder(ANIMAL_HIERARCHIES, "oneclass")), ("lr", LogisticRegression())])
    pipe.fit(X.to_pandas(), y)
    assert pipe.predict(X.to_pandas()).tolist() == y.tolist()
    assert pipe[:-1].get_feature_names_out().tolist() == TABLE_III_COLUMNS


def test_proportional_with_class_ids_is_table_iii():
    """Paper 000 Table III through the transformer (a partition frame with class ids)."""
    part = X.with_columns(cls=pl.Series(TABLE_I_PARTITION))
    m = HierarchyEncoder(ANIMAL_HIERARCHIES, "proportional", class_col="cls").fit_transform(part)
    assert m.shape == (6, 14) and m.dtype == np.float32
    assert m[0, :3] == pytest.approx([1 / 3, 2 / 3, 1]) and m[5, 3:] == pytest.approx(
        [0, 0, 0, 0, 0, 1 / 3, 2 / 3, 0, 0, 1, 1]
    )


def test_proportional_without_classes_equals_fillparent():
    a = HierarchyEncoder(ANIMAL_HIERARCHIES, "proportional").fit_transform(X)
    b = HierarchyEncoder(ANIMAL_HIERARCHIES, "fillparent").fit_transform(X)
    assert np.array_equal(a, b)


def test_errors():
    with pytest.raises(ColumnNotFoundError, match=r"qids \['race'\] not in X"):
        HierarchyEncoder(ANIMAL_HIERARCHIES).fit(X.drop("race"))
    with pytest.raises(InvalidParameterError, match="must be a wide encoding, got 'random'"):
        HierarchyEncoder(ANIMAL_HIERARCHIES, "random").fit(X)


def test_array_after_a_fit_on_a_frame_is_read_by_position_with_sklearns_warning():
    """fit(frame) then transform(X.to_numpy()) raised Polars' raw ColumnNotFoundError (hunt45); scikit-learn's
    encoders take a same-shaped array by position and warn that it has no feature names."""
    enc = HierarchyEncoder(ANIMAL_HIERARCHIES, "fillparent").fit(X)
    with pytest.warns(UserWarning, match="X does not have valid feature names, but HierarchyEncoder was fitted with"):
        by_position = enc.transform(X.to_numpy())
    assert np.array_equal(by_position, enc.transform(X))
    assert np.array_equal(enc.transform(X.select("race", "gender")), by_position)  # a frame: by name
    with pytest.raises(ColumnNotFoundError, match=r"columns \['race'\] seen in fit are not in X; its columns are"):
        enc.transform(X.rename({"race": "breed"}))
    with pytest.raises(ValueError, match="X has 1 features, but HierarchyEncoder is expecting 2"):
        enc.transform(X.select("race").to_numpy())


FLOAT32 = ["float32", "Float32", "f4", np.float32, np.dtype("float32"), pl.Float32, pl.Float32(), None]
FLOAT64 = ["float64", "Float64", "double", np.float64, np.dtype("float64"), float, pl.Float64, pl.Float64()]


@pytest.mark.parametrize(
    ("dtype", "want"), [(d, np.float32) for d in FLOAT32] + [(d, np.float64) for d in FLOAT64], ids=repr
)
def test_dtype_as_numpy_and_polars_users_name_it(dtype: object, want: type) -> None:
    out = HierarchyEncoder(ANIMAL_HIERARCHIES, "fillparent", dtype=dtype).fit_transform(X)
    assert out.dtype == want and out[0].tolist() == [1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1]


@pytest.mark.parametrize("dtype", ["float16", np.float16, "int8", np.int64, pl.Int32, pl.String, "floaty", 3])
def test_dtype_other_than_float32_or_float64_is_refused(dtype: object) -> None:
    with pytest.raises(InvalidParameterError, match=r"HierarchyEncoder dtype must be float32 or float64") as caught:
        HierarchyEncoder(ANIMAL_HIERARCHIES, "fillparent", dtype=dtype).fit(X.drop("race"))  # before X is read
    assert f"got {dtype!r}" in str(caught.value)


@parametrize_with_checks(
    [HierarchyEncoder()],
)
def test_sklearn_contract(estimator, check):
    check(estimator)
