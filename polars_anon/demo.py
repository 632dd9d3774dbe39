"""A seeded synthetic voter register for the demo and the benchmarks.

Columns: ``voter_id`` (Int64) and ``name`` (direct identifiers: the demo declares
both identifying, so they are dropped, never published),
``zip`` (5-digit String, skewed over about 1,500 codes), ``gender``, ``race``
(9 values), ``birth_year`` (1915-2008), ``party`` (10 values, the sensitive
attribute). Rows are generated in chunks and streamed to Parquet, so memory does
not grow with the row count; the same rows and seed give the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from polars_anon._progress import bar as progress_bar
from polars_anon._validate import is_integer
from polars_anon.errors import InvalidParameterError
from polars_anon.outputs import Outputs, staged_write

__all__ = ["DEMO_QIDS", "demo_hierarchy_specs", "voter_register", "write_rows", "write_voter_register"]

CHUNK = 1_000_000
ROW_GROUP = 131_072  # small row groups keep the streaming readers' memory flat
FIRST = [
    "Mary",
    "James",
    "Maria",
    "John",
    "Linda",
    "Robert",
    "Patricia",
    "Michael",
    "Jennifer",
    "David",
    "Elizabeth",
    "William",
    "Susan",
    "Richard",
    "Jessica",
    "Joseph",
    "Sarah",
    "Thomas",
    "Karen",
    "Charles",
    "Nancy",
    "Daniel",
    "Lisa",
    "Matthew",
    "Betty",
    "Anthony",
    "Sandra",
    "Mark",
    "Ashley",
    "Carlos",
    "Rosa",
    "Luis",
    "Ana",
    "Jose",
    "Wei",
    "Mei",
    "Ahmed",
    "Fatima",
    "Olga",
    "Ivan",
]
LAST = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Perez",
    "Thompson",
    "White",
    "Harris",
    "Sanchez",
    "Clark",
    "Ramirez",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
    "Torres",
    "Nguyen",
    "Hill",
    "Flores",
]
GENDERS = (["F", "M", "U"], [0.52, 0.46, 0.02])
RACES = (
    ["White", "Hispanic", "Black", "Asian", "Multiracial", "Other", "Native American", "Unknown", "Pacific Islander"],
    [0.55, 0.17, 0.13, 0.025, 0.02, 0.03, 0.004, 0.07, 0.001],
)
PARTIES = (
    ["DEM", "REP", "NPA", "IND", "LPF", "GRE", "CPF", "ECO", "PSL", "REF"],
    [0.35, 0.36, 0.25, 0.02, 0.007, 0.005, 0.003, 0.002, 0.002, 0.001],
)
N_ZIPS = 1500
DEMO_QIDS = ["zip", "gender", "race", "birth_year"]


def demo_hierarchy_specs() -> dict[str, object]:
    """The built-in hierarchy specs of the demo job (the job-file forms)."""
    return {"zip": {"mask": 5}, "gender": "suppress", "race": "suppress", "birth_year": {"intervals": [5, 10, 20]}}


def _zips(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, 0])
    codes = np.sort(rng.choice(np.arange(32000, 35000), N_ZIPS, replace=False))
    weights = 1.0 / (rng.permutation(N_ZIPS) + 8.0) ** 1.1  # Zipf-like skew, a few rare zips
    return np.char.zfill(codes.astype(str), 5), weights / weights.sum()


def _years() -> tuple[np.ndarray, np.ndarray]:
    years = np.arange(1915, 2009)
    age = 2024 - years
    weights = np.exp(-0.5 * ((age - 48) / 20.0) ** 2) + 0.02
    return years, weights / weights.sum()


def voter_register(rows: int, seed: int = 0, *, start: int = 0) -> pl.DataFrame:
    """Generate `rows` voters; chunk `start // CHUNK` of the register for a given seed.

    >>> voter_register(3, seed=1).columns
    ['voter_id', 'name', 'zip', 'gender', 'race', 'birth_year', 'party']
    """
    rng = np.random.default_rng([seed, 1 + start // CHUNK])
    zips, zip_p = _zips(seed)
    years, year_p = _years()

    def pick(values: list[str] | np.ndarray, p: np.ndarray | list[float]) -> pl.Series:
        p = np.asarray(p, dtype=float)
        return pl.Series(list(values)).gather(rng.choice(len(values), rows, p=p / p.sum()))

    first = pl.Series(FIRST).gather(rng.integers(0, len(FIRST), rows))
    last = pl.Series(LAST).gather(rng.integers(0, len(LAST), rows))
    return pl.DataFrame(
        {
            "voter_id": np.arange(start, start + rows, dtype=np.int64),
            "name": first + " " + last,
            "zip": pick(zips, zip_p),
            "gender": pick(*GENDERS),
            "race": pick(*RACES),
            "birth_year": pl.Series(years).gather(rng.choice(len(years), rows, p=year_p)).cast(pl.Int64),
            "party": pick(*PARTIES),
        }
    )


def write_rows(path: str | Path, rows: int, seed: int = 0) -> Path:
    """Stream a generated register of `rows` voters to Parquet at `path` (no temporary file: see
    :func:`write_voter_register`, or stage `path` in an :class:`~polars_anon.outputs.Outputs`)."""
    if not is_integer(rows) or rows < 1:
        raise InvalidParameterError(f"rows must be an integer >= 1, got {rows!r}")
    rows = int(rows)
    writer = None
    try:
        with progress_bar(total=rows, desc="generate voters", unit="row", unit_scale=True) as bar:
            for start in range(0, rows, CHUNK):
                table = voter_register(min(CHUNK, rows - start), seed, start=start).to_arrow()
                if writer is None:
                    writer = pq.ParquetWriter(path, table.schema, compression="zstd")
                writer.write_table(table, row_group_size=ROW_GROUP)
                bar.update(table.num_rows)
    finally:
        if writer is not None:
            writer.close()
    return Path(path)


def write_voter_register(path: str | Path, rows: int = 1_000_000, seed: int = 0, *, overwrite: bool = False) -> Path:
    """Write a generated register of `rows` voters to Parquet, all or nothing (temporary file, then rename)."""
    with Outputs(overwrite=overwrite) as out:
        staged_write(out, Path(path), lambda tmp: write_rows(tmp, rows, seed))
        out.commit()
    return Path(path)
