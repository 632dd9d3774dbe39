"""polars_anon: k-anonymization for Polars and DuckDB, with the numbers of what it cost.

>>> import polars_anon as pa
>>> pa.Hierarchy.suppression(["F", "M"]).root
'*'
"""

from __future__ import annotations

from polars_anon.interrupts import exit_on_signal_while_starting

exit_on_signal_while_starting()  # first: the command line's start (a library import changes no signal handler)

from polars_anon import metrics, sdc
from polars_anon import namespace as _namespace  # noqa: F401  (registers .anon)
from polars_anon._progress import progress
from polars_anon.algorithms import METHODS
from polars_anon.classes import class_size_histogram, class_sizes, is_k_anonymous, k_summary, min_class_size
from polars_anon.encode import ENCODINGS, encode, encoded_columns, map_to_leaves
from polars_anon.encoded_io import scan_encoded, write_encoded
from polars_anon.errors import (
    AnonError,
    ColumnNotFoundError,
    HierarchyError,
    InfeasibleError,
    InputError,
    InvalidParameterError,
    NotFiniteError,
    NotKAnonymousError,
    NullValueError,
    OutputError,
    OutputExistsError,
    PrivacyModelError,
    ValueNotInHierarchyError,
)
from polars_anon.explore import explore
from polars_anon.generalize import generalize, generalize_expr, generalize_partition
from polars_anon.hierarchy import Hierarchy
from polars_anon.pipeline.result import Anonymized
from polars_anon.pipeline.road import anonymize
from polars_anon.privacy import (
    AverageRisk,
    BetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DifferentialPrivacy,
    KMap,
    LDiversity,
    PopulationUniqueness,
    Risk,
    TCloseness,
)
from polars_anon.privacy.evaluate import check
from polars_anon.privacy.risk import risk
from polars_anon.verify import verify_k

__all__ = [
    "ENCODINGS",
    "METHODS",
    "AnonError",
    "Anonymized",
    "AverageRisk",
    "BetaLikeness",
    "ColumnNotFoundError",
    "DeltaDisclosure",
    "DeltaPresence",
    "DifferentialPrivacy",
    "Hierarchy",
    "HierarchyError",
    "InfeasibleError",
    "InputError",
    "InvalidParameterError",
    "KMap",
    "LDiversity",
    "NotFiniteError",
    "NotKAnonymousError",
    "NullValueError",
    "OutputError",
    "OutputExistsError",
    "PopulationUniqueness",
    "PrivacyModelError",
    "Risk",
    "TCloseness",
    "ValueNotInHierarchyError",
    "anonymize",
    "check",
    "class_size_histogram",
    "class_sizes",
    "encode",
    "encoded_columns",
    "explore",
    "generalize",
    "generalize_expr",
    "generalize_partition",
    "is_k_anonymous",
    "k_summary",
    "map_to_leaves",
    "metrics",
    "min_class_size",
    "progress",
    "risk",
    "scan_encoded",
    "sdc",
    "verify_k",
    "write_encoded",
]
__version__ = "0.1.0"
