"""A scikit-learn transformer over :func:`polars_anon.encode.encode` (imports scikit-learn).

``import polars_anon`` never loads this module; import it explicitly::

    from polars_anon.transformers import HierarchyEncoder
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import polars as pl
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from polars_anon._validate import as_lazy
from polars_anon.encode import MAPPINGS, canonical, encode, encoded_columns
from polars_anon.errors import ColumnNotFoundError, InvalidParameterError
from polars_anon.hierarchy import Hierarchy, check_hierarchies
from polars_anon.labels import label_series

__all__ = ["HierarchyEncoder"]


def _as_frame(X: object) -> tuple[pl.DataFrame, bool]:
    """(Polars DataFrame, whether X had column names). NumPy arrays get names x0, x1, ..."""
    if isinstance(X, (pl.DataFrame, pl.LazyFrame)) or type(X).__module__.startswith("pandas"):
        return as_lazy(X).collect(), True
    # dtype=None keeps the input's dtype (scikit-learn's unannotated signature infers str from its default)
    arr = check_array(X, dtype=None, accept_sparse=False, ensure_all_finite=True)  # pyright: ignore[reportArgumentType]
    if arr.dtype.kind == "c":
        raise ValueError("Complex data not supported; encode real or categorical values")
    if arr.dtype.kind == "O":
        arr = arr.astype(str)
    return pl.DataFrame({f"x{i}": arr[:, i] for i in range(arr.shape[1])}), False


def _output_dtype(dtype: object) -> pl.DataType:
    """The Polars float type `dtype` names: float32 or float64 as a name (``"float32"``, ``"f8"``, ``"double"``),
    a NumPy type (``np.float32``, ``np.dtype("float64")``, ``float``) or a Polars type or its name (``pl.Float32``,
    ``"Float32"``); None is float32. Anything else is refused, naming `dtype`.

    >>> _output_dtype(np.float64), _output_dtype("float32"), _output_dtype(pl.Float64)
    (Float64, Float32, Float64)
    >>> _output_dtype("int8")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_anon.errors.InvalidParameterError: HierarchyEncoder dtype must be float32 or float64 (...), got 'int8'
    """
    if dtype is None:
        return pl.Float32()
    if isinstance(dtype, pl.DataType) or (isinstance(dtype, type) and issubclass(dtype, pl.DataType)):
        found = next((t for t in (pl.Float32, pl.Float64) if dtype == t), None)
    else:
        try:
            named = {"Float32": "float32", "Float64": "float64"}.get(dtype, dtype) if isinstance(dtype, str) else dtype
            kind = np.dtype(named)  # pyright: ignore[reportCallIssue, reportArgumentType]  (refused below if not)
        except (TypeError, ValueError):
            kind = None
        found = {4: pl.Float32, 8: pl.Float64}.get(kind.itemsize) if kind is not None and kind.kind == "f" else None
    if found is None:
        raise InvalidParameterError(
            f"HierarchyEncoder dtype must be float32 or float64 (a name, a NumPy or a Polars type), got {dtype!r}"
        )
    return found()


class HierarchyEncoder(TransformerMixin, BaseEstimator):
    """Encode quasi-identifiers with their hierarchies, one column per node [paper 000 §II-C, §III-A].

    Parameters
    ----------
    hierarchies
        qid -> :class:`~polars_anon.Hierarchy`. When None, :meth:`fit` builds a flat
        hierarchy per column (its values under one ``*`` root), so the encoder is a
        one-hot encoder with an extra root column.
    representation
        ``proportional`` (default), ``fillparent``, ``fillchild``, ``oneclass`` or
        ``setbinary`` (see :mod:`polars_anon.encode`).
    class_col
        For ``proportional``: the class id column of a partition frame (X holds the
        original leaves and the class of each row; every row gets its class's
        proportions). When None, X is its own original and must hold leaves, so
        ``proportional`` equals ``fillparent`` [paper 000 §IV-D-1]; publishers with
        a generalized table use :func:`polars_anon.encode.encode` with ``original=``.
    dtype
        Output dtype: float32 (default) or float64, named as NumPy and Polars users do (``"float32"``,
        ``np.float32``, ``pl.Float32``, ``"float64"``, ``np.float64``, ``float``, ``pl.Float64``). Anything else
        is refused by :meth:`fit`.

    Notes
    -----
    Output columns are the encoded blocks of the hierarchy columns, in hierarchy
    order; other columns of X (and `class_col`) are not passed through. ``transform``
    returns a NumPy array; ``set_output(transform="polars")`` or ``"pandas"``
    returns a frame named by :meth:`get_feature_names_out`.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> enc = HierarchyEncoder({"g": Hierarchy.from_dict({"*": ["M", "F"]})}, "fillparent")
    >>> enc.fit_transform(pl.DataFrame({"g": ["F", "M"]})).tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    >>> enc.get_feature_names_out().tolist()
    ['g_M', 'g_F', 'g_*']
    """

    def __init__(
        self,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        representation: str = "proportional",
        class_col: str | None = None,
        dtype: object = "float32",
    ) -> None:
        self.hierarchies = hierarchies
        self.representation = representation
        self.class_col = class_col
        self.dtype = dtype

    def fit(self, X: object, y: object = None) -> HierarchyEncoder:
        """Check the columns, learn flat hierarchies when none were given, fix the output names."""
        rep = canonical(self.representation)
        dtype = _output_dtype(self.dtype)  # the parameters are checked before X is read
        if rep in MAPPINGS:
            raise InvalidParameterError(
                f"HierarchyEncoder representation must be a wide encoding, got {self.representation!r}; "
                "use polars_anon.encode.map_to_leaves for random/statistical mapping"
            )
        df, named = _as_frame(X)
        names = df.columns
        if self.hierarchies is None:
            qids = [c for c in names if c != self.class_col]
            hierarchies = {
                q: Hierarchy.suppression(label_series(df[q]).drop_nulls().unique(maintain_order=True).to_list())
                for q in qids
            }
        else:
            hierarchies = check_hierarchies(self.hierarchies)
            missing = [q for q in hierarchies if q not in names]
            if missing:
                raise ColumnNotFoundError(f"qids {missing} not in X; its columns are {names}")
        if self.class_col is not None and self.class_col not in names:
            raise ColumnNotFoundError(f"class_col {self.class_col!r} not in X; its columns are {names}")
        self.hierarchies_ = hierarchies
        self.n_features_in_ = len(names)
        if named:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self._names_in = names
        self.columns_out_ = [c for q, h in hierarchies.items() for c in encoded_columns(q, h, rep)]
        self._dtype = dtype
        return self

    def transform(self, X: object) -> np.ndarray:
        """Encode X (Polars, pandas or a 2-D array with the columns seen in fit; an array after a fit on a frame is
        read by position, with scikit-learn's feature-names warning)."""
        check_is_fitted(self, "columns_out_")
        df, named = _as_frame(X)
        if df.width != self.n_features_in_:
            raise ValueError(
                f"X has {df.width} features, but HierarchyEncoder is expecting {self.n_features_in_} features as input"
            )
        df = self._as_fitted(df, named)
        rep = canonical(self.representation)
        keep = [*self.hierarchies_, *([self.class_col] if self.class_col else [])]
        lf = df.lazy().select(keep)
        if rep == "proportional":
            if self.class_col is not None:
                out = encode(lf, self.hierarchies_, rep, class_col=self.class_col, dtype=self._dtype)
            else:
                out = encode(lf, self.hierarchies_, rep, original=lf, dtype=self._dtype)
        else:
            out = encode(lf, self.hierarchies_, rep, dtype=self._dtype)
        return out.select(self.columns_out_).collect().to_numpy()

    def _as_fitted(self, df: pl.DataFrame, named: bool) -> pl.DataFrame:
        """X under fit's column names. A frame after a fit on a frame: by name (any order; a column fit used that X
        lacks is refused, naming it). Otherwise by position, as scikit-learn's encoders take a same-shaped array,
        with their warning when only one of fit and transform saw names."""
        fitted_named = hasattr(self, "feature_names_in_")
        if named and fitted_named:
            used = [*self.hierarchies_, *([self.class_col] if self.class_col else [])]
            missing = [c for c in used if c not in df.columns]
            if missing:
                raise ColumnNotFoundError(f"columns {missing} seen in fit are not in X; its columns are {df.columns}")
            return df
        if named != fitted_named:
            warnings.warn(
                f"X {'has' if named else 'does not have valid'} feature names, but HierarchyEncoder was fitted "
                f"{'without' if named else 'with'} feature names",
                UserWarning,
                stacklevel=3,
            )
        return df.rename(dict(zip(df.columns, self._names_in, strict=True)))

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """The encoded column names ``<qid>_<node label>``, by level then depth-first."""
        check_is_fitted(self, "columns_out_")
        return np.asarray(self.columns_out_, dtype=object)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags
