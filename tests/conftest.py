"""Shared fixtures. Real datasets come from ../shared/data beside the repository and
the tests that need them skip with a clear reason when it is absent."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

# Two pytest-xdist workers share the CI machine's two cores: one BLAS/OpenMP thread each for numpy and
# scikit-learn (set before either is loaded, inherited by the CLI's and Spark's subprocesses); more threads only
# contend (paper003's quick script: 16.7 -> 13.0 CPU s).
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import polars as pl  # noqa: E402
import pytest  # noqa: E402

from polars_anon import Hierarchy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
ADULT_DIR = SHARED_DATA / "adult"
ADULT_QIDS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collect with the cyclic garbage collector paused, then collect once and freeze what is left (``gc.freeze``).

    Collecting imports every test module and, for the doctests, every module of the package (scikit-learn, SciPy,
    pandas, matplotlib come with them): 330,000 objects that live until the process ends. Each full collection
    scanned them all again: six during the collection (1.1 CPU s of a worker's 7.5), more during the tests, and
    the five pytest runs at the session's end (its unraisable-exception check). Frozen, they are never scanned;
    the tests' own objects are collected as before (a cycle made by a test is freed the same way). The one
    collection before freezing frees the collection's own garbage (200,000 objects), which would stay otherwise.
    """
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``, as .ci/run runs it) every Spark test runs on one worker.

    The Spark tests then share that worker's one Spark session (one JVM) instead of starting one per worker: the
    tests that take the ``spark`` fixture and the ``"spark"`` cases of tests parametrized over engines. Every other
    test, under ``engines/`` too (the Polars and DuckDB cases, the refusals made before a session starts, the
    standalone cluster whose JVMs are its own), runs on any worker: the Spark worker is the suite's longest (xdist
    starts the largest group first), and the 237 engine tests that start no Spark job were 58 of its CPU seconds.
    The Adult lattice tests share one worker too, so their exhaustive reference (a module fixture) is computed once.
    """
    spark, lattice = pytest.mark.xdist_group("spark"), pytest.mark.xdist_group("adult_lattice")
    for item in items:
        if _asks_spark(item):
            item.add_marker(spark)
        elif item.path.name == "test_adult_objectives.py":
            item.add_marker(lattice)


def _asks_spark(item: pytest.Item) -> bool:
    """The test takes the ``spark`` fixture, or is the ``"spark"`` case of a test parametrized over engines (it
    asks for the fixture through ``request.getfixturevalue``, or its job starts a session: the worker's one JVM)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "spark" in getattr(item, "fixturenames", ()) or any(
        v == "spark" for v in params.values() if isinstance(v, str)
    )


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"needs {path} (the ../shared/data folder beside the repository); not present here")
    return path


@pytest.fixture(scope="session")
def adult_dir() -> Path:
    """Folder of the ARX Adult data and hierarchies."""
    return _need(ADULT_DIR)


@pytest.fixture(scope="session")
def adult(adult_dir: Path) -> pl.DataFrame:
    """ARX Adult: 30,162 rows, 9 columns (all read as String)."""
    return pl.read_csv(adult_dir / "adult.csv", separator=";", infer_schema=False)


@pytest.fixture(scope="session")
def adult_hierarchies(adult_dir: Path) -> dict[str, Hierarchy]:
    """The ARX hierarchies of the 8 quasi-identifiers (salary-class excluded)."""
    return {q: Hierarchy.from_csv(adult_dir / f"adult_hierarchy_{q}.csv") for q in ADULT_QIDS}


SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xss4m"
"""The test session's JVM options: the C1 compiler only and one GC thread. The tests' Spark jobs are small and
short, and C2's compiler threads spent more CPU than they saved (three engine test files, -n 0, load 17-19: the
JVM's CPU 97.7 s with Spark's defaults, 47.5 s with these; the tests' own CPU alike). A larger thread stack for C1's
larger frames (Spark's deep plans)."""


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One local Spark session (``local[2]``, JVM options `SHORT_JVM`) for every Spark test; skips without pyspark
    or a Java runtime.

    Spark's Python workers run this interpreter (``PYSPARK_PYTHON``, ``PYSPARK_DRIVER_PYTHON``), not whatever
    ``python3`` is first on the PATH, which may lack polars. Under pytest-xdist each worker has its own session.
    """
    import os
    import shutil
    import signal
    import sys

    pytest.importorskip("pyspark", reason='needs pyspark (pip install -e ".[spark]")')
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("needs a Java 17+ runtime for pyspark (no java on PATH, no JAVA_HOME)")
    from polars_anon.engines.spark import session

    pinned = {name: os.environ.get(name) for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    os.environ.update(dict.fromkeys(pinned, sys.executable))
    settings = {
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": SHORT_JVM,
    }
    handler = signal.getsignal(signal.SIGINT)
    spark = session("local[2]", settings)
    # pyspark's context installs its own SIGINT handler, which fails (AttributeError) once the context is stopped; the
    # worker keeps its own (pytest-xdist's workers ignore SIGINT; the interrupt tests install Python's for a moment)
    signal.signal(signal.SIGINT, handler)
    yield spark
    spark.stop()
    for name, value in pinned.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
