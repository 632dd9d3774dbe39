"""The datasets of ``../shared/data`` that ship ARX hierarchies, loaded one way for every benchmark.

``load(name)`` returns ``(frame, qids, hierarchies)``: every column a String, the
quasi-identifiers in file order, one :class:`~polars_anon.Hierarchy` per qid read from
the ARX hierarchy files. Which columns are quasi-identifiers (see ``../shared/data/README.md``):

- ``adult``: the 8 usual ones (``salary-class`` is the sensitive attribute, left out);
- ``cup``, ``fars``, ``fars_int``: all 8 columns;
- ``mach2019_int``: all 16 columns;
- ``adult_full_hierarchies``: UCI ``adult.data`` (32,561 rows, ``?`` kept as a value: the
  hierarchies list it) with the 13 columns that have a usable hierarchy: ``education-num`` has
  none, and the upstream ``age`` file is not a tree (leaves 72 to 87 are listed twice with
  different parents, 88 and 90 twice, 87 missing from the second list), which
  :meth:`~polars_anon.Hierarchy.from_csv` refuses, so ``age`` is left out.

    python benchmarks/datasets.py      # rows, distinct tuples and leaves per qid of each dataset
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

import polars_anon as pa

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
NAMES = ("adult", "cup", "fars", "fars_int", "mach2019_int", "adult_full_hierarchies")
ADULT_QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
_FILES = {
    "adult": ("adult/adult.csv", "adult/adult_hierarchy_{}.csv"),
    "cup": ("cup/cup.csv", "cup/cup_hierarchy_{}.csv"),
    "fars": ("fars/fars_subset.csv", "fars/fars_hierarchy_{}.csv"),
    "fars_int": ("fars_int/fars_int.csv", "fars_int/fars_int_hierarchy_{}.csv"),
    "mach2019_int": ("mach2019_int/mach2019_int.csv", "mach2019_int/mach2019_int_hierarchy_{}.csv"),
}
_UCI_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary-class",
]


def available() -> list[str]:
    """The datasets present beside the repository."""
    return [
        n
        for n in NAMES
        if (DATA / ("adult_uci/adult.data" if n == "adult_full_hierarchies" else _FILES[n][0])).exists()
    ]


def load(name: str) -> tuple[pl.DataFrame, list[str], dict[str, pa.Hierarchy]]:
    """``(frame, qids, hierarchies)`` of one dataset (module docstring)."""
    if name == "adult_full_hierarchies":
        raw = pl.read_csv(DATA / "adult_uci/adult.data", has_header=False, new_columns=_UCI_COLUMNS, infer_schema=False)
        df = raw.with_columns(pl.all().str.strip_chars()).filter(pl.col("age").is_not_null())
        qids = [
            c
            for c in _UCI_COLUMNS
            if c != "age" and (DATA / f"adult_full_hierarchies/adult_full_hierarchy_{c}.csv").exists()
        ]
        hs = {q: pa.Hierarchy.from_csv(DATA / f"adult_full_hierarchies/adult_full_hierarchy_{q}.csv") for q in qids}
        return df, qids, hs
    data, pattern = _FILES[name]
    df = pl.read_csv(DATA / data, separator=";", infer_schema=False)
    qids = ADULT_QIDS if name == "adult" else df.columns
    hs = {q: pa.Hierarchy.from_csv(DATA / pattern.format(q)) for q in qids}
    return df, list(qids), hs


if __name__ == "__main__":
    for n in available():
        df, qids, hs = load(n)
        leaves = {q: hs[q].n_leaves for q in qids}
        print(f"{n}: {df.height} rows, {df.select(qids).n_unique()} distinct tuples, leaves {leaves}")
