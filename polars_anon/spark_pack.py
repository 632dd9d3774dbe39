"""Give Spark executors the package: one archive that ``spark-submit --archives`` unpacks beside every executor.

Greedy's Spark blocks and MDAV on Spark run polars_anon's NumPy loops inside Spark tasks, so every
executor's Python must import polars_anon, polars, NumPy, pyarrow and tqdm (Spark brings pyspark).
:func:`pack` writes those packages, as installed here (with the distributions they require), into
one ``.tar.gz`` laid out as a ``site-packages`` folder; the executors put it on their ``PYTHONPATH``:

.. code-block:: bash

    polars-anon spark-pack polars_anon_env.tar.gz
    spark-submit --master spark://host:7077 \\
      --archives polars_anon_env.tar.gz#anon_env \\
      --conf spark.executorEnv.PYTHONPATH=anon_env \\
      --conf spark.pyspark.python=python3.11 \\
      "$(python -c 'import polars_anon.cli as c; print(c.__file__)')" anonymize job.toml --engine spark

The archive holds compiled extensions: the executors need the same Python minor version and platform as
this machine (``spark.pyspark.python`` names that interpreter there). Before any data is read the road
runs one task on an executor that imports them (:func:`polars_anon.engines.spark.check_executors`) and
refuses the run in one line naming what is missing.

>>> sorted(requirement_closure(["tqdm"]))
['tqdm']
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars_anon
from polars_anon.errors import InvalidParameterError

__all__ = ["SHIPPED", "pack", "requirement_closure"]

SHIPPED = ("polars", "numpy", "pyarrow", "tqdm")
"""The distributions executors need besides polars_anon (pyspark and py4j come with Spark)."""
_PROVIDED = {"pyspark", "py4j", "polars-anon", "polars_anon"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_closure(names: Iterable[str]) -> set[str]:
    """The installed distributions `names` and, transitively, the ones they require (extras and markers that do
    not hold here left out; those Spark brings left out)."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [_canonical(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen or name in {_canonical(p) for p in _PROVIDED}:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency not installed here
        seen.add(name)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_canonical(req.name))
    return seen


def _files(name: str) -> Iterable[tuple[Path, str]]:
    """(file on disk, name in the archive) of an installed distribution."""
    dist = metadata.distribution(name)
    for entry in dist.files or []:
        if entry.parts and entry.parts[0] in ("..", "") or "__pycache__" in entry.parts:
            continue  # scripts installed outside site-packages; bytecode (rebuilt there)
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            yield path, entry.as_posix()


def _package_files() -> Iterable[tuple[Path, str]]:
    """polars_anon itself, from where this process imports it (an editable install too), its SQL files inside."""
    root = Path(polars_anon.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path, f"polars_anon/{path.relative_to(root).as_posix()}"
    sql = root.parent / "sql"
    if not (root / "sql").is_dir() and sql.is_dir():  # a source checkout: the wheel maps sql/ into the package
        for path in sorted(sql.glob("*.sql")):
            yield path, f"polars_anon/sql/{path.name}"


def pack(target: str | Path, distributions: Sequence[str] = SHIPPED, *, overwrite: bool = False) -> dict[str, Any]:
    """Write polars_anon and `distributions` (with what they require) into the archive `target` (``.tar.gz``).

    Returns what was packed: the distributions, the file count, the archive's size and the Python version the
    executors must run. The archive is written under a temporary name and renamed when complete (an existing one is
    replaced only with `overwrite`).
    """
    import sys

    from polars_anon.outputs import Outputs

    target = Path(target)
    if not target.name.endswith((".tar.gz", ".tgz")):
        raise InvalidParameterError(f"spark-pack: {str(target)!r} must end in .tar.gz (spark-submit --archives)")
    names = sorted(requirement_closure(distributions))
    missing = sorted({_canonical(d) for d in distributions} - set(names))
    if missing:
        raise InvalidParameterError(f"spark-pack: {missing} are not installed here; install them first")
    count = 0
    with Outputs(overwrite=overwrite) as out:
        tmp = out.stage(target)
        with tarfile.open(tmp, "w:gz", compresslevel=1) as tar:
            for name in ["polars_anon", *names]:
                for path, arcname in _package_files() if name == "polars_anon" else _files(name):
                    tar.add(path, arcname=arcname, recursive=False)
                    count += 1
        size = Path(tmp).stat().st_size
        out.commit()
    python = "{}.{}".format(*sys.version_info[:2])
    return {"archive": str(target), "distributions": names, "files": count, "bytes": size, "python": python}
